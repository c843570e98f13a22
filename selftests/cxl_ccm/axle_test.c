// SPDX-License-Identifier: GPL-2.0
/*
 * The cxl_ccm AXLE data plane against the memory-correctness problems the
 * AXLE paper names (§IV-C), each test built so that the violation would make
 * it fail:
 *
 * - reordering: every record's payload is checked (CRC32C and exact data)
 *   right after the metadata tail covering it is seen, and the payload tail
 *   must already cover it; a payload made visible after its record fails;
 * - visibility/overflow: with two-slot rings and a slow consumer, neither
 *   tail ever gets a capacity ahead of what was released, an unreleased
 *   payload stays unchanged while the device waits, and STATS counts the
 *   credit stalls that prove back-pressure happened;
 * - partial writes: every payload is checked against its checksum and its
 *   sequence number, across multi-slot payloads wrapping the ring end, and
 *   the checker is shown to refuse a copy with one flipped byte;
 * - staleness: 4-slot rings wrap over a thousand times, with counters
 *   starting just below 2^32, and every value read is this launch's value;
 * - out-of-order consumption: 100000 results released in random order and
 *   random-size groups (the gap-aware head), all verified;
 *
 * and the rest of the contract: in-order streaming, empty and malformed
 * inputs, four tenants at once without cross-talk, WAIT, poll(), STATS, the
 * CONFIGURE defaults, the drain rule, and two streaming factors (with their
 * throughput printed as figures, not asserted).
 *
 * All checks on records live in axle_lib.h (axle_check_record()).
 */
#include <poll.h>
#include <sys/wait.h>

#include "axle_lib.h"

/* Sizes, to tune the runtime under TCG. */
#define REORDER_LAUNCHES	128
#define PARTIAL_LAUNCHES	64
#define STALE_LAUNCHES		32	/* of 4 KiB in 32 B chunks: 4096 records */
#define OOO_RECORDS		100000U
#define OOO_LAUNCH_BYTES	65536
#define SF_LAUNCHES		16	/* of 8 KiB in 32 B chunks: 4096 records */
#define MT_TENANTS		4
#define MT_LAUNCHES		24

#define MS			1000000ULL

FIXTURE(stream) {
	struct axle_tenant t;
	struct axle_run r;
};

FIXTURE_SETUP(stream)
{
	self->t.fd = -1;
	axle_open_or_skip(_metadata, &self->t, AXLE_NODE0);
}

FIXTURE_TEARDOWN(stream)
{
	axle_run_free(&self->r);
	axle_close(&self->t);
}

/* The checker's CRC32C is the ABI's, including over a ring wrap. */
TEST(crc32c_reference)
{
	struct axle_rng g = { 0x1234 };
	__u8 buf[1000];
	unsigned int i, len, cut;

	ASSERT_EQ(0xe3069283U, axle_crc32c("123456789", 9));
	ASSERT_EQ(0xe3069283U, cxl_ccm_crc32c("123456789", 9));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = axle_rand32(&g);
	for (len = 0; len < sizeof(buf); len += 37) {
		cut = len / 3;
		ASSERT_EQ(cxl_ccm_crc32c(buf, len), axle_crc32c(buf, len));
		ASSERT_EQ(axle_crc32c(buf, len),
			  ~axle_crc32c_update(axle_crc32c_update(~0U, buf, cut),
					      buf + cut, len - cut));
	}
	/* Two launches never have the same input word at the same place. */
	for (i = 0; i < 4096; i++)
		ASSERT_NE(axle_pattern(i, i % 64), axle_pattern(i + 1, i % 64));
}

/*
 * CONFIGURE's defaults and outputs: slot_size 0 is 32 bytes, a streaming
 * factor of 0 is one slot (so chunk_size 0 is 32 bytes), a 4 KiB headers
 * page, page-rounded ring lengths, tails starting at index_base.
 */
