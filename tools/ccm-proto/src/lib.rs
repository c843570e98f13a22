// SPDX-License-Identifier: GPL-2.0

//! Host build of the `cxl_ccm` driver's pure protocol logic.
//!
//! The source lives in `drivers/cxl_ccm/proto/` and is compiled into the kernel module as is; this
//! crate only includes it so that `cargo test` can exercise it on the host. The modules are
//! re-exported at the crate root: [`ring`], [`gap_head`], [`credit`], [`batcher`]. The protocol and
//! its invariants are described in `drivers/cxl_ccm/proto/mod.rs`.

#![cfg_attr(not(test), no_std)]

#[path = "../../../drivers/cxl_ccm/proto/mod.rs"]
mod proto;

pub use proto::*;
