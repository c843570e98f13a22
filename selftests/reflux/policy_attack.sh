#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# An attack on a device's policy directory in configfs
# (/sys/kernel/config/reflux/<device>/) and on the reflux and cxl_ccm trace
# events, written from Documentation/reflux.rst ("A device's policy
# (configfs)", "Trace events") and Documentation/cxl_ccm.rst ("Trace
# events") alone: malformed, huge, negative, long and binary values, every
# documented refusal and that a refusal changes nothing; many writers and
# readers at once under fio with verify; unbind/bind under writers, readers,
# open files and I/O; an attachment with the device's name; mkdir/rmdir in and
# of the directory; rmmod with a policy file open; the migration phases a
# placement write traces; the events' documented fields; and after it all a
# working device, a clean kernel log and a module that unloads.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"

CFS=/sys/kernel/config/reflux
P=$CFS/reflux0
DRV=/sys/bus/platform/drivers/reflux
T=/sys/kernel/tracing
D=/sys/kernel/debug/reflux0
STOP=/tmp/pa.stop

# ---- helpers -------------------------------------------------------------------

# mark NAME: a line in the kernel log to look from; log_since NAME: what came after.
mark() { echo "policy_attack: mark $1" >/dev/kmsg; }
log_since() { dmesg | sed -n "/policy_attack: mark $1\$/,\$p" | sed 1d; }

# errmsg ERRNO: a piece of strerror(ERRNO)'s text (glibc's and musl's).
errmsg() {
	case $1 in
	EINVAL) echo 'invalid argument' ;;
	EBUSY) echo 'busy' ;;
	EOPNOTSUPP) echo 'not supported' ;;
	EPERM) echo 'not permitted' ;;
	*) echo "$1" ;;
	esac
}

# wr FILE VALUE: VALUE written to FILE as echo writes it (one write, with a
# newline); the shell's error text on failure.
wr() { (echo "$2" >"$1") 2>&1; }

# judge ERRNO FILE WHAT BEFORE RC MSG: one refused write's verdict.
judge() {
	after=$(cat "$2" 2>&1)
	jr=0
	if [ "$5" = 0 ]; then
		echo "$3 > ${2##*/}: accepted (reads '$after'), wanted $1"
		jr=1
	elif ! echo "$6" | grep -qi "$(errmsg "$1")"; then
		echo "$3 > ${2##*/}: '$6', wanted $1"
		jr=1
	fi
	if [ "$4" != "$after" ]; then
		echo "$3 > ${2##*/} changed it: '$4' -> '$after'"
		echo "$4" >"$2" 2>/dev/null
		jr=1
	fi
	return $jr
}

# refused ERRNO FILE VALUE...: each VALUE written to FILE fails with ERRNO and
# leaves FILE reading what it read before.
refused() {
	e=$1 f=$2
	shift 2
	rc=0
	for v in "$@"; do
		before=$(cat "$f" 2>&1)
		msg=$(wr "$f" "$v")
		judge "$e" "$f" "'$v'" "$before" $? "$msg" || rc=1
	done
	return $rc
}

# refused_raw ERRNO FILE FORMAT...: as refused, each write the bytes printf
# FORMAT makes (binary bytes), in one write(2) by dd (printf names no errno).
refused_raw() {
	e=$1 f=$2
	shift 2
	rc=0
	for v in "$@"; do
		printf "$v" >/tmp/pa.raw
		before=$(cat "$f" 2>&1)
		msg=$(dd if=/tmp/pa.raw of="$f" bs=16k count=1 conv=notrunc 2>&1)
		judge "$e" "$f" "printf '$v'" "$before" $? "$msg" || rc=1
	done
	return $rc
}

# refused_file ERRNO FILE SRC: SRC's bytes written to FILE in one write(2) fail
# with ERRNO and change nothing.
refused_file() {
	before=$(cat "$2" 2>&1)
	msg=$(dd if="$3" of="$2" bs=16k count=1 conv=notrunc 2>&1)
	judge "$1" "$2" "$3 ($(wc -c <"$3") bytes)" "$before" $? "$msg"
}

# accepted FILE VALUE: the write succeeds and FILE then reads VALUE.
accepted() {
	msg=$(wr "$1" "$2") || { echo "'$2' > ${1##*/} refused: $msg"; return 1; }
	got=$(cat "$1")
	[ "$got" = "$2" ] || { echo "'$2' > ${1##*/}: reads '$got'"; return 1; }
}

