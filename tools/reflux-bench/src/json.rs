// SPDX-License-Identifier: GPL-2.0

//! A JSON value and its text, written by hand (the tools use no crates for it).

use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// Written as `null` if not finite.
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    /// Keys in the order given.
    Obj(Vec<(String, Json)>),
}

impl From<f64> for Json {
    fn from(n: f64) -> Json {
        Json::Num(n)
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_string())
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Json {
        v.map_or(Json::Null, Into::into)
    }
}

/// An object from `(key, value)` pairs.
pub fn obj<const N: usize>(fields: [(&str, Json); N]) -> Json {
    Json::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(f) => f.iter().find(|p| p.0 == key).map(|p| &p.1),
            _ => None,
        }
    }

    pub fn num(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn arr(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(a) => Some(a),
            _ => None,
        }
    }

    fn scalar(&self) -> bool {
        !matches!(self, Json::Arr(_) | Json::Obj(_))
    }

    /// The text: an object's fields one per line, arrays of scalars on one line.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, 0);
        s.push('\n');
        s
    }

    fn write(&self, s: &mut String, depth: usize) {
        let pad = |s: &mut String, d: usize| {
            s.push('\n');
            s.extend(std::iter::repeat(' ').take(2 * d));
        };
        match self {
            Json::Null => s.push_str("null"),
            Json::Bool(b) => {
                let _ = write!(s, "{b}");
            }
            Json::Num(n) if n.is_finite() => {
                let _ = write!(s, "{n}");
            }
            Json::Num(_) => s.push_str("null"),
            Json::Str(t) => string(s, t),
            Json::Arr(a) if a.is_empty() => s.push_str("[]"),
            Json::Arr(a) if a.iter().all(Json::scalar) => {
                s.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    v.write(s, depth);
                }
                s.push(']');
            }
            Json::Arr(a) => {
                s.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    pad(s, depth + 1);
                    v.write(s, depth + 1);
                }
                pad(s, depth);
                s.push(']');
            }
            Json::Obj(f) if f.is_empty() => s.push_str("{}"),
            Json::Obj(f) => {
                s.push('{');
                for (i, (k, v)) in f.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    pad(s, depth + 1);
                    string(s, k);
                    s.push_str(": ");
                    v.write(s, depth + 1);
                }
                pad(s, depth);
                s.push('}');
            }
        }
    }
}

fn string(s: &mut String, t: &str) {
    s.push('"');
    for c in t.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", u32::from(c));
            }
            c => s.push(c),
        }
    }
    s.push('"');
}
