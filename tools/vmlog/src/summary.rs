//! The verdict over all sources: which files to read, the per-source
//! tallies, the printed summary and the exit status.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::cargo::tally_cargo_log;
use crate::kernel_log::tally_kernel_log;
use crate::tally::Tally;
use crate::tests_log::tally_tests_log;

/// Exit status of the VM runner when the VM hit its timeout (`timeout(1)`).
pub const VM_TIMEOUT_RC: i32 = 124;

/// What to summarize; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The tests log (second serial port).
    pub tests: Option<PathBuf>,
    /// The console log (kernel console).
    pub console: Option<PathBuf>,
    /// The output of `cargo test`.
    pub cargo: Option<PathBuf>,
    /// Exit status of `cargo test`.
    pub cargo_rc: Option<i32>,
    /// Exit status of the VM runner.
    pub vm_rc: Option<i32>,
}

/// The tally of one source (`vm` or `cargo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// `vm` or `cargo`.
    pub name: &'static str,
    /// Its counts and failure lines.
    pub tally: Tally,
}

/// The result of judging one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The sources that were given, in output order.
    pub sources: Vec<Source>,
}

/// Reads a log, replacing invalid UTF-8 (serial lines can carry garbage).
fn read_log(path: &Path) -> Result<String, String> {
    fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// Reads `path` and counts it with `count`; an unreadable file is a failure.
fn tally_file(path: &Path, count: fn(&str) -> Tally) -> Tally {
    match read_log(path) {
        Ok(text) => count(&text),
        Err(message) => {
            let mut tally = Tally::new();
            tally.fail(message);
            tally
        }
    }
}

/// The `vm` tally: tests log, console log and the VM runner's exit status.
pub fn vm_tally(tests: Option<&Path>, console: Option<&Path>, vm_rc: Option<i32>) -> Tally {
    let mut tally = Tally::new();
    if let Some(path) = tests {
        tally.absorb(tally_file(path, tally_tests_log));
    }
    if let Some(path) = console {
        tally.absorb(tally_file(path, tally_kernel_log));
    }
    match vm_rc {
        None | Some(0) => {}
        Some(VM_TIMEOUT_RC) => tally.fail("the VM timed out"),
        Some(rc) => tally.fail(format!("the VM runner exited with status {rc}")),
    }
    tally
}

/// The `cargo` tally: the cargo test log and cargo's exit status.
pub fn cargo_tally(log: Option<&Path>, cargo_rc: Option<i32>) -> Tally {
    let mut tally = Tally::new();
    if let Some(path) = log {
        tally.absorb(tally_file(path, tally_cargo_log));
    }
    if let Some(rc) = cargo_rc {
        if rc != 0 && tally.failed == 0 {
            tally.fail(format!("cargo test exited with status {rc}"));
        }
    }
    tally
}

/// Judges the run described by `options`.
pub fn summarize(options: &Options) -> Summary {
    let mut sources = Vec::new();
    if options.tests.is_some() || options.console.is_some() || options.vm_rc.is_some() {
        sources.push(Source {
            name: "vm",
            tally: vm_tally(
                options.tests.as_deref(),
                options.console.as_deref(),
                options.vm_rc,
            ),
        });
    }
    if options.cargo.is_some() || options.cargo_rc.is_some() {
        sources.push(Source {
            name: "cargo",
            tally: cargo_tally(options.cargo.as_deref(), options.cargo_rc),
        });
    }
    Summary { sources }
}

impl Summary {
    /// The counts over all sources.
    pub fn total(&self) -> Tally {
        let mut total = Tally::new();
        for source in &self.sources {
            total.absorb(source.tally.clone());
        }
        total
    }

    /// Whether the run passed: nothing failed and something passed.
    pub fn success(&self) -> bool {
        let total = self.total();
        total.failed == 0 && total.passed > 0
    }

    /// The process exit status: 0 on success, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.success() {
            0
        } else {
            1
        }
    }

    /// The failure lines, one line per source with its counts, and the
    /// totals as the very last line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for source in &self.sources {
            for failure in &source.tally.failures {
                let _ = writeln!(out, "{failure}");
            }
        }
        for source in &self.sources {
            let _ = writeln!(out, "{}: {}", source.name, source.tally.counts_line());
        }
        let _ = writeln!(out, "{}", self.total().counts_line());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(passed: u64, failures: &[&str], skipped: u64) -> Tally {
        let mut t = Tally::new();
        t.passed = passed;
        t.skipped = skipped;
        for f in failures {
            t.fail(*f);
        }
        t
    }

    #[test]
    fn vm_rc() {
        assert_eq!(vm_tally(None, None, Some(0)), Tally::new());
        assert_eq!(
            vm_tally(None, None, Some(124)).failures,
            vec!["the VM timed out".to_string()]
        );
        assert_eq!(
            vm_tally(None, None, Some(1)).failures,
            vec!["the VM runner exited with status 1".to_string()]
        );
    }

    #[test]
    fn cargo_rc_only_when_no_failure_was_counted() {
        assert_eq!(
            cargo_tally(None, Some(101)).failures,
            vec!["cargo test exited with status 101".to_string()]
        );
        assert_eq!(cargo_tally(None, Some(0)), Tally::new());
    }

    #[test]
    fn missing_file_is_a_failure() {
        let t = vm_tally(Some(Path::new("/nonexistent/vmlog/tests.log")), None, None);
        assert_eq!(t.failed, 1);
        assert!(
            t.failures[0].starts_with("/nonexistent/vmlog/tests.log: cannot read: "),
            "{:?}",
            t.failures
        );
    }

    #[test]
    fn render_and_exit_code() {
        let summary = Summary {
            sources: vec![
                Source {
                    name: "vm",
                    tally: tally(40, &[], 1),
                },
                Source {
                    name: "cargo",
                    tally: tally(12, &[], 0),
                },
            ],
        };
        assert_eq!(
            summary.render(),
            "vm: 40 passed, 0 failed, 1 skipped\ncargo: 12 passed, 0 failed\n52 passed, 0 failed, 1 skipped\n"
        );
        assert!(summary.success());
        assert_eq!(summary.exit_code(), 0);

        let summary = Summary {
            sources: vec![
                Source {
                    name: "vm",
                    tally: tally(3, &["FAIL a: b"], 0),
                },
                Source {
                    name: "cargo",
                    tally: tally(1, &["FAIL cargo: c"], 0),
                },
            ],
        };
        assert_eq!(
            summary.render(),
            "FAIL a: b\nFAIL cargo: c\nvm: 3 passed, 1 failed\ncargo: 1 passed, 1 failed\n4 passed, 2 failed\n"
        );
        assert_eq!(summary.exit_code(), 1);
    }

    #[test]
    fn nothing_passed_is_not_success() {
        let summary = Summary {
            sources: vec![Source {
                name: "vm",
                tally: tally(0, &[], 3),
            }],
        };
        assert_eq!(
            summary.render(),
            "vm: 0 passed, 0 failed, 3 skipped\n0 passed, 0 failed, 3 skipped\n"
        );
        assert_eq!(summary.exit_code(), 1);
        assert_eq!(Summary::default().exit_code(), 1);
    }

    #[test]
    fn sources_follow_the_options() {
        let s = summarize(&Options {
            cargo_rc: Some(0),
            ..Options::default()
        });
        assert_eq!(s.sources.len(), 1);
        assert_eq!(s.sources[0].name, "cargo");
        let s = summarize(&Options {
            vm_rc: Some(0),
            ..Options::default()
        });
        assert_eq!(s.sources.len(), 1);
        assert_eq!(s.sources[0].name, "vm");
    }
}
