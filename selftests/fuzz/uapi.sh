#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make fuzz SECONDS=N (tools/vm/fuzz.sh): the UAPI fuzzer on /dev/cxl_ccm7 and
# /dev/reflux0; programs, corpus and findings go to ttyS2, its stats (as
# comments) here.
. /selftests/lib/cxlstack.sh
ktap_plan 1
# The kernel-log line after which a kernel report is the fuzzer's doing; one
# from before it is the boot's (tools/vm/fuzz-lib.sh).
echo "cxlstack: fuzz: the first program starts" >/dev/kmsg
{ /bench/uapi-fuzz fuzz --seconds "${FUZZ_SECONDS:-60}" --corpus /fuzz/corpus \
	--log /dev/ttyS2 2>&1; echo $? >/tmp/fuzz.rc; } | sed 's/^/# /'
tap "uapi-fuzz: no finding, coverage seen (0: clean, 1: findings, 2: no KCOV)" \
	test "$(cat /tmp/fuzz.rc)" = 0
# What the programs may have left behind that would pin a module.
say "# left behind: configfs [$(ls /sys/kernel/config/reflux 2>/dev/null | tr '\n' ' ')]" \
	"processes [$(ps -o pid,comm 2>/dev/null | grep -c uapi-fuzz)]" \
	"refcounts [$(grep -E '^(reflux|cxl_ccm) ' /proc/modules | cut -d' ' -f1,3 | tr '\n' ' ')]"
ktap_finish
