// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `cxl-duplex`, written from Documentation/tools.rst
//! ("cxl-duplex": "How it measures", "Usage", "Output on this machine") and
//! from `cxl-duplex --help` only.
//!
//! Every measuring run uses a buffer of at most 4 MiB and a measurement of at
//! most 500 ms on node 0 (the doc's "Output on this machine" section runs the
//! tool on an ordinary one-node host).

use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{
    assert_help_mentions, assert_usage_error, parse_json, run_bounded, Cwd, Out, TempDir, J,
};

const BIN: &str = env!("CARGO_BIN_EXE_cxl-duplex");

/// Small arguments that keep every measuring run fast and small.
const SMALL: &[&str] = &["--size", "1M", "--duration-ms", "20"];

// ---------------------------------------------------------------------------
// Harness

/// Runs the binary with a timeout (killed past it). Asserts that it did not
/// panic or die of a signal.
fn run(args: &[&str]) -> Out {
    let out = run_bounded(BIN, args, Cwd::Inherit, Duration::from_secs(10));
    assert!(
        out.code.is_some(),
        "cxl-duplex {args:?} died of a signal: {}",
        out.stderr
    );
    out
}

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter()
        .chain(more.iter())
        .map(|s| s.to_string())
        .collect()
}

fn run_v(args: &[String]) -> Out {
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    run(&a)
}

