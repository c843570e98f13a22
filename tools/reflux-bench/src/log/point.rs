// SPDX-License-Identifier: GPL-2.0

//! A `point` line: one repetition of one paradigm at one point of a sweep (a block size, a key
//! distribution, a queue depth), outside the paradigms' blocks.

use super::name;
use super::pairs::{Fields, Pairs};

/// An enum of words as the log spells them, with every word in `ALL` (in report order).
macro_rules! words {
    ($(#[$m:meta])* $name:ident { $($v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $name {
            $($v),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$v),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$v => $s),+
                }
            }
        }
    };
}

words! {
    /// Which sweep a point belongs to.
    Suite { Bs = "bs", Keys = "keys", Qd = "qd" }
}

words! {
    /// fio's `rw=`.
    Rw { Read = "read", Write = "write", RandRead = "randread", RandWrite = "randwrite" }
}

words! {
    /// The distribution of the offsets: sequential, or fio's `random_distribution`.
    Dist { Seq = "seq", Uniform = "uniform", Zipf = "zipf", Normal = "normal", Pareto = "pareto" }
}

impl Suite {
    /// What the sweep varies, for the table and the plots.
    pub fn title(self) -> &'static str {
        match self {
            Suite::Bs => "block-size sweep",
            Suite::Keys => "key distribution",
            Suite::Qd => "host CPU at queue depth",
        }
    }
}

/// A point's paradigm when the pipeline has no compute stage (the device only stores), so
/// that there is nothing to place: the block-size sweep's reference.
pub const PASSTHROUGH: &str = "P";

/// One `point` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Its line in the log, to name it.
    pub line: usize,
    pub suite: Suite,
    pub paradigm: String,
    pub rw: Rw,
    /// Bytes.
    pub bs: u64,
    pub qd: u64,
    pub dist: Dist,
    /// The repetition: points of one rep ran side by side, so they are paired by it.
    pub rep: u32,
    pub bw_mbps: f64,
    pub iops: f64,
    /// Host CPU time per GiB moved.
    pub cpu_ns_per_gib: f64,
    pub verify_ok: bool,
    pub extra: Fields,
}

impl Point {
    /// `suite=bs paradigm=C rw=write bs=4096 qd=1 dist=seq rep=2`: what names the point.
    pub fn label(&self) -> String {
        format!(
            "suite={} paradigm={} rw={} bs={} qd={} dist={} rep={}",
            self.suite.name(),
            self.paradigm,
            self.rw.name(),
            self.bs,
            self.qd,
            self.dist.name(),
            self.rep
        )
    }
}

pub(super) fn point(line: usize, mut p: Pairs) -> Result<Point, String> {
    let suite = p.word("suite", Suite::ALL, Suite::name)?;
    let paradigm = p.take("paradigm").ok_or("paradigm= missing")?;
    if paradigm != PASSTHROUGH {
        name::check("paradigm=", Some(&paradigm))?;
    }
    let rw = p.word("rw", Rw::ALL, Rw::name)?;
    let bs = p.need_whole("bs", 0)?;
    let qd = p.need_whole("qd", 0)?;
    let dist = p.word("dist", Dist::ALL, Dist::name)?;
    let rep = p.need_whole("rep", 0)?;
    let rep = u32::try_from(rep).map_err(|_| format!("rep={rep} is too large"))?;
    Ok(Point {
        line,
        suite,
        paradigm,
        rw,
        bs,
        qd,
        dist,
        rep,
        bw_mbps: p.need("bw_mbps")?,
        iops: p.need("iops")?,
        cpu_ns_per_gib: p.need("cpu_ns_per_gib")?,
        verify_ok: p.verify()?,
        extra: p.rest(),
    })
}