# reads FILE=VALUE...: each policy file reads VALUE.
reads() {
	rc=0
	for kv in "$@"; do
		f=${kv%%=*} want=${kv#*=}
		got=$(cat "$P/$f" 2>&1)
		[ "$got" = "$want" ] || { echo "$f reads '$got', the documentation says '$want'"; rc=1; }
	done
	return $rc
}

owners() { echo "$(actor_field 1 owner) $(actor_field 2 owner)"; }
epochs() { echo "$(actor_field 1 epoch) $(actor_field 2 epoch)"; }

unbind() { bounded 30 sh -c "echo reflux.0 >$DRV/unbind"; }

# bind: binds reflux.0 and waits (5 s at most) for its disk.
bind() {
	bounded 30 sh -c "echo reflux.0 >$DRV/bind" || return 1
	bi=0
	while [ ! -b /dev/reflux0 ] && [ $bi -lt 50 ]; do sleep 0.1; bi=$((bi + 1)); done
	[ -b /dev/reflux0 ] || { echo "no /dev/reflux0 5 s after bind"; return 1; }
}

# kthreads: the kernel threads named after reflux, but the workqueues' workers.
kthreads() { cat /proc/[0-9]*/comm 2>/dev/null | grep -i reflux | grep -v '^kworker' | sort; }

# has_fields SYSTEM EVENT FIELD...: the event's format file has each FIELD.
has_fields() {
	s=$1 e=$2
	shift 2
	f=$T/events/$s/$e/format
	[ -r "$f" ] || { echo "no $f"; return 1; }
	hr=0
	for x in "$@"; do
		grep -qE "field:[^;]*[ *]$x(\[[0-9]*\])?;" "$f" || { echo "$s:$e has no field '$x'"; hr=1; }
	done
	return $hr
}

# ---- the checks ----------------------------------------------------------------

ktap_plan 41
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
[ -d $T/events ] || mount -t tracefs tracefs $T
mark start
reload_reflux "pipeline=2 checksum=1"

# 1-3: the directory as bind makes it.
check_files() {
	[ -d $P ] || { echo "no $P; $CFS has: $(ls $CFS)"; return 1; }
	ls $P
	r=0
	for f in pipeline checksum dispatch placement sched sched_weights irq_poll_below_us \
		irq_sleep_above_us; do
		[ -f $P/$f ] || { echo "no $P/$f"; r=1; }
	done
	return $r
}
tap_show "the bound device has its policy directory with the documented files" check_files

# "the scheduler's parameters, one per file, as the sched_* module
# parameters" (alpha, beta, gamma are sched_weights).
SCHED_PARAMS="sched_epoch_ms sched_theta sched_theta_low sched_q_full sched_host_saturated
	sched_headroom_temp sched_headroom_util sched_dwell_ms sched_min_inflight sched_flap_backoff
	sched_flap_window_ms sched_max_backoff_ms sched_lookahead sched_lookahead_max_ms
	sched_engine_share sched_u_reflux_only"
check_sched_files() {
	r=0
	for f in $SCHED_PARAMS; do [ -f $P/$f ] || { echo "no $P/$f"; r=1; }; done
	return $r
}
tap "every documented sched_* parameter has its file" check_sched_files

DEFAULTS="pipeline=2 checksum=1 dispatch=0 placement=0x3 sched=0 sched_epoch_ms=10
	sched_theta=650 sched_theta_low=400 sched_q_full=32 sched_host_saturated=950
	sched_headroom_temp=500 sched_headroom_util=800 sched_dwell_ms=100 sched_min_inflight=125
	sched_flap_backoff=0 sched_flap_window_ms=1000 sched_max_backoff_ms=5000 sched_lookahead=0
	sched_lookahead_max_ms=500 sched_engine_share=0 sched_u_reflux_only=0
	irq_poll_below_us=20 irq_sleep_above_us=50"
# shellcheck disable=SC2086
tap "the files start with the module's values (documented defaults, weights 500 300 200)" \
	reads $DEFAULTS "sched_weights=500 300 200"

# 4-12: values.
check_readonly() {
	r=0
	for kv in pipeline=3 checksum=0 dispatch=1; do
		f=${kv%%=*}
		before=$(cat $P/$f)
		wr $P/$f "${kv#*=}" >/dev/null && { echo "write to read-only $f accepted"; r=1; }
		[ "$(cat $P/$f)" = "$before" ] || { echo "$f changed to $(cat $P/$f)"; r=1; }
	done
	return $r
}
tap "pipeline, checksum, dispatch are read-only: writes fail, values unchanged" check_readonly


bad_numbers() {
	r=0
	refused EINVAL $P/sched_theta "" "-1" "abc" "700abc" "7 00" "1e3" "0x" "700.5" "--700" \
		"4294967296" "18446744073709551616" || r=1
	refused EINVAL $P/sched_epoch_ms "" "-1" "abc" "10ms" "1 0" "18446744073709551616" \
		"99999999999999999999" || r=1
	refused EINVAL $P/sched "" "2" "-1" "1x" "4294967297" || r=1
	return $r
}
tap "malformed or out-of-range sched_theta, sched_epoch_ms, sched: EINVAL, unchanged" bad_numbers

bad_irq() {
	r=0
	refused EINVAL $P/irq_poll_below_us "" "-1" "abc" "10us" "18446744073709551616" || r=1
	refused EINVAL $P/irq_sleep_above_us "" "-5" "x50" || r=1
	# Poll not below sleep (20 and 50 now).
	refused EINVAL $P/irq_poll_below_us 50 60 4294967296 || r=1
	refused EINVAL $P/irq_sleep_above_us 20 10 0 || r=1
	return $r
}
tap "malformed irq thresholds, and poll not below sleep: EINVAL, unchanged" bad_irq

bad_placement() {
	r=0
	e0=$(epochs) o0=$(owners)
	# Bits past the 2 stages; 0x100000000/0x100000003 are 0x0/0x3 if truncated to 32 bits.
	refused EINVAL $P/placement "" "0x" "0xg" "-1" "0x4" "0x7" "0x100" "0x80000000" \
		"0x100000000" "0x100000003" "0x10000000000000000" "18446744073709551616" \
		"0x1 0x2" "0x3garbage" "3x" || r=1
	[ "$(epochs)" = "$e0" ] && [ "$(owners)" = "$o0" ] ||
		{ echo "actors moved: epochs $e0 -> $(epochs), owners $o0 -> $(owners)"; r=1; }
	return $r
}
tap "malformed placements and bits past the pipeline's stages: EINVAL, no actor moved" bad_placement

bad_weights() {
	# 4294966296+1000+1000 and 18446744073709551416+600+600 wrap to 1000.
	refused EINVAL $P/sched_weights "" "400 400 300" "333 333 333" "400 400" "400 400 200 0" \
		"1000" "-100 600 500" "1001 0 -1" "4294966296 1000 1000" "18446744073709551416 600 600" \
		"1000 0 0x" "abc def ghi" "400,400,200" "500 300 200 garbage"
}
tap "sched_weights not three permilles summing to 1000 (incl. wrapping sums): EINVAL, unchanged" \
	bad_weights

theta_order() {
	r=0
	refused EINVAL $P/sched_theta 400 399 0 || r=1
	refused EINVAL $P/sched_theta_low 650 700 1000 || r=1
	return $r
}
tap "sched_theta at or below sched_theta_low (either file written): EINVAL, unchanged" theta_order

# The bounds modprobe enforces (selftests/reflux/sched.sh), and the switches.
sched_bounds() {
	r=0
	for kv in sched_lookahead=2 sched_flap_backoff=2 sched_engine_share=2 \
		sched_u_reflux_only=2 sched_flap_window_ms=10001 sched_max_backoff_ms=60001 \
		sched_lookahead_max_ms=10001; do
		refused EINVAL $P/${kv%%=*} "${kv#*=}" || r=1
	done
	return $r
}
tap "sched_* values modprobe refuses are refused by their files (EINVAL)" sched_bounds

head -c 5000 /dev/zero | tr '\0' 9 >/tmp/pa.long9
{ head -c 4200 /dev/zero | tr '\0' 0; echo 700; } >/tmp/pa.lead0
printf '\377\376' >/tmp/pa.rand
head -c 4094 /dev/urandom >>/tmp/pa.rand
head -c 8192 /dev/zero | tr '\0' ' ' >/tmp/pa.spaces
long_binary() {
	r=0
	refused_file EINVAL $P/sched_theta /tmp/pa.long9 || r=1
	refused_file EINVAL $P/sched_theta /tmp/pa.lead0 || r=1
	refused_file EINVAL $P/placement /tmp/pa.rand || r=1
	refused_file EINVAL $P/sched_weights /tmp/pa.rand || r=1
	refused_file EINVAL $P/sched_weights /tmp/pa.spaces || r=1
	refused_raw EINVAL $P/sched_theta '\377700\n' '\0007\n' '700\000900\n' || r=1
	refused_raw EINVAL $P/placement '\0000x1\n' '0x\0001\n' || r=1
	refused_raw EINVAL $P/sched_weights '400\000400 200\n' || r=1
	return $r
}
tap "long (4-8 KiB) and binary writes: EINVAL, unchanged" long_binary

valid_writes() {
	r=0
	accepted $P/sched_theta 700 || r=1
	accepted $P/sched_theta_low 300 || r=1
	accepted $P/sched_weights "400 400 200" || r=1
	accepted $P/irq_sleep_above_us 40 || r=1
	accepted $P/irq_poll_below_us 10 || r=1
	accepted $P/sched_epoch_ms 20 || r=1
	accepted $P/sched_lookahead 1 || r=1
	accepted $P/sched_flap_window_ms 2000 || r=1
	for kv in sched_theta=650 sched_theta_low=400 "sched_weights=500 300 200" \
		irq_sleep_above_us=50 irq_poll_below_us=20 sched_epoch_ms=10 sched_lookahead=0 \
		sched_flap_window_ms=1000; do
		accepted $P/${kv%%=*} "${kv#*=}" || r=1
	done
	return $r
}
tap "valid values are taken and read back (and the defaults again)" valid_writes

# ---- trace events --------------------------------------------------------------

REFLUX_EVENTS="reflux_rq_issue reflux_rq_submit reflux_rq_complete reflux_stage_run
	reflux_migrate_phase reflux_throttle reflux_pagecache_stale"
check_events() {
	r=0
	echo "events/reflux: $(ls $T/events/reflux 2>&1 | tr '\n' ' ')"
	for ev in $REFLUX_EVENTS; do
		[ -f $T/events/reflux/$ev/format ] || { echo "no event reflux:$ev"; r=1; }
	done
	return $r
}
tap_show "tracefs has every documented reflux event" check_events

reflux_formats() {
	r=0
	has_fields reflux reflux_rq_issue tag pipeline dir lba blocks || r=1
	has_fields reflux reflux_rq_submit tag stage_start placement || r=1
	has_fields reflux reflux_rq_complete tag ret ns || r=1
	has_fields reflux reflux_stage_run tag side stage bytes ns || r=1
	has_fields reflux reflux_migrate_phase actor from to phase ns || r=1
	has_fields reflux reflux_throttle old_permille new_permille temp_milli_c || r=1
	has_fields reflux reflux_pagecache_stale index nr || r=1
	# "Every event names the device" (reflux0): first in what it prints.
	for ev in $REFLUX_EVENTS; do
		grep -qE '^print fmt: "(%s|reflux%u) ' $T/events/reflux/$ev/format 2>/dev/null ||
			{ echo "$ev prints no device name: $(grep '^print fmt' $T/events/reflux/$ev/format 2>&1)"; r=1; }
	done
	return $r
}
tap "the reflux events' format files have the documented fields" reflux_formats

ccm_formats() {
	r=0
	echo "events/cxl_ccm: $(ls $T/events/cxl_ccm 2>&1 | tr '\n' ' ')"
	echo "events/cxl_ccm_dev: $(ls $T/events/cxl_ccm_dev 2>&1 | tr '\n' ' ')"
	has_fields cxl_ccm cxl_ccm_launch tenant mode tag kernel bytes ns || r=1
	has_fields cxl_ccm cxl_ccm_release tenant entries md_head pl_head ret || r=1
	has_fields cxl_ccm cxl_ccm_wait tenant min ready ns ret || r=1
	has_fields cxl_ccm cxl_ccm_deadlock tenant min ready || r=1
	has_fields cxl_ccm cxl_ccm_records tenant records bytes || r=1
	has_fields cxl_ccm_dev cxl_ccm_dev_dma_batch tenant seq records bytes land_ns || r=1
	has_fields cxl_ccm_dev cxl_ccm_dev_credit_stall tenant stalled md_head pl_head ns || r=1
	return $r
}
tap_show "the cxl_ccm and cxl_ccm_dev events have the documented fields" ccm_formats

# phases FROM TO: the trace holds the four documented phases, once each, of
# one actor moving FROM->TO, and nothing else of reflux_migrate_phase.
phases() {
	grep -o 'reflux_migrate_phase: .*' $T/trace | sed 's/ *$//' >/tmp/pa.ph
	cat /tmp/pa.ph
	pr=0
	n=$(grep -c . /tmp/pa.ph)
	[ "$n" = 4 ] || { echo "$n reflux_migrate_phase events, want 4"; pr=1; }
	bad=$(grep -vE "^reflux_migrate_phase: reflux0 actor=[0-9]+ $1->$2 phase=(drain|checkpoint|rebuild|handover) ns=[0-9]+\$" /tmp/pa.ph)
	[ -z "$bad" ] || { echo "not as documented: $bad"; pr=1; }
	for ph in drain checkpoint rebuild handover; do
		[ "$(grep -c " phase=$ph " /tmp/pa.ph)" = 1 ] || { echo "phase $ph not once"; pr=1; }
	done
	[ "$(sed 's/.* actor=\([0-9]*\) .*/\1/' /tmp/pa.ph | sort -u | grep -c .)" = 1 ] ||
		{ echo "not one actor"; pr=1; }
	return $pr
}
echo 0 >$T/events/reflux/enable
echo 1 >$T/events/reflux/reflux_migrate_phase/enable
echo >$T/trace
# move_to PLACEMENT OWNERS: the write returns with the actors 1, 2 on OWNERS.
move_to() {
	accepted $P/placement $1 || return 1
	o=$(owners)
	[ "$o" = "$2" ] || { echo "owners of actors 1, 2: $o, want $2"; return 1; }
}
tap "placement 0x1 returns with stage 1 (crc32c, actor 1) on the host, lz4 (actor 2) on the device" \
	move_to 0x1 "host device"
tap_show "... traced as drain, checkpoint, rebuild, handover of one actor, device->host" \
	phases device host
echo >$T/trace
tap "placement 0x3 brings it back: both actors on the device" move_to 0x3 "device device"
back_phases() { phases host device; }
noop_moves() {
	r=0
	back_phases || r=1
	echo >$T/trace
	accepted $P/placement 0x3 || r=1
	refused EINVAL $P/placement 0x4 || r=1
	n=$(grep -c 'reflux_migrate_phase:' $T/trace)
	[ "$n" = 0 ] || { echo "a placement already in force or refused traced $n migration phases"; r=1; }
	return $r
}
tap_show "... traced host->device; rewriting the placement in force or a refused one moves nothing" \
	noop_moves
echo 0 >$T/events/reflux/reflux_migrate_phase/enable

head -c 32768 /dev/urandom >/tmp/pa.32k
rq_events() {
	r=0
	accepted $P/placement 0x0 || return 1
	for ev in reflux_rq_issue reflux_rq_submit reflux_rq_complete reflux_stage_run; do
		echo 1 >$T/events/reflux/$ev/enable
	done
	echo >$T/trace
	# 8 blocks at block 1000 (4 KiB blocks), inside one 128 KiB chunk: one request.
	[ -b /dev/reflux0 ] || { echo "/dev/reflux0 is no block device"; return 1; }
	dd if=/tmp/pa.32k of=/dev/reflux0 bs=32k count=1 seek=125 oflag=direct 2>/dev/null || r=1
	for ev in reflux_rq_issue reflux_rq_submit reflux_rq_complete reflux_stage_run; do
		echo 0 >$T/events/reflux/$ev/enable
	done
	grep -o 'reflux_[a-z_]*: .*' $T/trace >/tmp/pa.rq
	head -12 /tmp/pa.rq
	iss=$(grep '^reflux_rq_issue: reflux0 ' /tmp/pa.rq | grep -E ' lba=1000( |$)' | grep -E ' blocks=8( |$)')
	[ "$(echo "$iss" | grep -c .)" = 1 ] || { echo "no one rq_issue with lba=1000 blocks=8"; r=1; }
	echo "$iss" | grep -q ' pipeline=' && echo "$iss" | grep -q ' dir=' || { echo "rq_issue lacks pipeline= or dir="; r=1; }
	tag=$(echo "$iss" | sed -n 's/.* tag=\([0-9]*\).*/\1/p')
	[ -n "$tag" ] || { echo "no tag"; tag=none; r=1; }
	grep "^reflux_rq_submit: reflux0 " /tmp/pa.rq | grep -E " tag=$tag( |$)" | grep ' stage_start=' |
		grep -q ' placement=' || { echo "no rq_submit of tag $tag with stage_start and placement"; r=1; }
	grep "^reflux_rq_complete: reflux0 " /tmp/pa.rq | grep -E " tag=$tag( |$)" | grep -E ' ret=0( |$)' |
		grep -qE ' ns=[0-9]+' || { echo "no rq_complete of tag $tag with ret=0 ns="; r=1; }
	grep "^reflux_stage_run: reflux0 " /tmp/pa.rq | grep -E " tag=$tag( |$)" | grep ' side=' |
		grep ' stage=' | grep -E ' bytes=[0-9]+' | grep -qE ' ns=[0-9]+' ||
		{ echo "no stage_run of tag $tag (every stage on the host) with side stage bytes ns"; r=1; }
	accepted $P/placement 0x3 || r=1
	return $r
}
tap_show "an 8-block write at block 1000, stages on the host: rq_issue, rq_submit, stage_run, rq_complete ret=0 of its tag" \
	rq_events

# ---- the scheduler owns the placement ---------------------------------------------

kthreads >/tmp/pa.k0
sched_owns() {
	r=0
	accepted $P/sched 1 || return 1
	sleep 0.3
	kthreads >/tmp/pa.k1
	echo "threads sched=1 added: $(grep -vxFf /tmp/pa.k0 /tmp/pa.k1 | tr '\n' ' ')"
	refused EBUSY $P/placement 0x1 0x0 || r=1
	[ "$(owners)" = "device device" ] || { echo "owners $(owners) while refused"; r=1; }
	accepted $P/sched 0 || r=1
	i=0
	until msg=$(wr $P/placement 0x1); do
		[ $i -ge 10 ] && { echo "placement still refused 1 s after sched=0: $msg"; r=1; break; }
		sleep 0.1
		i=$((i + 1))
	done
	[ $i = 0 ] || echo "placement refused for ${i}00 ms after sched=0 returned"
	accepted $P/placement 0x3 || r=1
	return $r
}
echo policy_attack-sentinel >>/tmp/pa.k0
tap_show "sched=1: placement writes EBUSY and change nothing; sched=0 gives the placement back" sched_owns

# ---- the storm: every file written and read at once, under fio with verify --------

loop_placement() {
	n=0
	while [ ! -e $STOP ]; do
		for v in 0x0 0x1 0x2 0x3 0x4; do echo $v >$P/placement && n=$((n + 1)); done
	done
	echo $n >/tmp/pa.n.placement$1
}
loop_sched() {
	n=0
	while [ ! -e $STOP ]; do
		echo 1 >$P/sched && n=$((n + 1))
		echo 0 >$P/sched
	done
	echo $n >/tmp/pa.n.sched$1
}
# loop_pair FILE A B: FILE written A, B, A, ...
loop_pair() { while [ ! -e $STOP ]; do echo "$2" >$P/$1; echo "$3" >$P/$1; done; }
loop_weights() {
	while [ ! -e $STOP ]; do
		for w in "500 300 200" "100 100 800" "800 100 100" "334 333 333" "400 400 300"; do
			echo "$w" >$P/sched_weights
		done
	done
}
loop_params() {
	while [ ! -e $STOP ]; do
		for kv in sched_epoch_ms=5 sched_dwell_ms=50 sched_lookahead=1 sched_flap_backoff=1 \
			sched_engine_share=1 sched_u_reflux_only=1 sched_min_inflight=250 sched_q_full=16 \
			sched_epoch_ms=10 sched_dwell_ms=100 sched_lookahead=0 sched_flap_backoff=0 \
			sched_engine_share=0 sched_u_reflux_only=0 sched_min_inflight=125 sched_q_full=32; do
			echo "${kv#*=}" >$P/${kv%%=*}
		done
	done
}
loop_read() {
	n=0
	while [ ! -e $STOP ]; do
		w=
		read -r w <$P/sched_weights
		case "$w" in
		"" | *[!0-9\ ]*) echo "sched_weights read '$w'" >>/tmp/pa.bad ;;
		*)
			set -- $w
			[ $# = 3 ] && [ $(($1 + $2 + $3)) = 1000 ] || echo "sched_weights read '$w'" >>/tmp/pa.bad
			;;
		esac
		p=
		read -r p <$P/placement
		case "$p" in 0x0 | 0x1 | 0x2 | 0x3) ;; *) echo "placement read '$p'" >>/tmp/pa.bad ;; esac
		s=
		read -r s <$P/sched
		case "$s" in 0 | 1) ;; *) echo "sched read '$s'" >>/tmp/pa.bad ;; esac
		[ $((n % 8)) = 0 ] && for f in $P/*; do cat "$f" >/dev/null; done
		n=$((n + 1))
	done
	echo $n >/tmp/pa.n.read
}

rm -f $STOP /tmp/pa.bad /tmp/pa.n.*
echo 1 >$T/events/reflux/enable
fio --thread --name=storm --filename=/dev/reflux0 --allow_file_create=0 --ioengine=io_uring --direct=1 --rw=write \
	--bs=128k --iodepth=8 --size=16M --offset=64M --time_based --runtime=4 \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_backlog=16 \
	--verify_fatal=1 >/tmp/pa.fio 2>&1 &
fio_pid=$!
pids=
loop_placement a >/dev/null 2>&1 & pids="$pids $!"
loop_placement b >/dev/null 2>&1 & pids="$pids $!"
loop_sched a >/dev/null 2>&1 & pids="$pids $!"
loop_sched b >/dev/null 2>&1 & pids="$pids $!"
loop_pair sched_theta 450 700 >/dev/null 2>&1 & pids="$pids $!"
loop_pair sched_theta_low 600 300 >/dev/null 2>&1 & pids="$pids $!"
loop_pair irq_poll_below_us 40 10 >/dev/null 2>&1 & pids="$pids $!"
loop_pair irq_sleep_above_us 30 60 >/dev/null 2>&1 & pids="$pids $!"
loop_weights >/dev/null 2>&1 & pids="$pids $!"
loop_weights >/dev/null 2>&1 & pids="$pids $!"
loop_params >/dev/null 2>&1 & pids="$pids $!"
loop_read >/dev/null 2>/tmp/pa.read.err & pids="$pids $!"
reap 90 $fio_pid >/tmp/pa.fio.stuck
fio_stuck=$?
fio_rc=124
[ $fio_stuck = 0 ] && { wait $fio_pid; fio_rc=$?; }
touch $STOP
reap 30 $pids >/tmp/pa.storm.stuck
storm_stuck=$?
[ $storm_stuck = 0 ] && wait $pids
for i in $(seq 1 30); do
	wr $P/sched 0 >/dev/null && [ "$(cat $P/sched)" = 0 ] && break
	sleep 0.1
done
sleep 0.5
storm_fio() {
	tail -4 /tmp/pa.fio
	cat /tmp/pa.fio.stuck
	echo "successful writes: placement $(cat /tmp/pa.n.placementa 2>/dev/null)+$(cat /tmp/pa.n.placementb 2>/dev/null)," \
		"sched=1 $(cat /tmp/pa.n.scheda 2>/dev/null)+$(cat /tmp/pa.n.schedb 2>/dev/null);" \
		"reader rounds $(cat /tmp/pa.n.read 2>/dev/null); $(awk '$1 == "migrations" { print "migrations", $2 }' $D/stats)"
	[ $fio_stuck = 0 ] && [ $fio_rc = 0 ]
}
tap_show "fio verify=crc32c passes while 12 writers/readers hammer every policy file" storm_fio
storm_reads() {
	[ -s /tmp/pa.n.read ] || { echo "the reader did not finish"; return 1; }
	[ ! -s /tmp/pa.bad ] || { sort /tmp/pa.bad | uniq -c | head; return 1; }
	[ ! -s /tmp/pa.read.err ] || { sort /tmp/pa.read.err | uniq -c | head; return 1; }
}
tap "every read during the storm succeeded and was well-formed (weights summing to 1000, placement 0x0..0x3)" \
	storm_reads
storm_invariants() {
	t=$(cat $P/sched_theta) l=$(cat $P/sched_theta_low)
	po=$(cat $P/irq_poll_below_us) sl=$(cat $P/irq_sleep_above_us)
	w=$(cat $P/sched_weights)
	echo "theta $t theta_low $l poll_below $po sleep_above $sl weights $w"
	set -- $w
	[ "$t" -gt "$l" ] && [ "$po" -lt "$sl" ] && [ $(($1 + $2 + $3)) = 1000 ]
}
tap_show "after the racing writers: sched_theta > sched_theta_low, poll < sleep, weights sum to 1000" \
	storm_invariants
storm_after() {
	r=0
	[ $storm_stuck = 0 ] || { cat /tmp/pa.storm.stuck; r=1; }
	reads sched=0 || r=1
	kthreads >/tmp/pa.k2
	extra=$(grep -vxFf /tmp/pa.k0 /tmp/pa.k2)
	[ -z "$extra" ] || { echo "threads left after sched=0: $extra"; r=1; }
	accepted $P/placement 0x3 || r=1
	[ "$(owners)" = "device device" ] || { echo "owners $(owners) with placement 0x3"; r=1; }
	return $r
}
tap "after the storm: no writer stuck, sched=0 left no thread, placement 0x3 puts both actors on the device" \
	storm_after
for kv in sched_theta_low=300 sched_theta=650 sched_theta_low=400 irq_poll_below_us=10 \
	irq_sleep_above_us=50 irq_poll_below_us=20 "sched_weights=500 300 200" sched_epoch_ms=10 \
	sched_dwell_ms=100 sched_lookahead=0 sched_flap_backoff=0 sched_engine_share=0 \
	sched_u_reflux_only=0 sched_min_inflight=125 sched_q_full=32; do
	echo "${kv#*=}" >$P/${kv%%=*}
done

# ---- lifetime ----------------------------------------------------------------------

quiet_rebind() {
	r=0
	for i in 1 2; do
		if [ $i = 2 ]; then
			accepted $P/placement 0x1 || r=1
			accepted $P/sched_theta 700 || r=1
			accepted $P/sched_weights "400 400 200" || r=1
		fi
		unbind || return 1
		[ ! -e $P ] || { echo "cycle $i: $P exists after unbind: $(ls $P)"; r=1; }
		mark bind$i
		bind || return 1
		[ -f $P/placement ] || { echo "cycle $i: no $P/placement after bind"; r=1; }
	done
	sleep 0.3
	{
		echo policy_attack-sentinel
		log_since bind2 | sed 's/^\[[^]]*\] *//; s/[0-9]//g'
	} >/tmp/pa.bind_normal
	{ cat $P/placement; owners; cat $P/sched_theta; cat $P/sched_weights; } >/tmp/pa.after
	return $r
}
tap "unbind removes the directory, bind makes it again (twice)" quiet_rebind
tap_show "after a rebind the placement is the module's again (0x3, both actors on the device)" \
	sh -c "sed -n 1,2p /tmp/pa.after; [ \"\$(sed -n 1,2p /tmp/pa.after)\" = '0x3
