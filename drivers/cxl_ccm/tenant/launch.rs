// SPDX-License-Identifier: GPL-2.0

//! `LAUNCH`: a launch checked, its packet stored into a launch slot (or the mailbox, or the BS
//! store), and its tag published.

use core::mem::offset_of;
use core::sync::atomic::Ordering;
use kernel::{dev_err, kthread, pr_warn_ratelimited, prelude::*, shared_mem::SharedMem};

use super::cut::launch_cut;
use super::{streams, RpLaunch, Tenant};
use crate::abi::{self, LaunchPacket, RingHeaders, TenantRegs};
use crate::host_copy::{CopyJob, Cut};
use crate::proto::ring::RingIndex;
use crate::regio::RegIo;
use crate::uapi;

impl Tenant {
    /// `CXL_CCM_IOC_LAUNCH`; a refused launch counts as an error in the statistics, one that a
    /// signal interrupted does not (it did nothing, and a restarted call would count twice).
    ///
    /// `publish` copies the tag out to the caller. It runs under the launch lock, where the tag
    /// is decided, after every check and wait and before the packet reaches the device: if it
    /// fails, nothing was launched and the tag is not consumed, so no results ever arrive under
    /// a tag the caller could not learn. (Checking writability first and copying out after the
    /// launch would leave a window in which another thread makes the argument read-only.)
    pub(crate) fn launch(
        &self,
        arg: &uapi::Launch,
        publish: impl FnOnce(u32) -> Result,
    ) -> Result<u32> {
        let start = crate::link::now_ns();
        let result = self.try_launch(arg, publish);
        match result {
            Ok(tag) => crate::trace::cxl_ccm_launch(
                self.dev.nr,
                self.index,
                self.core.cfg.mode,
                tag,
                arg.kernel_id,
                // Checked against the input buffer, whose size is a `u32`.
                arg.input_size as u32,
                crate::link::now_ns().saturating_sub(start),
            ),
            Err(e) if e == ERESTARTSYS || e == EINTR => {}
            Err(_) => self.core.state.lock().counters.errors += 1,
        }
        result
    }

    /// Checks a launch against the tenant; returns the input size as a `u32`.
    fn check_launch(&self, arg: &uapi::Launch) -> Result<u32> {
        if arg.tag != 0 {
            pr_warn_ratelimited!("LAUNCH: tag is an output and must be 0\n");
            return Err(EINVAL);
        }
        if arg.flags & !uapi::LAUNCH_SYNC != 0 || arg.reserved != [0; 2] {
            pr_warn_ratelimited!("LAUNCH: unknown flags or nonzero reserved fields\n");
            return Err(EINVAL);
        }
        if arg.flags & uapi::LAUNCH_SYNC != 0 && self.core.cfg.mode != abi::MODE_BS {
            pr_warn_ratelimited!("LAUNCH: SYNC is for bulk-synchronous tenants\n");
            return Err(EINVAL);
        }
        if arg.kernel_id >= u32::from(abi::KERNEL_ID_LIMIT)
            || self.dev.id.kernels & (1 << arg.kernel_id) == 0
        {
            pr_warn_ratelimited!("LAUNCH: kernel {} is not implemented\n", arg.kernel_id);
            return Err(EINVAL);
        }
        if arg.arg_size > abi::MAX_ARG_SIZE {
            pr_warn_ratelimited!(
                "LAUNCH: arg_size {} above {}\n",
                arg.arg_size,
                abi::MAX_ARG_SIZE
            );
            return Err(EINVAL);
        }
        let input_bytes = self.core.layout.input_bytes;
        let in_range = arg
            .input_offset
            .checked_add(arg.input_size)
            .is_some_and(|end| end <= input_bytes);
        let Ok(input_size) = u32::try_from(arg.input_size) else {
            return Err(EINVAL);
        };
        if !in_range {
            pr_warn_ratelimited!(
                "LAUNCH: input {}+{} outside the {}-byte input buffer\n",
                arg.input_offset,
                arg.input_size,
                input_bytes
            );
            return Err(EINVAL);
        }
        Ok(input_size)
    }