TEST_F(stream, configure_defaults)
{
	struct cxl_ccm_configure cfg = axle_config(16, 16, 0, 0, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0x12345678, 4096);
	struct axle_launch *l;
	unsigned int n;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	EXPECT_EQ(4096U, self->t.cfg.headers_size);
	EXPECT_EQ(4096U, self->t.cfg.metadata_ring_size);
	EXPECT_EQ(4096U, self->t.cfg.payload_ring_size);
	ASSERT_EQ(32U, self->t.ring.hdr->payload.slot_size);
	EXPECT_EQ(0x12345678U, self->t.ring.hdr->launch.head);

	axle_run_init(_metadata, &self->r, &self->t, 1024, axle_seed(_metadata));
	n = axle_launch(_metadata, &self->r, CXL_CCM_XFORM_OP_XOR, 0x0badf00d, 256, 0);
	l = &self->r.l[n];
	ASSERT_EQ(32U, l->chunk);
	ASSERT_EQ(8U, l->nchunks);
	axle_drain(_metadata, &self->r);
	axle_check_stats(_metadata, &self->r);
	/* The device took the launch packet. */
	EXPECT_EQ(0x12345678U + 1,
		  __atomic_load_n(&self->t.ring.hdr->launch.head, __ATOMIC_ACQUIRE));
}

/*
 * Reordering: many launches of random size, operation and chunk size; every
 * record is checked (seq, payload tail, CRC32C, exact data) as soon as the
 * metadata tail covering it is seen. A device that wrote a record or a tail
 * before its payload would be caught by the payload check or the payload
 * tail check.
 */
TEST_F_TIMEOUT(stream, reordering, 90)
{
	struct cxl_ccm_configure cfg = axle_config(64, 128, 32, 256, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 65536);
	struct axle_run *r = &self->r;
	unsigned int i;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 2048, axle_seed(_metadata));
	for (i = 0; i < REORDER_LAUNCHES; i++) {
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
			    4 * (1 + axle_below(&r->rng, 512)), axle_random_chunk(r));
		axle_step(_metadata, r);
	}
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ksft_print_msg("reordering: %u launches, %llu records checked at the tail\n",
		       r->nl, (unsigned long long)r->records);
}

/*
 * Visibility and overflow: two-slot rings, one-slot streaming factor. First
 * nobody consumes: the device must stop with both tails at most a capacity
 * ahead (and lose nothing: all is delivered later). Then a slow consumer
 * holds one payload back for a while: the device must wait rather than reuse
 * its slot, so the payload reads the same after the delay. Back-pressure
 * shows in STATS.credit_stalls.
 */
TEST_F_TIMEOUT(stream, overflow_credit, 90)
{
	struct cxl_ccm_configure cfg = axle_config(2, 2, 32, 32, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffffff0, 4096);
	struct axle_run *r = &self->r;
	bool held = false, held_released = false;
	struct axle_pending hold = { 0 };
	struct cxl_ccm_stats s;
	__u64 t0, hold_since = 0;
	__u32 base = cfg.index_base;
	const char *why;
	unsigned int i, n;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 512, axle_seed(_metadata));
	for (i = 0; i < 4; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, axle_rand32(&r->rng), 512, 32);

	/* Nobody consumes: the device fills the rings and stops there. */
	t0 = axle_now_ns();
	while (cxlccm_ring_md_tail(&self->t.ring) == base && axle_now_ns() - t0 < 5000 * MS)
		axle_sleep_ns(MS);
	ASSERT_NE(base, cxlccm_ring_md_tail(&self->t.ring)) TH_LOG("nothing streamed in 5 s");
	axle_sleep_ns(200 * MS);
	ASSERT_LE(cxlccm_ring_md_tail(&self->t.ring) - base, 2U);
	ASSERT_LE(cxlccm_ring_pl_tail(&self->t.ring) - base, 2U);

	/* A slow consumer that holds one payload for 100 ms. */
	while (r->done < r->nl) {
		n = axle_poll(_metadata, r);
		if (!held && r->npend && r->records >= 4) {
			hold = axle_take_pending(r, 0);
			held = true;
			hold_since = axle_now_ns();
		}
		while (r->npend) {
			axle_release(_metadata, r, &r->pend[r->npend - 1], 1);
			r->npend--;
			usleep(1000);
		}
		if (r->md_released != r->head)
			axle_release(_metadata, r, NULL, 0);
		if (held && !held_released && axle_now_ns() - hold_since > 100 * MS) {
			ASSERT_LE(cxlccm_ring_pl_tail(&self->t.ring) - hold.payload_index, 2U)
				TH_LOG("the device wrote a capacity past an unreleased slot");
			why = axle_recheck(r, &hold);
			AXLE_ASSERT_OK(why, "held payload at %u", hold.payload_index);
			axle_release(_metadata, r, &hold, 1);
			held_released = true;
		}
		if (n)
			r->last_progress = axle_now_ns();
		else
			axle_idle(_metadata, r);
	}
	ASSERT_TRUE(held);
	if (!held_released) {
		why = axle_recheck(r, &hold);
		AXLE_ASSERT_OK(why, "held payload at %u", hold.payload_index);
		axle_release(_metadata, r, &hold, 1);
	}
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_LT(0U, s.credit_stalls) TH_LOG("no back-pressure with two-slot rings?");
	ksft_print_msg("overflow: %llu records, %llu credit stalls, %llu DMA batches\n",
		       (unsigned long long)r->records, (unsigned long long)s.credit_stalls,
		       (unsigned long long)s.dma_batches);
}

