// SPDX-License-Identifier: GPL-2.0

//! reflux: the host side of a ReFlux CXL computational-storage device, as a block device.
//!
//! The device (a CXL SSD; the software one in `tools/testing/reflux/` on cxl_test) is a platform
//! device whose resource 0 is its register block and resource 1 its persistent memory region
//! (PMR). This driver binds to it through the ABI alone (`abi.rs`): it checks the PMR's
//! superblock, mounts it (a new generation, the rings reset), enables the device, and adds
//! `/dev/refluxN`, a blk-mq disk of 4 KiB logical blocks. Applications use it unchanged: POSIX
//! and io_uring, buffered and O_DIRECT, a file system on top.
//!
//! A request goes through the pipeline the administrator attached to its byte range in configfs
//! (`attach.rs`), or else the device's default pipeline (module parameters): each stage placed
//! on the host or on the device (`proto::pipeline::Route`). The driver copies a write's data into the request's PMR
//! buffers, writes a 32-byte descriptor into the submission ring, publishes the ring's tail and
//! rings the doorbell; the device runs its stages and answers in the completion ring. The
//! completion is found by the device's interrupt (a threaded handler), or, for polled I/O
//! (`IORING_SETUP_IOPOLL`), by the submitter polling the completion ring through blk-mq's poll
//! queue. A write is acknowledged once the device has committed it to the PMR: that is the
//! durability point (power-loss protection), so the disk has no volatile cache to flush.

// `pin_init!` of the device's queue data, which has many fields, recurses deeper than the
// default limit.
#![recursion_limit = "512"]

use kernel::{
    dev_err, dev_info,
    io_mem::IoMem,
    memremap::{MapMode, MemRemap},
    module_param,
    platform::{DriverRegistration, MemResource, PlatformDevice, PlatformDriver},
    prelude::*,
    str::CString,
    sync::Arc,
};

/// The device ABI, shared with the software device.
pub mod abi;
/// The actors' engines, shared with the software device: host-placed stages run here.
pub mod actor;
/// The protocol's pure logic, shared with the software device and tested on the host.
pub mod proto;

mod attach;
mod bound;
mod debugfs;
mod health;
mod host;
mod hw;
mod migrate;
mod migrator;
mod pagecache;
mod pagetags;
/// A bound device's policy in configfs.
mod policy;
mod queue;
mod regio;
mod rings;
mod routing;
mod sched_state;
mod scheduler;
mod segments;
mod stats;
/// Trace events (`reflux_events.h`).
mod trace;

use bound::Bound;
use proto::pipeline::Route;
use proto::sched::SchedParams;
use queue::RefluxDev;

module! {
    type: RefluxModule,
    name: "reflux",
    author: "cxlstack developers",
    description: "ReFlux: per-stage compute placement for CXL computational storage (block device)",
    license: "GPL",
}

module_param!(
    static PIPELINE: u32 = abi::PIPELINE_PASSTHROUGH as u32,
    name: "pipeline",
    perm: 0o444,
    desc: "pipeline of every device bound: 0 passthrough, 1 checksum, 2 compress, 3 encrypt"
);
module_param!(
    static CHECKSUM: bool = false,
    name: "checksum",
    perm: 0o444,
    desc: "add the optional checksum stage to the compress and encrypt pipelines"
);
module_param!(
    static PLACEMENT: u32 = 0xff,
    name: "placement",
    perm: 0o444,
    desc: "bit i: stage i of the pipeline starts on the device (default: every stage); 0x100: keep the placement recorded in the PMR"
);
module_param!(
    static DISPATCH: u32 = 0,
    name: "dispatch",
    perm: 0o444,
    desc: "request-level dispatch (the paradigm-B baseline; no per-stage placement, no migration), each whole request on the side a fixed cost profile prefers: 1 the faster side (lambda-IO), 2 the smaller expected wait (queue-aware); 0: off"
);
module_param!(
    static PINNED: u32 = 0,
    name: "pinned",
    perm: 0o444,
    desc: "bit i: actor i is compute-dominated, pinned where it is placed (never migrated)"
);
module_param!(
    static POLL_QUEUES: u32 = 1,
    name: "poll_queues",
    perm: 0o444,
    desc: "hardware queues for polled I/O (io_uring IOPOLL), 0..=1"
);
module_param!(
    static PAGECACHE_NODE: i32 = PAGECACHE_NODE_PMR,
    name: "pagecache_node",
    perm: 0o444,
    desc: "NUMA node of the disks' page cache: -2 (default) the PMR's node, -1 no preference, N node N"
);

