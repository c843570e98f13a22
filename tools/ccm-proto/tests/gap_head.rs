//! Unit tests of `gap_head`: out-of-order release, the contiguous head, and every error.

use ccm_proto::gap_head::{bitmap_words, GapHead, GapHeadError};
use ccm_proto::ring::{RingGeometry, RingIndex};

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

fn gap(capacity: u32, start: u32) -> GapHead<[u64; bitmap_words(256)]> {
    let g = RingGeometry::new(capacity).expect("valid capacity");
    GapHead::new(g, [0; 4], idx(start)).expect("storage fits")
}

#[test]
fn paper_example_head_waits_for_the_gap() {
    // Slots 0, 1, 2 arrive; the host consumes slot 1 first: the head stays at 0.
    let mut h = gap(4, 0);
    assert_eq!(h.receive(idx(3)), Ok(3));
    assert_eq!(h.release(idx(1)), Ok(0));
    assert_eq!(h.head(), idx(0));
    assert!(h.is_released(idx(1)));
    assert!(!h.is_released(idx(0)));
    assert_eq!(h.release(idx(0)), Ok(2));
    assert_eq!(h.head(), idx(2));
    assert!(!h.is_released(idx(1)), "bits behind the head are cleared");
    assert_eq!(h.outstanding(), 1);
    assert_eq!(h.release(idx(2)), Ok(1));
    assert_eq!(h.head(), idx(3));
    assert!(h.is_drained());
}

#[test]
fn release_not_received() {
    let mut h = gap(4, 0);
    h.receive(idx(2)).unwrap();
    assert_eq!(h.release(idx(2)), Err(GapHeadError::NotReceived));
    assert_eq!(h.release(idx(3)), Err(GapHeadError::NotReceived));
    assert_eq!(h.release(idx(100)), Err(GapHeadError::NotReceived));
    assert_eq!((h.head(), h.tail()), (idx(0), idx(2)));
}

#[test]
fn release_twice() {
    let mut h = gap(4, 0);
    h.receive(idx(3)).unwrap();
    h.release(idx(2)).unwrap();
    assert_eq!(h.release(idx(2)), Err(GapHeadError::AlreadyReleased));
    assert_eq!(h.head(), idx(0));
    assert!(h.is_released(idx(2)));
}

#[test]
fn release_below_head() {
    let mut h = gap(4, 10);
    h.receive(idx(13)).unwrap();
    assert_eq!(h.release(idx(10)), Ok(1));
    assert_eq!(h.release(idx(10)), Err(GapHeadError::BelowHead));
    assert_eq!(h.release(idx(9)), Err(GapHeadError::BelowHead));
    assert_eq!(h.release(idx(2)), Err(GapHeadError::BelowHead));
    assert_eq!(h.head(), idx(11));
}

#[test]
fn release_on_an_empty_window() {
    let mut h = gap(4, 7);
    assert_eq!(h.release(idx(7)), Err(GapHeadError::NotReceived));
    assert_eq!(h.release(idx(6)), Err(GapHeadError::BelowHead));
}

#[test]
fn receive_rejects_regression_and_overrun() {
    let mut h = gap(4, 0);
    assert_eq!(h.receive(idx(2)), Ok(2));
    assert_eq!(h.receive(idx(2)), Ok(0));
    assert_eq!(h.receive(idx(1)), Err(GapHeadError::TailRegressed));
    assert_eq!(h.receive(idx(5)), Err(GapHeadError::TailOverrun));
    assert_eq!(h.tail(), idx(2));
    assert_eq!(h.receive(idx(4)), Ok(2));
    assert_eq!(h.release(idx(0)), Ok(1));
    // With the head at 1, the tail may reach 5 but not 6.
    assert_eq!(h.receive(idx(6)), Err(GapHeadError::TailOverrun));
    assert_eq!(h.receive(idx(5)), Ok(1));
}

