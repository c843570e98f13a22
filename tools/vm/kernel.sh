#!/bin/bash
# Build (once) the patched 6.12 kernel, its modules and cxl_test.
#
#   kernel.sh --dir   print the cache directory for the current inputs
#   kernel.sh         build it if it is not complete, then print it
#
# The directory is named by a hash of everything that shapes the kernel:
# the source version, tools/vm/config/*, the rust/ overlay, patches/ and this
# script. It holds src/ (pristine source + overlay + patches), build/ (O=),
# modroot/ (modules_install of the kernel and of cxl_test) and .done.
set -euo pipefail
. "$(dirname "$0")/common.sh"

inputs_hash() {
	(
		cd "$REPO"
		echo "$KERNEL_DEB_VERSION"
		for d in tools/vm/config rust patches tools/vm/kernel.sh tools/vm/common.sh; do
			[ -e "$d" ] && find "$d" -type f
		done | LC_ALL=C sort | xargs sha256sum
	) | sha256sum | cut -c1-16
}

DIR="$CACHE/kernel-$KERNEL_VERSION-$(inputs_hash)"
if [ "${1:-}" = "--dir" ]; then
	echo "$DIR"
	exit 0
fi
if [ -e "$DIR/.done" ]; then
	echo "$DIR"
	exit 0
fi

PRISTINE="$CACHE/pristine-$KERNEL_VERSION"
TARBALL=/usr/src/linux-source-6.12.tar.xz
if [ ! -e "$PRISTINE/.done" ]; then
	[ -e "$TARBALL" ] || die "$TARBALL missing: run tools/vm/deps.sh (needs linux-source-6.12=$KERNEL_DEB_VERSION)"
	log "extracting $TARBALL"
	rm -rf "$PRISTINE" "$PRISTINE.tmp"
	mkdir -p "$PRISTINE.tmp"
	tar -C "$PRISTINE.tmp" --strip-components=1 -xf "$TARBALL"
	got=$(make -s -C "$PRISTINE.tmp" kernelversion)
	[ "$got" = "$KERNEL_VERSION" ] || die "linux-source-6.12 holds $got, expected $KERNEL_VERSION ($KERNEL_DEB_VERSION)"
	touch "$PRISTINE.tmp/.done"
	mv "$PRISTINE.tmp" "$PRISTINE"
fi

# Start from the newest complete build of the same source, if any, so that a
# change to the overlay recompiles only what it touches.
mkdir -p "$DIR"
seed=$(ls -dt "$CACHE"/kernel-"$KERNEL_VERSION"-*/.done 2>/dev/null | head -n1 || true)
if [ ! -d "$DIR/build" ] && [ -n "$seed" ]; then
	seed=$(dirname "$seed")
	log "seeding $DIR from $seed"
	cp -a --reflink=auto "$seed/src" "$seed/build" "$DIR/"
fi

log "preparing source in $DIR/src"
mkdir -p "$DIR/src"
rsync -a --delete --exclude=/.done "$PRISTINE/" "$DIR/src/"
SRC="$DIR/src"
B="$DIR/build"

# The overlay: files under rust/ are copied over the tree. New Rust modules,
# C helpers and binding headers are registered so that adding an abstraction
# is adding files.
[ -d "$REPO/rust" ] && rsync -a "$REPO/rust/" "$SRC/rust/"
for f in "$REPO"/rust/kernel/*.rs; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .rs)
	[ -e "$PRISTINE/rust/kernel/$name.rs" ] && continue
	printf 'pub mod %s;\n' "$name" >>"$SRC/rust/kernel/lib.rs"
done
for f in "$REPO"/rust/helpers/*.c; do
	[ -e "$f" ] || continue
	name=$(basename "$f")
	[ -e "$PRISTINE/rust/helpers/$name" ] && continue
	printf '#include "%s"\n' "$name" >>"$SRC/rust/helpers/helpers.c"
done
for f in "$REPO"/rust/bindings/*.h; do
	[ -e "$f" ] || continue
	name=$(basename "$f")
	[ -e "$PRISTINE/rust/bindings/$name" ] && continue
	printf '#include "%s"\n' "$name" >>"$SRC/rust/bindings/bindings_helper.h"
done
for p in "$REPO"/patches/*.patch; do
	[ -e "$p" ] || continue
	log "applying $(basename "$p")"
	patch -s -p1 -d "$SRC" <"$p" || die "patch $(basename "$p") does not apply to $KERNEL_VERSION"
done

log "configuring (tinyconfig + tools/vm/config/*.config)"
mkdir -p "$B"
make -s -C "$SRC" O="$B" tinyconfig >/dev/null
frags=("$REPO"/tools/vm/config/*.config)
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$B" "$B/.config" "${frags[@]}" >"$B/merge_config.log"
make -s -C "$SRC" O="$B" olddefconfig >/dev/null
bad=0
for frag in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" "$B/.config" || { log "$(basename "$frag"): $line did not stick (dependency missing?)"; bad=1; } ;;
		'# CONFIG_'*' is not set') sym=${line#\# }; sym=${sym%% *}; grep -q "^$sym=" "$B/.config" && { log "$(basename "$frag"): $sym should be unset"; bad=1; } ;;
		esac
	done <"$frag"
done
[ $bad = 0 ] || die "kernel config does not match the fragments (see above)"

if ! make -s -C "$SRC" O="$B" rustavailable >"$B/rustavailable.log" 2>&1; then
	cat "$B/rustavailable.log" >&2
	die "Rust is not available for this kernel (rustc/bindgen/libclang/rust-src)"
fi

log "building kernel $KERNEL_VERSION in $B (log: $B/build.log)"
if ! make -C "$SRC" O="$B" -j"$(nproc)" bzImage modules >"$B/build.log" 2>&1; then
	tail -n 40 "$B/build.log" >&2
	die "kernel build failed (full log: $B/build.log)"
fi
KREL=$(cat "$B/include/config/kernel.release")
rm -rf "$DIR/modroot"
make -s -C "$SRC" O="$B" INSTALL_MOD_PATH="$DIR/modroot" modules_install >/dev/null

log "building cxl_test"
if ! make -C "$B" M="$SRC/tools/testing/cxl" -j"$(nproc)" modules >"$B/cxl_test.log" 2>&1; then
	tail -n 40 "$B/cxl_test.log" >&2
	die "cxl_test build failed (full log: $B/cxl_test.log)"
fi
make -s -C "$B" M="$SRC/tools/testing/cxl" INSTALL_MOD_PATH="$DIR/modroot" modules_install >/dev/null
depmod -b "$DIR/modroot" "$KREL"
touch "$DIR/.done"

# Keep the three newest builds; the rest are only disk.
ls -dt "$CACHE"/kernel-"$KERNEL_VERSION"-* 2>/dev/null | tail -n +4 | xargs -r rm -rf
echo "$DIR"
