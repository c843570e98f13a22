// SPDX-License-Identifier: GPL-2.0
/*
 * Misuse of the cxl_ccm AXLE user API: every call below gets the errno the
 * contract names (EBADFD before CONFIGURE, EBUSY for a second CONFIGURE,
 * EINVAL for malformed launches, releases, waits and stats, EFAULT for bad
 * pointers, EPERM/EACCES/EINVAL for bad mmaps), and none of them disturbs the
 * tenant: a failed LAUNCH takes no tag, a refused RELEASE applies exactly the
 * entries before the bad one, and a verified job still runs afterwards.
 */
#include <sys/mman.h>

#include "axle_lib.h"

FIXTURE(misuse) {
	struct axle_tenant t;
	struct axle_run r;
};

FIXTURE_SETUP(misuse)
{
	self->t.fd = -1;
	axle_open_or_skip(_metadata, &self->t, AXLE_NODE0);
}

FIXTURE_TEARDOWN(misuse)
{
	axle_run_free(&self->r);
	axle_close(&self->t);
}

#define EXPECT_ERRNO(err, call) do {					\
		errno = 0;						\
		EXPECT_EQ(-1, (call)) TH_LOG("%s", #call);		\
		EXPECT_EQ(err, errno) TH_LOG("%s: %s", #call, strerror(errno)); \
	} while (0)

/* mmap that must fail with @err. */
#define EXPECT_MMAP_ERRNO(err, len, prot, flags, off) do {		\
		void *__p;						\
		errno = 0;						\
		__p = mmap(NULL, (len), (prot), (flags), self->t.fd, (off)); \
		EXPECT_EQ(MAP_FAILED, __p)				\
			TH_LOG("mmap(%s, %s, %s, %#llx) succeeded", #len, #prot, #flags, \
			       (unsigned long long)(off));		\
		if (__p != MAP_FAILED)					\
			munmap(__p, (len));				\
		EXPECT_EQ(err, errno)					\
			TH_LOG("mmap(%s, %s, %s, %#llx): %s", #len, #prot, #flags, \
			       (unsigned long long)(off), strerror(errno)); \
	} while (0)

/* Run one small verified job on the configured fixture tenant. */
static void still_works(struct __test_metadata *_metadata, struct axle_run *r)
{
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 0x31415926, 512, 64);
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
}

static struct cxl_ccm_configure small_config(__u32 base)
{
	return axle_config(16, 16, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER, base, 16384);
}

/*
 * Before CONFIGURE the file is no tenant: LAUNCH, RELEASE, WAIT, STATS and
 * every mmap fail with EBADFD, and CONFIGURE afterwards still works.
 */
TEST_F(misuse, before_configure)
{
	struct cxl_ccm_configure cfg = small_config(0);
	struct cxl_ccm_launch l = axle_xform_launch(0, 64, CXL_CCM_XFORM_OP_XOR, 0, 1);
	int fd = self->t.fd;
	struct cxl_ccm_stats s;
	struct cxl_ccm_wait w;

	EXPECT_ERRNO(EBADFD, ioctl(fd, CXL_CCM_IOC_LAUNCH, &l));
	EXPECT_ERRNO(EBADFD, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, 0, NULL));
	EXPECT_ERRNO(EBADFD, axle_ioc_wait(fd, &w, 1, 0, 0));
	EXPECT_ERRNO(EBADFD, axle_ioc_stats(fd, &s, 0));
	EXPECT_MMAP_ERRNO(EBADFD, 4096, PROT_READ, MAP_SHARED, CXL_CCM_MMAP_HEADERS);
	EXPECT_MMAP_ERRNO(EBADFD, 4096, PROT_READ, MAP_SHARED, CXL_CCM_MMAP_METADATA);
	EXPECT_MMAP_ERRNO(EBADFD, 4096, PROT_READ, MAP_SHARED, CXL_CCM_MMAP_PAYLOAD);
	EXPECT_MMAP_ERRNO(EBADFD, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, CXL_CCM_MMAP_INPUT);

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, &self->r, &self->t, 1024, axle_seed(_metadata));
	still_works(_metadata, &self->r);
}

