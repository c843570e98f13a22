// SPDX-License-Identifier: GPL-2.0
//! Command-line tests of `uapi-fuzz`, written from Documentation/build.rst
//! ("What make check runs": ``make fuzz``) and from what the binary prints
//! (it has no --help; its usage line is ``uapi-fuzz fuzz|run|minimize|repro
//! ...``), only.
//!
//! The fuzzer belongs in the VM: no test here lets it run a program or fuzz.
//! Every command line is refused before that; a run still going at its
//! deadline is killed and reported.

use std::time::Duration;

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
use cli_support::{assert_usage_error, run_until, Cwd, Out, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_uapi-fuzz");

/// Runs in a scratch directory with a deadline (killed past it).
fn run_t(args: &[&str], deadline: Duration) -> Out {
    run_until(BIN, args, Cwd::Scratch, deadline)
}

fn run(args: &[&str]) -> Out {
    let o = run_t(args, Duration::from_millis(1500));
    assert!(
        !o.timed_out,
        "uapi-fuzz {args:?} did not return: it started working instead of refusing\n{}",
        o.stderr
    );
    o
}

/// Refused as a usage error (status 2, naming each of `names`) before it
/// started working.
fn assert_refused(o: &Out, args: &[&str], names: &[&str]) {
    assert!(
        !o.stderr.contains("WITHOUT KCOV") && !o.stderr.contains("seed"),
        "{args:?} started working before refusing: {}",
        o.stderr
    );
    assert_usage_error(o, args, names);
}

// ---------------------------------------------------------------------------

/// The usage line the binary prints (``uapi-fuzz fuzz|run|minimize|repro
/// ...``): without a command it is printed on stderr, status 2.
#[test]
fn no_command_prints_usage_with_status_2() {
    let o = run(&[]);
    assert_refused(&o, &[], &["usage", "fuzz", "run", "minimize", "repro"]);
}

/// build.rst documents ``make fuzz`` and ``tools/uapi-fuzz`` but not its
/// command line; the binary's own usage ends in ``...``: a ``--help`` is the
/// only place its options could be learnt, and asking for it is not an
/// error (status 0, on stdout).
#[test]
fn help_is_available() {
    for a in [&["--help"][..], &["run", "--help"], &["fuzz", "--help"]] {
        let o = run(a);
        assert_eq!(o.code, Some(0), "{a:?}: {}", o.stderr);
        assert!(o.stdout.contains("usage"), "{a:?}: stdout {}", o.stdout);
    }
}

/// Usage ``uapi-fuzz fuzz|run|minimize|repro ...``: any other command is
/// refused (status 2) and named.
#[test]
fn unknown_command_is_refused() {
    for c in ["bogus", "Fuzz", "-h", "help", "--version"] {
        let a = [c];
        assert_refused(&run(&a), &a, &[c]);
    }
}

/// ``run``, ``minimize`` and ``repro`` work on a program file: without one
/// they are refused (status 2) saying that a FILE.prog is needed.
#[test]
fn program_commands_need_a_file() {
    for c in ["run", "minimize", "repro"] {
        let a = [c];
        assert_refused(&run(&a), &a, &["FILE.prog"]);
    }
}

/// ``run``, ``minimize`` and ``repro``: a program file that does not exist or
/// is a directory is refused (status 2) naming it, before anything runs.
#[test]
fn missing_or_directory_program_is_refused_naming_it() {
    let t = TempDir::new("files");
    let missing = t.path().join("missing.prog");
    let missing = missing.to_str().unwrap();
    let dir = t.path().to_str().unwrap();
    for c in ["run", "minimize", "repro"] {
        for f in [missing, dir] {
            let a = [c, f];
            assert_refused(&run(&a), &a, &[f]);
        }
    }
}

/// ``run``, ``minimize`` and ``repro``: a program file that is not a program
/// (random bytes, a text of unknown calls) is refused (status 2) naming the
/// file, before anything runs.
#[test]
fn malformed_program_is_refused_before_running() {
    let t = TempDir::new("garbage");
    let mut x: u32 = 0x1234_5678;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let bin = t.file("random.prog", &bytes);
    let text = t.file("text.prog", b"hello world\nrm -rf /\n");
    for c in ["run", "minimize", "repro"] {
        for f in [&bin, &text] {
            let a = [c, f.as_str()];
            let o = run(&a);
            assert_refused(&o, &a, &[f.rsplit('/').next().unwrap()]);
        }
    }
}

/// ``run FILE.prog`` takes one program; a second file or an unknown option is
/// refused (status 2) and named.
#[test]
fn extra_arguments_to_program_commands_are_refused() {
    let t = TempDir::new("extra");
    let text = t.file("text.prog", b"hello world\n");
    for c in ["run", "minimize", "repro"] {
        for extra in ["--bogus", "-z"] {
            let a = [c, text.as_str(), extra];
            assert_refused(&run(&a), &a, &[extra]);
        }
        let a = [c, text.as_str(), text.as_str()];
        assert_refused(&run(&a), &a, &[]);
    }
}

/// ``fuzz``: an unknown option is refused (status 2) and named before any
/// fuzzing starts. (``--help`` is not one: ``help_is_available`` asks
/// ``uapi-fuzz fuzz --help`` for the usage, status 0.)
#[test]
fn fuzz_refuses_unknown_option_before_fuzzing() {
    for extra in ["--bogus", "--version"] {
        let a = ["fuzz", extra];
        assert_refused(&run(&a), &a, &[extra]);
    }
}

/// ``fuzz``: like ``--bogus``, any argument it does not know (a stray word,
/// a short option such as ``-h``) is refused before fuzzing, not ignored.
#[test]
fn fuzz_refuses_stray_arguments_before_fuzzing() {
    for extra in ["x", "-h", "-"] {
        let a = ["fuzz", extra];
        let o = run_t(&a, Duration::from_millis(1000));
        assert!(
            !o.timed_out,
            "{a:?}: accepted, fuzzing started: {}",
            o.stderr
        );
        assert_refused(&o, &a, &[extra]);
    }
}
