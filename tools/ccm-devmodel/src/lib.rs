// SPDX-License-Identifier: GPL-2.0

//! Host build of the software CCM device's pure parts.
//!
//! The sources live in `tools/testing/cxl_ccm/model/` and are compiled into the software device's
//! kernel module as they are; this crate includes them, together with the device ABI
//! (`drivers/cxl_ccm/abi.rs`) and the AXLE protocol logic (`drivers/cxl_ccm/proto/`), at the
//! crate-root paths the model expects (`crate::abi`, `crate::proto`; see
//! `tools/testing/cxl_ccm/model/mod.rs`), so that `cargo test` can exercise them on the host.
//! The crate is `no_std` outside tests, so a dependency on `std` or `alloc` would not compile.

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

#[path = "../../../drivers/cxl_ccm/abi.rs"]
pub mod abi;

#[path = "../../../drivers/cxl_ccm/proto/mod.rs"]
pub mod proto;

#[path = "../../testing/cxl_ccm/model/mod.rs"]
pub mod model;

pub use model::*;
