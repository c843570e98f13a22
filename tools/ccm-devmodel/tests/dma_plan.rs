//! Unit tests of `dma_plan`: region validation and translation, the exact steps of a batch
//! (ring wrap, segment boundaries, barriers, tails), metadata encoding, the executor's batching,
//! credit, in-order holding and errors, and negative controls of the host simulation.

mod common;

use ccm_devmodel::abi::{
    DescriptorTable, DmaSegment, MetadataRecord, DESCRIPTOR_MAGIC, DMA_SEG_LAST, MD_FLAG_ERROR,
    MD_FLAG_FINAL,
};
use ccm_devmodel::dma_plan::{
    ArrayBuffers, BatchRequests, DmaExecutor, DmaRequest, ExecError, ExecStats, Next, PlanError,
    RegionError, RegionLayout, Reservation, ResultRecord, Ring, SegAddr, Shortfall, Step, Steps,
};
use ccm_devmodel::latency::{LatencyModel, Operation};
use ccm_devmodel::proto::batcher::{
    BatchError, Batcher, ReorderBuffer, SequenceError, Sequencer, StreamingFactor,
};
use ccm_devmodel::proto::credit::{Backpressure, CreditError, DeviceCredit, PublishPolicy};
use ccm_devmodel::proto::ring::RingIndex;
use common::{geo, segments, table, Host, Sim, PAGE};

const BUS: u64 = 0x1_0000_0000;
const MB: u64 = 0x10_0000;

/// Three one-page segments at bus slots 0, 2, 1: headers in page 0, metadata ring (4 records) in
/// page 1, payload ring (4 slots of 32 bytes) in page 2.
fn small_layout() -> RegionLayout<Vec<DmaSegment>> {
    let segs = segments(&[1, 1, 1], &[0, 2, 1]);
    let t = table(&segs, 0, PAGE, 2 * PAGE);
    RegionLayout::new(&t, segs, geo(4), geo(4), 32).unwrap()
}

fn addr(segment: u32, offset: u32, bus: u64) -> SegAddr {
    SegAddr {
        segment,
        offset,
        bus_addr: bus,
    }
}

fn rec(tag: u32, length: u32, flags: u16, src: u64) -> ResultRecord {
    ResultRecord {
        tag,
        length,
        result_offset: u64::from(tag) * 64,
        checksum: 0xC0DE_0000 | tag,
        flags,
        status: 0,
        src,
    }
}

#[test]
fn region_accessors_and_translation() {
    let l = small_layout();
    assert_eq!(l.region_size(), 3 * PAGE);
    assert_eq!(l.slot_size(), 32);
    assert_eq!(l.headers_offset(), 0);
    assert_eq!(l.tail_offset(Ring::Metadata), 0);
    assert_eq!(l.tail_offset(Ring::Payload), 0x40);
    assert_eq!(l.payload_slot_offset(3), 2 * PAGE + 96);
    assert_eq!(l.payload_slot_offset(5), 2 * PAGE + 32, "modulo capacity");
    assert_eq!(l.metadata_slot_offset(6), PAGE + 64);
    assert_eq!(l.translate(0x40, 4), Ok(addr(0, 0x40, BUS + 0x40)));
    assert_eq!(l.translate(PAGE + 8, 4), Ok(addr(1, 8, BUS + 2 * MB + 8)));
    assert_eq!(
        l.translate(3 * PAGE - 4, 4),
        Ok(addr(2, 4092, BUS + MB + 4092))
    );
    assert_eq!(l.translate(3 * PAGE - 4, 5), Err(RegionError::OutOfRange));
    assert_eq!(l.translate(3 * PAGE, 0), Err(RegionError::OutOfRange));
    assert_eq!(l.translate(u64::MAX, 1), Err(RegionError::OutOfRange));
    assert_eq!(l.translate(PAGE - 4, 8), Err(RegionError::Straddles));
    assert_eq!(l.piece(PAGE - 4, 8), Ok((addr(0, 4092, BUS + 4092), 4)));
    let pieces: Vec<_> = l.pieces(PAGE - 4, 4 + 4096 + 10).collect();
    assert_eq!(
        pieces,
        vec![
            Ok((addr(0, 4092, BUS + 4092), 4)),
            Ok((addr(1, 0, BUS + 2 * MB), 4096)),
            Ok((addr(2, 0, BUS + MB), 10)),
        ]
    );
    let bad: Vec<_> = l.pieces(3 * PAGE - 2, 4).collect();
    assert_eq!(bad, vec![Err(RegionError::OutOfRange)]);
    assert_eq!(l.pieces(0, 0).count(), 0);
}

