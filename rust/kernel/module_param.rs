// SPDX-License-Identifier: GPL-2.0

//! Module parameters for Rust modules.
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)
//!
//! [`module_param!`](crate::module_param) declares a `static` holding the value and emits the
//! `struct kernel_param` that `load_module()` finds in the `__param` section, plus the
//! `parm=`/`parmtype=` strings `modinfo` shows. The kernel's own `param_ops_*` parse the value
//! (`insmod m.ko name=value`; a malformed value fails the load with `EINVAL` and a log line)
//! and, if the permissions allow, show and set it in `/sys/module/<m>/parameters/<name>`.
//! The module still validates ranges itself, at init or at use.
//!
//! Values are read with [`ParamU32::get`] and friends: a write through sysfs may happen at any
//! time, so the storage is atomic.

use crate::{bindings, ffi::c_void};
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

macro_rules! param_storage {
    ($(#[$meta:meta])* $name:ident, $atomic:ident, $ty:ty) => {
        $(#[$meta])*
        pub struct $name($atomic);

        impl $name {
            /// A parameter with value `v` until the module is loaded with another.
            pub const fn new(v: $ty) -> Self {
                Self($atomic::new(v))
            }

            /// The current value.
            pub fn get(&self) -> $ty {
                self.0.load(Ordering::Relaxed)
            }

            /// The address the kernel's `param_ops_*` read and write.
            pub const fn arg(&'static self) -> *mut c_void {
                self.0.as_ptr().cast()
            }
        }
    };
}

param_storage!(
    /// A `uint` parameter.
    ParamU32,
    AtomicU32,
    u32
);
param_storage!(
    /// An `int` parameter.
    ParamI32,
    AtomicI32,
    i32
);
param_storage!(
    /// A `ulong` parameter (64 bits on the architectures we build for).
    ParamU64,
    AtomicU64,
    u64
);
param_storage!(
    /// A `bool` parameter.
    ParamBool,
    AtomicBool,
    bool
);

/// A `struct kernel_param` in the `__param` section. Built only by `module_param!`.
#[repr(transparent)]
pub struct KernelParam(bindings::kernel_param);

// SAFETY: the kernel reads the descriptor under `kernel_param_lock`; it is never written.
unsafe impl Sync for KernelParam {}

impl KernelParam {
    /// Builds the descriptor.
    ///
    /// # Safety
    ///
    /// `name` must be a NUL-terminated static string, `module` the module containing the
    /// parameter, `ops` the `param_ops_*` matching the storage behind `arg`, and `arg` the
    /// storage of a `'static` [`ParamU32`], [`ParamU64`] or [`ParamBool`].
    pub const unsafe fn new(
        name: *const u8,
        module: *mut bindings::module,
        ops: *const bindings::kernel_param_ops,
        perm: u16,
        arg: *mut c_void,
    ) -> Self {
        Self(bindings::kernel_param {
            name,
            mod_: module,
            ops,
            perm,
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 { arg },
        })
    }
}

/// Returns `s` as a fixed-size array, for `.modinfo` strings built with `concat!`.
#[doc(hidden)]
pub const fn modinfo_array<const N: usize>(s: &str) -> [u8; N] {
    let bytes = s.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N && i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Declares a module parameter.
///
/// ```ignore
/// kernel::module_param!(
///     /// Worker threads per device.
///     static WORKERS: u32 = 2, name: "workers", perm: 0o444, desc: "worker threads per device"
/// );
/// // ...
/// let n = WORKERS.get();
/// ```
///
/// `perm` is the sysfs mode of `/sys/module/<m>/parameters/<name>` (0 for none; writable
/// parameters must be re-read at each use). Types: `u32`, `i32`, `u64`, `bool`.
#[macro_export]
macro_rules! module_param {
    ($(#[$meta:meta])* static $ident:ident: u32 = $default:expr, name: $name:literal, perm: $perm:expr, desc: $desc:literal $(,)?) => {
        $crate::module_param!(@emit $(#[$meta])* $ident, ParamU32, $default, $name, $perm, $desc, param_ops_uint, "uint");
    };
    ($(#[$meta:meta])* static $ident:ident: i32 = $default:expr, name: $name:literal, perm: $perm:expr, desc: $desc:literal $(,)?) => {
        $crate::module_param!(@emit $(#[$meta])* $ident, ParamI32, $default, $name, $perm, $desc, param_ops_int, "int");
    };
    ($(#[$meta:meta])* static $ident:ident: u64 = $default:expr, name: $name:literal, perm: $perm:expr, desc: $desc:literal $(,)?) => {
        $crate::module_param!(@emit $(#[$meta])* $ident, ParamU64, $default, $name, $perm, $desc, param_ops_ulong, "ulong");
    };
    ($(#[$meta:meta])* static $ident:ident: bool = $default:expr, name: $name:literal, perm: $perm:expr, desc: $desc:literal $(,)?) => {
        $crate::module_param!(@emit $(#[$meta])* $ident, ParamBool, $default, $name, $perm, $desc, param_ops_bool, "bool");
    };
    (@emit $(#[$meta:meta])* $ident:ident, $storage:ident, $default:expr, $name:literal, $perm:expr, $desc:literal, $ops:ident, $tyname:literal) => {
        $(#[$meta])*
        static $ident: $crate::module_param::$storage = $crate::module_param::$storage::new($default);

        #[cfg(MODULE)]
        const _: () = {
            extern "C" {
                static __this_module: $crate::types::Opaque<$crate::bindings::module>;
            }

            #[link_section = "__param"]
            // `compiler`, as `module!` does: `#[used]` would mark the section SHF_GNU_RETAIN
            // and split it from the module's other `.modinfo`/`__param` entries.
            #[used(compiler)]
            // SAFETY: the name is a static C string, `__this_module` is this module, the ops
            // match the storage type chosen by the macro arm, and the storage is `'static`.
            static PARAM: $crate::module_param::KernelParam = unsafe {
                $crate::module_param::KernelParam::new(
                    concat!($name, "\0").as_ptr(),
                    __this_module.get(),
                    ::core::ptr::addr_of!($crate::bindings::$ops),
                    $perm,
                    $ident.arg(),
                )
            };

            const PARM: &str = concat!("parm=", $name, ":", $desc, "\0");
            #[link_section = ".modinfo"]
            // `compiler`, as `module!` does: `#[used]` would mark the section SHF_GNU_RETAIN
            // and split it from the module's other `.modinfo`/`__param` entries.
            #[used(compiler)]
            static PARM_INFO: [u8; PARM.len()] = $crate::module_param::modinfo_array(PARM);

            const PARMTYPE: &str = concat!("parmtype=", $name, ":", $tyname, "\0");
            #[link_section = ".modinfo"]
            // `compiler`, as `module!` does: `#[used]` would mark the section SHF_GNU_RETAIN
            // and split it from the module's other `.modinfo`/`__param` entries.
            #[used(compiler)]
            static PARMTYPE_INFO: [u8; PARMTYPE.len()] = $crate::module_param::modinfo_array(PARMTYPE);
        };
    };
}
