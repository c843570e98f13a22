// SPDX-License-Identifier: GPL-2.0

//! Tracepoints that a module defines in C and fires from Rust.
//!
//! A module keeps its events in a small C trace header (`TRACE_EVENT()`, as any C driver does)
//! and compiles one C file with `CREATE_TRACE_POINTS` that also defines, for each event
//! `name`, a function `rust_do_trace_<name>` that calls `trace_<name>()`. The module's Rust
//! code declares the events once with [`declare_trace!`] and calls them as functions: while
//! nobody listens, a call costs one load of the tracepoint's static key.
//!
//! Later kernels generate the C wrappers (`CREATE_RUST_TRACE_POINTS`) and test the key with a
//! jump label; this tree has neither, and its modules cannot add to the kernel's bindings, so
//! the macro declares the tracepoint and its wrapper itself and reads the key's count, as
//! `static_key_enabled()` does.
//!
//! C header: [`include/linux/tracepoint.h`](srctree/include/linux/tracepoint.h)

use crate::bindings;
use core::sync::atomic::{AtomicI32, Ordering};

/// Declares tracepoints defined by the module's C trace header, as functions.
///
/// Each declaration names an event and its arguments, which must be those of the event's
/// `TP_PROTO()` in the same order and of the same C types (`u32` for `u32`, `i32` for `int`,
/// and so on): the C wrapper is linked by name, and nothing checks its prototype against this
/// one. Arguments are scalars only ([`Scalar`]), so calling an event is safe.
///
/// ```ignore
/// kernel::declare_trace! {
///     /// A launch was accepted.
///     pub(crate) fn cxl_ccm_launch(tenant: u32, tag: u32, bytes: u64);
/// }
///
/// cxl_ccm_launch(t, tag, len);
/// ```
#[macro_export]
macro_rules! declare_trace {
    ($($(#[$attr:meta])* $pub:vis fn $name:ident($($arg:ident : $typ:ty),* $(,)?);)*) => {$(
        $crate::macros::paste! {
            extern "C" {
                static [< __tracepoint_ $name >]: $crate::bindings::tracepoint;
                fn [< rust_do_trace_ $name >]($($arg: $typ),*);
            }

            $(#[$attr])*
            #[inline(always)]
            $pub fn $name($($arg: $typ),*) {
                $( $crate::tracepoint::scalar::<$typ>(); )*
                // SAFETY: the module's C file defines the tracepoint; only its address is
                // taken here.
                let tp = unsafe { ::core::ptr::addr_of!([< __tracepoint_ $name >]) };
                // SAFETY: `tp` points to a tracepoint that lives as long as the module.
                if unsafe { $crate::tracepoint::enabled(tp) } {
                    // SAFETY: the wrapper has the event's prototype (see the macro's
                    // documentation) and takes only scalars.
                    unsafe { [< rust_do_trace_ $name >]($($arg),*) };
                }
            }
        }
    )*};
}

/// Types a tracepoint declared with [`declare_trace!`] may take: plain values, no pointers.
pub trait Scalar: Copy {}

macro_rules! scalars {
    ($($t:ty),*) => { $(impl Scalar for $t {})* };
}
scalars!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, bool);

/// Checks at compile time that `T` is a [`Scalar`]. Used by [`declare_trace!`].
#[doc(hidden)]
#[inline(always)]
pub const fn scalar<T: Scalar>() {}

/// Whether someone listens to the tracepoint at `tp`: its static key's count is positive.
///
/// # Safety
///
/// `tp` points to a valid `struct tracepoint` that outlives the call.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn enabled(tp: *const bindings::tracepoint) -> bool {
    // SAFETY: by the caller's guarantee `tp` is valid, so the field's address is too.
    let counter = unsafe { core::ptr::addr_of!((*tp).key.enabled.counter) };
    // SAFETY: `enabled` is an `atomic_t`, an `int` the tracing core changes only atomically,
    // so reading it as an `AtomicI32` is sound; it lives as long as the tracepoint.
    let count = unsafe { AtomicI32::from_ptr(counter.cast_mut()) };
    count.load(Ordering::Relaxed) > 0
}

/// The errno of a result, as trace events carry it: 0 for success, else the negative errno.
pub fn errno<T>(r: &crate::error::Result<T>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.to_errno(),
    }
}
