//! Exhaustive interleaving test of the whole back-streaming protocol.
//!
//! A model of the device (compute, sequencer, batcher, credit, DMA writes, stale head reads) and
//! of the host (metadata polling, out-of-order consumption, gap-aware heads, head publishing) runs
//! the crate's real protocol types. Every access to shared memory is one atomic step; the
//! explorer tries every interleaving of the two agents' steps (a depth-first search over states,
//! with a visited set) and checks:
//!
//! - no payload or metadata slot is written while it holds something the host has not released;
//! - the host reads only fresh metadata, and every payload it reads has the content the device
//!   wrote for that record;
//! - every result is consumed exactly once, and in tag order when the device streams in order;
//! - no deadlock: in every state where no step is enabled, every result has been consumed, and
//!   the device has all its credit back (every head published, stored and read).
//!
//! Steps are sequentially consistent: the model checks the protocol logic given that the fences
//! of `proto/mod.rs` make each write visible in program order. Negative controls (a device that
//! ignores credit, one that writes metadata before payload, a host that never returns credit, a
//! host that batches without the drain rule) show that the checks catch what they claim to.

use std::collections::{HashSet, VecDeque};

use ccm_proto::batcher::{
    Batcher, Flush, ReorderBuffer, Sequencer, StreamingFactor, StreamingOrder,
};
use ccm_proto::credit::{DeviceCredit, HeadPublisher, PublishPolicy};
use ccm_proto::gap_head::GapHead;
use ccm_proto::ring::{RingGeometry, RingIndex};

/// Bytes per payload slot in the model.
const SLOT_SIZE: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    /// The device believes the payload ring is twice its real size.
    DeviceIgnoresCredit,
    /// The device writes and publishes metadata before payload (breaks the AXLE ordering).
    MetadataBeforePayload,
    /// The host never stores its heads into device memory.
    HostNeverPublishes,
    /// The host batches head stores but drops the drain rule (publishes only full batches).
    NoDrainRule,
}

#[derive(Clone, Debug)]
struct Config {
    payload_cap: u32,
    meta_cap: u32,
    sf_slots: u32,
    /// Payload slots of each result, indexed by tag offset.
    record_slots: Vec<u32>,
    order: StreamingOrder,
    /// Reorder window (in-order only).
    window: u32,
    policy: PublishPolicy,
    /// Initial value of every counter (ring indexes and tags).
    start: u32,
    bug: Bug,
}

/// A metadata record as written into the metadata ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Meta {
    tag: u32,
    /// The metadata index it was written at (to detect stale reads).
    index: RingIndex,
    /// Free-running payload index of its first slot.
    first: RingIndex,
    slots: u32,
}

/// The batch the device is writing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct InFlight {
    records: Vec<Meta>,
    /// (payload index, tag, part) in write order.
    payload: Vec<(RingIndex, u32, u32)>,
    next_payload: usize,
    payload_tail_stored: bool,
    next_meta: usize,
    meta_tail_stored: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    // Host memory, written by the device.
    payload_mem: Vec<Option<(u32, u32)>>,
    payload_tail_mem: RingIndex,
    meta_mem: Vec<Option<Meta>>,
    meta_tail_mem: RingIndex,
    // Device memory, written by the host.
    payload_head_mem: RingIndex,
    meta_head_mem: RingIndex,
    // Device private.
    computed: u64,
    seq: Sequencer<[u64; 1]>,
    batcher: Batcher,
    queue: VecDeque<u32>,
    flushes: VecDeque<Flush>,
    dev_payload: DeviceCredit,
    dev_meta: DeviceCredit,
    inflight: Option<InFlight>,
    // Host private.
    host_meta: GapHead<[u64; 1]>,
    host_payload: GapHead<[u64; 1]>,
    pub_meta: HeadPublisher,
    pub_payload: HeadPublisher,
    meta_read: RingIndex,
    metas_read: u32,
    pool: Vec<Meta>,
    store_meta: Option<RingIndex>,
    store_payload: Option<RingIndex>,
    consumed: u64,
    // Ghost: slots holding something the host has not released.
    payload_live: Vec<bool>,
    meta_live: Vec<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Compute(u32),
    FinalFlush,
    ReadPayloadHead,
    ReadMetaHead,
    StartBatch,
    WritePayload,
    StorePayloadTail,
    WriteMeta,
    StoreMetaTail,
    PollMetaTail,
    ReadMeta,
    Consume(usize),
    StorePayloadHead,
    StoreMetaHead,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Violation {
    PayloadOverwrite,
    MetadataOverwrite,
    StaleMetadata,
    WrongPayload,
    ConsumedTwice,
    OutOfOrder,
    /// No step is enabled but some result was never consumed.
    Deadlock,
    /// Everything was consumed but the device did not get all its credit back.
    CreditNotReturned,
    /// A protocol type rejected a call the model believes legitimate.
    Rejected(String),
}

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