    fn try_launch(&self, arg: &uapi::Launch, publish: impl FnOnce(u32) -> Result) -> Result<u32> {
        let input_size = self.check_launch(arg)?;
        let l = self.core.layout;
        // Cannot overflow: `input_offset + input_size <= input_bytes` (checked), and the input
        // and output buffers lie in device memory, whose offsets are `u64`.
        let input_base = l.input + arg.input_offset;
        let src = l.output + arg.input_offset;
        let cut = launch_cut(arg, self.core.cfg.streaming_factor.bytes());
        let mode = self.core.cfg.mode;
        let mut next_tag = self.core.launch.lock();
        let tag = *next_tag;
        match mode {
            abi::MODE_AXLE | abi::MODE_AXLE_IRQ => self.wait_launch_slot(tag)?,
            // One mailbox command at a time: the previous launch must be dequeued.
            abi::MODE_RP => self.wait_rp_idle()?,
            // The previous BS launch returned at its completion (it held the launch lock to
            // it): its slot is free.
            _ => {}
        }
        // RP and BS: room for this launch's results, checked under the launch lock once the
        // previous launch's results were pushed (RP: dequeued; BS: returned), so that no two
        // launches count on the same room and no launched kernel's results are dropped.
        if !streams(mode) && !self.core.state.lock().producer.has_room() {
            pr_warn_ratelimited!(
                "LAUNCH: {} completed launches wait for room in the rings: release first\n",
                crate::host_copy::MAX_PENDING
            );
            return Err(EBUSY);
        }
        // The last step that may fail before the launch: see `launch`.
        publish(tag)?;
        let sync = if mode == abi::MODE_BS {
            abi::LAUNCH_FLAG_SYNC
        } else {
            0
        };
        let packet = LaunchPacket {
            tag,
            // Cannot truncate: checked against KERNEL_ID_LIMIT and MAX_ARG_SIZE above.
            kernel_id: arg.kernel_id as u16,
            flags: arg.flags as u16 | sync,
            tenant: self.index as u16,
            arg_size: arg.arg_size as u16,
            input_size,
            input_base,
            output_base: src,
            args: arg.args,
        };
        let bytes = packet.to_bytes();
        // RP: the ring state, as `progress` holds it while it polls the mailbox.
        let mut rp_state = (mode == abi::MODE_RP).then(|| self.core.state.lock());
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let slot = l.launch_slot(tag);
        if let Some(st) = rp_state.as_ref() {
            self.core.mailbox_free(&hw, st)?;
        }
        // The input the caller stored through its write-combining mapping, then the packet,
        // then the tag: the device acquires the tag and then reads the packet and the input.
        // Each publish drains the write-combining buffers before the stores after it, which is
        // what orders them for a device that does not snoop (HDM-H); the last one pushes the
        // tag out.
        hw.mem.publish(input_base as usize, input_size as usize)?;
        hw.mem.write_bytes(slot + 4, &bytes[4..])?;
        if !crate::skip_publish() {
            hw.mem.publish(slot + 4, bytes.len() - 4)?;
        }
        hw.mem.atomic_u32(slot)?.store(tag, Ordering::Release);
        hw.mem.publish(slot, 4)?;
        self.core.stalled(self.core.link.mem_store());
        if let Some(st) = rp_state.as_mut() {
            let seq = st.mbox_seq.wrapping_add(1);
            let reg = |r| abi::tenant_reg(self.index, r);
            let mbox = &hw.regs;
            mbox.write_reg(reg(TenantRegs::TREG_MBOX_CMD), abi::MBOX_CMD_ENQUEUE)?;
            mbox.write_reg(reg(TenantRegs::TREG_MBOX_ARG), tag)?;
            mbox.write_reg(reg(TenantRegs::TREG_MBOX_DOORBELL), seq)?;
            for _ in 0..3 {
                self.core.stalled(self.core.link.io_write());
            }
            st.mbox_seq = seq;
            st.rp = Some(RpLaunch { seq, tag, cut, src });
        }
        drop(hw);
        drop(rp_state);
        *next_tag = tag.wrapping_add(1);
        // BS keeps the launch lock to its completion: one sync launch at a time per tenant, as
        // the store it models. Its completion record is one per tenant, so a second launch
        // could overwrite the first's before it was seen.
        let _sync = (mode == abi::MODE_BS).then_some(next_tag);
        self.core.state.lock().counters.launched += 1;
        match mode {
            abi::MODE_RP => self.arm(),
            abi::MODE_BS => self.wait_sync(tag, cut, src)?,
            _ => {}
        }
        Ok(tag)
    }