/* A second CONFIGURE on the same file is EBUSY and leaves the tenant alone. */
TEST_F(misuse, configure_twice)
{
	struct cxl_ccm_configure cfg = small_config(0x100), again;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	again = cfg;
	EXPECT_ERRNO(EBUSY, ioctl(self->t.fd, CXL_CCM_IOC_CONFIGURE, &again));
	again = axle_config(64, 64, 64, 64, CXL_CCM_ORDER_OUT_OF_ORDER, 7, 4096);
	EXPECT_ERRNO(EBUSY, ioctl(self->t.fd, CXL_CCM_IOC_CONFIGURE, &again));
	axle_run_init(_metadata, &self->r, &self->t, 1024, axle_seed(_metadata));
	still_works(_metadata, &self->r);
}

/*
 * Malformed launches are EINVAL: unknown flags, LAUNCH_SYNC in AXLE mode,
 * nonzero reserved fields, arg_size above 32, a kernel the device does not
 * implement, an input range outside the input buffer. None takes a tag: the
 * next good launch gets index_base.
 */
TEST_F(misuse, bad_launch)
{
	struct cxl_ccm_configure cfg = small_config(0xfffffff0);
	const struct cxl_ccm_launch good = axle_xform_launch(0, 64, CXL_CCM_XFORM_OP_XOR, 32, 1);
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	__u64 in_size;
	unsigned int k;
	int fd;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	fd = self->t.fd;
	in_size = self->t.cfg.input_size;

#define EXPECT_LAUNCH_EINVAL(field, value) do {				\
		l = good;						\
		l.field = (value);					\
		EXPECT_ERRNO(EINVAL, ioctl(fd, CXL_CCM_IOC_LAUNCH, &l)); \
	} while (0)

	EXPECT_LAUNCH_EINVAL(flags, 1U << 1);
	EXPECT_LAUNCH_EINVAL(flags, 1U << 31);
	EXPECT_LAUNCH_EINVAL(flags, CXL_CCM_LAUNCH_SYNC);
	EXPECT_LAUNCH_EINVAL(reserved[0], 1);
	EXPECT_LAUNCH_EINVAL(reserved[1], 1ULL << 63);
	EXPECT_LAUNCH_EINVAL(arg_size, CXL_CCM_MAX_ARG_SIZE + 1);
	EXPECT_LAUNCH_EINVAL(arg_size, 0xffffffff);
	for (k = 0; k < CXL_CCM_KERNEL_ID_LIMIT; k++)
		if (!(self->t.info.kernels & (1ULL << k)))
			EXPECT_LAUNCH_EINVAL(kernel_id, k);
	EXPECT_LAUNCH_EINVAL(kernel_id, CXL_CCM_KERNEL_ID_LIMIT);
	EXPECT_LAUNCH_EINVAL(kernel_id, 0xffffffff);

	/* Input ranges outside the input buffer. */
	EXPECT_LAUNCH_EINVAL(input_offset, in_size);
	EXPECT_LAUNCH_EINVAL(input_offset, in_size - 32);
	EXPECT_LAUNCH_EINVAL(input_offset, ~0ULL - 31);
	EXPECT_LAUNCH_EINVAL(input_offset, 1ULL << 40);
	EXPECT_LAUNCH_EINVAL(input_size, in_size + 4);
	EXPECT_LAUNCH_EINVAL(input_size, 1ULL << 32);
	EXPECT_LAUNCH_EINVAL(input_size, ~0ULL);
