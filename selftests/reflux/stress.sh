#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The mixed-path stress of reflux (selftests/reflux/stress_test.c): polled and
# interrupt-driven io_uring, psync and buffered I/O on overlapping blocks, every
# read checked against the blocks' acknowledged generations, migrations,
# unbind/bind and reload between phases with everything re-verified. First the
# module's lifetime with the disk open, and the fio reproductions.
# STRESS_SECONDS per phase (cxlstack.stress_seconds; the check run's default
# keeps the suite near 3 minutes), STRESS_FULL=1 for every pipeline and
# placement (make stress).
. /selftests/lib/cxlstack.sh
need_module reflux

# stress_run PARAMS [VAR=VALUE...]: stress_test with the driver loaded with
# PARAMS, its phases separated by a rebind and a reload.
stress_run() {
	cfg=$1; shift
	reload_reflux "$cfg" || return 1
	# A hang is a failure with a limit, not a VM that runs until its timeout.
	secs=${STRESS_SECONDS:-6}
	timeout $((secs * 2 * 8 + 240)) env STRESS_SECONDS=$secs STRESS_PHASES=2 \
		STRESS_REBIND="echo reflux.0 >/sys/bus/platform/drivers/reflux/unbind && echo reflux.0 >/sys/bus/platform/drivers/reflux/bind" \
		STRESS_RELOAD="rmmod reflux && modprobe reflux $cfg" "$@" /selftests/reflux/stress_test
}

n=5
command -v fio >/dev/null && n=$((n + 4))
if [ "${STRESS_FULL:-0}" = 1 ]; then n=$((n + 24)); else n=$((n + 4)); fi
ktap_plan $n
unbind="echo reflux.0 >/sys/bus/platform/drivers/reflux/unbind"
bind="echo reflux.0 >/sys/bus/platform/drivers/reflux/bind"
reload_reflux "pipeline=0"
tap "rmmod reflux with /dev/reflux0 open is refused" \
	sh -c 'exec 3</dev/reflux0; ! rmmod reflux 2>/dev/null'
tap "the disk still reads after the refusal" \
	dd if=/dev/reflux0 of=/dev/null bs=4k count=1 iflag=direct
tap "rmmod reflux with its debugfs file open is refused" \
	sh -c 'exec 3</sys/kernel/debug/reflux0/stats; ! rmmod reflux 2>/dev/null'
tap "unbind with the disk open, close after, bind again" \
	sh -c "exec 3</dev/reflux0; $unbind; exec 3<&-; $bind"
tap "the disk reads after the rebind" sh -c 'sleep 1; dd if=/dev/reflux0 of=/dev/null bs=4k count=1 iflag=direct'
if command -v fio >/dev/null; then
	for cfg in "pipeline=0" "pipeline=2 checksum=1"; do
		reload_reflux "$cfg"
		tap "$cfg: polled and interrupt-driven io_uring writers at once, fio verify" \
			timeout 300 fio --thread --filename=/dev/reflux0 --ioengine=io_uring --direct=1 \
			--rw=randwrite --bs=4k --iodepth=32 --size=8M --verify=crc32c --do_verify=1 \
			--name=p --offset=64M --hipri=1 --name=i --offset=96M --hipri=0
		tap "$cfg: one polled writer of 4k-132k (split at the chunk), fio verify" \
			timeout 300 fio --thread --filename=/dev/reflux0 --ioengine=io_uring --direct=1 \
			--rw=randwrite --bsrange=4k-132k --iodepth=32 --size=8M --verify=crc32c \
			--do_verify=1 --name=s --offset=128M --hipri=1
	done
fi
if [ "${STRESS_FULL:-0}" = 1 ]; then
	for cfg in "pipeline=0" "pipeline=1" "pipeline=1 placement=0" "pipeline=2" \
		"pipeline=2 checksum=1" "pipeline=2 checksum=1 placement=0" \
		"pipeline=2 checksum=1 placement=1" "pipeline=3" "pipeline=3 checksum=1" \
		"pipeline=3 checksum=1 placement=0" "pipeline=3 checksum=1 placement=2"; do
		tap_show "stress: $cfg" stress_run "$cfg"
		tap_show "stress: $cfg, migrating every few ms" stress_run "$cfg" STRESS_MIGRATE=1
	done
	for cfg in "pipeline=0" "pipeline=1"; do
		tap_show "stress: $cfg, three O_DIRECT writers and three readers on 4 MiB" \
			stress_run "$cfg" STRESS_WORKERS=psync STRESS_DIO_MB=4
	done
else
	tap_show "stress: pipeline=0" stress_run "pipeline=0"
	# A read racing a write of the same block, on the default queue only.
	tap_show "stress: pipeline=1, three O_DIRECT writers and three readers on 4 MiB" \
		stress_run "pipeline=1" STRESS_WORKERS=psync STRESS_DIO_MB=4
	tap_show "stress: pipeline=2 checksum=1, migrating every few ms" \
		stress_run "pipeline=2 checksum=1" STRESS_MIGRATE=1
	tap_show "stress: pipeline=3 checksum=1 placement=1, migrating every few ms" \
		stress_run "pipeline=3 checksum=1 placement=1" STRESS_MIGRATE=1
fi
reload_reflux ""
ktap_finish
