// SPDX-License-Identifier: GPL-2.0
/*
 * End-to-end test of the cxlstack Rust abstractions through /dev/cxlstack_smoke:
 * misc device with per-open state, typed ioctls, pinned pages mapped into user
 * space in each caching mode, and the per-file kernel thread that fills them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/cxlstack_smoke.h>

#include "kselftest_harness.h"

#define DEV "/dev/cxlstack_smoke"
#define NPAGES 4

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static int open_dev(struct __test_metadata *_metadata)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, DEV " is missing: cxlstack_smoke.ko is not loaded");
	return fd;
}

static int setup(int fd, __u32 npages, __u32 mode)
{
	struct cxlstack_smoke_setup s = { .npages = npages, .cache_mode = mode };

	return ioctl(fd, CXLSTACK_SMOKE_SETUP, &s);
}

static int fill(int fd, __u64 seed, __u64 count, __u64 *generation)
{
	struct cxlstack_smoke_fill f = { .seed = seed, .count = count };
	int ret = ioctl(fd, CXLSTACK_SMOKE_FILL, &f);

	if (!ret && generation)
		*generation = f.generation;
	return ret;
}

/* Returns the index of the first word of [first, first + n) that is wrong, or -1. */
static long first_bad(const volatile __u64 *words, __u64 seed, __u64 first, __u64 n)
{
	for (__u64 i = 0; i < n; i++)
		if (words[i] != cxlstack_smoke_value(seed, first + i))
			return (long)i;
	return -1;
}

FIXTURE(smoke) {
	int fd;
};

FIXTURE_SETUP(smoke)
{
	self->fd = open_dev(_metadata);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(smoke)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(smoke, info)
{
	struct cxlstack_smoke_info info;

	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, ioctl(self->fd, CXLSTACK_SMOKE_INFO, &info));
	EXPECT_EQ(CXLSTACK_SMOKE_ABI_VERSION, info.abi_version);
	EXPECT_EQ(page_size(), info.page_size);
	EXPECT_LE(NPAGES, info.max_pages);
	EXPECT_EQ(0, info.reserved);
}

FIXTURE_VARIANT(smoke) {
	__u32 cache_mode;
};

FIXTURE_VARIANT_ADD(smoke, cached) { .cache_mode = CXLSTACK_SMOKE_CACHED };
FIXTURE_VARIANT_ADD(smoke, write_combining) { .cache_mode = CXLSTACK_SMOKE_WRITE_COMBINING };
FIXTURE_VARIANT_ADD(smoke, uncached) { .cache_mode = CXLSTACK_SMOKE_UNCACHED };

/* The thread's sequence is visible, word for word, through the user mapping. */
TEST_F(smoke, fill_and_verify)
{
	size_t len = NPAGES * page_size();
	__u64 words = len / 8, gen = 0;
	volatile __u64 *map;

	ASSERT_EQ(0, setup(self->fd, NPAGES, variant->cache_mode));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (__u64 i = 0; i < words; i++) {
		ASSERT_EQ(0, map[i]) TH_LOG("fresh buffer not zeroed at word %llu", i);
	}

	ASSERT_EQ(0, fill(self->fd, 0x1234, words, &gen));
	EXPECT_EQ(1, gen);
	EXPECT_EQ(-1, first_bad(map, 0x1234, 0, words));

	/* A shorter fill rewrites only its own words. */
	ASSERT_EQ(0, fill(self->fd, 77, 100, &gen));
	EXPECT_EQ(2, gen);
	EXPECT_EQ(-1, first_bad(map, 77, 0, 100));
	EXPECT_EQ(-1, first_bad(map + 100, 0x1234, 100, words - 100));

	/* Stores from user space land in the same pages the kernel writes. */
	map[5] = 0xdeadbeef;
	ASSERT_EQ(0, fill(self->fd, 9, 4, &gen));
	EXPECT_EQ(0xdeadbeef, map[5]);
	EXPECT_EQ(-1, first_bad(map, 9, 0, 4));
	EXPECT_EQ(0, munmap((void *)map, len));
}

/* A mapping may start at any page of the buffer. */
TEST_F(smoke, map_subrange)
{
	long ps = page_size();
	__u64 per_page = ps / 8;
	volatile __u64 *map;

	ASSERT_EQ(0, setup(self->fd, NPAGES, variant->cache_mode));
	ASSERT_EQ(0, fill(self->fd, 5, NPAGES * per_page, NULL));
	map = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, self->fd, 1 * ps);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(-1, first_bad(map, 5, per_page, 2 * per_page));
	EXPECT_EQ(0, munmap((void *)map, 2 * ps));
}

