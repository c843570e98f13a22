// SPDX-License-Identifier: GPL-2.0

//! One tenant as the device serves it: enable from the tenant registers and the shadowed
//! descriptor table, take launch packets from the tenant window, run STREAM_XFORM chunk by chunk
//! through the scheduler, and back-stream the results with the DMA executor.
//!
//! Everything the host wrote is input: a bad configuration, descriptor table or launch packet
//! becomes a status code (the tenant's `error` register, or an error record), never a fault.

use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;
use kernel::{memremap::MemRemap, prelude::*, shared_mem::SharedMem, sync::Arc};

use crate::abi::{self, DescriptorTable, DmaSegment, LaunchPacket, RingHeaders, SyncCompletion};
use crate::ccm_clock::CcmClock;
use crate::checksums::ChecksumTable;
use crate::host_dma::HostRegion;
use crate::model::attention::Attention;
use crate::model::dma_plan::{
    DmaExecutor, ExecError, ExecStats, Next, RegionLayout, ResultRecord, Ring, Step,
};
use crate::model::graph::{Graph, Pass};
use crate::model::kernel::Kernel;
use crate::model::knn::Knn;
use crate::model::latency::Operation;
use crate::model::posted::{PostedStore, PostedTails};
use crate::model::scheduler::{JobId, Policy, Scheduler};
use crate::model::sls::Sls;
use crate::model::ssb::Ssb;
use crate::model::xform::Xform;
use crate::pacer::{now_ns, Pacer};
use crate::proto::batcher::{Batcher, ReorderBuffer, Sequencer, StreamingFactor};
use crate::proto::credit::DeviceCredit;
use crate::proto::ring::{RingGeometry, RingIndex};
use crate::status::Status;
use crate::uthreads::{Done, Pool, Ticket};
use crate::visibility::Visibility;
use kernel::irq::SoftLine;

/// Records the executor can hold (closed and open batches): bounds a batch's records.
pub(crate) const QUEUE_RECORDS: usize = 4096;
/// The reorder window of in-order streaming, in results.
const REORDER_WINDOW: u32 = 64;
/// Jobs in flight per tenant: one per launch slot.
const JOBS: usize = abi::LAUNCH_SLOTS as usize;
/// Work items one service call dispatches before the engine looks at the other tenants.
const ITEMS_PER_TURN: u32 = 64;
/// Chunks of one tenant in flight on the µthreads, out of order.
pub(crate) const MAX_INFLIGHT: u32 = 64;

/// The executor's queues, on the heap.
pub(crate) struct HeapBuffers {
    records: KVVec<ResultRecord>,
    batch_end: KVVec<bool>,
    hold: KVec<Option<ResultRecord>>,
}

impl HeapBuffers {
    fn new(queue: usize, window: usize) -> Result<Self> {
        Ok(Self {
            records: KVVec::from_elem(ResultRecord::default(), queue, GFP_KERNEL)?,
            batch_end: KVVec::from_elem(false, queue, GFP_KERNEL)?,
            hold: KVec::from_elem(None, window, GFP_KERNEL)?,
        })
    }
}

crate::model::dma_plan::impl_exec_buffers!(impl [] for HeapBuffers);

/// The shadowed segments on the heap (6.12's `KVec` has no `AsRef<[T]>`).
pub(crate) struct Segments(KVec<DmaSegment>);

impl AsRef<[DmaSegment]> for Segments {
    fn as_ref(&self) -> &[DmaSegment] {
        &self.0
    }
}

type Exec = DmaExecutor<Segments, [u64; 1], HeapBuffers>;

/// A launch being computed.
#[derive(Clone, Copy, Default)]
struct Job {
    tag: u32,
    kernel: Option<Kernel>,
    input_base: u64,
    input_size: u32,
    output_base: u64,
    /// When the device took the launch, ns: the modelled CCM may start its chunks then.
    arrived_ns: u64,
}

/// What the device needs to serve one tenant.
pub(crate) struct Tenant {
    index: u32,
    /// The device's number (N of `cxl_ccm.N`), which names it in trace events.
    dev: u32,
    /// `MODE_AXLE`, `MODE_RP` or `MODE_BS`.
    mode: u32,
    /// Device memory and the register block (RP answers in the mailbox registers).
    mem: Arc<MemRemap>,
    regs: Arc<MemRemap>,
    /// RP: the last doorbell value handled, and the ENQUEUE whose kernel runs.
    mbox_seen: u32,
    mbox_pending: Option<u32>,
    /// AXLE_IRQ: the last interrupt raised, the causes not signalled yet, and the batches
    /// delivered since the last interrupt (one interrupt each).
    irq_seq: u32,
    irq_pending: u32,
    irq_batches: u32,
    in_order: bool,
    streaming_factor: u32,
    /// The tenant's device-memory partition.
    part_base: u64,
    part_end: u64,
    /// RP and BS: where each record's checksum goes.
    checksums: ChecksumTable,
    /// Offset of the tenant window in device memory.
    window: usize,
    next_launch: u32,
    region: HostRegion,
    launch_head_at: crate::model::dma_plan::SegAddr,
    exec: Exec,
    /// The tail stores of batches the modelled DMA engine has not delivered yet.
    posted: KBox<PostedTails>,
    sched: KBox<Scheduler<JOBS>>,
    jobs: KVec<Job>,
    /// Chunks handed to the µthreads and not yet collected.
    inflight: u32,
    /// Tells this tenant's completions from those of an earlier tenant in the same slot.
    generation: u64,
    launches: u64,
    /// Time with work on the device, and when the current busy stretch began.
    busy_ns: u64,
    busy_since: Option<u64>,
    /// The value last stored into `credit_blocked`, and since when it is nonzero.
    credit_blocked: u64,
    credit_blocked_since: Option<u64>,
    /// What the device can see of its memory, if it models HDM-H.
    vis: Option<Arc<Visibility>>,
    /// Host stores consumed before they were published (the `unpublished` register).
    unpublished: u64,
    /// Chunks the µthreads finished after the modelled CCM would have, and by how much in
    /// total (the `model_late` and `model_deficit_ns` registers).
    model_late: u64,
    model_deficit_ns: u64,
    /// Credit heads the host stored but has not published, and since when: stored and never
    /// published is a violation too, once it has lasted.
    credit_unseen: Option<((u32, u32), u64)>,
}

/// How long a stored credit head may stay unpublished before it counts as never published.
const CREDIT_UNSEEN_NS: u64 = 100_000_000;

fn r32(regs: &MemRemap, off: usize) -> Result<u32> {
    Ok(regs.atomic_u32(off)?.load(Ordering::Relaxed))
}

