// SPDX-License-Identifier: GPL-2.0
/*
 * Defines the cxl_ccm tracepoints, and the function through which the Rust code fires each
 * (declare_trace! in trace.rs): the only C in the driver.
 */
#define CREATE_TRACE_POINTS
#include "cxl_ccm_events.h"

#include "rust_do_trace.h"

RUST_DO_TRACE(cxl_ccm_launch,
	      TP_PROTO(u32 dev, u32 tenant, u32 mode, u32 tag, u32 kernel, u32 bytes, u64 ns),
	      TP_ARGS(dev, tenant, mode, tag, kernel, bytes, ns))
RUST_DO_TRACE(cxl_ccm_release,
	      TP_PROTO(u32 dev, u32 tenant, u32 entries, u32 md_head, u32 pl_head, int ret),
	      TP_ARGS(dev, tenant, entries, md_head, pl_head, ret))
RUST_DO_TRACE(cxl_ccm_wait,
	      TP_PROTO(u32 dev, u32 tenant, u32 min, u32 ready, u64 ns, int ret),
	      TP_ARGS(dev, tenant, min, ready, ns, ret))
RUST_DO_TRACE(cxl_ccm_deadlock,
	      TP_PROTO(u32 dev, u32 tenant, u32 min, u32 ready),
	      TP_ARGS(dev, tenant, min, ready))
RUST_DO_TRACE(cxl_ccm_records,
	      TP_PROTO(u32 dev, u32 tenant, u32 records, u64 bytes),
	      TP_ARGS(dev, tenant, records, bytes))