#[test]
fn region_validation() {
    let segs = segments(&[1, 1, 1], &[0, 1, 2]);
    let good = table(&segs, 0, PAGE, 2 * PAGE);
    let new = |t: &DescriptorTable, s: &[DmaSegment], slot: u32| {
        RegionLayout::new(t, s, geo(4), geo(4), slot).map(|_| ())
    };
    assert_eq!(new(&good, &segs, 32), Ok(()));
    let mut t = good;
    t.magic = 0;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::BadMagic));
    assert_eq!(new(&good, &segs, 24), Err(RegionError::BadSlotSize));
    assert_eq!(new(&good, &segs, 4), Err(RegionError::BadSlotSize));
    assert_eq!(new(&good, &segs, 8192), Err(RegionError::BadSlotSize));
    assert_eq!(new(&good, &[], 32), Err(RegionError::NoSegments));
    assert_eq!(
        new(&good, &segs[..2], 32),
        Err(RegionError::SegmentCountMismatch)
    );
    let mut s = segs.clone();
    s[1].len = 0;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::ZeroLengthSegment { index: 1 })
    );
    let mut s = segs.clone();
    s[2].bus_addr += 8;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::MisalignedSegment { index: 2 })
    );
    let mut s = segs.clone();
    s[0].len = 100;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::MisalignedSegment { index: 0 })
    );
    let mut s = segs.clone();
    s[2].flags = 0;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::BadLastFlag { index: 2 })
    );
    let mut s = segs.clone();
    s[0].flags = DMA_SEG_LAST;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::BadLastFlag { index: 0 })
    );
    let mut s = segs.clone();
    s[1].bus_addr = u64::MAX - 4095;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::SegmentWraps { index: 1 })
    );
    let mut s = segs.clone();
    s[2].bus_addr = s[0].bus_addr;
    assert_eq!(
        new(&good, &s, 32),
        Err(RegionError::OverlappingSegments {
            first: 0,
            second: 2
        })
    );
    // Partial overlap: segment 1 of two pages reaching into segment 2.
    let mut s = segments(&[1, 2, 1], &[0, 1, 2]);
    s[2].bus_addr = s[1].bus_addr + PAGE;
    let t4 = table(&s, 0, PAGE, 2 * PAGE);
    assert_eq!(
        new(&t4, &s, 32),
        Err(RegionError::OverlappingSegments {
            first: 1,
            second: 2
        })
    );
    let mut t = good;
    t.region_size += PAGE;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::RegionSizeMismatch));
    let mut t = good;
    t.payload_offset += 32;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::MisalignedOffset));
    let mut t = good;
    t.payload_offset = 3 * PAGE;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::RingOutOfRegion));
    let mut t = good;
    t.headers_offset = u64::MAX - 4095;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::RingOutOfRegion));
    // A payload ring of 4 slots of 4096 bytes needs 4 pages.
    assert_eq!(new(&good, &segs, 4096), Err(RegionError::RingOutOfRegion));
    let mut t = good;
    t.metadata_offset = 0;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::RingsOverlap));
    let mut t = good;
    t.payload_offset = PAGE;
    assert_eq!(new(&t, &segs, 32), Err(RegionError::RingsOverlap));
    // Reserved fields and unknown segment flags are ignored.
    let mut t = good;
    t.reserved = [1, 2, 3];
    let mut s = segs.clone();
    s[0].flags = 1 << 5;
    assert_eq!(new(&t, &s, 32), Ok(()));
    assert_eq!(DESCRIPTOR_MAGIC, good.magic);
}

#[test]
fn metadata_record_encoding() {
    let r = MetadataRecord {
        seq: 0x0403_0201,
        tag: 0x0807_0605,
        payload_index: 0x0C0B_0A09,
        length: 0x100F_0E0D,
        result_offset: 0x1817_1615_1413_1211,
        checksum: 0x1C1B_1A19,
        flags: 0x1E1D,
        status: 0x201F,
    };
    let b = r.to_bytes();
    let want: Vec<u8> = (1u8..=32).collect();
    assert_eq!(b.to_vec(), want);
    assert_eq!(MetadataRecord::from_bytes(&b), r);
}

