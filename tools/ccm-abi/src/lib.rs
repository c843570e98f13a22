// SPDX-License-Identifier: GPL-2.0

//! Host build of the `cxl_ccm` device ABI and user ABI, and the check that the C UAPI header
//! agrees with them.
//!
//! The sources live in `drivers/cxl_ccm/abi.rs` (the device ABI: register block, launch packet,
//! DMA descriptors, metadata records, ring headers) and `drivers/cxl_ccm/uapi.rs` (the ioctl
//! argument structures, command numbers and mmap offsets). The driver and the software device
//! include the same files; this crate includes them too, in a `no_std` crate so that a dependency
//! on `std` would not compile, and re-exports them as [`abi`] and [`uapi`]. Their layouts are
//! frozen by `const` assertions in the files themselves.
//!
//! [`layout`] describes every boundary-crossing structure and every user-visible constant as a
//! table of `name value` lines. The integration test `tests/uapi_header.rs` prints the same table
//! from C (a generated program that includes `include/uapi/linux/cxl_ccm.h`) and compares the two.

#![cfg_attr(not(test), no_std)]
// The lints the kernel build applies to the same files (see `rust_common_flags` in the kernel
// Makefile), so that the host build catches what the module build would warn about.
#![deny(
    missing_docs,
    non_ascii_idents,
    rust_2018_idioms,
    unreachable_pub,
    unsafe_code,
    unsafe_op_in_unsafe_fn,
    clippy::ignored_unit_patterns,
    clippy::mut_mut,
    clippy::needless_bitwise_bool,
    clippy::undocumented_unsafe_blocks,
    clippy::unnecessary_safety_comment,
    clippy::unnecessary_safety_doc
)]

extern crate alloc;

#[path = "../../../drivers/cxl_ccm/abi.rs"]
pub mod abi;

#[path = "../../../drivers/cxl_ccm/uapi.rs"]
pub mod uapi;

pub mod layout;
