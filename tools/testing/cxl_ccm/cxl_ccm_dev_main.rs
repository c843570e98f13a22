// SPDX-License-Identifier: GPL-2.0

//! cxl_ccm_dev: the software CCM device, attached to cxl_test's mock memory devices.
//!
//! For each mock memory device (`cxl_mem.N` platform devices of cxl_test) this module carves a
//! slice out of a reserved physical window — the VM boots with `memmap=SIZE$BASE`, so the range
//! is memory the page allocator never hands out, as a CXL expander's memory would be — and
//! registers a `cxl_ccm.N` platform device under it with two memory resources: the register
//! block (resource 0, [`abi::REGISTER_BLOCK_SIZE`] bytes) and the device memory (resource 1,
//! `dev_mem_size` bytes). `drivers/cxl_ccm` binds to those devices through the ABI alone, as it
//! would to a PCI function.
//!
//! Each device runs one engine thread ([`engine`]): it follows `dev_ctrl`, enables tenants from
//! their registers and shadowed descriptor tables, takes launch packets from device memory, runs
//! `KERNEL_STREAM_XFORM` chunk by chunk ([`tenant`]), and back-streams the results into the
//! tenant's host region ([`host_dma`]), paying the latency model's delays ([`pacer`]). It serves
//! `MODE_AXLE` with out-of-order and in-order streaming; the other modes and kernels are not
//! advertised.

use core::sync::atomic::Ordering;
use kernel::{
    device::Device,
    irq::SoftLine,
    kthread::KThread,
    memremap::{MapMode, MemRemap},
    module_param,
    platform::{self, MemResource, OwnedPlatformDevice},
    prelude::*,
    shared_mem::SharedMem,
    str::CString,
    sync::Arc,
    types::ARef,
};

/// The device ABI, shared with the driver.
#[path = "../../../drivers/cxl_ccm/abi.rs"]
pub mod abi;
/// The device model's pure logic (also tested on the host by `tools/ccm-devmodel`).
pub mod model;
/// The AXLE ring protocol, shared with the driver.
#[path = "../../../drivers/cxl_ccm/proto/mod.rs"]
pub mod proto;

mod ccm_clock;
mod checksums;
mod engine;
mod host_dma;
mod pacer;
mod status;
mod tenant;
/// Trace events (`cxl_ccm_dev_events.h`).
mod trace;
mod uthreads;
mod visibility;

use model::compute::{CcmConfig, ComputeModel};
use model::latency::{LatencyModel, Param};

module! {
    type: CcmDevModule,
    name: "cxl_ccm_dev",
    author: "cxlstack developers",
    description: "Software CXL computational-memory device on cxl_test's mock memdevs",
    license: "GPL",
}

module_param!(
    static CHECK_VISIBILITY: bool = false,
    name: "check_visibility",
    perm: 0o444,
    desc: "model host-only coherent memory (HDM-H): count and report host stores consumed before the host published them"
);
module_param!(
    static MEM_BASE: u64 = 0,
    name: "mem_base",
    perm: 0o444,
    desc: "physical base of the reserved window backing device memory (boot with memmap=SIZE$BASE)"
);
module_param!(
    static MEM_WINDOW: u64 = 0,
    name: "mem_window",
    perm: 0o444,
    desc: "size in bytes of the reserved window"
);
module_param!(
    static DEV_MEM_SIZE: u64 = 64 << 20,
    name: "dev_mem_size",
    perm: 0o444,
    desc: "device memory per device in bytes (a multiple of 2 MiB, at least 2 MiB)"
);
module_param!(
    static MAX_DEVICES: u32 = 0,
    name: "max_devices",
    perm: 0o444,
    desc: "attach to at most this many mock memdevs (0: every one that fits in the window)"
);

module_param!(
    static MAX_TENANTS: u32 = abi::MAX_TENANTS,
    name: "max_tenants",
    perm: 0o444,
    desc: "tenants each device serves (1..=16); device memory is shared equally among them"
);

module_param!(
    static UTHREADS: u32 = 2,
    name: "uthreads",
    perm: 0o444,
    desc: "µthread workers of each device's near-memory engine (0..=16; 0: the engine thread computes the chunks itself, for a device model on one CPU)"
);
module_param!(
    static ROUND_ROBIN: bool = true,
    name: "round_robin",
    perm: 0o444,
    desc: "schedule the chunks of a tenant's launches round-robin (AXLE Table III); false: FIFO"
);