/// Two records into a 4-slot payload ring from slot 3: the first wraps (slot 3, then slot 0).
#[test]
fn exact_steps_of_a_wrapping_batch() {
    let l = small_layout();
    let records = [rec(7, 40, 0, 1000), rec(8, 20, MD_FLAG_FINAL, 2000)];
    let res = Reservation {
        payload_first: RingIndex::new(3),
        payload_slots: 3,
        metadata_first: RingIndex::new(10),
        records: 2,
        bytes: 60,
    };
    let steps: Vec<Step> = Steps::new(&l, &records, res)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let seg2 = BUS + MB;
    let seg1 = BUS + 2 * MB;
    let md = |seq, tag, pi, len, flags| MetadataRecord {
        seq,
        tag,
        payload_index: pi,
        length: len,
        result_offset: u64::from(tag) * 64,
        checksum: 0xC0DE_0000 | tag,
        flags,
        status: 0,
    };
    assert_eq!(
        steps,
        vec![
            Step::CopyPayload {
                record: 0,
                src: 1000,
                dst: addr(2, 96, seg2 + 96),
                region_offset: 2 * PAGE + 96,
                len: 32
            },
            Step::CopyPayload {
                record: 0,
                src: 1032,
                dst: addr(2, 0, seg2),
                region_offset: 2 * PAGE,
                len: 8
            },
            Step::CopyPayload {
                record: 1,
                src: 2000,
                dst: addr(2, 32, seg2 + 32),
                region_offset: 2 * PAGE + 32,
                len: 20
            },
            Step::WriteBarrier,
            Step::StoreTail {
                ring: Ring::Payload,
                dst: addr(0, 0x40, BUS + 0x40),
                region_offset: 0x40,
                value: 6
            },
            Step::WriteMetadata {
                dst: addr(1, 64, seg1 + 64),
                region_offset: PAGE + 64,
                record: md(10, 7, 3, 40, 0)
            },
            Step::WriteMetadata {
                dst: addr(1, 96, seg1 + 96),
                region_offset: PAGE + 96,
                record: md(11, 8, 5, 20, MD_FLAG_FINAL)
            },
            Step::WriteBarrier,
            Step::StoreTail {
                ring: Ring::Metadata,
                dst: addr(0, 0, BUS),
                region_offset: 0,
                value: 12
            },
        ]
    );
    // The same batch as DMA requests: three payload pieces (not contiguous), one metadata run.
    let req = Steps::new(&l, &records, res).unwrap().requests().unwrap();
    assert_eq!(
        req,
        BatchRequests {
            payload: Some(DmaRequest {
                bytes: 60,
                segments: 3
            }),
            payload_tail: true,
            metadata: DmaRequest {
                bytes: 64,
                segments: 1
            },
            metadata_tail: true,
        }
    );
    let ops: Vec<Operation> = req.operations().collect();
    let dma = |bytes, segments| Operation::Dma { bytes, segments };
    assert_eq!(ops, [dma(60, 3), dma(4, 1), dma(64, 1), dma(4, 1)]);
    let m = LatencyModel::DEFAULT;
    let total: u64 = ops.iter().map(|&o| m.charge(o).unwrap().total()).sum();
    assert_eq!(total, 676 + 676 + 677 + 676);
}

/// A payload ring over two segments: a record crossing the page boundary is split, and one that
/// wraps crosses back into the first segment.
#[test]
fn payload_copies_split_at_segment_boundaries() {
    let segs = segments(&[1, 1, 1, 1], &[3, 2, 1, 0]);
    let t = table(&segs, 0, PAGE, 2 * PAGE);
    let l = RegionLayout::new(&t, segs, geo(4), geo(128), 64).unwrap();
    let copies = |first: u32| -> Vec<(u32, u32, u64, u32)> {
        let records = [rec(1, 250, 0, 0)];
        let res = Reservation {
            payload_first: RingIndex::new(first),
            payload_slots: 4,
            metadata_first: RingIndex::new(0),
            records: 1,
            bytes: 250,
        };
        Steps::new(&l, &records, res)
            .unwrap()
            .map(Result::unwrap)
            .filter_map(|s| match s {
                Step::CopyPayload { dst, src, len, .. } => {
                    Some((dst.segment, dst.offset, src, len))
                }
                _ => None,
            })
            .collect()
    };
    assert_eq!(copies(62), [(2, 3968, 0, 128), (3, 0, 128, 122)]);
    assert_eq!(copies(u32::MAX - 1), [(3, 3968, 0, 128), (2, 0, 128, 122)]);
    assert_eq!(copies(10), [(2, 640, 0, 250)]);
}

#[test]
fn batch_without_payload_has_metadata_steps_only() {
    let l = small_layout();
    let records = [rec(3, 0, MD_FLAG_FINAL, 0)];
    let res = Reservation {
        payload_first: RingIndex::new(9),
        payload_slots: 0,
        metadata_first: RingIndex::new(9),
        records: 1,
        bytes: 0,
    };
    let steps: Vec<Step> = Steps::new(&l, &records, res)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(steps.len(), 3);
    assert!(matches!(
        steps[0],
        Step::WriteMetadata { record, .. } if record.payload_index == 9 && record.length == 0
    ));
    assert_eq!(steps[1], Step::WriteBarrier);
    assert!(matches!(
        steps[2],
        Step::StoreTail {
            ring: Ring::Metadata,
            value: 10,
            ..
        }
    ));
    let req = Steps::new(&l, &records, res).unwrap().requests().unwrap();
    assert_eq!(req.payload, None);
    assert!(!req.payload_tail);
    assert_eq!(req.operations().count(), 2);
}

