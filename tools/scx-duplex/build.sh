#!/bin/bash
# Builds scx_duplex, the BPF scheduler and its loader (tools/scx-duplex/bpf/),
# with the kernel tree's own sched_ext machinery: libbpf and bpftool from the
# same tree, vmlinux.h from the built kernel's BTF, clang-19 for the BPF side and
# the host compiler for the rest. The
# loader is linked statically: the VM has no C library.
#
#   build.sh OUTPUT
set -euo pipefail
. "$(dirname "$0")/../vm/common.sh"

dest=$1
# realpath needs the directory to exist (else the build would land in the current one).
mkdir -p "$(dirname "$dest")"
SRC="$("$REPO/tools/vm/kernel.sh" --dir)/src"
[ -e "$SRC/vmlinux" ] || die "$SRC/vmlinux missing: build the kernel first (make kernel)"
SCX="$SRC/tools/sched_ext"
BUILD="$(dirname "$(realpath "$dest")")/scx-build"
mkdir -p "$BUILD"
# The sources sit beside the tree's example schedulers, whose Makefile builds them.
# duplex_policy.h and duplex_series.[ch] are the policy the host tests run too.
cp "$REPO"/tools/scx-duplex/bpf/*.[ch] "$SCX/"
make -s -C "$SCX" CLANG=clang-19 LLVM_STRIP=llvm-strip-19 O="$BUILD" c-sched-targets=scx_duplex VMLINUX_BTF="$SRC/vmlinux" \
	scx_duplex >"$BUILD/build.log" 2>&1 ||
	{ tail -n 40 "$BUILD/build.log" >&2; die "scx_duplex build failed (log: $BUILD/build.log)"; }
# The tree links its schedulers dynamically; relink ours statically (libbpf's
# own shared object must not see -static, so this is a step of its own).
gcc -static -o "$dest" "$BUILD/build/obj/sched_ext/scx_duplex.o" "$BUILD/build/obj/libbpf/libbpf.a" \
	-lelf -lz -lzstd -lpthread -lm ||
	die "scx_duplex static link failed"
