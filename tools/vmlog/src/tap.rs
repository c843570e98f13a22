//! TAP / KTAP result lines and how the results of one suite are counted.
//!
//! Result lines are `ok <N> [- ]<description> [# directive]` and
//! `not ok ...`, possibly indented. Comments (`# ...`), version lines and
//! plans (`1..N`) are not results. Two more lines are read, only at the start
//! of a line (the suite's own top level, not the `# `-prefixed output of a
//! program a suite runs): a plan (`1..N`), and `Bail out!`.

use crate::tally::Tally;

/// What a result line says about its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `ok` without a SKIP or TODO directive (also `ok ... # TODO`).
    Passed,
    /// `not ok` without a SKIP or TODO directive.
    Failed,
    /// A `# SKIP` directive, or `not ok ... # TODO` (an expected failure).
    Skipped,
}

/// One parsed `ok` / `not ok` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapResult {
    /// Width of the leading whitespace (a tab counts as one column).
    pub indent: usize,
    /// The test number.
    pub number: u64,
    /// The description without a leading `- ` and without a directive.
    pub description: String,
    /// The outcome after applying the directive.
    pub outcome: Outcome,
}

impl TapResult {
    /// The name to report the test by: its description, or `#N` if empty.
    pub fn name(&self) -> String {
        if self.description.is_empty() {
            format!("#{}", self.number)
        } else {
            self.description.clone()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    Skip,
    Todo,
}

/// Parses `line` as a TAP/KTAP result line; `None` if it is anything else.
pub fn parse_result(line: &str) -> Option<TapResult> {
    let body = line.trim_start_matches([' ', '\t']);
    let indent = line.len() - body.len();
    let (ok, rest) = if let Some(rest) = body.strip_prefix("not ok") {
        (false, rest)
    } else if let Some(rest) = body.strip_prefix("ok") {
        (true, rest)
    } else {
        return None;
    };
    // `ok` must be followed by whitespace and a test number.
    let rest = rest.strip_prefix([' ', '\t'])?.trim_start();
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 {
        return None;
    }
    let number = rest[..digits_end].parse().ok()?;
    let rest = &rest[digits_end..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        // e.g. `ok 12abc`: not a result line.
        return None;
    }
    let (description, directive) = split_directive(rest.trim());
    let description = description
        .strip_prefix("- ")
        .unwrap_or(description)
        .trim()
        .to_string();
    let outcome = match (ok, directive) {
        (_, Some(Directive::Skip)) => Outcome::Skipped,
        (false, Some(Directive::Todo)) => Outcome::Skipped,
        (true, _) => Outcome::Passed,
        (false, None) => Outcome::Failed,
    };
    Some(TapResult {
        indent,
        number,
        description,
        outcome,
    })
}

/// Splits `text` at its first unescaped `#` if what follows is a SKIP or
/// TODO directive (case-insensitive, e.g. `# SKIP`, `# skipped: reason`).
/// Any other `#` is part of the description.
fn split_directive(text: &str) -> (&str, Option<Directive>) {
    let mut prev = None;
    for (i, c) in text.char_indices() {
        if c == '#' && prev != Some('\\') {
            let after = text[i + 1..].trim_start();
            let directive = if starts_with_ignore_case(after, "skip") {
                Some(Directive::Skip)
            } else if starts_with_ignore_case(after, "todo") {
                Some(Directive::Todo)
            } else {
                None
            };
            return match directive {
                Some(d) => (text[..i].trim_end(), Some(d)),
                None => (text, None),
            };
        }
        prev = Some(c);
    }
    (text, None)
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Parses `line` as a plan `1..N` at the start of the line (a directive such
/// as `# SKIP` may follow); `None` for anything else, an indented plan too:
/// that one belongs to nested KTAP subtests.
pub fn parse_plan(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("1..")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    if end == 0 || !(rest[end..].is_empty() || rest[end..].starts_with([' ', '\t'])) {
        return None;
    }
    rest[..end].parse().ok()
}

/// The reason of a `Bail out!` line (TAP's abort of the run) at the start of
/// the line; `None` for any other line.
pub fn parse_bail_out(line: &str) -> Option<&str> {
    line.strip_prefix("Bail out!").map(str::trim)
}

/// Counts the results of one suite.
///
/// If any result is indented (KTAP subtests), only the results at the
/// deepest indentation present are counted, so that KUnit's per-suite
/// summary lines are not counted a second time. Each failed test is
/// reported as `FAIL <suite>: <description>`.
pub fn tally_results(suite: &str, results: &[TapResult]) -> Tally {
    let mut tally = Tally::new();
    let deepest = results.iter().map(|r| r.indent).max().unwrap_or(0);
    for result in results.iter().filter(|r| r.indent == deepest) {
        match result.outcome {
            Outcome::Passed => tally.pass(),
            Outcome::Skipped => tally.skip(),
            Outcome::Failed => tally.fail(format!("FAIL {suite}: {}", result.name())),
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(line: &str) -> Option<Outcome> {
        parse_result(line).map(|r| r.outcome)
    }

    #[test]
    fn plain_results() {
        let r = parse_result("ok 1 smoke.fill").expect("result");
        assert_eq!(r.indent, 0);
        assert_eq!(r.number, 1);
        assert_eq!(r.description, "smoke.fill");
        assert_eq!(r.outcome, Outcome::Passed);
        let r = parse_result("not ok 2 smoke.bad").expect("result");
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.description, "smoke.bad");
    }

    #[test]
    fn directives() {
        assert_eq!(
            outcome("ok 3 smoke.wc # SKIP no PAT"),
            Some(Outcome::Skipped)
        );
        assert_eq!(outcome("ok 3 smoke.wc # skip"), Some(Outcome::Skipped));
        assert_eq!(
            outcome("ok 3 smoke.wc # Skipped: no PAT"),
            Some(Outcome::Skipped)
        );
        assert_eq!(outcome("ok 3 smoke.wc #SKIP"), Some(Outcome::Skipped));
        assert_eq!(outcome("not ok 4 x # SKIP why"), Some(Outcome::Skipped));
        assert_eq!(outcome("not ok 4 x # TODO later"), Some(Outcome::Skipped));
        assert_eq!(outcome("not ok 4 x # todo"), Some(Outcome::Skipped));
        assert_eq!(outcome("ok 4 x # TODO later"), Some(Outcome::Passed));
        // kselftest's XFAIL / XPASS are plain ok / not ok.
        assert_eq!(outcome("ok 5 x # XFAIL known"), Some(Outcome::Passed));
        assert_eq!(outcome("not ok 5 x # XPASS"), Some(Outcome::Failed));
        let r = parse_result("ok 3 smoke.wc # SKIP no PAT").expect("result");
        assert_eq!(r.description, "smoke.wc");
    }

    #[test]
    fn hash_that_is_not_a_directive_stays_in_the_description() {
        let r = parse_result("not ok 7 region #2 commit").expect("result");
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.description, "region #2 commit");
        let r = parse_result(r"ok 8 escaped \# SKIP is not a directive").expect("result");
        assert_eq!(r.outcome, Outcome::Passed);
    }

    #[test]
    fn dash_and_missing_description() {
        let r = parse_result("ok 9 - with dash").expect("result");
        assert_eq!(r.description, "with dash");
        let r = parse_result("not ok 10").expect("result");
        assert_eq!(r.description, "");
        assert_eq!(r.name(), "#10");
    }

    #[test]
    fn indentation() {
        let r = parse_result("    not ok 3 rust_doctest_kernel_alloc_kbox_rs_2").expect("result");
        assert_eq!(r.indent, 4);
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(parse_result("\tok 1 t").expect("result").indent, 1);
    }

    #[test]
    fn non_results() {
        for line in [
            "",
            "TAP version 13",
            "KTAP version 1",
            "1..3",
            "1..0 # SKIP no device",
            "# Subtest: rust_doctests_kernel",
            "#            OK  smoke.fill",
            "#  RUN           smoke.fill ...",
            "# ok 1 nested under a runner comment",
            "    # rust_doctest_kernel_alloc_kbox_rs_0.location: rust/kernel/alloc/kbox.rs:194",
            "ok",
            "ok then",
            "okay 1 x",
            "not ok",
            "not okay 1 x",
            "ok 12abc",
            "token ok 1 x",
        ] {
            assert_eq!(parse_result(line), None, "{line:?}");
        }
    }

    #[test]
    fn plans() {
        assert_eq!(parse_plan("1..3"), Some(3));
        assert_eq!(parse_plan("1..0 # SKIP no device"), Some(0));
        assert_eq!(parse_plan("1..12\t"), Some(12));
        for line in [
            "    1..2",
            "# 1..9",
            "1..",
            "1..x",
            "1..3x",
            "2..3",
            "ok 1 x",
            "1..99999999999999999999",
        ] {
            assert_eq!(parse_plan(line), None, "{line:?}");
        }
    }

    #[test]
    fn bail_out() {
        assert_eq!(parse_bail_out("Bail out! no device"), Some("no device"));
        assert_eq!(parse_bail_out("Bail out!"), Some(""));
        assert_eq!(parse_bail_out("# Bail out! nested"), None);
        assert_eq!(parse_bail_out("    Bail out! subtest"), None);
        assert_eq!(parse_bail_out("bail out! x"), None);
    }

    #[test]
    fn deepest_level_only() {
        let lines = [
            "    ok 1 rust_doctest_kernel_alloc_kbox_rs_0",
            "    ok 2 rust_doctest_kernel_alloc_kbox_rs_1",
            "    not ok 3 rust_doctest_kernel_alloc_kbox_rs_2",
            "ok 1 rust_doctests_kernel",
        ];
        let results: Vec<_> = lines.iter().filter_map(|l| parse_result(l)).collect();
        let t = tally_results("kunit", &results);
        assert_eq!((t.passed, t.failed, t.skipped), (2, 1, 0));
        assert_eq!(
            t.failures,
            vec!["FAIL kunit: rust_doctest_kernel_alloc_kbox_rs_2".to_string()]
        );
    }

    #[test]
    fn top_level_when_nothing_is_indented() {
        let lines = ["ok 1 a", "not ok 2 b", "ok 3 c # SKIP"];
        let results: Vec<_> = lines.iter().filter_map(|l| parse_result(l)).collect();
        let t = tally_results("s", &results);
        assert_eq!((t.passed, t.failed, t.skipped), (1, 1, 1));
        assert_eq!(t.failures, vec!["FAIL s: b".to_string()]);
    }

    #[test]
    fn no_results() {
        assert_eq!(tally_results("s", &[]), Tally::new());
    }
}
