//! uapi-fuzz: a coverage-guided fuzzer of the cxl_ccm and reflux user
//! interfaces, run inside the test VM (see tools/vm/fuzz.sh).
//!
//!   uapi-fuzz fuzz --seconds N [--corpus DIR] [--log PATH] [--seed S]
//!                  [--ccm-dev /dev/cxl_ccm7] [--no-reflux] [--timeout-ms MS]
//!   uapi-fuzz run FILE.prog        exit 1 if the kernel log shows a report
//!   uapi-fuzz minimize FILE.prog   the smallest program still reporting
//!   uapi-fuzz minimize FILE.prog --oracle CMD [--max-runs N]
//!                                  the same on the host, for a crash that
//!                                  kills the kernel: CMD PROG.prog must exit
//!                                  0 while PROG.prog still crashes (one VM
//!                                  boot per run: tools/vm/fuzz-replay.sh)
//!   uapi-fuzz repro FILE.prog      the program as a C reproducer
mod access;
mod calls;
mod desc;
mod exec;
mod fuzz;
mod gen;
mod kcov;
mod kmsg;
mod minimize;
mod mutate;
mod oracle;
mod prog;
mod repro;
mod rng;
mod sys;
mod target;
mod values;

use exec::Executor;
use prog::Prog;
use std::process::ExitCode;
use std::time::Duration;
use target::Target;

struct Args {
    cmd: String,
    file: Option<String>,
    seconds: u64,
    corpus: Option<String>,
    log: Option<String>,
    seed: u64,
    ccm_dev: String,
    reflux: bool,
    timeout_ms: u64,
    oracle: Option<String>,
    max_runs: u64,
}

/// `uapi-fuzz --help`: the commands and options.
const USAGE: &str = "\
usage: uapi-fuzz fuzz|run|minimize|repro ...

  uapi-fuzz fuzz [--seconds N] [--corpus DIR] [--log PATH] [--seed S]
                 [--ccm-dev PATH] [--no-reflux] [--timeout-ms MS]
      fuzz the cxl_ccm and reflux interfaces; exit 0 without a finding,
      1 with findings, 2 without coverage (no KCOV: the fuzzer was blind)
  uapi-fuzz run FILE.prog        run one program; exit 1 if the kernel log
                                 shows a report
  uapi-fuzz minimize FILE.prog   the smallest program still reporting, on
                                 stdout (exit 1 if the program reports nothing)
  uapi-fuzz minimize FILE.prog --oracle CMD [--max-runs N]
                                 the same on the host, for a crash that kills
                                 the kernel: CMD PROG.prog must exit 0 while
                                 PROG.prog still crashes (one VM boot per run:
                                 tools/vm/fuzz-replay.sh)
  uapi-fuzz repro FILE.prog      the program as a C reproducer, on stdout

