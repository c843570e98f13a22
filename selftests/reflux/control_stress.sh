#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The control interfaces under several writers and readers at once, with an
# unbind and bind, or a module reload, between rounds.
#
# Each round, on reflux0 under fio writes with verify: two writers for every
# read-write file of the device's policy directory (configfs), each writing
# values valid whatever the others hold and reading the file back after every
# write that succeeded (it must read one of the values written to it: with
# two writers, it may be the other's); `placement` and debugfs `migrate`
# writers moving the stages (refusals allowed: EBUSY while the scheduler owns
# the placement, EALREADY, ETIMEDOUT of a drain); a `sched` toggler; a
# `migrate_stop` toggler pausing migrations for a moment; and readers of every
# readable file of both directories, each read succeeding. Then the cxl_ccm
# side: STATS and STATS_RESET racing LAUNCH on one tenant (race_test's
# stats_read_race), and cxl_ccm unbound and bound or reloaded too.
# After every round: no writer hung, nothing refused that the documentation
# does not allow, nothing lost, fio verified every block.
#
# make check runs 4 short rounds; make stress (CONTROL_STRESS_FULL=1) 16
# longer ones.
. /selftests/lib/cxlstack.sh
need_module reflux
need_module cxl_ccm
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config

C=/sys/kernel/config/reflux/reflux0
D=/sys/kernel/debug/reflux0
DRV=/sys/bus/platform/drivers/reflux
CCM_DRV=/sys/bus/platform/drivers/cxl_ccm
HANG=120
if [ -n "${STRESS_FULL:-}" ]; then
	ROUNDS=16 WRITES=400 STATS_CALLS=100000
else
	ROUNDS=4 WRITES=60 STATS_CALLS=20000
fi
W=/tmp/cs

# note FILE WHAT: a failure of this round, for its verdict.
note() { echo "$2" >>$W/bad.$1; }

# writer FILE VALUE...: WRITES writes of the VALUEs in turn, each read back;
# every write must succeed and read back as one of the VALUEs.
writer() {
	wf=$1
	shift
	i=0
	while [ $i -lt $WRITES ]; do
		for v in "$@"; do
			if ! msg=$( (echo "$v" >"$C/$wf") 2>&1); then
				note "$wf" "'$v' refused: $msg"
				continue
			fi
			read -r got <"$C/$wf"
			ok=0
			for x in "$@"; do [ "$got" = "$x" ] && ok=1; done
			[ $ok = 1 ] || note "$wf" "wrote '$v', read back '$got'"
		done
		i=$((i + 1))
	done
}

# mover FILE VALUE...: WRITES/4 writes of the VALUEs into FILE (a path); a
# refusal must be one the documentation gives for a move.
mover() {
	mf=$1
	shift
	i=0
	while [ $i -lt $((WRITES / 4)) ]; do
		for v in "$@"; do
			msg=$( (echo "$v" >"$mf") 2>&1) && continue
			case "$msg" in
			*busy* | *already* | *imed\ out*) ;;
			*) note "${mf##*/}" "'$v' refused: $msg" ;;
			esac
		done
		i=$((i + 1))
	done
}

# toggler FILE ON OFF PAUSE: WRITES/8 times ON, PAUSE seconds, OFF.
toggler() {
	i=0
	while [ $i -lt $((WRITES / 8)) ]; do
		(echo "$2" >"$1") 2>/dev/null || note "${1##*/}" "'$2' refused"
		sleep "$4"
		(echo "$3" >"$1") 2>/dev/null || note "${1##*/}" "'$3' refused"
		i=$((i + 1))
	done
}

