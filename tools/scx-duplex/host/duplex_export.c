// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF program's policy functions (bpf/duplex_policy.h) as ordinary
 * symbols, so that the host tests call the very code the program inlines.
 * Compiled by build.rs with bpf/duplex_series.c into the crate's library.
 */
#define DUPLEX_API
#include "duplex_policy.h"
