// SPDX-License-Identifier: GPL-2.0

//! Kernel mappings of device memory resources (`memremap()`).
//!
//! C header: [`include/linux/io.h`](srctree/include/linux/io.h)
//!
//! Memory that behaves like memory — a CXL type-3 device's memory, or RAM that a software
//! device presents as its memory — is mapped with `memremap()`, not `ioremap()`: loads and
//! stores are ordinary (possibly cached) accesses. Access goes through [`SharedMem`], because
//! the device may write the range at any time. Memory a device reads without snooping the
//! host (a CXL HDM-H range) is mapped write-combining, and the host's stores into it are made
//! visible with [`MemRemap::publish`].

use crate::{bindings, platform::MemResource, prelude::*, shared_mem::SharedMem};
use core::ptr::NonNull;

/// How the CPU caches a [`MemRemap`] mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapMode {
    /// Write-back: cached like system RAM (`MEMREMAP_WB`).
    WriteBack,
    /// Write-combining: uncached with merged writes (`MEMREMAP_WC`).
    WriteCombining,
    /// Uncached (`ioremap()`): for a software device's own view of the registers it presents,
    /// which the driver maps uncached with [`IoMem`](crate::io_mem::IoMem) (every mapping of a
    /// range must have the same memory type). A driver reads registers through `IoMem`, never
    /// through this.
    Uncached,
}

/// A kernel mapping of a physical memory range; unmapped on drop.
///
/// # Invariants
///
/// `ptr` is the result of a successful `memremap()` (`ioremap()` if `mode` is
/// [`MapMode::Uncached`]) of `len` bytes at physical address `phys`, not yet unmapped.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::Ordering;
/// use kernel::{memremap::{MapMode, MemRemap}, platform::MemResource, shared_mem::SharedMem};
///
/// let page = kernel::page::Page::alloc_page(GFP_KERNEL)?;
/// let start = kernel::pinned_pages::page_phys_addr(&page);
/// let map = MemRemap::new(MemResource { start, size: 4096 }, MapMode::WriteBack)?;
/// map.atomic_u32(8)?.store(0xc0ffee, Ordering::Release);
/// map.write_bytes(16, b"ccm")?;
/// let mut back = [0u8; 3];
/// map.read_bytes(16, &mut back)?;
/// assert_eq!(&back, b"ccm");
/// assert_eq!(map.atomic_u32(8)?.load(Ordering::Acquire), 0xc0ffee);
/// assert_eq!(map.write_bytes(4094, b"ccm").err(), Some(EINVAL));
/// assert_eq!(MemRemap::new(MemResource { start, size: 0 }, MapMode::WriteBack).err(), Some(EINVAL));
/// # Ok::<(), Error>(())
/// ```
pub struct MemRemap {
    ptr: NonNull<u8>,
    len: usize,
    phys: u64,
    mode: MapMode,
}

// SAFETY: the mapping is not tied to a thread.
unsafe impl Send for MemRemap {}
// SAFETY: `&MemRemap` only allows `SharedMem` accesses, which are safe from several threads.
unsafe impl Sync for MemRemap {}

impl MemRemap {
    /// Maps `res` with caching `mode`. Fails with `EINVAL` for an empty range and `ENOMEM` if
    /// the range cannot be mapped that way.
    pub fn new(res: MemResource, mode: MapMode) -> Result<Self> {
        let len = usize::try_from(res.size).map_err(|_| EINVAL)?;
        if len == 0 || res.start.checked_add(res.size).is_none() {
            return Err(EINVAL);
        }
        let ptr = match mode {
            // SAFETY: `ioremap` validates the range and returns null on failure.
            MapMode::Uncached => unsafe { bindings::ioremap(res.start, len) }.cast::<u8>(),
            MapMode::WriteBack | MapMode::WriteCombining => {
                let flags = if mode == MapMode::WriteBack {
                    bindings::MEMREMAP_WB
                } else {
                    bindings::MEMREMAP_WC
                };
                // SAFETY: `memremap` validates the range and returns null on failure.
                unsafe { bindings::memremap(res.start, len, flags as _) }.cast::<u8>()
            }
        };
        let ptr = NonNull::new(ptr).ok_or(ENOMEM)?;
        // INVARIANT: a successful mapping of `len` bytes at `res.start` in `mode`.
        Ok(Self {
            ptr,
            len,
            phys: res.start,
            mode,
        })
    }

    /// Makes the host's stores to the `len` bytes at `offset` visible to the device: a write
    /// barrier (`wmb()`, which also drains write-combining buffers), then the software device's
    /// check, if one is registered ([`crate::coherence`]). Call it on data the device will read
    /// before the store that hands the data over, and on that store. `EINVAL` if the range is
    /// not inside the mapping.
    pub fn publish(&self, offset: usize, len: usize) -> Result {
        let end = offset.checked_add(len).ok_or(EINVAL)?;
        if end > self.len {
            return Err(EINVAL);
        }
        crate::barrier::wmb();
        crate::coherence::published(self.phys + offset as u64, len);
        Ok(())
    }
}

// SAFETY: `ptr` maps `len` bytes until drop (type invariant); no Rust reference covers them.
unsafe impl SharedMem for MemRemap {
    fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn size(&self) -> usize {
        self.len
    }
}

impl Drop for MemRemap {
    fn drop(&mut self) {
        if self.mode == MapMode::Uncached {
            // SAFETY: mapped by `ioremap` (type invariant), unmapped once.
            unsafe { bindings::iounmap(self.ptr.as_ptr().cast()) };
        } else {
            // SAFETY: mapped by `memremap` (type invariant), unmapped once.
            unsafe { bindings::memunmap(self.ptr.as_ptr().cast()) };
        }
    }
}
