// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm under a hostile caller: extreme kernel arguments and read-only
 * ioctl arguments.
 *
 * - attention_overflow: the two LLM_ATTENTION launches whose cut of records
 *   overflowed a u32 in the driver (a panic in LAUNCH with the device's locks
 *   held) end in one STATUS_BAD_ARGS record, and the device still answers;
 * - extreme_arguments: every kernel the device advertises, launched with
 *   argument words of 0, 1, 1 << 29, 1 << 31 and U32_MAX, alone, in pairs
 *   (products that overflow) and all at once: each launch is refused with
 *   EINVAL or ends in a FINAL record, and the device still answers INFO and
 *   a checked launch afterwards;
 * - launch_read_only: LAUNCH with a read-only argument is EFAULT and takes no
 *   tag: nothing is launched, the next launch gets the first tag and its
 *   records are the only ones;
 * - stats_reset_read_only: STATS with STATS_RESET and a read-only argument is
 *   EFAULT and resets nothing;
 * - configure_read_only: CONFIGURE with a read-only argument is EFAULT, the
 *   file stays unconfigured, and CONFIGURE with a writable one then works.
 *
 * Every fixture test runs in each offload mode the device serves.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "kernel_lib.h"

#define INPUT_SIZE	4096
/* Bytes of input each launch names: small, so that a valid launch is quick. */
#define LAUNCH_BYTES	64

KTENANT_FIXTURE(hostile, CXL_CCM_KERNEL_STREAM_XFORM, INPUT_SIZE)

/* A page holding @len bytes of @data, read-only; NULL on failure. */
static void *read_only_copy(const void *data, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, data, len);
	if (mprotect(p, page, PROT_READ)) {
		munmap(p, page);
		return NULL;
	}
	return p;
}

static struct cxl_ccm_launch xform_launch(void)
{
	struct cxl_ccm_launch l = {
		.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM,
		.input_size = LAUNCH_BYTES,
		.arg_size = sizeof(struct cxl_ccm_stream_xform_args),
	};
	struct cxl_ccm_stream_xform_args a = { .op = CXL_CCM_XFORM_OP_COPY };

	memcpy(l.args, &a, sizeof(a));
	return l;
}

/* Waits up to 20 s for a record at the consumer's head; 0 if one came. */
static int wait_record(struct ktenant *t)
{
	time_t start = time(NULL);

	while (cxlccm_ring_md_tail(&t->ring) == t->head) {
		if (time(NULL) - start > 20)
			return -1;
		usleep(50);
	}
	return 0;
}

/*
 * Launches a checked STREAM_XFORM copy and consumes its records: they all
 * carry the tag LAUNCH returned, and nothing follows them.
 */
static void checked_launch(struct __test_metadata *_metadata, struct ktenant *t, __u32 *tag)
{
	struct cxl_ccm_launch l = xform_launch();
	struct cxl_ccm_metadata_record rec;
	__u32 status = 1;

	memset(t->ring.in, 0x5a, LAUNCH_BYTES);
	ASSERT_EQ(0, ioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, wait_record(t));
	/* A launch nobody learnt the tag of would come first. */
	cxlccm_ring_record(&t->ring, t->head, &rec);
	EXPECT_EQ(l.tag, rec.tag);
	ASSERT_LT(0, ktenant_collect(_metadata, t, NULL, 0, &status));
	EXPECT_EQ(0U, status);
	usleep(100000);
	EXPECT_EQ(t->head, cxlccm_ring_md_tail(&t->ring))
		TH_LOG("stray records after the launch of tag %u", l.tag);
	if (tag)
		*tag = l.tag;
}

/*
 * Launches @kernel with argument words @w: EINVAL, or records up to a FINAL
 * one. Returns 1 for a refusal, 0 for records, -1 on a failure (logged).
 */
