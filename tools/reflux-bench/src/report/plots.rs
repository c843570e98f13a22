// SPDX-License-Identifier: GPL-2.0

//! The plots of the paradigms' runs: throughput and temperature over time (the mean of the
//! rounds, shaded from the lowest round to the highest) and the CDFs of C's migration times.

use crate::log::{Migration, Sample};
use crate::plot::{Plot, Rule, Scale, Series};

use super::collapse::SAMPLE_MS;
use super::rounds::Rounds;
use super::{Report, EPOCH_MS, MOVE_TARGET_PCT, THROTTLE_C};

const DRAIN: &str = "#1f77b4";
const RULE: &str = "#8b0000";

/// The throughput plot's window, in samples: fio's verify reads (one every eight writes)
/// leave 250 ms intervals without a write, so a 250 ms line is mostly noise.
const THROUGHPUT_WINDOW: usize = 4;

/// Each sample's time and the mean of `y` over it and the `window - 1` samples before it (as
/// many as there are at the start).
fn trailing_mean(samples: &[Sample], window: usize, y: &dyn Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    (0..samples.len())
        .map(|i| {
            let w = &samples[(i + 1).saturating_sub(window.max(1))..=i];
            let sum: f64 = w.iter().map(y).sum();
            (samples[i].t_ms, sum / w.len() as f64)
        })
        .collect()
}

/// Per sampling slot (the sample's `t_ms` rounded to the sampler's 250 ms), the rounds'
/// values of it (each a trailing mean over `window` samples): the rounds start together, and a
/// late sample lands in its slot.
fn by_slot(r: &Rounds<'_>, window: usize, y: &dyn Fn(&Sample) -> f64) -> Vec<(f64, Vec<f64>)> {
    let mut slots: Vec<(i64, Vec<f64>)> = Vec::new();
    for (t_ms, v) in r
        .rounds
        .iter()
        .flat_map(|s| trailing_mean(&s.p.samples, window, y))
    {
        let k = (t_ms / SAMPLE_MS).round() as i64;
        match slots.iter_mut().find(|e| e.0 == k) {
            Some(e) => e.1.push(v),
            None => slots.push((k, vec![v])),
        }
    }
    slots.sort_by_key(|e| e.0);
    slots
        .into_iter()
        .map(|(k, v)| (k as f64 * SAMPLE_MS / 1000.0, v))
        .collect()
}

/// A paradigm's mean over its rounds, and the band of the lowest and highest round.
fn mean_series(
    r: &Rounds<'_>,
    colour: &'static str,
    window: usize,
    y: &dyn Fn(&Sample) -> f64,
) -> Series {
    let slots = by_slot(r, window, y);
    let n = r.rounds.len();
    let name = match (slots.is_empty(), n) {
        (true, _) => format!("{} (no samples)", r.name),
        (false, 1) => r.name.to_string(),
        (false, n) => format!("{} (mean of {n} rounds)", r.name),
    };
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        (lo, v.iter().copied().fold(lo, f64::max))
    };
    // One round has no spread to shade.
    let band = match n {
        1 => Vec::new(),
        _ => slots
            .iter()
            .map(|(x, v)| {
                let (lo, hi) = spread(v);
                (*x, lo, hi)
            })
            .collect(),
    };
    Series {
        name,
        colour,
        points: slots
            .iter()
            .map(|(x, v)| (*x, v.iter().sum::<f64>() / v.len() as f64))
            .collect(),
        band,
        ..Series::default()
    }
}

/// The empirical CDF's steps of `v`.
fn cdf(mut v: Vec<f64>) -> Vec<(f64, f64)> {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .flat_map(|(i, &x)| [(x, i as f64 / n), (x, (i + 1) as f64 / n)])
        .collect()
}

