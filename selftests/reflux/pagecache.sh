#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The page cache of /dev/reflux0 (the page-cache hook): its pages come from the
# PMR's node, each tagged with the epochs of the actors that produced it; a
# migration makes the tags of the pages its actor covers stale, and a reader
# drops such a page and reads it again.
. /selftests/lib/cxlstack.sh
need_module reflux

# node_file_kb NODE: the page cache on NODE, in kB.
node_file_kb() { awk '$3 == "FilePages:" { print $4 }' /sys/devices/system/node/node$1/meminfo; }

ktap_plan 14
reload_reflux "pipeline=2 checksum=1"
node=$(stat_reflux pagecache_node)
tap "the page cache is on the PMR's node (node 2)" [ "$node" = 2 ]
yes "ReFlux keeps its page cache on the PMR node" | head -c $((16 << 20)) |
	dd of=/dev/reflux0 bs=1M seek=96 oflag=direct 2>/dev/null
sync; echo 3 >/proc/sys/vm/drop_caches
# The page cache of a block device is dropped when its last opener
# closes it: held open while the readers come and go.
exec 3</dev/reflux0
f0=$(node_file_kb 2); t0=$(stat_reflux pagecache_tagged)
md5a=$(dd if=/dev/reflux0 bs=1M skip=96 count=16 2>/dev/null | md5sum)
f1=$(node_file_kb 2); t1=$(stat_reflux pagecache_tagged)
say "# node 2 FilePages: $f0 kB before, $f1 kB after a 16 MiB buffered read; $((t1 - t0)) pages tagged"
tap "a 16 MiB buffered read puts at least 12 MiB of page cache on node 2" [ $((f1 - f0)) -ge 12288 ]
tap "... and tags every page" [ $((t1 - t0)) -ge 4096 ]
s0=$(stat_reflux pagecache_stale)
md5b=$(dd if=/dev/reflux0 bs=1M skip=96 count=16 2>/dev/null | md5sum)
tap "a second read finds no stale page" [ "$(stat_reflux pagecache_stale)" = "$s0" ]
echo "2 host" >/sys/kernel/debug/reflux0/migrate
md5c=$(dd if=/dev/reflux0 bs=1M skip=96 count=16 2>/dev/null | md5sum)
s1=$(stat_reflux pagecache_stale)
say "# after migrating lz4 to the host: $((s1 - s0)) stale pages found and read again"
tap "after lz4 migrates, a read finds its pages stale" [ $((s1 - s0)) -ge 4096 ]
tap "... and reads the same data again" [ "$md5a" = "$md5b" -a "$md5a" = "$md5c" ]
md5d=$(dd if=/dev/reflux0 bs=1M skip=96 count=16 2>/dev/null | md5sum)
tap "the pages read again are fresh" [ "$(stat_reflux pagecache_stale)" = "$s1" -a "$md5d" = "$md5a" ]
# Buffered readers race migrations of LZ4 back and forth: every read
# returns the data, whatever stale pages it met and read again.
for i in $(seq 0 15); do
	eval "sum$i=\$(dd if=/dev/reflux0 bs=1M skip=$((96 + i)) count=1 2>/dev/null | md5sum)"
done
s2=$(stat_reflux pagecache_stale)
(for i in $(seq 1 20); do
	echo "2 device" >/sys/kernel/debug/reflux0/migrate
	sleep 0.1
	echo "2 host" >/sys/kernel/debug/reflux0/migrate
	sleep 0.1
done) &
mig=$!
reads=0; bad=0
while kill -0 $mig 2>/dev/null; do
	i=$((reads % 16))
	m=$(dd if=/dev/reflux0 bs=1M skip=$((96 + i)) count=1 2>/dev/null | md5sum)
	eval "want=\$sum$i"
	[ "$m" = "$want" ] || bad=$((bad + 1))
	reads=$((reads + 1))
done
wait $mig
say "# $reads buffered reads of 1 MiB raced 40 migrations: $bad wrong, $(( $(stat_reflux pagecache_stale) - s2 )) stale pages read again"
tap "buffered reads racing 40 migrations all return the data" [ $bad = 0 -a $reads -ge 16 ]
tap "... and met stale pages" [ "$(stat_reflux pagecache_stale)" -gt "$s2" ]
tap_show "mmap: a fault re-reads a stale page, fault-around leaves it to its fault, mapped pages stay" \
	env REFLUX_MMAP=1 /selftests/reflux/mmap_test
exec 3<&-
reload_reflux "pipeline=2 checksum=1 pagecache_node=-1"
echo 3 >/proc/sys/vm/drop_caches
exec 3</dev/reflux0
f0=$(node_file_kb 2)
dd if=/dev/reflux0 of=/dev/null bs=1M skip=96 count=16 2>/dev/null
f1=$(node_file_kb 2)
exec 3<&-
say "# pagecache_node=-1: node 2 FilePages $f0 kB before, $f1 kB after"
tap "with pagecache_node=-1 the page cache stays off node 2" [ $((f1 - f0)) -lt 2048 ]
rmmod reflux
tap "reflux refuses pagecache_node=-3" sh -c '! modprobe reflux pagecache_node=-3'
tap "reflux refuses pagecache_node=100000" sh -c '! modprobe reflux pagecache_node=100000'
reload_reflux ""
tap "reflux is back with its defaults" [ -b /dev/reflux0 ]
ktap_finish
