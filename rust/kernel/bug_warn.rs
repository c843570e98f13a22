// SPDX-License-Identifier: GPL-2.0

//! Kernel warnings from Rust.
//!
//! C header: [`include/asm-generic/bug.h`](srctree/include/asm-generic/bug.h)
//!
//! A broken invariant that the kernel can survive is reported with a `WARNING:` and a stack
//! trace, as C code does with `WARN_ON()`, instead of a panic.

/// Prints a kernel warning with a backtrace if `cond` is true, and returns `cond`.
///
/// The report names the Rust source location of the macro call.
///
/// # Examples
///
/// ```
/// // A false condition reports nothing.
/// assert!(!kernel::warn_on!(1 + 1 != 2));
/// ```
#[macro_export]
macro_rules! warn_on {
    ($cond:expr) => {{
        let cond: bool = $cond;
        if cond {
            $crate::bug_warn::warn_at(
                $crate::c_str!(::core::file!()),
                ::core::line!(),
                $crate::c_str!(::core::stringify!($cond)),
            );
        }
        cond
    }};
}

/// Reports a warning at the given location. Use [`warn_on!`](crate::warn_on) instead.
#[doc(hidden)]
#[cold]
pub fn warn_at(file: &'static crate::str::CStr, line: u32, cond: &'static crate::str::CStr) {
    // SAFETY: the strings are valid NUL-terminated static strings; the C side only reads them.
    unsafe {
        crate::bindings::warn_at(
            file.as_char_ptr(),
            line as crate::ffi::c_int,
            cond.as_char_ptr(),
        )
    };
}
