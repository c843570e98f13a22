# SPDX-License-Identifier: GPL-2.0
# make run: the demo on the console, sourced by tools/vm/init in its run mode
# (OUT is the console there).

demo() {
	say "== cxlstack demo: booted $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
	say "== NUMA nodes: $(ls -d /sys/devices/system/node/node* | sed 's|.*/||' | tr '\n' ' ')"
	run_suite cxl.cxl_test
	cxl=$(ls /sys/bus/cxl/devices/)
	say "== cxl_test topology: $(echo "$cxl" | grep -c '^mem') memdevs, $(echo "$cxl" | grep -c '^port') ports, $(echo "$cxl" | grep -c '^decoder') decoders, $(echo "$cxl" | grep -c '^region') regions"
	run_suite modules.load
	say "== loaded: $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
	say "== CCM devices: $(ls /dev | grep '^cxl_ccm' | tr '\n' ' ')"
	say "== the offload modes on the same work (16 STREAM_XFORM launches of 16 KiB, every result verified):"
	/bench/ccm_bench --quick --table >>"$OUT" 2>&1
	say "== running the selftests (smoke; cxl_ccm: binding, data plane, modes, misuse, teardown)"
	run_binaries
	run_suite modules.unload
}