device device' ]"
tap_show "after a rebind sched_theta and sched_weights are the module's again (650, 500 300 200)" \
	sh -c "sed -n 3,4p /tmp/pa.after; [ \"\$(sed -n 3,4p /tmp/pa.after)\" = '650
500 300 200' ]"

stale_fds() {
	r=0
	exec 7<$P/placement 8<>$P/placement 9<>$P/sched_theta
	unbind || return 1
	got=$(cat <&7 2>/dev/null)
	[ -z "$got" ] || { echo "a file opened before unbind read '$got' after it"; r=1; }
	bind || return 1
	p0=$(cat $P/placement) t0=$(cat $P/sched_theta) o0=$(owners)
	bounded 10 sh -c 'echo 0x0 >&8; echo 500 >&9'
	[ $? = 124 ] && { echo "writing a file of the unbound device hangs"; r=1; }
	got=$(bounded 10 sh -c 'cat <&8 2>/dev/null')
	[ -z "$got" ] || { echo "a file of the unbound device read '$got' after the rebind"; r=1; }
	[ "$(cat $P/placement) $(cat $P/sched_theta) $(owners)" = "$p0 $t0 $o0" ] ||
		{ echo "a write to a file of the unbound device reached the device bound again:" \
			"'$p0 $t0 $o0' -> '$(cat $P/placement) $(cat $P/sched_theta) $(owners)'"; r=1; }
	exec 7<&- 8<&- 9<&-
	return $r
}
tap "files open across unbind/bind read nothing and their writes reach nothing" stale_fds

