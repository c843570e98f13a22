#!/bin/bash
# Boot the test VM once and wait for it to power off.
#
#   qemu.sh MODE LOGDIR     MODE: one of tools/vm/init's (check, run, bench, ...)
#
# Environment: KERNEL_IMAGE, INITRAMFS, VM_TIMEOUT (seconds, default 900),
# PMR_FILE (the PMR's backing file, default LOGDIR/pmr.img), PMR_KEEP=1 (boot
# on the existing PMR file instead of a fresh one: the power-cut test),
# VM_POWERCUT=1 (QEMU killed with SIGKILL is the expected end: exit 0), ENGINE_BIN (the
# compression engine process to run next to QEMU, below).
# Writes LOGDIR/console.log (ttyS0: the kernel console) and LOGDIR/tests.log
# (ttyS1: test output; make run shows it on the terminal too). Exits with
# QEMU's status, 124 if the timeout hit.
#
# The machine: TCG (KVM only if CXLSTACK_KVM=1 and /dev/kvm answers), 2 vCPUs,
# 2 GiB in two NUMA nodes: node 0 has the CPUs, node 1 is memory-only, as a
# CXL memory expander appears to the OS (cxl_test also needs two nodes).
set -euo pipefail
. "$(dirname "$0")/common.sh"

mode=$1
logdir=$2
: "${KERNEL_IMAGE:?}" "${INITRAMFS:?}"
mkdir -p "$logdir"
rm -f "$logdir/console.log" "$logdir/tests.log" "$logdir/fuzz.log"

accel=tcg
cpu=max
if [ "${CXLSTACK_KVM:-0}" = 1 ] && [ -w /dev/kvm ]; then
	accel=kvm
	cpu=host
fi

# The top 512 MiB of node 1 are reserved (memmap=) as the software CCM
# devices' memory: physical memory the page allocator never hands out.
ccm_base=0x60000000
ccm_size=0x20000000
# Node 2 is the software CXL SSD's persistent memory region (PMR): guest
# memory backed by a shared host file, so that what the guest stored in it is
# still in the file when QEMU dies (the device's power-loss protection).
# Reserved whole; it follows nodes 0 and 1 in the guest's physical space.
# Above it node 2 has 64 MiB the kernel manages (memory without CPUs, as a
# CXL SSD's memory onlined by dax/kmem): the node the page cache of
# /dev/reflux0 is allocated from.
pmr_base=0x80000000
pmr_size=0x10000000
node2_size=$((pmr_size + 0x4000000))
pmr_file=${PMR_FILE:-$logdir/pmr.img}
if [ "${PMR_KEEP:-0}" != 1 ]; then
	rm -f "$pmr_file"
fi
[ -e "$pmr_file" ] || truncate -s $((node2_size)) "$pmr_file"
# ENGINE_BIN=path (make bench-reflux REFLUX_ENGINE=1): the device's compression engine runs
# in that process outside the VM, on the top 2 MiB of the reserved PMR range, which it maps
# through the same shared file (tools/testing/reflux/engine_abi.rs); the PMR is 2 MiB smaller.
pmr_window=$pmr_size
engine_pid=
if [ -n "${ENGINE_BIN:-}" ]; then
	engine_size=0x200000
	pmr_window=$((pmr_size - engine_size))
fi
# no5lvl: 4-level paging. identify_boot_cpu() clears boot_cpu_data's feature
# bits and refills them; until then pgtable_l5_enabled() reads false, and an
# interrupt taken in that window (wide under TCG) touches the 5-level direct
# map at addresses KASAN then calls wild: a false report in about 1 boot of 5
# on the kasan kernel (BUG: KASAN: wild-memory-access in do_raw_spin_lock,
# from handle_edge_irq over identify_cpu). The VM needs no 57-bit addresses.
append="console=ttyS0 panic=-1 oops=panic loglevel=7 no5lvl cxlstack.mode=$mode"
append+=" memmap=$((ccm_size >> 20))M\$$ccm_base cxlstack.ccm_window=$ccm_size@$ccm_base"
append+=" memmap=$((pmr_size >> 20))M\$$pmr_base cxlstack.pmr_window=$pmr_window@$pmr_base"
if [ -n "${ENGINE_BIN:-}" ]; then
	append+=" cxlstack.engine_window=$engine_size@$((pmr_base + pmr_window))"
	"$ENGINE_BIN" "$pmr_file" "$pmr_window" >"$logdir/engine.log" 2>&1 &
	engine_pid=$!
	trap 'kill "$engine_pid" 2>/dev/null; wait "$engine_pid" 2>/dev/null' EXIT