/// `pagecache_node=` value for the node of the device's PMR.
const PAGECACHE_NODE_PMR: i32 = -2;

module_param!(
    static HOST_WQ: bool = true,
    name: "host_wq",
    perm: 0o444,
    desc: "run host stages on a workqueue, spread over the CPUs (0: in the submitter's context and the interrupt thread)"
);
module_param!(
    static IRQ_POLL: bool = true,
    name: "irq_poll",
    perm: 0o444,
    desc: "the interrupt thread polls on while completions come close together (the sleep/poll switch)"
);

module_param!(
    static IRQ_POLL_BELOW_US: u32 = 20,
    name: "irq_poll_below_us",
    perm: 0o444,
    desc: "poll once the average gap between completions is below this (µs)"
);

module_param!(
    static IRQ_SLEEP_ABOVE_US: u32 = 50,
    name: "irq_sleep_above_us",
    perm: 0o444,
    desc: "sleep until the interrupt once the average gap is above this (µs; above irq_poll_below_us)"
);

/// The interrupt path's sleep/poll switch, from the parameters (`None` when off).
fn irq_poll_params() -> Option<proto::poll_switch::PollSwitchParams> {
    let sleep_above_ns = u64::from(IRQ_SLEEP_ABOVE_US.get()) * 1000;
    IRQ_POLL
        .get()
        .then_some(proto::poll_switch::PollSwitchParams {
            poll_below_ns: u64::from(IRQ_POLL_BELOW_US.get()) * 1000,
            sleep_above_ns,
            // One stall moves the average by at most a quarter of the band above the threshold.
            max_gap_ns: sleep_above_ns.saturating_mul(4),
            ..proto::poll_switch::PollSwitchParams::DEFAULT
        })
}

module_param!(
    static MIGRATE_DRAIN_TIMEOUT_MS: u32 = migrator::DRAIN_TIMEOUT_MS,
    name: "migrate_drain_timeout_ms",
    perm: 0o444,
    desc: "a migration whose source has not drained by then gives up and the source keeps the stage, ms (5000; 1..=60000)"
);

module_param!(
    static QUEUE_DEPTH: u32 = 64,
    name: "queue_depth",
    perm: 0o444,
    desc: "requests in flight per device (1..=256, at most the device's ring and buffers)"
);

module_param!(
    static SCHED: u32 = 0,
    name: "sched",
    perm: 0o444,
    desc: "1: run the thermal-aware scheduler, which migrates stages between host and device (0: placement stays as configured)"
);
module_param!(
    static SCHED_EPOCH_MS: u32 = SchedParams::DEFAULT.epoch_ms,
    name: "sched_epoch_ms",
    perm: 0o444,
    desc: "scheduling epoch in ms (10)"
);
module_param!(
    static SCHED_ALPHA: u32 = SchedParams::DEFAULT.alpha_permille,
    name: "sched_alpha",
    perm: 0o444,
    desc: "weight of the device temperature in the score, permille (500)"
);
module_param!(
    static SCHED_BETA: u32 = SchedParams::DEFAULT.beta_permille,
    name: "sched_beta",
    perm: 0o444,
    desc: "weight of the host utilisation, permille (300)"
);
module_param!(
    static SCHED_GAMMA: u32 = SchedParams::DEFAULT.gamma_permille,
    name: "sched_gamma",
    perm: 0o444,
    desc: "weight of the actor's device queue depth, permille (200); the three sum to 1000"
);
module_param!(
    static SCHED_THETA: u32 = SchedParams::DEFAULT.theta_permille,
    name: "sched_theta",
    perm: 0o444,
    desc: "upload a stage to the host above this score, permille (650)"
);
module_param!(
    static SCHED_THETA_LOW: u32 = SchedParams::DEFAULT.theta_low_permille,
    name: "sched_theta_low",
    perm: 0o444,
    desc: "offload it back below this score when the device has headroom, permille (400)"
);
module_param!(
    static SCHED_DWELL_MS: u32 = SchedParams::DEFAULT.dwell_ms,
    name: "sched_dwell_ms",
    perm: 0o444,
    desc: "least time between two migrations of one actor, ms (100)"
);
module_param!(
    static SCHED_Q_FULL: u32 = SchedParams::DEFAULT.q_full,
    name: "sched_q_full",
    perm: 0o444,
    desc: "device queue depth of an actor that counts as full (32)"
);

