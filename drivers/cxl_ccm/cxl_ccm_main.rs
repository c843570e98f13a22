// SPDX-License-Identifier: GPL-2.0

//! cxl_ccm: host driver for CXL computational memory (CCM).
//!
//! Binds to `cxl_ccm` platform devices (the software device in `tools/testing/cxl_ccm`, or a
//! platform shim for real hardware) whose resource 0 is the register block and resource 1 the
//! device memory, checks the register block's magic and ABI version, enables the device (waits
//! for `DEV_STATUS_READY` and a moving heartbeat), and creates
//! `/dev/cxl_ccmN`; every open file will be one tenant.
//!
//! `CONFIGURE` makes the file a tenant ([`tenant`]): its DMA region and rings, its device-memory
//! partition, and the AXLE data plane (`LAUNCH`, `RELEASE`, `WAIT`, `STATS`, `mmap`, `poll`).
//! Modes other than `MODE_AXLE` are refused with `EOPNOTSUPP` while the device does not
//! advertise them. Unbinding with files open is clean: the device stops every tenant first, and
//! the files then get `ENODEV`.

use kernel::{
    dev_err, dev_info,
    device::Device,
    io_mem::IoMem,
    memremap::{MapMode, MemRemap},
    miscdevice::{MiscDeviceOptions, MiscDeviceRegistration},
    platform::{DriverRegistration, PlatformDevice, PlatformDriver},
    prelude::*,
    revocable::Revocable,
    str::CString,
    sync::{Arc, Mutex},
    types::{ARef, AsBytes, FromBytes},
    vma::FileMapping,
};

/// The device ABI (register block, rings, records), shared with the software device.
pub mod abi;
/// The AXLE ring protocol (pure logic, also tested on the host by `tools/ccm-proto`).
pub mod proto;

use proto::tenant_config::{DeviceLimits, PAGE_BYTES};
/// `/sys/kernel/debug/cxl_ccmN/stats`.
mod debugfs;
/// DMA regions of tenants torn down during a detach, freed once the device stopped.
mod device_stop;
/// An open file of `/dev/cxl_ccmN`: its ioctls, `mmap` and `poll`.
mod file;
/// RP and BS: results copied from device memory into the rings by the driver.
mod host_copy;
/// AXLE_IRQ: the interrupt handler.
mod irq;
/// The link costs the host pays on a software device.
mod link;
/// Width- and access-checked register accessors.
mod regio;
/// A tenant: its region, rings and data plane.
mod tenant;
/// Tenant numbers in use, and who configured each.
mod tenant_table;
/// Trace events (`cxl_ccm_events.h`).
mod trace;
/// The user ABI (`include/uapi/linux/cxl_ccm.h`).
pub mod uapi;

