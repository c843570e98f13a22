// SPDX-License-Identifier: GPL-2.0

//! The DMA executor's planning: which bytes go where, in which order, and when to wait for credit
//! (AXLE §IV-B "DMA executor", §IV-C "Memory Correctness", §IV-D "shadow the descriptors").
//!
//! The compute engine completes results (one per chunk, [`ResultRecord`]). The executor
//! ([`DmaExecutor`]) passes them through the tenant's [`Sequencer`] (out of order, or in order
//! through a reorder buffer) into its [`Batcher`], which closes a batch when the pending payload
//! reaches the streaming factor (SF), when a final record arrives, or on an early flush. A closed
//! batch is back-streamed once both rings have credit: [`DmaExecutor::begin_batch`] reserves the
//! batch's payload slots and metadata slots against the heads last received (both or neither;
//! otherwise [`Next::WaitCredit`]), and [`Steps`] lists the writes, in the order the paper
//! requires:
//!
//! 1. [`Step::CopyPayload`]: the records' payload bytes into their payload slots, split at the
//!    ring's end ([`RingGeometry::runs`]) and at DMA segment boundaries;
//! 2. [`Step::WriteBarrier`];
//! 3. [`Step::StoreTail`] of the payload ring;
//! 4. [`Step::WriteMetadata`]: one [`MetadataRecord`] per record;
//! 5. [`Step::WriteBarrier`];
//! 6. [`Step::StoreTail`] of the metadata ring.
//!
//! A batch without payload (only an empty final record) has steps 4 to 6 only. The caller
//! performs the steps (memory writes through the shadowed descriptors, a release fence for each
//! barrier), then calls [`DmaExecutor::end_batch`]. One batch is in flight at a time, so tails are
//! stored in increasing order.
//!
//! # Addresses
//!
//! The host's DMA region is the concatenation of the [`DmaSegment`]s of its [`DescriptorTable`]
//! ([`RegionLayout`]). Every step names its destination both as a *region offset* and as a
//! [`SegAddr`] (segment index, offset in the segment, bus address). Ring offsets and segment
//! lengths are multiples of [`DMA_SEGMENT_ALIGN`] and the slot size divides it, so a slot, a
//! metadata record or a tail never straddles two segments; a multi-slot payload copy may, and is
//! split.
//!
//! # Records and batches
//!
//! A record of `length > 0` bytes occupies `ceil(length / slot_size)` payload slots of its own
//! (pad bytes are not written). A record of `length == 0` (allowed only with [`MD_FLAG_FINAL`]:
//! an empty result or an error report) occupies no payload slot; the [`Batcher`] cannot count
//! such a record, so the executor closes the pending batch with the record as its last (the
//! batcher closes a batch at `max_records`, so an open batch always has room for one more).
//!
//! `MD_FLAG_FINAL` must be on the last record of its launch *in streaming order*: out of order,
//! the chunk whose completion finished the job (`scheduler::Completion::job_done`); in order, the
//! last chunk (`scheduler::WorkItem::last`). A final record also closes the pending batch, so the
//! end of a launch is never held back waiting for the SF.
//!
//! # Back-pressure
//!
//! The executor never advances a tail past the head it last received ([`DeviceCredit`]): a batch
//! without credit returns [`Next::WaitCredit`], counts a refusal on the short ring(s), and the
//! caller re-reads the heads from its credit line ([`DmaExecutor::receive_heads`]) and retries.
//! The time from the first refusal of a batch to its reservation is added to
//! [`ExecStats::credit_wait_ns`] (the caller supplies the clock).

use core::cell::Cell;
use core::fmt;
use core::mem::offset_of;

use super::latency::Operation;
use crate::abi::{
    DescriptorTable, DmaSegment, MetadataRecord, RingHeader, RingHeaders, DESCRIPTOR_MAGIC,
    DMA_SEGMENT_ALIGN, DMA_SEG_LAST, MAX_SLOT_SIZE, MD_FLAG_ERROR, MD_FLAG_FINAL,
    METADATA_RECORD_SIZE, MIN_SLOT_SIZE,
};
use crate::proto::batcher::{BatchError, Batcher, Flush, SequenceError, Sequencer};
use crate::proto::credit::{CreditError, DeviceCredit};
use crate::proto::ring::{RingError, RingGeometry, RingIndex};

/// Size of the [`RingHeaders`] block at `headers_offset`.
const HEADERS_SIZE: u64 = core::mem::size_of::<RingHeaders>() as u64;

/// Bytes of a tail store.
pub const TAIL_SIZE: u32 = 4;

// ---------------------------------------------------------------------------------------------
// The region layout
// ---------------------------------------------------------------------------------------------

/// Errors of the region layout and of address translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionError {
    /// [`DescriptorTable::magic`] is not [`DESCRIPTOR_MAGIC`].
    BadMagic,
    /// The table has no segment.
    NoSegments,
    /// [`DescriptorTable::segment_count`] differs from the number of segments given.
    SegmentCountMismatch,
    /// A segment of zero bytes.
    ZeroLengthSegment {
        /// The segment's index.
        index: u32,
    },
    /// A segment whose bus address or length is not a multiple of [`DMA_SEGMENT_ALIGN`].
    MisalignedSegment {
        /// The segment's index.
        index: u32,
    },
    /// [`DMA_SEG_LAST`] on a segment other than the last, or missing on the last.
    BadLastFlag {
        /// The segment's index.
        index: u32,
    },
    /// A segment whose bus range wraps around the 64-bit address space.
    SegmentWraps {
        /// The segment's index.
        index: u32,
    },
    /// Two segments cover the same bus addresses: the device would write one host page for two
    /// region ranges.
    OverlappingSegments {
        /// The earlier segment.
        first: u32,
        /// The later segment.
        second: u32,
    },
    /// The segment lengths do not add up to [`DescriptorTable::region_size`].
    RegionSizeMismatch,
    /// A ring offset is not a multiple of [`DMA_SEGMENT_ALIGN`].
    MisalignedOffset,
    /// The ring headers or a ring extend beyond the region.
    RingOutOfRegion,
    /// Two of headers, metadata ring and payload ring overlap.
    RingsOverlap,
    /// The payload slot size is not a power of two in `MIN_SLOT_SIZE..=MAX_SLOT_SIZE`.
    BadSlotSize,
    /// A region offset (or range) beyond the region.
    OutOfRange,
    /// A range that crosses a segment boundary where one piece was required.
    Straddles,
    /// A ring index computation failed (a run longer than the ring).
    Ring(RingError),
}

impl From<RingError> for RegionError {
    fn from(e: RingError) -> Self {
        Self::Ring(e)
    }
}

