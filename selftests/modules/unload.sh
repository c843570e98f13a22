#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Our modules unload, in reverse order: device models go while their drivers
# are still bound.
. /selftests/lib/cxlstack.sh
ktap_plan $(echo $OUR_MODULES | wc -w)
for m in $(echo $OUR_MODULES | tr ' ' '\n' | sort -r); do tap "rmmod $m" rmmod "$m"; done
ktap_finish
