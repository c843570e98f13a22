// SPDX-License-Identifier: GPL-2.0
//! Helpers shared by the command-line tests of the tools
//! (`tools/<crate>/tests/cli_doc.rs`): running a tool's binary with a
//! deadline and capturing its exit status, stdout and stderr (failing the
//! test if it panicked), scratch directories and files, a minimal JSON
//! parser, and the checks of conventions several tools share (help, usage
//! errors, `--log TESTS.LOG --out DIR`).
//!
//! Not a crate: each test includes this file as a module,
//!
//! ```ignore
//! #[allow(dead_code)] // not every test uses every helper
//! #[path = "../../cli-test-support/cli_support.rs"]
//! mod cli_support;
//! ```
//!
//! and passes its binary (`env!("CARGO_BIN_EXE_<name>")`) to the functions
//! that run it, or a closure that runs it, to the shared checks. No
//! dependencies: the tools have none to offer.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Scratch directories

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// `cli_doc-<package>-<pid>-<n>-<tag>`, empty.
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "cli_doc-{}-{}-{}-{}",
            env!("CARGO_PKG_NAME"),
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst),
            tag
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// Writes the file `name` with `content`; returns its path.
    pub fn file(&self, name: &str, content: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, content).unwrap();
        p.to_str().unwrap().to_string()
    }
    /// The path of `name` in the directory (not created).
    pub fn sub(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
    /// A sparse file of `len` bytes.
    pub fn sparse(&self, name: &str, len: u64) -> PathBuf {
        let p = self.0.join(name);
        File::create(&p).unwrap().set_len(len).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------
// Running the binary

/// What a run left.
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Still running at the deadline: killed.
    pub timed_out: bool,
}

impl Out {
    pub fn last_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or("")
    }
}

/// The working directory of a run.
#[derive(Clone, Copy)]
pub enum Cwd<'a> {
    /// The test's own.
    Inherit,
    /// An empty scratch directory, removed after the run.
    Scratch,
    /// This one.
    At(&'a Path),
}

/// The name of the binary `bin`, for messages.
fn name(bin: &str) -> &str {
    Path::new(bin)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(bin)
}

