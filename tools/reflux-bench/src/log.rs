// SPDX-License-Identifier: GPL-2.0

//! The benchmark's lines in a VM test log, parsed.
//!
//! Every line whose first word is `##reflux-bench` (also as a TAP comment, `# ##reflux-bench`)
//! belongs to the benchmark; every other line is ignored. After the marker comes a directive
//! and whitespace-separated `key=value` pairs:
//!
//! ```text
//! ##reflux-bench info key=value ...          (outside a block: the whole run's)
//! ##reflux-bench begin A|B|C [key=value ...] (the pairs are added to the paradigm's info)
//! ##reflux-bench info key=value ...          (inside a block: the paradigm's)
//! ##reflux-bench sample t_ms= mbps= temp_mc= throttled=0|1 [inflight_permille=] [KIND=host|device ...]
//! ##reflux-bench migration from=host|device to=host|device drain_ns= ckpt_ns= handover_ns= rebuild_ns= total_ns= [actor=] [t_ms=]
//! ##reflux-bench fio bw_mbps= verify=ok|fail [errors=]
//! ##reflux-bench end A|B|C [key=value ...]   (the pairs are ignored)
//! ```
//!
//! Values have no spaces and may be empty; a value may contain `=` (the key ends at the first).
//! Unknown keys are kept (in `extra`; a sample's unknown key whose value is `host` or `device`
//! is an actor's placement). Numbers are finite and at least 0, but for `temp_mc` and a
//! migration's `t_ms`. A line that does not follow this is an error naming its line
//! number: an unknown directive, a token that is not `key=value`, a key twice on one line, a
//! missing or ill-typed known key, a sample, migration or fio line outside a block, a second
//! fio line, a second block of one paradigm, nested or unmatched begin/end, a block without its
//! end, or sample times that go back.

use std::fmt;

/// The first word of the benchmark's lines.
pub const MARKER: &str = "##reflux-bench";

/// The paradigms, in the order they are reported.
/// `Bq` and `H` are not the paper's. `Bq` is request-level dispatch that also weighs each side's
/// queue (a stronger baseline than λ-IO's rule, which is B's). `H` has every stage on the host,
/// never moved: the ceiling of the host's path (fio, io_uring, the driver, the device's commit)
/// that B and C share.
pub const PARADIGMS: [&str; 5] = ["A", "B", "Bq", "C", "H"];

/// A value of a key the tool does not interpret: a number if it reads as a finite one.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(f64),
    Str(String),
}

impl Value {
    pub fn of(s: &str) -> Value {
        match s.parse::<f64>() {
            Ok(n) if n.is_finite() => Value::Num(n),
            _ => Value::Str(s.to_string()),
        }
    }
}

/// `key=value` pairs in the order they came.
pub type Fields = Vec<(String, Value)>;

/// Where an actor runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Host,
    Device,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Device => "device",
        }
    }

    fn of(s: &str) -> Option<Place> {
        match s {
            "host" => Some(Place::Host),
            "device" => Some(Place::Device),
            _ => None,
        }
    }
}

/// One `sample` line: the interval that ended `t_ms` after the paradigm's start.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_ms: f64,
    /// MB/s (10^6 bytes per second) written over the interval.
    pub mbps: f64,
    /// Device temperature, milli-degrees Celsius.
    pub temp_mc: f64,
    pub throttled: bool,
    pub inflight_permille: Option<f64>,
    /// Each actor kind's placement, in line order.
    pub placements: Vec<(String, Place)>,
    pub extra: Fields,
}

/// One `migration` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Migration {
    pub actor: Option<Value>,
    pub from: Place,
    pub to: Place,
    pub drain_ns: f64,
    pub ckpt_ns: f64,
    pub handover_ns: f64,
    pub rebuild_ns: f64,
    pub total_ns: f64,
    pub t_ms: Option<f64>,
    pub extra: Fields,
}

impl Migration {
    /// The migration's cost without the drain: checkpoint, handover and rebuild.
    pub fn move_ns(&self) -> f64 {
        self.ckpt_ns + self.handover_ns + self.rebuild_ns
    }
}