structure() {
	r=0
	mkdir $P/sub 2>/dev/null && { echo "mkdir $P/sub accepted"; rmdir $P/sub; r=1; }
	rmdir $P 2>/dev/null && { echo "rmdir $P accepted"; r=1; }
	mkdir $P 2>/dev/null && { echo "mkdir of the existing $P accepted"; r=1; }
	rm -f $P/placement 2>/dev/null
	touch $P/newfile 2>/dev/null
	[ -e $P/newfile ] && { echo "a file was created in $P"; r=1; }
	[ -f $P/placement ] && [ "$(cat $P/placement)" = 0x3 ] ||
		{ echo "$P/placement is gone or changed: $(ls $P 2>&1)"; r=1; }
	return $r
}
tap "mkdir/touch in the directory, rm of a file, rmdir of it, mkdir of its name: refused" structure

# Unbind/bind under writers, readers (one with its cwd in the directory, one
# with files held open) and I/O on the disk.
head -c $((1 << 20)) /dev/urandom >/tmp/pa.1m
rm -f $STOP /tmp/pa.cycles
pids=
loop_placement c >/dev/null 2>&1 & pids="$pids $!"
loop_sched c >/dev/null 2>&1 & pids="$pids $!"
loop_pair sched_theta 700 650 >/dev/null 2>&1 & pids="$pids $!"
loop_weights >/dev/null 2>&1 & pids="$pids $!"
(while [ ! -e $STOP ]; do for f in $P/*; do cat $f; done; done) >/dev/null 2>&1 & pids="$pids $!"
(cd $P && while [ ! -e $STOP ]; do cat ./*; ls; done) >/dev/null 2>&1 & pids="$pids $!"
(while [ ! -e $STOP ]; do cd $P && cat placement sched; cd /; done) >/dev/null 2>&1 & pids="$pids $!"
(exec 5<>$P/sched_theta 6<$P/sched_weights
	while [ ! -e $STOP ]; do echo 700 >&5; echo 650 >&5; done) >/dev/null 2>&1 & pids="$pids $!"
# (fio, not dd: dd of= would create a regular file /dev/reflux0 while the disk
# is gone, which the next bind's node could not replace.)
(while [ ! -e $STOP ]; do
	fio --thread --name=io --filename=/dev/reflux0 --allow_file_create=0 --ioengine=psync \
		--direct=1 --rw=randrw --bs=128k --size=8M --offset=100M --time_based --runtime=1
	sleep 0.1
done) >/dev/null 2>&1 & pids="$pids $!"
sleep 1
for i in 1 2 3; do
	unbind >>/tmp/pa.cycles 2>&1 || echo "cycle $i: unbind failed" >>/tmp/pa.cycles
	[ -e $P ] && echo "cycle $i: $P exists after unbind" >>/tmp/pa.cycles
	sleep 0.3
	bind >>/tmp/pa.cycles 2>&1 || echo "cycle $i: bind failed" >>/tmp/pa.cycles
	[ -f $P/placement ] || echo "cycle $i: no $P/placement after bind" >>/tmp/pa.cycles
	sleep 0.7
done
touch $STOP
reap 30 $pids >>/tmp/pa.cycles 2>&1 && wait $pids
echo 0 >$T/events/reflux/enable
for i in $(seq 1 30); do
	wr $P/sched 0 >/dev/null && [ "$(cat $P/sched)" = 0 ] && break
	sleep 0.1
done
tap_show "3 unbind/bind cycles under writers, readers, open files and disk I/O: directory gone and back, nothing stuck" \
	sh -c '! grep . /tmp/pa.cycles'

att_name() {
	r=0
	unbind || return 1
	mkdir $P || { echo "mkdir of an attachment named reflux0 refused with the device unbound"; return 1; }
	[ -f $P/device ] || { echo "$P is no attachment: $(ls $P)"; r=1; }
	mark att
	bind || return 1
	sleep 0.3
	[ -f $P/placement ] && { echo "$P has policy files: $(ls $P)"; r=1; }
	[ -f $P/device ] || { echo "the attachment reflux0 is gone: $(ls $P 2>&1)"; r=1; }
	log_since att | sed 's/^\[[^]]*\] *//' >/tmp/pa.bind_att
	echo "log at bind:"
	cat /tmp/pa.bind_att
	w=$(sed 's/[0-9]//g' /tmp/pa.bind_att | grep -vxFf /tmp/pa.bind_normal |
		grep -iE 'config|attach|polic|director|exist|name')
	[ -n "$w" ] || { echo "no warning at bind about the attachment named reflux0"; r=1; }
	return $r
}
tap_show "an attachment named reflux0 keeps the device from its directory (it binds; a warning says so)" \
	att_name
