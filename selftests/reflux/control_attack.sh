#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# reflux's and cxl_ccm's control interfaces attacked concurrently, written
# from Documentation/reflux.rst and Documentation/cxl_ccm.rst alone (the
# implementation was not read): cross-file rules under two writers at once
# (sched_theta above sched_theta_low, irq_poll_below_us below
# irq_sleep_above_us), two sched writers at once, placement and migrate
# writers with readers under fio's verify, a migration paused by
# migrate_stop while placement, sched and migrate writes, I/O and readers
# pile up behind it (cleared, then with an unbind at phase 1 and 2),
# attachments enabled at once (the limit of 8, overlapping ranges) and across
# an unbind, mkdir racing rmmod, a module reload under readers and writers, a
# policy file held open across rmmod, and cxl_ccm's module reload with its
# device and debugfs files in use. A refusal the documentation does not give,
# a lost or unapplied write, a broken rule, a hang or a kernel report fails.
# Every wait is bounded; a hang prints the stuck task's kernel stack, and a
# paused migration is released before giving up.
. /selftests/lib/cxlstack.sh
need_module reflux
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
R=/sys/kernel/config/reflux
C=$R/reflux0
D=/sys/kernel/debug/reflux0
DRV=/sys/bus/platform/drivers/reflux
T=/tmp/control_attack
rm -rf $T
mkdir -p $T
echo "control_attack: start" >/dev/kmsg

# errname MESSAGE: E becomes the errno a shell error message names.
errname() {
	case "$1" in
	"") E=OK ;;
	*"No such device or address"*) E=ENXIO ;;
	*"No such device"*) E=ENODEV ;;
	*"Invalid argument"*) E=EINVAL ;;
	*"esource busy"*) E=EBUSY ;;
	*"ot supported"*) E=EOPNOTSUPP ;;
	*"not permitted"*) E=EPERM ;;
	*"shutdown"*) E=ESHUTDOWN ;;
	*"imed out"*) E=ETIMEDOUT ;;
	*"already in progress"*) E=EALREADY ;;
	*"No such file"* | *"nonexistent directory"*) E=ENOENT ;;
	*"No space left"*) E=ENOSPC ;;
	*"out of range"* | *"not representable"*) E=ERANGE ;;
	*"Permission denied"*) E=EACCES ;;
	*"temporarily unavailable"*) E=EAGAIN ;;
	*"Interrupted"*) E=EINTR ;;
	*) E="OTHER($1)" ;;
	esac
}

# w FILE VALUE ID: writes VALUE into FILE in this shell (no fork); E says
# how it went (OK or an errno name). ID names the scratch file.
w() {
	if echo "$2" 2>$T/err.$3 >"$1"; then
		E=OK
	else
		m=
		read -r m <$T/err.$3
		errname "${m:-no message}"
	fi
}

# race2 FILE_A VALUE_A FILE_B VALUE_B: two writes started at once (two
# subshells spinning on a go file); RA and RB say how each went.
race2() {
	rm -f $T/go $T/ra $T/rb
	(
		while [ ! -e $T/go ]; do :; done
		w "$1" "$2" a
		echo "$E" >$T/ra
	) &
	r2a=$!
	(
		while [ ! -e $T/go ]; do :; done
		w "$3" "$4" b
		echo "$E" >$T/rb
	) &
	r2b=$!
	sleep 0.02
	: >$T/go
	reap 30 $r2a $r2b || return 1
	read -r RA <$T/ra
	read -r RB <$T/rb
}

nthreads() { cat /proc/[0-9]*/comm 2>/dev/null | grep -cx 'reflux0-sched'; }
# owners_mask: the placement the actors' owners make (bit 0: stage 0, LZ4,
# actor 2; bit 1: stage 1, crc32c, actor 1; set: on the device).
owners_mask() {
	om=0
	[ "$(actor_field 2 owner)" = device ] && om=$((om | 1))
	[ "$(actor_field 1 owner)" = device ] && om=$((om | 2))
	echo $om
}
placement_val() {
	read -r pv <$C/placement
	echo $((pv))
}
# wait_odd ACTOR SECS: waits until the actor's epoch is odd (migrating).
wait_odd() {
	wi=0
	while [ $wi -lt $(($2 * 10)) ]; do
		ep=$(actor_field $1 epoch)
		[ -n "$ep" ] && [ $((ep % 2)) = 1 ] && return 0
		sleep 0.1
		wi=$((wi + 1))
	done
	return 1
}
epochs_even() {
	for a in 1 2; do
		ep=$(actor_field $a epoch)
		[ -n "$ep" ] && [ $((ep % 2)) = 0 ] || {
			echo "actor $a epoch '$ep' (odd: a migration never ended)"
			return 1
		}
	done
}
# wait_bound SECS: waits until the device is bound again, its policy
# directory and its disk back.
wait_bound() {
	wi=0
	while [ $wi -lt $(($1 * 10)) ]; do
		[ -b /dev/reflux0 ] && [ -e $C/placement ] && [ -e $D/actors ] && return 0
		sleep 0.1
		wi=$((wi + 1))
	done
	return 1
}
region_ok() {
	dd if=/dev/reflux0 of=$T/rb bs=64k skip=$1 count=16 iflag=direct 2>/dev/null && cmp -s $T/rb $T/pat
}
# reader STOPFILE: reads every control file until STOPFILE exists; failed
# reads go to reader.err.
reader() {
	while [ ! -e $1 ]; do
		for f in $C/placement $C/sched $C/sched_theta $C/sched_weights $C/irq_poll_below_us \
			$D/actors $D/stats $D/migrations $D/migrate_stop $D/sched; do
			cat $f >/dev/null 2>>$T/reader.err
		done
	done
}
# only_allowed FILE REGEX WHAT: every line of FILE matches REGEX; prints the
# others.
only_allowed() {
	bad_lines=$(grep -v -E "$2" "$1" | sort | uniq -c | head -8)
	[ -z "$bad_lines" ] && return 0
	echo "$3: outcomes the documentation does not give:"
	echo "$bad_lines"
	return 1
}
summary() { sort "$1" | uniq -c | tr '\n' ';' | tr -s ' '; echo; }

dd if=/dev/urandom of=$T/pat bs=64k count=16 2>/dev/null

# ---- The checks ------------------------------------------------------------

files_there() {
	ls $C | tr '\n' ' '
	echo
	for f in placement sched sched_theta sched_theta_low sched_weights irq_poll_below_us irq_sleep_above_us; do
		[ -e $C/$f ] || {
			echo "no $C/$f"
			return 1
		}
	done
	[ "$(placement_val)" = 3 ] && [ "$(owners_mask)" = 3 ]
}

# Two writers of two files with a rule between them, started at once: one
# of the two writes must be refused (EINVAL), the other in effect, the rule
# kept. Before each round the files are reset (FILE_B first: it loosens).
# pair_race FILE_A A0 A1 FILE_B B0 B1 CMP: FILE_A: A0 -> A1, FILE_B: B0 -> B1;
# CMP is gt (a > b must hold) or lt.
pair_race() {
	fa=$1 a0=$2 a1=$3 fb=$4 b0=$5 b1=$6 rel=$7
	won_a=0 won_b=0 bad=0
	for i in $(seq 30); do
		if [ $rel = gt ]; then
			w $C/$fb $b0 s
			w $C/$fa $a0 s
		else
			w $C/$fa $a0 s
			w $C/$fb $b0 s
		fi
		read -r va <$C/$fa
		read -r vb <$C/$fb
		[ "$va $vb" = "$a0 $b0" ] || {
			echo "round $i: reset to $fa=$a0 $fb=$b0 reads $va $vb"
			return 1
		}
		race2 $C/$fa $a1 $C/$fb $b1 || return 1
		read -r va <$C/$fa
		read -r vb <$C/$fb
		case "$RA $RB" in
		"OK EINVAL") won_a=$((won_a + 1)) exp="$a1 $b0" ;;
		"EINVAL OK") won_b=$((won_b + 1)) exp="$a0 $b1" ;;
		*) exp=none ;;
		esac
		if [ $rel = gt ]; then held=$((va > vb)); else held=$((va < vb)); fi
		if [ "$va $vb" != "$exp" ] || [ $held = 0 ]; then
			[ $bad -lt 5 ] && echo "round $i: $fa <- $a1: $RA, $fb <- $b1: $RB; reads $fa=$va $fb=$vb"
			bad=$((bad + 1))
		fi
	done
	echo "30 rounds: $fa won $won_a, $fb won $won_b, $bad broken"
	[ $bad = 0 ]
}
theta_race() {
	pair_race sched_theta 700 500 sched_theta_low 400 600 gt || return 1
	# The scheduler sees what the files say.
	read -r th <$C/sched_theta
	head -1 $D/sched | grep -q " theta $th " || {
		echo "debugfs sched: $(head -1 $D/sched); sched_theta reads $th"
		return 1
	}
	w $C/sched_theta_low 400 s
	w $C/sched_theta 650 s
}
thresh_race() {
	pair_race irq_poll_below_us 10 40 irq_sleep_above_us 50 30 lt || return 1
	w $C/irq_poll_below_us 20 s
	w $C/irq_sleep_above_us 50 s
	[ "$(cat $C/irq_poll_below_us) $(cat $C/irq_sleep_above_us)" = "20 50" ]
}

