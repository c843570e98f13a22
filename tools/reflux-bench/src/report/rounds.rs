// SPDX-License-Identifier: GPL-2.0

//! One paradigm over its rounds: each round's figures, and what they say together (the mean
//! steady rate and the collapse with their intervals, the peak temperatures, the migrations
//! pooled).

use crate::log::{Bench, Migration};
use crate::stats;

use super::migrations::Phases;
use super::repeated::Repeated;
use super::summary::{phase, Summary};
use super::Dilation;

/// The peak device temperature: each round's hottest sample, and over the rounds.
pub struct Peak {
    pub each: Vec<(u32, f64)>,
    pub median: f64,
    pub max: f64,
}

pub struct Rounds<'a> {
    pub name: &'a str,
    /// By round.
    pub rounds: Vec<Summary<'a>>,
    pub steady_mbps: Repeated,
    /// `1 - settled / initial` per round (see `collapse`).
    pub collapse: Repeated,
    pub peak_temp_c: Option<Peak>,
    /// Every round's migrations.
    pub migrations: Vec<&'a Migration>,
    /// Their phases per direction.
    pub phases: Phases,
}

impl<'a> Rounds<'a> {
    pub fn of(bench: &'a Bench, name: &'a str, dilation: Option<Dilation>) -> Rounds<'a> {
        let rounds: Vec<Summary> = bench.rounds(name).into_iter().map(Summary::of).collect();
        let each = |f: &dyn Fn(&Summary) -> Option<f64>| -> Vec<(u32, f64)> {
            rounds
                .iter()
                .filter_map(|s| Some((s.p.round, f(s)?)))
                .collect()
        };
        let temps = each(&|s| s.max_temp_c);
        let migrations: Vec<&Migration> = rounds.iter().flat_map(|s| &s.p.migrations).collect();
        Rounds {
            name,
            steady_mbps: Repeated::of(each(&|s| s.steady_mbps)),
            collapse: Repeated::of(each(&|s| s.collapse?.fraction())),
            peak_temp_c: peak(temps),
            phases: Phases::of(&migrations, dilation),
            migrations,
            rounds,
        }
    }

    /// The hottest of the rounds' second halves, °C.
    pub fn steady_max_temp_c(&self) -> Option<f64> {
        self.rounds
            .iter()
            .filter_map(|s| s.steady_max_temp_c)
            .reduce(f64::max)
    }

    /// The mean over the rounds of the share of samples throttled.
    pub fn throttled_fraction(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .rounds
            .iter()
            .filter_map(|s| s.throttled_fraction)
            .collect();
        stats::mean(&v)
    }

    /// The distribution of a time over every round's migrations.
    pub fn pooled(&self, f: fn(&Migration) -> f64) -> Option<stats::Dist> {
        phase(&self.migrations, f)
    }

    /// `ok` if every round verified, else the first round's `fail` or `missing`.
    pub fn verify(&self) -> &'static str {
        self.rounds
            .iter()
            .map(Summary::verify)
            .find(|v| *v != "ok")
            .unwrap_or("ok")
    }
}

fn peak(each: Vec<(u32, f64)>) -> Option<Peak> {
    let values: Vec<f64> = each.iter().map(|e| e.1).collect();
    Some(Peak {
        median: stats::median(&values)?,
        max: stats::max(&values)?,
        each,
    })
}