/*
 * Partial writes: payloads of 1 to 4 slots (and sub-slot lengths) in an
 * 8-slot payload ring, so many wrap the ring end; each is checked against
 * its checksum, its seq and the exact data. First, the checker itself is
 * shown to refuse a real record's copy with one flipped byte (with and
 * without a checksum matching the flip), a wrong seq, a short length and a
 * payload tail that does not cover it.
 */
TEST_F_TIMEOUT(stream, partial_writes, 90)
{
	static const __u32 chunks[] = { 4, 28, 32, 36, 64, 96, 100, 128, 0 };
	struct cxl_ccm_configure cfg = axle_config(16, 8, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xffffff00, 65536);
	struct cxl_ccm_metadata_record rec, bad;
	struct axle_run *r = &self->r;
	__u8 copy[128];
	__u32 ptail;
	__u64 t0;
	unsigned int i;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 2048, axle_seed(_metadata));

	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0xa5a5a5a5, 256, 96);
	t0 = axle_now_ns();
	while (cxlccm_ring_md_tail(&self->t.ring) == r->head && axle_now_ns() - t0 < 5000 * MS)
		axle_sleep_ns(MS);
	ASSERT_NE(r->head, cxlccm_ring_md_tail(&self->t.ring));
	ptail = cxlccm_ring_pl_tail(&self->t.ring);
	cxlccm_ring_record(&self->t.ring, r->head, &rec);
	ASSERT_LT(0U, rec.length);
	ASSERT_GE(sizeof(copy), rec.length);
	cxlccm_ring_copy(&self->t.ring, rec.payload_index, rec.length, copy);
	AXLE_ASSERT_OK(axle_check_record(r, r->head, &rec, copy, ptail), "first record");

	copy[rec.length / 2] ^= 0x10;
	ASSERT_TRUE(axle_check_record(r, r->head, &rec, copy, ptail) != NULL)
		TH_LOG("a payload with a flipped byte passed");
	bad = rec;
	bad.checksum = axle_crc32c(copy, rec.length);
	ASSERT_TRUE(axle_check_record(r, r->head, &bad, copy, ptail) != NULL)
		TH_LOG("a flipped byte with a matching checksum passed");
	copy[rec.length / 2] ^= 0x10;
	bad = rec;
	bad.seq++;
	ASSERT_TRUE(axle_check_record(r, r->head, &bad, copy, ptail) != NULL)
		TH_LOG("a wrong seq passed");
	bad = rec;
	bad.length -= 4;
	ASSERT_TRUE(axle_check_record(r, r->head, &bad, copy, ptail) != NULL)
		TH_LOG("a short record passed");
	ASSERT_TRUE(axle_check_record(r, r->head, &rec, copy, rec.payload_index) != NULL)
		TH_LOG("a payload beyond the payload tail passed");
	AXLE_ASSERT_OK(axle_check_record(r, r->head, &rec, copy, ptail), "restored copy");

	for (i = 0; i < PARTIAL_LAUNCHES; i++) {
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
			    4 * (1 + axle_below(&r->rng, 512)),
			    chunks[axle_below(&r->rng, sizeof(chunks) / sizeof(chunks[0]))]);
		axle_step(_metadata, r);
	}
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ksft_print_msg("partial writes: %llu records, payload ring wrapped %u times\n",
		       (unsigned long long)r->records,
		       (r->pl_next - r->base) / self->t.ring.pl_slots);
}

