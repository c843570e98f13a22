// SPDX-License-Identifier: GPL-2.0

//! cxl_ccm: host driver for CXL computational memory (CCM).
//!
//! Binds to `cxl_ccm` platform devices (the software device in `tools/testing/cxl_ccm`, or a
//! platform shim for real hardware) whose resource 0 is the register block and resource 1 the
//! device memory, checks the register block's magic and ABI version, enables the device (waits
//! for `DEV_STATUS_READY` and a moving heartbeat), and creates
//! `/dev/cxl_ccmN`; every open file will be one tenant.
//!
//! Implemented: binding, identification, `CXL_CCM_IOC_INFO`, the validation of
//! `CXL_CCM_IOC_CONFIGURE` (`EINVAL` for a malformed request, `EOPNOTSUPP` for a mode the device
//! does not advertise), clean unbind with files open (files then get `ENODEV`). Not yet: tenant
//! setup, `LAUNCH`, `RELEASE`, `STATS`, `WAIT` and `mmap` return `EOPNOTSUPP` (or `ENODEV` for
//! `mmap`) until the AXLE data plane lands.

use core::sync::atomic::Ordering;
use kernel::{
    ioctl_arg::IoctlArg,
    memremap::{MapMode, MemRemap},
    miscdevice::{MiscDevice, MiscDeviceOptions, MiscDeviceRegistration},
    platform::{DriverRegistration, PlatformDevice, PlatformDriver},
    pr_warn_ratelimited,
    prelude::*,
    shared_mem::SharedMem,
    str::CString,
    sync::{Arc, Mutex},
    types::{AsBytes, FromBytes},
};

/// The device ABI (register block, rings, records), shared with the software device.
pub mod abi;
/// The AXLE ring protocol (pure logic, also tested on the host by `tools/ccm-proto`).
pub mod proto;

use proto::tenant_config::{DeviceLimits, TenantConfig, TenantRequest, PAGE_BYTES};
/// The user ABI (`include/uapi/linux/cxl_ccm.h`).
pub mod uapi;

module! {
    type: CcmModule,
    name: "cxl_ccm",
    author: "cxlstack developers",
    description: "CXL computational memory offload with asynchronous back-streaming (AXLE)",
    license: "GPL",
}