fn geo(capacity: u32) -> RingGeometry {
    RingGeometry::new(capacity).expect("model capacity")
}

fn rejected<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> Violation + '_ {
    move |e| Violation::Rejected(format!("{what}: {e:?}"))
}

impl Config {
    fn results(&self) -> u32 {
        self.record_slots.len() as u32
    }

    fn all(&self) -> u64 {
        (1u64 << self.results()) - 1
    }

    fn initial(&self) -> State {
        let (p, m) = (geo(self.payload_cap), geo(self.meta_cap));
        let s = idx(self.start);
        let sf = StreamingFactor::new(self.sf_slots * SLOT_SIZE, SLOT_SIZE).expect("model SF");
        let seq = match self.order {
            StreamingOrder::OutOfOrder => Sequencer::OutOfOrder,
            StreamingOrder::InOrder => Sequencer::InOrder(
                ReorderBuffer::new(geo(self.window), [0; 1], self.start).expect("window"),
            ),
        };
        let dev_payload_geo = match self.bug {
            Bug::DeviceIgnoresCredit => geo(2 * self.payload_cap),
            _ => p,
        };
        State {
            payload_mem: vec![None; self.payload_cap as usize],
            payload_tail_mem: s,
            meta_mem: vec![None; self.meta_cap as usize],
            meta_tail_mem: s,
            payload_head_mem: s,
            meta_head_mem: s,
            computed: 0,
            seq,
            batcher: Batcher::new(sf, p, m).expect("model batcher"),
            queue: VecDeque::new(),
            flushes: VecDeque::new(),
            dev_payload: DeviceCredit::new(dev_payload_geo, s),
            dev_meta: DeviceCredit::new(m, s),
            inflight: None,
            host_meta: GapHead::new(m, [0; 1], s).expect("storage"),
            host_payload: GapHead::new(p, [0; 1], s).expect("storage"),
            pub_meta: HeadPublisher::new(m, self.policy_for(m), s).expect("policy"),
            pub_payload: HeadPublisher::new(p, self.policy_for(p), s).expect("policy"),
            meta_read: s,
            metas_read: 0,
            pool: Vec::new(),
            store_meta: None,
            store_payload: None,
            consumed: 0,
            payload_live: vec![false; self.payload_cap as usize],
            meta_live: vec![false; self.meta_cap as usize],
        }
    }

    /// The host's publish decision after a release, with the configured host bugs.
    fn publish(
        &self,
        publisher: &mut HeadPublisher,
        head: RingIndex,
        tail: RingIndex,
    ) -> Result<Option<RingIndex>, Violation> {
        let before = publisher.published();
        let publish = publisher
            .on_release(head, tail)
            .map_err(rejected("publish"))?;
        Ok(match (self.bug, publisher.policy()) {
            (Bug::HostNeverPublishes, _) => None,
            (Bug::NoDrainRule, PublishPolicy::Batched { threshold }) => {
                publish.filter(|h| h.distance_from(before) >= threshold)
            }
            _ => publish,
        })
    }

    /// The configured policy, with a batch threshold clamped to the ring.
    fn policy_for(&self, g: RingGeometry) -> PublishPolicy {
        match self.policy {
            PublishPolicy::Batched { threshold } => PublishPolicy::Batched {
                threshold: threshold.min(g.capacity()),
            },
            p => p,
        }
    }
}

