#!/bin/bash
# `make check`: boot the VM in check mode, run the host-side cargo tests, and
# judge everything with tools/vmlog. Ends with one line "N passed, M failed".
#
# Environment: KERNEL_IMAGE, INITRAMFS, LOGDIR.
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${LOGDIR:?}"
mkdir -p "$LOGDIR"

log "cargo test (tools/ workspace)"
cargo_rc=0
(cd "$REPO/tools" && cargo test --workspace --quiet) >"$LOGDIR/cargo.log" 2>&1 || cargo_rc=$?

log "booting the VM (TCG) for the kernel tests; logs in $LOGDIR"
start=$(date +%s)
vm_rc=0
"$REPO/tools/vm/qemu.sh" check "$LOGDIR" || vm_rc=$?
log "VM finished in $(( $(date +%s) - start ))s with status $vm_rc"

# The power cut: a first boot writes and gets its writes acknowledged, then
# QEMU is killed (SIGKILL: no shutdown, no unmount); a second boot on the same
# PMR file reads them back. Judged like the main run, from its own logs.
log "power cut: writing, then killing the VM"
pc="$LOGDIR/powercut"
# Nothing from an earlier run: a stale "acked" would cut the power too early.
rm -rf "$pc"
mkdir -p "$pc/write" "$pc/verify"
PMR_FILE="$pc/pmr.img" VM_TIMEOUT=300 "$REPO/tools/vm/qemu.sh" powercut-write "$pc/write" &
qemu_pid=$!
acked=0
for _ in $(seq 1 2400); do
	if grep -q '^##cxlstack acked' "$pc/write/tests.log" 2>/dev/null; then
		acked=1
		break
	fi
	kill -0 $qemu_pid 2>/dev/null || break
	sleep 0.1
done
# qemu.sh runs QEMU under timeout(1): kill QEMU itself, the power of the machine.
pkill -KILL -f "qemu-system-x86_64.*$pc/pmr.img" || true
wait $qemu_pid 2>/dev/null || true
pc_rc=0
if [ $acked = 1 ]; then
	log "power cut: rebooting on the same PMR"
	PMR_FILE="$pc/pmr.img" PMR_KEEP=1 "$REPO/tools/vm/qemu.sh" powercut-verify "$pc/verify" ||
		pc_rc=$?
else
	log "power cut: the writer never reported acknowledged writes (see $pc/write)"
	pc_rc=1
fi

# One judgement for all three boots: the main run's tests (up to its
# `done`, if it got there), then the power-cut verification's, or a failure
# saying why it did not run; every console is scanned.
tests="$LOGDIR/all-tests.log"
if grep -q '^##cxlstack done' "$LOGDIR/tests.log" 2>/dev/null; then
	sed '/^##cxlstack done/,$d' "$LOGDIR/tests.log" >"$tests"
	if [ $acked = 1 ] && [ -s "$pc/verify/tests.log" ]; then
		cat "$pc/verify/tests.log" >>"$tests"
	else
		printf '%s\n' '##cxlstack begin reflux.powercut' \
			'not ok 1 the writer booted and reported acknowledged writes' \
			'##cxlstack end reflux.powercut rc=1' '##cxlstack done' >>"$tests"
	fi
else
	cp "$LOGDIR/tests.log" "$tests" 2>/dev/null || : >"$tests"
fi
[ $pc_rc = 0 ] || vm_rc=$pc_rc
cat "$LOGDIR/console.log" "$pc/write/console.log" "$pc/verify/console.log" \
	>"$LOGDIR/all-console.log" 2>/dev/null || true

"$REPO/tools/target/release/vmlog" summarize \
	--tests "$tests" --console "$LOGDIR/all-console.log" --vm-rc "$vm_rc" \
	--cargo "$LOGDIR/cargo.log" --cargo-rc "$cargo_rc"
