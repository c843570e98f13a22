/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cxl_ccm tracepoints: what the host driver does for a tenant. The Rust side declares the
 * same events with declare_trace! (trace.rs); cxl_ccm_events.c defines them.
 *
 * Every event names the device (N of /dev/cxl_ccmN) and the tenant (its number on the device).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cxl_ccm

#if !defined(_CXL_CCM_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CXL_CCM_EVENTS_H

#include <linux/tracepoint.h>

#define cxl_ccm_show_mode(m)						\
	__print_symbolic(m, { 0, "axle" }, { 1, "rp" }, { 2, "bs" }, { 3, "axle_irq" })

/* A launch was accepted: its tag, kernel, input size, and how long the ioctl took (ns). */
TRACE_EVENT(cxl_ccm_launch,
	TP_PROTO(u32 dev, u32 tenant, u32 mode, u32 tag, u32 kernel, u32 bytes, u64 ns),
	TP_ARGS(dev, tenant, mode, tag, kernel, bytes, ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, mode)
		__field(u32, tag)
		__field(u32, kernel)
		__field(u32, bytes)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->mode = mode;
		__entry->tag = tag;
		__entry->kernel = kernel;
		__entry->bytes = bytes;
		__entry->ns = ns;
	),
	TP_printk("cxl_ccm%u tenant=%u mode=%s tag=%u kernel=%u bytes=%u ns=%llu",
		  __entry->dev, __entry->tenant, cxl_ccm_show_mode(__entry->mode),
		  __entry->tag, __entry->kernel, __entry->bytes, __entry->ns)
);

/*
 * A RELEASE: entries released, and the heads the device now holds as credit (after any
 * publish this release made).
 */
TRACE_EVENT(cxl_ccm_release,
	TP_PROTO(u32 dev, u32 tenant, u32 entries, u32 md_head, u32 pl_head, int ret),
	TP_ARGS(dev, tenant, entries, md_head, pl_head, ret),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, entries)
		__field(u32, md_head)
		__field(u32, pl_head)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->entries = entries;
		__entry->md_head = md_head;
		__entry->pl_head = pl_head;
		__entry->ret = ret;
	),
	TP_printk("cxl_ccm%u tenant=%u entries=%u md_head=%u pl_head=%u ret=%d",
		  __entry->dev, __entry->tenant, __entry->entries, __entry->md_head,
		  __entry->pl_head, __entry->ret)
);

/*
 * A WAIT returned: records ready past the caller's head, how long it slept or polled (ns),
 * and its result (0, or -ETIMEDOUT, -EINTR, -EDEADLK, ...).
 */
TRACE_EVENT(cxl_ccm_wait,
	TP_PROTO(u32 dev, u32 tenant, u32 min, u32 ready, u64 ns, int ret),
	TP_ARGS(dev, tenant, min, ready, ns, ret),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, min)
		__field(u32, ready)
		__field(u64, ns)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->min = min;
		__entry->ready = ready;
		__entry->ns = ns;
		__entry->ret = ret;
	),
	TP_printk("cxl_ccm%u tenant=%u min=%u ready=%u ns=%llu ret=%d",
		  __entry->dev, __entry->tenant, __entry->min, __entry->ready, __entry->ns,
		  __entry->ret)
);

/*
 * The deadlock check of WAIT found the tenant stuck: fewer than min records ready and the
 * device blocked on the credit the host has published.
 */
TRACE_EVENT(cxl_ccm_deadlock,
	TP_PROTO(u32 dev, u32 tenant, u32 min, u32 ready),
	TP_ARGS(dev, tenant, min, ready),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, min)
		__field(u32, ready)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->min = min;
		__entry->ready = ready;
	),
	TP_printk("cxl_ccm%u tenant=%u min=%u ready=%u",
		  __entry->dev, __entry->tenant, __entry->min, __entry->ready)
);

/*
 * New records seen by the driver (a scan of the metadata ring by WAIT, poll(), RELEASE or
 * the poller; in RP and BS, records the driver copied into the rings): how many, and their
 * payload bytes. In AXLE a consumer that polls the rings itself bypasses the driver; the
 * device's own dma_batch event (cxl_ccm_dev) sees every batch.
 */
TRACE_EVENT(cxl_ccm_records,
	TP_PROTO(u32 dev, u32 tenant, u32 records, u64 bytes),
	TP_ARGS(dev, tenant, records, bytes),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, records)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->records = records;
		__entry->bytes = bytes;
	),
	TP_printk("cxl_ccm%u tenant=%u records=%u bytes=%llu",
		  __entry->dev, __entry->tenant, __entry->records, __entry->bytes)
);

#endif /* _CXL_CCM_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cxl_ccm_events
#include <trace/define_trace.h>