module_param!(
    static SCHED_HOST_SATURATED: u32 = SchedParams::DEFAULT.host_saturated_permille,
    name: "sched_host_saturated",
    perm: 0o444,
    desc: "host utilisation at or above which nothing is uploaded (the request rate is throttled instead), permille (950)"
);
module_param!(
    static SCHED_HEADROOM_TEMP: u32 = SchedParams::DEFAULT.headroom_temp_permille,
    name: "sched_headroom_temp",
    perm: 0o444,
    desc: "a stage goes back to the device only below this normalised temperature, permille of ambient..77 C (500)"
);
module_param!(
    static SCHED_HEADROOM_UTIL: u32 = SchedParams::DEFAULT.headroom_util_permille,
    name: "sched_headroom_util",
    perm: 0o444,
    desc: "... and below this device engine utilisation, permille (800)"
);
module_param!(
    static SCHED_MIN_INFLIGHT: u32 = SchedParams::DEFAULT.min_inflight_permille,
    name: "sched_min_inflight",
    perm: 0o444,
    desc: "the throttle's floor: least share of the queue depth kept in flight, permille (125)"
);

// The extensions of the paper's scheme, each a switch (proto::sched, "Extensions").
module_param!(
    static SCHED_FLAP_BACKOFF: bool = SchedParams::DEFAULT.flap_backoff,
    name: "sched_flap_backoff",
    perm: 0o444,
    desc: "1: the flap back-off (not the paper's): an upload soon after the stage's offload is a flap, which doubles the time before it may be offloaded again (0: the dwell alone, the paper's)"
);
module_param!(
    static SCHED_FLAP_WINDOW_MS: u32 = SchedParams::DEFAULT.flap_window_ms,
    name: "sched_flap_window_ms",
    perm: 0o444,
    desc: "with sched_flap_backoff, an upload this soon after the stage's offload is a flap, ms (1000; 0: none is)"
);
module_param!(
    static SCHED_MAX_BACKOFF_MS: u32 = SchedParams::DEFAULT.max_backoff_ms,
    name: "sched_max_backoff_ms",
    perm: 0o444,
    desc: "with sched_flap_backoff, the longest a flapping stage is held on the host, ms (5000)"
);
module_param!(
    static SCHED_LOOKAHEAD: bool = SchedParams::DEFAULT.lookahead,
    name: "sched_lookahead",
    perm: 0o444,
    desc: "1: the thermal lookahead (not the paper's): device stages are scored at the temperature projected for when an upload decided now would be done (0: the temperature now, the paper's)"
);
module_param!(
    static SCHED_LOOKAHEAD_MAX_MS: u32 = SchedParams::DEFAULT.lookahead_max_ms,
    name: "sched_lookahead_max_ms",
    perm: 0o444,
    desc: "with sched_lookahead, the farthest ahead the temperature is projected, ms (500; 0: not at all)"
);
module_param!(
    static SCHED_ENGINE_SHARE: bool = SchedParams::DEFAULT.engine_share,
    name: "sched_engine_share",
    perm: 0o444,
    desc: "1: engine-share weighting (not the paper's): a stage's device queue counts in proportion to its share of the device engine's time (0: the queue depth, the paper's)"
);
module_param!(
    static SCHED_U_REFLUX_ONLY: bool = SchedParams::DEFAULT.u_reflux_only,
    name: "sched_u_reflux_only",
    perm: 0o444,
    desc: "1: the host's load is the CPU time of ReFlux's host stages (not the paper's; 0: the busy fraction of the host's CPUs, isolated ones excepted, the paper's)"
);

