#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A bound device's policy in configfs (/sys/kernel/config/reflux/reflux0/):
# the directory comes and goes with the binding; the placement moves stages
# of the running device under I/O, the scheduler starts and stops, its
# parameters and the sleep/poll thresholds change live; every refusal has
# its errno and changes nothing; a file held open across an unbind reaches
# nothing of the device.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/reflux/reflux0
d=/sys/kernel/debug/reflux0

# put FILE VALUE: writes VALUE into the policy file FILE; prints the shell's
# error, if any.
put() { sh -c "echo '$2' >$C/$1" 2>&1; }
# ok FILE VALUE [READ-BACK]: the write succeeds and FILE reads READ-BACK
# (VALUE if not given).
ok() { out=$(put "$1" "$2"); [ -z "$out" ] && [ "$(cat $C/$1)" = "${3:-$2}" ] || { echo "$1 <- '$2': $out, reads $(cat $C/$1)"; return 1; }; }
# refused ERRNO-TEXT FILE VALUE: the write fails with that error and FILE
# reads as before.
refused() {
	before=$(cat $C/$2)
	out=$(put "$2" "$3")
	echo "$2 <- '$3': ${out:-accepted}; reads $(cat $C/$2)"
	echo "$out" | grep -q "$1" && [ "$(cat $C/$2)" = "$before" ]
}
# sched_thread: whether the device's scheduler thread exists.
sched_thread() { cat /proc/[0-9]*/comm 2>/dev/null | grep -qx 'reflux0-sched'; }

bound_dir() {
	ls $C | tr '\n' ' '; echo
	[ "$(cat $C/pipeline $C/checksum $C/dispatch | tr '\n' ' ')" = '2 1 0 ' ] &&
		[ "$(cat $C/placement)" = 0x3 ] && ! echo 3 2>/dev/null >$C/pipeline
}
placement_one() {
	ok placement 0x1 && echo "crc32c: $(actor_field 1 owner), lz4: $(actor_field 2 owner)" &&
		[ "$(actor_field 1 owner)" = host ] && [ "$(actor_field 2 owner)" = device ]
}
sched_on() { ok sched 1 && sched_thread && refused 'esource busy' placement 0x1; }
sched_off() { ok sched 0 && ! sched_thread; }
sched_params_live() {
	ok sched_theta 700 && ok sched_weights '400 400 200' && ok sched_lookahead 1 &&
		head -1 $d/sched && head -1 $d/sched | grep -q ' alpha 400 beta 400 gamma 200 theta 700 .* lookahead 1 '
}
sched_params_refused() {
	refused 'Invalid argument' sched_theta 300 && refused 'Invalid argument' sched_weights '500 500 500' &&
		refused 'Invalid argument' sched_weights '400 600' && refused 'Invalid argument' sched_epoch_ms 0 &&
		refused 'Invalid argument' sched_lookahead 2 && refused 'Invalid argument' sched_theta x
}
thresholds_live() {
	ok irq_poll_below_us 10 && refused 'Invalid argument' irq_poll_below_us 60 && ok irq_sleep_above_us 80
}
open_across_unbind() {
	[ ! -e $C ] && ! cat <&4 2>/dev/null | grep -q . && ! echo 650 2>/dev/null >&4
}
bound_again() {
	i=0
	while [ ! -e $C/sched_theta ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(cat $C/sched_theta)" = 650 ] && [ "$(cat $C/placement)" = 0x3 ]
}

ktap_plan 15
reload_reflux "pipeline=2 checksum=1"
tap_show "bind makes the device's directory, the default pipeline read-only in it" bound_dir
# Stages move under fio writes with verify.
fio --thread --name=p --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
	--bs=128k --iodepth=8 --size=16M --time_based --runtime=4 \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
	>/tmp/policy.fio 2>&1 &
fio_pid=$!
sleep 0.5
tap_show "placement 0x1: crc32c moves to the host, lz4 stays on the device" placement_one
tap "placement 0x2: each stage moves the other way" ok placement 0x2
tap_show "a placement naming a third stage is refused (EINVAL)" refused "Invalid argument" placement 0x4
tap "placement back to every stage on the device" ok placement 3 0x3
wait $fio_pid
fio_rc=$?
tap_show "fio verified every block while the stages moved" sh -c "tail -3 /tmp/policy.fio; [ $fio_rc = 0 ]"
tap_show "sched 1 starts the scheduler thread, which then owns the placement (EBUSY)" sched_on
tap "sched 0 stops it" sched_off
tap_show "scheduler parameters change live (the sched file shows them)" sched_params_live
tap_show "out-of-range parameters are refused (EINVAL), the old values stay" sched_params_refused
tap_show "the sleep/poll thresholds change live; a poll threshold above the sleep one is refused" thresholds_live
# A file held open across an unbind: the directory goes, the file reaches nothing.
exec 4<>$C/sched_theta
echo reflux.0 >/sys/bus/platform/drivers/reflux/unbind
tap "unbind removes the directory, and a file held open no longer reads or writes" open_across_unbind
exec 4<&-
echo reflux.0 >/sys/bus/platform/drivers/reflux/bind
tap "bind again: the directory is back, with the load-time values" bound_again
reload_reflux "pipeline=2 checksum=1 dispatch=1"
tap_show "with request-level dispatch the scheduler is refused (EBUSY)" refused "esource busy" sched 1
reload_reflux "pipeline=2 checksum=1 irq_poll=0"
tap_show "without the sleep/poll switch its thresholds are refused (EOPNOTSUPP)" \
	refused 'ot supported' irq_poll_below_us 10
reload_reflux ""
ktap_finish
