// SPDX-License-Identifier: GPL-2.0

//! Host stores into device memory made visible to the device, and the hook through which a
//! software device checks that every store it consumes was.
//!
//! A CXL Type-3 device whose memory is host-only coherent (HDM-H) does not snoop the host's
//! caches or write-combining buffers: a host store into device memory reaches the device only
//! once the host has pushed it out. Drivers map such memory write-combining (never write-back,
//! whose lines could stay in the cache indefinitely) and call
//! [`MemRemap::publish`](crate::memremap::MemRemap::publish) on what they wrote before the
//! store that hands it to the device, and on that store too: a write barrier (`wmb()`, which
//! drains the write-combining buffers), then [`published`].
//!
//! An emulator cannot see caches or write-combining buffers (QEMU's TCG models neither), so a
//! software device that wants to catch a missing publish registers an [`Observer`]: it learns
//! each published range and can compare what it consumes with what was published. Without an
//! observer [`published`] is one relaxed load.

use crate::{prelude::*, sync::Arc};
use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// What a software device does with the ranges the host publishes.
pub trait Observer: Send + Sync {
    /// The host made the `len` bytes at physical address `phys` visible to the device. Called
    /// in process context, after the barrier, from the publishing thread.
    fn published(&self, phys: u64, len: usize);
}

/// The registered observer (a leaked `KBox<Arc<dyn Observer>>`), or null.
static OBSERVER: AtomicPtr<Arc<dyn Observer>> = AtomicPtr::new(ptr::null_mut());
/// Calls of [`published`] that may be using [`OBSERVER`]'s pointer.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Tells the registered observer, if any, that the host published a range (see
/// [`MemRemap::publish`](crate::memremap::MemRemap::publish), which calls it).
pub fn published(phys: u64, len: usize) {
    if OBSERVER.load(Ordering::Relaxed).is_null() {
        return;
    }
    // SeqCst with the unregistering side: if the load below sees the observer, the increment
    // comes before the unregistering swap, and the unregistering side waits for the decrement.
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let p = OBSERVER.load(Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` came from `KBox::into_raw` in `Registration::new`, and `Drop for
        // Registration` frees it only after clearing `OBSERVER` and seeing `ACTIVE` at zero,
        // which it cannot while this call holds its increment.
        unsafe { (*p).published(phys, len) };
    }
    ACTIVE.fetch_sub(1, Ordering::SeqCst);
}

/// The registration of an [`Observer`]; unregistered on drop, after the calls in progress.
///
/// # Invariants
///
/// `ptr` is the pointer stored in [`OBSERVER`] by `new`, from `KBox::into_raw`.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU64, Ordering};
/// use kernel::{coherence::{self, Observer, Registration}, sync::Arc};
///
/// struct Count(AtomicU64);
/// impl Observer for Count {
///     fn published(&self, _phys: u64, len: usize) {
///         self.0.fetch_add(len as u64, Ordering::Relaxed);
///     }
/// }
/// let count = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
/// let reg = Registration::new(count.clone())?;
/// assert_eq!(Registration::new(count.clone()).err(), Some(EBUSY));
/// coherence::published(0x1000, 64);
/// drop(reg);
/// coherence::published(0x1000, 64);
/// assert_eq!(count.0.load(Ordering::Relaxed), 64);
/// # Ok::<(), Error>(())
/// ```
pub struct Registration {
    ptr: *mut Arc<dyn Observer>,
}

// SAFETY: the registration only owns a pointer to a `Send + Sync` observer.
unsafe impl Send for Registration {}
// SAFETY: `&Registration` gives no access to anything.
unsafe impl Sync for Registration {}

impl Registration {
    /// Registers `obs`; `EBUSY` if another observer is registered.
    pub fn new(obs: Arc<dyn Observer>) -> Result<Self> {
        let ptr = KBox::into_raw(KBox::new(obs, GFP_KERNEL)?);
        if OBSERVER
            .compare_exchange(ptr::null_mut(), ptr, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            // SAFETY: `ptr` came from `KBox::into_raw` above and was not published.
            drop(unsafe { KBox::from_raw(ptr) });
            return Err(EBUSY);
        }
        // INVARIANT: stored above.
        Ok(Self { ptr })
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        OBSERVER.store(ptr::null_mut(), Ordering::SeqCst);
        while ACTIVE.load(Ordering::SeqCst) != 0 {
            crate::kthread::usleep_range(50, 100);
        }
        // SAFETY: `ptr` came from `KBox::into_raw` (type invariant); no call of `published`
        // can still use it (see there).
        drop(unsafe { KBox::from_raw(self.ptr) });
    }
}
