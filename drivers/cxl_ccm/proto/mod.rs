// SPDX-License-Identifier: GPL-2.0

//! The AXLE asynchronous back-streaming protocol, as pure logic.
//!
//! This module holds the parts of the protocol that need no memory, no device and no locking: index
//! arithmetic, the gap-aware head, credit accounting and the streaming-factor batcher. It uses
//! `core` only, so the same files are compiled into the `cxl_ccm` kernel module, into the software
//! device, and into the host crate `tools/ccm-proto`, whose tests (unit, property and an exhaustive
//! interleaving model) exercise them in seconds.
//!
//! # The protocol
//!
//! The host offloads a kernel to the computational memory (CCM) device and does not wait for it.
//! The device back-streams partial results by DMA into two rings in host memory, pinned and mapped
//! cache-bypass so that a wrapped-around slot is never read from a stale cache line:
//!
//! - the **payload ring**: fixed-size slots (32 bytes by default, the DMA slot size) holding result
//!   data; a result record occupies one or more consecutive slots of its own;
//! - the **metadata ring**: one slot per record, naming the record (its tag) and where its payload
//!   is (the free-running payload index of its first slot and its length). The paper stores a
//!   payload slot ID; a free-running index carries the slot (`index & mask`) *and* the lap, which
//!   lets the host reject a duplicate or stale record instead of releasing someone else's slot.
//!
//! Heads and tails are free-running `u32` counters; a slot is `counter & (capacity - 1)`
//! ([`ring`]). The device accumulates records until the pending payload reaches the **streaming
//! factor** (SF), then streams the batch ([`batcher`]).
//!
//! # Who owns what
//!
//! - In host memory, written by the device (DMA), read by the host: the payload ring and metadata
//!   ring slots, and the payload tail and metadata tail (the host polls the metadata tail only).
//! - In device memory, written by the host (CXL.mem store), read by the device: the payload head
//!   and metadata head. This is the credit.
//! - Private to the device: its tails and the heads it last read ([`credit::DeviceCredit`]).
//! - Private to the host: the tails it received, the gap-aware heads ([`gap_head::GapHead`]) and
//!   the heads it last published ([`credit::HeadPublisher`]).
//!
//! Each index has exactly one writer, so no shared index ever needs an atomic read-modify-write,
//! and plain aligned 32-bit loads and stores suffice.
//!
//! # Order of operations and fences
//!
//! Device, per batch (the AXLE invariant *payload data → payload tail / metadata data → metadata
//! tail*):
//!
//! 1. reserve the batch's payload slots and metadata slots against the heads last read, both or
//!    neither (check both with [`credit::DeviceCredit::can_reserve`], then
//!    [`credit::DeviceCredit::try_reserve`] both; never past a head);
//! 2. write the payload slots;
//! 3. **write barrier**; store the payload tail;
//! 4. write the metadata slots;
//! 5. **write barrier**; store the metadata tail.
//!
//! Step 3's barrier also orders every payload before its metadata, so a host that sees a metadata
//! record sees its complete payload (no partial write).
//!
//! Host:
//!
//! 1. load the metadata tail (**acquire**); if it moved, read the metadata records from the
//!    metadata head to the tail and place them in the ready pool; release the metadata slots (in
//!    order);
//! 2. the scheduler picks records from the pool in any order, reads their payload, and releases the
//!    payload slots in the gap-aware head, which advances over the contiguous released prefix only;
//! 3. when the [`credit::PublishPolicy`] says so, store the new head into device memory
//!    (**release**: the reads of the released slots complete before the device can see the credit).
//!    If device memory is mapped write-back, the store must also be written back to reach the
//!    device.
//!
//! Device, whenever it likes (typically when short of credit): load the heads (**acquire**) and
//! hand them to [`credit::DeviceCredit::receive_head`].
//!
//! # Invariants
//!
//! - *No overwrite.* The device reserves a slot only if `tail - head_seen < capacity`. Heads only
//!   move forward and the host publishes a head only over slots it has finished reading, so the
//!   head the device has seen, however stale, is never after the host's real head: stale credit is
//!   conservative.
//! - *No early read.* The host reads a record only below the metadata tail it loaded, and a payload
//!   only as named by such a record.
//! - *Exactly once.* A slot is released once ([`gap_head::GapHeadError::AlreadyReleased`],
//!   [`gap_head::GapHeadError::BelowHead`] reject the rest), and only after being received
//!   ([`gap_head::GapHeadError::NotReceived`]).
//! - *Liveness.* A batch never needs more payload slots than the payload ring has, nor more records
//!   than the metadata ring has ([`batcher::Batcher::new`]), and a batched publish policy always
//!   publishes once every received slot has been released, so a device stalled for credit is
//!   always eventually credited, provided the host eventually consumes what it received.
//!
//! Counters are free-running `u32`s and every comparison goes through wrapping distance, so the
//! protocol is indifferent to where the counters start and to crossing `u32::MAX`; the tests start
//! them just below the wrap.

pub mod batcher;
pub mod credit;
pub mod gap_head;
pub mod ring;
pub mod tenant_config;
