# SPDX-License-Identifier: GPL-2.0
# The reflux paradigm benchmark (make bench-reflux), sourced by tools/vm/init in
# its bench-reflux mode (bench_reflux_boot); it uses say, reload_reflux and
# pin_threads (selftests/lib/cxlstack.sh), and writes its '##reflux-bench'
# lines (grammar: tools/reflux-bench/src/log.rs) for tools/reflux-bench.
#
# Two parts, both with every block fio writes verified:
# - bench_rounds: sustained 128 KiB sequential writes at depth 32 through one
#   compute pipeline, under each paradigm in turn, ROUNDS times, the paradigms
#   interleaved in each round (so that a drift of the emulator's speed falls on
#   all of them alike);
# - bench_points: short runs for the block-size sweep, the key distributions
#   and the host's CPU time per GiB at queue depths 1, 4 and 32.
#
# Environment (from the kernel command line, tools/vm/qemu.sh): BENCH_SECONDS,
# BENCH_ROUNDS, BENCH_PARADIGMS, BENCH_SUITES, BENCH_PIPELINE, BENCH_DEVCPU,
# BENCH_CALIB_NS.

# The pipeline of the compute runs: AES-XTS then crc32c (the default: compute
# bound, the paper's regime), or LZ4 then crc32c.
bench_pipeline() {
	case "${BENCH_PIPELINE:-encrypt}" in
	compress) PL=2 PLNAME=compress+crc32c ;;
	*) PL=3 PLNAME=encrypt+crc32c ;;
	esac
}

# paradigm_params P: the reflux module's parameters for paradigm P.
paradigm_params() {
	base="pipeline=$PL checksum=1 placement=3"
	# The paper's scheduler as the module loads it: the paper's weights,
	# epoch and dwell; its thresholds (the paper gives none) the module's
	# defaults, not tuned for this benchmark, as no other paradigm is.
	c="$base sched=1"
	case $1 in
	A) echo "$base sched=0" ;;
	# lambda-IO's rule: every request to the side the profile says is faster.
	B) echo "$base dispatch=1" ;;
	# Not the paper's: request-level dispatch that also weighs each side's queue.
	Bq) echo "$base dispatch=2" ;;
	C) echo "$c" ;;
	# C with one of the scheduler's extensions on (Documentation/reflux.rst).
	C+lookahead) echo "$c sched_lookahead=1" ;;
	C+flap) echo "$c sched_flap_backoff=1" ;;
	C+share) echo "$c sched_engine_share=1" ;;
	C+uonly) echo "$c sched_u_reflux_only=1" ;;
	# Not the paper's: every stage on the host, the ceiling of the path B and C share.
	H) echo "pipeline=$PL checksum=1 placement=0 sched=0" ;;
	# No compute stage: the device only stores.
	P) echo "pipeline=0" ;;
	*) return 1 ;;
	esac
}

# load_paradigm P: reflux reloaded for P, its scheduler thread on the host's
# CPU, the device back at ambient so that every run starts alike.
load_paradigm() {
	params=$(paradigm_params "$1") || { say "# unknown paradigm $1"; return 1; }
	reload_reflux "$params" || { say "# reflux did not load with $params"; return 1; }
	[ -n "${BENCH_DEVCPU:-}" ] && pin_threads 1 'reflux*-sched'
	echo 35000 >/sys/module/reflux_dev/parameters/thermal_set_mc
	sleep 1
}

# host_busy_ns: the busy time (not idle, not iowait) of the CPUs the host's
# work runs on, in ns: CPU 0 alone when CPU 1 is the device's.
host_busy_ns() {
	if [ -n "${BENCH_DEVCPU:-}" ]; then sel='$1 == "cpu0"'; else sel='$1 == "cpu"'; fi
	# USER_HZ is 100; %.0f, as busybox awk's %d stops at 2^31.
	awk "$sel"' { b = 0; for (i = 2; i <= 11; i++) if (i != 5 && i != 6) b += $i; printf "%.0f\n", b * 10000000 }' /proc/stat
}

# fio_field N: field N of fio's first terse (version 3) line in /tmp/bench.fio.
fio_field() {
	awk -F';' -v n="$1" '$1 == 3 && !k++ { print $n }' /tmp/bench.fio
}

# fio_sustained SECONDS: the rounds' workload, 128 KiB sequential writes at
# depth 32, each block read back and checked (in batches of eight writes),
# into /tmp/bench.fio (terse) and /tmp/bench.fio.err.
fio_sustained() {
	fio --thread --name=w --filename=/dev/reflux0 --ioengine=io_uring --direct=1 \
		${BENCH_DEVCPU:+--cpus_allowed=0} --rw=write --bs=128k --iodepth=32 --size=128M \
		--time_based --runtime="$1" --buffer_compress_percentage=50 --refill_buffers \
		--verify=crc32c --verify_backlog=8 --verify_fatal=1 --output-format=terse \
		--terse-version=3 >/tmp/bench.fio 2>/tmp/bench.fio.err
}

