// SPDX-License-Identifier: GPL-2.0

//! A sweep's points: per paradigm and condition (rw, block size, queue depth, distribution)
//! the means over the repetitions with their intervals, and per condition C against B and H,
//! paired by repetition, in the figure the sweep is about.

use crate::log::{report_order, Bench, Dist, Point, Rw, Suite};

use super::compare::Paired;
use super::repeated::Repeated;

/// What a point is run under, the paradigm aside. Ordered so that a sweep's varying key runs
/// within the fixed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Condition {
    pub rw: Rw,
    pub dist: Dist,
    pub qd: u64,
    pub bs: u64,
}

impl Condition {
    fn of(p: &Point) -> Condition {
        Condition {
            rw: p.rw,
            dist: p.dist,
            qd: p.qd,
            bs: p.bs,
        }
    }
}

/// A point's measured figures; the discriminant indexes [`Group::figures`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    BwMbps = 0,
    Iops = 1,
    CpuNsPerGib = 2,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::BwMbps, Metric::Iops, Metric::CpuNsPerGib];

    /// Its key, as on the point line and in results.json.
    pub fn key(self) -> &'static str {
        match self {
            Metric::BwMbps => "bw_mbps",
            Metric::Iops => "iops",
            Metric::CpuNsPerGib => "cpu_ns_per_gib",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Metric::BwMbps => "MB/s",
            Metric::Iops => "IOPS",
            Metric::CpuNsPerGib => "host CPU ns/GiB",
        }
    }

    pub fn of(self, p: &Point) -> f64 {
        match self {
            Metric::BwMbps => p.bw_mbps,
            Metric::Iops => p.iops,
            Metric::CpuNsPerGib => p.cpu_ns_per_gib,
        }
    }
}

/// The repetitions of one paradigm at one condition.
pub struct Group<'a> {
    pub paradigm: &'a str,
    pub cond: Condition,
    pub points: Vec<&'a Point>,
    /// Indexed by [`Metric`].
    pub figures: [Repeated; 3],
}

impl Group<'_> {
    pub fn get(&self, m: Metric) -> &Repeated {
        &self.figures[m as usize]
    }

    pub fn verify_ok(&self) -> bool {
        self.points.iter().all(|p| p.verify_ok)
    }

    fn each(&self, m: Metric) -> &[(u32, f64)] {
        &self.get(m).each
    }
}

/// C against the baselines at one condition.
pub struct PointRatio {
    pub cond: Condition,
    /// (baseline, C against it), for B and H.
    pub vs: Vec<(&'static str, Option<Paired>)>,
}

/// The baselines C is compared with in a sweep.
pub const BASELINES: [&str; 2] = ["B", "H"];

pub struct Sweep<'a> {
    pub suite: Suite,
    /// By paradigm (report order), then condition.
    pub groups: Vec<Group<'a>>,
    pub ratios: Vec<PointRatio>,
}

impl<'a> Sweep<'a> {
    /// `None` if the suite has no point.
    pub fn of(bench: &'a Bench, suite: Suite) -> Option<Sweep<'a>> {
        let points: Vec<&Point> = bench.points.iter().filter(|p| p.suite == suite).collect();
        let names = report_order(points.iter().map(|p| p.paradigm.as_str()));
        let mut conds: Vec<Condition> = points.iter().map(|p| Condition::of(p)).collect();
        conds.sort();
        conds.dedup();
        let mut groups = Vec::new();
        for paradigm in names {
            for &cond in &conds {
                let mine: Vec<&Point> = points
                    .iter()
                    .copied()
                    .filter(|p| p.paradigm == paradigm && Condition::of(p) == cond)
                    .collect();
                if !mine.is_empty() {
                    groups.push(group(paradigm, cond, mine));
                }
            }
        }
        let mut sweep = Sweep {
            suite,
            groups,
            ratios: Vec::new(),
        };
        sweep.ratios = conds.iter().filter_map(|c| sweep.ratio(*c)).collect();
        (!sweep.groups.is_empty()).then_some(sweep)
    }

    /// The figure the sweep is about: host CPU per GiB at each queue depth, else throughput.
    pub fn metric(&self) -> Metric {
        match self.suite {
            Suite::Qd => Metric::CpuNsPerGib,
            Suite::Bs | Suite::Keys => Metric::BwMbps,
        }
    }

    pub fn group(&self, paradigm: &str, cond: Condition) -> Option<&Group<'a>> {
        self.groups
            .iter()
            .find(|g| g.paradigm == paradigm && g.cond == cond)
    }

    fn ratio(&self, cond: Condition) -> Option<PointRatio> {
        let c = self.group("C", cond)?;
        let m = self.metric();
        let vs: Vec<(&'static str, Option<Paired>)> = BASELINES
            .iter()
            .filter_map(|b| {
                let g = self.group(b, cond)?;
                Some((*b, Paired::of(c.each(m), g.each(m))))
            })
            .collect();
        (!vs.is_empty()).then_some(PointRatio { cond, vs })
    }
}

fn group<'a>(paradigm: &'a str, cond: Condition, points: Vec<&'a Point>) -> Group<'a> {
    let figures =
        Metric::ALL.map(|m| Repeated::of(points.iter().map(|p| (p.rep, m.of(p))).collect()));
    Group {
        paradigm,
        cond,
        points,
        figures,
    }
}