# sched_agree: waits up to 5 s until the sched file and the scheduler thread
# agree (S: the file, N: threads).
sched_agree() {
	si=0
	while :; do
		read -r S <$C/sched
		N=$(nthreads)
		[ "$S/$N" = 1/1 ] || [ "$S/$N" = 0/0 ] && return 0
		[ $si -ge 50 ] && return 1
		sleep 0.1
		si=$((si + 1))
	done
}
sched_race() {
	bad=0
	w $C/sched 0 s
	for i in $(seq 8); do
		race2 $C/sched 1 $C/sched 1 || return 1
		r="$RA $RB"
		sched_agree
		[ "$r $S/$N" = "OK OK 1/1" ] || {
			echo "round $i: two 'sched 1' at once: $r; then the file $S, $N threads"
			bad=$((bad + 1))
		}
		race2 $C/sched 0 $C/sched 0 || return 1
		r="$RA $RB"
		sched_agree
		[ "$r $S/$N" = "OK OK 0/0" ] || {
			echo "round $i: two 'sched 0' at once: $r; then the file $S, $N threads"
			bad=$((bad + 1))
		}
		race2 $C/sched 1 $C/sched 0 || return 1
		r="$RA $RB"
		sched_agree || {
			echo "round $i: 'sched 1' and 'sched 0' at once: $r; the file says $S with $N threads"
			bad=$((bad + 1))
		}
		[ "$r" = "OK OK" ] || {
			echo "round $i: 'sched 1' and 'sched 0' at once: $r"
			bad=$((bad + 1))
		}
		w $C/sched 0 s
		sched_agree && [ "$S" = 0 ] || {
			echo "round $i: after 'sched 0': the file $S, $N threads"
			bad=$((bad + 1))
		}
	done
	echo "8 rounds, $bad bad"
	[ $bad = 0 ]
}

# What placement reads after a migrate write (the doc: bit i set: stage i
# runs on the device).
placement_reads_owners() {
	w $C/placement 0x3 s
	e1=$E
	w $D/migrate "2 host" s
	e2=$E
	p=$(placement_val)
	m=$(owners_mask)
	echo "placement 0x3: $e1; migrate '2 host': $e2; placement then reads $(cat $C/placement), the owners make $m"
	w $D/migrate "2 device" s
	[ "$e1 $e2" = "OK OK" ] && [ "$m" = 2 ] && [ "$p" = "$m" ] && echo 1 >$T/pl_is_state
	[ -e $T/pl_is_state ]
}

# inv_minus_ctl: per actor, invocations - ctl_runs, with both on the host.
inv_minus_ctl() {
	w $C/placement 0x0 s
	[ $E = OK ] || echo "placement 0x0: $E"
	for a in 1 2; do
		echo "$a:$(($(actor_field $a invocations) - $(actor_field $a ctl_runs)))"
	done | tr '\n' ' '
}

pl_writer() {
	id=$1
	shift
	for v in "$@"; do
		w $C/placement $v $id
		echo "$v $E"
	done
}
mig_writer() {
	for v in "1 host" "2 host" "1 device" "2 device" "2 host" "1 host" "2 device" "1 device" \
		"1 host" "2 host" "2 device" "1 device"; do
		w $D/migrate "$v" mig
		echo "$v $E"
	done
}
placement_race() {
	bad=0
	w $C/sched 0 s
	before=$(inv_minus_ctl)
	w $C/placement 0x3 s
	rm -f $T/stop $T/reader.err
	fio --thread --name=ca --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
		--bs=64k --iodepth=8 --offset=32M --size=8M --time_based --runtime=6 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
		>$T/fio.log 2>&1 &
	pf=$!
	sleep 0.5
	pl_writer p1 0x1 0x2 0x3 0x0 0x1 0x2 0x3 0x0 0x2 0x1 0x3 >$T/p1.log &
	pw1=$!
	pl_writer p2 0x2 0x0 0x3 0x1 0x0 0x3 0x2 0x1 0x1 0x0 0x3 >$T/p2.log &
	pw2=$!
	mig_writer >$T/mig.log &
	pm=$!
	reader $T/stop &
	pr=$!
	reap 120 $pw1 $pw2 $pm || bad=1
	: >$T/stop
	reap 30 $pr || bad=1
	reap 120 $pf || bad=1
	wait $pf
	frc=$?
	echo "placement writers: $(summary $T/p1.log) $(summary $T/p2.log)"
	echo "migrate writer: $(summary $T/mig.log)"
	only_allowed $T/p1.log '^0x[0-3] (OK|ETIMEDOUT|EALREADY)$' placement || bad=1
	only_allowed $T/p2.log '^0x[0-3] (OK|ETIMEDOUT|EALREADY)$' placement || bad=1
	only_allowed $T/mig.log '^[12] (host|device) (OK|EALREADY|ETIMEDOUT)$' migrate || bad=1
	[ -s $T/reader.err ] && {
		echo "reads failed: $(sort $T/reader.err | uniq -c | head -5)"
		bad=1
	}
	[ $frc = 0 ] || {
		echo "fio: rc $frc"
		tail -5 $T/fio.log
		bad=1
	}
	epochs_even || bad=1
	if [ -e $T/pl_is_state ] && [ "$(placement_val)" != "$(owners_mask)" ]; then
		echo "after the race placement reads $(cat $C/placement), the owners make $(owners_mask)"
		bad=1
	fi
	w $C/placement 0x1 s
	[ "$E $(owners_mask) $(placement_val)" = "OK 1 1" ] || {
		echo "placement 0x1 after the race: $E; owners make $(owners_mask); reads $(cat $C/placement)"
		bad=1
	}
	after=$(inv_minus_ctl)
	echo "invocations - ctl_runs per actor, both on the host: before $before, after $after"
	[ "$before" = "$after" ] || {
		echo "a checkpoint was lost or doubled"
		bad=1
	}
	w $C/placement 0x3 s
	[ $bad = 0 ]
}