/* The pages outlive the file while they are mapped. */
TEST_F(smoke, mapping_outlives_close)
{
	size_t len = NPAGES * page_size();
	volatile __u64 *map;

	ASSERT_EQ(0, setup(self->fd, NPAGES, variant->cache_mode));
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, fill(self->fd, 42, len / 8, NULL));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(-1, first_bad(map, 42, 0, len / 8));
	EXPECT_EQ(0, munmap((void *)map, len));
}

/* Two open files have separate buffers and threads. */
TEST_F(smoke, files_are_independent)
{
	size_t len = page_size();
	volatile __u64 *a, *b;
	int fd2 = open_dev(_metadata);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, setup(self->fd, 1, variant->cache_mode));
	ASSERT_EQ(0, setup(fd2, 1, CXLSTACK_SMOKE_CACHED));
	a = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, 0);
	b = mmap(NULL, len, PROT_READ, MAP_SHARED, fd2, 0);
	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(MAP_FAILED, b);
	ASSERT_EQ(0, fill(self->fd, 1, len / 8, NULL));
	ASSERT_EQ(0, fill(fd2, 2, len / 8, NULL));
	EXPECT_EQ(-1, first_bad(a, 1, 0, len / 8));
	EXPECT_EQ(-1, first_bad(b, 2, 0, len / 8));
	munmap((void *)a, len);
	munmap((void *)b, len);
	close(fd2);
}

/* Mappings outside the buffer, private mappings and early mappings are refused. */
TEST_F(smoke, bad_mmap)
{
	long ps = page_size();
	void *p;

	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p) TH_LOG("mmap before SETUP must fail");
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, setup(self->fd, NPAGES, variant->cache_mode));
	p = mmap(NULL, (NPAGES + 1) * ps, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, self->fd, NPAGES * ps);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, self->fd, (NPAGES - 1) * ps);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, self->fd, 1000000L * ps);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p) TH_LOG("private mappings must be refused");
	EXPECT_EQ(EINVAL, errno);
}

/* Unknown commands, wrong sizes and bad pointers. */
TEST_F(smoke, bad_ioctl)
{
	struct cxlstack_smoke_info info;
	__u64 small = 0;

	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, _IO(CXLSTACK_SMOKE_IOC_MAGIC, 0x8f)));
	EXPECT_EQ(ENOTTY, errno);
	/* The number of SETUP with the size of a __u64. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOW(CXLSTACK_SMOKE_IOC_MAGIC, 0x81, __u64), &small));
	EXPECT_EQ(ENOTTY, errno);
	/* FILL's number and size but without the write direction. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(CXLSTACK_SMOKE_IOC_MAGIC, 0x82, struct cxlstack_smoke_fill), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXLSTACK_SMOKE_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXLSTACK_SMOKE_SETUP, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXLSTACK_SMOKE_FILL, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(smoke, bad_setup)
{
	struct cxlstack_smoke_info info;
	struct cxlstack_smoke_setup s = { .npages = 1, .reserved = { 0, 1 } };

	ASSERT_EQ(0, ioctl(self->fd, CXLSTACK_SMOKE_INFO, &info));
	EXPECT_EQ(-1, setup(self->fd, 0, variant->cache_mode));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, info.max_pages + 1, variant->cache_mode));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, 1, 3));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setup(self->fd, 1, 0xffffffff));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXLSTACK_SMOKE_SETUP, &s));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, setup(self->fd, info.max_pages, variant->cache_mode));
	EXPECT_EQ(-1, setup(self->fd, 1, variant->cache_mode));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(smoke, bad_fill)
{
	struct cxlstack_smoke_fill f = { .seed = 1, .count = 1, .reserved = 1 };
	__u64 words = NPAGES * page_size() / 8;

	EXPECT_EQ(-1, fill(self->fd, 1, 1, NULL)) TH_LOG("FILL before SETUP must fail");
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, setup(self->fd, NPAGES, variant->cache_mode));
	EXPECT_EQ(-1, fill(self->fd, 1, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, fill(self->fd, 1, words + 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, fill(self->fd, 1, UINT64_MAX, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXLSTACK_SMOKE_FILL, &f));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, fill(self->fd, 1, words, NULL));
}

TEST_HARNESS_MAIN
