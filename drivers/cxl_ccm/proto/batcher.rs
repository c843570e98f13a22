// SPDX-License-Identifier: GPL-2.0

//! The streaming-factor batcher and the streaming order (AXLE §IV-B, §IV-C "OoO Streaming").
//!
//! The device's DMA executor collects result records as the compute engine produces them and
//! back-streams them in batches: when the pending payload reaches the *streaming factor* (SF), or
//! when the offload ends (final flush), or when the caller decides to flush early. One DMA slot
//! equals one payload ring slot (32 bytes by default); the SF is a whole number of slots.
//!
//! Records are slot-aligned: a record of `len` bytes occupies `ceil(len / slot_size)` consecutive
//! payload slots of its own and one metadata slot, so releasing a record's payload slots never
//! releases part of another record. A batch ([`Flush`]) always holds whole records and never more
//! than SF bytes of payload: a record that would not fit closes the pending batch first. Hence a
//! flush needs at most `SF / slot_size` payload slots of credit, and [`Batcher::new`] checks that
//! the payload ring can ever grant that much.
//!
//! Before batching, results pass a [`Sequencer`]: out of order (as produced, the paper's OoO
//! streaming) or in order (a reorder buffer that releases results in tag order even though the
//! compute engine finished them out of order).

use core::fmt;

use super::gap_head::{GapHead, GapHeadError};
use super::ring::{RingGeometry, RingIndex};

/// Errors of the batcher and the sequencer. Every error leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BatchError {
    /// The slot size is zero.
    ZeroSlotSize,
    /// The streaming factor is zero.
    ZeroStreamingFactor,
    /// The streaming factor is not a whole number of slots.
    NotSlotMultiple,
    /// The streaming factor needs more payload slots than the payload ring has: a full batch could
    /// never get credit.
    ExceedsPayloadRing,
    /// A record of zero bytes: it would occupy no slot and could not be released.
    EmptyRecord,
    /// A record larger than the streaming factor: it could not fit any batch.
    RecordTooLarge,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::ZeroSlotSize => "slot size is zero",
            Self::ZeroStreamingFactor => "streaming factor is zero",
            Self::NotSlotMultiple => "streaming factor is not a multiple of the slot size",
            Self::ExceedsPayloadRing => "streaming factor exceeds the payload ring",
            Self::EmptyRecord => "record is empty",
            Self::RecordTooLarge => "record is larger than the streaming factor",
        };
        f.write_str(msg)
    }
}

/// The streaming factor: how much payload the device accumulates before it back-streams.
///
/// # Invariants
///
/// `slot_size > 0`, `slots > 0`, and `slots * slot_size` fits in a `u32` (it is the SF in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamingFactor {
    slot_size: u32,
    slots: u32,
}

impl StreamingFactor {
    /// Validates an SF of `sf_bytes`, a multiple of `slot_size` (the DMA slot = payload slot size).
    pub const fn new(sf_bytes: u32, slot_size: u32) -> Result<Self, BatchError> {
        if slot_size == 0 {
            return Err(BatchError::ZeroSlotSize);
        }
        if sf_bytes == 0 {
            return Err(BatchError::ZeroStreamingFactor);
        }
        if sf_bytes % slot_size != 0 {
            return Err(BatchError::NotSlotMultiple);
        }
        // INVARIANT: both are non-zero and `slots * slot_size == sf_bytes`.
        Ok(Self {
            slot_size,
            slots: sf_bytes / slot_size,
        })
    }

    /// The payload slot size in bytes.
    pub const fn slot_size(self) -> u32 {
        self.slot_size
    }

    /// The SF in payload slots.
    pub const fn slots(self) -> u32 {
        self.slots
    }

    /// The SF in bytes.
    pub const fn bytes(self) -> u32 {
        // Cannot overflow: it equals the `sf_bytes` the factor was built from.
        self.slots * self.slot_size
    }

    /// Payload slots a record of `len` bytes occupies.
    pub const fn slots_for(self, len: u32) -> Result<u32, BatchError> {
        if len == 0 {
            return Err(BatchError::EmptyRecord);
        }
        let slots = len.div_ceil(self.slot_size);
        if slots > self.slots {
            return Err(BatchError::RecordTooLarge);
        }
        Ok(slots)
    }
}

/// One batch to back-stream: the next `records` pending records, in push order.
///
/// The device reserves `slots` payload slots and `records` metadata slots, writes the payloads,
/// then (after a write barrier) the payload tail, then the metadata records, then (after a write
/// barrier) the metadata tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flush {
    /// Number of records, i.e. metadata slots.
    pub records: u32,
    /// Number of payload slots.
    pub slots: u32,
    /// Payload bytes of the records (at most `slots * slot_size`).
    pub bytes: u32,
}

