// SPDX-License-Identifier: GPL-2.0

//! The driver's trace events, defined in C by `reflux_events.h` (whose comments say what each
//! field means) and fired from here. Documentation/reflux.rst shows how to read them.
//!
//! The prototypes must match the header's `TP_PROTO()`s, argument for argument.

use crate::proto::pipeline::{Side, Stage};

kernel::declare_trace! {
    /// A request entered the driver.
    pub(crate) fn reflux_rq_issue(dev: u32, tag: u32, pipeline: u32, dir: u32, lba: u64, blocks: u32);
    /// A request went to the device from `stage_start`, with the device's steps in `placement`.
    pub(crate) fn reflux_rq_submit(dev: u32, tag: u32, stage_start: u32, placement: u32);
    /// A request ended with `ret`, `ns` after it entered.
    pub(crate) fn reflux_rq_complete(dev: u32, tag: u32, ret: i32, ns: u64);
    /// A stage ran over `bytes` in `ns`.
    pub(crate) fn reflux_stage_run(dev: u32, tag: u32, side: u32, stage: u32, bytes: u32, ns: u64);
    /// A phase of a migration ended after `ns`.
    pub(crate) fn reflux_migrate_phase(dev: u32, actor: u32, from: u32, to: u32, phase: u32, ns: u64);
    /// The scheduler changed the admission throttle.
    pub(crate) fn reflux_throttle(dev: u32, old_permille: u32, new_permille: u32, temp_milli_c: u32);
    /// A stale page of the disk was found in the page cache.
    pub(crate) fn reflux_pagecache_stale(dev: u32, index: u64, nr: u64);
}

/// A side as the events print it (`reflux_show_side`).
pub(crate) fn side(s: Side) -> u32 {
    match s {
        Side::Host => 0,
        Side::Device => 1,
    }
}

/// A stage as the events print it (`reflux_show_stage`).
pub(crate) fn stage(s: Stage) -> u32 {
    match s {
        Stage::Crc32c => 0,
        Stage::Lz4 => 1,
        Stage::AesXts => 2,
    }
}

/// The phases of a migration (`reflux_show_phase`), in their order.
pub(crate) mod phase {
    pub(crate) const DRAIN: u32 = 1;
    pub(crate) const CHECKPOINT: u32 = 2;
    pub(crate) const REBUILD: u32 = 3;
    pub(crate) const HANDOVER: u32 = 4;
}
