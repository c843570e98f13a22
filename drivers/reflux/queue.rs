// SPDX-License-Identifier: GPL-2.0

//! The request path: blk-mq requests to descriptors in the submission ring, completions from
//! the completion ring back to blk-mq.
//!
//! Each blk-mq tag owns, for the life of its request, the request-state blob `tag` and the PMR
//! buffers `tag * MAX_REQ_BLOCKS ..`: no allocation on the I/O path, and a completion's tag finds
//! everything.
//!
//! [`RefluxDev`] composes the parts of a device, each of which owns its state and its locks:
//! the rings and the requests in flight ([`Rings`], `rings.rs`), the host executor
//! ([`HostExec`], `host.rs`), the migrator ([`Migrator`], `migrator.rs`; the protocol is
//! `migrate.rs`), the scheduler's state ([`SchedState`], `sched_state.rs`), the device's health
//! ([`Health`], `health.rs`) and counters ([`Stats`], `stats.rs`), the page-cache tags
//! ([`PageTags`], `pagetags.rs`), besides the routing table and the host's actor control
//! state. The request path below is what needs several of them at once.
//!
//! Lock order across the parts: the migration lock (`Migrator::lock`) first; then the routing
//! table or the in-flight table, never both at once (what one says is copied out before the
//! other is taken); the rings' own order inside (`cq`, then `inflight`, then `sq`); the host
//! executor's scratch, then the actors' control state. The other locks are taken alone.

use kernel::{
    block::mq::{Operations, ReqOp, Request, TimeoutAction},
    device::Device,
    io_mem::IoMem,
    irq::Handler,
    memremap::MemRemap,
    new_spinlock, pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
    str::CString,
    sync::{Arc, ArcBorrow, SpinLock},
    types::ARef,
    workqueue::{new_work, Work, WorkItem},
};

use crate::{
    abi::{self, CompletionEntry, PmrLayout, Regs, ReqState, SubmissionDescriptor},
    actor::{
        control::Controls,
        exec::{self, now_ns, Plan, StageObserver},
        pipeline_actors,
    },
    attach::DevAttachments,
    health::Health,
    host::{host_queue, HostExec},
    hw::{self, Identity},
    migrator::Migrator,
    pagetags::PageTags,
    proto::sched::SchedParams,
    proto::{
        self,
        attach::Lookup,
        pipeline::{Hop, Route, Side},
        poll_switch::{PollSwitch, PollSwitchParams, WaitMode},
        request,
    },
    regio,
    rings::{irq_poll_switch, queue_depth, Rings},
    routing::{Routed, Routing},
    sched_state::SchedState,
    segments,
    stats::{Counter, Stats},
    PipeConfig,
};

/// Counts the host's runs of its actors in their control state.
struct HostRuns<'a> {
    controls: &'a SpinLock<Controls>,
    /// The device and the request, for the trace events.
    dev: u32,
    tag: u16,
}

impl StageObserver for HostRuns<'_> {
    fn stage_done(&mut self, stage: proto::pipeline::Stage, bytes: usize, host_ns: u64) {
        crate::trace::reflux_stage_run(
            self.dev,
            u32::from(self.tag),
            crate::trace::side(proto::pipeline::Side::Host),
            crate::trace::stage(stage),
            u32::try_from(bytes).unwrap_or(u32::MAX),
            host_ns,
        );
    }

    fn actor_ran(&mut self, actor: u8, blocks: u64) {
        self.controls.lock().ran(actor, blocks);
    }
}

/// `queue_rq`'s answer when a request must wait for room: `BLK_STS_RESOURCE`, after which blk-mq
/// runs the queue again itself (at once if one of its requests completed meanwhile, else after
/// 3 ms). Not `EBUSY` (`BLK_STS_DEV_RESOURCE`), which promises that the driver reruns the queue
/// when a request of the same hardware queue completes: a throttle counted over the default and
/// the poll queue together cannot promise that, and a queue with nothing of its own in flight
/// stalled.
const RETRY_LATER: Error = ENOMEM;

/// Re-routes a request refused for no migration under way at most this often before failing
/// it with `EIO`.
const MAX_REROUTES: u8 = 8;