// SAFETY: `repr(C)` integer-only structs whose fields cover their size exactly (checked by
// `tools/ccm-abi`), so every bit pattern is valid and no byte is padding.
unsafe impl FromBytes for uapi::Info {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Info {}
// SAFETY: as above.
unsafe impl FromBytes for uapi::Configure {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Configure {}

/// An errno that 6.12's `kernel::error::code` lacks (`EOPNOTSUPP`, `ETIMEDOUT`).
fn errno(code: u32) -> Error {
    Error::from_errno(-(code as i32))
}

fn eopnotsupp() -> Error {
    errno(kernel::bindings::EOPNOTSUPP)
}

/// What the driver reads once from the register block at probe.
#[derive(Clone, Copy)]
struct Identity {
    version: u32,
    caps: u64,
    kernels: u64,
    mem_size: u64,
    max_tenants: u32,
    launch_slots: u32,
    min_slot_size: u32,
    max_slot_size: u32,
    max_ring_slots: u32,
}

fn read_identity(regs: &MemRemap) -> Result<Identity> {
    let r32 = |o: usize| regs.atomic_u32(o).map(|r| r.load(Ordering::Relaxed));
    let r64 = |o: usize| regs.atomic_u64(o).map(|r| r.load(Ordering::Relaxed));
    // Acquire: pairs with the device's release store of the magic after the other fields.
    let magic = regs.atomic_u32(abi::REG_MAGIC)?.load(Ordering::Acquire);
    if magic != abi::REGISTER_MAGIC {
        pr_err!(
            "register block magic {magic:#x}, expected {:#x}\n",
            abi::REGISTER_MAGIC
        );
        return Err(ENODEV);
    }
    let version = r32(abi::REG_VERSION)?;
    if abi::version_major(version) != abi::ABI_VERSION_MAJOR {
        pr_err!(
            "device ABI {}.{}, driver speaks {}.x\n",
            abi::version_major(version),
            abi::version_minor(version),
            abi::ABI_VERSION_MAJOR
        );
        return Err(ENODEV);
    }
    let id = Identity {
        version,
        caps: r64(abi::REG_CAPS)?,
        kernels: r64(abi::REG_KERNELS)?,
        mem_size: r64(abi::REG_MEM_SIZE)?,
        max_tenants: r32(abi::REG_MAX_TENANTS)?,
        launch_slots: r32(abi::REG_LAUNCH_SLOTS)?,
        min_slot_size: r32(abi::REG_MIN_SLOT_SIZE)?,
        max_slot_size: r32(abi::REG_MAX_SLOT_SIZE)?,
        max_ring_slots: r32(abi::REG_MAX_RING_SLOTS)?,
    };
    if id.max_tenants == 0 || id.max_tenants > abi::MAX_TENANTS {
        pr_err!(
            "device reports {} tenants (1..={} allowed)\n",
            id.max_tenants,
            abi::MAX_TENANTS
        );
        return Err(ENODEV);
    }
    Ok(id)
}

/// Sleeps a jiffy at a time until `done()` holds or `ms` milliseconds have passed; returns
/// whether `done()` held.
fn wait_until(ms: u32, mut done: impl FnMut() -> bool) -> bool {
    let limit = kernel::time::msecs_to_jiffies(ms);
    let mut waited = 0;
    while !done() {
        if waited >= limit {
            return false;
        }
        kernel::kthread::schedule_timeout_interruptible(1);
        waited += 1;
    }
    true
}

/// Clears `dev_ctrl`: the device stops serving and drops `DEV_STATUS_READY`.
fn disable(regs: &MemRemap) {
    if let Ok(ctrl) = regs.atomic_u32(abi::REG_DEV_CTRL) {
        ctrl.store(0, Ordering::Release);
    }
}

/// Enables the device and waits until it is ready and its heartbeat moves; disables it again
/// on failure.
fn enable(regs: &MemRemap) -> Result {
    let ctrl = regs.atomic_u32(abi::REG_DEV_CTRL)?;
    let status = regs.atomic_u32(abi::REG_DEV_STATUS)?;
    let heartbeat = regs.atomic_u32(abi::REG_HEARTBEAT)?;
    // Release: nothing is configured yet, but later configuration must not pass the enable.
    ctrl.store(abi::DEV_CTRL_ENABLE, Ordering::Release);
    let settled = abi::DEV_STATUS_READY | abi::DEV_STATUS_FATAL;
    wait_until(1000, || status.load(Ordering::Acquire) & settled != 0);
    let st = status.load(Ordering::Acquire);
    if st & abi::DEV_STATUS_READY == 0 || st & abi::DEV_STATUS_FATAL != 0 {
        disable(regs);
        pr_err!("device did not become ready within 1 s (status {st:#x})\n");
        return Err(errno(kernel::bindings::ETIMEDOUT));
    }
    // The ABI promises a beat at least every 10 ms: wait up to 100 ms for one.
    let beat = heartbeat.load(Ordering::Acquire);
    if !wait_until(100, || heartbeat.load(Ordering::Acquire) != beat) {
        disable(regs);
        pr_err!("device heartbeat stuck at {beat}\n");
        return Err(ENODEV);
    }
    Ok(())
}

/// A bound device, shared by the binding and by open files.
#[pin_data(PinnedDrop)]
struct CcmDev {
    id: Identity,
    /// The register block; `None` once the device is unbound (files then get `ENODEV`).
    #[pin]
    regs: Mutex<Option<MemRemap>>,
}

impl CcmDev {
    /// Disables the device and unmaps its registers; later calls get `ENODEV`.
    fn detach(&self) {
        if let Some(regs) = self.regs.lock().take() {
            disable(&regs);
        }
    }

