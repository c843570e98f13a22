// SPDX-License-Identifier: GPL-2.0

//! The bootstrap's pieces: a generator, the quantile of a sorted sample, and the 95 % interval
//! of a statistic of one sample (the mean of some repetitions, the median of some times).

/// Resamples of the bootstrap: enough that the percentiles move by well under 1 %.
pub const RESAMPLES: usize = 4000;

/// A small deterministic generator: the same runs give the same intervals.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The `p` quantile of sorted `xs` (linear between the nearest ranks).
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    let at = p * (xs.len() - 1) as f64;
    let (i, frac) = (at.floor() as usize, at.fract());
    match xs.get(i + 1) {
        Some(next) => xs[i] + frac * (next - xs[i]),
        None => xs[i],
    }
}

/// A statistic of a sample and its 95 % bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ci {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// The sample's size.
    pub n: usize,
}

impl Ci {
    /// `12.3 [11.9, 12.8]` with `decimals` after the point.
    pub fn render(&self, decimals: usize) -> String {
        format!(
            "{:.decimals$} [{:.decimals$}, {:.decimals$}]",
            self.value, self.lo, self.hi
        )
    }

    /// Every figure divided by `d` (a time scaled to another clock).
    pub fn scaled(&self, d: f64) -> Ci {
        Ci {
            value: self.value / d,
            lo: self.lo / d,
            hi: self.hi / d,
            n: self.n,
        }
    }
}

/// `stat` of the finite values of `xs`, with the 2.5th and 97.5th percentiles of `stat` over
/// [`RESAMPLES`] resamples (drawn with replacement) as its interval; `None` with fewer than two
/// finite values, where a resample could not differ from the sample.
pub fn interval(xs: &[f64], stat: impl Fn(&[f64]) -> f64, seed: u64) -> Option<Ci> {
    let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if xs.len() < 2 {
        return None;
    }
    let mut rng = XorShift(seed | 1);
    let mut draw = vec![0.0; xs.len()];
    let mut samples: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            for d in draw.iter_mut() {
                *d = xs[rng.below(xs.len())];
            }
            stat(&draw)
        })
        .filter(|s| s.is_finite())
        .collect();
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    Some(Ci {
        value: stat(&xs),
        lo: percentile(&samples, 0.025),
        hi: percentile(&samples, 0.975),
        n: xs.len(),
    })
}

/// The mean, for [`interval`].
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The median (the mean of the middle two of an even count), for [`interval`].
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_values_give_a_zero_width_interval() {
        let ci = interval(&[5.0; 6], mean, 1).unwrap();
        assert_eq!((ci.value, ci.lo, ci.hi, ci.n), (5.0, 5.0, 5.0, 6));
    }

    #[test]
    fn the_interval_holds_the_statistic() {
        let xs = [10.0, 12.0, 9.0, 11.0, 30.0, 10.5, 9.5];
        for stat in [mean as fn(&[f64]) -> f64, median] {
            let ci = interval(&xs, stat, 3).unwrap();
            assert!(ci.lo <= ci.value && ci.value <= ci.hi, "{ci:?}");
            assert!(ci.lo >= 9.0 && ci.hi <= 30.0, "{ci:?}");
        }
        assert_eq!(median(&xs), 10.5);
        assert_eq!(median(&[1.0, 4.0]), 2.5);
    }

    #[test]
    fn too_few_values_give_none() {
        assert_eq!(interval(&[1.0], mean, 1), None);
        assert_eq!(interval(&[1.0, f64::NAN], mean, 1), None);
    }

    #[test]
    fn percentiles_interpolate() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&xs, 0.5), 3.0);
        assert_eq!(percentile(&xs, 0.125), 1.5);
        assert_eq!(percentile(&xs, 1.0), 5.0);
    }
}