/// Parses `--json` stdout: an array of row objects.
fn rows(o: &Out) -> Vec<J> {
    assert_eq!(o.code, Some(0), "run failed: {}", o.stderr);
    let v =
        parse_json(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", o.stdout));
    v.arr().expect("JSON output is an array").to_vec()
}

/// The fields of the JSON row shown in tools.rst ("Output on this machine").
const JSON_FIELDS: &[&str] = &[
    "kind",
    "node",
    "pattern",
    "block",
    "threads",
    "read_percent",
    "gbps",
    "read_gbps",
    "write_gbps",
    "latency_ns",
    "ops",
    "elapsed_ms",
    "checksum",
    "accounting_ns_per_op",
    "op_ns",
];

/// The options of the usage synopsis that take a value.
const VALUE_OPTIONS: &[&str] = &[
    "--node",
    "--size",
    "--block",
    "--pattern",
    "--read",
    "--threads",
    "--rate",
    "--duration-ms",
    "--load-threads",
    "--svg",
];

// ---------------------------------------------------------------------------
// Help

/// tools.rst, "Usage": "``cxl-duplex --help`` lists the options" — every
/// option and command of the usage synopsis is in it.
#[test]
fn help_lists_every_documented_option_and_command() {
    let words = [
        VALUE_OPTIONS,
        &["--json", "bw", "sweep", "scaling", "latency"],
    ]
    .concat();
    let text = assert_help_mentions(run, &words);
    assert!(
        !text.contains("pages verified"),
        "--help must not measure anything"
    );
}

/// tools.rst, "Usage": "``cxl-duplex --help`` lists the options". Asking for
/// help is not an error: exit status 0, the text on stdout.
#[test]
fn help_exits_zero_on_stdout() {
    let o = run(&["--help"]);
    assert_eq!(o.code, Some(0), "stderr: {}", o.stderr);
    assert!(
        o.stdout.contains("usage: cxl-duplex"),
        "stdout: {}",
        o.stdout
    );
}

// ---------------------------------------------------------------------------
// Refusals of the command line (exit status 2)

/// tools.rst, "Usage": "anything else ... is refused with a message and exit
/// status 2 (options)". An unknown option, before or after a command.
#[test]
fn unknown_option_is_refused_with_status_2() {
    for args in [
        &["--bogus"][..],
        &["bw", "--bogus"],
        &["sweep", "--size", "1M", "--frobnicate", "3"],
        &["bw", "-x"],
    ] {
        let o = run(args);
        let bad = args.iter().find(|a| a.starts_with('-') && **a != "--size");
        assert_usage_error(&o, args, &[bad.unwrap()]);
    }
}

/// tools.rst, "Usage": the synopsis is ``cxl-duplex [bw|sweep|scaling|latency]
/// [options]`` and "anything else ... is refused with a message and exit
/// status 2 (options)". An unknown command is a command-line error.
#[test]
fn unknown_command_is_refused_with_status_2() {
    for args in [&["bogus"][..], &["-h"], &["help"], &["BW"]] {
        let o = run(args);
        assert_usage_error(&o, args, &[args[0]]);
    }
}

/// tools.rst, "Usage": the command comes first in the synopsis; a command
/// word among the options, or two commands, is refused (status 2) instead of
/// being taken as something else.
#[test]
fn command_after_options_or_two_commands_refused() {
    for args in [
        &["--size", "1M", "--duration-ms", "20", "bw"][..],
        &["bw", "sweep", "--size", "1M", "--duration-ms", "20"],
    ] {
        let o = run(args);
        assert_ne!(o.code, Some(0), "{args:?} was accepted: {}", o.stdout);
        assert!(o.stdout.is_empty(), "{args:?} measured: {}", o.stdout);
        assert!(!o.stderr.is_empty(), "{args:?}: no message");
    }
}

/// cxl-duplex --help, "options:": every option with a value needs one; the
/// refusal has status 2 and names the option.
#[test]
fn option_without_value_is_refused_with_status_2() {
    for &opt in VALUE_OPTIONS {
        let args = ["bw", opt];
        let o = run(&args);
        assert_usage_error(&o, &args, &[opt]);
    }
}

/// tools.rst, "Usage": "Lists are ``1,2,8`` or ``0-100:25``; sizes take
/// ``K``, ``M``, ``G``" and anything else "is refused with a message and exit
/// status 2 (options)". Malformed numbers, sizes and lists name the option
/// and the value.
#[test]
fn malformed_values_are_refused_with_status_2() {
    let cases: &[(&str, &str)] = &[
        ("--node", "x"),
        ("--node", "-1"),
        ("--node", ""),
        ("--size", "1X"),
        ("--size", "1.5M"),
        ("--size", ""),
        ("--size", "0"),
        ("--size", "-1M"),
        ("--size", "99999999999999999999"),
        ("--size", "16777216T"),
        ("--block", "x"),
        ("--block", "4KK"),
        ("--pattern", "foo"),
        ("--pattern", "SEQ"),
        ("--read", "x"),
        ("--read", "-1"),
        ("--read", "0-100:0"),
        ("--read", "100-0:10"),
        ("--read", "0,,50"),
        ("--threads", "1,,2"),
        ("--threads", ","),
        ("--threads", "1-2:0"),
        ("--threads", "one"),
        ("--rate", "x"),
        ("--rate", "0"),
        ("--rate", "99999999999999999999"),
        ("--duration-ms", "x"),
        ("--duration-ms", "0"),
        ("--duration-ms", "-5"),
        ("--duration-ms", "1.5"),
        ("--load-threads", "x"),
        ("--load-threads", "0"),
    ];
    for (opt, val) in cases {
        let args = with(&["bw", "--size", "1M", "--duration-ms", "20"], &[opt, val]);
        let o = run_v(&args);
        let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        assert_usage_error(&o, &a, &[opt]);
    }
}

/// tools.rst, "Usage": "Blocks are powers of two from 64 B to 1 MiB ...;
/// anything else ... is refused with a message and exit status 2 (options)".
#[test]
fn block_out_of_range_is_an_option_error() {
    for b in ["100", "32", "0", "2M", "96"] {
        let args = with(SMALL, &["--block", b]);
        let mut a: Vec<&str> = vec!["bw"];
        a.extend(args.iter().map(|s| s.as_str()));
        let o = run(&a);
        assert_usage_error(&o, &a, &[]);
    }
}

/// tools.rst, "Usage": "threads 1 to 512 ...; anything else ... is refused
/// with a message and exit status 2 (options)".
#[test]
fn threads_out_of_range_is_an_option_error() {
    for t in ["0", "513", "1,513"] {
        let mut a: Vec<&str> = vec!["sweep"];
        a.extend_from_slice(SMALL);
        a.extend_from_slice(&["--threads", t, "--read", "50"]);
        let o = run(&a);
        assert_usage_error(&o, &a, &[]);
    }
}

/// tools.rst, "Usage": "read ratios 0 to 100 %; anything else ... is refused
/// with a message and exit status 2 (options)".
#[test]
fn read_ratio_above_100_is_an_option_error() {
    for r in ["101", "0-200:50"] {
        let mut a: Vec<&str> = vec!["sweep"];
        a.extend_from_slice(SMALL);
        a.extend_from_slice(&["--threads", "1", "--read", r]);
        let o = run(&a);
        assert_usage_error(&o, &a, &[]);
    }
}

/// tools.rst, "Usage": out-of-range blocks, threads and read ratios are
/// "refused with a message": whatever the status, it is non-zero, nothing is
/// measured, and the message names the value and the allowed range.
#[test]
fn out_of_range_values_refused_before_measuring_with_a_message() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["--block", "100"], &["100", "64"]),
        (&["--block", "2M"], &["2097152"]),
        (&["--threads", "0"], &["0", "512"]),
        (&["--threads", "513"], &["513", "512"]),
        (&["--read", "101"], &["101", "100"]),
    ];
    for (extra, names) in cases {
        let mut a: Vec<&str> = vec!["bw"];
        a.extend_from_slice(SMALL);
        a.extend_from_slice(extra);
        let o = run(&a);
        assert!(
            matches!(o.code, Some(1) | Some(2)),
            "{a:?}: status {:?}",
            o.code
        );
        assert!(o.stdout.is_empty(), "{a:?} measured: {}", o.stdout);
        assert!(
            !o.stderr.contains("pages verified"),
            "{a:?} allocated and placed its buffer before refusing: {}",
            o.stderr
        );
        for n in *names {
            assert!(
                o.stderr.contains(n),
                "{a:?}: message lacks {n}: {}",
                o.stderr
            );
        }
    }
}

