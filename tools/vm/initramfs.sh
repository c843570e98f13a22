#!/bin/bash
# Pack the VM's initramfs: static busybox, tools/vm/init, the kernel's modules
# (with cxl_test's), our modules, and the static selftest and benchmark binaries.
#
#   initramfs.sh OUTPUT.cpio.gz
#
# Environment: KBUILD_OUTPUT, MODROOT (a modules_install root), OUT (the
# directory holding selftests/, harness/ and benchbin/ binaries).
set -euo pipefail
. "$(dirname "$0")/common.sh"

dest=$1
: "${KBUILD_OUTPUT:?}" "${MODROOT:?}" "${OUT:?}"
KREL=$(cat "$KBUILD_OUTPUT/include/config/kernel.release")
[ -d "$MODROOT/lib/modules/$KREL" ] || die "$MODROOT/lib/modules/$KREL missing: kernel modules of $KREL are not installed there"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] && file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "static busybox not found: install busybox-static"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,lib/modules,selftests,harness,bench}
cp "$BUSYBOX" "$stage/bin/busybox"
cp "$REPO/tools/vm/init" "$stage/init"
chmod +x "$stage/init"
# What init sources in one of its modes.
mkdir -p "$stage/lib/cxlstack"
cp "$REPO/tools/vm/bench-reflux.sh" "$REPO/tools/vm/bench-ccm.sh" "$REPO/tools/vm/demo.sh" "$stage/lib/cxlstack/"
cp -a "$MODROOT/lib/modules/$KREL" "$stage/lib/modules/"
rm -f "$stage/lib/modules/$KREL/build" "$stage/lib/modules/$KREL/source"
mkdir -p "$stage/lib/modules/$KREL/extra"
(cd "$REPO" && find drivers tools/testing -name '*.ko' 2>/dev/null) | while read -r ko; do
	cp "$REPO/$ko" "$stage/lib/modules/$KREL/extra/"
done
depmod -b "$stage" "$KREL"
[ -d "$OUT/selftests" ] && cp -a "$OUT/selftests/." "$stage/selftests/"
# The suites that are scripts, their timeouts (settings) and their library.
(cd "$REPO/selftests" && find . -name '*.sh' -o -name settings) | while read -r f; do
	mkdir -p "$stage/selftests/$(dirname "$f")"
	cp -p "$REPO/selftests/$f" "$stage/selftests/$f"
done
[ -d "$OUT/harness" ] && cp -a "$OUT/harness/." "$stage/harness/"
cp -p "$REPO"/tools/testing/harness/*.sh "$stage/harness/"
[ -d "$OUT/benchbin" ] && cp -a "$OUT/benchbin/." "$stage/bench/"
# make fuzz (tools/vm/fuzz.sh): the fuzzer's corpus, for init's fuzz mode.
if [ -n "${FUZZ_CORPUS:-}" ]; then
	mkdir -p "$stage/fuzz/corpus"
	cp "$FUZZ_CORPUS"/*.prog "$stage/fuzz/corpus/" 2>/dev/null || true
fi
# tools/vm/fuzz-replay.sh: the one program init's fuzz-replay mode runs.
if [ -n "${FUZZ_REPLAY:-}" ]; then
	mkdir -p "$stage/fuzz"
	cp "$FUZZ_REPLAY" "$stage/fuzz/replay.prog"
fi
# fio, for the block-device checks of reflux (io_uring, polled I/O, verify):
# Debian's is dynamically linked, so it comes with its loader and libraries.
FIO=$(command -v fio || true)
if [ -n "$FIO" ]; then
	mkdir -p "$stage/usr/bin"
	cp "$FIO" "$stage/usr/bin/fio"
	ldd "$FIO" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
fi
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$dest.tmp"
mv "$dest.tmp" "$dest"
