// SPDX-License-Identifier: GPL-2.0

//! Interrupt handlers, and interrupt lines raised by software.
//!
//! C headers: [`include/linux/interrupt.h`](srctree/include/linux/interrupt.h),
//! [`include/linux/irq.h`](srctree/include/linux/irq.h)
//!
//! [`Registration`] requests a threaded interrupt: the handler runs in a kernel thread, where it
//! may take mutexes, once per interrupt (`IRQF_ONESHOT` keeps the line masked until it returns).
//! [`SoftLine`] is an interrupt line with no hardware behind it: a software device gives its
//! number to a driver as an ordinary interrupt resource and raises it with [`SoftLine::raise`].
//!
//! # Examples
//!
//! ```
//! use core::sync::atomic::{AtomicU32, Ordering};
//! use kernel::{c_str, irq::{Handler, Registration, SoftLine}, sync::Arc};
//!
//! struct Count(AtomicU32);
//! impl Handler for Count {
//!     fn handle(&self) {
//!         self.0.fetch_add(1, Ordering::Relaxed);
//!     }
//! }
//!
//! let line = SoftLine::new()?;
//! let count = Arc::new(Count(AtomicU32::new(0)), GFP_KERNEL)?;
//! let reg = Registration::new(line.irq(), c_str!("irq_doctest"), count.clone())?;
//! line.raise()?;
//! // The handler thread runs soon after; wait for it at most a second.
//! for _ in 0..1000 {
//!     if count.0.load(Ordering::Relaxed) == 1 {
//!         break;
//!     }
//!     kernel::kthread::usleep_range(1000, 1000);
//! }
//! assert_eq!(count.0.load(Ordering::Relaxed), 1);
//! drop(reg);
//! # Ok::<(), Error>(())
//! ```

use crate::{
    bindings,
    error::to_result,
    ffi::{c_int, c_void},
    prelude::*,
    str::{CStr, CString},
    sync::Arc,
};

/// What a threaded interrupt handler does.
pub trait Handler: Send + Sync {
    /// Handles one interrupt, in process context.
    fn handle(&self);
}

/// A requested interrupt; freed on drop, after which the handler no longer runs.
///
/// # Invariants
///
/// `irq` was requested with `Arc::as_ptr(&handler)` as its cookie, and is not freed yet.
pub struct Registration<H: Handler> {
    irq: u32,
    handler: Arc<H>,
    _name: CString,
}

impl<H: Handler> Registration<H> {
    /// Requests `irq` with a threaded `handler`.
    pub fn new(irq: u32, name: &CStr, handler: Arc<H>) -> Result<Self> {
        let name = CString::try_from_fmt(crate::fmt!("{}", name))?;
        let cookie = (&*handler as *const H).cast::<c_void>().cast_mut();
        // SAFETY: `thread_fn::<H>` is called with `cookie`, which stays valid until `free_irq`
        // in drop; `name` lives as long as the registration (the kernel keeps the pointer).
        to_result(unsafe {
            bindings::request_threaded_irq(
                irq,
                None,
                Some(thread_fn::<H>),
                bindings::IRQF_ONESHOT as _,
                name.as_char_ptr(),
                cookie,
            )
        })?;
        // INVARIANT: requested above with this cookie.
        Ok(Self {
            irq,
            handler,
            _name: name,
        })
    }
}

impl<H: Handler> Drop for Registration<H> {
    fn drop(&mut self) {
        let cookie = (&*self.handler as *const H).cast::<c_void>().cast_mut();
        // SAFETY: requested with this cookie (type invariant); `free_irq` waits for a running
        // handler, so `handler` outlives every call.
        unsafe { bindings::free_irq(self.irq, cookie) };
    }
}

/// # Safety
///
/// Called by the interrupt thread of an interrupt requested by [`Registration::new`] with a
/// cookie pointing to an `H`.
unsafe extern "C" fn thread_fn<H: Handler>(
    _irq: c_int,
    cookie: *mut c_void,
) -> bindings::irqreturn_t {
    // SAFETY: the cookie is the registration's `H`, alive until `free_irq` returns.
    let handler = unsafe { &*cookie.cast::<H>() };
    handler.handle();
    bindings::irqreturn_IRQ_HANDLED
}

/// An interrupt line with no hardware behind it, raised by software (a software device's
/// interrupt). It uses the kernel's dummy interrupt chip and the simple flow handler.
///
/// # Invariants
///
/// `irq` is an interrupt descriptor allocated by this line and freed on drop.
pub struct SoftLine {
    irq: u32,
}

impl SoftLine {
    /// Allocates the line.
    pub fn new() -> Result<Self> {
        // SAFETY: allocates one descriptor anywhere (`irq = -1`), on no particular node, with no
        // owner module and no affinity.
        let irq = unsafe {
            bindings::__irq_alloc_descs(
                -1,
                1,
                1,
                // NUMA_NO_NODE
                -1,
                core::ptr::null_mut(),
                core::ptr::null(),
            )
        };
        let irq = u32::try_from(irq).map_err(|_| Error::from_errno(irq))?;
        // SAFETY: `irq` was just allocated; the dummy chip and the simple handler are static.
        unsafe {
            bindings::irq_set_chip_and_handler_name(
                irq,
                core::ptr::addr_of!(bindings::dummy_irq_chip),
                Some(bindings::handle_simple_irq),
                core::ptr::null(),
            );
            // Drivers may request it.
            bindings::irq_modify_status(
                irq,
                (bindings::IRQ_NOREQUEST | bindings::IRQ_NOPROBE) as _,
                0,
            );
        }
        // INVARIANT: allocated above.
        Ok(Self { irq })
    }

    /// The Linux interrupt number, to give a driver as a resource.
    pub fn irq(&self) -> u32 {
        self.irq
    }

    /// Raises the interrupt (from any context).
    pub fn raise(&self) -> Result {
        // SAFETY: `irq` is a valid descriptor (type invariant).
        to_result(unsafe { bindings::generic_handle_irq_safe(self.irq) })
    }
}

impl Drop for SoftLine {
    fn drop(&mut self) {
        // SAFETY: allocated by `new` (type invariant); every handler was freed by its driver
        // (a line is dropped after the device that carried it is unregistered).
        unsafe { bindings::irq_free_descs(self.irq, 1) };
    }
}
