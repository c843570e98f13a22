// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `ccm-bench`, written from
//! Documentation/cxl_ccm-results.rst ("How to run it") and from the usage
//! text the binary prints, only.
//!
//! The input lines are JSON objects with the fields the doc lists
//! (``e2e_us``, ``host_busy_us``, ..., ``verified``, ``deadlock``); the names
//! of the configuration fields (sweep, mode, label, sf, payload_slots) were
//! learnt from the table ccm-bench prints.

use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{
    assert_empty_out_dir_refused, assert_help_mentions, assert_help_on_stdout,
    assert_log_out_usage_errors, assert_missing_or_directory_log_refused,
    assert_unusable_out_dir_fails, parse_json, run_bounded, Cwd, Out, TempDir,
};

const BIN: &str = env!("CARGO_BIN_EXE_ccm-bench");
const USAGE: &str = "usage: ccm-bench --log TESTS.LOG [--log TESTS.LOG ...] --out DIR";

/// Runs in `cwd` with a deadline.
fn run_in(args: &[&str], cwd: Cwd) -> Out {
    run_bounded(BIN, args, cwd, Duration::from_secs(10))
}

fn run(args: &[&str]) -> Out {
    run_in(args, Cwd::Scratch)
}

// ---------------------------------------------------------------------------
// Inputs

/// The fields cxl_ccm-results.rst lists as "Measured per run".
const MEASURED: &[&str] = &[
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
    "verified",
    "deadlock",
];

/// One run's JSON line.
fn run_line(sweep: &str, mode: &str, label: &str, e2e: u64, verified: bool) -> String {
    format!(
        "{{\"sweep\":\"{sweep}\",\"mode\":\"{mode}\",\"label\":\"{label}\",\"sf\":256,\
         \"payload_slots\":1024,\"e2e_us\":{e2e},\"host_busy_us\":100,\"host_idle_us\":{},\
         \"launch_us\":10,\"ccm_idle_us\":50,\"host_stall_us\":5,\"credit_wait_us\":0,\
         \"credit_stalls\":0,\"interrupts\":0,\"polls\":10,\"verified\":{verified},\
         \"deadlock\":false}}",
        e2e - 100
    )
}

/// A tests log with `lines` between the bench markers, and noise around.
fn bench_log(lines: &[String]) -> String {
    let mut s = String::from(
        "##cxlstack begin kunit\nok 1 - x\n##cxlstack end kunit rc=0\n##cxlstack begin bench\n",
    );
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("##cxlstack end bench rc=0\n##cxlstack done\n");
    s
}

/// Three repetitions of RP and of AXLE-p1 in the ``modes`` sweep.
fn modes_log() -> String {
    bench_log(&[
        run_line("modes", "RP", "RP", 900, true),
        run_line("modes", "AXLE", "AXLE-p1", 400, true),
        run_line("modes", "RP", "RP", 1000, true),
        run_line("modes", "AXLE", "AXLE-p1", 500, true),
        run_line("modes", "RP", "RP", 1100, true),
        run_line("modes", "AXLE", "AXLE-p1", 600, true),
    ])
}

// ---------------------------------------------------------------------------
// Usage

/// The usage text: ``ccm-bench --log TESTS.LOG --out DIR``; asking for help is
/// not an error: status 0, the text on stdout.
#[test]
fn help_exits_zero_on_stdout() {
    assert_help_on_stdout(run, USAGE);
}

/// cxl_ccm-results.rst, "How to run it": ``ccm-bench`` writes results.json,
/// table.txt and the SVGs; its usage text says so.
#[test]
fn usage_text_describes_the_outputs() {
    assert_help_mentions(
        run,
        &[
            USAGE,
            "results.json",
            "table.txt",
            "sf.svg",
            "capacity.svg",
            "Exits 1",
        ],
    );
}

/// The usage ``ccm-bench --log TESTS.LOG --out DIR``: both are required, each
/// with a value; anything else is a usage error (status 2, the usage).
#[test]
fn incomplete_or_unknown_arguments_print_usage_with_status_2() {
    let t = TempDir::new("usage");
    let log = t.file("tests.log", modes_log().as_bytes());
    assert_log_out_usage_errors(run, USAGE, &log, &t.sub("out"));
}