/// The `fio` line of a paradigm.
#[derive(Clone, Debug, PartialEq)]
pub struct Fio {
    pub bw_mbps: f64,
    /// `verify=ok` (else `fail`).
    pub verify_ok: bool,
    pub errors: Option<f64>,
    pub extra: Fields,
}

/// One paradigm's block.
#[derive(Clone, Debug, PartialEq)]
pub struct Paradigm {
    pub name: String,
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
    /// In log order.
    pub paradigms: Vec<Paradigm>,
}

impl Bench {
    pub fn get(&self, name: &str) -> Option<&Paradigm> {
        self.paradigms.iter().find(|p| p.name == name)
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

/// The `key=value` pairs of a line, not yet interpreted.
struct Pairs(Vec<(String, String)>);

impl Pairs {
    fn parse<'a>(tokens: impl Iterator<Item = &'a str>) -> Result<Pairs, String> {
        let mut v: Vec<(String, String)> = Vec::new();
        for t in tokens {
            let (k, val) = t
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("expected key=value, got {t:?}"))?;
            if v.iter().any(|p| p.0 == k) {
                return Err(format!("{k} given twice"));
            }
            v.push((k.to_string(), val.to_string()));
        }
        Ok(Pairs(v))
    }

    fn take(&mut self, k: &str) -> Option<String> {
        let i = self.0.iter().position(|p| p.0 == k)?;
        Some(self.0.remove(i).1)
    }

    /// A finite number, at least 0 unless `signed`.
    fn num(&mut self, k: &str, signed: bool) -> Result<Option<f64>, String> {
        let Some(v) = self.take(k) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() && (signed || n >= 0.0) => Ok(Some(n)),
            _ if signed => Err(format!("{k}={v} is not a number")),
            _ => Err(format!("{k}={v} is not a number ≥ 0")),
        }
    }

    fn need(&mut self, k: &str) -> Result<f64, String> {
        self.num(k, false)?.ok_or_else(|| format!("{k}= missing"))
    }

    fn place(&mut self, k: &str) -> Result<Place, String> {
        let v = self.take(k).ok_or_else(|| format!("{k}= missing"))?;
        Place::of(&v).ok_or_else(|| format!("{k}={v} is neither host nor device"))
    }

    fn rest(self) -> Fields {
        self.0
            .into_iter()
            .map(|(k, v)| (k, Value::of(&v)))
            .collect()
    }
}

fn sample(mut p: Pairs) -> Result<Sample, String> {
    let t_ms = p.need("t_ms")?;
    let mbps = p.need("mbps")?;
    let temp_mc = p
        .num("temp_mc", true)?
        .ok_or_else(|| "temp_mc= missing".to_string())?;
    let throttled = match p.take("throttled").as_deref() {
        Some("0") => false,
        Some("1") => true,
        Some(v) => return Err(format!("throttled={v} is neither 0 nor 1")),
        None => return Err("throttled= missing".into()),
    };
    let inflight_permille = p.num("inflight_permille", false)?;
    let mut placements = Vec::new();
    let mut extra = Vec::new();
    for (k, v) in p.0 {
        match Place::of(&v) {
            Some(place) => placements.push((k, place)),
            None => extra.push((k, Value::of(&v))),
        }
    }
    Ok(Sample {
        t_ms,
        mbps,
        temp_mc,
        throttled,
        inflight_permille,
        placements,
        extra,
    })
}

fn migration(mut p: Pairs) -> Result<Migration, String> {
    Ok(Migration {
        actor: p.take("actor").map(|a| Value::of(&a)),
        from: p.place("from")?,
        to: p.place("to")?,
        drain_ns: p.need("drain_ns")?,
        ckpt_ns: p.need("ckpt_ns")?,
        handover_ns: p.need("handover_ns")?,
        rebuild_ns: p.need("rebuild_ns")?,
        total_ns: p.need("total_ns")?,
        // Relative to the paradigm's start: a migration just before it is negative.
        t_ms: p.num("t_ms", true)?,
        extra: p.rest(),
    })
}

