#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# scx_duplex: refuses bad arguments; reports whether the machine counts memory
# events; then three runs, each ending with the kernel back on its default
# scheduler:
# - two readers and two writers (one writer in a child cgroup: an inherited
#   hint) under the hint policy, switched to the time-series policy by SIGUSR1
#   halfway: each worker stays on a cluster shared with one of the other class;
# - the negative control: the same workers with wrong hints (the second reader
#   hinted write, the writers balanced); the same check must fail;
# - the counter path on software events.
# The placement runs use --no-counters so that hints alone place, with or
# without a PMU (KVM).
. /selftests/lib/cxlstack.sh

# scx_start LOG ARGS...: scx_duplex in the background (its pid in $scx),
# returning once sched_ext runs it: verifying the program takes seconds under TCG.
scx_start() {
	local log=$1 i=0
	shift
	/bench/scx_duplex "$@" >"$log" 2>&1 &
	scx=$!
	while [ $i -lt 600 ] && ! grep -q '^enabled' /sys/kernel/sched_ext/state 2>/dev/null; do
		sleep 0.1; i=$((i + 1))
	done
}

# scx_worker CGROUP READ_PERCENT MS: a cxl-duplex bw worker in the cgroup. Its
# pid, which is its process's (the shell execs it), goes to $scx_last and $scx_pids.
scx_worker() {
	sh -c "echo \$\$ >/sys/fs/cgroup/$1/cgroup.procs && exec /bench/cxl-duplex bw \
		--node 0 --size 8M --read $2 --duration-ms $3" >/dev/null 2>&1 &
	scx_last=$!
	scx_pids="$scx_pids $!"
}

# scx_finish LOG WHAT: waits for the workers and the scheduler, logs its output
# and checks that all ended well and the kernel is back on its default scheduler.
scx_finish() {
	local ok=1 p rc
	for p in $scx_pids; do wait "$p" || ok=0; done
	scx_pids=
	tap "the workers ran ($2)" [ $ok = 1 ]
	wait $scx
	rc=$?
	sed 's/^/# /' "$1" >>"$OUT"
	tap "scx_duplex exited cleanly ($2)" [ "$rc" = 0 ]
	tap "the kernel is back on its default scheduler ($2)" \
		sh -c 'grep -q "^disabled" /sys/kernel/sched_ext/state'
}

# scx_placement LOG "READER PIDS" "WRITER PIDS": placement against the ground
# truth, which is what the workers do (the test started them), not what the
# scheduler was told. From scx_duplex's per-thread lines ("proc TGID pid PID
# ... runs R0 R1 ..."), each worker's busiest thread must have made at least
# 10 runs, 4 in 5 of them on one cluster (placement held it there: without it
# tasks wander between CPUs), and every cluster the workers ran on must hold
# a reader and a writer, on more than one cluster.
scx_placement() {
	awk -v readers="$2" -v writers="$3" '
		BEGIN {
			n = split(readers, a, " "); for (i = 1; i <= n; i++) truth[a[i]] = "reader"
			n = split(writers, a, " "); for (i = 1; i <= n; i++) truth[a[i]] = "writer"
		}
		$1 == "proc" && ($2 in truth) {
			t = 0; top = 0; home = -1
			for (i = 12; i <= NF; i++) { t += $i; if ($i > top) { top = $i; home = i - 12 } }
			if (t > total[$2]) { total[$2] = t; best[$2] = top; cl[$2] = home }
		}
		END {
			for (p in truth) {
				printf "process %s (%s): %d of %d runs on cluster %d\n", p, truth[p],
					best[p], total[p], cl[p]
				if (total[p] < 10) { print "process " p ": too few runs to judge"; bad = 1; continue }
				if (best[p] * 5 < total[p] * 4) {
					print "process " p ": only " best[p] " of " total[p] " runs on one cluster"
					bad = 1; continue
				}
				has[cl[p] "," truth[p]] = 1; used[cl[p]] = 1
			}
			for (c in used) {
				nc++
				if (!has[c ",reader"]) { print "cluster " c " lacks a reader"; bad = 1 }
				if (!has[c ",writer"]) { print "cluster " c " lacks a writer"; bad = 1 }
			}
			if (nc < 2) { print "the workers used " nc + 0 " cluster(s)"; bad = 1 }
			exit bad
		}' "$1"
}