#[test]
fn steps_reject_a_mismatched_reservation() {
    let l = small_layout();
    let records = [rec(1, 40, 0, 0)];
    let res = Reservation {
        payload_first: RingIndex::new(0),
        payload_slots: 2,
        metadata_first: RingIndex::new(0),
        records: 1,
        bytes: 40,
    };
    assert!(Steps::new(&l, &records, res).is_ok());
    let bad = |r: Reservation| Steps::new(&l, &records, r).err();
    assert_eq!(
        bad(Reservation {
            payload_slots: 1,
            ..res
        }),
        Some(PlanError::ReservationMismatch)
    );
    assert_eq!(
        bad(Reservation { records: 2, ..res }),
        Some(PlanError::ReservationMismatch)
    );
    assert_eq!(
        bad(Reservation { bytes: 41, ..res }),
        Some(PlanError::ReservationMismatch)
    );
    let huge = [rec(1, 5 * 32, 0, 0)];
    assert_eq!(
        Steps::new(&l, &huge, res).err(),
        Some(PlanError::RecordTooLarge)
    );
}

// ---------------------------------------------------------------------------------------------
// The executor
// ---------------------------------------------------------------------------------------------

const BASE: u32 = u32::MAX - 1;

type Exec<const Q: usize, const W: usize> =
    DmaExecutor<Vec<DmaSegment>, Vec<u64>, ArrayBuffers<Q, W>>;

/// SF 64 bytes (2 slots of 32) into the small layout (4 payload slots, 4 metadata slots).
fn exec<const Q: usize, const W: usize>(seq: Sequencer<Vec<u64>>) -> Result<Exec<Q, W>, ExecError> {
    exec_with(32, 4, seq)
}

/// As `exec`, with the batcher's slot size and the payload credit's ring capacity chosen, to
/// build executors whose parts disagree with the small layout.
fn exec_with<const Q: usize, const W: usize>(
    slot_size: u32,
    payload_credit_slots: u32,
    seq: Sequencer<Vec<u64>>,
) -> Result<Exec<Q, W>, ExecError> {
    let sf = StreamingFactor::new(64, slot_size).unwrap();
    let batcher = Batcher::new(sf, geo(4), geo(4)).unwrap();
    let p = DeviceCredit::new(geo(payload_credit_slots), RingIndex::new(BASE));
    let m = DeviceCredit::new(geo(4), RingIndex::new(BASE));
    DmaExecutor::new(small_layout(), batcher, seq, p, m, ArrayBuffers::default())
}

fn ooo() -> Exec<8, 0> {
    exec(Sequencer::OutOfOrder).unwrap()
}

fn stream<const Q: usize, const W: usize>(e: &mut Exec<Q, W>, now: u64) -> Reservation {
    match e.begin_batch(now).unwrap() {
        Next::Stream(res) => {
            assert_eq!(e.steps().unwrap().reservation(), res);
            assert_eq!(e.end_batch().unwrap(), res);
            res
        }
        other => panic!("expected a batch, got {other:?}"),
    }
}

#[test]
fn batches_close_at_the_streaming_factor() {
    let mut e = ooo();
    e.complete(0, rec(1, 32, 0, 0)).unwrap();
    assert_eq!(e.begin_batch(0), Ok(Next::Idle), "1 slot < SF");
    e.complete(0, rec(2, 20, 0, 32)).unwrap();
    assert_eq!(e.pending(), 2);
    let Next::Stream(res) = e.begin_batch(0).unwrap() else {
        panic!("no batch")
    };
    assert_eq!(
        res,
        Reservation {
            payload_first: RingIndex::new(BASE),
            payload_slots: 2,
            metadata_first: RingIndex::new(BASE),
            records: 2,
            bytes: 52,
        }
    );
    assert_eq!(e.in_flight(), Some(res));
    assert_eq!(e.begin_batch(0), Err(ExecError::Busy));
    let steps: Vec<Step> = e.steps().unwrap().map(Result::unwrap).collect();
    assert_eq!(steps.len(), 2 + 1 + 1 + 2 + 1 + 1);
    e.end_batch().unwrap();
    assert_eq!(e.end_batch(), Err(ExecError::NotStreaming));
    assert!(matches!(e.steps(), Err(ExecError::NotStreaming)));
    assert!(e.is_idle());
    assert_eq!(
        e.stats(),
        ExecStats {
            records: 2,
            payload_bytes: 52,
            batches: 1,
            credit_stalls: 0,
            credit_wait_ns: 0
        }
    );
    assert_eq!(
        e.payload_credit().tail(),
        RingIndex::new(BASE.wrapping_add(2))
    );
}