impl State {
    /// Checks a state in which no step is enabled.
    fn check_final(&self, cfg: &Config) -> Result<(), Violation> {
        if self.consumed != cfg.all() {
            return Err(Violation::Deadlock);
        }
        let s = idx(cfg.start);
        let payload_end = s.wrapping_add(cfg.record_slots.iter().sum());
        let meta_end = s.wrapping_add(cfg.results());
        let returned = (self.payload_head_mem, self.meta_head_mem) == (payload_end, meta_end)
            && (self.dev_payload.head_seen(), self.dev_meta.head_seen()) == (payload_end, meta_end)
            && (self.host_payload.head(), self.host_meta.head()) == (payload_end, meta_end)
            && self.dev_meta.available() == cfg.meta_cap;
        if !returned {
            return Err(Violation::CreditNotReturned);
        }
        Ok(())
    }

    fn enabled(&self, cfg: &Config) -> Vec<Step> {
        let mut steps = Vec::new();
        // Device.
        for t in 0..cfg.results() {
            if self.computed & (1 << t) == 0 {
                let mut seq = self.seq.clone();
                if seq.complete(cfg.start.wrapping_add(t)).is_ok() {
                    steps.push(Step::Compute(t));
                }
            }
        }
        if self.computed == cfg.all() && !self.batcher.pending().is_empty() {
            steps.push(Step::FinalFlush);
        }
        if !steps.is_empty() {
            // Partial-order reduction: computing and the final flush touch only device-private
            // state, and which batches form depends only on the order of these steps, never on
            // their timing relative to other steps. Taking them first (in every order) reaches
            // the same shared-memory behaviours as interleaving them.
            return steps;
        }
        if self.payload_head_mem != self.dev_payload.head_seen() {
            steps.push(Step::ReadPayloadHead);
        }
        if self.meta_head_mem != self.dev_meta.head_seen() {
            steps.push(Step::ReadMetaHead);
        }
        match &self.inflight {
            None => {
                if let Some(f) = self.flushes.front() {
                    if self.dev_payload.can_reserve(f.slots) && self.dev_meta.can_reserve(f.records)
                    {
                        steps.push(Step::StartBatch);
                    }
                }
            }
            Some(b) => steps.push(b.next_step(cfg.bug)),
        }
        // Host.
        if self.meta_tail_mem != self.host_meta.tail() {
            steps.push(Step::PollMetaTail);
        }
        if self.meta_read != self.host_meta.tail() {
            steps.push(Step::ReadMeta);
        }
        steps.extend((0..self.pool.len()).map(Step::Consume));
        if self.store_payload.is_some() {
            steps.push(Step::StorePayloadHead);
        }
        if self.store_meta.is_some() {
            steps.push(Step::StoreMetaHead);
        }
        steps
    }