# bench_regime: the paper's regime in this boot: a device faster than the
# host while cool, and throttled (half speed) at 0.58 of the host-only path H,
# as the paper's B after its collapse is at 0.58 of its start. The device's
# speed is set from H's MB/s, measured here, and the engine's model of the
# pipeline's stages (ps per byte of a host CPU, calibrated at load; the boots
# differ, between 38 and 69 ns/B of AES-XTS, which is why it is set here):
# every block is written and read back (fio's verify), so the device runs
# both stages twice per byte written. Its modelled capacity, cool, is
# BENCH_REGIME permille of H: 1350, because it delivers less than it models
# (the engine's polling, the requests' trips); with 1160 (2 x 0.58) the
# throttled device delivered 0.49 of H, not 0.58 (one boot). BENCH_REGIME=0
# keeps BENCH_SPEED.
bench_regime() {
	k=${BENCH_REGIME:-1350}
	[ "$k" -gt 0 ] || return 0
	ps=$(dmesg | sed -n 's/.*model: crc32c \([0-9]*\) ps\/B, lz4 \([0-9]*\) ps\/B, aes-xts \([0-9]*\) ps\/B.*/\1 \2 \3/p' | tail -1)
	if [ -z "$ps" ]; then
		say "# no engine model in the kernel log: the device's speed stays ${BENCH_SPEED:-100}"
		return 0
	fi
	load_paradigm H || return 0
	fio_sustained 8
	h=$(fio_field 48)
	speed=$(echo "$ps $PL $k ${h:-0}" | awk '{
		c = ($4 == 3 ? $1 + $3 : $1 + $2) * 2
		s = $5 / 1000 * $6 * 1024 * c / 1e9
		if (s < 1) s = 1; if (s > 4000) s = 4000; printf "%d", s }')
	echo "$speed" >/sys/module/reflux_dev/parameters/speed_permille
	say "##reflux-bench info regime_permille=$k regime_h_kibps=${h:-0} engine_ps_per_byte=$(echo $ps | tr ' ' ,) speed_permille=$speed"
}

# run_one P ROUND SECONDS: one paradigm's sustained run, with its timeline.
run_one() {
	p=$1 r=$2 dur=$3
	load_paradigm "$p" || return
	say "##reflux-bench begin $p round=$r"
	say "##reflux-bench info paradigm=$p duration_s=$dur bs=128k qd=32 pipeline=$PLNAME tau_ms=$TAU_MS params=$(echo $params | tr ' ' ,)"
	rm -f /tmp/bench.stop
	/bench/reflux_sampler 250 /tmp/bench.stop >/tmp/bench.samples &
	sampler=$!
	cpu0=$(head -1 /proc/stat)
	fio_sustained "$dur"
	rc=$?
	cpu1=$(head -1 /proc/stat)
	touch /tmp/bench.stop
	wait $sampler
	rm -f /tmp/bench.stop
	t0=$(sed -n 's/^##reflux-bench info t0_monotonic_ms=//p' /tmp/bench.samples)
	cat /tmp/bench.samples >>"$OUT"
	# The first terse line only: a fio that stopped on a verify error prints
	# more than one, which must not run together into one "number".
	bw=$(fio_field 48 | awk '{ printf "%.1f", $1 * 1024 / 1e6 }')
	verify=ok
	[ $rc = 0 ] && ! grep -qi 'verify' /tmp/bench.fio.err || verify=fail
	say "##reflux-bench fio bw_mbps=${bw:-0} verify=$verify errors=$(fio_field 5)"
	# How busy the guest's CPUs were during fio (all CPUs, idle and iowait
	# excluded), and fio's own thread (user and system, % of a CPU).
	say "##reflux-bench info fio_cpu_permille=$(awk -F';' '$1 == 3 && !k++ { printf "%d", 10 * ($88 + $89) }' /tmp/bench.fio) cpu_busy_permille=$(echo "$cpu0 $cpu1" | awk '{
		t0 = 0; for (i = 2; i <= 11; i++) t0 += $i; i0 = $5 + $6
		t1 = 0; for (i = 13; i <= 22; i++) t1 += $i; i1 = $16 + $17
		if (t1 > t0) printf "%d", 1000 * ((t1 - t0) - (i1 - i0)) / (t1 - t0); else print 0 }')"
	[ $verify = ok ] || sed 's/^/# /' /tmp/bench.fio.err >>"$OUT"
	sed -n 's/^actor \([0-9]*\) from \([a-z]*\) to \([a-z]*\) /##reflux-bench migration actor=\1 from=\2 to=\3 /p' \
		/sys/kernel/debug/reflux0/migrations | sed 's/ \([a-z_]*\) \([0-9][0-9]*\)/ \1=\2/g' |
		awk -v t0="${t0:-0}" '{ for (i = 1; i <= NF; i++) if ($i ~ /^t_ms=/) { split($i, a, "="); $i = "t_ms=" a[2] - t0 } print }' >>"$OUT"
	say "##reflux-bench end $p"
	tail -3 /sys/kernel/debug/reflux0/sched 2>/dev/null | sed 's/^/# sched: /' >>"$OUT"
	say "# stats: $(grep -E '^(completed|host_runs|host_shared_scratch|reroutes|migrations) ' /sys/kernel/debug/reflux0/stats | tr '\n' ' ')"
}

