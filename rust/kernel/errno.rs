// SPDX-License-Identifier: GPL-2.0

//! Error codes that 6.12's [`crate::error::code`] does not declare.
//!
//! Later kernels add them there; until then drivers take them from here rather than each
//! building its own from the bindings.

use crate::{bindings, error::Error};

fn errno(code: u32) -> Error {
    // Every code below is a valid errno (1..=MAX_ERRNO), so `from_errno` never warns.
    Error::from_errno(-(code as i32))
}

/// `EOPNOTSUPP`: the operation is not supported (by this device, or yet).
pub fn eopnotsupp() -> Error {
    errno(bindings::EOPNOTSUPP)
}

/// `ETIMEDOUT`: the other side did not answer in time.
pub fn etimedout() -> Error {
    errno(bindings::ETIMEDOUT)
}

/// `EDEADLK`: waiting would never end (e.g. a producer blocked on the waiter's own credit).
pub fn edeadlk() -> Error {
    errno(bindings::EDEADLK)
}

/// `EBADFD`: the file is not in the state the operation needs.
pub fn ebadfd() -> Error {
    errno(bindings::EBADFD)
}

/// `EALREADY`: the operation's goal already holds (e.g. an actor already on that side).
pub fn ealready() -> Error {
    errno(bindings::EALREADY)
}

/// `ESHUTDOWN`: the device is going away; the operation was abandoned.
pub fn eshutdown() -> Error {
    errno(bindings::ESHUTDOWN)
}
