//! ccm-bench: turns the output of the VM's `ccm_bench` (the `bench` section of a VM test log)
//! into `results.json`, `table.txt` and SVG plots, and fails if any run was not verified.
//!
//! Usage: `ccm-bench --log OUT/bench-run/tests.log --out OUT/bench` (what `make bench` runs);
//! one `--log` per boot (`make bench BOOTS=3`).

mod headline;
mod input;
mod predict;
mod ratio;
mod record;
mod report;

use std::{fs, path::Path, path::PathBuf, process::ExitCode};

use record::{Bench, Run};

const USAGE: &str = "\
usage: ccm-bench --log TESTS.LOG [--log TESTS.LOG ...] --out DIR

Reads the JSON lines that bench/ccm_bench printed in the VM (between the
'##cxlstack begin bench' and 'end bench' markers of the log; other lines are
ignored), one log per boot (each run gets the field \"boot\": the position of
its log), and writes into DIR:
results.json (every run), table.txt (per configuration the medians over its
repetitions: times, host busy/idle, CCM idle, ratio to RP, spread of the times),
one SVG per sweep with an RP run (modes, knn-a, ...: normalized to RP), and sf.svg
and capacity.svg (the AXLE sweeps).
With runs of the validate sweep (ccm_bench --validate) it also checks each mode
(RP, BS, AXLE, AXLE_IRQ): the median end-to-end time over the repetitions
against the analytical model's prediction from the device's parameters,
tolerance 15 %; the table goes to stdout and validation.txt.
Exits 1 if there is no run, a run lacks a measured field (e2e_us ... polls,
verified, deadlock), a run's results failed verification, the bench section
did not end with rc=0, or the validate sweep (if any) is off the prediction by
more than 15 % in a mode, lacks a mode or a model field (the results are still
written); 2 for a usage error.";

/// The command line.
struct Args {
    /// One per boot, in order.
    logs: Vec<PathBuf>,
    out: PathBuf,
}

/// `Ok(None)` asks for the usage; `Err` is a usage error, naming its cause. An empty path is
/// refused: as `--out ''` it would mean the current directory, which nobody asked for.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let (mut logs, mut out) = (Vec::new(), None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--help" | "-h" => return Ok(None),
            "--log" | "--out" => {}
            _ if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ => return Err(format!("unexpected argument {a}")),
        }
        let v = args.next().ok_or(format!("{a} needs a value"))?;
        if v.is_empty() {
            return Err(format!("{a} needs a path, not ''"));
        }
        if a == "--log" {
            logs.push(PathBuf::from(v));
        } else {
            out = Some(PathBuf::from(v));
        }
    }
    match (logs.is_empty(), out) {
        (false, Some(out)) => Ok(Some(Args { logs, out })),
        (true, _) => Err("missing --log".into()),
        (_, None) => Err("missing --out".into()),
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ccm-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ccm-bench: {e}");
            ExitCode::from(1)
        }
    }
}

