// SPDX-License-Identifier: GPL-2.0

//! Host build of the `reflux` device ABI and pure logic.
//!
//! The sources live in `drivers/reflux/abi.rs` (the device ABI: registers, PMR layout, submission
//! descriptor, completion entry, per-block metadata) and `drivers/reflux/proto/` (pipelines and
//! placement runs, block metadata validation, request validation, AES-XTS, the thermal model, the
//! completion-wait switch, engine pacing, the thermal-aware scheduler, and the ring arithmetic
//! shared with `cxl_ccm`). The kernel module and the software device compile the same files; this
//! crate includes them so that `cargo test` can exercise them on the host. `proto` refers to the
//! ABI as `crate::abi`, so both are declared at the crate root, as in the module. The proto
//! modules are re-exported at the crate root: [`ring`], [`pipeline`], [`request`], [`block_meta`],
//! [`xts`], [`thermal`], [`poll_switch`], [`pacing`], [`sched`].

#![cfg_attr(not(test), no_std)]
// The lints the kernel build applies to the same files (see `rust_common_flags` in the kernel
// Makefile), so that the host build catches what the module build would warn about; plus
// `unsafe_code` (none is needed) and `float_arithmetic` (the kernel has no floating point).
#![deny(
    missing_docs,
    non_ascii_idents,
    rust_2018_idioms,
    unreachable_pub,
    unsafe_code,
    unsafe_op_in_unsafe_fn,
    clippy::float_arithmetic,
    clippy::ignored_unit_patterns,
    clippy::mut_mut,
    clippy::needless_bitwise_bool,
    clippy::undocumented_unsafe_blocks,
    clippy::unnecessary_safety_comment,
    clippy::unnecessary_safety_doc
)]

#[path = "../../../drivers/reflux/abi.rs"]
pub mod abi;

#[path = "../../../drivers/reflux/proto/mod.rs"]
mod proto;

pub use proto::*;
