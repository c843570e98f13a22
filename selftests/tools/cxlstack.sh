#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The cxlstack command against the loaded stack: it lists every CCM device with
# its identity and reflux0 with its actors (JSON schema version 1), and its
# attach/detach go through configfs as a user's would.
. /selftests/lib/cxlstack.sh
ktap_plan 5
cs=/bench/cxlstack
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config
tap "cxlstack list: every /dev/cxl_ccmN with its identity" sh -c \
	"[ \"\$($cs list | grep -c '^cxl_ccm[0-9]*: ABI')\" = \"\$(ls /dev | grep -c '^cxl_ccm')\" ]"
tap "cxlstack list --json: version 1, reflux0 and its actors" sh -c \
	"$cs list --json | grep -q '\"version\": 1,' && $cs list --json | grep -q '\"name\": \"reflux0\"' && $cs list --json | grep -q '\"owner\": '"
tap "cxlstack attach: a compress range on reflux0, enabled" sh -c \
	"$cs attach cs0 --device reflux0 --start 0 --length 128K --pipeline compress && $cs list | grep -q 'attachment cs0: reflux0 .* compress enabled'"
tap "cxlstack detach: the range is gone" sh -c \
	"$cs detach cs0 && ! $cs list | grep -q 'attachment cs0'"
tap "cxlstack migrate: a refused move names its cause" sh -c \
	"! $cs migrate reflux0 99 host 2>/tmp/cs.err && grep -q 'reflux0/migrate' /tmp/cs.err"
ktap_finish