    /// BS: the launch store is answered at completion; the core is stalled until then. Then the
    /// results are loaded into the rings (as far as they fit; the rest as `RELEASE` frees room).
    fn wait_sync(&self, tag: u32, cut: Cut, src: u64) -> Result {
        let at = self.core.layout.window as usize + abi::TWIN_COMPLETION;
        let start = crate::link::now_ns();
        let (status, bytes) = loop {
            {
                let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
                let done = hw
                    .mem
                    .atomic_u32(at + offset_of!(abi::SyncCompletion, done_tag))?;
                // Acquire: pairs with the device's release after status and result; `rmb()`
                // keeps their loads after this one in device memory that is not write-back.
                if done.load(Ordering::Acquire) == tag {
                    kernel::barrier::rmb();
                    let status = hw
                        .mem
                        .atomic_u32(at + offset_of!(abi::SyncCompletion, status))?
                        .load(Ordering::Relaxed);
                    let bytes = hw
                        .mem
                        .atomic_u64(at + offset_of!(abi::SyncCompletion, result_bytes))?
                        .load(Ordering::Relaxed);
                    break (status, bytes);
                }
            }
            if crate::link::now_ns().saturating_sub(start) > 10_000_000_000 {
                dev_err!(
                    &self.dev.dma_dev,
                    "tenant {}: sync launch {} unanswered for 10 s\n",
                    self.index,
                    tag
                );
                return Err(ETIMEDOUT);
            }
            if self.tenant_error()?.is_some() {
                return Err(EIO);
            }
            // No return on an ordinary signal: the packet is stored and its tag consumed, so
            // an interrupted call would lose the results, and a restarted one would launch the
            // kernel again. Like the CXL.mem store it models, a BS launch is answered at
            // completion; the 10 s watchdog above bounds the wait. A task being killed never
            // sees the results, so it need not wait for them (a killable wait): its records
            // still arrive, and the tenant's teardown at the last close disables the device.
            if kernel::fatal_signal::pending() {
                return Err(EINTR);
            }
            kthread::cond_resched();
        };
        // The store's response crosses the link; the core was stalled from the store on.
        self.core
            .stalled(crate::link::now_ns().saturating_sub(start) + self.core.link.mem_load());
        let status = u16::try_from(status).unwrap_or(abi::STATUS_ABORTED);
        let mut st = self.core.state.lock();
        st.producer.push(CopyJob {
            tag,
            status,
            src,
            bytes: if status == 0 { bytes } else { 0 },
            cut,
            done: 0,
            checksums: self.core.layout.checksums,
        })?;
        drop(st);
        self.core.progress()?;
        self.core.wq.wake_all();
        Ok(())
    }

    /// Blocks while every launch slot holds a packet the device has not taken.
    fn wait_launch_slot(&self, tag: u32) -> Result {
        let head_at = offset_of!(RingHeaders, launch);
        let head = self.core.headers_u32(head_at)?;
        let free = || {
            let h = RingIndex::new(head.load(Ordering::Acquire));
            RingIndex::new(tag).distance_from(h) < abi::LAUNCH_SLOTS
        };
        if free() {
            return Ok(());
        }
        let start = crate::link::now_ns();
        let result = self.wait_launch_slot_slow(free);
        let mut st = self.core.state.lock();
        st.counters.launch_waits += 1;
        st.counters.launch_wait_ns += crate::link::now_ns().saturating_sub(start);
        result
    }

    fn wait_launch_slot_slow(&self, free: impl Fn() -> bool) -> Result {
        while !free() {
            if self.tenant_error()?.is_some() {
                return Err(EIO);
            }
            // The device takes packets within microseconds unless it is stalled for credit.
            self.core.wq.wait_interruptible_timeout(Some(1), &free)?;
        }
        Ok(())
    }
}
