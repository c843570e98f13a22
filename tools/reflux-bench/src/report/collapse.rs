// SPDX-License-Identifier: GPL-2.0

//! How far a run's throughput fell from its best: the paper's B starts at 2 184 MB/s and
//! settles at 1 260 MB/s once the device throttles, a collapse of 42 %.

use crate::log::Sample;

use super::summary::steady;

/// The window the initial rate is measured over.
pub const WINDOW_MS: f64 = 1000.0;
/// The sampler's period: a sample's MB/s covers the `SAMPLE_MS` ending at its `t_ms`.
pub const SAMPLE_MS: f64 = 250.0;

/// A run's initial and settled rates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collapse {
    /// The highest mean MB/s over any window of [`WINDOW_MS`] of consecutive samples in the
    /// first half of the run (the whole first half if it is shorter).
    pub initial_mbps: f64,
    /// The mean MB/s of the second half (the steady rate).
    pub settled_mbps: f64,
}

impl Collapse {
    /// `None` if the run has no first half (or no second) to compare.
    pub fn of(samples: &[Sample]) -> Option<Collapse> {
        let second = steady(samples);
        let first = &samples[..samples.len() - second.len()];
        if first.is_empty() || second.is_empty() {
            return None;
        }
        let mean = |s: &[Sample]| s.iter().map(|s| s.mbps).sum::<f64>() / s.len() as f64;
        Some(Collapse {
            initial_mbps: best_window(first).unwrap_or_else(|| mean(first)),
            settled_mbps: mean(second),
        })
    }

    /// `1 - settled / initial`: 0.42 for the paper's B; `None` if the run never moved data.
    pub fn fraction(&self) -> Option<f64> {
        (self.initial_mbps > 0.0).then(|| 1.0 - self.settled_mbps / self.initial_mbps)
    }
}

/// The highest mean MB/s over the complete windows of `samples`: for each sample, those whose
/// intervals end in the [`WINDOW_MS`] up to it, if that window starts no earlier than the first
/// sample's interval.
fn best_window(samples: &[Sample]) -> Option<f64> {
    let start = samples.first()?.t_ms - SAMPLE_MS;
    let mut best: Option<f64> = None;
    for (end, s) in samples.iter().enumerate() {
        let from = s.t_ms - WINDOW_MS;
        if from < start {
            continue;
        }
        let window: Vec<f64> = samples[..=end]
            .iter()
            .filter(|w| w.t_ms > from)
            .map(|w| w.mbps)
            .collect();
        let mean = window.iter().sum::<f64>() / window.len() as f64;
        best = Some(best.map_or(mean, |b| b.max(mean)));
    }
    best
}