impl Report<'_> {
    fn per_paradigm(&self, window: usize, y: &dyn Fn(&Sample) -> f64) -> Vec<Series> {
        self.paradigms
            .iter()
            .map(|r| mean_series(r, self.colour(r.name), window, y))
            .collect()
    }

    fn no_samples(&self) -> Option<String> {
        self.paradigms
            .iter()
            .flat_map(|r| &r.rounds)
            .all(|s| s.p.samples.is_empty())
            .then(|| "no samples".to_string())
    }

    /// `throughput.svg`: MB/s over time, a line per paradigm.
    pub fn throughput_svg(&self) -> String {
        Plot {
            title: "reflux: MB/s written over the last second, by paradigm (mean of the rounds)"
                .into(),
            x_label: "time since the paradigm's start (s)".into(),
            y_label: "MB/s (10^6 bytes per second)".into(),
            series: self.per_paradigm(THROUGHPUT_WINDOW, &|s| s.mbps),
            y_zero: true,
            note: self.no_samples(),
            ..Plot::default()
        }
        .svg()
    }

    /// `temperature.svg`: device °C over time, a line per paradigm, and the throttle point.
    pub fn temperature_svg(&self) -> String {
        Plot {
            title: "reflux: device temperature, by paradigm (mean of the rounds)".into(),
            x_label: "time since the paradigm's start (s)".into(),
            y_label: "device temperature (°C)".into(),
            series: self.per_paradigm(1, &|s| s.temp_mc / 1000.0),
            h_rules: vec![Rule {
                at: THROTTLE_C,
                label: "throttle (OCP)".into(),
                colour: RULE,
            }],
            note: self.no_samples(),
            ..Plot::default()
        }
        .svg()
    }

    /// `migrations.svg`: the empirical CDFs of C's migration move times and drain times (µs),
    /// pooled over the rounds.
    pub fn migrations_svg(&self) -> String {
        let target_us = MOVE_TARGET_PCT / 100.0 * EPOCH_MS * 1000.0;
        let mut plot = Plot {
            title: "reflux: paradigm C's migrations (empirical CDF, all rounds)".into(),
            x_label: "microseconds".into(),
            y_label: "fraction of migrations ≤ x".into(),
            y_range: Some((0.0, 1.0)),
            v_rules: vec![Rule {
                at: target_us,
                label: format!("{MOVE_TARGET_PCT} % of epoch ({target_us} µs)"),
                colour: RULE,
            }],
            ..Plot::default()
        };
        let c = self.get("C");
        let m: &[&Migration] = c.map_or(&[], |c| &c.migrations);
        if m.is_empty() {
            plot.note = Some(match c {
                Some(_) => "paradigm C recorded no migrations".into(),
                None => "paradigm C did not run".into(),
            });
            return plot.svg();
        }
        let moved: Vec<f64> = m.iter().map(|m| m.move_ns() / 1000.0).collect();
        let drain: Vec<f64> = m.iter().map(|m| m.drain_ns / 1000.0).collect();
        let (lo, hi) = moved
            .iter()
            .chain(&drain)
            .chain(std::iter::once(&target_us))
            .filter(|v| **v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(*v), b.max(*v)));
        if hi / lo > 100.0 {
            plot.x_scale = Scale::Log10;
            plot.x_label = "microseconds (logarithmic)".into();
        }
        plot.series = vec![
            Series {
                name: "move: ckpt+handover+rebuild".into(),
                colour: self.colour("C"),
                points: cdf(moved),
                ..Series::default()
            },
            Series {
                name: "drain".into(),
                colour: DRAIN,
                points: cdf(drain),
                ..Series::default()
            },
        ];
        plot.svg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t_ms: f64, mbps: f64) -> Sample {
        Sample {
            t_ms,
            mbps,
            temp_mc: 35000.0,
            throttled: false,
            inflight_permille: None,
            placements: Vec::new(),
            extra: Vec::new(),
        }
    }

    #[test]
    fn the_trailing_mean_covers_the_window_or_the_start() {
        let s: Vec<Sample> = [0.0, 4.0, 8.0, 0.0, 4.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| at(250.0 * (i + 1) as f64, v))
            .collect();
        let m = trailing_mean(&s, 4, &|s| s.mbps);
        let v: Vec<f64> = m.iter().map(|e| e.1).collect();
        assert_eq!(v, [0.0, 2.0, 4.0, 3.0, 4.0]);
        assert_eq!(m[4].0, 1250.0);
        // A window of one is the samples themselves.
        let one: Vec<f64> = trailing_mean(&s, 1, &|s| s.mbps)
            .iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(one, [0.0, 4.0, 8.0, 0.0, 4.0]);
    }
}