module_param!(
    static CXL_MEM_RTT_NS: u64 = Param::CxlMemRtt.default_value(),
    name: "cxl_mem_rtt_ns",
    perm: 0o444,
    desc: "CXL.mem round trip in ns (AXLE Table III: 70)"
);
module_param!(
    static CXL_IO_RTT_NS: u64 = Param::CxlIoRtt.default_value(),
    name: "cxl_io_rtt_ns",
    perm: 0o444,
    desc: "CXL.io round trip in ns (Table III: 350)"
);
module_param!(
    static DMA_PREP_NS: u64 = Param::DmaPrep.default_value(),
    name: "dma_prep_ns",
    perm: 0o444,
    desc: "DMA preparation per request in ns (Table III: 500)"
);
module_param!(
    static DMA_SEGMENT_NS: u64 = Param::DmaSegment.default_value(),
    name: "dma_segment_ns",
    perm: 0o444,
    desc: "extra DMA cost per scatter-gather segment in ns"
);
module_param!(
    static DMA_PS_PER_BYTE: u64 = Param::DmaPsPerByte.default_value(),
    name: "dma_ps_per_byte",
    perm: 0o444,
    desc: "DMA transfer cost in ps per byte (16: 62.5 GB/s)"
);
module_param!(
    static IRQ_NS: u64 = Param::Irq.default_value(),
    name: "irq_ns",
    perm: 0o444,
    desc: "interrupt handling per DMA request in ns (Table III: 50000)"
);
module_param!(
    static IRQ_COALESCE: bool = false,
    name: "irq_coalesce",
    perm: 0o444,
    desc: "AXLE_IRQ variant: at most one interrupt outstanding per tenant (the next waits for the host's ack) instead of one per streamed batch"
);
module_param!(
    static REMOTE_POLL_INTERVAL_NS: u64 = Param::RemotePollInterval.default_value(),
    name: "remote_poll_interval_ns",
    perm: 0o444,
    desc: "remote polling interval in ns (1000)"
);

module_param!(
    static DILATION_MILLI: u32 = 1000,
    name: "dilation_milli",
    perm: 0o444,
    desc: "multiply every modelled cost (link and CCM compute) by this/1000: how much slower this CPU runs code than the modelled hardware (1000..=1000000; make bench calibrates it)"
);
module_param!(
    static CCM_UNITS: u32 = CcmConfig::PAPER.units,
    name: "ccm_units",
    perm: 0o444,
    desc: "the modelled CCM's processing units (Table III: 16)"
);
module_param!(
    static CCM_UTHREADS_PER_UNIT: u32 = CcmConfig::PAPER.uthreads_per_unit,
    name: "ccm_uthreads_per_unit",
    perm: 0o444,
    desc: "the modelled CCM's uthreads per processing unit (Table III: 16)"
);
module_param!(
    static CCM_CLOCK_MHZ: u32 = CcmConfig::PAPER.clock_mhz,
    name: "ccm_clock_mhz",
    perm: 0o444,
    desc: "the modelled CCM's clock in MHz (Table III: 2000)"
);
module_param!(
    static CCM_MEM_MB_PER_S: u64 = CcmConfig::PAPER.mem_mb_per_s,
    name: "ccm_mem_mb_per_s",
    perm: 0o444,
    desc: "the modelled CCM's memory bandwidth in MB/s (Table III: DDR5-4800 x 16, 614400)"
);
module_param!(
    static POLL_IDLE: bool = false,
    name: "poll_idle",
    perm: 0o444,
    desc: "poll the launch slots and mailboxes without sleeping while a tenant is enabled, as hardware watches them (needs a CPU of its own: make bench); false: sleep a few us between polls"
);
module_param!(
    static COMPUTE_MODEL: bool = true,
    name: "compute_model",
    perm: 0o444,
    desc: "release each chunk no earlier than the modelled CCM (16 x 16 uthreads at 2 GHz, DDR5-4800 x 16) would have computed it, and count the chunks computed later (STATS.model_deficit_ns)"
);
module_param!(
    static CHECKSUM_FAULT: bool = false,
    name: "checksum_fault",
    perm: 0o444,
    desc: "a fault for negative controls: store every RP and BS record's checksum inverted in the checksum table, so that a host that uses the table reports those records corrupt"
);