# reader: reads every readable file of both directories until $W/stop.
reader() {
	while [ ! -e $W/stop ]; do
		for f in $C/* $D/stats $D/actors $D/migrations $D/sched $D/migrate_stop $D/peek; do
			cat "$f" >/dev/null 2>$W/err.$$ || note reader "$f: $(cat $W/err.$$)"
		done
	done
}

# round N: one round, as above.
round() {
	rm -rf $W
	mkdir -p $W
	fio --thread --name=c --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=randwrite \
		--bs=64k --iodepth=8 --size=16M --offset=32M --time_based --runtime=600 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_backlog=16 \
		--verify_fatal=1 >$W/fio 2>&1 &
	fio_pid=$!
	pids=
	while read -r f a b; do
		writer "$f" "$a" "$b" &
		pids="$pids $!"
		writer "$f" "$b" "$a" &
		pids="$pids $!"
	done <<EOF
irq_poll_below_us 2 4
irq_sleep_above_us 40 45
sched_epoch_ms 5 20
sched_theta 700 900
sched_theta_low 100 300
sched_dwell_ms 50 150
sched_q_full 8 32
sched_host_saturated 800 950
sched_headroom_temp 400 600
sched_headroom_util 700 900
sched_min_inflight 100 200
sched_flap_backoff 0 1
sched_flap_window_ms 500 1000
sched_max_backoff_ms 1000 5000
sched_lookahead 1 0
sched_lookahead_max_ms 100 500
sched_engine_share 0 1
sched_u_reflux_only 1 0
EOF
	writer sched_weights "500 300 200" "400 400 200" &
	pids="$pids $!"
	mover $C/placement 0x0 0x3 0x1 0x2 &
	pids="$pids $!"
	mover $D/migrate "1 host" "2 host" "1 device" "2 device" &
	pids="$pids $!"
	toggler $C/sched 1 0 0.05 &
	pids="$pids $!"
	toggler $D/migrate_stop "$(($1 % 3 + 1))" 0 0.02 &
	pids="$pids $!"
	reader &
	r1=$!
	reader &
	r2=$!
	# shellcheck disable=SC2086 # a list of pids
	reap $HANG $pids || { echo "a writer hung"; return 1; }
	touch $W/stop
	reap $HANG $r1 $r2 || { echo "a reader hung"; return 1; }
	echo 0 >$D/migrate_stop
	echo 0 >$C/sched
	# Stopped by a signal, fio exits non-zero: its verdict is its job's error
	# and what verify reported.
	kill -INT $fio_pid
	reap $HANG $fio_pid || { echo "fio hung"; return 1; }
	wait $fio_pid
	if ! grep -q 'err= 0' $W/fio || grep -qiE 'verify.*(fail|bad)|bad magic|mismatch' $W/fio; then
		grep -iE 'err=|verify|magic|mismatch|error' $W/fio | head -5
		echo "fio saw an error"
		return 1
	fi
	echo "round $1: $(stat_reflux migrations) migrations, placement $(cat $C/placement) at its end"
	ccm_stats_race || return 1
	between "$1" || return 1
	if ls $W/bad.* >/dev/null 2>&1; then
		for b in $W/bad.*; do echo "${b#$W/bad.}: $(wc -l <"$b") failures, e.g. $(head -1 "$b")"; done
		return 1
	fi
}

# ccm_stats_race: STATS and STATS_RESET racing LAUNCH (cxl_ccm5).
ccm_stats_race() {
	CXL_CCM_STATS_CALLS=$STATS_CALLS /selftests/cxl_ccm/race_test -t stats_read_race \
		>$W/race 2>&1 || { cat $W/race; echo "stats_read_race failed"; return 1; }
}

# between N: round N ends with an unbind and bind of both drivers (odd N) or
# their modules reloaded (even N); their devices must come back.
between() {
	if [ $(($1 % 2)) = 1 ]; then
		bounded $HANG sh -c "echo reflux.0 >$DRV/unbind; echo reflux.0 >$DRV/bind" || return 1
		bounded $HANG sh -c "echo cxl_ccm.5 >$CCM_DRV/unbind; echo cxl_ccm.5 >$CCM_DRV/bind" ||
			return 1
	else
		bounded $HANG sh -c "rmmod cxl_ccm && modprobe cxl_ccm" || return 1
		bounded $HANG reload_reflux "pipeline=2 checksum=1" || return 1
	fi
	i=0
	while { [ ! -b /dev/reflux0 ] || [ ! -e /dev/cxl_ccm5 ] || [ ! -e $C/placement ]; } &&
		[ $i -lt $((HANG * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b /dev/reflux0 ] && [ -e /dev/cxl_ccm5 ] && [ -e $C/placement ] ||
		{ echo "the devices did not come back"; return 1; }
}

ktap_plan $ROUNDS
reload_reflux "pipeline=2 checksum=1" || { echo "# reflux did not load" >>"$OUT"; }
n=1
while [ $n -le $ROUNDS ]; do
	tap_show "round $n: writers read back, movers and readers refused nothing undocumented, fio verified" \
		round $n
	n=$((n + 1))
done
reload_reflux ""
ktap_finish
