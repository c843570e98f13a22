// SPDX-License-Identifier: GPL-2.0
/*
 * reflux_doc_test.c - independent, documentation-driven test of reflux.ko.
 *
 * Written from Documentation/reflux.rst, README.md and Documentation/build.rst
 * only (no driver source read).  Output is TAP; exit 0 only if every planned
 * check ran and passed.  Data is written only in [144 MiB, 208 MiB) of the
 * disk (one exception, check 14: the last block is rewritten with the bytes
 * it already held, to test the short write at the end of the device).
 *
 * Environment: REFLUX_DEV overrides /dev/reflux0 (host debugging against a
 * regular file); REFLUX_DATA_ONLY=1 runs only the data checks (1-24) and
 * reports the others "not ok # not run"; REFLUX_MIX_SECS sets the length of
 * the mixed stress (default 10 s).
 *
 * Checks, and the doc passage each comes from (reflux.rst unless noted):
 *  1 BLKSSZGET is 4096, size >= 208 MiB  - "a blk-mq disk (4 KiB blocks)"
 *                                           (README), "whole 4 KiB blocks"
 *  2 queue/write_cache is "write through" - "the disk therefore declares no
 *                                           volatile write cache"
 *  3 queue/chunk_sectors is 128 KiB       - "The disk's chunk_sectors is 128 KiB"
 *  4 queue/max_hw_sectors_kb <= 128       - "32 blocks: the largest request,
 *                                           128 KiB"
 *  5 queue/io_timeout is 30000 ms         - "io_timeout, 30 s by default"
 *  6 queue/io_poll is 1                   - "The tag set's two hardware queues
 *                                           (the default one and the poll queue)"
 *  7 O_DIRECT 4 KiB-1 MiB round trips     - roundtrip_test: "O_DIRECT 4 KiB-1 MiB
 *                                           ... at random offsets, bit-exact"
 *  8 buffered 512 B-1 MiB round trips     - "buffered 512 B-1 MiB at random
 *                                           offsets, bit-exact"
 *  9 odd-size buffered writes (1..4095 B at odd offsets) keep neighbours,
 *    visible to O_DIRECT after fsync      - same, plus a block device's
 *                                           ordinary buffered semantics
 * 10 overlapping writes                   - "overlapping writes"
 * 11 O_DIRECT <-> buffered coherence       - "buffered vs O_DIRECT" (page cache
 *                                           of the disk, the request path)
 * 12 132 KiB O_DIRECT across 128 KiB chunk - "split at the chunk boundary"
 * 13 unaligned O_DIRECT -> EINVAL, nothing changed - "unaligned O_DIRECT
 *                                           (EINVAL), nothing changed"
 * 14 the last block; short write at end   - "the last block; beyond the end
 *                                           (ENOSPC, short write)"
 * 15 write beyond the end -> ENOSPC; read at end -> 0 - same
 * 16 BLKDISCARD -> EOPNOTSUPP, data kept  - "queue_rq maps the operation (read,
 *                                           write, flush; anything else is
 *                                           EOPNOTSUPP)"
 * 17 fsync/fdatasync/RWF_DSYNC succeed     - "a flush has nothing to wait for";
 *                                           "an acknowledged write is durable"
 * 18 a read racing a write returns the old or new block, whole (pthreads)
 *                                         - "A read that races a write of the
 *                                           same block returns the old block or
 *                                           the new one, whole"
 * 19 two writes of one block at once leave one of them, whole
 *                                         - "two writes of one block in flight at
 *                                           once leave one of them, whole"
 * 20 io_uring (interrupt) depth 32, 4-132 KiB, + IORING_OP_FSYNC
 *                                         - request path / fio io_uring
 * 21 io_uring IORING_SETUP_IOPOLL round trip - "polled I/O (io_uring
 *                                           IORING_SETUP_IOPOLL, RWF_HIPRI)"
 * 22 debugfs stats count polled requests  - "stats: ... requests submitted,
 *                                           completed, failed and polled";
 *                                           "hipri=1 ... checked in the statistics"
 * 23 mixed stress: polled + interrupt io_uring writers at depth 32, pwrite
 *    writer, pread reader, polled reader on one region, buffered writer and
 *    reader on another: every read whole, generation between acknowledged
 *    at issue and issued at completion, no I/O error - reflux.stress text
 * 24 afterwards every block holds its last acknowledged generation - same
 * 25 stats is "key value" per line        - "one key value per line"
 * 26 migrate: bad syntax / unknown actor -> EINVAL, actors unchanged
 *                                         - "EINVAL (syntax, unknown actor)";
 *                                           "bad migrate writes are refused and
 *                                           change nothing"
 * 27 configfs present; mkdir gives an attachment whose enable reads 0
 *                                         - configfs example
 * 28 start/length not multiple of 128 KiB, malformed number, pipeline name,
 *    boolean -> EINVAL; K/M suffixes accepted - "start and length are
 *                                           multiples of 128 KiB (EINVAL; so is a
 *                                           malformed number, pipeline name,
 *                                           boolean ...)", "bytes; K, M, G suffixes"
 * 29 enable with no such device -> ENODEV, enable stays 0 - "(ENODEV)"
 * 30 enable with range past end -> ERANGE - "a range past its end (ERANGE)"
 * 31 enable with zero length -> EINVAL    - "a zero length (EINVAL)"
 * 32 enable overlapping another -> EBUSY  - "overlapping another attachment
 *                                           of the device (EBUSY)"
 * 33 ninth attachment -> ENOSPC           - "more than 8 (ENOSPC)"
 * 34 values of an enabled attachment -> EBUSY, unchanged
 *                                         - "While enabled the values are fixed
 *                                           (EBUSY)"
 * 35 3 MiB across default, compress+checksum and encrypt ranges reads back
 *    bit-exact (O_DIRECT and buffered); buffered write across a boundary
 *                                         - reflux.attach text
 * 36 migrate: already there -> EALREADY, actors unchanged; data survives
 *    migrations both ways                 - "EALREADY (already there)";
 *                                           "both sides produce the same bytes"
 * 37 corrupt_lba under passthrough: first byte flipped, rest intact
 *                                         - "corrupt_lba (... flips the first
 *                                           stored byte of that block)"; "comes
 *                                           back flipped under passthrough"
 * 38 corrupt_lba under checksum -> EIO    - "reads as EIO under checksummed
 *                                           pipelines"
 * 39 encrypted block holds no 16-byte piece of its text (peek), control under
 *    passthrough shows it                 - "an encrypted block holds no 16-byte
 *                                           piece of its text"
 * 40 detach (rmdir of an enabled attachment) keeps data readable, new writes
 *    round-trip                           - "rmdir of an enabled attachment
 *                                           detaches it"; "detaching keeps the
 *                                           data readable"
 * 41 rmmod refused while an attachment directory exists
 *                                         - "rmmod reflux is refused until they
 *                                           are removed"
 * 42 rmmod refused with the disk open; disk still works - Module lifetime
 * 43 rmmod refused with a debugfs file open; disk still works - same
 * 44 module reload keeps data             - "how data survives a power cut and
 *                                           a module reload"; stress phase 2
 * 45 unbind with disk open: disk deleted, I/O fails, close clean, attachments
 *    dropped (enable reads 0)             - "Unbinding the device with the disk
 *                                           open is allowed ..."; "A device that
 *                                           goes away ... enable reads 0 again"
 * 46 bind again: disk back, data kept, echo 1 > enable attaches again
 *                                         - "after the device is back, echo 1 >
 *                                           enable attaches again"; stress phase 1
 * 47 pipeline=4 refused (EINVAL, log line, module not loaded)
 * 48 placement=512 refused (EINVAL, log line)
 * 49 queue_depth=0 refused (EINVAL, log line)
 *                                         - "pipeline=4, placement=512,
 *                                           queue_depth=0 fail modprobe with
 *                                           EINVAL and a log line"
 * 50 dispatch=3 refused                   - "dispatch above 2 ... is refused"
 * 51 dispatch=1 sched=1 refused           - "or with sched=1, is refused"
 * 52 pagecache_node=-3 refused            - "other values are refused at load"
 * 53 irq_poll_below_us >= irq_sleep_above_us refused - "bad thresholds (poll
 *                                           not below sleep) are refused at load"
 * 54 sched weights not summing to 1000 refused - "(... summing to 1000)";
 *                                           "Invalid weights ... fail modprobe"
 * 55 pinned actor: migrate -> EPERM, nothing changed - "EPERM (a pinned ...)"
 * 56 replicated actor (dispatch=1): migrate -> EPERM - "EPERM (... or
 *                                           replicated actor)"
 * 57 default module reloaded, /dev/reflux0 present and round-trips (brief)
 *
 * Interpretations (where the doc is ambiguous; conservative reading tested):
 *  - rmmod "refused (EBUSY, 'in use')": kmod's rmmod reports EBUSY, but the
 *    delete_module(2) syscall (what busybox rmmod calls) returns EWOULDBLOCK
 *    for a module whose refcount is held.  Both are accepted; the check is
 *    that the module stays loaded and the disk keeps working.
 *  - "I/O fails" after unbind: a deleted gendisk has capacity 0, so read(2)
 *    may return 0 rather than -1; a read returning no data (<= 0) and a write
 *    returning -1 are accepted.
 *  - corrupt_lba/peek_lba take a 4 KiB block number (the disk's logical
 *    block); before corrupting, peek is used to confirm the unit (the stored
 *    bytes of the block must contain our marker).
 *  - peek's hex layout is not documented: the dump is reduced to its hex
 *    digits and searched for the marker's bytes in order.
 *  - "pinned=<bitmask>": whether bit N means actor N or actor N+1 is not
 *    said; pinned=6 pins actor 2 under both readings.
 *  - Replicated actors: "the pipeline's actors are registered replicated", so
 *    the dispatch=1 check uses pipeline=2 (LZ4 = actor 2 is in the pipeline).
 *  - Parameters that only have a documented range (poll_queues, queue_depth
 *    above 256, migrate_drain_timeout_ms) are not tested as refused: only
 *    values the doc says are refused are.
 *  - The "polled" statistic's key name is not documented: any stats key
 *    containing "polled" other than irq_polled (the interrupt thread's).
 *  - EOPNOTSUPP (device without a pipeline / CAP_MIGRATE) and ETIMEDOUT of
 *    migrate need a differently configured reflux_dev: not tested.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <liburing.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define KiB (1024ULL)
#define MiB (1024ULL * 1024)
#define BS 4096ULL
#define CHUNK (128 * KiB)
#define CONFIGFS_MAGIC_ 0x62656570

/* Our slice of the disk, by use. */
#define R1_OFF (144 * MiB) /* mixed stress, O_DIRECT paths: 4 MiB */
#define R1_NB 1024
#define R2_OFF (148 * MiB) /* mixed stress, buffered: 4 MiB */
#define R2_NB 1024
#define ATOM_OFF (152 * MiB) /* checks 18 (16 blocks) and 19 (at +1 MiB) */
#define BASIC_OFF (156 * MiB) /* checks 7-17: 8 MiB (156-164) */
#define BASIC_LEN (8 * MiB)
#define URING_OFF (172 * MiB) /* checks 20-21: 8 MiB */
#define URING_LEN (8 * MiB)
#define CFG_OFF (180 * MiB) /* configfs checks: 180..204 MiB */
#define LIFE_OFF (204 * MiB) /* lifetime checks: 204..208 MiB */
#define REGION_END (208 * MiB)

static const char *dev_path = "/dev/reflux0";
static const char *disk_name = "reflux0";
static const char *dbg_dir = "/sys/kernel/debug/reflux0";
static const char *cfg_root = "/sys/kernel/config/reflux";
static uint64_t dev_size;

/* ------------------------------------------------------------------ TAP */

enum check {
	C_GEOM = 1, C_WCACHE, C_CHUNK, C_MAXREQ, C_TIMEOUT, C_IOPOLL_Q,
	C_DIO_RT, C_BUF_RT, C_ODD_BUF, C_OVERLAP, C_COHERENT, C_CHUNK_SPLIT,
	C_UNALIGNED, C_LASTBLOCK, C_ENOSPC, C_DISCARD, C_FLUSH,
	C_RACE_RW, C_RACE_WW, C_URING, C_URING_POLL, C_STATS_POLLED,
	C_MIX, C_MIX_FINAL,
	C_STATS_FMT, C_MIG_EINVAL,
	C_CFG_MKDIR, C_CFG_EINVAL, C_CFG_ENODEV, C_CFG_ERANGE, C_CFG_ZERO,
	C_CFG_EBUSY_OVL, C_CFG_ENOSPC, C_CFG_FIXED, C_CFG_DATA, C_MIG_EALREADY,
	C_CORRUPT_PT, C_CORRUPT_CK, C_ENCRYPT_PEEK, C_DETACH, C_RMMOD_CFG,
	C_RMMOD_DISK, C_RMMOD_DBG, C_RELOAD_DATA, C_UNBIND, C_BIND,
	C_P_PIPELINE, C_P_PLACEMENT, C_P_QDEPTH, C_P_DISPATCH, C_P_DISP_SCHED,
	C_P_PCNODE, C_P_IRQ, C_P_WEIGHTS, C_PINNED, C_REPLICATED, C_FINAL,
	C_NCHECKS
};

