#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Races of reflux's control interfaces that one thread cannot see.
#
# 1-9: an unbind while a migration is paused by debugfs `migrate_stop` at
# phase 1, 2 and 3, the migration asked for by a `placement` write (configfs),
# by a `migrate` write (debugfs) and by the scheduler thread. The unbind
# returns with the knob still set (the configfs directory's removal, the
# scheduler's kthread_stop and the debugfs directory's removal each wait for
# the migration's caller); the writer is told (ESHUTDOWN from a migration
# short of "ready", which gives up; success from one past it, which completes);
# after a bind the blocks written before read back, those still dirty in the
# page cache at the unbind too (del_gendisk writes them back), and new writes
# do too.
# 10: blocks acknowledged into the page cache only, then an unbind: they
# are written back, and read back after a bind.
# 11: two writers, of irq_poll_below_us and of irq_sleep_above_us, each
# reading its file back after every write that succeeded: none is lost.
# 12: a writer per read-write policy attribute at once (all but placement and
# sched, whose writes migrate or start threads), each from values valid
# whatever the others hold: none refused, none lost.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config

C=/sys/kernel/config/reflux/reflux0
D=/sys/kernel/debug/reflux0
DRV=/sys/bus/platform/drivers/reflux
THERMAL=/sys/module/reflux_dev/parameters/thermal_set_mc
# Hang bounds: a hang is forever, and these only tell one from slowness.
HANG=60

# The scheduler is made to move lz4 by heat alone (selftests/reflux/sched.sh).
SCHED_PARAMS="pipeline=2 checksum=1 placement=3 sched=1 sched_theta=450 sched_theta_low=300
	sched_headroom_temp=300 sched_flap_backoff=1 sched_lookahead=1 sched_engine_share=1
	sched_u_reflux_only=1"

unbind() { bounded $HANG sh -c "echo reflux.0 >$DRV/unbind"; }

# bind: binds reflux.0 and waits for its disk.
bind() {
	bounded $HANG sh -c "echo reflux.0 >$DRV/bind" || return 1
	i=0
	while [ ! -b /dev/reflux0 ] && [ $i -lt $((HANG * 10)) ]; do sleep 0.1; i=$((i + 1)); done
	[ -b /dev/reflux0 ] || { echo "no /dev/reflux0 after bind"; return 1; }
}

# wait_paused PHASE [HOT_MC]: waits until a migration is paused at PHASE
# (heating the device to HOT_MC meanwhile, if given).
wait_paused() {
	i=0
	while [ "$(stat_reflux migrate_phase)" != "$1" ]; do
		[ $i -lt $((HANG * 20)) ] || { echo "no migration paused at phase $1"; return 1; }
		[ -n "${2:-}" ] && echo "$2" >$THERMAL
		sleep 0.05
		i=$((i + 1))
	done
}

# write_pattern FILE SEEK: 256 KiB of random blocks into FILE, written at
# 64 KiB block SEEK of the disk.
write_pattern() {
	dd if=/dev/urandom of="$1" bs=64k count=4 2>/dev/null &&
		dd if="$1" of=/dev/reflux0 bs=64k seek="$2" conv=fsync 2>/dev/null
}

# reads_back FILE SEEK: the disk holds FILE at 64 KiB block SEEK.
reads_back() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if=/dev/reflux0 of=/tmp/races.back bs=64k skip="$2" count=4 2>/dev/null &&
		cmp "$1" /tmp/races.back || { echo "blocks at ${2}x64k do not read back"; return 1; }
}