#undef EXPECT_LAUNCH_EINVAL

	EXPECT_ERRNO(EFAULT, ioctl(fd, CXL_CCM_IOC_LAUNCH, NULL));

	ASSERT_EQ(0, axle_ioc_stats(fd, &s, 0));
	EXPECT_EQ(0U, s.launched);
	/* The next good launch gets the first tag (axle_launch() checks it). */
	axle_run_init(_metadata, &self->r, &self->t, 1024, axle_seed(_metadata));
	still_works(_metadata, &self->r);
	EXPECT_EQ(cfg.index_base, self->r.l[0].tag);
}

/*
 * Malformed releases: unknown flags, nonzero reserved fields and a count
 * above RELEASE_MAX are EINVAL, bad entry pointers EFAULT; releasing slots
 * never received, of a previous lap, or twice is EINVAL with processed
 * counting the entries applied before the bad one; the metadata head cannot
 * go back or pass the tail. Afterwards the credit is exactly right: more
 * jobs run through the 16-slot rings.
 */
TEST_F(misuse, bad_release)
{
	struct cxl_ccm_configure cfg = small_config(0xfffffffc);
	struct cxl_ccm_release_entry e[4], bad[3], *big;
	struct axle_run *r = &self->r;
	struct cxl_ccm_release rel;
	__u32 b = cfg.index_base, processed, slot;
	unsigned int i;
	void *gone;
	int fd;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	fd = self->t.fd;
	slot = self->t.ring.slot_size;

	/* Nothing received yet. */
	e[0].payload_index = b;
	e[0].length = slot;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, e, 1, 0, 0, &processed));
	EXPECT_EQ(0U, processed);
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, NULL, 0, 1U << 2, 0, NULL));
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, NULL, 0, 1U << 31, 0, NULL));
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b + 1, NULL));
	EXPECT_EQ(0, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b, NULL));
	for (i = 0; i < 2; i++) {
		memset(&rel, 0, sizeof(rel));
		rel.reserved[i] = 1;
		EXPECT_ERRNO(EINVAL, ioctl(fd, CXL_CCM_IOC_RELEASE, &rel));
	}
	big = calloc(CXL_CCM_RELEASE_MAX + 1, sizeof(*big));
	ASSERT_NE(NULL, big);
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, big, CXL_CCM_RELEASE_MAX + 1, 0, 0, NULL));
	free(big);
	EXPECT_ERRNO(EFAULT, axle_ioc_release(fd, NULL, 1, 0, 0, NULL));
	gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	munmap(gone, 4096);
	EXPECT_ERRNO(EFAULT, axle_ioc_release(fd, gone, 1, 0, 0, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(fd, CXL_CCM_IOC_RELEASE, NULL));

	/* Four one-slot records, copied but not released. */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0x77, 4 * slot, slot);
	while (r->done < r->nl)
		if (!axle_poll(_metadata, r))
			axle_idle(_metadata, r);
	ASSERT_EQ(4U, r->npend);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(b + i, r->pend[i].payload_index);
		e[i].payload_index = r->pend[i].payload_index;
		e[i].length = r->pend[i].length;
	}
	r->npend = 0;

	/* Two good entries, then a slot never received: the two are applied. */
	bad[0] = e[0];
	bad[1] = e[1];
	bad[2].payload_index = b + 4;
	bad[2].length = slot;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, bad, 3, 0, 0, &processed));
	EXPECT_EQ(2U, processed);
	/* Twice. */
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, &e[0], 1, 0, 0, &processed));
	EXPECT_EQ(0U, processed);
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, &e[1], 1, 0, 0, &processed));
	EXPECT_EQ(0U, processed);
	bad[0] = e[3];
	bad[1] = e[3];
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, bad, 2, 0, 0, &processed));
	EXPECT_EQ(1U, processed);
	/* A range over a received slot and a released one. */
	bad[0] = e[2];
	bad[0].length = 2 * slot;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, bad, 1, 0, 0, &processed));
	EXPECT_EQ(0U, processed);
	/* The same slot one lap earlier. */
	bad[0] = e[2];
	bad[0].payload_index -= self->t.ring.pl_slots;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, bad, 1, 0, 0, &processed));
	/* More slots than the ring has. */
	bad[0] = e[2];
	bad[0].length = self->t.ring.pl_bytes + slot;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, bad, 1, 0, 0, &processed));
	/* The last one, properly. */
	ASSERT_EQ(0, axle_ioc_release(fd, &e[2], 1, CXL_CCM_RELEASE_PUBLISH, 0, &processed));
	EXPECT_EQ(1U, processed);
	for (i = 0; i < 4; i++)
		axle_gap_release(_metadata, r, e[i].payload_index, e[i].length);

	/* The metadata head: forward to the tail, never back, never past it. */
	ASSERT_EQ(0, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b + 4, NULL));
	r->md_released = b + 4;
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b + 3, NULL));
	EXPECT_ERRNO(EINVAL, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b + 5, NULL));
	EXPECT_EQ(0, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, b + 4, NULL));

	/* The credit is intact: 8 more jobs through the 16-slot rings. */
	for (i = 0; i < 8; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, i, 1024, 64);
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
}

