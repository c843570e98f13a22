#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The power-cut chain (tools/vm/check.sh), one boot at a time.
#
#   powercut.sh check PHASE: after a boot whose power was cut with the
#     migration of actor 2 to the host paused at PHASE (0: none), every
#     acknowledged write reads back and the two-phase commit settled the
#     actor: before "ready" (1) and between "ready" and "active" (2) the
#     source (the device) keeps it, after "active" (3) the destination (the
#     host) has it, one generation on.
#   powercut.sh arm PHASE: starts migrating actor 2 to the host with the pause
#     at PHASE, waits until it is there, then says so for check.sh to cut the
#     power (not a suite: it never returns).
. /selftests/lib/cxlstack.sh

# expect_actor ID OWNER GENERATION: where the actor is after the reboot.
expect_actor() {
	o=$(actor_field "$1" owner); g=$(actor_field "$1" generation); e=$(actor_field "$1" epoch)
	echo "actor $1: owner $o, generation $g, epoch $e"
	[ "$o" = "$2" ] && [ "$g" = "$3" ] && [ $((e % 2)) = 0 ]
}

check() {
	case $1 in
	0) ktap_plan 1 ;;
	1 | 2) ktap_plan 3; owner=device gen=0 how="rolled back to the device" ;;
	3) ktap_plan 3; owner=host gen=1 how="rolled forward to the host" ;;
	esac
	tap "acknowledged writes read back after the power cut" \
		env REFLUX_POWERCUT=verify /selftests/reflux/powercut_test
	if [ "$1" != 0 ]; then
		tap_show "cut at phase $1: actor 2 is on the $owner" expect_actor 2 $owner $gen
		tap "cut at phase $1: the driver said it $how" \
			sh -c "dmesg | grep -q 'actor 2 was migrating at the crash.*: $how'"
	fi
	ktap_finish
}

arm() {
	d=/sys/kernel/debug/reflux0
	echo "$1" >$d/migrate_stop
	(echo "2 host" >$d/migrate) 2>/dev/null &
	i=0
	while [ "$(awk '$1 == "migrate_phase" { print $2 }' $d/stats)" != "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	say "##cxlstack acked"
	sleep 600
}

case "$1" in
check | arm) "$@" ;;
*) echo "usage: $0 check|arm PHASE" >&2; exit 2 ;;
esac