impl fmt::Display for RegionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => f.write_str("descriptor table has a bad magic"),
            Self::NoSegments => f.write_str("descriptor table has no segment"),
            Self::SegmentCountMismatch => f.write_str("segment count mismatch"),
            Self::ZeroLengthSegment { index } => write!(f, "segment {index} is empty"),
            Self::MisalignedSegment { index } => write!(f, "segment {index} is misaligned"),
            Self::BadLastFlag { index } => write!(f, "segment {index} has a wrong LAST flag"),
            Self::SegmentWraps { index } => write!(f, "segment {index} wraps the bus space"),
            Self::OverlappingSegments { first, second } => {
                write!(f, "segments {first} and {second} overlap")
            }
            Self::RegionSizeMismatch => f.write_str("segment lengths do not add up to the region"),
            Self::MisalignedOffset => f.write_str("ring offset is misaligned"),
            Self::RingOutOfRegion => f.write_str("ring extends beyond the region"),
            Self::RingsOverlap => f.write_str("rings overlap"),
            Self::BadSlotSize => f.write_str("bad payload slot size"),
            Self::OutOfRange => f.write_str("region offset out of range"),
            Self::Straddles => f.write_str("range straddles a segment boundary"),
            Self::Ring(e) => write!(f, "ring: {e}"),
        }
    }
}

/// A destination in the host's DMA region, as the DMA engine addresses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SegAddr {
    /// Index of the segment in the descriptor table.
    pub segment: u32,
    /// Byte offset in the segment.
    pub offset: u32,
    /// Bus address: the segment's `bus_addr + offset`.
    pub bus_addr: u64,
}

/// The two result rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ring {
    /// The metadata ring.
    Metadata,
    /// The payload ring.
    Payload,
}

/// Where the last segment lookup of each part of a region ended: `(segment index, its offset
/// in the region)`. The device walks each ring in order, so a lookup that starts where the
/// previous one in the same ring ended takes a step or two, where a search from the first
/// segment takes one per segment (hundreds for a large ring). One cursor per ring, since one
/// batch's steps alternate between the rings; the cursors only speed lookups up, so layouts
/// compare equal whatever they hold.
#[derive(Clone, Debug, Default)]
struct Cursors([Cell<(usize, u64)>; 4]);

impl Cursors {
    /// The cursor of the part of the region `offset` is in: after how many of the rings'
    /// `starts` it lies.
    fn for_offset(&self, offset: u64, starts: [u64; 3]) -> &Cell<(usize, u64)> {
        let part = starts.iter().filter(|&&s| s <= offset).count();
        &self.0[part.min(3)]
    }
}

impl PartialEq for Cursors {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Cursors {}

/// A tenant's validated DMA region: its segments and where the rings are in it.
///
/// `S` holds the segments (a slice, an array, or the kernel's vector of the descriptors the
/// device copied at enable).
///
/// # Invariants
///
/// - The segments are non-empty, [`DMA_SEGMENT_ALIGN`]-aligned in bus address and length,
///   pairwise disjoint in bus space, and add up to `region_size`.
/// - `headers_offset`, `metadata_offset`, `payload_offset` are [`DMA_SEGMENT_ALIGN`]-aligned; the
///   ring headers (256 bytes), the metadata ring (`capacity * METADATA_RECORD_SIZE` bytes) and
///   the payload ring (`capacity * slot_size` bytes) lie inside the region and do not overlap.
/// - `slot_size` is a power of two in `MIN_SLOT_SIZE..=MAX_SLOT_SIZE`, so it divides
///   [`DMA_SEGMENT_ALIGN`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionLayout<S> {
    segments: S,
    /// Where the last lookups ended, to start the next one there.
    cursors: Cursors,
    region_size: u64,
    headers_offset: u64,
    metadata_offset: u64,
    payload_offset: u64,
    metadata: RingGeometry,
    payload: RingGeometry,
    slot_size: u32,
}

impl<S: AsRef<[DmaSegment]>> RegionLayout<S> {
    /// Validates a tenant's descriptor table and segments against its ring configuration.
    ///
    /// Takes `O(segments²)` time (the bus-overlap check); it runs once, at tenant enable.
    pub fn new(
        table: &DescriptorTable,
        segments: S,
        metadata: RingGeometry,
        payload: RingGeometry,
        slot_size: u32,
    ) -> Result<Self, RegionError> {
        if table.magic != DESCRIPTOR_MAGIC {
            return Err(RegionError::BadMagic);
        }
        if !slot_size.is_power_of_two() || !(MIN_SLOT_SIZE..=MAX_SLOT_SIZE).contains(&slot_size) {
            return Err(RegionError::BadSlotSize);
        }
        let segs = segments.as_ref();
        if segs.is_empty() {
            return Err(RegionError::NoSegments);
        }
        if table.segment_count as usize != segs.len() {
            return Err(RegionError::SegmentCountMismatch);
        }
        let align = u64::from(DMA_SEGMENT_ALIGN);
        let mut total = 0u64;
        for (i, seg) in segs.iter().enumerate() {
            // Cannot truncate: `segs.len() == segment_count`, a `u32`.
            let index = i as u32;
            if seg.len == 0 {
                return Err(RegionError::ZeroLengthSegment { index });
            }
            if seg.bus_addr % align != 0 || seg.len % DMA_SEGMENT_ALIGN != 0 {
                return Err(RegionError::MisalignedSegment { index });
            }
            let last = i + 1 == segs.len();
            if (seg.flags & DMA_SEG_LAST != 0) != last {
                return Err(RegionError::BadLastFlag { index });
            }
            if seg.bus_addr.checked_add(u64::from(seg.len)).is_none() {
                return Err(RegionError::SegmentWraps { index });
            }
            // Cannot overflow: at most 2^32 segments of less than 2^32 bytes each.
            total += u64::from(seg.len);
        }
        for (i, a) in segs.iter().enumerate() {
            for (j, b) in segs.iter().enumerate().skip(i + 1) {
                // Both ends fit (checked above).
                let disjoint = a.bus_addr + u64::from(a.len) <= b.bus_addr
                    || b.bus_addr + u64::from(b.len) <= a.bus_addr;
                if !disjoint {
                    return Err(RegionError::OverlappingSegments {
                        first: i as u32,
                        second: j as u32,
                    });
                }
            }
        }
        if total != table.region_size {
            return Err(RegionError::RegionSizeMismatch);
        }
        let ranges = [
            (table.headers_offset, HEADERS_SIZE),
            (
                table.metadata_offset,
                u64::from(metadata.capacity()) * u64::from(METADATA_RECORD_SIZE),
            ),
            (
                table.payload_offset,
                u64::from(payload.capacity()) * u64::from(slot_size),
            ),
        ];
        for (start, size) in ranges {
            if start % align != 0 {
                return Err(RegionError::MisalignedOffset);
            }
            match start.checked_add(size) {
                Some(end) if end <= total => {}
                _ => return Err(RegionError::RingOutOfRegion),
            }
        }
        for (i, &(a, alen)) in ranges.iter().enumerate() {
            for &(b, blen) in ranges.iter().skip(i + 1) {
                // Both ends are within the region (checked above).
                if a < b + blen && b < a + alen {
                    return Err(RegionError::RingsOverlap);
                }
            }
        }
        // INVARIANT: every property of the type invariant was checked above.
        Ok(Self {
            segments,
            cursors: Cursors::default(),
            region_size: total,
            headers_offset: table.headers_offset,
            metadata_offset: table.metadata_offset,
            payload_offset: table.payload_offset,
            metadata,
            payload,
            slot_size,
        })
    }