use abi::{GlobalRegs, TenantRegs};
use device_stop::DeviceStop;
use file::CcmFile;
use regio::RegIo;

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
// SAFETY: as above.
unsafe impl FromBytes for uapi::Launch {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Launch {}
// SAFETY: as above.
unsafe impl FromBytes for uapi::Release {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Release {}
// SAFETY: as above.
unsafe impl FromBytes for uapi::Stats {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Stats {}
// SAFETY: as above.
unsafe impl FromBytes for uapi::Wait {}
// SAFETY: as above.
unsafe impl AsBytes for uapi::Wait {}

/// Nanoseconds as jiffies, rounded up.
fn ns_to_jiffies(ns: u64) -> usize {
    let ms = ns.div_ceil(1_000_000).min(u64::from(u32::MAX)) as u32;
    kernel::time::msecs_to_jiffies(ms) as usize
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
    max_segments: u32,
    tenant_windows: u64,
    link: link::Link,
}

fn read_identity(regs: &IoMem, device: &Device) -> Result<Identity> {
    // `readl()` orders the later reads after it: pairs with the device's store of the magic
    // after the other fields.
    let magic = regs.read_reg(GlobalRegs::REG_MAGIC)?;
    if magic != abi::REGISTER_MAGIC {
        dev_err!(
            device,
            "register block magic {magic:#x}, expected {:#x}\n",
            abi::REGISTER_MAGIC
        );
        return Err(ENODEV);
    }
    let version = regs.read_reg(GlobalRegs::REG_VERSION)?;
    if abi::version_major(version) != abi::ABI_VERSION_MAJOR {
        dev_err!(
            device,
            "device ABI {}.{}, driver speaks {}.x\n",
            abi::version_major(version),
            abi::version_minor(version),
            abi::ABI_VERSION_MAJOR
        );
        return Err(ENODEV);
    }
    let id = Identity {
        version,
        caps: regs.read_reg(GlobalRegs::REG_CAPS)?,
        kernels: regs.read_reg(GlobalRegs::REG_KERNELS)?,
        mem_size: regs.read_reg(GlobalRegs::REG_MEM_SIZE)?,
        max_tenants: regs.read_reg(GlobalRegs::REG_MAX_TENANTS)?,
        launch_slots: regs.read_reg(GlobalRegs::REG_LAUNCH_SLOTS)?,
        min_slot_size: regs.read_reg(GlobalRegs::REG_MIN_SLOT_SIZE)?,
        max_slot_size: regs.read_reg(GlobalRegs::REG_MAX_SLOT_SIZE)?,
        max_ring_slots: regs.read_reg(GlobalRegs::REG_MAX_RING_SLOTS)?,
        max_segments: regs.read_reg(GlobalRegs::REG_MAX_SEGMENTS)?,
        tenant_windows: regs.read_reg(GlobalRegs::REG_TENANT_WINDOWS)?,
        // Reserved (zero) before ABI 1.1: nothing to model.
        link: link::Link {
            cxl_mem_rtt_ns: u64::from(regs.read_reg(GlobalRegs::REG_LINK_CXL_MEM_RTT_NS)?),
            cxl_io_rtt_ns: u64::from(regs.read_reg(GlobalRegs::REG_LINK_CXL_IO_RTT_NS)?),
            ps_per_byte: u64::from(regs.read_reg(GlobalRegs::REG_LINK_PS_PER_BYTE)?),
            remote_poll_ns: u64::from(regs.read_reg(GlobalRegs::REG_LINK_REMOTE_POLL_NS)?),
            // Reserved (zero) before ABI 1.4: the device paid for its interrupts itself.
            irq_ns: u64::from(regs.read_reg(GlobalRegs::REG_LINK_IRQ_NS)?),
        },
    };
    if id.max_tenants == 0 || id.max_tenants > abi::MAX_TENANTS {
        dev_err!(
            device,
            "device reports {} tenants (1..={} allowed)\n",
            id.max_tenants,
            abi::MAX_TENANTS
        );
        return Err(ENODEV);
    }
    Ok(id)
}

/// Sleeps up to 1 ms at a time until `done()` holds or `ms` milliseconds have passed; returns
/// whether `done()` held.
///
/// The sleep ignores signals: an interruptible sleep returns at once while a signal is
/// pending, so the limit would pass in a busy loop and a handshake the device completes in
/// time would be reported as a timeout. The limit bounds the wait instead.
pub(crate) fn wait_until(ms: u32, mut done: impl FnMut() -> bool) -> bool {
    let deadline = link::now_ns().saturating_add(u64::from(ms) * 1_000_000);
    while !done() {
        if link::now_ns() >= deadline {
            return false;
        }
        kernel::kthread::usleep_range(500, 1000);
    }
    true
}

/// Clears every tenant's enable bit, so that a later enable of the device does not revive a
/// tenant of an earlier binding.
fn clear_tenants(regs: &IoMem, max_tenants: u32) {
    for t in 0..max_tenants {
        // Inside the block for every tenant the identity allows: the result is always `Ok`.
        let _ = regs.write_reg(abi::tenant_reg(t, TenantRegs::TREG_CTRL), 0);
    }
}

/// Clears `dev_ctrl` and waits until the device drops `DEV_STATUS_READY`, which it does after
/// it stopped serving every tenant: from then on it writes no tenant memory. Returns whether
/// it did (within 1 s).
fn disable(regs: &IoMem, device: &Device) -> bool {
    if regs.write_reg(GlobalRegs::REG_DEV_CTRL, 0).is_err() {
        return false;
    }
    let acked = wait_until(1000, || {
        regs.read_reg(GlobalRegs::REG_DEV_STATUS)
            .map_or(true, |s| s & abi::DEV_STATUS_READY == 0)
    });
    if !acked {
        dev_err!(
            device,
            "device did not acknowledge the disable within 1 s\n"
        );
    }
    acked
}

/// Enables the device and waits until it is ready and its heartbeat moves; disables it again
/// on failure.
fn enable(regs: &IoMem, device: &Device) -> Result {
    let status = || regs.read_reg(GlobalRegs::REG_DEV_STATUS);
    let heartbeat = || regs.read_reg(GlobalRegs::REG_HEARTBEAT);
    regs.write_reg(GlobalRegs::REG_DEV_CTRL, abi::DEV_CTRL_ENABLE)?;
    let settled = abi::DEV_STATUS_READY | abi::DEV_STATUS_FATAL;
    wait_until(1000, || status().map_or(true, |s| s & settled != 0));
    let st = status()?;
    if st & abi::DEV_STATUS_READY == 0 || st & abi::DEV_STATUS_FATAL != 0 {
        // Nothing was configured yet: whether it acknowledges frees nothing.
        let _ = disable(regs, device);
        dev_err!(
            device,
            "device did not become ready within 1 s (status {st:#x})\n"
        );
        return Err(ETIMEDOUT);
    }
    // The ABI promises a beat at least every 10 ms: wait up to 100 ms for one.
    let beat = heartbeat()?;
    if !wait_until(100, || heartbeat() != Ok(beat)) {
        let _ = disable(regs, device);
        dev_err!(device, "device heartbeat stuck at {beat}\n");
        return Err(ENODEV);
    }
    Ok(())
}

/// The mapped device: register block and device memory. Dropping it stops every tenant and
/// disables the device (if it was enabled) before unmapping it, so that no path that gives the
/// hardware up — unbind, or a probe failing at any point — leaves the device running.
struct Hw {
    /// The device the log lines are about.
    device: ARef<Device>,
    regs: IoMem,
    mem: MemRemap,
    max_tenants: u32,
    /// Told when the device was disabled: frees the regions of tenants torn down meanwhile.
    stop: Arc<DeviceStop>,
}

impl Hw {
    /// Clears every tenant's enable bit, then enables the device (see [`enable`]).
    fn enable(&self) -> Result {
        clear_tenants(&self.regs, self.max_tenants);
        enable(&self.regs, &self.device)
    }
}

impl Drop for Hw {
    fn drop(&mut self) {
        clear_tenants(&self.regs, self.max_tenants);
        let acked = disable(&self.regs, &self.device);
        self.stop.stopped(acked);
    }
}

/// The binding's hold on a [`CcmDev`]: dropping it detaches the device (see
/// [`CcmDev::detach`]), even while open files keep the `CcmDev` itself alive.
struct Attached(Arc<CcmDev>);

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.detach();
    }
}

/// A tenant number in use; dropping it frees the number.
struct TenantNumber {
    dev: Arc<CcmDev>,
    index: u32,
}

impl Drop for TenantNumber {
    fn drop(&mut self) {
        self.dev.tenants.lock().free(self.index);
    }
}

/// How device memory is split among tenants.
#[derive(Clone, Copy)]
struct Partitions {
    /// Device-memory offset of tenant 0's partition (after the tenant windows).
    base: u64,
    /// Bytes per partition.
    share: u64,
    /// Bytes reserved for the descriptor table at the start of a partition.
    desc_area: u64,
    /// Largest input buffer; the output buffer has the same size.
    max_input: u64,
    /// RP and BS: the checksum table after the output buffer, in entries (one per 16 bytes of
    /// output, `abi::CHECKSUM_GRANULE`); 0 if the device predates it (ABI 1.6).
    checksum_entries: u32,
}

impl Partitions {
    /// Offset of the checksum table inside a partition.
    fn checksum_offset(&self) -> u64 {
        self.desc_area + 2 * self.max_input
    }
}

/// A bound device, shared by the binding and by open files.
#[pin_data(PinnedDrop)]
struct CcmDev {
    id: Identity,
    /// N of `/dev/cxl_ccmN`, which names the device in trace events.
    nr: u32,
    /// The device DMA is mapped for.
    dma_dev: ARef<Device>,
    /// Physical address of device memory (for user mappings of the input buffers).
    mem_phys: u64,
    /// The hardware, revoked when the device is unbound (files then get `ENODEV`). Users on
    /// different tenants reach it at once: each tenant's registers and memory are its own, and
    /// a tenant's users serialize on the tenant's locks.
    #[pin]
    hw: Revocable<Hw>,
    /// Where a tenant torn down once `hw` is revoked, but maybe before the device was
    /// disabled, leaves its DMA region.
    stop: Arc<DeviceStop>,
    /// Tenant numbers in use, and their owners.
    #[pin]
    tenants: Mutex<tenant_table::TenantTable>,
    /// The AXLE_IRQ tenants the interrupt handler wakes, by tenant number.
    #[pin]
    irq_tenants: Mutex<[Option<Arc<tenant::TenantCore>>; abi::MAX_TENANTS as usize]>,
    /// The files through which input buffers (device memory) are mapped, to zap them all at
    /// unbind; `None` once unbound, when a fault in such a mapping is refused (`SIGBUS`).
    ///
    /// Its own lock, not `hw`'s: a fault takes it under the mm's lock, so no copy from or to
    /// user space (which may fault into an input mapping) may run under it; it guards nothing
    /// else and is never held long.
    #[pin]
    input_maps: Mutex<Option<KVec<FileMapping>>>,
}

impl CcmDev {
    /// Stops every tenant, disables the device and unmaps it, and zaps every user mapping of
    /// device memory; later calls get `ENODEV`, later accesses to those mappings `SIGBUS`.
    fn detach(&self) {
        // Waits for every user of the hardware to leave, then drops `Hw`, which disables the
        // device.
        self.hw.revoke();
        // Every page of an input mapping was mapped by a fault that found the list, under its
        // lock: once it is taken, no page is mapped again, and the zap reaches all of them.
        let maps = self.input_maps.lock().take();
        for m in maps.iter().flatten() {
            if m.unmap_range(uapi::MMAP_INPUT, uapi::MMAP_REGION_SIZE)
                .is_err()
            {
                dev_err!(
                    &self.dma_dev,
                    "could not zap the user mappings of device memory\n"
                );
            }
        }
    }

