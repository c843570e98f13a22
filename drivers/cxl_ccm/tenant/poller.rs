// SPDX-License-Identifier: GPL-2.0

//! The poller thread, and who needs it: a `poll()` within its lease, an RP launch outstanding.
//! A `WAIT` in a polled mode polls on its caller's core instead ([`Tenant::poll_step`]), and the
//! poller stands down meanwhile: handing each result over from the thread to the caller cost a
//! wake-up, and a caller that arrived while the thread slept its interval waited for the
//! thread's timer (up to a tick under emulation, traced).

use core::sync::atomic::Ordering;
use kernel::{kthread, prelude::*, sync::Arc};

use super::{Tenant, TenantCore};
use crate::abi;

/// How long a `poll()` keeps the poller polling without a wakeup. A `poll()` caller that gave
/// up leaves no trace in the driver, so the lease is what bounds the polling it started: at its
/// end the poller disarms and wakes the wait queue, and a caller still in `poll()`/`select()`/
/// `epoll_wait()` polls the file again, which re-arms the poller.
const POLL_LEASE_NS: u64 = 10_000_000;

impl TenantCore {
    /// Whether the poller has a reason to poll: an armed lease, and no `WAIT` polling already.
    fn wanted(&self) -> bool {
        self.demand.waiters.load(Ordering::Acquire) == 0
            && self.demand.armed.load(Ordering::Acquire)
    }

    /// The tenant's polling interval: RP polls the mailbox at the remote polling interval (the
    /// device's model if none given), the other modes their rings at the configured one.
    pub(super) fn poll_interval_ns(&self) -> u64 {
        match (self.cfg.mode, self.cfg.poll_interval_ns) {
            (abi::MODE_RP, 0) => self.link.remote_poll_ns,
            (_, ns) => ns,
        }
    }

    /// One poll, by the poller or by a `WAIT`: drives an RP launch, copies queued results and
    /// scans the rings ([`TenantCore::progress`]). Once it finds records or fails, it disarms
    /// the lease and wakes every waiter (`poll()` callers, interrupt-mode `WAIT`s).
    pub(super) fn poll_once(&self) -> Result<u32> {
        let found = self.progress();
        match found {
            Ok(0) => self.expire_lease(),
            Ok(_) | Err(_) => {
                if !self.host_work_pending() {
                    self.demand.armed.store(false, Ordering::Release);
                }
                self.wq.wake_all();
            }
        }
        found
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

/// A `WAIT` polling in a polled mode: the poller stands down until it is dropped.
pub(super) struct Waiting<'a>(&'a TenantCore);

impl<'a> Waiting<'a> {
    pub(super) fn new(core: &'a TenantCore) -> Self {
        core.demand.waiters.fetch_add(1, Ordering::AcqRel);
        Waiting(core)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.demand.waiters.fetch_sub(1, Ordering::AcqRel);
        // A lease or an RP launch the `WAIT` left behind (it timed out, or another thread's
        // `poll()` armed meanwhile) is the poller's again.
        self.0.arm_wq.wake_all();
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

/// The poller thread: polls at the tenant's interval while someone needs it (a `poll()` within
/// its lease, an RP launch outstanding, no `WAIT` polling); otherwise it sleeps, so a `poll()`
/// that gave up costs no CPU.
pub(super) fn poller(core: Arc<TenantCore>) -> i32 {
    let interval_ns = core.poll_interval_ns();
    while !kthread::should_stop() {
        if !core.wanted() {
            // Queued before the check, so an `arm()` or the end of a `WAIT` in between is not
            // lost; `kthread_stop` wakes the thread too. A kernel thread gets no signals, so
            // this cannot fail.
            let _ = core
                .arm_wq
                .wait_interruptible_timeout(None, || core.wanted() || kthread::should_stop());
            continue;
        }
        let since = crate::link::now_ns();
        // An error leaves `broken` set; the waiters it woke report it.
        let _ = core.poll_once();
        // Nobody's core waits on this thread's polls (a `WAIT` polls for itself): sleep the
        // interval rather than spin it, and take no time from the host's work.
        core.stalled(pace(since, interval_ns, false));
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