    /// The segments.
    pub fn segments(&self) -> &[DmaSegment] {
        self.segments.as_ref()
    }

    /// The region's size in bytes.
    pub fn region_size(&self) -> u64 {
        self.region_size
    }

    /// The payload slot size.
    pub fn slot_size(&self) -> u32 {
        self.slot_size
    }

    /// The metadata ring's geometry.
    pub fn metadata(&self) -> RingGeometry {
        self.metadata
    }

    /// The payload ring's geometry.
    pub fn payload(&self) -> RingGeometry {
        self.payload
    }

    /// Region offset of the [`RingHeaders`].
    pub fn headers_offset(&self) -> u64 {
        self.headers_offset
    }

    /// Region offset of payload slot `slot` (taken modulo the capacity).
    pub fn payload_slot_offset(&self, slot: u32) -> u64 {
        self.payload_offset + u64::from(slot & self.payload.mask()) * u64::from(self.slot_size)
    }

    /// Region offset of metadata slot `slot` (taken modulo the capacity).
    pub fn metadata_slot_offset(&self, slot: u32) -> u64 {
        self.metadata_offset
            + u64::from(slot & self.metadata.mask()) * u64::from(METADATA_RECORD_SIZE)
    }

    /// Region offset of a ring's tail ([`RingHeader::tail`] in the [`RingHeaders`]).
    pub fn tail_offset(&self, ring: Ring) -> u64 {
        let header = match ring {
            Ring::Metadata => offset_of!(RingHeaders, metadata),
            Ring::Payload => offset_of!(RingHeaders, payload),
        };
        self.headers_offset + (header + offset_of!(RingHeader, tail)) as u64
    }

    /// The first piece of the range `[offset, offset + len)`: its address and its length, up to
    /// the end of the segment holding `offset`. Fails if the range leaves the region.
    ///
    /// Takes `O(segments)` time.
    pub fn piece(&self, offset: u64, len: u32) -> Result<(SegAddr, u32), RegionError> {
        match offset.checked_add(u64::from(len)) {
            Some(end) if end <= self.region_size => {}
            _ => return Err(RegionError::OutOfRange),
        }
        let cursor = self.cursors.for_offset(offset, self.ring_starts());
        let (mut i, mut start) = cursor.get();
        if offset < start {
            // The ring wrapped: search from the region's start again.
            (i, start) = (0, 0);
        }
        while let Some(seg) = self.segments().get(i) {
            let seg_len = u64::from(seg.len);
            if offset < start + seg_len {
                cursor.set((i, start));
                let within = offset - start;
                // Cannot truncate: `within < seg.len`, a `u32`; `i` is below `segment_count`.
                let piece = (seg_len - within).min(u64::from(len)) as u32;
                let addr = SegAddr {
                    segment: i as u32,
                    offset: within as u32,
                    bus_addr: seg.bus_addr + within,
                };
                return Ok((addr, piece));
            }
            start += seg_len;
            i += 1;
        }
        Err(RegionError::OutOfRange)
    }

    fn ring_starts(&self) -> [u64; 3] {
        [
            self.headers_offset,
            self.metadata_offset,
            self.payload_offset,
        ]
    }

    /// Translates the range `[offset, offset + len)`, which must lie in one segment.
    pub fn translate(&self, offset: u64, len: u32) -> Result<SegAddr, RegionError> {
        let (addr, piece) = self.piece(offset, len)?;
        if piece != len {
            return Err(RegionError::Straddles);
        }
        Ok(addr)
    }

    /// The pieces of the range `[offset, offset + len)`, split at segment boundaries.
    pub fn pieces(&self, offset: u64, len: u32) -> Pieces<'_, S> {
        Pieces {
            layout: self,
            offset,
            left: len,
            failed: false,
        }
    }
}

/// The pieces of a region range ([`RegionLayout::pieces`]): `(address, length)` pairs.
pub struct Pieces<'a, S> {
    layout: &'a RegionLayout<S>,
    offset: u64,
    left: u32,
    failed: bool,
}

