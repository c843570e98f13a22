// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm resources: the poller costs nothing once nobody waits, and a full
 * payload ring shows as back-pressure in STATS.
 *
 * idle_after_wait/idle_after_poll: AXLE at poll interval 0 (busy polling).
 * After a WAIT that timed out, or a poll() that found nothing, STATS.polls
 * (every pass of the poller counts one) must stop growing: at most a few
 * passes in 500 ms. The old poller stayed armed until a record arrived and
 * counted hundreds of thousands of passes (a CPU at 100 %).
 *
 * payload_full: two-slot payload ring, nothing released. The device stalls
 * for credit: STATS.credit_stalls > 0 (the documented counter of a full
 * payload ring; backpressure_waits counts launches that waited for a free
 * launch slot, a different ring).
 *
 * split_mappings: the input buffer and a ring, mapped, touched, split in three
 * by mprotect() of a middle page and unmapped piece by piece. The old input
 * mapping (remap_pfn_range, one PAT memtype for the whole area) logged
 * "x86/PAT: ... freeing invalid memtype" at the munmap of a piece; the kernel
 * log must show no PAT complaint, and the input written through one piece
 * reads back through a new mapping.
 *
 * Uses cxl_ccm5; skips if it is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define NODE "/dev/cxl_ccm5"
/* Poller passes allowed after the last waiter left: the lease is 10 ms. */
#define IDLE_PASSES_MAX 100

static void fill_cfg(struct cxl_ccm_configure *cfg, __u32 payload_slots)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = CXL_CCM_MODE_AXLE;
	cfg->slot_size = 32;
	cfg->streaming_factor = 32;
	cfg->metadata_slots = 1024;
	cfg->payload_slots = payload_slots;
	cfg->poll_interval_ns = 0;
	cfg->input_size = 64 << 10;
}

static __u64 polls(struct __test_metadata *_metadata, int fd)
{
	struct cxl_ccm_stats s;

	memset(&s, 0, sizeof(s));
	EXPECT_EQ(0, ioctl(fd, CXL_CCM_IOC_STATS, &s));
	return s.polls;
}

/* The poller's passes over 500 ms, after 50 ms for a lease to end. */
static __u64 idle_passes(struct __test_metadata *_metadata, int fd)
{
	__u64 p0;

	usleep(50000);
	p0 = polls(_metadata, fd);
	usleep(500000);
	return polls(_metadata, fd) - p0;
}

FIXTURE(resources) {
	int fd;
};

FIXTURE_SETUP(resources)
{
	self->fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, NODE " is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(resources)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(resources, idle_after_wait, 30)
{
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_wait w;
	__u64 n;

	fill_cfg(&cfg, 4096);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = cfg.index_base;
	w.timeout_ns = 20000000;
	ASSERT_EQ(-1, ioctl(self->fd, CXL_CCM_IOC_WAIT, &w));
	ASSERT_EQ(ETIMEDOUT, errno);
	n = idle_passes(_metadata, self->fd);
	EXPECT_GE(IDLE_PASSES_MAX, n) TH_LOG("the poller made %llu passes in 500 ms with nobody waiting",
					     (unsigned long long)n);
}

TEST_F_TIMEOUT(resources, idle_after_poll, 30)
{
	struct cxl_ccm_configure cfg;
	struct pollfd p;
	__u64 n;

	fill_cfg(&cfg, 4096);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	p.fd = self->fd;
	p.events = POLLIN;
	p.revents = 0;
	ASSERT_EQ(0, poll(&p, 1, 20));
	n = idle_passes(_metadata, self->fd);
	EXPECT_GE(IDLE_PASSES_MAX, n) TH_LOG("the poller made %llu passes in 500 ms after poll()",
					     (unsigned long long)n);

	/* A poll() still waiting keeps it polling past the lease, and sees its record. */
	{
		struct cxl_ccm_stream_xform_args a = { .op = CXL_CCM_XFORM_OP_XOR, .chunk_size = 32 };
		struct cxl_ccm_launch l = { .kernel_id = CXL_CCM_KERNEL_STREAM_XFORM,
					    .input_size = 32, .arg_size = 32 };

		memcpy(l.args, &a, sizeof(a));
		ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_LAUNCH, &l));
		EXPECT_EQ(1, poll(&p, 1, 5000));
		EXPECT_TRUE(p.revents & POLLIN);
	}
}

