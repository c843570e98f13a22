//! The output of `cargo test`: `test result:` summary lines and the names of
//! failed tests.

use crate::tally::Tally;

/// Counts from one `test result:` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TestResult {
    /// `X passed`.
    pub passed: u64,
    /// `Y failed`.
    pub failed: u64,
    /// `Z ignored`.
    pub ignored: u64,
}

/// Parses `test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; ...`
/// (or `test result: FAILED. ...`); `None` for any other line.
pub fn parse_test_result(line: &str) -> Option<TestResult> {
    let rest = line.trim().strip_prefix("test result:")?;
    let (_status, counts) = rest.split_once('.')?;
    let mut result = TestResult::default();
    for field in counts.split(';') {
        let mut words = field.split_whitespace();
        let (Some(number), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        match what {
            "passed" => result.passed = result.passed.saturating_add(number),
            "failed" => result.failed = result.failed.saturating_add(number),
            "ignored" => result.ignored = result.ignored.saturating_add(number),
            _ => {}
        }
    }
    Some(result)
}

/// The test name from `test <name> ... FAILED`, or from `<name> --- FAILED`
/// (what `cargo test --quiet` prints); `None` for any other line.
pub fn parse_failed_test(line: &str) -> Option<&str> {
    let line = line.trim();
    let name = match line.strip_prefix("test ") {
        Some(rest) if rest.ends_with(" ... FAILED") => rest.strip_suffix(" ... FAILED"),
        _ => line.strip_suffix(" --- FAILED"),
    }?
    .trim();
    (!name.is_empty()).then_some(name)
}

/// Where we are in libtest's closing list of failed tests:
///
/// ```text
/// failures:
///     region::tests::attach_order
///
/// test result: FAILED. 3 passed; 1 failed; ...
/// ```
///
/// The list is the only place that names failed tests under
/// `cargo test --quiet`; it is trusted only if a `test result:` line follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureList {
    Outside,
    Names,
    BlankAfterNames,
}

/// Reports the collected failed test names and forgets them.
fn flush(names: &mut Vec<&str>, tally: &mut Tally) {
    for name in names.drain(..) {
        tally.fail(format!("FAIL cargo: {name}"));
    }
}