static const char *check_desc[C_NCHECKS] = {
	[C_GEOM] = "disk has 4 KiB logical blocks and covers our 144-208 MiB slice",
	[C_WCACHE] = "queue declares no volatile write cache (write through)",
	[C_CHUNK] = "queue chunk_sectors is 128 KiB",
	[C_MAXREQ] = "largest request is at most 128 KiB (max_hw_sectors_kb)",
	[C_TIMEOUT] = "io_timeout is 30 s by default",
	[C_IOPOLL_Q] = "disk has a poll queue (queue/io_poll = 1)",
	[C_DIO_RT] = "O_DIRECT 4 KiB-1 MiB writes at random offsets read back bit-exact",
	[C_BUF_RT] = "buffered 512 B-1 MiB writes at random offsets read back bit-exact",
	[C_ODD_BUF] = "odd-size buffered writes keep neighbouring bytes, visible to O_DIRECT after fsync",
	[C_OVERLAP] = "overlapping writes: the later one wins, the rest is kept",
	[C_COHERENT] = "O_DIRECT and buffered I/O see each other's writes",
	[C_CHUNK_SPLIT] = "132 KiB O_DIRECT requests across a 128 KiB chunk boundary round-trip",
	[C_UNALIGNED] = "unaligned O_DIRECT fails with EINVAL and changes nothing",
	[C_LASTBLOCK] = "last block readable; a write past it is short (4096 of 8192)",
	[C_ENOSPC] = "write beyond the end is ENOSPC (O_DIRECT and buffered), read at end returns 0",
	[C_DISCARD] = "discard is refused with EOPNOTSUPP and changes nothing",
	[C_FLUSH] = "fsync, fdatasync and RWF_DSYNC writes succeed and data reads back",
	[C_RACE_RW] = "a read racing writes of the same blocks returns old or new blocks, whole",
	[C_RACE_WW] = "two writes of the same blocks in flight at once leave one of them, whole",
	[C_URING] = "io_uring depth 32, 4-132 KiB O_DIRECT writes/reads and IORING_OP_FSYNC",
	[C_URING_POLL] = "io_uring IORING_SETUP_IOPOLL writes/reads round-trip",
	[C_STATS_POLLED] = "debugfs stats count the polled requests",
	[C_MIX] = "mixed polled/irq io_uring, pwrite/pread, buffered: every read whole and in bounds, no errors",
	[C_MIX_FINAL] = "after the mixed run every block holds its last acknowledged generation",
	[C_STATS_FMT] = "debugfs stats is one 'key value' per line",
	[C_MIG_EINVAL] = "migrate: bad syntax and unknown actor give EINVAL and change nothing",
	[C_CFG_MKDIR] = "configfs: mkdir creates an attachment with its attributes, enable reads 0",
	[C_CFG_EINVAL] = "configfs: misaligned start/length and malformed values give EINVAL, suffixes work",
	[C_CFG_ENODEV] = "configfs: enable on an unbound device name gives ENODEV, enable stays 0",
	[C_CFG_ERANGE] = "configfs: enable with a range past the end gives ERANGE",
	[C_CFG_ZERO] = "configfs: enable with zero length gives EINVAL",
	[C_CFG_EBUSY_OVL] = "configfs: enable overlapping another attachment gives EBUSY",
	[C_CFG_ENOSPC] = "configfs: a ninth attachment of the device gives ENOSPC",
	[C_CFG_FIXED] = "configfs: values of an enabled attachment are fixed (EBUSY, unchanged)",
	[C_CFG_DATA] = "3 MiB across default, compress+checksum and encrypt ranges round-trips",
	[C_MIG_EALREADY] = "migrate: EALREADY when already there, nothing changed; data survives migrations",
	[C_CORRUPT_PT] = "corrupt_lba under passthrough flips the first byte only",
	[C_CORRUPT_CK] = "corrupt_lba under a checksum pipeline reads as EIO",
	[C_ENCRYPT_PEEK] = "an encrypted block holds no 16-byte piece of its text",
	[C_DETACH] = "rmdir of an enabled attachment detaches it; data stays readable",
	[C_RMMOD_CFG] = "rmmod refused while an attachment directory exists",
	[C_RMMOD_DISK] = "rmmod refused with the disk open, disk still works",
	[C_RMMOD_DBG] = "rmmod refused with a debugfs file open, disk still works",
	[C_RELOAD_DATA] = "data survives a module reload",
	[C_UNBIND] = "unbind with the disk open: disk deleted, I/O fails, close clean, attachments dropped",
	[C_BIND] = "bind again: disk back, data kept, attachment enables again",
	[C_P_PIPELINE] = "modprobe reflux pipeline=4 fails with EINVAL and a log line",
	[C_P_PLACEMENT] = "modprobe reflux placement=512 fails with EINVAL and a log line",
	[C_P_QDEPTH] = "modprobe reflux queue_depth=0 fails with EINVAL and a log line",
	[C_P_DISPATCH] = "modprobe reflux dispatch=3 is refused",
	[C_P_DISP_SCHED] = "modprobe reflux dispatch=1 sched=1 is refused",
	[C_P_PCNODE] = "modprobe reflux pagecache_node=-3 is refused",
	[C_P_IRQ] = "modprobe reflux with irq_poll_below_us not below irq_sleep_above_us is refused",
	[C_P_WEIGHTS] = "modprobe reflux sched=1 with weights not summing to 1000 is refused",
	[C_PINNED] = "migrate of a pinned actor gives EPERM and changes nothing",
	[C_REPLICATED] = "migrate of a replicated actor (dispatch=1) gives EPERM",
	[C_FINAL] = "module reloaded with default parameters, /dev/reflux0 round-trips",
};

static int next_check = 1;
static int n_failed;

static void vreport(int id, bool ok, const char *fmt, va_list ap)
{
	while (next_check < id) {
		printf("not ok %d - %s\n# not reached (an earlier step of its phase failed)\n",
		       next_check, check_desc[next_check]);
		n_failed++;
		next_check++;
	}
	if (id < next_check) {
		printf("# internal error: check %d reported twice\n", id);
		n_failed++;
		return;
	}
	printf("%s %d - %s\n", ok ? "ok" : "not ok", id, check_desc[id]);
	if (!ok) {
		n_failed++;
		if (fmt && *fmt) {
			char buf[4096];
			vsnprintf(buf, sizeof(buf), fmt, ap);
			for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
				printf("# %s\n", l);
		}
	}
	next_check = id + 1;
	fflush(stdout);
}

static void report(int id, bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(id, ok, fmt, ap);
	va_end(ap);
}

static void diag(const char *fmt, ...)
{
	va_list ap;
	char buf[2048];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
	fflush(stdout);
}

/* Failure text accumulated by a check before it reports. */
static char why[4096];
static void whyf(const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;
	if (n > sizeof(why) - 200)
		return;
	va_start(ap, fmt);
	vsnprintf(why + n, sizeof(why) - n, fmt, ap);
	va_end(ap);
	strncat(why, "\n", sizeof(why) - strlen(why) - 1);
}

/* -------------------------------------------------------------- helpers */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static __thread uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void fill_random(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = splitmix(seed);
	for (size_t i = 0; i < len; i += 8) {
		s = splitmix(s);
		size_t n = len - i < 8 ? len - i : 8;
		memcpy(p + i, &s, n);
	}
}

static void *xalloc(size_t len)
{
	void *p;
	if (posix_memalign(&p, 4096, len ? len : 4096)) {
		perror("posix_memalign");
		exit(2);
	}
	memset(p, 0, len);
	return p;
}

/* A stamped block: every 512-byte piece starts with magic, lba, gen; the
 * rest is derived from (lba, gen).  Whole = bit-exact to fill_block. */
#define STAMP_MAGIC 0x52464c5853544d50ULL
static void fill_block(uint8_t *b, uint64_t lba, uint64_t gen)
{
	fill_random(b, BS, lba * 1000003ULL ^ (gen << 32) ^ 0x55);
	for (int p = 0; p < 8; p++) {
		uint64_t h[3] = { STAMP_MAGIC, lba, gen };
		memcpy(b + p * 512, h, sizeof(h));
	}
}

/* Returns the generation of a whole stamped block of this lba, or -1. */
static int64_t block_gen(const uint8_t *b, uint64_t lba)
{
	uint64_t h[3];
	static __thread uint8_t *tmp;
	memcpy(h, b, sizeof(h));
	if (h[0] != STAMP_MAGIC || h[1] != lba)
		return -1;
	if (!tmp)
		tmp = xalloc(BS);
	fill_block(tmp, lba, h[2]);
	if (memcmp(tmp, b, BS))
		return -1;
	return (int64_t)h[2];
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	ssize_t n, tot = 0;
	while (tot < (ssize_t)len - 1 && (n = read(fd, buf + tot, len - 1 - tot)) > 0)
		tot += n;
	int e = n < 0 ? errno : 0;
	close(fd);
	buf[tot] = 0;
	return e ? -e : (int)tot;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

/* Write a string in one write(2); returns 0 or the errno. */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	int e = 0;
	ssize_t n = write(fd, s, strlen(s));
	if (n < 0)
		e = errno;
	else if ((size_t)n != strlen(s))
		e = EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

static long long read_num(const char *path)
{
	char b[256];
	if (read_file(path, b, sizeof(b)) < 0)
		return -1;
	return strtoll(b, NULL, 0);
}

static const char *ename(int e)
{
	static __thread char b[64];
	if (e == 0)
		return "success";
	snprintf(b, sizeof(b), "%s (%d)", strerrorname_np(e) ? strerrorname_np(e) : "?", e);
	return b;
}

static int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

static int pread_full(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

static long first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* Reference copy of our whole slice as we believe it is on the disk. */
static uint8_t *shadow; /* indexes from R1_OFF */
#define SH(off) (shadow + ((off) - R1_OFF))

static int dev_open(int flags)
{
	return open(dev_path, flags | O_CLOEXEC);
}

/* Compare [off, off+len) of the disk (O_DIRECT) with the shadow. */
static bool verify_shadow(uint64_t off, size_t len, const char *what)
{
	int fd = dev_open(O_RDONLY | O_DIRECT);
	if (fd < 0) {
		whyf("%s: open: %s", what, ename(errno));
		return false;
	}
	uint8_t *b = xalloc(len);
	bool ok = true;
	int e = pread_full(fd, b, len, off);
	if (e) {
		whyf("%s: O_DIRECT read of %zu at %llu: %s", what, len, (unsigned long long)off, ename(e));
		ok = false;
	} else {
		long d = first_diff(b, SH(off), len);
		if (d >= 0) {
			whyf("%s: expected the written bytes, got a difference at disk offset %llu (byte %02x, expected %02x)",
			     what, (unsigned long long)(off + d), b[d], SH(off)[d]);
			ok = false;
		}
	}
	free(b);
	close(fd);
	return ok;
}

/* --------------------------------------------------- module / sysfs ops */

static bool mod_loaded(void)
{
	return access("/sys/module/reflux/initstate", F_OK) == 0 ||
	       access("/sys/module/reflux/refcnt", F_OK) == 0;
}

static int rmmod_reflux(void)
{
	if (syscall(SYS_delete_module, "reflux", O_NONBLOCK) == 0)
		return 0;
	return errno;
}

static bool wait_path(const char *p, bool present, int ms)
{
	for (int t = 0; t <= ms; t += 50) {
		if ((access(p, F_OK) == 0) == present)
			return true;
		msleep(50);
	}
	return false;
}

static bool wait_disk(void)
{
	char sb[128];
	snprintf(sb, sizeof(sb), "/sys/block/%s", disk_name);
	if (!wait_path(dev_path, true, 20000) || !wait_path(sb, true, 5000))
		return false;
	/* The node may be present before the disk opens. */
	for (int t = 0; t < 100; t++) {
		int fd = dev_open(O_RDONLY);
		if (fd >= 0) {
			close(fd);
			return true;
		}
		msleep(100);
	}
	return false;
}

static char ko_path[512];
static void find_ko(void)
{
	struct utsname u;
	char dep[300], line[2048];
	uname(&u);
	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", u.release);
	FILE *f = fopen(dep, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (!c)
			continue;
		*c = 0;
		const char *base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (!strcmp(base, "reflux.ko")) {
			if (line[0] == '/')
				snprintf(ko_path, sizeof(ko_path), "%.400s", line);
			else
				snprintf(ko_path, sizeof(ko_path), "/lib/modules/%.64s/%.400s", u.release, line);
			break;
		}
	}
	fclose(f);
}

/* Load reflux with params: returns 0 or errno (-1 if only the exit status of
 * modprobe is known).  The default load is the brief's "modprobe reflux";
 * refused loads go through finit_module(2) to see the errno. */
static int load_reflux(const char *params)
{
	if (params[0] && ko_path[0]) {
		int fd = open(ko_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			long r = syscall(SYS_finit_module, fd, params, 0);
			int e = r ? errno : 0;
			close(fd);
			return e;
		}
	}
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "modprobe reflux %s >/dev/null 2>&1", params);
	return system(cmd) == 0 ? 0 : -1;
}

/* /dev/kmsg cursor, to see whether an attempt logged something. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static int kmsg_new_lines(int fd, char *last, size_t lastlen)
{
	char rec[2048];
	int n = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0) {
			if (errno == EPIPE)
				continue;
			break;
		}
		rec[r] = 0;
		char *m = strchr(rec, ';');
		trim(rec);
		n++;
		if (last)
			snprintf(last, lastlen, "%.400s", m ? m + 1 : rec);
	}
	return n;
}

static char drv_dir[512];
static bool find_driver(void)
{
	glob_t g;
	if (glob("/sys/bus/*/drivers/*/reflux.0", 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(drv_dir, sizeof(drv_dir), "%s", g.gl_pathv[0]);
		*strrchr(drv_dir, '/') = 0;
		globfree(&g);
		return true;
	}
	globfree(&g);
	return false;
}

/* --------------------------------------------------- debugfs / configfs */

static int dbg_write(const char *file, const char *s)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dbg_dir, file);
	return write_str(p, s);
}

