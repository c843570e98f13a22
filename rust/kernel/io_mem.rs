// SPDX-License-Identifier: GPL-2.0

//! Uncached mappings of a device's register block (`ioremap()`), read and written only through
//! sized, bounds-checked accessors, in the manner of mainline's `kernel::io::Io`.
//!
//! C header: [`include/asm-generic/io.h`](srctree/include/asm-generic/io.h)
//!
//! Registers are not memory: a load may have side effects, a store must reach the device in
//! program order, and neither may be merged, cached or speculated. `ioremap()` maps them
//! uncached, and the accessors are `readl()`/`writel()` and their 64-bit forms, which also
//! order the access against ordinary memory (`Documentation/memory-barriers.txt`, "Kernel I/O
//! barrier effects"): a `writel()` comes after every earlier store to memory, so a doorbell
//! written with it publishes what was stored before; a `readl()` comes before every later load
//! from memory, so what a status register announces can be read after it. No Rust reference or
//! atomic ever covers the mapping.
//!
//! A software device that presents RAM as a register block maps it the same way: the memory
//! type of every mapping of a physical range must agree (x86 PAT refuses an uncached mapping
//! of a range that is mapped write-back elsewhere).

use crate::{bindings, ffi::c_void, platform::MemResource, prelude::*};
use core::ptr::NonNull;

/// An `ioremap()`ed register block; unmapped on drop.
///
/// # Invariants
///
/// `addr` is the result of a successful `ioremap()` of `len` bytes, not yet unmapped.
///
/// # Examples
///
/// ```
/// use kernel::{io_mem::IoMem, platform::MemResource};
///
/// // A doctest has no register block to map (and `ioremap()` of RAM is refused with a
/// // warning); the range checks come first.
/// assert_eq!(IoMem::new(MemResource { start: 0x1000, size: 0 }).err(), Some(EINVAL));
/// assert_eq!(IoMem::new(MemResource { start: u64::MAX, size: 8 }).err(), Some(EINVAL));
/// # Ok::<(), Error>(())
/// ```
pub struct IoMem {
    addr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is not tied to a thread; the accessors are safe from any context.
unsafe impl Send for IoMem {}
// SAFETY: `&IoMem` only allows `readl()`/`writel()` accesses, which are safe concurrently.
unsafe impl Sync for IoMem {}

impl IoMem {
    /// Maps `res` uncached. Fails with `EINVAL` for an empty or wrapping range and `ENOMEM` if
    /// the range cannot be mapped (for example because it is mapped with another memory type).
    pub fn new(res: MemResource) -> Result<Self> {
        let len = usize::try_from(res.size).map_err(|_| EINVAL)?;
        if len == 0 || res.start.checked_add(res.size).is_none() {
            return Err(EINVAL);
        }
        // SAFETY: `ioremap` validates the range and returns null on failure.
        let addr = unsafe { bindings::ioremap(res.start, len) };
        let addr = NonNull::new(addr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: a successful mapping of `len` bytes.
        Ok(Self { addr, len })
    }

    /// The size of the mapping in bytes.
    pub fn size(&self) -> usize {
        self.len
    }

    /// The address of a naturally aligned `size`-byte register at `offset`, or `EINVAL`.
    fn reg(&self, offset: usize, size: usize) -> Result<*mut c_void> {
        let end = offset.checked_add(size).ok_or(EINVAL)?;
        if end > self.len || offset % size != 0 {
            return Err(EINVAL);
        }
        // SAFETY: `offset + size <= len`, so the result is inside the mapping.
        Ok(unsafe { self.addr.as_ptr().add(offset) }.cast())
    }

    /// Reads the 32-bit register at `offset` (`readl()`).
    pub fn try_read32(&self, offset: usize) -> Result<u32> {
        let a = self.reg(offset, 4)?;
        // SAFETY: `a` is an aligned register inside the mapping (checked by `reg`).
        Ok(unsafe { bindings::readl(a) })
    }

    /// Reads the 64-bit register at `offset` (`readq()`).
    pub fn try_read64(&self, offset: usize) -> Result<u64> {
        let a = self.reg(offset, 8)?;
        // SAFETY: as in `try_read32`.
        Ok(unsafe { bindings::readq(a) })
    }

    /// Writes `value` to the 32-bit register at `offset` (`writel()`).
    pub fn try_write32(&self, value: u32, offset: usize) -> Result {
        let a = self.reg(offset, 4)?;
        // SAFETY: as in `try_read32`.
        unsafe { bindings::writel(value, a) };
        Ok(())
    }

    /// Writes `value` to the 64-bit register at `offset` (`writeq()`).
    pub fn try_write64(&self, value: u64, offset: usize) -> Result {
        let a = self.reg(offset, 8)?;
        // SAFETY: as in `try_read32`.
        unsafe { bindings::writeq(value, a) };
        Ok(())
    }
}

impl Drop for IoMem {
    fn drop(&mut self) {
        // SAFETY: mapped by `ioremap` (type invariant), unmapped once.
        unsafe { bindings::iounmap(self.addr.as_ptr().cast()) };
    }
}