    fn info(&self) -> Result<uapi::Info> {
        // Holding the lock keeps the device bound for the duration of the call.
        let regs = self.regs.lock();
        let Some(regs) = regs.as_ref() else {
            return Err(ENODEV);
        };
        let status = regs
            .atomic_u32(abi::REG_DEV_STATUS)?
            .load(Ordering::Acquire);
        if status & abi::DEV_STATUS_FATAL != 0 {
            return Err(EIO);
        }
        let id = &self.id;
        Ok(uapi::Info {
            abi_version: uapi::UAPI_VERSION,
            device_version: id.version,
            max_tenants: id.max_tenants,
            caps: id.caps,
            kernels: id.kernels,
            mem_size: id.mem_size,
            min_slot_size: id.min_slot_size,
            max_slot_size: id.max_slot_size,
            max_ring_slots: id.max_ring_slots,
            launch_slots: id.launch_slots,
            max_release: uapi::RELEASE_MAX,
            ..Default::default()
        })
    }
}

impl Identity {
    /// The limits a tenant configuration is checked against.
    fn limits(&self) -> DeviceLimits {
        let modes = (0..abi::MODE_COUNT)
            .filter(|m| self.caps & abi::cap_mode(*m) != 0)
            .fold(0u32, |acc, m| acc | 1 << m);
        DeviceLimits {
            modes,
            mode_count: abi::MODE_COUNT,
            in_order: self.caps & abi::CAP_IN_ORDER != 0,
            min_slot_size: self.min_slot_size,
            max_slot_size: self.max_slot_size,
            default_slot_size: abi::DEFAULT_SLOT_SIZE,
            max_ring_slots: self.max_ring_slots,
            max_window_bytes: uapi::MMAP_REGION_SIZE,
            // Device memory is shared equally by the tenants.
            max_input_bytes: (self.mem_size / u64::from(self.max_tenants)) & !(PAGE_BYTES - 1),
        }
    }
}

/// Checks a CONFIGURE request; `EINVAL` for a malformed one, `EOPNOTSUPP` for one the device
/// cannot serve.
fn configure(dev: &CcmDev, arg: &uapi::Configure) -> Result<TenantConfig> {
    if arg.flags != 0 || arg.reserved0 != 0 || arg.reserved != [0; 4] {
        pr_warn_ratelimited!("CONFIGURE: flags and reserved fields must be 0\n");
        return Err(EINVAL);
    }
    if arg.streaming_order > abi::ORDER_IN_ORDER {
        pr_warn_ratelimited!(
            "CONFIGURE: unknown streaming order {}\n",
            arg.streaming_order
        );
        return Err(EINVAL);
    }
    let req = TenantRequest {
        mode: arg.mode,
        slot_size: arg.slot_size,
        metadata_slots: arg.metadata_slots,
        payload_slots: arg.payload_slots,
        streaming_factor: arg.streaming_factor,
        in_order: arg.streaming_order == abi::ORDER_IN_ORDER,
        poll_interval_ns: arg.poll_interval_ns,
        input_size: arg.input_size,
    };
    match TenantConfig::validate(&req, &dev.id.limits()) {
        Ok(cfg) => Ok(cfg),
        Err(e) if e.is_unsupported() => {
            pr_warn_ratelimited!(
                "CONFIGURE: the device does not serve mode {} (in order: {})\n",
                arg.mode,
                req.in_order
            );
            Err(eopnotsupp())
        }
        Err(e) => {
            pr_warn_ratelimited!("CONFIGURE: refused: {:?}\n", e);
            Err(EINVAL)
        }
    }
}

#[pinned_drop]
impl PinnedDrop for CcmDev {
    fn drop(self: Pin<&mut Self>) {
        // Covers a probe that fails after enabling; after `remove` there is nothing left.
        self.detach();
    }
}

/// An open file of `/dev/cxl_ccmN`.
struct CcmFile {
    dev: Arc<CcmDev>,
}

#[vtable]
impl MiscDevice for CcmFile {
    type Ptr = KBox<CcmFile>;
    type RegistrationData = Arc<CcmDev>;

    fn open(dev: &Arc<CcmDev>) -> Result<KBox<CcmFile>> {
        Ok(KBox::new(CcmFile { dev: dev.clone() }, GFP_KERNEL)?)
    }

