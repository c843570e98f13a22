// SPDX-License-Identifier: GPL-2.0

//! The driver's counters of one device, for the `stats` file, the scheduler and the tests.
//!
//! Each counter is only ever added to, with relaxed atomics: nothing is ordered by them, they
//! are read as a snapshot that may be a moment old.

use core::sync::atomic::{AtomicU64, Ordering};

/// One counter of [`Stats`].
#[derive(Clone, Copy)]
pub(crate) enum Counter {
    Submitted,
    Completed,
    Errors,
    Polled,
    HostRuns,
    /// Requests that waited for a migration to end.
    Parked,
    /// Requests the device refused with `EAGAIN` and the driver routed again.
    Reroutes,
    /// Completed migrations.
    Migrations,
    /// Bytes of finished writes, as the application wrote them.
    WrittenBytes,
    /// Bytes the device stored for them (smaller when compression helped).
    StoredBytes,
    /// Completions the interrupt thread found by polling on, with the interrupt off.
    IrqPolled,
    /// Host steps handed to the host-stage workqueue.
    HostDeferred,
    /// Host runs that found the scratch pool empty and took turns on the shared scratch, under
    /// its spinlock.
    HostSharedScratch,
}

/// How many counters there are: one past the last.
const NR_COUNTERS: usize = Counter::HostSharedScratch as usize + 1;

/// The counters of one device.
#[derive(Default)]
pub(crate) struct Stats {
    counts: [AtomicU64; NR_COUNTERS],
}

impl Stats {
    /// Adds `n` to counter `c`.
    pub(crate) fn add(&self, c: Counter, n: u64) {
        // `c as usize` is below `NR_COUNTERS` by construction; `get` keeps it panic-free.
        if let Some(v) = self.counts.get(c as usize) {
            v.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Adds one to counter `c`.
    pub(crate) fn inc(&self, c: Counter) {
        self.add(c, 1);
    }

    /// The value of counter `c` now.
    pub(crate) fn get(&self, c: Counter) -> u64 {
        self.counts
            .get(c as usize)
            .map_or(0, |v| v.load(Ordering::Relaxed))
    }
}
