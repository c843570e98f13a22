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
#include "kernel_lib.h"

#define DIM	64
#define ROWS	512
#define K	8

KTENANT_FIXTURE(knn, CXL_CCM_KERNEL_KNN, 256 << 10)

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

	return ktenant_launch(fd, CXL_CCM_KERNEL_KNN, ((__u64)rows + 1) * dim * 4, &ka);
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
	__s32 *in = self->t.ring.in, *q = in, *rows = in + DIM;

	for (i = 0; i < (ROWS + 1) * DIM; i++) {
		seed = seed * 1103515245 + 12345;
		in[i] = (__s32)(seed ^ (seed << 7)) >> (seed % 24);
	}
	/* The extremes: the squares no longer fit 63 bits. */
	q[0] = 0x7fffffff;
	rows[0] = -0x7fffffff - 1;
	for (i = 0; i < ROWS; i++)
		dist[i] = ~0ULL;
	ASSERT_EQ(0, launch_knn(self->t.fd, DIM, ROWS, 16)) TH_LOG("LAUNCH: %s", strerror(errno));
	ASSERT_EQ(ROWS / 16, ktenant_collect(_metadata, &self->t, dist, sizeof(dist), &status));
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

	ASSERT_EQ(0, launch_knn(self->t.fd, 0, 4, 1));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* 40 rows per record would exceed the SF of 256 bytes. */
	ASSERT_EQ(0, launch_knn(self->t.fd, 4, 64, 40));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	ASSERT_EQ(0, launch_knn(self->t.fd, 4, 64, 8));
	ASSERT_EQ(8, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(0U, status);
}

TEST_HARNESS_MAIN
