// SPDX-License-Identifier: GPL-2.0

//! One paradigm's throughput against another's: the ratio of their means over the rounds
//! both ran, with a 95 % paired bootstrap interval (rounds resampled together, as the VM runs
//! the paradigms of a round side by side), and the ratio of each round.

use bench_stats::RatioCi;

use super::rounds::Rounds;
use super::SEED;

/// `num` against `den`, each a list of (round or repetition, value), paired by it.
pub struct Paired {
    /// The ratio of the sums over the pairs.
    pub ratio: f64,
    /// `None` with fewer than two pairs.
    pub ci: Option<RatioCi>,
    /// The ratio of each pair.
    pub each: Vec<(u32, f64)>,
}

impl Paired {
    /// `None` without a pair of finite values > 0 (a rate of 0 has no ratio to speak of).
    pub fn of(num: &[(u32, f64)], den: &[(u32, f64)]) -> Option<Paired> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        let pairs: Vec<(u32, f64, f64)> = num
            .iter()
            .filter_map(|&(k, n)| den.iter().find(|d| d.0 == k).map(|&(_, d)| (k, n, d)))
            .filter(|&(_, n, d)| ok(n) && ok(d))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        let (n, d) = pairs.iter().fold((0.0, 0.0), |a, p| (a.0 + p.1, a.1 + p.2));
        Some(Paired {
            ratio: n / d,
            ci: bench_stats::paired(num, den, SEED),
            each: pairs.iter().map(|&(k, n, d)| (k, n / d)).collect(),
        })
    }

    /// `2.000 [1.950, 2.050]`, `no difference (1.01 [0.97, 1.05])`, or `2.000 (one pair)`.
    pub fn render(&self) -> String {
        match &self.ci {
            Some(ci) => ci.render(),
            None => format!("{:.3} (one pair)", self.ratio),
        }
    }
}

/// A comparison the report makes.
pub struct Comparison {
    pub num: String,
    pub den: String,
    /// `None` if either did not run, or no round had both.
    pub paired: Option<Paired>,
}

impl Comparison {
    /// `C/B`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.num, self.den)
    }
}

/// The comparisons always made (null if a side did not run): ReFlux against each baseline,
/// and the baselines against the host-only reference.
pub const FIXED: [(&str, &str); 6] = [
    ("C", "B"),
    ("C", "A"),
    ("C", "H"),
    ("C", "Bq"),
    ("B", "H"),
    ("Bq", "H"),
];

/// The fixed comparisons, then each variant of C against C.
pub fn comparisons(paradigms: &[Rounds]) -> Vec<Comparison> {
    let get = |n: &str| paradigms.iter().find(|r| r.name == n);
    let variants = paradigms
        .iter()
        .filter(|r| crate::log::variant(r.name).is_some())
        .map(|r| (r.name, "C"));
    FIXED
        .iter()
        .copied()
        .chain(variants)
        .map(|(num, den)| Comparison {
            num: num.to_string(),
            den: den.to_string(),
            paired: match (get(num), get(den)) {
                (Some(n), Some(d)) => Paired::of(&n.steady_mbps.each, &d.steady_mbps.each),
                _ => None,
            },
        })
        .collect()
}
