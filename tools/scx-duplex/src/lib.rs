// SPDX-License-Identifier: GPL-2.0

//! scx-duplex: the policy of the duplex-aware sched_ext scheduler `scx_duplex` (CXLAimPod,
//! section 4 and Algorithm 1), as the host sees it.
//!
//! CXL's link carries reads and writes on separate directions, so a memory controller fed an
//! interleaved mix of reads and writes gets more bandwidth than one fed a single direction. The
//! scheduler therefore co-locates read-heavy and write-heavy tasks on the same CPU cluster. It is
//! a BPF program and a C loader in `bpf/`; its decisions are plain C that both use and that
//! `build.rs` compiles into this crate, so the tests here run the shipped code:
//!
//! - [`task`]: the per-task half (phases 3 and 4), `bpf/duplex_policy.h`, which the BPF program
//!   inlines: read shares measured from memory events or assumed from hints, per-cluster
//!   read/write accounting, the cluster choice with hysteresis, the per-task time slice,
//!   vruntime and deadline;
//! - [`engine`]: the periodic half (phases 1 and 2) and the policy engine, `bpf/duplex_series.c`,
//!   which the loader includes: parameters, sliding window, EWMA trends, oversubscription, the
//!   scheduling hint, and the two policies (`timeseries`, `hint`) switched at run time.
//!
//! See `Documentation/tools.rst`, "scx_duplex: the scheduler".

mod ffi;

pub mod engine;
pub mod task;
