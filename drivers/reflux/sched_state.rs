// SPDX-License-Identifier: GPL-2.0

//! What the thermal-aware scheduler of one device keeps outside its thread: its parameters and
//! the log of its last decisions, which the `sched` debugfs file shows. The thread itself is
//! `scheduler.rs`.
//!
//! The log's lock is taken alone, with nothing inside it.

use kernel::{
    kthread::KThread,
    new_mutex, new_spinlock,
    prelude::*,
    sync::{Mutex, SpinLock},
};

use crate::proto::sched::{Decision, SchedParams, Scheduler};

/// Decisions kept for the `sched` file.
pub(crate) const LOG_LEN: usize = 32;

/// The decisions of the last epochs (on the heap: too big for a stack frame).
pub(crate) struct SchedLog {
    entries: KVec<(u64, Option<Decision>)>,
    count: u64,
    /// Migrations the scheduler asked for that failed.
    failed_moves: u64,
    /// The scheduler's state after the last epoch (its flaps, the lookahead's rate and
    /// horizon), for the `sched` file.
    state: Scheduler,
}

impl SchedLog {
    fn new() -> Result<Self> {
        Ok(Self {
            entries: KVec::from_elem((0, None), LOG_LEN, GFP_KERNEL)?,
            count: 0,
            failed_moves: 0,
            state: Scheduler::new(),
        })
    }

    /// Epochs ever logged.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Migrations the scheduler asked for that failed.
    pub(crate) fn failed_moves(&self) -> u64 {
        self.failed_moves
    }

    /// The scheduler's state after the last epoch.
    pub(crate) fn state(&self) -> &Scheduler {
        &self.state
    }

    /// The decisions still held with the time each was taken (monotonic ns), oldest first.
    pub(crate) fn decisions(&self) -> impl Iterator<Item = (u64, &Decision)> {
        let len = self.entries.len() as u64;
        let n = self.count.min(len);
        (self.count - n..self.count).filter_map(move |i| {
            let slot = i.checked_rem(len).unwrap_or(0);
            match self.entries.get(slot as usize) {
                Some((t, Some(d))) => Some((*t, d)),
                _ => None,
            }
        })
    }
}

/// The scheduler's parameters, its thread and its decision log.
#[pin_data]
pub(crate) struct SchedState {
    /// Valid ([`SchedParams::validate`]) at all times.
    #[pin]
    params: SpinLock<SchedParams>,
    /// The scheduler thread, while it runs (`scheduler::set_running`).
    #[pin]
    pub(crate) thread: Mutex<Option<KThread>>,
    #[pin]
    log: SpinLock<SchedLog>,
}

impl SchedState {
    /// A scheduler state with `params` (valid), no thread and an empty log.
    pub(crate) fn new(params: SchedParams) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            params <- new_spinlock!(params),
            thread <- new_mutex!(None),
            log <- new_spinlock!(SchedLog::new()?),
        }? Error)
    }

    /// The scheduler's parameters now.
    pub(crate) fn params(&self) -> SchedParams {
        *self.params.lock()
    }

    /// Changes the parameters with `f`: `EINVAL`, and nothing changed, if the result is not
    /// valid.
    pub(crate) fn update(&self, f: impl FnOnce(&mut SchedParams)) -> Result {
        let mut params = self.params.lock();
        let mut next = *params;
        f(&mut next);
        next.validate().map_err(|_| EINVAL)?;
        *params = next;
        Ok(())
    }

    /// Records `decision`, taken at `now`, and the scheduler's state `sched` after it.
    pub(crate) fn record(&self, now: u64, decision: Decision, sched: Scheduler) {
        let mut log = self.log.lock();
        let i = (log.count % LOG_LEN as u64) as usize;
        if let Some(e) = log.entries.get_mut(i) {
            *e = (now, Some(decision));
        }
        log.count += 1;
        log.state = sched;
    }

    /// Counts a migration the scheduler asked for that failed.
    pub(crate) fn failed_move(&self) {
        self.log.lock().failed_moves += 1;
    }

    /// Runs `f` on the log under its lock (it is too big to copy onto the stack).
    pub(crate) fn with_log<T>(&self, f: impl FnOnce(&SchedLog) -> T) -> T {
        f(&self.log.lock())
    }
}