/// tools.rst, "Usage": "Blocks are powers of two from 64 B to 1 MiB, threads
/// 1 to 512, read ratios 0 to 100 %": the bounds themselves are accepted.
#[test]
fn boundary_values_are_accepted() {
    let cases: &[&[&str]] = &[
        &["--block", "64"],
        &["--block", "1M"],
        &["--read", "0"],
        &["--read", "100"],
        &["--threads", "2", "--block", "64K"],
    ];
    for extra in cases {
        let mut a: Vec<&str> = vec!["bw", "--json"];
        a.extend_from_slice(SMALL);
        a.extend_from_slice(extra);
        let r = rows(&run(&a));
        assert_eq!(r.len(), 1, "{a:?}");
    }
}

/// tools.rst, "Usage": "a node without memory ... is refused with a message
/// and exit status ... 1 (the run)"; --help: "refused unless every page is
/// there".
#[test]
fn node_without_memory_is_refused_with_status_1() {
    for n in ["99", "1023"] {
        let mut a: Vec<&str> = vec!["bw", "--node", n];
        a.extend_from_slice(SMALL);
        let o = run(&a);
        assert_eq!(o.code, Some(1), "{a:?}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{a:?} measured: {}", o.stdout);
        assert!(o.stderr.contains(n), "{a:?}: node not named: {}", o.stderr);
    }
}

/// tools.rst, "Usage": "a buffer too small for one block per thread is
/// refused with a message and exit status ... 1 (the run)".
#[test]
fn buffer_too_small_for_one_block_per_thread_is_refused() {
    let cases: &[&[&str]] = &[
        &["--size", "4K", "--threads", "2"],
        &["--size", "1000"],
        &["--size", "2M", "--block", "1M", "--threads", "3"],
    ];
    for extra in cases {
        let mut a: Vec<&str> = vec!["bw", "--duration-ms", "20"];
        a.extend_from_slice(extra);
        let o = run(&a);
        assert_eq!(o.code, Some(1), "{a:?}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{a:?} measured: {}", o.stdout);
        assert!(
            o.stderr.contains("block"),
            "{a:?}: message does not say why: {}",
            o.stderr
        );
    }
}

/// tools.rst, "Usage": "``bw`` is one run"; a list for bw is refused with a
/// message pointing elsewhere rather than silently measuring one element.
#[test]
fn bw_refuses_lists() {
    for extra in [&["--read", "0,50"][..], &["--threads", "1,2"]] {
        let mut a: Vec<&str> = vec!["bw"];
        a.extend_from_slice(SMALL);
        a.extend_from_slice(extra);
        let o = run(&a);
        assert!(matches!(o.code, Some(1) | Some(2)), "{a:?}: {:?}", o.code);
        assert!(o.stdout.is_empty(), "{a:?} measured: {}", o.stdout);
        assert!(o.stderr.contains("sweep"), "{a:?}: {}", o.stderr);
    }
}