static int dbg_read(const char *file, char *buf, size_t len)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dbg_dir, file);
	return read_file(p, buf, len);
}

static int migrate(const char *cmd)
{
	return dbg_write("migrate", cmd);
}

/* Sum of the stats keys that count polled requests (not irq_polled). */
static long long stats_polled(char *keys, size_t klen)
{
	char buf[16384];
	long long sum = -1;
	if (keys)
		keys[0] = 0;
	if (dbg_read("stats", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		char k[128];
		long long v;
		if (sscanf(l, "%127s %lld", k, &v) != 2)
			continue;
		if (strstr(k, "polled") && strncmp(k, "irq", 3)) {
			sum = (sum < 0 ? 0 : sum) + v;
			if (keys && strlen(keys) + strlen(k) + 2 < klen) {
				strcat(keys, k);
				strcat(keys, " ");
			}
		}
	}
	return sum;
}

static int cfg_set(const char *att, const char *attr, const char *val)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s/%s", cfg_root, att, attr);
	return write_str(p, val);
}

static int cfg_get(const char *att, const char *attr, char *buf, size_t len)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s/%s", cfg_root, att, attr);
	int r = read_file(p, buf, len);
	if (r >= 0)
		trim(buf);
	return r;
}

static int cfg_mkdir(const char *att)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", cfg_root, att);
	return mkdir(p, 0755) ? errno : 0;
}

static int cfg_rmdir(const char *att)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", cfg_root, att);
	return rmdir(p) ? errno : 0;
}

/* Create and enable an attachment; returns 0 or the errno of the first
 * refused step, naming it in step. */
static int cfg_attach(const char *att, uint64_t start, uint64_t len, const char *pipeline,
		      int checksum, const char **step)
{
	char v[64];
	int e;
	*step = "mkdir";
	if ((e = cfg_mkdir(att)) && e != EEXIST)
		return e;
	*step = "device";
	if ((e = cfg_set(att, "device", "reflux0\n")))
		return e;
	*step = "start";
	snprintf(v, sizeof(v), "%llu\n", (unsigned long long)start);
	if ((e = cfg_set(att, "start", v)))
		return e;
	*step = "length";
	snprintf(v, sizeof(v), "%llu\n", (unsigned long long)len);
	if ((e = cfg_set(att, "length", v)))
		return e;
	*step = "pipeline";
	snprintf(v, sizeof(v), "%s\n", pipeline);
	if ((e = cfg_set(att, "pipeline", v)))
		return e;
	*step = "checksum";
	if ((e = cfg_set(att, "checksum", checksum ? "1\n" : "0\n")))
		return e;
	*step = "enable";
	return cfg_set(att, "enable", "1\n");
}

/* Remove every attachment this program made (indep_*). */
static void cfg_cleanup(void)
{
	DIR *d = opendir(cfg_root);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "indep_", 6))
			continue;
		cfg_set(de->d_name, "enable", "0\n");
		cfg_rmdir(de->d_name);
	}
	closedir(d);
}

/* Hex digits of s only, lower case. */
static void hexonly(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 1 < len; s++)
		if (isxdigit((unsigned char)*s))
			out[n++] = tolower((unsigned char)*s);
	out[n] = 0;
}

static void tohex(const uint8_t *b, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* peek the block: returns the hex digits of the dump, or NULL. */
static char *peek_hex(uint64_t lba)
{
	static char raw[65536], hex[65536];
	char v[64];
	snprintf(v, sizeof(v), "%llu\n", (unsigned long long)lba);
	int e = dbg_write("peek_lba", v);
	if (e) {
		whyf("write %s to peek_lba: %s", v, ename(e));
		return NULL;
	}
	if (dbg_read("peek", raw, sizeof(raw)) < 0) {
		whyf("read peek: %s", ename(errno));
		return NULL;
	}
	hexonly(raw, hex, sizeof(hex));
	return hex;
}

/* ===================================================== phase 0: geometry */

static void queue_attr(const char *a, char *buf, size_t len)
{
	char p[256];
	snprintf(p, sizeof(p), "/sys/block/%s/queue/%s", disk_name, a);
	if (read_file(p, buf, len) < 0)
		snprintf(buf, len, "<unreadable: %s>", strerror(errno));
	trim(buf);
}

static bool phase_geometry(void)
{
	char b[256];
	int fd = dev_open(O_RDONLY);
	if (fd < 0) {
		report(C_GEOM, false, "open %s: %s", dev_path, ename(errno));
		return false;
	}
	int ssz = 0;
	struct stat st;
	fstat(fd, &st);
	if (S_ISBLK(st.st_mode)) {
		ioctl(fd, BLKSSZGET, &ssz);
		ioctl(fd, BLKGETSIZE64, &dev_size);
	} else {
		ssz = 4096;
		dev_size = st.st_size;
	}
	close(fd);
	report(C_GEOM, ssz == 4096 && dev_size >= REGION_END,
	       "expected logical block 4096 and size >= %llu\ngot %d and %llu", REGION_END, ssz,
	       (unsigned long long)dev_size);
	if (dev_size < REGION_END)
		return false;
	queue_attr("write_cache", b, sizeof(b));
	report(C_WCACHE, !strcmp(b, "write through"), "expected 'write through', got '%s'", b);
	queue_attr("chunk_sectors", b, sizeof(b));
	report(C_CHUNK, atoll(b) == 256, "expected chunk_sectors 256 (128 KiB), got '%s'", b);
	queue_attr("max_hw_sectors_kb", b, sizeof(b));
	report(C_MAXREQ, atoll(b) > 0 && atoll(b) <= 128, "expected max_hw_sectors_kb <= 128, got '%s'", b);
	queue_attr("io_timeout", b, sizeof(b));
	report(C_TIMEOUT, atoll(b) == 30000, "expected io_timeout 30000, got '%s'", b);
	queue_attr("io_poll", b, sizeof(b));
	report(C_IOPOLL_Q, atoll(b) == 1, "expected io_poll 1, got '%s'", b);
	return true;
}

/* ==================================================== phase 1: basic I/O */

static uint64_t rand_off(uint64_t base, uint64_t span, uint64_t len, uint64_t align)
{
	uint64_t slots = (span - len) / align + 1;
	return base + (rnd() % slots) * align;
}

static bool write_and_shadow(int fd, const uint8_t *buf, size_t len, uint64_t off, const char *what)
{
	int e = pwrite_full(fd, buf, len, off);
	if (e) {
		whyf("%s: write of %zu at %llu: %s", what, len, (unsigned long long)off, ename(e));
		return false;
	}
	memcpy(SH(off), buf, len);
	return true;
}

static void phase_basic(void)
{
	int dfd = dev_open(O_RDWR | O_DIRECT);
	int bfd = dev_open(O_RDWR);
	uint8_t *buf = xalloc(2 * MiB), *rb = xalloc(2 * MiB);
	bool ok;

	/* Known contents for the basic area first. */
	fill_random(SH(BASIC_OFF), BASIC_LEN, 7);
	why[0] = 0;
	ok = dfd >= 0 && bfd >= 0;
	if (!ok)
		whyf("open: %s", ename(errno));
	for (uint64_t o = 0; ok && o < BASIC_LEN; o += MiB)
		ok = pwrite_full(dfd, SH(BASIC_OFF + o), MiB, BASIC_OFF + o) == 0;
	if (!ok) {
		whyf("initial O_DIRECT fill of the basic area failed");
		report(C_DIO_RT, false, "%s", why);
		goto out;
	}

	/* 7: O_DIRECT round trips 4 KiB-1 MiB. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 24 && ok; i++) {
		size_t len = (1 + rnd() % 256) * BS;
		uint64_t off = rand_off(BASIC_OFF, BASIC_LEN, len, BS);
		fill_random(buf, len, rnd());
		ok = write_and_shadow(dfd, buf, len, off, "O_DIRECT") &&
		     pread_full(dfd, rb, len, off) == 0 && !memcmp(rb, buf, len);
		if (!ok)
			whyf("O_DIRECT %zu bytes at %llu: read back differs or failed", len,
			     (unsigned long long)off);
	}
	ok = ok && verify_shadow(BASIC_OFF, BASIC_LEN, "whole basic area");
	report(C_DIO_RT, ok, "%s", why);

	/* 8: buffered 512 B-1 MiB at 512-byte-aligned random offsets. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 24 && ok; i++) {
		size_t len = (1 + rnd() % 2048) * 512;
		uint64_t off = rand_off(BASIC_OFF, BASIC_LEN, len, 512);
		fill_random(buf, len, rnd());
		ok = write_and_shadow(bfd, buf, len, off, "buffered") &&
		     pread_full(bfd, rb, len, off) == 0 && !memcmp(rb, buf, len);
		if (!ok)
			whyf("buffered %zu bytes at %llu: read back differs or failed", len,
			     (unsigned long long)off);
	}
	if (ok && fsync(bfd)) {
		whyf("fsync: %s", ename(errno));
		ok = false;
	}
	ok = ok && verify_shadow(BASIC_OFF, BASIC_LEN, "after buffered writes + fsync");
	report(C_BUF_RT, ok, "%s", why);

	/* 9: odd sizes at odd offsets, buffered. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 32 && ok; i++) {
		size_t len = 1 + rnd() % 4095;
		uint64_t off = BASIC_OFF + 1 + rnd() % (BASIC_LEN - 8192);
		fill_random(buf, len, rnd());
		ok = write_and_shadow(bfd, buf, len, off, "odd buffered");
	}
	if (ok && fdatasync(bfd)) {
		whyf("fdatasync: %s", ename(errno));
		ok = false;
	}
	ok = ok && verify_shadow(BASIC_OFF, BASIC_LEN, "after odd-size writes");
	report(C_ODD_BUF, ok, "%s", why);

	/* 10: overlapping writes, both paths. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 8 && ok; i++) {
		uint64_t off = rand_off(BASIC_OFF, BASIC_LEN - 256 * KiB, 64 * KiB, BS);
		fill_random(buf, 64 * KiB, rnd());
		ok = write_and_shadow(dfd, buf, 64 * KiB, off, "overlap A");
		uint64_t off2 = off + (1 + rnd() % 31) * BS;
		fill_random(buf, 64 * KiB, rnd());
		ok = ok && write_and_shadow(dfd, buf, 64 * KiB, off2, "overlap B");
		ok = ok && verify_shadow(off, 128 * KiB, "overlapping O_DIRECT");
	}
	report(C_OVERLAP, ok, "%s", why);

	/* 11: coherence between the paths. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 6 && ok; i++) {
		size_t len = (1 + rnd() % 32) * BS;
		uint64_t off = rand_off(BASIC_OFF, BASIC_LEN, len, BS);
		/* warm the page cache, then write underneath it */
		pread(bfd, rb, len, off);
		fill_random(buf, len, rnd());
		ok = write_and_shadow(dfd, buf, len, off, "O_DIRECT under cache");
		if (ok && (pread_full(bfd, rb, len, off) || memcmp(rb, buf, len))) {
			whyf("buffered read after O_DIRECT write at %llu returned old or wrong data",
			     (unsigned long long)off);
			ok = false;
		}
		fill_random(buf, len, rnd());
		ok = ok && write_and_shadow(bfd, buf, len, off, "buffered");
		/* no fsync: an O_DIRECT read writes back the range first */
		if (ok && (pread_full(dfd, rb, len, off) || memcmp(rb, buf, len))) {
			whyf("O_DIRECT read after buffered write at %llu returned old or wrong data",
			     (unsigned long long)off);
			ok = false;
		}
	}
	report(C_COHERENT, ok, "%s", why);

	/* 12: 132 KiB across a chunk boundary. */
	why[0] = 0;
	ok = true;
	for (int i = 0; i < 6 && ok; i++) {
		uint64_t chunk = BASIC_OFF + CHUNK * (1 + rnd() % (BASIC_LEN / CHUNK - 3));
		uint64_t off = chunk - (1 + rnd() % 32) * BS;
		fill_random(buf, 132 * KiB, rnd());
		ok = write_and_shadow(dfd, buf, 132 * KiB, off, "132 KiB") &&
		     verify_shadow(off, 132 * KiB, "132 KiB across a chunk");
	}
	report(C_CHUNK_SPLIT, ok, "%s", why);

	/* 13: unaligned O_DIRECT. */
	why[0] = 0;
	ok = true;
	{
		struct { uint64_t off; size_t len; } bad[] = {
			{ BASIC_OFF + 512, BS }, { BASIC_OFF + 8 * BS, 512 },
			{ BASIC_OFF + 16 * BS, BS + 512 }, { BASIC_OFF + 24 * BS + 2048, 2048 },
		};
		fill_random(buf, 2 * BS, 99);
		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ssize_t n = pwrite(dfd, buf, bad[i].len, bad[i].off);
			if (n >= 0 || errno != EINVAL) {
				whyf("O_DIRECT write of %zu at %llu: expected EINVAL, got %s", bad[i].len,
				     (unsigned long long)bad[i].off, n >= 0 ? "success" : ename(errno));
				ok = false;
				if (n > 0)
					memcpy(SH(bad[i].off), buf, n);
			}
			n = pread(dfd, rb, bad[i].len, bad[i].off);
			if (n >= 0 || errno != EINVAL) {
				whyf("O_DIRECT read of %zu at %llu: expected EINVAL, got %s", bad[i].len,
				     (unsigned long long)bad[i].off, n >= 0 ? "success" : ename(errno));
				ok = false;
			}
		}
		ok = verify_shadow(BASIC_OFF, 32 * BS, "area of the refused writes") && ok;
	}
	report(C_UNALIGNED, ok, "%s", why);

	/* 14: the last block.  Rewrites the bytes it holds (outside our slice,
	 * so its content must stay what it was). */
	why[0] = 0;
	ok = true;
	{
		uint64_t last = (dev_size / BS - 1) * BS;
		if (pread_full(dfd, rb, BS, last)) {
			whyf("O_DIRECT read of the last block at %llu: %s", (unsigned long long)last,
			     ename(errno));
			ok = false;
		} else {
			memcpy(buf, rb, BS);
			fill_random(buf + BS, BS, 5);
			ssize_t n = pwrite(dfd, buf, 2 * BS, last);
			if (n != (ssize_t)BS) {
				whyf("8 KiB O_DIRECT write at the last block: expected 4096 (short), got %zd %s",
				     n, n < 0 ? ename(errno) : "");
				ok = false;
			}
			if (pread_full(dfd, rb + BS, BS, last) || memcmp(rb + BS, buf, BS)) {
				whyf("last block changed or unreadable after the short write");
				ok = false;
			}
			n = pread(dfd, rb, 2 * BS, last);
			if (n != (ssize_t)BS) {
				whyf("8 KiB read at the last block: expected 4096, got %zd", n);
				ok = false;
			}
		}
	}
	report(C_LASTBLOCK, ok, "%s", why);

	/* 15: beyond the end. */
	why[0] = 0;
	ok = true;
	{
		ssize_t n = pwrite(dfd, buf, BS, dev_size);
		if (n >= 0 || errno != ENOSPC) {
			whyf("O_DIRECT write at the end: expected ENOSPC, got %s", n >= 0 ? "success" : ename(errno));
			ok = false;
		}
		n = pwrite(bfd, buf, 100, dev_size + 4096);
		if (n >= 0 || errno != ENOSPC) {
			whyf("buffered write beyond the end: expected ENOSPC, got %s", n >= 0 ? "success" : ename(errno));
			ok = false;
		}
		n = pread(dfd, rb, BS, dev_size);
		if (n != 0) {
			whyf("O_DIRECT read at the end: expected 0, got %zd %s", n, n < 0 ? ename(errno) : "");
			ok = false;
		}
		n = pread(bfd, rb, 100, dev_size);
		if (n != 0) {
			whyf("buffered read at the end: expected 0, got %zd", n);
			ok = false;
		}
	}
	report(C_ENOSPC, ok, "%s", why);

	/* 16: discard. */
	why[0] = 0;
	{
		uint64_t r[2] = { BASIC_OFF + MiB, CHUNK };
		int rc = ioctl(bfd, BLKDISCARD, r);
		int e = rc ? errno : 0;
		ok = rc < 0 && e == EOPNOTSUPP;
		if (!ok)
			whyf("BLKDISCARD: expected EOPNOTSUPP, got %s", ename(e));
		if (!rc)
			whyf("(the discard was accepted; the data check below shows what it did)");
		ok = verify_shadow(BASIC_OFF + MiB, CHUNK, "after the discard") && ok;
	}
	report(C_DISCARD, ok, "%s", why);

	/* 17: flush paths. */
	why[0] = 0;
	ok = true;
	{
		size_t len = 16 * BS;
		uint64_t off = BASIC_OFF + 2 * MiB;
		struct iovec iov = { buf, len };
		fill_random(buf, len, 1717);
		ssize_t n = pwritev2(dfd, &iov, 1, off, RWF_DSYNC);
		if (n != (ssize_t)len) {
			whyf("pwritev2(RWF_DSYNC): expected %zu, got %zd %s", len, n, n < 0 ? ename(errno) : "");
			ok = false;
		} else {
			memcpy(SH(off), buf, len);
		}
		if (fsync(dfd) || fsync(bfd) || fdatasync(dfd)) {
			whyf("fsync/fdatasync: %s", ename(errno));
			ok = false;
		}
		int sfd = dev_open(O_RDWR | O_SYNC);
		fill_random(buf, len, 1718);
		if (sfd < 0 || !write_and_shadow(sfd, buf, len, off + len, "O_SYNC"))
			ok = false;
		if (sfd >= 0)
			close(sfd);
		ok = verify_shadow(off, 2 * len, "synchronous writes") && ok;
	}
	report(C_FLUSH, ok, "%s", why);
