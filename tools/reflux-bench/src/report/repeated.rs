// SPDX-License-Identifier: GPL-2.0

//! A figure measured once per round (or per repetition of a sweep's point), and its mean with
//! a 95 % bootstrap interval over them.

use bench_stats::{bootstrap, Ci};

use crate::stats;

use super::SEED;

pub struct Repeated {
    /// (round or repetition, value), of those that have it.
    pub each: Vec<(u32, f64)>,
    pub mean: Option<f64>,
    /// `None` with fewer than two values.
    pub ci: Option<Ci>,
}

impl Repeated {
    pub fn of(each: Vec<(u32, f64)>) -> Repeated {
        let values: Vec<f64> = each.iter().map(|e| e.1).collect();
        Repeated {
            mean: stats::mean(&values),
            ci: bench_stats::interval(&values, bootstrap::mean, SEED),
            each,
        }
    }

    /// `12.3 [11.9, 12.8]`, `12.3` with one value, `-` with none.
    pub fn render(&self, decimals: usize) -> String {
        self.render_in(1.0, decimals)
    }

    /// As [`Repeated::render`], every figure divided by `unit` (ns as ms: 1e6).
    pub fn render_in(&self, unit: f64, decimals: usize) -> String {
        match (&self.ci, self.mean) {
            (Some(ci), _) => ci.scaled(unit).render(decimals),
            (None, Some(m)) => format!("{:.decimals$}", m / unit),
            (None, None) => "-".into(),
        }
    }
}
