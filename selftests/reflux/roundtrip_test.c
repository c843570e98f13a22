// SPDX-License-Identifier: GPL-2.0
/*
 * Data written to /dev/reflux0 reads back bit-exact: O_DIRECT (whole 4 KiB
 * logical blocks, 4 KiB to 1 MiB) and buffered (512 B to 1 MiB at any
 * 512-byte offset: the page cache reads, merges and writes whole blocks), at
 * random offsets; overlapping writes (the last one wins), the last block of
 * the device, and data that went through the page cache and was dropped from
 * it. I/O beyond the end of the device and O_DIRECT I/O that is not whole
 * logical blocks fail with a clear errno and change nothing. Every buffer
 * carries its offset and a per-run seed, so a block read from the wrong
 * place, a stale block or a torn write cannot pass.
 *
 * REFLUX_SLICE=i/n keeps the random and overlap tests in the i-th of n equal
 * slices of the device: data is readable only through the pipeline that
 * wrote it (a block another pipeline encrypted reads as EIO), so runs under
 * different pipelines must not share blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <linux/fs.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV	"/dev/reflux0"
#define SECTOR	512
#define LBS	4096	/* the device's logical block */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed in the log. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Every 8 bytes: the absolute device offset of that word, mixed with a tag. */
static void fill(uint8_t *buf, size_t len, uint64_t off, uint64_t tag)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = (off + i) * 0x9E3779B97F4A7C15ULL ^ tag;

		memcpy(buf + i, &v, 8);
	}
}

/* The first mismatching byte, or -1. */
static long diff_at(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

static void *aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	return p;
}

FIXTURE(dev) {
	int fd_direct, fd_buffered;
	uint64_t size;		/* the device */
	uint64_t base, span;	/* the slice the random tests use */
	uint8_t *wbuf, *rbuf;
};

#define MAX_IO	(1 << 20)

FIXTURE_SETUP(dev)
{
	const char *seed = getenv("REFLUX_SEED");

	if (access(DEV, F_OK))
		SKIP(return, DEV " does not exist (reflux and reflux_dev not loaded)");
	self->fd_direct = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd_direct) TH_LOG("open O_DIRECT: %s", strerror(errno));
	self->fd_buffered = open(DEV, O_RDWR);
	ASSERT_LE(0, self->fd_buffered);
	ASSERT_EQ(0, ioctl(self->fd_direct, BLKGETSIZE64, &self->size));
	self->base = 0;
	self->span = self->size;
	if (getenv("REFLUX_SLICE")) {
		unsigned int i, n;

		ASSERT_EQ(2, sscanf(getenv("REFLUX_SLICE"), "%u/%u", &i, &n));
		ASSERT_LT(i, n);
		self->span = self->size / n / MAX_IO * MAX_IO;
		self->base = i * self->span;
	}
	ASSERT_LE(8 * MAX_IO, self->span);
	self->wbuf = aligned(MAX_IO);
	self->rbuf = aligned(MAX_IO);
	ASSERT_NE(NULL, self->wbuf);
	ASSERT_NE(NULL, self->rbuf);
	rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + getpid();
	if (!rng_state)
		rng_state = 1;
	TH_LOG("seed %#llx, device %llu bytes, slice %llu+%llu", (unsigned long long)rng_state,
	       (unsigned long long)self->size, (unsigned long long)self->base,
	       (unsigned long long)self->span);
}

FIXTURE_TEARDOWN(dev)
{
	free(self->wbuf);
	free(self->rbuf);
	close(self->fd_direct);
	close(self->fd_buffered);
}

/*
 * A random size from `unit` to 1 MiB (log-uniform, whole units) and a random
 * offset, a multiple of `unit`.
 */
static void pick(uint64_t dev_size, size_t unit, size_t *len, uint64_t *off)
{
	unsigned int lo = __builtin_ctzl(unit);
	unsigned int shift = lo + rnd() % (21 - lo);	/* unit .. 1 MiB */

	*len = ((size_t)1 << shift) + (rnd() % ((size_t)1 << shift) & ~(unit - 1));
	if (*len > MAX_IO)
		*len = MAX_IO;
	*off = (rnd() % ((dev_size - *len) / unit)) * unit;
}

static void write_read(struct __test_metadata *_metadata, FIXTURE_DATA(dev) *self, int wfd,
		       int rfd, size_t len, uint64_t off, uint64_t tag)
{
	long at;

	fill(self->wbuf, len, off, tag);
	ASSERT_EQ((ssize_t)len, pwrite(wfd, self->wbuf, len, off))
		TH_LOG("pwrite %zu at %llu: %s", len, (unsigned long long)off, strerror(errno));
	memset(self->rbuf, 0xA5, len);
	ASSERT_EQ((ssize_t)len, pread(rfd, self->rbuf, len, off))
		TH_LOG("pread %zu at %llu: %s", len, (unsigned long long)off, strerror(errno));
	at = diff_at(self->wbuf, self->rbuf, len);
	ASSERT_EQ(-1, at) TH_LOG("%zu bytes at %llu differ from byte %ld", len,
				 (unsigned long long)off, at);
}