/// The usage text is printed for every usage error; which argument is wrong
/// must be said too (errors name their cause).
#[test]
fn usage_errors_name_the_cause() {
    let t = TempDir::new("cause");
    let log = t.file("tests.log", modes_log().as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out, "--bogus"]);
    assert!(o.stderr.contains("--bogus"), "{}", o.stderr);
    let o = run(&["--log", &log]);
    assert!(
        o.stderr.contains("--out"),
        "{}",
        o.stderr.lines().next().unwrap_or("")
    );
    assert!(!o.stderr.starts_with(USAGE), "{}", o.stderr);
}

// ---------------------------------------------------------------------------
// Inputs that hold no run

/// The usage text: it reads TESTS.LOG; one that does not exist or is a
/// directory is refused (status 1) naming it.
#[test]
fn missing_or_directory_log_is_refused_naming_it() {
    assert_missing_or_directory_log_refused(run, &TempDir::new("missing"));
}

/// cxl_ccm-results.rst: "``ccm-bench`` fails ... if there is no run"; the
/// usage: "Exits 1 if there is no run": an empty log, one without the bench
/// markers, JSON outside them, markers around no JSON.
#[test]
fn log_without_a_run_exits_1() {
    let t = TempDir::new("norun");
    let line = run_line("modes", "RP", "RP", 1000, true);
    let logs = [
        String::new(),
        "##cxlstack begin kunit\nok 1 - x\n##cxlstack end kunit rc=0\n##cxlstack done\n".into(),
        format!("{line}\n##cxlstack begin bench\n##cxlstack end bench rc=0\n{line}\n"),
        "##cxlstack begin bench\nccm_bench: starting\n##cxlstack end bench rc=0\n".into(),
        format!("##cxlstack begin kunit\n{line}\n##cxlstack end kunit rc=0\n"),
    ];
    for (i, l) in logs.iter().enumerate() {
        let log = t.file(&format!("{i}.log"), l.as_bytes());
        let o = run(&["--log", &log, "--out", &t.sub(&format!("out{i}"))]);
        assert_eq!(o.code, Some(1), "log {i}: {}", o.stderr);
        assert!(o.stderr.contains("no"), "log {i}: {}", o.stderr);
    }
}

// ---------------------------------------------------------------------------
// Results

