// SPDX-License-Identifier: GPL-2.0

//! This module provides a wrapper for the C `struct request` type.
//!
//! C header: [`include/linux/blk-mq.h`](srctree/include/linux/blk-mq.h)

use crate::{
    bindings,
    block::mq::Operations,
    error::Result,
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::{
    marker::PhantomData,
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicU64, Ordering},
};

/// A wrapper around a blk-mq [`struct request`]. This represents an IO request.
///
/// # Implementation details
///
/// There are four states for a request that the Rust bindings care about:
///
/// 1. Request is owned by block layer (refcount 0).
/// 2. Request is owned by driver but with zero [`ARef`]s in existence
///    (refcount 1).
/// 3. Request is owned by driver with exactly one [`ARef`] in existence
///    (refcount 2).
/// 4. Request is owned by driver with more than one [`ARef`] in existence
///    (refcount > 2).
///
///
/// We need to track 1 and 2 to ensure we fail tag to request conversions for
/// requests that are not owned by the driver.
///
/// We need to track 3 and 4 to ensure that it is safe to end the request and hand
/// back ownership to the block layer.
///
/// The states are tracked through the private `refcount` field of
/// `RequestDataWrapper`. This structure lives in the private data area of the C
/// [`struct request`].
///
/// # Invariants
///
/// * `self.0` is a valid [`struct request`] created by the C portion of the
///   kernel.
/// * The private data area associated with this request must be an initialized
///   and valid `RequestDataWrapper<T>`.
/// * `self` is reference counted by atomic modification of
///   `self.wrapper_ref().refcount()`.
///
/// [`struct request`]: srctree/include/linux/blk-mq.h
///
#[repr(transparent)]
pub struct Request<T: Operations>(Opaque<bindings::request>, PhantomData<T>);

impl<T: Operations> Request<T> {
    /// Create an [`ARef<Request>`] from a [`struct request`] pointer.
    ///
    /// # Safety
    ///
    /// * The caller must own a refcount on `ptr` that is transferred to the
    ///   returned [`ARef`].
    /// * The type invariants for [`Request`] must hold for the pointee of `ptr`.
    ///
    /// [`struct request`]: srctree/include/linux/blk-mq.h
    pub(crate) unsafe fn aref_from_raw(ptr: *mut bindings::request) -> ARef<Self> {
        // INVARIANT: By the safety requirements of this function, invariants are upheld.
        // SAFETY: By the safety requirement of this function, we own a
        // reference count that we can pass to `ARef`.
        unsafe { ARef::from_raw(NonNull::new_unchecked(ptr as *const Self as *mut Self)) }
    }

    /// Notify the block layer that a request is going to be processed now.
    ///
    /// The block layer uses this hook to do proper initializations such as
    /// starting the timeout timer. It is a requirement that block device
    /// drivers call this function when starting to process a request.
    ///
    /// # Safety
    ///
    /// The caller must have exclusive ownership of `self`, that is
    /// `self.wrapper_ref().refcount() == 2`.
    pub(crate) unsafe fn start_unchecked(this: &ARef<Self>) {
        // SAFETY: By type invariant, `self.0` is a valid `struct request` and
        // we have exclusive access.
        unsafe { bindings::blk_mq_start_request(this.0.get()) };
    }

    /// Try to take exclusive ownership of `this` by dropping the refcount to 0.
    /// This fails if `this` is not the only [`ARef`] pointing to the underlying
    /// [`Request`].
    ///
    /// If the operation is successful, [`Ok`] is returned with a pointer to the
    /// C [`struct request`]. If the operation fails, `this` is returned in the
    /// [`Err`] variant.
    ///
    /// [`struct request`]: srctree/include/linux/blk-mq.h
    fn try_set_end(this: ARef<Self>) -> Result<*mut bindings::request, ARef<Self>> {
        // We can race with `TagSet::tag_to_rq`
        if let Err(_old) = this.wrapper_ref().refcount().compare_exchange(
            2,
            0,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            return Err(this);
        }

        let request_ptr = this.0.get();
        core::mem::forget(this);

        Ok(request_ptr)
    }

