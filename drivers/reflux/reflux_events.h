/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reflux tracepoints: a request's way through its pipeline, where each stage runs, migrations
 * and the scheduler's throttle. The Rust side declares the same events with declare_trace!
 * (trace.rs); reflux_events.c defines them. Every event names the device (N of /dev/refluxN).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM reflux

#if !defined(_REFLUX_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _REFLUX_EVENTS_H

#include <linux/tracepoint.h>

#define reflux_show_side(s)	__print_symbolic(s, { 0, "host" }, { 1, "device" })
#define reflux_show_dir(d)	__print_symbolic(d, { 0, "read" }, { 1, "write" }, { 2, "flush" })
#define reflux_show_stage(s)	__print_symbolic(s, { 0, "crc32c" }, { 1, "lz4" }, { 2, "aes_xts" })
#define reflux_show_phase(p)						\
	__print_symbolic(p, { 1, "drain" }, { 2, "checkpoint" }, { 3, "rebuild" }, { 4, "handover" })

/* A request entered the driver: its blk-mq tag, pipeline, direction and blocks. */
TRACE_EVENT(reflux_rq_issue,
	TP_PROTO(u32 dev, u32 tag, u32 pipeline, u32 dir, u64 lba, u32 blocks),
	TP_ARGS(dev, tag, pipeline, dir, lba, blocks),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tag)
		__field(u32, pipeline)
		__field(u32, dir)
		__field(u64, lba)
		__field(u32, blocks)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tag = tag;
		__entry->pipeline = pipeline;
		__entry->dir = dir;
		__entry->lba = lba;
		__entry->blocks = blocks;
	),
	TP_printk("reflux%u tag=%u pipeline=%u dir=%s lba=%llu blocks=%u",
		  __entry->dev, __entry->tag, __entry->pipeline, reflux_show_dir(__entry->dir),
		  __entry->lba, __entry->blocks)
);

/*
 * A request went to the device to run its steps from stage_start on; placement has bit i set
 * for each step i (pipeline order) the device runs.
 */
TRACE_EVENT(reflux_rq_submit,
	TP_PROTO(u32 dev, u32 tag, u32 stage_start, u32 placement),
	TP_ARGS(dev, tag, stage_start, placement),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tag)
		__field(u32, stage_start)
		__field(u32, placement)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tag = tag;
		__entry->stage_start = stage_start;
		__entry->placement = placement;
	),
	TP_printk("reflux%u tag=%u stage_start=%u placement=%#x",
		  __entry->dev, __entry->tag, __entry->stage_start, __entry->placement)
);

/* A request ended with ret (0 or -errno), ns after it entered the driver. */
TRACE_EVENT(reflux_rq_complete,
	TP_PROTO(u32 dev, u32 tag, int ret, u64 ns),
	TP_ARGS(dev, tag, ret, ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tag)
		__field(int, ret)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tag = tag;
		__entry->ret = ret;
		__entry->ns = ns;
	),
	TP_printk("reflux%u tag=%u ret=%d ns=%llu",
		  __entry->dev, __entry->tag, __entry->ret, __entry->ns)
);

/* A stage of a request ran on the host over bytes, in ns. */
TRACE_EVENT(reflux_stage_run,
	TP_PROTO(u32 dev, u32 tag, u32 side, u32 stage, u32 bytes, u64 ns),
	TP_ARGS(dev, tag, side, stage, bytes, ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tag)
		__field(u32, side)
		__field(u32, stage)
		__field(u32, bytes)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tag = tag;
		__entry->side = side;
		__entry->stage = stage;
		__entry->bytes = bytes;
		__entry->ns = ns;
	),
	TP_printk("reflux%u tag=%u side=%s stage=%s bytes=%u ns=%llu",
		  __entry->dev, __entry->tag, reflux_show_side(__entry->side),
		  reflux_show_stage(__entry->stage), __entry->bytes, __entry->ns)
);

/* A phase of migrating actor from one side to the other ended after ns. */
TRACE_EVENT(reflux_migrate_phase,
	TP_PROTO(u32 dev, u32 actor, u32 from, u32 to, u32 phase, u64 ns),
	TP_ARGS(dev, actor, from, to, phase, ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, actor)
		__field(u32, from)
		__field(u32, to)
		__field(u32, phase)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->actor = actor;
		__entry->from = from;
		__entry->to = to;
		__entry->phase = phase;
		__entry->ns = ns;
	),
	TP_printk("reflux%u actor=%u %s->%s phase=%s ns=%llu",
		  __entry->dev, __entry->actor, reflux_show_side(__entry->from),
		  reflux_show_side(__entry->to), reflux_show_phase(__entry->phase), __entry->ns)
);

/*
 * The scheduler changed the admission throttle (permille of the queue depth in flight), at
 * the controller temperature it read (milli-degrees C).
 */
TRACE_EVENT(reflux_throttle,
	TP_PROTO(u32 dev, u32 old_permille, u32 new_permille, u32 temp_milli_c),
	TP_ARGS(dev, old_permille, new_permille, temp_milli_c),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, old_permille)
		__field(u32, new_permille)
		__field(u32, temp_milli_c)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->old_permille = old_permille;
		__entry->new_permille = new_permille;
		__entry->temp_milli_c = temp_milli_c;
	),
	TP_printk("reflux%u permille=%u->%u temp_milli_c=%u",
		  __entry->dev, __entry->old_permille, __entry->new_permille,
		  __entry->temp_milli_c)
);

/*
 * The page cache found a stale page of the disk (pages index .. index + nr - 1): a page
 * whose blocks a device-side stage rewrote since it was read, dropped and read again.
 */
TRACE_EVENT(reflux_pagecache_stale,
	TP_PROTO(u32 dev, u64 index, u64 nr),
	TP_ARGS(dev, index, nr),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u64, index)
		__field(u64, nr)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->index = index;
		__entry->nr = nr;
	),
	TP_printk("reflux%u index=%llu nr=%llu", __entry->dev, __entry->index, __entry->nr)
);

#endif /* _REFLUX_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE reflux_events
#include <trace/define_trace.h>
