// SPDX-License-Identifier: GPL-2.0

//! One tenant: an open file of `/dev/cxl_ccmN` after `CONFIGURE`.
//!
//! A tenant owns a DMA region in host memory (pinned pages, write-combining, physically
//! scattered on purpose) holding the ring headers, the metadata ring and the payload ring; its
//! scatter-gather list is shadowed into device memory as a descriptor table (AXLE §IV-D). It
//! also owns a partition of device memory: the descriptor table, the input buffer user space
//! maps, and the output buffer the device computes into.
//!
//! Host side of the protocol (`proto/`): [`TenantCore::scan`] loads the metadata tail with
//! acquire, checks every new record's `seq` and tells the [`GapHead`] which payload slots were
//! received; `RELEASE` releases payload slots in any order, moves the metadata head, and stores
//! heads into the device's credit line (a CXL.mem store, release-ordered after the reads of the
//! released slots) when the [`HeadPublisher`] policy says so. The poller thread polls the tail
//! at the configured interval while someone waits (`WAIT`, `poll()`), and wakes them.
//!
//! Teardown: the tenant is disabled in the device (`ctrl` cleared) and the driver waits until
//! the device acknowledges (`status` cleared) before unmapping and freeing the region. If the
//! device never acknowledges, the region is leaked rather than freed under a DMA.

use core::mem::{offset_of, size_of};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::{
    cache_mode::CacheMode,
    dma_sg::{DataDirection, DmaSgTable},
    kthread::{self, KThread},
    new_mutex, new_wait_queue,
    pinned_pages::PinnedPages,
    pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
    sync::{Arc, ArcBorrow, Mutex},
    uaccess::UserSlice,
    vma::{self, VmArea},
    wait::{WaitOutcome, WaitQueue},
};

use crate::abi::{self, DescriptorTable, DmaSegment, LaunchPacket, RingHeaders};
use crate::host_copy::{Checksums, CopyJob, Cut, Producer, Rings};
use crate::link::Link;
use crate::proto::credit::{HeadPublisher, PublishPolicy};
use crate::proto::gap_head::{bitmap_words, GapHead};
use crate::proto::ring::RingIndex;
use crate::proto::tenant_config::{TenantConfig, PAGE_BYTES};
use crate::{uapi, CcmDev, Hw, TenantNumber};

/// The ring headers occupy the region's first page.
const HEADERS_BYTES: u64 = PAGE_BYTES;

/// Where a tenant's objects are, in its region and in device memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Region offsets.
    pub(crate) metadata_offset: u64,
    pub(crate) payload_offset: u64,
    pub(crate) region_bytes: u64,
    /// Device-memory offsets of the partition and its parts.
    pub(crate) part_base: u64,
    pub(crate) part_size: u64,
    pub(crate) desc_table: u64,
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) input_bytes: u64,
    /// RP and BS: where the device leaves the records' checksums (none in AXLE).
    pub(crate) checksums: Checksums,
    /// Device-memory offset of the tenant window.
    pub(crate) window: u64,
}

impl Layout {
    fn new(dev: &CcmDev, index: u32, cfg: &TenantConfig) -> Layout {
        let p = dev.partitions();
        let part_base = p.base + u64::from(index) * p.share;
        let metadata_offset = HEADERS_BYTES;
        // The checksum table describes the output buffer.
        let output = part_base + p.desc_area + p.max_input;
        let payload_offset = metadata_offset + cfg.metadata_ring_bytes;
        Layout {
            metadata_offset,
            payload_offset,
            region_bytes: payload_offset + cfg.payload_ring_bytes,
            part_base,
            part_size: p.share,
            desc_table: part_base,
            input: part_base + p.desc_area,
            output,
            input_bytes: cfg.input_bytes,
            checksums: if streams(cfg.mode) {
                Checksums::default()
            } else {
                Checksums {
                    table: part_base + p.checksum_offset(),
                    entries: p.checksum_entries,
                    base: output,
                }
            },
            window: abi::tenant_window_offset(dev.id.tenant_windows, index),
        }
    }

    fn launch_slot(&self, tag: u32) -> usize {
        (self.window as usize)
            + abi::TWIN_LAUNCH
            + abi::launch_slot(tag) as usize * size_of::<LaunchPacket>()
    }

    fn credit(&self) -> usize {
        self.window as usize + abi::TWIN_CREDIT
    }
}

/// Counters of the tenant, kept by the driver.
#[derive(Clone, Copy, Default)]
struct Counters {
    launched: u64,
    /// Launches that waited for a free launch slot, and how long.
    launch_waits: u64,
    launch_wait_ns: u64,
    completed: u64,
    polls: u64,
    empty_polls: u64,
    published: u64,
    errors: u64,
}

impl Counters {
    /// What was counted since `earlier`, a snapshot of these counters; they only grow between
    /// resets, and resets are serialised, so nothing wraps.
    fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            launched: self.launched.wrapping_sub(earlier.launched),
            launch_waits: self.launch_waits.wrapping_sub(earlier.launch_waits),
            launch_wait_ns: self.launch_wait_ns.wrapping_sub(earlier.launch_wait_ns),
            completed: self.completed.wrapping_sub(earlier.completed),
            polls: self.polls.wrapping_sub(earlier.polls),
            empty_polls: self.empty_polls.wrapping_sub(earlier.empty_polls),
            published: self.published.wrapping_sub(earlier.published),
            errors: self.errors.wrapping_sub(earlier.errors),
        }
    }
}

/// The counters of a `STATS` call, taken before anything is reset.
struct StatsSnapshot {
    counters: Counters,
    /// The device's counters (the driver's, for RP and BS) now, and at the last reset.
    device: DeviceBaseline,
    baseline: DeviceBaseline,
    stall: u64,
    stall_base: u64,
    interrupts: u64,
    /// The device's count of stores it consumed unpublished (never reset).
    unpublished: u64,
}

impl StatsSnapshot {
    /// The statistics since the last reset, as `STATS` reports them.
    fn report(&self, flags: u32, tenant: u32) -> uapi::Stats {
        let (c, d, b) = (&self.counters, &self.device, &self.baseline);
        uapi::Stats {
            flags,
            tenant,
            launched: c.launched,
            launches_completed: c.completed,
            records: d.records.wrapping_sub(b.records),
            payload_bytes: d.payload_bytes.wrapping_sub(b.payload_bytes),
            backpressure_waits: c.launch_waits,
            backpressure_ns: c.launch_wait_ns,
            credit_stalls: d.credit_stalls.wrapping_sub(b.credit_stalls),
            dma_batches: d.dma_batches.wrapping_sub(b.dma_batches),
            polls: c.polls,
            empty_polls: c.empty_polls,
            credits_published: c.published,
            errors: c.errors,
            interrupts: self.interrupts,
            ccm_busy_ns: d.busy_ns.wrapping_sub(b.busy_ns),
            credit_wait_ns: d.credit_wait_ns.wrapping_sub(b.credit_wait_ns),
            host_stall_ns: self.stall.wrapping_sub(self.stall_base),
            unpublished: self.unpublished,
            model_deficit_ns: d.model_deficit_ns.wrapping_sub(b.model_deficit_ns),
            model_late_chunks: d.model_late.wrapping_sub(b.model_late),
        }
    }
}

/// Device counters at the last `STATS_RESET`.
#[derive(Clone, Copy, Default)]
struct DeviceBaseline {
    records: u64,
    payload_bytes: u64,
    credit_stalls: u64,
    dma_batches: u64,
    busy_ns: u64,
    credit_wait_ns: u64,
    model_deficit_ns: u64,
    model_late: u64,
}

/// The gap head's bitmap on the heap (6.12's `KVec` has no `AsRef<[T]>`).
struct Bitmap(KVec<u64>);

impl AsRef<[u64]> for Bitmap {
    fn as_ref(&self) -> &[u64] {
        &self.0
    }
}

