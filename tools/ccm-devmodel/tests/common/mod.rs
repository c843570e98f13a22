//! A simulated host for the DMA executor's tests: the DMA region as a byte vector split into
//! scatter-gather segments at scattered bus addresses, a step executor that checks every
//! destination and refuses to overwrite a slot the host has not released, and a host consumer
//! that reads the rings as the driver would (metadata tail → records → payload by
//! `payload_index`), releases payload slots in any order through the gap-aware head and publishes
//! heads.

#![allow(dead_code)]

use ccm_devmodel::abi::{
    crc32c, DescriptorTable, DmaSegment, MetadataRecord, DESCRIPTOR_MAGIC, DMA_SEGMENT_ALIGN,
    DMA_SEG_LAST, METADATA_RECORD_SIZE,
};
use ccm_devmodel::dma_plan::{Ring, SegAddr, Step};
use ccm_devmodel::proto::credit::{HeadPublisher, PublishPolicy};
use ccm_devmodel::proto::gap_head::{bitmap_words, GapHead};
use ccm_devmodel::proto::ring::{RingGeometry, RingIndex};

pub const PAGE: u64 = DMA_SEGMENT_ALIGN as u64;

pub fn geo(cap: u32) -> RingGeometry {
    RingGeometry::new(cap).unwrap()
}

/// A descriptor table and its segments: `pages[i]` pages per segment, at bus addresses placed in
/// the order `bus_slots[i]` (1 MiB apart, so that they are scattered and disjoint).
pub fn segments(pages: &[u32], bus_slots: &[u64]) -> Vec<DmaSegment> {
    pages
        .iter()
        .zip(bus_slots)
        .enumerate()
        .map(|(i, (&p, &b))| DmaSegment {
            bus_addr: 0x1_0000_0000 + b * 0x10_0000,
            len: p * DMA_SEGMENT_ALIGN,
            flags: if i + 1 == pages.len() {
                DMA_SEG_LAST
            } else {
                0
            },
        })
        .collect()
}

pub fn table(segs: &[DmaSegment], headers: u64, metadata: u64, payload: u64) -> DescriptorTable {
    DescriptorTable {
        magic: DESCRIPTOR_MAGIC,
        segment_count: segs.len() as u32,
        region_size: segs.iter().map(|s| u64::from(s.len)).sum(),
        headers_offset: headers,
        metadata_offset: metadata,
        payload_offset: payload,
        reserved: [0; 3],
    }
}

/// The host's DMA region and what the device wrote into it.
pub struct Sim {
    pub region: Vec<u8>,
    pub segs: Vec<DmaSegment>,
    pub table: DescriptorTable,
    pub slot_size: u32,
    pub md: RingGeometry,
    pub payload: RingGeometry,
    /// Per payload slot: written by the device and not yet released by the host.
    pub payload_busy: Vec<bool>,
    /// Per metadata slot: written by the device and not yet read by the host.
    pub metadata_busy: Vec<bool>,
    /// Tails as stored by the device.
    pub tails_stored: Vec<(Ring, u32)>,
}

impl Sim {
    pub fn new(
        segs: Vec<DmaSegment>,
        table: DescriptorTable,
        slot_size: u32,
        md: RingGeometry,
        payload: RingGeometry,
        index_base: u32,
    ) -> Self {
        let mut sim = Self {
            region: vec![0u8; table.region_size as usize],
            segs,
            table,
            slot_size,
            md,
            payload,
            payload_busy: vec![false; payload.capacity() as usize],
            metadata_busy: vec![false; md.capacity() as usize],
            tails_stored: Vec::new(),
        };
        sim.store_u32(sim.tail_offset(Ring::Metadata), index_base);
        sim.store_u32(sim.tail_offset(Ring::Payload), index_base);
        sim
    }

    pub fn tail_offset(&self, ring: Ring) -> u64 {
        self.table.headers_offset
            + match ring {
                Ring::Metadata => 0,
                Ring::Payload => 0x40,
            }
    }

    fn store_u32(&mut self, at: u64, v: u32) {
        self.region[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes());
    }

