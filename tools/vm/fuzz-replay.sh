#!/bin/bash
# fuzz-replay.sh PROG.prog: one boot that runs PROG once (init mode
# fuzz-replay, `uapi-fuzz run`), the oracle of `uapi-fuzz minimize --oracle`
# for a program that kills the kernel (tools/vm/fuzz.sh).
#
# Exit 0: the program still crashes (a kernel report, a panic or a hang, or a
# finding of the fuzzer's own); 1: it ran to its end and nothing was
# reported; 2: this script could not boot the program at all.
#
# Environment: as fuzz.sh (KERNEL_IMAGE, KBUILD_OUTPUT, MODROOT, OUT), and
# REPLAY_DIR (default $OUT/fuzz/replay), where each boot's logs go, numbered.
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/fuzz-lib.sh"
prog=${1:?usage: fuzz-replay.sh PROG.prog}
: "${OUT:?}"
dir=${REPLAY_DIR:-$OUT/fuzz/replay}
mkdir -p "$dir" || exit 2
# One boot of PROG; sets logdir and vm_rc.
boot() {
	local n
	n=$(find "$dir" -maxdepth 1 -name 'boot*' | wc -l)
	logdir=$dir/boot$n
	mkdir -p "$logdir" && cp "$prog" "$logdir/replay.prog" || exit 2
	FUZZ_REPLAY=$prog "$REPO/tools/vm/initramfs.sh" "$logdir/initramfs.cpio.gz" >/dev/null || exit 2
	vm_rc=0
	INITRAMFS=$logdir/initramfs.cpio.gz VM_TIMEOUT=${REPLAY_TIMEOUT:-600} \
		"$REPO/tools/vm/qemu.sh" fuzz-replay "$logdir" >/dev/null 2>&1 || vm_rc=$?
	rm -f "$logdir/initramfs.cpio.gz"
}

# A boot whose kernel reported before the program ran says nothing about the
# program: boot again, three times at most.
for try in 1 2 3; do
	boot
	report=$(boot_report "$logdir/console.log")
	[ -n "$report" ] || break
	log "fuzz-replay: ${logdir##*/}: the kernel reported before the program ran: $report"
	[ $try != 3 ] || { log "fuzz-replay: three such boots: giving up"; exit 2; }
done
n=${logdir##*/boot}
tr -d '\r' <"$logdir/tests.log" >"$logdir/tests.clean" 2>/dev/null
# The replay's own verdict: init prints it once uapi-fuzz run has returned.
if ! grep -q '^##cxlstack end fuzz.replay rc=' "$logdir/tests.clean"; then
	log "fuzz-replay: boot$n: the program did not finish (vm rc $vm_rc): crashes"
	exit 0
fi
if ! "$REPO/tools/target/release/vmlog" summarize --tests "$logdir/tests.log" \
	--console "$logdir/console.log" --vm-rc "$vm_rc" >"$logdir/summary.txt" 2>&1; then
	log "fuzz-replay: boot$n: the run failed or the kernel reported (summary.txt): crashes"
	exit 0
fi
log "fuzz-replay: boot$n: no crash"
exit 1
