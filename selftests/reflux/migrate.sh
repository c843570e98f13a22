#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Drain-and-switch migration under I/O: every actor of the pipeline moves back
# and forth while threads write and verify, with and without the migration
# mailbox; drains that give up, signals and offloads past queued requests
# lose nothing; bad requests and parameters are refused.
. /selftests/lib/cxlstack.sh
need_module reflux

# fs_roundtrip PARAMS: an ext2 file system on /dev/reflux0 with PARAMS: files
# written, the disk unmounted and the driver reloaded, then read back, then
# read back again after moving every actor of the pipeline to the host.
fs_roundtrip() {
	m=/mnt/reflux
	reload_reflux "$1" || return 1
	mke2fs -q -b 4096 /dev/reflux0 || return 1
	mkdir -p $m && mount -t ext2 /dev/reflux0 $m || return 1
	yes "ext2 on a ReFlux pipeline" | head -c 3000000 >$m/text
	dd if=/dev/urandom of=$m/random bs=64k count=32 2>/dev/null
	mkdir $m/dir && cp $m/text $m/dir/copy
	(cd $m && md5sum text random dir/copy) >/tmp/fs.md5
	umount $m || return 1
	reload_reflux "$1" || return 1
	mount -t ext2 /dev/reflux0 $m || return 1
	(cd $m && md5sum -c /tmp/fs.md5) || { umount $m; return 1; }
	for a in $(awk '$1 == "actor" && $6 == "device" { print $2 }' /sys/kernel/debug/reflux0/actors); do
		echo "$a host" >/sys/kernel/debug/reflux0/migrate || { umount $m; return 1; }
	done
	echo 3 >/proc/sys/vm/drop_caches
	(cd $m && md5sum -c /tmp/fs.md5) || { umount $m; return 1; }
	echo "after the moves: $(awk '$1 == "actor" { printf "%s=%s ", $4, $6 }' /sys/kernel/debug/reflux0/actors)"
	umount $m
}

