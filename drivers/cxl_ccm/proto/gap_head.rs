// SPDX-License-Identifier: GPL-2.0

//! The gap-aware head (AXLE §IV-C, "OoO Streaming").
//!
//! The host scheduler consumes ready results in whatever order it likes, so payload slots are
//! released out of order. The head that the host returns to the device as credit must nevertheless
//! only cover slots that are *all* released: the head advances over the longest contiguous prefix
//! of released slots and stops at the first gap. In the paper's example, slots 0, 1, 2 arrive, the
//! host consumes slot 1 first, and the head stays at 0 until slot 0 is consumed too, when it jumps
//! to 2.
//!
//! One bit per slot records "released, but the head has not passed it yet". The bitmap lives in
//! storage the caller provides (`[u64; N]`, `&mut [u64]`, or any other `AsRef<[u64]> +
//! AsMut<[u64]>`), so that this module needs neither `alloc` nor a compile-time capacity.

use core::fmt;

use super::ring::{RingGeometry, RingIndex};

/// Bits per bitmap word.
const WORD_BITS: u32 = u64::BITS;

/// Errors of the gap-aware head. Every error leaves the head unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GapHeadError {
    /// The bitmap storage has fewer than [`bitmap_words`] words for the ring's capacity.
    StorageTooSmall,
    /// A new tail lies before the tail already received: tails never move backwards.
    TailRegressed,
    /// A new tail lies more than `capacity` slots after the head: the producer overran the ring.
    TailOverrun,
    /// The released slot lies at or after the received tail: it has not been received yet.
    NotReceived,
    /// The released slot lies in `[head, tail)` and was already released.
    AlreadyReleased,
    /// The released slot lies before the head: it was released before and the head has passed it.
    BelowHead,
    /// A run of slots is longer than the ring.
    RunTooLong,
}

impl fmt::Display for GapHeadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::StorageTooSmall => "bitmap storage is too small for the ring capacity",
            Self::TailRegressed => "tail moved backwards",
            Self::TailOverrun => "tail is more than one ring capacity ahead of the head",
            Self::NotReceived => "released slot has not been received",
            Self::AlreadyReleased => "slot released twice",
            Self::BelowHead => "released slot lies below the head",
            Self::RunTooLong => "run of slots is longer than the ring",
        };
        f.write_str(msg)
    }
}

/// The consumer's head of a ring whose slots are released in any order.
///
/// `head` is the end of the contiguous prefix of released slots: the value the host may return to
/// the device as credit. `tail` is the first slot not yet received (for the payload ring: the end
/// of the last payload named by a metadata record the host has read).
///
/// # Invariants
///
/// - `tail - head` (wrapping) is at most `geometry.capacity()`.
/// - `released` has at least `bitmap_words(capacity)` words.
/// - The bit of slot `geometry.slot(i)` is set iff `i` lies in `[head, tail)` and was released. In
///   particular the bit of `head` is clear whenever `head != tail`, since the head always advances
///   over every released slot it reaches, and every bit outside `[head, tail)` is clear.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GapHead<B> {
    geometry: RingGeometry,
    head: RingIndex,
    tail: RingIndex,
    released: B,
}

/// Number of `u64` words the bitmap of a [`GapHead`] needs for a ring of `capacity` slots.
///
/// Usable in constant expressions, e.g. `GapHead<[u64; bitmap_words(CAPACITY)]>`.
pub const fn bitmap_words(capacity: u32) -> usize {
    capacity.div_ceil(WORD_BITS) as usize
}

impl<B: AsRef<[u64]> + AsMut<[u64]>> GapHead<B> {
    /// Creates an empty head (`head == tail == start`) over `storage`, which is cleared.
    ///
    /// `start` is normally [`RingIndex::ZERO`]; tests start near `u32::MAX` to cross the wrap.
    pub fn new(
        geometry: RingGeometry,
        mut storage: B,
        start: RingIndex,
    ) -> Result<Self, GapHeadError> {
        let words = storage.as_mut();
        if words.len() < bitmap_words(geometry.capacity()) {
            return Err(GapHeadError::StorageTooSmall);
        }
        words.fill(0);
        // INVARIANT: the window is empty, the storage is large enough and all bits are clear.
        Ok(Self {
            geometry,
            head: start,
            tail: start,
            released: storage,
        })
    }

    /// The ring's geometry.
    pub fn geometry(&self) -> RingGeometry {
        self.geometry
    }

    /// The head: every slot before it is released, the slot at it is not (unless `head == tail`).
    pub fn head(&self) -> RingIndex {
        self.head
    }

    /// The tail received so far: the first slot that has not been received.
    pub fn tail(&self) -> RingIndex {
        self.tail
    }