/*
 * Staleness: 4-slot rings wrap at least a thousand times each, with every
 * counter starting 16 below 2^32 (tags, seq and payload indexes all wrap).
 * Each launch's input differs, so a slot read with a value of an earlier lap
 * (a stale cache line, a lost DMA write) fails the exact-data check, and a
 * stale record fails the seq check.
 */
TEST_F_TIMEOUT(stream, staleness, 120)
{
	struct cxl_ccm_configure cfg = axle_config(4, 4, 32, 64, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffffff0, 131072);
	struct axle_run *r = &self->r;
	unsigned int i;
	__u64 t0;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 4096, axle_seed(_metadata));
	t0 = axle_now_ns();
	for (i = 0; i < STALE_LAUNCHES; i++)
		axle_launch(_metadata, r, i % 2 ? CXL_CCM_XFORM_OP_ADD : CXL_CCM_XFORM_OP_XOR,
			    axle_rand32(&r->rng), 4096, 32);
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ASSERT_LE(1000 * self->t.ring.md_slots, r->records);
	ASSERT_LE(1000 * self->t.ring.pl_slots, r->pl_next - r->base);
	ASSERT_LT(r->base + r->nl, r->base) TH_LOG("the tags did not wrap");
	ASSERT_LT(r->head, r->base) TH_LOG("the metadata index did not wrap");
	ksft_print_msg("staleness: %llu records over 4-slot rings (%llu laps) in %llu ms\n",
		       (unsigned long long)r->records,
		       (unsigned long long)r->records / self->t.ring.md_slots,
		       (unsigned long long)(axle_now_ns() - t0) / MS);
}

/*
 * Out-of-order consumption: at least 100000 results, consumed in random
 * order and released in random-size groups (some held across polls), all
 * verified; STATS.records matches what was consumed.
 */
TEST_F_TIMEOUT(stream, out_of_order_consumption, 180)
{
	struct cxl_ccm_configure cfg = axle_config(4096, 8192, 32, 2048,
						   CXL_CCM_ORDER_OUT_OF_ORDER, 0xffffff00,
						   1 << 20);
	unsigned int i, n = AXLE_DIV_ROUND_UP(OOO_RECORDS, OOO_LAUNCH_BYTES / 32);
	struct axle_run *r = &self->r;
	__u64 t0, ns;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, OOO_LAUNCH_BYTES, axle_seed(_metadata));
	r->random_release = true;
	r->max_group = 512;
	t0 = axle_now_ns();
	for (i = 0; i < n; i++)
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
			    OOO_LAUNCH_BYTES, 32);
	axle_drain(_metadata, r);
	ns = axle_now_ns() - t0;
	ASSERT_LE(OOO_RECORDS, r->records);
	axle_check_stats(_metadata, r);
	ksft_print_msg("out of order: %llu results in %llu ms (%.0f results/s), %llu RELEASE calls\n",
		       (unsigned long long)r->records, (unsigned long long)ns / MS,
		       r->records * 1e9 / (ns ? ns : 1), (unsigned long long)r->release_calls);
}

/*
 * In-order streaming: long launches alternate with short ones (which a
 * round-robin engine finishes first); the records must still come launch by
 * launch in tag order, each launch's chunks in result_offset order, FINAL on
 * the last chunk.
 */
TEST_F_TIMEOUT(stream, in_order_streaming, 90)
{
	struct cxl_ccm_configure cfg = axle_config(64, 256, 32, 256, CXL_CCM_ORDER_IN_ORDER,
						   0x7ffffff0, 262144);
	struct axle_run *r = &self->r;
	unsigned int i;

	if (!(self->t.info.caps & CXL_CCM_CAP_IN_ORDER))
		SKIP(return, "the device does not advertise CXL_CCM_CAP_IN_ORDER");
	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 16384, axle_seed(_metadata));
	ASSERT_TRUE(r->in_order);
	for (i = 0; i < 12; i++) {
		if (i % 3 == 0)
			axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, axle_rand32(&r->rng),
				    16384, 32);
		else if (i == 4)
			axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 0, 0);
		else
			axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
				    4 * (1 + axle_below(&r->rng, 64)), axle_random_chunk(r));
	}
	axle_drain(_metadata, r);
	ASSERT_EQ(r->nl, r->stream_pos);
	axle_check_stats(_metadata, r);
}

