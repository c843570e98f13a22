//! Unit tests of `ring`: capacity validation and wrapping index arithmetic.

use ccm_proto::ring::{RingError, RingGeometry, RingIndex, SlotRun, MAX_CAPACITY};

fn geo(capacity: u32) -> RingGeometry {
    RingGeometry::new(capacity).expect("valid capacity")
}

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

#[test]
fn capacity_validation() {
    assert_eq!(RingGeometry::new(0), Err(RingError::ZeroCapacity));
    assert_eq!(RingGeometry::new(3), Err(RingError::NotPowerOfTwo));
    assert_eq!(RingGeometry::new(6), Err(RingError::NotPowerOfTwo));
    assert_eq!(
        RingGeometry::new(MAX_CAPACITY + 1),
        Err(RingError::TooLarge)
    );
    assert_eq!(RingGeometry::new(u32::MAX), Err(RingError::TooLarge));
    assert_eq!(geo(1).capacity(), 1);
    assert_eq!(geo(1).mask(), 0);
    assert_eq!(geo(32).capacity(), 32);
    assert_eq!(geo(32).mask(), 31);
    assert_eq!(geo(MAX_CAPACITY).capacity(), 1 << 31);
    assert_eq!(geo(MAX_CAPACITY).mask(), (1 << 31) - 1);
}

#[test]
fn slot_is_counter_masked() {
    let g = geo(8);
    assert_eq!(g.slot(idx(0)), 0);
    assert_eq!(g.slot(idx(13)), 5);
    assert_eq!(g.slot(idx(u32::MAX)), 7);
    assert_eq!(geo(1).slot(idx(12345)), 0);
}

#[test]
fn index_wraps_at_u32_max() {
    assert_eq!(idx(u32::MAX).wrapping_add(1), idx(0));
    assert_eq!(idx(u32::MAX - 1).wrapping_add(5), idx(3));
    assert_eq!(idx(2).distance_from(idx(u32::MAX)), 3);
    assert_eq!(idx(7).distance_from(idx(7)), 0);
    assert!(idx(u32::MAX).is_before(idx(1)));
    assert!(!idx(1).is_before(idx(u32::MAX)));
    assert!(!idx(5).is_before(idx(5)));
    assert!(idx(0).is_before(idx((1 << 31) - 1)));
    assert!(
        !idx(0).is_before(idx(1 << 31)),
        "exactly 2^31 apart: neither is before"
    );
    assert!(!idx(1 << 31).is_before(idx(0)));
    assert_eq!(RingIndex::ZERO.raw(), 0);
}

#[test]
fn used_and_free_across_the_wrap() {
    let g = geo(8);
    assert_eq!(g.used(idx(u32::MAX - 1), idx(2)), Ok(4));
    assert_eq!(g.free(idx(u32::MAX - 1), idx(2)), Ok(4));
    assert_eq!(g.used(idx(10), idx(10)), Ok(0));
    assert_eq!(g.free(idx(10), idx(10)), Ok(8));
    assert_eq!(g.used(idx(10), idx(18)), Ok(8));
    assert_eq!(g.free(idx(10), idx(18)), Ok(0));
}

#[test]
fn used_rejects_impossible_pairs() {
    let g = geo(8);
    assert_eq!(g.used(idx(0), idx(9)), Err(RingError::IndexOutOfRange));
    // A tail one behind its head is 2^32 - 1 slots "ahead".
    assert_eq!(g.used(idx(5), idx(4)), Err(RingError::IndexOutOfRange));
    assert_eq!(g.free(idx(0), idx(9)), Err(RingError::IndexOutOfRange));
}

#[test]
fn contains_is_the_half_open_window() {
    let g = geo(4);
    let (head, tail) = (idx(u32::MAX), idx(2));
    assert!(g.contains(head, tail, idx(u32::MAX)));
    assert!(g.contains(head, tail, idx(0)));
    assert!(g.contains(head, tail, idx(1)));
    assert!(!g.contains(head, tail, idx(2)));
    assert!(!g.contains(head, tail, idx(u32::MAX - 1)));
    assert!(
        !g.contains(idx(0), idx(9), idx(1)),
        "invalid pair contains nothing"
    );
}

#[test]
fn runs_split_at_the_ring_end() {
    let g = geo(8);
    assert_eq!(
        g.runs(idx(6), 4),
        Ok((
            SlotRun { start: 6, len: 2 },
            Some(SlotRun { start: 0, len: 2 })
        ))
    );
    assert_eq!(g.runs(idx(8), 8), Ok((SlotRun { start: 0, len: 8 }, None)));
    assert_eq!(g.runs(idx(5), 3), Ok((SlotRun { start: 5, len: 3 }, None)));
    assert_eq!(g.runs(idx(5), 0), Ok((SlotRun { start: 5, len: 0 }, None)));
    assert_eq!(
        g.runs(idx(u32::MAX), 3),
        Ok((
            SlotRun { start: 7, len: 1 },
            Some(SlotRun { start: 0, len: 2 })
        ))
    );
    assert_eq!(g.runs(idx(0), 9), Err(RingError::IndexOutOfRange));
}

#[test]
fn errors_display_their_cause() {
    assert_eq!(
        RingError::NotPowerOfTwo.to_string(),
        "ring capacity is not a power of two"
    );
    assert_eq!(RingIndex::new(42).to_string(), "42");
}
