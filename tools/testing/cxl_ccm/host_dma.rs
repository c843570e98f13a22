// SPDX-License-Identifier: GPL-2.0

//! The device's DMA engine: writes into a tenant's host region through the shadowed descriptors.
//!
//! A real device turns a bus address into PCIe/CXL.io posted writes. The software device has no
//! link, so it maps each descriptor's bus address (the host has no IOMMU in the test VM, so a
//! bus address is a physical address) and stores through that mapping. The host maps the region
//! write-combining, and so is the kernel's direct-map alias these stores go through: they may be
//! buffered and reordered, which is exactly why the protocol needs its barriers.
//! [`HostRegion::barrier`] is a full fence (`mfence` on x86), which also drains the
//! write-combining buffers, as `wmb()` does.
//!
//! Every address comes from a [`Step`] that `model::dma_plan` computed from a validated
//! [`RegionLayout`](crate::model::dma_plan::RegionLayout), and every access is bounds-checked
//! again by [`SharedMem`], so a bad step fails with `EINVAL` instead of writing elsewhere.

use core::sync::atomic::{fence, Ordering};
use kernel::{
    memremap::{MapMode, MemRemap},
    platform::MemResource,
    prelude::*,
    shared_mem::SharedMem,
};

use crate::abi::{DmaSegment, METADATA_RECORD_SIZE};
use crate::model::dma_plan::{SegAddr, Step};

/// Bytes copied per bounce from device memory to the host.
const BOUNCE: usize = 256;

/// A tenant's host region, as the device reaches it.
///
/// # Invariants
///
/// `maps[i]` maps segment `i` of the tenant's descriptor table, whole.
pub(crate) struct HostRegion {
    maps: KVec<MemRemap>,
}

impl HostRegion {
    /// Maps every segment; fails if one cannot be mapped.
    pub(crate) fn map(segments: &[DmaSegment]) -> Result<Self> {
        let mut maps = KVec::with_capacity(segments.len(), GFP_KERNEL)?;
        for s in segments {
            let res = MemResource {
                start: s.bus_addr,
                size: u64::from(s.len),
            };
            maps.push(MemRemap::new(res, MapMode::WriteBack)?, GFP_KERNEL)?;
        }
        // INVARIANT: one mapping per segment, in order.
        Ok(Self { maps })
    }

    fn segment(&self, dst: SegAddr) -> Result<(&MemRemap, usize)> {
        let map = self.maps.get(dst.segment as usize).ok_or(EINVAL)?;
        Ok((map, dst.offset as usize))
    }

    /// The write barrier between a ring's data and its tail (`wmb()`).
    pub(crate) fn barrier() {
        fence(Ordering::SeqCst);
    }

    /// Stores a ring tail: one aligned 32-bit store, single-copy atomic.
    pub(crate) fn store_u32(&self, dst: SegAddr, value: u32) -> Result {
        let (map, off) = self.segment(dst)?;
        map.atomic_u32(off)?.store(value, Ordering::Release);
        Ok(())
    }

    /// Performs one step of a back-stream; `mem` is the device memory that `CopyPayload`
    /// sources point into.
    pub(crate) fn perform(&self, step: &Step, mem: &MemRemap) -> Result {
        match *step {
            Step::CopyPayload { src, dst, len, .. } => {
                let (map, off) = self.segment(dst)?;
                let mut buf = [0u8; BOUNCE];
                let src = usize::try_from(src).map_err(|_| EINVAL)?;
                let mut done = 0usize;
                let len = len as usize;
                while done < len {
                    let n = (len - done).min(BOUNCE);
                    mem.read_bytes(src + done, &mut buf[..n])?;
                    map.write_bytes(off + done, &buf[..n])?;
                    done += n;
                }
                Ok(())
            }
            Step::WriteBarrier => {
                Self::barrier();
                Ok(())
            }
            Step::StoreTail { dst, value, .. } => self.store_u32(dst, value),
            Step::WriteMetadata { dst, record, .. } => {
                let (map, off) = self.segment(dst)?;
                let bytes = record.to_bytes();
                const _: () = assert!(METADATA_RECORD_SIZE as usize == 32);
                map.write_bytes(off, &bytes)
            }
        }
    }
}
