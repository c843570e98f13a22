//! ccm-bench: turns the output of the VM's `ccm_bench` (the `bench` section of a VM test log)
//! into `results.json`, `table.txt` and SVG plots, and fails if any run was not verified.
//!
//! Usage: `ccm-bench --log OUT/bench-run/tests.log --out OUT/bench` (what `make bench` runs).

mod record;
mod report;

use std::{fs, path::PathBuf, process::ExitCode};

fn usage() -> ExitCode {
    eprintln!(
        "usage: ccm-bench --log TESTS.LOG --out DIR\n\
         \n\
         Reads the JSON lines that bench/ccm_bench printed in the VM (between the\n\
         '##cxlstack begin bench' and 'end bench' markers of the log) and writes into DIR:\n\
         results.json (every run), table.txt (per configuration the medians over its\n\
         repetitions: times, host busy/idle, CCM idle, ratio to RP, spread of the times),\n\
         one SVG per sweep with an RP run (modes, knn-a, ...: normalized to RP), and sf.svg\n\
         and capacity.svg (the AXLE sweeps).\n\
         Exits 1 if there is no run or a run's results failed verification."
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
    let text = match fs::read_to_string(&log) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ccm-bench: {}: {e}", log.display());
            return ExitCode::from(1);
        }
    };
    let runs = match record::runs_in_log(&text) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ccm-bench: {}: {e}", log.display());
            return ExitCode::from(1);
        }
    };
    if runs.is_empty() {
        eprintln!("ccm-bench: no benchmark run in {}", log.display());
        return ExitCode::from(1);
    }
    let json: Vec<String> = runs.iter().map(|r| format!("  {}", r.to_json())).collect();
    // The table and plots show each configuration's medians over its repetitions.
    let raw = runs;
    let runs = report::merge(&raw);
    let table = report::table(&runs);
    let mut files = vec![
        (
            "results.json".to_string(),
            format!("[\n{}\n]\n", json.join(",\n")),
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
    if let Err(e) = fs::create_dir_all(&out) {
        eprintln!("ccm-bench: {}: {e}", out.display());
        return ExitCode::from(1);
    }
    for (name, body) in &files {
        if let Err(e) = fs::write(out.join(name), body) {
            eprintln!("ccm-bench: {name}: {e}");
            return ExitCode::from(1);
        }
    }
    print!("{table}");
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    println!("written: {}", names.join(" "));
    let failed = raw.iter().filter(|r| !r.verified()).count();
    if failed > 0 {
        eprintln!("ccm-bench: {failed} run(s) failed verification");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
