// SPDX-License-Identifier: GPL-2.0

//! Platform devices and drivers.
//!
//! C header: [`include/linux/platform_device.h`](srctree/include/linux/platform_device.h)
//!
//! A driver implements [`PlatformDriver`] and keeps a pinned [`DriverRegistration`] while it
//! wants to bind: probe returns the per-device data, which the driver core keeps in the
//! device's driver data until remove gives it back. The registration owns the driver's
//! [`PlatformDriver::Context`], the module state every probe and remove is handed (instead of
//! a global): it outlives every binding because dropping the registration unbinds first. Code that *creates* devices (a software
//! device model, a test) owns them through [`OwnedPlatformDevice`], which unregisters the
//! device — unbinding its driver first — when dropped.

use crate::{
    alloc::KVec,
    bindings,
    device::Device,
    error::{from_err_ptr, to_result},
    ffi::c_int,
    prelude::*,
    str::CStr,
    types::{ARef, ForeignOwnable, Opaque},
};
use core::{marker::PhantomData, ptr::NonNull};

/// A physical memory range of a device (an `IORESOURCE_MEM` resource).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemResource {
    /// The physical address of the first byte.
    pub start: u64,
    /// The size in bytes (never 0 for a resource of a device).
    pub size: u64,
}

/// A platform device, as seen by its driver or its creator.
///
/// # Invariants
///
/// `self.0` is a registered `platform_device`, valid for the lifetime of the reference.
#[repr(transparent)]
pub struct PlatformDevice(Opaque<bindings::platform_device>);

impl PlatformDevice {
    /// # Safety
    ///
    /// `ptr` must point to a registered platform device that stays valid for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::platform_device) -> &'a Self {
        // SAFETY: transparent wrapper; validity from the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn raw(&self) -> *mut bindings::platform_device {
        self.0.get()
    }

    /// The generic device.
    pub fn as_dev(&self) -> &Device {
        // SAFETY: `dev` is embedded in the valid platform device (type invariant) and lives as
        // long as it.
        unsafe { Device::as_ref(core::ptr::addr_of_mut!((*self.raw()).dev)) }
    }

    /// The instance id given at registration (`-1` for none).
    pub fn id(&self) -> i32 {
        // SAFETY: valid by the type invariant; `id` does not change after registration.
        unsafe { (*self.raw()).id }
    }

    /// The `index`-th memory resource, if there is one.
    pub fn mem_resource(&self, index: u32) -> Option<MemResource> {
        let (pdev, kind) = (self.raw(), bindings::IORESOURCE_MEM);
        // SAFETY: valid by the type invariant; the function only walks the resource array.
        let res = unsafe { bindings::platform_get_resource(pdev, kind, index) };
        if res.is_null() {
            return None;
        }
        // SAFETY: a non-null result points into the device's resource array.
        let (start, end) = unsafe { ((*res).start, (*res).end) };
        Some(MemResource {
            start,
            size: end.wrapping_sub(start).wrapping_add(1),
        })
    }

    /// The Linux interrupt number of the `index`-th interrupt resource, if there is one.
    pub fn irq(&self, index: u32) -> Option<u32> {
        // SAFETY: valid by the type invariant; the function only looks the resource up.
        let irq = unsafe { bindings::platform_get_irq_optional(self.raw(), index) };
        u32::try_from(irq).ok().filter(|&i| i > 0)
    }
}

/// Finds the platform device named `name` (for example `"cxl_mem.0"`) and takes a reference
/// on it.
pub fn find_device(name: &CStr) -> Option<ARef<Device>> {
    // SAFETY: `platform_bus_type` is a static of the driver core; the function takes a
    // reference on the device it returns.
    let dev = unsafe {
        bindings::bus_find_device_by_name(
            core::ptr::addr_of!(bindings::platform_bus_type),
            core::ptr::null_mut(),
            name.as_char_ptr(),
        )
    };
    // SAFETY: a non-null result carries the reference taken above, which the `ARef` now owns.
    NonNull::new(dev).map(|d| unsafe { ARef::from_raw(d.cast::<Device>()) })
}