    /// Notes that `map`'s file maps device memory; `ENODEV` once unbound.
    fn add_input_map(&self, map: FileMapping) -> Result {
        let mut guard = self.input_maps.lock();
        let maps = guard.as_mut().ok_or(ENODEV)?;
        if !maps.iter().any(|m| m.same(&map)) {
            maps.push(map, GFP_KERNEL)?;
        }
        Ok(())
    }

    fn partitions(&self) -> Partitions {
        self.id.partitions()
    }

    /// Takes a free tenant number for the calling process; it is returned when the
    /// [`TenantNumber`] is dropped.
    fn get_tenant(self: &Arc<Self>) -> Option<TenantNumber> {
        let owner = kernel::current!().group_leader().pid();
        let t = self.tenants.lock().take(self.id.max_tenants, owner)?;
        Some(TenantNumber {
            dev: self.clone(),
            index: t,
        })
    }

    fn info(&self) -> Result<uapi::Info> {
        // Holding the guard keeps the hardware for the duration of the call.
        let hw = self.hw.try_access().ok_or(ENODEV)?;
        let regs = &hw.regs;
        let status = regs.read_reg(GlobalRegs::REG_DEV_STATUS)?;
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
    /// Device memory after the tenant windows, split evenly: a descriptor table area, then the
    /// input buffer, then the output buffer.
    fn partitions(&self) -> Partitions {
        let base = self.tenant_windows + abi::TENANT_WINDOW_SIZE * u64::from(self.max_tenants);
        let share =
            (self.mem_size.saturating_sub(base) / u64::from(self.max_tenants)) & !(PAGE_BYTES - 1);
        let desc_area =
            abi::descriptor_table_size(self.max_segments).div_ceil(PAGE_BYTES) * PAGE_BYTES;
        let rest = share.saturating_sub(desc_area);
        let tables = self.version >= abi::version(1, 6);
        // Input and output, and a quarter of one for the checksums (4 bytes per 16 of output).
        let max_input = if tables { rest / 9 * 4 } else { rest / 2 } & !(PAGE_BYTES - 1);
        // Fits in what is left: `max_input / 4 <= rest / 9`.
        let checksum_entries = if tables {
            u32::try_from(max_input / abi::CHECKSUM_GRANULE).unwrap_or(0)
        } else {
            0
        };
        Partitions {
            base,
            share,
            desc_area,
            max_input,
            checksum_entries,
        }
    }

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
            max_input_bytes: self.partitions().max_input,
        }
    }
}

