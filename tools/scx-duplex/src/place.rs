// SPDX-License-Identifier: GPL-2.0

//! Duplex-aware placement: each CPU cluster's read and write traffic (from its running tasks'
//! classes, or counters), and the cluster choice that balances it, with hysteresis.

use crate::hint::{read_share, Class};

/// The traffic a cluster's tasks generate, in task units weighted by read share (percent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// Sum of the read shares of its tasks (percent each).
    pub reads: u32,
    /// Sum of the write shares.
    pub writes: u32,
    /// Tasks counted.
    pub tasks: u32,
}

impl Cluster {
    /// Accounts a task of class `c` entering the cluster (unknown tasks count as load only).
    pub fn enter(&mut self, c: Class) {
        if let Some(r) = read_share(c) {
            self.reads += r;
            self.writes += 100 - r;
        }
        self.tasks += 1;
    }

    /// Accounts a task of class `c` leaving (saturating: a miscount never wraps).
    pub fn leave(&mut self, c: Class) {
        if let Some(r) = read_share(c) {
            self.reads = self.reads.saturating_sub(r);
            self.writes = self.writes.saturating_sub(100 - r);
        }
        self.tasks = self.tasks.saturating_sub(1);
    }

    /// |reads - writes|: 0 is a perfectly interleaved mix.
    pub fn imbalance(&self) -> u32 {
        self.reads.abs_diff(self.writes)
    }

    /// The imbalance after adding a task of class `c`.
    pub fn imbalance_with(&self, c: Class) -> u32 {
        let mut k = *self;
        k.enter(c);
        k.imbalance()
    }
}

/// Imbalance (in percent-of-a-task units) a move must save before a task leaves its cluster.
pub const HYSTERESIS: u32 = 60;

/// Chooses the cluster for a task of class `c` now on `current` (if any): the cluster where the
/// task adds the least imbalance (it may remove some: a reader among writers), fewest tasks
/// breaking ties; but the task stays where it is unless moving saves at least [`HYSTERESIS`],
/// and it never moves while the system is oversubscribed. Unknown tasks stay, or go to the least
/// loaded cluster. `None` only for no clusters.
pub fn choose(
    clusters: &[Cluster],
    c: Class,
    current: Option<usize>,
    oversubscribed: bool,
) -> Option<usize> {
    let here = current.filter(|i| *i < clusters.len());
    if clusters.is_empty() {
        return None;
    }
    if c == Class::Unknown || (oversubscribed && here.is_some()) {
        return here.or_else(|| (0..clusters.len()).min_by_key(|i| clusters[*i].tasks));
    }
    // What the task does to a cluster's imbalance; the current cluster's figures include the
    // task, so it is taken out first to compare staying with moving fairly.
    let cost = |i: usize| {
        let mut k = clusters[i];
        if Some(i) == here {
            k.leave(c);
        }
        let delta = i64::from(k.imbalance_with(c)) - i64::from(k.imbalance());
        (delta, k.tasks)
    };
    let best = (0..clusters.len()).min_by_key(|i| cost(*i))?;
    match here {
        Some(h) if cost(h).0 < cost(best).0 + i64::from(HYSTERESIS) => Some(h),
        _ => Some(best),
    }
}
