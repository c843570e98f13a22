//! A configuration's end-to-end time against a baseline of the same sweep (RP, BS), with a 95 %
//! confidence interval from a paired bootstrap over the repetitions: the bootstrap is
//! bench-stats', shared with reflux-bench so that both report intervals alike.

// The tests include this file by path and each uses only part of it.
#![allow(unused_imports)]

pub use bench_stats::{paired, percentile, RatioCi, XorShift, RESAMPLES};
