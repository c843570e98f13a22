# Shared settings for the tools/vm scripts (sourced, not executed).
# shellcheck shell=bash

# The kernel source we build: Debian's linux-source-6.12 at a pinned version.
KERNEL_DEB_VERSION=6.12.117-1~deb12u1
KERNEL_VERSION=6.12.117
BINDGEN_VERSION=0.73.2
LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}
export LIBCLANG_PATH

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${CXLSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cxlstack}
PATH="$HOME/.cargo/bin:$PATH"
export PATH

log() { printf '[cxlstack] %s\n' "$*" >&2; }
die() { printf '[cxlstack] error: %s\n' "$*" >&2; exit 1; }
