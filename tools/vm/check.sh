#!/bin/bash
# `make check`: boot the VM in check mode, run the host-side cargo tests, and
# judge everything with tools/vmlog. Ends with one line "N passed, M failed".
# `make check SUITE=name,...`: those VM suites alone, in one boot, with the
# stack loaded around them (no cargo tests, no power cuts).
#
# Environment: KERNEL_IMAGE, INITRAMFS, LOGDIR, SUITE.
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${LOGDIR:?}"
mkdir -p "$LOGDIR"

cargo_rc=0
if [ -z "${SUITE:-}" ]; then
	log "cargo test (tools/ workspace)"
	(cd "$REPO/tools" && cargo test --workspace --quiet) >"$LOGDIR/cargo.log" 2>&1 || cargo_rc=$?
else
	log "SUITE=$SUITE: those suites alone"
	: >"$LOGDIR/cargo.log"
fi

# The main boot runs the device's compression engine next to the VM (the
# reflux.engine suite uses it; every other suite loads the device without it).
engine_bin="$REPO/tools/target/release/reflux-engine"
(cd "$REPO/tools" && cargo build --release --quiet -p reflux-engine) >>"$LOGDIR/cargo.log" 2>&1 ||
	cargo_rc=1

log "booting the VM (TCG) for the kernel tests; logs in $LOGDIR"
start=$(date +%s)
vm_rc=0
# The main boot runs every suite, the stress suite included (about 3 minutes):
# about 17 minutes on the check kernel, more on the kasan one. The bound only
# catches a boot that hangs; each suite has its own timeout.
ENGINE_BIN=$engine_bin VM_TIMEOUT=${VM_TIMEOUT:-2700} "$REPO/tools/vm/qemu.sh" check "$LOGDIR" || vm_rc=$?
log "VM finished in $(( $(date +%s) - start ))s with status $vm_rc"

# The power cuts: a first boot writes and gets its writes acknowledged, then
# QEMU is killed (SIGKILL: no shutdown, no unmount); each next boot on the same
# PMR file checks that they read back. Boots 2-4 also arm a migration of an
# actor paused at phase 1, 2, 3 of its two-phase commit before their power is
# cut, and the boot after checks who owns the actor. The last boot unloads
# cleanly. Judged like the main run, from their own logs.
pc="$LOGDIR/powercut"
# Nothing from an earlier run: a stale "acked" would cut the power too early.
rm -rf "$pc"
pc_rc=0
pc_tests=""
keep=0
stages="write migrate1 migrate2 migrate3"
[ -z "${SUITE:-}" ] || stages=
for stage in $stages; do
	log "power cut: boot '$stage', then killing the VM"
	mkdir -p "$pc/$stage"
	PMR_FILE="$pc/pmr.img" PMR_KEEP=$keep VM_TIMEOUT=300 VM_POWERCUT=1 \
		"$REPO/tools/vm/qemu.sh" "powercut-$stage" "$pc/$stage" &
	qemu_pid=$!
	acked=0
	for _ in $(seq 1 2400); do
		if grep -q '^##cxlstack acked' "$pc/$stage/tests.log" 2>/dev/null; then
			acked=1
			break
		fi
		kill -0 $qemu_pid 2>/dev/null || break
		sleep 0.1
	done
	# qemu.sh runs QEMU under timeout(1): kill QEMU itself, the power of the machine.
	pkill -KILL -f "qemu-system-x86_64.*$pc/pmr.img" || true
	wait $qemu_pid 2>/dev/null || true
	# Its results up to the cut. The suite open at the cut (the writer's) got
	# as far as "acked": its acknowledged writes succeeded; the test is judged
	# by the next boot reading them back.
	awk '/^##cxlstack acked/ {
			if (open != "") { print "ok 1 writes acknowledged before the power cut"; print "##cxlstack end " open " rc=0" }
			exit
		}
		/^##cxlstack begin / { open = $3 }
		/^##cxlstack end / { open = "" }
		{ print }' "$pc/$stage/tests.log" >>"$pc/tests.log" 2>/dev/null || true
	pc_tests="$pc_tests $pc/$stage/console.log"
	if [ $acked = 0 ]; then
		log "power cut: boot '$stage' never reported acknowledged writes (see $pc/$stage)"
		printf '%s\n' "##cxlstack begin reflux.powercut-$stage" \
			"not ok 1 the boot '$stage' reported acknowledged writes" \
			"##cxlstack end reflux.powercut-$stage rc=1" >>"$pc/tests.log"
		pc_rc=1
		break
	fi
	keep=1
done
if [ $pc_rc = 0 ] && [ -n "$stages" ]; then
	log "power cut: the last boot on the same PMR"
	mkdir -p "$pc/verify"
	PMR_FILE="$pc/pmr.img" PMR_KEEP=1 "$REPO/tools/vm/qemu.sh" powercut-verify "$pc/verify" ||
		pc_rc=$?
	cat "$pc/verify/tests.log" >>"$pc/tests.log" 2>/dev/null || true
	pc_tests="$pc_tests $pc/verify/console.log"
fi

# A suite script that no mode runs would never fail: each selftests/<dir>/<name>.sh
# must be named (<dir>.<name>) by tools/vm/init or a mode's script.
inventory="$LOGDIR/inventory.log"
: >"$inventory"
if [ -z "${SUITE:-}" ]; then
	missing=$(cd "$REPO/selftests" && for f in */*.sh; do
		s=${f%.sh}; s=${s%%/*}.${s#*/}
		grep -qw -- "$s" "$REPO"/tools/vm/init "$REPO"/tools/vm/*.sh || echo "$s"
	done)
	{
		echo "##cxlstack begin harness.inventory"
		echo "TAP version 13"
		echo "1..1"
		if [ -z "$missing" ]; then
			echo "ok 1 every suite script under selftests/ is run by a mode of tools/vm"
		else
			echo "not ok 1 every suite script under selftests/ is run by a mode of tools/vm"
			echo "$missing" | sed 's/^/# no mode runs /'
		fi
		echo "##cxlstack end harness.inventory rc=$([ -z "$missing" ] && echo 0 || echo 1)"
	} >"$inventory"
fi

# One judgement for all the boots: the main run's tests (up to its `done`, if
# it got there), then the power-cut boots', then the inventory; every console
# is scanned.
tests="$LOGDIR/all-tests.log"
if grep -q '^##cxlstack done' "$LOGDIR/tests.log" 2>/dev/null; then
	sed '/^##cxlstack done/,$d' "$LOGDIR/tests.log" >"$tests"
	cat "$pc/tests.log" >>"$tests" 2>/dev/null || true
	cat "$inventory" >>"$tests"
	grep -q '^##cxlstack done' "$tests" || echo '##cxlstack done' >>"$tests"
else
	cp "$LOGDIR/tests.log" "$tests" 2>/dev/null || : >"$tests"
	cat "$inventory" >>"$tests"
fi
[ $pc_rc = 0 ] || vm_rc=$pc_rc
# shellcheck disable=SC2086 # the consoles are words
cat "$LOGDIR/console.log" $pc_tests >"$LOGDIR/all-console.log" 2>/dev/null || true

cargo_args=(--cargo "$LOGDIR/cargo.log" --cargo-rc "$cargo_rc")
# SUITE=: the engine's build still counts, the tests did not run.
[ -z "${SUITE:-}" ] || cargo_args=(--cargo-rc "$cargo_rc")
"$REPO/tools/target/release/vmlog" summarize \
	--tests "$tests" --console "$LOGDIR/all-console.log" --vm-rc "$vm_rc" "${cargo_args[@]}"
