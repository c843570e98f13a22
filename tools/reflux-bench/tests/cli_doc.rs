// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `reflux-bench`, written from
//! Documentation/reflux-results.rst (the introduction and "The workload")
//! and from the usage text the binary prints, only.
//!
//! The keys of the ``##reflux-bench`` lines (``sample t_ms= mbps= temp_mc=
//! throttled=``, ``fio bw_mbps= verify=``, ``migration from= to= drain_ns=
//! ckpt_ns= handover_ns= rebuild_ns= total_ns=``) were learnt from the
//! messages reflux-bench gives for lines that lack them.

use std::path::Path;
use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{
    assert_empty_out_dir_refused, assert_help_mentions, assert_help_on_stdout,
    assert_log_out_usage_errors, assert_missing_or_directory_log_refused,
    assert_unusable_out_dir_fails, parse_json, run_bounded, Cwd, Out, TempDir, J,
};

const BIN: &str = env!("CARGO_BIN_EXE_reflux-bench");
const USAGE: &str = "usage: reflux-bench --log TESTS.LOG --out DIR";

/// Runs in `cwd` with a deadline.
fn run_in(args: &[&str], cwd: Cwd) -> Out {
    run_bounded(BIN, args, cwd, Duration::from_secs(10))
}

fn run(args: &[&str]) -> Out {
    run_in(args, Cwd::Scratch)
}

// ---------------------------------------------------------------------------
// Inputs

const P: &str = "##reflux-bench";

fn sample(t_ms: u32, mbps: f64, temp_mc: i64, throttled: u8) -> String {
    format!("{P} sample t_ms={t_ms} mbps={mbps} temp_mc={temp_mc} throttled={throttled}")
}

fn fio(verify: &str) -> String {
    format!("{P} fio bw_mbps=10 verify={verify}")
}

fn migration(total: u64) -> String {
    format!(
        "{P} migration from=host to=device drain_ns=1000 ckpt_ns=1000 handover_ns=1000 \
         rebuild_ns=1000 total_ns={total}"
    )
}

/// One paradigm block: 8 samples over 1.75 s at `mbps` (first half `first`).
fn block(p: &str, first: f64, mbps: f64, verify: &str) -> Vec<String> {
    let mut v = vec![format!("{P} begin {p}")];
    for i in 0..8u32 {
        let m = if i < 4 { first } else { mbps };
        v.push(sample(i * 250, m, 50_000 + i as i64 * 1000, 0));
    }
    v.push(migration(5000));
    v.push(fio(verify));
    v.push(format!("{P} end {p}"));
    v
}

/// A log of the paradigms A, B, C with kernel noise around the lines.
fn abc_log() -> String {
    let mut lines = vec![
        "[    0.1] Linux version 6.12".to_string(),
        format!("{P} info kernel_debug_checks=none"),
    ];
    lines.extend(block("A", 8.0, 8.0, "ok"));
    lines.push("fio-3.33 some noise".into());
    lines.extend(block("B", 10.0, 10.0, "ok"));
    lines.extend(block("C", 0.0, 20.0, "ok"));
    lines.push("##cxlstack done".into());
    lines.join("\n") + "\n"
}

fn log_of(lines: &[String]) -> String {
    lines.join("\n") + "\n"
}

/// Runs on `content`, returns the result and the out directory.
fn judge(t: &TempDir, name: &str, content: &[u8]) -> (Out, String) {
    let log = t.file(&format!("{name}.log"), content);
    let out = t.sub(&format!("{name}-out"));
    (run(&["--log", &log, "--out", &out]), out)
}

fn results(out: &str) -> J {
    let s = std::fs::read_to_string(format!("{out}/results.json")).expect("results.json");
    parse_json(&s).unwrap_or_else(|e| panic!("results.json is not JSON: {e}\n{s}"))
}

// ---------------------------------------------------------------------------
// Usage

/// The usage ``reflux-bench --log TESTS.LOG --out DIR``: asking for help is
/// not an error: status 0, the text on stdout.
#[test]
fn help_exits_zero_on_stdout() {
    assert_help_on_stdout(run, USAGE);
}

/// reflux-results.rst: reflux-bench "turns the log into
/// ``out/bench/reflux/{results.json,table.txt,throughput.svg,temperature.svg,
/// migrations.svg}``"; the usage text lists them.
#[test]
fn usage_text_lists_the_outputs() {
    assert_help_mentions(
        run,
        &[
            USAGE,
            "results.json",
            "table.txt",
            "throughput.svg",
            "temperature.svg",
            "migrations.svg",
            "bs_sweep.svg",
            "keys.svg",
            "qd_cpu.svg",
            "round=R",
            "C+NAME",
            "Exits 1",
        ],
    );
}

