#!/bin/bash
# `make check-harness`: the negative controls. A failing selftest and a module
# that WARNs must each make the harness report failure; this script fails if
# either run is judged a success.
#
# Environment: KERNEL_IMAGE, INITRAMFS, LOGDIR.
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${LOGDIR:?}"
VMLOG="$REPO/tools/target/release/vmlog"

bad=0
# control MODE EXPECTED-LINE: the run must fail, and for the expected reason.
control() {
	local mode=$1 expect=$2 dir="$LOGDIR/$1" vm_rc=0 rc=0
	log "negative control $mode: booting the VM"
	"$REPO/tools/vm/qemu.sh" "$mode" "$dir" || vm_rc=$?
	"$VMLOG" summarize --tests "$dir/tests.log" --console "$dir/console.log" \
		--vm-rc "$vm_rc" >"$dir/summary.txt" 2>&1 || rc=$?
	sed 's/^/    /' "$dir/summary.txt"
	if [ $rc = 0 ]; then
		echo "not ok - $mode: the harness judged a deliberately broken run a success"
		bad=1
	elif ! grep -qF "$expect" "$dir/summary.txt"; then
		echo "not ok - $mode: the run failed, but not with '$expect'"
		bad=1
	else
		echo "ok - $mode: the harness failed the run as it must ('$expect')"
	fi
}
control harness-fail "FAIL selftest.harness/harness_fail_test: global.fails_on_purpose"
control harness-warn "kernel log: WARNING:"
if [ $bad = 0 ]; then
	echo "2 passed, 0 failed"
else
	echo "0 passed, 2 failed"
fi
exit $bad