fn fio(mut p: Pairs) -> Result<Fio, String> {
    let bw_mbps = p.need("bw_mbps")?;
    let verify_ok = match p.take("verify").as_deref() {
        Some("ok") => true,
        Some("fail") => false,
        Some(v) => return Err(format!("verify={v} is neither ok nor fail")),
        None => return Err("verify= missing".into()),
    };
    Ok(Fio {
        bw_mbps,
        verify_ok,
        errors: p.num("errors", false)?,
        extra: p.rest(),
    })
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

/// The paradigm named by the first token of a begin or end line.
fn paradigm_name<'a>(word: &str, name: Option<&'a str>) -> Result<&'a str, String> {
    let name = name.ok_or_else(|| format!("{word} needs a paradigm (A, B, Bq, C or H)"))?;
    if PARADIGMS.contains(&name) {
        Ok(name)
    } else {
        Err(format!(
            "{word} {name}: the paradigms are A, B, Bq, C and H"
        ))
    }
}

/// Parses the benchmark's lines out of a VM test log.
pub fn parse_log(text: &str) -> Result<Bench, Error> {
    let mut bench = Bench::default();
    let mut open: Option<Paradigm> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some(rest) = directive(line) else {
            continue;
        };
        let err = |msg: String| Error { line: n, msg };
        let mut tokens = rest.split_whitespace();
        let word = tokens
            .next()
            .ok_or_else(|| err("directive missing".into()))?;
        match word {
            "begin" => {
                let name = paradigm_name(word, tokens.next()).map_err(err)?;
                if let Some(p) = &open {
                    return Err(err(format!(
                        "begin {name} inside paradigm {} (begun on line {})",
                        p.name, p.line
                    )));
                }
                if let Some(p) = bench.get(name) {
                    return Err(err(format!(
                        "paradigm {name} ran already (begun on line {})",
                        p.line
                    )));
                }
                let info = Pairs::parse(tokens).map_err(err)?.rest();
                open = Some(Paradigm {
                    name: name.to_string(),
                    line: n,
                    info,
                    samples: Vec::new(),
                    migrations: Vec::new(),
                    fio: None,
                });
            }
            "end" => {
                let name = paradigm_name(word, tokens.next()).map_err(err)?;
                Pairs::parse(tokens).map_err(err)?;
                match open.take() {
                    Some(p) if p.name == name => bench.paradigms.push(p),
                    Some(p) => {
                        return Err(err(format!(
                            "end {name}, but paradigm {} is running (begun on line {})",
                            p.name, p.line
                        )))
                    }
                    None => return Err(err(format!("end {name} without begin"))),
                }
            }
            "info" => {
                let fields = Pairs::parse(tokens).map_err(err)?.rest();
                match &mut open {
                    Some(p) => merge_info(&mut p.info, fields),
                    None => merge_info(&mut bench.info, fields),
                }
            }
            "sample" | "migration" | "fio" => {
                let p = open
                    .as_mut()
                    .ok_or_else(|| err(format!("{word} outside a begin/end block")))?;
                let pairs = Pairs::parse(tokens).map_err(|e| err(format!("{word}: {e}")))?;
                let with_word = |e: String| err(format!("{word}: {e}"));
                match word {
                    "sample" => {
                        let s = sample(pairs).map_err(with_word)?;
                        if let Some(last) = p.samples.last() {
                            if s.t_ms < last.t_ms {
                                return Err(err(format!(
                                    "sample: t_ms={} goes back from t_ms={}",
                                    s.t_ms, last.t_ms
                                )));
                            }
                        }
                        p.samples.push(s);
                    }
                    "migration" => p.migrations.push(migration(pairs).map_err(with_word)?),
                    _ => {
                        if p.fio.is_some() {
                            return Err(err(format!("second fio line in paradigm {}", p.name)));
                        }
                        p.fio = Some(fio(pairs).map_err(with_word)?);
                    }
                }
            }
            _ => return Err(err(format!("unknown directive {word:?}"))),
        }
    }
    if let Some(p) = open {
        return Err(Error {
            line: p.line,
            msg: format!("begin {} has no end", p.name),
        });
    }
    Ok(bench)
}