# A migration paused after its drain (migrate_stop 1) while placement, sched
# and migrate writes, I/O and readers come; then the knob is cleared.
pause_cleared() {
	bad=0
	w $C/sched 0 s
	w $C/placement 0x3 s
	[ "$(owners_mask)" = 3 ] || {
		echo "setup: the owners make $(owners_mask)"
		return 1
	}
	rm -f $T/m1 $T/p1 $T/p2 $T/s1 $T/m2 $T/m3 $T/dd
	w $D/migrate_stop 1 s
	(
		w $D/migrate "2 host" m1
		echo "$E" >$T/m1
	) &
	pm1=$!
	wait_odd 2 20 || {
		echo "actor 2 never paused: $(grep 'actor 2 ' $D/actors)"
		bad=1
	}
	for f in $C/placement $C/sched $C/sched_theta $C/irq_poll_below_us $D/actors $D/stats \
		$D/migrate_stop $D/migrations $D/sched; do
		cat $f >/dev/null &
		pc=$!
		reap 10 $pc || {
			echo "reading $f blocks while a migration is paused"
			bad=1
		}
	done
	(
		w $C/placement 0x1 p1
		echo "$E" >$T/p1
	) &
	pp1=$!
	(
		w $C/placement 0x0 p2
		echo "$E" >$T/p2
	) &
	pp2=$!
	(
		w $C/sched 1 s1
		e=$E
		sleep 0.3
		w $C/sched 0 s1
		echo "$e $E" >$T/s1
	) &
	ps1=$!
	(
		w $D/migrate "1 host" m2
		echo "$E" >$T/m2
	) &
	pm2=$!
	(
		w $D/migrate "2 device" m3
		echo "$E" >$T/m3
	) &
	pm3=$!
	(
		dd if=$T/pat of=/dev/reflux0 bs=64k seek=64 count=16 oflag=direct 2>$T/dd.err
		echo $? >$T/dd
	) &
	pdd=$!
	sleep 2
	left=
	for p in $pm1 $pp1 $pp2 $ps1 $pm2 $pm3 $pdd; do alive $p && left="$left $p"; done
	echo "still waiting with the migration paused:$left (m1 $pm1, placements $pp1 $pp2, sched $ps1, migrates $pm2 $pm3, dd $pdd)"
	w $D/migrate_stop 0 s
	if ! reap 60 $pm1 $pp1 $pp2 $ps1 $pm2 $pm3 $pdd; then
		echo "not done 60 s after migrate_stop was cleared"
		echo 0 >$D/migrate_stop
		reap 60 $pm1 $pp1 $pp2 $ps1 $pm2 $pm3 $pdd
		bad=1
	fi
	for f in m1 p1 p2 s1 m2 m3 dd; do read -r v_$f <$T/$f; done
	echo "migrate '2 host': $v_m1; placement 0x1: $v_p1, 0x0: $v_p2; sched 1, 0: $v_s1; migrate '1 host': $v_m2, '2 device': $v_m3; dd rc $v_dd"
	[ "$v_m1" = OK ] || bad=1
	for v in "$v_p1" "$v_p2"; do case $v in OK | ETIMEDOUT | EALREADY | EBUSY) ;; *) bad=1 ;; esac; done
	[ "$v_s1" = "OK OK" ] || bad=1
	for v in "$v_m2" "$v_m3"; do case $v in OK | ETIMEDOUT | EALREADY) ;; *) bad=1 ;; esac; done
	[ "$v_dd" = 0 ] || {
		cat $T/dd.err
		bad=1
	}
	w $C/sched 0 s
	sched_agree && [ "$S" = 0 ] || {
		echo "sched $S, $N threads"
		bad=1
	}
	epochs_even || bad=1
	if [ -e $T/pl_is_state ] && [ "$(placement_val)" != "$(owners_mask)" ]; then
		echo "placement reads $(cat $C/placement), the owners make $(owners_mask)"
		bad=1
	fi
	region_ok 64 || {
		echo "the blocks dd wrote behind the paused migration do not read back"
		bad=1
	}
	w $C/placement 0x3 s
	[ $E = OK ] && [ "$(owners_mask)" = 3 ] || {
		echo "placement 0x3 afterwards: $E, owners $(owners_mask)"
		bad=1
	}
	[ $bad = 0 ]
}

# unbind_paused PHASE OWNER M1 GEN HOW: the unbind while a migration of
# actor 2 to the host is paused at PHASE, with a placement writer, a sched
# toggler, a policy writer and readers; the migrate write must give M1. HOW
# brings the device back: "bind" through sysfs (the placement module
# parameter, every stage on the device, is applied again), or "keep": a
# reload with placement=0x100, which keeps the owners the PMR records; actor
# 2 must then be owned by OWNER, its generation GEN more than before.
unbind_paused() {
	phase=$1 want_owner=$2 want_m1=$3 want_gen=$4 how=$5
	bad=0
	w $D/migrate_stop 0 s
	w $C/sched 0 s
	w $C/placement 0x3 s
	dd if=$T/pat of=/dev/reflux0 bs=64k seek=128 count=16 oflag=direct 2>/dev/null
	rm -f $T/stop $T/reader.err $T/m1 $T/p1
	gen0=$(actor_field 2 generation)
	w $D/migrate_stop $phase s
	[ $E = OK ] || echo "migrate_stop $phase: $E"
	(
		w $D/migrate "2 host" m1
		echo "$E" >$T/m1
	) &
	pm1=$!
	wait_odd 2 20 || {
		echo "actor 2 never paused: $(grep 'actor 2 ' $D/actors)"
		bad=1
	}
	# Past the drain, the checkpoint ("ready") takes a moment.
	[ $phase -ge 2 ] && sleep 1
	(
		w $C/placement 0x0 p1
		echo "$E" >$T/p1
	) &
	pp1=$!
	(
		j=0
		while [ ! -e $T/stop ] && [ $j -lt 300 ]; do
			w $C/sched 1 s1
			echo "1 $E"
			w $C/sched 0 s1
			echo "0 $E"
			j=$((j + 1))
		done >$T/s1.log
	) &
	ps1=$!
	(
		j=0
		while [ ! -e $T/stop ] && [ $j -lt 300 ]; do
			w $C/irq_poll_below_us 15 t1
			echo "15 $E"
			w $C/sched_theta 700 t1
			echo "700 $E"
			j=$((j + 1))
		done >$T/t1.log
	) &
	pt1=$!
	reader $T/stop &
	pr=$!
	sleep 1
	(
		echo reflux.0 2>$T/unbind.err >$DRV/unbind
		echo $? >$T/unbind
	) &
	pu=$!
	if ! reap 60 $pu; then
		echo "the unbind hangs with a migration paused at $phase; clearing migrate_stop"
		echo 0 >$D/migrate_stop
		reap 60 $pu
		bad=1
	fi
	: >$T/stop
	reap 30 $pm1 $pp1 $ps1 $pt1 $pr || bad=1
	read -r urc <$T/unbind
	read -r m1 <$T/m1
	read -r p1 <$T/p1
	echo "unbind rc $urc; migrate '2 host': $m1; placement 0x0: $p1"
	echo "sched toggler: $(summary $T/s1.log)"
	echo "policy writer: $(summary $T/t1.log)"
	[ "$urc" = 0 ] || bad=1
	[ "$m1" = "$want_m1" ] || {
		echo "the migrate write: $m1, documented: $want_m1"
		bad=1
	}
	case $p1 in ESHUTDOWN | ENODEV | ENOENT | EBUSY) ;; *)
		echo "the placement write: $p1 (ESHUTDOWN documented)"
		bad=1
		;;
	esac
	# EACCES: an O_CREAT open of the shell meeting the directory while
	# configfs removes its files.
	only_allowed $T/s1.log '^[01] (OK|ENOENT|ENODEV|EACCES)$' sched || bad=1
	only_allowed $T/t1.log '^[0-9]+ (OK|ENOENT|ENODEV|EACCES)$' "policy files" || bad=1
	if [ -s $T/reader.err ]; then only_allowed $T/reader.err 'No such file|No such device' reads || bad=1; fi
	n=$(nthreads)
	[ "$n" = 0 ] || {
		echo "$n scheduler threads after the unbind"
		bad=1
	}
	[ -e $C ] && {
		echo "$C is still there after the unbind"
		bad=1
	}
	if [ $how = bind ]; then
		echo reflux.0 >$DRV/bind
	else
		rmmod reflux && modprobe reflux pipeline=2 checksum=1 placement=0x100
	fi
	wait_bound 30 || {
		echo "reflux0 did not come back ($how)"
		return 1
	}
	read -r ms <$D/migrate_stop
	echo "$ms" >$T/ms_after_bind.$phase
	gen1=$(actor_field 2 generation)
	echo "back ($how): actor 2 owner $(actor_field 2 owner), generation $gen0 -> $gen1; migrate_stop reads $ms"
	w $D/migrate_stop 0 s
	[ "$(actor_field 2 owner)" = "$want_owner" ] || bad=1
	[ "$((gen1 - gen0))" = "$want_gen" ] || bad=1
	[ $how = bind ] || reload_reflux "pipeline=2 checksum=1" >/dev/null || bad=1
	epochs_even || bad=1
	region_ok 128 || {
		echo "the blocks written before the unbind do not read back"
		bad=1
	}
	[ $bad = 0 ]
}
migrate_stop_fresh() {
	m1=$(cat $T/ms_after_bind.1)
	m2=$(cat $T/ms_after_bind.2)
	echo "migrate_stop read after the binds that followed unbinds at phase 1 and 2: '$m1' and '$m2'"
	[ "$m1" = 0 ] && [ "$m2" = 0 ]
}

