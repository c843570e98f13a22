// SPDX-License-Identifier: GPL-2.0

//! Objects that a device's unbind takes away while other code may still be using them.
//!
//! A driver's register mapping, device memory or interrupt belongs to the binding: once the
//! device is unbound the driver must not touch them, yet open files, timers and work items
//! outlive the binding. [`Revocable`] holds such a resource: users reach it through
//! [`Revocable::try_access`], which fails once it has been revoked, and [`Revocable::revoke`]
//! waits until every user that got in has left before it drops the resource.
//!
//! Readers may sleep (they wait for the device, or take mutexes), so the read side is SRCU
//! (sleepable RCU), not RCU as in later kernels' `Revocable`: entering costs a per-CPU counter
//! increment and a barrier, and readers never wait for each other.
//!
//! C header: [`include/linux/srcu.h`](srctree/include/linux/srcu.h)

use crate::{bindings, error::to_result, prelude::*, types::Opaque};
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    mem::MaybeUninit,
    ops::Deref,
    sync::atomic::{AtomicBool, Ordering},
};

/// A resource that can be revoked; see the [module documentation](self).
///
/// # Examples
///
/// ```
/// use kernel::revocable::Revocable;
///
/// let r = KBox::pin_init(Revocable::new(7u32), GFP_KERNEL)?;
/// assert_eq!(r.try_access().map(|v| *v), Some(7));
/// assert!(r.revoke());
/// assert!(r.try_access().is_none());
/// // A second revoke finds nothing to drop.
/// assert!(!r.revoke());
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// - `srcu` is initialised from construction until drop.
/// - While `available` is true, `data` holds a valid `T`; once it is false it never becomes true
///   again, and `data` is dropped exactly once, by the first [`Revocable::revoke`] (after every
///   reader that saw `available` true has left) or by drop.
#[pin_data(PinnedDrop)]
pub struct Revocable<T> {
    #[pin]
    srcu: Opaque<bindings::srcu_struct>,
    available: AtomicBool,
    data: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the `T` moves with the `Revocable` and may be dropped on any thread that revokes.
unsafe impl<T: Send> Send for Revocable<T> {}
// SAFETY: readers on several threads share `&T` (so `T: Sync`); the thread that revokes drops
// the `T` (so `T: Send`). The SRCU state is thread-safe.
unsafe impl<T: Send + Sync> Sync for Revocable<T> {}

impl<T> Revocable<T> {
    /// A revocable holding `data`. Fails only if SRCU cannot allocate its per-CPU state.
    pub fn new(data: T) -> impl PinInit<Self, Error> {
        let init_srcu = |slot: *mut Opaque<bindings::srcu_struct>| {
            // SAFETY: `slot` is valid for writes and pinned; SRCU initialises it in place.
            to_result(unsafe { bindings::init_srcu(Opaque::raw_get(slot)) })
        };
        try_pin_init!(Self {
            // SAFETY: on success `srcu` is initialised; on failure nothing refers to it.
            srcu <- unsafe { crate::init::pin_init_from_closure(init_srcu) },
            // INVARIANT: `data` holds a valid `T` while `available` is true.
            available: AtomicBool::new(true),
            data: UnsafeCell::new(MaybeUninit::new(data)),
        }? Error)
    }

    /// The resource, unless it has been revoked. It stays valid until the guard is dropped:
    /// a [`Revocable::revoke`] that starts meanwhile waits for that.
    pub fn try_access(&self) -> Option<RevocableGuard<'_, T>> {
        // SAFETY: `srcu` is initialised (type invariant).
        let idx = unsafe { bindings::srcu_read_lock(self.srcu.get()) };
        // Relaxed: SRCU orders this load against the grace period `revoke` waits for.
        if self.available.load(Ordering::Relaxed) {
            // INVARIANT: a reader holds the SRCU read lock until the guard drops.
            Some(RevocableGuard {
                rev: self,
                idx,
                _not_send: PhantomData,
            })
        } else {
            // SAFETY: `idx` came from the matching `srcu_read_lock` on this thread.
            unsafe { bindings::srcu_read_unlock(self.srcu.get(), idx) };
            None
        }
    }

    /// Whether the resource has not been revoked yet (it may be, right after this returns).
    pub fn is_available(&self) -> bool {
        self.available.load(Ordering::Relaxed)
    }

    /// Takes the resource away: later [`Revocable::try_access`] calls fail; waits until every
    /// guard handed out before has been dropped, then drops the resource. Returns whether this
    /// call dropped it (`false`: it was already revoked).
    ///
    /// Must not be called while the caller holds a guard of this revocable: it would wait for
    /// itself.
    pub fn revoke(&self) -> bool {
        if !self.available.swap(false, Ordering::Relaxed) {
            return false;
        }
        // SAFETY: `srcu` is initialised (type invariant). Waits for every reader that may have
        // seen `available` true.
        unsafe { bindings::synchronize_srcu(self.srcu.get()) };
        // SAFETY: `available` was true, so `data` is valid; this call won the swap, so no other
        // drop runs, and no reader is left (the grace period above).
        unsafe { (*self.data.get()).assume_init_drop() };
        true
    }
}

#[pinned_drop]
impl<T> PinnedDrop for Revocable<T> {
    fn drop(self: Pin<&mut Self>) {
        // Nobody else holds a reference: no reader, no concurrent revoke.
        if self.available.load(Ordering::Relaxed) {
            // SAFETY: `available` is true, so `data` is valid and was not dropped yet.
            unsafe { (*self.data.get()).assume_init_drop() };
        }
        // SAFETY: initialised (type invariant), and no reader is left.
        unsafe { bindings::cleanup_srcu_struct(self.srcu.get()) };
    }
}

/// Access to a [`Revocable`]'s resource; keeps it from being dropped while it lives.
///
/// # Invariants
///
/// Holds the SRCU read lock `idx` of `rev`, taken while `rev`'s resource was available.
pub struct RevocableGuard<'a, T> {
    rev: &'a Revocable<T>,
    idx: core::ffi::c_int,
    /// SRCU read sections end on the thread that began them.
    _not_send: PhantomData<*const ()>,
}

impl<T> Deref for RevocableGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the resource was available when the read lock was taken, and `revoke` drops
        // it only after this read section ends (type invariant).
        unsafe { (*self.rev.data.get()).assume_init_ref() }
    }
}

impl<T> Drop for RevocableGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: `idx` came from the matching `srcu_read_lock` (type invariant).
        unsafe { bindings::srcu_read_unlock(self.rev.srcu.get(), self.idx) };
    }
}
