//! Property tests: each module against a simple reference, with counters started anywhere in the
//! `u32` space (in particular just below the wrap).

use std::collections::BTreeSet;

use ccm_proto::batcher::{Batcher, Flush, ReorderBuffer, SequenceError, StreamingFactor};
use ccm_proto::credit::{CreditError, DeviceCredit, HeadPublisher, PublishPolicy};
use ccm_proto::gap_head::{GapHead, GapHeadError};
use ccm_proto::ring::{RingGeometry, RingIndex};
use proptest::prelude::*;

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

/// Counter start values: half of the cases within 300 of the wrap, the rest anywhere.
fn start() -> impl Strategy<Value = u32> {
    prop_oneof![(0u32..300).prop_map(|k| u32::MAX - k), any::<u32>()]
}

/// A power-of-two capacity `2^0 ..= 2^max_exp`.
fn capacity(max_exp: u32) -> impl Strategy<Value = u32> {
    (0..=max_exp).prop_map(|e| 1u32 << e)
}

/// A random permutation of `0..n`, for `n` drawn from `len`.
fn shuffled(len: std::ops::RangeInclusive<u32>) -> impl Strategy<Value = Vec<u32>> {
    len.prop_flat_map(|n| Just((0..n).collect::<Vec<u32>>()).prop_shuffle())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Ring arithmetic is the arithmetic of unbounded counters, read modulo 2^32.
    #[test]
    fn ring_used_free_runs(cap in capacity(12), head in start(), used in 0u32..=4096) {
        let g = RingGeometry::new(cap).unwrap();
        let used = used % (cap + 1);
        let tail = idx(head).wrapping_add(used);
        prop_assert_eq!(g.used(idx(head), tail), Ok(used));
        prop_assert_eq!(g.free(idx(head), tail), Ok(cap - used));
        prop_assert_eq!(g.used(idx(head), tail.wrapping_add(cap - used + 1)).is_err(), true);
        let (a, b) = g.runs(idx(head), used).unwrap();
        let b = b.unwrap_or_default();
        prop_assert_eq!(a.start, head % cap);
        prop_assert_eq!(a.len + b.len, used);
        prop_assert!(a.start + a.len <= cap);
        if b.len > 0 {
            prop_assert_eq!(a.start + a.len, cap);
            prop_assert_eq!(b.start, 0);
        }
    }

    /// Whatever order received slots are released in, the head is always the end of the longest
    /// released prefix.
    #[test]
    fn gap_head_is_longest_released_prefix(
        (cap, order) in capacity(8).prop_flat_map(|cap| (Just(cap), shuffled(0..=cap))),
        s in start(),
    ) {
        let g = RingGeometry::new(cap).unwrap();
        let mut h = GapHead::new(g, [0u64; 4], idx(s)).unwrap();
        let n = order.len() as u32;
        prop_assert_eq!(h.receive(idx(s).wrapping_add(n)), Ok(n));
        let mut released = vec![false; order.len()];
        let mut prefix = 0u32;
        for &off in &order {
            let advanced = h.release(idx(s).wrapping_add(off)).unwrap();
            released[off as usize] = true;
            let old = prefix;
            while (prefix as usize) < released.len() && released[prefix as usize] {
                prefix += 1;
            }
            prop_assert_eq!(advanced, prefix - old);
            prop_assert_eq!(h.head(), idx(s).wrapping_add(prefix));
        }
        prop_assert_eq!(h.head(), idx(s).wrapping_add(n));
        prop_assert!(h.is_drained());
    }

    /// The gap-aware head agrees with a reference over unbounded `u64` counters on every
    /// operation, including the erroneous ones.
    #[test]
    fn gap_head_matches_reference(
        cap in capacity(7),
        s in start(),
        ops in prop::collection::vec((any::<bool>(), -300i64..300), 1..200),
    ) {
        let g = RingGeometry::new(cap).unwrap();
        let mut h = GapHead::new(g, [0u64; 2], idx(s)).unwrap();
        let (mut head, mut tail) = (0i64, 0i64);
        let mut released = BTreeSet::new();
        let at = |off: i64| idx(s.wrapping_add(off as u32));
        for (is_receive, arg) in ops {
            if is_receive {
                let new_tail = tail + arg.rem_euclid(cap as i64 + 2) - 1;
                let expect = if new_tail < tail {
                    Err(GapHeadError::TailRegressed)
                } else if new_tail - head > cap as i64 {
                    Err(GapHeadError::TailOverrun)
                } else {
                    let added = (new_tail - tail) as u32;
                    tail = new_tail;
                    Ok(added)
                };
                prop_assert_eq!(h.receive(at(new_tail)), expect);
            } else {
                let i = head + arg % (2 * cap as i64 + 2);
                let expect = if i < head {
                    Err(GapHeadError::BelowHead)
                } else if i >= tail {
                    Err(GapHeadError::NotReceived)
                } else if !released.insert(i) {
                    Err(GapHeadError::AlreadyReleased)
                } else {
                    let old = head;
                    while released.remove(&head) {
                        head += 1;
                    }
                    Ok((head - old) as u32)
                };
                prop_assert_eq!(h.release(at(i)), expect);
            }
            prop_assert_eq!(h.head(), at(head));
            prop_assert_eq!(h.tail(), at(tail));
            prop_assert_eq!(h.outstanding() as i64, tail - head);
        }
    }

    /// Under any interleaving of device production, stale head reads, host receipt, out-of-order
    /// release and head publishing, the device never writes a slot the host has not released, and
    /// when the host has consumed everything the device regains full credit.
    #[test]
    fn device_never_overwrites_unconsumed_slot(
        cap in capacity(5),
        s in start(),
        threshold in 1u32..=32,
        batched in any::<bool>(),
        ops in prop::collection::vec(credit_op(), 1..400),
    ) {
        let g = RingGeometry::new(cap).unwrap();
        let policy = if batched {
            PublishPolicy::Batched { threshold: 1 + threshold % cap }
        } else {
            PublishPolicy::EveryRelease
        };
        let mut sim = CreditSim::new(g, policy, idx(s));
        for op in ops {
            sim.step(op)?;
        }
        // Drain: the host receives and releases everything, its last head store lands, and the
        // device reads the newest head.
        sim.step(CreditOp::Receive)?;
        while !sim.outstanding.is_empty() {
            sim.step(CreditOp::Release(0))?;
        }
        sim.step(CreditOp::StoreHead)?;
        prop_assert_eq!(sim.publisher.published(), sim.dev.tail(), "the drain rule publishes");
        sim.step(CreditOp::ReadHead(u32::MAX))?;
        prop_assert_eq!(sim.dev.available(), cap);
    }

    /// Batches partition the records in order, hold whole records, never exceed the SF or the
    /// metadata ring, and close only when full or when the next record does not fit.
    #[test]
    fn batches_partition_records(
        slot_size in 1u32..=64,
        sf_slots in 1u32..=16,
        meta_exp in 0u32..=5,
        lens in prop::collection::vec(1u32..=1024, 0..100),
    ) {
        let sf = StreamingFactor::new(sf_slots * slot_size, slot_size).unwrap();
        let meta = RingGeometry::new(1 << meta_exp).unwrap();
        let mut b = Batcher::new(sf, RingGeometry::new(16).unwrap(), meta).unwrap();
        let lens: Vec<u32> = lens.into_iter().map(|l| 1 + (l - 1) % sf.bytes()).collect();
        let mut flushes: Vec<Flush> = Vec::new();
        let mut closed_by_push = Vec::new();
        for &len in &lens {
            for f in b.push(len).unwrap() {
                flushes.push(f);
                closed_by_push.push(true);
            }
        }
        if let Some(f) = b.flush() {
            flushes.push(f);
            closed_by_push.push(false);
        }
        prop_assert_eq!(b.flush(), None);
        let mut next = 0usize;
        for (k, f) in flushes.iter().enumerate() {
            prop_assert!(f.records >= 1);
            prop_assert!(f.records <= b.max_records());
            prop_assert!(f.slots <= sf.slots());
            let recs = &lens[next..next + f.records as usize];
            let slots: u32 = recs.iter().map(|&l| sf.slots_for(l).unwrap()).sum();
            prop_assert_eq!(f.slots, slots);
            prop_assert_eq!(f.bytes, recs.iter().sum::<u32>());
            next += f.records as usize;
            if closed_by_push[k] {
                let full = f.slots == sf.slots() || f.records == b.max_records();
                let next_too_big = lens
                    .get(next)
                    .is_some_and(|&l| f.slots + sf.slots_for(l).unwrap() > sf.slots());
                prop_assert!(full || next_too_big, "batch {:?} closed early", f);
            }
        }
        prop_assert_eq!(next, lens.len());
    }

    /// In order, any completion order within the window streams the tags exactly in tag order.
    #[test]
    fn reorder_buffer_streams_in_tag_order(
        exp in 0u32..=6,
        first in start(),
        order in shuffled(0..=99),
    ) {
        let window = RingGeometry::new(1 << exp).unwrap();
        let mut rob = ReorderBuffer::new(window, [0u64; 1], first).unwrap();
        let mut streamed = Vec::new();
        let mut held: Vec<u32> = Vec::new();
        for off in order.iter().copied() {
            held.push(off);
            // Retry every held completion until none makes progress (the producer's stall).
            let mut progress = true;
            while progress {
                progress = false;
                let mut k = 0;
                while k < held.len() {
                    match rob.complete(first.wrapping_add(held[k])) {
                        Err(SequenceError::OutOfWindow) => k += 1,
                        Ok(run) => {
                            held.swap_remove(k);
                            progress = true;
                            if let Some(run) = run {
                                streamed.extend((0..run.count).map(|c| run.first.wrapping_add(c)));
                            }
                        }
                        Err(e) => prop_assert!(false, "unexpected {:?}", e),
                    }
                }
            }
        }
        prop_assert!(held.is_empty());
        let expect: Vec<u32> = (0..order.len() as u32).map(|o| first.wrapping_add(o)).collect();
        prop_assert_eq!(streamed, expect);
    }
}