# sched_weights written by two writers while it and the scheduler's view are
# read: every read is one of the triples written, whole (sums to 1000).
weights_torn() {
	bad=0
	rm -f $T/stop $T/wr.err
	w $C/sched 1 s
	(
		for j in $(seq 60); do
			w $C/sched_weights "500 300 200" w1
			[ $E = OK ] || echo "w1 $E"
			w $C/sched_weights "200 300 500" w1
			[ $E = OK ] || echo "w1 $E"
		done >$T/w1.log
	) &
	pw1=$!
	(
		for j in $(seq 60); do
			w $C/sched_weights "400 400 200" w2
			[ $E = OK ] || echo "w2 $E"
			w $C/sched_weights "100 100 800" w2
			[ $E = OK ] || echo "w2 $E"
		done >$T/w2.log
	) &
	pw2=$!
	(
		n=0
		while [ ! -e $T/stop ]; do
			read -r a b c <$C/sched_weights
			case "$a $b $c" in
			"500 300 200" | "200 300 500" | "400 400 200" | "100 100 800") ;;
			*) echo "sched_weights read '$a $b $c'" ;;
			esac
			l=$(head -1 $D/sched)
			wa=${l#* alpha }
			wa=${wa%% *}
			wb=${l#* beta }
			wb=${wb%% *}
			wg=${l#* gamma }
			wg=${wg%% *}
			case "$wa $wb $wg" in
			"500 300 200" | "200 300 500" | "400 400 200" | "100 100 800") ;;
			*) echo "debugfs sched shows alpha $wa beta $wb gamma $wg" ;;
			esac
			n=$((n + 1))
		done >$T/wr.err
	) &
	pr=$!
	reap 60 $pw1 $pw2 || bad=1
	: >$T/stop
	reap 20 $pr || bad=1
	w $C/sched 0 s
	cat $T/w1.log $T/w2.log
	sort $T/wr.err | uniq -c | head -5
	[ -s $T/w1.log ] || [ -s $T/w2.log ] || [ -s $T/wr.err ] && bad=1
	read -r a b c <$C/sched_weights
	l=$(head -1 $D/sched)
	echo "$a $b $c"
	echo "$l" | grep -q " alpha $a beta $b gamma $c " || {
		echo "at rest the file says '$a $b $c', debugfs sched: $l"
		bad=1
	}
	w $C/sched_weights "500 300 200" s
	[ $bad = 0 ]
}

# migrate writes of one actor at once: the generation moves by exactly the
# moves that succeeded, and the owner is where the last one put it.
migrate_race() {
	bad=0 same=0 opp=0
	w $C/sched 0 s
	w $C/placement 0x3 s
	for i in $(seq 12); do
		g0=$(actor_field 2 generation)
		race2 $D/migrate "2 host" $D/migrate "2 host" || return 1
		g1=$(actor_field 2 generation)
		o=$(actor_field 2 owner)
		case "$RA $RB" in
		"OK EALREADY" | "EALREADY OK") [ $((g1 - g0)) = 1 ] && [ $o = host ] && same=$((same + 1)) || {
			echo "round $i: two '2 host': $RA $RB; generation $g0 -> $g1, owner $o"
			bad=$((bad + 1))
		} ;;
		*)
			echo "round $i: two '2 host': $RA $RB; generation $g0 -> $g1, owner $o"
			bad=$((bad + 1))
			;;
		esac
		# From the host: one to the device, one to the host.
		g0=$g1
		race2 $D/migrate "2 device" $D/migrate "2 host" || return 1
		g1=$(actor_field 2 generation)
		o=$(actor_field 2 owner)
		case "$RA $RB" in
		"OK EALREADY") want="1 device" ;;
		"OK OK") want="2 host" ;;
		"EALREADY OK") want="bad" ;;
		*) want=bad ;;
		esac
		if [ "$((g1 - g0)) $o" = "$want" ]; then opp=$((opp + 1)); else
			echo "round $i: '2 device' and '2 host' from the host: $RA $RB; generation $g0 -> $g1, owner $o"
			bad=$((bad + 1))
		fi
		w $D/migrate "2 device" s
		case $E in OK | EALREADY) ;; *) echo "round $i: back to the device: $E" && bad=$((bad + 1)) ;; esac
	done
	echo "12 rounds: $same + $opp consistent, $bad not"
	epochs_even || bad=1
	[ $bad = 0 ]
}

# migrate_stop flipped through 0..3 as fast as it can be written while
# migrate and placement writers move the actors under fio's verify: once the
# knob ends at 0 every write returns (a wake-up lost between a migration's
# look at the knob and its sleep would hang it).
knob_flap() {
	bad=0
	w $D/migrate_stop 0 s
	w $C/sched 0 s
	w $C/placement 0x3 s
	before=$(inv_minus_ctl)
	w $C/placement 0x3 s
	rm -f $T/stop
	fio --thread --name=kf --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
		--bs=64k --iodepth=8 --offset=48M --size=8M --time_based --runtime=5 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
		>$T/fio2.log 2>&1 &
	pf=$!
	(
		j=0
		while [ ! -e $T/stop ] && [ $j -lt 20000 ]; do
			w $D/migrate_stop $((j % 4)) k
			[ $E = OK ] || echo "migrate_stop <- $((j % 4)): $E"
			j=$((j + 1))
		done >$T/knob.log
		w $D/migrate_stop 0 k
		echo "$j writes" >$T/knob.n
	) &
	pk=$!
	(
		for j in $(seq 10); do
			for v in "2 host" "1 host" "2 device" "1 device"; do
				w $D/migrate "$v" km
				echo "$v $E"
			done
		done >$T/km.log
	) &
	pm=$!
	pl_writer kp 0x1 0x2 0x0 0x3 0x2 0x1 0x3 0x0 0x3 >$T/kp.log &
	pp=$!
	if ! reap 90 $pm $pp; then
		echo "writers still blocked after 90 s of flapping; migrate_stop reads $(cat $D/migrate_stop)"
		: >$T/stop
		reap 20 $pk
		echo "the knob is $(cat $D/migrate_stop) now"
		if ! reap 30 $pm $pp; then
			echo "STILL blocked 30 s after migrate_stop ended at 0: a lost wake-up"
			echo 0 >$D/migrate_stop
		fi
		bad=1
	fi
	: >$T/stop
	reap 20 $pk || bad=1
	reap 60 $pf || bad=1
	wait $pf
	frc=$?
	echo "knob: $(cat $T/knob.n), reads $(cat $D/migrate_stop) at the end"
	echo "migrate: $(summary $T/km.log)"
	echo "placement: $(summary $T/kp.log)"
	[ -s $T/knob.log ] && {
		sort $T/knob.log | uniq -c | head -4
		bad=1
	}
	only_allowed $T/km.log '^[12] (host|device) (OK|EALREADY|ETIMEDOUT)$' migrate || bad=1
	only_allowed $T/kp.log '^0x[0-3] (OK|ETIMEDOUT|EALREADY)$' placement || bad=1
	[ $frc = 0 ] || {
		echo "fio: rc $frc"
		tail -5 $T/fio2.log
		bad=1
	}
	epochs_even || bad=1
	after=$(inv_minus_ctl)
	echo "invocations - ctl_runs, both on the host: before $before, after $after"
	[ "$before" = "$after" ] || bad=1
	w $C/placement 0x3 s
	[ "$E $(owners_mask)" = "OK 3" ] || bad=1
	[ $bad = 0 ]
}

# An attachment's value written while it is enabled: the enable checks the
# range, device and start it attaches with (one of the two writes is
# refused; never both accepted with an overlapping, unknown or out-of-range
# attachment enabled).
att_value_race() {
	bad=0
	att_make ax 8M 256K checksum || return 1
	w $R/ax/enable 1 s
	[ $E = OK ] || {
		echo "ax: enable $E"
		return 1
	}
	size=$(($(cat /sys/block/reflux0/size) * 512))
	past=$(((size / 131072 + 8) * 131072))
	for kv in "length 2M EBUSY" "device reflux7 ENODEV" "start $past ERANGE"; do
		set -- $kv
		a1=0 a2=0
		for i in $(seq 10); do
			att_make ay 7M 256K checksum || return 1
			race2 $R/ay/enable 1 $R/ay/$1 $2 || return 1
			read -r en <$R/ay/enable
			case "$RA $RB $en" in
			"OK EBUSY 1") a1=$((a1 + 1)) ;;
			"$3 OK 0") a2=$((a2 + 1)) ;;
			*)
				echo "$1 <- $2 racing enable: enable $RA, $1 $RB; enable reads $en, $1 reads $(cat $R/ay/$1)"
				bad=$((bad + 1))
				;;
			esac
			rmdir $R/ay || bad=$((bad + 1))
		done
		echo "$1 <- $2 racing enable: enable first $a1, $1 first $a2"
	done
	rmdir $R/ax || bad=1
	[ $bad = 0 ]
}

