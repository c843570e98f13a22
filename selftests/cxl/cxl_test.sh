#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# cxl_test: the kernel's mock CXL topology, which our devices hang from.
. /selftests/lib/cxlstack.sh
ktap_plan $(($(echo $CXL_MODULES | wc -w) + 1))
for m in $CXL_MODULES; do
	tap "modprobe $m" modprobe "$m"
done
# The mock topology appears asynchronously: give it a few seconds.
i=0
while [ $i -lt 30 ] && ! ls /sys/bus/cxl/devices/ 2>/dev/null | grep -q '^mem'; do
	sleep 1; i=$((i + 1))
done
tap "cxl_test mock memdevs present ($(ls /sys/bus/cxl/devices/ 2>/dev/null | grep -c '^mem') found)" \
	sh -c 'ls /sys/bus/cxl/devices/ | grep -q "^mem"'
ktap_finish
