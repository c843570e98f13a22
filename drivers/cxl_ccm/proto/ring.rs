// SPDX-License-Identifier: GPL-2.0

//! Ring index arithmetic with wraparound.
//!
//! Both AXLE rings (the metadata ring and the payload ring) are addressed by *free-running* 32-bit
//! counters: a head or tail is never reduced modulo the capacity, it only ever grows by wrapping
//! addition. The slot a counter designates is `counter & (capacity - 1)`, which is why the capacity
//! is a power of two. Keeping the counters free-running is what lets `tail - head` (wrapping) tell
//! a full ring (`capacity`) from an empty one (`0`) without a separate flag, and what lets a stale
//! head be recognised as "behind" rather than mistaken for a lap ahead.
//!
//! Counters are `u32` because they are stored into another agent's memory (the device's tails into
//! host memory, the host's heads into device memory), and a naturally aligned 32-bit store is
//! single-copy atomic on every path we use (CXL.mem, CXL.io posted writes, and 32-bit hosts).

use core::fmt;

/// The largest supported capacity, in slots.
///
/// Two counters are compared with wrapping subtraction, read as "how far ahead" in the half of the
/// 32-bit counter space that lies in front of the earlier one. With at most `2^31` slots, every
/// legitimate distance (`0..=capacity`) falls in that half, so an index that lies *behind* can
/// always be told apart from one that lies *ahead*.
pub const MAX_CAPACITY: u32 = 1 << 31;

/// Errors of ring geometry validation and index checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingError {
    /// A ring of zero slots was requested.
    ZeroCapacity,
    /// The capacity is not a power of two, so `counter & mask` would not name a slot.
    NotPowerOfTwo,
    /// The capacity exceeds [`MAX_CAPACITY`].
    TooLarge,
    /// A head/tail pair (or a run of slots) describes more than `capacity` slots: at least one of
    /// the two counters is corrupt or belongs to another ring.
    IndexOutOfRange,
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::ZeroCapacity => "ring capacity is zero",
            Self::NotPowerOfTwo => "ring capacity is not a power of two",
            Self::TooLarge => "ring capacity exceeds 2^31 slots",
            Self::IndexOutOfRange => "ring indexes describe more slots than the ring has",
        };
        f.write_str(msg)
    }
}

/// A free-running ring counter: a head or a tail of the metadata ring or of the payload ring.
///
/// The raw value is what travels between host and device. It is never reduced modulo the capacity;
/// use [`RingGeometry::slot`] to find the slot it designates.
///
/// Deliberately not `Ord`: comparing raw values is wrong across the wrap. Use
/// [`RingIndex::distance_from`] and [`RingIndex::is_before`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct RingIndex(u32);

impl RingIndex {
    /// The counter value rings start from unless a test chooses otherwise.
    pub const ZERO: Self = Self(0);

    /// Wraps a raw counter value, e.g. one read from a ring header.
    pub const fn new(raw: u32) -> Self {
        Self(raw)
    }

    /// The raw counter value, as stored into the other agent's memory.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The counter `n` positions later, wrapping at `u32::MAX`.
    #[must_use]
    pub const fn wrapping_add(self, n: u32) -> Self {
        Self(self.0.wrapping_add(n))
    }

    /// How many positions `self` lies after `earlier`, modulo `2^32`.
    ///
    /// This is the only correct way to compare two free-running counters:
    /// `tail.distance_from(head)` is the number of slots in `[head, tail)`, also across the
    /// `u32::MAX → 0` wrap.
    pub const fn distance_from(self, earlier: Self) -> u32 {
        self.0.wrapping_sub(earlier.0)
    }

    /// Whether `self` lies strictly before `other`, less than `2^31` positions behind it.
    ///
    /// Meaningful for counters of the same ring, which validated state keeps at most
    /// [`MAX_CAPACITY`] apart. Two counters exactly `2^31` apart (the two ends of a full ring of
    /// `MAX_CAPACITY` slots) are neither before the other.
    pub const fn is_before(self, other: Self) -> bool {
        let ahead = other.distance_from(self);
        ahead != 0 && ahead < MAX_CAPACITY
    }
}