out:
	if (dfd >= 0)
		close(dfd);
	if (bfd >= 0)
		close(bfd);
	free(buf);
	free(rb);
}

/* ============================================ generation-tracked regions */

struct blk {
	int lock;      /* a writer holds the block */
	uint64_t issued; /* last generation issued */
	uint64_t acked;  /* last generation acknowledged */
};

struct region {
	uint64_t off;
	unsigned nb;
	struct blk *b;
	/* results */
	long reads, writes, bad_reads, io_errors;
	char msg[1024];
	pthread_mutex_t mu;
};

static void region_init(struct region *r, uint64_t off, unsigned nb)
{
	memset(r, 0, sizeof(*r));
	r->off = off;
	r->nb = nb;
	r->b = calloc(nb, sizeof(struct blk));
	pthread_mutex_init(&r->mu, NULL);
}

static void region_note(struct region *r, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&r->mu);
	size_t n = strlen(r->msg);
	if (n < sizeof(r->msg) - 200) {
		va_start(ap, fmt);
		vsnprintf(r->msg + n, sizeof(r->msg) - n, fmt, ap);
		va_end(ap);
		strcat(r->msg, "\n");
	}
	pthread_mutex_unlock(&r->mu);
}

#define LD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

/* Write generation 1 to every block (O_DIRECT). */
static bool region_fill(struct region *r)
{
	int fd = dev_open(O_RDWR | O_DIRECT);
	uint8_t *b = xalloc(128 * KiB);
	bool ok = fd >= 0;
	for (unsigned i = 0; ok && i < r->nb; i += 32) {
		unsigned n = r->nb - i < 32 ? r->nb - i : 32;
		for (unsigned j = 0; j < n; j++) {
			fill_block(b + j * BS, r->off / BS + i + j, 1);
			r->b[i + j].issued = r->b[i + j].acked = 1;
		}
		ok = pwrite_full(fd, b, n * BS, r->off + i * BS) == 0;
	}
	if (fd >= 0)
		close(fd);
	free(b);
	return ok;
}

static bool try_lock_extent(struct region *r, unsigned first, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int z = 0;
		if (!__atomic_compare_exchange_n(&r->b[first + i].lock, &z, 1, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST)) {
			while (i--)
				ST(r->b[first + i].lock, 0);
			return false;
		}
	}
	return true;
}

/* Prepare a locked extent: new generations, stamped buffer. */
static void prep_write(struct region *r, unsigned first, unsigned n, uint8_t *buf)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t g = ADD(r->b[first + i].issued, 1);
		fill_block(buf + i * BS, r->off / BS + first + i, g);
	}
}

static void finish_write(struct region *r, unsigned first, unsigned n, const uint8_t *buf, long res)
{
	ADD(r->writes, 1);
	if (res != (long)(n * BS)) {
		ADD(r->io_errors, 1);
		region_note(r, "write of %u blocks at %llu: result %ld (%s)", n,
			    (unsigned long long)(r->off + first * BS), res, res < 0 ? ename(-res) : "short");
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t g;
		memcpy(&g, buf + i * BS + 16, 8);
		ST(r->b[first + i].acked, g);
		ST(r->b[first + i].lock, 0);
	}
}

/* Check a read: lo[i] acknowledged at issue, hi = issued now. */
static void check_read(struct region *r, unsigned first, unsigned n, const uint8_t *buf,
		       const uint64_t *lo, long res, const char *who)
{
	ADD(r->reads, 1);
	if (res != (long)(n * BS)) {
		ADD(r->io_errors, 1);
		region_note(r, "%s: read of %u blocks at %llu: result %ld (%s)", who, n,
			    (unsigned long long)(r->off + first * BS), res, res < 0 ? ename(-res) : "short");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t lba = r->off / BS + first + i;
		uint64_t hi = LD(r->b[first + i].issued);
		int64_t g = block_gen(buf + i * BS, lba);
		if (g < 0 || (uint64_t)g < lo[i] || (uint64_t)g > hi) {
			if (ADD(r->bad_reads, 1) <= 5)
				region_note(r, "%s: block %llu: expected a whole block of generation %llu..%llu, got %s %lld",
					    who, (unsigned long long)lba, (unsigned long long)lo[i],
					    (unsigned long long)hi, g < 0 ? "a torn/foreign block" : "generation",
					    (long long)g);
		}
	}
}

/* Verify every block holds its last acknowledged generation. */
static bool region_final(struct region *r, char *msg, size_t mlen)
{
	int fd = dev_open(O_RDONLY | O_DIRECT);
	uint8_t *b = xalloc(r->nb * BS);
	int bad = 0;
	msg[0] = 0;
	if (fd < 0 || pread_full(fd, b, r->nb * BS, r->off)) {
		snprintf(msg, mlen, "O_DIRECT read of region at %llu failed", (unsigned long long)r->off);
		bad = 1;
	}
	for (unsigned i = 0; !bad && i < r->nb; i++) {
		int64_t g = block_gen(b + i * BS, r->off / BS + i);
		if (g < 0 || (uint64_t)g != r->b[i].acked) {
			if (!bad)
				snprintf(msg, mlen, "block %llu: expected generation %llu, got %lld",
					 (unsigned long long)(r->off / BS + i), (unsigned long long)r->b[i].acked,
					 (long long)g);
			bad++;
		}
	}
	if (fd >= 0)
		close(fd);
	free(b);
	return !bad;
}

struct worker {
	struct region *r;
	int kind; /* 0 pwrite, 1 pread, 2 uring write, 3 uring read, 4 buffered write, 5 buffered read */
	bool polled;
	unsigned maxblk;
	double until;
	uint64_t seed;
	const char *name;
};

static void pick_extent(struct region *r, unsigned maxblk, unsigned *first, unsigned *n)
{
	*n = 1 + rnd() % (maxblk < r->nb ? maxblk : r->nb);
	*first = rnd() % (r->nb - *n + 1);
}

