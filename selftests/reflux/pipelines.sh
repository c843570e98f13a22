#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Every pipeline, with its stages on the device, on the host and split: data
# round-trips bit-exact; data written with one placement reads back with
# another (the same actor code on both sides, the same stored bytes); a
# corrupted block reads as EIO; encryption stores no plaintext; compression
# stores less; a hung device fails requests instead of hanging; bad
# parameters are refused.
. /selftests/lib/cxlstack.sh
need_module reflux

# stored_bytes PARAMS: with PARAMS, 4 MiB of repeated text through the page
# cache; prints written and stored bytes (from the driver's statistics).
stored_bytes() {
	reload_reflux "$1" || return 1
	w0=$(stat_reflux written_bytes); s0=$(stat_reflux stored_bytes)
	yes "ReFlux stores repeated text in fewer bytes" | head -c $((4 << 20)) |
		dd of=/dev/reflux0 bs=1M seek=32 conv=fsync 2>/dev/null || return 1
	w=$(( $(stat_reflux written_bytes) - w0 )); s=$(( $(stat_reflux stored_bytes) - s0 ))
	echo "$1: wrote $w bytes, the device stored $s"
	[ $w -ge $((4 << 20)) ] || return 1
	case "$1" in
	*pipeline=2*) [ $((s * 4)) -lt $w ] ;;
	*) [ $s = $w ] ;;
	esac
}

rt=/selftests/reflux/roundtrip_test
it=/selftests/reflux/integrity_test

# roundtrips CONFIG...: each configuration's round trip, in a slice of its
# own (slices 0-2 hold the tests below).
roundtrips() {
	slice=2
	for cfg in "$@"; do
		slice=$((slice + 1))
		tap "round trip with $cfg" with_reflux "$cfg" env REFLUX_SLICE=$slice/16 \
			$rt -t direct_random -t buffered_random -t overlap_last_wins
	done
}

# integrity EXPECT TEST WHAT CONFIG...: integrity_test's TEST under each
# configuration, expecting EXPECT.
integrity() {
	expect=$1 test=$2 what=$3
	shift 3
	for cfg in "$@"; do
		tap "$cfg: $what" with_reflux "$cfg" env REFLUX_EXPECT=$expect $it -t $test
	done
}

# probe_stalled: a controller that does not come up (reflux_dev's stall_enable):
# the probe times out, fails without a disk and withdraws its enable, so that
# the device does not come up later, once the stall ends, with no driver.
probe_stalled() {
	sp=/sys/module/reflux_dev/parameters/stall_enable
	rmmod reflux 2>/dev/null
	e0=$(dmesg | grep -c 'reflux.0: enabled$')
	t0=$(dmesg | grep -c 'the device did not become ready')
	echo 1 >$sp
	modprobe reflux || { echo 0 >$sp; return 1; }
	# The probe waits 2 s for the device (hw::wait_status).
	i=0
	while [ "$(dmesg | grep -c 'the device did not become ready')" = "$t0" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo 0 >$sp
	sleep 0.5
	e1=$(dmesg | grep -c 'reflux.0: enabled$')
	t1=$(dmesg | grep -c 'the device did not become ready')
	echo "probe timeouts logged: $((t1 - t0)); disk: $([ -b /dev/reflux0 ] && echo present || echo absent);" \
		"enables the device logged once the stall ended: $((e1 - e0))"
	[ $((t1 - t0)) = 1 ] && [ ! -b /dev/reflux0 ] && [ "$e1" = "$e0" ]
}

refusals=9
ktap_plan $((9 + 6 + 4 + 1 + 2 + 3 + 4 + 2 + refusals + 1))
roundtrips "pipeline=1" "pipeline=2" "pipeline=2 checksum=1" "pipeline=3" \
	"pipeline=3 checksum=1" "pipeline=1 placement=0" "pipeline=2 checksum=1 placement=0" \
	"pipeline=2 checksum=1 placement=1" "pipeline=3 checksum=1 placement=2"
for p in 1 2 3; do
	tap "pipeline $p: written on the device, read on the host" cross_placement $p 3 0
	tap "pipeline $p: written on the host, read on the device" cross_placement $p 0 3
done
integrity eio corrupted_media "a flipped PMR byte reads as EIO" "pipeline=1" \
	"pipeline=1 placement=0" "pipeline=2 checksum=1" "pipeline=3 checksum=1 placement=1"
integrity flipped corrupted_media "the same flip reads back as is (the control)" "pipeline=0"
integrity ciphertext no_plaintext_stored "no plaintext in the stored block" "pipeline=3" \
	"pipeline=3 placement=0"
tap_show "passthrough stores what it is given" stored_bytes "pipeline=0"
tap_show "compression stores repeated text in under a quarter of its size" \
	stored_bytes "pipeline=2 checksum=1"
tap_show "compression on the host stores as little" stored_bytes "pipeline=2 placement=0"

# A hung device: requests time out, the driver declares the device dead
# and fails them (and every later one) with EIO instead of waiting forever.
reload_reflux "pipeline=0" && echo 1000 >/sys/block/reflux0/queue/io_timeout
echo 1 >/sys/module/reflux_dev/parameters/hang
tap "a write to a hung device fails with EIO" \
	sh -c '[ -b /dev/reflux0 ] && ! timeout 60 dd if=/dev/zero of=/dev/reflux0 bs=4k count=1 seek=77 oflag=direct 2>/dev/null'
tap "the driver said the device stopped answering" \
	sh -c "dmesg | grep -q 'reflux.0: the device stopped answering'"
tap "a dead device fails the next request at once" \
	sh -c '[ -b /dev/reflux0 ] && ! timeout 5 dd if=/dev/reflux0 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null'
echo 0 >/sys/module/reflux_dev/parameters/hang
tap "rebound to the device once it answers again" with_reflux "pipeline=0" \
	sh -c 'dd if=/dev/urandom of=/tmp/blk bs=4k count=1 2>/dev/null &&
		dd if=/tmp/blk of=/dev/reflux0 bs=4k seek=77 oflag=direct 2>/dev/null &&
		dd if=/dev/reflux0 of=/tmp/blk2 bs=4k skip=77 count=1 iflag=direct 2>/dev/null &&
		cmp /tmp/blk /tmp/blk2'
tap_show "a device that does not come up: the probe fails, no disk, the enable withdrawn" \
	probe_stalled
tap "a later probe binds the device" reload_reflux "pipeline=0"
rmmod reflux
tap "reflux refuses pipeline=4" sh -c '! modprobe reflux pipeline=4'
tap "reflux refuses placement=512" sh -c '! modprobe reflux placement=512'
tap "reflux refuses dispatch with the scheduler" sh -c '! modprobe reflux dispatch=1 sched=1'
tap "reflux refuses queue-aware dispatch with the scheduler" sh -c '! modprobe reflux dispatch=2 sched=1'
tap "reflux refuses dispatch=3" sh -c '! modprobe reflux dispatch=3'
tap "reflux refuses sched_alpha=600 (the weights sum to 1000)" sh -c '! modprobe reflux sched_alpha=600'
tap "reflux refuses sched_theta_low=700 (above sched_theta)" sh -c '! modprobe reflux sched_theta_low=700'
tap "reflux refuses sched_headroom_temp=0" sh -c '! modprobe reflux sched_headroom_temp=0'
tap "reflux refuses queue_depth=0" sh -c '! modprobe reflux queue_depth=0'
tap "reflux is back with its defaults" reload_reflux ""
ktap_finish
