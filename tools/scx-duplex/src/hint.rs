// SPDX-License-Identifier: GPL-2.0

//! Task classes from administrator hints.
//!
//! An administrator marks a cgroup `read`, `write` or `balanced`; a cgroup without a hint takes
//! its parent's; a task's own hint overrides its cgroup's. A task with no hint anywhere is
//! [`Class::Unknown`] (measured traffic, where hardware counters exist, may classify it later).

/// How a task uses memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Mostly reads.
    Read,
    /// Mostly writes.
    Write,
    /// Reads and writes alike.
    Balanced,
    /// No hint and no measurement.
    Unknown,
}

/// A hint value that is not one of the three words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadHint(pub String);

impl core::fmt::Display for BadHint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "hint {:?} is not one of read, write, balanced", self.0)
    }
}

/// Parses a hint as an administrator writes it (surrounding whitespace allowed).
pub fn parse(s: &str) -> Result<Class, BadHint> {
    match s.trim() {
        "read" => Ok(Class::Read),
        "write" => Ok(Class::Write),
        "balanced" => Ok(Class::Balanced),
        other => Err(BadHint(other.to_string())),
    }
}

/// A task's class: its own hint if it has one, else the nearest hint on its cgroup's path from
/// the cgroup itself up to the root (`chain[0]` is the task's cgroup, the last the root).
pub fn resolve(own: Option<Class>, chain: &[Option<Class>]) -> Class {
    own.or_else(|| chain.iter().find_map(|c| *c))
        .unwrap_or(Class::Unknown)
}

/// The read share a class stands for in the traffic accounting (percent).
pub const fn read_share(c: Class) -> Option<u32> {
    match c {
        Class::Read => Some(90),
        Class::Write => Some(10),
        Class::Balanced => Some(50),
        Class::Unknown => None,
    }
}
