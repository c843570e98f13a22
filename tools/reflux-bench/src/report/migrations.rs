// SPDX-License-Identifier: GPL-2.0

//! The migrations' phases per direction, pooled over the rounds: how many, the median with a
//! 95 % bootstrap interval (resampling the migrations), the 99th percentile, and the median
//! as it would be natively if the VM's dilation is known.

use bench_stats::{bootstrap, Ci};

use crate::log::{Migration, Place};
use crate::stats;

use super::{Dilation, SEED};

/// A phase of a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Drain,
    Ckpt,
    Handover,
    Rebuild,
    /// Checkpoint + handover + rebuild: what the migration costs beyond the drain.
    Move,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Drain,
        Phase::Ckpt,
        Phase::Handover,
        Phase::Rebuild,
        Phase::Move,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Drain => "drain",
            Phase::Ckpt => "ckpt",
            Phase::Handover => "handover",
            Phase::Rebuild => "rebuild",
            Phase::Move => "move",
        }
    }

    /// Its time in `m`, ns.
    pub fn of(self, m: &Migration) -> f64 {
        match self {
            Phase::Drain => m.drain_ns,
            Phase::Ckpt => m.ckpt_ns,
            Phase::Handover => m.handover_ns,
            Phase::Rebuild => m.rebuild_ns,
            Phase::Move => m.move_ns(),
        }
    }
}

/// One phase's times in one direction, ns.
pub struct PhaseStat {
    pub phase: Phase,
    pub median: f64,
    /// `None` with fewer than two migrations.
    pub median_ci: Option<Ci>,
    pub p99: f64,
    /// The median divided by the dilation, if known.
    pub native_median: Option<f64>,
}

/// The migrations from one side to the other.
pub struct Direction {
    pub from: Place,
    pub to: Place,
    pub n: usize,
    /// Every phase, in [`Phase::ALL`]'s order; empty without migrations.
    pub phases: Vec<PhaseStat>,
}

impl Direction {
    fn of(from: Place, to: Place, all: &[&Migration], dilation: Option<Dilation>) -> Direction {
        let mine: Vec<&Migration> = all
            .iter()
            .copied()
            .filter(|m| m.from == from && m.to == to)
            .collect();
        let phases = Phase::ALL
            .iter()
            .filter_map(|&phase| {
                let times: Vec<f64> = mine.iter().map(|m| phase.of(m)).collect();
                let median = stats::median(&times)?;
                Some(PhaseStat {
                    phase,
                    median,
                    median_ci: bench_stats::interval(&times, bootstrap::median, SEED),
                    p99: stats::percentile(&times, 99.0)?,
                    native_median: dilation.map(|d| d.native(median)),
                })
            })
            .collect();
        Direction {
            from,
            to,
            n: mine.len(),
            phases,
        }
    }

    /// `host_to_device`, for results.json.
    pub fn key(&self) -> String {
        format!("{}_to_{}", self.from.name(), self.to.name())
    }

    /// `host → device`, for the table.
    pub fn label(&self) -> String {
        format!("{} → {}", self.from.name(), self.to.name())
    }

    pub fn get(&self, phase: Phase) -> Option<&PhaseStat> {
        self.phases.iter().find(|p| p.phase == phase)
    }
}

/// Both directions: host → device (an offload), device → host (an upload).
pub struct Phases {
    pub directions: [Direction; 2],
}

impl Phases {
    pub fn of(migrations: &[&Migration], dilation: Option<Dilation>) -> Phases {
        let (h, d) = (Place::Host, Place::Device);
        Phases {
            directions: [
                Direction::of(h, d, migrations, dilation),
                Direction::of(d, h, migrations, dilation),
            ],
        }
    }
}
