// SPDX-License-Identifier: GPL-2.0
/*
 * Per-page epochs seen through mmap: the page-cache hook checks the page a
 * fault maps (filemap_fault) and fault-around leaves stale pages to their own
 * fault. Run by tools/vm/init with the driver loaded with the compress +
 * checksum pipeline and REFLUX_MMAP=1; skips otherwise.
 *
 * - without a migration, mapping cached pages finds none stale;
 * - after LZ4 migrates, a new mapping of cached pages faults every page in
 *   again (each one counted stale, evicted and read back) and sees the
 *   pattern written;
 * - pages mapped before the migration stay mapped and read the same bytes
 *   without a fault; a second mapping meets them stale once, cannot evict
 *   them (they are mapped) and reads them as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV	"/dev/reflux0"
#define DBG	"/sys/kernel/debug/reflux0/"
#define PAGE	4096
#define MIB	(1024 * 1024)
#define LEN	(4 * MIB)
#define PAGES	(LEN / PAGE)
#define LZ4	2

/* The driver's statistic `key` (-1 if absent). */
static long long stat_get(const char *key)
{
	char line[256], name[128];
	long long v, found = -1;
	FILE *f = fopen(DBG "stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", name, &v) == 2 && !strcmp(name, key))
			found = v;
	fclose(f);
	return found;
}

/* Whether actor `id` is on the device (1), the host (0), or unknown (-1). */
static int on_device(int id)
{
	char line[512], owner[32];
	int a, r = -1;
	FILE *f = fopen(DBG "actors", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *o = strstr(line, " owner ");

		if (sscanf(line, "actor %d", &a) == 1 && a == id && o &&
		    sscanf(o, " owner %31s", owner) == 1)
			r = !strcmp(owner, "device");
	}
	fclose(f);
	return r;
}

/* Moves actor `id` to the other side; 0 or an errno. */
static int migrate_other_side(int id)
{
	char cmd[64];
	int dev = on_device(id), fd, err = 0;

	if (dev < 0)
		return ENOENT;
	snprintf(cmd, sizeof(cmd), "%d %s", id, dev ? "host" : "device");
	fd = open(DBG "migrate", O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static void fill(unsigned char *buf, off_t off)
{
	for (size_t i = 0; i < LEN; i += 8) {
		uint64_t v = (uint64_t)(off + i) * 0x9e3779b97f4a7c15ull;

		/* Half text, half hashed: LZ4 finds something to compress. */
		if ((i / PAGE) % 2)
			memcpy(buf + i, "ReFlux!!", 8);
		else
			memcpy(buf + i, &v, 8);
	}
}

/* Reads every page of `map` once; the first page that differs from `want`, or -1. */
static long first_bad_page(const unsigned char *map, const unsigned char *want)
{
	for (long p = 0; p < PAGES; p++)
		if (memcmp(map + p * PAGE, want + p * PAGE, PAGE))
			return p;
	return -1;
}

FIXTURE(mmap)
{
	int fd;
	off_t off;
	unsigned char *want;
};

FIXTURE_SETUP(mmap)
{
	int dfd;
	void *buf;

	if (!getenv("REFLUX_MMAP"))
		SKIP(return, "REFLUX_MMAP not set (run by tools/vm/init)");
	ASSERT_LE(0, stat_get("pagecache_stale"));
	self->off = 120 * MIB;
	ASSERT_EQ(0, posix_memalign(&buf, PAGE, LEN));
	self->want = buf;
	fill(self->want, self->off);
	dfd = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, dfd);
	ASSERT_EQ(LEN, pwrite(dfd, self->want, LEN, self->off));
	close(dfd);
	/* Buffered, held open: the page cache of a block device lives while it is open. */
	self->fd = open(DEV, O_RDONLY);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, posix_fadvise(self->fd, self->off, LEN, POSIX_FADV_DONTNEED));
	/* Every page cached and tagged, through read(2). */
	buf = malloc(LEN);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(LEN, pread(self->fd, buf, LEN, self->off));
	ASSERT_EQ(0, memcmp(buf, self->want, LEN));
	free(buf);
}

FIXTURE_TEARDOWN(mmap)
{
	if (self->fd > 0)
		close(self->fd);
	free(self->want);
}

TEST_F(mmap, stale_pages_fault_in_again)
{
	long long s0, s1, s2, t1, t2;
	unsigned char *map;

	s0 = stat_get("pagecache_stale");
	map = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	ASSERT_EQ(0, munmap(map, LEN));
	s1 = stat_get("pagecache_stale");
	TH_LOG("no migration: %lld stale pages met through mmap", s1 - s0);
	ASSERT_EQ(s0, s1);

	ASSERT_EQ(0, migrate_other_side(LZ4));
	t1 = stat_get("pagecache_tagged");
	map = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	s2 = stat_get("pagecache_stale");
	t2 = stat_get("pagecache_tagged");
	TH_LOG("after lz4 migrated: %lld stale pages met through mmap (%d mapped), %lld read again",
	       s2 - s1, PAGES, t2 - t1);
	/* Fault-around skipped them all: each page met on its own fault... */
	ASSERT_EQ(PAGES, s2 - s1);
	/*
	 * ... which evicted it and read it again (a page added to the cache is tagged), or, if
	 * a transient reference held it (a per-CPU LRU batch of the read that cached it), read
	 * it as it was, the same bytes: a few (one make check saw 5 of 1024), at most one in sixteen.
	 */
	ASSERT_LE(PAGES - PAGES / 16, t2 - t1);
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	ASSERT_EQ(0, munmap(map, LEN));
	/* Read again, they are fresh. */
	map = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	ASSERT_EQ(0, munmap(map, LEN));
	ASSERT_EQ(s2, stat_get("pagecache_stale"));
}

TEST_F(mmap, mapped_pages_stay_and_read_the_same)
{
	unsigned char *map, *second;
	long long s0, s1, s2, t0;

	map = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	s0 = stat_get("pagecache_stale");
	ASSERT_EQ(0, migrate_other_side(LZ4));
	/* Mapped: no fault, no check, the same bytes. */
	ASSERT_EQ(-1, first_bad_page(map, self->want));
	ASSERT_EQ(s0, stat_get("pagecache_stale"));
	/* Another mapping faults them in: stale once each, kept (mapped), read as they are. */
	t0 = stat_get("pagecache_tagged");
	second = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, second);
	ASSERT_EQ(-1, first_bad_page(second, self->want));
	s1 = stat_get("pagecache_stale");
	TH_LOG("a second mapping after lz4 migrated met %lld stale (mapped) pages, read %lld again",
	       s1 - s0, stat_get("pagecache_tagged") - t0);
	ASSERT_EQ(PAGES, s1 - s0);
	/* Not evicted: nothing read again. */
	ASSERT_EQ(t0, stat_get("pagecache_tagged"));
	ASSERT_EQ(0, munmap(second, LEN));
	second = mmap(NULL, LEN, PROT_READ, MAP_SHARED, self->fd, self->off);
	ASSERT_NE(MAP_FAILED, second);
	ASSERT_EQ(-1, first_bad_page(second, self->want));
	s2 = stat_get("pagecache_stale");
	ASSERT_EQ(s1, s2);
	ASSERT_EQ(0, munmap(second, LEN));
	ASSERT_EQ(0, munmap(map, LEN));
}

TEST_HARNESS_MAIN