/// Whether RP and BS checksums are stored inverted (module parameter `checksum_fault`).
pub(crate) fn checksum_fault() -> bool {
    CHECKSUM_FAULT.get()
}

/// Whether AXLE_IRQ coalesces interrupts (module parameter `irq_coalesce`).
pub(crate) fn irq_coalesce() -> bool {
    IRQ_COALESCE.get()
}

/// The latency model from the module parameters, or `EINVAL` naming the one out of range.
fn latency_model() -> Result<LatencyModel> {
    let params = [
        (Param::CxlMemRtt, &CXL_MEM_RTT_NS),
        (Param::CxlIoRtt, &CXL_IO_RTT_NS),
        (Param::DmaPrep, &DMA_PREP_NS),
        (Param::DmaSegment, &DMA_SEGMENT_NS),
        (Param::DmaPsPerByte, &DMA_PS_PER_BYTE),
        (Param::Irq, &IRQ_NS),
        (Param::RemotePollInterval, &REMOTE_POLL_INTERVAL_NS),
    ];
    let mut model = LatencyModel::DEFAULT;
    for (param, value) in params {
        let v = value.get();
        if model.set(param, v).is_err() {
            let (lo, hi) = param.range();
            pr_err!("{}={} is out of range {}..={}\n", param.name(), v, lo, hi);
            return Err(EINVAL);
        }
    }
    model.dilated(dilation()?).map_err(|e| {
        pr_err!("dilation_milli={}: {}\n", DILATION_MILLI.get(), e);
        EINVAL
    })
}

/// The modelled CCM's clock (module parameters `compute_model`, `dilation_milli`), if the
/// device models its compute.
fn compute_clock(inflight: usize) -> Result<Option<ccm_clock::CcmClock>> {
    if !COMPUTE_MODEL.get() {
        return Ok(None);
    }
    let cfg = CcmConfig {
        units: CCM_UNITS.get(),
        uthreads_per_unit: CCM_UTHREADS_PER_UNIT.get(),
        clock_mhz: CCM_CLOCK_MHZ.get(),
        mem_mb_per_s: CCM_MEM_MB_PER_S.get(),
    };
    let model = ComputeModel::new(cfg, dilation()?).map_err(|e| {
        pr_err!("the CCM compute model: {}\n", e);
        EINVAL
    })?;
    // The clock books every chunk on the earliest free of them: keep the scan short.
    if model.slots() > MAX_MODELLED_UTHREADS {
        pr_err!(
            "ccm_units x ccm_uthreads_per_unit = {} is more than {MAX_MODELLED_UTHREADS}\n",
            model.slots()
        );
        return Err(EINVAL);
    }
    Ok(Some(ccm_clock::CcmClock::new(model, inflight)?))
}

/// The most virtual µthreads the CCM clock books chunks on.
const MAX_MODELLED_UTHREADS: u32 = 4096;

/// The dilation in thousandths (module parameter `dilation_milli`), checked.
fn dilation() -> Result<u32> {
    let d = DILATION_MILLI.get();
    if !(1000..=1_000_000).contains(&d) {
        pr_err!("dilation_milli={d} is out of range 1000..=1000000\n");
        return Err(EINVAL);
    }
    Ok(d)
}

/// Room for the register block at the start of each device's slice.
const REGISTER_SLICE: u64 = 128 << 10;
const _: () = assert!(abi::REGISTER_BLOCK_SIZE as u64 <= REGISTER_SLICE);
const MIB2: u64 = 2 << 20;
/// Scatter-gather segments a tenant's descriptor table may hold.
const MAX_SEGMENTS: u32 = 1024;
/// Ring capacity limit the device advertises.
const MAX_RING_SLOTS: u32 = 1 << 16;

/// `/sys/kernel/debug/cxl_ccm_dev.N/regs`: the device's control state as the host left it
/// (`dev_ctrl`, `dev_status`, the tenants whose enable bit is set), so that a test can check
/// that a driver which gave the device up — unbind, a failed probe — disabled it.
struct RegsView {
    regs: Arc<MemRemap>,
}