// ---------------------------------------------------------------------------
// Output

/// tools.rst, "How it measures": "the first line of every run says how many
/// pages it found where" (``cxl-duplex: 1024 MiB on node 0: 262144 of 262144
/// pages verified there (move_pages)``); errors and this line go to stderr,
/// the table to stdout.
#[test]
fn first_line_says_how_many_pages_were_verified() {
    let mut a = vec!["bw"];
    a.extend_from_slice(SMALL);
    let o = run(&a);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let first = o.stderr.lines().next().unwrap_or("");
    assert!(
        first.starts_with("cxl-duplex: 1 MiB on node 0: ")
            && first.ends_with(" pages verified there (move_pages)"),
        "first line: {first:?}"
    );
    let nums: Vec<u64> = first
        .split(": ")
        .nth(2)
        .unwrap()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(nums.len(), 2, "{first:?}");
    assert_eq!(nums[0], nums[1], "not every page on the node: {first:?}");
    assert_eq!(nums[1] * 4096, 1 << 20, "{first:?}");
}

/// tools.rst, "Output on this machine": the table's header is ``kind node pat
/// block threads read% GB/s read write latency_ns op_ns acct``, one row per
/// measurement, ``-`` for a bandwidth row's latency and acct in percent.
#[test]
fn table_has_documented_columns() {
    let mut a = vec!["bw", "--read", "30"];
    a.extend_from_slice(SMALL);
    let o = run(&a);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", o.stdout);
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "kind",
            "node",
            "pat",
            "block",
            "threads",
            "read%",
            "GB/s",
            "read",
            "write",
            "latency_ns",
            "op_ns",
            "acct"
        ]
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(row.len(), 12, "{}", lines[1]);
    assert_eq!(&row[..6], ["bandwidth", "0", "rand", "4096", "1", "30"]);
    assert_eq!(row[9], "-");
    assert!(row[11].ends_with('%'), "{}", lines[1]);
}

/// tools.rst, "Output on this machine": the JSON row has ``kind, node,
/// pattern, block, threads, read_percent, gbps, read_gbps, write_gbps,
/// latency_ns, ops, elapsed_ms, checksum, accounting_ns_per_op, op_ns``; with
/// --json stdout is JSON only; the defaults are those of --help (node 0,
/// rand, 4K, read 50, 1 thread).
#[test]
fn bw_json_has_documented_fields_and_defaults() {
    let mut a = vec!["bw", "--json", "--size", "1M", "--duration-ms", "50"];
    let r = rows(&run(&a));
    assert_eq!(r.len(), 1);
    let row = &r[0];
    for f in JSON_FIELDS {
        assert!(row.get(f).is_some(), "field {f} missing: {row:?}");
    }
    assert_eq!(row.get("kind").and_then(J::str), Some("bandwidth"));
    assert_eq!(row.get("pattern").and_then(J::str), Some("rand"));
    assert_eq!(row.f("node"), 0.0);
    assert_eq!(row.f("block"), 4096.0);
    assert_eq!(row.f("threads"), 1.0);
    assert_eq!(row.f("read_percent"), 50.0);
    assert_eq!(row.get("latency_ns"), Some(&J::Null));
    let (g, rg, wg) = (row.f("gbps"), row.f("read_gbps"), row.f("write_gbps"));
    assert!(g > 0.0 && rg > 0.0 && wg > 0.0, "{row:?}");
    assert!(
        (rg + wg - g).abs() <= 0.0002 + g * 0.01,
        "read+write != total: {row:?}"
    );
    let (ops, ms) = (row.f("ops"), row.f("elapsed_ms"));
    assert!(ops > 0.0 && ms >= 50.0, "{row:?}");
    let derived = ops * 4096.0 / (ms / 1000.0) / 1e9;
    assert!(
        (derived - g).abs() <= g * 0.05 + 0.0002,
        "gbps {g} != ops*block/elapsed {derived}"
    );
    // Sanity: the same with the options spelled explicitly.
    a.extend_from_slice(&["--node", "0", "--pattern", "rand", "--block", "4K"]);
    assert_eq!(rows(&run(&a)).len(), 1);
}

