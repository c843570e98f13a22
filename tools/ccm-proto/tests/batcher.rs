//! Unit tests of `batcher`: streaming-factor validation, batch boundaries, the reorder buffer and
//! the streaming order.

use ccm_proto::batcher::{
    BatchError, Batcher, Flush, ReorderBuffer, SequenceError, Sequencer, StreamingFactor,
    StreamingOrder, TagRun,
};
use ccm_proto::ring::RingGeometry;

fn geo(capacity: u32) -> RingGeometry {
    RingGeometry::new(capacity).unwrap()
}

fn flush(records: u32, slots: u32, bytes: u32) -> Flush {
    Flush {
        records,
        slots,
        bytes,
    }
}

/// SF of 4 slots of 32 bytes, into rings large enough not to matter.
fn batcher4() -> Batcher {
    Batcher::new(StreamingFactor::new(128, 32).unwrap(), geo(16), geo(16)).unwrap()
}

#[test]
fn streaming_factor_validation() {
    assert_eq!(StreamingFactor::new(128, 0), Err(BatchError::ZeroSlotSize));
    assert_eq!(
        StreamingFactor::new(0, 32),
        Err(BatchError::ZeroStreamingFactor)
    );
    assert_eq!(
        StreamingFactor::new(100, 32),
        Err(BatchError::NotSlotMultiple)
    );
    let sf = StreamingFactor::new(96, 32).unwrap();
    assert_eq!((sf.slots(), sf.slot_size(), sf.bytes()), (3, 32, 96));
    let odd = StreamingFactor::new(48, 24).unwrap();
    assert_eq!(odd.slots(), 2, "slot sizes need not be powers of two");
}

#[test]
fn record_slot_counts() {
    let sf = StreamingFactor::new(128, 32).unwrap();
    assert_eq!(sf.slots_for(0), Err(BatchError::EmptyRecord));
    assert_eq!(sf.slots_for(1), Ok(1));
    assert_eq!(sf.slots_for(32), Ok(1));
    assert_eq!(sf.slots_for(33), Ok(2));
    assert_eq!(sf.slots_for(128), Ok(4));
    assert_eq!(sf.slots_for(129), Err(BatchError::RecordTooLarge));
    assert_eq!(sf.slots_for(u32::MAX), Err(BatchError::RecordTooLarge));
}

#[test]
fn batcher_rejects_an_sf_larger_than_the_payload_ring() {
    let sf = StreamingFactor::new(256, 32).unwrap();
    assert_eq!(
        Batcher::new(sf, geo(4), geo(16)),
        Err(BatchError::ExceedsPayloadRing)
    );
    let b = Batcher::new(sf, geo(8), geo(2)).unwrap();
    assert_eq!(
        b.max_records(),
        2,
        "a batch holds at most one metadata ring of records"
    );
    assert_eq!(Batcher::new(sf, geo(8), geo(64)).unwrap().max_records(), 8);
    assert_eq!(b.streaming_factor(), sf);
}

#[test]
fn flushes_exactly_at_the_streaming_factor() {
    let mut b = batcher4();
    assert!(b.push(32).unwrap().is_empty());
    assert!(b.push(10).unwrap().is_empty());
    assert!(b.push(1).unwrap().is_empty());
    assert_eq!(b.pending(), flush(3, 3, 43));
    assert_eq!(b.push(32).unwrap().collect::<Vec<_>>(), [flush(4, 4, 75)]);
    assert_eq!(b.pending(), Flush::default());
    assert_eq!(b.flush(), None);
}

#[test]
fn a_record_that_does_not_fit_closes_the_batch_first() {
    let mut b = batcher4();
    b.push(32).unwrap();
    b.push(64).unwrap();
    // 3 slots pending; a 2-slot record would make 5 > 4: the 3-slot batch goes alone.
    assert_eq!(b.push(40).unwrap().collect::<Vec<_>>(), [flush(2, 3, 96)]);
    assert_eq!(b.pending(), flush(1, 2, 40));
    assert_eq!(b.push(33).unwrap().collect::<Vec<_>>(), [flush(2, 4, 73)]);
}

