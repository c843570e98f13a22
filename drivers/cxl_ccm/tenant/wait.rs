// SPDX-License-Identifier: GPL-2.0

//! `WAIT` and `poll()`: waiting for records, and the deadlock check.

use core::sync::atomic::Ordering;
use kernel::{pr_warn_ratelimited, prelude::*};

use super::poller::{pace, Waiting};
use super::{streams, Tenant};
use crate::abi::{self, TenantRegs};
use crate::proto::ring::RingIndex;
use crate::regio::RegIo;
use crate::uapi;

/// How often a polling `WAIT` re-checks the device's state: whether it stopped the tenant and,
/// with `WAIT_FLAG_DEADLOCK`, whether the tenant is stuck. Records are polled far more often.
const STATE_CHECK_NS: u64 = 1_000_000;

impl Tenant {
    /// `WAIT_FLAG_DEADLOCK`: whether fewer than `min` records past `head` are ready and no more
    /// can arrive before a release. Publishes every released credit first, so that the device
    /// has been given everything the caller gave back.
    fn stuck(&self, head: u32, min: u32) -> Result<bool> {
        let core = self.core();
        let mut st = core.state.lock();
        core.scan_locked(&mut st)?;
        if core.ready_after(head) >= min {
            return Ok(false);
        }
        if !streams(core.cfg.mode) {
            // RP, BS: the driver is the producer; what is still queued after a drain has no
            // room under the released heads, and what the device completes next queues behind.
            if st.producer.is_pending() {
                core.drain(&mut st)?;
            }
            return Ok(st.producer.is_pending());
        }
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let (md_head, pl_head) = (st.md_head, st.gap.head());
        let (Ok(md), Ok(pl)) = (st.md_pub.flush(md_head), st.pl_pub.flush(pl_head)) else {
            pr_warn_ratelimited!("WAIT: heads out of the device's credit window\n");
            return Err(EIO);
        };
        core.store_heads(&hw, &mut st, md, pl)?;
        // A CXL.io register read. Acquire: pairs with the device's release store.
        core.stalled(core.link.io_read());
        let blocked = hw
            .regs
            .read_reg(abi::tenant_reg(self.index, TenantRegs::TREG_CREDIT_BLOCKED))?;
        // Blocked under older heads is not enough: the device has yet to read the new ones.
        if blocked != abi::credit_blocked(st.md_pub.published().raw(), st.pl_pub.published().raw())
        {
            return Ok(false);
        }
        // Records may have arrived between the scan above and this read, and filled the rings
        // that the device is now blocked on. It states "blocked" only once what it streamed
        // is visible (on PCIe the register read cannot pass its earlier posted writes), so a
        // second scan sees them: only if they are still too few is it a deadlock.
        core.scan_locked(&mut st)?;
        Ok(core.ready_after(head) < min)
    }

    /// `CXL_CCM_IOC_WAIT`.
    pub(crate) fn wait(&self, arg: &mut uapi::Wait) -> Result {
        let start = crate::link::now_ns();
        let result = self.try_wait(arg);
        crate::trace::cxl_ccm_wait(
            self.dev.nr,
            self.index,
            arg.min_records,
            arg.ready,
            crate::link::now_ns().saturating_sub(start),
            kernel::tracepoint::errno(&result),
        );
        result
    }

    fn try_wait(&self, arg: &mut uapi::Wait) -> Result {
        if arg.min_records == 0
            || arg.flags & !uapi::WAIT_FLAG_DEADLOCK != 0
            || arg.reserved0 != 0
            || arg.reserved != [0; 2]
        {
            pr_warn_ratelimited!(
                "WAIT: min_records must be at least 1, flags known and reserved 0\n"
            );
            return Err(EINVAL);
        }
        let core = self.core();
        {
            let mut st = core.state.lock();
            core.scan_locked(&mut st)?;
            let head = RingIndex::new(arg.metadata_head);
            if head.is_before(st.md_head)
                || head.distance_from(st.md_head) > st.scanned.distance_from(st.md_head)
            {
                pr_warn_ratelimited!(
                    "WAIT: metadata head {} is not a received record\n",
                    arg.metadata_head
                );
                return Err(EINVAL);
            }
        }
        let min = arg.min_records;
        let head = arg.metadata_head;
        let deadline = match arg.timeout_ns {
            uapi::WAIT_FOREVER => None,
            ns => Some(crate::link::now_ns().saturating_add(ns)),
        };
        let deadlock = arg.flags & uapi::WAIT_FLAG_DEADLOCK != 0;
        // AXLE_IRQ sleeps until the interrupt; a deadlock check must see the device block
        // without an interrupt for it, so it polls like the other modes.
        let irq = core.cfg.mode == abi::MODE_AXLE_IRQ && !deadlock;
        // Held while this call polls: the poller stands down meanwhile.
        let _polling = (!irq).then(|| Waiting::new(core));
        // When the device's state (a stopped tenant, a deadlock) is next checked: at once, then
        // every millisecond; records are polled at the tenant's interval.
        let mut check_at = 0;
        loop {
            // The outputs are filled in on a timeout too.
            let ready = core.ready_after(head);
            arg.ready = ready;
            arg.metadata_tail = core.scanned.load(Ordering::Acquire);
            if ready >= min {
                return Ok(());
            }
            let now = crate::link::now_ns();
            let check = now >= check_at;
            if check {
                check_at = now.saturating_add(STATE_CHECK_NS);
            }
            if check && deadlock && self.stuck(head, min)? {
                arg.ready = core.ready_after(head);
                arg.metadata_tail = core.scanned.load(Ordering::Acquire);
                crate::trace::cxl_ccm_deadlock(self.dev.nr, self.index, min, arg.ready);
                return Err(EDEADLK);
            }
            if arg.timeout_ns == 0 {
                return Err(EAGAIN);
            }
            if deadline.is_some_and(|d| now >= d) {
                return Err(ETIMEDOUT);
            }
            if check {
                if let Some(code) = self.tenant_error()? {
                    pr_warn_ratelimited!("WAIT: the device stopped the tenant (status {})\n", code);
                    return Err(EIO);
                }
            }
            if irq {
                self.sleep_for_interrupt(head, min, deadline)?;
            } else {
                self.poll_step(deadline.is_some())?;
            }
        }
    }

