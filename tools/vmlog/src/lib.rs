//! `vmlog` judges one test run of a QEMU VM from its logs and prints a
//! summary. This documentation is the contract with `tools/vm/init`, the
//! program that runs the tests inside the VM.
//!
//! # The tests log
//!
//! The tests write their own output to a second serial port, captured as
//! the *tests log*. It is read line by line; a trailing `\r` is dropped.
//! Protocol lines start with the marker `##cxlstack`:
//!
//! - `##cxlstack begin <suite>` starts a suite.
//! - `##cxlstack end <suite> rc=<n>` ends it; `n` is the exit status of the
//!   suite's program.
//! - `##cxlstack done` ends the whole run; anything after it is ignored.
//!
//! A marker is recognised even after other text on the same line (output
//! that did not end in a newline); that text still belongs to the suite.
//! Any other line starting with the marker is a failure, as is an `end`
//! whose suite is not the one running. Text outside suites is ignored.
//!
//! Between `begin` and `end` the suite prints TAP or KTAP. A result line is,
//! after optional leading whitespace, `ok <N> <description>` or
//! `not ok <N> <description>`, optionally followed by a directive:
//!
//! | line                         | counts as |
//! |------------------------------|-----------|
//! | `ok N name`                  | passed    |
//! | `not ok N name`              | failed, reported as `FAIL <suite>: name` |
//! | `ok N name # SKIP reason`    | skipped (`SKIP` in any case)   |
//! | `not ok N name # SKIP reason`| skipped   |
//! | `not ok N name # TODO reason`| skipped (an expected failure)  |
//!
//! Lines starting with `#` are comments (kselftest harness `#  RUN` /
//! `#  OK` lines, KTAP `# Subtest:`) and never count, nor do `TAP version`,
//! `KTAP version` and `1..N` plan lines.
//!
//! KTAP (KUnit) nests subtests indented by 4 spaces below a top-level line
//! for the whole KUnit suite. Within one `##cxlstack` suite, if any result
//! line is indented, only the results at the deepest indentation present
//! are counted; otherwise the top-level ones are.
//!
//! Two lines of TAP are read only at the very start of a line, that is at
//! the suite's own top level (not in `# `-prefixed output of a program the
//! suite ran, nor in indented KTAP subtests): `Bail out! <reason>` and the
//! plan `1..N` (the sum, if there are several).
//!
//! Per suite, once it has ended:
//!
//! - a `Bail out!`: failure `suite <name> bailed out: <reason>`;
//! - `rc=0` with no result at all: failure `suite <name> ran no test`;
//! - `rc=4` (kselftest `KSFT_SKIP`) with no passed or failed test: the
//!   suite is skipped (one skip, unless it already reported its skips);
//! - any other non-zero `rc` without a failed test: failure
//!   `suite <name> exited with rc=<n>`;
//! - `rc=0`, no failure so far, no indented result (plain TAP, not KTAP),
//!   a plan printed and another number of results than planned: failure
//!   `suite <name> planned <N> tests, reported <M>` (fewer: the missing
//!   tests did not run; more: a check ran that the plan does not count).
//!
//! A suite that is still running at the next `begin`, at `done` or at the
//! end of the log is a failure `suite <name> did not finish` (its results
//! still count). A log without `##cxlstack done` is one failure
//! `the VM run did not complete (no ##cxlstack done)`.
//!
//! # The console log
//!
//! The kernel console is scanned for kernel problem reports (oops, `BUG:`,
//! `WARNING:`, lockdep, KASAN/KFENCE/UBSAN, hung tasks, RCU stalls,
//! kmemleak, Rust panics, list corruption, debugobjects); see
//! [`kernel_log`]. Each distinct report line is one failure
//! `kernel log: <line without timestamp>`; at most
//! [`kernel_log::MAX_REPORTS`] are listed. The `Kernel command line:` line
//! is ignored, so test parameters on it cannot trigger a report.
//!
//! # The cargo test output
//!
//! Every `test result:` line is summed (`ignored` counts as skipped) and
//! each failed test is reported as `FAIL cargo: <name>`, named by a
//! `test <name> ... FAILED` line, by `<name> --- FAILED` (`--quiet`) or by
//! libtest's closing `failures:` list. A log without any `test result:`
//! line is a failure.
//!
//! # The verdict
//!
//! [`summary::summarize`] adds the exit statuses of the VM runner (124
//! means it timed out) and of `cargo test`, and renders the failure lines,
//! the counts per source and, last, `N passed, M failed` (with
//! `, K skipped` when K > 0). The run passed iff M is 0 and N is not.

pub mod cargo;
pub mod cli;
pub mod kernel_log;
pub mod summary;
pub mod tally;
pub mod tap;
pub mod tests_log;

pub use summary::{summarize, Options, Summary};
pub use tally::Tally;