/// One atomic step of the credit property test.
#[derive(Clone, Copy, Debug)]
enum CreditOp {
    /// The device reserves `1 + n % capacity` slots if its credit allows, writes them and
    /// publishes its tail.
    Produce(u32),
    /// The device reads one of the heads stored so far, not older than the one it read last.
    ReadHead(u32),
    /// The host learns the device's published tail.
    Receive,
    /// The host releases one of its received, unreleased slots, chosen by the argument.
    Release(u32),
    /// The host's latest head store reaches device memory.
    StoreHead,
}

fn credit_op() -> impl Strategy<Value = CreditOp> {
    // A plain tuple mapped to the enum generates much faster than a `prop_oneof!` of five arms.
    (0u8..5, any::<u32>()).prop_map(|(kind, arg)| match kind {
        0 => CreditOp::Produce(arg),
        1 => CreditOp::ReadHead(arg),
        2 => CreditOp::Receive,
        3 => CreditOp::Release(arg),
        _ => CreditOp::StoreHead,
    })
}

/// Device and host of one ring, stepped by the credit property test.
struct CreditSim {
    g: RingGeometry,
    dev: DeviceCredit,
    /// The device's tail as published into host memory.
    published_tail: RingIndex,
    host: GapHead<[u64; 1]>,
    publisher: HeadPublisher,
    /// Heads stored into device memory, oldest first; the device may read any that is not older
    /// than the one it read last.
    stored: Vec<RingIndex>,
    read_pos: usize,
    pending_store: Option<RingIndex>,
    /// Ghost state: which slots hold a result the host has not released.
    live: Vec<bool>,
    /// Received, unreleased indexes.
    outstanding: Vec<RingIndex>,
}

