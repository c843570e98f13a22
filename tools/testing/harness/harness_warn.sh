#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check-harness: a module that WARNs on load (harness_warn.rs). Both
# results pass; the WARN in the kernel log must fail the run.
. /selftests/lib/cxlstack.sh
ktap_plan 2
tap "modprobe harness_warn" modprobe harness_warn
tap "rmmod harness_warn" rmmod harness_warn
ktap_finish
