// SPDX-License-Identifier: GPL-2.0

//! reflux-bench: turns the log of the reflux paradigm benchmark (the `##reflux-bench` lines of
//! the VM's tests.log) into `results.json`, `table.txt`, `throughput.svg`, `temperature.svg`,
//! `migrations.svg` and, for the sweeps that ran, `bs_sweep.svg`, `keys.svg` and `qd_cpu.svg`.
//!
//! `log` parses the lines, `stats` has the medians and percentiles, `report` computes the
//! figures (with bench-stats' bootstrap intervals over rounds and reps), the paper's targets
//! and the outputs, `json` and `plot` write JSON and SVG by hand.

pub mod json;
pub mod log;
pub mod plot;
pub mod report;
pub mod stats;

use std::path::Path;

/// What a run of the tool ends in.
pub struct Outcome {
    /// The table, for stdout.
    pub table: String,
    /// The files written.
    pub written: Vec<&'static str>,
    /// Why the run failed (empty if it did not).
    pub problems: Vec<String>,
    /// Worth saying, not failures.
    pub warnings: Vec<String>,
}

/// Reads the log and, if at least one paradigm ran or a sweep has a point, writes the outputs
/// into `out`. An error (an unreadable log, a malformed line, an unwritable output) names what
/// failed.
pub fn run(log: &Path, out: &Path) -> Result<Outcome, String> {
    let bytes = std::fs::read(log).map_err(|e| format!("{}: {e}", log.display()))?;
    // A serial log: noise that is not UTF-8 belongs to the other lines, which are ignored.
    let text = String::from_utf8_lossy(&bytes);
    let bench = log::parse_log(&text).map_err(|e| format!("{}: {e}", log.display()))?;
    let report = report::Report::new(&bench);
    let problems = report.problems();
    if report.paradigms.is_empty() && report.sweeps.is_empty() {
        return Ok(Outcome {
            table: String::new(),
            written: Vec::new(),
            problems,
            warnings: Vec::new(),
        });
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut written = Vec::new();
    for (name, body) in report.files() {
        let path = out.join(name);
        std::fs::write(&path, body).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(name);
    }
    Ok(Outcome {
        table: report.table(),
        written,
        problems,
        warnings: report.warnings(),
    })
}
