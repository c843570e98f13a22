// SPDX-License-Identifier: GPL-2.0

//! One block's figures (one paradigm in one round): the steady throughput, temperatures,
//! throttling, the collapse from its best second and its migration times.

use crate::log::{Migration, Paradigm, Sample};
use crate::stats::{self, Dist};

use super::collapse::Collapse;
use super::EPOCH_MS;

/// The samples of the second half of the run: those whose interval ends after half the last
/// sample's time (each sample's MB/s covers the interval ending at its `t_ms`); all of them if
/// the run has no length.
pub fn steady(samples: &[Sample]) -> &[Sample] {
    let Some(last) = samples.last() else {
        return samples;
    };
    let half = last.t_ms / 2.0;
    match samples.partition_point(|s| s.t_ms <= half) {
        i if i < samples.len() => &samples[i..],
        _ => samples,
    }
}

/// One block's figures.
pub struct Summary<'a> {
    pub p: &'a Paradigm,
    /// Mean MB/s of the samples of the second half of the run.
    pub steady_mbps: Option<f64>,
    pub max_temp_c: Option<f64>,
    /// The maximum over the second half.
    pub steady_max_temp_c: Option<f64>,
    /// The share of samples that were throttled.
    pub throttled_fraction: Option<f64>,
    pub collapse: Option<Collapse>,
    /// Checkpoint + handover + rebuild: the migration without its drain. (results.json has
    /// every phase's distribution, from [`phase`].)
    pub move_ns: Option<Dist>,
}

/// The hottest sample's temperature, °C.
fn max_temp(s: &[Sample]) -> Option<f64> {
    s.iter().map(|s| s.temp_mc / 1000.0).reduce(f64::max)
}

impl<'a> Summary<'a> {
    pub fn of(p: &'a Paradigm) -> Summary<'a> {
        let st = steady(&p.samples);
        let m: Vec<&Migration> = p.migrations.iter().collect();
        Summary {
            p,
            steady_mbps: stats::mean(&st.iter().map(|s| s.mbps).collect::<Vec<_>>()),
            max_temp_c: max_temp(&p.samples),
            steady_max_temp_c: max_temp(st),
            throttled_fraction: stats::mean(
                &p.samples
                    .iter()
                    .map(|s| f64::from(u8::from(s.throttled)))
                    .collect::<Vec<_>>(),
            ),
            collapse: Collapse::of(&p.samples),
            move_ns: phase(&m, Migration::move_ns),
        }
    }

    /// `ok`, `fail` or `missing` (no fio line).
    pub fn verify(&self) -> &'static str {
        match &self.p.fio {
            Some(f) if f.verify_ok => "ok",
            Some(_) => "fail",
            None => "missing",
        }
    }
}

/// The distribution of one of the migrations' times.
pub fn phase(m: &[&Migration], f: fn(&Migration) -> f64) -> Option<Dist> {
    stats::dist(&m.iter().map(|m| f(m)).collect::<Vec<_>>())
}

/// The median and 99th percentile of a move time as a percentage of the epoch.
pub fn pct_of_epoch(d: Option<Dist>) -> Option<(f64, f64)> {
    let d = d?;
    let epoch_ns = EPOCH_MS * 1e6;
    Some((100.0 * d.median / epoch_ns, 100.0 * d.p99 / epoch_ns))
}
