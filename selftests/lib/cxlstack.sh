# SPDX-License-Identifier: GPL-2.0
# The helpers every suite under selftests/ sources, and tools/vm/init too:
# the VM's parameters from the kernel command line, KTAP output with a plan,
# the suite runner (timeouts from each directory's `settings` file), and the
# stack's own helpers (module parameters, reloading reflux, debugfs fields).
#
# A suite is a script that prints KTAP to its standard output: `ktap_plan N`
# first, then N results from `tap`/`tap_show`, then `ktap_finish`. Skipped as
# a whole it prints `1..0 # SKIP reason` and exits 4 (ktap_skip_all). The
# runner (run_suite) frames its output for tools/vmlog, which fails a suite
# that reports fewer results than its plan.

# Where say and the runner write, appending (init: the tests' serial port); a
# suite writes to its standard output, which the runner sends there. Not
# /dev/stdout: devtmpfs has no such link, and the first write would create a
# file of that name.
OUT=${OUT:-/proc/self/fd/1}

# The VM's parameters: what qemu.sh put on the kernel command line.
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	cxlstack.mode=*) MODE=${arg#cxlstack.mode=} ;;
	cxlstack.suite=*) ONLY_SUITES=$(echo "${arg#cxlstack.suite=}" | tr , ' ') ;;
	cxlstack.bench_only=*) BENCH_ONLY=${arg#cxlstack.bench_only=} ;;
	cxlstack.bench_ccm=*) BENCH_CCM=${arg#cxlstack.bench_ccm=} ;;
	cxlstack.bench_repeat=*) BENCH_REPEAT=${arg#cxlstack.bench_repeat=} ;;
	cxlstack.bench_calib_ns=*) BENCH_CALIB_NS=${arg#cxlstack.bench_calib_ns=} ;;
	cxlstack.bench_seconds=*) BENCH_SECONDS=${arg#cxlstack.bench_seconds=} ;;
	cxlstack.bench_speed=*) BENCH_SPEED=${arg#cxlstack.bench_speed=} ;;
	cxlstack.bench_cores=*) BENCH_CORES=${arg#cxlstack.bench_cores=} ;;
	cxlstack.bench_rise=*) BENCH_RISE=${arg#cxlstack.bench_rise=} ;;
	cxlstack.bench_devcpu=1) BENCH_DEVCPU=1 ;;
	cxlstack.bench_pipeline=*) BENCH_PIPELINE=${arg#cxlstack.bench_pipeline=} ;;
	cxlstack.bench_rounds=*) BENCH_ROUNDS=${arg#cxlstack.bench_rounds=} ;;
	cxlstack.bench_paradigms=*) BENCH_PARADIGMS=$(echo "${arg#cxlstack.bench_paradigms=}" | tr , ' ') ;;
	cxlstack.bench_suites=*) BENCH_SUITES=$(echo "${arg#cxlstack.bench_suites=}" | tr , ' ') ;;
	cxlstack.bench_point_reps=*) BENCH_POINT_REPS=${arg#cxlstack.bench_point_reps=} ;;
	cxlstack.bench_tau=*) BENCH_TAU=${arg#cxlstack.bench_tau=} ;;
	cxlstack.bench_regime=*) BENCH_REGIME=${arg#cxlstack.bench_regime=} ;;
	cxlstack.bench_yield=1) BENCH_YIELD=--poll-yield ;;
	cxlstack.stress_seconds=*) STRESS_SECONDS=${arg#cxlstack.stress_seconds=} ;;
	cxlstack.fuzz_seconds=*) FUZZ_SECONDS=${arg#cxlstack.fuzz_seconds=} ;;
	cxlstack.ccm_window=*) w=${arg#cxlstack.ccm_window=}; CCM_SIZE=${w%@*}; CCM_BASE=${w#*@} ;;
	cxlstack.pmr_window=*) w=${arg#cxlstack.pmr_window=}; PMR_SIZE=${w%@*}; PMR_BASE=${w#*@} ;;
	cxlstack.engine_window=*) w=${arg#cxlstack.engine_window=}; ENGINE_SIZE=${w%@*}; ENGINE_BASE=${w#*@} ;;
	esac
done
MODE=${MODE:-check}
CCM_BASE=${CCM_BASE:-0}
CCM_SIZE=${CCM_SIZE:-0}
KMEMLEAK=/sys/kernel/debug/kmemleak
OUR_MODULES=$(cd /lib/modules/*/extra 2>/dev/null && ls *.ko 2>/dev/null | grep -v '^harness_' | sed 's/\.ko$//')

# ---- KTAP ------------------------------------------------------------------

N=0
FAILED=0
say() { echo "$*" >>"$OUT"; }

# ktap_plan N: the suite's header and its plan of N results.
ktap_plan() { say "TAP version 13"; say "1..$1"; }

# ktap_skip_all REASON: the whole suite is skipped (kselftest's KSFT_SKIP).
ktap_skip_all() { say "TAP version 13"; say "1..0 # SKIP $1"; exit 4; }

# ktap_finish: the suite's exit status, 1 if any result failed.
ktap_finish() { exit $FAILED; }

# tap DESCRIPTION COMMAND...: one result for a command; its output is kept
# (as comments) only when it fails.
tap() {
	desc=$1; shift
	N=$((N + 1))
	if out=$("$@" 2>&1); then
		say "ok $N $desc"
	else
		say "not ok $N $desc"
		FAILED=1
		echo "$out" | sed 's/^/# /' >>"$OUT"
	fi
}

# tap_show DESCRIPTION COMMAND...: as tap, and the command's output always goes
# to the log (as comments), for results worth keeping.
tap_show() {
	desc=$1; shift
	N=$((N + 1))
	if out=$("$@" 2>&1); then
		echo "$out" | sed 's/^/# /' >>"$OUT"
		say "ok $N $desc"
	else
		echo "$out" | sed 's/^/# /' >>"$OUT"
		say "not ok $N $desc"
		FAILED=1
	fi
}

# ---- The runner --------------------------------------------------------------

# The framing tools/vmlog reads (its lib.rs is the contract).
begin() { SUITE=$1; N=0; FAILED=0; say "##cxlstack begin $SUITE"; }
end() { say "##cxlstack end $SUITE rc=${1:-$FAILED}"; SUITE=; }

# suite_timeout DIR: seconds a suite of DIR may run (`timeout=` in its
# `settings` file, as in kselftest; 300 without one).
suite_timeout() {
	t=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$1/settings" 2>/dev/null)
	echo "${t:-300}"
}

# run_prog NAME PROG [ARGS...]: PROG as suite NAME, framed for vmlog, under
# its directory's timeout (SUITE_TIMEOUT overrides it): a suite that overruns
# is killed and fails.
run_prog() {
	name=$1 prog=$2; shift 2
	secs=${SUITE_TIMEOUT:-$(suite_timeout "${prog%/*}")}
	begin "$name"
	if [ ! -x "$prog" ]; then
		say "1..1"
		say "not ok 1 $prog exists"
		end 1
		return
	fi
	timeout "$secs" "$prog" "$@" >>"$OUT" 2>&1
	rc=$?
	# busybox timeout: 143 when it had to kill; GNU timeout: 124.
	if [ $rc = 143 ] || [ $rc = 124 ]; then say "# $name: killed after its ${secs}s timeout"; fi
	end $rc
}

# suite_prog NAME: the program of suite NAME: selftest.AREA/BIN is the binary
# selftests/AREA/BIN, AREA.NAME the script selftests/AREA/NAME.sh.
suite_prog() {
	case $1 in
	selftest.*) echo "/selftests/${1#selftest.}" ;;
	*) echo "/selftests/${1%%.*}/${1#*.}.sh" ;;
	esac
}

# run_suite NAME [ARGS...]: the suite NAME (suite_prog), run by run_prog.
run_suite() {
	name=$1; shift
	run_prog "$name" "$(suite_prog "$name")" "$@"
}

# run_binaries: every selftest binary not driven by a suite script, each its
# own suite (selftest.AREA/NAME).
run_binaries() {
	for t in /selftests/*/*; do
		[ -x "$t" ] && [ -f "$t" ] || continue
		case "${t#/selftests/}" in
		# Driven by a suite script, with the driver loaded as it needs.
		*.sh | reflux/powercut_test | reflux/integrity_test | reflux/migrate_test | \
			reflux/attach_test | reflux/doc_test | reflux/knobs_doc_test | \
			reflux/stress_test) continue ;;
		esac
		run_suite "selftest.${t#/selftests/}"
	done
}

