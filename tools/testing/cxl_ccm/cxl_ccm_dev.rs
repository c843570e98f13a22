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
//! limits, `DEV_STATUS_READY`), removal. Not yet: the near-memory engine, the DMA executor and
//! the latency model (their pure logic lives in `model/`); until they land the device
//! advertises no offload mode and no kernel in its capability registers.

use core::sync::atomic::Ordering;
use kernel::{
    device::Device,
    memremap::{MapMode, MemRemap},
    module_param,
    platform::{self, MemResource, OwnedPlatformDevice},
    prelude::*,
    shared_mem::SharedMem,
    str::CString,
    types::ARef,
};

/// The device ABI, shared with the driver.
#[path = "../../../drivers/cxl_ccm/abi.rs"]
pub mod abi;

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

/// Room for the register block at the start of each device's slice.
const REGISTER_SLICE: u64 = 128 << 10;
const _: () = assert!(abi::REGISTER_BLOCK_SIZE as u64 <= REGISTER_SLICE);
const MIB2: u64 = 2 << 20;

/// One software device.
struct CcmDevice {
    // Unregistered first: the driver unbinds while the registers are still mapped.
    _pdev: OwnedPlatformDevice,
    _regs: MemRemap,
    _parent: ARef<Device>,
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
    r32(abi::REG_DEV_STATUS, abi::DEV_STATUS_READY)?;
    // The magic last, with release: a driver that sees it sees the rest.
    regs.atomic_u32(abi::REG_MAGIC)?
        .store(abi::REGISTER_MAGIC, Ordering::Release);
    Ok(())
}

struct CcmDevModule {
    devices: KVec<CcmDevice>,
}

impl kernel::Module for CcmDevModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
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
            let regs = MemRemap::new(regs_res, MapMode::WriteBack)?;
            reset(&regs, mem)?;
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
        Ok(Self { devices })
    }
}

impl Drop for CcmDevModule {
    fn drop(&mut self) {
        pr_info!("removing {} device(s)\n", self.devices.len());
    }
}
