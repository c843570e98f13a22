#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# reflux under fio: io_uring with and without polled completion, every block
# verified (crc32c), and the passthrough figures against null_blk's in the
# same VM. --thread: the kernel has no SysV IPC, which fio's processes share
# state through.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"

# fio_figures DEV RW: IOPS and MB/s of 4 KiB random RW on DEV, io_uring, O_DIRECT,
# depth 16, 4 s.
fio_figures() {
	fio --thread --name=f --filename=/dev/$1 --ioengine=io_uring --direct=1 --rw=$2 --bs=4k \
		--iodepth=16 --size=64M --time_based --runtime=4 --output-format=terse \
		--terse-version=3 2>/dev/null |
		awk -F';' -v rw=$2 '{ if (rw ~ /read/) print $8, int($7 / 1024); else print $49, int($48 / 1024) }'
}

ktap_plan 10
reload_reflux "pipeline=2 checksum=1"
tap "fio io_uring randwrite + verify=crc32c (compress + checksum pipeline)" \
	fio --thread --name=v --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=randwrite \
	--bs=4k --iodepth=8 --size=8M --offset=160M --verify=crc32c --do_verify=1
reload_reflux ""
p0=$(stat_reflux polled)
tap "fio io_uring hipri=1 (polled completion) + verify=crc32c" \
	fio --thread --name=p --filename=/dev/reflux0 --ioengine=io_uring --hipri=1 --direct=1 \
	--rw=randwrite --bs=4k --iodepth=8 --size=8M --offset=176M --verify=crc32c \
	--do_verify=1
tap "hipri requests reached the poll queue" [ "$(stat_reflux polled)" -gt "$p0" ]
# The sleep/poll switch of the interrupt thread, its thresholds scaled to
# the emulator (completions are hundreds of microseconds apart here).
reload_reflux "pipeline=0 irq_poll_below_us=5000 irq_sleep_above_us=20000"
set -- $(fio_figures reflux0 randread)
poll_iops=${1:-0}
say "# after QD16 reads: irq_wait $(stat_reflux irq_wait), $(stat_reflux irq_polled) completions found by polling, $(stat_reflux irq_wait_switches) switches"
tap "under QD16 load the interrupt thread polls for completions" [ "$(stat_reflux irq_polled)" -gt 0 ]
for i in $(seq 1 12); do
	dd if=/dev/reflux0 of=/dev/null bs=4k count=1 skip=$i iflag=direct 2>/dev/null; sleep 0.1
done
tap "with reads 100 ms apart it sleeps on the interrupt again" [ "$(stat_reflux irq_wait)" = sleep ]
p1=$(stat_reflux irq_polled)
for i in $(seq 1 6); do
	dd if=/dev/reflux0 of=/dev/null bs=4k count=1 skip=$i iflag=direct 2>/dev/null; sleep 0.1
done
tap "... and polls for nothing" [ "$(stat_reflux irq_polled)" = "$p1" ]
reload_reflux "pipeline=0 irq_poll=0"
set -- $(fio_figures reflux0 randread)
say "# randread 4k qd16: $poll_iops IOPS with the switch (scaled thresholds), ${1:-0} IOPS with irq_poll=0"
tap "irq_poll=0: the interrupt thread never polls" [ "$(stat_reflux irq_polled)" = 0 ]
rmmod reflux
tap "reflux refuses irq_poll_below_us above irq_sleep_above_us" \
	sh -c '! modprobe reflux irq_poll_below_us=60 irq_sleep_above_us=50'
reload_reflux ""
modprobe null_blk queue_mode=2 memory_backed=1 gb=1 irqmode=0 || true
for rw in randread randwrite; do
	set -- $(fio_figures reflux0 $rw)
	r_iops=${1:-0} r_mbs=${2:-0}
	set -- $(fio_figures nullb0 $rw)
	n_iops=${1:-0} n_mbs=${2:-0}
	say "# $rw 4k qd16: reflux0 (passthrough) $r_iops IOPS $r_mbs MB/s," \
		"null_blk $n_iops IOPS $n_mbs MB/s, ratio $(awk -v a=$r_iops -v b=$n_iops \
		'BEGIN { if (b) printf "%.2f", a / b; else print "n/a" }')"
	tap "fio $rw on reflux0 and null_blk gave figures" [ "$r_iops" -gt 0 -a "$n_iops" -gt 0 ]
done
rmmod null_blk
reload_reflux ""
ktap_finish