#[pinned_drop]
impl PinnedDrop for CcmDev {
    fn drop(self: Pin<&mut Self>) {
        // After `remove` (or a failed probe) there is nothing left; kept for symmetry.
        self.detach();
    }
}

kernel::misc_file_ops!(CCM_FOPS, CcmFile);
// An open debugfs file pins the module, as the open device file does (`CCM_FOPS`).
kernel::module_owner!(Owner);

/// A device bound to this driver. The fields drop in order: the device is detached (its
/// tenants stopped, the device disabled, open files answered `ENODEV`) before the device file,
/// the debugfs directory and the interrupt go.
#[pin_data]
struct Bound {
    _attached: Attached,
    #[pin]
    misc: MiscDeviceRegistration<CcmFile>,
    _debugfs: kernel::debugfs::Dir<Owner>,
    _irq: Option<kernel::irq::Registration<irq::DeviceIrq>>,
}

kernel::module_param!(
    static SKIP_PUBLISH: bool = false,
    name: "skip_publish",
    perm: 0o644,
    desc: "test hook: launches skip publishing the packet before its tag (a missing write barrier)"
);

/// Whether launches skip the publish between packet and tag (`skip_publish`): the negative
/// control of the software device's visibility check.
pub(crate) fn skip_publish() -> bool {
    SKIP_PUBLISH.get()
}