impl<S: AsRef<[DmaSegment]>> Iterator for Pieces<'_, S> {
    type Item = Result<(SegAddr, u32), RegionError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 || self.failed {
            return None;
        }
        match self.layout.piece(self.offset, self.left) {
            Ok((addr, len)) => {
                self.offset += u64::from(len);
                self.left -= len;
                Some(Ok((addr, len)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Records and steps
// ---------------------------------------------------------------------------------------------

/// A completed result, as the compute engine hands it to the DMA executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResultRecord {
    /// The launch tag.
    pub tag: u32,
    /// Payload bytes (0 only with [`MD_FLAG_FINAL`]).
    pub length: u32,
    /// Byte offset of the result in the launch's output.
    pub result_offset: u64,
    /// CRC32C of the payload.
    pub checksum: u32,
    /// `MD_FLAG_*`.
    pub flags: u16,
    /// `STATUS_*`, nonzero only with [`MD_FLAG_ERROR`].
    pub status: u16,
    /// Where the payload is staged (a device-memory offset); copied into [`Step::CopyPayload`]
    /// and otherwise opaque to the executor.
    pub src: u64,
}

impl ResultRecord {
    /// Whether this is the last record of its launch.
    pub const fn is_final(&self) -> bool {
        self.flags & MD_FLAG_FINAL != 0
    }

    /// Checks the flag, status and length rules of [`MetadataRecord`]: only known flags;
    /// [`MD_FLAG_ERROR`] only with [`MD_FLAG_FINAL`] and exactly when `status` is nonzero; an
    /// empty payload only with [`MD_FLAG_FINAL`].
    pub const fn validate(&self) -> Result<(), ExecError> {
        let known = MD_FLAG_FINAL | MD_FLAG_ERROR;
        let error = self.flags & MD_FLAG_ERROR != 0;
        if self.flags & !known != 0
            || (error && !self.is_final())
            || (self.status != 0) != error
            || (self.length == 0 && !self.is_final())
        {
            return Err(ExecError::BadRecord);
        }
        Ok(())
    }
}

/// The slots of one batch, reserved against both rings' credit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reservation {
    /// Free-running index of the batch's first payload slot.
    pub payload_first: RingIndex,
    /// Payload slots reserved.
    pub payload_slots: u32,
    /// Free-running index of the batch's first metadata slot (the first record's `seq`).
    pub metadata_first: RingIndex,
    /// Records (= metadata slots) of the batch.
    pub records: u32,
    /// Payload bytes of the batch.
    pub bytes: u32,
}

impl Reservation {
    /// The payload tail after the batch.
    pub fn payload_tail(&self) -> RingIndex {
        self.payload_first.wrapping_add(self.payload_slots)
    }

    /// The metadata tail after the batch.
    pub fn metadata_tail(&self) -> RingIndex {
        self.metadata_first.wrapping_add(self.records)
    }
}

/// One write of a back-stream, in the order the steps must be performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Copy `len` payload bytes from `src` (the record's staging address plus the bytes already
    /// copied) to `dst`.
    CopyPayload {
        /// Index of the record in the batch.
        record: u32,
        /// Source: [`ResultRecord::src`] plus the offset in the record.
        src: u64,
        /// Destination.
        dst: SegAddr,
        /// Destination as a region offset.
        region_offset: u64,
        /// Bytes.
        len: u32,
    },
    /// A write barrier: every earlier write is visible before any later one.
    WriteBarrier,
    /// Store a ring's tail (a 4-byte little-endian write).
    StoreTail {
        /// The ring.
        ring: Ring,
        /// Destination.
        dst: SegAddr,
        /// Destination as a region offset.
        region_offset: u64,
        /// The new free-running tail.
        value: u32,
    },
    /// Write one metadata record ([`MetadataRecord::to_bytes`]).
    WriteMetadata {
        /// Destination.
        dst: SegAddr,
        /// Destination as a region offset.
        region_offset: u64,
        /// The record.
        record: MetadataRecord,
    },
}

/// Errors of step generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlanError {
    /// The records do not match the reservation (count, slots or bytes).
    ReservationMismatch,
    /// A record's length needs more payload slots than the ring has.
    RecordTooLarge,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReservationMismatch => f.write_str("records do not match the reservation"),
            Self::RecordTooLarge => f.write_str("record exceeds the payload ring"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Payload,
    PayloadBarrier,
    PayloadTail,
    Metadata,
    MetadataBarrier,
    MetadataTail,
    Done,
}

/// The ordered writes of one batch ([`Steps::new`]); an iterator of
/// `Result<Step, RegionError>`.
///
/// Address translation cannot fail for a reservation of a validated [`RegionLayout`]; an error
/// is nevertheless reported rather than hidden, and ends the iteration.
///
/// # Invariants
///
/// `records` and `res` agree: `records.len() == res.records`, the records' slots add up to
/// `res.payload_slots` and their lengths to `res.bytes`.
pub struct Steps<'a, S> {
    layout: &'a RegionLayout<S>,
    records: BatchRecords<'a>,
    res: Reservation,
    phase: Phase,
    /// Current record.
    rec: usize,
    /// Payload bytes of the current record already covered by steps.
    done: u32,
    /// Free-running payload index of the current record's first slot.
    slot: RingIndex,
}

impl<S> Clone for Steps<'_, S> {
    fn clone(&self) -> Self {
        Self {
            layout: self.layout,
            records: self.records,
            res: self.res,
            phase: self.phase,
            rec: self.rec,
            done: self.done,
            slot: self.slot,
        }
    }
}

/// Payload slots a record of `length` bytes occupies (0 for an empty record).
pub const fn slots_for(length: u32, slot_size: u32) -> u32 {
    if slot_size == 0 {
        return 0;
    }
    length.div_ceil(slot_size)
}

/// A batch's records, in order: `first` then `second` (the executor's queue is a ring, so a
/// batch may wrap around its end).
#[derive(Clone, Copy, Debug)]
struct BatchRecords<'a> {
    first: &'a [ResultRecord],
    second: &'a [ResultRecord],
}

impl<'a> BatchRecords<'a> {
    fn get(&self, i: usize) -> Option<&'a ResultRecord> {
        match i.checked_sub(self.first.len()) {
            None => self.first.get(i),
            Some(j) => self.second.get(j),
        }
    }

    fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    fn iter(&self) -> impl Iterator<Item = &'a ResultRecord> {
        self.first.iter().chain(self.second.iter())
    }
}

impl<'a, S: AsRef<[DmaSegment]>> Steps<'a, S> {
    /// The steps that back-stream `records` into the slots of `res`.
    pub fn new(
        layout: &'a RegionLayout<S>,
        records: &'a [ResultRecord],
        res: Reservation,
    ) -> Result<Self, PlanError> {
        Self::split(layout, records, &[], res)
    }

    /// The steps that back-stream the records `first` then `second` into the slots of `res`.
    pub fn split(
        layout: &'a RegionLayout<S>,
        first: &'a [ResultRecord],
        second: &'a [ResultRecord],
        res: Reservation,
    ) -> Result<Self, PlanError> {
        let records = BatchRecords { first, second };
        let mut slots = 0u64;
        let mut bytes = 0u64;
        for r in records.iter() {
            let n = slots_for(r.length, layout.slot_size());
            if n > layout.payload().capacity() {
                return Err(PlanError::RecordTooLarge);
            }
            slots += u64::from(n);
            bytes += u64::from(r.length);
        }
        if records.len() != res.records as usize
            || slots != u64::from(res.payload_slots)
            || bytes != u64::from(res.bytes)
        {
            return Err(PlanError::ReservationMismatch);
        }
        // INVARIANT: checked above.
        Ok(Self {
            layout,
            records,
            res,
            phase: Phase::Payload,
            rec: 0,
            done: 0,
            slot: res.payload_first,
        })
    }

    /// The reservation the steps fill.
    pub fn reservation(&self) -> Reservation {
        self.res
    }