options:
  --seconds N       fuzz for N seconds (default 60)
  --corpus DIR      run the DIR/*.prog programs first, as seeds
  --log PATH        append every program to PATH before it runs (a serial
                    port, so that a kernel panic leaves its suspects)
  --seed S          the random generator's seed (default: from the clock)
  --ccm-dev PATH    the cxl_ccm device (default /dev/cxl_ccm7)
  --no-reflux       leave the reflux interfaces out
  --timeout-ms MS   kill a program running longer (default 5000)
  --oracle CMD      minimize: judge each candidate with CMD on the host
  --max-runs N      minimize --oracle: at most N runs of CMD (default 200)
  --help            this text

A command line it cannot use is refused with exit status 2.
";

/// Follows a usage error, in place of USAGE: one line, so that the error stays
/// the visible part.
const USAGE_HINT: &str =
    "usage: uapi-fuzz fuzz|run|minimize|repro ... (uapi-fuzz --help lists the options)";

const COMMANDS: [&str; 4] = ["fuzz", "run", "minimize", "repro"];

/// What the command line asks for.
enum Parsed {
    Run(Args),
    Help,
}

/// Parses the command line (without the program name). Every command but
/// `fuzz` takes one FILE.prog; any other word is refused, so that a typo
/// cannot start a fuzzing run that ignores it.
fn parse_args(argv: Vec<String>) -> Result<Parsed, String> {
    let mut it = argv.into_iter();
    let cmd = it.next().ok_or("no command")?;
    if cmd == "--help" {
        return Ok(Parsed::Help);
    }
    if !COMMANDS.contains(&cmd.as_str()) {
        return Err(format!("unknown command {cmd}"));
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let takes_file = cmd != "fuzz";
    let mut a = Args {
        cmd,
        file: None,
        seconds: 60,
        corpus: None,
        log: None,
        seed,
        ccm_dev: "/dev/cxl_ccm7".into(),
        reflux: true,
        timeout_ms: 5000,
        oracle: None,
        max_runs: 200,
    };
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        let num = |s: String| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
        match arg.as_str() {
            "--help" => return Ok(Parsed::Help),
            "--seconds" => a.seconds = num(val("--seconds")?)?,
            "--corpus" => a.corpus = Some(val("--corpus")?),
            "--log" => a.log = Some(val("--log")?),
            "--seed" => a.seed = num(val("--seed")?)?,
            "--ccm-dev" => a.ccm_dev = val("--ccm-dev")?,
            "--timeout-ms" => a.timeout_ms = num(val("--timeout-ms")?)?,
            "--no-reflux" => a.reflux = false,
            "--oracle" => a.oracle = Some(val("--oracle")?),
            "--max-runs" => a.max_runs = num(val("--max-runs")?)?,
            s if takes_file && !s.starts_with("--") && a.file.is_none() => {
                a.file = Some(s.to_string())
            }
            s => return Err(format!("unknown argument {s}")),
        }
    }
    Ok(Parsed::Run(a))
}

fn read_prog(a: &Args) -> Result<Prog, String> {
    let file = a.file.as_deref().ok_or("a FILE.prog is needed")?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    Prog::parse(&text).map_err(|e| format!("{file}: {e}"))
}

fn executor(a: &Args) -> Result<Executor, String> {
    let target = Target::discover(&a.ccm_dev, a.reflux);
    Executor::new(target, Duration::from_millis(a.timeout_ms)).map_err(|e| e.to_string())
}

fn cmd_run(a: &Args) -> Result<ExitCode, String> {
    let prog = read_prog(a)?;
    let res = executor(a)?.run(&prog);
    for (i, (call, o)) in prog.calls.iter().zip(&res.outcomes).enumerate() {
        println!(
            "{i}: {} = {} errno {} value {:#x}",
            prog::format_call(call),
            o.ret,
            o.errno,
            o.value
        );
    }
    println!(
        "status {:?}, {} edges, kcov {}",
        res.status,
        res.edges.len(),
        res.kcov_ok
    );
    match res.finding() {
        Some(kind) => {
            println!("FINDING {kind}");
            Ok(ExitCode::from(1))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

fn cmd_minimize(a: &Args) -> Result<ExitCode, String> {
    let prog = read_prog(a)?;
    if let Some(cmd) = &a.oracle {
        return oracle::minimize(&prog, cmd, a.max_runs);
    }
    let mut exec = executor(a)?;
    let Some(kind) = exec.run(&prog).finding() else {
        eprintln!("uapi-fuzz: the program produces no finding: nothing to minimise");
        return Ok(ExitCode::from(1));
    };
    eprintln!("uapi-fuzz: minimising for {kind}");
    let min = minimize::minimize(&prog, |p| exec.run(p).finding().is_some());
    print!("{}", min.to_text());
    Ok(ExitCode::SUCCESS)
}

fn main_result(a: Args) -> Result<ExitCode, String> {
    match a.cmd.as_str() {
        "fuzz" => {
            let cfg = fuzz::Config {
                seconds: a.seconds,
                corpus_dir: a.corpus.clone(),
                log: a.log.clone(),
                seed: a.seed,
            };
            println!("fuzz: seed {}", a.seed);
            let exec = executor(&a)?;
            let kcov = exec.has_kcov();
            let stats = fuzz::fuzz(exec, &cfg)?;
            // No coverage is a failed run: the fuzzer was blind.
            Ok(ExitCode::from(if !kcov || stats.edges == 0 {
                2
            } else {
                u8::from(stats.findings > 0)
            }))
        }
        "run" => cmd_run(&a),
        "minimize" => cmd_minimize(&a),
        "repro" => {
            print!("{}", repro::to_c(&read_prog(&a)?));
            Ok(ExitCode::SUCCESS)
        }
        c => Err(format!("unknown command {c}")),
    }
}

fn main() -> ExitCode {
    let a = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("uapi-fuzz: {e}\n{USAGE_HINT}");
            return ExitCode::from(2);
        }
    };
    match main_result(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("uapi-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}