#[test]
fn a_record_that_does_not_fit_closes_the_batch_before_it() {
    let mut e = ooo();
    e.complete(0, rec(1, 20, 0, 0)).unwrap();
    e.complete(0, rec(2, 40, 0, 0)).unwrap(); // 2 slots: does not fit beside the first
    let first = stream(&mut e, 0);
    assert_eq!((first.records, first.payload_slots), (1, 1));
    let second = stream(&mut e, 0);
    assert_eq!((second.records, second.payload_slots), (1, 2));
    assert_eq!(e.begin_batch(0), Ok(Next::Idle));
}

#[test]
fn credit_back_pressure_and_wait_time() {
    let mut e = ooo();
    for i in 0..6 {
        e.complete(0, rec(i, 32, 0, 0)).unwrap();
    }
    stream(&mut e, 0);
    stream(&mut e, 0);
    let short = Shortfall {
        payload_needed: 2,
        payload_available: 0,
        metadata_needed: 2,
        metadata_available: 0,
    };
    assert_eq!(e.begin_batch(1000), Ok(Next::WaitCredit(short)));
    assert_eq!(e.begin_batch(1200), Ok(Next::WaitCredit(short)));
    assert_eq!(
        e.payload_credit().backpressure(),
        Backpressure {
            refusals: 2,
            episodes: 1
        }
    );
    assert_eq!(e.metadata_credit().backpressure().refusals, 2);
    assert_eq!(e.stats().credit_stalls, 1);
    assert_eq!(e.in_flight(), None);
    // A stale head (the one already seen) credits nothing.
    assert_eq!(e.receive_heads(BASE, BASE), Ok((0, 0)));
    // Metadata credit alone is not enough: both or neither.
    assert_eq!(e.receive_heads(BASE.wrapping_add(2), BASE), Ok((2, 0)));
    assert_eq!(
        e.begin_batch(1300),
        Ok(Next::WaitCredit(Shortfall {
            metadata_available: 2,
            ..short
        }))
    );
    assert_eq!(e.metadata_credit().backpressure().refusals, 2, "not short");
    assert_eq!(
        e.metadata_credit().tail(),
        RingIndex::new(BASE.wrapping_add(4))
    );
    assert_eq!(
        e.receive_heads(BASE.wrapping_add(2), BASE.wrapping_add(1)),
        Ok((0, 1))
    );
    assert!(matches!(e.begin_batch(1400), Ok(Next::WaitCredit(_))));
    assert_eq!(
        e.receive_heads(BASE.wrapping_add(2), BASE.wrapping_add(2)),
        Ok((0, 1))
    );
    let res = stream(&mut e, 1500);
    assert_eq!(res.payload_first, RingIndex::new(BASE.wrapping_add(4)));
    assert_eq!(e.stats().credit_wait_ns, 500);
    assert_eq!(e.stats().credit_stalls, 1);
    assert_eq!(e.stats().batches, 3);
}

#[test]
fn invalid_heads_are_refused_atomically() {
    let mut e = ooo();
    e.complete(0, rec(1, 64, 0, 0)).unwrap();
    stream(&mut e, 0);
    assert_eq!(
        e.receive_heads(BASE.wrapping_add(1), BASE.wrapping_add(3)),
        Err(ExecError::Credit(CreditError::HeadBeyondTail))
    );
    assert_eq!(
        e.metadata_credit().head_seen(),
        RingIndex::new(BASE),
        "not applied"
    );
    assert_eq!(
        e.receive_heads(BASE.wrapping_sub(1), BASE),
        Err(ExecError::Credit(CreditError::HeadRegressed))
    );
    assert_eq!(
        e.receive_heads(BASE.wrapping_add(1), BASE.wrapping_add(2)),
        Ok((1, 2))
    );
}

#[test]
fn empty_final_record_joins_the_open_batch() {
    let mut e = ooo();
    e.complete(0, rec(1, 10, 0, 0)).unwrap();
    e.complete(0, rec(1, 0, MD_FLAG_FINAL, 0)).unwrap();
    let Next::Stream(res) = e.begin_batch(0).unwrap() else {
        panic!("no batch")
    };
    assert_eq!((res.records, res.payload_slots, res.bytes), (2, 1, 10));
    let records: Vec<MetadataRecord> = e
        .steps()
        .unwrap()
        .filter_map(|s| match s.unwrap() {
            Step::WriteMetadata { record, .. } => Some(record),
            _ => None,
        })
        .collect();
    assert_eq!(records[1].length, 0);
    assert_eq!(records[1].payload_index, BASE.wrapping_add(1));
    assert_eq!(records[1].flags, MD_FLAG_FINAL);
    e.end_batch().unwrap();
    // Alone: a batch of one record and no payload.
    assert_eq!(
        e.complete(0, rec(2, 0, MD_FLAG_FINAL | MD_FLAG_ERROR, 0)),
        Err(ExecError::BadRecord),
        "an error record needs a status"
    );
    let mut err = rec(2, 0, MD_FLAG_FINAL | MD_FLAG_ERROR, 0);
    err.status = 5;
    e.complete(0, err).unwrap();
    let res = stream(&mut e, 0);
    assert_eq!((res.records, res.payload_slots), (1, 0));
}

