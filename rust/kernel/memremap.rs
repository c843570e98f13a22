// SPDX-License-Identifier: GPL-2.0

//! Kernel mappings of device memory resources (`memremap()`).
//!
//! C header: [`include/linux/io.h`](srctree/include/linux/io.h)
//!
//! Memory that behaves like memory — a CXL type-3 device's memory, or RAM that a software
//! device presents as its memory — is mapped with `memremap()`, not `ioremap()`: loads and
//! stores are ordinary (possibly cached) accesses. Access goes through [`SharedMem`], because
//! the device may write the range at any time.

use crate::{bindings, platform::MemResource, prelude::*, shared_mem::SharedMem};
use core::ptr::NonNull;

/// How the CPU caches a [`MemRemap`] mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapMode {
    /// Write-back: cached like system RAM (`MEMREMAP_WB`).
    WriteBack,
    /// Write-combining: uncached with merged writes (`MEMREMAP_WC`).
    WriteCombining,
}

/// A kernel mapping of a physical memory range; unmapped on drop.
///
/// # Invariants
///
/// `ptr` is the result of a successful `memremap()` of `len` bytes, not yet unmapped.
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
        let flags = match mode {
            MapMode::WriteBack => bindings::MEMREMAP_WB,
            MapMode::WriteCombining => bindings::MEMREMAP_WC,
        };
        // SAFETY: `memremap` validates the range and returns null on failure.
        let ptr = unsafe { bindings::memremap(res.start, len, flags as _) };
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: a successful mapping of `len` bytes.
        Ok(Self { ptr, len })
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
        // SAFETY: mapped by `memremap` (type invariant), unmapped once.
        unsafe { bindings::memunmap(self.ptr.as_ptr().cast()) };
    }
}
