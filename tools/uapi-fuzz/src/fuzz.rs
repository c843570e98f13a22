//! The fuzzing loop: corpus seeding, pick-and-mutate or generate, keep
//! programs with new edges, report findings; every program is written to
//! the log device before it runs, so a kernel panic leaves its suspects.

use crate::exec::Executor;
use crate::gen::{self, Opts};
use crate::mutate;
use crate::prog::Prog;
use crate::rng::Rng;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

pub struct Config {
    pub seconds: u64,
    pub corpus_dir: Option<String>,
    pub log: Option<String>,
    pub seed: u64,
}

#[derive(Default)]
pub struct Stats {
    pub execs: u64,
    pub edges: usize,
    pub corpus: usize,
    pub findings: usize,
}

/// The log device (a serial port): every line synchronously.
struct Log(Option<File>);

impl Log {
    fn open(path: Option<&str>) -> Result<Log, String> {
        let Some(p) = path else { return Ok(Log(None)) };
        let f = OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_SYNC | libc::O_NOCTTY)
            .open(p)
            .map_err(|e| format!("{p}: {e}"))?;
        Ok(Log(Some(f)))
    }

    fn line(&mut self, s: &str) {
        if let Some(f) = &mut self.0 {
            // A lost log line must not stop the fuzzer.
            let _ = f.write_all(format!("{s}\n").as_bytes());
            let _ = f.flush();
        }
    }
}

/// The *.prog files of `dir`, sorted by name.
pub fn load_corpus(dir: &str) -> Vec<Prog> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "prog"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        match std::fs::read_to_string(&p)
            .map_err(|e| e.to_string())
            .and_then(|t| Prog::parse(&t))
        {
            Ok(prog) => out.push(prog),
            Err(e) => eprintln!("uapi-fuzz: {}: skipped: {e}", p.display()),
        }
    }
    out
}

struct Fuzzer {
    exec: Executor,
    log: Log,
    edges: HashSet<u64>,
    corpus: Vec<Prog>,
    finding_kinds: HashSet<String>,
    stats: Stats,
}

impl Fuzzer {
    /// Runs one program; returns how many new edges it found.
    fn run_one(&mut self, prog: &Prog) -> usize {
        self.stats.execs += 1;
        self.log
            .line(&format!("PROG {} {}", self.stats.execs, prog.to_line()));
        let res = self.exec.run(prog);
        let before = self.edges.len();
        self.edges.extend(res.edges.iter().copied());
        let new = self.edges.len() - before;
        if new > 0 {
            self.corpus.push(prog.clone());
            self.log.line(&format!("CORPUS {}", prog.to_line()));
        }
        if let Some(kind) = res.finding() {
            self.stats.findings += 1;
            // One line per distinct report; a report repeating is one bug.
            if self.finding_kinds.insert(kind.clone()) {
                self.log.line(&format!("FINDING {kind} {}", prog.to_line()));
                println!("fuzz: FINDING {kind}\n{}", prog.to_text());
            }
        }
        new
    }

    fn stats_line(&mut self, start: Instant) -> String {
        let t = start.elapsed().as_secs_f64();
        self.stats.edges = self.edges.len();
        self.stats.corpus = self.corpus.len();
        format!(
            "fuzz: t={:.0}s execs={} execs/s={:.1} edges={} corpus={} findings={}",
            t,
            self.stats.execs,
            self.stats.execs as f64 / t.max(0.001),
            self.stats.edges,
            self.stats.corpus,
            self.stats.findings
        )
    }
}

pub fn fuzz(exec: Executor, cfg: &Config) -> Result<Stats, String> {
    let opts = Opts {
        reflux: exec.target.reflux,
        dbg_files: exec.target.dbg_files.clone(),
    };
    if !exec.has_kcov() {
        eprintln!("uapi-fuzz: WARNING: fuzzing WITHOUT KCOV: blind, edges=0");
    }
    let mut f = Fuzzer {
        exec,
        log: Log::open(cfg.log.as_deref())?,
        edges: HashSet::new(),
        corpus: Vec::new(),
        finding_kinds: HashSet::new(),
        stats: Stats::default(),
    };
    let start = Instant::now();
    let deadline = Duration::from_secs(cfg.seconds);
    let seeds = cfg
        .corpus_dir
        .as_deref()
        .map(load_corpus)
        .unwrap_or_default();
    println!(
        "fuzz: {} seed programs, reflux {}",
        seeds.len(),
        if opts.reflux { "on" } else { "off" }
    );
    for p in &seeds {
        if start.elapsed() > deadline {
            break;
        }
        f.run_one(p);
    }
    let mut rng = Rng::new(cfg.seed);
    let mut last = Instant::now();
    while start.elapsed() < deadline {
        let prog = if f.corpus.is_empty() || rng.one_in(10) {
            gen::generate(&mut rng, &opts)
        } else {
            let a = f.corpus[rng.index(f.corpus.len())].clone();
            let b = f.corpus[rng.index(f.corpus.len())].clone();
            mutate::mutate(&mut rng, &opts, &a, Some(&b))
        };
        f.run_one(&prog);
        if last.elapsed() >= Duration::from_secs(10) {
            last = Instant::now();
            let line = f.stats_line(start);
            println!("{line}");
            f.log.line(&line);
        }
    }
    let line = f.stats_line(start);
    println!("{line}");
    let s = &f.stats;
    f.log.line(&format!(
        "FUZZ-DONE execs={} edges={} corpus={} findings={}",
        s.execs, s.edges, s.corpus, s.findings
    ));
    Ok(f.stats)
}