/// tools.rst, "How it measures": "Reads sum every word into a checksum";
/// at 0 % reads there is no read bandwidth (and nothing to sum), at 100 % no
/// write bandwidth.
#[test]
fn pure_reads_and_pure_writes() {
    let mut a = vec!["bw", "--json", "--read", "0"];
    a.extend_from_slice(SMALL);
    let w = rows(&run(&a));
    assert_eq!(w[0].f("read_gbps"), 0.0, "{:?}", w[0]);
    assert_eq!(w[0].f("checksum"), 0.0, "{:?}", w[0]);
    assert!(w[0].f("write_gbps") > 0.0);
    let mut a = vec!["bw", "--json", "--read", "100", "--pattern", "seq"];
    a.extend_from_slice(SMALL);
    let r = rows(&run(&a));
    assert_eq!(r[0].f("write_gbps"), 0.0, "{:?}", r[0]);
    assert!(r[0].f("read_gbps") > 0.0);
    assert_eq!(r[0].get("pattern").and_then(J::str), Some("seq"));
}

/// tools.rst, "Usage": "``sweep`` every read ratio ... at every thread
/// count"; the doc's example lists, per thread count, every ratio in order.
#[test]
fn sweep_measures_every_ratio_at_every_thread_count() {
    let mut a = vec!["sweep", "--json", "--read", "0-100:50", "--threads", "1,2"];
    a.extend_from_slice(SMALL);
    let r = rows(&run(&a));
    let got: Vec<(f64, f64)> = r
        .iter()
        .map(|x| (x.f("threads"), x.f("read_percent")))
        .collect();
    assert_eq!(
        got,
        [
            (1.0, 0.0),
            (1.0, 50.0),
            (1.0, 100.0),
            (2.0, 0.0),
            (2.0, 50.0),
            (2.0, 100.0)
        ]
    );
}

/// tools.rst, "Usage": "``scaling`` load (100 % reads) and store (0 %)
/// bandwidth separately at every thread count" (example: 100 then 0 per
/// thread count).
#[test]
fn scaling_measures_loads_then_stores_per_thread_count() {
    let mut a = vec!["scaling", "--json", "--threads", "1,2"];
    a.extend_from_slice(SMALL);
    let r = rows(&run(&a));
    let got: Vec<(f64, f64)> = r
        .iter()
        .map(|x| (x.f("threads"), x.f("read_percent")))
        .collect();
    assert_eq!(got, [(1.0, 100.0), (1.0, 0.0), (2.0, 100.0), (2.0, 0.0)]);
}

/// tools.rst, "Usage" and "Output on this machine": ``latency`` gives one
/// ``latency-idle`` row (0 threads) and one ``latency-loaded`` row per
/// --read ratio with --load-threads workers, 64 B lines, latency in ns.
#[test]
fn latency_rows_idle_then_loaded_per_ratio() {
    let a = [
        "latency",
        "--json",
        "--size",
        "1M",
        "--duration-ms",
        "20",
        "--load-threads",
        "2",
        "--read",
        "0,50,100",
    ];
    let r = rows(&run(&a));
    assert_eq!(r.len(), 4, "{r:?}");
    assert_eq!(r[0].get("kind").and_then(J::str), Some("latency-idle"));
    assert_eq!(r[0].f("threads"), 0.0);
    for (x, pct) in r[1..].iter().zip([0.0, 50.0, 100.0]) {
        assert_eq!(x.get("kind").and_then(J::str), Some("latency-loaded"));
        assert_eq!(x.f("threads"), 2.0);
        assert_eq!(x.f("read_percent"), pct);
        assert!(x.f("gbps") > 0.0, "{x:?}");
    }
    for x in &r {
        assert_eq!(x.f("block"), 64.0);
        assert!(x.f("latency_ns") > 0.0, "{x:?}");
        for f in JSON_FIELDS {
            assert!(x.get(f).is_some(), "field {f} missing: {x:?}");
        }
    }
}

