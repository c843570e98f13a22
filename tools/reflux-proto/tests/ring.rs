//! Tests of the SQ/CQ ring arithmetic as reflux uses it (the arithmetic itself is `cxl_ccm`'s,
//! tested in depth by `tools/ccm-proto`): a single-producer single-consumer queue of descriptors
//! whose counters cross `u32::MAX`.

use std::collections::VecDeque;

use proptest::prelude::*;
use reflux_proto::abi::{LayoutParams, PmrLayout, MAX_RING_ENTRIES, SQ_ENTRY_SIZE};
use reflux_proto::ring::{RingError, RingGeometry, RingIndex};

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

/// A ring of `entries` slots, as the driver and the device see it: counters and slots only.
struct Spsc {
    geo: RingGeometry,
    head: RingIndex,
    tail: RingIndex,
    slots: Vec<Option<u64>>,
}

impl Spsc {
    fn new(entries: u32, start: u32) -> Self {
        Self {
            geo: RingGeometry::new(entries).unwrap(),
            head: idx(start),
            tail: idx(start),
            slots: vec![None; entries as usize],
        }
    }

    fn is_full(&self) -> bool {
        self.geo.free(self.head, self.tail).unwrap() == 0
    }

    fn is_empty(&self) -> bool {
        self.geo.used(self.head, self.tail).unwrap() == 0
    }

    fn push(&mut self, v: u64) -> bool {
        if self.is_full() {
            return false;
        }
        let slot = self.geo.slot(self.tail) as usize;
        assert!(
            self.slots[slot].is_none(),
            "producer overwrote an unconsumed entry"
        );
        self.slots[slot] = Some(v);
        self.tail = self.tail.wrapping_add(1);
        true
    }

    fn pop(&mut self) -> Option<u64> {
        if self.is_empty() {
            return None;
        }
        let slot = self.geo.slot(self.head) as usize;
        let v = self.slots[slot]
            .take()
            .expect("consumer read an empty slot");
        self.head = self.head.wrapping_add(1);
        Some(v)
    }
}

#[test]
fn ring_entries_are_validated_like_the_layout() {
    for entries in [1, 2, 64, MAX_RING_ENTRIES] {
        assert!(RingGeometry::new(entries).is_ok());
        let p = LayoutParams {
            pmr_size: 1 << 30,
            ring_entries: entries,
            nr_buffers: 32,
            nr_actors: 1,
            nr_blocks: 1,
        };
        assert!(PmrLayout::compute(p).is_ok());
    }
    assert_eq!(RingGeometry::new(0), Err(RingError::ZeroCapacity));
    assert_eq!(RingGeometry::new(48), Err(RingError::NotPowerOfTwo));
}

#[test]
fn wraps_at_u32_max() {
    let mut q = Spsc::new(8, u32::MAX - 2);
    assert!(q.is_empty() && !q.is_full());
    for v in 0..8 {
        assert!(q.push(v));
    }
    assert!(q.is_full());
    assert!(!q.push(99), "full: a ninth entry is refused");
    assert_eq!(q.tail, idx(5), "the tail wrapped past u32::MAX");
    assert_eq!(q.geo.used(q.head, q.tail), Ok(8));
    assert_eq!(q.geo.slot(q.head), 5, "u32::MAX - 2 is slot 5 of 8");
    for v in 0..8 {
        assert_eq!(q.pop(), Some(v));
    }
    assert!(q.is_empty());
    assert_eq!(q.pop(), None);
    assert_eq!(q.head, q.tail);
}

#[test]
fn corrupt_counters_are_detected() {
    // A head more than `entries` behind the tail: the device's enable check (DEV_ERR_RING).
    let g = RingGeometry::new(64).unwrap();
    assert_eq!(g.used(idx(0), idx(65)), Err(RingError::IndexOutOfRange));
    assert_eq!(g.used(idx(u32::MAX), idx(63)), Ok(64));
    assert_eq!(
        g.used(idx(u32::MAX), idx(64)),
        Err(RingError::IndexOutOfRange)
    );
    // A tail behind the head looks like ~2^32 entries.
    assert_eq!(g.used(idx(10), idx(9)), Err(RingError::IndexOutOfRange));
}

#[test]
fn slots_map_to_pmr_entries() {
    let p = LayoutParams {
        pmr_size: 1 << 30,
        ring_entries: 16,
        nr_buffers: 32,
        nr_actors: 1,
        nr_blocks: 1,
    };
    let l = PmrLayout::compute(p).unwrap();
    let g = RingGeometry::new(16).unwrap();
    let first = l.sq_entry(0).unwrap();
    for raw in [u32::MAX - 1, u32::MAX, 0, 1, 17] {
        let slot = g.slot(idx(raw));
        assert_eq!(
            l.sq_entry(slot),
            Some(first + u64::from(slot) * u64::from(SQ_ENTRY_SIZE))
        );
    }
}

proptest! {
    /// Against a reference queue, from any start (half near the wrap), any interleaving of pushes
    /// and pops: same contents, same order, full exactly at `entries`.
    #[test]
    fn matches_a_reference_queue(
        log in 0u32..=6,
        start in prop_oneof![(0u32..300).prop_map(|k| u32::MAX - k), any::<u32>()],
        ops in proptest::collection::vec(any::<bool>(), 0..500),
    ) {
        let entries = 1u32 << log;
        let mut q = Spsc::new(entries, start);
        let mut reference = VecDeque::new();
        let mut next = 0u64;
        for push in ops {
            if push {
                let accepted = q.push(next);
                prop_assert_eq!(accepted, reference.len() < entries as usize);
                if accepted {
                    reference.push_back(next);
                }
                next += 1;
            } else {
                prop_assert_eq!(q.pop(), reference.pop_front());
            }
            prop_assert_eq!(q.geo.used(q.head, q.tail).unwrap() as usize, reference.len());
            prop_assert_eq!(q.is_full(), reference.len() == entries as usize);
            prop_assert_eq!(q.is_empty(), reference.is_empty());
        }
    }
}
