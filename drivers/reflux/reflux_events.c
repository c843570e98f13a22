// SPDX-License-Identifier: GPL-2.0
/*
 * Defines the reflux tracepoints, and the function through which the Rust code fires each
 * (declare_trace! in trace.rs): the only C in the driver.
 */
#define CREATE_TRACE_POINTS
#include "reflux_events.h"

#include "rust_do_trace.h"

RUST_DO_TRACE(reflux_rq_issue,
	      TP_PROTO(u32 dev, u32 tag, u32 pipeline, u32 dir, u64 lba, u32 blocks),
	      TP_ARGS(dev, tag, pipeline, dir, lba, blocks))
RUST_DO_TRACE(reflux_rq_submit,
	      TP_PROTO(u32 dev, u32 tag, u32 stage_start, u32 placement),
	      TP_ARGS(dev, tag, stage_start, placement))
RUST_DO_TRACE(reflux_rq_complete,
	      TP_PROTO(u32 dev, u32 tag, int ret, u64 ns),
	      TP_ARGS(dev, tag, ret, ns))
RUST_DO_TRACE(reflux_stage_run,
	      TP_PROTO(u32 dev, u32 tag, u32 side, u32 stage, u32 bytes, u64 ns),
	      TP_ARGS(dev, tag, side, stage, bytes, ns))
RUST_DO_TRACE(reflux_migrate_phase,
	      TP_PROTO(u32 dev, u32 actor, u32 from, u32 to, u32 phase, u64 ns),
	      TP_ARGS(dev, actor, from, to, phase, ns))
RUST_DO_TRACE(reflux_throttle,
	      TP_PROTO(u32 dev, u32 old_permille, u32 new_permille, u32 temp_milli_c),
	      TP_ARGS(dev, old_permille, new_permille, temp_milli_c))
RUST_DO_TRACE(reflux_pagecache_stale,
	      TP_PROTO(u32 dev, u64 index, u64 nr),
	      TP_ARGS(dev, index, nr))