TEST_F_TIMEOUT(resources, payload_full, 30)
{
	struct cxl_ccm_stream_xform_args a = { .op = CXL_CCM_XFORM_OP_XOR, .chunk_size = 32 };
	struct cxl_ccm_launch l = { .kernel_id = CXL_CCM_KERNEL_STREAM_XFORM,
				    .input_size = 512, .arg_size = 32 };
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_stats s;
	int i;

	fill_cfg(&cfg, 2);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	memcpy(l.args, &a, sizeof(a));
	/* 16 records of one slot each into a two-slot ring, none released. */
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_LAUNCH, &l));
	for (i = 0; i < 50; i++) {
		usleep(20000);
		memset(&s, 0, sizeof(s));
		ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_STATS, &s));
		if (s.credit_stalls)
			break;
	}
	EXPECT_LT(0U, s.credit_stalls) TH_LOG("a full payload ring showed no back-pressure");
	TH_LOG("credit_stalls %llu, backpressure_waits %llu (launch ring)",
	       (unsigned long long)s.credit_stalls, (unsigned long long)s.backpressure_waits);
}

/* /dev/kmsg positioned at its end: later reads return only new lines. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Kernel log lines since kmsg_open() that mention PAT; each is logged. */
static int kmsg_pat_lines(struct __test_metadata *_metadata, int fd)
{
	char rec[1024];
	int n = 0;
	ssize_t r;

	while ((r = read(fd, rec, sizeof(rec) - 1)) > 0 || (r < 0 && errno == EPIPE)) {
		if (r <= 0)
			continue;
		rec[r] = 0;
		if (strstr(rec, "PAT") || strstr(rec, "memtype")) {
			TH_LOG("kernel: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
			n++;
		}
	}
	return n;
}

/* Maps @len bytes at @off, touches every page, splits, unmaps piece by piece. */
static void split_and_unmap(struct __test_metadata *_metadata, int fd, __u64 off, size_t len,
			    int prot)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);
	size_t i;

	ASSERT_NE(MAP_FAILED, (void *)p) TH_LOG("mmap %#llx: %s", (unsigned long long)off,
						strerror(errno));
	ASSERT_LE(3 * pg, (long)len);
	for (i = 0; i < len; i += pg) {
		if (prot & PROT_WRITE)
			p[i] = (char)(i / pg);
		(void)p[i];
	}
	ASSERT_EQ(0, mprotect((char *)p + pg, pg, PROT_NONE)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, munmap((char *)p + pg, pg));
	ASSERT_EQ(0, munmap((char *)p, pg));
	ASSERT_EQ(0, munmap((char *)p + 2 * pg, len - 2 * pg));
}

TEST_F_TIMEOUT(resources, split_mappings, 30)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct cxl_ccm_configure cfg;
	volatile char *in;
	int kmsg = kmsg_open();

	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	fill_cfg(&cfg, 4096);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	split_and_unmap(_metadata, self->fd, CXL_CCM_MMAP_INPUT, cfg.input_size,
			PROT_READ | PROT_WRITE);
	split_and_unmap(_metadata, self->fd, CXL_CCM_MMAP_PAYLOAD, cfg.payload_ring_size,
			PROT_READ);
	/* What was written through the pieces is in device memory. */
	in = mmap(NULL, cfg.input_size, PROT_READ, MAP_SHARED, self->fd, CXL_CCM_MMAP_INPUT);
	ASSERT_NE(MAP_FAILED, (void *)in);
	EXPECT_EQ(0, in[0]);
	EXPECT_EQ(1, in[pg]);
	EXPECT_EQ(2, in[2 * pg]);
	EXPECT_EQ((char)(cfg.input_size / pg - 1), in[cfg.input_size - pg]);
	munmap((void *)in, cfg.input_size);
	EXPECT_EQ(0, kmsg_pat_lines(_metadata, kmsg)) TH_LOG("split mappings upset PAT");
	close(kmsg);
}

TEST_HARNESS_MAIN
