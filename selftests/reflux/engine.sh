#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The device with its compression engine outside the VM (tools/reflux-engine):
# every pipeline's writes and reads on the device round-trip, and read back on
# the other side; the engine, not the device's cores, ran them; with the
# engine hung, the cores take over and the data stays right.
. /selftests/lib/cxlstack.sh
need_module reflux
[ -n "${ENGINE_BASE:-}" ] || ktap_skip_all "no engine window (qemu.sh without ENGINE_BIN)"
ktap_plan 14

# engine_ran: "REQUESTS_IT_RAN REQUESTS_THE_CORES_RAN" from the device's last
# unload message.
engine_ran() {
	dmesg | sed -n 's/.*the compression engine ran \([0-9]*\) requests; \([0-9]*\) ran here.*/\1 \2/p' | tail -1
}

rmmod reflux; rmmod reflux_dev
tap "reflux_dev refuses an engine window smaller than the interface" \
	sh -c "! modprobe reflux_dev $(modparams reflux_dev) engine_base=$ENGINE_BASE engine_window=4096"
tap "reflux_dev refuses an engine window inside the PMR's" \
	sh -c "! modprobe reflux_dev $(modparams reflux_dev) engine_base=$PMR_BASE engine_window=$ENGINE_SIZE"
tap "reflux_dev loads with the engine" modprobe reflux_dev $(modparams reflux_dev) $(engine_params)
rt=/selftests/reflux/roundtrip_test
slice=12
for cfg in "pipeline=2 checksum=1" "pipeline=3 checksum=1" "pipeline=1"; do
	slice=$((slice + 1))
	tap "round trip with $cfg on the engine" with_reflux "$cfg placement=3" \
		env REFLUX_SLICE=$slice/16 $rt -t direct_random -t buffered_random
done
tap "compressed on the engine, read on the host" cross_placement 2 3 0
tap "encrypted on the host, read on the engine" cross_placement 3 0 3
tap "encrypted on the engine, read on the host" cross_placement 3 3 0
rmmod reflux; rmmod reflux_dev
ran=$(engine_ran)
say "# engine: ${ran:-nothing} (requests it ran, requests the cores ran instead)"
tap "the engine ran the device's steps, the cores none" \
	test "${ran%% *}" -gt 0 -a "${ran#* }" = 0
# A hung engine (engine_pause): the first job times out, then the heartbeat
# is stale; the cores run the requests themselves and the data is right.
tap "reflux_dev loads with the engine again" modprobe reflux_dev $(modparams reflux_dev) $(engine_params)
echo 1 >/sys/module/reflux_dev/parameters/engine_pause
tap "with the engine hung, compressed on the device, read on the device" cross_placement 2 3 3
tap "with the engine hung, encrypted on the device, read on the host" cross_placement 3 3 0
echo 0 >/sys/module/reflux_dev/parameters/engine_pause
rmmod reflux; rmmod reflux_dev
ran=$(engine_ran)
say "# engine hung: ${ran:-nothing} (requests it ran, requests the cores ran instead)"
tap "with the engine hung, the cores ran the requests themselves" test "${ran#* }" -gt 0
modprobe reflux_dev $(modparams reflux_dev) || say "# modprobe reflux_dev failed"
ktap_finish