impl Flush {
    /// Whether the batch holds no record.
    pub const fn is_empty(&self) -> bool {
        self.records == 0
    }
}

/// The zero, one or two batches closed by one [`Batcher::push`], in the order to stream them.
///
/// Two batches close when the new record did not fit the pending batch (which closes first) and
/// then fills its own batch on its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flushes {
    first: Option<Flush>,
    second: Option<Flush>,
}

impl Flushes {
    fn add(&mut self, flush: Flush) {
        if self.first.is_none() {
            self.first = Some(flush);
        } else {
            self.second = Some(flush);
        }
    }

    /// Whether no batch closed.
    pub const fn is_empty(&self) -> bool {
        self.first.is_none() && self.second.is_none()
    }
}

impl Iterator for Flushes {
    type Item = Flush;

    fn next(&mut self) -> Option<Flush> {
        self.first.take().or_else(|| self.second.take())
    }
}

/// The device-side streaming-factor batcher.
///
/// It only counts; the records themselves stay in the caller's queue, and a [`Flush`] tells how
/// many of them, from the front, to stream.
///
/// # Invariants
///
/// Between calls the pending batch is below both limits: `pending.slots < sf.slots()` and
/// `pending.records < max_records`; a batch that reaches either limit is closed at once.
/// `max_records` is in `1..=sf.slots()`, and `sf.slots()` is at most the payload ring capacity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Batcher {
    sf: StreamingFactor,
    max_records: u32,
    pending: Flush,
}

impl Batcher {
    /// Creates a batcher streaming into the given payload and metadata rings.
    ///
    /// A batch is also closed when it holds as many records as the metadata ring has slots, so that
    /// every batch can get metadata credit too.
    pub fn new(
        sf: StreamingFactor,
        payload: RingGeometry,
        metadata: RingGeometry,
    ) -> Result<Self, BatchError> {
        if sf.slots() > payload.capacity() {
            return Err(BatchError::ExceedsPayloadRing);
        }
        // INVARIANT: both capacities and `sf.slots()` are at least 1.
        Ok(Self {
            sf,
            max_records: sf.slots().min(metadata.capacity()),
            pending: Flush::default(),
        })
    }

    /// The streaming factor.
    pub fn streaming_factor(&self) -> StreamingFactor {
        self.sf
    }

    /// The most records one batch holds.
    pub fn max_records(&self) -> u32 {
        self.max_records
    }

    /// The batch accumulated so far (not yet closed).
    pub fn pending(&self) -> Flush {
        self.pending
    }

    /// Adds a record of `len` bytes and returns the batches that closed, in streaming order.
    ///
    /// If the record does not fit in the pending batch, the pending batch closes first (without the
    /// record). The batch holding the record closes when it reaches the SF or `max_records`.
    pub fn push(&mut self, len: u32) -> Result<Flushes, BatchError> {
        let slots = self.sf.slots_for(len)?;
        let mut closed = Flushes::default();
        // Cannot overflow: `pending.slots < sf.slots` and `slots <= sf.slots`, both at most `2^31`.
        if self.pending.slots + slots > self.sf.slots() {
            closed.add(self.take());
        }
        // Cannot overflow: the sums stay within one SF, since a record's bytes never exceed its
        // slots' bytes, and the record count stays within `max_records`.
        self.pending.records += 1;
        self.pending.slots += slots;
        self.pending.bytes += len;
        if self.pending.slots == self.sf.slots() || self.pending.records == self.max_records {
            closed.add(self.take());
        }
        // INVARIANT: a batch at either limit was closed above.
        Ok(closed)
    }

    /// Closes the pending batch, if any: the final flush at the end of an offload, or an early
    /// flush the caller decides on (e.g. after a timeout).
    pub fn flush(&mut self) -> Option<Flush> {
        if self.pending.is_empty() {
            return None;
        }
        Some(self.take())
    }

    fn take(&mut self) -> Flush {
        core::mem::take(&mut self.pending)
    }
}

/// The order in which results are handed to the batcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamingOrder {
    /// As the compute engine produces them (AXLE's OoO streaming): no reordering, no holding back.
    OutOfOrder,
    /// In tag order, through a reorder buffer.
    InOrder,
}

