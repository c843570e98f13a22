#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module parameters and debugfs knobs as Documentation/reflux.rst gives
# them, tested from the documentation alone (selftests/reflux/knobs_doc_test.c).
. /selftests/lib/cxlstack.sh
need_module reflux
with_defaults /selftests/reflux/knobs_doc_test