/* An empty input gives one FINAL record of length 0 (between normal launches). */
TEST_F(stream, empty_input)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffffffe, 16384);
	struct axle_run *r = &self->r;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 0, 0);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0x12345678, 512, 64);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 1, 0, 32);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 1, 4, 4);
	axle_drain(_metadata, r);
	EXPECT_EQ(2U + 8 + 1, r->records);
	axle_check_stats(_metadata, r);
}

/*
 * An input size that is not a multiple of 4 is accepted by LAUNCH and
 * reported by one FINAL|ERROR record with STATUS_BAD_ARGS and length 0; the
 * launches around it are unaffected.
 */
TEST_F(stream, bad_size_input)
{
	static const __u32 sizes[] = { 1, 2, 3, 5, 6, 1023 };
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffffffa, 16384);
	struct axle_run *r = &self->r;
	unsigned int i;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 7, sizes[i], 0);
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 9, 256, 128);
		ASSERT_TRUE(r->l[r->nl - 2].expect_error);
	}
	axle_drain(_metadata, r);
	EXPECT_EQ(6U * (1 + 2), r->records);
	axle_check_stats(_metadata, r);
}

/*
 * Four tenants of /dev/cxl_ccm0 in four processes, started together, with
 * the same index_base (so their tags collide) but their own operations,
 * operands and inputs: each sees only its own records (a foreign record
 * would fail the tag or the exact-data check), its own STATS, and the tenant
 * numbers differ.
 */
TEST_F_TIMEOUT(stream, multi_tenant_isolation, 120)
{
	struct shared {
		__u32 tenant[MT_TENANTS];
		__u64 records[MT_TENANTS];
	} *sh;
	int ready[2], go[2], status, c, j;
	pid_t pid[MT_TENANTS];
	__u64 seed = axle_seed(_metadata);
	char b;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	for (c = 0; c < MT_TENANTS; c++) {
		pid[c] = fork();
		ASSERT_LE(0, pid[c]);
		if (!pid[c]) {
			struct cxl_ccm_configure cfg =
				axle_config(64, 128, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
					    0xfffffff8, 65536);
			struct axle_tenant t;
			struct axle_run r;
			unsigned int i;

			close(ready[0]);
			close(go[1]);
			ASSERT_EQ(0, axle_open(&t, AXLE_NODE0));
			axle_tenant_setup(_metadata, &t, &cfg);
			sh->tenant[c] = t.cfg.tenant;
			axle_run_init(_metadata, &r, &t, 2048, seed + 0x9e3779b97f4a7c15ULL * (c + 1));
			ASSERT_EQ(1, write(ready[1], "x", 1));
			ASSERT_EQ(0, read(go[0], &b, 1));
			for (i = 0; i < MT_LAUNCHES; i++) {
				axle_launch(_metadata, &r,
					    c % 2 ? CXL_CCM_XFORM_OP_ADD : CXL_CCM_XFORM_OP_XOR,
					    0x01010101U * (c + 1), 4 * (1 + axle_below(&r.rng, 512)),
					    axle_random_chunk(&r));
				axle_step(_metadata, &r);
			}
			axle_drain(_metadata, &r);
			axle_check_stats(_metadata, &r);
			sh->records[c] = r.records;
			axle_run_free(&r);
			axle_close(&t);
			_exit(_metadata->exit_code == KSFT_PASS ? 0 : 1);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (c = 0; c < MT_TENANTS; c++)
		ASSERT_EQ(1, read(ready[0], &b, 1)) TH_LOG("a tenant failed to start");
	close(go[1]);	/* start them all */
	for (c = 0; c < MT_TENANTS; c++) {
		ASSERT_EQ(pid[c], waitpid(pid[c], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("tenant process %d failed (status %#x)", c, status);
	}
	for (c = 0; c < MT_TENANTS; c++) {
		ksft_print_msg("tenant %u: %llu records\n", sh->tenant[c],
			       (unsigned long long)sh->records[c]);
		for (j = 0; j < c; j++)
			EXPECT_NE(sh->tenant[j], sh->tenant[c]);
	}
	close(ready[0]);
	munmap(sh, sizeof(*sh));
}

struct waiter {
	int launched;
	int ret;
	int err;
	__u32 ready;
	__u32 tail;
	short revents;
};

/*
 * WAIT: EAGAIN when nothing is ready and the timeout is 0, ETIMEDOUT after
 * the time limit (with ready and metadata_tail written), 0 once min_records
 * are ready counted from the caller's head; a waiter blocked before the
 * records exist is woken when they come.
 */
TEST_F(stream, wait_ioctl)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffffffd, 16384);
	struct axle_run *r = &self->r;
	__u32 base = cfg.index_base;
	struct cxl_ccm_wait w;
	struct waiter *sh;
	int fd, status;
	__u64 t0;
	pid_t pid;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	fd = self->t.fd;

	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 1, base, 0));
	EXPECT_EQ(EAGAIN, errno);
	t0 = axle_now_ns();
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 1, base, 20 * MS));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(20 * MS, axle_now_ns() - t0);
	EXPECT_EQ(0U, w.ready);
	EXPECT_EQ(base, w.metadata_tail);

	/* A waiter blocked before anything is launched. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cxl_ccm_wait cw;

		alarm(30);	/* never outlive the test */
		sh->ret = axle_ioc_wait(fd, &cw, 1, base, CXL_CCM_WAIT_FOREVER);
		sh->err = errno;
		sh->ready = cw.ready;
		sh->tail = cw.metadata_tail;
		_exit(!__atomic_load_n(&sh->launched, __ATOMIC_ACQUIRE));
	}
	axle_sleep_ns(100 * MS);
	__atomic_store_n(&sh->launched, 1, __ATOMIC_RELEASE);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0x5a5a5a5a, 128, 32);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the waiter returned before the launch");
	EXPECT_EQ(0, sh->ret) TH_LOG("WAIT: %s", strerror(sh->err));
	EXPECT_LE(1U, sh->ready);
	EXPECT_EQ(sh->ready, sh->tail - base);
	munmap(sh, sizeof(*sh));

	/* All four records. */
	ASSERT_EQ(0, axle_ioc_wait(fd, &w, 4, base, 5000 * MS)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(4U, w.ready);
	EXPECT_EQ(base + 4, w.metadata_tail);
	EXPECT_EQ(base + 4, cxlccm_ring_md_tail(&self->t.ring));
	ASSERT_EQ(0, axle_ioc_wait(fd, &w, 4, base, CXL_CCM_WAIT_FOREVER));
	EXPECT_EQ(4U, w.ready);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 5, base, 20 * MS));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_EQ(4U, w.ready);
	EXPECT_EQ(base + 4, w.metadata_tail);
	/* Counted from the caller's head. */
	ASSERT_EQ(0, axle_ioc_wait(fd, &w, 1, base + 3, 0));
	EXPECT_EQ(1U, w.ready);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 2, base + 3, 0));
	EXPECT_EQ(EAGAIN, errno);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 1, base + 4, 0));
	EXPECT_EQ(EAGAIN, errno);

	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
}

