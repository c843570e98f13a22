// SPDX-License-Identifier: GPL-2.0

//! `mmap()` of a tenant's ring headers, rings and input buffer.

use kernel::{
    cache_mode::CacheMode,
    pr_warn_ratelimited,
    prelude::*,
    sync::{Arc, ArcBorrow},
    vma::{self, VmArea},
};

use super::layout::HEADERS_BYTES;
use super::Tenant;
use crate::proto::tenant_config::PAGE_BYTES;
use crate::{uapi, CcmDev};

/// A user mapping of a tenant's input buffer in device memory, mapped a page per fault while
/// the device is bound.
struct InputPages {
    dev: Arc<CcmDev>,
    /// Physical address of the input buffer.
    phys: u64,
    /// Its size: no mapping is longer.
    len: u64,
}

impl vma::FaultHandler for InputPages {
    fn fault(this: ArcBorrow<'_, Self>, fault: &vma::VmFault) -> Result {
        // Held while the page is mapped: unbind takes the list before it zaps, so a page is
        // either mapped before the zap (and zapped) or refused.
        let maps = this.dev.input_maps.lock();
        if maps.is_none() {
            return Err(ENODEV);
        }
        let off = fault
            .offset()
            .and_then(|o| o.checked_sub(uapi::MMAP_INPUT))
            .filter(|o| *o < this.len)
            .ok_or(EFAULT)?;
        // SAFETY: the input buffer is device memory reserved for the device's lifetime (the
        // window is never given to the page allocator); every user mapping of it is zapped at
        // unbind (`CcmDev::detach`), and the area is write-combining like the driver's mapping.
        unsafe { fault.insert_phys(this.phys + off) }
    }
}

impl Tenant {
    /// `mmap()` of one of the tenant's objects.
    pub(crate) fn mmap(&self, vma: &VmArea) -> Result {
        let off = vma.offset().ok_or(EINVAL)? as u64;
        let len = vma.len() as u64;
        let l = self.core.layout;
        let cfg = &self.core.cfg;
        if vma.flags() & vma::flags::SHARED == 0 {
            pr_warn_ratelimited!("mmap: only MAP_SHARED mappings\n");
            return Err(EINVAL);
        }
        let (first, size, writable) = match off {
            uapi::MMAP_HEADERS => (0, HEADERS_BYTES, false),
            uapi::MMAP_METADATA => (l.metadata_offset, cfg.metadata_ring_bytes, false),
            uapi::MMAP_PAYLOAD => (l.payload_offset, cfg.payload_ring_bytes, false),
            uapi::MMAP_INPUT => (0, l.input_bytes, true),
            _ => {
                pr_warn_ratelimited!("mmap: unknown offset {:#x}\n", off);
                return Err(EINVAL);
            }
        };
        if len == 0 || len > size {
            pr_warn_ratelimited!("mmap: length {} at {:#x} exceeds {}\n", len, off, size);
            return Err(EINVAL);
        }
        if !writable {
            if vma.flags() & vma::flags::WRITE != 0 {
                pr_warn_ratelimited!("mmap: the rings are read-only\n");
                return Err(EPERM);
            }
            vma.clear_flags(vma::flags::MAYWRITE);
            return self
                .core
                .region
                .map_pages_to_user(vma, (first / PAGE_BYTES) as usize);
        }
        // Mapped page by page on fault, so that unbind can zap every page and refuse faults.
        self.dev.add_input_map(vma.file_mapping().ok_or(EINVAL)?)?;
        let pages = InputPages {
            dev: self.dev.clone(),
            phys: self.dev.mem_phys + l.input,
            len: l.input_bytes,
        };
        // Write-combining, like the driver's own mapping of device memory: never write-back,
        // whose lines the device (HDM-H) would not see. `LAUNCH` publishes the input range, which
        // drains the caller's write-combining buffers (its stores were made on this CPU, or on
        // another before a context switch, which drains them too).
        vma.set_cache_mode(CacheMode::WriteCombining);
        vma.set_fault_handler(Arc::new(pages, GFP_KERNEL)?)
    }
}
