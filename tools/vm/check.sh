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

"$REPO/tools/target/release/vmlog" summarize \
	--tests "$LOGDIR/tests.log" --console "$LOGDIR/console.log" --vm-rc "$vm_rc" \
	--cargo "$LOGDIR/cargo.log" --cargo-rc "$cargo_rc"
