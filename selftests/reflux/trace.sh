#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The reflux trace events, read through tracefs during a workload on
# /dev/reflux0 (compress pipeline with checksum): every request that enters
# ends, without error, and goes to the device with its placement; LZ4 moves
# to the host in four timed phases, after which its stage runs on the host
# and a buffered read finds the pages it covers stale; a hot device makes the
# scheduler throttle or move a stage. Each event is checked against what the
# test did and the driver's own counters.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs tracefs $T 2>/dev/null || ktap_skip_all "no tracefs"
d=/sys/kernel/debug/reflux0

# ev NAME: the trace lines of event NAME.
ev() { grep " $1: " /tmp/trace.txt; }
# count NAME [AWK-CONDITION]: how many lines of event NAME (meeting the condition).
count() { ev "$1" | awk "${2:-1} { c++ } END { print c + 0 }"; }
# In awk: f(K), the value of the field K= of the current line; n(K), as a number.
F='function f(k,  i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function n(k) { return f(k) + 0 }'

ktap_plan 9
reload_reflux "pipeline=2 checksum=1"
echo 4096 >$T/buffer_size_kb
echo 1 >$T/events/reflux/enable
echo >$T/trace
s0=$(stat_reflux submitted)
yes "reflux traces its requests" | head -c $((4 << 20)) |
	dd of=/dev/reflux0 bs=128k seek=64 oflag=direct 2>/dev/null
sync; echo 3 >/proc/sys/vm/drop_caches
exec 3</dev/reflux0
md5a=$(dd if=/dev/reflux0 bs=1M skip=8 count=4 2>/dev/null | md5sum)
echo "2 host" >$d/migrate
md5b=$(dd if=/dev/reflux0 bs=1M skip=8 count=4 2>/dev/null | md5sum)
exec 3<&-
dd if=/dev/urandom of=/dev/reflux0 bs=128k seek=256 count=8 oflag=direct 2>/dev/null
s1=$(stat_reflux submitted)
cat $T/trace >/tmp/trace.txt
echo 0 >$T/events/reflux/enable
issued=$(count reflux_rq_issue)
say "# $issued requests issued, $(count reflux_rq_submit) submissions ($((s1 - s0)) by the driver's count), $(count reflux_stage_run) host stage runs, $(count reflux_pagecache_stale) stale hits"
tap "every request issued ends, with no error" \
	[ "$issued" -ge 40 -a "$(count reflux_rq_complete "$F n(\"ret\") == 0 && n(\"ns\") > 0")" = "$issued" ]
say "# the first write: $(ev reflux_rq_issue | grep -m1 'dir=write' | grep -o 'reflux0 .*')"
tap "the writes issued cover the 4 MiB written at block 2048, once" \
	[ "$(ev reflux_rq_issue | awk "$F"' f("dir") == "write" && n("lba") >= 2048 && n("lba") < 3072 { b += n("blocks") } END { print b + 0 }')" = 1024 ]
tap "every submission is traced, with the device's steps in its placement" \
	[ "$(count reflux_rq_submit)" = "$((s1 - s0))" -a "$(count reflux_rq_submit "$F f(\"placement\") != \"0x0\"")" -ge 32 ]
tap_show "lz4's move to the host: drain, checkpoint, rebuild, hand-over, each timed" \
	sh -c "grep ' reflux_migrate_phase: ' /tmp/trace.txt | grep -o 'actor=.*'; \
	[ \"\$(grep ' reflux_migrate_phase: ' /tmp/trace.txt | grep 'actor=2 device->host' | grep -o 'phase=[a-z]*' | tr '\n' ' ')\" = 'phase=drain phase=checkpoint phase=rebuild phase=handover ' ]"
tap "after the move lz4 runs on the host, over every block, in measured time" \
	[ "$(count reflux_stage_run "$F f(\"side\") == \"host\" && f(\"stage\") == \"lz4\" && n(\"bytes\") > 0 && n(\"ns\") > 0")" -ge 256 ]
tap "the read after the move met stale pages, and the data is the same" \
	[ "$(count reflux_pagecache_stale "$F n(\"nr\") >= 1")" -ge 1 -a "$md5a" = "$md5b" ]
# A hot device under load: the scheduler reacts by throttling admissions or by
# moving a stage to the host, and the events say which.
reload_reflux "pipeline=2 checksum=1 placement=3 sched=1"
echo >$T/trace
echo 1 >$T/events/reflux/enable
fio --thread --name=t --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
	--bs=128k --iodepth=16 --size=16M --time_based --runtime=4 \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_fatal=1 \
	>/tmp/trace.fio 2>&1 &
fio_pid=$!
i=0
while [ $i -lt 60 ]; do
	echo 76000 >/sys/module/reflux_dev/parameters/thermal_set_mc
	sleep 0.05
	i=$((i + 1))
done
wait $fio_pid
fio_rc=$?
echo 0 >$T/events/reflux/enable
echo 35000 >/sys/module/reflux_dev/parameters/thermal_set_mc
cat $T/trace >/tmp/trace.txt
say "# hot device: $(count reflux_throttle) throttle changes, $(count reflux_migrate_phase) migration phases"
tap_show "a hot device: the scheduler throttled or moved a stage, at the temperature it read" \
	sh -c "ev() { grep \" \$1: \" /tmp/trace.txt; }; ev reflux_throttle | head -3; ev reflux_migrate_phase | head -4;
	ev reflux_throttle | grep -q 'temp_milli_c=7[0-9][0-9][0-9][0-9]' || ev reflux_migrate_phase | grep -q 'device->host'"
tap "fio verified every block meanwhile" [ "$fio_rc" = 0 ]
tap "disabled, the events record nothing" sh -c "echo >$T/trace;
	dd if=/dev/reflux0 of=/dev/null bs=128k count=8 iflag=direct 2>/dev/null; ! grep -q ' reflux_' $T/trace"
reload_reflux ""
ktap_finish
