// SPDX-License-Identifier: GPL-2.0

//! The pure parts of the software CXL computational-memory (CCM) device.
//!
//! The software device (a kernel module on top of `cxl_test`, in `tools/testing/cxl_ccm/`)
//! performs every mechanism as a real memory operation; what can be decided without memory,
//! threads or a clock is here, in `core`-only Rust without `alloc`, and is tested on the host by
//! the cargo crate `tools/ccm-devmodel`:
//!
//! - [`latency`]: the latency model (one parameter per cost, defaults from the AXLE paper's
//!   Table III) and the per-category delay budget;
//! - [`compute`]: the compute model (the CCM of Table III: the modelled time of each kernel's
//!   chunk on a µthread) and the virtual µthreads' timeline;
//! - [`xform`]: the STREAM_XFORM kernel (element-wise transform, per-chunk CRC32C) and the host's
//!   reference check of a record;
//! - [`scheduler`]: the near-memory engine's FIFO / round-robin scheduler of chunks over jobs;
//! - [`dma_plan`]: the DMA executor: sequencer, streaming-factor batching, credit, and the
//!   ordered writes of a back-stream through the shadowed descriptors;
//! - [`posted`]: when a back-stream batch lands (posted, pipelined DMA requests), and the
//!   ring-tail stores held until then.
//!
//! # How to include these files
//!
//! The model refers to the device ABI and to the AXLE protocol logic by **crate-root paths**:
//! `crate::abi` must be `drivers/cxl_ccm/abi.rs` and `crate::proto` must be
//! `drivers/cxl_ccm/proto/mod.rs`. The including crate declares all three at its root:
//!
//! ```ignore
//! #[path = "../../../drivers/cxl_ccm/abi.rs"]
//! pub mod abi;
//! #[path = "../../../drivers/cxl_ccm/proto/mod.rs"]
//! pub mod proto;
//! #[path = "model/mod.rs"] // from tools/testing/cxl_ccm/<crate root>.rs
//! pub mod model;
//! ```
//!
//! (the host crate `tools/ccm-devmodel/src/lib.rs` does the same with its own relative paths).
//! Within the model, modules refer to each other as `super::...`.
//!
//! # Principles
//!
//! - Mechanisms are real, latencies are modelled: these modules decide *what* to write and *how
//!   long it would take*; the kernel glue writes and waits.
//! - No `unwrap`, `expect` or panic is reachable from input (launch packets, descriptor tables,
//!   heads read from the credit line, module parameters); errors are small enums, and every
//!   error leaves the state unchanged.
//! - The caller owns the clock, the locks and the memory; storage is either inline with a
//!   const-generic capacity or provided by the caller.

pub mod attention;
pub mod compute;
pub mod dma_plan;
pub mod graph;
pub mod kernel;
pub mod knn;
pub mod latency;
pub mod posted;
pub mod scheduler;
pub mod sls;
pub mod ssb;
pub mod xform;