/// cxl_ccm-results.rst, "How to run it": results.json holds "every run, one
/// object each (the fields below)"; table.txt "the same as a table"; the
/// SVG of a sweep with an RP run; status 0 when every run verified.
#[test]
fn valid_runs_give_results_table_and_plot() {
    let t = TempDir::new("valid");
    let log = t.file("tests.log", modes_log().as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let json = std::fs::read_to_string(format!("{out}/results.json")).unwrap();
    let v = parse_json(&json).unwrap_or_else(|e| panic!("results.json: {e}\n{json}"));
    let runs = v.arr().expect("results.json is an array of runs");
    assert_eq!(runs.len(), 6, "every run, one object each");
    for r in runs {
        for f in MEASURED {
            assert!(r.get(f).is_some(), "{f} missing in {r:?}");
        }
    }
    let table = std::fs::read_to_string(format!("{out}/table.txt")).unwrap();
    assert!(table.contains("RP") && table.contains("AXLE-p1"), "{table}");
    let svg = std::fs::read_to_string(format!("{out}/modes.svg")).unwrap();
    assert!(svg.trim_start().starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

/// The usage: one log per boot, "each run gets the field \"boot\": the position
/// of its log"; every run of every log is in results.json.
#[test]
fn one_log_per_boot_numbers_the_boots() {
    let t = TempDir::new("boots");
    let a = t.file("boot0.log", modes_log().as_bytes());
    let b = t.file("boot1.log", modes_log().as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &a, "--log", &b, "--out", &out]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let json = std::fs::read_to_string(format!("{out}/results.json")).unwrap();
    let v = parse_json(&json).unwrap_or_else(|e| panic!("results.json: {e}\n{json}"));
    let runs = v.arr().expect("results.json is an array of runs");
    assert_eq!(runs.len(), 12, "every run of both logs");
    let boots: Vec<String> = runs
        .iter()
        .map(|r| format!("{:?}", r.get("boot")))
        .collect();
    assert_eq!(
        boots.iter().filter(|b| b.contains("(0.0)")).count(),
        6,
        "{boots:?}"
    );
    assert_eq!(
        boots.iter().filter(|b| b.contains("(1.0)")).count(),
        6,
        "{boots:?}"
    );
    // A second log that failed fails the whole: it names that log.
    let bad = t.file(
        "bad.log",
        bench_log(&[run_line("modes", "RP", "RP", 900, false)]).as_bytes(),
    );
    let o = run(&["--log", &a, "--log", &bad, "--out", &out]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
}

/// cxl_ccm-results.rst, "How to run it": table.txt has "each run's end-to-end
/// time divided by the RP run of its sweep", "the spread of the repetitions
/// ((max - min) / median) and the half-width of the 95 % confidence interval
/// of their mean (Student's t), relative to the median"; the usage: "per
/// configuration the medians over its repetitions".
/// RP 900/1000/1100 µs: median 1000, ratio 1.000, spread 20 %, CI
/// t(2)=4.303 × 100/√3 = 248 → ±25 %. AXLE 400/500/600: 500, 0.500, 40 %,
/// ±50 %.
#[test]
fn table_has_medians_ratio_to_rp_spread_and_ci() {
    let t = TempDir::new("stats");
    let log = t.file("tests.log", modes_log().as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let table = std::fs::read_to_string(format!("{out}/table.txt")).unwrap();
    let row = |label: &str| -> Vec<String> {
        let l = table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(label))
            .unwrap_or_else(|| panic!("no row {label} in\n{table}"));
        l.split_whitespace().map(String::from).collect()
    };
    let rp = row("RP");
    let ax = row("AXLE-p1");
    for (r, med, ratio, spread, ci) in [
        (&rp, "1000", "1.000", "20%", "±25%"),
        (&ax, "500", "0.500", "40%", "±50%"),
    ] {
        assert!(r.contains(&med.to_string()), "median {med} not in {r:?}");
        assert!(r.contains(&ratio.to_string()), "ratio {ratio} not in {r:?}");
        assert!(
            r.contains(&spread.to_string()),
            "spread {spread} not in {r:?}"
        );
        assert!(r.contains(&ci.to_string()), "ci {ci} not in {r:?}");
    }
}

/// The usage text: "one SVG per sweep with an RP run ..., and sf.svg and
/// capacity.svg (the AXLE sweeps)".
#[test]
fn sweep_plots_are_written() {
    let t = TempDir::new("plots");
    let sf = |sweep: &str, sf: u32, slots: u32| {
        run_line(sweep, "AXLE", "AXLE-p1", 1000, true)
            .replace("\"sf\":256", &format!("\"sf\":{sf}"))
            .replace(
                "\"payload_slots\":1024",
                &format!("\"payload_slots\":{slots}"),
            )
    };
    let lines = vec![
        sf("sf", 32, 1024),
        sf("sf", 64, 1024),
        sf("capacity", 256, 1024),
        sf("capacity", 256, 512),
        run_line("knn-a", "RP", "RP", 1000, true),
        run_line("knn-a", "AXLE", "AXLE-p1", 800, true),
    ];
    let log = t.file("tests.log", bench_log(&lines).as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for f in ["sf.svg", "capacity.svg", "knn-a.svg"] {
        let s =
            std::fs::read_to_string(format!("{out}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(s.contains("<svg"), "{f}");
    }
}

/// cxl_ccm-results.rst: "``ccm-bench`` fails (and with it ``make bench``) if
/// ... a run's results did not verify"; the usage: "Exits 1 if ... a run's
/// results failed verification" (the results are still written).
#[test]
fn unverified_run_exits_1() {
    let t = TempDir::new("unverified");
    let mut lines = vec![run_line("modes", "RP", "RP", 1000, true)];
    lines.push(run_line("modes", "AXLE", "AXLE-p1", 500, false));
    let log = t.file("tests.log", bench_log(&lines).as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(o.stderr.contains("verif"), "cause not named: {}", o.stderr);
}

/// cxl_ccm-results.rst: ``deadlock`` "(the run stopped in a detected
/// deadlock; ``verified`` then says whether it was expected" — an expected
/// deadlock does not fail, an unexpected one does.
#[test]
fn expected_deadlock_passes_unexpected_fails() {
    let t = TempDir::new("deadlock");
    let dl = |verified: bool| {
        run_line("llm-capacity", "AXLE", "AXLE-p1", 1000, verified)
            .replace("\"deadlock\":false", "\"deadlock\":true")
    };
    for (verified, code) in [(true, 0), (false, 1)] {
        let lines = vec![run_line("modes", "RP", "RP", 1000, true), dl(verified)];
        let log = t.file("tests.log", bench_log(&lines).as_bytes());
        let o = run(&["--log", &log, "--out", &t.sub(&format!("out{verified}"))]);
        assert_eq!(o.code, Some(code), "verified {verified}: {}", o.stderr);
    }
}

/// cxl_ccm-results.rst: results.json holds every run "one object each (the
/// fields below)": a line between the markers that lacks every measured
/// field is not a run to report as verified with a table of NaN.
#[test]
fn run_without_measurements_is_refused() {
    let t = TempDir::new("nofields");
    let log = t.file(
        "tests.log",
        bench_log(&["{\"verified\":true}".into()]).as_bytes(),
    );
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(
        o.stderr.contains("e2e_us"),
        "missing field not named: {}",
        o.stderr
    );
}

/// cxl_ccm-results.rst: the measured fields are times in µs and counts: a
/// string where a number belongs is malformed input, not a NaN to tabulate.
#[test]
fn non_numeric_measurement_is_refused() {
    let t = TempDir::new("nonnum");
    let l =
        run_line("modes", "RP", "RP", 1000, true).replace("\"e2e_us\":1000", "\"e2e_us\":\"abc\"");
    let log = t.file("tests.log", bench_log(&[l]).as_bytes());
    let o = run(&["--log", &log, "--out", &t.sub("out")]);
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(o.stderr.contains("e2e_us"), "{}", o.stderr);
}

/// The usage text: the runs are the JSON lines "between the '##cxlstack
/// begin bench' and 'end bench' markers". A log cut off after the begin
/// marker (the VM died mid-benchmark) has no complete bench block: it must
/// not pass as a complete result.
#[test]
fn truncated_bench_block_is_not_a_complete_result() {
    let t = TempDir::new("trunc");
    let mut s = String::from("##cxlstack begin bench\n");
    s.push_str(&run_line("modes", "RP", "RP", 1000, true));
    s.push('\n');
    let log = t.file("tests.log", s.as_bytes());
    let o = run(&["--log", &log, "--out", &t.sub("out")]);
    assert_ne!(o.code, Some(0), "{}", o.stdout);
}

/// The usage text: the runs are JSON lines; a line between the markers that
/// starts as JSON but is cut or broken is an error naming the log.
#[test]
fn broken_json_line_exits_1_naming_the_log() {
    let t = TempDir::new("broken");
    let good = run_line("modes", "RP", "RP", 1000, true);
    for (i, bad) in [
        good[..good.len() / 2].to_string(),
        format!("{good} trailing"),
        "{not json}".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let log = t.file(
            &format!("b{i}.log"),
            bench_log(&[good.clone(), bad.clone()]).as_bytes(),
        );
        let o = run(&["--log", &log, "--out", &t.sub(&format!("out{i}"))]);
        assert_eq!(o.code, Some(1), "{bad:?}: {}", o.stdout);
        assert!(
            o.stderr.contains(&format!("b{i}.log")),
            "{bad:?}: {}",
            o.stderr
        );
    }
}

/// The usage text: only the JSON lines between the bench markers are read;
/// a stray invalid byte elsewhere in a serial log (here before the markers)
/// must not discard the benchmark.
#[test]
fn invalid_utf8_outside_the_bench_block_is_ignored() {
    let t = TempDir::new("utf8");
    let mut bytes = b"[    0.1] serial noise \xff\xfe\n".to_vec();
    bytes.extend_from_slice(modes_log().as_bytes());
    let log = t.file("tests.log", &bytes);
    let o = run(&["--log", &log, "--out", &t.sub("out")]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// The log comes from a serial port: CR LF line endings are the same lines.
#[test]
fn crlf_log_is_read() {
    let t = TempDir::new("crlf");
    let log = t.file("tests.log", modes_log().replace('\n', "\r\n").as_bytes());
    let out = t.sub("out");
    let o = run(&["--log", &log, "--out", &out]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = parse_json(&std::fs::read_to_string(format!("{out}/results.json")).unwrap()).unwrap();
    assert_eq!(v.arr().unwrap().len(), 6);
}

/// The usage text: it "writes into DIR": a DIR that cannot be a directory (a
/// regular file, a path below one) fails (status 1) naming it.
#[test]
fn unusable_out_dir_fails_naming_it() {
    let t = TempDir::new("outdir");
    let log = t.file("tests.log", modes_log().as_bytes());
    assert_unusable_out_dir_fails(run, &t, &log);
}

/// The usage ``--out DIR``: an empty DIR names no directory; it must be
/// refused, not taken as the current directory.
#[test]
fn empty_out_dir_is_refused() {
    let t = TempDir::new("emptyout");
    let log = t.file("tests.log", modes_log().as_bytes());
    assert_empty_out_dir_refused(run_in, &log);
}