    /// Summarises the steps as DMA requests, for the latency model.
    pub fn requests(&self) -> Result<BatchRequests, RegionError> {
        let mut req = BatchRequests::default();
        let mut last: Option<(u32, u32)> = None;
        for step in self.clone() {
            match step? {
                Step::CopyPayload { dst, len, .. } => {
                    let p = req.payload.get_or_insert(DmaRequest::default());
                    p.add(&mut last, dst, len);
                }
                Step::WriteBarrier => last = None,
                Step::StoreTail { ring, .. } => match ring {
                    Ring::Payload => req.payload_tail = true,
                    Ring::Metadata => req.metadata_tail = true,
                },
                Step::WriteMetadata { dst, .. } => {
                    req.metadata.add(&mut last, dst, METADATA_RECORD_SIZE);
                }
            }
        }
        Ok(req)
    }

    fn fail(&mut self, e: RegionError) -> Option<Result<Step, RegionError>> {
        self.phase = Phase::Done;
        Some(Err(e))
    }

    fn next_payload(&mut self) -> Option<Result<Step, RegionError>> {
        let slot_size = self.layout.slot_size();
        loop {
            let Some(r) = self.records.get(self.rec) else {
                self.phase = if self.res.payload_slots > 0 {
                    Phase::PayloadBarrier
                } else {
                    Phase::Metadata
                };
                self.rec = 0;
                self.slot = self.res.payload_first;
                return None;
            };
            let nslots = slots_for(r.length, slot_size);
            if self.done >= r.length {
                self.slot = self.slot.wrapping_add(nslots);
                self.rec += 1;
                self.done = 0;
                continue;
            }
            let (first, second) = match self.layout.payload().runs(self.slot, nslots) {
                Ok(runs) => runs,
                Err(e) => return self.fail(e.into()),
            };
            let first_bytes = u64::from(first.len) * u64::from(slot_size);
            let done = u64::from(self.done);
            let (run, within) = match second {
                Some(run) if done >= first_bytes => (run, done - first_bytes),
                _ => (first, done),
            };
            let run_bytes = u64::from(run.len) * u64::from(slot_size);
            let region_offset = self.layout.payload_slot_offset(run.start) + within;
            // Cannot truncate: bounded by the record's remaining length, a `u32`.
            let want = u64::from(r.length - self.done).min(run_bytes - within) as u32;
            let (dst, len) = match self.layout.piece(region_offset, want) {
                Ok(p) => p,
                Err(e) => return self.fail(e),
            };
            let step = Step::CopyPayload {
                // Cannot truncate: `rec < records.len() == res.records`, a `u32`.
                record: self.rec as u32,
                src: r.src.wrapping_add(u64::from(self.done)),
                dst,
                region_offset,
                len,
            };
            // `len <= want <= length - done`.
            self.done += len;
            return Some(Ok(step));
        }
    }

    fn tail(
        &mut self,
        ring: Ring,
        value: RingIndex,
        next: Phase,
    ) -> Option<Result<Step, RegionError>> {
        let region_offset = self.layout.tail_offset(ring);
        match self.layout.translate(region_offset, TAIL_SIZE) {
            Ok(dst) => {
                self.phase = next;
                Some(Ok(Step::StoreTail {
                    ring,
                    dst,
                    region_offset,
                    value: value.raw(),
                }))
            }
            Err(e) => self.fail(e),
        }
    }

    fn next_metadata(&mut self) -> Option<Result<Step, RegionError>> {
        let Some(r) = self.records.get(self.rec) else {
            self.phase = Phase::MetadataBarrier;
            return None;
        };
        // Cannot truncate: `rec < res.records`, a `u32`.
        let seq = self.res.metadata_first.wrapping_add(self.rec as u32);
        let region_offset = self.layout.metadata_slot_offset(seq.raw());
        let dst = match self.layout.translate(region_offset, METADATA_RECORD_SIZE) {
            Ok(dst) => dst,
            Err(e) => return self.fail(e),
        };
        let record = MetadataRecord {
            seq: seq.raw(),
            tag: r.tag,
            payload_index: self.slot.raw(),
            length: r.length,
            result_offset: r.result_offset,
            checksum: r.checksum,
            flags: r.flags,
            status: r.status,
        };
        self.slot = self
            .slot
            .wrapping_add(slots_for(r.length, self.layout.slot_size()));
        self.rec += 1;
        Some(Ok(Step::WriteMetadata {
            dst,
            region_offset,
            record,
        }))
    }
}

impl<S: AsRef<[DmaSegment]>> Iterator for Steps<'_, S> {
    type Item = Result<Step, RegionError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let step = match self.phase {
                Phase::Payload => self.next_payload(),
                Phase::PayloadBarrier => {
                    self.phase = Phase::PayloadTail;
                    Some(Ok(Step::WriteBarrier))
                }
                Phase::PayloadTail => {
                    let tail = self.res.payload_tail();
                    self.tail(Ring::Payload, tail, Phase::Metadata)
                }
                Phase::Metadata => self.next_metadata(),
                Phase::MetadataBarrier => {
                    self.phase = Phase::MetadataTail;
                    Some(Ok(Step::WriteBarrier))
                }
                Phase::MetadataTail => {
                    let tail = self.res.metadata_tail();
                    self.tail(Ring::Metadata, tail, Phase::Done)
                }
                Phase::Done => return None,
            };
            // `None` from a data phase means "phase over, go on with the next one".
            if step.is_some() {
                return step;
            }
        }
    }
}

/// One DMA request: bytes and scatter-gather pieces (contiguous writes merged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DmaRequest {
    /// Bytes transferred.
    pub bytes: u32,
    /// Contiguous pieces.
    pub segments: u32,
}

impl DmaRequest {
    fn add(&mut self, last: &mut Option<(u32, u32)>, dst: SegAddr, len: u32) {
        let contiguous =
            matches!(*last, Some((seg, end)) if seg == dst.segment && end == dst.offset);
        if !contiguous {
            self.segments = self.segments.saturating_add(1);
        }
        self.bytes = self.bytes.saturating_add(len);
        *last = Some((dst.segment, dst.offset.saturating_add(len)));
    }
}

/// A batch as DMA requests: the payload (if any), the payload tail, the metadata records and the
/// metadata tail, in that order (the paper's per-batch DMA overheads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BatchRequests {
    /// The payload copy, if the batch has payload.
    pub payload: Option<DmaRequest>,
    /// Whether the payload tail is stored.
    pub payload_tail: bool,
    /// The metadata records.
    pub metadata: DmaRequest,
    /// Whether the metadata tail is stored.
    pub metadata_tail: bool,
}

