//! Running a program in a forked child: a SIGSEGV, a hang or a stuck call
//! of the program cannot take the fuzzer with it. The child writes its
//! results and coverage edges into a MAP_SHARED area the parent reads.

use crate::calls::{Interp, Outcome};
use crate::kcov::Kcov;
use crate::kmsg::{self, Kmsg};
use crate::prog::{Prog, MAX_CALLS};
use crate::sys::{self, Mem};
use crate::target::Target;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Layout of the shared area, in u64 words.
const W_CALLS: usize = 0;
const W_EDGES: usize = 1;
const W_KCOV: usize = 2;
const W_RESULTS: usize = 4;
const W_EDGE0: usize = W_RESULTS + 3 * MAX_CALLS;
const MAX_EDGES: usize = 1 << 16;
/// Kcov states the child reports.
const KCOV_OK: u64 = 1;
const KCOV_FAILED: u64 = 2;
/// A killed child that is still there after this is a finding.
const UNKILLABLE_AFTER: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    Unkillable,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub status: Status,
    pub outcomes: Vec<Outcome>,
    pub edges: Vec<u64>,
    /// The first kernel report logged while the program ran.
    pub report: Option<String>,
    pub kcov_ok: bool,
}

impl RunResult {
    /// The finding kind, if this run is one.
    pub fn finding(&self) -> Option<String> {
        if let Some(r) = &self.report {
            return Some(format!(
                "kernel-report:{}",
                r.replace(char::is_whitespace, "_")
            ));
        }
        (self.status == Status::Unkillable).then(|| "unkillable-task".to_string())
    }
}

pub struct Executor {
    pub target: Target,
    shared: Mem,
    kcov: Option<Kcov>,
    kmsg: Option<Kmsg>,
    pub timeout: Duration,
}

impl Executor {
    pub fn new(target: Target, timeout: Duration) -> std::io::Result<Executor> {
        let words = W_EDGE0 + MAX_EDGES;
        let shared = Mem::new(words * 8, libc::PROT_READ | libc::PROT_WRITE, true)?;
        let kcov = match Kcov::open() {
            Ok(k) => Some(k),
            Err(e) => {
                eprintln!(
                    "uapi-fuzz: WARNING: no KCOV ({e}): running WITHOUT coverage, edges stay 0"
                );
                None
            }
        };
        let kmsg = Kmsg::open();
        if kmsg.is_none() {
            eprintln!("uapi-fuzz: WARNING: /dev/kmsg unreadable: kernel reports are not detected");
        }
        crate::access::install();
        Ok(Executor {
            target,
            shared,
            kcov,
            kmsg,
            timeout,
        })
    }

    pub fn has_kcov(&self) -> bool {
        self.kcov.is_some()
    }

    pub fn run(&mut self, prog: &Prog) -> RunResult {
        for w in 0..W_EDGE0 {
            self.shared.store(w, 0);
        }
        // SAFETY: fork; the child only runs the program and _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            self.child(prog);
        }
        let status = if pid < 0 {
            Status::Exited(-1)
        } else {
            self.wait(pid)
        };
        let result = self.collect(prog, status);
        self.target.cleanup();
        if self.kcov.is_some() && !result.kcov_ok {
            // A task that did not die may still hold it: take a new one.
            self.kcov = Kcov::open().ok();
        }
        result
    }

    fn collect(&mut self, prog: &Prog, status: Status) -> RunResult {
        let done = (self.shared.load(W_CALLS) as usize).min(prog.calls.len());
        let outcomes = (0..done)
            .map(|i| Outcome {
                ret: self.shared.load(W_RESULTS + 3 * i) as i64,
                errno: self.shared.load(W_RESULTS + 3 * i + 1) as i32,
                value: self.shared.load(W_RESULTS + 3 * i + 2),
            })
            .collect();
        let n = (self.shared.load(W_EDGES) as usize).min(MAX_EDGES);
        let edges = (0..n).map(|i| self.shared.load(W_EDGE0 + i)).collect();
        let lines = self.kmsg.as_ref().map(|k| k.read_new()).unwrap_or_default();
        let report = kmsg::find_report(&lines).cloned();
        let kcov_ok = self.shared.load(W_KCOV) == KCOV_OK;
        RunResult {
            status,
            outcomes,
            edges,
            report,
            kcov_ok,
        }
    }

    /// Polls for the child's exit; kills it (and its fork children) at the
    /// timeout.
    fn wait(&self, pid: i32) -> Status {
        let start = Instant::now();
        let mut killed: Option<Instant> = None;
        loop {
            let mut st = 0;
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
            if r == pid || r < 0 {
                // The child's own fork children are in its process group.
                // SAFETY: signalling our child's group.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                return match (killed, libc::WIFSIGNALED(st)) {
                    (Some(_), _) => Status::TimedOut,
                    (None, true) => Status::Signaled(libc::WTERMSIG(st)),
                    (None, false) => Status::Exited(libc::WEXITSTATUS(st)),
                };
            }
            match killed {
                None if start.elapsed() > self.timeout => {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    killed = Some(Instant::now());
                }
                Some(t) if t.elapsed() > UNKILLABLE_AFTER => return Status::Unkillable,
                _ => {}
            }
            sys::sleep_ms(if start.elapsed() < Duration::from_millis(20) {
                1
            } else {
                5
            });
        }
    }

    /// The executor child: runs the calls, recording results and edges.
    fn child(&self, prog: &Prog) -> ! {
        // SAFETY: own process group, so that the parent can kill every
        // process the program forks.
        unsafe { libc::setpgid(0, 0) };
        let kcov = self.kcov.as_ref().filter(|k| k.enable().is_ok());
        self.shared
            .store(W_KCOV, if kcov.is_some() { KCOV_OK } else { KCOV_FAILED });
        let code = match Interp::new(&self.target) {
            Ok(mut interp) => {
                self.run_calls(&mut interp, prog, kcov);
                0
            }
            Err(_) => 3,
        };
        if let Some(k) = kcov {
            k.disable();
        }
        // SAFETY: leaving the child without running the parent's destructors.
        unsafe { libc::_exit(code) }
    }

    fn run_calls(&self, interp: &mut Interp, prog: &Prog, kcov: Option<&Kcov>) {
        let mut seen = HashSet::new();
        for (i, call) in prog.calls.iter().enumerate() {
            if let Some(k) = kcov.filter(|_| !interp.forked) {
                k.reset();
            }
            let out = interp.run(call);
            interp.results.push(out);
            if interp.forked {
                continue; // a fork child: its results are not the program's
            }
            if let Some(k) = kcov {
                k.edges(|e| {
                    if seen.insert(e) && seen.len() <= MAX_EDGES {
                        let n = self.shared.load(W_EDGES) as usize;
                        self.shared.store(W_EDGE0 + n, e);
                        self.shared.store(W_EDGES, n as u64 + 1);
                    }
                });
            }
            self.shared.store(W_RESULTS + 3 * i, out.ret as u64);
            self.shared.store(W_RESULTS + 3 * i + 1, out.errno as u64);
            self.shared.store(W_RESULTS + 3 * i + 2, out.value);
            self.shared.store(W_CALLS, i as u64 + 1);
        }
        interp.reap();
        if interp.forked {
            // SAFETY: a fork child ends here.
            unsafe { libc::_exit(0) };
        }
    }
}