/// `migrate_drain_timeout_ms`, checked.
fn drain_timeout_ms() -> Result<u32> {
    let ms = MIGRATE_DRAIN_TIMEOUT_MS.get();
    if !(1..=migrator::MAX_DRAIN_TIMEOUT_MS).contains(&ms) {
        pr_err!(
            "migrate_drain_timeout_ms={ms} is out of range 1..={}\n",
            migrator::MAX_DRAIN_TIMEOUT_MS
        );
        return Err(EINVAL);
    }
    Ok(ms)
}

/// The scheduler's parameters from the module parameters, checked.
fn sched_params() -> Result<SchedParams> {
    let p = SchedParams {
        epoch_ms: SCHED_EPOCH_MS.get(),
        alpha_permille: SCHED_ALPHA.get(),
        beta_permille: SCHED_BETA.get(),
        gamma_permille: SCHED_GAMMA.get(),
        theta_permille: SCHED_THETA.get(),
        theta_low_permille: SCHED_THETA_LOW.get(),
        dwell_ms: SCHED_DWELL_MS.get(),
        q_full: SCHED_Q_FULL.get(),
        host_saturated_permille: SCHED_HOST_SATURATED.get(),
        headroom_temp_permille: SCHED_HEADROOM_TEMP.get(),
        headroom_util_permille: SCHED_HEADROOM_UTIL.get(),
        min_inflight_permille: SCHED_MIN_INFLIGHT.get(),
        flap_backoff: SCHED_FLAP_BACKOFF.get(),
        flap_window_ms: SCHED_FLAP_WINDOW_MS.get(),
        max_backoff_ms: SCHED_MAX_BACKOFF_MS.get(),
        lookahead: SCHED_LOOKAHEAD.get(),
        lookahead_max_ms: SCHED_LOOKAHEAD_MAX_MS.get(),
        engine_share: SCHED_ENGINE_SHARE.get(),
        u_reflux_only: SCHED_U_REFLUX_ONLY.get(),
        ..SchedParams::DEFAULT
    };
    p.validate().map_err(|e| {
        pr_err!("scheduler parameters refused: {e}\n");
        EINVAL
    })?;
    if SCHED.get() > 1 {
        pr_err!("sched={} is out of range 0..=1\n", SCHED.get());
        return Err(EINVAL);
    }
    if DISPATCH.get() > 2 || (DISPATCH.get() != 0 && SCHED.get() == 1) {
        pr_err!(
            "dispatch={} with sched={}: dispatch is 0..=2 and excludes the scheduler\n",
            DISPATCH.get(),
            SCHED.get()
        );
        return Err(EINVAL);
    }
    Ok(p)
}

/// The administrator's pipeline, checked against the pipeline rules.
#[derive(Clone, Copy)]
pub(crate) struct PipeConfig {
    pub(crate) pipeline: u8,
    pub(crate) flags: u16,
    /// The initial placement of the pipeline's stages (bit i: stage i on the device).
    pub(crate) placement: u8,
    /// Keep the placement the PMR records instead (`placement=0x100`).
    pub(crate) keep: bool,
}

/// `placement=` value that keeps the placement recorded in the PMR.
const PLACEMENT_KEEP: u32 = 0x100;