    /// A polled mode's `WAIT`: one poll on the caller's core, then the polling interval, spun
    /// if short. The caller's core polls, as in the paper's flows (RP: remotely, the mailbox;
    /// AXLE: its local rings); a signal ends the wait (`EINTR` if it has a deadline, else it
    /// is restarted).
    ///
    /// The core is stalled for the whole step, as a consumer polling its rings is: the poll's
    /// own code counts, not only the link time it models. (Its link time is already counted;
    /// the poller stands down meanwhile, so what else lands in `stall_ns` meanwhile is another
    /// thread's rare `LAUNCH` or `RELEASE` on the tenant, and is at most not double-counted.)
    fn poll_step(&self, finite: bool) -> Result {
        let core = self.core();
        let since = crate::link::now_ns();
        let counted = core.stall_ns.load(Ordering::Relaxed);
        let found = core.poll_once();
        let empty = matches!(found, Ok(0));
        let pending = empty && kernel::current!().signal_pending();
        if empty && !pending {
            pace(since, core.poll_interval_ns(), true);
        }
        let counted = core.stall_ns.load(Ordering::Relaxed).wrapping_sub(counted);
        core.stalled(
            crate::link::now_ns()
                .saturating_sub(since)
                .saturating_sub(counted),
        );
        if pending {
            return Err(if finite { EINTR } else { ERESTARTSYS });
        }
        found.map(|_| ())
    }

    /// AXLE_IRQ's `WAIT`: sleeps until the interrupt handler wakes it (or the deadline, or a
    /// 100 ms watchdog against a lost interrupt), then scans.
    fn sleep_for_interrupt(&self, head: u32, min: u32, deadline: Option<u64>) -> Result {
        let core = self.core();
        let watchdog = crate::ns_to_jiffies(100_000_000);
        let step = deadline.map_or(watchdog, |d| {
            let left = d.saturating_sub(crate::link::now_ns());
            crate::ns_to_jiffies(left).min(watchdog)
        });
        let seen = core.interrupts.load(Ordering::Relaxed);
        let woken =
            || core.ready_after(head) >= min || core.interrupts.load(Ordering::Relaxed) != seen;
        match core.wq.wait_interruptible_timeout(Some(step), woken) {
            // A restart would start the timeout again: a caller signalled more often than its
            // timeout would never time out. A finite wait ends with `EINTR` (outputs written)
            // and the caller waits again for what is left of its own deadline.
            Err(e) if e == ERESTARTSYS && deadline.is_some() => return Err(EINTR),
            r => r?,
        };
        if core.ready_after(head) >= min {
            return Ok(());
        }
        // A poller error leaves `broken` set: report it.
        core.progress().map(|_| ())
    }

    /// `poll()`: readable while records beyond the released metadata head are ready.
    pub(crate) fn poll(&self, table: &kernel::wait::PollTable) -> Result<u32> {
        let core = self.core();
        table.register(&core.wq);
        let mut st = core.state.lock();
        if core.scan_locked(&mut st).is_err() {
            return Ok(kernel::wait::POLL_ERROR);
        }
        if st.scanned != st.md_head {
            return Ok(kernel::wait::POLL_READABLE);
        }
        drop(st);
        if self.core.cfg.mode != abi::MODE_AXLE_IRQ {
            self.arm();
        }
        Ok(0)
    }
}