# drain_giveup: lz4 is moved back and forth under fio writes with verify while
# the driver gives a drain 1 ms: most moves give up with requests still in
# their host or device stages, which then meet the epoch the abort moved on
# and must be routed again, not failed. Passes when some moves gave up, some
# request was routed again, and fio saw no error.
drain_giveup() {
	d=/sys/kernel/debug/reflux0
	r0=$(awk '$1 == "reroutes" { print $2 }' $d/stats)
	g0=$(dmesg | grep -c 'requests did not drain')
	fio --thread --name=g --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
		--bs=128k --iodepth=16 --size=16M --time_based --runtime=6 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_backlog=16 \
		--verify_fatal=1 >/tmp/giveup.fio 2>&1 &
	fio_pid=$!
	# Until the writes flow (fio lays its buffers out first).
	s0=$(awk '$1 == "submitted" { print $2 }' $d/stats)
	i=0
	while [ "$(awk '$1 == "submitted" { print $2 }' $d/stats)" = "$s0" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	n=0 ok=0
	while kill -0 $fio_pid 2>/dev/null && [ $n -lt 1000 ]; do
		echo "2 device" >$d/migrate 2>/dev/null && ok=$((ok + 1))
		echo "2 host" >$d/migrate 2>/dev/null && ok=$((ok + 1))
		n=$((n + 1))
		sleep 0.02
	done
	tail -4 $d/migrations
	grep -E '^(reroutes|parked|migrations) ' $d/stats
	wait $fio_pid
	rc=$?
	r1=$(awk '$1 == "reroutes" { print $2 }' $d/stats)
	g1=$(dmesg | grep -c 'requests did not drain')
	echo "$n rounds, $ok moves; gave up: $((g1 - g0)) (kernel log, ratelimited); routed again: $((r1 - r0)); fio rc $rc"
	tail -3 /tmp/giveup.fio
	[ $rc = 0 ] && [ $((g1 - g0)) -gt 0 ] && [ $((r1 - r0)) -gt 0 ]
}

# uptime_cs: seconds since boot, in hundredths.
uptime_cs() { awk '{ split($1, a, "."); print a[1] * 100 + a[2] }' /proc/uptime; }

# migrate_interrupted: a move of lz4 asked for through the migrate file, stuck
# in its drain (the device hung with a write queued), gives up when the writer
# of the file gets a signal, long before the 5 s drain timeout; the device
# keeps the actor, and the queued write completes and reads back once the
# device answers again.
migrate_interrupted() {
	d=/sys/kernel/debug/reflux0
	[ "$(actor_field 2 owner)" = device ] || { echo "lz4 is not on the device"; return 1; }
	dd if=/dev/urandom of=/tmp/mi bs=128k count=4 2>/dev/null
	echo 1 >/sys/module/reflux_dev/parameters/hang
	dd if=/tmp/mi of=/dev/reflux0 bs=128k count=4 seek=100 oflag=direct 2>/dev/null &
	w=$!
	sleep 0.5
	t0=$(uptime_cs)
	timeout -s INT 1 sh -c "echo 2 host >$d/migrate"
	rc=$?
	t1=$(uptime_cs)
	echo 0 >/sys/module/reflux_dev/parameters/hang
	wait $w
	wrc=$?
	side=$(actor_field 2 owner)
	echo "migrate write: rc $rc after $((t1 - t0))0 ms; lz4 on the $side; queued write rc $wrc"
	dd if=/dev/reflux0 of=/tmp/mi2 bs=128k count=4 skip=100 iflag=direct 2>/dev/null &&
		cmp /tmp/mi /tmp/mi2 || return 1
	[ $rc != 0 ] && [ $((t1 - t0)) -lt 300 ] && [ "$side" = device ] && [ $wrc = 0 ] &&
		echo "2 host" >$d/migrate && [ "$(actor_field 2 owner)" = host ]
}

# offload_past_requests: lz4 runs on the host and crc32c on a device slowed to
# a thousandth of the host's speed, so that writes LZ4 has compressed wait
# seconds for their crc32c on the device. Moving lz4 to the device must not
# wait for them (they are past it), so it succeeds within a 100 ms drain
# timeout; the writes then complete and read back.
offload_past_requests() {
	d=/sys/kernel/debug/reflux0
	sp=/sys/module/reflux_dev/parameters/speed_permille
	[ "$(actor_field 2 owner)" = host ] || { echo "lz4 is not on the host"; return 1; }
	dd if=/dev/urandom of=/tmp/op bs=128k count=8 2>/dev/null
	echo 1 >$sp
	for i in 0 1 2 3; do
		dd if=/tmp/op of=/dev/reflux0 bs=128k count=2 skip=$((i * 2)) seek=$((300 + i * 2)) \
			oflag=direct 2>/dev/null &
	done
	sleep 1
	q=$(awk '$1 == "queue_depth" { print $2 }' $d/stats)
	echo "2 device" >$d/migrate
	rc=$?
	echo 1000 >$sp
	wait
	echo "move of lz4 to the device: rc $rc with ${q:-?} requests on the device; lz4 on the $(actor_field 2 owner)"
	dd if=/dev/reflux0 of=/tmp/op2 bs=128k count=8 skip=300 iflag=direct 2>/dev/null &&
		cmp /tmp/op /tmp/op2 && [ $rc = 0 ] && [ "$(actor_field 2 owner)" = device ]
}

# without_mailbox: the race of lz4 and crc32c with the device's part asked for
# as DIR_MIGRATE descriptors in the SQ (a device without the migration
# mailbox); the device model comes back with its mailbox after.
without_mailbox() {
	reflux_dev_again migrate_mailbox=0 && reload_reflux "pipeline=2 checksum=1" &&
		env REFLUX_ACTORS=2,1 REFLUX_MIGRATIONS=20 $mt -t race
	rc=$?
	reflux_dev_again || echo "the device model did not load again"
	return $rc
}

ktap_plan 15
mt=/selftests/reflux/migrate_test
tap "compress+checksum: bad migration requests are refused" \
	with_reflux "pipeline=2 checksum=1" $mt -t bad_input
tap_show "compress+checksum: lz4 and crc32c migrate under I/O" \
	with_reflux "pipeline=2 checksum=1" env REFLUX_ACTORS=2,1 REFLUX_MIGRATIONS=40 $mt -t race
tap_show "encrypt+checksum, split: aes-xts migrates under I/O" \
	with_reflux "pipeline=3 checksum=1 placement=2" env REFLUX_ACTORS=3 REFLUX_MIGRATIONS=20 $mt -t race
tap_show "ext2 on compress+checksum: files survive a remount, a reload and the stages moving" \
	fs_roundtrip "pipeline=2 checksum=1"
tap_show "without the mailbox (DIR_MIGRATE in the SQ): lz4 and crc32c migrate under I/O" \
	without_mailbox
tap_show "migrations that give up on their drain (1 ms) lose no request" \
	with_reflux "pipeline=2 checksum=1 placement=0 migrate_drain_timeout_ms=1" drain_giveup
tap_show "a move stuck in its drain gives up on a signal; the device keeps the actor" \
	with_reflux "pipeline=2 checksum=1" migrate_interrupted
tap_show "an offload does not wait for the requests already past the actor" \
	with_reflux "pipeline=2 checksum=1 placement=2 migrate_drain_timeout_ms=100" \
	offload_past_requests
rmmod reflux
tap "reflux refuses migrate_drain_timeout_ms=0" sh -c '! modprobe reflux migrate_drain_timeout_ms=0'
tap "reflux refuses migrate_drain_timeout_ms=60001" \
	sh -c '! modprobe reflux migrate_drain_timeout_ms=60001'
tap "a pinned (compute-dominated) actor is not migrated" with_reflux "pipeline=2 pinned=4" \
	sh -c '! echo "2 host" > /sys/kernel/debug/reflux0/migrate'
tap "migrate_stop refuses phase 4" with_reflux "pipeline=2" \
	sh -c '! echo 4 > /sys/kernel/debug/reflux0/migrate_stop'
rmmod reflux
tap "reflux refuses pinned=1 (actor 0 is no actor)" sh -c '! modprobe reflux pinned=1'
tap "reflux refuses pinned=0x10000" sh -c '! modprobe reflux pinned=0x10000'
tap "reflux is back with its defaults" reload_reflux ""
ktap_finish