impl PipeConfig {
    fn from_params(name: &CStr, caps: u64) -> Result<Self> {
        let pipeline = u8::try_from(PIPELINE.get())
            .ok()
            .filter(|p| *p < abi::PIPELINE_COUNT)
            .ok_or_else(|| {
                pr_err!(
                    "{name}: pipeline={} is not a pipeline (0..=3)\n",
                    PIPELINE.get()
                );
                EINVAL
            })?;
        if caps & abi::cap_pipeline(pipeline) == 0 {
            pr_err!("{name}: the device does not offer pipeline {pipeline}\n");
            return Err(EOPNOTSUPP);
        }
        let flags = if CHECKSUM.get() {
            abi::PIPE_FLAG_CHECKSUM
        } else {
            0
        };
        let stages = proto::pipeline::Pipeline::from_id(pipeline)
            .and_then(|p| p.stages(flags))
            .map_err(|e| {
                pr_err!("{name}: pipeline {pipeline} with flags {flags:#x}: {e:?}\n");
                EINVAL
            })?;
        // Bits past the stage count mean nothing: "every stage on the device" is any mask.
        let all = (1u32 << stages.len()) - 1;
        let keep = PLACEMENT.get() == PLACEMENT_KEEP;
        let placement = if keep {
            0
        } else {
            (PLACEMENT.get() & all) as u8
        };
        let cfg = Self {
            pipeline,
            flags,
            placement,
            keep,
        };
        for dir in [abi::DIR_READ, abi::DIR_WRITE] {
            cfg.route(dir).map_err(|e| {
                pr_err!("{name}: pipeline {pipeline} placement {placement:#x}: {e:?}\n");
                EINVAL
            })?;
        }
        Ok(cfg)
    }

    /// What the administrator asked for, for [`migrate::settle_at_mount`].
    fn registration(&self) -> migrate::Registration {
        use proto::pipeline::Side;
        let mut reg = migrate::Registration {
            place: [(0, Side::Host); abi::MAX_STAGES as usize],
            nr_place: 0,
            pinned: PINNED.get(),
            dispatch: match DISPATCH.get() {
                1 => Some(crate::proto::dispatch::Rule::Faster),
                2 => Some(crate::proto::dispatch::Rule::ExpectedWait),
                _ => None,
            },
        };
        if self.keep {
            return reg;
        }
        let Ok(stages) =
            proto::pipeline::Pipeline::from_id(self.pipeline).and_then(|p| p.stages(self.flags))
        else {
            return reg;
        };
        for i in 0..stages.len() {
            let Some(stage) = stages.get(i) else { continue };
            let side = if self.placement & (1 << i) != 0 {
                Side::Device
            } else {
                Side::Host
            };
            if let Some(slot) = reg.place.get_mut(reg.nr_place) {
                *slot = (actor::default_actor(stage), side);
                reg.nr_place += 1;
            }
        }
        reg
    }

    /// The route of a request of direction `dir` through this pipeline.
    pub(crate) fn route(
        &self,
        dir: u8,
    ) -> core::result::Result<Route, proto::pipeline::PipelineError> {
        let placement = if dir == abi::DIR_FLUSH {
            0
        } else {
            self.placement
        };
        let pipeline = if dir == abi::DIR_FLUSH {
            abi::PIPELINE_PASSTHROUGH
        } else {
            self.pipeline
        };
        let flags = if dir == abi::DIR_FLUSH { 0 } else { self.flags };
        Route::new(abi::opcode(pipeline, dir), flags, placement)
    }
}

// An open disk or debugfs file pins the module: the kernel calls through their tables until the
// last close.
kernel::module_owner!(Owner);

struct RefluxDriver;

