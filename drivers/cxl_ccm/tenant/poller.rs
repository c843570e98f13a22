// SPDX-License-Identifier: GPL-2.0

//! The poller thread, and who needs it: a `WAIT` in progress, a `poll()` within its lease, an
//! RP launch outstanding.

use core::sync::atomic::Ordering;
use kernel::{kthread, sync::Arc};

use super::{Tenant, TenantCore};
use crate::abi;

/// How long a `poll()` keeps the poller polling without a wakeup. A `poll()` caller that gave
/// up leaves no trace in the driver, so the lease is what bounds the polling it started: at its
/// end the poller disarms and wakes the wait queue, and a caller still in `poll()`/`select()`/
/// `epoll_wait()` polls the file again, which re-arms the poller.
const POLL_LEASE_NS: u64 = 10_000_000;

impl TenantCore {
    /// Whether the poller has a reason to poll: a `WAIT` in progress, or an armed lease.
    fn wanted(&self) -> bool {
        self.demand.waiters.load(Ordering::Acquire) != 0
            || self.demand.armed.load(Ordering::Acquire)
    }

    /// Ends the lease of `arm()` after an empty pass, when nobody needs the poller: no `WAIT`
    /// in progress, no RP launch to drive, and no `poll()` since the lease began.
    fn expire_lease(&self) {
        if self.demand.waiters.load(Ordering::Acquire) != 0
            || !self.demand.armed.load(Ordering::Acquire)
        {
            return;
        }
        let since = self.demand.armed_at.load(Ordering::Acquire);
        if crate::link::now_ns().saturating_sub(since) < POLL_LEASE_NS || self.host_work_pending() {
            return;
        }
        self.demand.armed.store(false, Ordering::Release);
        // A `poll()` still waiting re-polls and re-arms; one racing with the store above
        // registered on `wq` before arming, so it is woken too.
        self.wq.wake_all();
    }
}

/// A `WAIT` in progress in a polled mode: the poller polls until it is dropped.
pub(super) struct Waiting<'a>(&'a TenantCore);

impl<'a> Waiting<'a> {
    pub(super) fn new(core: &'a TenantCore) -> Self {
        core.demand.waiters.fetch_add(1, Ordering::AcqRel);
        core.arm_wq.wake_all();
        Waiting(core)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.demand.waiters.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Polling intervals shorter than this are spun, not slept: a timer sleep of a few
/// microseconds lasts as long as the wakeup takes (tens of microseconds, more in a VM), so a
/// 1 µs remote polling interval would in truth be the timer's.
const SLEEP_FROM_NS: u64 = 50_000;

/// Waits out a polling interval begun at `since` ([`crate::link::now_ns`]). `spin`: a caller
/// waits for this poll, so its core is the one polling: intervals below [`SLEEP_FROM_NS`] are
/// spun, and the rest of the core's time is given up only when the scheduler asks. Without a
/// caller waiting the poller sleeps the interval instead, and takes no time from the host's
/// work. An interval of 0 is busy polling, as configured.
///
/// Returns the nanoseconds spun: host core stall, as a consumer's local polling is (a core
/// that polls, locally or remotely, is stalled for the whole of it).
pub(super) fn pace(since: u64, interval_ns: u64, spin: bool) -> u64 {
    if interval_ns == 0 {
        kthread::cond_resched();
        0
    } else if spin && interval_ns < SLEEP_FROM_NS {
        let spun = crate::link::spin_until(since.saturating_add(interval_ns));
        kthread::cond_resched();
        spun
    } else {
        let us = (interval_ns / 1000).max(1);
        kthread::usleep_range(us, us + us / 4);
        0
    }
}

/// The poller thread: polls the metadata tail at the tenant's interval while someone waits
/// (a `WAIT` in progress, a `poll()` within its lease, an RP launch outstanding); otherwise it
/// sleeps, so a `WAIT` that timed out or a `poll()` that gave up costs no CPU.
pub(super) fn poller(core: Arc<TenantCore>) -> i32 {
    // RP polls the mailbox at the remote polling interval (the device's model if none given).
    let interval_ns = match (core.cfg.mode, core.cfg.poll_interval_ns) {
        (abi::MODE_RP, 0) => core.link.remote_poll_ns,
        (_, ns) => ns,
    };
    while !kthread::should_stop() {
        if !core.wanted() {
            // Queued before the check, so an `arm()` or a new `WAIT` in between is not lost;
            // `kthread_stop` wakes the thread too. A kernel thread gets no signals, so this
            // cannot fail.
            let _ = core
                .arm_wq
                .wait_interruptible_timeout(None, || core.wanted() || kthread::should_stop());
            continue;
        }
        let since = crate::link::now_ns();
        let woke = match core.progress() {
            Ok(0) => {
                core.expire_lease();
                false
            }
            Ok(_) | Err(_) => {
                if !core.host_work_pending() {
                    core.demand.armed.store(false, Ordering::Release);
                }
                core.wq.wake_all();
                true
            }
        };
        // Having woken the waiters, sleep the interval instead of spinning it: a woken waiter
        // often shares this CPU, and without preemption a spinning poller would keep it off the
        // CPU until the scheduler's slice ran out (milliseconds per RP launch, measured).
        let spin = !woke && core.demand.waiters.load(Ordering::Acquire) != 0;
        core.stalled(pace(since, interval_ns, spin));
    }
    0
}

impl Tenant {
    /// Asks the poller to poll until records arrive or the lease ([`POLL_LEASE_NS`]) ends.
    pub(super) fn arm(&self) {
        self.core
            .demand
            .armed_at
            .store(crate::link::now_ns(), Ordering::Release);
        self.core.demand.armed.store(true, Ordering::Release);
        self.core.arm_wq.wake_all();
    }
}
