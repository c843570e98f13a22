// SPDX-License-Identifier: GPL-2.0

//! The benchmark's lines in a VM test log, parsed.
//!
//! Every line whose first word is `##reflux-bench` (also as a TAP comment, `# ##reflux-bench`)
//! belongs to the benchmark; every other line is ignored. After the marker comes a directive
//! and whitespace-separated `key=value` pairs:
//!
//! ```text
//! ##reflux-bench info key=value ...          (outside a block: the whole run's; calib_host_ns=
//!                                             and calib_guest_ns= give the VM's dilation)
//! ##reflux-bench begin P [round=R] [key=value ...] (R ≥ 1, default 1; the other pairs are
//!                                             added to the block's info)
//! ##reflux-bench info key=value ...          (inside a block: the block's)
//! ##reflux-bench sample t_ms= mbps= temp_mc= throttled=0|1 [inflight_permille=] [KIND=host|device ...]
//! ##reflux-bench migration from=host|device to=host|device drain_ns= ckpt_ns= handover_ns= rebuild_ns= total_ns= [actor=] [t_ms=]
//! ##reflux-bench fio bw_mbps= verify=ok|fail [errors=]
//! ##reflux-bench end P [key=value ...]       (the pairs are ignored)
//! ##reflux-bench point suite=bs|keys|qd paradigm=P rw=read|write|randread|randwrite bs=BYTES
//!                qd=N dist=seq|uniform|zipf|normal|pareto rep=R bw_mbps= iops= cpu_ns_per_gib=
//!                verify=ok|fail                (outside a block; every key required)
//! ```
//!
//! A paradigm P is one of A, B, Bq, C, H, or a variant of C, `C+NAME` with NAME of `a-z` and
//! `_` (C with one of the scheduler's extensions on); a point's may also be `P`, a pipeline
//! without a compute stage (the store alone). The VM interleaves the rounds (round 1:
//! A B Bq C H, round 2: A B Bq C H, ...), so a paradigm has a block per round.
//!
//! Values have no spaces and may be empty; a value may contain `=` (the key ends at the first).
//! Unknown keys are kept (in `extra`; a sample's unknown key whose value is `host` or `device`
//! is an actor's placement). Numbers are finite and at least 0, but for `temp_mc` and a
//! migration's `t_ms`; `round`, `bs`, `qd` and `rep` are whole numbers. A line that does not
//! follow this is an error naming its line number: an unknown directive, a token that is not
//! `key=value`, a key twice on one line, a missing or ill-typed known key, an unknown paradigm,
//! suite, rw or dist, a sample, migration or fio line outside a block, a point inside one, a
//! second fio line, a second block of one paradigm in one round, nested or unmatched
//! begin/end, a block without its end, or sample times that go back.

mod name;
mod pairs;
mod point;
mod record;

use std::fmt;

pub use name::{is_paradigm, report_order, variant, PARADIGMS, VARIANT_PREFIX};
pub use pairs::{field, Fields, Value};
pub use point::{Dist, Point, Rw, Suite};
pub use record::{Fio, Migration, Place, Sample};

use pairs::Pairs;

/// The first word of the benchmark's lines.
pub const MARKER: &str = "##reflux-bench";

/// One paradigm's block: one round of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Paradigm {
    pub name: String,
    /// Its round, from 1.
    pub round: u32,
    /// The line of its `begin`.
    pub line: usize,
    pub info: Fields,
    /// In time order.
    pub samples: Vec<Sample>,
    pub migrations: Vec<Migration>,
    pub fio: Option<Fio>,
}

/// Everything the benchmark printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bench {
    /// `info` lines outside the blocks.
    pub info: Fields,
    /// The blocks, in log order.
    pub paradigms: Vec<Paradigm>,
    /// The sweeps' points, in log order.
    pub points: Vec<Point>,
}

impl Bench {
    /// The paradigm's block of the lowest round.
    pub fn get(&self, name: &str) -> Option<&Paradigm> {
        self.rounds(name).into_iter().next()
    }

    /// The paradigm's blocks, by round.
    pub fn rounds(&self, name: &str) -> Vec<&Paradigm> {
        let mut v: Vec<&Paradigm> = self.paradigms.iter().filter(|p| p.name == name).collect();
        v.sort_by_key(|p| p.round);
        v
    }

    /// The paradigms that have a block, in report order.
    pub fn names(&self) -> Vec<&str> {
        report_order(self.paradigms.iter().map(|p| p.name.as_str()))
    }
}

/// A malformed line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// 1-based.
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for Error {}

/// The rest of a benchmark line after its marker, `None` for any other line.
fn directive(line: &str) -> Option<&str> {
    let mut l = line.trim();
    if let Some(tap) = l.strip_prefix("# ") {
        if tap.trim_start().starts_with(MARKER) {
            l = tap.trim_start();
        }
    }
    let rest = l.strip_prefix(MARKER)?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        Some(rest.trim())
    } else {
        None
    }
}