impl BatchRequests {
    /// The requests as latency-model operations, in order (each tail store a 4-byte DMA request).
    pub fn operations(&self) -> impl Iterator<Item = Operation> {
        let tail = Operation::Dma {
            bytes: TAIL_SIZE,
            segments: 1,
        };
        let dma = |r: DmaRequest| Operation::Dma {
            bytes: r.bytes,
            segments: r.segments,
        };
        let metadata = (self.metadata.bytes > 0).then_some(dma(self.metadata));
        [
            self.payload.map(dma),
            self.payload_tail.then_some(tail),
            metadata,
            self.metadata_tail.then_some(tail),
        ]
        .into_iter()
        .flatten()
    }
}

// ---------------------------------------------------------------------------------------------
// The executor
// ---------------------------------------------------------------------------------------------

/// Errors of the DMA executor. Every error leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecError {
    /// The batcher's slot size is not the region's.
    SlotSizeMismatch,
    /// A credit's ring geometry is not the region's.
    GeometryMismatch,
    /// The reorder window exceeds the hold storage `W`.
    WindowTooLarge,
    /// The pending queue `Q` is smaller than a batch's records plus the reorder window, so the
    /// executor could deadlock.
    QueueTooSmall,
    /// A record breaks the flag, status or length rules ([`ResultRecord::validate`]).
    BadRecord,
    /// A record longer than the streaming factor.
    Batch(BatchError),
    /// The sequencer refused the result (in order: beyond the reorder window, or a duplicate).
    Sequence(SequenceError),
    /// A head from the credit line is invalid (before the last one, or beyond the tail).
    Credit(CreditError),
    /// The pending queue is full: stream a batch first.
    QueueFull,
    /// A batch is in flight: end it first.
    Busy,
    /// No batch is in flight.
    NotStreaming,
    /// Broken internal state (a released result missing from the hold storage).
    Internal,
}

impl From<BatchError> for ExecError {
    fn from(e: BatchError) -> Self {
        Self::Batch(e)
    }
}

impl From<SequenceError> for ExecError {
    fn from(e: SequenceError) -> Self {
        Self::Sequence(e)
    }
}

impl From<CreditError> for ExecError {
    fn from(e: CreditError) -> Self {
        Self::Credit(e)
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SlotSizeMismatch => f.write_str("batcher slot size differs from the region's"),
            Self::GeometryMismatch => f.write_str("credit ring geometry differs from the region's"),
            Self::WindowTooLarge => f.write_str("reorder window exceeds the hold storage"),
            Self::QueueTooSmall => f.write_str("pending queue too small for a batch and window"),
            Self::BadRecord => f.write_str("record breaks the flag, status or length rules"),
            Self::Batch(e) => write!(f, "batcher: {e}"),
            Self::Sequence(e) => write!(f, "sequencer: {e}"),
            Self::Credit(e) => write!(f, "credit: {e}"),
            Self::QueueFull => f.write_str("pending queue is full"),
            Self::Busy => f.write_str("a batch is in flight"),
            Self::NotStreaming => f.write_str("no batch is in flight"),
            Self::Internal => f.write_str("internal state broken"),
        }
    }
}

/// How far a batch is short of credit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shortfall {
    /// Payload slots the batch needs.
    pub payload_needed: u32,
    /// Payload slots free according to the last payload head received.
    pub payload_available: u32,
    /// Metadata slots the batch needs.
    pub metadata_needed: u32,
    /// Metadata slots free according to the last metadata head received.
    pub metadata_available: u32,
}

/// What [`DmaExecutor::begin_batch`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Next {
    /// No closed batch is pending.
    Idle,
    /// The next batch lacks credit: read the heads again, then retry.
    WaitCredit(Shortfall),
    /// The batch's slots are reserved: perform [`DmaExecutor::steps`], then
    /// [`DmaExecutor::end_batch`].
    Stream(Reservation),
}

/// Counters of the executor (the tenant's `records`, `payload_bytes`, `dma_batches`,
/// `credit_stalls` registers, and the credit wait time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExecStats {
    /// Records streamed (batches ended).
    pub records: u64,
    /// Payload bytes streamed.
    pub payload_bytes: u64,
    /// Batches streamed.
    pub batches: u64,
    /// Batches that had to wait for credit.
    pub credit_stalls: u64,
    /// Nanoseconds batches waited for credit, from the first refusal to the reservation.
    pub credit_wait_ns: u64,
}

/// The executor's storage: the pending queue (records and their batch-end marks, of equal
/// length `Q`) and the hold storage of the reorder window (`W` entries). A trait so that the
/// host tests keep them in arrays ([`ArrayBuffers`]) and the kernel on the heap.
pub trait ExecBuffers {
    /// The pending records, `Q` of them.
    fn records(&self) -> &[ResultRecord];
    /// The pending records, mutable.
    fn records_mut(&mut self) -> &mut [ResultRecord];
    /// The batch-end marks, one per pending record.
    fn batch_end(&self) -> &[bool];
    /// The batch-end marks, mutable.
    fn batch_end_mut(&mut self) -> &mut [bool];
    /// The hold storage, `W` entries.
    fn hold(&self) -> &[Option<ResultRecord>];
    /// The hold storage, mutable.
    fn hold_mut(&mut self) -> &mut [Option<ResultRecord>];
}

/// [`ExecBuffers`] in arrays: a queue of `Q` records and a hold storage of `W` results.
#[derive(Clone, Debug)]
pub struct ArrayBuffers<const Q: usize, const W: usize> {
    records: [ResultRecord; Q],
    batch_end: [bool; Q],
    hold: [Option<ResultRecord>; W],
}

impl<const Q: usize, const W: usize> Default for ArrayBuffers<Q, W> {
    fn default() -> Self {
        Self {
            records: [ResultRecord::default(); Q],
            batch_end: [false; Q],
            hold: [None; W],
        }
    }
}