# run_kunit: the KUnit suites' results (KTAP with its own plan), one suite each.
run_kunit() {
	for d in /sys/kernel/debug/kunit/*; do
		[ -r "$d/results" ] || continue
		begin "kunit.${d##*/}"
		cat "$d/results" >>"$OUT"
		end 0
	done
}

# ---- Processes ---------------------------------------------------------------

# alive PID: the process exists and is no zombie.
alive() { [ -r /proc/$1/stat ] && [ "$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)" != Z ]; }

# reap SECS PID...: waits up to SECS seconds for the PIDs to end; names (with
# their kernel stack) those that did not.
reap() {
	rs=$1
	shift
	ri=0
	while :; do
		left=
		for rp in "$@"; do alive "$rp" && left="$left $rp"; done
		[ -z "$left" ] && break
		if [ $ri -ge $((rs * 10)) ]; then
			for rp in $left; do
				echo "stuck after ${rs}s: $rp ($(tr '\0' ' ' </proc/$rp/cmdline 2>/dev/null)) wchan=$(cat /proc/$rp/wchan 2>/dev/null)"
				cat /proc/$rp/stack 2>/dev/null
			done
			return 1
		fi
		sleep 0.1
		ri=$((ri + 1))
	done
	return 0
}

# bounded SECS CMD...: CMD, waited for at most SECS seconds (its output kept
# in a file, so that a hung command holds no pipe of ours); 124 if it hangs.
bounded() {
	bs=$1
	shift
	"$@" >/tmp/bounded.$$ 2>&1 &
	bp=$!
	if ! reap "$bs" $bp >/tmp/bounded.$$.stuck; then
		cat /tmp/bounded.$$ /tmp/bounded.$$.stuck
		return 124
	fi
	wait $bp 2>/dev/null
	br=$?
	cat /tmp/bounded.$$
	return $br
}