static void *sync_worker(void *arg)
{
	struct worker *w = arg;
	struct region *r = w->r;
	bool buffered = w->kind >= 4;
	int fd = dev_open(O_RDWR | (buffered ? 0 : O_DIRECT));
	uint8_t *buf = xalloc(w->maxblk * BS);
	uint64_t *lo = calloc(w->maxblk, sizeof(uint64_t)), *is = calloc(w->maxblk, sizeof(uint64_t));
	rng_state = w->seed;
	if (fd < 0) {
		region_note(r, "%s: open: %s", w->name, ename(errno));
		ADD(r->io_errors, 1);
		return NULL;
	}
	while (now_s() < w->until) {
		unsigned first, n;
		pick_extent(r, w->maxblk, &first, &n);
		if (w->kind == 0 || w->kind == 4) {
			if (!try_lock_extent(r, first, n))
				continue;
			prep_write(r, first, n, buf);
			ssize_t res = pwrite(fd, buf, n * BS, r->off + first * BS);
			finish_write(r, first, n, buf, res < 0 ? -errno : res);
			if (w->kind == 4 && rnd() % 8 == 0 && fsync(fd)) {
				ADD(r->io_errors, 1);
				region_note(r, "%s: fsync: %s", w->name, ename(errno));
			}
		} else if (w->kind == 1) {
			for (unsigned i = 0; i < n; i++)
				lo[i] = LD(r->b[first + i].acked);
			ssize_t res = pread(fd, buf, n * BS, r->off + first * BS);
			check_read(r, first, n, buf, lo, res < 0 ? -errno : res, w->name);
		} else {
			/* Buffered reader: the page cache gives no atomicity of its
			 * own, so only blocks no write touched during the read
			 * (seqlock style) are checked, and they must be exact. */
			for (unsigned i = 0; i < n; i++) {
				is[i] = LD(r->b[first + i].issued);
				lo[i] = LD(r->b[first + i].acked);
			}
			ssize_t res = pread(fd, buf, n * BS, r->off + first * BS);
			ADD(r->reads, 1);
			if (res != (ssize_t)(n * BS)) {
				ADD(r->io_errors, 1);
				region_note(r, "%s: buffered read: %zd %s", w->name, res, res < 0 ? ename(errno) : "");
				continue;
			}
			for (unsigned i = 0; i < n; i++) {
				if (is[i] != lo[i] || LD(r->b[first + i].issued) != is[i])
					continue;
				int64_t g = block_gen(buf + i * BS, r->off / BS + first + i);
				if (g != (int64_t)is[i] && ADD(r->bad_reads, 1) <= 5)
					region_note(r, "%s: block %llu untouched during the read: expected generation %llu, got %lld",
						    w->name, (unsigned long long)(r->off / BS + first + i),
						    (unsigned long long)is[i], (long long)g);
			}
		}
	}
	if (buffered && fsync(fd)) {
		ADD(r->io_errors, 1);
		region_note(r, "%s: final fsync: %s", w->name, ename(errno));
	}
	close(fd);
	free(buf);
	free(lo);
	free(is);
	return NULL;
}

#define QD 32
struct slot {
	bool busy;
	unsigned first, n;
	uint8_t *buf;
	uint64_t lo[33];
};

