# Sourced by fuzz.sh and fuzz-replay.sh (after common.sh): what the kernel
# log says about a fuzz boot.

# The line init writes to the kernel log just before the first program
# (selftests/fuzz/uapi.sh and replay.sh).
FUZZ_MARK='cxlstack: fuzz: the first program starts'

# boot_report CONSOLE: prints the first kernel report (vmlog's patterns) from
# before the first program ran, or nothing. Such a report is the boot's, not
# a program's: no program is a candidate for it, and a replay boot that has
# one says nothing about its program. With no mark at all, no program ran
# and every report is the boot's.
boot_report() {
	local console=$1 pre=$1.before-fuzz
	tr -d '\r' <"$console" | sed "/$FUZZ_MARK/q" >"$pre"
	"$REPO/tools/target/release/vmlog" summarize --console "$pre" |
		sed -n 's/^ *kernel log: //p' | head -n 1
}