impl AsMut<[u64]> for Bitmap {
    fn as_mut(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

/// The host side of the rings, under the tenant lock.
struct RingState {
    gap: GapHead<Bitmap>,
    /// The metadata head user space released (`RELEASE_METADATA`).
    md_head: RingIndex,
    /// Every record before this one was checked and its payload received.
    scanned: RingIndex,
    md_pub: HeadPublisher,
    pl_pub: HeadPublisher,
    counters: Counters,
    baseline: DeviceBaseline,
    /// `stall_ns` at the last `STATS_RESET`.
    stall_base: u64,
    /// A record failed its checks: the device broke the protocol. Sticky.
    broken: bool,
    /// RP and BS: the driver writes the rings from the results in device memory.
    producer: Producer,
    /// RP: the launch whose mailbox command is outstanding, and the last doorbell rung.
    rp: Option<RpLaunch>,
    mbox_seq: u32,
}

/// An RP launch enqueued in the mailbox.
#[derive(Clone, Copy)]
struct RpLaunch {
    seq: u32,
    tag: u32,
    cut: Cut,
    src: u64,
}

/// Who needs the poller (see [`poller`]).
struct PollerDemand {
    /// A `poll()` found nothing, or an RP launch needs driving, since the last wakeup: the
    /// poller polls. Cleared at a wakeup and when its lease runs out with nobody waiting.
    armed: AtomicBool,
    /// When `armed` was last set ([`crate::link::now_ns`]).
    armed_at: AtomicU64,
    /// `WAIT` calls in progress in a polled mode: the poller polls while there are any.
    waiters: AtomicU32,
}

/// What the poller and the file share.
#[pin_data]
pub(crate) struct TenantCore {
    dev: Arc<CcmDev>,
    index: u32,
    link: Link,
    region: Arc<PinnedPages>,
    cfg: TenantConfig,
    layout: Layout,
    #[pin]
    state: Mutex<RingState>,
    #[pin]
    wq: WaitQueue,
    /// Where the poller sleeps while nobody waits.
    #[pin]
    arm_wq: WaitQueue,
    /// The next launch tag; held across a launch, so tags reach the device in order and a
    /// failed launch consumes none.
    #[pin]
    launch: Mutex<u32>,
    /// Held by `STATS_RESET` from its snapshot to its reset.
    #[pin]
    stats_reset: Mutex<()>,
    /// `scanned`, readable without the lock (for wait conditions).
    scanned: AtomicU32,
    /// Who needs the poller.
    demand: PollerDemand,
    /// AXLE_IRQ: interrupts handled.
    interrupts: AtomicU64,
    /// Nanoseconds a host core spent stalled on the link for this tenant (every CXL.mem and
    /// CXL.io access the driver makes for it, and the BS store's wait for its answer).
    stall_ns: AtomicU64,
}

/// The attention kernel's records: a block of `chunk_rows` query rows per head, the last block
/// shorter when the rows do not divide evenly.
///
/// The arguments come from user space unchecked (the device validates them): arguments whose
/// cut overflows are outside the documented limits (`head_dim` at most
/// `ATTENTION_MAX_HEAD_DIM`, `heads` at most `ATTENTION_MAX_HEADS`, a block within the
/// streaming factor), so the device ends such a launch in one error record without payload and
/// any cut serves.
fn attention_cut(a: &abi::AttentionArgs, sf: u32) -> Cut {
    checked_attention_cut(a, sf).unwrap_or(Cut::uniform(sf))
}

/// [`attention_cut`] in checked arithmetic; `None` on an overflow.
fn checked_attention_cut(a: &abi::AttentionArgs, sf: u32) -> Option<Cut> {
    // An output row is `head_dim` little-endian `i32`.
    let row = a.head_dim.checked_mul(4)?;
    let rows = match a.chunk_rows {
        0 => sf.checked_div(row)?,
        r => r,
    }
    .max(1);
    let chunk = rows.checked_mul(row)?;
    let last = a.q_rows % rows;
    if last == 0 {
        return Some(Cut::uniform(chunk));
    }
    Some(Cut {
        chunk,
        tail_from: u64::from(a.q_rows / rows)
            .checked_mul(u64::from(a.heads))?
            .checked_mul(u64::from(chunk))?,
        tail_chunk: last.checked_mul(row)?,
    })
}

/// How a launch's results are cut into records in the rings (RP, BS), as the device cuts them.
/// Total on any arguments: invalid ones end in an error record, whose cut is unused.
fn launch_cut(arg: &uapi::Launch, sf: u32) -> Cut {
    let ssb = [abi::KERNEL_SSB_Q1_1, abi::KERNEL_SSB_Q1_2].map(u32::from);
    if ssb.contains(&arg.kernel_id) {
        // One 16-byte partial per chunk of rows.
        Cut::uniform(16)
    } else if arg.kernel_id == u32::from(abi::KERNEL_LLM_ATTENTION) {
        attention_cut(&abi::AttentionArgs::from_bytes(&arg.args), sf)
    } else if arg.kernel_id == u32::from(abi::KERNEL_DLRM_SLS) {
        let la = abi::SlsArgs::from_bytes(&arg.args);
        let vector = la.dim.saturating_mul(4).max(1);
        let samples = if la.chunk_samples == 0 {
            sf / vector
        } else {
            la.chunk_samples
        };
        Cut::uniform(samples.saturating_mul(vector))
    } else if arg.kernel_id == u32::from(abi::KERNEL_PAGERANK)
        || arg.kernel_id == u32::from(abi::KERNEL_SSSP)
    {
        let pa = abi::PageRankArgs::from_bytes(&arg.args);
        let vertices = if pa.chunk_vertices == 0 {
            sf / 8
        } else {
            pa.chunk_vertices
        };
        Cut::uniform(vertices.saturating_mul(8))
    } else if arg.kernel_id == u32::from(abi::KERNEL_KNN) {
        let ka = abi::KnnArgs::from_bytes(&arg.args);
        let rows = if ka.chunk_rows == 0 {
            sf / 8
        } else {
            ka.chunk_rows
        };
        Cut::uniform(rows.saturating_mul(8))
    } else {
        Cut::uniform(
            match abi::StreamXformArgs::from_bytes(&arg.args).chunk_size {
                0 => sf,
                c => c,
            },
        )
    }
}

/// Whether the device back-streams a mode's results itself (AXLE, AXLE_IRQ), rather than the
/// driver copying them (RP, BS).
fn streams(mode: u32) -> bool {
    mode == abi::MODE_AXLE || mode == abi::MODE_AXLE_IRQ
}

fn slots_for(length: u32, slot_size: u32) -> u32 {
    length.div_ceil(slot_size)
}

impl TenantCore {
    fn headers_u32(&self, off: usize) -> Result<&AtomicU32> {
        self.region.atomic_u32(off)
    }

    /// Checks the records published since the last scan; returns how many.
    fn scan_locked(&self, st: &mut RingState) -> Result<u32> {
        if st.broken {
            return Err(EIO);
        }
        let tail_at = offset_of!(RingHeaders, metadata);
        // Acquire: pairs with the device's barrier before the tail; the records are visible.
        let tail = RingIndex::new(self.headers_u32(tail_at)?.load(Ordering::Acquire));
        // The rings are write-combining, whose loads are weakly ordered: without a read barrier
        // the record loads below could be performed before the tail load (an acquire load is a
        // plain `MOV` on x86). `rmb()`, not `dma_rmb()`: the latter only orders write-back.
        kernel::barrier::rmb();
        st.counters.polls += 1;
        let new = tail.distance_from(st.scanned);
        if new == 0 {
            st.counters.empty_polls += 1;
            return Ok(0);
        }
        let md = self.cfg.metadata;
        if new > md.capacity() || tail.distance_from(st.md_head) > md.capacity() {
            return self.fail(st, "metadata tail beyond the ring");
        }
        let slot_size = self.cfg.streaming_factor.slot_size();
        for _ in 0..new {
            let idx = st.scanned;
            let at = self.layout.metadata_offset as usize
                + md.slot(idx) as usize * abi::METADATA_RECORD_SIZE as usize;
            let mut raw = [0u8; abi::METADATA_RECORD_SIZE as usize];
            self.region.read_bytes(at, &mut raw)?;
            let rec = abi::MetadataRecord::from_bytes(&raw);
            if rec.seq != idx.raw() {
                // A stale or torn record: the fences failed somewhere.
                return self.fail(st, "record with a wrong sequence number");
            }
            if rec.length > 0 {
                let end = RingIndex::new(rec.payload_index)
                    .wrapping_add(slots_for(rec.length, slot_size));
                if st.gap.receive(end).is_err() {
                    return self.fail(st, "record names payload slots out of order");
                }
            }
            if rec.flags & abi::MD_FLAG_FINAL != 0 {
                st.counters.completed += 1;
            }
            st.scanned = idx.wrapping_add(1);
        }
        self.scanned.store(st.scanned.raw(), Ordering::Release);
        Ok(new)
    }

    fn fail(&self, st: &mut RingState, what: &str) -> Result<u32> {
        st.broken = true;
        st.counters.errors += 1;
        pr_warn_ratelimited!("tenant: device broke the ring protocol: {}\n", what);
        Err(EIO)
    }

    /// Moves the host-driven modes forward: RP polls the mailbox, RP and BS copy results into
    /// the rings while there is room; then scans. Returns the new records.
    fn progress(&self) -> Result<u32> {
        let mut st = self.state.lock();
        if self.cfg.mode == abi::MODE_RP {
            self.rp_poll(&mut st)?;
        }
        if st.producer.is_pending() {
            self.drain(&mut st)?;
        }
        self.scan_locked(&mut st)
    }

    /// RP: one remote poll of the mailbox; at completion, reads the answer, dequeues the
    /// command and queues the results for copying.
    ///
    /// The dequeue is the paper's final CXL.io message: posted, not waited for here. The
    /// mailbox holds one command, so the next `LAUNCH` checks that the device took the dequeue
    /// before it rings ([`TenantCore::mailbox_free`]), by which time the device has had the
    /// result load and the host's work to do it in. Waiting for it here added a round trip
    /// through the device's engine thread to every completion, a cost no other mode pays.
    fn rp_poll(&self, st: &mut RingState) -> Result {
        let Some(rp) = st.rp else {
            return Ok(());
        };
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let t = abi::tenant_regs_offset(self.index);
        let reg32 = |o: usize| hw.regs.try_read32(t + o);
        self.stalled(self.link.io_read());
        // Pairs with the device's store of `mbox_done` after status and result.
        let done = reg32(abi::TREG_MBOX_DONE)?;
        st.counters.polls += 1;
        if done != rp.seq {
            st.counters.empty_polls += 1;
            return Ok(());
        }
        self.stalled(self.link.io_read());
        let status = reg32(abi::TREG_MBOX_STATUS)?;
        self.stalled(self.link.io_read());
        let bytes = hw.regs.try_read64(t + abi::TREG_MBOX_RET)?;
        // Dequeue: the next command, its argument, then the doorbell (`writel()`s reach the
        // device in program order).
        let seq = rp.seq.wrapping_add(1);
        hw.regs
            .try_write32(abi::MBOX_CMD_DEQUEUE, t + abi::TREG_MBOX_CMD)?;
        hw.regs.try_write32(rp.tag, t + abi::TREG_MBOX_ARG)?;
        hw.regs.try_write32(seq, t + abi::TREG_MBOX_DOORBELL)?;
        for _ in 0..3 {
            self.stalled(self.link.io_write());
        }
        st.mbox_seq = seq;
        st.rp = None;
        let status = u16::try_from(status).unwrap_or(abi::STATUS_ABORTED);
        st.producer.push(CopyJob {
            tag: rp.tag,
            status,
            src: rp.src,
            bytes: if status == 0 { bytes } else { 0 },
            cut: rp.cut,
            done: 0,
            checksums: self.layout.checksums,
        })
    }

    /// RP: before a new mailbox command, waits until the device has answered the last one
    /// (the dequeue [`Self::rp_poll`] posted): the mailbox holds one command, and one written
    /// over an unanswered one could be read half old, half new. Usually one remote read; then
    /// polls at the remote polling interval, for at most 100 ms.
    fn mailbox_free(&self, hw: &Hw, st: &RingState) -> Result {
        let at = abi::tenant_regs_offset(self.index) + abi::TREG_MBOX_DONE;
        let start = crate::link::now_ns();
        loop {
            let since = crate::link::now_ns();
            self.stalled(self.link.io_read());
            if hw.regs.try_read32(at)? == st.mbox_seq {
                return Ok(());
            }
            if since.saturating_sub(start) > 100_000_000 {
                pr_warn_ratelimited!(
                    "tenant {}: the device did not answer a dequeue within 100 ms\n",
                    self.index
                );
                return Err(EIO);
            }
            self.stalled(pace(since, self.link.remote_poll_ns, true));
        }
    }

    /// RP and BS: copies queued results into the rings, as far as the released heads allow.
    fn drain(&self, st: &mut RingState) -> Result {
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let rings = Rings {
            region: &self.region,
            metadata_offset: self.layout.metadata_offset,
            payload_offset: self.layout.payload_offset,
            metadata: self.cfg.metadata,
            payload: self.cfg.payload,
            slot_size: self.cfg.streaming_factor.slot_size(),
        };
        let (pl_head, md_head) = (st.gap.head(), st.md_head);
        st.producer.drain(
            &rings,
            pl_head,
            md_head,
            &hw.mem,
            &self.link,
            &self.stall_ns,
        )?;
        Ok(())
    }

    /// AXLE_IRQ: the device signalled new records with `n` interrupts. Pays their handling on
    /// this (the host's interrupt) path, counts them, and wakes the waiters, who scan.
    pub(crate) fn interrupted(&self, n: u32) {
        self.stalled(self.link.interrupts(n));
        self.interrupts.fetch_add(u64::from(n), Ordering::Relaxed);
        self.wq.wake_all();
    }

    /// RP work the poller must keep driving even if nobody waits: the remote polls of an
    /// outstanding launch. (Results waiting for room need a `RELEASE`, which copies them itself;
    /// polling for them would only burn the CPU the consumer needs.)
    fn host_work_pending(&self) -> bool {
        self.state.lock().rp.is_some()
    }

    /// Accounts `ns` of link stall to the tenant.
    fn stalled(&self, ns: u64) {
        self.stall_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Records ready after `head`, from the last scan.
    fn ready_after(&self, head: u32) -> u32 {
        RingIndex::new(self.scanned.load(Ordering::Acquire)).distance_from(RingIndex::new(head))
    }

    /// Stores a head into the credit line: a CXL.mem store, published so that it leaves the
    /// write-combining buffer (the device reads the line without snooping).
    fn store_head(&self, hw: &Hw, metadata: bool, head: RingIndex) -> Result {
        let at = self.layout.credit() + if metadata { 0 } else { 4 };
        // Release: the reads of the released slots happen before the device may reuse them.
        hw.mem.atomic_u32(at)?.store(head.raw(), Ordering::Release);
        hw.mem.publish(at, 4)?;
        self.stalled(self.link.mem_store());
        Ok(())
    }
}

/// How long a `poll()` keeps the poller polling without a wakeup. A `poll()` caller that gave
/// up leaves no trace in the driver, so the lease is what bounds the polling it started: at its
/// end the poller disarms and wakes the wait queue, and a caller still in `poll()`/`select()`/
/// `epoll_wait()` polls the file again, which re-arms the poller.
const POLL_LEASE_NS: u64 = 10_000_000;

impl TenantCore {
    /// Whether the poller has a reason to poll: a `WAIT` in progress, or an armed lease.
    fn wanted(&self) -> bool {
        self.demand.waiters.load(Ordering::Acquire) != 0
            || self.demand.armed.load(Ordering::Acquire)
    }

    /// Ends the lease of `arm()` after an empty pass, when nobody needs the poller: no `WAIT`
    /// in progress, no RP launch to drive, and no `poll()` since the lease began.
    fn expire_lease(&self) {
        if self.demand.waiters.load(Ordering::Acquire) != 0
            || !self.demand.armed.load(Ordering::Acquire)
        {
            return;
        }
        let since = self.demand.armed_at.load(Ordering::Acquire);
        if crate::link::now_ns().saturating_sub(since) < POLL_LEASE_NS || self.host_work_pending() {
            return;
        }
        self.demand.armed.store(false, Ordering::Release);
        // A `poll()` still waiting re-polls and re-arms; one racing with the store above
        // registered on `wq` before arming, so it is woken too.
        self.wq.wake_all();
    }
}

/// A `WAIT` in progress in a polled mode: the poller polls until it is dropped.
struct Waiting<'a>(&'a TenantCore);

impl<'a> Waiting<'a> {
    fn new(core: &'a TenantCore) -> Self {
        core.demand.waiters.fetch_add(1, Ordering::AcqRel);
        core.arm_wq.wake_all();
        Waiting(core)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.demand.waiters.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Polling intervals shorter than this are spun, not slept: a timer sleep of a few
/// microseconds lasts as long as the wakeup takes (tens of microseconds, more in a VM), so a
/// 1 µs remote polling interval would in truth be the timer's.
const SLEEP_FROM_NS: u64 = 50_000;

/// Waits out a polling interval begun at `since` ([`crate::link::now_ns`]). `spin`: a caller
/// waits for this poll, so its core is the one polling: intervals below [`SLEEP_FROM_NS`] are
/// spun, and the rest of the core's time is given up only when the scheduler asks. Without a
/// caller waiting the poller sleeps the interval instead, and takes no time from the host's
/// work. An interval of 0 is busy polling, as configured.
///
/// Returns the nanoseconds spun: host core stall, as a consumer's local polling is (a core
/// that polls, locally or remotely, is stalled for the whole of it).
fn pace(since: u64, interval_ns: u64, spin: bool) -> u64 {
    if interval_ns == 0 {
        kthread::cond_resched();
        0
    } else if spin && interval_ns < SLEEP_FROM_NS {
        let spun = crate::link::spin_until(since.saturating_add(interval_ns));
        kthread::cond_resched();
        spun
    } else {
        let us = (interval_ns / 1000).max(1);
        kthread::usleep_range(us, us + us / 4);
        0
    }
}

/// The poller thread: polls the metadata tail at the tenant's interval while someone waits
/// (a `WAIT` in progress, a `poll()` within its lease, an RP launch outstanding); otherwise it
/// sleeps, so a `WAIT` that timed out or a `poll()` that gave up costs no CPU.
fn poller(core: Arc<TenantCore>) -> i32 {
    // RP polls the mailbox at the remote polling interval (the device's model if none given).
    let interval_ns = match (core.cfg.mode, core.cfg.poll_interval_ns) {
        (abi::MODE_RP, 0) => core.link.remote_poll_ns,
        (_, ns) => ns,
    };
    while !kthread::should_stop() {
        if !core.wanted() {
            // Queued before the check, so an `arm()` or a new `WAIT` in between is not lost;
            // `kthread_stop` wakes the thread too. A kernel thread gets no signals, so this
            // cannot fail.
            let _ = core
                .arm_wq
                .wait_interruptible_timeout(None, || core.wanted() || kthread::should_stop());
            continue;
        }
        let since = crate::link::now_ns();
        let woke = match core.progress() {
            Ok(0) => {
                core.expire_lease();
                false
            }
            Ok(_) | Err(_) => {
                if !core.host_work_pending() {
                    core.demand.armed.store(false, Ordering::Release);
                }
                core.wq.wake_all();
                true
            }
        };
        // Having woken the waiters, sleep the interval instead of spinning it: a woken waiter
        // often shares this CPU, and without preemption a spinning poller would keep it off the
        // CPU until the scheduler's slice ran out (milliseconds per RP launch, measured).
        let spin = !woke && core.demand.waiters.load(Ordering::Acquire) != 0;
        core.stalled(pace(since, interval_ns, spin));
    }
    0
}

/// A user mapping of a tenant's input buffer in device memory, mapped a page per fault while
/// the device is bound.
struct InputPages {
    dev: Arc<CcmDev>,
    /// Physical address of the input buffer.
    phys: u64,
    /// Its size: no mapping is longer.
    len: u64,
}

impl vma::FaultHandler for InputPages {
    fn fault(this: ArcBorrow<'_, Self>, fault: &vma::VmFault) -> Result {
        // Held while the page is mapped: unbind takes the list before it zaps, so a page is
        // either mapped before the zap (and zapped) or refused.
        let maps = this.dev.input_maps.lock();
        if maps.is_none() {
            return Err(ENODEV);
        }
        let off = fault
            .offset()
            .and_then(|o| o.checked_sub(uapi::MMAP_INPUT))
            .filter(|o| *o < this.len)
            .ok_or(EFAULT)?;
        // SAFETY: the input buffer is device memory reserved for the device's lifetime (the
        // window is never given to the page allocator); every user mapping of it is zapped at
        // unbind (`CcmDev::detach`), and the area is write-back like the driver's mapping.
        unsafe { fault.insert_phys(this.phys + off) }
    }
}

/// A configured tenant, owned by its open file.
pub(crate) struct Tenant {
    index: u32,
    dev: Arc<CcmDev>,
    core: Arc<TenantCore>,
    poller: Option<KThread>,
    sg: Option<DmaSgTable>,
    /// Dropped after the teardown: the number is reused only once the device let go.
    _number: TenantNumber,
}

/// The pages of a tenant's region; `EINVAL` if the device cannot map that many.
fn region_pages(dev: &CcmDev, layout: &Layout) -> Result<usize> {
    let pages = layout.region_bytes / PAGE_BYTES;
    if pages > u64::from(dev.id.max_segments) {
        pr_warn_ratelimited!(
            "CONFIGURE: rings of {} pages exceed the device's {} DMA segments\n",
            pages,
            dev.id.max_segments
        );
        return Err(EINVAL);
    }
    // Cannot truncate: at most `max_segments`, a `u32`.
    Ok(pages as usize)
}

/// Copies a `RELEASE`'s entries in from user space, as bytes.
fn read_release_entries(arg: &uapi::Release) -> Result<KVec<u8>> {
    let entry = size_of::<uapi::ReleaseEntry>();
    let mut raw = KVec::new();
    if arg.count > 0 {
        let ptr = usize::try_from(arg.entries).map_err(|_| EFAULT)?;
        UserSlice::new(ptr, arg.count as usize * entry).read_all(&mut raw, GFP_KERNEL)?;
    }
    Ok(raw)
}

/// Releases the payload slots of the entries in `raw` (of `slot_size`-byte slots), in order,
/// counting each released entry in `arg.processed`; stops at the first the gap head refuses.
fn release_entries(
    st: &mut RingState,
    raw: &[u8],
    slot_size: u32,
    arg: &mut uapi::Release,
) -> Result {
    let entry = size_of::<uapi::ReleaseEntry>();
    for chunk in raw.chunks_exact(entry) {
        let index = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let length = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        // An empty record occupies no slot: nothing to release.
        if length > 0 {
            let slots = slots_for(length, slot_size);
            if let Err(e) = st.gap.release_run(RingIndex::new(index), slots) {
                pr_warn_ratelimited!(
                    "RELEASE: entry {} ({}+{} bytes): {:?}\n",
                    arg.processed,
                    index,
                    length,
                    e
                );
                return Err(EINVAL);
            }
        }
        arg.processed += 1;
    }
    Ok(())
}

/// `RELEASE_METADATA`: moves the metadata head to `metadata_head`, which must lie between the
/// current head and the last record scanned.
fn release_metadata(st: &mut RingState, metadata_head: u32) -> Result {
    let head = RingIndex::new(metadata_head);
    if head.is_before(st.md_head)
        || head.distance_from(st.md_head) > st.scanned.distance_from(st.md_head)
    {
        pr_warn_ratelimited!(
            "RELEASE: metadata head {} outside [{}, {}]\n",
            metadata_head,
            st.md_head.raw(),
            st.scanned.raw()
        );
        return Err(EINVAL);
    }
    st.md_head = head;
    Ok(())
}

impl Tenant {
    /// Sets tenant `index` up on the device and enables it.
    pub(crate) fn configure(
        dev: &Arc<CcmDev>,
        number: TenantNumber,
        cfg: TenantConfig,
        arg: &uapi::Configure,
    ) -> Result<Arc<Tenant>> {
        let index = number.index;
        let layout = Layout::new(dev, index, &cfg);
        let pages = region_pages(dev, &layout)?;
        let region = Arc::new(
            PinnedPages::alloc_scattered(pages, -1, CacheMode::WriteCombining)?,
            GFP_KERNEL,
        )?;
        let base = RingIndex::new(arg.index_base);
        let md = cfg.metadata;
        let pl = cfg.payload;
        write_headers(&region, &cfg, arg.index_base)?;
        let sg = DmaSgTable::map(&dev.dma_dev, region.clone(), DataDirection::FromDevice)?;
        let segs = sg.segments()?;
        if segs.len() > dev.id.max_segments as usize {
            return Err(EINVAL);
        }
        let gap = GapHead::new(
            pl,
            Bitmap(KVec::from_elem(
                0u64,
                bitmap_words(pl.capacity()),
                GFP_KERNEL,
            )?),
            base,
        )
        .map_err(|_| EINVAL)?;
        // Publish a quarter ring at a time, and whenever everything received is released.
        let policy = |cap: u32| PublishPolicy::Batched {
            threshold: (cap / 4).max(1),
        };
        let state = RingState {
            gap,
            md_head: base,
            scanned: base,
            md_pub: HeadPublisher::new(md, policy(md.capacity()), base).map_err(|_| EINVAL)?,
            pl_pub: HeadPublisher::new(pl, policy(pl.capacity()), base).map_err(|_| EINVAL)?,
            counters: Counters::default(),
            baseline: DeviceBaseline::default(),
            stall_base: 0,
            broken: false,
            producer: Producer::new(arg.index_base)?,
            rp: None,
            mbox_seq: arg.index_base.wrapping_sub(1),
        };
        let core = Arc::pin_init(
            pin_init!(TenantCore {
                dev: dev.clone(),
                index,
                link: dev.id.link,
                region,
                cfg,
                layout,
                state <- new_mutex!(state),
                wq <- new_wait_queue!(),
                arm_wq <- new_wait_queue!(),
                launch <- new_mutex!(arg.index_base),
                stats_reset <- new_mutex!(()),
                scanned: AtomicU32::new(arg.index_base),
                demand: PollerDemand {
                    armed: AtomicBool::new(false),
                    armed_at: AtomicU64::new(0),
                    waiters: AtomicU32::new(0),
                },
                interrupts: AtomicU64::new(0),
                stall_ns: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )?;
        let mut tenant = Tenant {
            index,
            dev: dev.clone(),
            core: core.clone(),
            poller: None,
            sg: Some(sg),
            _number: number,
        };
        // From here on, dropping `tenant` disables it in the device and frees safely.
        tenant.enable(&segs, arg)?;
        if cfg.mode == abi::MODE_AXLE_IRQ {
            if let Some(slot) = dev.irq_tenants.lock().get_mut(index as usize) {
                *slot = Some(core.clone());
            }
        }
        let poll_core = core.clone();
        tenant.poller = Some(KThread::spawn(
            kernel::fmt!("cxl_ccm_poll/{}", index),
            move || poller(poll_core),
        )?);
        Ok(Arc::new(tenant, GFP_KERNEL)?)
    }

    /// Checks what `configure` checks before it changes anything, and returns what `CONFIGURE`
    /// reports for tenant `index`: known before the tenant exists, so that it can be copied out
    /// first.
    pub(crate) fn outputs(
        dev: &CcmDev,
        index: u32,
        cfg: &TenantConfig,
        arg: &uapi::Configure,
    ) -> Result<uapi::Configure> {
        region_pages(dev, &Layout::new(dev, index, cfg))?;
        Ok(uapi::Configure {
            tenant: index,
            headers_size: HEADERS_BYTES,
            metadata_ring_size: cfg.metadata_ring_bytes,
            payload_ring_size: cfg.payload_ring_bytes,
            ..*arg
        })
    }

    /// Shadows the descriptors, programs the tenant registers and enables the tenant.
    fn enable(&self, segs: &[kernel::dma_sg::DmaSegment], arg: &uapi::Configure) -> Result {
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let count = u32::try_from(segs.len()).map_err(|_| EINVAL)?;
        self.prepare_device_memory(hw, segs, count, arg.index_base)?;
        self.program_registers(hw, count, arg)?;
        let t = abi::tenant_regs_offset(self.index);
        // `writel()`: the configuration, the table and the headers before the enable bit.
        hw.regs
            .try_write32(abi::TENANT_CTRL_ENABLE, t + abi::TREG_CTRL)?;
        self.wait_enabled(hw)
    }

    /// Prepares the tenant's device memory for [`Self::enable`]: clears what the previous
    /// holder of the tenant number left, shadows the descriptor table of `segs` (`count` of
    /// them), starts the credit line at `index_base` and publishes all of it to the device.
    fn prepare_device_memory(
        &self,
        hw: &Hw,
        segs: &[kernel::dma_sg::DmaSegment],
        count: u32,
        index_base: u32,
    ) -> Result {
        let l = &self.core.layout;
        let table = DescriptorTable {
            magic: abi::DESCRIPTOR_MAGIC,
            segment_count: count,
            region_size: l.region_bytes,
            headers_offset: 0,
            metadata_offset: l.metadata_offset,
            payload_offset: l.payload_offset,
            reserved: [0; 3],
        };
        // The previous holder of this tenant number left its inputs, outputs, descriptors and
        // launch packets here; the new tenant must see none of them.
        clear_device_memory(&hw.mem, l.part_base, l.part_size)?;
        clear_device_memory(&hw.mem, l.window, abi::TENANT_WINDOW_SIZE)?;
        let at = l.desc_table as usize;
        hw.mem.write_bytes(at, &table.to_bytes())?;
        for (i, s) in segs.iter().enumerate() {
            let seg = DmaSegment {
                bus_addr: s.bus_addr,
                len: s.len,
                flags: if i + 1 == segs.len() {
                    abi::DMA_SEG_LAST
                } else {
                    0
                },
            };
            let off = at + size_of::<DescriptorTable>() + i * size_of::<DmaSegment>();
            hw.mem.write_bytes(off, &seg.to_bytes())?;
        }
        // The credit line starts at the ring bases: a previous tenant's heads would look like
        // credit beyond the tail.
        hw.mem
            .atomic_u32(l.credit())?
            .store(index_base, Ordering::Relaxed);
        hw.mem
            .atomic_u32(l.credit() + 4)?
            .store(index_base, Ordering::Relaxed);
        // The device reads the window (launch slots, credit line) and the descriptors once the
        // tenant is enabled: they leave the write-combining buffers first.
        hw.mem
            .publish(l.window as usize, abi::TENANT_WINDOW_SIZE as usize)?;
        hw.mem.publish(
            at,
            size_of::<DescriptorTable>() + segs.len() * size_of::<DmaSegment>(),
        )
    }

    /// Writes the tenant's configuration into its registers, all but the enable bit: its
    /// modes and rings, `arg`'s index base and schedule, its partition and the descriptor table
    /// of `count` segments.
    fn program_registers(&self, hw: &Hw, count: u32, arg: &uapi::Configure) -> Result {
        let l = &self.core.layout;
        let cfg = &self.core.cfg;
        let t = abi::tenant_regs_offset(self.index);
        let w32 = |o: usize, v: u32| hw.regs.try_write32(v, t + o);
        let w64 = |o: usize, v: u64| hw.regs.try_write64(v, t + o);
        w32(abi::TREG_MODE, cfg.mode)?;
        w32(abi::TREG_SLOT_SIZE, cfg.streaming_factor.slot_size())?;
        w32(abi::TREG_STREAMING_FACTOR, cfg.streaming_factor.bytes())?;
        w32(abi::TREG_METADATA_SLOTS, cfg.metadata.capacity())?;
        w32(abi::TREG_PAYLOAD_SLOTS, cfg.payload.capacity())?;
        w32(
            abi::TREG_STREAMING_ORDER,
            if cfg.in_order {
                abi::ORDER_IN_ORDER
            } else {
                abi::ORDER_OUT_OF_ORDER
            },
        )?;
        w32(
            abi::TREG_SCHEDULE,
            if arg.flags & uapi::CONFIGURE_FIFO != 0 {
                abi::SCHEDULE_FIFO
            } else {
                abi::SCHEDULE_DEFAULT
            },
        )?;
        w32(abi::TREG_INDEX_BASE, arg.index_base)?;
        // The mailbox's first command rings `index_base`: start the doorbell one behind.
        w32(abi::TREG_MBOX_DOORBELL, arg.index_base.wrapping_sub(1))?;
        // AXLE_IRQ: nothing acknowledged yet; interrupt on new metadata.
        w32(abi::TREG_IRQ_ACK, arg.index_base.wrapping_sub(1))?;
        w32(abi::TREG_IRQ_VECTOR, 0)?;
        w32(
            abi::TREG_IRQ_CTRL,
            if cfg.mode == abi::MODE_AXLE_IRQ {
                abi::IRQ_CAUSE_METADATA
            } else {
                0
            },
        )?;
        w64(abi::TREG_MEM_BASE, l.part_base)?;
        w64(abi::TREG_MEM_SIZE, l.part_size)?;
        w64(abi::TREG_DESC_TABLE, l.desc_table)?;
        w32(abi::TREG_DESC_COUNT, count)?;
        if self.dev.id.version >= abi::version(1, 6) {
            w64(abi::TREG_CHECKSUM_TABLE, l.checksums.table)?;
            w32(abi::TREG_CHECKSUM_ENTRIES, l.checksums.entries)?;
            w64(abi::TREG_CHECKSUM_BASE, l.checksums.base)?;
        }
        Ok(())
    }

    /// Waits up to 1 s for the device to enable the tenant or refuse it; `EINVAL` if it refused
    /// it, `ETIMEDOUT` if it did neither.
    fn wait_enabled(&self, hw: &Hw) -> Result {
        let t = abi::tenant_regs_offset(self.index);
        let status = || hw.regs.try_read32(t + abi::TREG_STATUS);
        let settled = abi::TENANT_STATUS_ENABLED | abi::TENANT_STATUS_ERROR;
        crate::wait_until(1000, || status().map_or(true, |s| s & settled != 0));
        let st = status()?;
        if st & abi::TENANT_STATUS_ENABLED != 0 {
            return Ok(());
        }
        let code = hw.regs.try_read32(t + abi::TREG_ERROR)?;
        if st & abi::TENANT_STATUS_ERROR != 0 {
            pr_warn_ratelimited!(
                "CONFIGURE: the device refused the tenant (status {})\n",
                code
            );
            Err(EINVAL)
        } else {
            pr_err!(
                "tenant {}: the device did not enable it within 1 s\n",
                self.index
            );
            Err(kernel::errno::etimedout())
        }
    }

    /// Disables the tenant in the device and waits for the acknowledgement; `false` if the
    /// device never acknowledged (its DMA may still be live).
    fn disable(&self) -> bool {
        let hw_guard = self.dev.hw.lock();
        // Unbound: the device was disabled as a whole and acknowledged it.
        let Some(hw) = hw_guard.as_ref() else {
            return true;
        };
        let t = abi::tenant_regs_offset(self.index);
        if hw.regs.try_write32(0, t + abi::TREG_CTRL).is_err() {
            return false;
        }
        crate::wait_until(1000, || hw.regs.try_read32(t + abi::TREG_STATUS) == Ok(0))
    }

    fn core(&self) -> &TenantCore {
        &self.core
    }

    /// `CXL_CCM_IOC_LAUNCH`; a failed launch counts as an error in the statistics.
    ///
    /// `publish` copies the tag out to the caller. It runs under the launch lock, where the tag
    /// is decided, after every check and wait and before the packet reaches the device: if it
    /// fails, nothing was launched and the tag is not consumed, so no results ever arrive under
    /// a tag the caller could not learn. (Checking writability first and copying out after the
    /// launch would leave a window in which another thread makes the argument read-only.)
    pub(crate) fn launch(
        &self,
        arg: &uapi::Launch,
        publish: impl FnOnce(u32) -> Result,
    ) -> Result<u32> {
        let result = self.try_launch(arg, publish);
        if result.is_err() {
            self.core.state.lock().counters.errors += 1;
        }
        result
    }

    /// Checks a launch against the tenant; returns the input size as a `u32`.
    fn check_launch(&self, arg: &uapi::Launch) -> Result<u32> {
        if arg.tag != 0 {
            pr_warn_ratelimited!("LAUNCH: tag is an output and must be 0\n");
            return Err(EINVAL);
        }
        if arg.flags & !uapi::LAUNCH_SYNC != 0 || arg.reserved != [0; 2] {
            pr_warn_ratelimited!("LAUNCH: unknown flags or nonzero reserved fields\n");
            return Err(EINVAL);
        }
        if arg.flags & uapi::LAUNCH_SYNC != 0 && self.core.cfg.mode != abi::MODE_BS {
            pr_warn_ratelimited!("LAUNCH: SYNC is for bulk-synchronous tenants\n");
            return Err(EINVAL);
        }
        if arg.kernel_id >= u32::from(abi::KERNEL_ID_LIMIT)
            || self.dev.id.kernels & (1 << arg.kernel_id) == 0
        {
            pr_warn_ratelimited!("LAUNCH: kernel {} is not implemented\n", arg.kernel_id);
            return Err(EINVAL);
        }
        if arg.arg_size > abi::MAX_ARG_SIZE {
            pr_warn_ratelimited!(
                "LAUNCH: arg_size {} above {}\n",
                arg.arg_size,
                abi::MAX_ARG_SIZE
            );
            return Err(EINVAL);
        }
        let input_bytes = self.core.layout.input_bytes;
        let in_range = arg
            .input_offset
            .checked_add(arg.input_size)
            .is_some_and(|end| end <= input_bytes);
        let Ok(input_size) = u32::try_from(arg.input_size) else {
            return Err(EINVAL);
        };
        if !in_range {
            pr_warn_ratelimited!(
                "LAUNCH: input {}+{} outside the {}-byte input buffer\n",
                arg.input_offset,
                arg.input_size,
                input_bytes
            );
            return Err(EINVAL);
        }
        Ok(input_size)
    }

    fn try_launch(&self, arg: &uapi::Launch, publish: impl FnOnce(u32) -> Result) -> Result<u32> {
        let input_size = self.check_launch(arg)?;
        let l = self.core.layout;
        // Cannot overflow: `input_offset + input_size <= input_bytes` (checked), and the input
        // and output buffers lie in device memory, whose offsets are `u64`.
        let input_base = l.input + arg.input_offset;
        let src = l.output + arg.input_offset;
        let cut = launch_cut(arg, self.core.cfg.streaming_factor.bytes());
        let mode = self.core.cfg.mode;
        if !streams(mode) && !self.core.state.lock().producer.has_room() {
            pr_warn_ratelimited!(
                "LAUNCH: {} completed launches wait for room in the rings: release first\n",
                crate::host_copy::MAX_PENDING
            );
            return Err(EBUSY);
        }
        let mut next_tag = self.core.launch.lock();
        let tag = *next_tag;
        match mode {
            abi::MODE_AXLE | abi::MODE_AXLE_IRQ => self.wait_launch_slot(tag)?,
            // One mailbox command at a time: the previous launch must be dequeued.
            abi::MODE_RP => self.wait_rp_idle()?,
            // The previous BS launch returned at its completion: its slot is free.
            _ => {}
        }
        // The last step that may fail before the launch: see `launch`.
        publish(tag)?;
        let sync = if mode == abi::MODE_BS {
            abi::LAUNCH_FLAG_SYNC
        } else {
            0
        };
        let packet = LaunchPacket {
            tag,
            // Cannot truncate: checked against KERNEL_ID_LIMIT and MAX_ARG_SIZE above.
            kernel_id: arg.kernel_id as u16,
            flags: arg.flags as u16 | sync,
            tenant: self.index as u16,
            arg_size: arg.arg_size as u16,
            input_size,
            input_base,
            output_base: src,
            args: arg.args,
        };
        let bytes = packet.to_bytes();
        // Lock order: the ring state before the hardware (as `progress` takes them).
        let mut rp_state = (mode == abi::MODE_RP).then(|| self.core.state.lock());
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let slot = l.launch_slot(tag);
        if let Some(st) = rp_state.as_ref() {
            self.core.mailbox_free(hw, st)?;
        }
        // The input the caller stored through its write-combining mapping, then the packet,
        // then the tag: the device acquires the tag and then reads the packet and the input.
        // Each publish drains the write-combining buffers before the stores after it, which is
        // what orders them for a device that does not snoop (HDM-H); the last one pushes the
        // tag out.
        hw.mem.publish(input_base as usize, input_size as usize)?;
        hw.mem.write_bytes(slot + 4, &bytes[4..])?;
        if !crate::skip_publish() {
            hw.mem.publish(slot + 4, bytes.len() - 4)?;
        }
        hw.mem.atomic_u32(slot)?.store(tag, Ordering::Release);
        hw.mem.publish(slot, 4)?;
        self.core.stalled(self.core.link.mem_store());
        if let Some(st) = rp_state.as_mut() {
            let seq = st.mbox_seq.wrapping_add(1);
            let t = abi::tenant_regs_offset(self.index);
            hw.regs
                .try_write32(abi::MBOX_CMD_ENQUEUE, t + abi::TREG_MBOX_CMD)?;
            hw.regs.try_write32(tag, t + abi::TREG_MBOX_ARG)?;
            hw.regs.try_write32(seq, t + abi::TREG_MBOX_DOORBELL)?;
            for _ in 0..3 {
                self.core.stalled(self.core.link.io_write());
            }
            st.mbox_seq = seq;
            st.rp = Some(RpLaunch { seq, tag, cut, src });
        }
        drop(hw_guard);
        drop(rp_state);
        *next_tag = tag.wrapping_add(1);
        drop(next_tag);
        self.core.state.lock().counters.launched += 1;
        match mode {
            abi::MODE_RP => self.arm(),
            abi::MODE_BS => self.wait_sync(tag, cut, src)?,
            _ => {}
        }
        Ok(tag)
    }

    /// RP: blocks until no launch is outstanding in the mailbox, polling it meanwhile.
    fn wait_rp_idle(&self) -> Result {
        loop {
            let since = crate::link::now_ns();
            self.core.progress()?;
            if self.core.state.lock().rp.is_none() {
                return Ok(());
            }
            if kernel::current!().signal_pending() {
                return Err(ERESTARTSYS);
            }
            let ns = self
                .core
                .link
                .remote_poll_ns
                .max(self.core.cfg.poll_interval_ns);
            // This caller's core polls: at the interval, not at the timer's.
            self.core.stalled(pace(since, ns, true));
        }
    }

    /// BS: the launch store is answered at completion; the core is stalled until then. Then the
    /// results are loaded into the rings (as far as they fit; the rest as `RELEASE` frees room).
    fn wait_sync(&self, tag: u32, cut: Cut, src: u64) -> Result {
        let at = self.core.layout.window as usize + abi::TWIN_COMPLETION;
        let start = crate::link::now_ns();
        let (status, bytes) = loop {
            {
                let hw_guard = self.dev.hw.lock();
                let hw = hw_guard.as_ref().ok_or(ENODEV)?;
                let done = hw
                    .mem
                    .atomic_u32(at + offset_of!(abi::SyncCompletion, done_tag))?;
                // Acquire: pairs with the device's release after status and result; `rmb()`
                // keeps their loads after this one in device memory that is not write-back.
                if done.load(Ordering::Acquire) == tag {
                    kernel::barrier::rmb();
                    let status = hw
                        .mem
                        .atomic_u32(at + offset_of!(abi::SyncCompletion, status))?
                        .load(Ordering::Relaxed);
                    let bytes = hw
                        .mem
                        .atomic_u64(at + offset_of!(abi::SyncCompletion, result_bytes))?
                        .load(Ordering::Relaxed);
                    break (status, bytes);
                }
            }
            if crate::link::now_ns().saturating_sub(start) > 10_000_000_000 {
                pr_err!(
                    "tenant {}: sync launch {} unanswered for 10 s\n",
                    self.index,
                    tag
                );
                return Err(kernel::errno::etimedout());
            }
            if self.tenant_error()?.is_some() {
                return Err(EIO);
            }
            // No return on an ordinary signal: the packet is stored and its tag consumed, so
            // an interrupted call would lose the results, and a restarted one would launch the
            // kernel again. Like the CXL.mem store it models, a BS launch is answered at
            // completion; the 10 s watchdog above bounds the wait. A task being killed never
            // sees the results, so it need not wait for them (a killable wait): its records
            // still arrive, and the tenant's teardown at the last close disables the device.
            if kernel::fatal_signal::pending() {
                return Err(EINTR);
            }
            kthread::cond_resched();
        };
        // The store's response crosses the link; the core was stalled from the store on.
        self.core
            .stalled(crate::link::now_ns().saturating_sub(start) + self.core.link.mem_load());
        let status = u16::try_from(status).unwrap_or(abi::STATUS_ABORTED);
        let mut st = self.core.state.lock();
        st.producer.push(CopyJob {
            tag,
            status,
            src,
            bytes: if status == 0 { bytes } else { 0 },
            cut,
            done: 0,
            checksums: self.core.layout.checksums,
        })?;
        drop(st);
        self.core.progress()?;
        self.core.wq.wake_all();
        Ok(())
    }

    /// Blocks while every launch slot holds a packet the device has not taken.
    fn wait_launch_slot(&self, tag: u32) -> Result {
        let head_at = offset_of!(RingHeaders, launch);
        let head = self.core.headers_u32(head_at)?;
        let free = || {
            let h = RingIndex::new(head.load(Ordering::Acquire));
            RingIndex::new(tag).distance_from(h) < abi::LAUNCH_SLOTS
        };
        if free() {
            return Ok(());
        }
        let start = crate::link::now_ns();
        let result = self.wait_launch_slot_slow(free);
        let mut st = self.core.state.lock();
        st.counters.launch_waits += 1;
        st.counters.launch_wait_ns += crate::link::now_ns().saturating_sub(start);
        result
    }

    fn wait_launch_slot_slow(&self, free: impl Fn() -> bool) -> Result {
        while !free() {
            if self.tenant_error()?.is_some() {
                return Err(EIO);
            }
            // The device takes packets within microseconds unless it is stalled for credit.
            self.core.wq.wait_interruptible_timeout(Some(1), &free)?;
        }
        Ok(())
    }

    /// The device's error code if it stopped serving this tenant.
    fn tenant_error(&self) -> Result<Option<u32>> {
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let t = abi::tenant_regs_offset(self.index);
        let st = hw.regs.try_read32(t + abi::TREG_STATUS)?;
        if st & abi::TENANT_STATUS_ERROR == 0 {
            return Ok(None);
        }
        Ok(Some(hw.regs.try_read32(t + abi::TREG_ERROR)?))
    }

    /// `CXL_CCM_IOC_RELEASE`; fills the output fields of `arg` even when it fails.
    pub(crate) fn release(&self, arg: &mut uapi::Release) -> Result {
        let known = uapi::RELEASE_METADATA | uapi::RELEASE_PUBLISH;
        arg.processed = 0;
        if arg.flags & !known != 0 || arg.reserved != [0; 2] {
            pr_warn_ratelimited!("RELEASE: unknown flags or nonzero reserved fields\n");
            return Err(EINVAL);
        }
        if arg.count > uapi::RELEASE_MAX {
            pr_warn_ratelimited!(
                "RELEASE: {} entries, at most {}\n",
                arg.count,
                uapi::RELEASE_MAX
            );
            return Err(EINVAL);
        }
        let raw = read_release_entries(arg)?;
        let core = self.core();
        let mut st = core.state.lock();
        core.scan_locked(&mut st)?;
        let slot_size = core.cfg.streaming_factor.slot_size();
        let mut result = release_entries(&mut st, &raw, slot_size, arg);
        if result.is_ok() && arg.flags & uapi::RELEASE_METADATA != 0 {
            result = release_metadata(&mut st, arg.metadata_head);
        }
        self.publish_heads(&mut st, arg.flags & uapi::RELEASE_PUBLISH != 0)?;
        arg.metadata_head_published = st.md_pub.published().raw();
        arg.payload_head_published = st.pl_pub.published().raw();
        if result.is_err() {
            st.counters.errors += 1;
        }
        if st.producer.is_pending() {
            // RP, BS: the room just released takes the results that waited for it.
            core.drain(&mut st)?;
            drop(st);
            core.wq.wake_all();
        }
        result
    }

    /// After a release: stores the heads into the device's credit line where the publishers'
    /// policy says so (every released head with `publish_all`), under the state lock `st`.
    fn publish_heads(&self, st: &mut RingState, publish_all: bool) -> Result {
        let core = self.core();
        let (md_head, md_tail) = (st.md_head, st.scanned);
        let (pl_head, pl_tail) = (st.gap.head(), st.gap.tail());
        // RP, BS: the driver produces the rings against the heads themselves; the device reads
        // no credit. (The publishers' bound of one lap per publish holds only for a producer
        // that waits for published credit.)
        let streamed = streams(core.cfg.mode);
        let md = if !streamed {
            Ok(None)
        } else if publish_all {
            st.md_pub.flush(md_head)
        } else {
            st.md_pub.on_release(md_head, md_tail)
        };
        let pl = if !streamed {
            Ok(None)
        } else if publish_all {
            st.pl_pub.flush(pl_head)
        } else {
            st.pl_pub.on_release(pl_head, pl_tail)
        };
        let (Ok(md), Ok(pl)) = (md, pl) else {
            // Cannot happen while the device keeps the credit rule; a device bug otherwise.
            pr_warn_ratelimited!("RELEASE: heads out of the device's credit window\n");
            return Err(EIO);
        };
        if md.is_some() || pl.is_some() {
            let hw_guard = self.dev.hw.lock();
            let hw = hw_guard.as_ref().ok_or(ENODEV)?;
            if let Some(h) = md {
                core.store_head(hw, true, h)?;
                st.counters.published += 1;
            }
            if let Some(h) = pl {
                core.store_head(hw, false, h)?;
                st.counters.published += 1;
            }
        }
        Ok(())
    }

    /// `WAIT_FLAG_DEADLOCK`: whether fewer than `min` records past `head` are ready and no more
    /// can arrive before a release. Publishes every released credit first, so that the device
    /// has been given everything the caller gave back.
    fn stuck(&self, head: u32, min: u32) -> Result<bool> {
        let core = self.core();
        let mut st = core.state.lock();
        core.scan_locked(&mut st)?;
        if core.ready_after(head) >= min {
            return Ok(false);
        }
        if !streams(core.cfg.mode) {
            // RP, BS: the driver is the producer; what is still queued after a drain has no
            // room under the released heads, and what the device completes next queues behind.
            if st.producer.is_pending() {
                core.drain(&mut st)?;
            }
            return Ok(st.producer.is_pending());
        }
        let hw_guard = self.dev.hw.lock();
        let hw = hw_guard.as_ref().ok_or(ENODEV)?;
        let (md_head, pl_head) = (st.md_head, st.gap.head());
        let (Ok(md), Ok(pl)) = (st.md_pub.flush(md_head), st.pl_pub.flush(pl_head)) else {
            pr_warn_ratelimited!("WAIT: heads out of the device's credit window\n");
            return Err(EIO);
        };
        if let Some(h) = md {
            core.store_head(hw, true, h)?;
            st.counters.published += 1;
        }
        if let Some(h) = pl {
            core.store_head(hw, false, h)?;
            st.counters.published += 1;
        }
        // A CXL.io register read. Acquire: pairs with the device's release store.
        core.stalled(core.link.io_read());
        let blocked = hw
            .regs
            .try_read64(abi::tenant_regs_offset(self.index) + abi::TREG_CREDIT_BLOCKED)?;
        // Blocked under older heads is not enough: the device has yet to read the new ones.
        if blocked != abi::credit_blocked(st.md_pub.published().raw(), st.pl_pub.published().raw())
        {
            return Ok(false);
        }
        // Records may have arrived between the scan above and this read, and filled the rings
        // that the device is now blocked on. It states "blocked" only once what it streamed
        // is visible (on PCIe the register read cannot pass its earlier posted writes), so a
        // second scan sees them: only if they are still too few is it a deadlock.
        core.scan_locked(&mut st)?;
        Ok(core.ready_after(head) < min)
    }

    /// Asks the poller to poll until records arrive or the lease ([`POLL_LEASE_NS`]) ends.
    fn arm(&self) {
        self.core
            .demand
            .armed_at
            .store(crate::link::now_ns(), Ordering::Release);
        self.core.demand.armed.store(true, Ordering::Release);
        self.core.arm_wq.wake_all();
    }

    /// `CXL_CCM_IOC_WAIT`.
    pub(crate) fn wait(&self, arg: &mut uapi::Wait) -> Result {
        if arg.min_records == 0
            || arg.flags & !uapi::WAIT_FLAG_DEADLOCK != 0
            || arg.reserved0 != 0
            || arg.reserved != [0; 2]
        {
            pr_warn_ratelimited!(
                "WAIT: min_records must be at least 1, flags known and reserved 0\n"
            );
            return Err(EINVAL);
        }
        let core = self.core();
        {
            let mut st = core.state.lock();
            core.scan_locked(&mut st)?;
            let head = RingIndex::new(arg.metadata_head);
            if head.is_before(st.md_head)
                || head.distance_from(st.md_head) > st.scanned.distance_from(st.md_head)
            {
                pr_warn_ratelimited!(
                    "WAIT: metadata head {} is not a received record\n",
                    arg.metadata_head
                );
                return Err(EINVAL);
            }
        }
        let min = arg.min_records;
        let head = arg.metadata_head;
        let deadline = match arg.timeout_ns {
            uapi::WAIT_FOREVER => None,
            ns => Some(crate::link::now_ns().saturating_add(ns)),
        };
        // Held while this call waits in a polled mode: the poller polls for it until it returns.
        let mut waiting = None;
        loop {
            // The outputs are filled in on a timeout too.
            let ready = core.ready_after(head);
            arg.ready = ready;
            arg.metadata_tail = core.scanned.load(Ordering::Acquire);
            if ready >= min {
                return Ok(());
            }
            let deadlock = arg.flags & uapi::WAIT_FLAG_DEADLOCK != 0;
            if deadlock && self.stuck(head, min)? {
                arg.ready = core.ready_after(head);
                arg.metadata_tail = core.scanned.load(Ordering::Acquire);
                return Err(kernel::errno::edeadlk());
            }
            if arg.timeout_ns == 0 {
                return Err(EAGAIN);
            }
            let left = match deadline {
                None => None,
                Some(d) => {
                    let now = crate::link::now_ns();
                    if now >= d {
                        return Err(kernel::errno::etimedout());
                    }
                    Some(crate::ns_to_jiffies(d - now))
                }
            };
            if let Some(code) = self.tenant_error()? {
                pr_warn_ratelimited!("WAIT: the device stopped the tenant (status {})\n", code);
                return Err(EIO);
            }
            // Polled modes: the poller polls and wakes us; wake at least every jiffy to re-check
            // the device and the deadline. AXLE_IRQ: the interrupt wakes us; the timeout is
            // only a watchdog against a lost interrupt.
            // A deadlock check must see the device block without an interrupt for it.
            let irq = core.cfg.mode == abi::MODE_AXLE_IRQ && !deadlock;
            let watchdog = if irq {
                crate::ns_to_jiffies(100_000_000)
            } else {
                if waiting.is_none() {
                    waiting = Some(Waiting::new(core));
                }
                1
            };
            let step = left.map_or(watchdog, |l| l.min(watchdog));
            let seen = core.interrupts.load(Ordering::Relaxed);
            let woken =
                || core.ready_after(head) >= min || core.interrupts.load(Ordering::Relaxed) != seen;
            let outcome = match core.wq.wait_interruptible_timeout(Some(step), woken) {
                // A restart would start the timeout again: a caller signalled more often than
                // its timeout would never time out. A finite wait ends with `EINTR` (outputs
                // written) and the caller waits again for what is left of its own deadline.
                Err(e) if e == ERESTARTSYS && deadline.is_some() => return Err(EINTR),
                r => r?,
            };
            if outcome == WaitOutcome::Done && core.ready_after(head) >= min {
                continue;
            }
            // A poller error leaves `broken` set: report it.
            core.progress()?;
        }
    }

    /// `poll()`: readable while records beyond the released metadata head are ready.
    pub(crate) fn poll(&self, table: &kernel::wait::PollTable) -> Result<u32> {
        let core = self.core();
        table.register(&core.wq);
        let mut st = core.state.lock();
        if core.scan_locked(&mut st).is_err() {
            return Ok(kernel::wait::POLL_ERROR);
        }
        if st.scanned != st.md_head {
            return Ok(kernel::wait::POLL_READABLE);
        }
        drop(st);
        if self.core.cfg.mode != abi::MODE_AXLE_IRQ {
            self.arm();
        }
        Ok(0)
    }

    /// `CXL_CCM_IOC_STATS`; `publish` copies the statistics out to the caller.
    ///
    /// With `STATS_RESET`, the counters are reset only after `publish` succeeded, so a caller
    /// that cannot be told the counters does not lose them. The reset then subtracts exactly what
    /// was reported: what was counted between the snapshot and the reset is kept. Resets are
    /// serialised (`stats_reset`), so no other reset runs between a snapshot and its commit and
    /// the subtraction is exact; the copy-out runs under no lock the data plane takes.
    pub(crate) fn stats(
        &self,
        arg: &uapi::Stats,
        publish: impl FnOnce(&uapi::Stats) -> Result,
    ) -> Result {
        if arg.flags & !uapi::STATS_RESET != 0 {
            pr_warn_ratelimited!("STATS: unknown flags\n");
            return Err(EINVAL);
        }
        let reset = arg.flags & uapi::STATS_RESET != 0;
        let _serial = reset.then(|| self.core.stats_reset.lock());
        let snap = self.stats_snapshot()?;
        publish(&snap.report(arg.flags, self.index))?;
        if reset {
            let mut st = self.core.state.lock();
            st.counters = st.counters.since(&snap.counters);
            st.baseline = snap.device;
            st.stall_base = snap.stall;
        }
        Ok(())
    }

    /// The counters now, and the baselines of the last reset.
    fn stats_snapshot(&self) -> Result<StatsSnapshot> {
        let (device, unpublished) = {
            let hw_guard = self.dev.hw.lock();
            let hw = hw_guard.as_ref().ok_or(ENODEV)?;
            let t = abi::tenant_regs_offset(self.index);
            let r = |o: usize| hw.regs.try_read64(t + o);
            let device = DeviceBaseline {
                records: r(abi::TREG_RECORDS)?,
                payload_bytes: r(abi::TREG_PAYLOAD_BYTES)?,
                credit_stalls: r(abi::TREG_CREDIT_STALLS)?,
                dma_batches: r(abi::TREG_DMA_BATCHES)?,
                busy_ns: r(abi::TREG_BUSY_NS)?,
                credit_wait_ns: r(abi::TREG_CREDIT_WAIT_NS)?,
                model_deficit_ns: r(abi::TREG_MODEL_DEFICIT_NS)?,
                model_late: r(abi::TREG_MODEL_LATE)?,
            };
            (device, r(abi::TREG_UNPUBLISHED)?)
        };
        let st = self.core.state.lock();
        let device = if streams(self.core.cfg.mode) {
            device
        } else {
            // RP and BS: the driver itself writes the rings, one copy per record.
            DeviceBaseline {
                records: st.producer.records,
                payload_bytes: st.producer.bytes,
                credit_stalls: 0,
                dma_batches: 0,
                ..device
            }
        };
        Ok(StatsSnapshot {
            counters: st.counters,
            device,
            baseline: st.baseline,
            stall: self.core.stall_ns.load(Ordering::Relaxed),
            stall_base: st.stall_base,
            interrupts: self.core.interrupts.load(Ordering::Relaxed),
            unpublished,
        })
    }

    /// `mmap()` of one of the tenant's objects.
    pub(crate) fn mmap(&self, vma: &VmArea) -> Result {
        let off = vma.offset().ok_or(EINVAL)? as u64;
        let len = vma.len() as u64;
        let l = self.core.layout;
        let cfg = &self.core.cfg;
        if vma.flags() & vma::flags::SHARED == 0 {
            pr_warn_ratelimited!("mmap: only MAP_SHARED mappings\n");
            return Err(EINVAL);
        }
        let (first, size, writable) = match off {
            uapi::MMAP_HEADERS => (0, HEADERS_BYTES, false),
            uapi::MMAP_METADATA => (l.metadata_offset, cfg.metadata_ring_bytes, false),
            uapi::MMAP_PAYLOAD => (l.payload_offset, cfg.payload_ring_bytes, false),
            uapi::MMAP_INPUT => (0, l.input_bytes, true),
            _ => {
                pr_warn_ratelimited!("mmap: unknown offset {:#x}\n", off);
                return Err(EINVAL);
            }
        };
        if len == 0 || len > size {
            pr_warn_ratelimited!("mmap: length {} at {:#x} exceeds {}\n", len, off, size);
            return Err(EINVAL);
        }
        if !writable {
            if vma.flags() & vma::flags::WRITE != 0 {
                pr_warn_ratelimited!("mmap: the rings are read-only\n");
                return Err(EPERM);
            }
            vma.clear_flags(vma::flags::MAYWRITE);
            return self
                .core
                .region
                .map_pages_to_user(vma, (first / PAGE_BYTES) as usize);
        }
        // Mapped page by page on fault, so that unbind can zap every page and refuse faults.
        self.dev.add_input_map(vma.file_mapping().ok_or(EINVAL)?)?;
        let pages = InputPages {
            dev: self.dev.clone(),
            phys: self.dev.mem_phys + l.input,
            len: l.input_bytes,
        };
        // Write-combining, like the driver's own mapping of device memory: never write-back,
        // whose lines the device (HDM-H) would not see. `LAUNCH` publishes the input range, which
        // drains the caller's write-combining buffers (its stores were made on this CPU, or on
        // another before a context switch, which drains them too).
        vma.set_cache_mode(CacheMode::WriteCombining);
        vma.set_fault_handler(Arc::new(pages, GFP_KERNEL)?)
    }

    /// Tears the tenant down; see the module documentation.
    fn teardown(&mut self) {
        drop(self.poller.take());
        let acked = self.disable();
        // After the disable: the device raises nothing more for this tenant.
        if let Some(slot) = self.dev.irq_tenants.lock().get_mut(self.index as usize) {
            *slot = None;
        }
        let sg = self.sg.take();
        if acked {
            drop(sg);
        } else {
            pr_err!(
                "tenant {}: the device did not acknowledge the disable; leaking its DMA region\n",
                self.index
            );
            core::mem::forget(sg);
            core::mem::forget(self.core.region.clone());
        }
    }
}

impl Drop for Tenant {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Zeroes `len` bytes of device memory at `offset`, a page at a time.
///
/// Done at `CONFIGURE` rather than at teardown: a teardown may find the device already unbound
/// or removed, or never see its disable acknowledged (the device may then still write), and the
/// memory may have been used under an earlier binding. Clearing before the tenant is enabled
/// is the one point that covers every way the previous holder ended.
fn clear_device_memory(mem: &impl SharedMem, offset: u64, len: u64) -> Result {
    static ZEROS: [u8; PAGE_BYTES as usize] = [0; PAGE_BYTES as usize];
    let start = usize::try_from(offset).map_err(|_| EINVAL)?;
    let len = usize::try_from(len).map_err(|_| EINVAL)?;
    let mut done = 0;
    while done < len {
        let n = (len - done).min(ZEROS.len());
        mem.write_bytes(start.checked_add(done).ok_or(EINVAL)?, &ZEROS[..n])?;
        done += n;
    }
    Ok(())
}

/// Initialises the ring headers in the region (the rest of it is zeroed at allocation).
fn write_headers(region: &PinnedPages, cfg: &TenantConfig, base: u32) -> Result {
    let md = offset_of!(RingHeaders, metadata);
    let pl = offset_of!(RingHeaders, payload);
    let launch = offset_of!(RingHeaders, launch);
    let w = |o: usize, v: u32| region.atomic_u32(o).map(|r| r.store(v, Ordering::Relaxed));
    w(md, base)?;
    w(md + 4, cfg.metadata.capacity())?;
    w(md + 8, abi::METADATA_RECORD_SIZE)?;
    w(pl, base)?;
    w(pl + 4, cfg.payload.capacity())?;
    w(pl + 8, cfg.streaming_factor.slot_size())?;
    w(launch, base)?;
    w(launch + 4, abi::LAUNCH_SLOTS)?;
    Ok(())
}