/// A driver of platform devices whose name is [`PlatformDriver::NAME`].
pub trait PlatformDriver {
    /// Per-device data, from probe to remove.
    type Data: ForeignOwnable + Send + Sync;

    /// State of the module shared by every device: owned by the [`DriverRegistration`], lent
    /// to each probe and remove.
    type Context: Send + Sync;

    /// The device name this driver binds to.
    const NAME: &'static CStr;

    /// Binds to `pdev`; the returned data is kept until [`PlatformDriver::remove`].
    fn probe(pdev: &PlatformDevice, ctx: &Self::Context) -> Result<Self::Data>;

    /// Unbinds from `pdev` (device removal, driver unregistration or unbind through sysfs).
    fn remove(_pdev: &PlatformDevice, _ctx: &Self::Context, data: Self::Data) {
        drop(data);
    }
}

/// A registered platform driver and its context; unregistered (unbinding every device) on
/// drop, before the context goes.
///
/// # Invariants
///
/// `drv` is registered with `__platform_driver_register` from initialization until drop, and
/// every device bound to it was bound through this registration (so its driver pointer leads
/// back here).
#[pin_data(PinnedDrop)]
pub struct DriverRegistration<T: PlatformDriver> {
    #[pin]
    drv: Opaque<bindings::platform_driver>,
    ctx: T::Context,
    _t: PhantomData<T>,
}

// SAFETY: the driver core synchronizes (un)registration.
unsafe impl<T: PlatformDriver> Send for DriverRegistration<T> {}
// SAFETY: `&self` exposes only the context, which is `Sync`.
unsafe impl<T: PlatformDriver> Sync for DriverRegistration<T> {}

impl<T: PlatformDriver> DriverRegistration<T> {
    /// Registers the driver on behalf of `module` (which the driver core pins while bound),
    /// with the context its probes and removes are lent.
    pub fn register(module: &'static ThisModule, ctx: T::Context) -> impl PinInit<Self, Error> {
        let init = move |slot: *mut Opaque<bindings::platform_driver>| {
            let drv = Opaque::raw_get(slot);
            // SAFETY: `drv` is valid for writes and all-zero is a valid `platform_driver`.
            unsafe { drv.write(core::mem::MaybeUninit::zeroed().assume_init()) };
            // SAFETY: `drv` was just initialized and is not shared yet.
            unsafe {
                (*drv).probe = Some(probe_callback::<T>);
                (*drv).__bindgen_anon_1.remove = Some(remove_callback::<T>);
                (*drv).driver.name = T::NAME.as_char_ptr();
            }
            // SAFETY: `drv` is initialized and pinned; `module` is the caller's module.
            to_result(unsafe { bindings::__platform_driver_register(drv, module.as_ptr()) })
        };
        // `ctx` first: a probe may run as soon as the driver is registered.
        try_pin_init!(Self {
            ctx,
            // SAFETY: on success the driver stays registered until drop (type invariant); on
            // failure nothing refers to the slot.
            drv <- unsafe { crate::init::pin_init_from_closure(init) },
            _t: PhantomData,
        })
    }

    /// The context lent to probe and remove.
    pub fn context(&self) -> &T::Context {
        &self.ctx
    }

    /// The context of the registration `pdev` is bound through.
    ///
    /// # Safety
    ///
    /// `pdev` is being probed or removed by a driver of this type `T`: its driver pointer is
    /// the `drv` of a live `DriverRegistration<T>` for the duration of the callback.
    unsafe fn context_of<'a>(pdev: *mut bindings::platform_device) -> &'a T::Context {
        // SAFETY: `pdev` is valid during the callback (caller); the driver core set its driver
        // before probe and clears it only after remove.
        let drv = unsafe { (*pdev).dev.driver };
        // SAFETY: the driver is the `driver` field of the `platform_driver` that is this
        // registration's `drv` (caller; type invariant), and `Opaque` is transparent.
        let reg = unsafe {
            let pdrv = crate::container_of!(drv, bindings::platform_driver, driver);
            crate::container_of!(pdrv, Self, drv)
        };
        // SAFETY: `reg` is the registration containing `drv`, alive while a device is bound
        // through it (drop unregisters, which waits for every remove).
        unsafe { &(*reg).ctx }
    }
}

