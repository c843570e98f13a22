// SPDX-License-Identifier: GPL-2.0

//! A plot's axis: its range and its ticks, linear, logarithmic or by category.

/// How an axis maps values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    #[default]
    Linear,
    /// Decades; values ≤ 0 are left out.
    Log10,
    /// Powers of two (block sizes, queue depths); values ≤ 0 are left out.
    Log2,
}

/// A step of 1, 2 or 5 times a power of ten near `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// A linear axis over `lo..hi` widened to whole steps: (lo, hi, step).
fn linear_axis(lo: f64, hi: f64) -> (f64, f64, f64) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let step = nice_step((hi - lo) / 8.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

fn tick_label(v: f64, step: f64) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".to_string()
    } else {
        s
    }
}

/// `2^k` as a size: 512, 4K, 1M (binary multiples, as block sizes are given).
fn pow2_label(k: i32) -> String {
    match k {
        k if k < 0 => format!("{}", 2f64.powi(k)),
        k if k < 10 => format!("{}", 1u64 << k),
        k if k < 20 => format!("{}K", 1u64 << (k - 10)),
        k if k < 30 => format!("{}M", 1u64 << (k - 20)),
        k => format!("{}G", 2f64.powi(k - 30)),
    }
}

/// The smallest and largest finite values (above 0 if `positive`), if any.
fn range(values: impl Iterator<Item = f64>, positive: bool) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite() && (!positive || *v > 0.0))
        .fold(None, |r, v| match r {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
    /// (value, label)
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// An axis over the values, with 5 % room beyond them if `headroom` (not below 0 with
    /// `zero`).
    pub fn linear(values: impl Iterator<Item = f64>, zero: bool, headroom: bool) -> Axis {
        let (mut lo, mut hi) = range(values, false).unwrap_or((0.0, 1.0));
        if zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if headroom && hi > lo {
            let room = (hi - lo) * 0.05;
            hi += room;
            if !zero {
                lo -= room;
            }
        }
        let (lo, hi, step) = linear_axis(lo, hi);
        let n = ((hi - lo) / step).round() as usize;
        let ticks = (0..=n)
            .map(|i| {
                let v = lo + step * i as f64;
                (v, tick_label(v, step))
            })
            .collect();
        Axis {
            lo,
            hi,
            scale: Scale::Linear,
            ticks,
        }
    }

    /// A logarithmic axis from the power of `scale`'s base at or below the smallest value to
    /// the one at or above the largest, a tick at each power.
    pub fn log(values: impl Iterator<Item = f64>, scale: Scale) -> Axis {
        let base: f64 = if scale == Scale::Log2 { 2.0 } else { 10.0 };
        let (lo, hi) = range(values, true).unwrap_or((1.0, base));
        let (a, mut b) = (lo.log(base).floor() as i32, hi.log(base).ceil() as i32);
        if b <= a {
            b = a + 1;
        }
        let ticks = (a..=b)
            .map(|k| {
                let v = base.powi(k);
                let label = match scale {
                    Scale::Log2 => pow2_label(k),
                    _ => format!("{v:.*}", (-k).max(0) as usize),
                };
                (v, label)
            })
            .collect();
        Axis {
            lo: base.powi(a),
            hi: base.powi(b),
            scale,
            ticks,
        }
    }

    /// An axis of `labels.len()` categories, each a unit wide, labelled at its middle.
    pub fn categories(labels: &[String]) -> Axis {
        Axis {
            lo: 0.0,
            hi: labels.len().max(1) as f64,
            scale: Scale::Linear,
            ticks: labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64 + 0.5, l.clone()))
                .collect(),
        }
    }

    /// Whether `v` can be placed on the axis.
    pub fn takes(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    /// Where `v` falls between 0 (lo) and 1 (hi).
    pub fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            _ => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_end_on_round_ticks() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(13.0), 20.0);
        assert_eq!(nice_step(300.0), 500.0);
        let a = Axis::linear([48.2, 81.9].into_iter(), false, false);
        assert_eq!((a.lo, a.hi), (45.0, 85.0));
        assert_eq!(a.ticks[0].1, "45");
        let a = Axis::linear([60.0, 80.0].into_iter(), false, true);
        assert_eq!((a.lo, a.hi, a.ticks.len()), (55.0, 85.0, 7));
        let a = Axis::linear([0.0, 1.0].into_iter(), false, false);
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::linear([0.0, 0.3].into_iter(), true, false);
        assert_eq!(a.ticks[1].1, "0.05");
        let a = Axis::log([3.0, 4000.0].into_iter(), Scale::Log10);
        assert_eq!((a.lo, a.hi, a.ticks.len()), (1.0, 10000.0, 5));
        let a = Axis::log([0.05].into_iter(), Scale::Log10);
        assert_eq!((a.lo, a.hi), (0.01, 0.1));
        assert_eq!(a.ticks[0].1, "0.01");
    }

    #[test]
    fn log2_axes_label_sizes() {
        let a = Axis::log([512.0, 4096.0, 1048576.0].into_iter(), Scale::Log2);
        assert_eq!((a.lo, a.hi), (512.0, 1048576.0));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels[..3], ["512", "1K", "2K"]);
        assert_eq!(labels.last(), Some(&"1M"));
        assert!((a.frac(32768.0) - 6.0 / 11.0).abs() < 1e-12);
        let c = Axis::categories(&["seq".into(), "zipf".into()]);
        assert_eq!((c.hi, c.ticks[1].0), (2.0, 1.5));
    }
}