    fn apply(&self, cfg: &Config, step: Step) -> Result<State, Violation> {
        let mut s = self.clone();
        let (pg, mg) = (geo(cfg.payload_cap), geo(cfg.meta_cap));
        match step {
            Step::Compute(t) => {
                s.computed |= 1 << t;
                let run = s
                    .seq
                    .complete(cfg.start.wrapping_add(t))
                    .map_err(rejected("sequencer"))?;
                if let Some(run) = run {
                    for c in 0..run.count {
                        let tag = run.first.wrapping_add(c);
                        let slots = cfg.record_slots[tag.wrapping_sub(cfg.start) as usize];
                        s.queue.push_back(tag);
                        let closed = s
                            .batcher
                            .push(slots * SLOT_SIZE)
                            .map_err(rejected("batcher"))?;
                        s.flushes.extend(closed);
                    }
                }
            }
            Step::FinalFlush => s.flushes.extend(s.batcher.flush()),
            Step::ReadPayloadHead => {
                s.dev_payload
                    .receive_head(s.payload_head_mem)
                    .map_err(rejected("device payload head"))?;
            }
            Step::ReadMetaHead => {
                s.dev_meta
                    .receive_head(s.meta_head_mem)
                    .map_err(rejected("device metadata head"))?;
            }
            Step::StartBatch => {
                let f = s.flushes.pop_front().expect("enabled");
                let mut next = s
                    .dev_payload
                    .try_reserve(f.slots)
                    .map_err(rejected("payload credit"))?;
                let mut index = s
                    .dev_meta
                    .try_reserve(f.records)
                    .map_err(rejected("meta credit"))?;
                let mut batch = InFlight {
                    records: Vec::new(),
                    payload: Vec::new(),
                    next_payload: 0,
                    payload_tail_stored: false,
                    next_meta: 0,
                    meta_tail_stored: false,
                };
                for _ in 0..f.records {
                    let tag = s.queue.pop_front().expect("batched records are queued");
                    let slots = cfg.record_slots[tag.wrapping_sub(cfg.start) as usize];
                    batch.records.push(Meta {
                        tag,
                        index,
                        first: next,
                        slots,
                    });
                    for part in 0..slots {
                        batch.payload.push((next.wrapping_add(part), tag, part));
                    }
                    next = next.wrapping_add(slots);
                    index = index.wrapping_add(1);
                }
                s.inflight = Some(batch);
            }
            Step::WritePayload => {
                let b = s.inflight.as_mut().expect("enabled");
                let (i, tag, part) = b.payload[b.next_payload];
                b.next_payload += 1;
                let slot = pg.slot(i) as usize;
                if s.payload_live[slot] {
                    return Err(Violation::PayloadOverwrite);
                }
                s.payload_live[slot] = true;
                s.payload_mem[slot] = Some((tag, part));
            }
            Step::StorePayloadTail => {
                let b = s.inflight.as_mut().expect("enabled");
                b.payload_tail_stored = true;
                s.payload_tail_mem = s.dev_payload.tail();
                if b.meta_tail_stored {
                    s.inflight = None;
                }
            }
            Step::WriteMeta => {
                let b = s.inflight.as_mut().expect("enabled");
                let m = b.records[b.next_meta];
                b.next_meta += 1;
                let slot = mg.slot(m.index) as usize;
                if s.meta_live[slot] {
                    return Err(Violation::MetadataOverwrite);
                }
                s.meta_live[slot] = true;
                s.meta_mem[slot] = Some(m);
            }
            Step::StoreMetaTail => {
                let b = s.inflight.as_mut().expect("enabled");
                b.meta_tail_stored = true;
                s.meta_tail_mem = s.dev_meta.tail();
                if b.payload_tail_stored {
                    s.inflight = None;
                }
            }
            Step::PollMetaTail => {
                s.host_meta
                    .receive(s.meta_tail_mem)
                    .map_err(rejected("host metadata tail"))?;
            }
            Step::ReadMeta => {
                let slot = mg.slot(s.meta_read) as usize;
                let m = match s.meta_mem[slot] {
                    Some(m) if m.index == s.meta_read => m,
                    _ => return Err(Violation::StaleMetadata),
                };
                if cfg.order == StreamingOrder::InOrder
                    && m.tag != cfg.start.wrapping_add(s.metas_read)
                {
                    return Err(Violation::OutOfOrder);
                }
                s.metas_read += 1;
                if m.first != s.host_payload.tail() {
                    return Err(Violation::Rejected("payload not contiguous".into()));
                }
                s.host_payload
                    .receive(m.first.wrapping_add(m.slots))
                    .map_err(rejected("host payload tail"))?;
                // The pool is kept sorted by tag so that equal pools are equal states.
                let at = s.pool.partition_point(|p| p.tag < m.tag);
                s.pool.insert(at, m);
                // The record is copied into the pool: the metadata slot is free again.
                s.meta_live[slot] = false;
                s.host_meta
                    .release(s.meta_read)
                    .map_err(rejected("metadata release"))?;
                s.meta_read = s.meta_read.wrapping_add(1);
                let (head, tail) = (s.host_meta.head(), s.host_meta.tail());
                if let Some(h) = cfg.publish(&mut s.pub_meta, head, tail)? {
                    // A newer head supersedes one not stored yet.
                    s.store_meta = Some(h);
                }
            }
            Step::Consume(k) => {
                let m = s.pool.remove(k);
                for part in 0..m.slots {
                    let slot = pg.slot(m.first.wrapping_add(part)) as usize;
                    if s.payload_mem[slot] != Some((m.tag, part)) {
                        return Err(Violation::WrongPayload);
                    }
                    s.payload_live[slot] = false;
                }
                let bit = 1u64 << m.tag.wrapping_sub(cfg.start);
                if s.consumed & bit != 0 {
                    return Err(Violation::ConsumedTwice);
                }
                s.consumed |= bit;
                s.host_payload
                    .release_run(m.first, m.slots)
                    .map_err(rejected("payload release"))?;
                let (head, tail) = (s.host_payload.head(), s.host_payload.tail());
                if let Some(h) = cfg.publish(&mut s.pub_payload, head, tail)? {
                    s.store_payload = Some(h);
                }
            }
            Step::StorePayloadHead => s.payload_head_mem = s.store_payload.take().expect("enabled"),
            Step::StoreMetaHead => s.meta_head_mem = s.store_meta.take().expect("enabled"),
        }
        Ok(s)
    }
}

