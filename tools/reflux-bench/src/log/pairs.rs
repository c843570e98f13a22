// SPDX-License-Identifier: GPL-2.0

//! The `key=value` pairs of a line, and the values of keys the tool does not interpret.

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

    pub fn num(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            Value::Str(_) => None,
        }
    }
}

/// `key=value` pairs in the order they came.
pub type Fields = Vec<(String, Value)>;

/// The value of `key` in `fields`, if any.
pub fn field<'f>(fields: &'f Fields, key: &str) -> Option<&'f Value> {
    fields.iter().find(|f| f.0 == key).map(|f| &f.1)
}

/// The `key=value` pairs of a line, not yet interpreted: each known key is taken out as it is
/// read, and what is left is the line's unknown keys.
pub struct Pairs(pub(super) Vec<(String, String)>);

impl Pairs {
    pub fn parse<'a>(tokens: impl Iterator<Item = &'a str>) -> Result<Pairs, String> {
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

    pub fn take(&mut self, k: &str) -> Option<String> {
        let i = self.0.iter().position(|p| p.0 == k)?;
        Some(self.0.remove(i).1)
    }

    /// A finite number, at least 0 unless `signed`.
    pub fn num(&mut self, k: &str, signed: bool) -> Result<Option<f64>, String> {
        let Some(v) = self.take(k) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() && (signed || n >= 0.0) => Ok(Some(n)),
            _ if signed => Err(format!("{k}={v} is not a number")),
            _ => Err(format!("{k}={v} is not a number ≥ 0")),
        }
    }

    /// A number at least 0 that must be there.
    pub fn need(&mut self, k: &str) -> Result<f64, String> {
        self.num(k, false)?.ok_or_else(|| format!("{k}= missing"))
    }

    /// A whole number at least `min`, if the key is there.
    pub fn whole(&mut self, k: &str, min: u64) -> Result<Option<u64>, String> {
        let Some(v) = self.take(k) else {
            return Ok(None);
        };
        match v.parse::<u64>() {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(format!("{k}={v} is not a whole number ≥ {min}")),
        }
    }

    /// A whole number at least `min` that must be there.
    pub fn need_whole(&mut self, k: &str, min: u64) -> Result<u64, String> {
        self.whole(k, min)?.ok_or_else(|| format!("{k}= missing"))
    }

    /// `verify=ok` (true) or `verify=fail` (false), which must be there.
    pub fn verify(&mut self) -> Result<bool, String> {
        match self.take("verify").as_deref() {
            Some("ok") => Ok(true),
            Some("fail") => Ok(false),
            Some(v) => Err(format!("verify={v} is neither ok nor fail")),
            None => Err("verify= missing".into()),
        }
    }

    /// One of `words` (by its name), which must be there.
    pub fn word<T: Copy>(
        &mut self,
        k: &str,
        words: &[T],
        name: fn(T) -> &'static str,
    ) -> Result<T, String> {
        let v = self.take(k).ok_or_else(|| format!("{k}= missing"))?;
        words
            .iter()
            .copied()
            .find(|w| name(*w) == v)
            .ok_or_else(|| {
                let all: Vec<&str> = words.iter().map(|w| name(*w)).collect();
                format!("{k}={v} is not one of {}", all.join(", "))
            })
    }

    /// The keys left, as the line's unknown keys.
    pub fn rest(self) -> Fields {
        self.0
            .into_iter()
            .map(|(k, v)| (k, Value::of(&v)))
            .collect()
    }
}
