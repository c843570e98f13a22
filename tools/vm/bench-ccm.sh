# SPDX-License-Identifier: GPL-2.0
# The offload-mode comparison (make bench-ccm), sourced by tools/vm/init in its
# bench mode: cxl_test and our modules loaded with the bench's device, the
# validation against the model on a slow modelled CCM, then the matrix, as
# one suite `bench` whose output tools/ccm-bench reads.
#
# Environment (from the kernel command line, selftests/lib/cxlstack.sh):
# BENCH_CALIB_NS, BENCH_CCM, BENCH_DEVCPU, BENCH_ONLY, BENCH_REPEAT, BENCH_YIELD.

# bench_dilation: the device model's dilation (bench/calib.h), from the
# reference work's time here against its time on the build machine
# (cxlstack.bench_calib_ns; none: make bench DILATION=1, D = 1). Exports
# DILATION_MILLI for modparams.
bench_dilation() {
	DILATION_MILLI=1000
	if [ -n "${BENCH_CALIB_NS:-}" ] && [ "$BENCH_CALIB_NS" -gt 0 ]; then
		guest=$(taskset 1 /bench/ccm_bench --calibrate)
		DILATION_MILLI=$((guest * 1000 / BENCH_CALIB_NS))
		[ "$DILATION_MILLI" -lt 1000 ] && DILATION_MILLI=1000
		[ "$DILATION_MILLI" -gt 1000000 ] && DILATION_MILLI=1000000
		say "== dilation: the reference work took $guest ns here, $BENCH_CALIB_NS ns natively: dilation_milli=$DILATION_MILLI"
	else
		say "== dilation: none (make bench DILATION=1): dilation_milli=1000"
	fi
	export DILATION_MILLI
}

# bench_device EXTRA: cxl_ccm_dev again with the bench's parameters and EXTRA
# (later parameters win), its threads on the device's CPU in bench mode.
bench_device() {
	local i=0
	rmmod cxl_ccm_dev || return 1
	modprobe cxl_ccm_dev $(modparams cxl_ccm_dev) $1 || return 1
	while [ $i -lt 100 ] && [ ! -e /dev/cxl_ccm0 ]; do sleep 0.05; i=$((i + 1)); done
	[ -n "${BENCH_DEVCPU:-}" ] && pin_threads 2 'cxl_ccm.*'
	[ -e /dev/cxl_ccm0 ]
}

# bench_ccm: the whole bench boot.
bench_ccm() {
	run_suite cxl.cxl_test
	bench_dilation
	run_suite modules.load
	# The ReFlux stack goes: its device model's threads wake on timers on
	# CPU 0 (the control thread at real-time priority) and took 4-7 % of the
	# host's CPU in the middle of the modes' runs (traced).
	UNLOADED="reflux_dev reflux"
	rmmod $UNLOADED || say "# could not unload $UNLOADED"
	export UNLOADED
	host=
	if [ -n "${BENCH_DEVCPU:-}" ]; then
		# The device model's engine and µthreads get CPU 1 (isolated at
		# boot), the bench, the driver's pollers and workqueues CPU 0: the
		# device's compute no longer takes the host's time (ccm_bench
		# records both placements in every run).
		pin_threads 2 'cxl_ccm.*'
		echo 1 >/sys/devices/virtual/workqueue/cpumask
		host="taskset 1"
	fi
	# The validation's median over at least 15 repetitions (a repetition of
	# its four modes takes under a second): robust to a few runs that the
	# machine's own scheduling disturbed, which 5 were not on every boot.
	vreps=${BENCH_REPEAT:-5}
	[ "$vreps" -lt 15 ] && vreps=15
	begin bench
	# First the validation (tools/ccm-bench checks it against the model) on a
	# slow modelled CCM, then the matrix (ONLY=validate: the validation alone).
	{
		bench_device "ccm_units=1 ccm_uthreads_per_unit=4 ccm_clock_mhz=6" &&
			$host /bench/ccm_bench --validate --repeat "$vreps" ${BENCH_YIELD:-} &&
			bench_device "$(echo "${BENCH_CCM:-}" | tr , ' ')" &&
			if [ "${BENCH_ONLY:-}" != validate ]; then
				$host /bench/ccm_bench --repeat "${BENCH_REPEAT:-5}" \
					${BENCH_ONLY:+--only "$BENCH_ONLY"} ${BENCH_YIELD:-}
			fi
	} >>"$OUT" 2>&1
	end $?
	run_suite modules.unload
}