# ---- The stack ---------------------------------------------------------------

# The load order of cxl_test: the test builds of the CXL modules replace the
# in-tree ones, and the mock devices need the port/acpi/mem drivers present.
CXL_MODULES="firmware_class libnvdimm cxl_core cxl_mock cxl_port cxl_acpi cxl_mem cxl_pmem cxl_test cxl_mock_mem"

# has_module MODULE: whether MODULE is one of ours in the image.
has_module() { echo "$OUR_MODULES" | grep -qx "$1"; }

# need_module MODULE: a suite that needs MODULE fails with one result (not
# a silent skip) when the image lacks it.
need_module() {
	has_module "$1" && return 0
	ktap_plan 1
	tap "module $1 is in the image" false
	ktap_finish
}

# modparams MODULE: the module's parameters in this mode. The software CCM
# device takes its memory from the window qemu.sh reserves with memmap=.
modparams() {
	case "$1" in
	reflux)
		# The power-cut chain stores compressed, checksummed blocks and, after
		# the first boot, keeps the placement the PMR recovered.
		case "$MODE" in
		powercut-write) echo "pipeline=2 checksum=1" ;;
		powercut-*) echo "pipeline=2 checksum=1 placement=0x100" ;;
		esac
		;;
	reflux_dev)
		echo "pmr_base=$PMR_BASE pmr_window=$PMR_SIZE"
		;;
	cxl_ccm_dev)
		# One line: callers embed it in sh -c strings.
		# The benchmark's graphs have the paper's sizes: one device with the
		# whole window, shared by 4 tenants (about 56 MiB of input each).
		# Everywhere but the benchmark (whose timing it would disturb) and
		# the fuzzer (whose programs write inputs of launches in flight), the
		# device models HDM-H and reports host stores consumed unpublished.
		case "$MODE" in
		bench) echo "mem_base=$CCM_BASE mem_window=$CCM_SIZE dev_mem_size=$((448 << 20)) max_devices=1 max_tenants=4 dilation_milli=${DILATION_MILLI:-1000} poll_idle=1 uthreads=0" ;;
		fuzz | fuzz-replay) echo "mem_base=$CCM_BASE mem_window=$CCM_SIZE" ;;
		*) echo "mem_base=$CCM_BASE mem_window=$CCM_SIZE check_visibility=1" ;;
		esac
		;;
	esac
}

