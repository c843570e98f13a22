//! The input of ccm-bench: the bench section of a VM tests log, every run checked to hold what
//! cxl_ccm-results.rst lists as measured per run.

use std::path::Path;

use crate::record::{self, Bench, Run, Value};

/// The measured fields that are numbers (times in µs and counts).
const NUMBERS: [&str; 10] = [
    "e2e_us",
    "host_busy_us",
    "host_idle_us",
    "launch_us",
    "ccm_idle_us",
    "host_stall_us",
    "credit_wait_us",
    "credit_stalls",
    "interrupts",
    "polls",
];

/// The measured fields that are true or false.
const FLAGS: [&str; 2] = ["verified", "deadlock"];

/// Reads the log at `path` and checks every run; errors name the log (and the line).
pub fn read(path: &Path) -> Result<Bench, String> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let bench = record::bench_in_log(&bytes).map_err(|e| format!("{name}: {e}"))?;
    for (line, run) in &bench.runs {
        check_measured(run).map_err(|e| format!("{name}: line {line}: {e}"))?;
    }
    Ok(bench)
}

/// Refuses a run without every measured field of its type: it would be tabulated as NaN, and
/// counted verified (or not) without the measurements that say so.
fn check_measured(run: &Run) -> Result<(), String> {
    let missing: Vec<&str> = NUMBERS
        .iter()
        .chain(&FLAGS)
        .copied()
        .filter(|k| !run.0.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(format!("a run without {}", missing.join(", ")));
    }
    if let Some(k) = NUMBERS
        .iter()
        .find(|k| !matches!(run.0.get(**k), Some(Value::Num(_))))
    {
        return Err(format!("{k} is not a number"));
    }
    if let Some(k) = FLAGS
        .iter()
        .find(|k| !matches!(run.0.get(**k), Some(Value::Bool(_))))
    {
        return Err(format!("{k} is neither true nor false"));
    }
    Ok(())
}