fn r64(regs: &MemRemap, off: usize) -> Result<u64> {
    Ok(regs.atomic_u64(off)?.load(Ordering::Relaxed))
}

/// Reports a host store consumed unpublished; `make check`'s kernel-log check fails on the
/// prefix.
fn violation(tenant: u32, what: &str, off: usize) {
    kernel::pr_warn_ratelimited!(
        "HDM-H violation: tenant {tenant} consumed {what} at device offset {off:#x} before the host published it\n"
    );
}

/// Whether `[base, base + len)` lies in `[lo, hi)`.
fn inside(base: u64, len: u64, lo: u64, hi: u64) -> bool {
    base >= lo && base.checked_add(len).is_some_and(|end| end <= hi)
}

/// What enabling a tenant fails with: the status for its `error` register, or `None` for an
/// allocation failure (reported as `STATUS_BAD_CONFIG` by [`Tenant::enable`]).
type EnableResult<T> = core::result::Result<T, Option<Status>>;

/// Reads a tenant register for [`Tenant::enable`]: an unreadable one is a bad configuration.
fn reg32(regs: &MemRemap, off: usize) -> EnableResult<u32> {
    r32(regs, off).map_err(|_| Some(abi::STATUS_BAD_CONFIG))
}

/// [`reg32`] for a 64-bit register.
fn reg64(regs: &MemRemap, off: usize) -> EnableResult<u64> {
    r64(regs, off).map_err(|_| Some(abi::STATUS_BAD_CONFIG))
}

/// The configuration the host wrote into a tenant's registers before enabling it.
struct TenantConfig {
    mode: u32,
    slot_size: u32,
    /// The streaming factor.
    sf: u32,
    md_slots: u32,
    pl_slots: u32,
    order: u32,
    schedule: u32,
    /// The index base: the first tag and sequence number.
    base: u32,
    part_base: u64,
    part_size: u64,
    desc_table: u64,
    desc_count: u32,
    checksums: ChecksumTable,
}

/// The tenant's host region as its shadowed descriptor table describes it.
struct Shadow {
    region: HostRegion,
    layout: RegionLayout<Segments>,
    /// Where the launch ring's head lies in the host region.
    launch_head_at: crate::model::dma_plan::SegAddr,
    /// 1 if the descriptor table was consumed before the host published it, else 0.
    unpublished: u64,
}

impl TenantConfig {
    /// Checks the mode, order and schedule, that the partition lies in device memory of
    /// `mem_size` bytes past the tenant windows (which end at `windows_end`), and that the
    /// descriptor table has 1 to `max_segments` segments and lies in the partition.
    fn check(
        &self,
        mem_size: u64,
        windows_end: u64,
        max_segments: u32,
    ) -> core::result::Result<(), Status> {
        let served = [
            abi::MODE_AXLE,
            abi::MODE_RP,
            abi::MODE_BS,
            abi::MODE_AXLE_IRQ,
        ];
        if !served.contains(&self.mode)
            || self.order > abi::ORDER_IN_ORDER
            || self.schedule > abi::SCHEDULE_FIFO
        {
            return Err(abi::STATUS_BAD_CONFIG);
        }
        if self.part_base < windows_end
            || !inside(self.part_base, self.part_size, windows_end, mem_size)
        {
            return Err(abi::STATUS_BAD_RANGE);
        }
        if self.desc_count == 0
            || self.desc_count > max_segments
            || !inside(
                self.desc_table,
                abi::descriptor_table_size(self.desc_count),
                self.part_base,
                self.part_base + self.part_size,
            )
        {
            return Err(abi::STATUS_BAD_DESCRIPTOR);
        }
        Ok(())
    }
}