/*
 * poll(): no POLLIN while nothing is ready; a poller blocked before the
 * launch wakes with POLLIN; POLLIN stays while records lie beyond the
 * metadata head last released (copying them or releasing their payloads
 * alone does not clear it), and goes once RELEASE_METADATA passes them.
 */
TEST_F(stream, poll_pollin)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 16384);
	struct axle_run *r = &self->r;
	struct pollfd pfd;
	struct waiter *sh;
	unsigned int i;
	int status;
	pid_t pid;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	pfd.fd = self->t.fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ASSERT_EQ(0, poll(&pfd, 1, 0));

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct pollfd cp = pfd;

		alarm(30);	/* never outlive the test */
		sh->ret = poll(&cp, 1, 10000);
		sh->err = errno;
		sh->revents = cp.revents;
		_exit(!__atomic_load_n(&sh->launched, __ATOMIC_ACQUIRE));
	}
	axle_sleep_ns(100 * MS);
	__atomic_store_n(&sh->launched, 1, __ATOMIC_RELEASE);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 128, 32);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the poller returned before the launch");
	EXPECT_EQ(1, sh->ret) TH_LOG("poll: %d (%s)", sh->ret, strerror(sh->err));
	EXPECT_TRUE(sh->revents & POLLIN);
	munmap(sh, sizeof(*sh));

	/* Copied but not released: still ready. */
	while (r->done < r->nl)
		if (!axle_poll(_metadata, r))
			axle_idle(_metadata, r);
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_TRUE(pfd.revents & POLLIN);

	/* Payloads released without the metadata head: still ready. */
	for (i = 0; i < r->npend; i++) {
		r->ebuf[i].payload_index = r->pend[i].payload_index;
		r->ebuf[i].length = r->pend[i].length;
	}
	ASSERT_EQ(0, axle_ioc_release(self->t.fd, r->ebuf, r->npend,
				      CXL_CCM_RELEASE_PUBLISH, 0, NULL));
	for (i = 0; i < r->npend; i++)
		axle_gap_release(_metadata, r, r->pend[i].payload_index, r->pend[i].length);
	r->npend = 0;
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_TRUE(pfd.revents & POLLIN);

	/* The metadata head passes them: nothing ready. */
	axle_release(_metadata, r, NULL, 0);
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	/* And again with a blocking poll. */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 3, 64, 32);
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	axle_drain(_metadata, r);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	axle_check_stats(_metadata, r);
}

