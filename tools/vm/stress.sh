#!/bin/bash
# `make stress DURATION=seconds`: the reflux stress suite over every pipeline
# and placement (selftests/reflux/stress.sh with STRESS_FULL=1), then the
# control-interface stress in its long form (selftests/reflux/control_stress.sh:
# 16 rounds), in one boot of the check kernel, judged as make check judges its runs: a failed check, a
# kernel report (oops, WARN, lockdep, KFENCE, a hung task, a soft lockup) or a
# VM that does not finish fails it. Ends with "N passed, M failed".
#
# Environment: KERNEL_IMAGE, INITRAMFS, LOGDIR, DURATION (default 600).
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${LOGDIR:?}"
duration=${DURATION:-600}
# 11 configurations, each with and without migrations, and 2 with the psync
# workers only: 24 runs of 2 phases.
per_phase=$((duration / 48))
[ $per_phase -ge 2 ] || per_phase=2
log "stress: $duration s over 48 phases of $per_phase s; logs in $LOGDIR"
vm_rc=0
STRESS_SECONDS=$per_phase VM_TIMEOUT=$((duration * 3 + 900)) \
	"$REPO/tools/vm/qemu.sh" stress "$LOGDIR" || vm_rc=$?
grep '^# summary:\|^ok\|^not ok' "$LOGDIR/tests.log" | grep -v '^ok .*# SKIP' || true
"$REPO/tools/target/release/vmlog" summarize \
	--tests "$LOGDIR/tests.log" --console "$LOGDIR/console.log" --vm-rc "$vm_rc"
