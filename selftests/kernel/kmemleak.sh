#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kmemleak after the run: no object the tests allocated looks orphaned
# (init clears the list before our modules load).
. /selftests/lib/cxlstack.sh
[ -w $KMEMLEAK ] || ktap_skip_all "this kernel has no kmemleak"
ktap_plan 1
# Two scans: an object is reported only once it looks orphaned twice.
echo scan >$KMEMLEAK; echo scan >$KMEMLEAK
tap "kmemleak: no leak found during the run" sh -c "[ -z \"\$(cat $KMEMLEAK)\" ] || { cat $KMEMLEAK; false; }"
ktap_finish
