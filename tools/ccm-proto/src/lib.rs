// SPDX-License-Identifier: GPL-2.0

//! Host build of the `cxl_ccm` driver's pure protocol logic.
//!
//! The source lives in `drivers/cxl_ccm/proto/` and is compiled into the kernel module as is; this
//! crate only includes it so that `cargo test` can exercise it on the host. The modules are
//! re-exported at the crate root: [`ring`], [`gap_head`], [`credit`], [`batcher`]. The protocol and
//! its invariants are described in `drivers/cxl_ccm/proto/mod.rs`.

#![cfg_attr(not(test), no_std)]
// The lints the kernel build applies to the same files (see `rust_common_flags` in the kernel
// Makefile), so that the host build catches what the module build would warn about.
#![deny(
    missing_docs,
    non_ascii_idents,
    rust_2018_idioms,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::ignored_unit_patterns,
    clippy::mut_mut,
    clippy::needless_bitwise_bool,
    clippy::undocumented_unsafe_blocks,
    clippy::unnecessary_safety_comment,
    clippy::unnecessary_safety_doc
)]

#[path = "../../../drivers/cxl_ccm/proto/mod.rs"]
mod proto;

pub use proto::*;