impl kernel::debugfs::Show for RegsView {
    fn show(&self, out: &mut kernel::debugfs::SeqWriter<'_>) -> core::fmt::Result {
        use core::fmt::Write;
        let r32 = |o: usize| {
            self.regs
                .atomic_u32(o)
                .map_or(0, |r| r.load(Ordering::Acquire))
        };
        let mut enabled = 0u32;
        for t in 0..abi::MAX_TENANTS {
            if r32(abi::tenant_regs_offset(t) + abi::TREG_CTRL) & abi::TENANT_CTRL_ENABLE != 0 {
                enabled |= 1 << t;
            }
        }
        writeln!(out, "dev_ctrl {:#x}", r32(abi::REG_DEV_CTRL))?;
        writeln!(out, "dev_status {:#x}", r32(abi::REG_DEV_STATUS))?;
        writeln!(out, "tenants_enabled {enabled:#x}")
    }
}

kernel::module_owner!(Owner);

/// One software device.
struct CcmDevice {
    _debugfs: kernel::debugfs::Dir<Owner>,
    // Unregistered first: the driver unbinds (and disables the device) while the engine still
    // runs and the registers are still mapped.
    _pdev: OwnedPlatformDevice,
    _engine: KThread,
    // After the engine: it no longer hands out work.
    _uthreads: uthreads::UThreads,
    _parent: ARef<Device>,
}

/// Writes the register block's reset state.
fn reset(regs: &MemRemap, mem_size: u64, latency: &LatencyModel) -> Result {
    let zero = [0u8; 256];
    let mut off = 0;
    while off < abi::REGISTER_BLOCK_SIZE {
        regs.write_bytes(off, &zero)?;
        off += zero.len();
    }
    let r32 = |o: usize, v: u32| regs.atomic_u32(o).map(|r| r.store(v, Ordering::Relaxed));
    let r64 = |o: usize, v: u64| regs.atomic_u64(o).map(|r| r.store(v, Ordering::Relaxed));
    r32(abi::REG_VERSION, abi::ABI_VERSION)?;
    // Every mode (AXLE streamed out of order or in order); STREAM_XFORM and the Table IV kernels
    // KNN, SSSP, PageRank, SSB Q1.x and DLRM SLS.
    let caps = abi::CAP_MODE_AXLE
        | abi::CAP_MODE_RP
        | abi::CAP_MODE_BS
        | abi::CAP_MODE_AXLE_IRQ
        | abi::CAP_IN_ORDER;
    r64(abi::REG_CAPS, caps)?;
    r64(
        abi::REG_KERNELS,
        1 << abi::KERNEL_STREAM_XFORM
            | 1 << abi::KERNEL_KNN
            | 1 << abi::KERNEL_SSB_Q1_1
            | 1 << abi::KERNEL_SSB_Q1_2
            | 1 << abi::KERNEL_DLRM_SLS
            | 1 << abi::KERNEL_PAGERANK
            | 1 << abi::KERNEL_SSSP
            | 1 << abi::KERNEL_LLM_ATTENTION,
    )?;
    r64(abi::REG_MEM_SIZE, mem_size)?;
    r64(abi::REG_TENANT_WINDOWS, 0)?;
    r32(abi::REG_MAX_TENANTS, MAX_TENANTS.get())?;
    r32(abi::REG_LAUNCH_SLOTS, abi::LAUNCH_SLOTS)?;
    r32(abi::REG_MIN_SLOT_SIZE, abi::MIN_SLOT_SIZE)?;
    r32(abi::REG_MAX_SLOT_SIZE, abi::MAX_SLOT_SIZE)?;
    r32(abi::REG_MAX_RING_SLOTS, MAX_RING_SLOTS)?;
    // The link the host must model on its side (every value fits: the model caps delays at
    // 100 ms and the per-byte cost at 1 MB/s).
    let link = |p: Param| u32::try_from(latency.get(p)).unwrap_or(u32::MAX);
    r32(abi::REG_LINK_CXL_MEM_RTT_NS, link(Param::CxlMemRtt))?;
    r32(abi::REG_LINK_CXL_IO_RTT_NS, link(Param::CxlIoRtt))?;
    r32(abi::REG_LINK_PS_PER_BYTE, link(Param::DmaPsPerByte))?;
    r32(
        abi::REG_LINK_REMOTE_POLL_NS,
        link(Param::RemotePollInterval),
    )?;
    // The host pays each interrupt's handling on its interrupt path (per streamed batch).
    r32(abi::REG_LINK_IRQ_NS, link(Param::Irq))?;
    // The link values above are dilated already; the host reads the factor to scale its own.
    r32(abi::REG_MODEL_DILATION_MILLI, dilation()?)?;
    r32(abi::REG_MAX_SEGMENTS, MAX_SEGMENTS)?;
    // Not ready until the host enables the device (see `engine`).
    r32(abi::REG_DEV_STATUS, 0)?;
    // The magic last, with release: a driver that sees it sees the rest.
    regs.atomic_u32(abi::REG_MAGIC)?
        .store(abi::REGISTER_MAGIC, Ordering::Release);
    Ok(())
}

