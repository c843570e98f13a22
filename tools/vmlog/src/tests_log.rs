//! The tests log: `##cxlstack` markers around the TAP/KTAP output of each
//! suite (see the crate documentation for the protocol).

use crate::tally::Tally;
use crate::tap::{parse_bail_out, parse_plan, parse_result, tally_results, TapResult};

/// The marker that starts every protocol line.
pub const MARKER: &str = "##cxlstack";

/// Exit status of a kselftest that was skipped as a whole (`KSFT_SKIP`).
pub const KSFT_SKIP: i64 = 4;

/// A protocol line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Marker<'a> {
    Begin(&'a str),
    End(&'a str, i64),
    Done,
    /// A line that starts with the marker but does not follow the protocol.
    Invalid,
}

fn parse_marker(text: &str) -> Marker<'_> {
    let Some(rest) = text.strip_prefix(MARKER) else {
        return Marker::Invalid;
    };
    let mut words = rest.split_whitespace();
    match words.next() {
        Some("begin") => {
            let name = rest.trim_start().strip_prefix("begin").unwrap_or("").trim();
            if name.is_empty() {
                Marker::Invalid
            } else {
                Marker::Begin(name)
            }
        }
        Some("end") => {
            let body = rest.trim_start().strip_prefix("end").unwrap_or("").trim();
            let Some((name, rc)) = body.rsplit_once([' ', '\t']) else {
                return Marker::Invalid;
            };
            let name = name.trim();
            match rc.strip_prefix("rc=").and_then(|n| n.parse().ok()) {
                Some(rc) if !name.is_empty() => Marker::End(name, rc),
                _ => Marker::Invalid,
            }
        }
        Some("done") if words.next().is_none() => Marker::Done,
        _ => Marker::Invalid,
    }
}

/// Splits a line into the suite output before a marker and the marker line.
///
/// A marker is recognised anywhere in the line, so that output of a test
/// program that does not end in a newline cannot hide the marker after it.
fn split_marker(line: &str) -> (&str, Option<&str>) {
    let mut search = 0;
    while let Some(pos) = line[search..].find(MARKER) {
        let start = search + pos;
        let after = &line[start + MARKER.len()..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            return (&line[..start], Some(&line[start..]));
        }
        search = start + MARKER.len();
    }
    (line, None)
}

struct OpenSuite {
    name: String,
    results: Vec<TapResult>,
    /// The sum of the plans `1..N` at the start of a line.
    planned: u64,
    /// Whether the suite printed a plan at all.
    plan_seen: bool,
    /// The reason of the first `Bail out!` at the start of a line.
    bail_out: Option<String>,
}

impl OpenSuite {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            results: Vec::new(),
            planned: 0,
            plan_seen: false,
            bail_out: None,
        }
    }

    /// Takes in one line of the suite's output.
    fn read(&mut self, output: &str) {
        if let Some(result) = parse_result(output) {
            self.results.push(result);
        } else if let Some(n) = parse_plan(output) {
            self.planned = self.planned.saturating_add(n);
            self.plan_seen = true;
        } else if let Some(reason) = parse_bail_out(output) {
            self.bail_out.get_or_insert_with(|| reason.to_string());
        }
    }

    /// `(planned, reported)` if the suite is plain TAP, printed a plan and
    /// reported another number of results than its plans announced: fewer,
    /// and the missing tests did not run; more, and a check ran that its
    /// plan does not count (a loop that ran more often than the suite meant).
    ///
    /// Only plain TAP (no indented result) is checked. In KTAP a plan at the
    /// start of a line may announce the indented subtests (KUnit's debugfs
    /// results of older kernels) or the one suite line (newer ones), and a
    /// missing subtest already shows as the suite's `not ok`.
    fn plan_mismatch(&self) -> Option<(u64, u64)> {
        if !self.plan_seen || self.results.iter().any(|r| r.indent > 0) {
            return None;
        }
        let reported = self.results.len() as u64;
        (reported != self.planned).then_some((self.planned, reported))
    }
}

