// SPDX-License-Identifier: GPL-2.0

//! A workqueue a driver allocates and owns (`alloc_workqueue`/`destroy_workqueue`).
//!
//! The system workqueues in [`crate::workqueue`] cannot be flushed by a module (a flush of a
//! system-wide queue warns, and would wait for everyone's work): a driver whose work items run
//! its own code must be able to wait for them before it goes away, as block drivers do for the
//! work they take off their interrupt path (dm-crypt's `kcryptd`). [`OwnedQueue::drain`] waits
//! until every queued item has run; dropping the queue drains and destroys it.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)

use crate::{bindings, error::code::ENOMEM, prelude::*, str::CString, workqueue::Queue};
use core::{fmt, ptr::NonNull};

/// Flags of [`OwnedQueue::new`] (`WQ_*`).
pub mod flags {
    use crate::bindings;
    /// Not bound to the CPU that queues: items run wherever the scheduler finds room.
    pub const UNBOUND: u32 = bindings::wq_flags_WQ_UNBOUND;
    /// Guaranteed forward progress under memory pressure (a rescuer thread): for queues the
    /// block I/O path waits on.
    pub const MEM_RECLAIM: u32 = bindings::wq_flags_WQ_MEM_RECLAIM;
    /// Items may use the CPU for long: they do not hold back the concurrency management of
    /// per-CPU queues.
    pub const CPU_INTENSIVE: u32 = bindings::wq_flags_WQ_CPU_INTENSIVE;
}

/// A workqueue owned by its creator.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU32, Ordering};
/// use kernel::owned_wq::{flags, OwnedQueue};
/// use kernel::sync::Arc;
///
/// let wq = OwnedQueue::new(kernel::fmt!("doctest-wq"), flags::UNBOUND | flags::MEM_RECLAIM, 0)?;
/// let runs = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
/// for _ in 0..4 {
///     let r = runs.clone();
///     wq.queue().try_spawn(GFP_KERNEL, move || {
///         r.fetch_add(1, Ordering::Relaxed);
///     })?;
/// }
/// wq.drain();
/// assert_eq!(runs.load(Ordering::Relaxed), 4);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `wq` was returned by `alloc_workqueue` and is destroyed only by `drop`.
pub struct OwnedQueue {
    wq: NonNull<bindings::workqueue_struct>,
}

// SAFETY: a workqueue may be used and destroyed from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: queueing and draining are thread-safe.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates a workqueue named `name` with `WQ_*` `flags` and at most `max_active` items
    /// running at once (0: the default).
    pub fn new(name: fmt::Arguments<'_>, flags: u32, max_active: i32) -> Result<Self> {
        let name = CString::try_from_fmt(name)?;
        // SAFETY: `name` is a valid C string, copied by the callee (it formats it with "%s").
        let wq = unsafe { bindings::alloc_workqueue_str(name.as_char_ptr(), flags, max_active) };
        // INVARIANT: a non-null return is a workqueue we now own.
        Ok(Self {
            wq: NonNull::new(wq).ok_or(ENOMEM)?,
        })
    }

    /// The queue, to enqueue work items or spawn closures on.
    pub fn queue(&self) -> &Queue {
        // SAFETY: `wq` is a valid workqueue until `drop` (type invariant), which outlives the
        // returned reference.
        unsafe { Queue::from_raw(self.wq.as_ptr()) }
    }

    /// Waits until every item queued so far, and every item those queue here, has run.
    /// Items queued from elsewhere meanwhile trigger a warning: stop the producers first.
    pub fn drain(&self) {
        // SAFETY: `wq` is valid (type invariant).
        unsafe { bindings::drain_workqueue(self.wq.as_ptr()) };
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: `wq` is valid and destroyed once, here (type invariant); destroying drains it.
        unsafe { bindings::destroy_workqueue(self.wq.as_ptr()) };
    }
}