static int hostile_launch(struct __test_metadata *_metadata, struct ktenant *t,
			  __u32 kernel, const __u32 w[8])
{
	struct cxl_ccm_launch l = {
		.kernel_id = kernel, .input_size = LAUNCH_BYTES, .arg_size = 32,
	};
	__u32 status = 0;

	memcpy(l.args, w, 32);
	if (ioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l)) {
		if (errno == EINVAL || errno == EOVERFLOW)
			return 1;
		TH_LOG("kernel %u args %#x %#x %#x %#x %#x %#x: %s", kernel, w[0], w[1],
		       w[2], w[3], w[4], w[5], strerror(errno));
		return -1;
	}
	if (ktenant_collect(_metadata, t, NULL, 0, &status) < 1) {
		TH_LOG("kernel %u args %#x %#x %#x %#x %#x %#x: no final record", kernel,
		       w[0], w[1], w[2], w[3], w[4], w[5]);
		return -1;
	}
	return 0;
}

/* The device answers INFO and a checked launch. */
static void still_answers(struct __test_metadata *_metadata, struct ktenant *t)
{
	struct cxl_ccm_info info = { 0 };

	ASSERT_EQ(0, ioctl(t->fd, CXL_CCM_IOC_INFO, &info)) TH_LOG("%s", strerror(errno));
	checked_launch(_metadata, t, NULL);
}

