#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Our modules unload, in reverse order: device models go while their drivers
# are still bound.
. /selftests/lib/cxlstack.sh
ktap_plan $(echo $OUR_MODULES | wc -w)
# A mode that unloaded some on purpose names them in UNLOADED (the offload
# benchmark: the ReFlux stack); they are skipped, the rest must unload.
for m in $(echo $OUR_MODULES | tr ' ' '\n' | sort -r); do
	case " ${UNLOADED:-} " in
	*" $m "*) N=$((N + 1)); say "ok $N rmmod $m # SKIP unloaded before" ;;
	*) tap "rmmod $m" rmmod "$m" ;;
	esac
done
ktap_finish