/// Starts `bin` with `args` in `cwd` (the test's own when None), stdin
/// empty, stdout and stderr into the files `stdout` and `stderr` of `io` (so
/// that nothing can block on a full pipe).
pub fn spawn(bin: &str, args: &[&str], cwd: Option<&Path>, io: &TempDir) -> Child {
    let mut cmd = Command::new(bin);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(File::create(io.path().join("stdout")).unwrap())
        .stderr(File::create(io.path().join("stderr")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", name(bin)))
}

/// Waits for `child` up to `deadline`; None if it is still running then.
pub fn wait_until(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if start.elapsed() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Like `wait_until`, and kills `child` if it is still running then.
pub fn wait_or_kill(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let status = wait_until(child, deadline);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status
}

/// The result of a run started by `spawn` into `io`, `status` None when it
/// was killed at its deadline. Asserts that it did not panic.
pub fn collect(bin: &str, args: &[&str], io: &TempDir, status: Option<ExitStatus>) -> Out {
    let read =
        |f: &str| String::from_utf8_lossy(&std::fs::read(io.path().join(f)).unwrap()).into_owned();
    let out = Out {
        code: status.and_then(|s| s.code()),
        stdout: read("stdout"),
        stderr: read("stderr"),
        timed_out: status.is_none(),
    };
    assert!(
        !out.stderr.contains("panicked at")
            && !out.stdout.contains("panicked at")
            && out.code != Some(101),
        "{} {args:?} panicked (code {:?}):\n{}",
        name(bin),
        out.code,
        out.stderr
    );
    out
}

/// Runs `bin` with `args` in `cwd`; past `deadline` it is killed and
/// `timed_out` set. Asserts that it did not panic.
pub fn run_until(bin: &str, args: &[&str], cwd: Cwd, deadline: Duration) -> Out {
    let io = TempDir::new("run");
    let scratch;
    let dir = match cwd {
        Cwd::Inherit => None,
        Cwd::Scratch => {
            scratch = TempDir::new("cwd");
            Some(scratch.path())
        }
        Cwd::At(d) => Some(d),
    };
    let mut child = spawn(bin, args, dir, &io);
    let status = wait_or_kill(&mut child, deadline);
    collect(bin, args, &io, status)
}

/// `run_until`, and a run still going at `timeout` fails the test.
pub fn run_bounded(bin: &str, args: &[&str], cwd: Cwd, timeout: Duration) -> Out {
    let o = run_until(bin, args, cwd, timeout);
    assert!(
        !o.timed_out,
        "{} {args:?} still running after {timeout:?}: killed",
        name(bin)
    );
    o
}

// ---------------------------------------------------------------------------
// Checks of conventions the tools share

/// A usage error: exit status 2, nothing on stdout, stderr naming each of
/// `names`.
pub fn assert_usage_error(o: &Out, args: &[&str], names: &[&str]) {
    assert_eq!(o.code, Some(2), "{args:?}: stderr {}", o.stderr);
    assert!(o.stdout.is_empty(), "{args:?}: stdout {}", o.stdout);
    for n in names {
        assert!(
            o.stderr.contains(n),
            "{args:?}: {n:?} not named: {}",
            o.stderr
        );
    }
}

/// Asking for help (`--help`, `-h`) is not an error: status 0, `usage` on
/// stdout.
pub fn assert_help_on_stdout(run: impl Fn(&[&str]) -> Out, usage: &str) {
    for a in ["--help", "-h"] {
        let o = run(&[a]);
        assert_eq!(o.code, Some(0), "{a}: {}", o.stderr);
        assert!(o.stdout.contains(usage), "{a}: stdout {}", o.stdout);
    }
}

/// `--help` mentions each of `words` (on stdout or stderr); returns what it
/// printed.
pub fn assert_help_mentions(run: impl Fn(&[&str]) -> Out, words: &[&str]) -> String {
    let o = run(&["--help"]);
    let text = format!("{}{}", o.stdout, o.stderr);
    for w in words {
        assert!(text.contains(w), "--help does not mention {w:?}:\n{text}");
    }
    text
}

// The tools run as `TOOL --log TESTS.LOG --out DIR` (ccm-bench,
// reflux-bench): `run` runs the tool, `log` is a log it accepts.

/// Both options are required, each with a value; anything else is a usage
/// error (status 2, `usage`) and writes nothing.
pub fn assert_log_out_usage_errors(
    run: impl Fn(&[&str]) -> Out,
    usage: &str,
    log: &str,
    out: &str,
) {
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["--log", log],
        vec!["--out", out],
        vec!["--log"],
        vec!["--log", log, "--out"],
        vec!["--log", log, "--out", out, "--bogus"],
        vec!["--log", log, "--out", out, "extra"],
        vec![log, out],
    ];
    for a in cases {
        assert_usage_error(&run(&a), &a, &[usage]);
    }
    assert!(
        !Path::new(out).exists(),
        "a refused command line wrote {out}"
    );
}

/// A TESTS.LOG that does not exist or is a directory is refused (status 1)
/// naming it.
pub fn assert_missing_or_directory_log_refused(run: impl Fn(&[&str]) -> Out, t: &TempDir) {
    let missing = t.sub("missing.log");
    let out = t.sub("out");
    for log in [missing.as_str(), t.path().to_str().unwrap()] {
        let o = run(&["--log", log, "--out", &out]);
        assert_eq!(o.code, Some(1), "{log}: {}", o.stderr);
        assert!(o.stderr.contains(log), "{log} not named: {}", o.stderr);
    }
}

/// A DIR that cannot be a directory (a regular file, a path below one)
/// fails (status 1) naming it, and the file is left alone.
pub fn assert_unusable_out_dir_fails(run: impl Fn(&[&str]) -> Out, t: &TempDir, log: &str) {
    let file = t.file("regular", b"x");
    let below = format!("{file}/sub");
    for out in [file.as_str(), below.as_str()] {
        let o = run(&["--log", log, "--out", out]);
        assert_eq!(o.code, Some(1), "{out}: {}", o.stdout);
        assert!(o.stderr.contains(out), "{out}: {}", o.stderr);
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

/// An empty DIR names no directory: it is refused, not taken as the
/// current directory.
pub fn assert_empty_out_dir_refused(run_in: impl Fn(&[&str], Cwd) -> Out, log: &str) {
    let cwd = TempDir::new("emptyout-cwd");
    let o = run_in(&["--log", log, "--out", ""], Cwd::At(cwd.path()));
    let written: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(written.is_empty(), "wrote into the current directory");
    assert_ne!(o.code, Some(0));
}

// ---------------------------------------------------------------------------
// A minimal strict JSON parser (no dependencies available).

#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn get(&self, k: &str) -> Option<&J> {
        match self {
            J::Obj(m) => m.iter().find(|(kk, _)| kk == k).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn num(&self) -> Option<f64> {
        match self {
            J::Num(n) => Some(*n),
            _ => None,
        }
    }
    pub fn arr(&self) -> Option<&[J]> {
        match self {
            J::Arr(a) => Some(a),
            _ => None,
        }
    }
    pub fn str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The number at key `k`; panics if there is none.
    pub fn f(&self, k: &str) -> f64 {
        self.get(k)
            .and_then(J::num)
            .unwrap_or_else(|| panic!("field {k} is not a number in {self:?}"))
    }
}

pub fn parse_json(s: &str) -> Result<J, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let v = j_value(b, &mut i)?;
    j_ws(b, &mut i);
    if i != b.len() {
        return Err(format!("trailing bytes at {i}"));
    }
    Ok(v)
}

fn j_ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
}

fn j_lit(b: &[u8], i: &mut usize, lit: &str, v: J) -> Result<J, String> {
    if b[*i..].starts_with(lit.as_bytes()) {
        *i += lit.len();
        Ok(v)
    } else {
        Err(format!("bad literal at {i}"))
    }
}

fn j_value(b: &[u8], i: &mut usize) -> Result<J, String> {
    j_ws(b, i);
    match b.get(*i) {
        Some(b'{') => {
            *i += 1;
            let mut m = Vec::new();
            j_ws(b, i);
            if b.get(*i) == Some(&b'}') {
                *i += 1;
                return Ok(J::Obj(m));
            }
            loop {
                j_ws(b, i);
                let k = j_string(b, i)?;
                j_ws(b, i);
                if b.get(*i) != Some(&b':') {
                    return Err(format!("expected : at {i}"));
                }
                *i += 1;
                let v = j_value(b, i)?;
                m.push((k, v));
                j_ws(b, i);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return Ok(J::Obj(m));
                    }
                    _ => return Err(format!("expected , or }} at {i}")),
                }
            }
        }
        Some(b'[') => {
            *i += 1;
            let mut a = Vec::new();
            j_ws(b, i);
            if b.get(*i) == Some(&b']') {
                *i += 1;
                return Ok(J::Arr(a));
            }
            loop {
                a.push(j_value(b, i)?);
                j_ws(b, i);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b']') => {
                        *i += 1;
                        return Ok(J::Arr(a));
                    }
                    _ => return Err(format!("expected , or ] at {i}")),
                }
            }
        }
        Some(b'"') => Ok(J::Str(j_string(b, i)?)),
        Some(b't') => j_lit(b, i, "true", J::Bool(true)),
        Some(b'f') => j_lit(b, i, "false", J::Bool(false)),
        Some(b'n') => j_lit(b, i, "null", J::Null),
        Some(c) if *c == b'-' || c.is_ascii_digit() => {
            let st = *i;
            while *i < b.len() && matches!(b[*i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                *i += 1;
            }
            let t = std::str::from_utf8(&b[st..*i]).unwrap();
            t.parse::<f64>()
                .map(J::Num)
                .map_err(|_| format!("bad number {t:?}"))
        }
        _ => Err(format!("unexpected byte at {i}")),
    }
}