/* The two overflowing ATTENTION launches each end in a STATUS_BAD_ARGS record. */
static void attention_overflow(struct __test_metadata *_metadata, struct ktenant *t)
{
	/* {tokens, q_first, q_rows, heads, head_dim, chunk_rows, shift, reserved} */
	static const __u32 cases[][8] = {
		{ 4, 0, 2, 1, 0x20000000, 3, 0, 0 },
		{ 8400000, 0, 8400000, 8, 0x80, 8400001, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cxl_ccm_launch l = {
			.kernel_id = CXL_CCM_KERNEL_LLM_ATTENTION,
			.input_size = LAUNCH_BYTES, .arg_size = 32,
		};
		__u32 status = 0;

		memcpy(l.args, cases[i], 32);
		ASSERT_EQ(0, ioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(1, ktenant_collect(_metadata, t, NULL, 0, &status));
		EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	}
	still_answers(_metadata, t);
}

TEST_F_TIMEOUT(hostile, attention_overflow, 60)
{
	if (!(self->t.info.kernels & (1ULL << CXL_CCM_KERNEL_LLM_ATTENTION)))
		SKIP(return, "the device does not implement LLM_ATTENTION");
	attention_overflow(_metadata, &self->t);
}

/*
 * Argument words of @kernel that are sizes or counts; the words after them
 * are reserved (0) or, for SSB, predicates and ATTENTION's shift.
 */
static unsigned int shape_words(unsigned int kernel)
{
	switch (kernel) {
	case CXL_CCM_KERNEL_LLM_ATTENTION:
		return 6;
	case CXL_CCM_KERNEL_DLRM_SLS:
		return 5;
	case CXL_CCM_KERNEL_SSB_Q1_1:
	case CXL_CCM_KERNEL_SSB_Q1_2:
		return 2;
	default:
		return 3;
	}
}

/* Every advertised kernel with extreme argument words; returns 0 if all were clean. */
static int extreme_arguments(struct __test_metadata *_metadata, struct ktenant *t)
{
	static const __u32 extremes[] = { 0, 1, 1U << 29, 1U << 31, UINT32_MAX };
	const unsigned int n = sizeof(extremes) / sizeof(extremes[0]);
	unsigned int k, i, j, v;
	int bad = 0;

	for (k = 0; k < CXL_CCM_KERNEL_ID_LIMIT; k++) {
		if (k == CXL_CCM_KERNEL_NOP || !(t->info.kernels & (1ULL << k)))
			continue;
		/* Ones in the shape words, zeros in the others, so that the reserved ones pass. */
		for (v = 0; v < n; v++) {
			unsigned int m = shape_words(k);
			__u32 all[8] = { 0 };

			for (i = 0; i < m; i++)
				all[i] = extremes[v];
			bad |= hostile_launch(_metadata, t, k, all) < 0;
			for (i = 0; i < m; i++) {
				for (j = i; j < m; j++) {
					__u32 w[8] = { 0 };
					unsigned int x;

					for (x = 0; x < m; x++)
						w[x] = 1;
					w[i] = extremes[v];
					w[j] = extremes[v];
					bad |= hostile_launch(_metadata, t, k, w) < 0;
				}
			}
		}
		if (bad) {
			TH_LOG("kernel %u", k);
			return -1;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(hostile, extreme_arguments, 600)
{
	ASSERT_EQ(0, extreme_arguments(_metadata, &self->t));
	still_answers(_metadata, &self->t);
}

TEST_F_TIMEOUT(hostile, launch_read_only, 60)
{
	struct cxl_ccm_launch l = xform_launch();
	struct cxl_ccm_stats s = { 0 };
	struct cxl_ccm_launch *ro = read_only_copy(&l, sizeof(l));
	__u32 tag = 0;

	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-1, ioctl(self->t.fd, CXL_CCM_IOC_LAUNCH, ro));
	EXPECT_EQ(EFAULT, errno);
	/* Nothing was launched. */
	ASSERT_EQ(0, ioctl(self->t.fd, CXL_CCM_IOC_STATS, &s));
	EXPECT_EQ(0ULL, s.launched);
	usleep(100000);
	EXPECT_EQ(self->t.head, cxlccm_ring_md_tail(&self->t.ring));
	/* No tag was taken: the next launch gets the first one, and only its records come. */
	checked_launch(_metadata, &self->t, &tag);
	EXPECT_EQ(self->t.cfg.index_base, tag);
	munmap(ro, sysconf(_SC_PAGESIZE));
}

TEST_F_TIMEOUT(hostile, stats_reset_read_only, 60)
{
	struct cxl_ccm_stats s = { .flags = CXL_CCM_STATS_RESET };
	struct cxl_ccm_stats *ro = read_only_copy(&s, sizeof(s));
	struct cxl_ccm_stats after = { 0 };

	ASSERT_NE(NULL, ro);
	checked_launch(_metadata, &self->t, NULL);
	EXPECT_EQ(-1, ioctl(self->t.fd, CXL_CCM_IOC_STATS, ro));
	EXPECT_EQ(EFAULT, errno);
	/* Nothing was reset. */
	ASSERT_EQ(0, ioctl(self->t.fd, CXL_CCM_IOC_STATS, &after));
	EXPECT_EQ(1ULL, after.launched);
	EXPECT_EQ(1ULL, after.launches_completed);
	EXPECT_LT(0ULL, after.records);
	munmap(ro, sysconf(_SC_PAGESIZE));
}

TEST(configure_read_only)
{
	struct ktenant t;
	struct cxl_ccm_configure c = {
		.mode = CXL_CCM_MODE_AXLE, .slot_size = 32, .metadata_slots = 64,
		.payload_slots = 128, .streaming_factor = 256, .input_size = INPUT_SIZE,
	};
	struct cxl_ccm_configure *ro;
	struct cxl_ccm_stats s = { 0 };
	const char *why = "";
	int r = ktenant_open(&t, CXL_CCM_KERNEL_STREAM_XFORM, CXL_CCM_MODE_AXLE, &why);

	if (r == 1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, r);
	ro = read_only_copy(&c, sizeof(c));
	ASSERT_NE(NULL, ro);
	EXPECT_EQ(-1, ioctl(t.fd, CXL_CCM_IOC_CONFIGURE, ro));
	EXPECT_EQ(EFAULT, errno);
	/* Still not a tenant. */
	EXPECT_EQ(-1, ioctl(t.fd, CXL_CCM_IOC_STATS, &s));
	EXPECT_EQ(EBADFD, errno);
	/* A retry with a writable argument is told the tenant and the lengths. */
	ASSERT_EQ(0, ioctl(t.fd, CXL_CCM_IOC_CONFIGURE, &c)) TH_LOG("%s", strerror(errno));
	EXPECT_LT(c.tenant, t.info.max_tenants);
	EXPECT_LT(0ULL, c.headers_size);
	EXPECT_LT(0ULL, c.metadata_ring_size);
	EXPECT_LT(0ULL, c.payload_ring_size);
	munmap(ro, sysconf(_SC_PAGESIZE));
	close(t.fd);
}

TEST_HARNESS_MAIN
