// SPDX-License-Identifier: GPL-2.0

//! Wait queues that sleepers and `poll()` share.
//!
//! [`CondVar`](crate::sync::CondVar) needs a lock around the condition; a driver whose condition
//! is a device-written word (a ring tail in DMA memory) has no lock to hold, and `poll()` must
//! register on the same queue the sleepers use. [`WaitQueue`] wraps a `wait_queue_head` for both:
//! [`WaitQueue::wait_interruptible_timeout`] is `wait_event_interruptible_timeout()`, and
//! [`PollTable::register`] is `poll_wait()`.
//!
//! C headers: [`include/linux/wait.h`](srctree/include/linux/wait.h),
//! [`include/linux/poll.h`](srctree/include/linux/poll.h).
//!
//! # Examples
//!
//! ```
//! use core::sync::atomic::{AtomicBool, Ordering};
//! use kernel::{new_wait_queue, wait::WaitOutcome};
//!
//! let wq = KBox::pin_init(new_wait_queue!(), GFP_KERNEL)?;
//! let flag = AtomicBool::new(false);
//! let check = || flag.load(Ordering::Acquire);
//! assert_eq!(wq.wait_interruptible_timeout(Some(0), check)?, WaitOutcome::TimedOut);
//! assert_eq!(wq.wait_interruptible_timeout(Some(2), check)?, WaitOutcome::TimedOut);
//! flag.store(true, Ordering::Release);
//! wq.wake_all();
//! assert_eq!(wq.wait_interruptible_timeout(None, check)?, WaitOutcome::Done);
//! # Ok::<(), Error>(())
//! ```

use crate::{bindings, prelude::*, str::CStr, sync::LockClassKey, types::Opaque};
use core::{marker::PhantomPinned, mem::MaybeUninit};

/// Creates a [`WaitQueue`] initialiser with a lockdep class of its own.
#[macro_export]
macro_rules! new_wait_queue {
    ($($name:literal)?) => {
        $crate::wait::WaitQueue::new($crate::optional_name!($($name)?), $crate::static_lock_class!())
    };
}

/// A wait queue head.
///
/// # Invariants
///
/// `wq` is an initialised `wait_queue_head` for as long as `self` exists; it is pinned because
/// sleepers and poll entries link themselves into it.
#[pin_data]
pub struct WaitQueue {
    #[pin]
    wq: Opaque<bindings::wait_queue_head>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: a wait queue head is meant to be used from any thread; its spinlock protects it.
unsafe impl Send for WaitQueue {}
// SAFETY: as above.
unsafe impl Sync for WaitQueue {}

/// The outcome of a timed wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The condition held.
    Done,
    /// The time limit passed first.
    TimedOut,
}

impl WaitQueue {
    /// Creates a wait queue (use [`new_wait_queue!`]).
    pub fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        pin_init!(Self {
            wq <- Opaque::ffi_init(|slot| {
                // SAFETY: `slot` is valid, pinned memory for a `wait_queue_head`; the name and
                // the key are static.
                unsafe { bindings::__init_waitqueue_head(slot, name.as_char_ptr(), key.as_ptr()) }
            }),
            _pin: PhantomPinned,
        })
    }

    pub(crate) fn as_ptr(&self) -> *mut bindings::wait_queue_head {
        self.wq.get()
    }

    /// Wakes every sleeper and every poller (`wake_up_all()`).
    pub fn wake_all(&self) {
        // SAFETY: the head is initialised (type invariant); no key is passed.
        unsafe {
            bindings::__wake_up(
                self.as_ptr(),
                bindings::TASK_INTERRUPTIBLE | bindings::TASK_UNINTERRUPTIBLE,
                0,
                core::ptr::null_mut(),
            )
        };
    }

    /// Sleeps until `cond()` holds, a signal arrives, or `timeout` jiffies pass (`None`: no
    /// limit). `cond` is evaluated after the task is queued, so a wake-up between the check
    /// and the sleep is not lost; wakers must make the condition true before [`Self::wake_all`].
    ///
    /// Returns `ERESTARTSYS` on a signal.
    pub fn wait_interruptible_timeout(
        &self,
        timeout: Option<usize>,
        mut cond: impl FnMut() -> bool,
    ) -> Result<WaitOutcome> {
        let mut left = timeout.map(|t| t.min(isize::MAX as usize - 1) as crate::ffi::c_long);
        let mut entry = MaybeUninit::<bindings::wait_queue_entry>::uninit();
        let entry = entry.as_mut_ptr();
        // SAFETY: `entry` is writable stack memory that stays in place until `finish_wait`.
        unsafe { bindings::init_wait_entry(entry, 0) };
        let outcome = loop {
            // SAFETY: the head is initialised; `entry` was initialised above and is removed
            // by `finish_wait` before it goes out of scope.
            let pending = unsafe {
                bindings::prepare_to_wait_event(
                    self.as_ptr(),
                    entry,
                    bindings::TASK_INTERRUPTIBLE as _,
                )
            };
            if cond() {
                break Ok(WaitOutcome::Done);
            }
            if pending != 0 {
                break Err(ERESTARTSYS);
            }
            match left {
                Some(0) => break Ok(WaitOutcome::TimedOut),
                // SAFETY: the task state was set by `prepare_to_wait_event`.
                Some(t) => left = Some(unsafe { bindings::schedule_timeout(t) }),
                // SAFETY: as above.
                None => unsafe {
                    bindings::schedule();
                },
            }
        };
        // SAFETY: `entry` is the entry queued above (or not queued, which `finish_wait` allows).
        unsafe { bindings::finish_wait(self.as_ptr(), entry) };
        outcome
    }
}

/// The `poll_table` of a `poll()`/`select()`/`epoll` call on a file.
///
/// # Invariants
///
/// `file` and `table` are the arguments of the `poll` file operation running now.
pub struct PollTable {
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
}

impl PollTable {
    /// Wraps the arguments of a `poll` file operation.
    ///
    /// # Safety
    ///
    /// Both must be the arguments of the `poll` file operation in progress, and the result
    /// must not outlive it.
    pub unsafe fn from_raw(
        file: *mut bindings::file,
        table: *mut bindings::poll_table_struct,
    ) -> Self {
        // INVARIANT: by the safety requirements.
        Self { file, table }
    }

    /// Registers the caller on `wq` (`poll_wait()`): a later [`WaitQueue::wake_all`] re-polls.
    ///
    /// `wq` must live until the file is released: `epoll` stays registered until then. A wait
    /// queue owned by the file's private data satisfies that.
    pub fn register(&self, wq: &WaitQueue) {
        // SAFETY: `file` and `table` are the poll call's arguments (type invariant); `wq` is an
        // initialised head that the caller keeps alive until the file is released.
        unsafe { bindings::poll_wait(self.file, wq.as_ptr(), self.table) };
    }
}

// The `EPOLL*` macros carry a `__force __poll_t` cast that bindgen does not evaluate; their
// values are fixed by the user ABI (`include/uapi/linux/eventpoll.h`).
/// Readable (`EPOLLIN | EPOLLRDNORM`).
pub const POLL_READABLE: u32 = 0x0001 | 0x0040;
/// An error condition (`EPOLLERR`).
pub const POLL_ERROR: u32 = 0x0008;
/// Hung up: the device is gone (`EPOLLHUP`).
pub const POLL_HANGUP: u32 = 0x0010;