#[test]
fn release_run_is_all_or_nothing() {
    let mut h = gap(8, 0);
    h.receive(idx(6)).unwrap();
    h.release(idx(3)).unwrap();
    assert_eq!(h.release_run(idx(1), 3), Err(GapHeadError::AlreadyReleased));
    assert!(!h.is_released(idx(1)));
    assert!(!h.is_released(idx(2)));
    assert_eq!(h.release_run(idx(4), 3), Err(GapHeadError::NotReceived));
    assert!(!h.is_released(idx(4)));
    assert_eq!(h.release_run(idx(0), 9), Err(GapHeadError::RunTooLong));
    assert_eq!(h.release_run(idx(1), 2), Ok(0));
    assert_eq!(h.release_run(idx(0), 1), Ok(4));
    assert_eq!(h.release_run(idx(4), 2), Ok(2));
    assert_eq!(h.head(), idx(6));
    assert_eq!(
        h.release_run(idx(6), 0),
        Ok(0),
        "an empty run releases nothing"
    );
}

#[test]
fn head_crosses_the_counter_wrap() {
    let start = u32::MAX - 2;
    let mut h = gap(4, start);
    assert_eq!(h.receive(idx(start.wrapping_add(4))), Ok(4));
    // The window is MAX-2, MAX-1, MAX, 0; the tail is 1.
    assert_eq!(h.tail(), idx(1));
    assert_eq!(h.release(idx(1)), Err(GapHeadError::NotReceived));
    assert_eq!(h.release(idx(0)), Ok(0));
    assert_eq!(h.release(idx(u32::MAX)), Ok(0));
    assert_eq!(h.release(idx(u32::MAX - 1)), Ok(0));
    assert_eq!(h.release(idx(u32::MAX - 2)), Ok(4));
    assert_eq!(h.head(), idx(1));
    assert_eq!(h.release(idx(u32::MAX)), Err(GapHeadError::BelowHead));
}

#[test]
fn head_advances_across_bitmap_words() {
    let mut h = gap(256, 0);
    h.receive(idx(200)).unwrap();
    for i in (0..200).filter(|&i| i != 64) {
        // Below the gap at 64 each release advances the head by one; above it, none does.
        assert_eq!(h.release(idx(i)), Ok(u32::from(i < 64)), "release {i}");
    }
    assert_eq!(h.head(), idx(64));
    assert_eq!(h.outstanding(), 136);
    assert_eq!(h.release(idx(64)), Ok(136));
    assert_eq!(h.head(), idx(200));
    // A second lap reuses the slots: the bits were cleared.
    assert_eq!(h.receive(idx(456)), Ok(256));
    assert_eq!(h.release_run(idx(200), 256), Ok(256));
    assert_eq!(h.head(), idx(456));
}

#[test]
fn full_word_run_from_a_word_boundary() {
    let mut h = gap(128, 0);
    h.receive(idx(128)).unwrap();
    assert_eq!(h.release_run(idx(1), 127), Ok(0));
    assert_eq!(h.release(idx(0)), Ok(128));
}

#[test]
fn capacity_one() {
    let g = RingGeometry::new(1).unwrap();
    let mut h = GapHead::new(g, [0u64; 1], idx(u32::MAX)).unwrap();
    assert_eq!(h.receive(idx(0)), Ok(1));
    assert_eq!(h.receive(idx(1)), Err(GapHeadError::TailOverrun));
    assert_eq!(h.release(idx(u32::MAX)), Ok(1));
    assert_eq!(h.receive(idx(1)), Ok(1));
    assert_eq!(h.release(idx(0)), Ok(1));
    assert_eq!(h.head(), idx(1));
}

#[test]
fn storage_size_is_checked_and_cleared() {
    let g = RingGeometry::new(128).unwrap();
    assert_eq!(bitmap_words(128), 2);
    assert_eq!(bitmap_words(1), 1);
    assert_eq!(bitmap_words(65), 2);
    assert_eq!(
        GapHead::new(g, [0u64; 1], idx(0)).map(|_| ()),
        Err(GapHeadError::StorageTooSmall)
    );
    // Caller-provided slice storage, initially dirty: `new` clears it.
    let mut words = [u64::MAX; 2];
    {
        let mut h = GapHead::new(g, &mut words[..], idx(0)).unwrap();
        h.receive(idx(2)).unwrap();
        assert!(!h.is_released(idx(0)));
        assert_eq!(h.release(idx(1)), Ok(0));
    }
    assert_eq!(words, [0b10, 0]);
}

#[test]
fn errors_display_their_cause() {
    assert_eq!(
        GapHeadError::BelowHead.to_string(),
        "released slot lies below the head"
    );
}
