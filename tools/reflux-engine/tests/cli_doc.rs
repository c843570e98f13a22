// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `reflux-engine`, written from Documentation/tools.rst
//! ("reflux-engine: the device's engine outside the VM") and from the usage
//! line the binary prints, only.
//!
//! The engine serves a VM's PMR file until SIGTERM: every run here that could
//! start waiting is given a deadline and killed past it. The PMR files are
//! sparse (no memory or disk is used).

use std::fs::File;
use std::process::Command;
use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{
    assert_help_on_stdout, assert_usage_error, collect, run_until, spawn, wait_or_kill, wait_until,
    Cwd, Out, TempDir,
};

const BIN: &str = env!("CARGO_BIN_EXE_reflux-engine");
const USAGE: &str = "usage: reflux-engine FILE WINDOW_OFFSET [POLL_US]";

/// Runs with a deadline; past it the process is killed and `timed_out` set.
fn run_t(args: &[&str], deadline: Duration) -> Out {
    run_until(BIN, args, Cwd::Inherit, deadline)
}

fn run(args: &[&str]) -> Out {
    let o = run_t(args, Duration::from_millis(1500));
    assert!(
        !o.timed_out,
        "reflux-engine {args:?} did not return: it started waiting instead of refusing"
    );
    o
}

fn assert_usage(o: &Out, args: &[&str]) {
    assert_usage_error(o, args, &[USAGE]);
}

// ---------------------------------------------------------------------------

/// tools.rst: the command line is ``reflux-engine FILE WINDOW_OFFSET
/// [POLL_US]``: without FILE and WINDOW_OFFSET it prints that usage on stderr
/// and exits 2.
#[test]
fn missing_arguments_print_usage_with_status_2() {
    let t = TempDir::new("missing");
    let f = t.sparse("pmr", 2 << 20);
    let fs = f.to_str().unwrap();
    for args in [&[][..], &[fs]] {
        assert_usage(&run(args), args);
    }
}

/// tools.rst: ``reflux-engine FILE WINDOW_OFFSET [POLL_US]``; asking for help
/// is not an error: exit status 0, the usage on stdout.
#[test]
fn help_exits_zero_on_stdout() {
    assert_help_on_stdout(run, USAGE);
}

/// tools.rst: WINDOW_OFFSET is an offset into FILE; anything that is not a
/// non-negative number is a usage error (status 2), refused before mapping.
#[test]
fn malformed_window_offset_is_a_usage_error() {
    let t = TempDir::new("badoff");
    let f = t.sparse("pmr", 2 << 20);
    let fs = f.to_str().unwrap();
    for off in ["x", "-1", "", "1.5", "99999999999999999999", "0x", "4K"] {
        let args = [fs, off];
        assert_usage(&run(&args), &args);
    }
}

/// tools.rst: ``[POLL_US]`` is a number of microseconds; a malformed one must
/// be refused like a malformed WINDOW_OFFSET (usage, status 2), not ignored.
#[test]
fn malformed_poll_us_is_a_usage_error() {
    let t = TempDir::new("badpoll");
    let f = t.sparse("pmr", 2 << 20);
    let fs = f.to_str().unwrap();
    for p in ["x", "-1", "99999999999999999999", ""] {
        let args = [fs, "0", p];
        let o = run_t(&args, Duration::from_millis(1000));
        assert!(!o.timed_out, "{args:?}: accepted, started waiting");
        assert_usage(&o, &args);
    }
}

/// tools.rst: ``reflux-engine FILE WINDOW_OFFSET [POLL_US]`` takes at most
/// three arguments; a fourth is a usage error, not silently dropped.
#[test]
fn extra_argument_is_a_usage_error() {
    let t = TempDir::new("extra");
    let f = t.sparse("pmr", 2 << 20);
    let fs = f.to_str().unwrap();
    let args = [fs, "0", "10", "extra"];
    let o = run_t(&args, Duration::from_millis(1000));
    assert!(!o.timed_out, "{args:?}: accepted, started waiting");
    assert_usage(&o, &args);
}