/// Counts a `cargo test` log: the sum of all `test result:` lines, with
/// each failed test reported as `FAIL cargo: <name>` (named by a
/// `test <name> ... FAILED` line or by the closing `failures:` list). A log
/// without any `test result:` line is one failure, `cargo test ran no test`.
pub fn tally_cargo_log(text: &str) -> Tally {
    let mut tally = Tally::new();
    let mut results = 0usize;
    let mut failed = 0u64;
    // Names of the failed tests of the current test binary, and candidates
    // from a `failures:` list not yet confirmed by a `test result:` line.
    let mut names: Vec<&str> = Vec::new();
    let mut listed: Vec<&str> = Vec::new();
    let mut list = FailureList::Outside;
    for line in text.lines() {
        let blank = line.trim().is_empty();
        match list {
            FailureList::Names if blank => list = FailureList::BlankAfterNames,
            FailureList::Names => match line.strip_prefix("    ").map(str::trim) {
                Some(name) if !name.is_empty() => listed.push(name),
                _ => list = FailureList::Outside,
            },
            FailureList::BlankAfterNames if blank => {}
            FailureList::BlankAfterNames => list = FailureList::Outside,
            FailureList::Outside => {}
        }
        if list != FailureList::Outside {
            continue;
        }
        if let Some(result) = parse_test_result(line) {
            for name in listed.drain(..) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            flush(&mut names, &mut tally);
            results += 1;
            tally.passed = tally.passed.saturating_add(result.passed);
            tally.skipped = tally.skipped.saturating_add(result.ignored);
            failed = failed.saturating_add(result.failed);
            continue;
        }
        listed.clear();
        if line.trim_end() == "failures:" {
            list = FailureList::Names;
        } else if let Some(name) = parse_failed_test(line) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    flush(&mut names, &mut tally);
    // Trust whichever is larger: the summed counts or the named failures.
    let named = tally.failed;
    if failed > named {
        tally.failed = failed;
        tally.failures.push(format!(
            "cargo test: {} failed tests not named in the log",
            failed - named
        ));
    }
    if results == 0 {
        tally.fail("cargo test ran no test");
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines() {
        assert_eq!(
            parse_test_result(
                "test result: ok. 12 passed; 0 failed; 2 ignored; 0 measured; 3 filtered out; finished in 0.01s"
            ),
            Some(TestResult {
                passed: 12,
                failed: 0,
                ignored: 2
            })
        );
        assert_eq!(
            parse_test_result(
                "test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
            ),
            Some(TestResult {
                passed: 4,
                failed: 1,
                ignored: 0
            })
        );
        assert_eq!(parse_test_result("test foo ... ok"), None);
        assert_eq!(parse_test_result("running 3 tests"), None);
    }

    #[test]
    fn failed_names() {
        assert_eq!(
            parse_failed_test("test region::tests::attach ... FAILED"),
            Some("region::tests::attach")
        );
        assert_eq!(
            parse_failed_test("test src/lib.rs - parse (line 12) ... FAILED"),
            Some("src/lib.rs - parse (line 12)")
        );
        assert_eq!(
            parse_failed_test("tests::attach_order --- FAILED"),
            Some("tests::attach_order")
        );
        assert_eq!(parse_failed_test("test with --- FAILED"), Some("test with"));
        assert_eq!(parse_failed_test(" --- FAILED"), None);
        assert_eq!(parse_failed_test("test region::tests::attach ... ok"), None);
        assert_eq!(
            parse_failed_test("test result: FAILED. 0 passed; 1 failed;"),
            None
        );
        assert_eq!(parse_failed_test("    region::tests::attach"), None);
    }

    #[test]
    fn sums_all_result_lines() {
        let log = "running 2 tests\n\
                   test a ... ok\n\
                   test b ... FAILED\n\
                   test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
                   running 3 tests\n\
                   test c ... ok\n\
                   test d ... ignored\n\
                   test e ... ok\n\
                   test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let t = tally_cargo_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (3, 1, 1));
        assert_eq!(t.failures, vec!["FAIL cargo: b".to_string()]);
    }

    #[test]
    fn quiet_output_names_failures_from_the_list() {
        let log = "running 3 tests\n\
                   .F.\n\
                   failures:\n\
                   \n\
                   ---- b stdout ----\n\
                   \n\
                   thread 'b' panicked at src/lib.rs:9:5:\n\
                   failures:\n\
                   \x20   not a test, the output of b\n\
                   done\n\
                   \n\
                   failures:\n\
                   \x20   b\n\
                   \n\
                   test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
                   \n\
                   running 2 tests\n\
                   FF\n\
                   failures:\n\
                   \x20   b\n\
                   \x20   c\n\
                   \n\
                   test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let t = tally_cargo_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (2, 3, 0));
        assert_eq!(
            t.failures,
            vec![
                "FAIL cargo: b".to_string(),
                "FAIL cargo: b".to_string(),
                "FAIL cargo: c".to_string(),
            ]
        );
    }

    #[test]
    fn failure_named_twice_is_reported_once() {
        let log = "test b ... FAILED\n\
                   \n\
                   failures:\n\
                   \x20   b\n\
                   \n\
                   test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let t = tally_cargo_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (0, 1, 0));
        assert_eq!(t.failures, vec!["FAIL cargo: b".to_string()]);
    }

    #[test]
    fn failure_count_without_name() {
        let log = "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        let t = tally_cargo_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (1, 2, 0));
        assert_eq!(
            t.failures,
            vec!["cargo test: 2 failed tests not named in the log".to_string()]
        );
    }

    #[test]
    fn huge_counts_saturate() {
        let line = "test result: ok. 18446744073709551615 passed; 0 failed; 0 ignored;\n";
        let t = tally_cargo_log(&line.repeat(2));
        assert_eq!(t.passed, u64::MAX);
    }

    #[test]
    fn no_result_line() {
        let log =
            "error[E0425]: cannot find value `x` in this scope\nerror: could not compile `foo`\n";
        let t = tally_cargo_log(log);
        assert_eq!((t.passed, t.failed, t.skipped), (0, 1, 0));
        assert_eq!(t.failures, vec!["cargo test ran no test".to_string()]);
    }
}