# The device's policy directory is the driver's: a user cannot remove it or
# make directories in it.
policy_dir_protected() {
	out=$(rmdir $C 2>&1)
	rc=$?
	echo "rmdir $C: rc $rc $out"
	out2=$(mkdir $C/sub 2>&1)
	rc2=$?
	echo "mkdir $C/sub: rc $rc2 $out2"
	[ $rc != 0 ] && [ $rc2 != 0 ] && [ -e $C/placement ] || return 1
	w $C/placement 0x1 s
	[ "$E $(owners_mask)" = "OK 1" ] || return 1
	w $C/placement 0x3 s
	[ $E = OK ]
}

# mkdir of an attachment named like the device racing the bind: one of the
# two gets the name; an attachment that won survives the device's unbind
# (the driver removes only its own directory); removed, the next bind makes
# the policy directory again.
name_clash() {
	bad=0 att=0 pol=0
	for i in 1 2 3 4; do
		echo reflux.0 >$DRV/unbind
		[ -e $C ] && {
			echo "round $i: $C still there after the unbind"
			bad=$((bad + 1))
		}
		rm -f $T/go
		(
			while [ ! -e $T/go ]; do :; done
			mkdir $R/reflux0 2>$T/mk.out
			echo $? >$T/mk.rc
		) &
		p1=$!
		(
			while [ ! -e $T/go ]; do :; done
			echo reflux.0 2>$T/bind.out >$DRV/bind
			echo $? >$T/bind.rc
		) &
		p2=$!
		sleep 0.02
		: >$T/go
		reap 60 $p1 $p2 || return 1
		read -r mrc <$T/mk.rc
		read -r brc <$T/bind.rc
		wi=0
		while [ ! -b /dev/reflux0 ] && [ $wi -lt 100 ]; do
			sleep 0.1
			wi=$((wi + 1))
		done
		if [ -e $R/reflux0/enable ]; then what=attachment; elif [ -e $R/reflux0/placement ]; then what=policy; else what="nothing ($(ls $R/reflux0 2>&1 | tr '\n' ' '))"; fi
		[ -b /dev/reflux0 ] || {
			echo "round $i: no disk after the bind (bind rc $brc: $(cat $T/bind.out))"
			bad=$((bad + 1))
		}
		case "$mrc $what" in
		"0 attachment") att=$((att + 1)) ;;
		"1 policy") pol=$((pol + 1)) ;;
		*)
			echo "round $i: mkdir rc $mrc ($(cat $T/mk.out)), bind rc $brc; $R/reflux0 is $what"
			bad=$((bad + 1))
			;;
		esac
		if [ $what = attachment ]; then
			echo reflux.0 >$DRV/unbind
			[ -e $R/reflux0/enable ] || {
				echo "round $i: the unbind removed the user's attachment reflux0"
				bad=$((bad + 1))
			}
			rmdir $R/reflux0 || bad=$((bad + 1))
			echo reflux.0 >$DRV/bind
		fi
		wait_bound 30 || {
			echo "round $i: the policy directory did not come back"
			return 1
		}
	done
	echo "4 rounds: the attachment won $att, the policy directory $pol, $bad bad"
	w $D/migrate_stop 0 s
	w $C/placement 0x3 s
	[ $bad = 0 ]
}

# An attachment's pipeline switched, disabled, removed and made again,
# over and over, while fio writes and verifies its range: the data stays
# readable whatever pipeline stored it, and every switch is accepted.
att_churn() {
	bad=0
	att_make ch 16M 4M compress || return 1
	w $R/ch/enable 1 s
	fio --thread --name=ac --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=randwrite \
		--bsrange=4k-128k --iodepth=8 --offset=16M --size=4M --time_based --runtime=6 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
		--verify_backlog=64 >$T/fio3.log 2>&1 &
	pf=$!
	j=0
	: >$T/churn.log
	while alive $pf && [ $j -lt 200 ]; do
		set -- passthrough compress encrypt checksum
		shift $((j % 4))
		pl=$1
		if [ $((j % 5)) = 4 ]; then
			rmdir $R/ch 2>>$T/churn.log || echo "rmdir failed" >>$T/churn.log
			att_make ch 16M 4M $pl >>$T/churn.log 2>&1 || echo "remake failed" >>$T/churn.log
		else
			w $R/ch/enable 0 s
			[ $E = OK ] || echo "enable 0: $E" >>$T/churn.log
			w $R/ch/pipeline $pl s
			[ $E = OK ] || echo "pipeline $pl: $E" >>$T/churn.log
		fi
		w $R/ch/enable 1 s
		[ $E = OK ] || echo "enable 1 ($pl): $E" >>$T/churn.log
		j=$((j + 1))
	done
	reap 60 $pf || bad=1
	wait $pf
	frc=$?
	echo "$j switches while fio ran; fio rc $frc"
	[ -s $T/churn.log ] && {
		sort $T/churn.log | uniq -c | head -6
		bad=1
	}
	[ $frc = 0 ] || {
		grep -E 'verify|error|bad' $T/fio3.log | head -5
		bad=1
	}
	rmdir $R/ch || bad=1
	[ $j -ge 5 ] || {
		echo "too few switches"
		bad=1
	}
	[ $bad = 0 ]
}

# Migrations caught in their drain: the device's engines slowed
# (reflux_dev speed_permille) under four writers, a migrate write is
# signalled in its drain, then another meets an unbind. The migration gives
# up (the actor stays on the device) or completes, never hangs; the epochs
# end even; the unbind returns.
SP=/sys/module/reflux_dev/parameters/speed_permille
drain_giveup() {
	bad=0
	[ -w $SP ] || {
		echo "$SP is not writable"
		return 1
	}
	read -r sp0 <$SP
	w $D/migrate_stop 0 s
	w $C/sched 0 s
	w $C/placement 0x3 s
	echo 2 >$SP || {
		echo "speed_permille 2 refused"
		return 1
	}
	pids=
	for k in 0 1 2 3; do
		dd if=$T/pat of=/dev/reflux0 bs=128k seek=$((512 + k * 8)) count=4 oflag=direct 2>/dev/null &
		pids="$pids $!"
	done
	sleep 0.5
	(
		w $D/migrate "2 host" d1
		echo "$E" >$T/d1
	) &
	pm=$!
	if wait_odd 2 20; then
		kill -USR1 $pm
		sig=sent
	else
		sig="not sent (the epoch never went odd)"
	fi
	reap 30 $pm || bad=1
	wi=0
	while ! epochs_even >/dev/null && [ $wi -lt 300 ]; do
		sleep 0.1
		wi=$((wi + 1))
	done
	echo "signal $sig; the write: $(cat $T/d1 2>/dev/null || echo killed); actor 2 owner $(actor_field 2 owner); epochs even after $((wi / 10)) s"
	epochs_even || bad=1
	# Again, and the unbind meets it.
	if [ "$(actor_field 2 owner)" = host ]; then
		w $D/migrate "2 device" s
		echo "back to the device: $E"
	fi
	rm -f $T/d2
	(
		w $D/migrate "2 host" d2
		echo "$E" >$T/d2
	) &
	pm=$!
	wait_odd 2 20 || echo "the second migration never went odd"
	(
		echo reflux.0 2>$T/unbind.err >$DRV/unbind
		echo $? >$T/unbind
	) &
	pu=$!
	reap 90 $pu || bad=1
	echo $sp0 >$SP
	reap 30 $pm || bad=1
	reap 90 $pids || bad=1
	read -r d2 <$T/d2
	echo "unbind rc $(cat $T/unbind); the migrate write it met: $d2"
	case $d2 in
	ESHUTDOWN | ETIMEDOUT) want=device ;;
	OK) want=host ;;
	*)
		want=?
		bad=1
		;;
	esac
	rmmod reflux && modprobe reflux pipeline=2 checksum=1 placement=0x100
	wait_bound 30 || {
		echo "reflux0 did not come back"
		return 1
	}
	echo "after a reload keeping the owners: actor 2 on the $(actor_field 2 owner) (expected $want)"
	[ "$(actor_field 2 owner)" = $want ] || bad=1
	epochs_even || bad=1
	reload_reflux "pipeline=2 checksum=1" >/dev/null || bad=1
	[ $bad = 0 ]
}

