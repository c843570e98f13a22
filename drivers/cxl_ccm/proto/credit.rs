// SPDX-License-Identifier: GPL-2.0

//! Credit-based flow control (AXLE §IV-C, "Lightweight Task Pipelining" and "Visibility problem").
//!
//! The rings live in host memory and the device cannot see how far the host has consumed them. The
//! host therefore returns *credit* by storing its head index of each ring into device memory (a
//! CXL.mem store). The device never waits for these stores: it keeps the last head it read, which
//! may be stale, and produces only while `tail - head_seen < capacity`. A stale head is
//! conservative: it can only make the device believe that fewer slots are free than really are,
//! never more.
//!
//! - [`DeviceCredit`] is the device side: the last head read, the device's own tail, the credit
//!   check and back-pressure counters.
//! - [`HeadPublisher`] is the host side: when a new head is worth a store into device memory
//!   ([`PublishPolicy`]), and the guarantee that published heads never go backwards.

use core::fmt;

use super::ring::{RingGeometry, RingIndex};

/// Errors of credit accounting. Every error leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreditError {
    /// Fewer than the requested slots are free according to the last head received. Retry after
    /// reading the head again; this is back-pressure, not a protocol violation.
    NoCredit {
        /// Slots free according to the last head received.
        available: u32,
    },
    /// More slots were requested at once than the ring has: no amount of credit can satisfy it.
    RequestTooLarge,
    /// A head lies before the head already seen or published: heads never move backwards.
    HeadRegressed,
    /// A head lies after the tail: it credits slots that were never produced.
    HeadBeyondTail,
    /// A batched publish threshold of zero or of more than the ring capacity.
    InvalidThreshold,
}

impl fmt::Display for CreditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoCredit { available } => write!(f, "no credit: only {available} slots free"),
            Self::RequestTooLarge => f.write_str("request exceeds the ring capacity"),
            Self::HeadRegressed => f.write_str("head moved backwards"),
            Self::HeadBeyondTail => f.write_str("head is beyond the tail"),
            Self::InvalidThreshold => f.write_str("publish threshold must be in 1..=capacity"),
        }
    }
}

/// Back-pressure counters of one ring on the device side.
///
/// How long the device waited is left to the caller (it owns the clock); these count how often.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Backpressure {
    /// Reservations refused for lack of credit (each retry of a stalled flush counts).
    pub refusals: u64,
    /// Stall episodes: refusals that followed a successful reservation (or the start), i.e. how
    /// many times the device had to start waiting.
    pub episodes: u64,
}

/// Device-side credit of one ring (metadata ring or payload ring).
///
/// `tail` is the device's own tail: the first slot it has not yet reserved for writing. `head_seen`
/// is the head it last read from device memory, which the host may since have advanced.
///
/// # Invariants
///
/// `tail - head_seen` (wrapping) is at most `geometry.capacity()`: the device never reserves a slot
/// that, according to the head it has seen, still holds an unconsumed result. Since the host's real
/// head is never before `head_seen`, the device never overwrites an unconsumed slot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceCredit {
    geometry: RingGeometry,
    head_seen: RingIndex,
    tail: RingIndex,
    stalled: bool,
    backpressure: Backpressure,
}

impl DeviceCredit {
    /// Creates the credit of an empty ring whose head and tail are both `start`.
    pub fn new(geometry: RingGeometry, start: RingIndex) -> Self {
        // INVARIANT: `tail - head_seen == 0`.
        Self {
            geometry,
            head_seen: start,
            tail: start,
            stalled: false,
            backpressure: Backpressure::default(),
        }
    }

    /// The ring's geometry.
    pub fn geometry(&self) -> RingGeometry {
        self.geometry
    }

    /// The head last received from the host (possibly stale).
    pub fn head_seen(&self) -> RingIndex {
        self.head_seen
    }

    /// The device's tail: the first slot not yet reserved.
    pub fn tail(&self) -> RingIndex {
        self.tail
    }

    /// Slots reserved and not yet credited back: `tail - head_seen`.
    pub fn in_flight(&self) -> u32 {
        self.tail.distance_from(self.head_seen)
    }

    /// Credit: slots the device may still reserve, `capacity - (tail - head_seen)`.
    pub fn available(&self) -> u32 {
        // Cannot underflow: `in_flight <= capacity` by the type invariant.
        self.geometry.capacity() - self.in_flight()
    }

    /// Whether `count` slots could be reserved now. Does not count back-pressure.
    pub fn can_reserve(&self, count: u32) -> bool {
        count <= self.available()
    }

    /// Whether the last reservation attempt was refused for lack of credit.
    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// The back-pressure counters.
    pub fn backpressure(&self) -> Backpressure {
        self.backpressure
    }