impl InFlight {
    /// The device's next write for this batch: its steps are in program order.
    fn next_step(&self, bug: Bug) -> Step {
        let payload_done = self.next_payload == self.payload.len();
        let meta_done = self.next_meta == self.records.len();
        if bug == Bug::MetadataBeforePayload {
            if !meta_done {
                Step::WriteMeta
            } else if !self.meta_tail_stored {
                Step::StoreMetaTail
            } else if !payload_done {
                Step::WritePayload
            } else {
                Step::StorePayloadTail
            }
        } else if !payload_done {
            Step::WritePayload
        } else if !self.payload_tail_stored {
            Step::StorePayloadTail
        } else if !meta_done {
            Step::WriteMeta
        } else {
            Step::StoreMetaTail
        }
    }
}

#[derive(Debug, Default)]
struct Stats {
    states: usize,
    transitions: usize,
    terminal: usize,
}

struct Explorer<'a> {
    cfg: &'a Config,
    visited: HashSet<State>,
    path: Vec<Step>,
    stats: Stats,
}

impl Explorer<'_> {
    fn dfs(&mut self, s: State) -> Result<(), (Violation, Vec<Step>)> {
        if !self.visited.insert(s.clone()) {
            return Ok(());
        }
        self.stats.states += 1;
        let steps = s.enabled(self.cfg);
        if steps.is_empty() {
            // Nothing can happen any more: every result must have been consumed exactly once, and
            // all credit returned to the device.
            s.check_final(self.cfg)
                .map_err(|v| (v, self.path.clone()))?;
            self.stats.terminal += 1;
            return Ok(());
        }
        for step in steps {
            self.stats.transitions += 1;
            self.path.push(step);
            let next = s
                .apply(self.cfg, step)
                .map_err(|v| (v, self.path.clone()))?;
            self.dfs(next)?;
            self.path.pop();
        }
        Ok(())
    }
}

/// Explores every interleaving of `cfg`; returns the statistics or the first violation found with
/// the steps that lead to it.
fn explore(cfg: &Config) -> Result<Stats, (Violation, Vec<Step>)> {
    // Sanity: the model's record sizes must satisfy the batcher's preconditions.
    assert!(cfg
        .record_slots
        .iter()
        .all(|&n| (1..=cfg.sf_slots).contains(&n)));
    assert!(cfg.results() <= 16);
    let mut ex = Explorer {
        cfg,
        visited: HashSet::new(),
        path: Vec::new(),
        stats: Stats::default(),
    };
    ex.dfs(cfg.initial())?;
    Ok(ex.stats)
}

fn base(payload_cap: u32, meta_cap: u32, record_slots: &[u32], sf_slots: u32) -> Config {
    Config {
        payload_cap,
        meta_cap,
        sf_slots,
        record_slots: record_slots.to_vec(),
        order: StreamingOrder::OutOfOrder,
        window: 2,
        policy: PublishPolicy::EveryRelease,
        start: u32::MAX - 1,
        bug: Bug::None,
    }
}