# The scheduler moving the stages on its own (thresholds close together, a
# short dwell) while migrate writes and parameter writes come, under fio's
# verify: migrate answers only documented errnos, the scheduler stops, no
# checkpoint is lost.
sched_vs_migrate() {
	bad=0
	w $D/migrate_stop 0 s
	w $C/sched 0 s
	before=$(inv_minus_ctl)
	w $C/placement 0x3 s
	for kv in "sched_theta_low 400" "sched_theta 410" "sched_dwell_ms 10"; do
		w $C/${kv%% *} ${kv#* } s
		echo "${kv%% *} <- ${kv#* }: $E"
	done
	w $C/sched 1 s
	[ $E = OK ] || {
		echo "sched 1: $E"
		return 1
	}
	fio --thread --name=sm --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
		--bs=128k --iodepth=8 --offset=56M --size=8M --time_based --runtime=6 \
		--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
		>$T/fio4.log 2>&1 &
	pf=$!
	(
		for j in $(seq 6); do
			for v in "2 host" "1 host" "2 device" "1 device"; do
				w $D/migrate "$v" sm
				echo "$v $E"
				sleep 0.1
			done
		done >$T/sm.log
	) &
	pm=$!
	(
		for j in $(seq 40); do
			w $C/sched_epoch_ms $((5 + j % 3 * 10)) sp
			echo "epoch $E"
			w $C/sched_weights "$((300 + j % 5 * 50)) 300 $((400 - j % 5 * 50))" sp
			echo "weights $E"
			w $C/placement 0x1 sp
			echo "placement $E"
			sleep 0.05
		done >$T/sp.log
	) &
	pp=$!
	reap 90 $pm $pp || bad=1
	reap 90 $pf || bad=1
	wait $pf
	frc=$?
	(
		w $C/sched 0 s
		echo "$E" >$T/sched0
	) &
	ps=$!
	reap 30 $ps || bad=1
	echo "sched 0: $(cat $T/sched0); the scheduler's last lines:"
	tail -3 $D/sched | cut -c1-200
	echo "migrate: $(summary $T/sm.log)"
	echo "parameters: $(summary $T/sp.log)"
	only_allowed $T/sm.log '^[12] (host|device) (OK|EALREADY|ETIMEDOUT)$' "migrate with the scheduler on" || bad=1
	only_allowed $T/sp.log '^(epoch OK|weights OK|placement EBUSY)$' "parameters with the scheduler on" || bad=1
	[ $frc = 0 ] || {
		tail -5 $T/fio4.log
		bad=1
	}
	sched_agree && [ "$S" = 0 ] || {
		echo "after sched 0: the file $S, $N threads"
		bad=1
	}
	epochs_even || bad=1
	for kv in "sched_theta 650" "sched_theta_low 400" "sched_dwell_ms 100" "sched_epoch_ms 10" "sched_weights 500 300 200"; do
		w $C/${kv%% *} "${kv#* }" s
		[ $E = OK ] || echo "restoring ${kv%% *}: $E"
	done
	after=$(inv_minus_ctl)
	echo "invocations - ctl_runs, both on the host: before $before, after $after"
	[ "$before" = "$after" ] || bad=1
	w $C/placement 0x3 s
	[ "$E $(owners_mask)" = "OK 3" ] || bad=1
	[ $bad = 0 ]
}

# ---- Attachments -------------------------------------------------------------

# att_make NAME START LENGTH PIPELINE: a configured, disabled attachment.
att_make() {
	mkdir $R/$1 || return 1
	for kv in "device reflux0" "start $2" "length $3" "pipeline $4"; do
		w $R/$1/${kv%% *} "${kv#* }" s
		[ $E = OK ] || {
			echo "$1: ${kv%% *} <- ${kv#* }: $E"
			return 1
		}
	done
}
enable_limit() {
	bad=0
	for round in 1 2; do
		for i in 0 1 2 3 4 5 6 7 8 9; do att_make ca$i $(((i + 1) * 1024))K 256K checksum || return 1; done
		rm -f $T/go
		pids=
		for i in 0 1 2 3 4 5 6 7 8 9; do
			(
				while [ ! -e $T/go ]; do :; done
				w $R/ca$i/enable 1 e$i
				echo "$E" >$T/en$i
			) &
			pids="$pids $!"
		done
		sleep 0.05
		: >$T/go
		reap 30 $pids || return 1
		ok=0 nospc=0 other=
		for i in 0 1 2 3 4 5 6 7 8 9; do
			read -r e <$T/en$i
			read -r v <$R/ca$i/enable
			case "$e/$v" in
			OK/1) ok=$((ok + 1)) ;;
			ENOSPC/0) nospc=$((nospc + 1)) ;;
			*) other="$other ca$i:$e/reads $v" ;;
			esac
		done
		echo "round $round: $ok enabled, $nospc ENOSPC; otherwise:${other:- none}"
		[ $ok = 8 ] && [ $nospc = 2 ] && [ -z "$other" ] || bad=1
		pids=
		for i in 0 1 2 3 4 5 6 7 8 9; do
			rmdir $R/ca$i 2>>$T/rmdir.err &
			pids="$pids $!"
		done
		reap 30 $pids || bad=1
		[ -s $T/rmdir.err ] && {
			cat $T/rmdir.err
			bad=1
		}
		ls $R | grep -q '^ca' && {
			echo "left: $(ls $R)"
			bad=1
		}
	done
	[ $bad = 0 ]
}
overlap_race() {
	bad=0 first=0 second=0
	for i in $(seq 10); do
		att_make ov0 4M 256K checksum || return 1
		att_make ov1 4224K 256K compress || return 1
		# ov1 starts 128 KiB into ov0: they overlap.
		race2 $R/ov0/enable 1 $R/ov1/enable 1 || return 1
		read -r v0 <$R/ov0/enable
		read -r v1 <$R/ov1/enable
		case "$RA $RB $v0 $v1" in
		"OK EBUSY 1 0") first=$((first + 1)) ;;
		"EBUSY OK 0 1") second=$((second + 1)) ;;
		*)
			echo "round $i: enables gave $RA $RB, read $v0 $v1"
			bad=$((bad + 1))
			;;
		esac
		rmdir $R/ov0 $R/ov1 || bad=$((bad + 1))
	done
	echo "10 rounds: first won $first, second won $second, $bad bad"
	[ $bad = 0 ]
}
# Attachments across an unbind: one toggled, six enabled once each at
# staggered times around the unbind; none may be enabled once the unbind has
# returned, and all attach again after the bind.
att_unbind() {
	bad=0
	for i in 0 1 2 3 4 5 6; do att_make cu$i $(((i + 1) * 1024))K 256K compress || return 1; done
	rm -f $T/stop $T/freeze
	(
		j=0
		while [ ! -e $T/stop ] && [ $j -lt 400 ]; do
			w $R/cu0/enable 1 a
			echo "1 $E"
			if [ $E = OK ] && [ ! -e $T/freeze ]; then
				w $R/cu0/pipeline checksum a
				echo "p $E"
				w $R/cu0/enable 0 a
				echo "0 $E"
			fi
			j=$((j + 1))
		done >$T/a0.log
	) &
	pa=$!
	pids=
	for i in 1 2 3 4 5 6; do
		(
			sleep 0.$((i * 15))
			w $R/cu$i/enable 1 o$i
			echo "$E" >$T/o$i
		) &
		pids="$pids $!"
	done
	sleep 0.1
	(
		echo reflux.0 2>$T/unbind.err >$DRV/unbind
		echo $? >$T/unbind
	) &
	pu=$!
	reap 60 $pu || bad=1
	: >$T/freeze
	reap 30 $pids || bad=1
	sleep 0.3
	: >$T/stop
	reap 30 $pa || bad=1
	echo "unbind rc $(cat $T/unbind); toggler: $(summary $T/a0.log)"
	only_allowed $T/a0.log '^(1 (OK|ENODEV)|p (OK|EBUSY)|0 OK)$' "cu0" || bad=1
	res=
	for i in 0 1 2 3 4 5 6; do
		read -r v <$R/cu$i/enable
		e=-
		[ -e $T/o$i ] && read -r e <$T/o$i
		res="$res cu$i:$e/$v"
		case "$e" in OK | ENODEV | -) ;; *) bad=1 ;; esac
		[ "$v" = 0 ] || bad=1
	done
	echo "after the unbind (write/enable reads):$res"
	echo reflux.0 >$DRV/bind
	wait_bound 30 || {
		echo "no reflux0 after the bind"
		return 1
	}
	res=
	for i in 0 1 2 3 4 5 6; do
		w $R/cu$i/enable 1 s
		read -r v <$R/cu$i/enable
		res="$res cu$i:$E/$v"
		[ "$E/$v" = OK/1 ] || bad=1
	done
	echo "after the bind:$res"
	for i in 0 1 2 3 4 5 6; do rmdir $R/cu$i || bad=1; done
	[ $bad = 0 ]
}

