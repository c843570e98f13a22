//! The command line, parsed by hand.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use crate::summary::Options;

/// The text printed by `vmlog --help`.
pub const USAGE: &str = "\
usage: vmlog summarize [--tests FILE] [--console FILE] [--cargo FILE]
                       [--cargo-rc N] [--vm-rc N]
       vmlog --help

Judges one test run of a QEMU VM and prints a summary: the failure lines,
the counts per source (vm, cargo), and as the last line the totals
`N passed, M failed` (`, K skipped` when K > 0).

options:
  --tests FILE     the tests log (##cxlstack markers around TAP/KTAP output)
  --console FILE   the kernel console log, scanned for kernel problem reports
  --cargo FILE     the output of `cargo test`
  --cargo-rc N     exit status of `cargo test`
  --vm-rc N        exit status of the VM runner (124: the VM timed out)

At least one option is required. Exit status: 0 if nothing failed and at
least one test passed, 1 otherwise, 2 for a usage error.
";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print [`USAGE`].
    Help,
    /// Summarize a run.
    Summarize(Options),
}

/// A bad command line, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn usage_error(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

fn is_help(arg: &OsString) -> bool {
    arg == "--help" || arg == "-h"
}

/// Parses the arguments after the program name.
pub fn parse_args<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let mut args = args.into_iter().map(Into::into);
    let Some(command) = args.next() else {
        return Err(usage_error("missing command"));
    };
    if is_help(&command) || command == "help" {
        return Ok(Command::Help);
    }
    if command != "summarize" {
        return Err(usage_error(format!(
            "unknown command {:?}",
            command.to_string_lossy()
        )));
    }

    let mut options = Options::default();
    while let Some(arg) = args.next() {
        if is_help(&arg) {
            return Ok(Command::Help);
        }
        let arg = arg
            .into_string()
            .map_err(|arg| usage_error(format!("unknown argument {:?}", arg.to_string_lossy())))?;
        let (name, inline_value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_string(), Some(OsString::from(value)))
            }
            _ => (arg, None),
        };
        if !matches!(
            name.as_str(),
            "--tests" | "--console" | "--cargo" | "--cargo-rc" | "--vm-rc"
        ) {
            return Err(usage_error(format!("unknown argument {name:?}")));
        }
        let value = match inline_value.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(usage_error(format!("{name} needs a value"))),
        };
        match name.as_str() {
            "--tests" => set_path(&mut options.tests, &name, value)?,
            "--console" => set_path(&mut options.console, &name, value)?,
            "--cargo" => set_path(&mut options.cargo, &name, value)?,
            "--cargo-rc" => set_status(&mut options.cargo_rc, &name, value)?,
            _ => set_status(&mut options.vm_rc, &name, value)?,
        }
    }
    if options == Options::default() {
        return Err(usage_error("summarize needs at least one option"));
    }
    Ok(Command::Summarize(options))
}

fn set_path(slot: &mut Option<PathBuf>, name: &str, value: OsString) -> Result<(), UsageError> {
    if slot.is_some() {
        return Err(usage_error(format!("{name} given twice")));
    }
    if value.is_empty() {
        return Err(usage_error(format!("{name} needs a file name")));
    }
    *slot = Some(PathBuf::from(value));
    Ok(())
}

fn set_status(slot: &mut Option<i32>, name: &str, value: OsString) -> Result<(), UsageError> {
    if slot.is_some() {
        return Err(usage_error(format!("{name} given twice")));
    }
    let text = value.to_string_lossy();
    let status = text
        .parse()
        .map_err(|_| usage_error(format!("{name} needs a number, not {text:?}")))?;
    *slot = Some(status);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, UsageError> {
        parse_args(args.iter().copied())
    }

    #[test]
    fn help() {
        assert_eq!(parse(&["--help"]), Ok(Command::Help));
        assert_eq!(parse(&["-h"]), Ok(Command::Help));
        assert_eq!(parse(&["help"]), Ok(Command::Help));
        assert_eq!(parse(&["summarize", "--help"]), Ok(Command::Help));
    }

    #[test]
    fn all_options() {
        let got = parse(&[
            "summarize",
            "--tests",
            "t.log",
            "--console=c.log",
            "--cargo",
            "cargo.log",
            "--cargo-rc",
            "101",
            "--vm-rc=124",
        ]);
        assert_eq!(
            got,
            Ok(Command::Summarize(Options {
                tests: Some("t.log".into()),
                console: Some("c.log".into()),
                cargo: Some("cargo.log".into()),
                cargo_rc: Some(101),
                vm_rc: Some(124),
            }))
        );
    }

    #[test]
    fn errors() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "missing command"),
            (&["judge"], "unknown command \"judge\""),
            (&["summarize"], "summarize needs at least one option"),
            (&["summarize", "--tests"], "--tests needs a value"),
            (&["summarize", "--tests", ""], "--tests needs a file name"),
            (
                &["summarize", "--vm-rc", "x"],
                "--vm-rc needs a number, not \"x\"",
            ),
            (
                &["summarize", "--vm-rc", "1", "--vm-rc=2"],
                "--vm-rc given twice",
            ),
            (
                &["summarize", "--tests", "a", "--tests", "b"],
                "--tests given twice",
            ),
            (
                &["summarize", "--verbose"],
                "unknown argument \"--verbose\"",
            ),
            (
                &["summarize", "--verbose=1"],
                "unknown argument \"--verbose\"",
            ),
            (&["summarize", "extra"], "unknown argument \"extra\""),
        ];
        for (args, message) in cases {
            assert_eq!(
                parse(args),
                Err(UsageError(message.to_string())),
                "{args:?}"
            );
        }
    }
}