#[test]
fn empty_final_record_respects_max_records() {
    // SF of 4 slots but only 2 metadata slots: batches close at 2 records.
    let l = small_layout();
    let sf = StreamingFactor::new(128, 32).unwrap();
    let batcher = Batcher::new(sf, geo(4), geo(2)).unwrap();
    assert_eq!(batcher.max_records(), 2);
    let segs = segments(&[1, 1, 1], &[0, 2, 1]);
    let t = table(&segs, 0, PAGE, 2 * PAGE);
    let l2 = RegionLayout::new(&t, segs, geo(2), geo(4), 32).unwrap();
    drop(l);
    let mut e: Exec<8, 0> = DmaExecutor::new(
        l2,
        batcher,
        Sequencer::OutOfOrder,
        DeviceCredit::new(geo(4), RingIndex::new(0)),
        DeviceCredit::new(geo(2), RingIndex::new(0)),
        ArrayBuffers::default(),
    )
    .unwrap();
    e.complete(0, rec(1, 8, 0, 0)).unwrap();
    e.complete(0, rec(1, 8, 0, 0)).unwrap(); // closes at max_records
    e.complete(0, rec(1, 8, 0, 0)).unwrap();
    e.complete(0, rec(1, 0, MD_FLAG_FINAL, 0)).unwrap(); // joins the third: 2 records
    assert_eq!(stream(&mut e, 0).records, 2);
    e.receive_heads(2, 2).unwrap();
    let res = stream(&mut e, 0);
    assert_eq!((res.records, res.payload_slots), (2, 1));
}

#[test]
fn final_record_closes_the_batch() {
    let mut e = ooo();
    e.complete(0, rec(1, 10, MD_FLAG_FINAL, 0)).unwrap();
    let res = stream(&mut e, 0);
    assert_eq!((res.records, res.payload_slots), (1, 1));
    e.complete(0, rec(2, 10, 0, 0)).unwrap();
    assert_eq!(e.begin_batch(0), Ok(Next::Idle));
    e.flush();
    assert_eq!(stream(&mut e, 0).records, 1);
    e.flush();
    assert_eq!(e.begin_batch(0), Ok(Next::Idle), "nothing to flush");
}

#[test]
fn records_are_validated() {
    let mut e = ooo();
    let bad = |e: &mut Exec<8, 0>, r: ResultRecord| e.complete(0, r);
    assert_eq!(bad(&mut e, rec(1, 8, 1 << 2, 0)), Err(ExecError::BadRecord));
    assert_eq!(
        bad(&mut e, rec(1, 8, MD_FLAG_ERROR, 0)),
        Err(ExecError::BadRecord)
    );
    let mut s = rec(1, 8, MD_FLAG_FINAL, 0);
    s.status = 3;
    assert_eq!(bad(&mut e, s), Err(ExecError::BadRecord));
    assert_eq!(bad(&mut e, rec(1, 0, 0, 0)), Err(ExecError::BadRecord));
    assert_eq!(
        bad(&mut e, rec(1, 65, 0, 0)),
        Err(ExecError::Batch(BatchError::RecordTooLarge))
    );
    assert!(e.is_idle());
    assert_eq!(bad(&mut e, rec(1, 64, 0, 0)), Ok(()));
}

#[test]
fn queue_full_until_a_batch_is_streamed() {
    let mut e: Exec<2, 0> = exec(Sequencer::OutOfOrder).unwrap();
    e.complete(0, rec(1, 32, 0, 0)).unwrap();
    e.complete(0, rec(2, 32, 0, 0)).unwrap();
    assert_eq!(e.complete(0, rec(3, 32, 0, 0)), Err(ExecError::QueueFull));
    assert_eq!(e.pending(), 2);
    stream(&mut e, 0);
    assert_eq!(e.complete(0, rec(3, 32, 0, 0)), Ok(()));
}