impl RefluxDriver {
    /// Checks the device's resources, maps its register block and identifies it: the register
    /// mapping, the identity and the PMR's resource (checked against the size the device
    /// reports).
    fn identify(pdev: &PlatformDevice) -> Result<(IoMem, hw::Identity, MemResource)> {
        let (Some(regs_res), Some(pmr_res)) = (pdev.mem_resource(0), pdev.mem_resource(1)) else {
            dev_err!(pdev.as_dev(), "needs a register and a PMR resource\n");
            return Err(ENXIO);
        };
        if regs_res.size < abi::REGISTER_BLOCK_SIZE as u64 {
            dev_err!(
                pdev.as_dev(),
                "register block of {} bytes is too small\n",
                regs_res.size
            );
            return Err(ENXIO);
        }
        let regs = IoMem::new(regs_res)?;
        let id = hw::identify(&regs, pdev.as_dev())?;
        if id.pmr_size > pmr_res.size {
            dev_err!(
                pdev.as_dev(),
                "device reports {} bytes of PMR, resource has {}\n",
                id.pmr_size,
                pmr_res.size
            );
            return Err(ENXIO);
        }
        Ok((regs, id, pmr_res))
    }

    /// The queue's tuning, from the module parameters (`pagecache_node=-2` places the page cache
    /// on the node of `pmr_res`).
    fn tuning(pmr_res: MemResource) -> Result<queue::Tuning> {
        Ok(queue::Tuning {
            depth: QUEUE_DEPTH.get(),
            irq_poll: irq_poll_params(),
            pagecache_node: match PAGECACHE_NODE.get() {
                PAGECACHE_NODE_PMR => kernel::pagecache_hook::phys_to_target_node(pmr_res.start),
                n if n < 0 => None,
                n => Some(n),
            },
            sched: sched_params()?,
            host_wq: HOST_WQ.get(),
            drain_timeout_ms: drain_timeout_ms()?,
        })
    }
}

/// The module's state that every probe and remove is handed (the platform driver's context):
/// where bound devices are published.
#[derive(Clone)]
pub(crate) struct Shared {
    /// The attachment registry, shared with the configfs subsystem.
    pub(crate) registry: Arc<attach::Registry>,
    /// The page-cache hook's table of disks, shared with the hook; `None` when another module
    /// holds the hook.
    pub(crate) pages: Option<Arc<pagecache::Published>>,
    /// The type of the bound devices' policy directories in configfs.
    pub(crate) policy: Arc<kernel::configfs::GroupType<attach::AttachItem, policy::DevPolicy>>,
}

impl PlatformDriver for RefluxDriver {
    type Data = KBox<Bound>;
    type Context = Shared;
    const NAME: &'static CStr = kernel::c_str!("reflux");

    fn probe(pdev: &PlatformDevice, shared: &Shared) -> Result<Self::Data> {
        let name = CString::try_from_fmt(kernel::fmt!("reflux{}", pdev.id()))?;
        let (regs, id, pmr_res) = Self::identify(pdev)?;
        let cfg = PipeConfig::from_params(&name, id.caps)?;
        let pmr = MemRemap::new(pmr_res, MapMode::WriteBack)?;
        let layout = hw::mount(&pmr, &id, pdev.as_dev(), 0)?;
        let irq_line = pdev.irq(0).filter(|_| id.caps & abi::CAP_IRQ != 0);
        let tuning = Self::tuning(pmr_res)?;
        let device = pdev.as_dev().into();
        let nr = u32::try_from(pdev.id()).unwrap_or(u32::MAX);
        let dev = RefluxDev::new(name, nr, device, regs, pmr, layout, id, cfg, tuning)?;
        migrate::settle_at_mount(&dev, &cfg.registration())?;
        // A failure before this leaves the device disabled, as probe found it. Its PMR stays
        // mounted (generation + 1, not clean, the rings reset): what a host that died in probe
        // leaves, which the next mount takes as it is, since the host owns the PMR while the
        // device is not enabled and the device has not run. From the enable on, every
        // step is undone by a guard in `Bound`: a failure stops and disables the device again.
        let bound = KBox::new(Bound::new(&dev, irq_line, id.caps, shared)?, GFP_KERNEL)?;
        dev_info!(
            pdev.as_dev(),
            "/dev/{}: ABI {}.{}, {} MiB, {} device cores, pipeline {} flags {:#x} placement {:#x}, depth {}, {}\n",
            &*dev.name,
            abi::version_major(id.version),
            abi::version_minor(id.version),
            dev.capacity_blocks >> (20 - abi::BLOCK_SHIFT),
            id.nr_cores,
            cfg.pipeline,
            cfg.flags,
            cfg.placement,
            dev.depth(),
            if bound.has_irq() { "interrupts" } else { "polled" }
        );
        Ok(bound)
    }

