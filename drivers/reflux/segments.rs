// SPDX-License-Identifier: GPL-2.0

//! Copies between a request's data segments and its buffers in the PMR.
//!
//! The buffers of a request are consecutive 4 KiB PMR buffers (`layout.buffer(buf_index + i)`),
//! so the request's data is one contiguous PMR range. The segments' pages may be user pages
//! (O_DIRECT) that another thread writes concurrently: only raw copies touch them.

use kernel::{
    block::mq::{Operations, Request},
    memremap::MemRemap,
    prelude::*,
    shared_mem::SharedMem,
};

/// Checks that `off..off + len` is inside `mem` and returns its address.
fn range(mem: &MemRemap, off: usize, len: usize) -> Result<*mut u8> {
    let end = off.checked_add(len).ok_or(EINVAL)?;
    if len == 0 || end > mem.size() {
        return Err(EINVAL);
    }
    mem.checked_ptr::<u8>(off)
}

/// Copies the request's data (a write's) into the PMR from `off` on.
pub(crate) fn to_pmr<T: Operations>(rq: &Request<T>, pmr: &MemRemap, mut off: usize) -> Result {
    range(pmr, off, rq.bytes() as usize)?;
    rq.for_each_segment(|src, len| {
        let dst = range(pmr, off, len)?;
        // SAFETY: `dst..dst + len` is inside the PMR mapping (checked), `src` is valid for `len`
        // bytes during this call (`for_each_segment`), and a bio page is never inside the
        // reserved PMR window, so they do not overlap.
        unsafe { core::ptr::copy_nonoverlapping(src.cast_const(), dst, len) };
        off += len;
        Ok(())
    })
}

/// Copies PMR bytes from `off` on into the request's data segments (a read's).
pub(crate) fn from_pmr<T: Operations>(rq: &Request<T>, pmr: &MemRemap, mut off: usize) -> Result {
    range(pmr, off, rq.bytes() as usize)?;
    rq.for_each_segment(|dst, len| {
        let src = range(pmr, off, len)?;
        // SAFETY: as in `to_pmr`, with the roles swapped.
        unsafe { core::ptr::copy_nonoverlapping(src.cast_const(), dst, len) };
        off += len;
        Ok(())
    })
}