att_gone() {
	r=0
	if [ -f $P/device ]; then
		rmdir $P || { echo "rmdir of the attachment reflux0 refused"; return 1; }
	fi
	echo "after rmdir of the attachment: $(ls $CFS | tr '\n' ' ')"
	unbind || return 1
	[ ! -e $P ] || { echo "$P exists with the device unbound: $(ls $P)"; r=1; }
	bind || return 1
	[ -f $P/placement ] || { echo "no policy directory after rebinding: $(ls $CFS)"; return 1; }
	accepted $P/placement 0x3 || r=1
	return $r
}
tap_show "once the attachment is removed, unbind/bind gives the device its directory again" att_gone

after_chaos() {
	[ -b /dev/reflux0 ] || { echo "/dev/reflux0 is no block device: $(ls -l /dev/reflux0 2>&1)"; return 1; }
	fio --thread --name=after --filename=/dev/reflux0 --allow_file_create=0 --ioengine=io_uring --direct=1 \
		--rw=randwrite --bs=4k --iodepth=8 --size=4M --offset=32M --verify=crc32c \
		--do_verify=1 --verify_fatal=1 >/tmp/pa.fio2 2>&1
	fr=$?
	grep -E 'err=|verify' /tmp/pa.fio2 | head -4
	return $fr
}
tap_show "after the chaos: fio write + verify (crc32c) of 4 MiB on /dev/reflux0" after_chaos