# The negative control's verdict: scx_placement fails, and because a cluster
# lacks a reader or a writer; not because a worker is missing, ran too little
# or wandered, which would prove nothing about the check.
scx_refuted() {
	local res
	if res=$(scx_placement "$@"); then
		echo "$res"
		echo "the check passed a placement made from wrong hints"
		return 1
	fi
	echo "$res"
	echo "$res" | grep -q 'lacks a' && ! echo "$res" | grep -q 'too few\|only'
}

# Whether scx_duplex can count the default memory events must agree with the
# kernel: a core PMU registers the "cpu" event source; QEMU TCG has none, so
# there it must say the read/write balance is unavailable and the trend off.
scx_probe_agrees() {
	local said
	said=$(/bench/scx_duplex --probe-counters) || return 1
	echo "$said"
	if [ -e /sys/bus/event_source/devices/cpu ]; then
		echo "$said" | grep -q '^scx_duplex: memory events:\|no memory event counters'
	else
		echo "$said" | grep -q 'no memory event counters (.*): read/write balance unavailable, trend off'
	fi
}

# The counter path run on software events (1:0 cpu-clock as "reads", 1:2
# page-faults as "writes"), which every kernel has: the loader opened them, the
# sched_switch program attributed them on every CPU and made per-task samples,
# and the time series has a read share. The figures themselves mean nothing.
scx_counted() {
	grep -q '^scx_duplex: memory events: reads 1:0, writes 1:2, on [0-9]* CPUs' "$1" &&
	grep -q '^policy .* read share [0-9]' "$1" &&
	awk '/^cpu [0-9]+:/ {
			for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
			n++; samples += v["samples"]
			if (!v["ev_read"]) bad = 1
		}
		END { exit (!n || bad || !samples) }' "$1"
}

ktap_plan 26
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
tap "scx_duplex refuses a bad hint value" \
	sh -c '! /bench/scx_duplex --cgroup-hint /sys/fs/cgroup=reads --duration-s 1'
tap "scx_duplex refuses a hint on a file of a cgroup (not a cgroup)" \
	sh -c '! /bench/scx_duplex --cgroup-hint /sys/fs/cgroup/cgroup.procs=read --duration-s 1'
tap "scx_duplex --params checks and applies the whole command line, in any order" \
	sh -c '! /bench/scx_duplex --params --param window=0 &&
		! /bench/scx_duplex --param hyst_min=300 --params &&
		/bench/scx_duplex --params --param window=5 | grep -q "^window  *5 "'
tap "scx_duplex refuses an event type that is not a 32-bit number" \
	sh -c '! /bench/scx_duplex --read-event 4294967297:0 --duration-s 1 &&
		! /bench/scx_duplex --read-event -1:0 --duration-s 1'
tap "scx_duplex refuses a hint on a directory outside cgroup2" \
	sh -c '! /bench/scx_duplex --cgroup-hint /tmp=read --duration-s 1'
tap "scx_duplex refuses a bad task hint value" \
	sh -c '! /bench/scx_duplex --task-hint 1=fast --duration-s 1'
tap "scx_duplex refuses a hint for a process that does not exist" \
	sh -c '! /bench/scx_duplex --task-hint 999999=read --duration-s 1'
tap "scx_duplex refuses an unknown policy and a parameter out of range" \
	sh -c '! /bench/scx_duplex --policy fastest && ! /bench/scx_duplex --param window=0'
