// SPDX-License-Identifier: GPL-2.0

//! This module provides the `TagSet` struct to wrap the C `struct blk_mq_tag_set`.
//!
//! C header: [`include/linux/blk-mq.h`](srctree/include/linux/blk-mq.h)

use core::pin::Pin;

use crate::{
    bindings,
    block::mq::{operations::OperationsVTable, request::RequestDataWrapper, Operations},
    error,
    prelude::PinInit,
    try_pin_init,
    types::Opaque,
};
use core::{convert::TryInto, marker::PhantomData};
use macros::{pin_data, pinned_drop};

/// A wrapper for the C `struct blk_mq_tag_set`.
///
/// `struct blk_mq_tag_set` contains a `struct list_head` and so must be pinned.
///
/// # Invariants
///
/// - `inner` is initialized and valid.
#[pin_data(PinnedDrop)]
#[repr(transparent)]
pub struct TagSet<T: Operations> {
    #[pin]
    inner: Opaque<bindings::blk_mq_tag_set>,
    _p: PhantomData<T>,
}

// SAFETY: The C tag set is shared by the queues of every CPU and synchronizes itself; the Rust
// wrapper only hands out its pointer. It can be sent to and shared with any thread.
unsafe impl<T: Operations> Send for TagSet<T> {}
// SAFETY: As above.
unsafe impl<T: Operations> Sync for TagSet<T> {}

impl<T: Operations> TagSet<T> {
    /// Try to create a new tag set
    pub fn new(
        nr_hw_queues: u32,
        num_tags: u32,
        num_maps: u32,
    ) -> impl PinInit<Self, error::Error> {
        Self::build(nr_hw_queues, num_tags, num_maps, 0, false)
    }

    /// Creates a tag set whose last `poll_queues` of `nr_hw_queues` hardware
    /// queues serve polled I/O: `T::poll` completes their requests when the
    /// submitter polls (io_uring with `IORING_SETUP_IOPOLL`). The other
    /// queues complete as `T` signals completions. Needs `T::poll`; fails with
    /// `EINVAL` if there is not at least one queue left for the default map.
    ///
    /// The queues share one tag space (`BLK_MQ_F_TAG_HCTX_SHARED`): a tag names
    /// one request of the whole device, not of one hardware queue, so a driver
    /// may index its per-request resources by tag whichever queue the request
    /// came through, and `num_tags` bounds the requests in flight on all of
    /// them together.
    pub fn new_with_poll_queues(
        nr_hw_queues: u32,
        num_tags: u32,
        poll_queues: u32,
    ) -> impl PinInit<Self, error::Error> {
        let bad = poll_queues > 0 && (!T::HAS_POLL || poll_queues >= nr_hw_queues);
        let maps = if poll_queues > 0 {
            bindings::hctx_type_HCTX_MAX_TYPES
        } else {
            1
        };
        let init = Self::build(nr_hw_queues, num_tags, maps, poll_queues, true);
        // SAFETY: The closure either fails before touching `slot`, or is
        // `init`, a valid pin-initializer of `Self` for that slot.
        unsafe {
            crate::init::pin_init_from_closure(move |slot: *mut Self| {
                if bad {
                    return Err(error::code::EINVAL);
                }
                init.__pinned_init(slot)
            })
        }
    }

    fn build(
        nr_hw_queues: u32,
        num_tags: u32,
        num_maps: u32,
        poll_queues: u32,
        shared_tags: bool,
    ) -> impl PinInit<Self, error::Error> {
        let flags = if shared_tags {
            bindings::BLK_MQ_F_SHOULD_MERGE | bindings::BLK_MQ_F_TAG_HCTX_SHARED
        } else {
            bindings::BLK_MQ_F_SHOULD_MERGE
        };
        // SAFETY: `blk_mq_tag_set` only contains integers and pointers, which
        // all are allowed to be 0.
        let tag_set: bindings::blk_mq_tag_set = unsafe { core::mem::zeroed() };
        let tag_set = core::mem::size_of::<RequestDataWrapper>()
            .try_into()
            .map(|cmd_size| {
                bindings::blk_mq_tag_set {
                    ops: OperationsVTable::<T>::build(),
                    nr_hw_queues,
                    timeout: 0, // 0 means default which is 30Hz in C
                    numa_node: bindings::NUMA_NO_NODE,
                    queue_depth: num_tags,
                    cmd_size,
                    flags,
                    // The number of poll queues, for `map_queues_callback`.
                    driver_data: poll_queues as usize as *mut crate::ffi::c_void,
                    nr_maps: num_maps,
                    ..tag_set
                }
            });

        try_pin_init!(TagSet {
            inner <- PinInit::<_, error::Error>::pin_chain(Opaque::new(tag_set?), |tag_set| {
                // SAFETY: we do not move out of `tag_set`.
                let tag_set = unsafe { Pin::get_unchecked_mut(tag_set) };
                // SAFETY: `tag_set` is a reference to an initialized `blk_mq_tag_set`.
                error::to_result( unsafe { bindings::blk_mq_alloc_tag_set(tag_set.get())})
            }),
            _p: PhantomData,
        })
    }

    /// Return the pointer to the wrapped `struct blk_mq_tag_set`
    pub(crate) fn raw_tag_set(&self) -> *mut bindings::blk_mq_tag_set {
        self.inner.get()
    }
}

#[pinned_drop]
impl<T: Operations> PinnedDrop for TagSet<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By type invariant `inner` is valid and has been properly
        // initialized during construction.
        unsafe { bindings::blk_mq_free_tag_set(self.inner.get()) };
    }
}
