// SPDX-License-Identifier: GPL-2.0

//! reflux-bench: turns the reflux paradigm benchmark's lines of a VM test log into results,
//! a table and SVG plots, and fails if a paradigm's data did not verify.
//!
//! Usage: `reflux-bench --log OUT/.../tests.log --out DIR`.

use std::{path::PathBuf, process::ExitCode};

fn usage() -> ExitCode {
    eprintln!(
        "usage: reflux-bench --log TESTS.LOG --out DIR\n\
         \n\
         Reads the '##reflux-bench' lines of the log (one begin/end block per paradigm A, B\n\
         and C, with sample, migration and fio lines; other lines are ignored) and writes into\n\
         DIR: results.json (every sample and migration, and per paradigm the steady MB/s over\n\
         the second half of the run, temperatures, throttling, migration time percentiles;\n\
         the ratios C/B and C/A and the paper's targets), table.txt, throughput.svg,\n\
         temperature.svg and migrations.svg.\n\
         Exits 1 if a line is malformed (naming it), no paradigm ran, or a paradigm's fio\n\
         verify was not ok. The targets are reported, not enforced."
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut log = None;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--log" => log = args.next().map(PathBuf::from),
            "--out" => out = args.next().map(PathBuf::from),
            _ => return usage(),
        }
    }
    let (Some(log), Some(out)) = (log, out) else {
        return usage();
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
