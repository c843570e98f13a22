#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tools/vm/fuzz-replay.sh: one program run once, the oracle of the host's
# minimisation of a program that kills the kernel. A finding of the fuzzer's
# own fails the result (its output is kept as comments).
. /selftests/lib/cxlstack.sh
ktap_plan 1
echo "cxlstack: fuzz: the first program starts" >/dev/kmsg
{ /bench/uapi-fuzz run /fuzz/replay.prog 2>&1; echo $? >/tmp/fuzz.rc; } | sed 's/^/# /'
tap "uapi-fuzz run: the program ran to its end without a finding" test "$(cat /tmp/fuzz.rc)" = 0
ktap_finish
