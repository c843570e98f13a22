// SPDX-License-Identifier: GPL-2.0

//! reflux_dev: the software CXL SSD with a persistent memory region (PMR), for ReFlux.
//!
//! It stands in for the paper's CXL computational-storage device (§4.1, §5.1): a PMR that both
//! sides map coherently (I/O rings, data buffers, request state, actor shared state, epochs,
//! per-block metadata, and a data store standing for the NAND behind the PMR write cache), a
//! register block (identification, control, telemetry, fault injection), engine cores that run
//! device-placed pipeline stages with the same actor engines as the host
//! (`drivers/reflux/actor`), a thermal model that throttles them, and a completion interrupt.
//! The host driver (`drivers/reflux`) binds to it through the ABI of `drivers/reflux/abi.rs`
//! alone.
//!
//! # Where the device lives
//!
//! The VM reserves a window of guest-physical memory with `memmap=SIZE$BASE`, backed by a
//! shared host file so that what is stored there survives QEMU being killed (the PMR's
//! power-loss protection). The module is loaded with `pmr_base=BASE pmr_window=SIZE`. The
//! register block is the window's last 4 KiB (not persistent state: reset at every load); the
//! PMR is the rest, from the window's start, so that its superblock is at a fixed place across
//! reboots. The device attaches to cxl_test's mock memdev `cxl_mem.0` and registers the platform
//! device `reflux.0` under it: resource 0 the register block, resource 1 the PMR, and the
//! completion interrupt (a software interrupt line) when `irq=1`.
//!
//! With `engine_base=BASE engine_window=SIZE` (another reserved window of the same shared
//! file) the device has a compression engine outside the VM, `tools/reflux-engine`, that runs
//! writes' crc32c and LZ4 steps for the cores ([`engine`], [`engine_abi`]).
//!
//! # Load, format, unload
//!
//! At load the PMR is kept if its superblock validates (data survives power cuts and module
//! reloads; if the module parameters ask for another layout the stored one wins, with a log
//! line) and formatted otherwise ([`format`]). The device then waits, not ready, for the host's
//! enable handshake ([`control`]).
//!
//! At unload the platform device is unregistered first, so the host driver unbinds (and disables
//! the device) while the device still runs; then the engine cores stop, each after finishing the
//! request it holds, completion included (nothing is left half-done; requests the host left in
//! the SQ stay there); then the controller.
//!
//! # Behaviour decisions
//!
//! - Actors: at format the actor table gets one actor per stage kind, id = kind (1 crc32c,
//!   2 lz4, 3 aes-xts), the AES-XTS one with a key derived from the device id
//!   (`actor::default_xts_key`; not a secret, key management is out of scope).
//! - Disable finishes the requests the cores hold (a waiting flush is cancelled with
//!   `ECANCELED`); reset abandons them (no completion: the host rewrites the rings).
//! - The drain model: committed bytes join the write-cache backlog, which drains at `nand_mbps`;
//!   a flush completes once everything committed before it has drained.

// `pin_init!` of the device state, which has many fields, recurses deeper than the default
// limit.
#![recursion_limit = "256"]

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
    sync::Arc,
    types::ARef,
};

/// The device ABI, shared with the driver.
#[path = "../../../drivers/reflux/abi.rs"]
pub mod abi;
/// The actor engines, shared with the driver.
#[path = "../../../drivers/reflux/actor/mod.rs"]
pub mod actor;
/// The pure protocol logic, shared with the driver (and tested on the host by
/// `tools/reflux-proto`).
#[path = "../../../drivers/reflux/proto/mod.rs"]
pub mod proto;

mod control;
mod cores;
mod dev;
mod engine;
/// The interface to the compression engine outside the VM, shared with `tools/reflux-engine`.
pub mod engine_abi;
mod format;
mod migrate;
mod store;

use proto::thermal::ThermalParams;

module! {
    type: RefluxDevModule,
    name: "reflux_dev",
    author: "cxlstack developers",
    description: "Software CXL SSD with a persistent memory region and storage-actor engine cores",
    license: "GPL",
}

