//! Runs `vmlog` on realistic sample logs from `tests/data/`.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use vmlog::cargo::tally_cargo_log;
use vmlog::kernel_log::tally_kernel_log;
use vmlog::tests_log::tally_tests_log;
use vmlog::{summarize, Options, Tally};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(name: &str) -> String {
    match fs::read_to_string(data(name)) {
        Ok(text) => text,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn counts(t: &Tally) -> (u64, u64, u64) {
    (t.passed, t.failed, t.skipped)
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| s.to_string()).collect()
}

fn vmlog(args: &[&str]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_vmlog"))
        .args(args)
        .output()
    {
        Ok(output) => output,
        Err(e) => panic!("cannot run vmlog: {e}"),
    }
}

fn path_arg(name: &str) -> String {
    data(name).display().to_string()
}

#[test]
fn tests_log_kselftest_kunit_and_ksft_skip() {
    let t = tally_tests_log(&read("tests.log"));
    // smoke: 1 passed, 1 failed, 1 skipped; kunit (deepest level only):
    // 3 passed, 1 failed, 1 skipped; cxl-list: rc=4 without results.
    assert_eq!(counts(&t), (4, 2, 3));
    assert_eq!(
        t.failures,
        strings(&[
            "FAIL smoke: smoke.bad",
            "FAIL kunit: rust_doctest_kernel_alloc_kbox_rs_2",
        ])
    );
}

#[test]
fn tests_log_of_a_crashed_vm() {
    let t = tally_tests_log(&read("tests-crash.log"));
    assert_eq!(counts(&t), (1, 2, 0));
    assert_eq!(
        t.failures,
        strings(&[
            "suite smoke did not finish",
            "the VM run did not complete (no ##cxlstack done)",
        ])
    );
}

#[test]
fn clean_boot_has_no_report() {
    assert_eq!(tally_kernel_log(&read("console-clean.log")), Tally::new());
}

#[test]
fn warn_on_and_lockdep_splats() {
    let t = tally_kernel_log(&read("console-splats.log"));
    assert_eq!(counts(&t), (0, 2, 0));
    assert_eq!(
        t.failures,
        strings(&[
            "kernel log: WARNING: CPU: 1 PID: 57 at drivers/cxl/core/region.c:1234 cxl_region_attach+0x2f1/0x4a0 [cxl_core]",
            "kernel log: WARNING: possible circular locking dependency detected",
        ])
    );
}

#[test]
fn cargo_test_output() {
    let t = tally_cargo_log(&read("cargo-test.log"));
    assert_eq!(counts(&t), (6, 1, 1));
    assert_eq!(
        t.failures,
        strings(&["FAIL cargo: region::tests::attach_order"])
    );
    // `cargo test --workspace --quiet --no-fail-fast`, as tools/vm/check.sh
    // runs it: the failure is named by `<name> --- FAILED` and the list.
    let t = tally_cargo_log(&read("cargo-quiet.log"));
    assert_eq!(counts(&t), (3, 1, 1));
    assert_eq!(t.failures, strings(&["FAIL cargo: tests::attach_order"]));
    let t = tally_cargo_log(&read("cargo-pass.log"));
    assert_eq!(counts(&t), (4, 0, 0));
    assert!(t.failures.is_empty());
}

const FAILING_RUN: &str = "\
FAIL smoke: smoke.bad
FAIL kunit: rust_doctest_kernel_alloc_kbox_rs_2
FAIL cargo: region::tests::attach_order
vm: 4 passed, 2 failed, 3 skipped
cargo: 6 passed, 1 failed, 1 skipped
10 passed, 3 failed, 4 skipped
";

#[test]
fn failing_run() {
    let summary = summarize(&Options {
        tests: Some(data("tests.log")),
        console: Some(data("console-clean.log")),
        cargo: Some(data("cargo-test.log")),
        cargo_rc: Some(101),
        vm_rc: Some(0),
    });
    assert_eq!(summary.render(), FAILING_RUN);
    assert_eq!(summary.exit_code(), 1);
}

const PASSING_RUN: &str = "\
vm: 3 passed, 0 failed, 1 skipped
cargo: 4 passed, 0 failed
7 passed, 0 failed, 1 skipped
";

#[test]
fn passing_run() {
    let summary = summarize(&Options {
        tests: Some(data("tests-pass.log")),
        console: Some(data("console-clean.log")),
        cargo: Some(data("cargo-pass.log")),
        cargo_rc: Some(0),
        vm_rc: Some(0),
    });
    assert_eq!(summary.render(), PASSING_RUN);
    assert_eq!(summary.exit_code(), 0);
}

#[test]
fn crashed_and_timed_out_vm() {
    let summary = summarize(&Options {
        tests: Some(data("tests-crash.log")),
        console: Some(data("console-splats.log")),
        vm_rc: Some(124),
        ..Options::default()
    });
    assert_eq!(
        summary.render(),
        "\
suite smoke did not finish
the VM run did not complete (no ##cxlstack done)
kernel log: WARNING: CPU: 1 PID: 57 at drivers/cxl/core/region.c:1234 cxl_region_attach+0x2f1/0x4a0 [cxl_core]
kernel log: WARNING: possible circular locking dependency detected
the VM timed out
vm: 1 passed, 5 failed
1 passed, 5 failed
"
    );
    assert_eq!(summary.exit_code(), 1);
}

#[test]
fn missing_files_are_failures() {
    let tests = data("no-such-tests.log");
    let cargo = data("no-such-cargo.log");
    let summary = summarize(&Options {
        tests: Some(tests.clone()),
        cargo: Some(cargo.clone()),
        cargo_rc: Some(101),
        ..Options::default()
    });
    assert_eq!(
        summary.render(),
        format!(
            "\
{}: cannot read: No such file or directory (os error 2)
{}: cannot read: No such file or directory (os error 2)
vm: 0 passed, 1 failed
cargo: 0 passed, 1 failed
0 passed, 2 failed
",
            tests.display(),
            cargo.display()
        )
    );
    assert_eq!(summary.exit_code(), 1);
}

#[test]
fn binary_failing_run() {
    let out = vmlog(&[
        "summarize",
        "--tests",
        &path_arg("tests.log"),
        "--console",
        &path_arg("console-clean.log"),
        &format!("--cargo={}", path_arg("cargo-test.log")),
        "--cargo-rc",
        "101",
        "--vm-rc",
        "0",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), FAILING_RUN);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn binary_passing_run() {
    let out = vmlog(&[
        "summarize",
        "--tests",
        &path_arg("tests-pass.log"),
        "--console",
        &path_arg("console-clean.log"),
        "--cargo",
        &path_arg("cargo-pass.log"),
        "--cargo-rc",
        "0",
        "--vm-rc",
        "0",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), PASSING_RUN);
    assert!(out.stderr.is_empty());
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn binary_nothing_passed() {
    let out = vmlog(&["summarize", "--vm-rc", "0"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "vm: 0 passed, 0 failed\n0 passed, 0 failed\n"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn binary_help_and_usage_errors() {
    let out = vmlog(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage: vmlog summarize "));

    for (args, message) in [
        (&[][..], "vmlog: missing command\n"),
        (
            &["summarize", "--vm-rc", "soon"][..],
            "vmlog: --vm-rc needs a number, not \"soon\"\n",
        ),
        (
            &["summarize", "--tests"][..],
            "vmlog: --tests needs a value\n",
        ),
        (&["sum"][..], "vmlog: unknown command \"sum\"\n"),
    ] {
        let out = vmlog(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(message), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: vmlog summarize"), "{args:?}");
    }
}