    /// Notify the block layer that the request has been completed without errors.
    ///
    /// This function will return [`Err`] if `this` is not the only [`ARef`]
    /// referencing the request.
    pub fn end_ok(this: ARef<Self>) -> Result<(), ARef<Self>> {
        let request_ptr = Self::try_set_end(this)?;

        // SAFETY: By type invariant, `this.0` was a valid `struct request`. The
        // success of the call to `try_set_end` guarantees that there are no
        // `ARef`s pointing to this request. Therefore it is safe to hand it
        // back to the block layer.
        unsafe { bindings::blk_mq_end_request(request_ptr, bindings::BLK_STS_OK as _) };

        Ok(())
    }

    /// Ends the request with `status`: success, or the error the submitter sees
    /// (`EIO` for a failed transfer, `EINVAL`, `ENOSPC`, ... mapped to block
    /// status codes by `errno_to_blk_status`).
    ///
    /// Returns `this` back in [`Err`] if it is not the only [`ARef`] to the request.
    pub fn end(this: ARef<Self>, status: Result) -> Result<(), ARef<Self>> {
        let blk_status = match status {
            Ok(()) => bindings::BLK_STS_OK as _,
            Err(e) => e.to_blk_status(),
        };
        let request_ptr = Self::try_set_end(this)?;

        // SAFETY: As in `end_ok`: no `ARef` to the request is left, so it can
        // be handed back to the block layer.
        unsafe { bindings::blk_mq_end_request(request_ptr, blk_status) };

        Ok(())
    }

    fn raw(&self) -> *mut bindings::request {
        self.0.get()
    }

    /// The first sector (512 bytes) the request transfers.
    pub fn sector(&self) -> u64 {
        // SAFETY: By type invariant `self.0` is a valid request; `__sector`
        // does not change while the driver owns it (what `blk_rq_pos` reads).
        unsafe { (*self.raw()).__sector }
    }

    /// The number of bytes the request transfers.
    pub fn bytes(&self) -> u32 {
        // SAFETY: As in `sector`; this is `blk_rq_bytes`.
        unsafe { (*self.raw()).__data_len }
    }

    fn cmd_flags(&self) -> u32 {
        // SAFETY: As in `sector`.
        unsafe { (*self.raw()).cmd_flags }
    }

    /// The operation, `cmd_flags & REQ_OP_MASK`.
    pub fn op(&self) -> ReqOp {
        ReqOp::from_raw(self.cmd_flags() & ((1 << bindings::REQ_OP_BITS) - 1))
    }

    /// Whether the write must be durable before it completes (`REQ_FUA`).
    pub fn is_fua(&self) -> bool {
        self.cmd_flags() & (1 << bindings::req_flag_bits___REQ_FUA) != 0
    }

    /// Whether earlier completed writes must be durable before this request
    /// runs (`REQ_PREFLUSH`).
    pub fn is_preflush(&self) -> bool {
        self.cmd_flags() & (1 << bindings::req_flag_bits___REQ_PREFLUSH) != 0
    }

    /// Whether the submitter polls for this request's completion (`REQ_POLLED`).
    pub fn is_polled(&self) -> bool {
        self.cmd_flags() & (1 << bindings::req_flag_bits___REQ_POLLED) != 0
    }

    /// The request's tag, unique among the requests in flight on its tag set.
    pub fn tag(&self) -> i32 {
        // SAFETY: As in `sector`.
        unsafe { (*self.raw()).tag }
    }