    pub fn load_u32(&self, at: u64) -> u32 {
        let b = &self.region[at as usize..at as usize + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The region offset a bus address is mapped to, checking it against the step's claim.
    fn resolve(&self, dst: SegAddr, region_offset: u64, len: u32) -> Result<u64, String> {
        let mut start = 0u64;
        for (i, s) in self.segs.iter().enumerate() {
            if dst.bus_addr >= s.bus_addr && dst.bus_addr < s.bus_addr + u64::from(s.len) {
                let within = dst.bus_addr - s.bus_addr;
                if i as u32 != dst.segment || within != u64::from(dst.offset) {
                    return Err(format!("inconsistent destination {dst:?}"));
                }
                if within + u64::from(len) > u64::from(s.len) {
                    return Err(format!("write of {len} at {dst:?} leaves its segment"));
                }
                if start + within != region_offset {
                    return Err(format!("{dst:?} is not region offset {region_offset}"));
                }
                return Ok(region_offset);
            }
            start += u64::from(s.len);
        }
        Err(format!(
            "bus address {:#x} is not in the region",
            dst.bus_addr
        ))
    }

    /// Performs one step; fails on a bad address or an overwrite of an unreleased slot.
    pub fn apply(&mut self, step: &Step, device_mem: &[u8]) -> Result<(), String> {
        match *step {
            Step::CopyPayload {
                src,
                dst,
                region_offset,
                len,
                ..
            } => {
                let at = self.resolve(dst, region_offset, len)?;
                let ring_start = self.table.payload_offset;
                let ring_end = ring_start + u64::from(self.payload.capacity() * self.slot_size);
                if at < ring_start || at + u64::from(len) > ring_end || len == 0 {
                    return Err(format!("payload copy {at}+{len} outside the payload ring"));
                }
                let first = (at - ring_start) / u64::from(self.slot_size);
                let last = (at + u64::from(len) - 1 - ring_start) / u64::from(self.slot_size);
                for s in first..=last {
                    if self.payload_busy[s as usize] {
                        return Err(format!("overwrite of unreleased payload slot {s}"));
                    }
                }
                for s in first..=last {
                    self.payload_busy[s as usize] = true;
                }
                let src = src as usize;
                self.region[at as usize..(at + u64::from(len)) as usize]
                    .copy_from_slice(&device_mem[src..src + len as usize]);
            }
            Step::WriteBarrier => {}
            Step::StoreTail {
                ring,
                dst,
                region_offset,
                value,
            } => {
                let at = self.resolve(dst, region_offset, 4)?;
                if at != self.tail_offset(ring) {
                    return Err(format!("{ring:?} tail stored at {at}"));
                }
                self.store_u32(at, value);
                self.tails_stored.push((ring, value));
            }
            Step::WriteMetadata {
                dst,
                region_offset,
                record,
            } => {
                let at = self.resolve(dst, region_offset, METADATA_RECORD_SIZE)?;
                let slot = record.seq & self.md.mask();
                if at != self.table.metadata_offset + u64::from(slot * METADATA_RECORD_SIZE) {
                    return Err(format!("record {} written at {at}", record.seq));
                }
                if self.metadata_busy[slot as usize] {
                    return Err(format!("overwrite of unread metadata slot {slot}"));
                }
                self.metadata_busy[slot as usize] = true;
                self.region[at as usize..at as usize + METADATA_RECORD_SIZE as usize]
                    .copy_from_slice(&record.to_bytes());
            }
        }
        Ok(())
    }

    /// Reads `len` payload bytes starting at the free-running payload index `index`.
    pub fn read_payload(&self, index: u32, len: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(len as usize);
        let mut slot = index & self.payload.mask();
        while out.len() < len as usize {
            let at = (self.table.payload_offset + u64::from(slot * self.slot_size)) as usize;
            let n = (len as usize - out.len()).min(self.slot_size as usize);
            out.extend_from_slice(&self.region[at..at + n]);
            slot = (slot + 1) & self.payload.mask();
        }
        out
    }

    pub fn read_record(&self, seq: u32) -> MetadataRecord {
        let at = (self.table.metadata_offset
            + u64::from((seq & self.md.mask()) * METADATA_RECORD_SIZE)) as usize;
        let mut b = [0u8; METADATA_RECORD_SIZE as usize];
        b.copy_from_slice(&self.region[at..at + METADATA_RECORD_SIZE as usize]);
        MetadataRecord::from_bytes(&b)
    }

    pub fn slots(&self, len: u32) -> u32 {
        len.div_ceil(self.slot_size)
    }
}

/// A record as the host received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub record: MetadataRecord,
    pub payload: Vec<u8>,
}

/// The host side: polls the metadata tail, consumes records in any order, returns credit.
pub struct Host {
    pub md_head: RingIndex,
    pub gap: GapHead<Vec<u64>>,
    pub_md: HeadPublisher,
    pub_p: HeadPublisher,
    pub ready: Vec<Received>,
    /// Every record in metadata order, as polled.
    pub polled: Vec<Received>,
    /// Records consumed, in consumption order.
    pub consumed: Vec<Received>,
    /// The credit line's successive values `(metadata_head, payload_head)`; the last is current.
    pub credit_history: Vec<(u32, u32)>,
}

impl Host {
    pub fn new(sim: &Sim, base: u32, policy_md: PublishPolicy, policy_p: PublishPolicy) -> Self {
        let b = RingIndex::new(base);
        Self {
            md_head: b,
            gap: GapHead::new(
                sim.payload,
                vec![0u64; bitmap_words(sim.payload.capacity())],
                b,
            )
            .unwrap(),
            pub_md: HeadPublisher::new(sim.md, policy_md, b).unwrap(),
            pub_p: HeadPublisher::new(sim.payload, policy_p, b).unwrap(),
            ready: Vec::new(),
            polled: Vec::new(),
            consumed: Vec::new(),
            credit_history: vec![(base, base)],
        }
    }

