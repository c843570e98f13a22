//! One benchmark run as `ccm_bench` prints it: a flat JSON object of strings, numbers and
//! booleans. The parser accepts exactly that (no nesting), which is all the VM emits.

use std::collections::BTreeMap;

/// A field value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Num(f64),
    Bool(bool),
}

/// Rounds a boot may hold: [`Run::round`] numbers boot `b`'s from `b * ROUNDS_PER_BOOT`.
pub const ROUNDS_PER_BOOT: u32 = 100_000;

/// A run: field name to value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Run(pub BTreeMap<String, Value>);

impl Run {
    pub fn str(&self, k: &str) -> &str {
        match self.0.get(k) {
            Some(Value::Str(s)) => s,
            _ => "",
        }
    }

    pub fn num(&self, k: &str) -> f64 {
        match self.0.get(k) {
            Some(Value::Num(n)) => *n,
            _ => f64::NAN,
        }
    }

    /// The boot the run came from (0 for a single log).
    pub fn boot(&self) -> u32 {
        let b = self.num("boot");
        if b.is_finite() {
            b as u32
        } else {
            0
        }
    }

    /// The round of the matrix the run belongs to: its boot and its repetition within the boot.
    /// Runs of one round ran side by side, so ratios pair them.
    pub fn round(&self) -> u32 {
        self.boot() * ROUNDS_PER_BOOT + self.num("rep") as u32
    }

    pub fn verified(&self) -> bool {
        matches!(self.0.get("verified"), Some(Value::Bool(true)))
    }

    /// Whether the run stopped in a detected deadlock (verified if the deadlock was expected).
    pub fn deadlock(&self) -> bool {
        matches!(self.0.get("deadlock"), Some(Value::Bool(true)))
    }

    /// The run as a JSON object, fields in name order.
    pub fn to_json(&self) -> String {
        let fields: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::Str(s) => format!("\"{}\"", escape(s)),
                    Value::Num(n) => format!("{n}"),
                    Value::Bool(b) => format!("{b}"),
                };
                format!("\"{}\":{}", escape(k), v)
            })
            .collect();
        format!("{{{}}}", fields.join(","))
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Parses one flat JSON object.
pub fn parse(line: &str) -> Result<Run, String> {
    let mut p = Parser {
        s: line.trim().as_bytes(),
        i: 0,
    };
    p.expect(b'{')?;
    let mut run = Run::default();
    p.ws();
    if p.peek() == Some(b'}') {
        return Ok(run);
    }
    loop {
        p.ws();
        let k = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        let v = match p.peek() {
            Some(b'"') => Value::Str(p.string()?),
            Some(b't') => p.word("true", Value::Bool(true))?,
            Some(b'f') => p.word("false", Value::Bool(false))?,
            _ => Value::Num(p.number()?),
        };
        run.0.insert(k, v);
        p.ws();
        match p.next() {
            Some(b',') => continue,
            Some(b'}') => break,
            _ => return Err(format!("expected , or }} at byte {}", p.i)),
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("trailing bytes at {}", p.i));
    }
    Ok(run)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        self.i += 1;
        c
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.next() == Some(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at byte {}", c as char, self.i - 1))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next() {
                Some(b'"') => break,
                Some(b'\\') => match self.next() {
                    Some(c @ (b'"' | b'\\' | b'/')) => out.push(c),
                    Some(b'n') => out.push(b'\n'),
                    Some(b't') => out.push(b'\t'),
                    _ => return Err(format!("unsupported escape at byte {}", self.i)),
                },
                Some(c) => out.push(c),
                None => return Err("unterminated string".into()),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("expected {w} at byte {}", self.i))
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.i;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        ) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("bad number at byte {start}"))
    }
}

/// The `bench` section of a VM tests log.
#[derive(Debug, Default)]
pub struct Bench {
    /// Every line of the section that is a JSON object, with its line number (from 1).
    pub runs: Vec<(usize, Run)>,
    /// Why the benchmark did not end well (`##cxlstack end bench rc=N`, N not 0), first only.
    pub end_error: Option<String>,
    /// A section had no end marker: the VM stopped during the benchmark.
    pub unfinished: bool,
}

/// What a line of the log is to the bench section.
enum Line<'a> {
    Begin,
    End(Option<i64>),
    Other(&'a [u8]),
}

fn classify(line: &[u8]) -> Line<'_> {
    let marker = |m: &str| {
        line.strip_prefix(m.as_bytes())
            .filter(|r| r.is_empty() || r[0].is_ascii_whitespace())
    };
    if marker("##cxlstack begin bench").is_some() {
        Line::Begin
    } else if let Some(rest) = marker("##cxlstack end bench") {
        let rc = std::str::from_utf8(rest).ok().map(str::trim);
        Line::End(rc.and_then(|r| r.strip_prefix("rc=")?.parse().ok()))
    } else {
        Line::Other(line)
    }
}

/// Whether the line, after leading blanks, opens a JSON object.
fn starts_json(line: &[u8]) -> bool {
    line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Reads the bench section of a VM tests log. The log is bytes from a serial port: only the
/// JSON lines inside the section must be UTF-8, other lines are never decoded.
pub fn bench_in_log(log: &[u8]) -> Result<Bench, String> {
    let mut bench = Bench::default();
    let mut inside = false;
    for (i, raw) in log.split(|b| *b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        match classify(line) {
            Line::Begin => {
                bench.unfinished |= inside;
                inside = true;
            }
            Line::End(rc) if inside => {
                inside = false;
                let why = match rc {
                    Some(0) => None,
                    Some(rc) => Some(format!("the benchmark exited with rc={rc}")),
                    // No readable status is no proof that the benchmark ended well.
                    None => Some(format!("line {}: no rc=N in the end marker", i + 1)),
                };
                bench.end_error = bench.end_error.take().or(why);
            }
            Line::Other(l) if inside && starts_json(l) => {
                let text = std::str::from_utf8(l)
                    .map_err(|e| format!("line {}: not UTF-8: {e}", i + 1))?;
                let run = parse(text).map_err(|e| format!("line {}: {e}", i + 1))?;
                bench.runs.push((i + 1, run));
            }
            _ => {}
        }
    }
    bench.unfinished |= inside;
    Ok(bench)
}

/// The runs in a VM test log: every line of the `bench` section that is a JSON object.
#[allow(dead_code)] // The runs alone, as tests/report.rs reads them; main.rs checks the rest.
pub fn runs_in_log(log: &str) -> Result<Vec<Run>, String> {
    let bench = bench_in_log(log.as_bytes())?;
    Ok(bench.runs.into_iter().map(|(_, r)| r).collect())
}
