#!/bin/bash
# `make check-harness`: the negative controls. A failing selftest, a module
# that WARNs, and a driver that skips a publish on the HDM-H device model must
# each make the harness report failure, and so must a device that releases
# results before its CCM compute model says (compute_model=0), and so must a
# suite that reports fewer results than its plan; this script fails if any run
# is judged a success, or fails for another reason than expected.
#
# Environment: KERNEL_IMAGE, INITRAMFS, LOGDIR.
set -euo pipefail
. "$(dirname "$0")/common.sh"
: "${LOGDIR:?}"
VMLOG="$REPO/tools/target/release/vmlog"

bad=0
# control MODE EXPECTED-LINE...: the run must fail, and for the expected reasons.
control() {
	local mode=$1 dir="$LOGDIR/$1" vm_rc=0 rc=0 expect missing=
	shift
	log "negative control $mode: booting the VM"
	"$REPO/tools/vm/qemu.sh" "$mode" "$dir" || vm_rc=$?
	"$VMLOG" summarize --tests "$dir/tests.log" --console "$dir/console.log" \
		--vm-rc "$vm_rc" >"$dir/summary.txt" 2>&1 || rc=$?
	sed 's/^/    /' "$dir/summary.txt"
	for expect in "$@"; do
		grep -qF "$expect" "$dir/summary.txt" || missing+=" '$expect'"
	done
	if [ $rc = 0 ]; then
		echo "not ok - $mode: the harness judged a deliberately broken run a success"
		bad=$((bad + 1))
	elif [ -n "$missing" ]; then
		echo "not ok - $mode: the run failed, but without$missing"
		bad=$((bad + 1))
	else
		echo "ok - $mode: the harness failed the run as it must ($*)"
	fi
}
control harness-fail "FAIL selftest.harness/harness_fail_test: global.fails_on_purpose"
control harness-warn "kernel log: WARNING:"
control harness-hdmh "FAIL selftest.cxl_ccm/visibility_test" "HDM-H violation:"
control harness-model "FAIL selftest.cxl_ccm/model_test: model.results_wait_for_the_model"
control harness-plan "suite harness.plan_short planned 3 tests, reported 2"
echo "$((5 - bad)) passed, $bad failed"
exit $bad
