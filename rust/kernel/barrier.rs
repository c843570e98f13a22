// SPDX-License-Identifier: GPL-2.0

//! Mandatory memory barriers, for memory whose ordering Rust's atomics do not cover.
//!
//! C header: [`include/asm-generic/barrier.h`](srctree/include/asm-generic/barrier.h)
//!
//! Rust's acquire and release orderings are those of ordinary (write-back) memory. Memory a
//! device shares with the CPU may be mapped otherwise: loads from write-combining memory are
//! weakly ordered and may be speculative, and stores to it may sit in a write-combining buffer
//! after later stores. On x86 an acquire load is a plain `MOV` and a release store too, so
//! neither orders such accesses; [`rmb`] (`LFENCE`) and [`wmb`] (`SFENCE`) do. See
//! `Documentation/memory-barriers.txt`, "Mandatory barriers" and "Kernel I/O barrier effects".

/// Orders every load before it against every load after it, whatever the memory type
/// (`rmb()`): for example a ring tail against the records it covers, in write-combining
/// memory a device writes.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// let tail = AtomicU32::new(1);
/// let t = tail.load(Ordering::Acquire);
/// kernel::barrier::rmb();
/// assert_eq!(t, 1);
/// ```
pub fn rmb() {
    // SAFETY: a barrier instruction; no memory is accessed.
    unsafe { crate::bindings::rmb() }
}

/// Orders every store before it against every store after it, whatever the memory type, and
/// drains write-combining buffers before the later stores (`wmb()`): for example a launch
/// packet against the tag that hands it to the device.
///
/// # Examples
///
/// ```
/// kernel::barrier::wmb();
/// ```
pub fn wmb() {
    // SAFETY: a barrier instruction; no memory is accessed.
    unsafe { crate::bindings::wmb() }
}
