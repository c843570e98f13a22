//! Programs: sequences of calls whose arguments may be results of earlier
//! calls, and their text form (one call per line; `@i+0xN` is the result of
//! call i plus N; strings are quoted with \xNN escapes).

use crate::desc::{self, Ty, CALLS};
use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    Int(u64),
    /// The result of call `call` (earlier in the program), plus `add`.
    Res {
        call: usize,
        add: u64,
    },
    Str(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    /// Index into desc::CALLS.
    pub id: usize,
    pub args: Vec<Arg>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Prog {
    pub calls: Vec<Call>,
}

/// The longest program the executor runs (its shared results area).
pub const MAX_CALLS: usize = 48;

impl Call {
    pub fn name(&self) -> &'static str {
        CALLS[self.id].name
    }

    /// The integer value of argument `name` if it is a literal.
    pub fn int(&self, name: &str) -> Option<u64> {
        match self.args.get(desc::arg_index(self.id, name)?)? {
            Arg::Int(v) => Some(*v),
            _ => None,
        }
    }
}

fn escape(s: &str, out: &mut String) {
    out.push('"');
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-:/+=".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
}

fn format_arg(arg: &Arg, out: &mut String) {
    match arg {
        Arg::Int(v) => {
            let _ = write!(out, "{v:#x}");
        }
        Arg::Res { call, add: 0 } => {
            let _ = write!(out, "@{call}");
        }
        Arg::Res { call, add } => {
            let _ = write!(out, "@{call}+{add:#x}");
        }
        Arg::Str(s) => escape(s, out),
    }
}

pub fn format_call(call: &Call) -> String {
    let mut out = String::from(call.name());
    for arg in &call.args {
        out.push(' ');
        format_arg(arg, &mut out);
    }
    out
}

impl Prog {
    /// One call per line.
    pub fn to_text(&self) -> String {
        self.calls.iter().map(|c| format_call(c) + "\n").collect()
    }

    /// The calls joined by " ; ": for the fuzz log, one line per program.
    pub fn to_line(&self) -> String {
        let calls: Vec<String> = self.calls.iter().map(format_call).collect();
        calls.join(" ; ")
    }

    /// Parses to_text() or to_line() output; `#` starts a comment line.
    pub fn parse(text: &str) -> Result<Prog, String> {
        let mut prog = Prog::default();
        for (n, line) in text.split(['\n', ';']).enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let call = parse_call(line).map_err(|e| format!("call {n}: {e}: {line}"))?;
            prog.calls.push(call);
        }
        validate(&prog)?;
        Ok(prog)
    }
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let digits = s
        .strip_prefix("0x")
        .ok_or_else(|| format!("not 0x...: {s}"))?;
    u64::from_str_radix(digits, 16).map_err(|e| format!("{s}: {e}"))
}

fn unescape(s: &str) -> Result<String, String> {
    let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
    let inner = inner.ok_or_else(|| format!("bad string {s}"))?;
    let mut bytes = Vec::new();
    let mut rest = inner.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'\\' {
            let hex = tail.get(1..3).filter(|_| tail.first() == Some(&b'x'));
            let hex = hex.ok_or_else(|| format!("bad escape in {s}"))?;
            let hex = std::str::from_utf8(hex).map_err(|e| e.to_string())?;
            bytes.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
            rest = &tail[3..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

fn parse_arg(tok: &str) -> Result<Arg, String> {
    if let Some(r) = tok.strip_prefix('@') {
        let (call, add) = match r.split_once('+') {
            Some((c, a)) => (c, parse_hex(a)?),
            None => (r, 0),
        };
        let call = call.parse().map_err(|_| format!("bad reference {tok}"))?;
        Ok(Arg::Res { call, add })
    } else if tok.starts_with('"') {
        Ok(Arg::Str(unescape(tok)?))
    } else {
        Ok(Arg::Int(parse_hex(tok)?))
    }
}

fn parse_call(line: &str) -> Result<Call, String> {
    let mut toks = line.split_whitespace();
    let name = toks.next().ok_or("empty call")?;
    let id = desc::lookup(name).ok_or_else(|| format!("unknown call {name}"))?;
    let args = toks.map(parse_arg).collect::<Result<Vec<_>, _>>()?;
    Ok(Call { id, args })
}

/// Checks that every call has its arguments, of the right types, and that
/// every reference names an earlier call producing the right kind.
pub fn validate(prog: &Prog) -> Result<(), String> {
    if prog.calls.len() > MAX_CALLS {
        return Err(format!("{} calls, at most {MAX_CALLS}", prog.calls.len()));
    }
    for (i, call) in prog.calls.iter().enumerate() {
        let d = CALLS.get(call.id).ok_or("bad call id")?;
        if call.args.len() != d.args.len() {
            return Err(format!(
                "call {i} {}: {} args, wants {}",
                d.name,
                call.args.len(),
                d.args.len()
            ));
        }
        for (arg, ad) in call.args.iter().zip(d.args) {
            let ok = match (arg, ad.ty) {
                (Arg::Int(_), Ty::Int(_) | Ty::Res(_)) => true,
                (Arg::Str(_), Ty::Str(_)) => true,
                (Arg::Res { call: c, .. }, Ty::Res(want)) => {
                    *c < i
                        && CALLS[prog.calls[*c].id]
                            .ret
                            .is_some_and(|r| want.accepts(r))
                }
                _ => false,
            };
            if !ok {
                return Err(format!("call {i} {}: bad argument {}", d.name, ad.name));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "ccm_open 0x0 0x2\n\
        ccm_configure @0 0x0 0x0 0x0 0x0 0x20 0x40 0x100 0x0 0x0 0xfffffff0 0x0 0x10000 0x0 0x0 0x0 0x0\n\
        ccm_mmap @0 0x0 0x0 0x1000 0x1 0x1\n\
        map_read @2+0x10\n\
        rfx_open 0x4002\n\
        cfs_write 0x0 0x3 \"64M\\x20x\\x0a\"\n";

    #[test]
    fn text_round_trips() {
        let prog = Prog::parse(TEXT).expect("parse");
        assert_eq!(prog.to_text(), TEXT);
        assert_eq!(Prog::parse(&prog.to_line()).expect("line"), prog);
        assert_eq!(prog.calls[5].args[2], Arg::Str("64M x\n".into()));
    }

    #[test]
    fn bad_references_are_refused() {
        assert!(Prog::parse("map_read @0").is_err());
        assert!(Prog::parse("ccm_open 0x0 0x2\nmap_read @0").is_err());
        assert!(Prog::parse("ccm_open 0x0").is_err());
        assert!(Prog::parse("nosuch 0x0").is_err());
        assert!(Prog::parse("cfs_write 0x0 0x0 \"a\\x4\"").is_err());
    }
}