/// Errors of the sequencer. Every error leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SequenceError {
    /// The bitmap storage is too small for the reorder window.
    StorageTooSmall,
    /// The tag lies beyond the reorder window `[next_tag, next_tag + window)`; the producer must
    /// hold the result until earlier tags complete.
    OutOfWindow,
    /// The tag is in the window and already completed.
    Duplicate,
    /// The tag was already released to the batcher.
    AlreadyReleased,
}

impl fmt::Display for SequenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::StorageTooSmall => "bitmap storage is too small for the reorder window",
            Self::OutOfWindow => "tag is beyond the reorder window",
            Self::Duplicate => "tag completed twice",
            Self::AlreadyReleased => "tag was already released",
        };
        f.write_str(msg)
    }
}

/// A run of consecutive tags, `first, first + 1, ..., first + count - 1` (wrapping), that may now
/// be handed to the batcher in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TagRun {
    /// The first tag.
    pub first: u32,
    /// Number of tags, at least 1.
    pub count: u32,
}

/// The in-order reorder buffer: a gap-aware head over tags.
///
/// Completing a tag is releasing a slot of a ring whose tail is always one window ahead of the
/// head; the head (`next_tag`) advances over the contiguous run of completed tags, which is exactly
/// the run that may be streamed in order. The results themselves stay in the caller's storage,
/// indexed for example by `tag & (window - 1)`.
///
/// # Invariants
///
/// Every completed tag not yet released lies in `[next_tag, next_tag + window)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReorderBuffer<B> {
    tags: GapHead<B>,
}

impl<B: AsRef<[u64]> + AsMut<[u64]>> ReorderBuffer<B> {
    /// Creates a reorder buffer over a window of `window.capacity()` tags, expecting `first_tag`
    /// first. `storage` needs [`bitmap_words`](super::gap_head::bitmap_words)`(window.capacity())`
    /// words.
    pub fn new(window: RingGeometry, storage: B, first_tag: u32) -> Result<Self, SequenceError> {
        let start = RingIndex::new(first_tag);
        let mut tags =
            GapHead::new(window, storage, start).map_err(|_| SequenceError::StorageTooSmall)?;
        // Cannot fail: an empty window may receive one full capacity.
        let _ = tags.receive(start.wrapping_add(window.capacity()));
        Ok(Self { tags })
    }

    /// The next tag to release: every earlier tag has been released.
    pub fn next_tag(&self) -> u32 {
        self.tags.head().raw()
    }

    /// The number of tags the window spans.
    pub fn window(&self) -> u32 {
        self.tags.geometry().capacity()
    }

    /// Records that the result of `tag` is complete; returns the tags now releasable, if any.
    pub fn complete(&mut self, tag: u32) -> Result<Option<TagRun>, SequenceError> {
        let first = self.tags.head();
        let count = self
            .tags
            .release(RingIndex::new(tag))
            .map_err(|e| match e {
                GapHeadError::NotReceived => SequenceError::OutOfWindow,
                GapHeadError::AlreadyReleased => SequenceError::Duplicate,
                _ => SequenceError::AlreadyReleased,
            })?;
        // Slide the window: its end stays one capacity after the head. Cannot fail, since the new
        // tail is neither before the old one nor more than a capacity after the head.
        let _ = self
            .tags
            .receive(self.tags.head().wrapping_add(self.window()));
        Ok((count > 0).then_some(TagRun {
            first: first.raw(),
            count,
        }))
    }
}

/// Hands completed results to the batcher according to a [`StreamingOrder`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Sequencer<B> {
    /// Results are released as produced.
    OutOfOrder,
    /// Results are released in tag order.
    InOrder(ReorderBuffer<B>),
}

impl<B: AsRef<[u64]> + AsMut<[u64]>> Sequencer<B> {
    /// The order in effect.
    pub fn order(&self) -> StreamingOrder {
        match self {
            Self::OutOfOrder => StreamingOrder::OutOfOrder,
            Self::InOrder(_) => StreamingOrder::InOrder,
        }
    }

    /// Records that the result of `tag` is complete; returns the tags to hand to the batcher now,
    /// in order. Out of order this is always `tag` alone (tags are not tracked, so duplicates are
    /// not detected); in order it is the run of completed tags that `tag` unblocked, if any.
    pub fn complete(&mut self, tag: u32) -> Result<Option<TagRun>, SequenceError> {
        match self {
            Self::OutOfOrder => Ok(Some(TagRun {
                first: tag,
                count: 1,
            })),
            Self::InOrder(rob) => rob.complete(tag),
        }
    }
}
