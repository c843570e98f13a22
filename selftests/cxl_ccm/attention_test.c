// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_KERNEL_LLM_ATTENTION (the attention of an LLM inference block, the
 * AXLE evaluation's workload (h)) in every mode, and the deadlock its
 * dependencies cause when the payload ring is smaller than one block.
 *
 * every_row: every output element of every query row and head against a CPU
 * reference of the same integer attention, with extreme vectors in one head,
 * and the block-major record layout.
 * deadlock_detected: the host holds each record until it has one per head
 * (its task needs the whole block); 20 heads of 256 B need 160 slots of the
 * 128-slot ring, so the device (or, in RP and BS, the driver) blocks for
 * credit. WAIT with CXL_CCM_WAIT_FLAG_DEADLOCK must say EDEADLK instead of
 * hanging, and once the host gives up and releases, every result still
 * arrives intact. block_fits is the control: 8 heads fit, no EDEADLK.
 */
#include <stdint.h>

#include "kernel_lib.h"

#define DIM		16
#define ROWS		4	/* query rows per record: 4 * 16 * 4 B = the SF of 256 */

KTENANT_FIXTURE(attn, CXL_CCM_KERNEL_LLM_ATTENTION, 64 << 10)

struct shape {
	__u32 tokens, q_first, q_rows, heads, shift;
};

static __u64 in_bytes(const struct shape *s)
{
	return (__u64)s->heads * (s->q_rows + 2 * s->tokens) * DIM * 2;
}

static __u64 out_elems(const struct shape *s)
{
	return (__u64)s->heads * s->q_rows * DIM;
}

static int launch_attn(int fd, const struct shape *s, __u32 chunk_rows, __u32 dim, __u64 size)
{
	struct cxl_ccm_attention_args a = {
		.tokens = s->tokens, .q_first = s->q_first, .q_rows = s->q_rows,
		.heads = s->heads, .head_dim = dim, .chunk_rows = chunk_rows, .shift = s->shift,
	};

	return ktenant_launch(fd, CXL_CCM_KERNEL_LLM_ATTENTION, size, &a);
}

static __s64 dot(const __s16 *a, const __s16 *b)
{
	__s64 s = 0;
	int d;

	for (d = 0; d < DIM; d++)
		s += (__s64)a[d] * b[d];
	return s;
}

/* The CPU's attention of query row @row of head @h: the device's integer algorithm. */
static void ref_row(const struct shape *s, const __s16 *in, __u32 h, __u32 row, __s32 *out)
{
	const __s16 *q = in + ((__u64)h * s->q_rows + row) * DIM;
	const __s16 *k = in + ((__u64)s->heads * s->q_rows + (__u64)h * s->tokens) * DIM;
	const __s16 *v = k + (__u64)s->heads * s->tokens * DIM;
	__u32 keys = s->q_first + row + 1, j;
	__s64 max = INT64_MIN, acc[DIM] = { 0 }, total = 0;
	int d;

	for (j = 0; j < keys; j++) {
		__s64 x = dot(q, k + (__u64)j * DIM);

		max = x > max ? x : max;
	}
	for (j = 0; j < keys; j++) {
		__s64 w = cxl_ccm_attention_weight((__u64)(max - dot(q, k + (__u64)j * DIM)) >>
						   s->shift);

		total += w;
		for (d = 0; d < DIM; d++)
			acc[d] += w * v[(__u64)j * DIM + d];
	}
	for (d = 0; d < DIM; d++)
		out[d] = (__s32)(acc[d] / total);
}

static void fill(const struct shape *s, __s16 *in, __u32 seed)
{
	__u64 i, n = in_bytes(s) / 2;

	for (i = 0; i < n; i++) {
		seed = seed * 1664525 + 1013904223;
		in[i] = (__s16)((seed >> 16) % 256) - 128;
	}
}

/* Checks @out (block-major: block, head, row) against the CPU, row by row. */
static void check_all(struct __test_metadata *_metadata, const struct shape *s, const __s16 *in,
		      const __s32 *out)
{
	__u32 b, h, i;
	__s32 want[DIM];

	for (b = 0; b * ROWS < s->q_rows; b++) {
		__u32 rows = s->q_rows - b * ROWS < ROWS ? s->q_rows - b * ROWS : ROWS;

		for (h = 0; h < s->heads; h++)
			for (i = 0; i < rows; i++) {
				const __s32 *got = out + ((__u64)b * ROWS * s->heads + h * rows + i) * DIM;

				ref_row(s, in, h, b * ROWS + i, want);
				ASSERT_EQ(0, memcmp(want, got, sizeof(want)))
					TH_LOG("block %u head %u row %u: element 0 %d, want %d",
					       b, h, i, got[0], want[0]);
			}
	}
}

TEST_F_TIMEOUT(attn, every_row, 60)
{
	/* 18 query rows (a last block of 2) at positions 30..47 over 48 tokens. */
	const struct shape s = { .tokens = 48, .q_first = 30, .q_rows = 18, .heads = 3, .shift = 6 };
	__s16 *in = self->t.ring.in;
	__s16 *k1 = in + ((__u64)s.heads * s.q_rows + s.tokens) * DIM;
	static __s32 out[3 * 18 * DIM];
	__u32 status = 1, i;

	ASSERT_EQ(sizeof(out), out_elems(&s) * 4);
	fill(&s, in, 7);
	/* Head 1: extreme keys and values, so the products and the sums reach their bounds. */
	for (i = 0; i < 5 * DIM; i++)
		k1[i] = i & 1 ? INT16_MIN : INT16_MAX;
	for (i = 0; i < 5 * DIM; i++)
		k1[(__u64)s.heads * s.tokens * DIM + i] = i & 2 ? INT16_MIN : INT16_MAX;
	memset(out, 0x5a, sizeof(out));
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s)))
		TH_LOG("%s", strerror(errno));
	/* 5 blocks of 3 heads. */
	ASSERT_EQ(15, ktenant_collect(_metadata, &self->t, out, sizeof(out), &status));
	EXPECT_EQ(0U, status);
	check_all(_metadata, &s, in, out);
}