impl Tenant {
    /// Enables tenant `index` from its registers (`treg` is the offset of its register page).
    ///
    /// On a refusal returns the status for the `error` register; an allocation failure is
    /// reported as `STATUS_BAD_CONFIG` too, so the host sees a refusal either way.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enable(
        index: u32,
        dev: u32,
        regs: &Arc<MemRemap>,
        mem: &Arc<MemRemap>,
        vis: Option<&Arc<Visibility>>,
        windows_end: u64,
        max_segments: u32,
        round_robin: bool,
        generation: u64,
    ) -> core::result::Result<KBox<Self>, Status> {
        Self::try_enable(
            index,
            dev,
            regs,
            mem,
            vis,
            windows_end,
            max_segments,
            round_robin,
            generation,
        )
        .map_err(|e| e.unwrap_or(abi::STATUS_BAD_CONFIG))
    }

    #[allow(clippy::too_many_arguments)]
    fn try_enable(
        index: u32,
        dev: u32,
        regs: &Arc<MemRemap>,
        mem: &Arc<MemRemap>,
        vis: Option<&Arc<Visibility>>,
        windows_end: u64,
        max_segments: u32,
        round_robin: bool,
        generation: u64,
    ) -> EnableResult<KBox<Self>> {
        let t = abi::tenant_regs_offset(index);
        let cfg = Self::read_config(regs, t)?;
        cfg.check(mem.size() as u64, windows_end, max_segments)
            .map_err(Some)?;
        let md = RingGeometry::new(cfg.md_slots).map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
        let pl = RingGeometry::new(cfg.pl_slots).map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
        let sfac = StreamingFactor::new(cfg.sf, cfg.slot_size)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
        let batcher = Batcher::new(sfac, pl, md).map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
        let shadow = Self::read_shadow(index, mem, vis, &cfg, md, pl)?;
        let in_order = cfg.order == abi::ORDER_IN_ORDER;
        let exec = Self::executor(shadow.layout, batcher, in_order, cfg.base, md, pl)?;
        let sched = Self::scheduler(&cfg, round_robin, in_order, index)?;
        let jobs = KVec::from_elem(Job::default(), JOBS, GFP_KERNEL).map_err(|_| None)?;
        let window = abi::tenant_window_offset(0, index) as usize;
        Self::seed_window(mem, vis, window, cfg.base)?;
        // The mailbox starts one behind the first sequence number: a doorbell left from an
        // earlier tenant is taken as already handled.
        let mbox_seen = reg32(regs, t + abi::TREG_MBOX_DOORBELL)?;
        Self::reset_status_regs(regs, t, cfg.base, shadow.unpublished)?;
        let tenant = Self {
            index,
            dev,
            mode: cfg.mode,
            mem: mem.clone(),
            regs: regs.clone(),
            mbox_seen,
            mbox_pending: None,
            irq_seq: cfg.base.wrapping_sub(1),
            irq_pending: 0,
            irq_batches: 0,
            in_order,
            streaming_factor: cfg.sf,
            part_base: cfg.part_base,
            part_end: cfg.part_base + cfg.part_size,
            checksums: cfg.checksums,
            window,
            next_launch: cfg.base,
            region: shadow.region,
            launch_head_at: shadow.launch_head_at,
            exec,
            posted: KBox::new(PostedTails::new(), GFP_KERNEL).map_err(|_| None)?,
            sched,
            jobs,
            inflight: 0,
            generation,
            launches: 0,
            busy_ns: 0,
            busy_since: None,
            credit_blocked: 0,
            credit_blocked_since: None,
            vis: vis.cloned(),
            unpublished: shadow.unpublished,
            model_late: 0,
            model_deficit_ns: 0,
            credit_unseen: None,
        };
        KBox::new(tenant, GFP_KERNEL).map_err(|_| None)
    }

    /// Reads the registers of the tenant whose register page is at `t`, in register order.
    fn read_config(regs: &MemRemap, t: usize) -> EnableResult<TenantConfig> {
        let get32 = |o: usize| reg32(regs, t + o);
        let get64 = |o: usize| reg64(regs, t + o);
        let mode = get32(abi::TREG_MODE)?;
        let slot_size = get32(abi::TREG_SLOT_SIZE)?;
        let sf = get32(abi::TREG_STREAMING_FACTOR)?;
        let md_slots = get32(abi::TREG_METADATA_SLOTS)?;
        let pl_slots = get32(abi::TREG_PAYLOAD_SLOTS)?;
        let order = get32(abi::TREG_STREAMING_ORDER)?;
        let schedule = get32(abi::TREG_SCHEDULE)?;
        let base = get32(abi::TREG_INDEX_BASE)?;
        let part_base = get64(abi::TREG_MEM_BASE)?;
        let part_size = get64(abi::TREG_MEM_SIZE)?;
        let desc_table = get64(abi::TREG_DESC_TABLE)?;
        let desc_count = get32(abi::TREG_DESC_COUNT)?;
        let checksums = ChecksumTable::new(
            get64(abi::TREG_CHECKSUM_TABLE)?,
            get32(abi::TREG_CHECKSUM_ENTRIES)?,
            get64(abi::TREG_CHECKSUM_BASE)?,
            part_base,
            part_base.saturating_add(part_size),
        )
        .map_err(Some)?;
        Ok(TenantConfig {
            mode,
            slot_size,
            sf,
            md_slots,
            pl_slots,
            order,
            schedule,
            base,
            part_base,
            part_size,
            desc_table,
            desc_count,
            checksums,
        })
    }

    /// Reads tenant `index`'s shadowed descriptor table from device memory (reporting it if the
    /// host had not published it), maps its segments and lays the rings `md` and `pl` out on
    /// them.
    fn read_shadow(
        index: u32,
        mem: &MemRemap,
        vis: Option<&Arc<Visibility>>,
        cfg: &TenantConfig,
        md: RingGeometry,
        pl: RingGeometry,
    ) -> EnableResult<Shadow> {
        let at = cfg.desc_table as usize;
        let (table, segs) = Self::read_descriptors(mem, at, cfg.desc_count)?;
        let table_bytes = size_of::<DescriptorTable>() + segs.len() * size_of::<DmaSegment>();
        let mut unpublished = 0;
        if vis.is_some_and(|v| !v.consistent(at, table_bytes)) {
            violation(index, "the descriptor table", at);
            unpublished += 1;
        }
        let region = HostRegion::map(&segs).map_err(|_| Some(abi::STATUS_DMA_FAULT))?;
        let layout = RegionLayout::new(&table, Segments(segs), md, pl, cfg.slot_size)
            .map_err(|_| Some(abi::STATUS_BAD_DESCRIPTOR))?;
        let launch_head_off = layout.headers_offset() + offset_of!(RingHeaders, launch) as u64;
        let launch_head_at = layout
            .translate(launch_head_off, 4)
            .map_err(|_| Some(abi::STATUS_BAD_DESCRIPTOR))?;
        Ok(Shadow {
            region,
            layout,
            launch_head_at,
            unpublished,
        })
    }

    /// Reads the descriptor table at device-memory offset `at` and the `count` segments after
    /// it.
    fn read_descriptors(
        mem: &MemRemap,
        at: usize,
        count: u32,
    ) -> EnableResult<(DescriptorTable, KVec<DmaSegment>)> {
        let mut raw = [0u8; size_of::<DescriptorTable>()];
        mem.read_bytes(at, &mut raw)
            .map_err(|_| Some(abi::STATUS_BAD_DESCRIPTOR))?;
        let table = DescriptorTable::from_bytes(&raw);
        let mut segs = KVec::with_capacity(count as usize, GFP_KERNEL).map_err(|_| None)?;
        for i in 0..count as usize {
            let mut s = [0u8; size_of::<DmaSegment>()];
            let off = at + size_of::<DescriptorTable>() + i * size_of::<DmaSegment>();
            mem.read_bytes(off, &mut s)
                .map_err(|_| Some(abi::STATUS_BAD_DESCRIPTOR))?;
            segs.push(DmaSegment::from_bytes(&s), GFP_KERNEL)
                .map_err(|_| None)?;
        }
        Ok((table, segs))
    }

    /// The tenant's DMA executor: with a reorder window from tag `base` if `in_order`, and the
    /// credits of the rings `pl` and `md` from index `base`.
    fn executor(
        layout: RegionLayout<Segments>,
        batcher: Batcher,
        in_order: bool,
        base: u32,
        md: RingGeometry,
        pl: RingGeometry,
    ) -> EnableResult<Exec> {
        let sequencer = if in_order {
            let window =
                RingGeometry::new(REORDER_WINDOW).map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
            Sequencer::InOrder(
                ReorderBuffer::new(window, [0u64; 1], base)
                    .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?,
            )
        } else {
            Sequencer::OutOfOrder
        };
        let buffers = HeapBuffers::new(QUEUE_RECORDS, REORDER_WINDOW as usize).map_err(|_| None)?;
        Exec::new(
            layout,
            batcher,
            sequencer,
            DeviceCredit::new(pl, RingIndex::new(base)),
            DeviceCredit::new(md, RingIndex::new(base)),
            buffers,
        )
        .map_err(|_| Some(abi::STATUS_BAD_CONFIG))
    }

    /// The chunk scheduler of tenant `index`, its sequence starting at the index base.
    fn scheduler(
        cfg: &TenantConfig,
        round_robin: bool,
        in_order: bool,
        index: u32,
    ) -> EnableResult<KBox<Scheduler<JOBS>>> {
        // In-order streaming wants chunks in launch order; out of order, round-robin lets a short
        // launch overtake a long one (AXLE Table III).
        let policy = if round_robin && !in_order && cfg.schedule == abi::SCHEDULE_DEFAULT {
            Policy::RoundRobin
        } else {
            Policy::Fifo
        };
        let mut sched = KBox::new(Scheduler::new(policy), GFP_KERNEL).map_err(|_| None)?;
        let tenant16 = index as u16;
        sched
            .reset_tenant(tenant16, cfg.base)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?;
        Ok(sched)
    }

    /// Seeds the tenant window at `window` for index base `base`: the launch slots one lap
    /// behind, so no slot looks written before the host writes it, and the sync completion one
    /// behind the first tag. Flushes them and marks them seen (the device wrote them itself).
    fn seed_window(
        mem: &MemRemap,
        vis: Option<&Arc<Visibility>>,
        window: usize,
        base: u32,
    ) -> EnableResult<()> {
        for slot in 0..abi::LAUNCH_SLOTS {
            let off = window + abi::TWIN_LAUNCH + slot as usize * size_of::<LaunchPacket>();
            mem.atomic_u32(off)
                .map_err(|_| Some(abi::STATUS_BAD_RANGE))?
                .store(abi::launch_slot_initial_tag(slot, base), Ordering::Relaxed);
        }
        // The sync completion starts one behind the first tag.
        let done_tag = window + abi::TWIN_COMPLETION + offset_of!(SyncCompletion, done_tag);
        mem.atomic_u32(done_tag)
            .map_err(|_| Some(abi::STATUS_BAD_RANGE))?
            .store(base.wrapping_sub(1), Ordering::Relaxed);
        // Write-combining memory: out of this CPU's buffers before the tenant is enabled. The
        // device sees its own stores at once.
        kernel::barrier::wmb();
        if let Some(v) = vis {
            for slot in 0..abi::LAUNCH_SLOTS {
                v.see(
                    window + abi::TWIN_LAUNCH + slot as usize * size_of::<LaunchPacket>(),
                    4,
                );
            }
            v.see(done_tag, 4);
        }
        Ok(())
    }

    /// Resets the status registers of the tenant whose register page is at `t`: the interrupt
    /// sequence and the mailbox one behind `base`, no credit stall, and `unpublished`.
    fn reset_status_regs(
        regs: &MemRemap,
        t: usize,
        base: u32,
        unpublished: u64,
    ) -> EnableResult<()> {
        regs.atomic_u32(t + abi::TREG_IRQ_SEQ)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?
            .store(base.wrapping_sub(1), Ordering::Release);
        regs.atomic_u32(t + abi::TREG_MBOX_DONE)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?
            .store(base.wrapping_sub(1), Ordering::Release);
        regs.atomic_u64(t + abi::TREG_CREDIT_BLOCKED)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?
            .store(0, Ordering::Release);
        regs.atomic_u64(t + abi::TREG_UNPUBLISHED)
            .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?
            .store(unpublished, Ordering::Release);
        // The counters count since enable: zero before the tenant is reported enabled, or a
        // `STATS` before the first pass would read the previous tenant's (and a reset then
        // would take them as its baseline, which later values fall below).
        for off in [
            abi::TREG_LAUNCHES,
            abi::TREG_RECORDS,
            abi::TREG_PAYLOAD_BYTES,
            abi::TREG_CREDIT_STALLS,
            abi::TREG_DMA_BATCHES,
            abi::TREG_BUSY_NS,
            abi::TREG_CREDIT_WAIT_NS,
            abi::TREG_MODEL_LATE,
            abi::TREG_MODEL_DEFICIT_NS,
        ] {
            regs.atomic_u64(t + off)
                .map_err(|_| Some(abi::STATUS_BAD_CONFIG))?
                .store(0, Ordering::Release);
        }
        Ok(())
    }

    /// The executor's counters.
    pub(crate) fn stats(&self) -> ExecStats {
        self.exec.stats()
    }

    /// Launch packets taken.
    pub(crate) fn launches(&self) -> u64 {
        self.launches
    }

    /// Chunks finished later than the model, and the total of their delays, ns.
    pub(crate) fn model_deficit(&self) -> (u64, u64) {
        (self.model_late, self.model_deficit_ns)
    }

    /// Counts a chunk the µthreads finished after its modelled time.
    pub(crate) fn note_finished(&mut self, done: &Done) {
        if let Some(late) = done
            .ticket
            .ready_ns
            .and_then(|ready| done.finished_ns.checked_sub(ready))
            .filter(|&ns| ns > 0)
        {
            self.model_late += 1;
            self.model_deficit_ns = self.model_deficit_ns.saturating_add(late);
        }
    }

    /// Host stores this tenant consumed before the host published them.
    pub(crate) fn unpublished(&self) -> u64 {
        self.unpublished
    }

    /// Counts and reports a consumed range whose last host store was not published.
    fn unpublished_at(&mut self, what: &str, off: usize) {
        violation(self.index, what, off);
        self.unpublished += 1;
    }

    /// The launch tag the device sees in the slot at `off`: from memory, or, modelling HDM-H,
    /// only once the host published it.
    fn visible_tag(&self, mem: &MemRemap, off: usize) -> core::result::Result<u32, Status> {
        let word = mem.atomic_u32(off).map_err(|_| abi::STATUS_BAD_RANGE)?;
        // Acquire: pairs with the host's write barrier between the packet and its tag.
        let live = word.load(Ordering::Acquire);
        Ok(match &self.vis {
            // Not visible yet reads as the previous lap's tag: no packet.
            Some(v) => v
                .read_u32(off)
                .unwrap_or(live.wrapping_sub(abi::LAUNCH_SLOTS)),
            None => live,
        })
    }

    /// The credit heads the device sees; modelling HDM-H, the published ones, and a head
    /// stored but left unpublished for [`CREDIT_UNSEEN_NS`] counts as a violation.
    fn visible_heads(&mut self, mem: &MemRemap) -> core::result::Result<(u32, u32), Status> {
        let credit = self.window + abi::TWIN_CREDIT;
        let md = mem.atomic_u32(credit).map_err(|_| abi::STATUS_BAD_RANGE)?;
        let pl = mem
            .atomic_u32(credit + 4)
            .map_err(|_| abi::STATUS_BAD_RANGE)?;
        // Acquire: the host stored each head after it finished reading the slots.
        let live = (md.load(Ordering::Acquire), pl.load(Ordering::Acquire));
        let Some(v) = self.vis.clone() else {
            return Ok(live);
        };
        let seen = (
            v.read_u32(credit).unwrap_or(0),
            v.read_u32(credit + 4).unwrap_or(0),
        );
        match self.credit_unseen {
            _ if seen == live => self.credit_unseen = None,
            Some((heads, since)) if heads == live => {
                if now_ns().saturating_sub(since) >= CREDIT_UNSEEN_NS {
                    self.unpublished_at("a credit head", credit);
                    self.credit_unseen = None;
                    // Counted once; from now on the device takes it, as hardware eventually
                    // would when the line is evicted.
                    v.see(credit, 8);
                    return Ok(live);
                }
            }
            _ => self.credit_unseen = Some((live, now_ns())),
        }
        Ok(seen)
    }

    /// Nanoseconds this tenant had work on the device, including a stretch in progress.
    pub(crate) fn busy_ns(&self) -> u64 {
        let running = self
            .busy_since
            .map_or(0, |since| now_ns().saturating_sub(since));
        self.busy_ns.saturating_add(running)
    }

    /// Starts or ends a busy stretch: the tenant has work while jobs are queued or computing,
    /// or results wait to be streamed (or, in RP, a mailbox command is open).
    fn account_busy(&mut self) {
        // Results held back for credit are the host's to release: the device waits, idle, as
        // it does for an RP or BS host that has not loaded its results yet.
        let busy = !self.sched.is_empty()
            || self.inflight > 0
            || (!self.exec.is_idle() && self.credit_blocked == 0)
            || !self.posted.is_empty()
            || self.mbox_pending.is_some();
        match (busy, self.busy_since) {
            (true, None) => self.busy_since = Some(now_ns()),
            (false, Some(since)) => {
                self.busy_ns = self.busy_ns.saturating_add(now_ns().saturating_sub(since));
                self.busy_since = None;
            }
            _ => {}
        }
    }

    /// Serves the tenant once: takes launches, hands up to a turn's worth of chunks to the
    /// µthreads, and streams what has credit. Returns whether anything happened, or the status
    /// that stops the tenant.
    pub(crate) fn service(
        &mut self,
        mem: &MemRemap,
        pacer: &mut Pacer,
        pool: &Pool,
        clock: Option<&mut CcmClock>,
        line: &SoftLine,
    ) -> core::result::Result<bool, Status> {
        let mut busy = if self.mode == abi::MODE_RP {
            self.intake_mailbox()?
        } else {
            self.intake(mem, pacer)?
        };
        busy |= self.dispatch(pool, clock)?;
        if self.streams() {
            busy |= self.stream(mem, pacer)?;
            busy |= self.deliver_due()?;
        }
        if self.mode == abi::MODE_AXLE_IRQ {
            self.raise(line)?;
        }
        self.account_busy();
        Ok(busy)
    }

    /// Whether results are back-streamed by DMA (AXLE, AXLE_IRQ).
    fn streams(&self) -> bool {
        self.mode == abi::MODE_AXLE || self.mode == abi::MODE_AXLE_IRQ
    }

    /// AXLE_IRQ: raises an interrupt for the causes pending, if the host enabled them: one per
    /// batch streamed since the last (Table III's "per DMA request": the DMA that advances the
    /// metadata tail), `irq_seq` counting them. The host pays each one's handling on its own
    /// interrupt path (`REG_LINK_IRQ_NS`), as a real interrupt costs the host and not the
    /// device. The `irq_coalesce` variant keeps one outstanding: the next waits for the ack.
    fn raise(&mut self, line: &SoftLine) -> core::result::Result<(), Status> {
        if self.irq_pending == 0 {
            return Ok(());
        }
        let t = abi::tenant_regs_offset(self.index);
        let reg = |o: usize| {
            self.regs
                .atomic_u32(t + o)
                .map_err(|_| abi::STATUS_BAD_CONFIG)
        };
        let causes = self.irq_pending & reg(abi::TREG_IRQ_CTRL)?.load(Ordering::Relaxed);
        if causes == 0 {
            return Ok(());
        }
        let count = if crate::irq_coalesce() {
            if reg(abi::TREG_IRQ_ACK)?.load(Ordering::Acquire) != self.irq_seq {
                return Ok(());
            }
            1
        } else {
            self.irq_batches.max(1)
        };
        reg(abi::TREG_IRQ_CAUSE)?.store(causes, Ordering::Relaxed);
        self.irq_seq = self.irq_seq.wrapping_add(count);
        reg(abi::TREG_IRQ_SEQ)?.store(self.irq_seq, Ordering::Release);
        self.irq_pending = 0;
        self.irq_batches = 0;
        line.raise().map_err(|_| abi::STATUS_ABORTED)
    }

    /// The generation its µthread tickets carry.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Room in the executor for one more completion.
    fn has_room(&self) -> bool {
        self.exec.pending() + self.exec.held() + (self.inflight as usize) < QUEUE_RECORDS
    }

    fn launch_slot_offset(&self, tag: u32) -> usize {
        self.window + abi::TWIN_LAUNCH + abi::launch_slot(tag) as usize * size_of::<LaunchPacket>()
    }

    /// Takes the launch packets the host has written, in tag order.
    fn intake(&mut self, mem: &MemRemap, pacer: &mut Pacer) -> core::result::Result<bool, Status> {
        let mut taken = false;
        loop {
            let tag = self.next_launch;
            let off = self.launch_slot_offset(tag);
            if self.visible_tag(mem, off)? != tag {
                break;
            }
            // Write-combining memory: the packet loads after the tag load.
            kernel::barrier::rmb();
            // The job slot of this tag may still hold the launch 64 tags earlier: the host can
            // reuse a launch slot as soon as the packet is taken, before its job finishes.
            let job_free = self
                .jobs
                .get(abi::launch_slot(tag) as usize)
                .is_some_and(|j| j.kernel.is_none());
            if !job_free || !self.has_room() {
                // Back-pressure on the launch ring: the host blocks once every slot is full.
                break;
            }
            let mut raw = [0u8; size_of::<LaunchPacket>()];
            mem.read_bytes(off, &mut raw)
                .map_err(|_| abi::STATUS_BAD_RANGE)?;
            if self
                .vis
                .as_ref()
                .is_some_and(|v| !v.consistent(off, raw.len()))
            {
                self.unpublished_at("a launch packet", off);
            }
            let packet = LaunchPacket::from_bytes(&raw);
            let alone = !matches!(self.check_packet(&packet), Ok(Some(_)));
            if alone && self.in_order && !self.sched.is_empty() {
                // In order, a launch completed without the engine must follow every chunk of
                // the launches before it: wait until they are all dispatched.
                break;
            }
            self.accept(&packet)?;
            self.next_launch = tag.wrapping_add(1);
            self.launches += 1;
            taken = true;
            if self.streams() {
                // The slot is free again: tell the host (a DMA of the launch head). A BS host
                // is stalled until the completion, which frees the slot too.
                pacer.charge(Operation::Dma {
                    bytes: 4,
                    segments: 1,
                });
                self.region
                    .store_u32(self.launch_head_at, self.next_launch)
                    .map_err(|_| abi::STATUS_DMA_FAULT)?;
            }
        }
        Ok(taken)
    }

    /// Validates a packet and queues its job, or completes it at once with an error or empty
    /// final record.
    fn accept(&mut self, p: &LaunchPacket) -> core::result::Result<(), Status> {
        match self.check_packet(p) {
            Ok(Some(mut job)) => {
                job.arrived_ns = now_ns();
                let (at, len) = (job.input_base as usize, job.input_size as usize);
                if self.vis.as_ref().is_some_and(|v| !v.consistent(at, len)) {
                    self.unpublished_at("an input", at);
                }
                let chunks = job.kernel.map_or(0, |k| k.chunk_count(job.input_size));
                let id = JobId {
                    tenant: self.index as u16,
                    tag: p.tag,
                };
                self.sched
                    .submit(id, chunks)
                    .map_err(|_| abi::STATUS_BAD_PACKET)?;
                if let Some(slot) = self.jobs.get_mut(abi::launch_slot(p.tag) as usize) {
                    *slot = job;
                }
                Ok(())
            }
            Ok(None) if !self.streams() => self.complete_host(p.tag, 0, 0),
            Err(status) if !self.streams() => self.complete_host(p.tag, status, 0),
            Ok(None) => self.complete_alone(p.tag, 0),
            Err(status) => self.complete_alone(p.tag, status),
        }
    }

    /// The job of a valid packet, `None` for an empty input, or the status of a bad one.
    fn check_packet(&self, p: &LaunchPacket) -> core::result::Result<Option<Job>, Status> {
        let kernels = [
            abi::KERNEL_STREAM_XFORM,
            abi::KERNEL_KNN,
            abi::KERNEL_SSB_Q1_1,
            abi::KERNEL_SSB_Q1_2,
            abi::KERNEL_DLRM_SLS,
            abi::KERNEL_PAGERANK,
            abi::KERNEL_SSSP,
            abi::KERNEL_LLM_ATTENTION,
        ];
        if !kernels.contains(&p.kernel_id) {
            return Err(abi::STATUS_BAD_KERNEL);
        }
        // SYNC is the BS flow, and the BS flow is nothing but SYNC launches.
        let sync = p.flags & abi::LAUNCH_FLAG_SYNC != 0;
        if p.flags & !abi::LAUNCH_FLAGS_KNOWN != 0
            || sync != (self.mode == abi::MODE_BS)
            || u32::from(p.tenant) != self.index
        {
            return Err(abi::STATUS_BAD_PACKET);
        }
        let sf = self.streaming_factor;
        let (kernel, size) = if p.kernel_id == abi::KERNEL_KNN {
            let knn =
                Knn::from_packet(&p.args, p.arg_size, sf, p.input_size).map_err(|e| e.status())?;
            (Kernel::Knn(knn), p.input_size)
        } else if p.kernel_id == abi::KERNEL_PAGERANK || p.kernel_id == abi::KERNEL_SSSP {
            let pass = if p.kernel_id == abi::KERNEL_SSSP {
                Pass::MinPlusWeight
            } else {
                Pass::Sum
            };
            let g = Graph::from_packet(pass, &p.args, p.arg_size, sf, p.input_size)
                .map_err(|e| e.status())?;
            (Kernel::Graph(g), p.input_size)
        } else if p.kernel_id == abi::KERNEL_LLM_ATTENTION {
            let a = Attention::from_packet(&p.args, p.arg_size, sf, p.input_size)
                .map_err(|e| e.status())?;
            (Kernel::Attention(a), p.input_size)
        } else if p.kernel_id == abi::KERNEL_DLRM_SLS {
            let sls =
                Sls::from_packet(&p.args, p.arg_size, sf, p.input_size).map_err(|e| e.status())?;
            (Kernel::Sls(sls), p.input_size)
        } else if p.kernel_id != abi::KERNEL_STREAM_XFORM {
            let ssb =
                Ssb::from_packet(&p.args, p.arg_size, sf, p.input_size).map_err(|e| e.status())?;
            (Kernel::Ssb(ssb), p.input_size)
        } else {
            let xform = Xform::from_packet(&p.args, p.arg_size, sf).map_err(|e| e.status())?;
            let size = Xform::check_input(p.input_size as usize).map_err(|e| e.status())?;
            (Kernel::Xform(xform), size)
        };
        let out = u64::from(kernel.output_bytes(size));
        if !inside(p.input_base, u64::from(size), self.part_base, self.part_end)
            || !inside(p.output_base, out, self.part_base, self.part_end)
        {
            return Err(abi::STATUS_BAD_RANGE);
        }
        if size == 0 {
            return Ok(None);
        }
        Ok(Some(Job {
            tag: p.tag,
            kernel: Some(kernel),
            input_base: p.input_base,
            input_size: size,
            output_base: p.output_base,
            arrived_ns: 0,
        }))
    }

    /// RP: handles a new mailbox command, if the doorbell rang and no kernel is running.
    fn intake_mailbox(&mut self) -> core::result::Result<bool, Status> {
        if self.mbox_pending.is_some() {
            return Ok(false);
        }
        let t = abi::tenant_regs_offset(self.index);
        let reg = |o: usize| {
            self.regs
                .atomic_u32(t + o)
                .map_err(|_| abi::STATUS_BAD_CONFIG)
        };
        // Acquire: the command and its argument were written before the doorbell.
        let bell = reg(abi::TREG_MBOX_DOORBELL)?.load(Ordering::Acquire);
        if bell == self.mbox_seen {
            return Ok(false);
        }
        self.mbox_seen = bell;
        let cmd = reg(abi::TREG_MBOX_CMD)?.load(Ordering::Relaxed);
        let arg = reg(abi::TREG_MBOX_ARG)?.load(Ordering::Relaxed);
        self.mbox_pending = Some(bell);
        match cmd {
            abi::MBOX_CMD_NOP | abi::MBOX_CMD_DEQUEUE => self.complete_host(arg, 0, 0)?,
            abi::MBOX_CMD_ENQUEUE => {
                let off = self.launch_slot_offset(arg);
                let mut raw = [0u8; size_of::<LaunchPacket>()];
                self.mem
                    .read_bytes(off, &mut raw)
                    .map_err(|_| abi::STATUS_BAD_RANGE)?;
                // The doorbell hands the packet over as a tag does in AXLE.
                if self
                    .vis
                    .as_ref()
                    .is_some_and(|v| !v.consistent(off, raw.len()))
                {
                    self.unpublished_at("a launch packet", off);
                }
                let packet = LaunchPacket::from_bytes(&raw);
                let job_free = self
                    .jobs
                    .get(abi::launch_slot(arg) as usize)
                    .is_some_and(|j| j.kernel.is_none());
                if packet.tag != arg || !job_free {
                    self.complete_host(arg, abi::STATUS_BAD_PACKET, 0)?;
                } else {
                    self.launches += 1;
                    self.accept(&packet)?;
                }
            }
            _ => self.complete_host(arg, abi::STATUS_BAD_COMMAND, 0)?,
        }
        Ok(true)
    }

    /// RP and BS: answers a launch (or a mailbox command) at completion. BS writes the sync
    /// completion in device memory; RP the mailbox registers. Status and result first, then the
    /// word the host polls, with release.
    fn complete_host(
        &mut self,
        tag: u32,
        status: Status,
        bytes: u64,
    ) -> core::result::Result<(), Status> {
        if self.mode == abi::MODE_BS {
            let at = self.window + abi::TWIN_COMPLETION;
            let m = &self.mem;
            let fail = |_| abi::STATUS_BAD_RANGE;
            m.atomic_u32(at + offset_of!(SyncCompletion, status))
                .map_err(fail)?
                .store(u32::from(status), Ordering::Relaxed);
            m.atomic_u64(at + offset_of!(SyncCompletion, result_bytes))
                .map_err(fail)?
                .store(bytes, Ordering::Relaxed);
            // Write-combining memory: the status and the result before the tag, and the tag
            // out of the buffer.
            kernel::barrier::wmb();
            m.atomic_u32(at + offset_of!(SyncCompletion, done_tag))
                .map_err(fail)?
                .store(tag, Ordering::Release);
            kernel::barrier::wmb();
            return Ok(());
        }
        let Some(seq) = self.mbox_pending.take() else {
            return Err(abi::STATUS_BAD_COMMAND);
        };
        let t = abi::tenant_regs_offset(self.index);
        let r = &self.regs;
        let fail = |_| abi::STATUS_BAD_CONFIG;
        r.atomic_u32(t + abi::TREG_MBOX_STATUS)
            .map_err(fail)?
            .store(u32::from(status), Ordering::Relaxed);
        r.atomic_u64(t + abi::TREG_MBOX_RET)
            .map_err(fail)?
            .store(bytes, Ordering::Relaxed);
        // The checksums went to device memory (write-combining), the answer goes to a register:
        // the memory stores out of the buffers first.
        kernel::barrier::wmb();
        r.atomic_u32(t + abi::TREG_MBOX_DONE)
            .map_err(fail)?
            .store(seq, Ordering::Release);
        Ok(())
    }

    /// Completes a launch that has no chunk: one final record, with an error status or empty.
    fn complete_alone(&mut self, tag: u32, status: Status) -> core::result::Result<(), Status> {
        let seq = self
            .sched
            .take_seq(self.index as u16)
            .map_err(|_| abi::STATUS_BAD_CONFIG)?;
        let error = if status != 0 { abi::MD_FLAG_ERROR } else { 0 };
        let rec = ResultRecord {
            tag,
            length: 0,
            result_offset: 0,
            checksum: 0,
            flags: abi::MD_FLAG_FINAL | error,
            status,
            src: 0,
        };
        self.exec.complete(seq, rec).map_err(exec_status)
    }

    /// Hands up to a turn's worth of chunks to the µthreads.
    fn dispatch(
        &mut self,
        pool: &Pool,
        mut clock: Option<&mut CcmClock>,
    ) -> core::result::Result<bool, Status> {
        // In order, every result in flight or held must fit the reorder window.
        let cap = if self.in_order {
            REORDER_WINDOW.saturating_sub(self.exec.held() as u32)
        } else {
            MAX_INFLIGHT
        };
        let mut sent = 0;
        while sent < ITEMS_PER_TURN && self.inflight < cap && self.has_room() {
            let Some(item) = self.sched.dispatch() else {
                break;
            };
            let job = *self
                .jobs
                .get(abi::launch_slot(item.job.tag) as usize)
                .ok_or(abi::STATUS_BAD_PACKET)?;
            let kernel = job.kernel.ok_or(abi::STATUS_BAD_PACKET)?;
            if job.tag != item.job.tag {
                // The slot holds another launch: the intake's slot check failed.
                return Err(abi::STATUS_ABORTED);
            }
            let span = kernel
                .chunk(job.input_size, item.chunk)
                .ok_or(abi::STATUS_BAD_ARGS)?;
            let work = kernel
                .chunk_work(job.input_size, item.chunk)
                .ok_or(abi::STATUS_BAD_ARGS)?;
            let ticket = Ticket {
                tenant: self.index,
                generation: self.generation,
                item,
                kernel,
                input_base: job.input_base,
                output: job.output_base + u64::from(span.offset),
                offset: span.offset,
                length: span.length,
                ready_ns: clock.as_mut().map(|c| c.schedule(job.arrived_ns, work)),
            };
            pool.submit(ticket).map_err(|_| abi::STATUS_ABORTED)?;
            self.inflight += 1;
            sent += 1;
        }
        if sent > 0 {
            pool.kick();
        }
        if self.sched.is_empty() && self.inflight == 0 {
            // Nothing more is coming for now: do not hold a partial batch back.
            self.exec.flush();
        }
        Ok(sent > 0)
    }

    /// Takes a chunk the µthreads computed and hands its record to the executor.
    pub(crate) fn finish(&mut self, done: &Done) -> core::result::Result<(), Status> {
        self.inflight = self.inflight.saturating_sub(1);
        let t = &done.ticket;
        let checksum = done.result?;
        let slot = abi::launch_slot(t.item.job.tag) as usize;
        let completion = self
            .sched
            .complete(t.item.job)
            .map_err(|_| abi::STATUS_BAD_PACKET)?;
        let last = if self.in_order {
            t.item.last
        } else {
            completion.job_done
        };
        if !self.streams() {
            // RP and BS: the record's checksum waits next to the results, before the answer.
            self.checksums
                .store(&self.mem, t.output, t.length, checksum)?;
        }
        if completion.job_done {
            let job = self.jobs.get(slot).copied().unwrap_or_default();
            if let Some(j) = self.jobs.get_mut(slot) {
                *j = Job::default();
            }
            if !self.streams() {
                // RP and BS: the results stay in device memory; answer at completion.
                let bytes = job.kernel.map_or(0, |k| k.output_bytes(job.input_size));
                return self.complete_host(t.item.job.tag, 0, u64::from(bytes));
            }
        }
        if !self.streams() {
            return Ok(());
        }
        let rec = ResultRecord {
            tag: t.item.job.tag,
            length: t.length,
            result_offset: u64::from(t.offset),
            checksum,
            flags: if last { abi::MD_FLAG_FINAL } else { 0 },
            status: 0,
            src: t.output,
        };
        self.exec.complete(t.item.seq, rec).map_err(exec_status)
    }

    /// Streams every closed batch that has credit; reads the credit line when short, and
    /// reports in `credit_blocked` whether a batch is left waiting for credit, under which heads.
    fn stream(&mut self, mem: &MemRemap, pacer: &mut Pacer) -> core::result::Result<bool, Status> {
        let mut streamed = false;
        let mut reread = None;
        let blocked = loop {
            match self.exec.begin_batch(now_ns()).map_err(exec_status)? {
                Next::Idle => break 0,
                Next::WaitCredit(_) => {
                    if let Some((m, p)) = reread {
                        break abi::credit_blocked(m, p);
                    }
                    // The heads are in device memory, next to the engine: a local load.
                    let (m, p) = self.visible_heads(mem)?;
                    self.exec.receive_heads(m, p).map_err(exec_status)?;
                    reread = Some((m, p));
                }
                Next::Stream(_) => {
                    self.perform(mem, pacer)?;
                    self.exec.end_batch().map_err(exec_status)?;
                    streamed = true;
                    reread = None;
                }
            }
        };
        // A blocked device says so only once every batch it streamed has landed: the host
        // takes "blocked at the heads I published" to mean that nothing more can arrive before
        // it releases (the deadlock test of WAIT). On PCIe the register read that sees the
        // state cannot pass the device's earlier posted writes; holding the state back until
        // the tails are delivered keeps that order here.
        let blocked = if self.posted.is_empty() { blocked } else { 0 };
        if blocked != self.credit_blocked {
            self.trace_credit(blocked);
            self.credit_blocked = blocked;
            let at = abi::tenant_regs_offset(self.index) + abi::TREG_CREDIT_BLOCKED;
            // Release: the records streamed before are visible before the host sees the state.
            self.regs
                .atomic_u64(at)
                .map_err(|_| abi::STATUS_BAD_CONFIG)?
                .store(blocked, Ordering::Release);
        }
        Ok(streamed)
    }

    /// Traces a change of the credit state to `blocked` (0: streaming again). A stall under
    /// new heads that still give too little credit is traced again, and lasts since the first.
    fn trace_credit(&mut self, blocked: u64) {
        let now = now_ns();
        let stalled_ns = match (blocked, self.credit_blocked_since) {
            (0, Some(since)) => now.saturating_sub(since),
            _ => 0,
        };
        self.credit_blocked_since = match blocked {
            0 => None,
            _ => self.credit_blocked_since.or(Some(now)),
        };
        // The heads the device is blocked under, as `abi::credit_blocked` packs them (the
        // metadata head's low 31 bits).
        let (md, pl) = ((blocked >> 32) as u32 & 0x7fff_ffff, blocked as u32);
        crate::trace::cxl_ccm_dev_credit_stall(
            self.dev,
            self.index,
            u32::from(blocked != 0),
            md,
            pl,
            stalled_ns,
        );
    }

    /// Performs the steps of the batch in flight: posts its DMA requests to the modelled DMA
    /// engine ([`crate::model::posted`]), writes the payload and the metadata records, and
    /// holds the ring-tail stores back until the batch lands.
    fn perform(&mut self, mem: &MemRemap, pacer: &mut Pacer) -> core::result::Result<(), Status> {
        let steps = self.exec.steps().map_err(exec_status)?;
        let requests = steps.requests().map_err(|_| abi::STATUS_BAD_DESCRIPTOR)?;
        let (mut latency, mut transfer) = (0u64, 0u64);
        for op in requests.operations() {
            let (l, t) = pacer.post(op);
            latency = latency.max(l);
            transfer = transfer.saturating_add(t);
        }
        let now = now_ns();
        let land = self.posted.book(now, latency, transfer);
        let res = steps.reservation();
        crate::trace::cxl_ccm_dev_dma_batch(
            self.dev,
            self.index,
            res.metadata_first.raw(),
            res.records,
            res.bytes,
            land.saturating_sub(now),
        );
        // A batch stores each ring's tail at most once.
        let mut tails = [None; 2];
        let mut n = 0;
        for step in steps {
            match step.map_err(|_| abi::STATUS_BAD_DESCRIPTOR)? {
                Step::StoreTail {
                    ring, dst, value, ..
                } => {
                    let slot = tails.get_mut(n).ok_or(abi::STATUS_ABORTED)?;
                    *slot = Some(PostedStore {
                        due_ns: land,
                        dst,
                        value,
                        ends_batch: ring == Ring::Metadata,
                    });
                    n += 1;
                }
                step => self
                    .region
                    .perform(&step, mem)
                    .map_err(|_| abi::STATUS_DMA_FAULT)?,
            }
        }
        for store in tails.into_iter().flatten() {
            self.post_tail(store)?;
        }
        Ok(())
    }

    /// Queues a tail store; with the queue full, the oldest batch is waited for and delivered
    /// first (the modelled engine has that many batches in flight at most).
    fn post_tail(&mut self, store: PostedStore) -> core::result::Result<(), Status> {
        let Err(store) = self.posted.post(store) else {
            return Ok(());
        };
        if let Some(oldest) = self.posted.pop() {
            while now_ns() < oldest.due_ns {
                core::hint::spin_loop();
            }
            self.deliver(oldest)?;
        }
        self.posted.post(store).map_err(|_| abi::STATUS_ABORTED)
    }

    /// Delivers the tail stores whose batches have landed; returns whether there were any.
    fn deliver_due(&mut self) -> core::result::Result<bool, Status> {
        let now = now_ns();
        let mut any = false;
        while let Some(store) = self.posted.pop_due(now) {
            self.deliver(store)?;
            any = true;
        }
        Ok(any)
    }

    /// One tail store: the batch's records become the host's. The metadata tail is the one
    /// an AXLE_IRQ interrupt announces.
    fn deliver(&mut self, store: PostedStore) -> core::result::Result<(), Status> {
        self.region
            .store_u32(store.dst, store.value)
            .map_err(|_| abi::STATUS_DMA_FAULT)?;
        if store.ends_batch {
            self.irq_pending |= abi::IRQ_CAUSE_METADATA;
            self.irq_batches = self.irq_batches.wrapping_add(1);
        }
        Ok(())
    }

    /// When the oldest batch still in flight on the modelled DMA engine lands.
    pub(crate) fn next_landing(&self) -> Option<u64> {
        self.posted.next_due()
    }
}

/// The status an executor error stops the tenant with.
fn exec_status(e: ExecError) -> Status {
    match e {
        ExecError::Credit(_) => abi::STATUS_BAD_CONFIG,
        ExecError::BadRecord | ExecError::Batch(_) => abi::STATUS_BAD_ARGS,
        _ => abi::STATUS_ABORTED,
    }
}