/// The usage ``reflux-bench --log TESTS.LOG --out DIR``: both required, each
/// with a value; anything else is a usage error (status 2) and writes
/// nothing.
#[test]
fn incomplete_or_unknown_arguments_print_usage_with_status_2() {
    let t = TempDir::new("usage");
    let log = t.file("tests.log", abc_log().as_bytes());
    assert_log_out_usage_errors(run, USAGE, &log, &t.sub("out"));
}

/// Usage errors print the usage; which argument is wrong must be said too.
#[test]
fn usage_errors_name_the_cause() {
    let t = TempDir::new("cause");
    let log = t.file("tests.log", abc_log().as_bytes());
    let o = run(&["--log", &log, "--out", &t.sub("out"), "--bogus"]);
    assert!(o.stderr.contains("--bogus"), "{}", o.stderr);
    let o = run(&["--log", &log]);
    assert!(!o.stderr.starts_with(USAGE), "{}", o.stderr);
}

// ---------------------------------------------------------------------------
// Inputs that hold no result

/// The usage: it reads TESTS.LOG: a missing log or a directory is refused
/// (status 1) naming it.
#[test]
fn missing_or_directory_log_is_refused_naming_it() {
    assert_missing_or_directory_log_refused(run, &TempDir::new("missing"));
}

/// The usage: "Exits 1 if ... no paradigm ran": an empty log, a log without
/// ``##reflux-bench`` lines.
#[test]
fn log_without_a_paradigm_exits_1() {
    let t = TempDir::new("none");
    for (i, l) in ["", "[ 0.1] Linux version 6.12\n##cxlstack done\n"]
        .iter()
        .enumerate()
    {
        let (o, _) = judge(&t, &format!("n{i}"), l.as_bytes());
        assert_eq!(o.code, Some(1), "{l:?}: {}", o.stdout);
        assert!(o.stderr.contains("paradigm"), "{l:?}: {}", o.stderr);
    }
}

// ---------------------------------------------------------------------------
// Results