/// tools.rst: the engine "maps the VM's PMR file": a file that does not exist,
/// a directory or an empty file cannot be mapped; it says so naming the file
/// and exits non-zero, without waiting.
#[test]
fn unmappable_files_are_refused_naming_them() {
    let t = TempDir::new("files");
    let missing = t.path().join("does-not-exist");
    let empty = t.sparse("empty", 0);
    for p in [missing.as_path(), t.path(), empty.as_path()] {
        let ps = p.to_str().unwrap();
        let args = [ps, "0"];
        let o = run(&args);
        assert!(
            matches!(o.code, Some(c) if c != 0),
            "{args:?}: {:?}",
            o.code
        );
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(
            o.stderr.contains(name),
            "{args:?}: file not named: {}",
            o.stderr
        );
        assert!(o.stdout.is_empty(), "{args:?}: {}", o.stdout);
    }
}

/// tools.rst ("cargo test -p reflux-engine" covers "a window outside the
/// mapping"): a WINDOW_OFFSET at or past the end of FILE, or a window that
/// does not fit in it, is refused at once (non-zero, a message), not waited
/// for.
#[test]
fn window_outside_the_file_is_refused() {
    let t = TempDir::new("outside");
    let small = t.sparse("small", 1 << 20);
    let big = t.sparse("big", 2 << 20);
    let cases = [
        (small.to_str().unwrap(), "0"),
        (small.to_str().unwrap(), "1048576"),
        (small.to_str().unwrap(), "4194304"),
        (big.to_str().unwrap(), "2097152"),
        (big.to_str().unwrap(), "1048577"),
        (big.to_str().unwrap(), "18446744073709551615"),
    ];
    for (f, off) in cases {
        let args = [f, off];
        let o = run(&args);
        assert!(
            matches!(o.code, Some(c) if c != 0),
            "{args:?}: {:?}",
            o.code
        );
        assert!(o.stderr.contains("window"), "{args:?}: {}", o.stderr);
        assert!(o.stdout.is_empty(), "{args:?}: {}", o.stdout);
    }
}

/// tools.rst: the engine "waits for the device to lay its window out, and
/// serves the cores' jobs ... until SIGTERM, when it prints what it served".
/// On a file whose window is still blank it waits; SIGTERM ends it with
/// status 0 and a report of what it served (here: nothing).
#[test]
fn sigterm_ends_the_wait_and_reports_what_was_served() {
    let t = TempDir::new("term");
    let f = t.sparse("pmr", 2 << 20);
    let args = [f.to_str().unwrap(), "0", "100"];
    let io = TempDir::new("term-io");
    let mut child = spawn(BIN, &args, None, &io);
    let early = wait_until(&mut child, Duration::from_millis(300));
    if let Some(s) = early {
        let o = collect(BIN, &args, &io, Some(s));
        panic!("ended on its own before SIGTERM: {:?} {}", o.code, o.stderr);
    }
    let k = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(k.success());
    let status = wait_or_kill(&mut child, Duration::from_secs(2));
    let o = collect(BIN, &args, &io, status);
    assert!(!o.timed_out, "SIGTERM did not end it");
    assert_eq!(o.code, Some(0), "stderr {}", o.stderr);
    let report = format!("{}{}", o.stdout, o.stderr);
    assert!(
        report.contains("jobs"),
        "no report of what it served: {report:?}"
    );
    // The blank PMR file was only read.
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0));
}

/// tools.rst: the engine "maps the VM's PMR file"; one it may not read is
/// refused naming it. (Skipped when running with privileges that read it
/// anyway.)
#[test]
fn unreadable_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let t = TempDir::new("perm");
    let f = t.sparse("pmr", 2 << 20);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if File::open(&f).is_ok() {
        eprintln!("skipped: privileged, the file stays readable");
        return;
    }
    let args = [f.to_str().unwrap(), "0"];
    let o = run(&args);
    assert!(matches!(o.code, Some(c) if c != 0));
    assert!(o.stderr.contains("pmr"), "{}", o.stderr);
}