module_param!(
    static PMR_BASE: u64 = 0,
    name: "pmr_base",
    perm: 0o444,
    desc: "physical base of the reserved window (boot with memmap=SIZE$BASE); 4 KiB aligned"
);
module_param!(
    static PMR_WINDOW: u64 = 0,
    name: "pmr_window",
    perm: 0o444,
    desc: "size in bytes of the reserved window: the PMR, then the 4 KiB register block"
);
module_param!(
    static ENGINE_BASE: u64 = 0,
    name: "engine_base",
    perm: 0o444,
    desc: "physical base of the compression engine's window (reserved, shared with the engine process); 0: no engine"
);
module_param!(
    static ENGINE_WINDOW: u64 = 0,
    name: "engine_window",
    perm: 0o444,
    desc: "size in bytes of the compression engine's window; 0: no engine"
);
module_param!(
    static NR_CORES: u32 = 2,
    name: "nr_cores",
    perm: 0o444,
    desc: "engine cores that run device-placed stages (1..=8)"
);
module_param!(
    static SPEED_PERMILLE: u32 = 1000,
    name: "speed_permille",
    perm: 0o644,
    desc: "engine speed relative to a host CPU in permille (1..=4000), halved while throttled; writable"
);
module_param!(
    static SQ_ENTRIES: u32 = 256,
    name: "sq_entries",
    perm: 0o444,
    desc: "entries of each ring, a power of two (1..=4096); used when formatting"
);
module_param!(
    static NR_BUFFERS: u32 = 0,
    name: "nr_buffers",
    perm: 0o444,
    desc: "4 KiB data buffers in the PMR (0: sq_entries * 32, at most 8192); used when formatting"
);
module_param!(
    static CAPACITY_MIB: u64 = 0,
    name: "capacity_mib",
    perm: 0o444,
    desc: "capacity in MiB (0: as much as fits in the PMR); used when formatting"
);
module_param!(
    static FORMAT: bool = false,
    name: "format",
    perm: 0o444,
    desc: "format the PMR even if it holds a valid superblock (its data is lost)"
);
module_param!(
    static IRQ: bool = true,
    name: "irq",
    perm: 0o444,
    desc: "give the device a completion interrupt (CAP_IRQ); without it the host polls"
);
module_param!(
    static NAND_MBPS: u32 = 2000,
    name: "nand_mbps",
    perm: 0o444,
    desc: "bandwidth in MB/s at which the PMR write cache drains to NAND (1..=1000000)"
);
module_param!(
    static THERMAL_AMBIENT_MC: u32 = ThermalParams::DEFAULT.ambient_milli_c,
    name: "thermal_ambient_mc",
    perm: 0o444,
    desc: "thermal model: ambient temperature in milli-degrees C (35000)"
);
module_param!(
    static THERMAL_THROTTLE_MC: u32 = ThermalParams::DEFAULT.throttle_milli_c,
    name: "thermal_throttle_mc",
    perm: 0o444,
    desc: "thermal model: throttle at this temperature, milli-degrees C (77000, the OCP threshold)"
);
module_param!(
    static THERMAL_UNTHROTTLE_MC: u32 = ThermalParams::DEFAULT.unthrottle_milli_c,
    name: "thermal_unthrottle_mc",
    perm: 0o444,
    desc: "thermal model: unthrottle below this temperature, milli-degrees C (72000)"
);
module_param!(
    static THERMAL_RISE_MC: u32 = ThermalParams::DEFAULT.full_load_rise_milli_c,
    name: "thermal_rise_mc",
    perm: 0o444,
    desc: "thermal model: steady-state rise of a fully busy engine, milli-degrees C (60000)"
);
module_param!(
    static THERMAL_TAU_MS: u32 = ThermalParams::DEFAULT.tau_us / 1000,
    name: "thermal_tau_ms",
    perm: 0o444,
    desc: "thermal model: time constant in ms (2000)"
);
module_param!(
    static THERMAL_SET_MC: u32 = 0,
    name: "thermal_set_mc",
    perm: 0o644,
    desc: "write a temperature in milli-degrees C to set the device to it (a new value each time; 0: none)"
);

module_param!(
    static HANG: bool = false,
    name: "hang",
    perm: 0o644,
    desc: "fault injection: while set the device takes no request and its heartbeat stops (a hung controller)"
);

module_param!(
    static STALL_ENABLE: bool = false,
    name: "stall_enable",
    perm: 0o644,
    desc: "fault injection: while set the device does not act on an enable (a controller that does not come up; the driver's probe times out)"
);

module_param!(
    static ENGINE_PAUSE: bool = false,
    name: "engine_pause",
    perm: 0o644,
    desc: "fault injection: while set the compression engine is asked to neither serve nor beat its heartbeat (a hung engine; the cores run requests themselves)"
);

module_param!(
    static MIGRATE_MAILBOX: bool = true,
    name: "migrate_mailbox",
    perm: 0o444,
    desc: "serve the migration mailbox (CAP_MIGRATE_MAILBOX); 0: migrations come as DIR_MIGRATE descriptors in the SQ"
);