/// reflux-results.rst and the usage: results.json holds "every sample and
/// migration; per paradigm and round the steady MB/s over the second half of
/// the run, temperatures, throttling ...; the ratios C/B, C/A ... the paper's
/// targets"; ``info.kernel_debug_checks`` says which kernel ran; the five
/// files are written (no sweep: no sweep plot); status 0.
#[test]
fn valid_log_gives_every_output() {
    let t = TempDir::new("valid");
    let (o, out) = judge(&t, "abc", abc_log().as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for f in [
        "results.json",
        "table.txt",
        "throughput.svg",
        "temperature.svg",
        "migrations.svg",
    ] {
        assert!(
            Path::new(&format!("{out}/{f}")).is_file(),
            "{f} not written"
        );
    }
    for f in ["bs_sweep.svg", "keys.svg", "qd_cpu.svg"] {
        assert!(!Path::new(&format!("{out}/{f}")).exists(), "{f} written");
    }
    for f in ["throughput.svg", "temperature.svg", "migrations.svg"] {
        let s = std::fs::read_to_string(format!("{out}/{f}")).unwrap();
        assert!(
            s.trim_start().starts_with("<svg") && s.trim_end().ends_with("</svg>"),
            "{f}"
        );
    }
    let v = results(&out);
    let info = v.get("info").expect("info");
    assert_eq!(
        info.get("kernel_debug_checks").and_then(J::str),
        Some("none"),
        "{info:?}"
    );
    let ps = v.get("paradigms").expect("paradigms");
    for p in ["A", "B", "C"] {
        let x = ps.get(p).unwrap_or_else(|| panic!("paradigm {p} missing"));
        // The usage: "per paradigm and round": one round here.
        let rounds = x.get("rounds").and_then(J::arr).expect("rounds");
        assert_eq!(rounds.len(), 1, "{p}");
        let round = &rounds[0];
        let s = round.get("samples").expect("samples");
        assert_eq!(
            s.get("t_ms").and_then(J::arr).map(|a| a.len()),
            Some(8),
            "{p}"
        );
        assert_eq!(
            round.get("migrations").and_then(J::arr).map(|a| a.len()),
            Some(1)
        );
        for f in ["steady_mbps", "max_temp_c", "throttled_fraction"] {
            assert!(x.get(f).and_then(J::num).is_some(), "{p}: {f} missing");
        }
    }
    let r = v.get("ratios").expect("ratios");
    assert_eq!(r.f("C/B"), 2.0);
    assert_eq!(r.f("C/A"), 2.5);
    assert!(v.get("targets").and_then(J::arr).is_some(), "targets");
}

/// The usage: "per paradigm and round the steady MB/s over the second half of
/// the run": C runs at 0 MB/s for the first half and 20 after; its steady rate is 20.
#[test]
fn steady_rate_is_the_second_half() {
    let t = TempDir::new("steady");
    let (o, out) = judge(&t, "abc", abc_log().as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = results(&out);
    let c = v.get("paradigms").and_then(|p| p.get("C")).unwrap();
    assert_eq!(c.f("steady_mbps"), 20.0, "{c:?}");
}

/// The usage: "The targets are reported, not enforced": C well below 1.7 × B
/// still exits 0, the target marked failed in results.json.
#[test]
fn missed_targets_are_reported_not_enforced() {
    let t = TempDir::new("targets");
    let mut lines = block("A", 10.0, 10.0, "ok");
    lines.extend(block("B", 10.0, 10.0, "ok"));
    lines.extend(block("C", 5.0, 5.0, "ok"));
    let (o, out) = judge(&t, "slow", log_of(&lines).as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = results(&out);
    let targets = v.get("targets").and_then(J::arr).expect("targets");
    assert!(
        targets
            .iter()
            .any(|x| x.get("pass") == Some(&J::Bool(false))),
        "no failed target reported: {targets:?}"
    );
}

/// The usage: "Exits 1 if ... a round's fio verify ... was not ok", naming the
/// paradigm; reflux-results.rst: ``verify=crc32c`` ... ``verify_fatal``.
#[test]
fn failed_fio_verify_exits_1() {
    let t = TempDir::new("verify");
    let mut lines = block("A", 10.0, 10.0, "ok");
    lines.extend(block("B", 10.0, 10.0, "fail"));
    lines.extend(block("C", 10.0, 10.0, "ok"));
    let (o, _) = judge(&t, "fail", log_of(&lines).as_bytes());
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(o.stderr.contains('B'), "paradigm not named: {}", o.stderr);
}

/// The usage: "Exits 1 if a line is malformed (naming it)": each malformed
/// ``##reflux-bench`` line is refused with its line number.
#[test]
fn malformed_lines_exit_1_naming_the_line() {
    let t = TempDir::new("malformed");
    let bad_lines = [
        P.to_string(),
        format!("{P} frobnicate"),
        format!("{P} sample t_ms=0 mbps=1 temp_mc=50000"),
        format!("{P} sample t_ms=0 mbps=abc temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps=-1 temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps=NaN temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps=inf temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps= temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps=1 mbps=2 temp_mc=50000 throttled=0"),
        format!("{P} sample t_ms=0 mbps=1 temp_mc=50000 throttled=2"),
        format!("{P} fio bw_mbps=10"),
        format!("{P} fio bw_mbps=10 verify=maybe"),
        format!("{P} fio bw_mbps=-3 verify=ok"),
        format!("{P} migration from=host"),
        format!("{P} migration from=x to=device drain_ns=1 ckpt_ns=1 handover_ns=1 rebuild_ns=1 total_ns=4"),
        format!("{P} migration from=host to=device drain_ns=-1 ckpt_ns=1 handover_ns=1 rebuild_ns=1 total_ns=4"),
    ];
    for (i, bad) in bad_lines.iter().enumerate() {
        let lines = vec![
            format!("{P} begin A"),
            fio("ok"),
            bad.clone(),
            format!("{P} end A"),
        ];
        let (o, _) = judge(&t, &format!("m{i}"), log_of(&lines).as_bytes());
        assert_eq!(o.code, Some(1), "{bad:?} accepted: {}", o.stdout);
        assert!(
            o.stderr.contains("line 3"),
            "{bad:?}: line not named: {}",
            o.stderr
        );
    }
}

/// The usage: "A begin/end block holds one round of one paradigm": a paradigm
/// twice in one round (no round= is round 1), a block inside another, an end
/// that does not match, an unknown paradigm, a begin without end, lines
/// outside a block, a block without its fio line.
#[test]
fn broken_block_structure_exits_1() {
    let t = TempDir::new("blocks");
    let b = |s: &str| format!("{P} {s}");
    let cases: Vec<Vec<String>> = vec![
        [block("A", 1.0, 1.0, "ok"), block("A", 1.0, 1.0, "ok")].concat(),
        vec![b("begin A"), fio("ok"), b("begin B"), fio("ok"), b("end B")],
        vec![b("begin A"), fio("ok"), b("end B")],
        vec![b("begin D"), fio("ok"), b("end D")],
        vec![b("begin")],
        vec![b("begin A"), fio("ok")],
        [block("A", 1.0, 1.0, "ok"), vec![sample(0, 1.0, 1, 0)]].concat(),
        vec![b("begin A"), b("end A")],
        vec![b("begin A"), fio("ok"), fio("ok"), b("end A")],
        vec![
            b("begin A"),
            fio("ok"),
            sample(1000, 1.0, 1, 0),
            sample(0, 1.0, 1, 0),
            b("end A"),
        ],
        vec![b("begin A extra"), fio("ok"), b("end A")],
    ];
    for (i, lines) in cases.iter().enumerate() {
        let (o, _) = judge(&t, &format!("b{i}"), log_of(lines).as_bytes());
        assert_eq!(o.code, Some(1), "case {i} {lines:?} accepted: {}", o.stdout);
        assert!(!o.stderr.is_empty(), "case {i}: no message");
    }
}

/// The usage: "A begin/end block holds one round of one paradigm (begin P
/// round=R; P is A, B, Bq, C, H or a variant of C, C+NAME; no round= is round
/// 1)": rounds 1 and 2 of A and C, and a variant, give two rounds each and a
/// ratio C+NAME/C; "Exits 1 if ... a sweep point's verify was not ok".
#[test]
fn rounds_variants_and_points() {
    let t = TempDir::new("rounds");
    let mut lines = block("A", 8.0, 8.0, "ok");
    lines.extend(block("C", 10.0, 20.0, "ok"));
    for p in ["A", "C", "C+flap"] {
        let mut b = block(p, 10.0, 20.0, "ok");
        b[0] = format!("{P} begin {p} round=2");
        lines.extend(b);
    }
    let (o, out) = judge(&t, "rounds", log_of(&lines).as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = results(&out);
    let ps = v.get("paradigms").expect("paradigms");
    for (p, n) in [("A", 2), ("C", 2), ("C+flap", 1)] {
        let rounds = ps.get(p).and_then(|x| x.get("rounds")).and_then(J::arr);
        assert_eq!(rounds.map(|r| r.len()), Some(n), "{p}");
    }
    assert_eq!(v.get("ratios").unwrap().f("C+flap/C"), 1.0);
    lines.push(format!(
        "{P} point suite=keys paradigm=C rw=randread bs=4096 qd=32 dist=zipf rep=1 \
         bw_mbps=5 iops=1220 cpu_ns_per_gib=1000 verify=fail"
    ));
    let (o, _) = judge(&t, "point", log_of(&lines).as_bytes());
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(o.stderr.contains("verify=fail"), "{}", o.stderr);
}

/// The usage: "other lines are ignored": kernel messages, fio's output and
/// lines that merely contain the prefix elsewhere do not disturb the result.
#[test]
fn other_lines_are_ignored() {
    let t = TempDir::new("noise");
    let mut lines = vec![
        "[    1.0] reflux: loaded".to_string(),
        "random # ##reflux-bench in the middle".to_string(),
        "".to_string(),
    ];
    lines.extend(block("A", 10.0, 10.0, "ok"));
    lines.push("write: IOPS=80, BW=10.0MiB/s".into());
    let (o, _) = judge(&t, "noise", log_of(&lines).as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// The usage: "other lines are ignored": a line with bytes that are not
/// UTF-8 (serial-port noise) is such an other line and must not make the
/// whole log unreadable.
#[test]
fn invalid_utf8_in_other_lines_is_ignored() {
    let t = TempDir::new("utf8");
    let mut bytes = b"[    0.1] serial noise \xff\xfe\n".to_vec();
    bytes.extend_from_slice(abc_log().as_bytes());
    let (o, _) = judge(&t, "utf8", &bytes);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

/// The log is the serial port's: CR LF line endings are the same lines.
#[test]
fn crlf_log_is_read() {
    let t = TempDir::new("crlf");
    let (o, out) = judge(&t, "crlf", abc_log().replace('\n', "\r\n").as_bytes());
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = results(&out);
    assert_eq!(v.get("ratios").unwrap().f("C/B"), 2.0);
}

/// Random bytes as a log: refused (status 1) with a message, no crash.
#[test]
fn garbage_log_is_refused_without_crash() {
    let t = TempDir::new("garbage");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut bytes: Vec<u8> = (0..256 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let (o, _) = judge(&t, "bin", &bytes);
    assert_eq!(o.code, Some(1));
    assert!(!o.stderr.is_empty());
    // ASCII garbage with the prefix everywhere.
    for b in bytes.iter_mut() {
        *b = b"##reflux-bench =\n begin A end fio sample 0x"[(*b as usize) % 43];
    }
    let (o, _) = judge(&t, "ascii", &bytes);
    assert_eq!(o.code, Some(1));
    assert!(!o.stderr.is_empty());
}

/// The usage: it "writes into DIR": a DIR that cannot be a directory (a
/// regular file, a path below one) fails (status 1) naming it.
#[test]
fn unusable_out_dir_fails_naming_it() {
    let t = TempDir::new("outdir");
    let log = t.file("tests.log", abc_log().as_bytes());
    assert_unusable_out_dir_fails(run, &t, &log);
}

/// The usage ``--out DIR``: an empty DIR names no directory; it must be
/// refused, not taken as the current directory.
#[test]
fn empty_out_dir_is_refused() {
    let t = TempDir::new("emptyout");
    let log = t.file("tests.log", abc_log().as_bytes());
    assert_empty_out_dir_refused(run_in, &log);
}