/// The host steps of one request, queued on the host-stage workqueue.
///
/// Its own work item type, not the crate's `Queue::try_spawn`: that one's lock class key is a
/// static of the `kernel` crate while its name is in this module, so after the module is
/// reloaded lockdep finds the key under the old module's (freed) name and warns.
#[pin_data]
struct HostJob {
    #[pin]
    work: Work<HostJob>,
    dev: Arc<RefluxDev>,
    tag: u16,
    step: u8,
}

kernel::impl_has_work! {
    impl HasWork<Self> for HostJob { self.work }
}

impl HostJob {
    /// A job for request `tag` from `step`, allocated without sleeping.
    fn new(dev: ArcBorrow<'_, RefluxDev>, tag: u16, step: u8) -> Result<Pin<KBox<Self>>> {
        KBox::pin_init(
            pin_init!(Self {
                work <- new_work!("reflux host stage"),
                dev: dev.into(),
                tag,
                step,
            }),
            GFP_NOWAIT,
        )
    }
}

impl WorkItem for HostJob {
    type Pointer = Pin<KBox<Self>>;

    fn run(this: Pin<KBox<Self>>) {
        this.dev.advance(this.tag, Hop::Host(this.step));
    }
}

/// The administrator's knobs that are not the pipeline.
pub(crate) struct Tuning {
    /// Requests in flight wanted (`queue_depth`).
    pub(crate) depth: u32,
    /// The node of the disk's page cache (`None`: the usual policy).
    pub(crate) pagecache_node: Option<i32>,
    /// The interrupt path's sleep/poll switch (`None`: always sleep until the interrupt).
    pub(crate) irq_poll: Option<PollSwitchParams>,
    /// The scheduler's parameters.
    pub(crate) sched: SchedParams,
    /// Host stages run on a workqueue (`host_wq`), not in the submitter's context or the
    /// interrupt thread.
    pub(crate) host_wq: bool,
    /// How long a migration waits for its source to drain (`migrate_drain_timeout_ms`).
    pub(crate) drain_timeout_ms: u32,
}

/// One bound device: the queue data of its disk.
///
/// What does not change after bind is here; what does is in the parts, each behind its own
/// lock(s) and methods.
#[pin_data]
pub(crate) struct RefluxDev {
    pub(crate) name: CString,
    /// N of `/dev/refluxN`, which names the device in trace events.
    pub(crate) nr: u32,
    /// The platform device: what the log lines are about (`dev_*!`).
    pub(crate) device: ARef<Device>,
    pub(crate) regs: IoMem,
    pub(crate) pmr: MemRemap,
    pub(crate) layout: PmrLayout,
    pub(crate) capacity_blocks: u64,
    /// The device's engine cores ([`abi::Regs::nr_cores`]), read once at probe: the register is
    /// constant, and a failed read fails the probe rather than being guessed later.
    pub(crate) nr_cores: u32,
    /// The default pipeline: of every request outside the administrator's attachments.
    pub(crate) cfg: PipeConfig,
    /// The administrator's attachments of pipelines to byte ranges (configfs).
    pub(crate) attach: Arc<DevAttachments>,
    /// The disk's page-cache node and page tags.
    pub(crate) pagecache: PageTags,
    /// The rings and the requests in flight.
    #[pin]
    rings: Rings<ARef<Request<Queue>>>,
    /// Where host-placed stages run.
    #[pin]
    pub(crate) host: HostExec,
    /// Where each actor runs, and the requests in flight through it. Never held with the
    /// in-flight table, nor taken inside the host executor's scratch.
    #[pin]
    pub(crate) routing: SpinLock<Routing>,
    /// The control state of the actors the host owns.
    #[pin]
    pub(crate) controls: SpinLock<Controls>,
    /// Migrations: one at a time, their log, their fault injection, the device's stop.
    #[pin]
    pub(crate) migrator: Migrator,
    /// The scheduler's parameters and its last decisions.
    #[pin]
    pub(crate) sched: SchedState,
    /// Whether the device still answers.
    pub(crate) health: Health,
    pub(crate) stats: Stats,
}