/// Allowed engine speeds, in permille of the host's.
pub(crate) const SPEED_RANGE: core::ops::RangeInclusive<u32> = 1..=4000;
/// Allowed engine core counts.
const CORES_RANGE: core::ops::RangeInclusive<u32> = 1..=8;
/// Allowed NAND bandwidths, in MB/s.
const NAND_RANGE: core::ops::RangeInclusive<u32> = 1..=1_000_000;
/// Most buffers the automatic choice takes (32 MiB of PMR).
const AUTO_BUFFERS_MAX: u32 = 8192;
/// Throttled engines run at half speed (the brief's and the paper's cliff).
const THROTTLED_SPEED_PERMILLE: u32 = 500;

/// The validated module parameters.
struct Params {
    base: u64,
    window: u64,
    engine: Option<MemResource>,
    nr_cores: u32,
    speed: u32,
    want: format::Wanted,
    irq: bool,
    nand_mbps: u32,
    thermal: ThermalParams,
}

/// Checks `v` against `range`; out of range is `EINVAL` with a log line naming the parameter.
fn in_range(name: &str, v: u32, range: core::ops::RangeInclusive<u32>) -> Result<u32> {
    if range.contains(&v) {
        Ok(v)
    } else {
        pr_err!(
            "{name}={v} is out of range {}..={}\n",
            range.start(),
            range.end()
        );
        Err(EINVAL)
    }
}

/// Reads and checks the module parameters.
fn params() -> Result<Params> {
    let nr_cores = in_range("nr_cores", NR_CORES.get(), CORES_RANGE)?;
    let speed = in_range("speed_permille", SPEED_PERMILLE.get(), SPEED_RANGE)?;
    let nand_mbps = in_range("nand_mbps", NAND_MBPS.get(), NAND_RANGE)?;
    let ring_entries = SQ_ENTRIES.get();
    if !(1..=abi::MAX_RING_ENTRIES).contains(&ring_entries) || !ring_entries.is_power_of_two() {
        pr_err!(
            "sq_entries={ring_entries} must be a power of two in 1..={}\n",
            abi::MAX_RING_ENTRIES
        );
        return Err(EINVAL);
    }
    let nr_buffers = match NR_BUFFERS.get() {
        0 => ring_entries
            .saturating_mul(abi::MAX_REQ_BLOCKS)
            .min(AUTO_BUFFERS_MAX),
        n if n < abi::MAX_REQ_BLOCKS => {
            pr_err!(
                "nr_buffers={n} is below {}, the largest request\n",
                abi::MAX_REQ_BLOCKS
            );
            return Err(EINVAL);
        }
        n => n,
    };
    let nr_blocks = match CAPACITY_MIB.get() {
        0 => 0,
        mib => mib
            .checked_mul(1 << (20 - abi::BLOCK_SHIFT))
            .ok_or_else(|| {
                pr_err!("capacity_mib={mib} is too large\n");
                EINVAL
            })?,
    };
    let thermal = ThermalParams {
        ambient_milli_c: THERMAL_AMBIENT_MC.get(),
        throttle_milli_c: THERMAL_THROTTLE_MC.get(),
        unthrottle_milli_c: THERMAL_UNTHROTTLE_MC.get(),
        full_load_rise_milli_c: THERMAL_RISE_MC.get(),
        tau_us: THERMAL_TAU_MS.get().saturating_mul(1000),
        cores: nr_cores,
        throttled_speed_permille: THROTTLED_SPEED_PERMILLE,
    };
    if let Err(e) = thermal.validate() {
        pr_err!(
            "thermal_* parameters (ambient {}, unthrottle {}, throttle {}, rise {} m°C, tau {} ms): {e}\n",
            thermal.ambient_milli_c,
            thermal.unthrottle_milli_c,
            thermal.throttle_milli_c,
            thermal.full_load_rise_milli_c,
            THERMAL_TAU_MS.get()
        );
        return Err(EINVAL);
    }
    let (base, window) = (PMR_BASE.get(), PMR_WINDOW.get());
    if base == 0 || window == 0 {
        pr_err!("no PMR window: boot with memmap=SIZE$BASE and load with pmr_base=BASE pmr_window=SIZE\n");
        return Err(EINVAL);
    }
    let align = abi::PMR_AREA_ALIGN;
    if base % align != 0 || window % align != 0 || base.checked_add(window).is_none() {
        pr_err!("pmr_base {base:#x} and pmr_window {window:#x} must be 4 KiB aligned\n");
        return Err(EINVAL);
    }
    if window <= abi::REGISTER_BLOCK_SIZE as u64 {
        pr_err!("pmr_window {window:#x} leaves no room for a PMR next to the register block\n");
        return Err(EINVAL);
    }
    let engine = engine_window(base, window)?;
    Ok(Params {
        base,
        window,
        engine,
        nr_cores,
        speed,
        want: format::Wanted {
            ring_entries,
            nr_buffers,
            nr_blocks,
        },
        irq: IRQ.get(),
        nand_mbps,
        thermal,
    })
}