/*
 * STATS: the counters of this tenant; CXL_CCM_STATS_RESET returns them and
 * then zeroes them.
 */
TEST_F(stream, stats_reset)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xffffffff, 16384);
	struct axle_run *r = &self->r;
	struct cxl_ccm_stats s;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 1, 256, 64);
	axle_drain(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, CXL_CCM_STATS_RESET));
	EXPECT_EQ(self->t.cfg.tenant, s.tenant);
	EXPECT_EQ(1U, s.launched);
	EXPECT_EQ(4U, s.records);
	EXPECT_EQ(256U, s.payload_bytes);
	EXPECT_LT(0U, s.dma_batches);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(self->t.cfg.tenant, s.tenant);
	EXPECT_EQ(0U, s.launched);
	EXPECT_EQ(0U, s.records);
	EXPECT_EQ(0U, s.payload_bytes);
	EXPECT_EQ(0U, s.dma_batches);

	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 1, 128, 32);
	axle_drain(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(1U, s.launched);
	EXPECT_EQ(4U, s.records);
	EXPECT_EQ(128U, s.payload_bytes);
}

/*
 * /sys/kernel/debug/cxl_ccm0/stats shows the device's per-tenant counters: a
 * tenant's line appears once it is configured and counts its records.
 */
TEST_F(stream, debugfs_stats)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   7, 16384);
	unsigned int tenant, status, error, found = 0;
	unsigned long long launches, records, bytes;
	struct axle_run *r = &self->r;
	char line[256];
	FILE *f;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 3, 512, 64);
	axle_drain(_metadata, r);
	f = fopen("/sys/kernel/debug/cxl_ccm0/stats", "r");
	if (!f && errno == ENOENT)
		SKIP(return, "debugfs is not mounted");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_EQ(0, strncmp(line, "dev_status 0x1 ", 15)) TH_LOG("%s", line);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %x %u %llu %llu %llu", &tenant, &status, &error, &launches,
			   &records, &bytes) != 6 || tenant != self->t.cfg.tenant)
			continue;
		found = 1;
		EXPECT_EQ(1U, status) TH_LOG("%s", line);
		EXPECT_EQ(0U, error);
		EXPECT_EQ(1ULL, launches);
		EXPECT_EQ(8ULL, records);
		EXPECT_EQ(512ULL, bytes);
	}
	fclose(f);
	EXPECT_TRUE(found) TH_LOG("no line for tenant %u", self->t.cfg.tenant);
}

/*
 * The owner column (the last) of tenant @tenant's line in cxl_ccm0's stats
 * file: the pid that configured it, 0 if none; -1 if the tenant has no line,
 * -2 if debugfs is missing.
 */
static long debugfs_owner(unsigned int tenant)
{
	FILE *f = fopen("/sys/kernel/debug/cxl_ccm0/stats", "r");
	unsigned int t, status;
	char line[256], *last;
	long owner = -1;

	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %x", &t, &status) != 2 || t != tenant)
			continue;
		line[strcspn(line, "\n")] = 0;
		last = strrchr(line, ' ');
		owner = last ? strtol(last + 1, NULL, 10) : -1;
	}
	fclose(f);
	return owner;
}

/*
 * The stats file names each tenant's owner, the process that configured it:
 * this one for its own tenant, a forked child for the tenant the child
 * configured on its own file, and nobody once the child has exited and its
 * file is closed.
 */
