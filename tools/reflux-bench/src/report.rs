// SPDX-License-Identifier: GPL-2.0

//! What the benchmark measured: per paradigm and round the steady throughput, temperatures,
//! throttling, collapse and migration times, and over the rounds their means with 95 %
//! bootstrap intervals; the ratios between paradigms paired by round; the sweeps' points; the
//! paper's targets; as JSON, a table and plots.

pub mod collapse;
pub mod compare;
pub mod dilation;
pub mod migrations;
pub mod repeated;
pub mod rounds;
pub mod summary;
pub mod sweep;
pub mod targets;

mod plots;
mod results;
mod sweep_plots;
mod table;

use crate::log::{Bench, Suite};

pub use compare::{Comparison, Paired};
pub use dilation::Dilation;
pub use rounds::Rounds;
pub use summary::{steady, Summary};
pub use sweep::Sweep;
pub use targets::Target;

/// The scheduling epoch migration costs are compared with.
pub const EPOCH_MS: f64 = 10.0;
/// Target: C's steady throughput at least this many times B's.
pub const SPEEDUP_TARGET: f64 = 1.7;
/// Target: C's steady maximum temperature below this (°C), where the device throttles.
pub const THROTTLE_C: f64 = 77.0;
/// Target: the median migration move time below this share of the epoch (%).
pub const MOVE_TARGET_PCT: f64 = 0.5;
/// The bootstrap's seed: the same log gives the same intervals.
pub const SEED: u64 = 1;

/// The colours of the variants of C, in the order they appear.
const VARIANT_COLOURS: [&str; 5] = ["#17becf", "#bcbd22", "#8c564b", "#e377c2", "#7f7f7f"];

/// The figures of every paradigm that ran and every sweep that has points.
pub struct Report<'a> {
    pub bench: &'a Bench,
    /// In report order (A, B, Bq, C, C's variants, H); only those that ran.
    pub paradigms: Vec<Rounds<'a>>,
    pub comparisons: Vec<Comparison>,
    /// The VM's dilation, if the log gives it.
    pub dilation: Option<Dilation>,
    /// Why the log's calibration gives no dilation, if it does not.
    dilation_error: Option<String>,
    /// The suites with points, in the order bs, keys, qd.
    pub sweeps: Vec<Sweep<'a>>,
}

impl<'a> Report<'a> {
    pub fn new(bench: &'a Bench) -> Report<'a> {
        let (dilation, dilation_error) = match Dilation::of(&bench.info) {
            Ok(d) => (d, None),
            Err(e) => (None, Some(e)),
        };
        let paradigms: Vec<Rounds> = bench
            .names()
            .into_iter()
            .map(|n| Rounds::of(bench, n, dilation))
            .collect();
        Report {
            bench,
            comparisons: compare::comparisons(&paradigms),
            paradigms,
            dilation,
            dilation_error,
            sweeps: Suite::ALL
                .iter()
                .filter_map(|s| Sweep::of(bench, *s))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Rounds<'a>> {
        self.paradigms.iter().find(|r| r.name == name)
    }

    /// The comparison `num/den`, if the report makes it.
    pub fn comparison(&self, num: &str, den: &str) -> Option<&Comparison> {
        self.comparisons
            .iter()
            .find(|c| c.num == num && c.den == den)
    }

    /// The ratio of two paradigms' mean steady throughputs over the rounds both ran.
    pub fn ratio(&self, num: &str, den: &str) -> Option<f64> {
        Some(self.comparison(num, den)?.paired.as_ref()?.ratio)
    }

    pub fn sweep(&self, suite: Suite) -> Option<&Sweep<'a>> {
        self.sweeps.iter().find(|s| s.suite == suite)
    }

    /// The paradigm's colour in the plots.
    pub fn colour(&self, name: &str) -> &'static str {
        match name {
            "A" => "#d62728",
            "B" => "#ff7f0e",
            "Bq" => "#9467bd",
            "C" => "#2ca02c",
            "H" => "#1f77b4",
            _ => {
                let variants = self
                    .paradigms
                    .iter()
                    .filter(|r| crate::log::variant(r.name).is_some());
                let i = variants.take_while(|r| r.name != name).count();
                VARIANT_COLOURS[i % VARIANT_COLOURS.len()]
            }
        }
    }

    /// Why the run failed: no paradigm ran, or a round's fio or a sweep's point did not verify.
    pub fn problems(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.paradigms.is_empty() {
            v.push("no paradigm ran (no '##reflux-bench begin' line)".into());
        }
        for s in self.paradigms.iter().flat_map(|r| &r.rounds) {
            match s.verify() {
                "ok" => {}
                "missing" => v.push(format!(
                    "paradigm {} round {}: no fio line",
                    s.p.name, s.p.round
                )),
                f => v.push(format!(
                    "paradigm {} round {}: fio verify={f}",
                    s.p.name, s.p.round
                )),
            }
        }
        for p in self.bench.points.iter().filter(|p| !p.verify_ok) {
            v.push(format!("line {}: point {}: verify=fail", p.line, p.label()));
        }
        v
    }

    /// Worth saying but not a failure: fio errors with a verified run, a calibration that
    /// gives no dilation.
    pub fn warnings(&self) -> Vec<String> {
        let errors = self
            .paradigms
            .iter()
            .flat_map(|r| &r.rounds)
            .filter_map(|s| {
                let e = s.p.fio.as_ref()?.errors?;
                (e > 0.0).then(|| {
                    format!(
                        "paradigm {} round {}: fio reported errors={e}",
                        s.p.name, s.p.round
                    )
                })
            });
        errors.chain(self.dilation_error.clone()).collect()
    }

    /// The output files: name and contents. The sweeps' plots only where the suite has points.
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let mut files = vec![
            ("results.json", self.json().render()),
            ("table.txt", self.table()),
        ];
        if !self.paradigms.is_empty() {
            files.push(("throughput.svg", self.throughput_svg()));
            files.push(("temperature.svg", self.temperature_svg()));
            files.push(("migrations.svg", self.migrations_svg()));
        }
        files.extend(self.sweep_svgs());
        files
    }
}