/// The compression engine's window from `engine_base` and `engine_window`: none if both are 0;
/// `EINVAL` unless it is 4 KiB aligned, large enough for the interface and apart from the PMR
/// window `base..base + window`.
fn engine_window(base: u64, window: u64) -> Result<Option<MemResource>> {
    let (start, size) = (ENGINE_BASE.get(), ENGINE_WINDOW.get());
    if start == 0 && size == 0 {
        return Ok(None);
    }
    let align = abi::PMR_AREA_ALIGN;
    let end = start.checked_add(size);
    let apart = end.is_some_and(|e| e <= base || start >= base.saturating_add(window));
    if start == 0 || start % align != 0 || size % align != 0 || !apart {
        pr_err!("engine_base {start:#x} and engine_window {size:#x} must be a 4 KiB aligned window apart from the PMR's\n");
        return Err(EINVAL);
    }
    if size < engine_abi::WINDOW_BYTES as u64 {
        pr_err!(
            "engine_window {size:#x} is smaller than the engine interface's {:#x} bytes\n",
            engine_abi::WINDOW_BYTES
        );
        return Err(EINVAL);
    }
    Ok(Some(MemResource { start, size }))
}

/// Writes the register block's state at load: identification, telemetry at rest, no fault
/// pending, not ready; the magic last, with release, so that a driver that sees it sees the rest.
fn reset_registers(regs: &MemRemap, layout: &abi::PmrLayout, pmr_size: u64, p: &Params) -> Result {
    let zero = [0u8; 256];
    let mut off = 0;
    while off < abi::REGISTER_BLOCK_SIZE {
        regs.write_bytes(off, &zero)?;
        off += zero.len();
    }
    let r32 = |o: usize, v: u32| regs.atomic_u32(o).map(|r| r.store(v, Ordering::Relaxed));
    let r64 = |o: usize, v: u64| regs.atomic_u64(o).map(|r| r.store(v, Ordering::Relaxed));
    let mut caps = abi::CAP_POLL | abi::CAP_FAULT_INJECT | abi::CAP_MIGRATE;
    if MIGRATE_MAILBOX.get() {
        caps |= abi::CAP_MIGRATE_MAILBOX;
    }
    for pipeline in 0..abi::PIPELINE_COUNT {
        caps |= abi::cap_pipeline(pipeline);
    }
    if p.irq {
        caps |= abi::CAP_IRQ;
    }
    r32(abi::REG_VERSION, abi::ABI_VERSION)?;
    r64(abi::REG_CAPS, caps)?;
    r64(abi::REG_PMR_SIZE, pmr_size)?;
    r64(abi::REG_CAPACITY_BLOCKS, layout.params().nr_blocks)?;
    r32(abi::REG_NR_CORES, p.nr_cores)?;
    r64(abi::REG_FAULT_INJECT, abi::FAULT_INJECT_IDLE)?;
    r32(abi::REG_TEMP_MILLI_C, p.thermal.ambient_milli_c)?;
    r32(abi::REG_SPEED_PERMILLE, p.speed)?;
    r32(abi::REG_DEV_STATUS, 0)?;
    regs.atomic_u32(abi::REG_MAGIC)?
        .store(abi::REGISTER_MAGIC, Ordering::Release);
    Ok(())
}

/// The instance number of the one device.
const DEVICE_ID: u32 = 0;

struct RefluxDevModule {
    // Dropped in this order. The platform device first: the host driver unbinds, disabling the
    // device, while the controller and the cores still run and the mappings are still there.
    _pdev: OwnedPlatformDevice,
    // Then the cores (each finishes the request it holds), then the controller.
    _cores: KVec<KThread>,
    _control: KThread,
    _dev: Arc<dev::Dev>,
    _parent: ARef<Device>,
}