# bench_rounds SECONDS: every paradigm of BENCH_PARADIGMS, BENCH_ROUNDS times.
bench_rounds() {
	r=1
	while [ $r -le "${BENCH_ROUNDS:-5}" ]; do
		for p in ${BENCH_PARADIGMS:-A B Bq C C+lookahead C+flap C+share C+uonly H}; do
			run_one "$p" $r "$1"
		done
		r=$((r + 1))
	done
}

# point SUITE P RW BS QD DIST REP SECONDS: one short fio run on the reflux
# already loaded, as a 'point' line (appended to /tmp/bench.points, which
# reads_checked prints). fio verifies writes as they go; a read point reads
# the region region_fill wrote, and passes if the region still reads back as
# written after the suite's reads (reads_checked).
point() {
	suite=$1 p=$2 rw=$3 bs=$4 qd=$5 dist=$6 rep=$7 dur=$8
	case $dist in
	seq) d= ;;
	uniform) d=--random_distribution=random ;;
	zipf) d=--random_distribution=zipf:1.2 ;;
	normal) d=--random_distribution=normal:10 ;;
	pareto) d=--random_distribution=pareto:0.9 ;;
	esac
	case $rw in
	*write) v="--verify=crc32c --verify_backlog=8 --verify_fatal=1 --buffer_compress_percentage=50 --refill_buffers" ;;
	*) v= ;;
	esac
	b0=$(host_busy_ns)
	fio --thread --name=p --filename=/dev/reflux0 --ioengine=io_uring --direct=1 \
		${BENCH_DEVCPU:+--cpus_allowed=0} --rw="$rw" --bs="$bs" --iodepth="$qd" --size=16M \
		--time_based --runtime="$dur" $d $v --output-format=terse --terse-version=3 \
		>/tmp/bench.fio 2>/tmp/bench.fio.err
	rc=$?
	b1=$(host_busy_ns)
	verify=ok
	[ $rc = 0 ] && ! grep -qi 'verify' /tmp/bench.fio.err || verify=fail
	# Terse v3: read KiB, KiB/s, IOPS in fields 6-8; write in 47-49.
	case $rw in *write) f=47 ;; *) f=6 ;; esac
	[ "$p" = P ] && pl=none || pl=$PLNAME
	echo "##reflux-bench point suite=$suite paradigm=$p pipeline=$pl rw=$rw bs=$bs qd=$qd dist=$dist rep=$rep $(
		echo "$(fio_field $f) $(fio_field $((f + 1))) $(fio_field $((f + 2))) $((b1 - b0))" | awk '{
			printf "bw_mbps=%.2f iops=%.0f cpu_ns_per_gib=%.0f", $2 * 1024 / 1e6, $3, ($1 > 0 ? $4 * 1048576 / $1 : 0) }'
	) verify=$verify" >>/tmp/bench.points
	[ $verify = ok ] || sed 's/^/# /' /tmp/bench.fio.err >>"$OUT"
}

# region_fill: the 16 MiB the points use, written with known random bytes.
region_fill() {
	[ -e /tmp/region ] || head -c 16777216 /dev/urandom >/tmp/region
	REGION_SUM=$(md5sum </tmp/region | cut -d' ' -f1)
	dd if=/tmp/region of=/dev/reflux0 bs=1M oflag=direct 2>/dev/null
}

# reads_checked: the points so far, each read point failed if the region no
# longer reads back as region_fill wrote it (one check for a suite's reads: a
# check per point took longer than the point).
reads_checked() {
	if [ -e /tmp/bench.points ] && ! region_check; then
		say "# the region did not read back as written"
		sed -i '/ rw=\(rand\)*read /s/verify=ok/verify=fail/' /tmp/bench.points
	fi
	points_flush
}

# points_flush: the points held so far, into the log.
points_flush() {
	[ -e /tmp/bench.points ] && cat /tmp/bench.points >>"$OUT"
	rm -f /tmp/bench.points
}