    /// Calls `f` for each segment of the request's data, in order, with the
    /// segment's memory mapped: a pointer and a length, within one page. For
    /// a write the driver reads the segments, for a read it fills them. Stops
    /// at the first error `f` returns.
    ///
    /// The pointer is valid for `len` bytes during the call only. Pages of
    /// `O_DIRECT` I/O are user pages: another thread may write them at the
    /// same time, so `f` must copy with raw (`memcpy`-like) accesses and
    /// never form references to the memory.
    pub fn for_each_segment(&self, mut f: impl FnMut(*mut u8, usize) -> Result) -> Result {
        // SAFETY: By type invariant the request is valid, and the driver owns
        // it: its bio chain is stable until the request ends.
        let mut bio = unsafe { (*self.raw()).bio };
        while !bio.is_null() {
            // SAFETY: `bio` is a live bio of the request.
            let mut iter = unsafe { (*bio).bi_iter };
            while iter.bi_size > 0 {
                // SAFETY: `iter` is within `bio` (`bi_size > 0`).
                let bv = unsafe { bindings::bio_iter_iovec(bio, iter) };
                // SAFETY: `bv_page` is a page of the bio, kept by it until the
                // request ends; the mapping is undone below, in LIFO order.
                let base = unsafe { bindings::kmap_local_page(bv.bv_page) }.cast::<u8>();
                // `bio_iter_iovec` yields single-page segments.
                let len = bv.bv_len as usize;
                // SAFETY: `bv_offset + bv_len` is within the mapped page.
                let r = f(unsafe { base.add(bv.bv_offset as usize) }, len);
                // SAFETY: `base` was mapped above by this thread.
                unsafe { bindings::kunmap_local(base.cast()) };
                r?;
                // SAFETY: `bv_len` bytes of `iter` were just visited.
                unsafe { bindings::bio_advance_iter_single(bio, &mut iter, bv.bv_len) };
            }
            // SAFETY: `bio` is live; `bi_next` chains the request's bios.
            bio = unsafe { (*bio).bi_next };
        }
        Ok(())
    }

    /// Return a pointer to the [`RequestDataWrapper`] stored in the private area
    /// of the request structure.
    ///
    /// # Safety
    ///
    /// - `this` must point to a valid allocation of size at least size of
    ///   [`Self`] plus size of [`RequestDataWrapper`].
    pub(crate) unsafe fn wrapper_ptr(this: *mut Self) -> NonNull<RequestDataWrapper> {
        let request_ptr = this.cast::<bindings::request>();
        // SAFETY: By safety requirements for this function, `this` is a
        // valid allocation.
        let pdu = unsafe { bindings::blk_mq_rq_to_pdu(request_ptr) };
        let wrapper_ptr = pdu.cast::<RequestDataWrapper>();
        // SAFETY: By C API contract, wrapper_ptr points to a valid allocation
        // and is not null.
        unsafe { NonNull::new_unchecked(wrapper_ptr) }
    }

    /// Return a reference to the [`RequestDataWrapper`] stored in the private
    /// area of the request structure.
    pub(crate) fn wrapper_ref(&self) -> &RequestDataWrapper {
        // SAFETY: By type invariant, `self.0` is a valid allocation. Further,
        // the private data associated with this request is initialized and
        // valid. The existence of `&self` guarantees that the private data is
        // valid as a shared reference.
        unsafe { Self::wrapper_ptr(self as *const Self as *mut Self).as_ref() }
    }
}

/// A wrapper around data stored in the private area of the C [`struct request`].
///
/// [`struct request`]: srctree/include/linux/blk-mq.h
pub(crate) struct RequestDataWrapper {
    /// The Rust request refcount has the following states:
    ///
    /// - 0: The request is owned by C block layer.
    /// - 1: The request is owned by Rust abstractions but there are no [`ARef`] references to it.
    /// - 2+: There are [`ARef`] references to the request.
    refcount: AtomicU64,
}

impl RequestDataWrapper {
    /// Return a reference to the refcount of the request that is embedding
    /// `self`.
    pub(crate) fn refcount(&self) -> &AtomicU64 {
        &self.refcount
    }

    /// Return a pointer to the refcount of the request that is embedding the
    /// pointee of `this`.
    ///
    /// # Safety
    ///
    /// - `this` must point to a live allocation of at least the size of `Self`.
    pub(crate) unsafe fn refcount_ptr(this: *mut Self) -> *mut AtomicU64 {
        // SAFETY: Because of the safety requirements of this function, the
        // field projection is safe.
        unsafe { addr_of_mut!((*this).refcount) }
    }
}