impl RefluxDev {
    // The parts a bound device is made of, each named: grouping them would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        name: CString,
        nr: u32,
        device: ARef<Device>,
        regs: IoMem,
        pmr: MemRemap,
        layout: PmrLayout,
        id: Identity,
        cfg: PipeConfig,
        tuning: Tuning,
    ) -> Result<Arc<Self>> {
        // The steps that can refuse the tuning (and log why) in their order; the parts'
        // allocations follow, in the initialiser.
        let attach = DevAttachments::new(&name, id.capacity_blocks, id.caps)?;
        let host_wq = host_queue(&name, tuning.host_wq)?;
        let switch = irq_poll_switch(&name, tuning.irq_poll)?;
        let pagecache = PageTags::new(id.capacity_blocks, tuning.pagecache_node)?;
        let depth = queue_depth(&name, &layout, tuning.depth)?;
        Arc::pin_init(
            try_pin_init!(Self {
                name,
                nr,
                device,
                regs,
                pmr,
                layout,
                capacity_blocks: id.capacity_blocks,
                nr_cores: id.nr_cores,
                cfg,
                attach,
                pagecache,
                rings <- Rings::new(depth, switch),
                host <- HostExec::new(host_wq),
                routing <- new_spinlock!(Routing::new(depth)?),
                controls <- new_spinlock!(Controls::default()),
                migrator <- Migrator::new(id.caps, depth, tuning.drain_timeout_ms),
                sched <- SchedState::new(tuning.sched),
                health: Health::new(),
                stats: Stats::default(),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The queue depth: the number of blk-mq tags.
    pub(crate) fn depth(&self) -> u32 {
        self.rings.depth()
    }

    fn buffers_offset(&self, tag: u16) -> Result<usize> {
        let idx = u32::from(tag) * abi::MAX_REQ_BLOCKS;
        self.layout
            .buffer(idx)
            .and_then(|o| usize::try_from(o).ok())
            .ok_or(EINVAL)
    }

    /// The descriptor of a new request, checked against the device's capacity, with the
    /// pipeline of the range it falls in.
    fn descriptor(&self, rq: &Request<Queue>, dir: u8) -> Result<SubmissionDescriptor> {
        let tag = u16::try_from(rq.tag())
            .ok()
            .filter(|t| u32::from(*t) < self.depth())
            .ok_or(EINVAL)?;
        let mut d = SubmissionDescriptor {
            tag,
            opcode: abi::opcode(abi::PIPELINE_PASSTHROUGH, dir),
            stage_start: 0,
            placement: 0,
            nr_blocks: 0,
            flags: 0,
            actors: [0; abi::MAX_STAGES as usize],
            state: tag,
            buf_index: 0,
            lba: 0,
            epochs: [0; abi::MAX_STAGES as usize],
        };
        if dir == abi::DIR_FLUSH {
            return Ok(d);
        }
        // 4 KiB logical blocks: the block layer only sends whole, aligned blocks.
        let sector = rq.sector();
        let bytes = rq.bytes();
        let spb = u64::from(abi::BLOCK_SIZE >> 9);
        if sector % spb != 0 || bytes == 0 || bytes % abi::BLOCK_SIZE != 0 {
            return Err(EIO);
        }
        let n = bytes / abi::BLOCK_SIZE;
        let lba = sector / spb;
        if n > abi::MAX_REQ_BLOCKS
            || lba
                .checked_add(u64::from(n))
                .map_or(true, |e| e > self.capacity_blocks)
        {
            pr_warn_ratelimited!(
                "{}: request of {n} blocks at {lba} is beyond the device\n",
                &*self.name
            );
            return Err(EIO);
        }
        let Some((pipeline, flags)) = self.pipeline_at(lba, u64::from(n)) else {
            // The disk's chunk size keeps requests inside one 128 KiB-aligned range.
            pr_warn_ratelimited!(
                "{}: request of {n} blocks at {lba} straddles an attachment\n",
                &*self.name
            );
            return Err(EIO);
        };
        Route::new(abi::opcode(pipeline, dir), flags, 0).map_err(|_| EINVAL)?;
        d.opcode = abi::opcode(pipeline, dir);
        d.flags = flags;
        d.nr_blocks = n as u8;
        d.lba = lba;
        d.buf_index = u32::from(tag) * abi::MAX_REQ_BLOCKS;
        // One actor per stage kind (the default actor table); the routing table sets the
        // placement and the epochs.
        for (a, id) in d.actors.iter_mut().zip(pipeline_actors(pipeline, flags)) {
            *a = id;
        }
        Ok(d)
    }

    /// The pipeline and flags of `nr` blocks from `lba`: their attachment's, or the device's
    /// default; `None` if they straddle an attachment's boundary.
    pub(crate) fn pipeline_at(&self, lba: u64, nr: u64) -> Option<(u8, u16)> {
        match self.attach.lookup(lba, nr) {
            Lookup::Default => Some((self.cfg.pipeline, self.cfg.flags)),
            Lookup::Attached(a) => Some((a.pipeline, a.flags)),
            Lookup::Straddles => None,
        }
    }

    /// A write's state blob before its first stage: every block raw and whole.
    fn init_state(&self, d: &SubmissionDescriptor) -> Result {
        let mut st = ReqState::default();
        for l in st.len.iter_mut().take(usize::from(d.nr_blocks)) {
            *l = abi::BLOCK_SIZE as u16;
        }
        let off = self.layout.req_state(d.state).ok_or(EINVAL)?;
        self.pmr.write_bytes(off as usize, &st.to_bytes())
    }

    /// Publishes `d` in the submission ring and rings the doorbell.
    pub(crate) fn submit(&self, d: &SubmissionDescriptor) -> Result {
        self.rings.submit(&self.pmr, &self.regs, &self.layout, d)?;
        self.stats.inc(Counter::Submitted);
        crate::trace::reflux_rq_submit(
            self.nr,
            u32::from(d.tag),
            u32::from(d.stage_start),
            u32::from(d.placement),
        );
        Ok(())
    }

    /// Runs the host-placed steps of the request `tag` from `step` (the same actor code the
    /// device runs, over the same PMR buffers and state blob) and returns where it goes next.
    /// `EAGAIN`: refused before anything ran, because an actor of the run moved since the
    /// request was routed (after a migration gave up on a drain, its epoch is past the requests
    /// that did not drain); no other failure is `EAGAIN`.
    fn host_run(&self, tag: u16, step: u8) -> Result<Hop> {
        let desc = self.rings.desc(tag).ok_or(EINVAL)?;
        let req = request::Request::validate(&desc, &self.layout.params()).map_err(|_| EINVAL)?;
        let run = req.route().run(Side::Host, step).map_err(|_| EINVAL)?;
        let fail = |e: exec::ExecError| {
            pr_warn_ratelimited!("{}: request {tag} on the host: {e}\n", &*self.name);
            Error::from_errno(e.status())
        };
        let plan = Plan::new(&self.pmr, &self.layout, &req, run).map_err(|e| match e {
            // Not a failure: the caller routes it again.
            exec::ExecError::Epoch { .. } => EAGAIN,
            e => fail(e),
        })?;
        if let Some(a) = {
            let held = self.controls.lock();
            plan.actors().find(|a| !held.holds(*a))
        } {
            // The routing table says the host runs it: a rebuild failed. An error, not a loop.
            pr_warn_ratelimited!(
                "{}: request {tag}: actor {a} is not on the host\n",
                &*self.name
            );
            return Err(EIO);
        }
        let ran = self.host.run(
            || self.stats.inc(Counter::HostSharedScratch),
            |scratch| {
                exec::run_stages(
                    &self.pmr,
                    &self.layout,
                    &req,
                    &plan,
                    scratch,
                    &mut HostRuns {
                        controls: &self.controls,
                        dev: self.nr,
                        tag,
                    },
                )
            },
        );
        ran.map_err(fail)?;
        self.stats.inc(Counter::HostRuns);
        Ok(run.next)
    }

    /// Moves the request `tag` along its route from `hop`: host stages here, device stages by a
    /// (re)submission, the end by completing it.
    fn advance(&self, tag: u16, mut hop: Hop) {
        loop {
            self.pass(
                tag,
                match hop {
                    Hop::Host(step) | Hop::Device(step) => step,
                    Hop::Done => u8::MAX,
                },
            );
            match hop {
                Hop::Host(step) => match self.host_run(tag, step) {
                    Ok(next) => hop = next,
                    // Refused before anything ran, as the device refuses (`STATUS_EAGAIN`):
                    // routed again from this step.
                    Err(e) if e == EAGAIN => {
                        self.rings.start_at(tag, step);
                        return self.reroute(tag);
                    }
                    Err(e) => return self.finish(tag, Err(e)),
                },
                Hop::Device(step) => {
                    let Some(d) = self.rings.start_at(tag, step) else {
                        return;
                    };
                    if let Err(e) = self.submit(&d) {
                        self.finish(tag, Err(e));
                    }
                    return;
                }
                Hop::Done => return self.finish(tag, Ok(())),
            }
        }
    }

    /// The request `tag` has run every step before `step`: it leaves those steps' actors'
    /// counts, so that a migration of one of them no longer waits for it.
    fn pass(&self, tag: u16, step: u8) {
        let Some((d, from)) = self.rings.pass(tag, step) else {
            return;
        };
        let drained = self.routing.lock().pass(&d, from, step);
        self.migrator.drain_ended(drained);
    }

    /// Ends the request `tag`: a read's data goes to its pages first.
    fn finish(&self, tag: u16, mut status: Result) {
        let Some(f) = self.rings.take(tag) else {
            return;
        };
        if let Some(counted) = f.counted {
            let ns = now_ns().saturating_sub(f.t0_ns);
            let drained = self.routing.lock().release(&f.desc, counted, Some(ns));
            self.migrator.drain_ended(drained);
        }
        self.rings.leave();
        if status.is_ok() && abi::opcode_direction(f.desc.opcode) == abi::DIR_READ {
            status = self
                .buffers_offset(tag)
                .and_then(|off| segments::from_pmr(&f.rq, &self.pmr, off));
        }
        if status.is_err() {
            self.stats.inc(Counter::Errors);
        }
        self.stats.inc(Counter::Completed);
        crate::trace::reflux_rq_complete(
            self.nr,
            u32::from(tag),
            kernel::tracepoint::errno(&status),
            now_ns().saturating_sub(f.t0_ns),
        );
        if Request::end(f.rq, status).is_err() {
            pr_warn_ratelimited!(
                "{}: request {tag} still referenced at its end\n",
                &*self.name
            );
        }
    }

    /// A request timed out (blk-mq's timer): a device that still beats gets more time; one that
    /// does not is declared dead ([`Health::still_alive`]), and every request it holds fails
    /// with `EIO`.
    pub(crate) fn timed_out(&self, tag: i32) -> TimeoutAction {
        if self.health.still_alive(&self.regs, &self.device, tag) {
            return TimeoutAction::ResetTimer;
        }
        self.fail_all();
        TimeoutAction::Done
    }

    /// Consumes every published completion; returns how many.
    pub(crate) fn reap(&self) -> u32 {
        self.reap_with(None)
    }

    /// [`Self::reap`]; with `defer` (the device, from the interrupt thread), a request whose
    /// next step is on the host goes to the host-stage workqueue instead of running here.
    pub(crate) fn reap_with(&self, defer: Option<ArcBorrow<'_, RefluxDev>>) -> u32 {
        if self.health.is_dead() {
            // A dead device's ring is not trusted; its requests were failed.
            return 0;
        }
        self.rings
            .reap(&self.pmr, &self.layout, &self.name, |batch| {
                for e in batch {
                    self.complete(e, defer);
                }
            })
    }

    /// The interrupt path's switch mode and its sleep threshold, if it is on.
    pub(crate) fn irq_wait_mode(&self) -> Option<(WaitMode, u64)> {
        self.rings.irq_wait_mode()
    }

    /// The thresholds of the interrupt path's sleep/poll switch, if it is on.
    pub(crate) fn poll_switch_params(&self) -> Option<PollSwitchParams> {
        self.rings.with_switch(|s| s.params())
    }

    /// Changes the sleep/poll switch's thresholds with `f` (see [`Rings::update_switch_params`]).
    pub(crate) fn update_poll_switch_params(
        &self,
        f: impl FnOnce(&mut PollSwitchParams),
    ) -> Result {
        self.rings.update_switch_params(f)
    }

    /// Runs `f` on the interrupt path's sleep/poll switch, if it is on.
    pub(crate) fn with_poll_switch<T>(&self, f: impl FnOnce(&PollSwitch) -> T) -> Option<T> {
        self.rings.with_switch(f)
    }

    fn complete(&self, e: &CompletionEntry, defer: Option<ArcBorrow<'_, RefluxDev>>) {
        if e.tag == self.migrator.ctrl_tag() {
            self.migrator.ctrl_completed(*e);
            return;
        }
        if u32::from(e.tag) >= self.depth() {
            pr_warn_ratelimited!(
                "{}: completion for tag {} out of range\n",
                &*self.name,
                e.tag
            );
            return;
        }
        if e.status == abi::STATUS_EAGAIN {
            return self.reroute(e.tag);
        }
        if e.status != abi::STATUS_OK {
            pr_warn_ratelimited!(
                "{}: request {} failed on the device: {}\n",
                &*self.name,
                e.tag,
                e.status
            );
            self.finish(e.tag, Err(Error::from_errno(e.status)));
            return;
        }
        let hop = if e.next_stage == abi::NEXT_STAGE_DONE {
            if let Some(desc) = self.rings.desc(e.tag) {
                if abi::opcode_direction(desc.opcode) == abi::DIR_WRITE {
                    let n = u64::from(desc.nr_blocks) * u64::from(abi::BLOCK_SIZE);
                    self.stats.add(Counter::WrittenBytes, n);
                    self.stats
                        .add(Counter::StoredBytes, u64::from(e.stored_bytes));
                }
            }
            Hop::Done
        } else {
            Hop::Host(e.next_stage)
        };
        self.advance_with(e.tag, hop, defer);
    }

    /// [`Self::advance`], or, with `defer` and a step on the host next, [`Self::defer_host`].
    fn advance_with(&self, tag: u16, hop: Hop, defer: Option<ArcBorrow<'_, RefluxDev>>) {
        match (hop, defer) {
            (Hop::Host(step), Some(dev)) => self.defer_host(dev, tag, step),
            _ => self.advance(tag, hop),
        }
    }

    /// Runs the host steps of request `tag` from `step` on the host-stage workqueue (dm-crypt's
    /// way with its cipher work): the interrupt thread, a real-time thread, only reaps, the
    /// submitter only submits, and the stages of different requests run on different CPUs.
    /// Without the queue, or if the work item cannot be allocated without sleeping (this may be
    /// the writeback path), they run here. `dev` is this device, borrowed from its `Arc`: a
    /// job holds a reference, taken only when one is queued.
    fn defer_host(&self, dev: ArcBorrow<'_, RefluxDev>, tag: u16, step: u8) {
        if let Some(wq) = self.host.queue() {
            if let Ok(job) = HostJob::new(dev, tag, step) {
                wq.enqueue(job);
                self.stats.inc(Counter::HostDeferred);
                return;
            }
        }
        self.advance(tag, Hop::Host(step));
    }

    /// Acknowledges the interrupts raised so far: completions published after this raise a new
    /// one, so none is left behind by a reap that follows.
    pub(crate) fn ack_irq(&self) {
        if let (Ok(seq), Ok(ack)) = (
            regio::reg(&self.regs, Regs::REG_IRQ_SEQ),
            regio::reg(&self.regs, Regs::REG_IRQ_ACK),
        ) {
            ack.store(seq.load());
        }
    }

    /// The actors of the default pipeline and of every attached one.
    pub(crate) fn pipeline_actors(&self) -> impl Iterator<Item = u8> {
        let mut ids = 0u32;
        let mut add = |pipeline: u8, flags: u16| {
            for id in pipeline_actors(pipeline, flags) {
                ids |= 1 << (id & 31);
            }
        };
        add(self.cfg.pipeline, self.cfg.flags);
        for a in self.attach.table().iter() {
            add(a.pipeline, a.flags);
        }
        (0..32u8).filter(move |i| ids & (1 << i) != 0)
    }

    /// Applies the scheduler's throttle: `permille` of the queue depth may be in flight.
    pub(crate) fn set_inflight_permille(&self, permille: u32) {
        self.rings.set_inflight_permille(permille);
    }

    /// The throttle level now, in permille of the queue depth.
    pub(crate) fn inflight_permille(&self) -> u32 {
        self.rings.inflight_permille()
    }

    /// Routes the request `tag` (again) from `step`, or parks it.
    pub(crate) fn resume(&self, tag: u16, step: u8) {
        self.resume_with(tag, step, None)
    }

    /// [`Self::resume`]; with `defer`, a first step on the host goes to the host-stage
    /// workqueue (see [`Self::defer_host`]).
    pub(crate) fn resume_with(&self, tag: u16, step: u8, defer: Option<ArcBorrow<'_, RefluxDev>>) {
        // A request the device refused was routed before: it keeps its dispatch side.
        let Some((mut d, first)) = self.rings.to_route(tag) else {
            return;
        };
        d.stage_start = step;
        let routed = {
            let mut routing = self.routing.lock();
            let routed = routing.route(&mut d, step, first);
            // Once migrations stopped nothing unparks a request any more: one that would wait
            // for a migration fails instead (it was never acknowledged). Checked under the
            // routing lock, which `release_parked` takes after `stopping` is set, so that no
            // request parks after it looked. Every other request runs: the device is still
            // enabled, and an unbind's `del_gendisk` writes the dirty page cache back.
            if matches!(routed, Ok(Routed::Parked)) && self.migrator.is_stopping() {
                routing.unpark_tag(tag);
                Err(EIO)
            } else {
                routed
            }
        };
        match routed {
            Err(e) => self.finish(tag, Err(e)),
            Ok(Routed::Parked) => {
                self.stats.inc(Counter::Parked);
            }
            Ok(Routed::Go(hop)) => {
                self.rings.routed(tag, d, step);
                self.advance_with(tag, hop, defer);
            }
        }
    }

    /// The device refused the request `tag` because an actor moved since it was routed (its
    /// epoch changed): nothing of the refused run happened, so it is routed again from the step
    /// it was refused at.
    fn reroute(&self, tag: u16) {
        let Some((step, desc)) = self.rings.unroute(tag) else {
            return;
        };
        // A refusal because an actor it needs is being migrated is the migration's doing (its
        // odd epoch refuses what has not started): not counted against the bound.
        let mut moving = false;
        if let Some((d, from)) = desc {
            let drained = {
                let mut routing = self.routing.lock();
                moving = routing.needs_migrating(&d, from);
                routing.release(&d, from, None)
            };
            self.migrator.drain_ended(drained);
        }
        let Some(give_up) = self.rings.refused(tag, moving, MAX_REROUTES) else {
            return;
        };
        if give_up {
            pr_warn_ratelimited!(
                "{}: request {tag} refused {MAX_REROUTES} times\n",
                &*self.name
            );
            return self.finish(tag, Err(EIO));
        }
        self.stats.inc(Counter::Reroutes);
        self.resume(tag, step);
    }

    /// Ends, with an error, every request still held (the device stopped without answering).
    pub(crate) fn fail_all(&self) {
        for tag in 0..self.depth() {
            self.finish(tag as u16, Err(EIO));
        }
    }
}

/// The blk-mq side of a device.
pub(crate) struct Queue;

#[vtable]
impl Operations for Queue {
    type QueueData = Arc<RefluxDev>;

    fn queue_rq(dev: ArcBorrow<'_, RefluxDev>, rq: ARef<Request<Self>>, _is_last: bool) -> Result {
        let dir = match rq.op() {
            ReqOp::Read => abi::DIR_READ,
            ReqOp::Write => abi::DIR_WRITE,
            ReqOp::Flush => abi::DIR_FLUSH,
            _ => return Err(EOPNOTSUPP),
        };
        if dev.health.is_dead() {
            return Err(EIO);
        }
        let d = dev.descriptor(&rq, dir)?;
        crate::trace::reflux_rq_issue(
            dev.nr,
            u32::from(d.tag),
            u32::from(abi::opcode_pipeline(d.opcode)),
            u32::from(dir),
            d.lba,
            u32::from(d.nr_blocks),
        );
        if rq.is_polled() {
            dev.stats.inc(Counter::Polled);
        }
        // The scheduler's throttle (both sides saturated). Counted until `finish`.
        if !dev.rings.admit() {
            return Err(RETRY_LATER);
        }
        // The tag's slot, then its buffers: the tag set's queues share one tag space, so a free
        // tag has a free slot, and nothing of another request is touched before that is sure.
        if let Err(e) = dev.rings.claim(d, rq.clone()) {
            dev.rings.leave();
            return Err(e);
        }
        let staged = if dir == abi::DIR_WRITE {
            dev.buffers_offset(d.tag)
                .and_then(|off| segments::to_pmr(&rq, &dev.pmr, off))
                .and_then(|()| dev.init_state(&d))
        } else {
            Ok(())
        };
        // The slot holds the request from here on (`finish` ends it).
        drop(rq);
        if let Err(e) = staged {
            // Nothing was submitted: the request ends here with the error.
            dev.finish(d.tag, Err(e));
            return Ok(());
        }
        // The host stages run on the host-stage workqueue, not in the submitter's context: the
        // submitter goes on submitting, and the stages of its requests run on every CPU.
        dev.resume_with(d.tag, 0, Some(dev));
        Ok(())
    }

    fn commit_rqs(_dev: ArcBorrow<'_, RefluxDev>) {}

    fn poll(dev: ArcBorrow<'_, RefluxDev>) -> u32 {
        // Runs under `rcu_read_lock` (io_uring's `iocb_bio_iopoll`): it must not sleep, so the
        // polled path spins; see Documentation/reflux.rst on the sleep/poll switch.
        dev.reap()
    }

    fn timeout(dev: ArcBorrow<'_, RefluxDev>, rq: &Request<Self>) -> TimeoutAction {
        dev.timed_out(rq.tag())
    }
}

/// The device's completion interrupt.
pub(crate) struct DevIrq {
    pub(crate) dev: Arc<RefluxDev>,
}

impl Handler for DevIrq {
    fn handle(&self) {
        let dev = &self.dev;
        dev.ack_irq();
        if dev.reap_with(Some(dev.as_arc_borrow())) == 0 {
            return;
        }
        // The sleep/poll switch (paper §4.3: "from MWAIT to polling as inter-completion gaps
        // shrink"). While completions come closer together than the switch's poll threshold,
        // this thread keeps polling the CQ with the device's interrupt off instead of sleeping
        // until the next one; it stops once no completion came for the sleep threshold (the
        // load has gone) or the switch went back to sleeping.
        let Some((WaitMode::Poll, sleep_above_ns)) = dev.irq_wait_mode() else {
            return;
        };
        if hw::set_irq(&dev.regs, false).is_err() {
            return;
        }
        let mut last = now_ns();
        loop {
            let n = dev.reap_with(Some(dev.as_arc_borrow()));
            let now = now_ns();
            if n > 0 {
                dev.stats.add(Counter::IrqPolled, u64::from(n));
                last = now;
            } else if now.saturating_sub(last) > sleep_above_ns
                || !matches!(dev.irq_wait_mode(), Some((WaitMode::Poll, _)))
                || dev.health.is_dead()
            {
                break;
            }
            // The device's cores may share this CPU (the software device).
            kernel::kthread::cond_resched();
        }
        // Interrupts on again, then one more look: a completion published before the enable
        // raised no interrupt.
        let _ = hw::set_irq(&dev.regs, true);
        dev.ack_irq();
        dev.reap_with(Some(dev.as_arc_borrow()));
    }
}