struct CcmDevModule {
    // Unregistered first: no publish reaches a device being torn down.
    _visibility: Option<kernel::coherence::Registration>,
    devices: KVec<CcmDevice>,
}

/// The module parameters that shape the devices, checked.
struct Params {
    latency: LatencyModel,
    uthreads: u32,
    tenants: u32,
    /// The reserved window's physical base and size, and each device's memory size, in bytes.
    base: u64,
    window: u64,
    mem: u64,
}

impl Params {
    /// Reads and checks the module parameters.
    fn get() -> Result<Self> {
        let latency = latency_model()?;
        let uthreads = UTHREADS.get();
        if uthreads > 16 {
            pr_err!("uthreads={uthreads} is out of range 0..=16\n");
            return Err(EINVAL);
        }
        let tenants = MAX_TENANTS.get();
        if !(1..=abi::MAX_TENANTS).contains(&tenants) {
            pr_err!(
                "max_tenants={tenants} is out of range 1..={}\n",
                abi::MAX_TENANTS
            );
            return Err(EINVAL);
        }
        let (base, window, mem) = (MEM_BASE.get(), MEM_WINDOW.get(), DEV_MEM_SIZE.get());
        if base == 0 || window == 0 {
            pr_err!("no device-memory window: boot with memmap=SIZE$BASE and load with mem_base=BASE mem_window=SIZE\n");
            return Err(EINVAL);
        }
        if base % MIB2 != 0 || window % MIB2 != 0 || base.checked_add(window).is_none() {
            pr_err!("mem_base {base:#x} and mem_window {window:#x} must be 2 MiB aligned\n");
            return Err(EINVAL);
        }
        if mem == 0 || mem % MIB2 != 0 {
            pr_err!("dev_mem_size {mem:#x} must be a non-zero multiple of 2 MiB\n");
            return Err(EINVAL);
        }
        Ok(Self {
            latency,
            uthreads,
            tenants,
            base,
            window,
            mem,
        })
    }
}

/// A device's mappings: its register block, its memory and, when HDM-H is modelled, what the
/// device can see of that memory.
struct Mapped {
    regs: Arc<MemRemap>,
    mem: Arc<MemRemap>,
    vis: Option<Arc<visibility::Visibility>>,
}

/// Maps device `regs_res` and `mem_res`, writes the register block's reset state and, when HDM-H
/// is modelled (`observer`), has the observer track the device memory.
fn map_device(
    regs_res: MemResource,
    mem_res: MemResource,
    p: &Params,
    observer: Option<&Arc<visibility::Devices>>,
) -> Result<Mapped> {
    // The memory types the driver maps them with (x86 PAT refuses a mapping whose type
    // differs from another mapping's): registers uncached, memory write-combining.
    let regs = Arc::new(MemRemap::new(regs_res, MapMode::Uncached)?, GFP_KERNEL)?;
    reset(&regs, p.mem, &p.latency)?;
    let dev_mem = Arc::new(MemRemap::new(mem_res, MapMode::WriteCombining)?, GFP_KERNEL)?;
    let vis = match observer {
        Some(o) => {
            let v = visibility::Visibility::new(dev_mem.clone(), mem_res.start)?;
            o.add(v.clone())?;
            Some(v)
        }
        None => None,
    };
    Ok(Mapped {
        regs,
        mem: dev_mem,
        vis,
    })
}

/// `/sys/kernel/debug/cxl_ccm_dev.N/`, for device `i` whose registers are `regs`.
fn debugfs_dir(i: u64, regs: Arc<MemRemap>) -> Result<kernel::debugfs::Dir<Owner>> {
    let dname = CString::try_from_fmt(kernel::fmt!("cxl_ccm_dev.{i}"))?;
    let mut dir = kernel::debugfs::Dir::<Owner>::new(&dname);
    dir.show_file(
        kernel::c_str!("regs"),
        Arc::new(RegsView { regs }, GFP_KERNEL)?,
    )?;
    Ok(dir)
}