# paused_unbind SOURCE PHASE: see 1-9 above.
paused_unbind() {
	src=$1 ph=$2
	if [ "$src" = sched ]; then
		# shellcheck disable=SC2086 # a list of words
		reload_reflux "$(echo $SCHED_PARAMS)" || return 1
	else
		reload_reflux "pipeline=2 checksum=1" || return 1
	fi
	write_pattern /tmp/races.pat 2 || { echo "the pattern was not written"; return 1; }
	echo "$ph" >$D/migrate_stop
	wp= lp= hot=
	case $src in
	policy) sh -c "echo 0x0 >$C/placement" >/tmp/races.w 2>&1 & wp=$! ;;
	debugfs) sh -c "echo '1 host' >$D/migrate" >/tmp/races.w 2>&1 & wp=$! ;;
	sched)
		# Load on lz4 for the scheduler to weigh, far from the pattern.
		fio --thread --name=r --filename=/dev/reflux0 --ioengine=psync --direct=1 \
			--rw=write --bs=128k --size=16M --offset=64M --time_based --runtime=$HANG \
			--buffer_compress_percentage=50 --refill_buffers >/dev/null 2>&1 &
		lp=$!
		hot=76000
		;;
	esac
	wait_paused "$ph" $hot || { echo "$(cat /tmp/races.w 2>/dev/null)"; return 1; }
	id=$(dmesg | sed -n "s/.*migration of actor \([0-9]*\) paused at phase $ph\$/\1/p" | tail -1)
	# Acknowledged into the page cache only: the unbind's del_gendisk writes it
	# back. The disk held open meanwhile, so that dd's close is not the last
	# (which would write it back, and wait for the paused migration).
	exec 5</dev/reflux0
	dd if=/dev/urandom of=/tmp/races.dirty bs=64k count=4 2>/dev/null &&
		bounded $HANG dd if=/tmp/races.dirty of=/dev/reflux0 bs=64k seek=16 ||
		{ exec 5<&-; echo "the buffered write failed"; return 1; }
	echo "paused at phase $ph: $(grep -E '^(migrate_phase|migrations) ' $D/stats | tr '\n' ' ')"
	# Told to stop; its writes parked for the paused migration end with the
	# unbind.
	[ -n "$lp" ] && kill "$lp" 2>/dev/null
	rc=0
	if ! out=$(unbind); then
		exec 5<&-
		echo "the unbind did not return with the knob set: $out"
		# Let it finish, so that the suites after this one run.
		echo 0 >$D/migrate_stop
		rc=1
	fi
	exec 5<&-
	echo 35000 >$THERMAL
	if [ -n "$lp" ]; then
		reap $HANG "$lp" || return 1
	fi
	if [ -n "$wp" ]; then
		reap $HANG "$wp" || return 1
		wait "$wp"
		wrc=$?
		msg=$(cat /tmp/races.w)
		echo "the writer: rc $wrc, '$msg'"
		# A move of one actor paused past "ready" completes; the others give
		# up (a placement's second move is refused).
		if [ "$src" = debugfs ] && [ "$ph" != 1 ]; then
			[ $wrc = 0 ] || { echo "wanted success"; rc=1; }
		else
			[ $wrc != 0 ] && echo "$msg" | grep -qi 'shutdown' || { echo "wanted ESHUTDOWN"; rc=1; }
		fi
	fi
	if grep -qx 'reflux0-sched' /proc/[0-9]*/comm 2>/dev/null; then
		echo "the scheduler thread outlived the unbind"
		rc=1
	fi
	[ $rc = 0 ] || return 1
	bind || return 1
	[ "$(cat $D/migrate_stop)" = 0 ] || { echo "migrate_stop survived the unbind"; return 1; }
	reads_back /tmp/races.pat 2 || return 1
	reads_back /tmp/races.dirty 16 || { echo "(the buffered write, dirty at the unbind)"; return 1; }
	write_pattern /tmp/races.pat2 8 && reads_back /tmp/races.pat2 8 || return 1
	echo "actor $id paused; after the bind (placement=3 again): $(awk '$1 == "actor" { printf "%s=%s ", $4, $6 }' $D/actors)"
}

