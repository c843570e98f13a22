#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Our modules load, in the image's order; bad parameters fail a load cleanly
# first (kmemleak and the kernel-log checks see what a failed init left).
. /selftests/lib/cxlstack.sh
n=$(echo $OUR_MODULES | wc -w)
has_module cxl_ccm_dev && n=$((n + 6))
has_module reflux_dev && n=$((n + 4))
ktap_plan $n
if has_module cxl_ccm_dev; then
	tap "cxl_ccm_dev refuses to load without a memory window" sh -c '! modprobe cxl_ccm_dev'
	tap "cxl_ccm_dev refuses an out-of-range latency" \
		sh -c "! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) cxl_mem_rtt_ns=1000000000000"
	tap "cxl_ccm_dev refuses a dilation below 1 or a dilated cost out of range" \
		sh -c "! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) dilation_milli=999 &&
			! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) dilation_milli=1000000 irq_ns=1000000"
	tap "cxl_ccm_dev refuses a modelled CCM out of range or too wide" \
		sh -c "! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) ccm_clock_mhz=0 &&
			! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) ccm_units=1024 ccm_uthreads_per_unit=8"
	tap "cxl_ccm_dev refuses max_tenants=0" \
		sh -c "! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) max_tenants=0"
	tap "cxl_ccm_dev refuses max_tenants=17" \
		sh -c "! modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) max_tenants=17"
fi
if has_module reflux_dev; then
	tap "reflux_dev refuses to load without a PMR window" sh -c '! modprobe reflux_dev'
	tap "reflux_dev refuses nr_cores=0" \
		sh -c "! modprobe reflux_dev $(modparams reflux_dev) nr_cores=0"
	tap "reflux_dev refuses nr_cores=9" \
		sh -c "! modprobe reflux_dev $(modparams reflux_dev) nr_cores=9"
fi
for m in $OUR_MODULES; do tap "modprobe $m" modprobe "$m" $(modparams "$m"); done
if has_module reflux_dev; then
	tap "reflux_dev registered reflux.0 under cxl_mem.0" \
		test -e /sys/bus/platform/devices/cxl_mem.0/reflux.0
fi
ktap_finish
