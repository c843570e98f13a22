//! Property tests: the transform against the host's reference, address translation against a
//! direct computation, the scheduler against a simple model, and the whole back-stream executed
//! against a simulated host region under arbitrary interleavings of device and host actions,
//! stale credit, both streaming orders and any segment layout.

mod common;

use std::collections::VecDeque;

use ccm_devmodel::abi::{
    crc32c, DmaSegment, StreamXformArgs, MD_FLAG_ERROR, MD_FLAG_FINAL, STATUS_DMA_FAULT,
};
use ccm_devmodel::dma_plan::{
    ArrayBuffers, DmaExecutor, ExecError, Next, RegionLayout, ResultRecord, Ring, Step,
};
use ccm_devmodel::proto::batcher::{
    Batcher, ReorderBuffer, SequenceError, Sequencer, StreamingFactor,
};
use ccm_devmodel::proto::credit::{DeviceCredit, PublishPolicy};
use ccm_devmodel::proto::ring::RingIndex;
use ccm_devmodel::scheduler::{JobId, Policy, Scheduler};
use ccm_devmodel::xform::{reference_word, verify_record, Xform};
use common::{geo, segments, table, Host, Sim, PAGE};
use proptest::prelude::*;

/// Counter start values: half of the cases within 300 of the wrap, the rest anywhere.
fn start() -> impl Strategy<Value = u32> {
    prop_oneof![(0u32..300).prop_map(|k| u32::MAX - k), any::<u32>()]
}

