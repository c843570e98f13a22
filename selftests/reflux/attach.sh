#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Pipelines attached to byte ranges in configfs: each range its pipeline,
# refused values; a device that goes away takes its attachments with it; the
# module stays loaded while an attachment directory exists.
. /selftests/lib/cxlstack.sh
need_module reflux

ktap_plan 10
cfs=/sys/kernel/config/reflux
reload_reflux "pipeline=0"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
tap "configfs has $cfs" [ -d $cfs ]
tap "attach_test: per-range pipelines, refused values, detaching" \
	env REFLUX_ATTACH=1 /selftests/reflux/attach_test
mkdir $cfs/keep && echo reflux0 >$cfs/keep/device && echo 8M >$cfs/keep/start &&
	echo 1M >$cfs/keep/length && echo compress >$cfs/keep/pipeline &&
	echo 1 >$cfs/keep/enable
tap "an attachment is enabled" [ "$(cat $cfs/keep/enable)" = 1 ]
tap "rmmod reflux is refused while an attachment exists" sh -c '! rmmod reflux'
echo reflux.0 >/sys/bus/platform/drivers/reflux/unbind
tap "unbinding the device drops its attachment" [ "$(cat $cfs/keep/enable)" = 0 ]
tap "... and logs it" sh -c "dmesg | grep -q 'reflux0: 1 attachments dropped with the device'"
tap "enabling it with no device bound is refused" sh -c "! echo 1 > $cfs/keep/enable"
echo reflux.0 >/sys/bus/platform/drivers/reflux/bind
i=0
while [ ! -b /dev/reflux0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tap "the attachment is enabled again once the device is back" sh -c "echo 1 > $cfs/keep/enable"
yes "ReFlux stores repeated text in fewer bytes" | head -c $((1 << 20)) |
	dd of=/dev/reflux0 bs=128k seek=64 oflag=direct 2>/dev/null
echo 2100 >/sys/kernel/debug/reflux0/peek_lba
tap "... and its range is stored compressed" \
	sh -c "head -n1 /sys/kernel/debug/reflux0/peek | awk '{ exit !(\$4 < 4096) }'"
rmdir $cfs/keep
tap "rmmod reflux succeeds once no attachment exists" rmmod reflux
reload_reflux ""
ktap_finish
