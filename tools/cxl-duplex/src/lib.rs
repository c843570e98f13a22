// SPDX-License-Identifier: GPL-2.0

//! cxl-duplex: how a NUMA node's memory serves mixed reads and writes (CXLAimPod, section 3) and
//! what its latency is idle and under load (the characterization of seeds/002).
//!
//! The pure parts are here and tested on the host: the token bucket that caps bandwidth, the mix
//! that spreads reads and writes evenly at a given ratio, the planner of sweeps, the report and
//! its plot. The measuring parts (`numa`, `workers`, `latency`) touch memory and threads.

pub mod bucket;
pub mod latency;
pub mod mix;
pub mod numa;
pub mod plan;
pub mod report;
pub mod workers;
