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
//! Implemented: discovery, the window layout, the register block reset state (identification,
//! limits), the device control loop (`dev_ctrl` enable → `DEV_STATUS_READY`, heartbeat), removal. Not yet: the near-memory engine, the DMA executor and
//! the latency model (their pure logic lives in `model/`); until they land the device
//! advertises no offload mode and no kernel in its capability registers.

use core::sync::atomic::Ordering;
use kernel::{
    device::Device,
    kthread::{self, KThread},
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

use model::latency::{LatencyModel, Param};

module! {
    type: CcmDevModule,
    name: "cxl_ccm_dev",
    author: "cxlstack developers",
    description: "Software CXL computational-memory device on cxl_test's mock memdevs",
    license: "GPL",
}

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
    static REMOTE_POLL_INTERVAL_NS: u64 = Param::RemotePollInterval.default_value(),
    name: "remote_poll_interval_ns",
    perm: 0o444,
    desc: "remote polling interval in ns (1000)"
);

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
    Ok(model)
}

/// Room for the register block at the start of each device's slice.
const REGISTER_SLICE: u64 = 128 << 10;
const _: () = assert!(abi::REGISTER_BLOCK_SIZE as u64 <= REGISTER_SLICE);
const MIB2: u64 = 2 << 20;

/// One software device.
struct CcmDevice {
    // Unregistered first: the driver unbinds (and disables the device) while the engine still
    // runs and the registers are still mapped.
    _pdev: OwnedPlatformDevice,
    _engine: KThread,
    _regs: Arc<MemRemap>,
    _parent: ARef<Device>,
}

/// The device's control loop: follows `dev_ctrl` into `dev_status` and beats the heartbeat
/// while ready. (Tenant service joins this loop with the data plane.)
fn engine(regs: Arc<MemRemap>) -> i32 {
    let (Ok(ctrl), Ok(status), Ok(heartbeat)) = (
        regs.atomic_u32(abi::REG_DEV_CTRL),
        regs.atomic_u32(abi::REG_DEV_STATUS),
        regs.atomic_u32(abi::REG_HEARTBEAT),
    ) else {
        return -(kernel::bindings::EINVAL as i32);
    };
    while !kthread::should_stop() {
        // Acquire: what the host wrote before enabling is visible once the bit is.
        let enabled = ctrl.load(Ordering::Acquire) & abi::DEV_CTRL_ENABLE != 0;
        let ready = status.load(Ordering::Relaxed) & abi::DEV_STATUS_READY != 0;
        if enabled {
            if !ready {
                status.store(abi::DEV_STATUS_READY, Ordering::Release);
            }
            heartbeat.fetch_add(1, Ordering::Release);
        } else if ready {
            status.store(0, Ordering::Release);
        }
        // One jiffy (at most 10 ms for HZ >= 100), the heartbeat period the ABI promises.
        kthread::schedule_timeout_interruptible(1);
    }
    0
}

/// Writes the register block's reset state.
fn reset(regs: &MemRemap, mem_size: u64) -> Result {
    let zero = [0u8; 256];
    let mut off = 0;
    while off < abi::REGISTER_BLOCK_SIZE {
        regs.write_bytes(off, &zero)?;
        off += zero.len();
    }
    let r32 = |o: usize, v: u32| regs.atomic_u32(o).map(|r| r.store(v, Ordering::Relaxed));
    let r64 = |o: usize, v: u64| regs.atomic_u64(o).map(|r| r.store(v, Ordering::Relaxed));
    r32(abi::REG_VERSION, abi::ABI_VERSION)?;
    // No offload mode and no kernel until the engine and the DMA executor exist.
    r64(abi::REG_CAPS, 0)?;
    r64(abi::REG_KERNELS, 0)?;
    r64(abi::REG_MEM_SIZE, mem_size)?;
    r64(abi::REG_TENANT_WINDOWS, 0)?;
    r32(abi::REG_MAX_TENANTS, abi::MAX_TENANTS)?;
    r32(abi::REG_LAUNCH_SLOTS, abi::LAUNCH_SLOTS)?;
    r32(abi::REG_MIN_SLOT_SIZE, abi::MIN_SLOT_SIZE)?;
    r32(abi::REG_MAX_SLOT_SIZE, abi::MAX_SLOT_SIZE)?;
    r32(abi::REG_MAX_RING_SLOTS, 1 << 16)?;
    r32(abi::REG_MAX_SEGMENTS, 256)?;
    // Not ready until the host enables the device (see `engine`).
    r32(abi::REG_DEV_STATUS, 0)?;
    // The magic last, with release: a driver that sees it sees the rest.
    regs.atomic_u32(abi::REG_MAGIC)?
        .store(abi::REGISTER_MAGIC, Ordering::Release);
    Ok(())
}

struct CcmDevModule {
    devices: KVec<CcmDevice>,
    // Charged by the engine once it lands; validated at load so bad values fail early.
    _latency: LatencyModel,
}

impl kernel::Module for CcmDevModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let latency = latency_model()?;
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
        let slice = mem + REGISTER_SLICE;
        let fit = window / slice;
        let want = match MAX_DEVICES.get() {
            0 => fit,
            n => u64::from(n).min(fit),
        };
        let mut devices = KVec::new();
        for i in 0..want {
            let name = CString::try_from_fmt(kernel::fmt!("cxl_mem.{i}"))?;
            let Some(parent) = platform::find_device(&name) else {
                break;
            };
            let start = base + i * slice;
            let regs_res = MemResource {
                start,
                size: abi::REGISTER_BLOCK_SIZE as u64,
            };
            let mem_res = MemResource {
                start: start + REGISTER_SLICE,
                size: mem,
            };
            let regs = Arc::new(MemRemap::new(regs_res, MapMode::WriteBack)?, GFP_KERNEL)?;
            reset(&regs, mem)?;
            let engine_regs = regs.clone();
            let engine = KThread::spawn(kernel::fmt!("cxl_ccm.{i}"), move || engine(engine_regs))?;
            let pdev = OwnedPlatformDevice::register(
                kernel::c_str!("cxl_ccm"),
                i as i32,
                Some(&parent),
                &[regs_res, mem_res],
            )?;
            pr_info!(
                "cxl_ccm.{i} on {}: registers at {start:#x}, {} MiB device memory at {:#x}\n",
                &*name,
                mem >> 20,
                mem_res.start
            );
            devices.push(
                CcmDevice {
                    _pdev: pdev,
                    _engine: engine,
                    _regs: regs,
                    _parent: parent,
                },
                GFP_KERNEL,
            )?;
        }
        if devices.is_empty() {
            pr_err!(
                "no device attached: no cxl_test mock memdev (load cxl_test first), or dev_mem_size {mem:#x} does not fit in the window\n"
            );
            return Err(ENODEV);
        }
        Ok(Self {
            devices,
            _latency: latency,
        })
    }
}

impl Drop for CcmDevModule {
    fn drop(&mut self) {
        pr_info!("removing {} device(s)\n", self.devices.len());
    }
}
