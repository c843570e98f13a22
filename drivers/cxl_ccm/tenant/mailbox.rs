// SPDX-License-Identifier: GPL-2.0

//! RP: the launch in the mailbox, its remote polls and its dequeue.

use kernel::{pr_warn_ratelimited, prelude::*};

use super::poller::pace;
use super::{RingState, Tenant, TenantCore};
use crate::abi::{self, TenantRegs};
use crate::host_copy::CopyJob;
use crate::regio::RegIo;
use crate::Hw;

/// How long a dequeue may stay unanswered before the device is taken as broken: the CXL
/// mailbox's 2 s, as the kernel's CXL driver waits (`CXL_MAILBOX_TIMEOUT_MS`). It used to be
/// 100 ms, which a loaded device (the kasan kernel under forty processes) overran while
/// working, failing launches with `EIO`.
const MAILBOX_TIMEOUT_NS: u64 = 2_000_000_000;

impl TenantCore {
    /// RP: one remote poll of the mailbox; at completion, reads the answer, dequeues the
    /// command and queues the results for copying.
    ///
    /// The dequeue is the paper's final CXL.io message: posted, not waited for here. The
    /// mailbox holds one command, so the next `LAUNCH` checks that the device took the dequeue
    /// before it rings ([`TenantCore::mailbox_free`]), by which time the device has had the
    /// result load and the host's work to do it in. Waiting for it here added a round trip
    /// through the device's engine thread to every completion, a cost no other mode pays.
    pub(super) fn rp_poll(&self, st: &mut RingState) -> Result {
        let Some(rp) = st.rp else {
            return Ok(());
        };
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let t = self.index;
        self.stalled(self.link.io_read());
        // Pairs with the device's store of `mbox_done` after status and result.
        let done = hw
            .regs
            .read_reg(abi::tenant_reg(t, TenantRegs::TREG_MBOX_DONE))?;
        st.counters.polls += 1;
        if done != rp.seq {
            st.counters.empty_polls += 1;
            return Ok(());
        }
        self.stalled(self.link.io_read());
        let status = hw
            .regs
            .read_reg(abi::tenant_reg(t, TenantRegs::TREG_MBOX_STATUS))?;
        self.stalled(self.link.io_read());
        let bytes = hw
            .regs
            .read_reg(abi::tenant_reg(t, TenantRegs::TREG_MBOX_RET))?;
        // Dequeue: the next command, its argument, then the doorbell (`writel()`s reach the
        // device in program order).
        let seq = rp.seq.wrapping_add(1);
        let mbox = &hw.regs;
        mbox.write_reg(
            abi::tenant_reg(t, TenantRegs::TREG_MBOX_CMD),
            abi::MBOX_CMD_DEQUEUE,
        )?;
        mbox.write_reg(abi::tenant_reg(t, TenantRegs::TREG_MBOX_ARG), rp.tag)?;
        mbox.write_reg(abi::tenant_reg(t, TenantRegs::TREG_MBOX_DOORBELL), seq)?;
        for _ in 0..3 {
            self.stalled(self.link.io_write());
        }
        st.mbox_seq = seq;
        st.rp = None;
        let status = u16::try_from(status).unwrap_or(abi::STATUS_ABORTED);
        st.producer.push(CopyJob {
            tag: rp.tag,
            status,
            src: rp.src,
            bytes: if status == 0 { bytes } else { 0 },
            cut: rp.cut,
            done: 0,
            checksums: self.layout.checksums,
        })
    }

    /// RP: before a new mailbox command, waits until the device has answered the last one
    /// (the dequeue [`Self::rp_poll`] posted): the mailbox holds one command, and one written
    /// over an unanswered one could be read half old, half new. Usually one remote read; then
    /// polls at the remote polling interval, for at most [`MAILBOX_TIMEOUT_NS`].
    pub(super) fn mailbox_free(&self, hw: &Hw, st: &RingState) -> Result {
        let done = abi::tenant_reg(self.index, TenantRegs::TREG_MBOX_DONE);
        let start = crate::link::now_ns();
        loop {
            let since = crate::link::now_ns();
            self.stalled(self.link.io_read());
            if hw.regs.read_reg(done)? == st.mbox_seq {
                return Ok(());
            }
            if since.saturating_sub(start) > MAILBOX_TIMEOUT_NS {
                pr_warn_ratelimited!(
                    "tenant {}: the device did not answer a dequeue within 2 s\n",
                    self.index
                );
                return Err(EIO);
            }
            self.stalled(pace(since, self.link.remote_poll_ns, true));
        }
    }
}

impl Tenant {
    /// RP: blocks until no launch is outstanding in the mailbox, polling it meanwhile.
    pub(super) fn wait_rp_idle(&self) -> Result {
        loop {
            let since = crate::link::now_ns();
            self.core.progress()?;
            if self.core.state.lock().rp.is_none() {
                return Ok(());
            }
            if kernel::current!().signal_pending() {
                return Err(ERESTARTSYS);
            }
            let ns = self
                .core
                .link
                .remote_poll_ns
                .max(self.core.cfg.poll_interval_ns);
            // This caller's core polls: at the interval, not at the timer's.
            self.core.stalled(pace(since, ns, true));
        }
    }
}