# region_check: whether the region reads back as region_fill wrote it.
region_check() {
	[ "$(dd if=/dev/reflux0 bs=1M count=16 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)" = "$REGION_SUM" ]
}

# bench_points: the block-size sweep (sequential, 4 KiB, the device's logical
# block and so the least O_DIRECT request, to 16 MiB, through the store alone
# and the compute pipeline), 4 KiB random I/O under four key
# distributions, and the host's CPU time per GiB at depths 1, 4 and 32; each
# point BENCH_POINT_REPS times, the paradigms interleaved in each repetition.
bench_points() {
	rep=1
	while [ $rep -le "${BENCH_POINT_REPS:-3}" ]; do
		for suite in ${BENCH_SUITES:-bs keys qd}; do
			case $suite in
			bs) ps="P B C" ;;
			keys | qd) ps="B C H" ;;
			*) continue ;;
			esac
			for p in $ps; do
				load_paradigm "$p" || continue
				points_of "$suite" "$p" $rep
			done
		done
		rep=$((rep + 1))
	done
}

# points_of SUITE P REP: one repetition of SUITE's points under P: the reads
# first, on the region as region_fill wrote it, then the writes.
points_of() {
	case $1 in
	bs)
		region_fill
		for bs in 4096 65536 1048576 16777216; do point bs "$2" read $bs 2 seq "$3" 3; done
		reads_checked
		for bs in 4096 65536 1048576 16777216; do point bs "$2" write $bs 2 seq "$3" 3; done
		;;
	keys)
		region_fill
		for dist in uniform zipf normal pareto; do point keys "$2" randread 4096 32 $dist "$3" 3; done
		reads_checked
		for dist in uniform zipf normal pareto; do point keys "$2" randwrite 4096 32 $dist "$3" 3; done
		;;
	qd)
		for qd in 1 4 32; do point qd "$2" write 131072 $qd seq "$3" 4; done
		;;
	esac
	points_flush
}

# bench_dilation_info: how much slower this VM is than the build machine, on
# the reference work of make bench-ccm (bench/calib.h).
bench_dilation_info() {
	[ -n "${BENCH_CALIB_NS:-}" ] && [ "$BENCH_CALIB_NS" -gt 0 ] || return 0
	say "##reflux-bench info calib_host_ns=$BENCH_CALIB_NS calib_guest_ns=$(taskset 1 /bench/ccm_bench --calibrate)"
}

bench_reflux() {
	bench_pipeline
	bench_dilation_info
	bench_regime
	bench_rounds "${BENCH_SECONDS:-15}"
	bench_points
}

# bench_reflux_boot: the whole bench-reflux boot: cxl_test, the CCM modules
# and the device model with the bench's thermal model and engine, its threads
# on CPU 1 with BENCH_DEVCPU; then the benchmark.
bench_reflux_boot() {
	run_suite cxl.cxl_test
	# The thermal time constant: 2 s (the model's default) lets request-level
	# dispatch profile a cool device; the paper's minutes are seconds here.
	TAU_MS=${BENCH_TAU:-2000}
	for m in cxl_ccm cxl_ccm_dev; do modprobe "$m" $(modparams "$m") || say "# modprobe $m failed"; done
	modprobe reflux_dev $(modparams reflux_dev) $(engine_params) thermal_tau_ms=$TAU_MS thermal_rise_mc=${BENCH_RISE:-80000} \
		speed_permille=${BENCH_SPEED:-100} ${BENCH_CORES:+nr_cores=$BENCH_CORES} ||
		say "# modprobe reflux_dev failed"
	if [ -n "${BENCH_DEVCPU:-}" ]; then
		# The device's firmware and engine cores get CPU 1 (isolated at boot:
		# nothing else is scheduled there), the host everything else on CPU 0.
		pin_threads 2 'reflux*-ctl' 'reflux*-core*'
		echo 1 >/sys/devices/virtual/workqueue/cpumask
		say "# device threads on CPU 1: $(for t in /proc/[0-9]*; do case $(cat $t/comm 2>/dev/null) in reflux*) echo "$(cat $t/comm):$(awk '/Cpus_allowed_list/ { print $2 }' $t/status)";; esac; done | tr '\n' ' ')"
	fi
	# Which kernel the figures come from (tools/vm/common.sh): the check flavor has lockdep.
	[ -e /proc/lockdep ] && checks=lockdep || checks=none
	say "##reflux-bench info kernel_debug_checks=$checks"
	[ -n "${ENGINE_BASE:-}" ] && engine=external || engine=none
	say "##reflux-bench info engine=$engine"
	bench_reflux
	rmmod reflux reflux_dev cxl_ccm_dev cxl_ccm 2>/dev/null
}
