// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_DLRM_SLS (DLRM's sparse-length-sum, the recommendation
 * workload of the AXLE evaluation) in every mode: the device gathers each
 * sample's embedding rows by index and sums them; the host gets one pooled
 * vector per sample. Every element of every vector is checked against a CPU
 * reference, with indices beyond the table (taken modulo its rows) and
 * values that make the sums wrap. Bad arguments give one FINAL | ERROR
 * record with STATUS_BAD_ARGS.
 */
#include "kernel_lib.h"

#define DIM		32
#define ROWS		100
#define SAMPLES		64
#define POOLING		10
#define CHUNK		2	/* samples per record: 2 * 128 B = the SF of 256 */

KTENANT_FIXTURE(sls, CXL_CCM_KERNEL_DLRM_SLS, 64 << 10)

static int launch_sls(int fd, __u32 dim, __u32 rows, __u32 samples, __u32 pooling,
		      __u32 chunk, __u64 input_size)
{
	struct cxl_ccm_sls_args a = {
		.dim = dim, .rows = rows, .samples = samples, .pooling = pooling,
		.chunk_samples = chunk,
	};

	return ktenant_launch(fd, CXL_CCM_KERNEL_DLRM_SLS, input_size, &a);
}

TEST_F_TIMEOUT(sls, pooled_vectors, 60)
{
	static __s32 out[SAMPLES][DIM];
	__s32 *table = self->t.ring.in;
	__u32 *idx = (__u32 *)(table + ROWS * DIM);
	__u32 x = 99, status = 1, s, k, i;

	for (i = 0; i < ROWS * DIM; i++) {
		x = x * 1664525 + 1013904223;
		table[i] = (__s32)x;	/* full range: the sums wrap */
	}
	for (i = 0; i < SAMPLES * POOLING; i++) {
		x = x * 1664525 + 1013904223;
		idx[i] = x % (3 * ROWS);	/* two thirds beyond the table */
	}
	memset(out, 0x5a, sizeof(out));
	ASSERT_EQ(0, launch_sls(self->t.fd, DIM, ROWS, SAMPLES, POOLING, CHUNK,
				(ROWS * DIM + SAMPLES * POOLING) * 4)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(SAMPLES / CHUNK, ktenant_collect(_metadata, &self->t, out, sizeof(out), &status));
	EXPECT_EQ(0U, status);
	for (s = 0; s < SAMPLES; s++)
		for (i = 0; i < DIM; i++) {
			__u32 want = 0;

			for (k = 0; k < POOLING; k++)
				want += (__u32)table[(idx[s * POOLING + k] % ROWS) * DIM + i];
			ASSERT_EQ((__s32)want, out[s][i]) TH_LOG("sample %u element %u", s, i);
		}
}

TEST_F_TIMEOUT(sls, bad_arguments, 30)
{
	__u32 status = 0;

	/* No index per sample. */
	ASSERT_EQ(0, launch_sls(self->t.fd, DIM, ROWS, SAMPLES, 0, CHUNK, ROWS * DIM * 4));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* Three vectors (384 B) per record exceed the SF of 256. */
	ASSERT_EQ(0, launch_sls(self->t.fd, DIM, ROWS, SAMPLES, POOLING, 3,
				(ROWS * DIM + SAMPLES * POOLING) * 4));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
}

TEST_HARNESS_MAIN