#[pinned_drop]
impl<T: PlatformDriver> PinnedDrop for DriverRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered since initialization (type invariant); this unbinds every device
        // (calling `remove_callback`) before returning.
        unsafe { bindings::platform_driver_unregister(self.drv.get()) };
    }
}

/// # Safety
///
/// Called by the driver core with a valid device, before any `remove_callback` for it.
unsafe extern "C" fn probe_callback<T: PlatformDriver>(
    pdev: *mut bindings::platform_device,
) -> c_int {
    // SAFETY: the device is valid during probe.
    let dev = unsafe { PlatformDevice::from_raw(pdev) };
    // SAFETY: `pdev` is being probed by a driver registered through `DriverRegistration<T>`.
    let ctx = unsafe { DriverRegistration::<T>::context_of(pdev) };
    match T::probe(dev, ctx) {
        Ok(data) => {
            // SAFETY: `dev` is valid; the driver data belongs to the bound driver (us) until
            // `remove_callback` takes it back.
            unsafe {
                bindings::dev_set_drvdata(
                    core::ptr::addr_of_mut!((*pdev).dev),
                    data.into_foreign().cast_mut(),
                )
            };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the driver core once for a device that `probe_callback` bound successfully.
unsafe extern "C" fn remove_callback<T: PlatformDriver>(pdev: *mut bindings::platform_device) {
    // SAFETY: the device is valid during remove.
    let dev = unsafe { PlatformDevice::from_raw(pdev) };
    // SAFETY: set by a successful `probe_callback` and not yet taken back.
    let data = unsafe {
        T::Data::from_foreign(bindings::dev_get_drvdata(core::ptr::addr_of_mut!(
            (*pdev).dev
        )))
    };
    // SAFETY: `pdev` is being removed from a driver registered through `DriverRegistration<T>`.
    let ctx = unsafe { DriverRegistration::<T>::context_of(pdev) };
    T::remove(dev, ctx, data);
}

/// A platform device registered by this code; unregistered on drop.
///
/// # Invariants
///
/// `pdev` was returned by `platform_device_register_full` and is not yet unregistered.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicU64, Ordering};
/// use kernel::platform::{DriverRegistration, MemResource, OwnedPlatformDevice, PlatformDevice, PlatformDriver};
///
/// // What the driver saw, kept in its context rather than in globals.
/// #[derive(Default)]
/// struct Seen {
///     probed_start: AtomicU64,
///     removed: AtomicU64,
/// }
///
/// struct Probe;
/// impl PlatformDriver for Probe {
///     type Data = KBox<u64>;
///     type Context = Seen;
///     const NAME: &'static CStr = kernel::c_str!("rust_platform_doctest");
///
///     fn probe(pdev: &PlatformDevice, seen: &Seen) -> Result<KBox<u64>> {
///         let res = pdev.mem_resource(0).ok_or(ENXIO)?;
///         seen.probed_start.store(res.start, Ordering::Relaxed);
///         Ok(KBox::new(res.size, GFP_KERNEL)?)
///     }
///
///     fn remove(_pdev: &PlatformDevice, seen: &Seen, size: KBox<u64>) {
///         seen.removed.store(*size, Ordering::Relaxed);
///     }
/// }
///
/// // SAFETY: built-in doctests have no module.
/// static DOCTEST_MODULE: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let drv = KBox::pin_init(
///     DriverRegistration::<Probe>::register(&DOCTEST_MODULE, Seen::default()),
///     GFP_KERNEL,
/// )?;
/// // A resource inside RAM that nothing else claims: one freshly allocated page.
/// let page = kernel::page::Page::alloc_page(GFP_KERNEL)?;
/// let start = kernel::pinned_pages::page_phys_addr(&page);
/// let res = MemResource { start, size: 4096 };
/// let dev = OwnedPlatformDevice::register(kernel::c_str!("rust_platform_doctest"), 7, None, &[res])?;
/// assert_eq!(dev.device().id(), 7);
/// assert_eq!(dev.device().mem_resource(0), Some(res));
/// assert_eq!(dev.device().mem_resource(1), None);
/// assert_eq!(drv.context().probed_start.load(Ordering::Relaxed), start);
/// drop(dev);
/// assert_eq!(drv.context().removed.load(Ordering::Relaxed), 4096);
/// drop(drv);
/// # Ok::<(), Error>(())
/// ```
pub struct OwnedPlatformDevice {
    pdev: NonNull<bindings::platform_device>,
}

// SAFETY: the handle only calls thread-safe driver-core functions.
unsafe impl Send for OwnedPlatformDevice {}
// SAFETY: `&self` only gives out `&PlatformDevice`, which is `Sync`.
unsafe impl Sync for OwnedPlatformDevice {}

impl OwnedPlatformDevice {
    /// Registers a device named `name.id` under `parent` with memory resources `mem` and a
    /// 64-bit DMA mask. A driver of that name binds at once if it is registered.
    pub fn register(
        name: &CStr,
        id: i32,
        parent: Option<&Device>,
        mem: &[MemResource],
    ) -> Result<Self> {
        Self::register_with_irqs(name, id, parent, mem, &[])
    }

    /// As [`Self::register`], with interrupt resources `irqs` (Linux interrupt numbers) after
    /// the memory resources.
    pub fn register_with_irqs(
        name: &CStr,
        id: i32,
        parent: Option<&Device>,
        mem: &[MemResource],
        irqs: &[u32],
    ) -> Result<Self> {
        let mut res = KVec::with_capacity(mem.len() + irqs.len(), GFP_KERNEL)?;
        for m in mem {
            if m.size == 0 {
                return Err(EINVAL);
            }
            let end = m.start.checked_add(m.size - 1).ok_or(EINVAL)?;
            let r = bindings::resource {
                start: m.start,
                end,
                flags: bindings::IORESOURCE_MEM as _,
                ..Default::default()
            };
            res.push(r, GFP_KERNEL)?;
        }
        for &irq in irqs {
            let r = bindings::resource {
                start: irq.into(),
                end: irq.into(),
                flags: bindings::IORESOURCE_IRQ as _,
                ..Default::default()
            };
            res.push(r, GFP_KERNEL)?;
        }
        let info = bindings::platform_device_info {
            parent: parent.map_or(core::ptr::null_mut(), |p| p.as_raw()),
            name: name.as_char_ptr(),
            id,
            res: if res.is_empty() {
                core::ptr::null()
            } else {
                res.as_ptr()
            },
            num_res: res.len() as u32,
            dma_mask: u64::MAX,
            ..Default::default()
        };
        // SAFETY: `info` and the arrays it points to are valid for the call; the driver core
        // copies the name and the resources.
        let pdev = from_err_ptr(unsafe { bindings::platform_device_register_full(&info) })?;
        // INVARIANT: a registered device.
        Ok(Self {
            // SAFETY: `from_err_ptr` returned a valid pointer.
            pdev: unsafe { NonNull::new_unchecked(pdev) },
        })
    }

    /// The device.
    pub fn device(&self) -> &PlatformDevice {
        // SAFETY: registered until drop (type invariant).
        unsafe { PlatformDevice::from_raw(self.pdev.as_ptr()) }
    }
}

impl Drop for OwnedPlatformDevice {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); unbinds the driver, then drops the device.
        unsafe { bindings::platform_device_unregister(self.pdev.as_ptr()) };
    }
}
