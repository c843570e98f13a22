//! Minimisation on the host of a program that kills the kernel: each
//! candidate goes to an oracle command (a VM boot that replays it,
//! tools/vm/fuzz-replay.sh), which says whether the crash still happens.
//! The fuzzer's in-guest `minimize` cannot do this: the first run that
//! reproduces the crash takes the minimiser down with the kernel.

use crate::minimize;
use crate::prog::Prog;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// Runs `cmd FILE` on candidates of `prog` (at most `max_runs` of them) and
/// prints the smallest for which it exited 0. Exit 1 if `prog` itself does
/// not reproduce.
pub fn minimize(prog: &Prog, cmd: &str, max_runs: u64) -> Result<ExitCode, String> {
    let (min, runs) = shrink(prog, cmd, max_runs)?;
    let Some(min) = min else {
        eprintln!("uapi-fuzz: the oracle does not reproduce the program: nothing to minimise");
        return Ok(ExitCode::from(1));
    };
    eprintln!(
        "uapi-fuzz: {runs} oracle runs: {} calls down to {}",
        prog.calls.len(),
        min.calls.len()
    );
    print!("{}", min.to_text());
    Ok(ExitCode::SUCCESS)
}

/// The smallest program for which `cmd` still holds (`None` if `prog`
/// itself does not), and how many times `cmd` ran.
fn shrink(prog: &Prog, cmd: &str, max_runs: u64) -> Result<(Option<Prog>, u64), String> {
    let dir = scratch_dir()?;
    let mut oracle = Oracle {
        cmd,
        file: dir.join("candidate.prog"),
        runs: 0,
        max_runs,
        error: None,
    };
    let min = if oracle.holds(prog) {
        Some(minimize::minimize(prog, |p| oracle.holds(p)))
    } else {
        None
    };
    let _ = std::fs::remove_dir_all(&dir);
    match oracle.error {
        Some(e) => Err(e),
        None => Ok((min, oracle.runs)),
    }
}

struct Oracle<'a> {
    cmd: &'a str,
    file: PathBuf,
    runs: u64,
    max_runs: u64,
    /// The oracle's own failure: no candidate is tried after it.
    error: Option<String>,
}

impl Oracle<'_> {
    /// Whether `prog` still crashes. Past the run budget, or once the oracle
    /// has failed, every candidate is refused, so the minimiser ends with the
    /// best program found so far.
    fn holds(&mut self, prog: &Prog) -> bool {
        if self.runs >= self.max_runs || self.error.is_some() {
            return false;
        }
        self.runs += 1;
        match self.run(prog) {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    fn run(&self, prog: &Prog) -> Result<bool, String> {
        std::fs::write(&self.file, prog.to_text())
            .map_err(|e| format!("{}: {e}", self.file.display()))?;
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{} \"$1\"", self.cmd))
            .arg("oracle")
            .arg(&self.file)
            .status()
            .map_err(|e| format!("oracle {}: {e}", self.cmd))?;
        eprintln!(
            "uapi-fuzz: oracle run {} ({} calls): {}",
            self.runs,
            prog.calls.len(),
            if status.success() {
                "crashes"
            } else {
                "no crash"
            }
        );
        // 0: reproduced; 1: not; anything else (a signal, 2 and up) is the
        // oracle's own failure, which must not read as "not reproduced".
        match status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(format!("oracle {} failed: {status}", self.cmd)),
        }
    }
}

fn scratch_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    for n in 0..1000u32 {
        let dir = base.join(format!("uapi-fuzz-min-{}-{n}", std::process::id()));
        if std::fs::create_dir(&dir).is_ok() {
            return Ok(dir);
        }
    }
    Err(format!("no scratch directory in {}", base.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, Opts};
    use crate::rng::Rng;

    /// A generated program with a `ccm_configure` call and more besides.
    fn program() -> Prog {
        (0..200)
            .map(|seed| generate(&mut Rng::new(seed), &Opts::default()))
            .find(|p| p.calls.len() > 4 && p.to_text().contains("ccm_configure"))
            .expect("some seed generates a configure")
    }

    #[test]
    fn keeps_what_the_oracle_needs() {
        let prog = program();
        let (min, runs) = shrink(&prog, "grep -q ccm_configure", 500).unwrap();
        let min = min.expect("the program reproduces");
        assert!(min.to_text().contains("ccm_configure"));
        assert!(min.calls.len() < prog.calls.len(), "{}", min.to_text());
        assert!(runs > 1);
    }

    #[test]
    fn a_program_that_does_not_reproduce_is_not_minimised() {
        let (min, runs) = shrink(&program(), "exit 1 #", 500).unwrap();
        assert!(min.is_none());
        assert_eq!(runs, 1);
    }

    #[test]
    fn an_oracle_failure_is_an_error_not_a_verdict() {
        assert!(shrink(&program(), "exit 3 #", 500).is_err());
        assert!(shrink(&program(), "kill -9 $$ #", 500).is_err());
        // Failing after the first run (which reproduced): still an error.
        let cmd = "test -e \"$1.seen\" && exit 7; touch \"$1.seen\" #";
        assert!(shrink(&program(), cmd, 500).is_err());
    }

    #[test]
    fn the_run_budget_ends_minimisation_with_the_best_so_far() {
        let prog = program();
        let (min, runs) = shrink(&prog, "true", 1).unwrap();
        assert_eq!(runs, 1);
        assert_eq!(min.unwrap().to_text(), prog.to_text());
    }
}