    fn store_heads(&mut self, md: Option<RingIndex>, p: Option<RingIndex>) {
        if md.is_none() && p.is_none() {
            return;
        }
        let (mut m, mut q) = *self.credit_history.last().unwrap();
        if let Some(md) = md {
            m = md.raw();
        }
        if let Some(p) = p {
            q = p.raw();
        }
        self.credit_history.push((m, q));
    }

    /// One poll of the metadata tail; every new record's payload is read and checked at once (a
    /// record whose payload is not complete when its metadata is visible fails here).
    pub fn poll(&mut self, sim: &mut Sim) -> Result<usize, String> {
        let tail = RingIndex::new(sim.load_u32(sim.tail_offset(Ring::Metadata)));
        let new = sim
            .md
            .used(self.md_head, tail)
            .map_err(|e| format!("metadata tail {tail} vs head {}: {e}", self.md_head))?;
        let payload_tail = RingIndex::new(sim.load_u32(sim.tail_offset(Ring::Payload)));
        for k in 0..new {
            let seq = self.md_head.wrapping_add(k);
            let record = sim.read_record(seq.raw());
            if record.seq != seq.raw() {
                return Err(format!("slot of seq {seq} holds seq {}", record.seq));
            }
            let slots = sim.slots(record.length);
            let end = RingIndex::new(record.payload_index).wrapping_add(slots);
            if end.is_before(self.gap.tail()) && slots > 0 {
                return Err(format!("record {seq}: payload before the received tail"));
            }
            if payload_tail.is_before(end) {
                return Err(format!("record {seq}: payload beyond the payload tail"));
            }
            self.gap
                .receive(end)
                .map_err(|e| format!("record {seq}: payload tail {end}: {e:?}"))?;
            let payload = sim.read_payload(record.payload_index, record.length);
            if crc32c(&payload) != record.checksum {
                return Err(format!("record {seq}: payload does not match its checksum"));
            }
            sim.metadata_busy[(seq.raw() & sim.md.mask()) as usize] = false;
            let r = Received { record, payload };
            self.ready.push(r.clone());
            self.polled.push(r);
        }
        self.md_head = tail;
        let md = self
            .pub_md
            .on_release(self.md_head, self.md_head)
            .map_err(|e| format!("{e:?}"))?;
        self.store_heads(md, None);
        Ok(new as usize)
    }

    /// Consumes ready record `i` (any order) and releases its payload slots.
    pub fn consume(&mut self, sim: &mut Sim, i: usize) -> Result<(), String> {
        let r = self.ready.remove(i);
        let slots = sim.slots(r.record.length);
        for k in 0..slots {
            let s = r.record.payload_index.wrapping_add(k) & sim.payload.mask();
            sim.payload_busy[s as usize] = false;
        }
        if slots > 0 {
            self.gap
                .release_run(RingIndex::new(r.record.payload_index), slots)
                .map_err(|e| format!("release: {e:?}"))?;
            let p = self
                .pub_p
                .on_release(self.gap.head(), self.gap.tail())
                .map_err(|e| format!("{e:?}"))?;
            self.store_heads(None, p);
        }
        self.consumed.push(r);
        Ok(())
    }
}