    /// Reserves `count` consecutive slots and returns the counter of the first.
    ///
    /// The caller then writes the slots and, after a write barrier, publishes the new tail
    /// ([`DeviceCredit::tail`]) into host memory. A refusal for lack of credit is counted as
    /// back-pressure and changes nothing else.
    pub fn try_reserve(&mut self, count: u32) -> Result<RingIndex, CreditError> {
        if count > self.geometry.capacity() {
            return Err(CreditError::RequestTooLarge);
        }
        let available = self.available();
        if count > available {
            self.backpressure.refusals = self.backpressure.refusals.wrapping_add(1);
            if !self.stalled {
                self.stalled = true;
                self.backpressure.episodes = self.backpressure.episodes.wrapping_add(1);
            }
            return Err(CreditError::NoCredit { available });
        }
        let first = self.tail;
        // INVARIANT: `count <= available`, so `tail - head_seen` stays at most `capacity`.
        self.tail = self.tail.wrapping_add(count);
        self.stalled = false;
        Ok(first)
    }

    /// Takes a head value read from device memory, where the host stores it.
    ///
    /// Returns how many slots it newly credits (`0` for a head equal to the one already seen, as a
    /// stale read usually is). A head before the one already seen, or after the tail, is rejected.
    pub fn receive_head(&mut self, head: RingIndex) -> Result<u32, CreditError> {
        let credited = head.distance_from(self.head_seen);
        if credited <= self.in_flight() {
            // INVARIANT: `head` lies in `[head_seen, tail]`, so `tail - head <= capacity`.
            self.head_seen = head;
            return Ok(credited);
        }
        if head.is_before(self.head_seen) {
            Err(CreditError::HeadRegressed)
        } else {
            Err(CreditError::HeadBeyondTail)
        }
    }
}

/// When the host stores a new head into device memory.
///
/// Every store is a CXL.mem write across the link, so batching them saves link traffic at the cost
/// of returning credit later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PublishPolicy {
    /// Publish whenever the head advances.
    EveryRelease,
    /// Publish when the head has advanced by at least `threshold` slots since the last publish, or
    /// when every received slot has been released (the ring is drained).
    ///
    /// The drain rule is what keeps batching live: a device stalled for credit has published all it
    /// reserved, so the host eventually receives and releases everything, and then publishes even
    /// if fewer than `threshold` slots were freed.
    Batched {
        /// Minimum head advance that triggers a publish, in `1..=capacity`.
        threshold: u32,
    },
}

/// Host-side publisher of one ring's head.
///
/// # Invariants
///
/// Successive values returned for storing are strictly increasing (modulo the wrap, in the sense of
/// [`RingIndex::distance_from`]) and each lies at most `capacity` after the previous one, so the
/// head the device reads never goes backwards.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HeadPublisher {
    geometry: RingGeometry,
    policy: PublishPolicy,
    published: RingIndex,
}

impl HeadPublisher {
    /// Creates a publisher whose device-side head starts at `start`.
    pub fn new(
        geometry: RingGeometry,
        policy: PublishPolicy,
        start: RingIndex,
    ) -> Result<Self, CreditError> {
        if let PublishPolicy::Batched { threshold } = policy {
            if threshold == 0 || threshold > geometry.capacity() {
                return Err(CreditError::InvalidThreshold);
            }
        }
        Ok(Self {
            geometry,
            policy,
            published: start,
        })
    }

    /// The policy in effect.
    pub fn policy(&self) -> PublishPolicy {
        self.policy
    }

    /// The last head returned for storing into device memory.
    pub fn published(&self) -> RingIndex {
        self.published
    }

    /// Called after a release with the consumer's current `head` and received `tail` (e.g. from a
    /// [`GapHead`](super::gap_head::GapHead)).
    ///
    /// Returns `Some(head)` if the policy says to publish now; the caller must then store that
    /// value into device memory, after its reads of the released slots have completed (a release
    /// barrier). A later value supersedes an earlier one that has not been stored yet.
    pub fn on_release(
        &mut self,
        head: RingIndex,
        tail: RingIndex,
    ) -> Result<Option<RingIndex>, CreditError> {
        let advance = self.check(head, tail)?;
        let due = match self.policy {
            PublishPolicy::EveryRelease => advance > 0,
            PublishPolicy::Batched { threshold } => {
                advance >= threshold || (advance > 0 && head == tail)
            }
        };
        Ok(self.publish_if(due, head))
    }

    /// Publishes `head` regardless of the policy if it advanced, e.g. at the end of an offload or
    /// when the caller's own timer says credit has been held back for too long.
    pub fn flush(&mut self, head: RingIndex) -> Result<Option<RingIndex>, CreditError> {
        // The head itself is the only bound available here, so check it against one lap.
        let advance = self.check(head, self.published.wrapping_add(self.geometry.capacity()))?;
        Ok(self.publish_if(advance > 0, head))
    }

    /// Validates `head` against the last published head and `tail`; returns the advance.
    fn check(&self, head: RingIndex, tail: RingIndex) -> Result<u32, CreditError> {
        if head.is_before(self.published) {
            return Err(CreditError::HeadRegressed);
        }
        let advance = head.distance_from(self.published);
        if advance > tail.distance_from(self.published) || advance > self.geometry.capacity() {
            return Err(CreditError::HeadBeyondTail);
        }
        Ok(advance)
    }

    fn publish_if(&mut self, due: bool, head: RingIndex) -> Option<RingIndex> {
        if !due {
            return None;
        }
        // INVARIANT: `check` established `published < head <= published + capacity`.
        self.published = head;
        Some(head)
    }
}
