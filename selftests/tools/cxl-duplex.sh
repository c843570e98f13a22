#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# cxl-duplex on the memory-only node 1 (it refuses to report figures for a
# buffer it cannot prove is there), and its refusals.
. /selftests/lib/cxlstack.sh
ktap_plan 8
tap_show "cxl-duplex sweep on node 1 (buffer proven on node 1)" \
	/bench/cxl-duplex sweep --node 1 --size 32M --read 0-100:25 --threads 1,2 \
	--duration-ms 100
tap_show "cxl-duplex scaling on node 1, 256 B sequential" \
	/bench/cxl-duplex scaling --node 1 --size 32M --block 256 --pattern seq \
	--threads 1,2 --duration-ms 100
tap_show "cxl-duplex latency on node 1, idle and loaded" \
	/bench/cxl-duplex latency --node 1 --size 16M --load-threads 1 --read 50 \
	--duration-ms 100
tap_show "cxl-duplex paced to 50 MB/s" \
	/bench/cxl-duplex bw --node 1 --size 8M --rate 50000000 --duration-ms 200 --json
tap "cxl-duplex refuses node 7 (no such node)" sh -c '! /bench/cxl-duplex --node 7 --size 1M'
tap "cxl-duplex refuses a 96-byte block" sh -c '! /bench/cxl-duplex --node 1 --block 96'
tap "cxl-duplex refuses 513 threads" sh -c '! /bench/cxl-duplex --node 1 --threads 513'
tap "cxl-duplex refuses a 101 % read ratio" sh -c '! /bench/cxl-duplex --node 1 --read 101'
ktap_finish
