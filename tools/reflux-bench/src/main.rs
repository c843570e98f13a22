// SPDX-License-Identifier: GPL-2.0

//! reflux-bench: turns the reflux paradigm benchmark's lines of a VM test log into results,
//! a table and SVG plots, and fails if a paradigm's data did not verify.
//!
//! Usage: `reflux-bench --log OUT/.../tests.log --out DIR`.

use std::{path::PathBuf, process::ExitCode};

const USAGE: &str = "\
usage: reflux-bench --log TESTS.LOG --out DIR

Reads the '##reflux-bench' lines of the log (one begin/end block per paradigm A, B
and C, with sample, migration and fio lines; other lines are ignored) and writes into
DIR: results.json (every sample and migration, and per paradigm the steady MB/s over
the second half of the run, temperatures, throttling, migration time percentiles;
the ratios C/B and C/A and the paper's targets), table.txt, throughput.svg,
temperature.svg and migrations.svg.
Exits 1 if a line is malformed (naming it), no paradigm ran, or a paradigm's fio
verify was not ok; 2 for a usage error. The targets are reported, not enforced.";

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