fn j_string(b: &[u8], i: &mut usize) -> Result<String, String> {
    if b.get(*i) != Some(&b'"') {
        return Err(format!("expected string at {i}"));
    }
    *i += 1;
    let mut out = String::new();
    loop {
        match b.get(*i) {
            None => return Err("unterminated string".into()),
            Some(b'"') => {
                *i += 1;
                return Ok(out);
            }
            Some(b'\\') => {
                *i += 1;
                match b.get(*i) {
                    Some(b'n') => out.push('\n'),
                    Some(b't') => out.push('\t'),
                    Some(b'r') => out.push('\r'),
                    Some(b'b') => out.push('\u{8}'),
                    Some(b'f') => out.push('\u{c}'),
                    Some(b'/') => out.push('/'),
                    Some(b'\\') => out.push('\\'),
                    Some(b'"') => out.push('"'),
                    Some(b'u') => {
                        let h = b.get(*i + 1..*i + 5).ok_or("short \\u")?;
                        let h = std::str::from_utf8(h).map_err(|e| e.to_string())?;
                        let c = u32::from_str_radix(h, 16).map_err(|e| e.to_string())?;
                        out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                        *i += 4;
                    }
                    _ => return Err(format!("bad escape at {i}")),
                }
                *i += 1;
            }
            Some(c) if *c < 0x20 => return Err(format!("control byte in string at {i}")),
            Some(_) => {
                let st = *i;
                while *i < b.len() && b[*i] != b'"' && b[*i] != b'\\' && b[*i] >= 0x20 {
                    *i += 1;
                }
                out.push_str(std::str::from_utf8(&b[st..*i]).unwrap());
            }
        }
    }
}