TEST_F(dev, direct_random)
{
	int i;

	for (i = 0; i < 64; i++) {
		size_t len;
		uint64_t off;

		pick(self->span, LBS, &len, &off);
		write_read(_metadata, self, self->fd_direct, self->fd_direct, len, self->base + off,
			   rnd());
	}
}

TEST_F(dev, buffered_random)
{
	int i;

	for (i = 0; i < 32; i++) {
		size_t len;
		uint64_t off;

		pick(self->span, SECTOR, &len, &off);
		write_read(_metadata, self, self->fd_buffered, self->fd_buffered, len,
			   self->base + off, rnd());
	}
	/* Through the page cache and back from the device: flush, drop, read direct. */
	ASSERT_EQ(0, fsync(self->fd_buffered));
	{
		size_t len = 256 << 10;
		uint64_t off = self->base + 3 * MAX_IO + 4096;
		uint64_t tag = rnd();
		long at;

		fill(self->wbuf, len, off, tag);
		ASSERT_EQ((ssize_t)len, pwrite(self->fd_buffered, self->wbuf, len, off));
		ASSERT_EQ(0, fsync(self->fd_buffered));
		ASSERT_EQ(0, ioctl(self->fd_buffered, BLKFLSBUF, 0));
		ASSERT_EQ((ssize_t)len, pread(self->fd_direct, self->rbuf, len, off));
		at = diff_at(self->wbuf, self->rbuf, len);
		ASSERT_EQ(-1, at) TH_LOG("buffered write read direct differs at %ld", at);
	}
}

TEST_F(dev, overlap_last_wins)
{
	uint64_t off = self->base + 5 * MAX_IO + 3 * LBS;
	uint64_t t1 = rnd(), t2 = rnd();
	uint8_t *want = aligned(MAX_IO);
	long at;

	ASSERT_NE(NULL, want);
	fill(self->wbuf, 64 << 10, off, t1);
	ASSERT_EQ(64 << 10, pwrite(self->fd_direct, self->wbuf, 64 << 10, off));
	/* Overwrite 3 blocks in the middle. */
	fill(self->wbuf, 3 * LBS, off + 7 * LBS, t2);
	ASSERT_EQ(3 * LBS, pwrite(self->fd_direct, self->wbuf, 3 * LBS, off + 7 * LBS));
	fill(want, 64 << 10, off, t1);
	fill(want + 7 * LBS, 3 * LBS, off + 7 * LBS, t2);
	ASSERT_EQ(64 << 10, pread(self->fd_direct, self->rbuf, 64 << 10, off));
	at = diff_at(want, self->rbuf, 64 << 10);
	free(want);
	ASSERT_EQ(-1, at) TH_LOG("overlapping writes: byte %ld is not the last writer's", at);
}

TEST_F(dev, last_block)
{
	write_read(_metadata, self, self->fd_direct, self->fd_direct, LBS, self->size - LBS, rnd());
	/* The last sector, through the page cache (a read-modify-write of the last block). */
	write_read(_metadata, self, self->fd_buffered, self->fd_buffered, SECTOR,
		   self->size - SECTOR, rnd());
	ASSERT_EQ(0, fsync(self->fd_buffered));
}

TEST_F(dev, beyond_the_end)
{
	uint64_t tag = rnd();
	long at;

	/* Known contents in the last 8 KiB. */
	fill(self->wbuf, 8192, self->size - 8192, tag);
	ASSERT_EQ(8192, pwrite(self->fd_direct, self->wbuf, 8192, self->size - 8192));
	/* At the end: nothing to write (ENOSPC), nothing to read (0). */
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->fd_direct, self->wbuf, 4096, self->size));
	EXPECT_EQ(ENOSPC, errno) TH_LOG("write at the end: %s", strerror(errno));
	EXPECT_EQ(0, pread(self->fd_direct, self->rbuf, 4096, self->size));
	/* Straddling the end: only the part inside is written. */
	EXPECT_EQ(4096, pwrite(self->fd_direct, self->wbuf, 8192, self->size - 4096));
	ASSERT_EQ(8192, pread(self->fd_direct, self->rbuf, 8192, self->size - 8192));
	fill(self->wbuf, 4096, self->size - 8192, tag);
	at = diff_at(self->wbuf, self->rbuf, 4096);
	EXPECT_EQ(-1, at) TH_LOG("the block before the straddling write changed at %ld", at);
}

TEST_F(dev, unaligned_direct)
{
	uint64_t off = self->base + 6 * MAX_IO;
	uint64_t tag = rnd();
	long at;

	fill(self->wbuf, 4096, off, tag);
	ASSERT_EQ(4096, pwrite(self->fd_direct, self->wbuf, 4096, off));
	/* Offset and length not multiples of the logical block; a buffer not
	 * aligned for DMA (512 bytes). */
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->fd_direct, self->wbuf, 4096, off + SECTOR));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->fd_direct, self->wbuf, SECTOR, off));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, pwrite(self->fd_direct, self->wbuf + 1, 4096, off));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing changed. */
	ASSERT_EQ(4096, pread(self->fd_direct, self->rbuf, 4096, off));
	at = diff_at(self->wbuf, self->rbuf, 4096);
	EXPECT_EQ(-1, at) TH_LOG("a refused write changed byte %ld", at);
}

TEST_HARNESS_MAIN