impl kernel::Module for RefluxDevModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = params()?;
        actor::aes::self_test()?;
        let Some(parent) = platform::find_device(kernel::c_str!("cxl_mem.0")) else {
            pr_err!("no cxl_test mock memdev cxl_mem.0 to attach to: load cxl_test first\n");
            return Err(ENODEV);
        };
        let pmr_size = p.window - abi::REGISTER_BLOCK_SIZE as u64;
        let regs_res = MemResource {
            start: p.base + pmr_size,
            size: abi::REGISTER_BLOCK_SIZE as u64,
        };
        let pmr_res = MemResource {
            start: p.base,
            size: pmr_size,
        };
        let want = format::wanted_layout(p.want, pmr_size)?;
        // Uncached, as the host maps them (MMIO): one memory type for the page.
        let regs = MemRemap::new(regs_res, MapMode::Uncached)?;
        let pmr = MemRemap::new(pmr_res, MapMode::WriteBack)?;
        let layout = format::mount_or_format(&pmr, pmr_size, &want, DEVICE_ID, FORMAT.get())?;
        reset_registers(&regs, &layout, pmr_size, &p)?;
        let line = if p.irq { Some(SoftLine::new()?) } else { None };
        let irqs: KVec<u32> = match &line {
            Some(l) => KVec::from_elem(l.irq(), 1, GFP_KERNEL)?,
            None => KVec::new(),
        };
        let engine = match p.engine {
            Some(res) => Some(engine::Engine::new(res, pmr_size, p.nr_cores)?),
            None => None,
        };
        let dev = Arc::pin_init(
            dev::Dev::new(
                DEVICE_ID, regs, pmr, pmr_size, layout, p.speed, line, engine,
            )?,
            GFP_KERNEL,
        )?;
        // Every core's scratch before any thread starts: a failed allocation fails the load.
        let mut scratches = KVec::with_capacity(p.nr_cores as usize, GFP_KERNEL)?;
        for _ in 0..p.nr_cores {
            scratches.push(actor::exec::Scratch::new()?, GFP_KERNEL)?;
        }
        let cfg = control::ControlConfig {
            thermal: p.thermal,
            nand_mbps: p.nand_mbps,
        };
        let d = dev.clone();
        let control = KThread::spawn(kernel::fmt!("reflux{DEVICE_ID}-ctl"), move || {
            control::run(d, cfg)
        })?;
        // The controller stands in for the device's management core, hardware the host's load
        // cannot delay: it takes a migration command (or the lifecycle and telemetry duties) as
        // soon as it looks, not after the vCPU's current task has used its slice.
        control.set_fifo_low();
        let mut cores = KVec::with_capacity(p.nr_cores as usize, GFP_KERNEL)?;
        for (i, scratch) in (0u32..).zip(scratches) {
            let d = dev.clone();
            let core = KThread::spawn(kernel::fmt!("reflux{DEVICE_ID}-core{i}"), move || {
                cores::run(d, i, scratch)
            })?;
            cores.push(core, GFP_KERNEL)?;
        }
        let pdev = OwnedPlatformDevice::register_with_irqs(
            kernel::c_str!("reflux"),
            DEVICE_ID as i32,
            Some(&parent),
            &[regs_res, pmr_res],
            &irqs,
        )?;
        let lp = layout.params();
        pr_info!(
            "reflux.{DEVICE_ID} on cxl_mem.0: {} MiB PMR at {:#x}, registers at {:#x}; {} blocks ({} MiB), {} ring entries, {} buffers; {} cores at {} permille{}\n",
            pmr_size >> 20,
            pmr_res.start,
            regs_res.start,
            lp.nr_blocks,
            lp.nr_blocks >> (20 - abi::BLOCK_SHIFT),
            lp.ring_entries,
            lp.nr_buffers,
            p.nr_cores,
            p.speed,
            if p.irq { ", interrupt" } else { ", polled" }
        );
        Ok(Self {
            _pdev: pdev,
            _cores: cores,
            _control: control,
            _dev: dev,
            _parent: parent,
        })
    }
}

impl Drop for RefluxDevModule {
    fn drop(&mut self) {
        if let Some(e) = self._dev.engine.as_ref() {
            pr_info!(
                "reflux.{DEVICE_ID}: the compression engine ran {} requests; {} ran here instead ({} refused)\n",
                e.jobs.load(Ordering::Relaxed),
                e.fallbacks.load(Ordering::Relaxed),
                e.refused.load(Ordering::Relaxed)
            );
        }
        pr_info!("removing reflux.{DEVICE_ID}\n");
    }
}
