# Shared settings for the tools/vm scripts (sourced, not executed).
# shellcheck shell=bash

# The kernel source we build: Debian's linux-source-6.12 at a pinned version.
KERNEL_DEB_VERSION=6.12.117-1~deb12u1
KERNEL_VERSION=6.12.117
BINDGEN_VERSION=0.73.2
# check: every fragment but kasan.config, the debug checks included (make check,
# make run);
# bench: without debug.config, whose lockdep, kmemleak, debug objects and KFENCE
# make every lock and allocation several times slower under TCG (make bench*);
# kasan: check plus kasan.config, C built with Debian's clang-19: the kernel
# instruments Rust for KASAN only when C is built with clang (make check-kasan).
# GNU ld, not ld.lld, links it: cxl_test mocks functions with --wrap, and lld
# also wraps the mocked module's own EXPORT_SYMBOL references, which modpost
# then refuses ("references '__wrap_...', but it does not seem to be an export
# symbol").
KERNEL_FLAVOR=${KERNEL_FLAVOR:-check}
case "$KERNEL_FLAVOR" in
check | bench)
	KBUILD_MAKE_ARGS=
	LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}
	;;
kasan)
	KBUILD_MAKE_ARGS=CC=clang-19
	# bindgen parses the headers with the flags of the compiler that builds C.
	LIBCLANG_PATH=/usr/lib/llvm-19/lib
	;;
*) printf '[cxlstack] error: KERNEL_FLAVOR=%s: expected check, bench or kasan\n' "$KERNEL_FLAVOR" >&2; exit 1 ;;
esac
export LIBCLANG_PATH

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${CXLSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cxlstack}
PATH="$HOME/.cargo/bin:$PATH"
export PATH

# The config fragments of the flavor, in merge order.
config_fragments() {
	local f
	for f in "$REPO"/tools/vm/config/*.config; do
		[ "$KERNEL_FLAVOR" = bench ] && [ "$(basename "$f")" = debug.config ] && continue
		[ "$KERNEL_FLAVOR" != kasan ] && [ "$(basename "$f")" = kasan.config ] && continue
		printf '%s\n' "$f"
	done
}

log() { printf '[cxlstack] %s\n' "$*" >&2; }
die() { printf '[cxlstack] error: %s\n' "$*" >&2; exit 1; }
