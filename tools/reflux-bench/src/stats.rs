// SPDX-License-Identifier: GPL-2.0

//! Means, medians and percentiles.

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// The middle value, or the mean of the two middle values of an even count.
pub fn median(xs: &[f64]) -> Option<f64> {
    let v = sorted(xs);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The `p`th percentile by nearest rank: the smallest value with at least `p` % of the values
/// at or below it (always one of the values; of fewer than 100 values, the 99th is the maximum).
pub fn percentile(xs: &[f64], p: f64) -> Option<f64> {
    let v = sorted(xs);
    if v.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * v.len() as f64).ceil() as usize;
    Some(v[rank.clamp(1, v.len()) - 1])
}

pub fn max(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().reduce(f64::max)
}

/// The summary of a distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dist {
    pub median: f64,
    pub p99: f64,
    pub max: f64,
}

pub fn dist(xs: &[f64]) -> Option<Dist> {
    Some(Dist {
        median: median(xs)?,
        p99: percentile(xs, 99.0)?,
        max: max(xs)?,
    })
}
