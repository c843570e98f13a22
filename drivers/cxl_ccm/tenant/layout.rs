// SPDX-License-Identifier: GPL-2.0

//! Where a tenant's objects are: its DMA region (ring headers, metadata ring, payload ring) and
//! its partition of device memory.

use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;
use kernel::{pinned_pages::PinnedPages, pr_warn_ratelimited, prelude::*, shared_mem::SharedMem};

use super::streams;
use crate::abi::{self, LaunchPacket, RingHeaders};
use crate::host_copy::Checksums;
use crate::proto::tenant_config::{TenantConfig, PAGE_BYTES};
use crate::CcmDev;

/// The ring headers occupy the region's first page.
pub(super) const HEADERS_BYTES: u64 = PAGE_BYTES;

/// Where a tenant's objects are, in its region and in device memory.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    /// Region offsets.
    pub(super) metadata_offset: u64,
    pub(super) payload_offset: u64,
    pub(super) region_bytes: u64,
    /// Device-memory offsets of the partition and its parts.
    pub(super) part_base: u64,
    pub(super) part_size: u64,
    pub(super) desc_table: u64,
    pub(super) input: u64,
    pub(super) output: u64,
    pub(super) input_bytes: u64,
    /// RP and BS: where the device leaves the records' checksums (none in AXLE).
    pub(super) checksums: Checksums,
    /// Device-memory offset of the tenant window.
    pub(super) window: u64,
}

impl Layout {
    pub(super) fn new(dev: &CcmDev, index: u32, cfg: &TenantConfig) -> Layout {
        let p = dev.partitions();
        let part_base = p.base + u64::from(index) * p.share;
        let metadata_offset = HEADERS_BYTES;
        // The checksum table describes the output buffer.
        let output = part_base + p.desc_area + p.max_input;
        let payload_offset = metadata_offset + cfg.metadata_ring_bytes;
        Layout {
            metadata_offset,
            payload_offset,
            region_bytes: payload_offset + cfg.payload_ring_bytes,
            part_base,
            part_size: p.share,
            desc_table: part_base,
            input: part_base + p.desc_area,
            output,
            input_bytes: cfg.input_bytes,
            checksums: if streams(cfg.mode) {
                Checksums::default()
            } else {
                Checksums {
                    table: part_base + p.checksum_offset(),
                    entries: p.checksum_entries,
                    base: output,
                }
            },
            window: abi::tenant_window_offset(dev.id.tenant_windows, index),
        }
    }

    pub(super) fn launch_slot(&self, tag: u32) -> usize {
        (self.window as usize)
            + abi::TWIN_LAUNCH
            + abi::launch_slot(tag) as usize * size_of::<LaunchPacket>()
    }

    pub(super) fn credit(&self) -> usize {
        self.window as usize + abi::TWIN_CREDIT
    }
}

/// The pages of a tenant's region; `EINVAL` if the device cannot map that many.
pub(super) fn region_pages(dev: &CcmDev, layout: &Layout) -> Result<usize> {
    let pages = layout.region_bytes / PAGE_BYTES;
    if pages > u64::from(dev.id.max_segments) {
        pr_warn_ratelimited!(
            "CONFIGURE: rings of {} pages exceed the device's {} DMA segments\n",
            pages,
            dev.id.max_segments
        );
        return Err(EINVAL);
    }
    // Cannot truncate: at most `max_segments`, a `u32`.
    Ok(pages as usize)
}

/// Initialises the ring headers in the region (the rest of it is zeroed at allocation).
pub(super) fn write_headers(region: &PinnedPages, cfg: &TenantConfig, base: u32) -> Result {
    let md = offset_of!(RingHeaders, metadata);
    let pl = offset_of!(RingHeaders, payload);
    let launch = offset_of!(RingHeaders, launch);
    let w = |o: usize, v: u32| region.atomic_u32(o).map(|r| r.store(v, Ordering::Relaxed));
    w(md, base)?;
    w(md + 4, cfg.metadata.capacity())?;
    w(md + 8, abi::METADATA_RECORD_SIZE)?;
    w(pl, base)?;
    w(pl + 4, cfg.payload.capacity())?;
    w(pl + 8, cfg.streaming_factor.slot_size())?;
    w(launch, base)?;
    w(launch + 4, abi::LAUNCH_SLOTS)?;
    Ok(())
}