    /// Number of slots in `[head, tail)`: received, and not yet returned as credit.
    pub fn outstanding(&self) -> u32 {
        self.tail.distance_from(self.head)
    }

    /// Whether every received slot has been released (`head == tail`).
    pub fn is_drained(&self) -> bool {
        self.head == self.tail
    }

    /// Whether `index` is in `[head, tail)` and released (but not yet passed by the head).
    pub fn is_released(&self, index: RingIndex) -> bool {
        index.distance_from(self.head) < self.outstanding() && self.bit(index)
    }

    /// Records that every slot before `new_tail` has been received.
    ///
    /// Returns the number of newly received slots. Receiving the same tail again returns `0`.
    pub fn receive(&mut self, new_tail: RingIndex) -> Result<u32, GapHeadError> {
        if new_tail.is_before(self.tail) {
            return Err(GapHeadError::TailRegressed);
        }
        if new_tail.distance_from(self.head) > self.geometry.capacity() {
            return Err(GapHeadError::TailOverrun);
        }
        let added = new_tail.distance_from(self.tail);
        // INVARIANT: `new_tail - head <= capacity` was checked; the new slots' bits are clear
        // because every bit outside the old window is clear.
        self.tail = new_tail;
        Ok(added)
    }

    /// Releases the received slot `index` and advances the head over the released prefix.
    ///
    /// Returns how many slots the head advanced (`0` if `index` is not at the head).
    pub fn release(&mut self, index: RingIndex) -> Result<u32, GapHeadError> {
        self.release_run(index, 1)
    }

    /// Releases the `count` consecutive slots starting at `first` (e.g. all payload slots of one
    /// record), all or nothing, and advances the head over the released prefix.
    ///
    /// Returns how many slots the head advanced. On error nothing is released.
    pub fn release_run(&mut self, first: RingIndex, count: u32) -> Result<u32, GapHeadError> {
        if count > self.geometry.capacity() {
            return Err(GapHeadError::RunTooLong);
        }
        for i in 0..count {
            self.check_release(first.wrapping_add(i))?;
        }
        for i in 0..count {
            self.set_bit(first.wrapping_add(i));
        }
        Ok(self.advance())
    }

    /// Classifies releasing `index` without changing anything.
    fn check_release(&self, index: RingIndex) -> Result<(), GapHeadError> {
        if index.distance_from(self.head) < self.outstanding() {
            if self.bit(index) {
                return Err(GapHeadError::AlreadyReleased);
            }
            return Ok(());
        }
        // Outside `[head, tail)`: either not yet received (at or after the tail) or already passed.
        if index.is_before(self.head) {
            Err(GapHeadError::BelowHead)
        } else {
            Err(GapHeadError::NotReceived)
        }
    }

    /// Moves the head over every released slot it reaches, clearing their bits.
    fn advance(&mut self) -> u32 {
        let start = self.head;
        while self.head != self.tail {
            // Consume whole words where possible: the released bits from the head's bit upwards.
            let slot = self.geometry.slot(self.head);
            let bit = slot % WORD_BITS;
            let word = self.word(slot) >> bit;
            let limit = (WORD_BITS - bit)
                .min(self.outstanding())
                .min(self.geometry.capacity() - slot);
            let run = word.trailing_ones().min(limit);
            if run == 0 {
                break;
            }
            let mask = if run == WORD_BITS {
                u64::MAX
            } else {
                ((1u64 << run) - 1) << bit
            };
            self.clear_bits(slot, mask);
            // INVARIANT: `run <= outstanding`, so the head stays within `[old head, tail]`, and the
            // bits it passed are cleared.
            self.head = self.head.wrapping_add(run);
        }
        self.head.distance_from(start)
    }

    fn word(&self, slot: u32) -> u64 {
        // The storage covers every slot by the type invariant; `get` keeps this panic-free anyway.
        self.released
            .as_ref()
            .get((slot / WORD_BITS) as usize)
            .copied()
            .unwrap_or(0)
    }

    fn bit(&self, index: RingIndex) -> bool {
        let slot = self.geometry.slot(index);
        self.word(slot) & (1u64 << (slot % WORD_BITS)) != 0
    }

    fn set_bit(&mut self, index: RingIndex) {
        let slot = self.geometry.slot(index);
        if let Some(w) = self.released.as_mut().get_mut((slot / WORD_BITS) as usize) {
            *w |= 1u64 << (slot % WORD_BITS);
        }
    }

    fn clear_bits(&mut self, slot: u32, mask: u64) {
        if let Some(w) = self.released.as_mut().get_mut((slot / WORD_BITS) as usize) {
            *w &= !mask;
        }
    }
}
