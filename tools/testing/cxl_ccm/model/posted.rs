// SPDX-License-Identifier: GPL-2.0

//! The DMA engine's posted writes: when each back-stream batch lands in host memory, and the
//! ring-tail stores that wait until then.
//!
//! AXLE's DMA engine is a bus master beside the CCM (§IV-D): the DMA executor hands it a
//! batch's requests and goes on with the next batch. Table III's costs are latencies ("DMA
//! preparation latency: 500 ns per req.", a one-way control-plane latency per §V-A, and the
//! CXL.io posted write), not occupancy: a batch's requests are posted back to back, and
//! consecutive batches overlap. Only the link's transfer time is shared, and posted writes
//! stay in order. So a batch ready at `now` lands at
//!
//! `land = max(now + latency + transfer, previous land + transfer)`
//!
//! with `latency` the largest per-request latency of the batch (preparation plus the posted
//! write) and `transfer` its bytes on the link.
//!
//! The software device writes the payload and the metadata records at once, but the host only
//! trusts what the ring tails cover, so holding back the tail stores until `land` makes the
//! batch appear when the modelled engine would have delivered it. [`PostedTails`] keeps those
//! stores in order with their landing times.

use super::dma_plan::SegAddr;

/// Tail stores one queue holds: two per batch (payload and metadata rings).
pub const POSTED_CAPACITY: usize = 32;

/// A ring-tail store waiting for its batch to land.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostedStore {
    /// When the batch lands, ns.
    pub due_ns: u64,
    /// Where the tail goes.
    pub dst: SegAddr,
    /// The new free-running tail.
    pub value: u32,
    /// The metadata tail: the batch's last write, the one an interrupt announces.
    pub ends_batch: bool,
}

/// When a batch lands: `max(now + latency + transfer, previous + transfer)`, saturating.
pub fn land_ns(now_ns: u64, latency_ns: u64, transfer_ns: u64, previous_ns: u64) -> u64 {
    let alone = now_ns
        .saturating_add(latency_ns)
        .saturating_add(transfer_ns);
    alone.max(previous_ns.saturating_add(transfer_ns))
}

/// The tail stores of the batches in flight, oldest first, and when the last batch lands.
///
/// # Invariants
///
/// `len <= POSTED_CAPACITY`; the stores at `head, head + 1, ..` (modulo the capacity), `len`
/// of them, are in posting order with non-decreasing `due_ns`.
#[derive(Clone, Debug, Default)]
pub struct PostedTails {
    stores: [PostedStore; POSTED_CAPACITY],
    head: usize,
    len: usize,
    last_land_ns: u64,
}

impl PostedTails {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Books a batch ready at `now_ns` and returns when it lands ([`land_ns`]), after every
    /// batch booked before it.
    pub fn book(&mut self, now_ns: u64, latency_ns: u64, transfer_ns: u64) -> u64 {
        let land = land_ns(now_ns, latency_ns, transfer_ns, self.last_land_ns);
        self.last_land_ns = land;
        land
    }

    /// Queues a store; gives it back if the queue is full (the caller publishes the oldest
    /// first).
    pub fn post(&mut self, store: PostedStore) -> Result<(), PostedStore> {
        if self.len == POSTED_CAPACITY {
            return Err(store);
        }
        let at = (self.head + self.len) % POSTED_CAPACITY;
        // Keep the order even if a caller posts an earlier time than the last one.
        let floor = self.newest().map_or(0, |s| s.due_ns);
        // INVARIANT: one more store, at the end, due no earlier than the one before it.
        self.stores[at] = PostedStore {
            due_ns: store.due_ns.max(floor),
            ..store
        };
        self.len += 1;
        Ok(())
    }

    /// Takes the oldest store if it is due at `now_ns`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<PostedStore> {
        let oldest = self.oldest()?;
        if oldest.due_ns > now_ns {
            return None;
        }
        // INVARIANT: the oldest store leaves; the rest keep their order.
        self.head = (self.head + 1) % POSTED_CAPACITY;
        self.len -= 1;
        Some(oldest)
    }

    /// Takes the oldest store whatever its time (to make room, or at teardown).
    pub fn pop(&mut self) -> Option<PostedStore> {
        self.pop_due(u64::MAX)
    }

    /// When the oldest store is due.
    pub fn next_due(&self) -> Option<u64> {
        self.oldest().map(|s| s.due_ns)
    }

    /// Whether no store waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn oldest(&self) -> Option<PostedStore> {
        (self.len > 0).then(|| self.stores[self.head])
    }

    fn newest(&self) -> Option<PostedStore> {
        (self.len > 0).then(|| self.stores[(self.head + self.len - 1) % POSTED_CAPACITY])
    }
}