kernel::module_param!(
    static PROBE_FAULT: u32 = 0,
    name: "probe_fault",
    perm: 0o644,
    desc: "test hook: probe fails at step N (1-5) after enabling the device; 0: never"
);

/// Fails the probe at `step` if `probe_fault` asks for it (fault injection for the tests of
/// the probe's error paths). It waits 100 ms first, so that a test can open the device file in
/// the window between its registration and the failure.
fn probe_fault(pdev: &PlatformDevice, step: u32) -> Result {
    if PROBE_FAULT.get() != step {
        return Ok(());
    }
    kernel::kthread::usleep_range(100_000, 110_000);
    dev_info!(pdev.as_dev(), "probe fails at step {step} (probe_fault)\n");
    Err(EIO)
}

struct CcmDriver;

impl PlatformDriver for CcmDriver {
    type Data = Pin<KBox<Bound>>;
    /// Devices share nothing: each is its own misc device.
    type Context = ();
    const NAME: &'static CStr = kernel::c_str!("cxl_ccm");

    fn probe(pdev: &PlatformDevice, _ctx: &()) -> Result<Self::Data> {
        let (Some(regs_res), Some(mem_res)) = (pdev.mem_resource(0), pdev.mem_resource(1)) else {
            dev_err!(pdev.as_dev(), "needs a register and a memory resource\n");
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
        // Registers uncached; device memory write-combining, never write-back: the device does
        // not snoop the host's caches (Documentation/cxl_ccm.rst, "On real hardware").
        let regs = IoMem::new(regs_res)?;
        let mut id = read_identity(&regs, pdev.as_dev())?;
        if pdev.irq(0).is_none() {
            id.caps &= !abi::CAP_MODE_AXLE_IRQ;
        }
        if id.mem_size != mem_res.size {
            dev_err!(
                pdev.as_dev(),
                "device reports {} bytes of memory, resource has {}\n",
                id.mem_size,
                mem_res.size
            );
            return Err(ENXIO);
        }
        let stop = Arc::pin_init(DeviceStop::new(), GFP_KERNEL)?;
        let hw = Hw {
            device: pdev.as_dev().into(),
            regs,
            mem: MemRemap::new(mem_res, MapMode::WriteCombining)?,
            max_tenants: id.max_tenants,
            stop: stop.clone(),
        };
        // From here on every failure drops `hw` (or detaches the device that owns it), which
        // disables the device.
        hw.enable()?;
        probe_fault(pdev, 1)?;
        let dev = Attached(Arc::pin_init(
            try_pin_init!(CcmDev {
                id,
                nr: u32::try_from(pdev.id()).unwrap_or(u32::MAX),
                dma_dev: pdev.as_dev().into(),
                mem_phys: mem_res.start,
                hw <- Revocable::new(hw),
                stop,
                tenants <- kernel::new_mutex!(Default::default()),
                irq_tenants <- kernel::new_mutex!(Default::default()),
                input_maps <- kernel::new_mutex!(Some(KVec::new())),
            }? Error),
            GFP_KERNEL,
        )?);
        probe_fault(pdev, 2)?;
        let name = CString::try_from_fmt(kernel::fmt!("cxl_ccm{}", pdev.id()))?;
        let opts = MiscDeviceOptions {
            name: &name,
            mode: 0o600,
        };
        // An initializer: the device file is registered with `Bound` below.
        let misc = MiscDeviceRegistration::register(opts, &CCM_FOPS, dev.0.clone())?;
        let mut dir = kernel::debugfs::Dir::<Owner>::new(&name);
        let stats = Arc::new(debugfs::DeviceStats { dev: dev.0.clone() }, GFP_KERNEL)?;
        dir.show_file(kernel::c_str!("stats"), stats)?;
        probe_fault(pdev, 3)?;
        // AXLE_IRQ needs the device's interrupt; without one the mode is not offered.
        let irq = match pdev.irq(0) {
            Some(n) => {
                let handler = Arc::new(irq::DeviceIrq { dev: dev.0.clone() }, GFP_KERNEL)?;
                Some(kernel::irq::Registration::new(n, &name, handler)?)
            }
            None => None,
        };
        probe_fault(pdev, 4)?;
        let bound = KBox::pin_init(
            try_pin_init!(Bound {
                _attached: dev,
                misc <- misc,
                _debugfs: dir,
                _irq: irq,
            }),
            GFP_KERNEL,
        )?;
        // The device file exists from here on: a failure now meets files already open.
        probe_fault(pdev, 5)?;
        dev_info!(
            pdev.as_dev(),
            "/dev/{}: ABI {}.{}, {} MiB device memory, {} tenants\n",
            &*name,
            abi::version_major(id.version),
            abi::version_minor(id.version),
            id.mem_size >> 20,
            id.max_tenants
        );
        Ok(bound)
    }

    fn remove(pdev: &PlatformDevice, _ctx: &(), bound: Self::Data) {
        // Open files outlive the binding: from here on they get `ENODEV` (`Bound`'s first
        // field detaches the device).
        drop(bound);
        dev_info!(pdev.as_dev(), "unbound\n");
    }
}

struct CcmModule {
    _driver: Pin<KBox<DriverRegistration<CcmDriver>>>,
}

impl kernel::Module for CcmModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let driver = KBox::pin_init(DriverRegistration::register(module, ()), GFP_KERNEL)?;
        Ok(Self { _driver: driver })
    }
}
