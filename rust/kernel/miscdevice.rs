// SPDX-License-Identifier: GPL-2.0

//! Miscellaneous character devices (`/dev/<name>` with a dynamic minor).
//!
//! C header: [`include/linux/miscdevice.h`](srctree/include/linux/miscdevice.h)
//!
//! A driver implements [`MiscDevice`] for a type, builds one static [`FileOps`] table for it
//! with [`misc_file_ops!`](crate::misc_file_ops) (which records the owning module, so that the
//! module cannot be unloaded while a file is open), and keeps a pinned
//! [`MiscDeviceRegistration`] for as long as the device node should exist.
//!
//! Each `open()` calls [`MiscDevice::open`] with the registration's data and stores the
//! returned per-open object (`MiscDevice::Ptr`, for example a `KBox` or an `Arc`) in the file;
//! `ioctl()` and `mmap()` borrow it and `release()` gets it back. Objects that must outlive the
//! registration (the registration may be dropped while files are still open) are shared by
//! `Arc` from the registration data into the per-open object.

use crate::{
    bindings,
    error::{to_result, VTABLE_DEFAULT_ERROR},
    ffi::{c_int, c_long, c_uint, c_ulong},
    prelude::*,
    str::{CStr, CString},
    types::{ForeignOwnable, Opaque},
    vma::VmArea,
    wait::{PollTable, POLL_ERROR},
};
use core::marker::PhantomData;

/// Options of a misc device (the registration keeps its own copy of the name).
///
/// # Examples
///
/// ```
/// use kernel::miscdevice::{MiscDevice, MiscDeviceOptions, MiscDeviceRegistration};
///
/// struct Counter;
///
/// #[vtable]
/// impl MiscDevice for Counter {
///     type Ptr = KBox<u32>;
///     type RegistrationData = u32;
///
///     fn open(start: &u32) -> Result<KBox<u32>> {
///         Ok(KBox::new(*start, GFP_KERNEL)?)
///     }
/// }
///
/// kernel::misc_file_ops!(COUNTER_FOPS, Counter);
///
/// let opts = MiscDeviceOptions { name: kernel::c_str!("rust_misc_doctest"), mode: 0 };
/// let reg = KBox::pin_init(MiscDeviceRegistration::register(opts, &COUNTER_FOPS, 7)?, GFP_KERNEL)?;
/// assert!(reg.minor() > 0);
/// assert_eq!(*reg.data(), 7);
/// drop(reg);
/// # Ok::<(), Error>(())
/// ```
pub struct MiscDeviceOptions<'a> {
    /// The device name: the node is `/dev/<name>`.
    pub name: &'a CStr,
    /// The permissions of the device node (0 means the default, `0600`).
    pub mode: u16,
}

/// The operations of a misc device.
#[vtable]
pub trait MiscDevice: Sized {
    /// The per-open object stored in the file.
    type Ptr: ForeignOwnable + Send + Sync;

    /// Data kept in the registration and lent to [`MiscDevice::open`].
    type RegistrationData: Send + Sync;

    /// Called on `open()`. Returns the per-open object.
    fn open(data: &Self::RegistrationData) -> Result<Self::Ptr>;

    /// Called on the last `close()` of an open file.
    fn release(device: Self::Ptr) {
        drop(device);
    }

