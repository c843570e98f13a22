#!/bin/bash
# `make fuzz SECONDS=N`: tools/uapi-fuzz in one boot of the kasan kernel (init
# mode fuzz), on /dev/cxl_ccm7 and /dev/reflux0, seeded with the corpus.
#
# The corpus (CORPUS, default out/fuzz/corpus) starts from the committed seeds
# (tools/uapi-fuzz/seeds) and keeps every program that found new coverage:
# the fuzzer writes them as CORPUS lines to the third serial port
# (LOGDIR/fuzz.log), which this script turns into CORPUS/<hash>.prog. If the
# run ends with a kernel report (vmlog) or the fuzzer never said FUZZ-DONE,
# the last programs it announced (PROG lines) and its FINDING lines are the
# crash candidates, saved with their C reproducers in CRASHES.
#
# Environment: KERNEL_IMAGE, KBUILD_OUTPUT, MODROOT, OUT (for initramfs.sh),
# LOGDIR, FUZZ_SECONDS (default 600), CORPUS, CRASHES.
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/fuzz-lib.sh"
: "${LOGDIR:?}" "${OUT:?}"
seconds=${FUZZ_SECONDS:-600}
corpus=${CORPUS:-$OUT/fuzz/corpus}
crashes=${CRASHES:-$OUT/fuzz/crashes}
fuzzer=$REPO/tools/target/release/uapi-fuzz
mkdir -p "$LOGDIR" "$corpus" "$crashes"
for seed in "$REPO"/tools/uapi-fuzz/seeds/*.prog; do
	[ -e "$corpus/$(basename "$seed")" ] || cp "$seed" "$corpus/"
done
(cd "$REPO/tools" && cargo build --release --quiet -p uapi-fuzz)

# The check initramfs plus the corpus in /fuzz/corpus.
FUZZ_CORPUS=$corpus "$REPO/tools/vm/initramfs.sh" "$LOGDIR/initramfs.cpio.gz"
log "fuzz: $seconds s, corpus $corpus ($(ls "$corpus" | wc -l) programs); logs in $LOGDIR"
vm_rc=0
INITRAMFS=$LOGDIR/initramfs.cpio.gz FUZZ_SECONDS=$seconds VM_TIMEOUT=$((seconds + 900)) \
	"$REPO/tools/vm/qemu.sh" fuzz "$LOGDIR" || vm_rc=$?
flog=$LOGDIR/fuzz.log
touch "$flog"
tr -d '\r' <"$flog" >"$flog.clean"

# CORPUS <program, calls separated by " ; ">: one file per program.
new=0
while IFS= read -r line; do
	text=$(printf '%s\n' "${line#CORPUS }" | sed 's/ ; /\n/g')
	name=$(printf '%s\n' "$text" | sha1sum | cut -c1-16).prog
	if [ ! -e "$corpus/$name" ]; then
		printf '%s\n' "$text" >"$corpus/$name"
		new=$((new + 1))
	fi
done < <(grep '^CORPUS ' "$flog.clean" || true)
log "fuzz: $new new corpus programs"

# Saves a one-line program as NAME.prog and its reproducer NAME.c.
save_candidate() {
	local name=$1 line=$2
	printf '%s\n' "$line" | sed 's/ ; /\n/g' >"$crashes/$name.prog"
	"$fuzzer" repro "$crashes/$name.prog" >"$crashes/$name.c" ||
		log "fuzz: no reproducer for $crashes/$name.prog"
}

# Minimises the candidates of a crash that took the kernel down, one VM boot
# per try (tools/vm/fuzz-replay.sh is the oracle): the first candidate that
# reproduces is shrunk to NAME.min.prog and NAME.min.c. FUZZ_MINIMIZE_RUNS
# boots at most per candidate (default 40; 0: do not minimise). Non-fatal
# findings need none of this: `uapi-fuzz minimize FILE.prog` in the guest
# re-runs them in place.
minimize_fatal() {
	local runs=${FUZZ_MINIMIZE_RUNS:-40} prog min rc
	if [ "$runs" = 0 ]; then
		log "fuzz: FUZZ_MINIMIZE_RUNS=0: not minimising; one VM boot per try:"
		local p
		for p in "$@"; do log "  make fuzz-minimize PROG=$p"; done
		return
	fi
	for prog in "$@"; do
		min=${prog%.prog}.min
		log "fuzz: minimising $prog, at most $runs boots"
		rc=0
		REPLAY_DIR=$crashes/replay "$fuzzer" minimize "$prog" \
			--oracle "$REPO/tools/vm/fuzz-replay.sh" --max-runs "$runs" >"$min.prog" || rc=$?
		if [ $rc = 0 ]; then
			"$fuzzer" repro "$min.prog" >"$min.c"
			log "fuzz: $(grep -c . "$min.prog") calls reproduce: $min.prog, $min.c"
			return
		fi
		rm -f "$min.prog"
		[ $rc = 1 ] || { log "fuzz: the replay failed (rc $rc): stopping"; return; }
	done
	log "fuzz: no candidate reproduced the crash on its own"
}

done_line=$(grep '^FUZZ-DONE' "$flog.clean" | tail -n 1 || true)
grep '^fuzz: t=' "$LOGDIR/tests.log" | tail -n 1 || true
rc=0
"$REPO/tools/target/release/vmlog" summarize \
	--tests "$LOGDIR/tests.log" --console "$LOGDIR/console.log" --vm-rc "$vm_rc" || rc=$?
stamp=$(date +%Y%m%d-%H%M%S)
n=0
while IFS= read -r line; do
	rest=${line#FINDING }
	save_candidate "$stamp-finding$n" "${rest#* }"
	n=$((n + 1))
done < <(grep '^FINDING ' "$flog.clean" || true)
boot=
[ $rc = 0 ] || boot=$(boot_report "$LOGDIR/console.log")
if [ -n "$boot" ]; then
	# The run fails all the same, but no program is to blame.
	log "fuzz: the kernel reported before the first program ran: $boot"
	log "fuzz: a fault of the boot, not a finding: no crash candidates"
	rc=1
elif [ $rc != 0 ] || [ -z "$done_line" ]; then
	# The kernel died or reported while one of the last programs ran.
	k=0
	while IFS= read -r line; do
		rest=${line#PROG }
		save_candidate "$stamp-last$k" "${rest#* }"
		k=$((k + 1))
	done < <(grep '^PROG ' "$flog.clean" | tail -n 5 | tac)
	[ $k = 0 ] || minimize_fatal "$crashes/$stamp-last"*.prog
	log "fuzz: crash candidates in $crashes ($stamp-*)"
	[ $rc != 0 ] || rc=1
fi
if [ -z "$done_line" ]; then
	log "fuzz: the fuzzer did not finish (no FUZZ-DONE in $flog)"
	exit 1
fi
log "fuzz: $done_line"
edges=$(printf '%s\n' "$done_line" | sed -n 's/.*edges=\([0-9]*\).*/\1/p')
if [ "${edges:-0}" = 0 ]; then
	log "fuzz: no coverage (edges=0): is CONFIG_KCOV on and the modules instrumented?"
	exit 1
fi
exit $rc
