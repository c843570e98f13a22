#!/bin/bash
# Build (once) the patched 6.12 kernel, its modules and cxl_test.
#
#   kernel.sh --dir   print the cache directory for the current inputs
#   kernel.sh         build it if it is not complete, then print it
#
# The directory is named by a hash of everything that shapes the kernel:
# the source version, the flavor (KERNEL_FLAVOR, common.sh), its tools/vm/config/ fragments,
# the rust/ overlay, patches/ and this script. It holds src/ (pristine source + overlay + patches, built in place),
# modroot/ (modules_install of the kernel and of cxl_test) and .done.
set -euo pipefail
. "$(dirname "$0")/common.sh"

inputs_hash() {
	(
		cd "$REPO"
		echo "$KERNEL_DEB_VERSION"
		echo "flavor $KERNEL_FLAVOR"
		# The flavor's own fragments only: a fragment of another flavor does not shape it.
		{
			config_fragments | sed "s|^$REPO/||"
			for d in rust patches tools/vm/kernel.sh tools/vm/common.sh; do
				[ -e "$d" ] && find "$d" -type f
			done
		} | LC_ALL=C sort | xargs sha256sum
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

# The tree is built in place (no O=): kbuild then records relative paths, so a
# copy of another build directory is a valid incremental starting point. A new
# directory starts as a copy of the newest other one, and only the files whose
# content differs from (pristine + overlay + patches) are rewritten: a change
# to the overlay recompiles only what it touches.
SRC="$DIR/src"
mkdir -p "$DIR"
if [ ! -d "$SRC" ]; then
	# Only a finished build is a good seed: an interrupted one may hold truncated objects.
	# One of the same flavor shares its configuration, so only what changed is rebuilt.
	seed=
	for done in $(ls -dt "$CACHE"/kernel-"$KERNEL_VERSION"-*/.done 2>/dev/null); do
		d=$(dirname "$done")
		[ "$d" = "$DIR" ] && continue
		[ -z "$seed" ] && seed=$d/src
		if [ "$(cat "$d/flavor" 2>/dev/null || echo check)" = "$KERNEL_FLAVOR" ]; then
			seed=$d/src
			break
		fi
	done
	if [ -n "$seed" ]; then
		log "seeding $DIR from $(dirname "$seed")"
		cp -a --reflink=auto "$seed" "$SRC.tmp"
	else
		cp -a --reflink=auto "$PRISTINE" "$SRC.tmp"
	fi
	mv "$SRC.tmp" "$SRC"
fi

log "preparing source in $SRC"
# The patches are applied to a staging copy of the files they touch, and the
# result is synced like the rest: a file the patches create or change keeps
# its timestamp when its content is what the last build had.
STAGE="$DIR/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE"
: >"$DIR/patched-files"
for p in "$REPO"/patches/*.patch; do
	[ -e "$p" ] || continue
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p" >>"$DIR/patched-files"
done
sort -u -o "$DIR/patched-files" "$DIR/patched-files"
while IFS= read -r f; do
	[ -e "$PRISTINE/$f" ] || continue
	mkdir -p "$STAGE/$(dirname "$f")"
	cp -p "$PRISTINE/$f" "$STAGE/$f"
done <"$DIR/patched-files"
for p in "$REPO"/patches/*.patch; do
	[ -e "$p" ] || continue
	log "applying $(basename "$p")"
	patch -s -p1 -d "$STAGE" <"$p" || die "patch $(basename "$p") does not apply to $KERNEL_VERSION"
done
# --checksum without --times: unchanged files keep their timestamps, changed
# ones get a new one, so make rebuilds exactly what changed.
sed 's|^|/|' "$DIR/patched-files" >"$DIR/patched-excludes"
rsync -rl --checksum --exclude=/.done --exclude-from="$DIR/patched-excludes" "$PRISTINE/" "$SRC/"
rsync -rl --checksum "$STAGE/" "$SRC/"

# The overlay: files under rust/ are copied over the tree. New Rust modules,
# C helpers and binding headers are registered so that adding an abstraction
# is adding files.
[ -d "$REPO/rust" ] && rsync -rl --checksum "$REPO/rust/" "$SRC/rust/"
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

log "configuring (tinyconfig + the $KERNEL_FLAVOR flavor's fragments of tools/vm/config/)"
make -s -C "$SRC" $KBUILD_MAKE_ARGS tinyconfig >/dev/null
mapfile -t frags < <(config_fragments)
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$SRC" "$SRC/.config" "${frags[@]}" >"$SRC/merge_config.log"
make -s -C "$SRC" $KBUILD_MAKE_ARGS olddefconfig >/dev/null
bad=0
for frag in "${frags[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" "$SRC/.config" || { log "$(basename "$frag"): $line did not stick (dependency missing?)"; bad=1; } ;;
		'# CONFIG_'*' is not set') sym=${line#\# }; sym=${sym%% *}; grep -q "^$sym=" "$SRC/.config" && { log "$(basename "$frag"): $sym should be unset"; bad=1; } ;;
		esac
	done <"$frag"
done
[ $bad = 0 ] || die "kernel config does not match the fragments (see above)"

if ! make -s -C "$SRC" $KBUILD_MAKE_ARGS rustavailable >"$SRC/rustavailable.log" 2>&1; then
	cat "$SRC/rustavailable.log" >&2
	die "Rust is not available for this kernel (rustc/bindgen/libclang/rust-src)"
fi

log "building kernel $KERNEL_VERSION ($KERNEL_FLAVOR) in $SRC (log: $SRC/build.log)"
if ! make -C "$SRC" $KBUILD_MAKE_ARGS -j"$(nproc)" bzImage modules >"$SRC/build.log" 2>&1; then
	tail -n 40 "$SRC/build.log" >&2
	die "kernel build failed (full log: $SRC/build.log)"
fi
KREL=$(cat "$SRC/include/config/kernel.release")
rm -rf "$DIR/modroot"
make -s -C "$SRC" $KBUILD_MAKE_ARGS INSTALL_MOD_PATH="$DIR/modroot" modules_install >/dev/null

log "building cxl_test"
if ! make -C "$SRC" $KBUILD_MAKE_ARGS M="$SRC/tools/testing/cxl" -j"$(nproc)" modules >"$SRC/cxl_test.log" 2>&1; then
	tail -n 40 "$SRC/cxl_test.log" >&2
	die "cxl_test build failed (full log: $SRC/cxl_test.log)"
fi
make -s -C "$SRC" $KBUILD_MAKE_ARGS M="$SRC/tools/testing/cxl" INSTALL_MOD_PATH="$DIR/modroot" modules_install >/dev/null
depmod -b "$DIR/modroot" "$KREL"
echo "$KERNEL_FLAVOR" >"$DIR/flavor"
touch "$DIR/.done"

# Keep the four newest builds (two flavors, each with its previous inputs); the rest are
# only disk.
ls -dt "$CACHE"/kernel-"$KERNEL_VERSION"-* 2>/dev/null | tail -n +5 | xargs -r rm -rf
echo "$DIR"