fn must_hold(cfg: &Config) -> Stats {
    match explore(cfg) {
        Ok(stats) => {
            eprintln!("{cfg:?}\n  {stats:?}");
            assert!(stats.terminal >= 1, "no run completed: {stats:?}");
            stats
        }
        Err((v, path)) => panic!("{v:?} after {path:?}\nconfig {cfg:?}"),
    }
}

/// The publish policies worth distinguishing on a ring of `cap` slots: every release, a batch
/// smaller than the ring, and a batch of the whole ring (live only thanks to the drain rule).
fn policies(cap: u32) -> Vec<PublishPolicy> {
    let mut v = vec![PublishPolicy::EveryRelease];
    for threshold in [2, cap] {
        let p = PublishPolicy::Batched { threshold };
        if threshold <= cap && !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

#[test]
fn two_slot_rings_out_of_order() {
    for policy in policies(2) {
        for sf in [1, 2] {
            must_hold(&Config {
                policy,
                ..base(2, 2, &[1, 1, 1, 1], sf)
            });
        }
    }
}

#[test]
fn two_slot_rings_in_order() {
    for policy in policies(2) {
        for sf in [1, 2] {
            must_hold(&Config {
                policy,
                order: StreamingOrder::InOrder,
                window: 2,
                ..base(2, 2, &[1, 1, 1, 1], sf)
            });
        }
    }
}

#[test]
fn four_slot_rings() {
    for policy in policies(4) {
        for order in [StreamingOrder::OutOfOrder, StreamingOrder::InOrder] {
            must_hold(&Config {
                policy,
                order,
                window: 4,
                ..base(4, 4, &[1, 1, 1, 1], 2)
            });
        }
    }
}

#[test]
fn multi_slot_records_wrap_the_payload_ring() {
    for policy in policies(4) {
        // Records of 1 and 2 slots in a 4-slot payload ring with a 2-slot metadata ring.
        must_hold(&Config {
            policy,
            ..base(4, 2, &[2, 1, 2, 1], 2)
        });
    }
    for policy in policies(2) {
        // A record as large as the payload ring.
        must_hold(&Config {
            policy,
            ..base(2, 2, &[2, 1, 2], 2)
        });
    }
}

#[test]
fn more_results_than_twice_the_ring() {
    must_hold(&base(2, 2, &[1, 1, 1, 1, 1], 1));
}

#[test]
fn counters_from_zero() {
    must_hold(&Config {
        start: 0,
        ..base(2, 2, &[1, 1, 1], 2)
    });
}

/// A snapshot of the exploration size for four results through two 2-slot rings. It guards the
/// explorer itself: a change to `enabled`, to the visited set or to what a state holds shows up
/// here. Update it deliberately when the model or the protocol types change.
#[test]
fn exploration_size_snapshot() {
    let stats = must_hold(&base(2, 2, &[1, 1, 1, 1], 1));
    assert_eq!((stats.states, stats.terminal), (9941, 12));
}

#[test]
fn negative_control_device_ignoring_credit_overwrites() {
    let cfg = Config {
        bug: Bug::DeviceIgnoresCredit,
        ..base(2, 4, &[1, 1, 1], 1)
    };
    assert!(matches!(
        explore(&cfg),
        Err((Violation::PayloadOverwrite, _))
    ));
}

#[test]
fn negative_control_metadata_before_payload_is_caught() {
    let cfg = Config {
        bug: Bug::MetadataBeforePayload,
        ..base(2, 2, &[1, 1], 1)
    };
    assert!(matches!(explore(&cfg), Err((Violation::WrongPayload, _))));
}

#[test]
fn negative_control_host_without_credit_deadlocks() {
    let cfg = Config {
        bug: Bug::HostNeverPublishes,
        ..base(2, 2, &[1, 1, 1], 1)
    };
    assert!(matches!(explore(&cfg), Err((Violation::Deadlock, _))));
}

#[test]
fn negative_control_batching_without_drain_rule_withholds_credit() {
    let cfg = Config {
        policy: PublishPolicy::Batched { threshold: 2 },
        bug: Bug::NoDrainRule,
        ..base(4, 4, &[1, 1, 1], 1)
    };
    assert!(matches!(
        explore(&cfg),
        Err((Violation::CreditNotReturned, _))
    ));
}
