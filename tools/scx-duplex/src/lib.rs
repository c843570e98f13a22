// SPDX-License-Identifier: GPL-2.0

//! scx-duplex: the policy of a duplex-aware scheduler (CXLAimPod, section 4 and Algorithm 1).
//!
//! CXL's link carries reads and writes on separate directions, so a memory controller fed an
//! interleaved mix of reads and writes gets more bandwidth than one fed a single direction. The
//! scheduler therefore co-locates read-heavy and write-heavy tasks on the same CPU cluster. This
//! crate holds its decisions as pure functions, tested on the host:
//!
//! - [`hint`]: task classes from cgroup hints (children inherit, a task's own hint overrides);
//! - [`series`]: the sliding window of system samples, EWMA trends, oversubscription detection
//!   and the scheduling hint of Algorithm 1 (phases 1 and 2), and the time slice it implies;
//! - [`place`]: per-cluster read/write accounting and the CPU-cluster choice with hysteresis.
//!
//! The sched_ext BPF scheduler that will apply them in the kernel is not written yet (the
//! kernel configuration has no `SCHED_CLASS_EXT`); see `Documentation/tools.rst`.

pub mod hint;
pub mod place;
pub mod series;
