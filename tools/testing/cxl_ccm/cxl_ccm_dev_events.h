/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the software CCM device: what the device does for a tenant, which the host
 * driver cannot see (in AXLE the consumer reads the rings without it). Fired from trace.rs.
 * Every event names the device (N of cxl_ccm.N) and the tenant.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cxl_ccm_dev

#if !defined(_CXL_CCM_DEV_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CXL_CCM_DEV_EVENTS_H

#include <linux/tracepoint.h>

/*
 * A batch was back-streamed: records from metadata index seq on, their payload bytes, and the
 * modelled DMA latency until it lands (ns); its ring tails are stored when it lands.
 */
TRACE_EVENT(cxl_ccm_dev_dma_batch,
	TP_PROTO(u32 dev, u32 tenant, u32 seq, u32 records, u32 bytes, u64 land_ns),
	TP_ARGS(dev, tenant, seq, records, bytes, land_ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, seq)
		__field(u32, records)
		__field(u32, bytes)
		__field(u64, land_ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->seq = seq;
		__entry->records = records;
		__entry->bytes = bytes;
		__entry->land_ns = land_ns;
	),
	TP_printk("cxl_ccm.%u tenant=%u seq=%u records=%u bytes=%u land_ns=%llu",
		  __entry->dev, __entry->tenant, __entry->seq, __entry->records,
		  __entry->bytes, __entry->land_ns)
);

/*
 * The device stopped streaming for lack of credit (stalled=1, under the heads the host
 * published: md_head, pl_head; again if new heads still give too little), or streams again
 * (stalled=0, ns after the stall began).
 */
TRACE_EVENT(cxl_ccm_dev_credit_stall,
	TP_PROTO(u32 dev, u32 tenant, u32 stalled, u32 md_head, u32 pl_head, u64 ns),
	TP_ARGS(dev, tenant, stalled, md_head, pl_head, ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, tenant)
		__field(u32, stalled)
		__field(u32, md_head)
		__field(u32, pl_head)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->tenant = tenant;
		__entry->stalled = stalled;
		__entry->md_head = md_head;
		__entry->pl_head = pl_head;
		__entry->ns = ns;
	),
	TP_printk("cxl_ccm.%u tenant=%u stalled=%u md_head=%u pl_head=%u ns=%llu",
		  __entry->dev, __entry->tenant, __entry->stalled, __entry->md_head,
		  __entry->pl_head, __entry->ns)
);

#endif /* _CXL_CCM_DEV_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cxl_ccm_dev_events
#include <trace/define_trace.h>