/// Reads the logs, writes the results, and judges the benchmark.
fn run(a: &Args) -> Result<ExitCode, String> {
    let mut bench = Bench::default();
    for (boot, log) in a.logs.iter().enumerate() {
        let one = input::read(log)?;
        if one.runs.is_empty() {
            return Err(format!("no benchmark run in {}", log.display()));
        }
        for (line, mut r) in one.runs {
            r.0.insert("boot".into(), record::Value::Num(boot as f64));
            bench.runs.push((line, r));
        }
        let name = log.display();
        bench.end_error = bench
            .end_error
            .take()
            .or(one.end_error.map(|e| format!("{name}: {e}")));
        bench.unfinished |= one.unfinished;
    }
    let raw: Vec<Run> = bench.runs.iter().map(|(_, r)| r.clone()).collect();
    let (table, mut files) = outputs(&raw);
    // Only a log with the validate sweep is checked against the model: older logs stay valid.
    // Each boot on its own: a boot calibrates its own dilation, which the prediction scales by.
    let mut boots: Vec<u32> = raw
        .iter()
        .filter(|r| r.str("sweep") == predict::SWEEP)
        .map(Run::boot)
        .collect();
    boots.dedup();
    let validations: Vec<(u32, predict::Validation)> = boots
        .iter()
        .map(|b| {
            let of_boot: Vec<Run> = raw.iter().filter(|r| r.boot() == *b).cloned().collect();
            (*b, predict::validate(&of_boot))
        })
        .collect();
    let several = a.logs.len() > 1;
    let validation_text: String = validations
        .iter()
        .map(|(b, v)| {
            if several {
                format!("boot {b}: {}", v.text())
            } else {
                v.text()
            }
        })
        .collect();
    if !validations.is_empty() {
        files.push(("validation.txt".to_string(), validation_text.clone()));
    }
    write_files(&a.out, &files)?;
    print!("{table}");
    print!("{validation_text}");
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    println!("written: {}", names.join(" "));
    Ok(verdict(&raw, &bench, &validations))
}

/// The table, and every file to write with its contents.
fn outputs(raw: &[Run]) -> (String, Vec<(String, String)>) {
    let json: Vec<String> = raw.iter().map(|r| format!("  {}", r.to_json())).collect();
    // The table and plots show each configuration's medians over its repetitions, and its
    // ratios against the baselines with their intervals; summary.json the same, per
    // configuration.
    let mut runs = report::merge(raw);
    report::attach_ratios(&mut runs, raw);
    let table = report::table(&runs) + &headline::text(raw);
    let summary: Vec<String> = runs.iter().map(|r| format!("  {}", r.to_json())).collect();
    let mut files = vec![
        (
            "results.json".to_string(),
            format!("[\n{}\n]\n", json.join(",\n")),
        ),
        (
            "summary.json".to_string(),
            format!("[\n{}\n]\n", summary.join(",\n")),
        ),
        ("table.txt".to_string(), table.clone()),
    ];
    for name in report::sweep_names(&runs) {
        if let Some(svg) = report::modes_plot(&runs, &name) {
            files.push((format!("{name}.svg"), svg));
        }
    }
    if let Some(svg) = report::sweep_plot(&runs, "sf", "sf", "AXLE p1: streaming factor (bytes)") {
        files.push(("sf.svg".to_string(), svg));
    }
    if let Some(svg) = report::sweep_plot(
        &runs,
        "capacity",
        "payload_slots",
        "AXLE p1: payload ring capacity (slots of 32 B)",
    ) {
        files.push(("capacity.svg".to_string(), svg));
    }
    (table, files)
}

fn write_files(out: &Path, files: &[(String, String)]) -> Result<(), String> {
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, body) in files {
        fs::write(out.join(name), body).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// Success only if every run verified, the benchmark ended with rc=0, and the validate sweep,
/// if there is one, matches the model.
fn verdict(raw: &[Run], bench: &Bench, validations: &[(u32, predict::Validation)]) -> ExitCode {
    let mut ok = true;
    let failed = raw.iter().filter(|r| !r.verified()).count();
    if failed > 0 {
        eprintln!("ccm-bench: {failed} run(s) failed verification");
        ok = false;
    }
    if let Some(why) = &bench.end_error {
        eprintln!("ccm-bench: {why}");
        ok = false;
    }
    if bench.unfinished {
        eprintln!("ccm-bench: no '##cxlstack end bench': the VM stopped during the benchmark");
        ok = false;
    }
    for (boot, v) in validations.iter().filter(|(_, v)| !v.passed()) {
        let modes = v.failed_modes();
        let which = if modes.is_empty() {
            "unusable runs".to_string()
        } else {
            format!("mode(s) {}", modes.join(", "))
        };
        eprintln!(
            "ccm-bench: the validate sweep of boot {boot} does not match the model ({which}; see validation.txt)"
        );
        ok = false;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