    fn remove(pdev: &PlatformDevice, _shared: &Shared, bound: Self::Data) {
        drop(bound);
        dev_info!(pdev.as_dev(), "unbound\n");
    }
}

struct RefluxModule {
    // Dropped first: every device is unbound, so unpublished, before the hook and the
    // registry go.
    _driver: Pin<KBox<DriverRegistration<RefluxDriver>>>,
    _pagecache: Option<kernel::pagecache_hook::Registration<pagecache::Hook>>,
    _configfs: Arc<kernel::configfs::Subsystem<attach::AttachItem>>,
}

/// Checks the parameters that do not depend on a device, so that a bad one fails the load.
fn check_params() -> Result {
    let name = kernel::c_str!("reflux");
    if PLACEMENT.get() > 0xff && PLACEMENT.get() != PLACEMENT_KEEP {
        pr_err!(
            "placement={:#x} has bits above the 8 stages a placement can name\n",
            PLACEMENT.get()
        );
        return Err(EINVAL);
    }
    if PINNED.get() & 1 != 0 || PINNED.get() >> actor::control::MAX_ACTORS != 0 {
        pr_err!(
            "pinned={:#x} names actors outside 1..{}\n",
            PINNED.get(),
            actor::control::MAX_ACTORS
        );
        return Err(EINVAL);
    }
    if !(1..=256).contains(&QUEUE_DEPTH.get()) {
        pr_err!(
            "queue_depth={} is out of range 1..=256\n",
            QUEUE_DEPTH.get()
        );
        return Err(EINVAL);
    }
    if POLL_QUEUES.get() > 1 {
        pr_err!("poll_queues={} is out of range 0..=1\n", POLL_QUEUES.get());
        return Err(EINVAL);
    }
    if let Some(Err(e)) = irq_poll_params().map(|p| p.validate()) {
        pr_err!(
            "irq_poll_below_us={} irq_sleep_above_us={}: {e}\n",
            IRQ_POLL_BELOW_US.get(),
            IRQ_SLEEP_ABOVE_US.get()
        );
        return Err(EINVAL);
    }
    if !(PAGECACHE_NODE_PMR..(kernel::cpu::MAX_NUMNODES as i32)).contains(&PAGECACHE_NODE.get()) {
        pr_err!(
            "pagecache_node={} is not -2, -1 or a node below {}\n",
            PAGECACHE_NODE.get(),
            kernel::cpu::MAX_NUMNODES
        );
        return Err(EINVAL);
    }
    sched_params()?;
    drain_timeout_ms()?;
    // Every pipeline capability: only the pipeline rules are checked here.
    PipeConfig::from_params(name, u64::MAX).map(|_| ())
}

impl kernel::Module for RefluxModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        check_params()?;
        let registry = attach::Registry::new()?;
        let configfs = kernel::configfs::Subsystem::new(
            kernel::c_str!("reflux"),
            module,
            kernel::static_lock_class!(),
            registry.clone(),
        )?;
        let pages = pagecache::Published::new()?;
        let hook =
            match kernel::pagecache_hook::Registration::register(pagecache::Hook(pages.clone())) {
                Ok(h) => Some(h),
                Err(e) => {
                    pr_warn!(
                        "the page-cache hook is taken ({e:?}): page cache not placed nor tagged\n"
                    );
                    None
                }
            };
        let shared = Shared {
            registry,
            pages: hook.is_some().then_some(pages),
            policy: kernel::configfs::GroupType::new(configfs.clone(), module)?,
        };
        let driver = KBox::pin_init(DriverRegistration::register(module, shared), GFP_KERNEL)?;
        Ok(Self {
            _driver: driver,
            _pagecache: hook,
            _configfs: configfs,
        })
    }
}