/// cxl-duplex --help: "--duration-ms MS  per measurement (default 1000)";
/// tools.rst runs ``cxl-duplex latency ... --duration-ms 300``. A loaded
/// latency measurement asked to last 1 ms must not last 100 times that.
#[test]
fn latency_honours_duration_ms() {
    let a = [
        "latency",
        "--json",
        "--size",
        "4M",
        "--duration-ms",
        "1",
        "--read",
        "50",
    ];
    let r = rows(&run(&a));
    let loaded = &r[1];
    assert!(
        loaded.f("elapsed_ms") < 30.0,
        "asked for 1 ms, measured {} ms",
        loaded.f("elapsed_ms")
    );
}

/// tools.rst, "Output on this machine": JSON rows carry ``ops`` and
/// ``elapsed_ms``; a row that made loads took time.
#[test]
fn latency_idle_row_elapsed_is_positive() {
    let a = ["latency", "--json", "--size", "1M", "--duration-ms", "20"];
    let r = rows(&run(&a));
    assert!(r[0].f("ops") > 0.0);
    assert!(r[0].f("elapsed_ms") > 0.0, "{:?}", r[0]);
}

/// tools.rst, "How it measures": "--rate caps the total bandwidth with a token
/// bucket per thread (10 ms of burst)"; sizes take K, M, G. Over half a
/// second the measured bandwidth stays near the cap (15 % slack for the
/// burst and whole batches), with one thread and with two.
#[test]
fn rate_caps_total_bandwidth() {
    for threads in ["1", "2"] {
        let a = [
            "bw",
            "--json",
            "--size",
            "1M",
            "--duration-ms",
            "500",
            "--rate",
            "4M",
            "--threads",
            threads,
        ];
        let r = rows(&run(&a));
        let bps = r[0].f("gbps") * 1e9;
        let cap = 4.0 * 1048576.0;
        assert!(
            bps <= cap * 1.15,
            "threads {threads}: {bps} B/s over the cap {cap}"
        );
        assert!(bps >= cap * 0.5, "threads {threads}: {bps} B/s, far under");
    }
}

/// tools.rst, "Usage": "``--svg`` plots bandwidth against read ratio": the
/// file is an SVG document.
#[test]
fn sweep_svg_is_written() {
    let t = TempDir::new("svg");
    let f = t.path().join("plot.svg");
    let fs = f.to_str().unwrap();
    let mut a = vec!["sweep", "--read", "0,100", "--threads", "1", "--svg", fs];
    a.extend_from_slice(SMALL);
    let o = run(&a);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let svg = std::fs::read_to_string(&f).expect("svg written");
    assert!(svg.trim_start().starts_with("<svg"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
}

/// tools.rst, "Usage": failures are "refused with a message": an --svg file
/// that cannot be written (missing directory, a directory, below a regular
/// file) fails the run with a message naming the path.
#[test]
fn svg_into_unwritable_path_fails_naming_it() {
    let t = TempDir::new("svgbad");
    let file = t.path().join("regular");
    std::fs::write(&file, "x").unwrap();
    let missing = t.path().join("no/such/dir/a.svg");
    let below_file = file.join("a.svg");
    for p in [missing.as_path(), t.path(), below_file.as_path()] {
        let ps = p.to_str().unwrap();
        let mut a = vec!["sweep", "--read", "50", "--threads", "1", "--svg", ps];
        a.extend_from_slice(SMALL);
        let o = run(&a);
        assert!(matches!(o.code, Some(1) | Some(2)), "{a:?}: {:?}", o.code);
        assert!(o.stderr.contains(ps), "{a:?}: path not named: {}", o.stderr);
    }
    assert!(
        !missing.parent().unwrap().exists(),
        "directories were created"
    );
}

/// cxl-duplex --help: options may be given more than once without a crash;
/// the run uses one of the values (the last, as is usual).
#[test]
fn repeated_option_takes_the_last_value() {
    let mut a = vec!["bw", "--json", "--threads", "1", "--threads", "2"];
    a.extend_from_slice(SMALL);
    a.extend_from_slice(&["--block", "64K", "--block", "4K", "--json"]);
    let r = rows(&run(&a));
    assert_eq!(r[0].f("threads"), 2.0);
    assert_eq!(r[0].f("block"), 4096.0);
}