impl CreditSim {
    fn new(g: RingGeometry, policy: PublishPolicy, s: RingIndex) -> Self {
        Self {
            g,
            dev: DeviceCredit::new(g, s),
            published_tail: s,
            host: GapHead::new(g, [0u64; 1], s).unwrap(),
            publisher: HeadPublisher::new(g, policy, s).unwrap(),
            stored: vec![s],
            read_pos: 0,
            pending_store: None,
            live: vec![false; g.capacity() as usize],
            outstanding: Vec::new(),
        }
    }

    fn step(&mut self, op: CreditOp) -> Result<(), TestCaseError> {
        let cap = self.g.capacity();
        match op {
            CreditOp::Produce(arg) => {
                let n = 1 + arg % cap;
                match self.dev.try_reserve(n) {
                    Ok(first) => {
                        for k in 0..n {
                            let slot = self.g.slot(first.wrapping_add(k)) as usize;
                            prop_assert!(!self.live[slot], "overwrote unconsumed slot {}", slot);
                            self.live[slot] = true;
                        }
                        self.published_tail = self.dev.tail();
                    }
                    Err(CreditError::NoCredit { available }) => prop_assert!(available < n),
                    Err(e) => prop_assert!(false, "unexpected {:?}", e),
                }
            }
            CreditOp::ReadHead(arg) => {
                // `u32::MAX` reads the newest head; anything else a possibly stale one.
                let span = self.stored.len() - self.read_pos;
                self.read_pos = match arg {
                    u32::MAX => self.stored.len() - 1,
                    _ => self.read_pos + arg as usize % span,
                };
                let credited = self.dev.receive_head(self.stored[self.read_pos]);
                prop_assert!(credited.is_ok(), "{:?}", credited);
            }
            CreditOp::Receive => {
                let mut i = self.host.tail();
                prop_assert!(self.host.receive(self.published_tail).is_ok());
                while i != self.published_tail {
                    self.outstanding.push(i);
                    i = i.wrapping_add(1);
                }
            }
            CreditOp::Release(arg) => {
                if !self.outstanding.is_empty() {
                    let i = self
                        .outstanding
                        .swap_remove(arg as usize % self.outstanding.len());
                    self.live[self.g.slot(i) as usize] = false;
                    prop_assert!(self.host.release(i).is_ok());
                    let publish = self
                        .publisher
                        .on_release(self.host.head(), self.host.tail());
                    if let Some(h) = publish.unwrap() {
                        self.pending_store = Some(h);
                    }
                }
            }
            CreditOp::StoreHead => {
                if let Some(h) = self.pending_store.take() {
                    self.stored.push(h);
                }
            }
        }
        Ok(())
    }
}
