// SPDX-License-Identifier: GPL-2.0

//! Typed ioctl arguments.
//!
//! An ioctl command made with `_IOR`/`_IOW`/`_IOWR` encodes the size and direction of its
//! argument. [`IoctlArg`] checks them against the Rust type of the argument before copying, so
//! that a command with the right number but the wrong size (an old or foreign ABI) is refused
//! with `ENOTTY` instead of being misread.

use crate::{
    ioctl::{_IOC_DIR, _IOC_SIZE},
    prelude::*,
    types::{AsBytes, FromBytes},
    uaccess::{UserPtr, UserSlice},
};
use core::marker::PhantomData;

const IOC_WRITE: u32 = uapi::_IOC_WRITE;
const IOC_READ: u32 = uapi::_IOC_READ;

/// The user-space argument of an ioctl command whose encoded size is `size_of::<T>()`.
///
/// # Examples
///
/// ```
/// use kernel::{ioctl::{_IOR, _IOWR}, ioctl_arg::IoctlArg};
///
/// const CMD: u32 = _IOWR::<u64>(0xCE, 0x40);
/// assert!(IoctlArg::<u64>::new(CMD, 0x1000).is_ok());
/// // Same number, different size: not this command.
/// assert_eq!(IoctlArg::<u32>::new(CMD, 0x1000).err(), Some(ENOTTY));
/// // A user pointer that faults is reported as EFAULT when it is used.
/// assert_eq!(IoctlArg::<u64>::new(CMD, 0).unwrap().read().err(), Some(EFAULT));
/// // `_IOR` commands are only written to.
/// assert_eq!(IoctlArg::<u64>::new(_IOR::<u64>(0xCE, 0x41), 0x1000)?.read().err(), Some(ENOTTY));
/// # Ok::<(), Error>(())
/// ```
pub struct IoctlArg<T> {
    cmd: u32,
    ptr: UserPtr,
    _t: PhantomData<T>,
}

impl<T: FromBytes + AsBytes> IoctlArg<T> {
    /// Checks that `cmd` carries an argument of type `T`; `arg` is the user pointer.
    ///
    /// Returns `ENOTTY` if the encoded size differs from `size_of::<T>()`.
    pub fn new(cmd: u32, arg: usize) -> Result<Self> {
        if _IOC_SIZE(cmd) != core::mem::size_of::<T>() {
            return Err(ENOTTY);
        }
        Ok(Self {
            cmd,
            ptr: arg,
            _t: PhantomData,
        })
    }

    /// Copies the argument in. Needs a command with the write direction (`_IOW`/`_IOWR`).
    pub fn read(&self) -> Result<T> {
        if _IOC_DIR(self.cmd) & IOC_WRITE == 0 {
            return Err(ENOTTY);
        }
        UserSlice::new(self.ptr, core::mem::size_of::<T>())
            .reader()
            .read::<T>()
    }

    /// Copies `value` out. Needs a command with the read direction (`_IOR`/`_IOWR`).
    pub fn write(&self, value: &T) -> Result {
        if _IOC_DIR(self.cmd) & IOC_READ == 0 {
            return Err(ENOTTY);
        }
        UserSlice::new(self.ptr, core::mem::size_of::<T>())
            .writer()
            .write(value)
    }
}