// SAFETY: Exclusive access is thread-safe for `Request`. `Request` has no `&mut
// self` methods and `&self` methods that mutate `self` are internally
// synchronized.
unsafe impl<T: Operations> Send for Request<T> {}

// SAFETY: Shared access is thread-safe for `Request`. `&self` methods that
// mutate `self` are internally synchronized`
unsafe impl<T: Operations> Sync for Request<T> {}

/// Store the result of `op(target.load())` in target, returning new value of
/// target.
fn atomic_relaxed_op_return(target: &AtomicU64, op: impl Fn(u64) -> u64) -> u64 {
    #[allow(deprecated)]
    let old = target.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(op(x)));

    // SAFETY: Because the operation passed to `fetch_update` above always
    // return `Some`, `old` will always be `Ok`.
    let old = unsafe { old.unwrap_unchecked() };

    op(old)
}

/// Store the result of `op(target.load)` in `target` if `target.load() !=
/// pred`, returning [`true`] if the target was updated.
fn atomic_relaxed_op_unless(target: &AtomicU64, op: impl Fn(u64) -> u64, pred: u64) -> bool {
    #[allow(deprecated)]
    target
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| {
            if x == pred {
                None
            } else {
                Some(op(x))
            }
        })
        .is_ok()
}

// SAFETY: All instances of `Request<T>` are reference counted. This
// implementation of `AlwaysRefCounted` ensure that increments to the ref count
// keeps the object alive in memory at least until a matching reference count
// decrement is executed.
unsafe impl<T: Operations> AlwaysRefCounted for Request<T> {
    fn inc_ref(&self) {
        let refcount = &self.wrapper_ref().refcount();

        #[cfg_attr(not(CONFIG_DEBUG_MISC), allow(unused_variables))]
        let updated = atomic_relaxed_op_unless(refcount, |x| x + 1, 0);

        // A reference made from a request nobody holds: a bug in the abstractions, reported as
        // C reports a broken invariant it survives, not a panic.
        #[cfg(CONFIG_DEBUG_MISC)]
        crate::warn_on!(!updated);
    }

    unsafe fn dec_ref(obj: core::ptr::NonNull<Self>) {
        // SAFETY: The type invariants of `ARef` guarantee that `obj` is valid
        // for read.
        let wrapper_ptr = unsafe { Self::wrapper_ptr(obj.as_ptr()).as_ptr() };
        // SAFETY: The type invariant of `Request` guarantees that the private
        // data area is initialized and valid.
        let refcount = unsafe { &*RequestDataWrapper::refcount_ptr(wrapper_ptr) };

        #[cfg_attr(not(CONFIG_DEBUG_MISC), allow(unused_variables))]
        let new_refcount = atomic_relaxed_op_return(refcount, |x| x - 1);

        // The block layer's own reference is never dropped here: reaching zero is a bug in the
        // abstractions, reported with a warning rather than a panic.
        #[cfg(CONFIG_DEBUG_MISC)]
        crate::warn_on!(new_refcount == 0);
    }
}

/// A request's operation (`req_op()`): the ones drivers commonly serve by name, the others by
/// their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// `REQ_OP_FLUSH`.
    Flush,
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_WRITE_ZEROES`.
    WriteZeroes,
    /// Another operation, by its `REQ_OP_*` number.
    Other(u32),
}

impl ReqOp {
    fn from_raw(op: u32) -> Self {
        match op {
            bindings::req_op_REQ_OP_READ => Self::Read,
            bindings::req_op_REQ_OP_WRITE => Self::Write,
            bindings::req_op_REQ_OP_FLUSH => Self::Flush,
            bindings::req_op_REQ_OP_DISCARD => Self::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => Self::WriteZeroes,
            other => Self::Other(other),
        }
    }
}
