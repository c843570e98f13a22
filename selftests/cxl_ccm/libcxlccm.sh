#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libcxlccm's examples, C (tools/lib/cxlccm/examples/xform.c) and Rust
# (tools/cxlccm/examples/xform.rs), in every mode: 8 launches in flight,
# results consumed out of order and checked byte by byte.
. /selftests/lib/cxlstack.sh
modes="AXLE RP BS AXLE_IRQ"
ktap_plan $(($(echo $modes | wc -w) * 2))
for m in $modes; do
	tap "libcxlccm C example: STREAM_XFORM in $m, every chunk exactly once" \
		/bench/cxlccm_xform /dev/cxl_ccm4 "$m"
	tap "cxlccm Rust example: STREAM_XFORM in $m, every chunk exactly once" \
		/bench/cxlccm_xform_rs /dev/cxl_ccm4 "$m"
done
ktap_finish
