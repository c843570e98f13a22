// SPDX-License-Identifier: GPL-2.0

//! Memory shared with user space or a device, accessed at checked offsets.
//!
//! Such memory may be written by the other side at any time, so Rust references to its bytes
//! must not exist. This trait gives atomic views of aligned words (for indexes, flags and
//! doorbells, with release/acquire ordering) and bulk copies of byte ranges (for payloads,
//! whose ownership the protocol hands from one side to the other, like C's `memcpy_toio()`).
//! Every offset is checked against the size.

use crate::prelude::*;
use core::sync::atomic::{AtomicU32, AtomicU64};

/// A mapped range of shared memory.
///
/// # Safety
///
/// `base()` must point to `size()` bytes that stay mapped, readable and writable for as long as
/// `&self` exists, and that no Rust reference covers.
pub unsafe trait SharedMem {
    /// The address of the first byte.
    fn base(&self) -> *mut u8;

    /// The size in bytes.
    fn size(&self) -> usize;

    /// Returns a pointer to a `T` at `offset`, or `EINVAL` if it is not inside the range or not
    /// aligned for `T`.
    fn checked_ptr<T>(&self, offset: usize) -> Result<*mut T> {
        let end = offset
            .checked_add(core::mem::size_of::<T>())
            .ok_or(EINVAL)?;
        if end > self.size() || offset % core::mem::align_of::<T>() != 0 {
            return Err(EINVAL);
        }
        // SAFETY: `offset + size_of::<T>() <= size`, so the result is inside the range.
        Ok(unsafe { self.base().add(offset) }.cast::<T>())
    }

    /// An atomic view of the naturally aligned 64-bit word at `offset`.
    fn atomic_u64(&self, offset: usize) -> Result<&AtomicU64> {
        let ptr = self.checked_ptr::<AtomicU64>(offset)?;
        // SAFETY: aligned, inside the range, mapped while `&self` lives (trait safety
        // requirements); every access through an atomic is data-race free.
        Ok(unsafe { &*ptr })
    }

    /// An atomic view of the naturally aligned 32-bit word at `offset`.
    fn atomic_u32(&self, offset: usize) -> Result<&AtomicU32> {
        let ptr = self.checked_ptr::<AtomicU32>(offset)?;
        // SAFETY: as in `atomic_u64`.
        Ok(unsafe { &*ptr })
    }

    /// Copies `src` to `offset`. The protocol must give this side the range meanwhile.
    fn write_bytes(&self, offset: usize, src: &[u8]) -> Result {
        let end = offset.checked_add(src.len()).ok_or(EINVAL)?;
        if end > self.size() {
            return Err(EINVAL);
        }
        // SAFETY: the destination is inside the mapping (checked above) and cannot overlap
        // `src`, which is a Rust reference and so not inside the shared range.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.base().add(offset), src.len()) };
        Ok(())
    }

    /// Copies the bytes at `offset` into `dst`. The protocol must give this side the range.
    fn read_bytes(&self, offset: usize, dst: &mut [u8]) -> Result {
        let end = offset.checked_add(dst.len()).ok_or(EINVAL)?;
        if end > self.size() {
            return Err(EINVAL);
        }
        // SAFETY: as in `write_bytes`.
        unsafe {
            core::ptr::copy_nonoverlapping(self.base().add(offset), dst.as_mut_ptr(), dst.len())
        };
        Ok(())
    }
}
