// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_KNN (the VectorDB workload of the AXLE evaluation) in every
 * mode: the device computes the squared Euclidean distance of each row to the
 * query, the host collects them from the rings in whatever order they come
 * and keeps the top K. Every distance is checked against a CPU reference
 * (the same wrapping 64-bit arithmetic), every record's checksum and sequence
 * number too, and the top K must be the reference's. Extreme element values
 * are included so that an overflow in the device's arithmetic would show.
 * Bad arguments give one FINAL | ERROR record with STATUS_BAD_ARGS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define DIM	64
#define ROWS	512
#define K	8

FIXTURE(knn) {
	int fd;
	struct cxl_ccm_configure cfg;
	const struct cxl_ccm_ring_headers *hdr;
	const struct cxl_ccm_metadata_record *md;
	const __u8 *pl;
	__s32 *in;
	__u32 head;
};

FIXTURE_VARIANT(knn) {
	__u32 mode;
};

FIXTURE_VARIANT_ADD(knn, axle) { .mode = CXL_CCM_MODE_AXLE };
FIXTURE_VARIANT_ADD(knn, rp) { .mode = CXL_CCM_MODE_RP };
FIXTURE_VARIANT_ADD(knn, bs) { .mode = CXL_CCM_MODE_BS };
FIXTURE_VARIANT_ADD(knn, axle_irq) { .mode = CXL_CCM_MODE_AXLE_IRQ };

FIXTURE_SETUP(knn)
{
	struct cxl_ccm_info info = { 0 };

	self->fd = open("/dev/cxl_ccm0", O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "/dev/cxl_ccm0 is missing");
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_INFO, &info));
	if (!(info.kernels & (1ULL << CXL_CCM_KERNEL_KNN)))
		SKIP(return, "the device does not implement KNN");
	if (!(info.caps & (1ULL << variant->mode)))
		SKIP(return, "mode %u not served", variant->mode);
	memset(&self->cfg, 0, sizeof(self->cfg));
	self->cfg.mode = variant->mode;
	self->cfg.slot_size = 32;
	self->cfg.metadata_slots = 64;
	self->cfg.payload_slots = 128;
	self->cfg.streaming_factor = 256;
	self->cfg.index_base = 0xffffffe0;
	self->cfg.input_size = 256 << 10;
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &self->cfg)) TH_LOG("%s", strerror(errno));
	self->hdr = mmap(NULL, self->cfg.headers_size, PROT_READ, MAP_SHARED, self->fd,
			 CXL_CCM_MMAP_HEADERS);
	self->md = mmap(NULL, self->cfg.metadata_ring_size, PROT_READ, MAP_SHARED, self->fd,
			CXL_CCM_MMAP_METADATA);
	self->pl = mmap(NULL, self->cfg.payload_ring_size, PROT_READ, MAP_SHARED, self->fd,
			CXL_CCM_MMAP_PAYLOAD);
	self->in = mmap(NULL, self->cfg.input_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
			CXL_CCM_MMAP_INPUT);
	ASSERT_NE(MAP_FAILED, self->hdr);
	ASSERT_NE(MAP_FAILED, self->md);
	ASSERT_NE(MAP_FAILED, self->pl);
	ASSERT_NE(MAP_FAILED, self->in);
	self->head = self->cfg.index_base;
}

FIXTURE_TEARDOWN(knn)
{
	if (self->fd >= 0)
		close(self->fd);
}

static __u64 reference(const __s32 *q, const __s32 *r)
{
	__u64 acc = 0;
	int i;

	for (i = 0; i < DIM; i++) {
		__s64 d = (__s64)q[i] - r[i];
		__u64 a = d < 0 ? -(__u64)d : (__u64)d;

		acc += a * a;
	}
	return acc;
}

static int launch_knn(int fd, __u32 dim, __u32 rows, __u32 chunk_rows)
{
	struct cxl_ccm_knn_args ka = { .dim = dim, .rows = rows, .chunk_rows = chunk_rows };
	struct cxl_ccm_launch l = {
		.kernel_id = CXL_CCM_KERNEL_KNN,
		.input_size = ((__u64)rows + 1) * dim * 4,
		.arg_size = sizeof(ka),
	};

	memcpy(l.args, &ka, sizeof(ka));
	return ioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
}

/*
 * Consume records until a FINAL one: distances go into @dist by
 * result_offset; returns the number of records, or -1 with a message.
 */
