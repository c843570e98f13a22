// SPDX-License-Identifier: GPL-2.0

//! The sweeps' plots, each written only if its suite has points: `bs_sweep.svg` (throughput
//! against the block size), `keys.svg` (throughput by key distribution, grouped bars) and
//! `qd_cpu.svg` (host CPU per GiB against the queue depth). Error bars are the 95 % intervals
//! of the means over the reps.

use crate::log::{Dist, Rw, Suite};
use crate::plot::bars::{Bar, BarChart, BarSeries};
use crate::plot::{Plot, Scale, Series};

use super::sweep::{Condition, Group, Metric, Sweep};
use super::Report;

/// Colours of the series where a paradigm has several (bars cannot be dashed).
const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Dash patterns of a paradigm's lines, by the index of their rw: its colour stays the
/// paradigm's, as in the other plots.
const DASHES: [Option<&str>; 4] = [None, Some("6 3"), Some("2 3"), Some("8 3 2 3")];

/// One series of a sweep's plot: its name, paradigm, and groups in the sweep's order.
struct Line<'s, 'a> {
    name: String,
    paradigm: &'a str,
    rw: Rw,
    groups: Vec<&'s Group<'a>>,
}

/// The condition a sweep's plot puts along x.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Along {
    Bs,
    Qd,
    Dist,
}

impl Along {
    /// `cond` without the x's field: what the points of one series share.
    fn strip(self, mut cond: Condition) -> Condition {
        match self {
            Along::Bs => cond.bs = 0,
            Along::Qd => cond.qd = 0,
            Along::Dist => cond.dist = Dist::Seq,
        }
        cond
    }
}

/// A series' name: the paradigm, its rw, and what else differs between the sweep's series.
fn label(s: &Sweep<'_>, along: Along, g: &Group<'_>) -> String {
    let varies = |f: fn(&Condition) -> String| {
        let first = s.groups.first().map(|x| f(&x.cond));
        s.groups.iter().any(|x| Some(f(&x.cond)) != first)
    };
    let mut name = format!("{} {}", g.paradigm, g.cond.rw.name());
    if along != Along::Bs && varies(|c| c.bs.to_string()) {
        name += &format!(" bs={}", g.cond.bs);
    }
    if along != Along::Qd && varies(|c| c.qd.to_string()) {
        name += &format!(" qd={}", g.cond.qd);
    }
    if along != Along::Dist && varies(|c| c.dist.name().to_string()) {
        name += &format!(" {}", g.cond.dist.name());
    }
    name
}

/// The sweep's groups by series.
fn series<'s, 'a>(s: &'s Sweep<'a>, along: Along) -> Vec<Line<'s, 'a>> {
    let mut out: Vec<(Condition, Line)> = Vec::new();
    for g in &s.groups {
        let key = along.strip(g.cond);
        match out
            .iter_mut()
            .find(|e| e.1.paradigm == g.paradigm && e.0 == key)
        {
            Some(e) => e.1.groups.push(g),
            None => out.push((
                key,
                Line {
                    name: label(s, along, g),
                    paradigm: g.paradigm,
                    rw: g.cond.rw,
                    groups: vec![g],
                },
            )),
        }
    }
    out.into_iter().map(|e| e.1).collect()
}

/// A line per series: `metric` (divided by `unit`) against `x`, with its intervals as error
/// bars; the paradigm's colour, dashed by rw.
fn lines(
    r: &Report<'_>,
    s: &Sweep<'_>,
    along: Along,
    metric: Metric,
    unit: f64,
    x: fn(&Condition) -> f64,
) -> Vec<Series> {
    let mut rws: Vec<Rw> = s.groups.iter().map(|g| g.cond.rw).collect();
    rws.sort();
    rws.dedup();
    let mut out = Vec::new();
    for l in series(s, along) {
        let dash = rws.iter().position(|rw| *rw == l.rw).unwrap_or(0);
        let mut line = Series {
            name: l.name,
            colour: r.colour(l.paradigm),
            dash: DASHES[dash % DASHES.len()],
            ..Series::default()
        };
        for g in l.groups {
            let (at, fig) = (x(&g.cond), g.get(metric));
            line.points.extend(fig.mean.map(|m| (at, m / unit)));
            line.errors
                .extend(fig.ci.map(|c| (at, c.lo / unit, c.hi / unit)));
        }
        out.push(line);
    }
    out
}

fn bs_svg(r: &Report<'_>, s: &Sweep<'_>) -> String {
    Plot {
        title: "reflux: throughput against block size (mean of the reps, 95 % interval)".into(),
        x_label: "block size (bytes, log2)".into(),
        // The store alone reads two orders of magnitude faster than any pipeline.
        y_label: "MB/s (10^6 bytes per second, log10)".into(),
        series: lines(r, s, Along::Bs, Metric::BwMbps, 1.0, |c| c.bs as f64),
        x_scale: Scale::Log2,
        y_scale: Scale::Log10,
        ..Plot::default()
    }
    .svg()
}

fn qd_svg(r: &Report<'_>, s: &Sweep<'_>) -> String {
    // A queue depth of 0 has no place on a log axis.
    let log = s.groups.iter().all(|g| g.cond.qd > 0);
    Plot {
        title: "reflux: host CPU time per GiB moved against queue depth (mean of the reps)".into(),
        x_label: if log {
            "queue depth (log2)"
        } else {
            "queue depth"
        }
        .into(),
        y_label: "host CPU ms per GiB".into(),
        series: lines(r, s, Along::Qd, Metric::CpuNsPerGib, 1e6, |c| c.qd as f64),
        x_scale: if log { Scale::Log2 } else { Scale::Linear },
        y_zero: true,
        ..Plot::default()
    }
    .svg()
}

fn keys_svg(r: &Report<'_>, s: &Sweep<'_>) -> String {
    let mut dists: Vec<Dist> = s.groups.iter().map(|g| g.cond.dist).collect();
    dists.sort();
    dists.dedup();
    let lines = series(s, Along::Dist);
    // The paradigms' colours where each has one series; else one colour per series.
    let shared = lines
        .iter()
        .enumerate()
        .any(|(i, l)| lines[..i].iter().any(|m| m.paradigm == l.paradigm));
    let series = lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let bar = |d: &Dist| -> Bar {
                let r = l
                    .groups
                    .iter()
                    .find(|g| g.cond.dist == *d)?
                    .get(Metric::BwMbps);
                Some((r.mean?, r.ci.map(|c| (c.lo, c.hi))))
            };
            BarSeries {
                colour: if shared {
                    PALETTE[i % PALETTE.len()]
                } else {
                    r.colour(l.paradigm)
                },
                bars: dists.iter().map(bar).collect(),
                name: l.name,
            }
        })
        .collect();
    BarChart {
        title: "reflux: throughput by key distribution (mean of the reps, 95 % interval)".into(),
        x_label: "distribution of the offsets".into(),
        y_label: "MB/s (10^6 bytes per second)".into(),
        groups: dists.iter().map(|d| d.name().to_string()).collect(),
        series,
    }
    .svg()
}

impl Report<'_> {
    /// The sweeps' plots, of the suites that have points.
    pub fn sweep_svgs(&self) -> Vec<(&'static str, String)> {
        self.sweeps
            .iter()
            .map(|s| match s.suite {
                Suite::Bs => ("bs_sweep.svg", bs_svg(self, s)),
                Suite::Keys => ("keys.svg", keys_svg(self, s)),
                Suite::Qd => ("qd_cpu.svg", qd_svg(self, s)),
            })
            .collect()
    }
}