/// The pending queue is a ring: a batch whose records wrap around the end of the buffers
/// streams them in order, and no record is lost or repeated.
#[test]
fn a_batch_wrapping_the_queue_streams_in_order() {
    let mut e: Exec<3, 0> = exec(Sequencer::OutOfOrder).unwrap();
    let tags = |e: &Exec<3, 0>| -> Vec<u32> {
        e.steps()
            .unwrap()
            .filter_map(|s| match s.unwrap() {
                Step::WriteMetadata { record, .. } => Some(record.tag),
                _ => None,
            })
            .collect()
    };
    for t in 1..=3 {
        e.complete(0, rec(t, 32, 0, 32 * u64::from(t))).unwrap();
    }
    let Next::Stream(_) = e.begin_batch(0).unwrap() else {
        panic!("no batch")
    };
    assert_eq!(tags(&e), [1, 2]);
    e.end_batch().unwrap();
    // The host consumed both: credit for the next batch.
    e.receive_heads(BASE.wrapping_add(2), BASE.wrapping_add(2))
        .unwrap();
    // Record 4 goes to the buffers' first entry: the batch [3, 4] wraps.
    e.complete(0, rec(4, 32, 0, 128)).unwrap();
    let Next::Stream(res) = e.begin_batch(0).unwrap() else {
        panic!("no batch")
    };
    assert_eq!((res.records, res.bytes), (2, 64));
    assert_eq!(tags(&e), [3, 4]);
    e.end_batch().unwrap();
    assert!(e.is_idle());
}

fn in_order(window: u32, first: u32) -> Sequencer<Vec<u64>> {
    Sequencer::InOrder(ReorderBuffer::new(geo(window), vec![0u64; 1], first).unwrap())
}

#[test]
fn in_order_streaming_holds_early_results() {
    let mut e: Exec<8, 4> = exec(in_order(4, BASE)).unwrap();
    e.complete(BASE.wrapping_add(1), rec(11, 32, 0, 0)).unwrap();
    assert_eq!((e.held(), e.pending()), (1, 0));
    assert_eq!(
        e.complete(BASE.wrapping_add(5), rec(15, 32, 0, 0)),
        Err(ExecError::Sequence(SequenceError::OutOfWindow))
    );
    assert_eq!(
        e.complete(BASE.wrapping_add(1), rec(11, 32, 0, 0)),
        Err(ExecError::Sequence(SequenceError::Duplicate))
    );
    assert_eq!(e.held(), 1);
    e.complete(BASE, rec(10, 32, 0, 0)).unwrap();
    assert_eq!((e.held(), e.pending()), (0, 2));
    let tags: Vec<u32> = e
        .begin_batch(0)
        .ok()
        .and_then(|_| e.steps().ok())
        .unwrap()
        .filter_map(|s| match s.unwrap() {
            Step::WriteMetadata { record, .. } => Some(record.tag),
            _ => None,
        })
        .collect();
    assert_eq!(tags, [10, 11]);
    e.end_batch().unwrap();
    assert_eq!(
        e.complete(BASE, rec(10, 32, 0, 0)),
        Err(ExecError::Sequence(SequenceError::AlreadyReleased))
    );
}

#[test]
fn executor_configuration_is_checked() {
    assert!(matches!(
        exec::<8, 2>(in_order(4, 0)),
        Err(ExecError::WindowTooLarge)
    ));
    assert!(matches!(
        exec::<1, 0>(Sequencer::OutOfOrder),
        Err(ExecError::QueueTooSmall)
    ));
    assert!(matches!(
        exec::<5, 4>(in_order(4, 0)),
        Err(ExecError::QueueTooSmall)
    ));
    assert!(exec::<6, 4>(in_order(4, 0)).is_ok());
    // A batcher with 16-byte slots against a layout of 32-byte slots.
    let r: Result<Exec<8, 0>, _> = exec_with(16, 4, Sequencer::OutOfOrder);
    assert!(matches!(r, Err(ExecError::SlotSizeMismatch)));
    // Payload credit for an 8-slot ring against a 4-slot payload ring.
    let r: Result<Exec<8, 0>, _> = exec_with(32, 8, Sequencer::OutOfOrder);
    assert!(matches!(r, Err(ExecError::GeometryMismatch)));
}

// ---------------------------------------------------------------------------------------------
// Negative controls: the host simulation catches what the property tests rely on it to catch.
// ---------------------------------------------------------------------------------------------

fn sim_and_host() -> (Sim, Host, Vec<u8>) {
    let segs = segments(&[1, 1, 1], &[0, 2, 1]);
    let t = table(&segs, 0, PAGE, 2 * PAGE);
    let sim = Sim::new(segs, t, 32, geo(4), geo(4), BASE);
    let host = Host::new(
        &sim,
        BASE,
        PublishPolicy::EveryRelease,
        PublishPolicy::EveryRelease,
    );
    let device_mem: Vec<u8> = (0..256u32).map(|i| (i * 7 + 1) as u8).collect();
    (sim, host, device_mem)
}

