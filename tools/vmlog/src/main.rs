//! `vmlog`: see the library documentation and `vmlog --help`.

use std::io::Write;
use std::process::ExitCode;

use vmlog::cli::{parse_args, Command, USAGE};
use vmlog::summarize;

/// Exit status for a bad command line.
const USAGE_ERROR: u8 = 2;

fn main() -> ExitCode {
    match parse_args(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            print_out(USAGE);
            ExitCode::SUCCESS
        }
        Ok(Command::Summarize(options)) => {
            let summary = summarize(&options);
            print_out(&summary.render());
            ExitCode::from(summary.exit_code())
        }
        Err(error) => {
            eprint!("vmlog: {error}\n\n{USAGE}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// Writes to stdout without panicking if it is closed.
fn print_out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
