// SPDX-License-Identifier: GPL-2.0

//! reflux-bench: turns the reflux paradigm benchmark's lines of a VM test log into results,
//! a table and SVG plots, and fails if a paradigm's or a sweep point's data did not verify.
//!
//! Usage: `reflux-bench --log OUT/.../tests.log --out DIR`.

use std::{path::PathBuf, process::ExitCode};

const USAGE: &str = "\
usage: reflux-bench --log TESTS.LOG --out DIR

Reads the '##reflux-bench' lines of the log and writes into DIR. A begin/end
block holds one round of one paradigm (begin P round=R; P is A, B, Bq, C, H or
a variant of C, C+NAME; no round= is round 1) with sample, migration and fio
lines; point lines, outside the blocks, are the sweeps' (suite=bs|keys|qd);
other lines are ignored.
results.json: every sample and migration; per paradigm and round the steady
MB/s over the second half of the run, temperatures, throttling, the collapse
from the best second of the first half; over the rounds their means with 95 %
bootstrap intervals, the peak temperatures, the migrations' phases per
direction (also divided by the dilation calib_guest_ns/calib_host_ns if the
log gives it); the ratios C/B, C/A, C/H, C/Bq and each C+NAME/C of the mean
steady MB/s, paired by round; the sweeps' means over the reps and C/B, C/H per
point; the paper's targets. Also table.txt (a row per round and paradigm),
throughput.svg, temperature.svg and migrations.svg, and for the sweeps that
ran bs_sweep.svg, keys.svg and qd_cpu.svg.
Exits 1 if a line is malformed (naming it), no paradigm ran, or a round's fio
verify or a sweep point's verify was not ok; 2 for a usage error. The targets
are reported, not enforced.";

/// `Ok(None)` asks for the usage; `Err` is a usage error, naming its cause. An empty path is
/// refused: as `--out ''` it would mean the current directory, which nobody asked for.
fn parse_args(
    mut args: impl Iterator<Item = String>,
) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let (mut log, mut out) = (None, None);
    while let Some(a) = args.next() {
        let slot = match a.as_str() {
            "--help" | "-h" => return Ok(None),
            "--log" => &mut log,
            "--out" => &mut out,
            _ if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ => return Err(format!("unexpected argument {a}")),
        };
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        if v.is_empty() {
            return Err(format!("{a} needs a path, not ''"));
        }
        *slot = Some(PathBuf::from(v));
    }
    match (log, out) {
        (Some(log), Some(out)) => Ok(Some((log, out))),
        (None, _) => Err("missing --log".into()),
        (_, None) => Err("missing --out".into()),
    }
}

fn main() -> ExitCode {
    let (log, out) = match parse_args(std::env::args().skip(1)) {
        Ok(Some(paths)) => paths,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("reflux-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let outcome = match reflux_bench::run(&log, &out) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("reflux-bench: {e}");
            return ExitCode::from(1);
        }
    };
    print!("{}", outcome.table);
    if !outcome.written.is_empty() {
        println!(
            "written into {}: {}",
            out.display(),
            outcome.written.join(" ")
        );
    }
    for w in &outcome.warnings {
        eprintln!("reflux-bench: warning: {w}");
    }
    for p in &outcome.problems {
        eprintln!("reflux-bench: {p}");
    }
    if outcome.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