# engine_params: the compression engine's window, when qemu.sh runs the
# engine next to the VM.
engine_params() {
	[ -n "${ENGINE_BASE:-}" ] && echo "engine_base=$ENGINE_BASE engine_window=$ENGINE_SIZE"
}

# pin_threads MASK PATTERN...: the threads whose name matches a PATTERN may
# run only on the CPUs in MASK.
pin_threads() {
	mask=$1; shift
	for t in /proc/[0-9]*; do
		c=$(cat "$t/comm" 2>/dev/null) || continue
		for pat in "$@"; do
			case $c in $pat) taskset -p "$mask" "${t#/proc/}" >/dev/null ;; esac
		done
	done
}

# reload_reflux PARAMS: the reflux driver again, with PARAMS, bound to
# reflux.0; fails if /dev/reflux0 does not appear.
reload_reflux() {
	rmmod reflux 2>/dev/null
	i=0
	if modprobe reflux $1; then
		while [ ! -b /dev/reflux0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	fi
	[ -b /dev/reflux0 ] && return 0
	echo "reflux did not come back with '$1'"
	return 1
}

# with_reflux PARAMS COMMAND...: COMMAND with the driver reloaded with PARAMS;
# a failed reload fails the result, so that no check is silently dropped.
with_reflux() {
	p=$1; shift
	reload_reflux "$p" && "$@"
}

# reflux_dev_again [PARAMS]: the device model again, with its window and PARAMS.
reflux_dev_again() {
	rmmod reflux 2>/dev/null; rmmod reflux_dev
	modprobe reflux_dev $(modparams reflux_dev) "$@"
}

# with_defaults PROG: a suite that is one selftest binary needing the reflux
# driver with its defaults; the driver is loaded with them again after, for
# the suites that follow. Exits with PROG's status.
with_defaults() {
	reload_reflux "" >/dev/null || { ktap_plan 1; tap "reflux loads with its defaults" false; ktap_finish; }
	"$1"
	rc=$?
	reload_reflux "" >/dev/null
	exit $rc
}

stat_reflux() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/reflux0/stats; }

# actor_field ID KEY: a field of actor ID's line in debugfs `actors`.
actor_field() {
	awk -v id="$1" -v k="$2" '$1 == "actor" && $2 == id {
		for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' /sys/kernel/debug/reflux0/actors
}

# cross_placement PIPELINE W R: a pattern written with placement W reads back
# with placement R.
cross_placement() {
	reload_reflux "pipeline=$1 checksum=1 placement=$2" &&
		REFLUX_POWERCUT=fill /selftests/reflux/powercut_test &&
		reload_reflux "pipeline=$1 checksum=1 placement=$3" &&
		REFLUX_POWERCUT=verify /selftests/reflux/powercut_test
}