static void *uring_worker(void *arg)
{
	struct worker *w = arg;
	struct region *r = w->r;
	struct io_uring ring;
	struct slot slots[QD];
	bool writer = w->kind == 2;
	int fd = dev_open(O_RDWR | O_DIRECT);
	int inflight = 0;
	rng_state = w->seed;
	int e = fd < 0 ? errno : -io_uring_queue_init(QD, &ring, w->polled ? IORING_SETUP_IOPOLL : 0);
	if (e) {
		region_note(r, "%s: setup: %s", w->name, ename(e));
		ADD(r->io_errors, 1);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (int i = 0; i < QD; i++) {
		slots[i].busy = false;
		slots[i].buf = xalloc(w->maxblk * BS);
	}
	for (;;) {
		bool more = now_s() < w->until;
		int queued = 0;
		for (int i = 0; more && i < QD; i++) {
			struct slot *s = &slots[i];
			if (s->busy)
				continue;
			unsigned first, n;
			int tries = 0;
			pick_extent(r, w->maxblk, &first, &n);
			if (writer) {
				while (!try_lock_extent(r, first, n) && ++tries < 8)
					pick_extent(r, w->maxblk, &first, &n);
				if (tries == 8)
					continue;
				prep_write(r, first, n, s->buf);
			} else {
				for (unsigned j = 0; j < n; j++)
					s->lo[j] = LD(r->b[first + j].acked);
			}
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (!sqe) {
				if (writer)
					for (unsigned j = 0; j < n; j++)
						ST(r->b[first + j].lock, 0);
				break;
			}
			if (writer)
				io_uring_prep_write(sqe, fd, s->buf, n * BS, r->off + first * BS);
			else
				io_uring_prep_read(sqe, fd, s->buf, n * BS, r->off + first * BS);
			io_uring_sqe_set_data64(sqe, i);
			s->busy = true;
			s->first = first;
			s->n = n;
			queued++;
			inflight++;
		}
		if (queued) {
			int rc = io_uring_submit(&ring);
			if (rc < 0) {
				region_note(r, "%s: submit: %s", w->name, ename(-rc));
				ADD(r->io_errors, 1);
				break;
			}
		}
		if (!inflight)
			break;
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { 5, 0 };
		int rc = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (rc == -ETIME || rc == -EINTR) {
			if (now_s() > w->until + 60) {
				region_note(r, "%s: %d requests did not complete within 60 s", w->name, inflight);
				ADD(r->io_errors, 1);
				break; /* leak the ring: the kernel still owns its buffers */
			}
			continue;
		}
		if (rc < 0) {
			region_note(r, "%s: wait: %s", w->name, ename(-rc));
			ADD(r->io_errors, 1);
			break;
		}
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			struct slot *s = &slots[cqe->user_data];
			if (writer)
				finish_write(r, s->first, s->n, s->buf, cqe->res);
			else
				check_read(r, s->first, s->n, s->buf, s->lo, cqe->res, w->name);
			s->busy = false;
			inflight--;
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
	}
	if (!inflight) {
		io_uring_queue_exit(&ring);
		for (int i = 0; i < QD; i++)
			free(slots[i].buf);
	}
	close(fd);
	return NULL;
}

static void run_workers(struct worker *w, int n)
{
	pthread_t t[16];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, w[i].kind == 2 || w[i].kind == 3 ? uring_worker : sync_worker, &w[i]);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* ===================================================== phase 2: atomicity */

struct ww_arg {
	int id;
	uint64_t lba0;
	uint64_t gen;
	uint8_t *buf;
	pthread_barrier_t *bar;
	volatile bool *stop;
	int err;
};

static void *ww_thread(void *arg)
{
	struct ww_arg *a = arg;
	int fd = dev_open(O_RDWR | O_DIRECT);
	for (;;) {
		pthread_barrier_wait(a->bar); /* round start */
		if (*a->stop)
			break;
		for (int i = 0; i < 4; i++)
			fill_block(a->buf + i * BS, a->lba0 + i, a->gen);
		if (fd < 0 || pwrite_full(fd, a->buf, 4 * BS, a->lba0 * BS))
			a->err = fd < 0 ? EBADF : errno ? errno : EIO;
		pthread_barrier_wait(a->bar); /* round end */
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void phase_atomic(double secs)
{
	/* 18: one writer (1-4 blocks) and two readers (1-16 blocks) on 16 blocks. */
	struct region r;
	region_init(&r, ATOM_OFF, 16);
	if (!region_fill(&r)) {
		report(C_RACE_RW, false, "initial fill failed");
	} else {
		double until = now_s() + secs;
		struct worker w[] = {
			{ &r, 0, false, 4, until, 11, "writer" },
			{ &r, 1, false, 16, until, 12, "reader 1" },
			{ &r, 1, false, 16, until, 13, "reader 2" },
		};
		run_workers(w, 3);
		char fm[256];
		bool fin = region_final(&r, fm, sizeof(fm));
		report(C_RACE_RW, !r.bad_reads && !r.io_errors && fin && r.reads > 10 && r.writes > 10,
		       "%ld reads (%ld not whole/in bounds), %ld writes, %ld I/O errors\n%s%s",
		       r.reads, r.bad_reads, r.writes, r.io_errors, r.msg, fin ? "" : fm);
		diag("race read/write: %ld reads, %ld writes in %.0f s", r.reads, r.writes, secs);
	}
	free(r.b);

	/* 19: two writers on the same 4 blocks, each round. */
	pthread_barrier_t bar;
	volatile bool stop = false;
	struct ww_arg a[2];
	pthread_t t[2];
	uint64_t lba0 = (ATOM_OFF + MiB) / BS;
	pthread_barrier_init(&bar, NULL, 3);
	for (int i = 0; i < 2; i++) {
		a[i] = (struct ww_arg){ i, lba0, 0, xalloc(4 * BS), &bar, &stop, 0 };
		pthread_create(&t[i], NULL, ww_thread, &a[i]);
	}
	int fd = dev_open(O_RDONLY | O_DIRECT);
	uint8_t *rb = xalloc(4 * BS);
	long rounds = 0, bad = 0, mixed_req = 0;
	why[0] = 0;
	double until = now_s() + secs;
	while (now_s() < until) {
		uint64_t ga = 2 * rounds + 2, gb = 2 * rounds + 3;
		a[0].gen = ga;
		a[1].gen = gb;
		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		rounds++;
		if (a[0].err || a[1].err) {
			whyf("write failed: %s / %s", ename(a[0].err), ename(a[1].err));
			bad++;
			break;
		}
		if (fd < 0 || pread_full(fd, rb, 4 * BS, lba0 * BS)) {
			whyf("read back failed");
			bad++;
			break;
		}
		int from_a = 0;
		for (int i = 0; i < 4; i++) {
			int64_t g = block_gen(rb + i * BS, lba0 + i);
			if (g != (int64_t)ga && g != (int64_t)gb) {
				if (bad++ < 5)
					whyf("round %ld block %d: expected a whole block of generation %llu or %llu, got %lld",
					     rounds, i, (unsigned long long)ga, (unsigned long long)gb, (long long)g);
			}
			from_a += g == (int64_t)ga;
		}
		/* Not an error (a multi-block request is not atomic): noted only. */
		mixed_req += from_a && from_a != 4;
	}
	stop = true;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (fd >= 0)
		close(fd);
	report(C_RACE_WW, !bad && rounds > 5, "%ld rounds, %ld bad blocks\n%s", rounds, bad, why);
	diag("two writers: %ld rounds, %ld with blocks from both requests (allowed)", rounds, mixed_req);
	free(rb);
}

/* ================================================ phase 3: io_uring, mixed */

static bool uring_roundtrip(bool polled, uint64_t base, uint64_t span, char *msg, size_t mlen)
{
	struct io_uring ring;
	int fd = dev_open(O_RDWR | O_DIRECT);
	int e = fd < 0 ? errno : -io_uring_queue_init(QD, &ring, polled ? IORING_SETUP_IOPOLL : 0);
	msg[0] = 0;
	if (e) {
		snprintf(msg, mlen, "io_uring setup (%s): %s", polled ? "IOPOLL" : "plain", ename(e));
		if (fd >= 0)
			close(fd);
		return false;
	}
	uint8_t *bufs[QD], *rbufs[QD];
	uint64_t offs[QD];
	size_t lens[QD];
	bool ok = true;
	/* QD non-overlapping extents of 4-132 KiB packed in [base, base+span),
	 * with gaps of 0-1 block (so some cross 128 KiB chunk boundaries). */
	uint64_t cursor = base + (rnd() % 8) * BS;
	for (int i = 0; i < QD; i++) {
		lens[i] = (1 + rnd() % 33) * BS;
		if (cursor + lens[i] > base + span)
			lens[i] = BS, cursor = base + span - (QD - i) * BS; /* never with 4 MiB */
		offs[i] = cursor;
		cursor += lens[i] + (rnd() % 2) * BS;
		bufs[i] = xalloc(lens[i]);
		rbufs[i] = xalloc(lens[i]);
		fill_random(bufs[i], lens[i], rnd());
	}
	for (int pass = 0; pass < 2 && ok; pass++) {
		for (int i = 0; i < QD; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			if (pass == 0)
				io_uring_prep_write(sqe, fd, bufs[i], lens[i], offs[i]);
			else
				io_uring_prep_read(sqe, fd, rbufs[i], lens[i], offs[i]);
			sqe->user_data = i;
		}
		int rc = io_uring_submit_and_wait(&ring, QD);
		if (rc < 0) {
			snprintf(msg, mlen, "submit: %s", ename(-rc));
			ok = false;
			break;
		}
		double deadline = now_s() + 60;
		for (int got = 0; got < QD;) {
			struct io_uring_cqe *cqe;
			struct __kernel_timespec ts = { 1, 0 };
			rc = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
			/* An IOPOLL ring's wait can return -ETIME before its timeout. */
			if ((rc == -ETIME || rc == -EINTR) && now_s() < deadline)
				continue;
			if (rc < 0) {
				snprintf(msg, mlen, "wait for completion %d/%d: %s", got, QD, ename(-rc));
				ok = false;
				goto out;
			}
			int i = cqe->user_data;
			if (cqe->res != (int)lens[i]) {
				snprintf(msg, mlen, "%s of %zu at %llu: expected %zu, got %d %s", pass ? "read" : "write",
					 lens[i], (unsigned long long)offs[i], lens[i], cqe->res,
					 cqe->res < 0 ? ename(-cqe->res) : "");
				ok = false;
			}
			io_uring_cqe_seen(&ring, cqe);
			got++;
		}
	}
	for (int i = 0; ok && i < QD; i++) {
		if (memcmp(bufs[i], rbufs[i], lens[i])) {
			snprintf(msg, mlen, "%s: %zu bytes at %llu read back different (first diff at +%ld)",
				 polled ? "IOPOLL" : "plain", lens[i], (unsigned long long)offs[i],
				 first_diff(bufs[i], rbufs[i], lens[i]));
			ok = false;
		}
		memcpy(SH(offs[i]), bufs[i], lens[i]);
	}
	if (ok && !polled) {
		/* IORING_OP_FSYNC (a flush) on the plain ring. */
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		io_uring_prep_fsync(sqe, fd, 0);
		struct io_uring_cqe *cqe;
		io_uring_submit(&ring);
		if (io_uring_wait_cqe(&ring, &cqe) == 0) {
			if (cqe->res) {
				snprintf(msg, mlen, "IORING_OP_FSYNC: %s", ename(-cqe->res));
				ok = false;
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
out:
	io_uring_queue_exit(&ring);
	for (int i = 0; i < QD; i++) {
		free(bufs[i]);
		free(rbufs[i]);
	}
	close(fd);
	return ok;
}

static void phase_uring(double mix_secs, bool have_dbg)
{
	char msg[512];
	char keys[256] = "";
	bool ok = uring_roundtrip(false, URING_OFF, URING_LEN / 2, msg, sizeof(msg));
	report(C_URING, ok, "%s", msg);
	long long p0 = have_dbg ? stats_polled(keys, sizeof(keys)) : -1;
	ok = uring_roundtrip(true, URING_OFF + URING_LEN / 2, URING_LEN / 2, msg, sizeof(msg));
	report(C_URING_POLL, ok, "%s", msg);
	long long p1 = have_dbg ? stats_polled(keys, sizeof(keys)) : -1;
	report(C_STATS_POLLED, p0 >= 0 && p1 >= p0 + 1,
	       "expected a stats key counting polled requests (other than irq_polled) to grow after 64 IOPOLL requests\n"
	       "got keys '%s': before %lld, after %lld", keys, p0, p1);

	/* 23/24: the mixed run. */
	struct region r1, r2;
	region_init(&r1, R1_OFF, R1_NB);
	region_init(&r2, R2_OFF, R2_NB);
	if (!region_fill(&r1) || !region_fill(&r2)) {
		report(C_MIX, false, "initial fill of the stress regions failed");
		return;
	}
	double until = now_s() + mix_secs;
	struct worker w[] = {
		{ &r1, 2, true, 33, until, 21, "polled io_uring writer" },
		{ &r1, 2, false, 33, until, 22, "irq io_uring writer" },
		{ &r1, 0, false, 33, until, 23, "pwrite writer" },
		{ &r1, 1, false, 33, until, 24, "pread reader" },
		{ &r1, 3, true, 33, until, 25, "polled io_uring reader" },
		{ &r2, 4, false, 64, until, 26, "buffered writer" },
		{ &r2, 5, false, 64, until, 27, "buffered reader" },
	};
	run_workers(w, 7);
	report(C_MIX,
	       !r1.bad_reads && !r1.io_errors && !r2.bad_reads && !r2.io_errors && r1.reads > 10 &&
		       r1.writes > 10 && r2.writes > 2,
	       "O_DIRECT region: %ld reads (%ld bad), %ld writes, %ld I/O errors\n%s"
	       "buffered region: %ld reads (%ld bad), %ld writes, %ld I/O errors\n%s",
	       r1.reads, r1.bad_reads, r1.writes, r1.io_errors, r1.msg, r2.reads, r2.bad_reads, r2.writes,
	       r2.io_errors, r2.msg);
	diag("mixed run %.0f s: O_DIRECT %ld reads %ld writes, buffered %ld reads %ld writes", mix_secs,
	     r1.reads, r1.writes, r2.reads, r2.writes);
	char m1[256], m2[256];
	bool f1 = region_final(&r1, m1, sizeof(m1)), f2 = region_final(&r2, m2, sizeof(m2));
	report(C_MIX_FINAL, f1 && f2, "O_DIRECT region: %s\nbuffered region: %s", f1 ? "ok" : m1, f2 ? "ok" : m2);
}

/* =================================================== phase 4: debugfs */

static void phase_debugfs(void)
{
	char buf[16384], a0[16384], a1[16384];
	why[0] = 0;
	bool ok = dbg_read("stats", buf, sizeof(buf)) > 0;
	int lines = 0;
	if (!ok)
		whyf("read %s/stats: %s", dbg_dir, ename(errno));
	for (char *l = strtok(buf, "\n"); ok && l; l = strtok(NULL, "\n")) {
		char k[128], v[128], extra[8];
		if (sscanf(l, "%127s %127s %7s", k, v, extra) != 2) {
			whyf("line '%s' is not 'key value'", l);
			ok = false;
		}
		lines++;
	}
	report(C_STATS_FMT, ok && lines > 3, "%s(%d lines)", why, lines);

	/* 26: EINVAL. */
	why[0] = 0;
	ok = dbg_read("actors", a0, sizeof(a0)) > 0;
	if (!ok)
		whyf("read actors: %s", ename(errno));
	const char *bad[] = { "foo\n", "2 sideways\n", "2\n", "99 host\n", "host 2\n", "0 device\n" };
	for (unsigned i = 0; ok && i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = migrate(bad[i]);
		if (e != EINVAL) {
			char t[32];
			snprintf(t, sizeof(t), "%s", bad[i]);
			trim(t);
			whyf("migrate '%s': expected EINVAL, got %s", t, ename(e));
			ok = false;
		}
	}
	if (dbg_read("actors", a1, sizeof(a1)) < 0 || strcmp(a0, a1)) {
		whyf("the actors file changed after refused migrate writes:\nbefore:\n%s\nafter:\n%s", a0, a1);
		ok = false;
	}
	report(C_MIG_EINVAL, ok, "%s", why);
}

/* =================================================== phase 5: configfs */

static bool configfs_ready(void)
{
	struct statfs sf;
	if (access(cfg_root, F_OK) == 0)
		return true;
	if (statfs("/sys/kernel/config", &sf) || sf.f_type != CONFIGFS_MAGIC_)
		mount("none", "/sys/kernel/config", "configfs", 0, NULL);
	return access(cfg_root, F_OK) == 0;
}

static int count_enabled_others(void)
{
	DIR *d = opendir(cfg_root);
	struct dirent *de;
	int n = 0;
	char v[128];
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "indep_", 6))
			continue;
		if (cfg_get(de->d_name, "device", v, sizeof(v)) >= 0 && !strcmp(v, disk_name) &&
		    cfg_get(de->d_name, "enable", v, sizeof(v)) >= 0 && !strcmp(v, "1"))
			n++;
	}
	closedir(d);
	return n;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);
	switch (toupper((unsigned char)*end)) {
	case 'K': return v * KiB;
	case 'M': return v * MiB;
	case 'G': return v * 1024 * MiB;
	}
	return v;
}

#define A_DEF (CFG_OFF)             /* 292 MiB: default pipeline, 1 MiB */
#define A_CZ (CFG_OFF + MiB)        /* 293 MiB: compress + checksum */
#define A_ENC (CFG_OFF + 2 * MiB)   /* 294 MiB: encrypt */
#define A_EXTRA (CFG_OFF + 4 * MiB) /* 296 MiB: ENOSPC fillers, 128 KiB each */
#define A_CK (CFG_OFF + 6 * MiB)    /* 298 MiB: checksum only */
#define A_PT_BLK (CFG_OFF + 7 * MiB) /* 299 MiB: a passthrough block */

static bool phase_configfs(void)
{
	char v[256], v2[256];
	const char *step;
	int e;
	bool ok;

	if (!configfs_ready()) {
		report(C_CFG_MKDIR, false, "%s does not exist (configfs mounted? reflux registered?)", cfg_root);
		return false;
	}
	cfg_cleanup();
	why[0] = 0;
	ok = (e = cfg_mkdir("indep_a")) == 0;
	if (!ok)
		whyf("mkdir: %s", ename(e));
	const char *attrs[] = { "device", "start", "length", "pipeline", "checksum", "enable" };
	for (unsigned i = 0; ok && i < 6; i++)
		if (cfg_get("indep_a", attrs[i], v, sizeof(v)) < 0) {
			whyf("attribute %s missing/unreadable", attrs[i]);
			ok = false;
		}
	if (ok && (cfg_get("indep_a", "enable", v, sizeof(v)) < 0 || strcmp(v, "0"))) {
		whyf("enable of a new attachment: expected 0, got '%s'", v);
		ok = false;
	}
	report(C_CFG_MKDIR, ok, "%s", why);
	if (!ok)
		return false;

	/* 28: EINVAL at store, and suffixes. */
	why[0] = 0;
	ok = true;
	struct { const char *attr, *val; } bad[] = {
		{ "start", "4096\n" }, { "start", "65536\n" }, { "length", "4096\n" }, { "length", "192K\n" },
		{ "start", "abc\n" }, { "length", "12x\n" }, { "pipeline", "bogus\n" },
		{ "checksum", "maybe\n" }, { "enable", "maybe\n" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg_get("indep_a", bad[i].attr, v, sizeof(v));
		e = cfg_set("indep_a", bad[i].attr, bad[i].val);
		cfg_get("indep_a", bad[i].attr, v2, sizeof(v2));
		if (e != EINVAL || strcmp(v, v2)) {
			char t[32];
			snprintf(t, sizeof(t), "%s", bad[i].val);
			trim(t);
			whyf("%s <- '%s': expected EINVAL and no change, got %s, value '%s' -> '%s'", bad[i].attr, t,
			     ename(e), v, v2);
			ok = false;
		}
	}
	if ((e = cfg_set("indep_a", "start", "292M\n")) || cfg_get("indep_a", "start", v, sizeof(v)) < 0 ||
	    parse_size(v) != 292 * MiB) {
		whyf("start <- '292M': expected success and 306184192, got %s, '%s'", ename(e), v);
		ok = false;
	}
	if ((e = cfg_set("indep_a", "length", "1024K\n")) || cfg_get("indep_a", "length", v, sizeof(v)) < 0 ||
	    parse_size(v) != MiB) {
		whyf("length <- '1024K': expected success and 1048576, got %s, '%s'", ename(e), v);
		ok = false;
	}
	report(C_CFG_EINVAL, ok, "%s", why);

	/* 29: ENODEV. */
	why[0] = 0;
	cfg_set("indep_a", "pipeline", "passthrough\n");
	ok = (e = cfg_set("indep_a", "device", "reflux9\n")) == 0;
	if (!ok)
		whyf("device <- reflux9 refused at store: %s (expected the refusal at enable)", ename(e));
	e = cfg_set("indep_a", "enable", "1\n");
	cfg_get("indep_a", "enable", v, sizeof(v));
	if (e != ENODEV || strcmp(v, "0")) {
		whyf("enable with device reflux9: expected ENODEV and enable 0, got %s and '%s'", ename(e), v);
		ok = false;
	}
	report(C_CFG_ENODEV, ok, "%s", why);

	/* 30: ERANGE. */
	why[0] = 0;
	cfg_set("indep_a", "device", "reflux0\n");
	snprintf(v2, sizeof(v2), "%llu\n", (unsigned long long)(dev_size / CHUNK * CHUNK));
	ok = (e = cfg_set("indep_a", "start", v2)) == 0 && (e = cfg_set("indep_a", "length", "262144\n")) == 0;
	if (!ok)
		whyf("setting a range at the end refused at store: %s", ename(e));
	e = cfg_set("indep_a", "enable", "1\n");
	cfg_get("indep_a", "enable", v, sizeof(v));
	if (e != ERANGE || strcmp(v, "0")) {
		whyf("enable with start %s: expected ERANGE and enable 0, got %s and '%s'", v2, ename(e), v);
		ok = false;
		if (!e)
			cfg_set("indep_a", "enable", "0\n");
	}
	report(C_CFG_ERANGE, ok, "%s", why);

	/* 31: zero length. */
	why[0] = 0;
	snprintf(v2, sizeof(v2), "%llu\n", (unsigned long long)A_DEF);
	cfg_set("indep_a", "start", v2);
	ok = (e = cfg_set("indep_a", "length", "0\n")) == 0;
	if (!ok)
		whyf("length <- 0 refused at store: %s (expected the refusal at enable)", ename(e));
	e = cfg_set("indep_a", "enable", "1\n");
	cfg_get("indep_a", "enable", v, sizeof(v));
	if (e != EINVAL || strcmp(v, "0")) {
		whyf("enable with length 0: expected EINVAL and enable 0, got %s and '%s'", ename(e), v);
		ok = false;
		if (!e)
			cfg_set("indep_a", "enable", "0\n");
	}
	report(C_CFG_ZERO, ok, "%s", why);
	cfg_rmdir("indep_a");

	/* 32: overlap.  Also sets up the compress+checksum and encrypt ranges. */
	why[0] = 0;
	ok = true;
	if ((e = cfg_attach("indep_cz", A_CZ, MiB, "compress", 1, &step))) {
		whyf("attach compress+checksum at 293 MiB: %s at %s", ename(e), step);
		ok = false;
	}
	if ((e = cfg_attach("indep_enc", A_ENC, MiB, "encrypt", 0, &step))) {
		whyf("attach encrypt at 294 MiB: %s at %s", ename(e), step);
		ok = false;
	}
	e = cfg_attach("indep_ovl", A_CZ + 512 * KiB, CHUNK, "checksum", 0, &step);
	cfg_get("indep_ovl", "enable", v, sizeof(v));
	if (e != EBUSY || strcmp(step, "enable") || strcmp(v, "0")) {
		whyf("enable overlapping indep_cz: expected EBUSY at enable and enable 0, got %s at %s, enable '%s'",
		     ename(e), step, v);
		ok = false;
	}
	cfg_set("indep_ovl", "enable", "0\n");
	cfg_rmdir("indep_ovl");
	report(C_CFG_EBUSY_OVL, ok, "%s", why);
	bool have_cz = cfg_get("indep_cz", "enable", v, sizeof(v)) >= 0 && !strcmp(v, "1");
	cfg_get("indep_enc", "enable", v2, sizeof(v2));
	bool have_enc = !strcmp(v2, "1");

	/* 33: ENOSPC. */
	why[0] = 0;
	ok = true;
	{
		int others = count_enabled_others();
		int mine = have_cz + have_enc;
		int need = 8 - others - mine;
		char name[32];
		if (others)
			diag("%d attachment(s) of other users enabled on %s", others, disk_name);
		for (int i = 0; i < need && ok; i++) {
			snprintf(name, sizeof(name), "indep_x%d", i);
			if ((e = cfg_attach(name, A_EXTRA + i * CHUNK, CHUNK, "passthrough", 0, &step))) {
				whyf("attachment %d of 8: %s at %s", others + mine + i + 1, ename(e), step);
				ok = false;
			}
		}
		e = cfg_attach("indep_x9", A_EXTRA + 12 * CHUNK, CHUNK, "passthrough", 0, &step);
		cfg_get("indep_x9", "enable", v, sizeof(v));
		if (e != ENOSPC || strcmp(step, "enable") || strcmp(v, "0")) {
			whyf("ninth attachment: expected ENOSPC at enable and enable 0, got %s at %s, enable '%s'",
			     ename(e), step, v);
			ok = false;
		}
		cfg_set("indep_x9", "enable", "0\n");
		cfg_rmdir("indep_x9");
		report(C_CFG_ENOSPC, ok, "%s", why);
	}

	/* 34: values fixed while enabled (on indep_x0, or indep_cz). */
	why[0] = 0;
	ok = true;
	{
		const char *att = access("/sys/kernel/config/reflux/indep_x0", F_OK) == 0 ? "indep_x0" : "indep_cz";
		struct { const char *attr, *val; } chg[] = {
			{ "start", "0\n" }, { "length", "262144\n" }, { "pipeline", "checksum\n" },
			{ "checksum", "1\n" }, { "device", "reflux1\n" },
		};
		cfg_get(att, "enable", v, sizeof(v));
		if (strcmp(v, "1")) {
			whyf("no enabled attachment to test with (%s enable '%s')", att, v);
			ok = false;
		}
		for (unsigned i = 0; ok && i < sizeof(chg) / sizeof(chg[0]); i++) {
			cfg_get(att, chg[i].attr, v, sizeof(v));
			e = cfg_set(att, chg[i].attr, chg[i].val);
			cfg_get(att, chg[i].attr, v2, sizeof(v2));
			if (e != EBUSY || strcmp(v, v2)) {
				whyf("%s <- %s while enabled: expected EBUSY and no change, got %s, '%s' -> '%s'",
				     chg[i].attr, chg[i].val, ename(e), v, v2);
				ok = false;
			}
		}
		report(C_CFG_FIXED, ok, "%s", why);
	}
	/* Back to the two data attachments only. */
	for (int i = 0; i < 8; i++) {
		char name[32];
		snprintf(name, sizeof(name), "indep_x%d", i);
		cfg_set(name, "enable", "0\n");
		cfg_rmdir(name);
	}

	/* 35: 3 MiB across the three ranges. */
	why[0] = 0;
	ok = have_cz && have_enc;
	if (!ok)
		whyf("the compress+checksum / encrypt attachments are not enabled");
	int dfd = dev_open(O_RDWR | O_DIRECT), bfd = dev_open(O_RDWR);
	uint8_t *buf = xalloc(3 * MiB), *rb = xalloc(3 * MiB);
	if (ok) {
		/* Half compressible (repeated text), half random, per block. */
		fill_random(buf, 3 * MiB, 3535);
		for (uint64_t o = 0; o < 3 * MiB; o += 2 * BS)
			for (unsigned j = 0; j < BS; j++)
				buf[o + j] = "reflux doc test, repeated text. "[j % 32];
		ok = write_and_shadow(dfd, buf, 3 * MiB, A_DEF, "3 MiB O_DIRECT");
		ok = ok && verify_shadow(A_DEF, 3 * MiB, "3 MiB O_DIRECT read");
		if (ok && (pread_full(bfd, rb, 3 * MiB, A_DEF) || memcmp(rb, buf, 3 * MiB))) {
			whyf("3 MiB buffered read differs");
			ok = false;
		}
		/* A buffered write across the default/compress boundary. */
		fill_random(buf, 512 * KiB, 3536);
		ok = ok && write_and_shadow(bfd, buf, 512 * KiB, A_CZ - 256 * KiB - 1000, "buffered across");
		if (ok && fsync(bfd)) {
			whyf("fsync: %s", ename(errno));
			ok = false;
		}
		ok = ok && verify_shadow(A_DEF, 3 * MiB, "after the buffered write across the boundary");
	}
	report(C_CFG_DATA, ok, "%s", why);

	/* 36: EALREADY, and data across migrations. */
	why[0] = 0;
	ok = have_cz;
	{
		char a0[16384], a1[16384];
		int e1 = migrate("2 host\n");
		if (e1 && e1 != EALREADY) {
			whyf("migrate '2 host' (LZ4 starts on the device by default): %s", ename(e1));
			ok = false;
		}
		dbg_read("actors", a0, sizeof(a0));
		e = migrate("2 host\n");
		dbg_read("actors", a1, sizeof(a1));
		if (e != EALREADY || strcmp(a0, a1)) {
			whyf("second migrate '2 host': expected EALREADY and actors unchanged, got %s%s", ename(e),
			     strcmp(a0, a1) ? " and a changed actors file" : "");
			ok = false;
		}
		ok = verify_shadow(A_DEF, 3 * MiB, "with LZ4 on the host") && ok;
		e = migrate("2 device\n");
		if (e) {
			whyf("migrate '2 device': %s", ename(e));
			ok = false;
		}
		dbg_read("actors", a0, sizeof(a0));
		e = migrate("2 device\n");
		dbg_read("actors", a1, sizeof(a1));
		if (e != EALREADY || strcmp(a0, a1)) {
			whyf("second migrate '2 device': expected EALREADY and actors unchanged, got %s", ename(e));
			ok = false;
		}
		if ((e = migrate("1 host\n")) && e != EALREADY) {
			whyf("migrate '1 host': %s", ename(e));
			ok = false;
		}
		ok = verify_shadow(A_DEF, 3 * MiB, "with crc32c on the host") && ok;
		if ((e = migrate("1 device\n")) && e != EALREADY) {
			whyf("migrate '1 device': %s", ename(e));
			ok = false;
		}
		ok = verify_shadow(A_DEF, 3 * MiB, "after migrating back") && ok;
	}
	report(C_MIG_EALREADY, ok, "%s", why);

	/* 37: corrupt_lba under passthrough, unit confirmed by peek. */
	why[0] = 0;
	ok = true;
	bool unit_ok = false;
	uint8_t *blk = xalloc(BS);
	{
		uint64_t lba = A_PT_BLK / BS;
		fill_random(blk, BS, 3737);
		ok = write_and_shadow(dfd, blk, BS, A_PT_BLK, "passthrough block");
		char mk[80];
		tohex(blk, 16, mk);
		char *h = ok ? peek_hex(lba) : NULL;
		unit_ok = h && strstr(h, mk);
		if (ok && !unit_ok) {
			whyf("peek of block %llu does not show its first 16 bytes %s: block unit unclear, not corrupting",
			     (unsigned long long)lba, mk);
			ok = false;
		}
		if (unit_ok) {
			snprintf(v, sizeof(v), "%llu\n", (unsigned long long)lba);
			if ((e = dbg_write("corrupt_lba", v))) {
				whyf("write corrupt_lba: %s", ename(e));
				ok = false;
			} else {
				msleep(50);
				if (pread_full(dfd, rb, BS, A_PT_BLK)) {
					whyf("read of the corrupted passthrough block: %s", ename(errno));
					ok = false;
				} else if (rb[0] == blk[0] || memcmp(rb + 1, blk + 1, BS - 1)) {
					whyf("expected byte 0 changed (was %02x) and the rest intact; got byte 0 %02x, first diff after it at %ld",
					     blk[0], rb[0], first_diff(rb + 1, blk + 1, BS - 1));
					ok = false;
				}
				memcpy(SH(A_PT_BLK), rb, BS);
			}
		}
	}
	report(C_CORRUPT_PT, ok, "%s", why);

	/* 38: corrupt_lba under a checksum pipeline. */
	why[0] = 0;
	ok = unit_ok;
	if (!ok)
		whyf("block unit of corrupt_lba not confirmed (check 37)");
	if (ok && (e = cfg_attach("indep_ck", A_CK, CHUNK, "checksum", 0, &step))) {
		whyf("attach checksum at 298 MiB: %s at %s", ename(e), step);
		ok = false;
	}
	if (ok) {
		fill_random(blk, BS, 3838);
		ok = write_and_shadow(dfd, blk, BS, A_CK, "checksummed block");
		snprintf(v, sizeof(v), "%llu\n", (unsigned long long)(A_CK / BS));
		if (ok && (e = dbg_write("corrupt_lba", v))) {
			whyf("write corrupt_lba: %s", ename(e));
			ok = false;
		}
		if (ok) {
			msleep(50);
			ssize_t n = pread(dfd, rb, BS, A_CK);
			if (n >= 0 || errno != EIO) {
				whyf("read of a corrupted checksummed block: expected EIO, got %s", n >= 0 ? "data" : ename(errno));
				ok = false;
			}
			/* The neighbour is unaffected. */
			n = pread(dfd, rb, BS, A_CK + BS);
			if (n != (ssize_t)BS) {
				whyf("the next block is unreadable: %s", n < 0 ? ename(errno) : "short");
				ok = false;
			}
		}
	}
	report(C_CORRUPT_CK, ok, "%s", why);
	cfg_set("indep_ck", "enable", "0\n");
	cfg_rmdir("indep_ck");
	/* Do not leave a block that reads as EIO behind. */
	fill_random(blk, BS, 3839);
	write_and_shadow(dfd, blk, BS, A_CK, "rewrite of the corrupted block");

	/* 39: encrypted block via peek; passthrough block (37) as control. */
	why[0] = 0;
	ok = have_enc;
	if (ok) {
		char *h = peek_hex(A_PT_BLK / BS);
		char mk[80];
		tohex(SH(A_PT_BLK) + 16, 16, mk);
		if (!h || !strstr(h, mk)) {
			whyf("control: peek of a passthrough block does not show its bytes 16..31 (%s)", mk);
			ok = false;
		}
		uint64_t eb = A_ENC + 2 * BS + BS; /* a random (not repeated-text) block */
		h = ok ? peek_hex(eb / BS) : NULL;
		for (int i = 0; h && i < (int)(BS / 16); i++) {
			tohex(SH(eb) + 16 * i, 16, mk);
			if (strstr(h, mk)) {
				whyf("peek of encrypted block %llu shows its plaintext bytes %d..%d", (unsigned long long)(eb / BS),
				     16 * i, 16 * i + 15);
				ok = false;
				break;
			}
		}
		if (ok && !h)
			ok = false;
	}
	report(C_ENCRYPT_PEEK, ok, "%s", why);

	/* 40: rmdir of enabled attachments detaches them; data stays. */
	why[0] = 0;
	ok = true;
	if ((e = cfg_rmdir("indep_cz")) || (e = cfg_rmdir("indep_enc"))) {
		whyf("rmdir of an enabled attachment: %s", ename(e));
		ok = false;
	}
	if (access("/sys/kernel/config/reflux/indep_cz", F_OK) == 0) {
		whyf("indep_cz still exists after rmdir");
		ok = false;
	}
	ok = verify_shadow(A_DEF, 3 * MiB, "after detaching") && ok;
	fill_random(buf, 2 * MiB, 4040);
	ok = ok && write_and_shadow(dfd, buf, 2 * MiB, A_CZ, "new writes after detaching");
	ok = ok && verify_shadow(A_DEF, 3 * MiB, "new writes after detaching");
	report(C_DETACH, ok, "%s", why);

	close(dfd);
	close(bfd);
	free(buf);
	free(rb);
	free(blk);
	cfg_cleanup();
	return true;
}

/* ============================================ phase 6: module lifetime */

static bool disk_works(const char *what)
{
	int fd = dev_open(O_RDWR | O_DIRECT);
	uint8_t *b = xalloc(8 * BS);
	uint64_t off = LIFE_OFF + 2 * MiB;
	bool ok = fd >= 0;
	fill_random(b, 8 * BS, rnd());
	ok = ok && write_and_shadow(fd, b, 8 * BS, off, what);
	if (fd >= 0)
		close(fd);
	free(b);
	return ok && verify_shadow(off, 8 * BS, what);
}

/* Reload with params (after an rmmod); returns errno / -1, 0 on success. */
static int reload_with(const char *params)
{
	int e = rmmod_reflux();
	if (e && mod_loaded())
		return e;
	wait_path(dev_path, false, 5000);
	e = load_reflux(params);
	if (e)
		return e;
	return wait_disk() ? 0 : ENODEV;
}

static void phase_lifetime(void)
{
	int e;
	char v[64];
	const char *step;
	bool ok;

	/* 41: rmmod with a (disabled) attachment directory. */
	why[0] = 0;
	ok = (e = cfg_mkdir("indep_pin")) == 0;
	if (!ok)
		whyf("mkdir: %s", ename(e));
	if (ok) {
		e = rmmod_reflux();
		if (!e || mod_loaded() == false) {
			whyf("rmmod with an attachment directory: expected refusal, got %s", ename(e));
			ok = false;
			cfg_rmdir("indep_pin");
			load_reflux("");
			wait_disk();
		} else if (e != EBUSY && e != EWOULDBLOCK) {
			whyf("rmmod refused with %s (expected EBUSY or EWOULDBLOCK)", ename(e));
			ok = false;
		}
	}
	cfg_rmdir("indep_pin");
	report(C_RMMOD_CFG, ok, "%s", why);

	/* 42: rmmod with the disk open. */
	why[0] = 0;
	{
		int fd = dev_open(O_RDONLY);
		long long rc0 = read_num("/sys/module/reflux/refcnt");
		e = fd < 0 ? -1 : rmmod_reflux();
		ok = fd >= 0 && e != 0 && mod_loaded();
		if (!ok)
			whyf("rmmod with %s open: expected refusal, got %s (refcnt %lld)", dev_path, ename(e), rc0);
		else if (e != EBUSY && e != EWOULDBLOCK) {
			whyf("refused with %s (expected EBUSY or EWOULDBLOCK)", ename(e));
			ok = false;
		}
		if (!mod_loaded()) {
			if (fd >= 0)
				close(fd), fd = -1;
			load_reflux("");
			wait_disk();
		}
		ok = disk_works("I/O after the refused rmmod") && ok;
		if (fd >= 0)
			close(fd);
	}
	report(C_RMMOD_DISK, ok, "%s", why);

	/* 43: rmmod with a debugfs file open. */
	why[0] = 0;
	{
		char p[256];
		snprintf(p, sizeof(p), "%s/stats", dbg_dir);
		int fd = open(p, O_RDONLY);
		e = fd < 0 ? -1 : rmmod_reflux();
		ok = fd >= 0 && e != 0 && mod_loaded();
		if (!ok)
			whyf("rmmod with %s open: expected refusal, got %s (open: %s)", p, ename(e),
			     fd < 0 ? ename(errno) : "ok");
		else if (e != EBUSY && e != EWOULDBLOCK) {
			whyf("refused with %s (expected EBUSY or EWOULDBLOCK)", ename(e));
			ok = false;
		}
		if (fd >= 0) {
			char b[256];
			if (read(fd, b, sizeof(b)) < 0) {
				whyf("reading the open stats file after the refused rmmod: %s", ename(errno));
				ok = false;
			}
			close(fd);
		}
		if (!mod_loaded()) {
			load_reflux("");
			wait_disk();
		}
		ok = disk_works("I/O after the refused rmmod") && ok;
	}
	report(C_RMMOD_DBG, ok, "%s", why);

	/* 44: module reload keeps data. */
	why[0] = 0;
	{
		int fd = dev_open(O_RDWR | O_DIRECT);
		uint8_t *b = xalloc(MiB);
		fill_random(b, MiB, 4444);
		ok = fd >= 0 && write_and_shadow(fd, b, MiB, LIFE_OFF, "before reload");
		if (fd >= 0)
			close(fd);
		free(b);
		e = ok ? reload_with("") : -1;
		if (e) {
			whyf("rmmod + modprobe reflux: %s", ename(e));
			ok = false;
		}
		ok = ok && verify_shadow(LIFE_OFF, MiB, "after the reload");
	}
	report(C_RELOAD_DATA, ok, "%s", why);

	/* 45/46: unbind with the disk open, bind again. */
	why[0] = 0;
	ok = find_driver();
	if (!ok)
		whyf("no /sys/bus/*/drivers/*/reflux.0: cannot find the bound driver");
	bool att = false;
	if (ok && configfs_ready()) {
		if ((e = cfg_attach("indep_ub", LIFE_OFF + MiB, CHUNK, "passthrough", 0, &step)))
			whyf("attach before unbind: %s at %s (attachment part skipped)", ename(e), step);
		else
			att = true;
	}
	int fd = dev_open(O_RDWR | O_DIRECT);
	uint8_t *b = xalloc(BS);
	char p[600];
	if (ok && fd < 0) {
		whyf("open: %s", ename(errno));
		ok = false;
	}
	if (ok) {
		snprintf(p, sizeof(p), "%s/unbind", drv_dir);
		if ((e = write_str(p, "reflux.0"))) {
			whyf("write reflux.0 to %s: %s", p, ename(e));
			ok = false;
		}
	}
	if (ok) {
		char sb[128];
		snprintf(sb, sizeof(sb), "/sys/block/%s", disk_name);
		if (!wait_path(sb, false, 5000)) {
			whyf("%s still exists 5 s after unbind", sb);
			ok = false;
		}
		ssize_t n = pread(fd, b, BS, LIFE_OFF);
		if (n > 0) {
			whyf("read on the open disk after unbind: expected failure or 0, got %zd bytes", n);
			ok = false;
		}
		fill_random(b, BS, 1);
		n = pwrite(fd, b, BS, LIFE_OFF + 3 * MiB);
		if (n >= 0) {
			whyf("write on the open disk after unbind: expected failure, got %zd", n);
			ok = false;
		}
		if (att && (cfg_get("indep_ub", "enable", v, sizeof(v)) < 0 || strcmp(v, "0"))) {
			whyf("attachment enable after unbind: expected 0, got '%s'", v);
			ok = false;
		}
	}
	if (fd >= 0 && close(fd)) {
		whyf("close after unbind: %s", ename(errno));
		ok = false;
	}
	report(C_UNBIND, ok, "%s", why);

	why[0] = 0;
	ok = drv_dir[0];
	if (ok) {
		snprintf(p, sizeof(p), "%s/bind", drv_dir);
		e = write_str(p, "reflux.0");
		if (e && access(dev_path, F_OK) != 0) {
			whyf("write reflux.0 to %s: %s", p, ename(e));
			ok = false;
		}
		if (ok && !wait_disk()) {
			whyf("%s did not come back after bind", dev_path);
			ok = false;
		}
		ok = ok && verify_shadow(LIFE_OFF, MiB, "data written before the unbind");
		if (ok && att) {
			e = cfg_set("indep_ub", "enable", "1\n");
			cfg_get("indep_ub", "enable", v, sizeof(v));
			if (e || strcmp(v, "1")) {
				whyf("echo 1 > enable after bind: expected success and 1, got %s and '%s'", ename(e), v);
				ok = false;
			}
		}
	}
	report(C_BIND, ok, "%s", why);
	free(b);
	cfg_cleanup();
}

/* ============================================ phase 7: module parameters */

static void bad_param(int id, const char *params, bool want_einval, bool want_log)
{
	char last[512] = "";
	int k = kmsg_open();
	int e = load_reflux(params);
	msleep(100);
	int lines = kmsg_new_lines(k, last, sizeof(last));
	if (k >= 0)
		close(k);
	bool loaded = mod_loaded();
	bool ok = e != 0 && !loaded && (!want_einval || e == EINVAL || e == -1) && (!want_log || lines != 0);
	report(id, ok, "modprobe reflux %s: expected %s%s, module not loaded\ngot %s, module %s, %d new log line(s)%s%s",
	       params, want_einval ? "EINVAL" : "a refusal", want_log ? " and a log line" : "",
	       e == -1 ? "modprobe failed (errno unknown)" : ename(e), loaded ? "loaded" : "not loaded", lines,
	       lines > 0 ? ", last: " : "", last);
	if (e == -1 && ok)
		diag("errno not checked: module file not found, modprobe's exit status used");
	if (loaded)
		rmmod_reflux();
}

static void phase_params(void)
{
	char a0[16384], a1[16384];
	int e = rmmod_reflux();
	if (e && mod_loaded()) {
		diag("rmmod reflux before the parameter checks: %s", ename(e));
		return;
	}
	wait_path(dev_path, false, 5000);
	bad_param(C_P_PIPELINE, "pipeline=4", true, true);
	bad_param(C_P_PLACEMENT, "placement=512", true, true);
	bad_param(C_P_QDEPTH, "queue_depth=0", true, true);
	bad_param(C_P_DISPATCH, "dispatch=3", false, false);
	bad_param(C_P_DISP_SCHED, "dispatch=1 sched=1", false, false);
	bad_param(C_P_PCNODE, "pagecache_node=-3", false, false);
	bad_param(C_P_IRQ, "irq_poll_below_us=50 irq_sleep_above_us=50", false, false);
	bad_param(C_P_WEIGHTS, "sched=1 sched_alpha=600 sched_beta=300 sched_gamma=200", false, false);

	/* 55: pinned. */
	why[0] = 0;
	bool ok = (e = load_reflux("pinned=6")) == 0 && wait_disk();
	if (!ok)
		whyf("modprobe reflux pinned=6: %s", ename(e));
	if (ok) {
		dbg_read("actors", a0, sizeof(a0));
		e = migrate("2 host\n");
		dbg_read("actors", a1, sizeof(a1));
		if (e != EPERM || strcmp(a0, a1)) {
			whyf("migrate '2 host' with pinned=6: expected EPERM and actors unchanged, got %s%s", ename(e),
			     strcmp(a0, a1) ? " and a changed actors file" : "");
			ok = false;
		}
	}
	report(C_PINNED, ok, "%s", why);

	/* 56: replicated. */
	why[0] = 0;
	e = reload_with("dispatch=1 pipeline=2");
	ok = e == 0;
	if (!ok)
		whyf("reload with dispatch=1 pipeline=2: %s", ename(e));
	if (ok) {
		e = migrate("2 host\n");
		if (e != EPERM) {
			whyf("migrate '2 host' with dispatch=1: expected EPERM, got %s", ename(e));
			ok = false;
		}
	}
	report(C_REPLICATED, ok, "%s", why);
}

/* ================================================================= main */

int main(void)
{
	const char *d = getenv("REFLUX_DEV");
	bool data_only = getenv("REFLUX_DATA_ONLY") != NULL;
	double mix = getenv("REFLUX_MIX_SECS") ? atof(getenv("REFLUX_MIX_SECS")) : 10;
	double t0 = now_s();

	if (d)
		dev_path = d;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..%d\n", C_NCHECKS - 1);
	shadow = xalloc(REGION_END - R1_OFF);
	find_ko();
	diag("module file for errno checks: %s", ko_path[0] ? ko_path : "(not found: modprobe's status only)");
	if (!mod_loaded() && !data_only) {
		diag("reflux not loaded at start: loading it");
		load_reflux("");
		wait_disk();
	}

	if (phase_geometry()) {
		phase_basic();
		phase_atomic(3);
		phase_uring(mix, access(dbg_dir, F_OK) == 0);
		diag("data phases done at %.0f s", now_s() - t0);
		if (!data_only) {
			phase_debugfs();
			phase_configfs();
			diag("configfs phase done at %.0f s", now_s() - t0);
			phase_lifetime();
			phase_params();
		}
	}

	/* Leave the default module loaded, whatever happened. */
	if (!data_only) {
		why[0] = 0;
		cfg_cleanup();
		int e = 0;
		if (mod_loaded())
			e = rmmod_reflux();
		if (e)
			whyf("final rmmod: %s", ename(e));
		wait_path(dev_path, false, 5000);
		if (!mod_loaded() && (e = load_reflux(""))) {
			whyf("final modprobe reflux: %s; trying the modprobe command", ename(e));
			system("modprobe reflux");
		}
		bool ok = wait_disk();
		if (!ok)
			whyf("%s absent after the final load", dev_path);
		ok = ok && disk_works("final round trip");
		report(C_FINAL, ok && !e, "%s", why);
	}
	while (next_check < C_NCHECKS) { /* checks never reached */
		printf("not ok %d - %s\n# not reached\n", next_check, check_desc[next_check]);
		n_failed++;
		next_check++;
	}
	diag("%d of %d checks failed, %.0f s", n_failed, C_NCHECKS - 1, now_s() - t0);
	return n_failed ? 1 : 0;
}