    fn ioctl(file: &CcmFile, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            uapi::IOC_INFO => {
                let uarg = IoctlArg::<uapi::Info>::new(cmd, arg)?;
                let inp = uarg.read()?;
                if inp.flags != 0 {
                    pr_warn_ratelimited!("INFO: flags {:#x} must be 0\n", inp.flags);
                    return Err(EINVAL);
                }
                uarg.write(&file.dev.info()?)?;
                Ok(0)
            }
            uapi::IOC_CONFIGURE => {
                let arg = IoctlArg::<uapi::Configure>::new(cmd, arg)?.read()?;
                let _cfg = configure(&file.dev, &arg)?;
                // Only reachable once the device advertises a mode.
                pr_warn_ratelimited!("CONFIGURE: tenant setup is not implemented yet\n");
                Err(eopnotsupp())
            }
            uapi::IOC_LAUNCH | uapi::IOC_RELEASE | uapi::IOC_STATS | uapi::IOC_WAIT => {
                pr_warn_ratelimited!("ioctl {cmd:#x}: tenants are not implemented yet\n");
                Err(eopnotsupp())
            }
            _ => {
                pr_warn_ratelimited!("unknown ioctl {cmd:#x}\n");
                Err(ENOTTY)
            }
        }
    }
}

kernel::misc_file_ops!(CCM_FOPS, CcmFile);

/// A device bound to this driver.
#[pin_data]
struct Bound {
    dev: Arc<CcmDev>,
    #[pin]
    misc: MiscDeviceRegistration<CcmFile>,
}

struct CcmDriver;

impl PlatformDriver for CcmDriver {
    type Data = Pin<KBox<Bound>>;
    const NAME: &'static CStr = kernel::c_str!("cxl_ccm");

    fn probe(pdev: &PlatformDevice) -> Result<Self::Data> {
        let (Some(regs_res), Some(mem_res)) = (pdev.mem_resource(0), pdev.mem_resource(1)) else {
            pr_err!(
                "cxl_ccm.{}: needs a register and a memory resource\n",
                pdev.id()
            );
            return Err(ENXIO);
        };
        if regs_res.size < abi::REGISTER_BLOCK_SIZE as u64 {
            pr_err!(
                "cxl_ccm.{}: register block of {} bytes is too small\n",
                pdev.id(),
                regs_res.size
            );
            return Err(ENXIO);
        }
        let regs = MemRemap::new(regs_res, MapMode::WriteBack)?;
        let id = read_identity(&regs)?;
        enable(&regs)?;
        if id.mem_size != mem_res.size {
            pr_err!(
                "cxl_ccm.{}: device reports {} bytes of memory, resource has {}\n",
                pdev.id(),
                id.mem_size,
                mem_res.size
            );
            return Err(ENXIO);
        }
        let dev = Arc::pin_init(
            pin_init!(CcmDev { id, regs <- kernel::new_mutex!(Some(regs)) }),
            GFP_KERNEL,
        )?;
        let name = CString::try_from_fmt(kernel::fmt!("cxl_ccm{}", pdev.id()))?;
        let opts = MiscDeviceOptions {
            name: &name,
            mode: 0o600,
        };
        let misc = MiscDeviceRegistration::register(opts, &CCM_FOPS, dev.clone())?;
        let bound = KBox::pin_init(try_pin_init!(Bound { dev, misc <- misc }), GFP_KERNEL)?;
        pr_info!(
            "/dev/{}: ABI {}.{}, {} MiB device memory, {} tenants\n",
            &*name,
            abi::version_major(id.version),
            abi::version_minor(id.version),
            id.mem_size >> 20,
            id.max_tenants
        );
        Ok(bound)
    }

    fn remove(pdev: &PlatformDevice, bound: Self::Data) {
        // Open files outlive the binding: from here on they get `ENODEV`.
        bound.dev.detach();
        drop(bound);
        pr_info!("cxl_ccm.{}: unbound\n", pdev.id());
    }
}

struct CcmModule {
    _driver: Pin<KBox<DriverRegistration<CcmDriver>>>,
}

impl kernel::Module for CcmModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let driver = KBox::pin_init(DriverRegistration::register(module), GFP_KERNEL)?;
        Ok(Self { _driver: driver })
    }
}
