// SPDX-License-Identifier: GPL-2.0

//! The host side of the rings: scanning the records the device published, moving the
//! host-driven modes forward, and storing heads into the credit line.

use core::mem::offset_of;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{pr_warn_ratelimited, prelude::*, shared_mem::SharedMem};

use super::{slots_for, RingState, TenantCore};
use crate::abi::{self, RingHeaders};
use crate::host_copy::Rings;
use crate::proto::ring::RingIndex;
use crate::Hw;

impl TenantCore {
    pub(super) fn headers_u32(&self, off: usize) -> Result<&AtomicU32> {
        self.region.atomic_u32(off)
    }

    /// Checks the records published since the last scan; returns how many.
    pub(super) fn scan_locked(&self, st: &mut RingState) -> Result<u32> {
        if st.broken {
            return Err(EIO);
        }
        let tail_at = offset_of!(RingHeaders, metadata);
        // Acquire: pairs with the device's barrier before the tail; the records are visible.
        let tail = RingIndex::new(self.headers_u32(tail_at)?.load(Ordering::Acquire));
        // The rings are write-combining, whose loads are weakly ordered: without a read barrier
        // the record loads below could be performed before the tail load (an acquire load is a
        // plain `MOV` on x86). `rmb()`, not `dma_rmb()`: the latter only orders write-back.
        kernel::barrier::rmb();
        st.counters.polls += 1;
        let new = tail.distance_from(st.scanned);
        if new == 0 {
            st.counters.empty_polls += 1;
            return Ok(0);
        }
        let md = self.cfg.metadata;
        if new > md.capacity() || tail.distance_from(st.md_head) > md.capacity() {
            return self.fail(st, "metadata tail beyond the ring");
        }
        let slot_size = self.cfg.streaming_factor.slot_size();
        let mut bytes = 0u64;
        for _ in 0..new {
            let idx = st.scanned;
            let at = self.layout.metadata_offset as usize
                + md.slot(idx) as usize * abi::METADATA_RECORD_SIZE as usize;
            let mut raw = [0u8; abi::METADATA_RECORD_SIZE as usize];
            self.region.read_bytes(at, &mut raw)?;
            let rec = abi::MetadataRecord::from_bytes(&raw);
            if rec.seq != idx.raw() {
                // A stale or torn record: the fences failed somewhere.
                return self.fail(st, "record with a wrong sequence number");
            }
            if rec.length > 0 {
                let end = RingIndex::new(rec.payload_index)
                    .wrapping_add(slots_for(rec.length, slot_size));
                if st.gap.receive(end).is_err() {
                    return self.fail(st, "record names payload slots out of order");
                }
            }
            if rec.flags & abi::MD_FLAG_FINAL != 0 {
                st.counters.completed += 1;
            }
            bytes += u64::from(rec.length);
            st.scanned = idx.wrapping_add(1);
        }
        self.scanned.store(st.scanned.raw(), Ordering::Release);
        crate::trace::cxl_ccm_records(self.dev.nr, self.index, new, bytes);
        Ok(new)
    }

    fn fail(&self, st: &mut RingState, what: &str) -> Result<u32> {
        st.broken = true;
        st.counters.errors += 1;
        pr_warn_ratelimited!("tenant: device broke the ring protocol: {}\n", what);
        Err(EIO)
    }

    /// Moves the host-driven modes forward: RP polls the mailbox, RP and BS copy results into
    /// the rings while there is room; then scans. Returns the new records.
    pub(super) fn progress(&self) -> Result<u32> {
        let mut st = self.state.lock();
        if self.cfg.mode == abi::MODE_RP {
            self.rp_poll(&mut st)?;
        }
        if st.producer.is_pending() {
            self.drain(&mut st)?;
        }
        self.scan_locked(&mut st)
    }

    /// RP and BS: copies queued results into the rings, as far as the released heads allow.
    pub(super) fn drain(&self, st: &mut RingState) -> Result {
        let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
        let rings = Rings {
            region: &self.region,
            metadata_offset: self.layout.metadata_offset,
            payload_offset: self.layout.payload_offset,
            metadata: self.cfg.metadata,
            payload: self.cfg.payload,
            slot_size: self.cfg.streaming_factor.slot_size(),
        };
        let (pl_head, md_head) = (st.gap.head(), st.md_head);
        st.producer.drain(
            &rings,
            pl_head,
            md_head,
            &hw.mem,
            &self.link,
            &self.stall_ns,
        )?;
        Ok(())
    }

    /// AXLE_IRQ: the device signalled new records with `n` interrupts. Pays their handling on
    /// this (the host's interrupt) path, counts them, and wakes the waiters, who scan.
    pub(crate) fn interrupted(&self, n: u32) {
        self.stalled(self.link.interrupts(n));
        self.interrupts.fetch_add(u64::from(n), Ordering::Relaxed);
        self.wq.wake_all();
    }

    /// RP work the poller must keep driving even if nobody waits: the remote polls of an
    /// outstanding launch. (Results waiting for room need a `RELEASE`, which copies them itself;
    /// polling for them would only burn the CPU the consumer needs.)
    pub(super) fn host_work_pending(&self) -> bool {
        // Unbound, an RP launch is never answered (every poll fails with `ENODEV`): the poller
        // must not keep polling it until the file is closed.
        self.dev.hw.is_available() && self.state.lock().rp.is_some()
    }

    /// Accounts `ns` of link stall to the tenant.
    pub(super) fn stalled(&self, ns: u64) {
        self.stall_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Records ready after `head`, from the last scan.
    pub(super) fn ready_after(&self, head: u32) -> u32 {
        RingIndex::new(self.scanned.load(Ordering::Acquire)).distance_from(RingIndex::new(head))
    }

    /// Stores a head into the credit line: a CXL.mem store, published so that it leaves the
    /// write-combining buffer (the device reads the line without snooping).
    pub(super) fn store_head(&self, hw: &Hw, metadata: bool, head: RingIndex) -> Result {
        let at = self.layout.credit() + if metadata { 0 } else { 4 };
        // Release: the reads of the released slots happen before the device may reuse them.
        hw.mem.atomic_u32(at)?.store(head.raw(), Ordering::Release);
        hw.mem.publish(at, 4)?;
        self.stalled(self.link.mem_store());
        Ok(())
    }

    /// Stores the heads its publishers let go (`md`: the metadata head, `pl`: the payload
    /// head) into the credit line, counting each store in `st`.
    pub(super) fn store_heads(
        &self,
        hw: &Hw,
        st: &mut RingState,
        md: Option<RingIndex>,
        pl: Option<RingIndex>,
    ) -> Result {
        if let Some(h) = md {
            self.store_head(hw, true, h)?;
            st.counters.published += 1;
        }
        if let Some(h) = pl {
            self.store_head(hw, false, h)?;
            st.counters.published += 1;
        }
        Ok(())
    }
}
