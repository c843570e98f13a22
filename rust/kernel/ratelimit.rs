// SPDX-License-Identifier: GPL-2.0

//! Rate-limited printing, for messages that user space can trigger at will.
//!
//! C header: [`include/linux/printk.h`](srctree/include/linux/printk.h)
//!
//! Bad input from user space must leave a trace in the log that says why it was refused, but a
//! caller in a loop must not be able to flood the log. These macros go through the kernel's
//! shared `printk_ratelimit()` state (by default 10 messages per 5 seconds).

/// Returns `true` if a rate-limited message may be printed now.
///
/// `func` names the caller in the "callbacks suppressed" line the kernel prints when it drops
/// messages.
///
/// # Examples
///
/// ```
/// // The first message after boot is always allowed.
/// let _ = kernel::ratelimit::allow(c"doctest");
/// ```
pub fn allow(func: &'static core::ffi::CStr) -> bool {
    // SAFETY: `func` is a valid NUL-terminated string with static lifetime, as the C function
    // requires (it keeps the pointer only for the duration of the call).
    unsafe { crate::bindings::__printk_ratelimit(func.as_ptr().cast()) != 0 }
}

/// Prints a warning unless too many rate-limited messages were printed recently.
///
/// Takes the same arguments as [`pr_warn!`](crate::pr_warn).
#[macro_export]
macro_rules! pr_warn_ratelimited (
    ($($arg:tt)*) => {
        if $crate::ratelimit::allow(c"pr_warn_ratelimited") {
            $crate::pr_warn!($($arg)*);
        }
    }
);

/// Prints an info message unless too many rate-limited messages were printed recently.
///
/// Takes the same arguments as [`pr_info!`](crate::pr_info).
#[macro_export]
macro_rules! pr_info_ratelimited (
    ($($arg:tt)*) => {
        if $crate::ratelimit::allow(c"pr_info_ratelimited") {
            $crate::pr_info!($($arg)*);
        }
    }
);
