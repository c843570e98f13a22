// SPDX-License-Identifier: GPL-2.0

//! Fatal signals: whether the current task is being killed.
//!
//! C header: [`include/linux/sched/signal.h`](srctree/include/linux/sched/signal.h)
//!
//! Some waits must not end on an ordinary signal, because the operation they wait for cannot
//! be undone or repeated (a command the device already took). They can still end when the
//! task is being killed: nobody will see the result, and the task must not outlive `SIGKILL`
//! by the length of the device's operation. That is what `TASK_KILLABLE` sleeps do in C.

/// Returns `true` if the current task has a fatal signal (`SIGKILL`) pending.
///
/// # Examples
///
/// ```
/// // A doctest is not being killed.
/// assert!(!kernel::fatal_signal::pending());
/// ```
pub fn pending() -> bool {
    // SAFETY: `get_current` returns the running task, which stays valid for the duration of
    // the call; `fatal_signal_pending` only reads its signal state.
    unsafe { crate::bindings::fatal_signal_pending(crate::bindings::get_current()) != 0 }
}