tap_show "scx_duplex finds memory event counters only where the kernel has a PMU" \
	scx_probe_agrees

mkdir -p /sys/fs/cgroup/readers /sys/fs/cgroup/writers/child
scx_start /tmp/scx.out --cgroup-hint /sys/fs/cgroup/readers=read \
	--cgroup-hint /sys/fs/cgroup/writers=write --policy hint --no-counters \
	--duration-s 5 --interval-ms 500 --verbose
tap "sched_ext runs scx_duplex" sh -c 'grep -q "^enabled" /sys/kernel/sched_ext/state &&
	grep -q duplex /sys/kernel/sched_ext/root/ops'
r= w=
for cg in readers readers writers writers/child; do
	case $cg in
	readers) scx_worker $cg 100 2500; r="$r $scx_last" ;;
	*) scx_worker $cg 0 2500; w="$w $scx_last" ;;
	esac
done
# Halfway through the workers: the placements are made, the window holds samples.
sleep 1
kill -USR1 $scx
scx_finish /tmp/scx.out "hints right"
tap_show "each worker ran on one cluster, beside a worker of the other class" \
	scx_placement /tmp/scx.out "$r" "$w"
tap "SIGUSR1 switched the policy at run time, carrying the window" sh -c '
	grep -q "^policy hint -> timeseries, carried: [1-9][0-9]* samples in the window" /tmp/scx.out &&
	grep -q "^policy timeseries load" /tmp/scx.out &&
	grep -q "^policy switches 1, last policy timeseries" /tmp/scx.out'
tap "without counters the loader says so and the trend stays off" sh -c '
	grep -q "no memory event counters (--no-counters): read/write balance unavailable, trend off" /tmp/scx.out &&
	grep -q "^policy .* read share n/a trend off" /tmp/scx.out &&
	! grep -q "^policy .* read share [0-9]" /tmp/scx.out'

mkdir -p /sys/fs/cgroup/neg/a /sys/fs/cgroup/neg/b /sys/fs/cgroup/neg/c
scx_start /tmp/scx-neg.out --cgroup-hint /sys/fs/cgroup/neg/a=read \
	--cgroup-hint /sys/fs/cgroup/neg/b=write --cgroup-hint /sys/fs/cgroup/neg/c=balanced \
	--policy hint --no-counters --duration-s 3 --interval-ms 500
tap "sched_ext runs scx_duplex (negative control)" \
	sh -c 'grep -q "^enabled" /sys/kernel/sched_ext/state'
scx_worker neg/a 100 2000; r=$scx_last
scx_worker neg/b 100 2000; r="$r $scx_last"
scx_worker neg/c 0 2000; w=$scx_last
scx_worker neg/c 0 2000; w="$w $scx_last"
scx_finish /tmp/scx-neg.out "negative control"
tap_show "negative control: with a reader hinted write and the writers balanced, the placement check fails" \
	scx_refuted /tmp/scx-neg.out "$r" "$w"

scx_start /tmp/scx-pmu.out --cgroup-hint /sys/fs/cgroup/readers=read \
	--read-event 1:0 --write-event 1:2 --policy timeseries --duration-s 2 \
	--interval-ms 200 --verbose
tap "sched_ext runs scx_duplex (software counters)" \
	sh -c 'grep -q "^enabled" /sys/kernel/sched_ext/state'
scx_worker readers 100 1000
scx_finish /tmp/scx-pmu.out "software counters"
tap "the counter path: events attributed at sched_switch, per-task samples, a measured read share" \
	scx_counted /tmp/scx-pmu.out
rmdir /sys/fs/cgroup/neg/a /sys/fs/cgroup/neg/b /sys/fs/cgroup/neg/c /sys/fs/cgroup/neg \
	/sys/fs/cgroup/writers/child /sys/fs/cgroup/writers /sys/fs/cgroup/readers 2>/dev/null
ktap_finish