fi
# make bench ONLY=WORKLOAD REPEAT=N: a part of the matrix (bench/ccm_bench --only, --repeat).
[ -n "${BENCH_ONLY:-}" ] && append+=" cxlstack.bench_only=$BENCH_ONLY"
# make bench CCM=name=value,...: the modelled CCM of the matrix (cxl_ccm_dev parameters).
[ -n "${BENCH_CCM:-}" ] && append+=" cxlstack.bench_ccm=$BENCH_CCM"
[ -n "${BENCH_REPEAT:-}" ] && append+=" cxlstack.bench_repeat=$BENCH_REPEAT"
[ -n "${BENCH_CALIB_NS:-}" ] && append+=" cxlstack.bench_calib_ns=$BENCH_CALIB_NS"
[ -n "${BENCH_YIELD:-}" ] && append+=" cxlstack.bench_yield=1"
# make check SUITE=name,...: those suites alone (tools/vm/init).
[ -n "${SUITE:-}" ] && append+=" cxlstack.suite=$SUITE"
# make stress DURATION=N (tools/vm/stress.sh): seconds of each stress phase.
[ -n "${STRESS_SECONDS:-}" ] && append+=" cxlstack.stress_seconds=$STRESS_SECONDS"
# make fuzz SECONDS=N (tools/vm/fuzz.sh): how long the fuzzer runs.
[ -n "${FUZZ_SECONDS:-}" ] && append+=" cxlstack.fuzz_seconds=$FUZZ_SECONDS"
# make bench-reflux REFLUX_SECONDS=N: seconds of each paradigm's run.
[ -n "${BENCH_SECONDS:-}" ] && append+=" cxlstack.bench_seconds=$BENCH_SECONDS"
# make bench-reflux REFLUX_SPEED=P: the device engine's speed in permille of the host's.
[ -n "${BENCH_SPEED:-}" ] && append+=" cxlstack.bench_speed=$BENCH_SPEED"
[ -n "${BENCH_CORES:-}" ] && append+=" cxlstack.bench_cores=$BENCH_CORES"
# make bench-reflux REFLUX_RISE=MC: the thermal model's rise at full load, in milli-degrees C.
[ -n "${BENCH_RISE:-}" ] && append+=" cxlstack.bench_rise=$BENCH_RISE"
# make bench-reflux REFLUX_PIPELINE=compress|encrypt: the pipeline of the writes.
[ -n "${BENCH_PIPELINE:-}" ] && append+=" cxlstack.bench_pipeline=$BENCH_PIPELINE"
# make bench-reflux REFLUX_ROUNDS=N REFLUX_PARADIGMS=A,B,... REFLUX_SUITES=bs,keys,qd|none
# REFLUX_POINT_REPS=N REFLUX_TAU=MS REFLUX_REGIME=PERMILLE (tools/vm/bench-reflux.sh).
[ -n "${BENCH_ROUNDS:-}" ] && append+=" cxlstack.bench_rounds=$BENCH_ROUNDS"
[ -n "${BENCH_PARADIGMS:-}" ] && append+=" cxlstack.bench_paradigms=$BENCH_PARADIGMS"
[ -n "${BENCH_SUITES:-}" ] && append+=" cxlstack.bench_suites=$BENCH_SUITES"
[ -n "${BENCH_POINT_REPS:-}" ] && append+=" cxlstack.bench_point_reps=$BENCH_POINT_REPS"
[ -n "${BENCH_TAU:-}" ] && append+=" cxlstack.bench_tau=$BENCH_TAU"
[ -n "${BENCH_REGIME:-}" ] && append+=" cxlstack.bench_regime=$BENCH_REGIME"
# make bench-reflux REFLUX_DEVCPU=1: the device's threads get CPU 1 to themselves.
[ -n "${BENCH_DEVCPU:-}" ] && append+=" isolcpus=1 irqaffinity=0 cxlstack.bench_devcpu=1"
# The offload benchmark idles its CPUs with HLT, not MWAIT (QEMU's -cpu max
# offers it): TCG's MWAIT does not wake on a store to the monitored line, so
# a wake-up from the other CPU, which the kernel then does by that store and
# not by an IPI, waited for the idle CPU's next tick (up to 4 ms; traced on
# the device's interrupt and on the driver's RP poller).
[ "$mode" = bench ] && append+=" idle=halt"
args=(-accel "$accel" -cpu "$cpu" -smp 2 -m $((2048 + (node2_size >> 20)))M
      -object memory-backend-ram,id=m0,size=1G
      -object memory-backend-ram,id=m1,size=1G
      -object memory-backend-file,id=m2,size=$((node2_size >> 20))M,mem-path=$pmr_file,share=on
      -numa node,nodeid=0,cpus=0-1,memdev=m0
      -numa node,nodeid=1,memdev=m1
      -numa node,nodeid=2,memdev=m2
      -kernel "$KERNEL_IMAGE" -initrd "$INITRAMFS" -append "$append"
      -display none -monitor none -no-reboot)
if [ "$mode" = run ]; then
	# make run: the tour (ttyS1) on the terminal, a copy in tests.log; the
	# kernel's messages in console.log only, so that the tour reads cleanly.
	args+=(-serial "file:$logdir/console.log"
	       -chardev "stdio,id=tour,signal=off,logfile=$logdir/tests.log" -serial chardev:tour)
	log "booting the VM (QEMU TCG, 2 CPUs; the kernel's log goes to $logdir/console.log)"
else
	args+=(-serial "file:$logdir/console.log" -serial "file:$logdir/tests.log")
fi
# The fuzzer's log (ttyS2): the programs it runs, its corpus and findings.
[ "$mode" = fuzz ] && args+=(-serial "file:$logdir/fuzz.log")

rc=0
timeout -k 10 "${VM_TIMEOUT:-900}" qemu-system-x86_64 "${args[@]}" </dev/null || rc=$?
# check.sh's power cuts kill QEMU on purpose (VM_POWERCUT=1): that is the test.
if [ "${VM_POWERCUT:-0}" = 1 ] && [ $rc = 137 ]; then
	log "the power was cut (QEMU killed; logs in $logdir)"
	exit 0
fi
if [ $rc = 124 ] || [ $rc = 137 ]; then
	log "the VM did not power off within ${VM_TIMEOUT:-900}s (logs in $logdir)"
	rc=124
fi
# make run: the kernel's messages were not on the terminal, so say when the
# VM stopped before the tour's end (an oops panics it: oops=panic).
if [ "$mode" = run ] && [ $rc = 0 ] && ! grep -q '##cxlstack done' "$logdir/console.log"; then
	log "the VM stopped before the end of the tour: see $logdir/console.log"
	rc=1
fi
exit $rc