# ---- other loads ------------------------------------------------------------------

pinned() {
	reload_reflux "pipeline=2 checksum=1 pinned=4" || return 1
	r=0
	awk '$1 == "actor"' $D/actors
	# crc32c (stage 1, actor 1, not pinned) alone first, on a fresh load.
	if accepted $P/placement 0x1; then
		[ "$(owners)" = "host device" ] || { echo "owners $(owners) after 0x1"; r=1; }
		accepted $P/placement 0x3 || r=1
	else
		r=1
		m=$( (echo "1 host" >$D/migrate) 2>&1) && m="accepted, owners $(owners)"
		echo "(the same move through debugfs, echo '1 host' > migrate: $m)"
		echo "1 device" >$D/migrate 2>/dev/null
	fi
	o0=$(owners) e0=$(epochs)
	refused EPERM $P/placement 0x2 || r=1
	[ "$(owners) $(epochs)" = "$o0 $e0" ] || { echo "an actor moved: $o0 $e0 -> $(owners) $(epochs)"; r=1; }
	msg=$(wr $P/placement 0x0) && { echo "0x0 (lz4 to the host too) accepted"; r=1; }
	echo "0x0: '$msg'; then placement $(cat $P/placement), owners $(owners)"
	echo "$msg" | grep -qi "$(errmsg EPERM)" || { echo "0x0: wanted EPERM"; r=1; }
	return $r
}
tap_show "pinned lz4 (pinned=4): moving crc32c alone works; a placement moving lz4 fails with EPERM" pinned

