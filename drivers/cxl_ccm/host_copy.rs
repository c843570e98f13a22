// SPDX-License-Identifier: GPL-2.0

//! RP and BS: the driver loads a completed launch's results from device memory (CXL.mem) and
//! writes them into the tenant's rings itself, so that user space consumes every mode the same
//! way (records, payloads, `RELEASE`).
//!
//! Each record's checksum is the device's, loaded from the tenant's checksum table with the
//! record's bytes ([`Checksums`]); the driver computes one only for a record the table has no
//! entry for.
//!
//! The driver is then the rings' producer and follows the device's rules exactly: a record's
//! payload first, a write barrier, the payload tail, the record, a write barrier, the metadata
//! tail; never past the heads user space released. What does not fit waits in a queue and is
//! copied when `RELEASE` frees room.

use core::mem::offset_of;
use core::sync::atomic::{fence, AtomicU64, Ordering};
use kernel::{memremap::MemRemap, pinned_pages::PinnedPages, prelude::*, shared_mem::SharedMem};

use crate::abi::{self, MetadataRecord, RingHeaders};
use crate::link::Link;
use crate::proto::ring::{RingGeometry, RingIndex};

/// Bytes copied per step from device memory to the payload ring.
const BOUNCE: usize = 256;

/// A completed launch whose results are not all in the rings yet.
#[derive(Clone, Copy)]
pub(crate) struct CopyJob {
    pub(crate) tag: u32,
    /// `STATUS_*` of the launch; an error gives one `FINAL | ERROR` record.
    pub(crate) status: u16,
    /// Device-memory offset of the results, and their size.
    pub(crate) src: u64,
    pub(crate) bytes: u64,
    /// How the results are cut into records.
    pub(crate) cut: Cut,
    /// Bytes already in the rings.
    pub(crate) done: u64,
    /// Where the device left the records' checksums.
    pub(crate) checksums: Checksums,
}

/// The tenant's checksum table in device memory (ABI 1.6, `TREG_CHECKSUM_TABLE`): `entries`
/// entries at `table`, entry `k` for the record at `base + 16 k` ([`abi::checksum_entry`]).
/// `entries == 0`: none (AXLE, or a 1.5 device); the driver computes the checksums then.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Checksums {
    pub(crate) table: u64,
    pub(crate) entries: u32,
    pub(crate) base: u64,
}

impl Checksums {
    /// The device-memory offset of the checksum of the record of `len` bytes at `at`, if the
    /// device leaves one.
    fn entry(&self, at: u64, len: u32) -> Option<u64> {
        abi::checksum_entry(self.base, self.entries, at, u64::from(len))
            .map(|k| self.table + 4 * u64::from(k))
    }
}

/// How a launch's results are cut into records, as the device cuts them: `chunk` bytes each,
/// except from byte `tail_from` on, where records are `tail_chunk` bytes (the attention
/// kernel's last block of fewer rows, one record per head). The last record may be shorter.
#[derive(Clone, Copy)]
pub(crate) struct Cut {
    pub(crate) chunk: u32,
    pub(crate) tail_from: u64,
    pub(crate) tail_chunk: u32,
}

impl Cut {
    /// Records of `chunk` bytes throughout.
    pub(crate) const fn uniform(chunk: u32) -> Self {
        Self {
            chunk,
            tail_from: u64::MAX,
            tail_chunk: chunk,
        }
    }

    /// The length of the record at byte `done`, with `rest` bytes left.
    fn len(&self, done: u64, rest: u64) -> u32 {
        let chunk = if done >= self.tail_from {
            self.tail_chunk
        } else {
            self.chunk
        };
        // Cannot truncate: a chunk is a `u32`.
        rest.min(u64::from(chunk.max(4))) as u32
    }
}

