// SPDX-License-Identifier: GPL-2.0

//! Kernel threads.
//!
//! C header: [`include/linux/kthread.h`](srctree/include/linux/kthread.h)
//!
//! A [`KThread`] runs a closure on its own kernel thread. Dropping the handle (or calling
//! [`KThread::stop`]) asks the thread to stop and waits for it: a thread never outlives its
//! handle, so the closure may borrow nothing but may own `Arc`s to shared state.
//!
//! The closure should loop until [`should_stop`] returns `true`, sleeping interruptibly (for
//! example with [`CondVar::wait_interruptible`]) when it has nothing to do: `kthread_stop()`
//! both wakes the thread and makes interruptible sleeps return, so a stop request is never
//! missed between the check and the sleep.
//!
//! [`CondVar::wait_interruptible`]: crate::sync::CondVar::wait_interruptible

use crate::{alloc::KBox, bindings, error::from_err_ptr, ffi::c_void, prelude::*, str::CString};
use core::{cell::UnsafeCell, fmt, ptr::NonNull};

/// Returns `true` if the current kernel thread has been asked to stop.
///
/// Must only be called from a thread started by [`KThread::spawn`].
pub fn should_stop() -> bool {
    // SAFETY: `kthread_should_stop` only reads the current task's kthread flags.
    unsafe { bindings::kthread_should_stop() }
}

/// The closure of a thread, handed from the spawner to the thread exactly once.
struct Start<F> {
    f: UnsafeCell<Option<F>>,
}

/// A running kernel thread and the right to stop it.
///
/// # Invariants
///
/// - `task` is a kernel thread created by `kthread_create_on_node` on which we hold a
///   reference (`get_task_struct`), so it stays valid until `drop`.
/// - `start` points to the `Start<F>` of that thread, allocated by `spawn` and freed by
///   `drop_start` only after the thread has exited.
pub struct KThread {
    task: NonNull<bindings::task_struct>,
    start: *mut c_void,
    drop_start: unsafe fn(*mut c_void),
    stopped: Option<i32>,
}

// SAFETY: the handle only calls thread-safe C functions on the task; the closure is `Send`.
unsafe impl Send for KThread {}
// SAFETY: `&KThread` only allows waking the thread, which is thread safe.
unsafe impl Sync for KThread {}

impl KThread {
    /// Creates a kernel thread named `name` that runs `f`, and starts it.
    ///
    /// The value `f` returns is returned by [`KThread::stop`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::sync::atomic::{AtomicU32, Ordering};
    /// use kernel::{kthread::{self, KThread}, sync::Arc};
    ///
    /// let count = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
    /// let c = count.clone();
    /// let thread = KThread::spawn(kernel::fmt!("doctest-{}", 1), move || {
    ///     while !kthread::should_stop() {
    ///         c.fetch_add(1, Ordering::Relaxed);
    ///         kernel::kthread::schedule_timeout_interruptible(1);
    ///     }
    ///     42
    /// })?;
    /// while count.load(Ordering::Relaxed) == 0 {
    ///     kernel::kthread::schedule_timeout_interruptible(1);
    /// }
    /// assert_eq!(thread.stop(), 42);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn spawn<F>(name: fmt::Arguments<'_>, f: F) -> Result<Self>
    where
        F: FnOnce() -> i32 + Send + 'static,
    {
        let name = CString::try_from_fmt(name)?;
        let start = KBox::new(
            Start {
                f: UnsafeCell::new(Some(f)),
            },
            GFP_KERNEL,
        )?;
        let start = KBox::into_raw(start).cast::<c_void>();
        // SAFETY: `thread_fn::<F>` matches the C signature and `start` is the pointer it
        // expects; `name` is a valid C string copied by the callee.
        let task = unsafe {
            bindings::kthread_create_on_node_str(
                Some(thread_fn::<F>),
                start,
                bindings::NUMA_NO_NODE,
                name.as_char_ptr(),
            )
        };
        let task = match from_err_ptr(task) {
            Ok(task) => task,
            Err(e) => {
                // SAFETY: the thread was not created, so nobody else has `start`.
                unsafe { drop_start::<F>(start) };
                return Err(e);
            }
        };
        // SAFETY: `task` is a valid, just created task; the reference keeps it valid after the
        // thread exits, as `kthread_stop` on an exited thread requires.
        unsafe { bindings::get_task_struct(task) };
        // SAFETY: `task` is valid; a newly created kthread waits for this first wake-up.
        unsafe { bindings::wake_up_process(task) };
        // INVARIANT: `task` is a kthread we hold a reference on; `start` is its closure.
        Ok(Self {
            // SAFETY: `from_err_ptr` returned a valid, non-null pointer.
            task: unsafe { NonNull::new_unchecked(task) },
            start,
            drop_start: drop_start::<F>,
            stopped: None,
        })
    }

