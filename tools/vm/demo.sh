# SPDX-License-Identifier: GPL-2.0
# make run: a short tour of the stack, sourced by tools/vm/init in its run
# mode. OUT is ttyS1, which qemu.sh shows on make run's terminal; the kernel's
# messages stay on ttyS0 (LOGDIR/console.log), so the tour reads cleanly.
# make check is the test; this only shows what the pieces do, in four steps:
# the devices, the CCM offload modes, fio through a ReFlux pipeline while a
# stage migrates, and the modules going away.

# The stack's tools, so that the tour shows the commands as a user types them.
PATH=$PATH:/bench

# step TEXT: the line that says what the reader is about to see.
step() { say ""; say "== $*"; }

# show COMMAND...: the command as typed, then its output.
show() { say "\$ $*"; "$@"; }

# quietly SUITE: the suite as make check runs it, its KTAP kept in
# /tmp/SUITE.log rather than on the tour; shown only if the suite fails.
quietly() {
	o=$OUT
	OUT=/tmp/$1.log
	run_suite "$1"
	OUT=$o
	grep -q "^##cxlstack end $1 rc=0" "/tmp/$1.log" && return 0
	say "!! $1 failed:"
	cat "/tmp/$1.log"
	return 1
}

# uptime_ms: milliseconds since boot.
uptime_ms() { awk '{ split($1, a, "."); print a[1] * 1000 + a[2] * 10 }' /proc/uptime; }

# reflux_stat: reflux0's part of `cxlstack stat` (the CCMs were shown in step
# 1), and its I/O counters from the JSON on one line.
reflux_stat() {
	say "\$ cxlstack stat   # reflux0's lines, then counters from --json"
	cxlstack stat | sed -n '/^reflux0:/,$p'
	cxlstack stat --json | awk -F'[":, ]+' '
		$2 ~ /^(submitted|completed|errors|migrations|written_bytes|stored_bytes)$/ {
			printf "%s%s %s", sep, $2, $3; sep = ", " }
		BEGIN { printf "  counters: " }
		END { print "" }'
}

# ReFlux, step 3: fio writes through a compress + checksum pipeline attached
# to the first 32 MiB of /dev/reflux0 and reads every block back (crc32c
# verify) while the LZ4 stage (actor 2) moves from the device to the host.
reflux_tour() {
	show cxlstack attach tour --device reflux0 --start 0 --length 32M --pipeline compress --checksum ||
		return 1
	reflux_stat
	w0=$(stat_reflux written_bytes) s0=$(stat_reflux stored_bytes) n0=$(stat_reflux submitted)
	# Half-compressible buffers, so that LZ4 has something to do; a time
	# limit rather than a size, so that the migration lands mid-run on
	# however fast the emulator is; verify_backlog checks blocks as the run
	# goes, so reads cross the migration too. --thread: the kernel has no
	# SysV IPC for fio's processes.
	set -- --thread --name=tour --filename=/dev/reflux0 --ioengine=io_uring --direct=1 \
		--rw=write --bs=128k --iodepth=8 --size=32M --time_based --runtime=8 \
		--buffer_compress_percentage=50 --refill_buffers \
		--verify=crc32c --verify_backlog=32 --verify_fatal=1
	# The options that matter, on two lines; the rest is above.
	say "\$ fio --filename=/dev/reflux0 --rw=write --bs=128k --iodepth=8 --size=32M --runtime=8 \\"
	say "      --buffer_compress_percentage=50 --verify=crc32c --verify_backlog=32 ... &"
	fio "$@" --output-format=terse --terse-version=3 >/tmp/tour.fio 2>/tmp/tour.fio.err &
	fio_pid=$!
	# Until the writes flow (fio starts its thread first), then 3 s more.
	i=0
	while [ "$(stat_reflux submitted)" = "$n0" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 3
	t0=$(uptime_ms)
	if show cxlstack migrate reflux0 2 host; then
		say "  ($(($(uptime_ms) - t0)) ms: lz4's requests drained, its state checkpointed" \
			"in the PMR; fio kept going)"
	fi
	wait $fio_pid
	rc=$?
	# Terse v3: 5 error, 6 KiB read (the verify), 47 KiB written, 48 KiB/s written.
	# shellcheck disable=SC2046 # four numbers
	set -- $(awk -F';' '{ print $5, int($6 / 1024), int($47 / 1024), int($48 / 1024) }' /tmp/tour.fio)
	if [ $rc = 0 ] && [ "${1:-1}" = 0 ] && [ "${2:-0}" -gt 0 ]; then
		say "fio: PASS: wrote $3 MiB ($4 MiB/s), read back and verified $2 MiB (crc32c), no errors"
	else
		say "fio: FAIL (exit $rc, error ${1:-?}):"
		tail -5 /tmp/tour.fio.err
	fi
	reflux_stat
	w=$(($(stat_reflux written_bytes) - w0)) s=$(($(stat_reflux stored_bytes) - s0))
	[ $w -gt 0 ] && say "  (the SSD stored $((s * 100 / w)) % of the bytes fio wrote: LZ4 at work)"
	show cxlstack detach tour
	[ $rc = 0 ]
}

demo() {
	say "== cxlstack tour: Linux $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs," \
		"NUMA nodes $(ls -d /sys/devices/system/node/node* | sed 's|.*node||' | tr '\n' ' ' | sed 's/ $//')"
	quietly cxl.cxl_test && quietly modules.load || return 1
	cxl=$(ls /sys/bus/cxl/devices/)
	# shellcheck disable=SC2086 # the list on one line
	say "== loaded cxl_test (mock CXL topology: $(echo "$cxl" | grep -c '^mem') memdevs," \
		"$(echo "$cxl" | grep -c '^port') ports) and our modules:" $OUR_MODULES

	step "1/4 The devices: computational memory (cxl_ccmN) and the CXL SSD (reflux0) with its stage actors"
	# configfs: each reflux device's policy (cxlstack shows it) and the attachments.
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
	show cxlstack list

	step "2/4 CCM: the same 16 launches of 16 KiB in each offload mode (every result verified; e2e_us: total time)"
	show ccm_bench --quick --table

	step "3/4 ReFlux: fio through a compress pipeline on /dev/reflux0, the LZ4 stage migrated mid-run"
	reflux_tour

	step "4/4 Unloading our modules"
	quietly modules.unload
	sed -n 's/^ok [0-9]* /  ok: /p; s/^not ok [0-9]* /  FAILED: /p' /tmp/modules.unload.log

	# The kernel's messages are off the terminal: say whether any of them was
	# a report (the patterns tools/vmlog fails make check on).
	r=$(dmesg | grep -v 'Kernel command line' |
		grep -cE 'Oops|BUG:|WARNING:|Kernel panic|KFENCE:|KASAN:|UBSAN:|rcu: INFO:|rust_kernel: panicked|HDM-H violation')
	if [ "$r" = 0 ]; then
		say "== done after $(cut -d. -f1 /proc/uptime) s of uptime; no oops, BUG or WARNING in the kernel log"
	else
		say "== done after $(cut -d. -f1 /proc/uptime) s of uptime; the kernel log has $r report lines: see console.log"
	fi
}