/* WAIT: min_records 0, flags and reserved fields are EINVAL; NULL is EFAULT. */
TEST_F(misuse, bad_wait)
{
	struct cxl_ccm_configure cfg = small_config(0);
	struct cxl_ccm_wait w;
	int fd;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	fd = self->t.fd;
	EXPECT_ERRNO(EINVAL, axle_ioc_wait(fd, &w, 0, 0, 0));
	EXPECT_ERRNO(EINVAL, axle_ioc_wait(fd, &w, 0, 0, CXL_CCM_WAIT_FOREVER));
#define EXPECT_WAIT_EINVAL(field, value) do {				\
		memset(&w, 0, sizeof(w));				\
		w.min_records = 1;					\
		w.timeout_ns = 1000;					\
		w.field = (value);					\
		EXPECT_ERRNO(EINVAL, ioctl(fd, CXL_CCM_IOC_WAIT, &w));	\
	} while (0)
	EXPECT_WAIT_EINVAL(flags, CXL_CCM_WAIT_FLAG_DEADLOCK << 1);
	EXPECT_WAIT_EINVAL(flags, 1U << 31);
	EXPECT_WAIT_EINVAL(reserved0, 1);
	EXPECT_WAIT_EINVAL(reserved[0], 1);
	EXPECT_WAIT_EINVAL(reserved[1], 1);
#undef EXPECT_WAIT_EINVAL
	EXPECT_ERRNO(EFAULT, ioctl(fd, CXL_CCM_IOC_WAIT, NULL));
	/* A well-formed one still answers. */
	EXPECT_ERRNO(EAGAIN, axle_ioc_wait(fd, &w, 1, 0, 0));
}

/* STATS: unknown flags are EINVAL; NULL is EFAULT. */
TEST_F(misuse, bad_stats)
{
	struct cxl_ccm_configure cfg = small_config(0);
	struct cxl_ccm_stats s;
	int fd;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	fd = self->t.fd;
	EXPECT_ERRNO(EINVAL, axle_ioc_stats(fd, &s, 1U << 1));
	EXPECT_ERRNO(EINVAL, axle_ioc_stats(fd, &s, 1U << 31));
	EXPECT_ERRNO(EFAULT, ioctl(fd, CXL_CCM_IOC_STATS, NULL));
	ASSERT_EQ(0, axle_ioc_stats(fd, &s, 0));
	EXPECT_EQ(self->t.cfg.tenant, s.tenant);
	ASSERT_EQ(0, axle_ioc_stats(fd, &s, CXL_CCM_STATS_RESET));
}

/*
 * mmap: PROT_WRITE on the three read-only areas is EPERM, and a read-only
 * mapping cannot be made writable later (mprotect: EACCES); MAP_PRIVATE,
 * a length beyond the area and an unknown offset are EINVAL. The input
 * buffer maps read-write.
 */