/// `0..n` ordered by `keys` (a random permutation).
fn permutation(n: usize, keys: &[u32]) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    v.sort_by_key(|&i| (keys[i % keys.len()], i));
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The device's chunked transform equals the host's word-by-word reference, every chunk
    /// passes the host's check, and a one-bit corruption of any chunk fails it.
    #[test]
    fn xform_matches_reference(
        op in 0u32..3,
        operand in any::<u32>(),
        sf_words in 1u32..=16,
        chunk_words in 0u32..=16,
        input in prop::collection::vec(any::<u32>(), 0..80),
        flip in any::<(usize, u8)>(),
    ) {
        let chunk_words = chunk_words.min(sf_words);
        let sf = sf_words * 4;
        let args = StreamXformArgs { op, chunk_size: chunk_words * 4, operand, ..Default::default() };
        let x = Xform::from_args(&args, sf).unwrap();
        let bytes: Vec<u8> = input.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = vec![0u8; bytes.len()];
        let chunks: Vec<_> = x.stream(&bytes, &mut out).unwrap().collect();
        let reference: Vec<u8> = input
            .iter()
            .flat_map(|&w| reference_word(op, operand, w).unwrap().to_le_bytes())
            .collect();
        prop_assert_eq!(&out, &reference);
        prop_assert_eq!(chunks.len() as u32, x.chunk_count(bytes.len()).unwrap());
        let mut next = 0u32;
        for c in &chunks {
            prop_assert_eq!(c.offset, next);
            prop_assert!(c.length > 0 && c.length <= x.chunk_size());
            next += c.length;
            let payload = &out[c.offset as usize..(c.offset + c.length) as usize];
            prop_assert_eq!(c.checksum, crc32c(payload));
            prop_assert_eq!(
                verify_record(&args, sf, &bytes, u64::from(c.offset), payload, c.checksum),
                Ok(())
            );
        }
        prop_assert_eq!(next as usize, bytes.len());
        if !chunks.is_empty() {
            let c = chunks[flip.0 % chunks.len()];
            let mut bad = out[c.offset as usize..(c.offset + c.length) as usize].to_vec();
            let at = flip.0 % bad.len();
            bad[at] ^= 1 << (flip.1 % 8);
            prop_assert!(
                verify_record(&args, sf, &bytes, u64::from(c.offset), &bad, c.checksum).is_err()
            );
        }
    }

    /// Translation of any range into pieces agrees with the concatenation of the segments.
    #[test]
    fn pieces_tile_the_range(
        pages in prop::collection::vec(1u32..=3, 3..8),
        bus_keys in prop::collection::vec(any::<u32>(), 8),
        at in any::<u64>(),
        len in 0u32..20_000,
    ) {
        let bus: Vec<u64> = permutation(8, &bus_keys).into_iter().map(|b| b as u64).collect();
        let segs = segments(&pages, &bus[..pages.len()]);
        let t = table(&segs, 0, PAGE, 2 * PAGE);
        let l = RegionLayout::new(&t, segs.clone(), geo(4), geo(4), 32).unwrap();
        let size = l.region_size();
        let at = at % (size + 1);
        let pieces: Vec<_> = l.pieces(at, len).collect();
        if at + u64::from(len) > size {
            prop_assert!(pieces.last().is_some_and(|p| p.is_err()));
            return Ok(());
        }
        let mut region = at;
        let mut total = 0u32;
        for p in pieces {
            let (addr, n) = p.unwrap();
            let seg = segs[addr.segment as usize];
            let seg_start: u64 = segs[..addr.segment as usize].iter().map(|s| u64::from(s.len)).sum();
            prop_assert_eq!(seg_start + u64::from(addr.offset), region);
            prop_assert_eq!(addr.bus_addr, seg.bus_addr + u64::from(addr.offset));
            prop_assert!(n > 0 && addr.offset + n <= seg.len);
            region += u64::from(n);
            total += n;
        }
        prop_assert_eq!(total, len);
    }

    /// Lookups remember where they ended (a cursor per ring): a sequence of them in any order
    /// (forward, backward, across the rings) answers each exactly as a search from the first
    /// segment does.
    #[test]
    fn lookups_do_not_depend_on_the_previous_ones(
        pages in prop::collection::vec(1u32..=3, 3..8),
        bus_keys in prop::collection::vec(any::<u32>(), 8),
        ats in prop::collection::vec((any::<u64>(), 1u32..5000), 1..40),
    ) {
        let bus: Vec<u64> = permutation(8, &bus_keys).into_iter().map(|b| b as u64).collect();
        let segs = segments(&pages, &bus[..pages.len()]);
        let t = table(&segs, 0, PAGE, 2 * PAGE);
        let used = RegionLayout::new(&t, segs.clone(), geo(4), geo(4), 32).unwrap();
        let size = used.region_size();
        for (at, len) in ats {
            let at = at % (size + 1);
            let fresh = RegionLayout::new(&t, segs.clone(), geo(4), geo(4), 32).unwrap();
            prop_assert_eq!(used.piece(at, len), fresh.piece(at, len));
        }
    }

    /// The scheduler dispatches every chunk once, in chunk order per job, with consecutive
    /// sequence numbers per tenant, and picks jobs exactly as a simple model of FIFO /
    /// round-robin does.
    #[test]
    fn scheduler_matches_model(
        rr in any::<bool>(),
        ops in prop::collection::vec((0u8..3, 1u32..5, 0u16..2), 0..200),
    ) {
        let policy = if rr { Policy::RoundRobin } else { Policy::Fifo };
        let mut s = Scheduler::<6>::new(policy);
        // Model: (id, chunks, dispatched, completed) in submission order; RR cursor by position.
        let mut model: Vec<(JobId, u32, u32, u32, u64)> = Vec::new();
        let mut cursor: Option<u64> = None;
        let mut order = 0u64;
        let mut next_tag = 0u32;
        let mut seq = [0u32; 2];
        let mut outstanding: Vec<JobId> = Vec::new();
        for (op, n, tenant) in ops {
            match op {
                0 => {
                    let id = JobId { tenant, tag: next_tag };
                    next_tag += 1;
                    let r = s.submit(id, n);
                    if model.len() == 6 {
                        prop_assert!(r.is_err());
                    } else {
                        prop_assert_eq!(r, Ok(()));
                        model.push((id, n, 0, 0, order));
                        order += 1;
                    }
                }
                1 => {
                    let first = model.iter().position(|j| j.2 < j.1);
                    let pick = match (rr, cursor) {
                        (true, Some(c)) => model.iter().position(|j| j.4 > c && j.2 < j.1).or(first),
                        _ => first,
                    };
                    let got = s.dispatch();
                    match pick {
                        None => prop_assert_eq!(got, None),
                        Some(i) => {
                            let item = got.unwrap();
                            let j = &mut model[i];
                            prop_assert_eq!(item.job, j.0);
                            prop_assert_eq!(item.chunk, j.2);
                            prop_assert_eq!(item.last, j.2 + 1 == j.1);
                            prop_assert_eq!(item.seq, seq[usize::from(j.0.tenant)]);
                            seq[usize::from(j.0.tenant)] += 1;
                            j.2 += 1;
                            cursor = Some(j.4);
                            outstanding.push(item.job);
                        }
                    }
                }
                _ => {
                    if outstanding.is_empty() {
                        continue;
                    }
                    let id = outstanding.remove(n as usize % outstanding.len());
                    let c = s.complete(id).unwrap();
                    let i = model.iter().position(|j| j.0 == id).unwrap();
                    model[i].3 += 1;
                    prop_assert_eq!(c.completed, model[i].3);
                    prop_assert_eq!(c.job_done, model[i].3 == model[i].1);
                    if c.job_done {
                        model.remove(i);
                    }
                }
            }
            prop_assert_eq!(s.len(), model.len());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The back-stream against a simulated host
// ---------------------------------------------------------------------------------------------

/// Pending-queue and hold capacities of the executor under test.
type Exec = DmaExecutor<Vec<DmaSegment>, Vec<u64>, ArrayBuffers<64, 16>>;

#[derive(Debug, Clone)]
struct Config {
    slot_exp: u32,
    ring_pages_exp: u32,
    sf_slots: u32,
    md_exp: u32,
    window_exp: Option<u32>,
    base: u32,
    batched: Option<u32>,
    placement: u8,
    cuts: Vec<u32>,
    bus_keys: Vec<u32>,
}

fn config() -> impl Strategy<Value = Config> {
    (
        5u32..=7,
        0u32..=2,
        1u32..=16,
        0u32..=5,
        prop::option::of(0u32..=4),
        start(),
        prop::option::of(1u32..=64),
        0u8..6,
        prop::collection::vec(1u32..=3, 1..8),
        prop::collection::vec(any::<u32>(), 16),
    )
        .prop_map(
            |(
                slot_exp,
                ring_pages_exp,
                sf_slots,
                md_exp,
                window_exp,
                base,
                batched,
                placement,
                cuts,
                bus_keys,
            )| Config {
                slot_exp,
                ring_pages_exp,
                sf_slots,
                md_exp,
                window_exp,
                base,
                batched,
                placement,
                cuts,
                bus_keys,
            },
        )
}

struct World {
    sim: Sim,
    host: Host,
    exec: Exec,
    device_mem: Vec<u8>,
    results: Vec<ResultRecord>,
    base: u32,
    todo: VecDeque<usize>,
    released: Vec<usize>,
    in_order: bool,
    streaming: Option<(Vec<Step>, usize)>,
    heads_read: usize,
    now: u64,
}

impl World {
    fn new(c: &Config, lens: &[(u16, u8)], order_keys: &[u32]) -> Self {
        let slot = 1u32 << c.slot_exp;
        let ring_pages = 1u32 << c.ring_pages_exp;
        let cap = ring_pages * 4096 / slot;
        let md_cap = 1u32 << c.md_exp;
        // Blocks of pages: headers (1), metadata ring (1), payload ring; in one of 6 orders.
        let blocks = [1u32, 1, ring_pages];
        let orders = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        let mut offsets = [0u64; 3];
        let mut page = 0u64;
        for &b in &orders[c.placement as usize] {
            offsets[b] = page * PAGE;
            page += u64::from(blocks[b]);
        }
        let mut pages = c.cuts.clone();
        let have: u64 = pages.iter().map(|&p| u64::from(p)).sum();
        if have < page {
            pages.push((page - have) as u32);
        }
        let bus: Vec<u64> = permutation(16, &c.bus_keys)
            .into_iter()
            .map(|b| b as u64)
            .collect();
        let segs = segments(&pages, &bus[..pages.len()]);
        let t = table(&segs, offsets[0], offsets[1], offsets[2]);
        let layout = RegionLayout::new(&t, segs.clone(), geo(md_cap), geo(cap), slot).unwrap();
        let sim = Sim::new(segs, t, slot, geo(md_cap), geo(cap), c.base);
        let policy = |cap: u32| match c.batched {
            None => PublishPolicy::EveryRelease,
            Some(t) => PublishPolicy::Batched {
                threshold: t.min(cap),
            },
        };
        let host = Host::new(&sim, c.base, policy(md_cap), policy(cap));

        let sf = StreamingFactor::new(c.sf_slots * slot, slot).unwrap();
        let batcher = Batcher::new(sf, geo(cap), geo(md_cap)).unwrap();
        let sequencer = match c.window_exp {
            None => Sequencer::OutOfOrder,
            Some(e) => {
                Sequencer::InOrder(ReorderBuffer::new(geo(1 << e), vec![0u64; 1], c.base).unwrap())
            }
        };
        let exec = Exec::new(
            layout,
            batcher,
            sequencer,
            DeviceCredit::new(geo(cap), RingIndex::new(c.base)),
            DeviceCredit::new(geo(md_cap), RingIndex::new(c.base)),
            ArrayBuffers::default(),
        )
        .unwrap();

        // Result i: tag i, staged at i * SF in device memory.
        let sf_bytes = (c.sf_slots * slot) as usize;
        let mut device_mem = vec![0u8; sf_bytes * lens.len()];
        let results = lens
            .iter()
            .enumerate()
            .map(|(i, &(len, flags))| {
                let length = u32::from(len) % (sf_bytes as u32 + 1);
                let src = i * sf_bytes;
                for (k, b) in device_mem[src..src + length as usize]
                    .iter_mut()
                    .enumerate()
                {
                    *b = (i * 131 + k * 7 + 1) as u8;
                }
                let final_ = length == 0 || flags % 5 == 0;
                let error = length == 0 && flags % 2 == 0;
                ResultRecord {
                    tag: i as u32,
                    length,
                    result_offset: (i as u64) << 20,
                    checksum: crc32c(&device_mem[src..src + length as usize]),
                    flags: if final_ { MD_FLAG_FINAL } else { 0 }
                        | if error { MD_FLAG_ERROR } else { 0 },
                    status: if error { STATUS_DMA_FAULT } else { 0 },
                    src: src as u64,
                }
            })
            .collect();
        Self {
            sim,
            host,
            exec,
            device_mem,
            results,
            base: c.base,
            todo: permutation(lens.len(), order_keys).into(),
            released: Vec::new(),
            in_order: c.window_exp.is_some(),
            streaming: None,
            heads_read: 0,
            now: 0,
        }
    }

    /// The device completes the next result, if the executor takes it now.
    fn complete_one(&mut self) -> Result<bool, String> {
        let Some(i) = self.todo.pop_front() else {
            return Ok(false);
        };
        let seq = self.base.wrapping_add(i as u32);
        match self.exec.complete(seq, self.results[i]) {
            Ok(()) => {
                self.released.push(i);
                Ok(true)
            }
            Err(ExecError::QueueFull) => {
                self.todo.push_front(i);
                Ok(false)
            }
            Err(ExecError::Sequence(SequenceError::OutOfWindow)) => {
                self.todo.push_back(i);
                Ok(false)
            }
            Err(e) => Err(format!("complete {i}: {e}")),
        }
    }

    fn begin(&mut self) -> Result<(), String> {
        if self.streaming.is_some() {
            return Ok(());
        }
        match self.exec.begin_batch(self.now).map_err(|e| e.to_string())? {
            Next::Stream(_) => {
                let steps: Result<Vec<Step>, _> =
                    self.exec.steps().map_err(|e| e.to_string())?.collect();
                self.streaming = Some((steps.map_err(|e| e.to_string())?, 0));
            }
            Next::WaitCredit(_) | Next::Idle => {}
        }
        Ok(())
    }

    /// Performs up to `n` steps of the batch in flight; ends it after the last.
    fn step(&mut self, n: usize) -> Result<(), String> {
        let Some((steps, done)) = self.streaming.as_mut() else {
            return Ok(());
        };
        for _ in 0..n {
            if *done == steps.len() {
                break;
            }
            self.sim.apply(&steps[*done], &self.device_mem)?;
            *done += 1;
        }
        if *done == steps.len() {
            self.streaming = None;
            self.exec.end_batch().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The device reads the credit line: the newest value the host stored, or (`Some(pick)`) a
    /// stale one, but never one older than what it read before.
    fn read_heads(&mut self, pick: Option<usize>) -> Result<(), String> {
        let h = &self.host.credit_history;
        let k = match pick {
            Some(pick) => self.heads_read + pick % (h.len() - self.heads_read),
            None => h.len() - 1,
        };
        self.heads_read = k;
        let (m, p) = h[k];
        self.exec
            .receive_heads(m, p)
            .map(|_| ())
            .map_err(|e| format!("receive_heads({m}, {p}): {e}"))
    }

    fn check_received(&self) -> Result<(), String> {
        for r in &self.host.polled {
            let want = self
                .results
                .get(r.record.tag as usize)
                .ok_or("unknown tag")?;
            let s = want.src as usize;
            if r.payload != self.device_mem[s..s + want.length as usize]
                || r.record.length != want.length
                || r.record.result_offset != want.result_offset
                || r.record.flags != want.flags
                || r.record.status != want.status
                || r.record.checksum != want.checksum
            {
                return Err(format!(
                    "record of tag {} differs: {:?}",
                    r.record.tag, r.record
                ));
            }
        }
        Ok(())
    }

    fn act(&mut self, action: u8, param: u8) -> Result<(), String> {
        self.now += u64::from(param);
        match action {
            0 | 1 => {
                self.complete_one()?;
            }
            2 => self.begin()?,
            3 => self.step(1 + usize::from(param % 4))?,
            4 => self.read_heads(Some(usize::from(param)))?,
            5 => {
                self.host.poll(&mut self.sim)?;
            }
            6 => {
                if !self.host.ready.is_empty() {
                    let i = usize::from(param) % self.host.ready.len();
                    self.host.consume(&mut self.sim, i)?;
                }
            }
            _ => self.exec.flush(),
        }
        Ok(())
    }

    /// Runs everything to the end: every result completed, streamed, polled and consumed.
    fn drain(&mut self) -> Result<(), String> {
        for _ in 0..100_000 {
            if self.todo.is_empty()
                && self.exec.is_idle()
                && self.streaming.is_none()
                && self.host.ready.is_empty()
                && self.host.polled.len() == self.results.len()
            {
                return Ok(());
            }
            self.now += 1;
            self.step(usize::MAX)?;
            for _ in 0..self.todo.len() {
                if !self.complete_one()? && !self.todo.is_empty() && self.exec.pending() > 0 {
                    break;
                }
            }
            self.exec.flush();
            self.begin()?;
            self.step(usize::MAX)?;
            self.host.poll(&mut self.sim)?;
            while !self.host.ready.is_empty() {
                self.host.consume(&mut self.sim, 0)?;
            }
            self.read_heads(None)?;
        }
        Err(format!(
            "no progress: todo {}, pending {}, held {}, polled {}/{}",
            self.todo.len(),
            self.exec.pending(),
            self.exec.held(),
            self.host.polled.len(),
            self.results.len()
        ))
    }
}

fn run(
    c: &Config,
    lens: &[(u16, u8)],
    order_keys: &[u32],
    actions: &[(u8, u8)],
) -> Result<(), String> {
    let mut w = World::new(c, lens, order_keys);
    for &(a, p) in actions {
        w.act(a, p)?;
        w.check_received()?;
    }
    w.drain()?;
    w.check_received()?;
    // Every result exactly once, in the order it was released to the batcher: completion
    // order out of order, tag order in order.
    let polled: Vec<usize> = w
        .host
        .polled
        .iter()
        .map(|r| r.record.tag as usize)
        .collect();
    let expected: Vec<usize> = if w.in_order {
        (0..lens.len()).collect()
    } else {
        w.released.clone()
    };
    if polled != expected {
        return Err(format!("stream order {polled:?}, expected {expected:?}"));
    }
    if w.host.consumed.len() != lens.len() {
        return Err("not everything consumed".into());
    }
    let stats = w.exec.stats();
    let bytes: u64 = w.results.iter().map(|r| u64::from(r.length)).sum();
    if stats.records != lens.len() as u64 || stats.payload_bytes != bytes {
        return Err(format!("stats {stats:?}"));
    }
    if stats.credit_wait_ns > w.now {
        return Err("credit wait longer than the run".into());
    }
    // Tails only move forward, by at most one batch (SF slots, max_records records).
    let max_records = c.sf_slots.min(1 << c.md_exp);
    let mut last = [c.base, c.base];
    for &(ring, v) in &w.sim.tails_stored {
        let (i, limit) = match ring {
            Ring::Metadata => (0, max_records),
            Ring::Payload => (1, c.sf_slots),
        };
        let step = v.wrapping_sub(last[i]);
        if step == 0 && ring == Ring::Metadata || step > limit {
            return Err(format!("{ring:?} tail moved by {step}"));
        }
        last[i] = v;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// Executing the executor's steps against a simulated host region, with the host reading the
    /// rings as the driver would (metadata tail, records, payload by `payload_index`) and
    /// returning credit that the device reads late, delivers exactly the produced results, in
    /// streaming order, never overwriting a slot the host has not released, and never letting
    /// the host see a record before its payload.
    #[test]
    fn backstream_delivers_exactly_the_results(
        c in config(),
        lens in prop::collection::vec((any::<u16>(), any::<u8>()), 1..40),
        order_keys in prop::collection::vec(any::<u32>(), 40),
        actions in prop::collection::vec((0u8..8, any::<u8>()), 0..400),
    ) {
        let r = run(&c, &lens, &order_keys, &actions);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