# mkdir of an attachment racing rmmod: either the mkdir fails or the rmmod
# is refused; the module never goes with a directory left.
mkdir_rmmod() {
	bad=0
	rm -f $T/stop $T/mk.err $T/rmmod.err
	(
		j=0
		while [ ! -e $T/stop ] && [ $j -lt 3000 ]; do
			mkdir $R/mr 2>>$T/mk.err && rmdir $R/mr 2>>$T/mk.err
			j=$((j + 1))
		done
	) &
	pm=$!
	sleep 0.2
	n=0 gone=0
	while [ $n -lt 60 ]; do
		if rmmod reflux 2>>$T/rmmod.err; then
			gone=1
			break
		fi
		n=$((n + 1))
		sleep 0.03
	done
	if [ $gone = 1 ] && [ -e $R ]; then
		echo "rmmod succeeded with $R still there: $(ls $R | tr '\n' ' ')"
		bad=1
	fi
	: >$T/stop
	reap 30 $pm || bad=1
	[ -d $R/mr ] && rmdir $R/mr
	echo "rmmod refused $n times, then ${gone}: $(sort $T/rmmod.err | uniq -c | head -2 | tr '\n' ' ')"
	echo "mkdir/rmdir errors: $(sed 's/.*: //' $T/mk.err | sort | uniq -c | tr '\n' ' ')"
	[ $gone = 1 ] || bad=1
	[ -s $T/rmmod.err ] && ! only_allowed $T/rmmod.err 'in use|temporarily unavailable|esource busy' rmmod && bad=1
	# configfs itself answers EINVAL to a mkdir under a subsystem whose
	# module is going (try_module_get fails), ENOENT once it is gone.
	[ -s $T/mk.err ] && ! only_allowed $T/mk.err 'No such file|nonexistent|Invalid argument' "mkdir/rmdir" && bad=1
	reload_reflux "pipeline=2 checksum=1" || bad=1
	[ $bad = 0 ]
}

# The module reloaded while readers and writers of its files run.
reload_rw() {
	bad=0
	rm -f $T/stop $T/rr.err $T/rmmod.err
	(
		while [ ! -e $T/stop ]; do
			for f in $C/sched_theta $C/placement $D/stats $D/actors $D/migrate_stop; do
				cat $f >/dev/null 2>>$T/rr.err
			done
		done
	) &
	pr=$!
	(
		while [ ! -e $T/stop ]; do
			w $C/sched_theta 700 rw
			echo "700 $E"
			w $C/irq_sleep_above_us 60 rw
			echo "60 $E"
			w $C/sched_theta 650 rw
			echo "650 $E"
		done >$T/rw.log
	) &
	pw=$!
	sleep 1
	n=0 gone=0
	while [ $n -lt 80 ]; do
		if rmmod reflux 2>>$T/rmmod.err; then
			gone=1
			break
		fi
		n=$((n + 1))
		sleep 0.03
	done
	echo "rmmod refused $n times before it went: $(sed 's/.*: //' $T/rmmod.err | sort | uniq -c | tr '\n' ' ')"
	[ $gone = 1 ] || {
		echo "rmmod never succeeded with readers of the files running"
		bad=1
	}
	modprobe reflux pipeline=2 checksum=1 || bad=1
	wait_bound 30 || {
		echo "reflux0 did not come back"
		bad=1
	}
	sleep 1
	: >$T/stop
	reap 30 $pr $pw || bad=1
	echo "writers: $(summary $T/rw.log)"
	echo "readers' errors: $(sed 's/.*: //' $T/rr.err | sort | uniq -c | tr '\n' ' ')"
	# EACCES: the shell's O_CREAT open met the directory while its files
	# were being made or removed (configfs has no create).
	only_allowed $T/rw.log '^[0-9]+ (OK|ENOENT|ENODEV|EACCES)$' writers || bad=1
	[ -s $T/rr.err ] && ! only_allowed $T/rr.err 'No such file|No such device' readers && bad=1
	[ -s $T/rmmod.err ] && ! only_allowed $T/rmmod.err 'in use|temporarily unavailable|esource busy' rmmod && bad=1
	w $C/placement 0x1 s
	[ "$E $(owners_mask)" = "OK 1" ] || {
		echo "placement 0x1 after the reload: $E, owners $(owners_mask)"
		bad=1
	}
	w $C/placement 0x3 s
	[ $bad = 0 ]
}

# cxl_ccm's module reloaded with its device file held open and its debugfs
# stats read in a loop.
ccm_reload() {
	bad=0
	n=$(ls -d /sys/bus/platform/drivers/cxl_ccm/cxl_ccm.* 2>/dev/null | sed 's/.*\.//' | sort -n | tail -1)
	[ -n "$n" ] && [ -e /dev/cxl_ccm$n ] || {
		echo "no bound cxl_ccm device"
		return 1
	}
	ndev=$(ls -d /sys/bus/platform/drivers/cxl_ccm/cxl_ccm.* | wc -l)
	rm -f $T/stop $T/hstop $T/cs.err $T/rmmod.err
	(
		exec 6<>/dev/cxl_ccm$n || exit 1
		while [ ! -e $T/hstop ]; do sleep 0.1; done
	) &
	ph=$!
	dbg_reader /sys/kernel/debug/cxl_ccm$n/stats >$T/cs.log &
	pr=$!
	sleep 0.5
	out=$(rmmod cxl_ccm 2>&1)
	rc=$?
	echo "rmmod cxl_ccm with /dev/cxl_ccm$n open: rc $rc $out"
	: >$T/hstop
	reap 10 $ph || bad=1
	i=0 gone=$((rc == 0))
	while [ $gone = 0 ] && [ $i -lt 80 ]; do
		rmmod cxl_ccm 2>>$T/rmmod.err && gone=1
		i=$((i + 1))
		sleep 0.03
	done
	echo "then refused $i times before it went: $(sed 's/.*: //' $T/rmmod.err | sort | uniq -c | tr '\n' ' ')"
	[ $gone = 1 ] || bad=1
	modprobe cxl_ccm $(modparams cxl_ccm) || bad=1
	i=0
	while [ $i -lt 200 ] && [ "$(ls -d /sys/bus/platform/drivers/cxl_ccm/cxl_ccm.* 2>/dev/null | wc -l)" != $ndev ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	: >$T/stop
	reap 30 $pr || bad=1
	[ -e /dev/cxl_ccm$n ] || {
		echo "/dev/cxl_ccm$n did not come back"
		bad=1
	}
	echo "debugfs reads: $(summary $T/cs.log)"
	# debugfs itself refuses an open with ENXIO while the owner module is
	# going (the files name the module as owner).
	only_allowed $T/cs.log '^(read|unbound|open failed: No such file or directory|open failed: No such device or address)$' "debugfs reads racing the unload" || bad=1
	[ -s $T/rmmod.err ] && ! only_allowed $T/rmmod.err 'in use|temporarily unavailable|esource busy' rmmod && bad=1
	[ $bad = 0 ]
}

# dbg_reader FILE: reads FILE until $T/stop exists, a line per read: read,
# unbound, or how it failed.
dbg_reader() {
	while [ ! -e $T/stop ]; do
		if out=$(cat $1 2>&1); then
			case "$out" in *unbound*) echo unbound ;; *) echo read ;; esac
		else
			case "$out" in *"can't open"*) echo "open failed: ${out##*: }" ;; *) echo "read failed: ${out##*: }" ;; esac
		fi
	done
}