    /// Handles `ioctl(fd, cmd, arg)`. The returned value is the system call's result.
    ///
    /// Unknown commands should return `ENOTTY`.
    fn ioctl(
        _device: <Self::Ptr as ForeignOwnable>::Borrowed<'_>,
        _cmd: u32,
        _arg: usize,
    ) -> Result<isize> {
        crate::build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Handles `mmap()`: checks the area and fills or prepares it.
    fn mmap(_device: <Self::Ptr as ForeignOwnable>::Borrowed<'_>, _vma: &VmArea) -> Result {
        crate::build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Handles `poll()`/`select()`/`epoll`: registers on the wait queues that signal a change
    /// ([`PollTable::register`]) and returns the ready `EPOLL*` mask. An error reports
    /// `EPOLLERR`.
    fn poll(
        _device: <Self::Ptr as ForeignOwnable>::Borrowed<'_>,
        _table: &PollTable,
    ) -> Result<u32> {
        crate::build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The file operations table of a misc device type `T`.
///
/// Build one per type as a `static` with [`misc_file_ops!`](crate::misc_file_ops).
///
/// # Invariants
///
/// `ops.owner` is the module containing `T`'s code, or null for built-in code.
#[repr(transparent)]
pub struct FileOps<T: MiscDevice> {
    ops: bindings::file_operations,
    _t: PhantomData<T>,
}

// SAFETY: the table is never modified after construction; the C side only reads it.
unsafe impl<T: MiscDevice> Sync for FileOps<T> {}

impl<T: MiscDevice> FileOps<T> {
    /// Builds the table.
    ///
    /// # Safety
    ///
    /// `owner` must be the `struct module` of the module that contains `T`'s code (as
    /// produced by `misc_file_ops!`), or null if that code is built into the kernel.
    pub const unsafe fn new(owner: *mut bindings::module) -> Self {
        // INVARIANT: by the safety requirements.
        Self {
            ops: bindings::file_operations {
                owner,
                open: Some(fops_open::<T>),
                release: Some(fops_release::<T>),
                unlocked_ioctl: if T::HAS_IOCTL {
                    Some(fops_ioctl::<T>)
                } else {
                    None
                },
                mmap: if T::HAS_MMAP {
                    Some(fops_mmap::<T>)
                } else {
                    None
                },
                poll: if T::HAS_POLL {
                    Some(fops_poll::<T>)
                } else {
                    None
                },
                llseek: Some(bindings::noop_llseek),
                // SAFETY: all-zero is a valid `file_operations` (no callbacks).
                ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
            },
            _t: PhantomData,
        }
    }
}

/// Declares `static $name: FileOps<$type>` owned by the current module.
///
/// # Examples
///
/// ```ignore
/// kernel::misc_file_ops!(MY_FOPS, MyDevice);
/// ```
#[macro_export]
macro_rules! misc_file_ops {
    ($name:ident, $type:ty) => {
        static $name: $crate::miscdevice::FileOps<$type> = {
            #[cfg(MODULE)]
            {
                extern "C" {
                    static __this_module: $crate::types::Opaque<$crate::bindings::module>;
                }
                // SAFETY: `__this_module` is the module being built, which contains `$type`;
                // taking its address does not read it.
                unsafe { $crate::miscdevice::FileOps::new(__this_module.get()) }
            }
            #[cfg(not(MODULE))]
            {
                // SAFETY: built-in code has no owning module.
                unsafe { $crate::miscdevice::FileOps::new(::core::ptr::null_mut()) }
            }
        };
    };
}

/// A registered misc device; deregistered on drop.
///
/// # Invariants
///
/// `inner` is registered with `misc_register` (with `inner.fops` pointing to a `'static`
/// [`FileOps<T>`]) from the end of initialization until `drop`.
#[repr(C)]
#[pin_data(PinnedDrop)]
pub struct MiscDeviceRegistration<T: MiscDevice> {
    // Must stay the first field: `fops_open` finds the registration from `file->private_data`,
    // which `misc_open` sets to the `miscdevice`.
    #[pin]
    inner: Opaque<bindings::miscdevice>,
    data: T::RegistrationData,
    // `/proc/misc` prints `inner.name` for as long as the device is registered.
    name: CString,
}

// SAFETY: the C side synchronizes registration; `data` is `Send`.
unsafe impl<T: MiscDevice> Send for MiscDeviceRegistration<T> {}
// SAFETY: `&self` only exposes `data`, which is `Sync`.
unsafe impl<T: MiscDevice> Sync for MiscDeviceRegistration<T> {}

impl<T: MiscDevice> MiscDeviceRegistration<T> {
    /// Returns an initializer that registers a misc device. `data` is available to
    /// [`MiscDevice::open`]. Fails here only if the name cannot be copied.
    pub fn register(
        opts: MiscDeviceOptions<'_>,
        fops: &'static FileOps<T>,
        data: T::RegistrationData,
    ) -> Result<impl PinInit<Self, Error>> {
        let name = CString::try_from_fmt(crate::fmt!("{}", opts.name))?;
        let mode = opts.mode;
        // The heap buffer of `name` does not move with the registration.
        let name_ptr = name.as_char_ptr();
        Ok(try_pin_init!(Self {
            // `data` first: `open()` may be called as soon as `misc_register` returns.
            data,
            name,
            inner <- Self::register_inner(name_ptr, mode, fops),
        }))
    }

    fn register_inner(
        name: *const crate::ffi::c_char,
        mode: u16,
        fops: &'static FileOps<T>,
    ) -> impl PinInit<Opaque<bindings::miscdevice>, Error> {
        let init = move |slot: *mut Opaque<bindings::miscdevice>| {
            let misc = Opaque::raw_get(slot);
            // SAFETY: `misc` is valid for writes and all-zero is a valid `miscdevice`.
            unsafe { misc.write(core::mem::MaybeUninit::zeroed().assume_init()) };
            // SAFETY: `misc` was just initialized and is not shared yet.
            unsafe {
                (*misc).minor = bindings::MISC_DYNAMIC_MINOR as _;
                (*misc).name = name;
                (*misc).fops = &fops.ops;
                (*misc).mode = mode;
            }
            // SAFETY: `misc` is initialized and pinned (the slot is a pinned field).
            to_result(unsafe { bindings::misc_register(misc) })
        };
        // SAFETY: on success the device is registered and stays so until `drop` (type
        // invariant of `MiscDeviceRegistration`); on failure nothing refers to the slot.
        unsafe { crate::init::pin_init_from_closure(init) }
    }

    /// The registration data.
    pub fn data(&self) -> &T::RegistrationData {
        &self.data
    }

    /// The device's minor number.
    pub fn minor(&self) -> i32 {
        // SAFETY: `inner` is registered (type invariant); `minor` is set by `misc_register`.
        unsafe { (*self.inner.get()).minor }
    }
}

#[pinned_drop]
impl<T: MiscDevice> PinnedDrop for MiscDeviceRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered since initialization (type invariant). After this returns no new
        // `open()` can find `data`; open files keep only their own per-open objects.
        unsafe { bindings::misc_deregister(self.inner.get()) };
    }
}

/// # Safety
///
/// Called by the VFS for a file of a device registered with `FileOps<T>`, from `misc_open`
/// (which holds `misc_mtx`, so the registration cannot be dropped meanwhile).
unsafe extern "C" fn fops_open<T: MiscDevice>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `misc_open` stored the registered `miscdevice` in `private_data`; it is the first
    // field of a `#[repr(C)]` `MiscDeviceRegistration<T>`, alive while `misc_mtx` is held.
    let reg = unsafe { &*(*file).private_data.cast::<MiscDeviceRegistration<T>>() };
    match T::open(&reg.data) {
        Ok(ptr) => {
            // SAFETY: `file` is valid; we own `private_data` from now until `release`.
            unsafe { (*file).private_data = ptr.into_foreign().cast_mut() };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the VFS once per file opened by `fops_open::<T>`, after all other operations.
unsafe extern "C" fn fops_release<T: MiscDevice>(
    _inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `private_data` came from `into_foreign` in `fops_open`; this is the last use.
    let ptr = unsafe { T::Ptr::from_foreign((*file).private_data) };
    T::release(ptr);
    0
}

/// # Safety
///
/// Called by the VFS for an open file of `fops_open::<T>`.
unsafe extern "C" fn fops_ioctl<T: MiscDevice>(
    file: *mut bindings::file,
    cmd: c_uint,
    arg: c_ulong,
) -> c_long {
    // SAFETY: `private_data` came from `into_foreign` and `release` has not run (the file is
    // in use by this call).
    let device = unsafe { T::Ptr::borrow((*file).private_data) };
    match T::ioctl(device, cmd, arg as usize) {
        Ok(ret) => ret as c_long,
        Err(e) => e.to_errno() as c_long,
    }
}

/// # Safety
///
/// Called by the VFS in `mmap()` for an open file of `fops_open::<T>`, with the mmap lock of
/// the target `mm` held for writing.
unsafe extern "C" fn fops_mmap<T: MiscDevice>(
    file: *mut bindings::file,
    vma: *mut bindings::vm_area_struct,
) -> c_int {
    // SAFETY: as in `fops_ioctl`.
    let device = unsafe { T::Ptr::borrow((*file).private_data) };
    // SAFETY: `vma` is being set up by `mmap()` with the lock held for this call.
    let vma = unsafe { VmArea::from_raw(vma) };
    match T::mmap(device, vma) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the VFS in `poll()`, `select()` or `epoll` for an open file of `fops_open::<T>`.
unsafe extern "C" fn fops_poll<T: MiscDevice>(
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    // SAFETY: as in `fops_ioctl`.
    let device = unsafe { T::Ptr::borrow((*file).private_data) };
    // SAFETY: these are the arguments of this poll call, and the wrapper dies with it.
    let table = unsafe { PollTable::from_raw(file, table) };
    T::poll(device, &table).unwrap_or(POLL_ERROR)
}
