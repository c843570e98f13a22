#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The thermal-aware scheduler end to end, under fio writes with verify: a hot
# device makes it upload LZ4 to the host, a cool one brings it back; heat
# right after that offload is a flap, which holds LZ4 on the host longer
# (the sched file counts it and its log line says for how long); once the
# hold has passed and the device is cool, LZ4 goes back again. The flap
# back-off, the lookahead, the engine-share weighting and the ReFlux-only
# host load are extensions, off by default: switched on here, which also
# keeps LZ4 (not crc32c) the stage that moves, and the software device's
# threads (on the same CPUs) from making the host look saturated, which
# would throttle instead of uploading. Then, loaded with sched=1 alone,
# every extension is off.
. /selftests/lib/cxlstack.sh
need_module reflux
command -v fio >/dev/null || ktap_skip_all "fio is not in the initramfs (install it on the host)"

# wait_owner ID OWNER [HOT_MC]: waits up to 8 s for actor ID to be on OWNER;
# with HOT_MC, sets the device's temperature to it every 50 ms meanwhile
# (the thermal model heats or cools toward its load's level otherwise).
wait_owner() {
	i=0
	while [ "$(actor_field "$1" owner)" != "$2" ]; do
		[ $i -lt 160 ] || return 1
		[ -n "${3:-}" ] && echo "$3" >/sys/module/reflux_dev/parameters/thermal_set_mc
		sleep 0.05
		i=$((i + 1))
	done
}

ktap_plan 13
d=/sys/kernel/debug/reflux0
reload_reflux "pipeline=2 checksum=1 placement=3 sched=1 sched_theta=450 sched_theta_low=300 sched_headroom_temp=300 sched_flap_backoff=1 sched_lookahead=1 sched_engine_share=1 sched_u_reflux_only=1"
echo 35000 >/sys/module/reflux_dev/parameters/thermal_set_mc
fio --thread --name=s --filename=/dev/reflux0 --ioengine=io_uring --direct=1 --rw=write \
	--bs=128k --iodepth=16 --size=32M --offset=64M --time_based --runtime=12 \
	--buffer_compress_percentage=50 --refill_buffers --verify=crc32c --verify_backlog=32 \
	--verify_fatal=1 >/tmp/sched.fio 2>&1 &
fio_pid=$!
sleep 1
tap "a hot device (76 C): the scheduler uploads lz4 to the host" wait_owner 2 host 76000
tap "a cool device (35 C): lz4 goes back to the device" wait_owner 2 device 35000
tap "hot again at once: lz4 is uploaded again" wait_owner 2 host 76000
# The kernel log has every move the scheduler made (the sched file only
# its last 32 epochs).
tap_show "that upload was a flap, which holds lz4 on the host" \
	sh -c "grep '^epochs' $d/sched; dmesg | grep -m1 -o 'moved 2:dev->host.* flap hold=[0-9]*ms' &&
		grep -q '^epochs .* flaps [1-9]' $d/sched"
tap "cool again: lz4 goes back once its hold has passed" wait_owner 2 device 35000
# The thermal lookahead's horizon is the time the uploads above took.
tap_show "the scheduler learned how long an upload takes (its lookahead horizon)" \
	sh -c "grep -E '^epochs .* upload_us [1-9][0-9]* horizon_us [1-9][0-9]*$' $d/sched &&
		grep -q ' lookahead_max_ms 500$' $d/sched"
wait $fio_pid
fio_rc=$?
tap_show "the sched file reports the host frequency it scales by (none in the VM)" \
	grep -E '^host_freq_permille ([0-9]+|none)$' $d/sched
tap_show "fio's verify passed while the stages moved" sh -c "tail -4 /tmp/sched.fio; [ $fio_rc = 0 ]"
say "# $(grep '^epochs' $d/sched); $(awk '$1 == "migrations" { print "migrations", $2 }' $d/stats)"
echo 35000 >/sys/module/reflux_dev/parameters/thermal_set_mc
rmmod reflux
tap "reflux refuses sched_flap_window_ms=10001" sh -c '! modprobe reflux sched_flap_window_ms=10001'
tap "reflux refuses sched_max_backoff_ms=60001" sh -c '! modprobe reflux sched_max_backoff_ms=60001'
tap "reflux refuses sched_lookahead_max_ms=10001" sh -c '! modprobe reflux sched_lookahead_max_ms=10001'
tap "reflux refuses sched_lookahead=2" sh -c '! modprobe reflux sched_lookahead=2'
reload_reflux "pipeline=2 checksum=1 placement=3 sched=1"
sleep 0.2
tap_show "with sched=1 alone every extension is off (the paper's scheduler), and it runs" \
	sh -c "head -1 $d/sched; tail -1 $d/sched
		head -1 $d/sched | grep -q ' u_reflux_only 0 engine_share 0 flap_backoff 0 .* lookahead 0 lookahead_max_ms ' &&
		grep -qE '^t_ms [0-9]+ t_dev=[0-9]+ u_host=[0-9]+ ' $d/sched"
reload_reflux ""
ktap_finish