# cxl_ccm's debugfs stats read in a loop while its device is unbound and
# bound: the doc says a read racing the unbind gets "unbound", or EIO from
# debugfs once the file is removed (always, for a file opened before the
# unbind and read after it); an open may fail once the directory is gone.
ccm_debugfs_unbind() {
	bad=0
	n=$(ls -d /sys/bus/platform/drivers/cxl_ccm/cxl_ccm.* 2>/dev/null | sed 's/.*\.//' | sort -n | tail -1)
	[ -n "$n" ] || return 1
	f=/sys/kernel/debug/cxl_ccm$n/stats
	# Opened before the unbind, read after it: the most racing read.
	exec 5<$f
	echo cxl_ccm.$n >/sys/bus/platform/drivers/cxl_ccm/unbind || bad=1
	if out=$(cat <&5 2>&1); then
		case "$out" in *unbound*) r=unbound ;; "") r="nothing (EOF)" ;; *) r="the old stats" ;; esac
	else
		r="read failed: ${out##*: }"
		case "$out" in *"Input/output error"*) ;; *) bad=1 ;; esac
	fi
	exec 5<&-
	echo "a read of stats opened before the unbind and read after it: $r"
	echo cxl_ccm.$n >/sys/bus/platform/drivers/cxl_ccm/bind || bad=1
	rm -f $T/stop $T/dbg.log $T/dbg2.log
	dbg_reader $f >$T/dbg.log &
	pr=$!
	dbg_reader $f >$T/dbg2.log &
	pr2=$!
	for c in $(seq 15); do
		sleep 0.15
		echo cxl_ccm.$n >/sys/bus/platform/drivers/cxl_ccm/unbind || bad=1
		sleep 0.1
		echo cxl_ccm.$n >/sys/bus/platform/drivers/cxl_ccm/bind || bad=1
	done
	sleep 0.3
	: >$T/stop
	reap 30 $pr $pr2 || bad=1
	cat $T/dbg2.log >>$T/dbg.log
	echo "reads: $(summary $T/dbg.log)"
	[ -e /dev/cxl_ccm$n ] || {
		echo "/dev/cxl_ccm$n missing at the end"
		bad=1
	}
	grep -q '^read$' $T/dbg.log || bad=1
	only_allowed $T/dbg.log '^(read|unbound|open failed: No such file or directory|read failed: Input/output error)$' "debugfs reads" || bad=1
	[ $bad = 0 ]
}

# A policy file held open (read-write) across rmmod: rmmod is refused, or it
# goes and the file then reaches nothing; closing it afterwards is clean.
held_open_rmmod() {
	bad=0
	exec 8<>$C/sched_theta
	out=$(rmmod reflux 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		echo "rmmod succeeded with $C/sched_theta open"
		r=$(cat <&8 2>&1)
		echo "a read after it: '$r'"
		if echo 700 2>/dev/null >&8; then echo "a write after it succeeded"; else echo "a write after it failed"; fi
	else
		echo "rmmod refused: $out"
	fi
	exec 8<&-
	sleep 1
	dmesg | sed -n '/control_attack: start/,$p' | grep -E 'BUG:|Oops|general protection|WARNING:' && bad=1
	grep -q '^reflux ' /proc/modules || modprobe reflux || bad=1
	[ $bad = 0 ]
}

final_state() {
	epochs_even || return 1
	n=$(nthreads)
	[ "$n" = 0 ] || {
		echo "$n scheduler threads with sched $(cat $C/sched)"
		return 1
	}
	w $C/placement 0x2 s
	[ "$E $(owners_mask)" = "OK 2" ] || {
		echo "placement 0x2: $E, the owners make $(owners_mask)"
		return 1
	}
	w $C/placement 0x3 s
	[ "$E $(owners_mask)" = "OK 3" ]
}
data_intact() {
	region_ok 64 || {
		echo "the blocks written behind the paused migration differ"
		return 1
	}
	region_ok 128 || {
		echo "the blocks written before the unbinds differ"
		return 1
	}
}

klog_clean() {
	if dmesg | sed -n '/control_attack: start/,$p' |
		grep -E 'BUG:|WARNING:|Oops|general protection|INFO: task .* blocked|possible circular|KASAN|UBSAN|refcount_t:|list_(add|del) corruption'; then
		return 1
	fi
	echo "no BUG, WARNING, Oops, hung task or lockdep report since the suite started"
}

ktap_plan 31
reload_reflux "pipeline=2 checksum=1" >/dev/null
tap_show "the policy directory has the documented files; every stage on the device" files_there
tap_show "sched_theta and sched_theta_low written at once: one refused (EINVAL), sched_theta stays above" theta_race
tap_show "irq_poll_below_us and irq_sleep_above_us written at once: one refused, poll stays below sleep" thresh_race
tap_show "two sched writers at once: one scheduler thread, the file and the thread agree" sched_race
tap_show "sched_weights under two writers and readers: every read whole, the scheduler's view agrees" weights_torn
tap_show "placement reads where the stages run after a migrate write" placement_reads_owners
tap_show "two migrate writes of one actor at once: the generation moves by the moves that succeeded" migrate_race
tap_show "placement and migrate writers with readers under fio's verify: documented errnos, state consistent, no checkpoint lost" placement_race
tap_show "a migration paused by migrate_stop under placement, sched, migrate writes, I/O and readers completes once cleared" pause_cleared
tap_show "the scheduler moving stages while migrate, parameter and placement writes come, under fio: documented errnos, no checkpoint lost" sched_vs_migrate
tap_show "migrate_stop flipped 0..3 under migrate and placement writers and fio: every write returns once it is 0" knob_flap
tap_show "unbind with a migration paused at 1 and writers piling up: returns, the move gives up (ESHUTDOWN), data intact" unbind_paused 1 device ESHUTDOWN 0 bind
tap_show "unbind with a migration paused at 2 and writers piling up: returns, the move completes (owner kept across a reload with placement=0x100), data intact" unbind_paused 2 host OK 1 keep
tap_show "no migration pause is armed on a freshly bound device (migrate_stop reads 0)" migrate_stop_fresh
tap_show "migrations caught in a slow drain by a signal and by an unbind: give up or complete, never hang" drain_giveup
w $D/migrate_stop 0 s
w $C/sched 0 s
w $C/placement 0x3 s
tap_show "ten attachments enabled at once: exactly 8 attach, the others ENOSPC" enable_limit
tap_show "two overlapping attachments enabled at once: exactly one attaches, the other EBUSY" overlap_race
tap_show "an attachment's length, device or start written while it is enabled: never both accepted" att_value_race
tap_show "the policy directory cannot be removed or extended by a user" policy_dir_protected
tap_show "mkdir of an attachment named reflux0 racing the bind: one wins, the other gives way, the unbind keeps the user's directory" name_clash
tap_show "an attachment switched, removed and remade under fio's verify of its range" att_churn
tap_show "attachments enabled across an unbind: none stays enabled, all attach again after the bind" att_unbind
tap_show "mkdir of attachments racing rmmod: the module never goes with a directory left" mkdir_rmmod
tap_show "rmmod and modprobe while the policy and debugfs files are read and written" reload_rw
tap_show "cxl_ccm's debugfs stats read across unbind/bind: the stats, 'unbound' or EIO once removed" ccm_debugfs_unbind
tap_show "cxl_ccm reloaded with its device file open and its debugfs stats read in a loop" ccm_reload
tap_show "after the attacks: epochs even, no scheduler thread, a placement write takes effect" final_state
tap_show "blocks written during the attacks read back" data_intact
tap_show "a policy file held open across rmmod reaches nothing and closes cleanly" held_open_rmmod
reload_reflux "pipeline=2 checksum=1" >/dev/null
tap "the driver binds again after everything" wait_bound 10
tap_show "the kernel log is clean" klog_clean
reload_reflux "" >/dev/null
ktap_finish