fn checked(mut r: ResultRecord, device_mem: &[u8]) -> ResultRecord {
    let s = r.src as usize;
    r.checksum = ccm_devmodel::abi::crc32c(&device_mem[s..s + r.length as usize]);
    r
}

#[test]
fn host_reads_exactly_what_was_streamed() {
    let (mut sim, mut host, mem) = sim_and_host();
    let mut e = ooo();
    e.complete(0, checked(rec(1, 40, 0, 0), &mem)).unwrap();
    e.complete(0, checked(rec(2, 20, 0, 100), &mem)).unwrap();
    e.flush();
    // Two batches: the first record fills the SF on its own.
    for _ in 0..2 {
        assert!(matches!(e.begin_batch(0), Ok(Next::Stream(_))));
        for s in e.steps().unwrap() {
            sim.apply(&s.unwrap(), &mem).unwrap();
        }
        e.end_batch().unwrap();
    }
    assert_eq!(e.begin_batch(0), Ok(Next::Idle));
    assert_eq!(host.poll(&mut sim), Ok(2));
    assert_eq!(host.ready[0].payload, mem[0..40].to_vec());
    assert_eq!(host.ready[1].payload, mem[100..120].to_vec());
    host.consume(&mut sim, 1).unwrap();
    assert_eq!(
        host.gap.head(),
        RingIndex::new(BASE),
        "gap at the first record"
    );
    host.consume(&mut sim, 0).unwrap();
    assert_eq!(host.gap.head(), RingIndex::new(BASE.wrapping_add(3)));
    assert_eq!(
        *host.credit_history.last().unwrap(),
        (BASE.wrapping_add(2), BASE.wrapping_add(3))
    );
}

#[test]
fn metadata_before_payload_is_detected() {
    let (mut sim, mut host, mem) = sim_and_host();
    let mut e = ooo();
    e.complete(0, checked(rec(1, 40, MD_FLAG_FINAL, 0), &mem))
        .unwrap();
    e.begin_batch(0).unwrap();
    let steps: Vec<Step> = e.steps().unwrap().map(Result::unwrap).collect();
    // Perform the metadata half first, and let the host poll in between.
    let split = steps
        .iter()
        .position(|s| matches!(s, Step::WriteMetadata { .. }))
        .unwrap();
    for s in &steps[split..] {
        sim.apply(s, &mem).unwrap();
    }
    let err = host.poll(&mut sim).unwrap_err();
    assert!(err.contains("beyond the payload tail"), "{err}");
}

#[test]
fn payload_tail_before_payload_data_is_detected() {
    let (mut sim, mut host, mem) = sim_and_host();
    let mut e = ooo();
    e.complete(0, checked(rec(1, 40, MD_FLAG_FINAL, 0), &mem))
        .unwrap();
    e.begin_batch(0).unwrap();
    let steps: Vec<Step> = e.steps().unwrap().map(Result::unwrap).collect();
    // Everything but the payload data: the host sees a partial write.
    for s in steps
        .iter()
        .filter(|s| !matches!(s, Step::CopyPayload { .. }))
    {
        sim.apply(s, &mem).unwrap();
    }
    let err = host.poll(&mut sim).unwrap_err();
    assert!(err.contains("does not match its checksum"), "{err}");
}

#[test]
fn ignoring_credit_is_detected() {
    let (mut sim, mut host, mem) = sim_and_host();
    let l = small_layout();
    let records = [
        checked(rec(1, 64, 0, 0), &mem),
        checked(rec(2, 64, 0, 64), &mem),
    ];
    let res = Reservation {
        payload_first: RingIndex::new(BASE),
        payload_slots: 4,
        metadata_first: RingIndex::new(BASE),
        records: 2,
        bytes: 128,
    };
    for s in Steps::new(&l, &records, res).unwrap() {
        sim.apply(&s.unwrap(), &mem).unwrap();
    }
    assert_eq!(host.poll(&mut sim), Ok(2));
    host.consume(&mut sim, 1).unwrap();
    // A device that ignored credit would reuse the first record's slots, still unreleased.
    let again = Reservation {
        payload_first: RingIndex::new(BASE.wrapping_add(4)),
        payload_slots: 2,
        metadata_first: RingIndex::new(BASE.wrapping_add(2)),
        records: 1,
        bytes: 64,
    };
    let err = Steps::new(&l, &records[..1], again)
        .unwrap()
        .map(|s| sim.apply(&s.unwrap(), &mem))
        .find(Result::is_err)
        .unwrap()
        .unwrap_err();
    assert!(
        err.contains("overwrite of unreleased payload slot"),
        "{err}"
    );
}
