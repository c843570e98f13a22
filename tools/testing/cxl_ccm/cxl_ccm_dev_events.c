// SPDX-License-Identifier: GPL-2.0
/*
 * Defines the software CCM device's tracepoints, and the function through which the Rust
 * code fires each (declare_trace! in trace.rs).
 */
#define CREATE_TRACE_POINTS
#include "cxl_ccm_dev_events.h"

#include "rust_do_trace.h"

RUST_DO_TRACE(cxl_ccm_dev_dma_batch,
	      TP_PROTO(u32 dev, u32 tenant, u32 seq, u32 records, u32 bytes, u64 land_ns),
	      TP_ARGS(dev, tenant, seq, records, bytes, land_ns))
RUST_DO_TRACE(cxl_ccm_dev_credit_stall,
	      TP_PROTO(u32 dev, u32 tenant, u32 stalled, u32 md_head, u32 pl_head, u64 ns),
	      TP_ARGS(dev, tenant, stalled, md_head, pl_head, ns))