/// Counts the tests log `text`: every suite's results, plus the failures
/// for suites that failed without a failing test, ran no test or did not
/// finish, and for a run that did not reach `##cxlstack done`.
pub fn tally_tests_log(text: &str) -> Tally {
    let mut tally = Tally::new();
    let mut open: Option<OpenSuite> = None;
    let mut done = false;

    for raw in text.split('\n') {
        let line = raw.trim_end_matches('\r');
        let (output, marker) = split_marker(line);
        if let Some(suite) = open.as_mut() {
            suite.read(output);
        }
        let Some(marker_text) = marker else {
            continue;
        };
        match parse_marker(marker_text.trim_end()) {
            Marker::Begin(name) => {
                if let Some(suite) = open.take() {
                    tally.absorb(unfinished(suite));
                }
                open = Some(OpenSuite::new(name));
            }
            Marker::End(name, rc) => match open.take() {
                Some(suite) if suite.name == name => tally.absorb(finished(suite, rc)),
                other => {
                    open = other;
                    tally.fail(format!(
                        "tests log: {:?} without a matching begin",
                        marker_text.trim_end()
                    ));
                }
            },
            Marker::Done => {
                done = true;
                break;
            }
            Marker::Invalid => {
                tally.fail(format!(
                    "tests log: malformed marker line {:?}",
                    marker_text.trim_end()
                ));
            }
        }
    }
    if let Some(suite) = open.take() {
        tally.absorb(unfinished(suite));
    }
    if !done {
        tally.fail("the VM run did not complete (no ##cxlstack done)");
    }
    tally
}

/// Counts a suite that ended with exit status `rc`.
///
/// Besides its results the suite fails once for the first that applies: a
/// `Bail out!`; a non-zero `rc` (but KSFT_SKIP) without a failed test; `rc=0`
/// with no result; `rc=0`, no failure, and another number of results than
/// planned.
fn finished(suite: OpenSuite, rc: i64) -> Tally {
    let name = &suite.name;
    let mut tally = tally_results(name, &suite.results);
    if let Some(reason) = &suite.bail_out {
        tally.fail(format!("suite {name} bailed out: {reason}"));
    }
    if rc == 0 {
        if tally.total() == 0 {
            tally.fail(format!("suite {name} ran no test"));
        }
    } else if rc == KSFT_SKIP && tally.passed == 0 && tally.failed == 0 {
        // The whole suite was skipped: one skip unless it reported its skips.
        if tally.skipped == 0 {
            tally.skip();
        }
    } else if tally.failed == 0 {
        tally.fail(format!("suite {name} exited with rc={rc}"));
    }
    if rc == 0 && tally.failed == 0 {
        if let Some((planned, reported)) = suite.plan_mismatch() {
            tally.fail(format!(
                "suite {name} planned {planned} tests, reported {reported}"
            ));
        }
    }
    tally
}