TEST_F_TIMEOUT(attn, bad_arguments, 30)
{
	struct shape s = { .tokens = 16, .q_first = 10, .q_rows = 8, .heads = 2, .shift = 6 };
	__u32 status = 0;

	/* Query rows beyond the context. */
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s)));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* Five rows (320 B) per record exceed the SF of 256. */
	s.q_first = 0;
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, 5, DIM, in_bytes(&s)));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* A shift of 64. */
	s.shift = 64;
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s)));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
	/* The input one element short. */
	s.shift = 6;
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s) - 2));
	ASSERT_EQ(1, ktenant_collect(_metadata, &self->t, NULL, 0, &status));
	EXPECT_EQ(CXL_CCM_STATUS_BAD_ARGS, status);
}

/*
 * The host task of a block needs a record of every head: hold records (no
 * release) until a block is whole, then check it and release it. Returns the
 * records consumed, or -EDEADLK when WAIT reports that none can come.
 */
static int hold_blocks(struct __test_metadata *_metadata, struct ktenant *t,
		       const struct shape *s, __s32 *out)
{
	__u32 records = s->heads * ((s->q_rows + ROWS - 1) / ROWS), held = 0, done = 0;
	__u32 first = t->head;
	struct cxl_ccm_release_entry e[64];

	while (done < records) {
		struct cxl_ccm_wait w = {
			.min_records = held + 1, .metadata_head = first,
			.timeout_ns = 20ULL * 1000 * 1000 * 1000, .flags = CXL_CCM_WAIT_FLAG_DEADLOCK,
		};
		struct cxl_ccm_metadata_record r;
		const void *piece[2];
		size_t piece_len[2];

		if (ioctl(t->fd, CXL_CCM_IOC_WAIT, &w)) {
			if (errno == EDEADLK) {
				EXPECT_EQ(held, w.ready);
				return -EDEADLK;
			}
			TH_LOG("WAIT: %s", strerror(errno));
			return -1;
		}
		if (!cxlccm_ring_record(&t->ring, first + held, &r) || r.status ||
		    r.length != ROWS * DIM * 4) {
			TH_LOG("record %u: seq %u status %u length %u", first + held, r.seq,
			       r.status, r.length);
			return -1;
		}
		/* Held in place: the ring's size keeps a record from wrapping. */
		cxlccm_ring_payload(&t->ring, r.payload_index, r.length, piece, piece_len);
		if (piece_len[0] != r.length || cxlccm_ring_crc32c(piece, piece_len) != r.checksum) {
			TH_LOG("record %u: wraps or checksum mismatch", r.seq);
			return -1;
		}
		memcpy((__u8 *)out + r.result_offset, piece[0], r.length);
		e[held].payload_index = r.payload_index;
		e[held].length = r.length;
		if (++held == s->heads) {
			struct cxl_ccm_release rel = {
				.entries = (__u64)(unsigned long)e, .count = held,
				.flags = CXL_CCM_RELEASE_METADATA | CXL_CCM_RELEASE_PUBLISH,
				.metadata_head = first + held,
			};

			if (ioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel)) {
				TH_LOG("RELEASE: %s", strerror(errno));
				return -1;
			}
			first += held;
			done += held;
			held = 0;
		}
	}
	t->head = first;
	return done;
}

TEST_F_TIMEOUT(attn, block_fits, 60)
{
	/* 8 heads x 8 slots = 64 of the 128 payload slots. */
	const struct shape s = { .tokens = 24, .q_first = 8, .q_rows = 16, .heads = 8, .shift = 6 };
	static __s32 out[8 * 16 * DIM];

	fill(&s, self->t.ring.in, 11);
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s)));
	ASSERT_EQ(32, hold_blocks(_metadata, &self->t, &s, out));
	check_all(_metadata, &s, self->t.ring.in, out);
}

TEST_F_TIMEOUT(attn, deadlock_detected, 60)
{
	/* 20 heads x 8 slots = 160 slots: one block does not fit the 128-slot ring. */
	const struct shape s = { .tokens = 12, .q_first = 4, .q_rows = 8, .heads = 20, .shift = 6 };
	static __s32 out[20 * 8 * DIM];
	__u32 status = 1;

	ASSERT_LE(in_bytes(&s), self->t.cfg.input_size);
	fill(&s, self->t.ring.in, 13);
	memset(out, 0x5a, sizeof(out));
	ASSERT_EQ(0, launch_attn(self->t.fd, &s, ROWS, DIM, in_bytes(&s)));
	ASSERT_EQ(-EDEADLK, hold_blocks(_metadata, &self->t, &s, out));
	/*
	 * The host gives up on zero copy: ktenant_collect copies each record out
	 * and releases it. The held records come first again (from the unchanged
	 * head), then the rest; nothing is lost.
	 */
	ASSERT_EQ(40, ktenant_collect(_metadata, &self->t, out, sizeof(out), &status));
	EXPECT_EQ(0U, status);
	check_all(_metadata, &s, self->t.ring.in, out);
}

TEST_HARNESS_MAIN