# writer FILE ROUNDS VALUE...: writes each VALUE in turn into policy file FILE,
# ROUNDS times, and reads FILE back after each write that succeeded; one line
# "FILE writes lost refused" into /tmp/races.sum, and one per lost write.
writer() {
	wf=$1 wn=$2
	shift 2
	w=0 lost=0 ref=0 r=0
	while [ $r -lt "$wn" ]; do
		for v in "$@"; do
			if echo "$v" 2>/dev/null >"$C/$wf"; then
				w=$((w + 1))
				read -r got <"$C/$wf"
				if [ "$got" != "$v" ]; then
					lost=$((lost + 1))
					[ $lost -le 3 ] && echo "$wf: wrote '$v' (success), read back '$got'"
				fi
			else
				ref=$((ref + 1))
			fi
		done
		r=$((r + 1))
	done
	echo "$wf $w $lost $ref" >>/tmp/races.sum
}

# judge_writers PIDS...: waits for the writers; fails if one hung, lost or
# was refused a write, or none wrote.
judge_writers() {
	reap $HANG "$@" || return 1
	cat /tmp/races.lost
	awk '{ w += $2; l += $3; r += $4; n++ }
		$3 > 0 || $4 > 0 { print "  " $1 ": " $2 " writes, " $3 " lost, " $4 " refused" }
		END { print n " writers, " w " writes, " l " lost, " r " refused"; exit !(n > 0 && w > 0 && l == 0 && r == 0) }' \
		/tmp/races.sum
}

# dirty_unbind: blocks acknowledged into the page cache only, then an unbind:
# its del_gendisk writes them back, and they read back after a bind.
dirty_unbind() {
	# Held open, so that dd's close is not the last (which writes back).
	exec 5</dev/reflux0
	dd if=/dev/urandom of=/tmp/races.dirty bs=64k count=4 2>/dev/null &&
		dd if=/tmp/races.dirty of=/dev/reflux0 bs=64k seek=24 2>/dev/null ||
		{ exec 5<&-; return 1; }
	echo "dirty before the unbind: $(awk '$1 == "Dirty:" { print $2 " kB" }' /proc/meminfo)"
	unbind
	urc=$?
	exec 5<&-
	[ $urc = 0 ] && bind && reads_back /tmp/races.dirty 24
}

# thresholds: 10 above.
thresholds() {
	: >/tmp/races.sum
	writer irq_poll_below_us 1250 2 3 4 5 >/tmp/races.lost 2>&1 &
	p1=$!
	writer irq_sleep_above_us 1250 40 41 42 43 >>/tmp/races.lost 2>&1 &
	judge_writers $p1 $!
}

# every_attr: 11 above.
every_attr() {
	: >/tmp/races.sum
	: >/tmp/races.lost
	pids=
	n=150
	while read -r f a b c; do
		writer "$f" $n "$a" "$b" "$c" >>/tmp/races.lost 2>&1 &
		pids="$pids $!"
	done <<EOF
irq_poll_below_us 2 3 4
irq_sleep_above_us 40 41 42
sched_epoch_ms 5 10 20
sched_theta 700 800 900
sched_theta_low 100 200 300
sched_dwell_ms 50 100 150
sched_q_full 8 16 32
sched_host_saturated 800 900 950
sched_headroom_temp 400 500 600
sched_headroom_util 700 800 900
sched_min_inflight 100 125 200
sched_flap_backoff 0 1 0
sched_flap_window_ms 500 700 1000
sched_max_backoff_ms 1000 2000 5000
sched_lookahead 1 0 1
sched_lookahead_max_ms 100 300 500
sched_engine_share 0 1 1
sched_u_reflux_only 1 0 0
EOF
	writer sched_weights $n "500 300 200" "400 400 200" "300 300 400" >>/tmp/races.lost 2>&1 &
	# shellcheck disable=SC2086 # a list of pids
	judge_writers $pids $!
}

ktap_plan 12
for src in policy debugfs sched; do
	for ph in 1 2 3; do
		tap_show "unbind with a migration from $src paused at phase $ph: returns, the writer told, data kept" \
			paused_unbind $src $ph
	done
done
reload_reflux "pipeline=2 checksum=1"
tap_show "blocks dirty in the page cache at an unbind are written back" dirty_unbind
tap_show "two writers of the two sleep/poll thresholds lose no acknowledged write" thresholds
tap_show "a writer per policy attribute at once: none refused, none lost" every_attr
reload_reflux ""
ktap_finish
