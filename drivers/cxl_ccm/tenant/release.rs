// SPDX-License-Identifier: GPL-2.0

//! `RELEASE`: payload slots and metadata released, and heads published to the device as credit.

use core::mem::size_of;
use kernel::{pr_warn_ratelimited, prelude::*, uaccess::UserSlice};

use super::{slots_for, streams, RingState, Tenant};
use crate::proto::ring::RingIndex;
use crate::uapi;

/// Copies a `RELEASE`'s entries in from user space, as bytes.
fn read_release_entries(arg: &uapi::Release) -> Result<KVec<u8>> {
    let entry = size_of::<uapi::ReleaseEntry>();
    let mut raw = KVec::new();
    if arg.count > 0 {
        let ptr = usize::try_from(arg.entries).map_err(|_| EFAULT)?;
        UserSlice::new(ptr, arg.count as usize * entry).read_all(&mut raw, GFP_KERNEL)?;
    }
    Ok(raw)
}

/// Releases the payload slots of the entries in `raw` (of `slot_size`-byte slots), in order,
/// counting each released entry in `arg.processed`; stops at the first the gap head refuses.
fn release_entries(
    st: &mut RingState,
    raw: &[u8],
    slot_size: u32,
    arg: &mut uapi::Release,
) -> Result {
    let entry = size_of::<uapi::ReleaseEntry>();
    for chunk in raw.chunks_exact(entry) {
        let index = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let length = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        // An empty record occupies no slot: nothing to release.
        if length > 0 {
            let slots = slots_for(length, slot_size);
            if let Err(e) = st.gap.release_run(RingIndex::new(index), slots) {
                pr_warn_ratelimited!(
                    "RELEASE: entry {} ({}+{} bytes): {:?}\n",
                    arg.processed,
                    index,
                    length,
                    e
                );
                return Err(EINVAL);
            }
        }
        arg.processed += 1;
    }
    Ok(())
}

/// `RELEASE_METADATA`: moves the metadata head to `metadata_head`, which must lie between the
/// current head and the last record scanned.
fn release_metadata(st: &mut RingState, metadata_head: u32) -> Result {
    let head = RingIndex::new(metadata_head);
    if head.is_before(st.md_head)
        || head.distance_from(st.md_head) > st.scanned.distance_from(st.md_head)
    {
        pr_warn_ratelimited!(
            "RELEASE: metadata head {} outside [{}, {}]\n",
            metadata_head,
            st.md_head.raw(),
            st.scanned.raw()
        );
        return Err(EINVAL);
    }
    st.md_head = head;
    Ok(())
}

impl Tenant {
    /// `CXL_CCM_IOC_RELEASE`; fills the output fields of `arg` even when it fails.
    pub(crate) fn release(&self, arg: &mut uapi::Release) -> Result {
        let result = self.try_release(arg);
        crate::trace::cxl_ccm_release(
            self.dev.nr,
            self.index,
            arg.count,
            arg.metadata_head_published,
            arg.payload_head_published,
            kernel::tracepoint::errno(&result),
        );
        result
    }

    fn try_release(&self, arg: &mut uapi::Release) -> Result {
        let known = uapi::RELEASE_METADATA | uapi::RELEASE_PUBLISH;
        arg.processed = 0;
        if arg.flags & !known != 0 || arg.reserved != [0; 2] {
            pr_warn_ratelimited!("RELEASE: unknown flags or nonzero reserved fields\n");
            return Err(EINVAL);
        }
        if arg.count > uapi::RELEASE_MAX {
            pr_warn_ratelimited!(
                "RELEASE: {} entries, at most {}\n",
                arg.count,
                uapi::RELEASE_MAX
            );
            return Err(EINVAL);
        }
        let raw = read_release_entries(arg)?;
        let core = self.core();
        let mut st = core.state.lock();
        core.scan_locked(&mut st)?;
        let slot_size = core.cfg.streaming_factor.slot_size();
        let mut result = release_entries(&mut st, &raw, slot_size, arg);
        if result.is_ok() && arg.flags & uapi::RELEASE_METADATA != 0 {
            result = release_metadata(&mut st, arg.metadata_head);
        }
        self.publish_heads(&mut st, arg.flags & uapi::RELEASE_PUBLISH != 0)?;
        arg.metadata_head_published = st.md_pub.published().raw();
        arg.payload_head_published = st.pl_pub.published().raw();
        if result.is_err() {
            st.counters.errors += 1;
        }
        if st.producer.is_pending() {
            // RP, BS: the room just released takes the results that waited for it.
            core.drain(&mut st)?;
            drop(st);
            core.wq.wake_all();
        }
        result
    }

    /// After a release: stores the heads into the device's credit line where the publishers'
    /// policy says so (every released head with `publish_all`), under the state lock `st`.
    fn publish_heads(&self, st: &mut RingState, publish_all: bool) -> Result {
        let core = self.core();
        let (md_head, md_tail) = (st.md_head, st.scanned);
        let (pl_head, pl_tail) = (st.gap.head(), st.gap.tail());
        // RP, BS: the driver produces the rings against the heads themselves; the device reads
        // no credit. (The publishers' bound of one lap per publish holds only for a producer
        // that waits for published credit.)
        let streamed = streams(core.cfg.mode);
        let md = if !streamed {
            Ok(None)
        } else if publish_all {
            st.md_pub.flush(md_head)
        } else {
            st.md_pub.on_release(md_head, md_tail)
        };
        let pl = if !streamed {
            Ok(None)
        } else if publish_all {
            st.pl_pub.flush(pl_head)
        } else {
            st.pl_pub.on_release(pl_head, pl_tail)
        };
        let (Ok(md), Ok(pl)) = (md, pl) else {
            // Cannot happen while the device keeps the credit rule; a device bug otherwise.
            pr_warn_ratelimited!("RELEASE: heads out of the device's credit window\n");
            return Err(EIO);
        };
        if md.is_some() || pl.is_some() {
            let hw = self.dev.hw.try_access().ok_or(ENODEV)?;
            core.store_heads(&hw, st, md, pl)?;
        }
        Ok(())
    }
}