/// Adds `new` to `info`, a later value of a key replacing the earlier.
fn merge_info(info: &mut Fields, new: Fields) {
    for (k, v) in new {
        match info.iter_mut().find(|f| f.0 == k) {
            Some(f) => f.1 = v,
            None => info.push((k, v)),
        }
    }
}

/// The parse so far: what was read, and the block that is open.
#[derive(Default)]
struct Parser {
    bench: Bench,
    open: Option<Paradigm>,
}

impl Parser {
    /// One benchmark line (`rest` after the marker), line `n`.
    fn line(&mut self, n: usize, rest: &str) -> Result<(), String> {
        let mut tokens = rest.split_whitespace();
        let word = tokens.next().ok_or("directive missing")?;
        match word {
            "begin" => {
                let name = name::check(word, tokens.next())?;
                self.begin(n, name, Pairs::parse(tokens)?)
            }
            "end" => {
                let name = name::check(word, tokens.next())?;
                Pairs::parse(tokens)?;
                self.end(name)
            }
            "info" => {
                let fields = Pairs::parse(tokens)?.rest();
                match &mut self.open {
                    Some(p) => merge_info(&mut p.info, fields),
                    None => merge_info(&mut self.bench.info, fields),
                }
                Ok(())
            }
            "point" => {
                if let Some(p) = &self.open {
                    return Err(format!(
                        "point inside paradigm {} (begun on line {})",
                        p.name, p.line
                    ));
                }
                let pairs = Pairs::parse(tokens).map_err(|e| format!("point: {e}"))?;
                let point = point::point(n, pairs).map_err(|e| format!("point: {e}"))?;
                self.bench.points.push(point);
                Ok(())
            }
            "sample" | "migration" | "fio" => {
                let pairs = Pairs::parse(tokens).map_err(|e| format!("{word}: {e}"))?;
                self.in_block(word, pairs)
            }
            _ => Err(format!("unknown directive {word:?}")),
        }
    }

    fn begin(&mut self, n: usize, name: &str, mut pairs: Pairs) -> Result<(), String> {
        if let Some(p) = &self.open {
            return Err(format!(
                "begin {name} inside paradigm {} (begun on line {})",
                p.name, p.line
            ));
        }
        let round = pairs.whole("round", 1)?.unwrap_or(1);
        let round = u32::try_from(round).map_err(|_| format!("round={round} is too large"))?;
        if let Some(p) = self
            .bench
            .paradigms
            .iter()
            .find(|p| p.name == name && p.round == round)
        {
            return Err(format!(
                "paradigm {name} round {round} ran already (begun on line {})",
                p.line
            ));
        }
        self.open = Some(Paradigm {
            name: name.to_string(),
            round,
            line: n,
            info: pairs.rest(),
            samples: Vec::new(),
            migrations: Vec::new(),
            fio: None,
        });
        Ok(())
    }

    fn end(&mut self, name: &str) -> Result<(), String> {
        match self.open.take() {
            Some(p) if p.name == name => {
                self.bench.paradigms.push(p);
                Ok(())
            }
            Some(p) => Err(format!(
                "end {name}, but paradigm {} is running (begun on line {})",
                p.name, p.line
            )),
            None => Err(format!("end {name} without begin")),
        }
    }

    /// A sample, migration or fio line, which belongs to the open block.
    fn in_block(&mut self, word: &str, pairs: Pairs) -> Result<(), String> {
        let p = self
            .open
            .as_mut()
            .ok_or_else(|| format!("{word} outside a begin/end block"))?;
        let with_word = |e: String| format!("{word}: {e}");
        match word {
            "sample" => {
                let s = record::sample(pairs).map_err(with_word)?;
                if let Some(last) = p.samples.last() {
                    if s.t_ms < last.t_ms {
                        return Err(format!(
                            "sample: t_ms={} goes back from t_ms={}",
                            s.t_ms, last.t_ms
                        ));
                    }
                }
                p.samples.push(s);
            }
            "migration" => p
                .migrations
                .push(record::migration(pairs).map_err(with_word)?),
            _ => {
                if p.fio.is_some() {
                    return Err(format!("second fio line in paradigm {}", p.name));
                }
                p.fio = Some(record::fio(pairs).map_err(with_word)?);
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Bench, Error> {
        match self.open {
            Some(p) => Err(Error {
                line: p.line,
                msg: format!("begin {} has no end", p.name),
            }),
            None => Ok(self.bench),
        }
    }
}

/// Parses the benchmark's lines out of a VM test log.
pub fn parse_log(text: &str) -> Result<Bench, Error> {
    let mut parser = Parser::default();
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = directive(line) {
            parser
                .line(i + 1, rest)
                .map_err(|msg| Error { line: i + 1, msg })?;
        }
    }
    parser.finish()
}
