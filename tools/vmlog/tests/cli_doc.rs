// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `vmlog`, written from Documentation/build.rst ("The
//! VM", "What make check runs") and from `vmlog --help` only.

use std::fs::File;
use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{assert_usage_error, run_bounded, Cwd, Out, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_vmlog");

fn run(args: &[&str]) -> Out {
    run_bounded(BIN, args, Cwd::Inherit, Duration::from_secs(10))
}

/// `vmlog summarize --tests <content>`.
fn judge_tests(content: &str) -> Out {
    let t = TempDir::new("tests");
    let f = t.file("tests.log", content.as_bytes());
    run(&["summarize", "--tests", &f])
}

/// A passing run: two results in one suite, finished, and the done marker.
const GOOD: &str = "##cxlstack begin selftest.a/b_test\n\
TAP version 13\n\
1..2\n\
ok 1 - first\n\
ok 2 - second\n\
##cxlstack end selftest.a/b_test rc=0\n\
##cxlstack done\n";

fn assert_judged(o: &Out, code: i32, last: &str) {
    assert_eq!(
        o.code,
        Some(code),
        "stdout {}\nstderr {}",
        o.stdout,
        o.stderr
    );
    assert_eq!(o.last_line(), last, "stdout {}", o.stdout);
}

// ---------------------------------------------------------------------------
// Usage

/// vmlog --help: ``vmlog --help`` is a documented form: exit 0, the help on
/// stdout, nothing on stderr.
#[test]
fn help_exits_zero_on_stdout() {
    for a in [&["--help"][..], &["-h"], &["summarize", "--help"]] {
        let o = run(a);
        assert_eq!(o.code, Some(0), "{a:?}: {}", o.stderr);
        assert!(o.stdout.contains("usage: vmlog summarize"), "{a:?}");
        assert!(o.stderr.is_empty(), "{a:?}: {}", o.stderr);
    }
}

/// vmlog --help: "At least one option is required. Exit status: ... 2 for a
/// usage error."
#[test]
fn summarize_without_options_is_a_usage_error() {
    assert_usage_error(&run(&["summarize"]), &["summarize"], &[]);
}

/// vmlog --help: the usage is ``vmlog summarize [...]`` or ``vmlog --help``:
/// no command, an unknown command, or options without the command are usage
/// errors (2) that name what is wrong.
#[test]
fn missing_or_unknown_command_is_a_usage_error() {
    assert_usage_error(&run(&[]), &[], &["command"]);
    for a in [&["bogus"][..], &["--tests", "x.log"], &["Summarize"]] {
        assert_usage_error(&run(a), a, &[a[0]]);
    }
}

/// vmlog --help: the options are --tests, --console, --cargo, --cargo-rc,
/// --vm-rc; anything else (an unknown option, a stray argument) is a usage
/// error naming it.
#[test]
fn unknown_argument_is_a_usage_error() {
    let t = TempDir::new("unk");
    let f = t.file("tests.log", GOOD.as_bytes());
    for extra in ["--bogus", "extra", "-t", "--test", "--Tests"] {
        let a = ["summarize", "--tests", &f, extra];
        assert_usage_error(&run(&a), &a, &[extra]);
    }
}

/// vmlog --help: every option takes a value (FILE or N); without one it is a
/// usage error naming the option.
#[test]
fn option_without_value_is_a_usage_error() {
    for opt in ["--tests", "--console", "--cargo", "--cargo-rc", "--vm-rc"] {
        let a = ["summarize", opt];
        assert_usage_error(&run(&a), &a, &[opt]);
    }
}

/// vmlog --help: ``--cargo-rc N``, ``--vm-rc N`` are exit statuses: a value
/// that is not a number is a usage error naming it.
#[test]
fn malformed_status_is_a_usage_error() {
    for opt in ["--cargo-rc", "--vm-rc"] {
        for v in ["x", "", "1.5", "99999999999999999999", "0x10"] {
            let a = ["summarize", opt, v];
            assert_usage_error(&run(&a), &a, &[opt]);
        }
    }
}

/// vmlog --help: "Judges one test run": one file per kind; an option given
/// twice is ambiguous and refused as a usage error (it must not silently
/// judge only one of the two files).
#[test]
fn repeated_option_is_a_usage_error() {
    let t = TempDir::new("dup");
    let good = t.file("good.log", GOOD.as_bytes());
    let bad = t.file("bad.log", b"##cxlstack begin s\nnot ok 1 - x\n");
    for a in [
        vec!["summarize", "--tests", &bad, "--tests", &good],
        vec![
            "summarize",
            "--vm-rc",
            "124",
            "--vm-rc",
            "0",
            "--tests",
            &good,
        ],
    ] {
        let o = run(&a);
        assert_usage_error(&o, &a, &["twice"]);
    }
}

// ---------------------------------------------------------------------------
// Judging

/// build.rst: "every TAP result counts ... The last line is ``N passed, M
/// failed``"; vmlog --help: exit "0 if nothing failed and at least one test
/// passed".
#[test]
fn passing_run_exits_zero_with_totals_last() {
    let o = judge_tests(GOOD);
    assert_judged(&o, 0, "2 passed, 0 failed");
    assert!(o.stderr.is_empty(), "{}", o.stderr);
}

/// build.rst: "every TAP result counts": a ``not ok`` is a failure, and the
/// summary's failure lines name it.
#[test]
fn failing_result_fails_the_run() {
    let o = judge_tests(
        "##cxlstack begin s\n1..2\nok 1 - fine\nnot ok 2 - broken_thing\n\
         ##cxlstack end s rc=1\n##cxlstack done\n",
    );
    assert_judged(&o, 1, "1 passed, 1 failed");
    assert!(o.stdout.contains("broken_thing"), "{}", o.stdout);
}

/// build.rst: "a suite that does not finish ... fails", and a run without
/// ``##cxlstack done`` did not complete (a log cut off mid-suite).
#[test]
fn truncated_log_fails() {
    for log in [
        "##cxlstack begin s\nok 1 - a\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack done\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack end s rc=0\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack end s rc=0\n##cxlstack do",
    ] {
        let o = judge_tests(log);
        assert_eq!(o.code, Some(1), "{log:?}: {}", o.stdout);
        assert!(o.last_line().contains("1 failed") || o.last_line().contains("2 failed"));
    }
}

/// build.rst: a suite that "exits non-zero without a failing result ...
/// fails".
#[test]
fn nonzero_suite_status_without_failing_result_fails() {
    let o =
        judge_tests("##cxlstack begin s\n1..1\nok 1 - a\n##cxlstack end s rc=3\n##cxlstack done\n");
    assert_judged(&o, 1, "1 passed, 1 failed");
    assert!(
        o.stdout.contains("rc=3") || o.stdout.contains(" 3"),
        "{}",
        o.stdout
    );
}

/// build.rst: a suite that "runs no test fails".
#[test]
fn suite_without_tests_fails() {
    let o = judge_tests("##cxlstack begin s\n1..0\n##cxlstack end s rc=0\n##cxlstack done\n");
    assert_judged(&o, 1, "0 passed, 1 failed");
}

/// build.rst: the markers are ``##cxlstack begin <suite>`` / ``##cxlstack end
/// <suite> rc=<exit status>``; a malformed or mismatched marker must not let
/// the suite pass.
#[test]
fn malformed_markers_fail() {
    for log in [
        "##cxlstack begin s\nok 1 - a\n##cxlstack end s rc=x\n##cxlstack done\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack end s rc=99999999999999999999\n##cxlstack done\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack end t rc=0\n##cxlstack done\n",
        "##cxlstack begin s\nok 1 - a\n##cxlstack begin t\nok 1 - b\n##cxlstack end t rc=0\n##cxlstack done\n",
    ] {
        let o = judge_tests(log);
        assert_eq!(o.code, Some(1), "{log:?}: {}", o.stdout);
    }
}

/// vmlog --help: the totals are ``N passed, M failed`` with ``, K skipped``
/// when K > 0; a skipped test is not a failure.
#[test]
fn skipped_tests_are_counted_apart() {
    let o = judge_tests(
        "##cxlstack begin s\n1..2\nok 1 - a\nok 2 - b # SKIP no device\n\
         ##cxlstack end s rc=0\n##cxlstack done\n",
    );
    assert_judged(&o, 0, "1 passed, 0 failed, 1 skipped");
}

/// vmlog --help: "--vm-rc N  exit status of the VM runner (124: the VM timed
/// out)"; build.rst: "a VM timeout fails".
#[test]
fn vm_timeout_fails_even_with_passing_tests() {
    let t = TempDir::new("timeout");
    let f = t.file("tests.log", GOOD.as_bytes());
    let o = run(&["summarize", "--tests", &f, "--vm-rc", "124"]);
    assert_judged(&o, 1, "2 passed, 1 failed");
    assert!(o.stdout.contains("timed out"), "{}", o.stdout);
    let o = run(&["summarize", "--tests", &f, "--vm-rc", "0"]);
    assert_judged(&o, 0, "2 passed, 0 failed");
}

/// build.rst: "any oops, ``BUG:``, ``WARNING:``, lockdep, KFENCE, KASAN, UBSAN
/// or kmemleak report in the console fails" (with the console's timestamps);
/// the failure line quotes the report.
#[test]
fn kernel_reports_in_console_fail() {
    let t = TempDir::new("console");
    let tests = t.file("tests.log", GOOD.as_bytes());
    for report in [
        "Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP",
        "BUG: kernel NULL pointer dereference, address: 0000000000000000",
        "WARNING: CPU: 1 PID: 77 at drivers/x.c:10 foo+0x1/0x2",
        "WARNING: possible circular locking dependency detected",
        "possible recursive locking detected",
        "BUG: KFENCE: out-of-bounds read in foo+0x1/0x2",
        "BUG: KASAN: slab-out-of-bounds in foo+0x1/0x2",
        "UBSAN: array-index-out-of-bounds in drivers/x.c:3:4",
        "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
    ] {
        let con = t.file(
            "console.log",
            format!("[    0.000000] Linux version 6.12\n[    2.345678] {report}\n[    2.4] more\n")
                .as_bytes(),
        );
        let o = run(&["summarize", "--tests", &tests, "--console", &con]);
        assert_judged(&o, 1, "2 passed, 1 failed");
        assert!(
            o.stdout.contains(report),
            "{report:?} not quoted: {}",
            o.stdout
        );
    }
}

/// build.rst: only kernel problem reports fail the console; an ordinary boot
/// log does not.
#[test]
fn clean_console_passes() {
    let t = TempDir::new("clean");
    let tests = t.file("tests.log", GOOD.as_bytes());
    let con = t.file(
        "console.log",
        b"[    0.000000] Linux version 6.12.0 (gcc)\n[    0.1] Command line: console=ttyS0 oops=panic panic=-1\n[    1.0] cxl_ccm: loaded\n",
    );
    let o = run(&["summarize", "--tests", &tests, "--console", &con]);
    assert_judged(&o, 0, "2 passed, 0 failed");
}

/// vmlog --help: "Exit status: 0 if nothing failed and at least one test
/// passed, 1 otherwise": a clean console or a zero status alone passes no
/// test.
#[test]
fn nothing_passed_is_a_failure() {
    let t = TempDir::new("nothing");
    let con = t.file("console.log", b"[    0.0] Linux version 6.12\n");
    for a in [
        vec!["summarize", "--console", &con],
        vec!["summarize", "--vm-rc", "0"],
        vec!["summarize", "--cargo-rc", "0"],
    ] {
        let o = run(&a);
        assert_eq!(o.code, Some(1), "{a:?}: {}", o.stdout);
        assert!(
            o.last_line().starts_with("0 passed, "),
            "{a:?}: {}",
            o.stdout
        );
    }
}

/// vmlog --help: ``--cargo FILE`` (the output of ``cargo test``) and
/// ``--cargo-rc N``: a failing test in the output or a non-zero status fails
/// the run; passing output passes.
#[test]
fn cargo_output_and_status_are_judged() {
    let t = TempDir::new("cargo");
    let ok = t.file(
        "ok.txt",
        b"running 2 tests\ntest a ... ok\ntest b ... ok\n\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n",
    );
    let bad = t.file(
        "bad.txt",
        b"running 2 tests\ntest a ... ok\ntest b_broken ... FAILED\n\nfailures:\n    b_broken\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n",
    );
    let o = run(&["summarize", "--cargo", &ok, "--cargo-rc", "0"]);
    assert_judged(&o, 0, "2 passed, 0 failed");
    let o = run(&["summarize", "--cargo", &bad, "--cargo-rc", "101"]);
    assert_eq!(o.code, Some(1));
    assert!(o.stdout.contains("b_broken"), "{}", o.stdout);
    let o = run(&["summarize", "--cargo", &bad, "--cargo-rc", "0"]);
    assert_eq!(o.code, Some(1), "failure in output ignored: {}", o.stdout);
    let o = run(&["summarize", "--cargo", &ok, "--cargo-rc", "101"]);
    assert_eq!(o.code, Some(1), "status ignored: {}", o.stdout);
}

/// vmlog --help: "the counts per source (vm, cargo), and as the last line the
/// totals": the totals are the sums of the sources.
#[test]
fn totals_sum_the_sources() {
    let t = TempDir::new("sum");
    let tests = t.file("tests.log", GOOD.as_bytes());
    let cargo = t.file(
        "cargo.txt",
        b"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
    );
    let o = run(&[
        "summarize",
        "--tests",
        &tests,
        "--cargo",
        &cargo,
        "--cargo-rc",
        "0",
        "--vm-rc",
        "0",
    ]);
    assert_judged(&o, 0, "5 passed, 0 failed");
    assert!(o.stdout.contains("vm: 2 passed, 0 failed"), "{}", o.stdout);
    assert!(
        o.stdout.contains("cargo: 3 passed, 0 failed"),
        "{}",
        o.stdout
    );
}

/// vmlog --help: the logs are files; one that is missing, a directory or
/// empty cannot show a passing run: the run fails (1) naming the file, with
/// no crash.
#[test]
fn missing_directory_or_empty_inputs_fail() {
    let t = TempDir::new("inputs");
    let good = t.file("good.log", GOOD.as_bytes());
    let empty = t.file("empty.log", b"");
    let missing = t.path().join("missing.log");
    let missing = missing.to_str().unwrap();
    let dir = t.path().to_str().unwrap();
    for opt in ["--tests", "--console", "--cargo"] {
        for f in [missing, dir] {
            let mut a = vec!["summarize", opt, f];
            if opt != "--tests" {
                a.extend_from_slice(&["--tests", &good]);
            }
            let o = run(&a);
            assert_eq!(o.code, Some(1), "{a:?}: {}", o.stdout);
            assert!(
                o.stdout.contains(f) || o.stderr.contains(f),
                "{a:?}: {f} not named: {}{}",
                o.stdout,
                o.stderr
            );
        }
    }
    let o = run(&["summarize", "--tests", &empty]);
    assert_eq!(o.code, Some(1), "{}", o.stdout);
}

/// vmlog --help: files it may not read fail the run naming them (skipped
/// when privileged).
#[test]
fn unreadable_input_fails() {
    use std::os::unix::fs::PermissionsExt;
    let t = TempDir::new("perm");
    let f = t.file("tests.log", GOOD.as_bytes());
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if File::open(&f).is_ok() {
        eprintln!("skipped: privileged, the file stays readable");
        return;
    }
    let o = run(&["summarize", "--tests", &f]);
    assert_eq!(o.code, Some(1));
    assert!(o.stdout.contains(&f) || o.stderr.contains(&f));
}

/// build.rst: the logs come from serial ports: random bytes (invalid UTF-8)
/// in any of them are judged, not crashed on, and cannot pass.
#[test]
fn garbage_inputs_are_judged_without_crash() {
    let t = TempDir::new("garbage");
    // A deterministic pseudo-random megabyte, with NULs and invalid UTF-8.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let bytes: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let g = t.file("garbage", &bytes);
    for opt in ["--tests", "--console", "--cargo"] {
        let a = ["summarize", opt, &g];
        let o = run(&a);
        assert_eq!(o.code, Some(1), "{a:?}: {}", o.stdout);
    }
}

/// build.rst: the tests log comes from a serial port (``ttyS1``), whose lines
/// may end in CR LF; they are the same markers and results.
#[test]
fn crlf_line_endings_are_accepted() {
    let o = judge_tests(&GOOD.replace('\n', "\r\n"));
    assert_judged(&o, 0, "2 passed, 0 failed");
}

/// build.rst: a suite's output is TAP or KTAP; nested KTAP subtests count,
/// and a failing subtest fails the run.
#[test]
fn ktap_subtests_are_counted() {
    let o = judge_tests(
        "##cxlstack begin kunit\nKTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: suite\n    1..2\n    ok 1 test_a\n    not ok 2 test_b\nnot ok 1 suite\n##cxlstack end kunit rc=0\n##cxlstack done\n",
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(o.stdout.contains("test_b"), "{}", o.stdout);
}

/// build.rst: the suites print TAP ("every TAP result counts"). In TAP a
/// plan of ``1..3`` followed by two results means a test did not run (the
/// suite stopped early): the run must not pass.
#[test]
fn tap_plan_mismatch_fails() {
    let o = judge_tests(
        "##cxlstack begin s\nTAP version 13\n1..3\nok 1 - a\nok 2 - b\n\
         ##cxlstack end s rc=0\n##cxlstack done\n",
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
}

/// build.rst: the suites print TAP; ``Bail out!`` is TAP's way of aborting
/// the run: it must not pass.
#[test]
fn tap_bail_out_fails() {
    let o = judge_tests(
        "##cxlstack begin s\nTAP version 13\n1..3\nok 1 - a\nBail out! no device\n\
         ##cxlstack end s rc=0\n##cxlstack done\n",
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
}
