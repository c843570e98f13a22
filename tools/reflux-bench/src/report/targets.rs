// SPDX-License-Identifier: GPL-2.0

//! The paper's targets, checked against what the rounds measured together. They are
//! reported, not enforced: the emulator is not the paper's hardware.

use crate::log::Migration;

use super::summary::pct_of_epoch;
use super::{Report, EPOCH_MS, MOVE_TARGET_PCT, SPEEDUP_TARGET, THROTTLE_C};

/// A target of the paper, checked against a measurement.
pub struct Target {
    pub id: &'static str,
    pub what: String,
    pub measured: Option<f64>,
    /// The measurement as the table shows it.
    pub shown: String,
    /// `None` if there is nothing to judge (a paradigm or its migrations are missing).
    pub pass: Option<bool>,
}

impl Report<'_> {
    /// C's pooled median move time, ns, and as a percentage of the epoch.
    pub fn c_move(&self) -> Option<(f64, f64)> {
        let d = self.get("C")?.pooled(Migration::move_ns)?;
        Some((d.median, pct_of_epoch(Some(d))?.0))
    }

    pub fn targets(&self) -> Vec<Target> {
        let speedup = self.ratio("C", "B");
        let temp = self.get("C").and_then(|c| c.steady_max_temp_c());
        let moved = self.c_move();
        vec![
            Target {
                id: "c_over_b_steady",
                what: format!("C steady MB/s ≥ {SPEEDUP_TARGET} × B"),
                measured: speedup,
                shown: speedup.map_or("-".into(), |r| format!("{r:.3} ×")),
                pass: speedup.map(|r| r >= SPEEDUP_TARGET),
            },
            Target {
                id: "c_steady_max_temp_c",
                what: format!("C steady max temperature < {THROTTLE_C} °C"),
                measured: temp,
                shown: temp.map_or("-".into(), |t| format!("{t:.1} °C")),
                pass: temp.map(|t| t < THROTTLE_C),
            },
            Target {
                id: "c_median_move_pct_of_epoch",
                what: format!(
                    "C median migration move < {MOVE_TARGET_PCT} % of the {EPOCH_MS} ms epoch ({} µs)",
                    MOVE_TARGET_PCT / 100.0 * EPOCH_MS * 1000.0
                ),
                measured: moved.map(|m| m.1),
                shown: moved.map_or("-".into(), |(ns, pct)| {
                    format!("{:.2} µs = {pct:.3} %", ns / 1000.0)
                }),
                pass: moved.map(|m| m.1 < MOVE_TARGET_PCT),
            },
            self.verify_target(),
        ]
    }

    /// Every round of every paradigm, and every sweep point, verified.
    fn verify_target(&self) -> Target {
        let mut shown: Vec<String> = self
            .paradigms
            .iter()
            .map(|r| format!("{} {}", r.name, r.verify()))
            .collect();
        let failed = self.bench.points.iter().filter(|p| !p.verify_ok).count();
        if !self.bench.points.is_empty() {
            shown.push(match failed {
                0 => "points ok".into(),
                n => format!("points {n} fail"),
            });
        }
        let all_ok = self.paradigms.iter().all(|r| r.verify() == "ok") && failed == 0;
        Target {
            id: "fio_verify_all_ok",
            what: "fio verify ok for every paradigm".into(),
            measured: None,
            shown: shown.join(", "),
            pass: (!self.paradigms.is_empty()).then_some(all_ok),
        }
    }
}