/// Counts a suite whose end marker never came.
fn unfinished(suite: OpenSuite) -> Tally {
    let mut tally = tally_results(&suite.name, &suite.results);
    tally.fail(format!("suite {} did not finish", suite.name));
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(t: &Tally) -> (u64, u64, u64) {
        (t.passed, t.failed, t.skipped)
    }

    #[test]
    fn markers() {
        assert_eq!(
            parse_marker("##cxlstack begin smoke"),
            Marker::Begin("smoke")
        );
        assert_eq!(
            parse_marker("##cxlstack end smoke rc=0"),
            Marker::End("smoke", 0)
        );
        assert_eq!(
            parse_marker("##cxlstack end my suite rc=137"),
            Marker::End("my suite", 137)
        );
        assert_eq!(parse_marker("##cxlstack done"), Marker::Done);
        for bad in [
            "##cxlstack",
            "##cxlstack begin",
            "##cxlstack end smoke",
            "##cxlstack end rc=0",
            "##cxlstack end smoke rc=",
            "##cxlstack end smoke rc=x",
            "##cxlstack done now",
            "##cxlstack start smoke",
        ] {
            assert_eq!(parse_marker(bad), Marker::Invalid, "{bad:?}");
        }
    }

    #[test]
    fn marker_after_unterminated_output() {
        assert_eq!(
            split_marker("ok 1 x##cxlstack end s rc=0"),
            ("ok 1 x", Some("##cxlstack end s rc=0"))
        );
        assert_eq!(split_marker("##cxlstackish"), ("##cxlstackish", None));
        assert_eq!(split_marker("plain"), ("plain", None));
    }

    #[test]
    fn passing_run() {
        let log = "boot noise ok 1 ignored\r\n\
                   ##cxlstack begin a\r\n\
                   TAP version 13\r\n\
                   1..2\r\n\
                   ok 1 first\r\n\
                   ok 2 second # SKIP not here\r\n\
                   ##cxlstack end a rc=0\r\n\
                   ok 9 outside any suite\r\n\
                   ##cxlstack done\r\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 0, 1));
        assert!(t.failures.is_empty());
    }

    #[test]
    fn failed_test_is_named_and_rc_not_added() {
        let log =
            "##cxlstack begin a\nok 1 x\nnot ok 2 y\n##cxlstack end a rc=1\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 1, 0));
        assert_eq!(t.failures, vec!["FAIL a: y".to_string()]);
    }

    #[test]
    fn nonzero_rc_without_failed_test() {
        let log = "##cxlstack begin a\nok 1 x\n##cxlstack end a rc=139\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 1, 0));
        assert_eq!(t.failures, vec!["suite a exited with rc=139".to_string()]);
    }

    #[test]
    fn ksft_skip() {
        let log =
            "##cxlstack begin a\n1..0 # SKIP no device\n##cxlstack end a rc=4\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (0, 0, 1));
        assert!(t.failures.is_empty());
        // Skips already reported: not counted twice.
        let log = "##cxlstack begin a\nok 1 x # SKIP\nok 2 y # SKIP\n##cxlstack end a rc=4\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (0, 0, 2));
        // rc=4 after passing tests is not a skip.
        let log = "##cxlstack begin a\nok 1 x\n##cxlstack end a rc=4\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 1, 0));
        assert_eq!(t.failures, vec!["suite a exited with rc=4".to_string()]);
    }

    #[test]
    fn suite_without_results() {
        let log = "##cxlstack begin a\nhello\n##cxlstack end a rc=0\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (0, 1, 0));
        assert_eq!(t.failures, vec!["suite a ran no test".to_string()]);
        let log = "##cxlstack begin a\n##cxlstack end a rc=2\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(t.failures, vec!["suite a exited with rc=2".to_string()]);
    }

    #[test]
    fn unfinished_suites() {
        let log = "##cxlstack begin a\nok 1 x\n##cxlstack begin b\nok 1 y\n##cxlstack end b rc=0\n##cxlstack begin c\nnot ok 1 z\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (2, 4, 0));
        assert_eq!(
            t.failures,
            vec![
                "suite a did not finish".to_string(),
                "FAIL c: z".to_string(),
                "suite c did not finish".to_string(),
                "the VM run did not complete (no ##cxlstack done)".to_string(),
            ]
        );
    }

    #[test]
    fn done_inside_a_suite() {
        let log = "##cxlstack begin a\nok 1 x\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 1, 0));
        assert_eq!(t.failures, vec!["suite a did not finish".to_string()]);
    }

    #[test]
    fn lines_after_done_are_ignored() {
        let log = "##cxlstack begin a\nok 1 x\n##cxlstack end a rc=0\n##cxlstack done\n##cxlstack begin b\nnot ok 1 y\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 0, 0));
    }

    #[test]
    fn empty_log() {
        let t = tally_tests_log("");
        assert_eq!(counts(&t), (0, 1, 0));
        assert_eq!(
            t.failures,
            vec!["the VM run did not complete (no ##cxlstack done)".to_string()]
        );
    }

    #[test]
    fn protocol_errors() {
        let log = "##cxlstack end a rc=0\n##cxlstack begin b\nok 1 x\n##cxlstack end c rc=0\n##cxlstack end b rc=0\n##cxlstack bogus\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 3, 0));
        assert_eq!(
            t.failures,
            vec![
                "tests log: \"##cxlstack end a rc=0\" without a matching begin".to_string(),
                "tests log: \"##cxlstack end c rc=0\" without a matching begin".to_string(),
                "tests log: malformed marker line \"##cxlstack bogus\"".to_string(),
            ]
        );
    }

    #[test]
    fn results_must_match_the_plan() {
        let log = "##cxlstack begin a\nTAP version 13\n1..3\nok 1 x\nok 2 y\n##cxlstack end a rc=0\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (2, 1, 0));
        assert_eq!(
            t.failures,
            vec!["suite a planned 3 tests, reported 2".to_string()]
        );
        // More results than planned: a check the plan does not count.
        let log =
            "##cxlstack begin a\n1..1\nok 1 x\nok 2 y\n##cxlstack end a rc=0\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (2, 1, 0));
        assert_eq!(
            t.failures,
            vec!["suite a planned 1 tests, reported 2".to_string()]
        );
        // No plan at all: nothing to compare with.
        let log = "##cxlstack begin a\nok 1 x\nok 2 y\n##cxlstack end a rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (2, 0, 0));
        // Exactly the plan.
        let log =
            "##cxlstack begin a\n1..2\nok 1 x\nok 2 y\n##cxlstack end a rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (2, 0, 0));
    }

    #[test]
    fn only_top_level_plans_of_plain_tap_count() {
        // The `# `-prefixed output of a program a suite ran (tap_show).
        let log = "##cxlstack begin a\n# 1..9\n# ok 1 inner\nok 1 outer\n##cxlstack end a rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (1, 0, 0));
        // KUnit's debugfs results: the plan announces the indented subtests
        // (older kernels) or the one suite line (newer ones).
        let log = "##cxlstack begin k\nKTAP version 1\n# Subtest: s\n1..2\n    ok 1 a\n    ok 2 b\nok 1 s\n##cxlstack end k rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (2, 0, 0));
        let log = "##cxlstack begin k\nKTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: s\n    1..3\n    ok 1 a\n    ok 2 b\n    ok 3 c\nok 1 s\n##cxlstack end k rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (3, 0, 0));
    }

    #[test]
    fn plan_shortfall_after_a_failure_is_not_counted_again() {
        // A crash: the rc says it.
        let log = "##cxlstack begin a\n1..3\nok 1 x\n##cxlstack end a rc=139\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(t.failures, vec!["suite a exited with rc=139".to_string()]);
        // ksft_exit_skip after the plan: the suite is skipped as a whole.
        let log = "##cxlstack begin a\n1..3\nok 1 # SKIP no device\n##cxlstack end a rc=4\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (0, 0, 1));
    }

    #[test]
    fn bail_out_fails_the_suite() {
        let log = "##cxlstack begin a\n1..3\nok 1 x\nBail out! no device\n##cxlstack end a rc=0\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 1, 0));
        assert_eq!(
            t.failures,
            vec!["suite a bailed out: no device".to_string()]
        );
        // ksft_exit_fail_msg: the reason, not the rc.
        let log =
            "##cxlstack begin a\nBail out! open: ENOENT\n##cxlstack end a rc=1\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(
            t.failures,
            vec!["suite a bailed out: open: ENOENT".to_string()]
        );
        // Nested in a program's output, or outside a suite: not this suite's.
        let log = "Bail out! early\n##cxlstack begin a\n# Bail out! inner\nok 1 x\n##cxlstack end a rc=0\n##cxlstack done\n";
        assert_eq!(counts(&tally_tests_log(log)), (1, 0, 0));
    }

    #[test]
    fn result_before_end_marker_on_the_same_line() {
        let log = "##cxlstack begin a\nok 1 x##cxlstack end a rc=0\n##cxlstack done\n";
        let t = tally_tests_log(log);
        assert_eq!(counts(&t), (1, 0, 0));
    }
}
