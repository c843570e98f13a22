// SPDX-License-Identifier: GPL-2.0

//! The per-task half of the policy (Algorithm 1, phases 3 and 4): `bpf/duplex_policy.h`, the
//! functions the BPF program inlines, called here through their exported copies.

use crate::ffi;

pub use crate::ffi::{Cluster, Knobs, Signal};

/// How a task uses memory: `enum duplex_class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Class {
    /// No hint.
    Unknown = 0,
    /// Mostly reads.
    Read = 1,
    /// Mostly writes.
    Write = 2,
    /// Reads and writes alike.
    Balanced = 3,
}

/// What [`choose`] did: `enum duplex_verdict`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Already on the best cluster (or no cluster at all).
    Kept,
    /// A first cluster.
    Placed,
    /// Moved to a better cluster.
    Moved,
    /// A better cluster exists but the saving is below the hysteresis.
    Stayed,
}

impl Verdict {
    fn from_c(v: u32) -> Self {
        // scx_duplex.h: the verdicts are the statistics they feed.
        match v {
            4 => Self::Placed,
            5 => Self::Moved,
            6 => Self::Stayed,
            _ => Self::Kept,
        }
    }
}

/// Whether the task's measured signal replaces its hint.
pub fn trusted(k: &Knobs, s: &Signal) -> bool {
    // SAFETY: both pointers come from references; the function only reads them.
    unsafe { ffi::duplex_trusted(k, s) }
}

/// The read share (percent) the task counts for in its cluster.
pub fn task_share(k: &Knobs, c: Class, s: &Signal) -> u32 {
    // SAFETY: as in `trusted`.
    unsafe { ffi::duplex_task_share(k, c as u32, s) }
}

/// Folds events into the task's signal; true when they made a sample.
pub fn observe(s: &mut Signal, reads: u64, writes: u64, k: &Knobs) -> bool {
    // SAFETY: `s` is exclusively borrowed, `k` only read.
    unsafe { ffi::duplex_observe(s, reads, writes, k) }
}

/// A task of read share `share` enters the cluster.
pub fn enter(c: &mut Cluster, share: u32) {
    // SAFETY: `c` is exclusively borrowed.
    unsafe { ffi::duplex_account(c, share, 1) }
}

/// A task of read share `share` leaves the cluster.
pub fn leave(c: &mut Cluster, share: u32) {
    // SAFETY: as in `enter`.
    unsafe { ffi::duplex_account(c, share, -1) }
}

/// What placing the task on `c` costs (`own`: it is counted there already).
pub fn cost(c: &Cluster, share: u32, own: bool, k: &Knobs) -> i64 {
    // SAFETY: read-only pointers from references.
    unsafe { ffi::duplex_cost(c, share, own, k) }
}

/// The cluster for a task of read share `share` now on `here` (counted there if `own`).
pub fn choose(
    clusters: &[Cluster],
    share: u32,
    here: Option<usize>,
    own: bool,
    k: &Knobs,
) -> (Option<usize>, Verdict) {
    let here = here.map_or(-1, |h| h as i32);
    let mut verdict = 0u32;
    // SAFETY: the function reads `len` clusters (at most 16) from the slice.
    let cl = unsafe {
        ffi::duplex_choose(
            clusters.as_ptr(),
            clusters.len() as u32,
            share,
            here,
            own,
            k,
            &mut verdict,
        )
    };
    (usize::try_from(cl).ok(), Verdict::from_c(verdict))
}

/// The task's time slice, ns.
pub fn task_slice(k: &Knobs, c: Class, s: &Signal) -> u64 {
    // SAFETY: read-only pointers from references.
    unsafe { ffi::duplex_task_slice(k, c as u32, s) }
}

/// The vruntime a task enqueues with.
pub fn vruntime(vruntime: u64, mvruntime: u64, lag: u64) -> u64 {
    // SAFETY: no pointers.
    unsafe { ffi::duplex_vruntime(vruntime, mvruntime, lag) }
}

/// Its deadline, the queue's order.
pub fn deadline(vruntime: u64, slice: u64, weight: u32) -> u64 {
    // SAFETY: no pointers.
    unsafe { ffi::duplex_deadline(vruntime, slice, weight) }
}

/// The vruntime `used` ns of running cost.
pub fn charge(used: u64, weight: u32) -> u64 {
    // SAFETY: no pointers.
    unsafe { ffi::duplex_charge(used, weight) }
}

/// Whether queue a's head (`da`, if any) is dispatched before queue b's.
pub fn first(a: Option<u64>, b: Option<u64>) -> bool {
    // SAFETY: no pointers.
    unsafe { ffi::duplex_first(a.is_some(), a.unwrap_or(0), b.is_some(), b.unwrap_or(0)) }
}