dispatch_busy() {
	reload_reflux "pipeline=2 checksum=1 dispatch=1" || return 1
	r=0
	reads dispatch=1 sched=0 || r=1
	refused EBUSY $P/sched 1 || r=1
	return $r
}
tap "dispatch=1: dispatch reads 1, sched=1 fails with EBUSY" dispatch_busy

irq_off() {
	reload_reflux "pipeline=0 irq_poll=0" || return 1
	r=0
	reads irq_poll_below_us=off irq_sleep_above_us=off || r=1
	refused EOPNOTSUPP $P/irq_poll_below_us 10 5 || r=1
	refused EOPNOTSUPP $P/irq_sleep_above_us 100 || r=1
	return $r
}
tap "irq_poll=0: the thresholds read off and writes fail with EOPNOTSUPP" irq_off
tap "passthrough (no stages): placement 0x1, 0x2, 0x3 fail with EINVAL" \
	refused EINVAL $P/placement 0x1 0x2 0x3

# The doc: a file still open after an unbind reads and writes nothing; rmmod
# unbinds. Either the open file pins the module (as a debugfs file does) or
# rmmod goes ahead and the file reaches nothing, not even the device loaded again.
rmmod_open() {
	reload_reflux "" >/dev/null || return 1
	exec 7<>$P/sched_theta
	if bounded 30 rmmod reflux; then
		echo "rmmod reflux succeeded with $P/sched_theta open"
		r=0
		got=$(bounded 10 sh -c 'cat <&7 2>/dev/null')
		[ $? = 124 ] && { echo "reading it hangs"; r=1; }
		[ -z "$got" ] || { echo "it read '$got' with the module gone"; r=1; }
		bounded 10 sh -c 'echo 500 >&7'
		[ $? = 124 ] && { echo "writing it hangs"; r=1; }
		reload_reflux "" >/dev/null || { exec 7<&-; return 1; }
		bounded 10 sh -c 'echo 500 >&7'
		[ "$(cat $P/sched_theta)" = 650 ] || { echo "the stale file reached the module loaded again"; r=1; }
		exec 7<&-
		return $r
	fi
	echo "rmmod reflux refused with $P/sched_theta open (the file pins the module)"
	exec 7<&-
	bounded 30 rmmod reflux || { echo "rmmod still refused after the close"; return 1; }
	reload_reflux "" >/dev/null
}
tap_show "rmmod with a policy file open: refused, or the file reaches nothing after it" rmmod_open

final_rmmod() {
	reload_reflux "" >/dev/null || return 1
	bounded 30 rmmod reflux || return 1
	[ ! -e $P ] || { echo "$P outlives the module"; return 1; }
}
tap "rmmod reflux succeeds at the end and takes the directory with it" final_rmmod
reload_reflux "" >/dev/null

log_clean() {
	if dmesg | grep -q 'policy_attack: mark start$'; then
		l=$(log_since start)
	else
		echo "(the start mark has left the log buffer: the whole log)"
		l=$(dmesg)
	fi
	bad=$(echo "$l" | grep -E 'WARNING|BUG|Oops|UBSAN|KASAN|refcount|general protection|INFO: task|circular locking|lockdep|Call Trace')
	[ -z "$bad" ] || { echo "$bad" | head -40; return 1; }
}
tap_show "no kernel warning, oops, BUG, UBSAN/KASAN or refcount report since the suite began" log_clean
ktap_finish