#[test]
fn one_push_can_close_two_batches() {
    let mut b = batcher4();
    b.push(96).unwrap();
    let closed: Vec<_> = b.push(128).unwrap().collect();
    assert_eq!(closed, [flush(1, 3, 96), flush(1, 4, 128)]);
    assert_eq!(b.pending(), Flush::default());
}

#[test]
fn metadata_ring_limits_records_per_batch() {
    let sf = StreamingFactor::new(128, 32).unwrap();
    let mut b = Batcher::new(sf, geo(4), geo(2)).unwrap();
    assert!(b.push(1).unwrap().is_empty());
    assert_eq!(b.push(1).unwrap().collect::<Vec<_>>(), [flush(2, 2, 2)]);
}

#[test]
fn final_flush_takes_the_partial_batch() {
    let mut b = batcher4();
    b.push(5).unwrap();
    assert_eq!(b.flush(), Some(flush(1, 1, 5)));
    assert_eq!(b.flush(), None);
}

#[test]
fn push_errors_change_nothing() {
    let mut b = batcher4();
    b.push(32).unwrap();
    assert_eq!(b.push(0), Err(BatchError::EmptyRecord));
    assert_eq!(b.push(129), Err(BatchError::RecordTooLarge));
    assert_eq!(b.pending(), flush(1, 1, 32));
}

#[test]
fn reorder_buffer_releases_in_tag_order() {
    let mut rob = ReorderBuffer::new(geo(4), [0u64; 1], 0).unwrap();
    assert_eq!(rob.window(), 4);
    assert_eq!(rob.complete(2), Ok(None));
    assert_eq!(rob.complete(1), Ok(None));
    assert_eq!(rob.complete(0), Ok(Some(TagRun { first: 0, count: 3 })));
    assert_eq!(rob.next_tag(), 3);
    // The window slid: it is now [3, 7).
    assert_eq!(rob.complete(6), Ok(None));
    assert_eq!(rob.complete(7), Err(SequenceError::OutOfWindow));
    assert_eq!(rob.complete(6), Err(SequenceError::Duplicate));
    assert_eq!(rob.complete(1), Err(SequenceError::AlreadyReleased));
    assert_eq!(rob.complete(3), Ok(Some(TagRun { first: 3, count: 1 })));
    assert_eq!(rob.next_tag(), 4);
}

#[test]
fn reorder_buffer_tags_wrap() {
    let mut rob = ReorderBuffer::new(geo(2), [0u64; 1], u32::MAX).unwrap();
    assert_eq!(rob.complete(1), Err(SequenceError::OutOfWindow));
    assert_eq!(rob.complete(0), Ok(None));
    assert_eq!(
        rob.complete(u32::MAX),
        Ok(Some(TagRun {
            first: u32::MAX,
            count: 2
        }))
    );
    assert_eq!(rob.next_tag(), 1);
    let too_small = ReorderBuffer::new(geo(128), [0u64; 1], 0);
    assert_eq!(too_small.map(|_| ()), Err(SequenceError::StorageTooSmall));
}

#[test]
fn sequencer_orders() {
    let mut ooo: Sequencer<[u64; 1]> = Sequencer::OutOfOrder;
    assert_eq!(ooo.order(), StreamingOrder::OutOfOrder);
    assert_eq!(ooo.complete(5), Ok(Some(TagRun { first: 5, count: 1 })));
    assert_eq!(ooo.complete(2), Ok(Some(TagRun { first: 2, count: 1 })));

    let mut ino = Sequencer::InOrder(ReorderBuffer::new(geo(8), [0u64; 1], 0).unwrap());
    assert_eq!(ino.order(), StreamingOrder::InOrder);
    assert_eq!(ino.complete(1), Ok(None));
    assert_eq!(ino.complete(0), Ok(Some(TagRun { first: 0, count: 2 })));
}

#[test]
fn errors_display_their_cause() {
    assert_eq!(
        BatchError::ExceedsPayloadRing.to_string(),
        "streaming factor exceeds the payload ring"
    );
    assert_eq!(
        SequenceError::OutOfWindow.to_string(),
        "tag is beyond the reorder window"
    );
}
