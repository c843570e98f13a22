// SPDX-License-Identifier: GPL-2.0

//! Log lines about a device, prefixed by the kernel with its driver and name (`dev_err()` and
//! friends in C), so a driver need not prefix each message by hand.
//!
//! C header: [`include/linux/dev_printk.h`](srctree/include/linux/dev_printk.h)
//!
//! # Examples
//!
//! ```
//! # fn log(dev: &kernel::device::Device) {
//! kernel::dev_info!(dev, "bound: {} queues\n", 4);
//! # }
//! ```

use crate::{bindings, device::Device};
use core::fmt;

/// Kernel log levels (`KERN_*`): the start-of-header byte, the level, NUL.
mod level {
    pub(super) const ERR: &[u8; 3] = b"\x013\0";
    pub(super) const WARNING: &[u8; 3] = b"\x014\0";
    pub(super) const NOTICE: &[u8; 3] = b"\x015\0";
    pub(super) const INFO: &[u8; 3] = b"\x016\0";
}

impl Device {
    /// Prints `args` at `level` with the device's prefix.
    fn printk(&self, level: &'static [u8; 3], args: fmt::Arguments<'_>) {
        // SAFETY: `level` is a NUL-terminated `KERN_*` string; the device is valid (type
        // invariant); `%pA` formats the `fmt::Arguments` the last argument points to, which
        // lives across the call.
        unsafe {
            bindings::_dev_printk(
                level.as_ptr().cast(),
                self.as_raw(),
                crate::c_str!("%pA").as_char_ptr(),
                core::ptr::from_ref(&args).cast::<crate::ffi::c_void>(),
            )
        };
    }

    /// `dev_err()`: use [`dev_err!`](crate::dev_err).
    #[doc(hidden)]
    pub fn pr_err(&self, args: fmt::Arguments<'_>) {
        self.printk(level::ERR, args);
    }

    /// `dev_warn()`: use [`dev_warn!`](crate::dev_warn).
    #[doc(hidden)]
    pub fn pr_warn(&self, args: fmt::Arguments<'_>) {
        self.printk(level::WARNING, args);
    }

    /// `dev_notice()`: use [`dev_notice!`](crate::dev_notice).
    #[doc(hidden)]
    pub fn pr_notice(&self, args: fmt::Arguments<'_>) {
        self.printk(level::NOTICE, args);
    }

    /// `dev_info()`: use [`dev_info!`](crate::dev_info).
    #[doc(hidden)]
    pub fn pr_info(&self, args: fmt::Arguments<'_>) {
        self.printk(level::INFO, args);
    }
}

/// Prints an error about a device (`dev_err()`): `dev_err!(dev, "fmt", args...)`.
#[macro_export]
macro_rules! dev_err {
    ($dev:expr, $($f:tt)*) => { $crate::device::Device::pr_err($dev, ::core::format_args!($($f)*)) };
}

/// Prints a warning about a device (`dev_warn()`).
#[macro_export]
macro_rules! dev_warn {
    ($dev:expr, $($f:tt)*) => { $crate::device::Device::pr_warn($dev, ::core::format_args!($($f)*)) };
}

/// Prints a notice about a device (`dev_notice()`).
#[macro_export]
macro_rules! dev_notice {
    ($dev:expr, $($f:tt)*) => {
        $crate::device::Device::pr_notice($dev, ::core::format_args!($($f)*))
    };
}

/// Prints information about a device (`dev_info()`).
#[macro_export]
macro_rules! dev_info {
    ($dev:expr, $($f:tt)*) => { $crate::device::Device::pr_info($dev, ::core::format_args!($($f)*)) };
}

/// Prints a warning about a device unless too many rate-limited messages were printed recently
/// (the kernel's shared `printk_ratelimit()` state, as [`pr_warn_ratelimited!`]): for what a
/// caller or the device can trigger at will.
///
/// [`pr_warn_ratelimited!`]: crate::pr_warn_ratelimited
#[macro_export]
macro_rules! dev_warn_ratelimited {
    ($dev:expr, $($f:tt)*) => {
        if $crate::ratelimit::allow(c"dev_warn_ratelimited") {
            $crate::dev_warn!($dev, $($f)*);
        }
    };
}