TEST_F(stream, debugfs_owner)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   7, 16384);
	int up[2], down[2], status;
	unsigned int child_tenant;
	long owner;
	pid_t pid;
	char c;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	owner = debugfs_owner(self->t.cfg.tenant);
	if (owner == -2)
		SKIP(return, "debugfs is not mounted");
	EXPECT_EQ((long)getpid(), owner);

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct cxl_ccm_configure ccfg = cfg;
		int fd = open("/dev/cxl_ccm0", O_RDWR | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, CXL_CCM_IOC_CONFIGURE, &ccfg))
			_exit(2);
		if (write(up[1], &ccfg.tenant, sizeof(ccfg.tenant)) != sizeof(ccfg.tenant))
			_exit(3);
		/* Hold the tenant until the parent has looked. */
		_exit(read(down[0], &c, 1) == 1 ? 0 : 4);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(sizeof(child_tenant), read(up[0], &child_tenant, sizeof(child_tenant)))
		TH_LOG("the child could not configure a tenant");
	EXPECT_NE(self->t.cfg.tenant, child_tenant);
	EXPECT_EQ((long)pid, debugfs_owner(child_tenant));
	EXPECT_EQ((long)getpid(), debugfs_owner(self->t.cfg.tenant));
	ASSERT_EQ(1, write(down[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	/* The last close tears the tenant down; allow it a moment. */
	for (int i = 0; i < 200; i++) {
		owner = debugfs_owner(child_tenant);
		if (owner == -1 || owner == 0)
			break;
		usleep(10000);
	}
	EXPECT_TRUE(owner == -1 || owner == 0) TH_LOG("owner %ld after the child exited", owner);
	close(up[0]);
	close(down[1]);
}

/*
 * The drain rule: a consumer that releases everything it received but never
 * asks for CXL_CCM_RELEASE_PUBLISH still gets all its results through small
 * rings (the driver publishes the heads once they reach the tail).
 */
TEST_F_TIMEOUT(stream, credit_drains_without_publish, 60)
{
	struct cxl_ccm_configure cfg = axle_config(8, 8, 32, 64, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 16384);
	struct axle_run *r = &self->r;
	unsigned int i;

	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	r->publish = false;
	for (i = 0; i < 8; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, i, 1024, 32);
	axle_drain(_metadata, r);
	EXPECT_EQ(8U * 32, r->records);
	axle_check_stats(_metadata, r);
}

/* One run of SF_LAUNCHES 8 KiB launches in 32-byte chunks with streaming factor @sf. */
static void sf_run(struct __test_metadata *_metadata, struct axle_tenant *t,
		   struct axle_run *r, __u32 sf, __u64 seed)
{
	struct cxl_ccm_configure cfg = axle_config(256, 256, 32, sf, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0xfffff000, 131072);
	struct cxl_ccm_stats s;
	unsigned int i;
	__u64 t0, ns;

	axle_tenant_setup(_metadata, t, &cfg);
	axle_run_init(_metadata, r, t, 8192, seed);
	t0 = axle_now_ns();
	for (i = 0; i < SF_LAUNCHES; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, axle_rand32(&r->rng), 8192, 32);
	axle_drain(_metadata, r);
	ns = axle_now_ns() - t0;
	axle_check_stats(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(t->fd, &s, 0));
	ksft_print_msg("SF %u B (%u slots): %llu results in %llu ms: %.0f results/s, %llu DMA batches, %llu credit stalls\n",
		       sf, sf / 32, (unsigned long long)r->records,
		       (unsigned long long)ns / MS, r->records * 1e9 / (ns ? ns : 1),
		       (unsigned long long)s.dma_batches, (unsigned long long)s.credit_stalls);
}

/*
 * Streaming factor: SF = one slot and SF = 64 slots both deliver every result
 * intact; their throughput is printed (figures, not assertions).
 */
TEST_F_TIMEOUT(stream, streaming_factor, 120)
{
	__u64 seed = axle_seed(_metadata);
	struct axle_tenant t2;
	struct axle_run r2;

	sf_run(_metadata, &self->t, &self->r, 32, seed);
	ASSERT_EQ(0, axle_open(&t2, AXLE_NODE0));
	memset(&r2, 0, sizeof(r2));
	sf_run(_metadata, &t2, &r2, 64 * 32, seed);
	axle_run_free(&r2);
	axle_close(&t2);
}

TEST_HARNESS_MAIN
