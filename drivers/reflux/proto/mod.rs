// SPDX-License-Identifier: GPL-2.0

//! ReFlux's pure logic: what the driver and the software device decide without memory, threads
//! or a clock.
//!
//! These modules use `core` only, allocate nothing and use no floating point (the kernel has
//! none), so the same files are compiled into the `reflux` kernel module, into the software CXL
//! SSD (`tools/testing/reflux/`) and into the host crate `tools/reflux-proto`, whose tests run in
//! seconds:
//!
//! - [`attach`]: pipelines attached to byte ranges of a device by the administrator, and the
//!   parsing of what the administrator writes;
//! - [`ring`]: free-running ring counters, the SQ and CQ index arithmetic (the same file as
//!   `cxl_ccm`'s, included rather than copied);
//! - [`pipeline`]: the predefined pipelines, the stage order of each direction and the placement
//!   runs: which stages one side runs before it hands the request over (paper §4.2, §4.4);
//! - [`request`]: validation of a submission descriptor against the PMR layout, and the epoch
//!   check of drain-and-switch migration (§4.3);
//! - [`checkpoint`]: an actor's control state, its two-slot checkpoint in the PMR and the crash
//!   recovery of the two-phase migration commit (§4.3, §4.5);
//! - [`dispatch`]: request-level dispatch to the faster side by a fixed cost profile, the
//!   baseline ReFlux is measured against (paradigm B, λ-IO's manner);
//! - [`block_meta`]: the per-block metadata entry ("per-range metadata" shared state): encoding,
//!   decoding, checksum verification;
//! - [`xts`]: AES-XTS (IEEE 1619) over a block-cipher trait, data unit = LBA;
//! - [`thermal`]: the device's thermal model (heating by work, decay toward ambient, throttling at
//!   the OCP 77 °C threshold with hysteresis);
//! - [`poll_switch`]: the completion wait's switch between sleeping and polling, driven by the
//!   inter-completion gap (§4.3, "transitions from MWAIT to polling as inter-completion gaps
//!   shrink");
//! - [`page_tag`]: the tag a page-cache page carries (actors, placement, epoch sum) and when it
//!   is stale;
//! - [`pacing`]: the engine speed factor, the delay the software device adds so that its engine
//!   runs at the modelled speed;
//! - [`sched`]: the thermal-aware per-stage scheduler's decisions: the placement score, upload,
//!   offload and request throttling (§4.4).
//!
//! # How to include these files
//!
//! The modules refer to the device ABI by a **crate-root path**: `crate::abi` must be
//! `drivers/reflux/abi.rs`. The including crate declares both at its root:
//!
//! ```ignore
//! #[path = "abi.rs"]       // from drivers/reflux/<crate root>.rs
//! pub mod abi;
//! #[path = "proto/mod.rs"]
//! pub mod proto;
//! ```
//!
//! # Principles
//!
//! - No `unwrap`, `expect` or panic is reachable from input (descriptors, PMR contents, register
//!   values, module parameters): errors are small enums that say which rule was broken, and the
//!   caller maps them to an errno ([`crate::abi::STATUS_EINVAL`] for a malformed request).
//! - Arithmetic on inputs saturates or is checked; no input overflows.
//! - The caller owns the clock, the locks and the memory.

pub mod attach;
pub mod block_meta;
pub mod checkpoint;
pub mod dispatch;
pub mod pacing;
pub mod page_tag;
pub mod pipeline;
pub mod poll_switch;
pub mod request;
// The SQ and CQ are single-producer single-consumer rings with free-running u32 counters, exactly
// the arithmetic of cxl_ccm's AXLE rings: one implementation, one set of tests (tools/ccm-proto).
#[path = "../../cxl_ccm/proto/ring.rs"]
pub mod ring;
pub mod sched;
pub mod thermal;
pub mod xts;