TEST_F(misuse, bad_mmap)
{
	struct cxl_ccm_configure cfg = axle_config(64, 256, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 65536);
	const __u64 page = sysconf(_SC_PAGESIZE);
	struct {
		const char *name;
		__u64 off;
		__u64 len;
	} ro[3];
	volatile __u32 *in;
	unsigned int i;
	__u8 *p;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	ro[0].name = "headers";
	ro[0].off = CXL_CCM_MMAP_HEADERS;
	ro[0].len = self->t.cfg.headers_size;
	ro[1].name = "metadata";
	ro[1].off = CXL_CCM_MMAP_METADATA;
	ro[1].len = self->t.cfg.metadata_ring_size;
	ro[2].name = "payload";
	ro[2].off = CXL_CCM_MMAP_PAYLOAD;
	ro[2].len = self->t.cfg.payload_ring_size;

	for (i = 0; i < 3; i++) {
		EXPECT_MMAP_ERRNO(EPERM, ro[i].len, PROT_READ | PROT_WRITE, MAP_SHARED, ro[i].off);
		EXPECT_MMAP_ERRNO(EPERM, ro[i].len, PROT_WRITE, MAP_SHARED, ro[i].off);
		EXPECT_MMAP_ERRNO(EINVAL, ro[i].len, PROT_READ, MAP_PRIVATE, ro[i].off);
		EXPECT_MMAP_ERRNO(EINVAL, ro[i].len + page, PROT_READ, MAP_SHARED, ro[i].off);
		EXPECT_MMAP_ERRNO(EINVAL, page, PROT_READ, MAP_SHARED, ro[i].off + ro[i].len);

		p = mmap(NULL, ro[i].len, PROT_READ, MAP_SHARED, self->t.fd, ro[i].off);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("%s: %s", ro[i].name, strerror(errno));
		EXPECT_ERRNO(EACCES, mprotect(p, ro[i].len, PROT_READ | PROT_WRITE));
		/* Still readable, and equal to the first mapping. */
		EXPECT_EQ(0, memcmp(p, i == 0 ? (const void *)self->t.ring.hdr :
				       i == 1 ? (const void *)self->t.ring.md :
						(const void *)self->t.ring.pl,
				    i == 0 ? sizeof(*self->t.ring.hdr) : ro[i].len));
		munmap(p, ro[i].len);
	}

	/* The input buffer: shared and read-write only, up to input_size. */
	EXPECT_MMAP_ERRNO(EINVAL, self->t.cfg.input_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			  CXL_CCM_MMAP_INPUT);
	EXPECT_MMAP_ERRNO(EINVAL, self->t.cfg.input_size + page, PROT_READ | PROT_WRITE,
			  MAP_SHARED, CXL_CCM_MMAP_INPUT);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, self->t.fd, CXL_CCM_MMAP_INPUT);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("input: %s", strerror(errno));
	in = (volatile __u32 *)p;
	in[0] = 0xfeedface;
	EXPECT_EQ(0xfeedfaceU, ((volatile __u32 *)self->t.ring.in)[0]);
	EXPECT_EQ(0, mprotect(p, page, PROT_READ));
	EXPECT_EQ(0, mprotect(p, page, PROT_READ | PROT_WRITE));
	munmap(p, page);

	/* Offsets naming no area. */
	EXPECT_MMAP_ERRNO(EINVAL, page, PROT_READ, MAP_SHARED,
			  CXL_CCM_MMAP_INPUT + CXL_CCM_MMAP_REGION_SIZE);
	EXPECT_MMAP_ERRNO(EINVAL, page, PROT_READ, MAP_SHARED, 0x7ffff000ULL);
	EXPECT_MMAP_ERRNO(EINVAL, page, PROT_READ, MAP_SHARED, 1ULL << 32);
}

TEST_HARNESS_MAIN