impl fmt::Display for RingIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A contiguous run of slots: `len` slots starting at slot `start` (not a counter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotRun {
    /// First slot, in `0..capacity`.
    pub start: u32,
    /// Number of slots; `start + len <= capacity`.
    pub len: u32,
}

/// The shape of one ring: its capacity in slots.
///
/// # Invariants
///
/// `mask + 1` is a power of two in `1..=MAX_CAPACITY`; `mask` is therefore `capacity - 1` and
/// `counter & mask` is a slot in `0..capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingGeometry {
    mask: u32,
}

impl RingGeometry {
    /// Validates `capacity` (in slots) and returns the geometry of a ring of that size.
    pub const fn new(capacity: u32) -> Result<Self, RingError> {
        if capacity == 0 {
            return Err(RingError::ZeroCapacity);
        }
        if capacity > MAX_CAPACITY {
            return Err(RingError::TooLarge);
        }
        if !capacity.is_power_of_two() {
            return Err(RingError::NotPowerOfTwo);
        }
        // INVARIANT: `capacity` is a power of two in `1..=MAX_CAPACITY`, checked above.
        Ok(Self { mask: capacity - 1 })
    }

    /// Number of slots in the ring.
    pub const fn capacity(self) -> u32 {
        // Cannot overflow: `mask < MAX_CAPACITY` by the type invariant.
        self.mask + 1
    }

    /// `capacity - 1`, the mask that turns a counter into a slot.
    pub const fn mask(self) -> u32 {
        self.mask
    }

    /// The slot, in `0..capacity`, that the free-running counter `index` designates.
    pub const fn slot(self, index: RingIndex) -> u32 {
        index.raw() & self.mask
    }

    /// Number of occupied slots between `head` (first occupied) and `tail` (first free).
    ///
    /// Fails with [`RingError::IndexOutOfRange`] if `tail - head` (wrapping) exceeds the capacity,
    /// which no pair of counters of this ring can legitimately produce.
    pub const fn used(self, head: RingIndex, tail: RingIndex) -> Result<u32, RingError> {
        let used = tail.distance_from(head);
        if used > self.capacity() {
            return Err(RingError::IndexOutOfRange);
        }
        Ok(used)
    }

    /// Number of free slots between `tail` and the lap end `head + capacity`.
    ///
    /// Fails like [`RingGeometry::used`].
    pub const fn free(self, head: RingIndex, tail: RingIndex) -> Result<u32, RingError> {
        match self.used(head, tail) {
            Ok(used) => Ok(self.capacity() - used),
            Err(e) => Err(e),
        }
    }

    /// Whether the counter `index` lies in the occupied window `[head, tail)`.
    ///
    /// Returns `false` for any index if `head`/`tail` are not a valid pair.
    pub const fn contains(self, head: RingIndex, tail: RingIndex, index: RingIndex) -> bool {
        match self.used(head, tail) {
            Ok(used) => index.distance_from(head) < used,
            Err(_) => false,
        }
    }

    /// Splits the `count` slots starting at counter `first` into at most two runs of contiguous
    /// slots.
    ///
    /// The second run is `Some` only when the slots wrap past the last slot of the ring; a DMA
    /// engine then issues two transfers, and a reader reads two pieces. Fails with
    /// [`RingError::IndexOutOfRange`] if `count` exceeds the capacity.
    pub const fn runs(
        self,
        first: RingIndex,
        count: u32,
    ) -> Result<(SlotRun, Option<SlotRun>), RingError> {
        if count > self.capacity() {
            return Err(RingError::IndexOutOfRange);
        }
        let start = self.slot(first);
        // `start < capacity`, so this cannot underflow.
        let to_end = self.capacity() - start;
        if count <= to_end {
            return Ok((SlotRun { start, len: count }, None));
        }
        Ok((
            SlotRun { start, len: to_end },
            Some(SlotRun {
                start: 0,
                len: count - to_end,
            }),
        ))
    }
}
