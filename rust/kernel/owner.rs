// SPDX-License-Identifier: GPL-2.0

//! The module that owns a table of callbacks.
//!
//! C header: [`include/linux/module.h`](srctree/include/linux/module.h)
//!
//! A `file_operations` or `block_device_operations` table names its module in `owner`: opening
//! the file or the disk takes a reference on that module (`fops_get`, `try_module_get`), so a
//! module cannot be unloaded while one of its files or disks is open and the kernel still calls
//! through the table (a disk's `release`, debugfs's `release` proxy). The tables are built at
//! compile time, per callback type and per module: [`Owner`] carries the module into them as a
//! type, declared once per module with [`module_owner!`](crate::module_owner).

use crate::bindings;

/// A type that names a module, for the `owner` field of the operation tables it builds.
///
/// # Safety
///
/// [`Owner::MODULE`] is the `struct module` of the module that contains the code of every
/// callback the type is used with, or null if that code is built into the kernel.
pub unsafe trait Owner: 'static {
    /// The module (`THIS_MODULE`), or null for built-in code.
    const MODULE: *mut bindings::module;
}

/// Declares `$vis struct $name`, the [`Owner`] of the current module.
///
/// # Examples
///
/// ```ignore
/// // Not `ThisModule`: the prelude has a type of that name.
/// kernel::module_owner!(pub(crate) Owner);
/// ```
#[macro_export]
macro_rules! module_owner {
    ($vis:vis $name:ident) => {
        /// The module being built, as the owner of its operation tables.
        $vis struct $name;

        // SAFETY: `__this_module` is the module being built (null when built in), which contains
        // the code this owner is used with.
        unsafe impl $crate::owner::Owner for $name {
            const MODULE: *mut $crate::bindings::module = {
                #[cfg(MODULE)]
                {
                    extern "C" {
                        static mut __this_module: $crate::bindings::module;
                    }
                    #[allow(unused_unsafe)]
                    // SAFETY: only the address of the module is taken; nothing is read.
                    unsafe {
                        &raw mut __this_module
                    }
                }
                #[cfg(not(MODULE))]
                {
                    ::core::ptr::null_mut()
                }
            };
        }
    };
}