impl CcmDevice {
    /// Creates device `i` under cxl_test's memory device `parent` (named `name`): its slice of
    /// the window mapped and reset, its µthreads and engine started, its platform device
    /// registered for the driver.
    fn new(
        i: u64,
        name: &CStr,
        parent: ARef<Device>,
        p: &Params,
        observer: Option<&Arc<visibility::Devices>>,
    ) -> Result<Self> {
        let start = p.base + i * (p.mem + REGISTER_SLICE);
        let regs_res = MemResource {
            start,
            size: abi::REGISTER_BLOCK_SIZE as u64,
        };
        let mem_res = MemResource {
            start: start + REGISTER_SLICE,
            size: p.mem,
        };
        let Mapped {
            regs,
            mem: dev_mem,
            vis,
        } = map_device(regs_res, mem_res, p, observer)?;
        let inflight = abi::MAX_TENANTS as usize * tenant::MAX_INFLIGHT as usize;
        let pool = uthreads::Pool::new(inflight, dev_mem.clone(), p.uthreads == 0)?;
        let uthreads = uthreads::UThreads::start(p.uthreads, i as u32, &pool)?;
        // The device's interrupt, an ordinary interrupt resource for the driver.
        let line = Arc::new(SoftLine::new()?, GFP_KERNEL)?;
        let irq = line.irq();
        let regs_view = regs.clone();
        let cfg = engine::EngineConfig {
            pool,
            line,
            regs,
            mem: dev_mem,
            latency: p.latency,
            round_robin: ROUND_ROBIN.get(),
            // The tenant windows (one per tenant) come first; partitions follow.
            windows_end: abi::TENANT_WINDOW_SIZE * u64::from(p.tenants),
            max_segments: MAX_SEGMENTS,
            name: i as u32,
            vis,
            clock: compute_clock(inflight)?,
            poll_idle: POLL_IDLE.get(),
        };
        let engine = KThread::spawn(kernel::fmt!("cxl_ccm.{i}"), move || engine::run(cfg))?;
        let pdev = OwnedPlatformDevice::register_with_irqs(
            kernel::c_str!("cxl_ccm"),
            i as i32,
            Some(&parent),
            &[regs_res, mem_res],
            &[irq],
        )?;
        pr_info!(
            "cxl_ccm.{i} on {}: registers at {start:#x}, {} MiB device memory at {:#x}\n",
            name,
            p.mem >> 20,
            mem_res.start
        );
        Ok(Self {
            _debugfs: debugfs_dir(i, regs_view)?,
            _pdev: pdev,
            _engine: engine,
            _uthreads: uthreads,
            _parent: parent,
        })
    }
}

impl kernel::Module for CcmDevModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = Params::get()?;
        let slice = p.mem + REGISTER_SLICE;
        let fit = p.window / slice;
        let want = match MAX_DEVICES.get() {
            0 => fit,
            n => u64::from(n).min(fit),
        };
        let mut devices = KVec::new();
        let (observer, visibility) = if CHECK_VISIBILITY.get() {
            let o = visibility::Devices::new()?;
            let reg = kernel::coherence::Registration::new(o.clone())?;
            pr_info!("modelling HDM-H: host stores are checked for publishing\n");
            (Some(o), Some(reg))
        } else {
            (None, None)
        };
        for i in 0..want {
            let name = CString::try_from_fmt(kernel::fmt!("cxl_mem.{i}"))?;
            let Some(parent) = platform::find_device(&name) else {
                break;
            };
            let dev = CcmDevice::new(i, &name, parent, &p, observer.as_ref())?;
            devices.push(dev, GFP_KERNEL)?;
        }
        if devices.is_empty() {
            pr_err!(
                "no device attached: no cxl_test mock memdev (load cxl_test first), or dev_mem_size {:#x} does not fit in the window\n",
                p.mem
            );
            return Err(ENODEV);
        }
        Ok(Self {
            _visibility: visibility,
            devices,
        })
    }
}

impl Drop for CcmDevModule {
    fn drop(&mut self) {
        pr_info!("removing {} device(s)\n", self.devices.len());
    }
}
