#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tests written from the documentation alone, by someone who had not read the
# implementation: what a user of /dev/reflux0 relies on, checked as the user
# would (selftests/reflux/doc_test.c), with the driver's defaults.
. /selftests/lib/cxlstack.sh
need_module reflux
with_defaults /selftests/reflux/doc_test
