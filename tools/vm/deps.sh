#!/bin/bash
# Install what the build and the VM need, and nothing that is already there.
# Everything comes from Debian's archive, crates.io or rustup.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PKGS=(build-essential bc bison flex libelf-dev libssl-dev cpio dwarves kmod xz-utils rsync
      clang-14 libclang-14-dev llvm-14 lld-14 qemu-system-x86 busybox-static python3
      clang-19 llvm-19 lld-19 libclang-19-dev zlib1g-dev libzstd-dev fio liburing-dev)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
want_src="linux-source-6.12=$KERNEL_DEB_VERSION"
have_src=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
[ "$have_src" = "$KERNEL_DEB_VERSION" ] || missing+=("$want_src")

if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] && SUDO= || SUDO=sudo
	log "installing Debian packages: ${missing[*]}"
	$SUDO apt-get update -qq
	# Not `madison | grep -q`: grep's early exit kills madison with SIGPIPE, which pipefail
	# turns into "not available" once the archive lists enough versions.
	offered=$(apt-cache madison linux-source-6.12)
	if ! grep -qF "$KERNEL_DEB_VERSION" <<<"$offered"; then
		die "linux-source-6.12 version $KERNEL_DEB_VERSION is not available from apt (see 'apt-cache policy linux-source-6.12'); update KERNEL_DEB_VERSION in tools/vm/common.sh"
	fi
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		--allow-downgrades "${missing[@]}" >/dev/null
fi

command -v rustup >/dev/null || die "rustup not found: install the Rust toolchain with rustup first"
if ! grep -q '^rust-src' <<<"$(rustup component list --installed 2>/dev/null)"; then
	log "rustup component add rust-src"
	rustup component add rust-src
fi
if [ "$(bindgen --version 2>/dev/null | awk '{print $2}')" != "$BINDGEN_VERSION" ]; then
	log "cargo install --locked bindgen-cli@$BINDGEN_VERSION"
	cargo install --locked --quiet "bindgen-cli@$BINDGEN_VERSION"
fi