/// Where the rings are, for the producer.
pub(crate) struct Rings<'a> {
    pub(crate) region: &'a PinnedPages,
    pub(crate) metadata_offset: u64,
    pub(crate) payload_offset: u64,
    pub(crate) metadata: RingGeometry,
    pub(crate) payload: RingGeometry,
    pub(crate) slot_size: u32,
}

/// Completed launches that may wait for room at once (one per launch slot).
pub(crate) const MAX_PENDING: usize = abi::LAUNCH_SLOTS as usize;

/// The driver's side as the rings' producer.
///
/// # Invariants
///
/// `pl_tail` and `md_tail` are the tails last stored into the ring headers. `jobs` has
/// [`MAX_PENDING`] entries; the pending ones are `jobs[(first + i) % MAX_PENDING]` for
/// `i < len`, in completion order.
pub(crate) struct Producer {
    jobs: KVec<Option<CopyJob>>,
    first: usize,
    len: usize,
    pl_tail: RingIndex,
    md_tail: RingIndex,
    /// Records and payload bytes written, and copies (one per record).
    pub(crate) records: u64,
    pub(crate) bytes: u64,
}

impl Producer {
    pub(crate) fn new(base: u32) -> Result<Self> {
        let mut jobs = KVec::with_capacity(MAX_PENDING, GFP_KERNEL)?;
        for _ in 0..MAX_PENDING {
            jobs.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            jobs,
            first: 0,
            len: 0,
            pl_tail: RingIndex::new(base),
            md_tail: RingIndex::new(base),
            records: 0,
            bytes: 0,
        })
    }

    /// Whether results wait for room in the rings.
    pub(crate) fn is_pending(&self) -> bool {
        self.len > 0
    }

    /// Whether another completed launch can be queued.
    pub(crate) fn has_room(&self) -> bool {
        self.len < MAX_PENDING
    }

    /// Queues a completed launch; `EBUSY` if [`MAX_PENDING`] already wait.
    pub(crate) fn push(&mut self, job: CopyJob) -> Result {
        let at = (self.first + self.len) % MAX_PENDING;
        let slot = self.jobs.get_mut(at).ok_or(EBUSY)?;
        if self.len == MAX_PENDING || slot.is_some() {
            return Err(EBUSY);
        }
        *slot = Some(job);
        self.len += 1;
        Ok(())
    }

    fn front(&self) -> Option<CopyJob> {
        if self.len == 0 {
            return None;
        }
        self.jobs.get(self.first).copied().flatten()
    }

    fn pop_front(&mut self) {
        if let Some(slot) = self.jobs.get_mut(self.first) {
            *slot = None;
            self.first = (self.first + 1) % MAX_PENDING;
            self.len -= 1;
        }
    }

    /// Copies as many records as the heads allow, accounting the loads' link stall to
    /// `stall_ns`; returns how many.
    pub(crate) fn drain(
        &mut self,
        rings: &Rings<'_>,
        pl_head: RingIndex,
        md_head: RingIndex,
        mem: &MemRemap,
        link: &Link,
        stall_ns: &AtomicU64,
    ) -> Result<u32> {
        let mut written = 0;
        while let Some(job) = self.front() {
            let rest = job.bytes.saturating_sub(job.done);
            let len = if job.status != 0 || rest == 0 {
                0
            } else {
                job.cut.len(job.done, rest)
            };
            let slots = len.div_ceil(rings.slot_size);
            let pl_used = self.pl_tail.distance_from(pl_head);
            let md_used = self.md_tail.distance_from(md_head);
            if pl_used + slots > rings.payload.capacity() || md_used + 1 > rings.metadata.capacity()
            {
                break;
            }
            let last = len == 0 || job.done + u64::from(len) >= job.bytes;
            let checksum = if len > 0 {
                self.load_record(rings, mem, link, &job, len, stall_ns)?
            } else {
                0
            };
            let mut flags = if last { abi::MD_FLAG_FINAL } else { 0 };
            if job.status != 0 {
                flags |= abi::MD_FLAG_ERROR;
            }
            let rec = MetadataRecord {
                seq: self.md_tail.raw(),
                tag: job.tag,
                payload_index: self.pl_tail.raw(),
                length: len,
                result_offset: job.done,
                checksum,
                flags,
                status: job.status,
            };
            if len > 0 {
                // Payload → barrier → payload tail.
                fence(Ordering::SeqCst);
                self.pl_tail = self.pl_tail.wrapping_add(slots);
                store_tail(rings, offset_of!(RingHeaders, payload), self.pl_tail)?;
            }
            // Record → barrier → metadata tail.
            let at = rings.metadata_offset
                + u64::from(rings.metadata.slot(self.md_tail))
                    * u64::from(abi::METADATA_RECORD_SIZE);
            rings.region.write_bytes(at as usize, &rec.to_bytes())?;
            fence(Ordering::SeqCst);
            self.md_tail = self.md_tail.wrapping_add(1);
            store_tail(rings, offset_of!(RingHeaders, metadata), self.md_tail)?;
            written += 1;
            self.records += 1;
            self.bytes += u64::from(len);
            if last {
                self.pop_front();
            } else if let Some(Some(j)) = self.jobs.get_mut(self.first) {
                j.done += u64::from(len);
            }
        }
        Ok(written)
    }

    /// Loads the next record of `job`, `len` bytes, into the payload slots at the tail, with
    /// the checksum the device left for it (one CXL.mem load for both, charged to `stall_ns`);
    /// returns the checksum. Without one in the table, the driver computes it.
    fn load_record(
        &self,
        rings: &Rings<'_>,
        mem: &MemRemap,
        link: &Link,
        job: &CopyJob,
        len: u32,
        stall_ns: &AtomicU64,
    ) -> Result<u32> {
        let src = job.src + job.done;
        let entry = job.checksums.entry(src, len);
        let bytes = u64::from(len) + if entry.is_some() { 4 } else { 0 };
        stall_ns.fetch_add(link.mem_bulk_load(bytes), Ordering::Relaxed);
        let computed = self.copy_payload(rings, mem, src, len, entry.is_none())?;
        let Some(at) = entry else {
            return Ok(computed);
        };
        let mut crc = [0u8; 4];
        mem.read_bytes(at as usize, &mut crc)?;
        Ok(u32::from_le_bytes(crc))
    }

    /// Copies `len` bytes from device memory into the payload slots at the tail, wrapping at the
    /// ring end; returns their CRC32C if `checksum`, else 0.
    fn copy_payload(
        &self,
        rings: &Rings<'_>,
        mem: &MemRemap,
        src: u64,
        len: u32,
        checksum: bool,
    ) -> Result<u32> {
        let ring_bytes = u64::from(rings.payload.capacity()) * u64::from(rings.slot_size);
        let mut pos = u64::from(rings.payload.slot(self.pl_tail)) * u64::from(rings.slot_size);
        let mut buf = [0u8; BOUNCE];
        let mut crc = !0u32;
        let mut done = 0u64;
        let len = u64::from(len);
        while done < len {
            // Up to the bounce size, and never across the ring end.
            let n = (len - done).min(BOUNCE as u64).min(ring_bytes - pos) as usize;
            let piece = &mut buf[..n];
            mem.read_bytes((src + done) as usize, piece)?;
            if checksum {
                crc = abi::crc32c_update(crc, piece);
            }
            rings
                .region
                .write_bytes((rings.payload_offset + pos) as usize, piece)?;
            done += n as u64;
            pos = (pos + n as u64) % ring_bytes;
        }
        Ok(if checksum { !crc } else { 0 })
    }
}

fn store_tail(rings: &Rings<'_>, header: usize, tail: RingIndex) -> Result {
    rings
        .region
        .atomic_u32(header + offset_of!(abi::RingHeader, tail))?
        .store(tail.raw(), Ordering::Release);
    Ok(())
}