static int collect(struct __test_metadata *_metadata, FIXTURE_DATA(knn) *self, __u64 *dist,
		   __u32 *status)
{
	__u64 pl_bytes = (__u64)self->cfg.payload_slots * self->hdr->payload.slot_size;
	int records = 0, final = 0;
	time_t start = time(NULL);

	while (!final) {
		__u32 tail = __atomic_load_n(&self->hdr->metadata.tail, __ATOMIC_ACQUIRE);

		if (tail == self->head) {
			if (time(NULL) - start > 20) {
				TH_LOG("no record for 20 s");
				return -1;
			}
			usleep(50);
			continue;
		}
		for (; self->head != tail; self->head++) {
			struct cxl_ccm_metadata_record r =
				self->md[self->head & (self->cfg.metadata_slots - 1)];
			struct cxl_ccm_release_entry e = { r.payload_index, r.length };
			struct cxl_ccm_release rel = {
				.entries = (__u64)(unsigned long)&e, .count = 1,
				.flags = CXL_CCM_RELEASE_METADATA, .metadata_head = self->head + 1,
			};
			__u64 off = (__u64)(r.payload_index & (self->cfg.payload_slots - 1)) *
				    self->hdr->payload.slot_size;
			__u8 buf[512];
			__u32 first = r.length;

			if (r.seq != self->head || r.length > sizeof(buf) || r.length % 8) {
				TH_LOG("record %u: seq %u length %u", self->head, r.seq, r.length);
				return -1;
			}
			if (off + r.length > pl_bytes)
				first = pl_bytes - off;
			memcpy(buf, self->pl + off, first);
			memcpy(buf + first, self->pl, r.length - first);
			if (cxl_ccm_crc32c(buf, r.length) != r.checksum) {
				TH_LOG("record %u: checksum mismatch", self->head);
				return -1;
			}
			if (dist)
				memcpy((__u8 *)dist + r.result_offset, buf, r.length);
			*status = r.status;
			final |= !!(r.flags & CXL_CCM_MD_FLAG_FINAL);
			records++;
			if (ioctl(self->fd, CXL_CCM_IOC_RELEASE, &rel)) {
				TH_LOG("RELEASE: %s", strerror(errno));
				return -1;
			}
		}
	}
	return records;
}

static int by_distance(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

TEST_F_TIMEOUT(knn, distances_and_top_k, 60)
{
	static __u64 dist[ROWS], ref[ROWS], sorted[ROWS], ref_sorted[ROWS];
	__u32 seed = 12345, status = 0, i, j;
	__s32 *q = self->in, *rows = self->in + DIM;

	for (i = 0; i < (ROWS + 1) * DIM; i++) {
		seed = seed * 1103515245 + 12345;
		self->in[i] = (__s32)(seed ^ (seed << 7)) >> (seed % 24);
	}
	/* The extremes: the squares no longer fit 63 bits. */
	q[0] = 0x7fffffff;
	rows[0] = -0x7fffffff - 1;
	for (i = 0; i < ROWS; i++)
		dist[i] = ~0ULL;
	ASSERT_EQ(0, launch_knn(self->fd, DIM, ROWS, 16)) TH_LOG("LAUNCH: %s", strerror(errno));
	ASSERT_EQ(ROWS / 16, collect(_metadata, self, dist, &status));
	EXPECT_EQ(0U, status);
	for (i = 0; i < ROWS; i++) {
		ref[i] = reference(q, rows + (__u64)i * DIM);
		ASSERT_EQ(ref[i], dist[i]) TH_LOG("row %u", i);
	}
	memcpy(sorted, dist, sizeof(dist));
	memcpy(ref_sorted, ref, sizeof(ref));
	qsort(sorted, ROWS, sizeof(sorted[0]), by_distance);
	qsort(ref_sorted, ROWS, sizeof(ref_sorted[0]), by_distance);
	for (j = 0; j < K; j++)
		EXPECT_EQ(ref_sorted[j], sorted[j]) TH_LOG("top-%u", j);
}

/* Malformed arguments: one FINAL | ERROR record, STATUS_BAD_ARGS; the tenant goes on. */
TEST_F_TIMEOUT(knn, bad_arguments, 30)
{
	__u32 status = 0;

	ASSERT_EQ(0, launch_knn(self->fd, 0, 4, 1));
	ASSERT_EQ(1, collect(_metadata, self, NULL, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* 40 rows per record would exceed the SF of 256 bytes. */
	ASSERT_EQ(0, launch_knn(self->fd, 4, 64, 40));
	ASSERT_EQ(1, collect(_metadata, self, NULL, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	ASSERT_EQ(0, launch_knn(self->fd, 4, 64, 8));
	ASSERT_EQ(8, collect(_metadata, self, NULL, &status));
	EXPECT_EQ(0U, status);
}

TEST_HARNESS_MAIN