    /// Runs the thread at the lowest real-time priority (`SCHED_FIFO`, `sched_set_fifo_low`): when
    /// it wakes it preempts every normal task, as a thread standing in for dedicated hardware
    /// (a device's management core) should. It must sleep often: it starves normal tasks while
    /// it runs.
    pub fn set_fifo_low(&self) {
        // SAFETY: `task` is valid (type invariant).
        unsafe { bindings::sched_set_fifo_low(self.task.as_ptr()) };
    }

    /// Wakes the thread if it sleeps. Returns `true` if it was asleep.
    pub fn wake(&self) -> bool {
        // SAFETY: `task` is valid (type invariant).
        unsafe { bindings::wake_up_process(self.task.as_ptr()) != 0 }
    }

    /// Asks the thread to stop, waits until it has exited and returns its result.
    ///
    /// If the thread was stopped before it ever ran its closure, returns `-EINTR`.
    pub fn stop(mut self) -> i32 {
        self.stop_and_wait()
    }

    fn stop_and_wait(&mut self) -> i32 {
        if let Some(ret) = self.stopped {
            return ret;
        }
        // SAFETY: `task` is a kthread we hold a reference on (type invariant).
        let ret = unsafe { bindings::kthread_stop(self.task.as_ptr()) };
        // SAFETY: the thread has exited, so it no longer uses `start`; freed exactly once
        // since `stopped` is now set.
        unsafe { (self.drop_start)(self.start) };
        self.stopped = Some(ret);
        ret
    }
}

impl Drop for KThread {
    fn drop(&mut self) {
        self.stop_and_wait();
        // SAFETY: releases the reference taken in `spawn`.
        unsafe { bindings::put_task_struct(self.task.as_ptr()) };
    }
}

/// Sleeps interruptibly for up to `jiffies` jiffies (less if woken or asked to stop).
pub fn schedule_timeout_interruptible(jiffies: usize) {
    let jiffies = jiffies.min(isize::MAX as usize) as crate::ffi::c_long;
    // SAFETY: plain sleep of the current task.
    unsafe { bindings::schedule_timeout_interruptible(jiffies) };
}

/// Gives the CPU to another task if one is due (`cond_resched()`): call it in long loops of a
/// kernel thread that otherwise never sleeps.
pub fn cond_resched() {
    // SAFETY: may sleep; callers are threads in process context.
    unsafe { bindings::cond_resched() };
}

/// Sleeps interruptibly for `min_us` to `max_us` microseconds on a high-resolution timer
/// (`usleep_range()`); the range lets the timer coalesce wake-ups.
pub fn usleep_range(min_us: u64, max_us: u64) {
    let min = min_us.min(usize::MAX as u64) as crate::ffi::c_ulong;
    let max = max_us.max(min_us).min(usize::MAX as u64) as crate::ffi::c_ulong;
    // SAFETY: plain sleep of the current task.
    unsafe { bindings::usleep_range_state(min, max, bindings::TASK_INTERRUPTIBLE) };
}

/// The entry point of the thread.
///
/// # Safety
///
/// `data` must be the `Start<F>` passed to `kthread_create_on_node`, which outlives the thread.
unsafe extern "C" fn thread_fn<F>(data: *mut c_void) -> crate::ffi::c_int
where
    F: FnOnce() -> i32 + Send + 'static,
{
    let start = data.cast::<Start<F>>();
    // SAFETY: `start` is valid (function safety requirements) and, until the thread exits, only
    // this thread accesses it; the spawner touches it again only after `kthread_stop` returns.
    let f = unsafe { (*(*start).f.get()).take() };
    match f {
        Some(f) => f(),
        None => -(bindings::EINVAL as i32),
    }
}

/// Frees the `Start<F>` of a thread that has exited or was never created.
///
/// # Safety
///
/// `data` must come from `KBox::into_raw` of a `Start<F>` in `spawn` and must not be in use.
unsafe fn drop_start<F>(data: *mut c_void) {
    // SAFETY: by the function safety requirements.
    drop(unsafe { KBox::from_raw(data.cast::<Start<F>>()) });
}
