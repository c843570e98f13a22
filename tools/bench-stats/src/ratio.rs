// SPDX-License-Identifier: GPL-2.0

//! One configuration's measurements against another's, as the ratio of their means with a 95 %
//! confidence interval from a paired bootstrap over the repetitions.
//!
//! The benchmarks interleave the configurations within each repetition (ccm-bench: RP, BS,
//! AXLE, ..., then the next repetition; reflux-bench: the paradigms A, B, ... of a round, then
//! the next round), so repetition `k` of two configurations ran side by side and shared
//! whatever disturbed that moment: the pairs are resampled together. The ratio is of the means
//! (total against total), and the interval is the 2.5th and 97.5th percentiles of the ratios
//! of [`RESAMPLES`] resamples. An interval that contains 1.0 is "no difference".

use crate::bootstrap::{percentile, XorShift, RESAMPLES};

/// A ratio and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioCi {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    /// Repetitions present in both configurations.
    pub pairs: usize,
}

impl RatioCi {
    /// Whether the interval excludes 1.0: the two configurations differ.
    pub fn differs(&self) -> bool {
        self.hi < 1.0 || self.lo > 1.0
    }

    /// `0.812 [0.790, 0.835]`, or `no difference (0.97 [0.91, 1.04])`.
    pub fn render(&self) -> String {
        let body = format!("{:.3} [{:.3}, {:.3}]", self.ratio, self.lo, self.hi);
        if self.differs() {
            body
        } else {
            format!("no difference ({body})")
        }
    }

    /// The interval's half-width relative to the ratio.
    pub fn relative_half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0 / self.ratio
    }
}

/// `num` against `den`, each a list of (repetition, measurement: an end-to-end time, a rate),
/// paired by repetition; `None` with fewer than two pairs of finite, positive measurements.
pub fn paired(num: &[(u32, f64)], den: &[(u32, f64)], seed: u64) -> Option<RatioCi> {
    let ok = |t: f64| t.is_finite() && t > 0.0;
    let pairs: Vec<(f64, f64)> = num
        .iter()
        .filter(|(_, t)| ok(*t))
        .filter_map(|(rep, t)| {
            den.iter()
                .find(|(r, d)| r == rep && ok(*d))
                .map(|(_, d)| (*t, *d))
        })
        .collect();
    if pairs.len() < 2 {
        return None;
    }
    let ratio_of = |idx: &mut dyn Iterator<Item = usize>| {
        let (n, d) = idx.fold((0.0, 0.0), |(n, d), i| (n + pairs[i].0, d + pairs[i].1));
        n / d
    };
    let ratio = ratio_of(&mut (0..pairs.len()));
    let mut rng = XorShift(seed | 1);
    let mut samples: Vec<f64> = (0..RESAMPLES)
        .map(|_| ratio_of(&mut (0..pairs.len()).map(|_| rng.below(pairs.len()))))
        .collect();
    samples.sort_by(|a, b| a.total_cmp(b));
    Some(RatioCi {
        ratio,
        lo: percentile(&samples, 0.025),
        hi: percentile(&samples, 0.975),
        pairs: pairs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(ts: &[f64]) -> Vec<(u32, f64)> {
        ts.iter().enumerate().map(|(i, t)| (i as u32, *t)).collect()
    }

    #[test]
    fn a_clear_speedup_differs() {
        let base = reps(&[100.0, 104.0, 98.0, 101.0, 99.0]);
        let fast = reps(&[70.0, 73.0, 68.0, 71.0, 69.0]);
        let r = paired(&fast, &base, 7).unwrap();
        assert!((r.ratio - 351.0 / 502.0).abs() < 1e-12);
        assert!(r.lo < r.ratio && r.ratio < r.hi && r.hi < 1.0, "{r:?}");
        assert!(r.differs());
        assert!(!r.render().contains("no difference"));
    }

    #[test]
    fn noise_around_one_is_no_difference() {
        // The negative control: the same distribution, shuffled.
        let a = reps(&[100.0, 140.0, 80.0, 120.0, 95.0, 130.0]);
        let b = reps(&[130.0, 95.0, 120.0, 80.0, 140.0, 100.0]);
        let r = paired(&a, &b, 7).unwrap();
        assert!(!r.differs(), "{r:?}");
        assert!(r.render().starts_with("no difference"));
    }

    #[test]
    fn pairing_removes_shared_disturbance() {
        // Each repetition is slowed by the same factor in both configurations: paired, the
        // ratio is exactly 0.8 whatever the disturbance.
        let slow = [1.0, 1.6, 0.7, 1.3, 1.1];
        let base: Vec<(u32, f64)> = reps(&slow.map(|s| 100.0 * s));
        let fast: Vec<(u32, f64)> = reps(&slow.map(|s| 80.0 * s));
        let r = paired(&fast, &base, 3).unwrap();
        assert!(
            (r.lo - 0.8).abs() < 1e-12 && (r.hi - 0.8).abs() < 1e-12,
            "{r:?}"
        );
    }

    #[test]
    fn unpaired_or_bad_repetitions_are_left_out() {
        let a = vec![(0, 50.0), (1, f64::NAN), (2, 52.0), (7, 51.0)];
        let b = vec![(0, 100.0), (1, 100.0), (2, 104.0)];
        assert_eq!(paired(&a, &b, 1).unwrap().pairs, 2);
        assert_eq!(paired(&a[..1], &b, 1), None);
    }

    #[test]
    fn deterministic() {
        let a = reps(&[10.0, 12.0, 9.0, 11.0]);
        let b = reps(&[20.0, 19.0, 22.0, 21.0]);
        assert_eq!(paired(&a, &b, 5), paired(&a, &b, 5));
    }
}
