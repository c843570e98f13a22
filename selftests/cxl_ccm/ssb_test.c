// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_SSB_Q1_1 and _Q1_2 (the OLAP workload of the AXLE
 * evaluation) in every mode: the device filters a generated lineorder table
 * by the queries' predicates and streams one partial (revenue, matches) per
 * chunk of rows; the host sums the partials. Every partial is checked
 * against a CPU reference over the same rows (so a wrong row boundary or a
 * dropped chunk shows), and so are the totals. Bad arguments give one
 * FINAL | ERROR record with STATUS_BAD_ARGS.
 */
#include "kernel_lib.h"

#define ROWS		20000
#define CHUNK_ROWS	1024
#define CHUNKS		((ROWS + CHUNK_ROWS - 1) / CHUNK_ROWS)

KTENANT_FIXTURE(ssb, CXL_CCM_KERNEL_SSB_Q1_1, 512 << 10)

/* lineorder: orderdate in 1992-1998, quantity 1-50, discount 0-10, a price. */
static void generate(__u32 *rows)
{
	__u32 x = 2024, i;

	for (i = 0; i < ROWS; i++) {
		x = x * 1664525 + 1013904223;
		rows[4 * i] = 19920101 + (x >> 8) % 7 * 10000 + (x >> 4) % 12 * 100 + x % 28;
		rows[4 * i + 1] = 1 + (x >> 12) % 50;
		rows[4 * i + 2] = (x >> 20) % 11;
		rows[4 * i + 3] = 90000 + (x >> 3) % 10000000;
	}
}

static void run_query(struct __test_metadata *_metadata, struct ktenant *t, __u16 kernel,
		      const struct cxl_ccm_ssb_args *a)
{
	static __u64 partial[CHUNKS][2];
	const __u32 *rows = t->ring.in;
	__u64 want_rev = 0, want_n = 0, rev = 0, n = 0;
	__u32 status = 1, c, i;

	memset(partial, 0xff, sizeof(partial));
	ASSERT_EQ(0, ktenant_launch(t->fd, kernel, ROWS * 16, a)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(CHUNKS, ktenant_collect(_metadata, t, partial, sizeof(partial), &status));
	EXPECT_EQ(0U, status);
	for (c = 0; c < CHUNKS; c++) {
		__u64 cr = 0, cn = 0;

		for (i = c * CHUNK_ROWS; i < ROWS && i < (c + 1) * CHUNK_ROWS; i++) {
			const __u32 *r = rows + 4 * i;

			if (r[0] >= a->date_lo && r[0] <= a->date_hi &&
			    r[2] >= a->discount_lo && r[2] <= a->discount_hi &&
			    r[1] >= a->quantity_lo && r[1] <= a->quantity_hi) {
				cr += (__u64)r[3] * r[2];
				cn++;
			}
		}
		ASSERT_EQ(cr, partial[c][0]) TH_LOG("chunk %u revenue", c);
		ASSERT_EQ(cn, partial[c][1]) TH_LOG("chunk %u matches", c);
		rev += partial[c][0];
		n += partial[c][1];
		want_rev += cr;
		want_n += cn;
	}
	EXPECT_EQ(want_rev, rev);
	EXPECT_EQ(want_n, n);
	EXPECT_LT(0ULL, n) TH_LOG("the data must give the query something to find");
}

TEST_F_TIMEOUT(ssb, queries_1_1_and_1_2, 60)
{
	/* Q1.1: year 1993, discount 1-3, quantity < 25. */
	struct cxl_ccm_ssb_args q11 = { ROWS, CHUNK_ROWS, 19930101, 19931231, 1, 3, 0, 24 };
	/* Q1.2: January 1994, discount 4-6, quantity 26-35. */
	struct cxl_ccm_ssb_args q12 = { ROWS, CHUNK_ROWS, 19940101, 19940131, 4, 6, 26, 35 };

	generate(self->t.ring.in);
	run_query(_metadata, &self->t, CXL_CCM_KERNEL_SSB_Q1_1, &q11);
	run_query(_metadata, &self->t, CXL_CCM_KERNEL_SSB_Q1_2, &q12);
}

TEST_F_TIMEOUT(ssb, bad_arguments, 30)
{
	struct cxl_ccm_ssb_args a = { ROWS, CHUNK_ROWS, 0, ~0U, 0, ~0U, 0, ~0U };
	__u32 status = 0;

	/* The input size does not match the rows. */
	ASSERT_EQ(0, ktenant_launch(self->t.fd, CXL_CCM_KERNEL_SSB_Q1_1, ROWS * 16 - 16, &a));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	a.rows = 0;
	ASSERT_EQ(0, ktenant_launch(self->t.fd, CXL_CCM_KERNEL_SSB_Q1_2, 0, &a));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
}

TEST_HARNESS_MAIN