/// Implements [`ExecBuffers`] for a type whose fields `records`, `batch_end` and `hold` deref to
/// the three slices: `impl_exec_buffers!(impl [generics] for Type);`.
macro_rules! impl_exec_buffers {
    (impl [$($gen:tt)*] for $ty:ty) => {
        impl<$($gen)*> $crate::model::dma_plan::ExecBuffers for $ty {
            fn records(&self) -> &[$crate::model::dma_plan::ResultRecord] {
                &self.records
            }
            fn records_mut(&mut self) -> &mut [$crate::model::dma_plan::ResultRecord] {
                &mut self.records
            }
            fn batch_end(&self) -> &[bool] {
                &self.batch_end
            }
            fn batch_end_mut(&mut self) -> &mut [bool] {
                &mut self.batch_end
            }
            fn hold(&self) -> &[Option<$crate::model::dma_plan::ResultRecord>] {
                &self.hold
            }
            fn hold_mut(&mut self) -> &mut [Option<$crate::model::dma_plan::ResultRecord>] {
                &mut self.hold
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use impl_exec_buffers;

impl_exec_buffers!(impl [const Q: usize, const W: usize] for ArrayBuffers<Q, W>);

/// The DMA executor of one tenant: sequencer, batcher, credit and the pending records.
///
/// `S` holds the DMA segments, `B` the reorder buffer's bitmap, `M` the buffers: `Q` records can
/// be pending (closed or open batches), and `W` results can be held out of order (the reorder
/// window; 0 suffices for out-of-order streaming).
///
/// # Invariants
///
/// - `Q` is `buf.records().len()`, which equals `buf.batch_end().len()`; `W` is
///   `buf.hold().len()`.
/// - The pending queue is a ring over `records` and `batch_end`: position `i` of the queue is
///   index `(head + i) % Q`, `head < Q`. Positions `..len` are the released, not yet streamed
///   records in streaming order; `batch_end` marks the last record of each closed batch;
///   positions `open_start..len` are the batcher's open batch (no mark), and every record
///   before `open_start` belongs to a closed batch. (A ring, not a slice shifted down at each
///   batch: with thousands of records pending, the shift was a fifth of the emulated device's
///   time on small records.)
/// - `held` results are in `hold`, at `seq & (window - 1)`.
/// - If `in_flight` is `Some(res)`, positions `..res.records` are the batch it reserved.
/// - `Q >= batcher.max_records() + window` and `window <= W`.
pub struct DmaExecutor<S, B, M> {
    layout: RegionLayout<S>,
    batcher: Batcher,
    sequencer: Sequencer<B>,
    payload: DeviceCredit,
    metadata: DeviceCredit,
    buf: M,
    head: usize,
    len: usize,
    open_start: usize,
    held: usize,
    window: u32,
    in_flight: Option<Reservation>,
    stalled_since: Option<u64>,
    stats: ExecStats,
}

impl<S, B, M> DmaExecutor<S, B, M>
where
    S: AsRef<[DmaSegment]>,
    B: AsRef<[u64]> + AsMut<[u64]>,
    M: ExecBuffers,
{
    /// Creates the executor of a tenant at enable. The credits start at the tenant's
    /// `index_base` (empty rings). `buf`'s contents are overwritten.
    pub fn new(
        layout: RegionLayout<S>,
        batcher: Batcher,
        sequencer: Sequencer<B>,
        payload: DeviceCredit,
        metadata: DeviceCredit,
        mut buf: M,
    ) -> Result<Self, ExecError> {
        if batcher.streaming_factor().slot_size() != layout.slot_size() {
            return Err(ExecError::SlotSizeMismatch);
        }
        if payload.geometry() != layout.payload() || metadata.geometry() != layout.metadata() {
            return Err(ExecError::GeometryMismatch);
        }
        let window = match &sequencer {
            Sequencer::OutOfOrder => 0,
            Sequencer::InOrder(rob) => rob.window(),
        };
        if window as usize > buf.hold().len() {
            return Err(ExecError::WindowTooLarge);
        }
        let queue = buf.records().len();
        if buf.batch_end().len() != queue
            || (batcher.max_records() as usize).saturating_add(window as usize) > queue
        {
            return Err(ExecError::QueueTooSmall);
        }
        buf.hold_mut().fill(None);
        // INVARIANT: nothing pending, nothing held, nothing in flight; sizes checked above.
        Ok(Self {
            layout,
            batcher,
            sequencer,
            payload,
            metadata,
            buf,
            head: 0,
            len: 0,
            open_start: 0,
            held: 0,
            window,
            in_flight: None,
            stalled_since: None,
            stats: ExecStats::default(),
        })
    }

    /// The region layout.
    pub fn layout(&self) -> &RegionLayout<S> {
        &self.layout
    }

    /// The batcher.
    pub fn batcher(&self) -> &Batcher {
        &self.batcher
    }

    /// The sequencer.
    pub fn sequencer(&self) -> &Sequencer<B> {
        &self.sequencer
    }

    /// The payload ring's credit.
    pub fn payload_credit(&self) -> &DeviceCredit {
        &self.payload
    }

    /// The metadata ring's credit.
    pub fn metadata_credit(&self) -> &DeviceCredit {
        &self.metadata
    }

    /// The counters.
    pub fn stats(&self) -> ExecStats {
        self.stats
    }

    /// Records released by the sequencer and not yet streamed.
    pub fn pending(&self) -> usize {
        self.len
    }

    /// Results completed out of order and held for in-order streaming.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The batch in flight, if any.
    pub fn in_flight(&self) -> Option<Reservation> {
        self.in_flight
    }

    /// Whether nothing is pending, held or in flight.
    pub fn is_idle(&self) -> bool {
        self.len == 0 && self.held == 0 && self.in_flight.is_none()
    }

    /// A result is complete. `seq` is its key for in-order streaming (the scheduler's
    /// [`WorkItem::seq`](super::scheduler::WorkItem::seq)); out of order it is ignored.
    ///
    /// Fails with [`ExecError::QueueFull`] when the pending queue might not hold what this
    /// completion releases (stream a batch, then retry), and with
    /// [`SequenceError::OutOfWindow`] when `seq` is beyond the reorder window (retry after
    /// earlier results completed).
    pub fn complete(&mut self, seq: u32, rec: ResultRecord) -> Result<(), ExecError> {
        rec.validate()?;
        if rec.length > 0 {
            self.batcher.streaming_factor().slots_for(rec.length)?;
        }
        // A completion releases at most itself and everything held.
        if self.len + self.held + 1 > self.buf.records().len() {
            return Err(ExecError::QueueFull);
        }
        let run = self.sequencer.complete(seq)?;
        if self.window == 0 {
            return self.release(rec);
        }
        let mask = self.window - 1;
        let slot = self
            .buf
            .hold_mut()
            .get_mut((seq & mask) as usize)
            .ok_or(ExecError::Internal)?;
        if slot.is_some() {
            return Err(ExecError::Internal);
        }
        *slot = Some(rec);
        self.held += 1;
        let Some(run) = run else {
            return Ok(());
        };
        for k in 0..run.count {
            let s = run.first.wrapping_add(k);
            let held = self
                .buf
                .hold_mut()
                .get_mut((s & mask) as usize)
                .and_then(Option::take)
                .ok_or(ExecError::Internal)?;
            self.held -= 1;
            self.release(held)?;
        }
        Ok(())
    }

    /// Closes the open batch early (e.g. after a timeout), if it holds any record.
    pub fn flush(&mut self) {
        if let Some(f) = self.batcher.flush() {
            self.close(f);
        }
    }

    /// Takes new heads read from the credit line. Both are checked before either is applied.
    /// Returns the slots newly credited `(metadata, payload)`.
    pub fn receive_heads(
        &mut self,
        metadata_head: u32,
        payload_head: u32,
    ) -> Result<(u32, u32), ExecError> {
        let mut metadata = self.metadata.clone();
        let mut payload = self.payload.clone();
        let m = metadata.receive_head(RingIndex::new(metadata_head))?;
        let p = payload.receive_head(RingIndex::new(payload_head))?;
        self.metadata = metadata;
        self.payload = payload;
        Ok((m, p))
    }

    /// Starts streaming the next closed batch, if it has credit; `now_ns` is the caller's clock,
    /// used for the credit wait time.
    pub fn begin_batch(&mut self, now_ns: u64) -> Result<Next, ExecError> {
        if self.in_flight.is_some() {
            return Err(ExecError::Busy);
        }
        let (a, b) = self.positions(self.len);
        let ends = self.buf.batch_end();
        let Some(end) = ends[a].iter().chain(ends[b].iter()).position(|&e| e) else {
            return Ok(Next::Idle);
        };
        let records = end + 1;
        let slot_size = self.layout.slot_size();
        let (a, b) = self.positions(records);
        let queue = self.buf.records();
        let (slots, bytes) =
            queue[a]
                .iter()
                .chain(queue[b].iter())
                .fold((0u32, 0u32), |(s, b), r| {
                    // Cannot overflow: a closed batch is within one SF (a `u32` of bytes).
                    (s + slots_for(r.length, slot_size), b + r.length)
                });
        // Cannot truncate: `records <= Q` and `records <= max_records`, a `u32`.
        let records = records as u32;
        if !self.payload.can_reserve(slots) || !self.metadata.can_reserve(records) {
            let shortfall = Shortfall {
                payload_needed: slots,
                payload_available: self.payload.available(),
                metadata_needed: records,
                metadata_available: self.metadata.available(),
            };
            // Count the refusal on each short ring; nothing is reserved.
            if !self.payload.can_reserve(slots) {
                let _ = self.payload.try_reserve(slots);
            }
            if !self.metadata.can_reserve(records) {
                let _ = self.metadata.try_reserve(records);
            }
            if self.stalled_since.is_none() {
                self.stalled_since = Some(now_ns);
                self.stats.credit_stalls += 1;
            }
            return Ok(Next::WaitCredit(shortfall));
        }
        // Cannot fail: both were checked just above.
        let payload_first = self.payload.try_reserve(slots)?;
        let metadata_first = self.metadata.try_reserve(records)?;
        if let Some(since) = self.stalled_since.take() {
            self.stats.credit_wait_ns = self
                .stats
                .credit_wait_ns
                .saturating_add(now_ns.saturating_sub(since));
        }
        let res = Reservation {
            payload_first,
            payload_slots: slots,
            metadata_first,
            records,
            bytes,
        };
        // INVARIANT: `records[..res.records]` is the first closed batch.
        self.in_flight = Some(res);
        Ok(Next::Stream(res))
    }

    /// The steps of the batch in flight.
    pub fn steps(&self) -> Result<Steps<'_, S>, ExecError> {
        let res = self.in_flight.ok_or(ExecError::NotStreaming)?;
        let n = res.records as usize;
        if n > self.len {
            return Err(ExecError::Internal);
        }
        let (a, b) = self.positions(n);
        let queue = self.buf.records();
        Steps::split(&self.layout, &queue[a], &queue[b], res).map_err(|_| ExecError::Internal)
    }

    /// The index ranges of the queue's positions `..n` (`n <= Q`): up to the end of the
    /// buffers, then from their start.
    fn positions(&self, n: usize) -> (core::ops::Range<usize>, core::ops::Range<usize>) {
        let q = self.buf.records().len();
        let first = n.min(q - self.head);
        (self.head..self.head + first, 0..n - first)
    }

    /// The index of the queue's position `i` (`i < Q`).
    fn index(&self, i: usize) -> usize {
        (self.head + i) % self.buf.records().len()
    }

    /// Ends the batch in flight after its steps were performed: drops its records.
    pub fn end_batch(&mut self) -> Result<Reservation, ExecError> {
        let res = self.in_flight.take().ok_or(ExecError::NotStreaming)?;
        let n = res.records as usize;
        // INVARIANT: the batch was closed, so it lies before `open_start`; it leaves the ring's
        // front.
        self.head = self.index(n);
        self.len -= n;
        self.open_start -= n;
        self.stats.records += u64::from(res.records);
        self.stats.payload_bytes += u64::from(res.bytes);
        self.stats.batches += 1;
        Ok(res)
    }

    /// Hands one released record to the batcher. The caller made room for it.
    fn release(&mut self, rec: ResultRecord) -> Result<(), ExecError> {
        if rec.length == 0 {
            // The batcher cannot count an empty record: close the open batch and end it with
            // this record. The open batch holds fewer than `max_records` records (the batcher
            // closes a batch at that limit), so the record fits, and its metadata credit is
            // within one batch's.
            let _ = self.batcher.flush();
            let at = self.append(rec)?;
            self.close_at(at);
            return Ok(());
        }
        // Cannot fail: the length was checked against the SF in `complete`.
        let flushes = self.batcher.push(rec.length)?;
        self.append(rec)?;
        for f in flushes {
            self.close(f);
        }
        if rec.is_final() {
            self.flush();
        }
        Ok(())
    }

    /// Appends a record to the pending queue and returns its position.
    fn append(&mut self, rec: ResultRecord) -> Result<usize, ExecError> {
        let at = self.len;
        if at >= self.buf.batch_end().len() {
            return Err(ExecError::Internal);
        }
        let i = self.index(at);
        match self.buf.records_mut().get_mut(i) {
            Some(r) => {
                *r = rec;
                self.buf.batch_end_mut()[i] = false;
                self.len += 1;
                Ok(at)
            }
            _ => Err(ExecError::Internal),
        }
    }

    /// Marks the batch `f` closed: its records are the first `f.records` of the open batch.
    fn close(&mut self, f: Flush) {
        self.close_at(self.open_start + f.records as usize - 1);
    }

    /// Marks the record at position `last` as the end of a closed batch that spans the open
    /// batch up to it.
    fn close_at(&mut self, last: usize) {
        let i = self.index(last);
        if let Some(e) = self.buf.batch_end_mut().get_mut(i) {
            *e = true;
            self.open_start = last + 1;
        }
    }
}
