/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LLM attention block of Table IV (h): OPT-2.7B's head dimension (80)
 * and a 1K-token context, with 4 of its 32 heads (the hidden size scaled from
 * 2560 to 320 so that a run takes seconds under emulation). Each launch is a
 * decoding step of --q-rows new tokens at the end of the context: the device
 * computes every head's causal attention over the 1024 cached keys and
 * values, block by block (chunk_rows query rows per record, one record per
 * head); the host's task for a block concatenates the heads and applies the
 * output projection (320 x 320). The task needs every head of its block, so
 * the host holds each record in the payload ring (zero copy) until its block
 * is whole, then releases the block.
 *
 * When the payload ring is smaller than one block's records (160 slots here:
 * the 12.5 % capacity of 128 slots), no block can complete and no slot is
 * freed: the deadlock of AXLE's Figure 16 (h). The run detects it with
 * CXL_CCM_WAIT_FLAG_DEADLOCK (the driver confirms that the producer waits for
 * credit under the heads the host released) and reports it as the run's
 * outcome instead of hanging; it is the expected outcome exactly when a block
 * does not fit.
 */
#ifndef CCM_BENCH_LLM_H
#define CCM_BENCH_LLM_H

#include "bench.h"
#include "../tools/lib/cxlccm/cxlccm_ring.h"

#define LLM_MAX_HEADS	8
#define LLM_MAX_DIM	128
#define LLM_MAX_ROWS	32	/* query rows per launch */
#define LLM_MAX_LAUNCHES 8
#define LLM_HIDDEN_MAX	(LLM_MAX_HEADS * LLM_MAX_DIM)

/* Element d of vector t of head h of Q (which 0), K (1) or V (2): small, so scores spread. */
static inline __s16 llm_elem(unsigned int which, unsigned int h, unsigned int t, unsigned int d)
{
	__u32 x = (which * 0x9e3779b9U) ^ (h * 0x85ebca6bU) ^ (t * 0xc2b2ae35U) ^ (d * 0x27d4eb2fU);

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (__s16)(x % 64) - 32;
}

/* Weight of the output projection: output p, input k (a concatenated head element). */
static inline __s32 llm_weight(unsigned int p, unsigned int k)
{
	return (__s32)((p * 131 + k * 71) % 17) - 8;
}

/* Position of launch l's first query row: the last launches * q_rows tokens of the context. */
static inline unsigned int llm_q_first(const struct opts *o, unsigned int l)
{
	return o->tokens - o->launches * o->q_rows + l * o->q_rows;
}

/* The CPU's attention of one query row (at position p) of head h: the device's integers. */
static void llm_ref_row(const struct opts *o, unsigned int h, unsigned int p, __s32 *out)
{
	__s64 max = INT64_MIN, total = 0, acc[LLM_MAX_DIM] = { 0 };
	__s16 q[LLM_MAX_DIM];
	unsigned int j, d;

	for (d = 0; d < o->head_dim; d++)
		q[d] = llm_elem(0, h, p, d);
	for (j = 0; j <= p; j++) {
		__s64 s = 0;

		for (d = 0; d < o->head_dim; d++)
			s += (__s64)q[d] * llm_elem(1, h, j, d);
		max = s > max ? s : max;
	}
	for (j = 0; j <= p; j++) {
		__s64 s = 0, w;

		for (d = 0; d < o->head_dim; d++)
			s += (__s64)q[d] * llm_elem(1, h, j, d);
		w = cxl_ccm_attention_weight((__u64)(max - s) >> o->shift);
		total += w;
		for (d = 0; w && d < o->head_dim; d++)
			acc[d] += w * llm_elem(2, h, j, d);
	}
	for (d = 0; d < o->head_dim; d++)
		out[d] = (__s32)(acc[d] / total);
}

/* The reference of every launch, head and row: computed once, every run checks against it. */
static const __s32 *llm_reference(const struct opts *o)
{
	static __s32 *ref;
	static unsigned int shape[5];
	unsigned int now[5] = { o->tokens, o->launches, o->q_rows, o->heads, o->head_dim };
	unsigned int l, h, r;

	if (ref && !memcmp(shape, now, sizeof(now)))
		return ref;
	free(ref);
	ref = malloc((__u64)o->launches * o->heads * o->q_rows * o->head_dim * 4);
	if (!ref)
		return NULL;
	memcpy(shape, now, sizeof(now));
	for (l = 0; l < o->launches; l++)
		for (h = 0; h < o->heads; h++)
			for (r = 0; r < o->q_rows; r++)
				llm_ref_row(o, h, llm_q_first(o, l) + r,
					    ref + (((__u64)l * o->heads + h) * o->q_rows + r) *
							  o->head_dim);
	return ref;
}

/* A record the host holds until its block is whole. */
struct llm_held {
	struct cxl_ccm_metadata_record r;
	unsigned int block, head;
};

static int bench_llm(const struct opts *o, const struct run *rc, struct result *res)
{
	const unsigned int H = o->heads, D = o->head_dim, R = o->chunk_rows;
	const unsigned int hidden = H * D, blocks = o->q_rows / R;
	const __u64 rec = (__u64)R * D * 4;
	const __u64 per_launch = (__u64)H * (o->q_rows + 2 * o->tokens) * D * 2;
	struct cxl_ccm_configure cfg;
	struct cxlccm_ring ring = { 0 };
	__u8 *in;
	struct llm_held held[2 * LLM_MAX_HEADS * LLM_MAX_ROWS];
	unsigned int nheld = 0, launched = 0, finals = 0, i;
	static __s32 att[LLM_MAX_LAUNCHES][LLM_MAX_HEADS][LLM_MAX_ROWS][LLM_MAX_DIM];
	static __s64 proj[LLM_MAX_LAUNCHES][LLM_MAX_ROWS][LLM_HIDDEN_MAX];
	__u64 t0, busy = 0, in_launch = 0, polling = 0, empty_since = 0, last_progress;
	const __s32 *ref = llm_reference(o);
	struct cxl_ccm_stats st;
	__u32 head, base;
	int fd, ret = -1, err;

	memset(res, 0, sizeof(*res));
	res->verified = true;
	if (!ref)
		return fail(res, "out of memory", 0, 0);
	if (H > LLM_MAX_HEADS || D > LLM_MAX_DIM || o->q_rows > LLM_MAX_ROWS || !R ||
	    o->q_rows % R || o->launches > LLM_MAX_LAUNCHES ||
	    o->launches * o->q_rows > o->tokens)
		return fail(res, "bad LLM shape (%llu heads, dim %llu)", H, D);
	fd = open(o->node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(res, "open: errno %llu", errno, 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = rc->mode;
	cfg.slot_size = 32;
	cfg.metadata_slots = rc->md_slots;
	cfg.payload_slots = rc->pl_slots;
	cfg.streaming_factor = rec;
	cfg.streaming_order = rc->order;
	cfg.flags = rc->flags;
	cfg.poll_interval_ns = rc->poll_ns;
	cfg.input_size = (per_launch + 4095) & ~4095ULL;
	if (ioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg)) {
		fail(res, "CONFIGURE: errno %llu", errno, 0);
		goto out;
	}
	err = cxlccm_ring_map(&ring, fd, &cfg);
	if (err) {
		fail(res, "mmap: errno %llu", -err, 0);
		goto out;
	}
	in = ring.in;
	/* The key-value cache: every head's 1K keys and values, after the query rows. */
	{
		__s16 *kv = (__s16 *)in + (__u64)H * o->q_rows * D;
		unsigned int w, h, t, d;

		for (w = 1; w <= 2; w++)
			for (h = 0; h < H; h++)
				for (t = 0; t < o->tokens; t++)
					for (d = 0; d < D; d++)
						*kv++ = llm_elem(w, h, t, d);
	}
	base = head = cfg.index_base;

	t0 = last_progress = now_ns();
	while (finals < o->launches) {
		__u32 tail;

		/* One decoding step at a time: the next launch's queries follow this one's. */
		if (launched == finals && launched < o->launches) {
			struct cxl_ccm_attention_args a = {
				.tokens = o->tokens, .q_first = llm_q_first(o, launched),
				.q_rows = o->q_rows, .heads = H, .head_dim = D, .chunk_rows = R,
				.shift = o->shift,
			};
			struct cxl_ccm_launch l = {
				.kernel_id = CXL_CCM_KERNEL_LLM_ATTENTION, .input_size = per_launch,
				.arg_size = 32,
			};
			__s16 *q = (__s16 *)in;
			unsigned int h, r, d;
			__u64 t;

			for (h = 0; h < H; h++)
				for (r = 0; r < o->q_rows; r++)
					for (d = 0; d < D; d++)
						*q++ = llm_elem(0, h, a.q_first + r, d);
			memcpy(l.args, &a, sizeof(a));
			t = now_ns();
			if (ioctl(fd, CXL_CCM_IOC_LAUNCH, &l)) {
				fail(res, "LAUNCH: errno %llu", errno, 0);
				goto out;
			}
			in_launch += now_ns() - t;
			launched++;
		}
		tail = cxlccm_ring_md_tail(&ring);
		if (tail == head) {
			/*
			 * Nothing new. Interrupt mode sleeps in WAIT; the polled modes spin
			 * at their interval and, after 200 µs without a record, ask the
			 * driver whether anything can still come.
			 */
			bool irq = rc->mode == CXL_CCM_MODE_AXLE_IRQ;

			if (!empty_since)
				empty_since = now_ns();
			struct cxl_ccm_wait w = {
				.min_records = 1, .metadata_head = head,
				.timeout_ns = irq ? 10000000000ULL : 0,
				.flags = CXL_CCM_WAIT_FLAG_DEADLOCK,
			};

			if (!irq)
				poll_pause(o, rc->poll_ns);
			if (irq || now_ns() - last_progress > 200000) {
				if (!ioctl(fd, CXL_CCM_IOC_WAIT, &w) || errno == EAGAIN) {
					last_progress = irq ? now_ns() : last_progress;
				} else if (errno == EDEADLK) {
					__u32 need = H * (rec / ring.slot_size);

					res->deadlock = true;
					res->verified = need > cfg.payload_slots;
					snprintf(res->why, sizeof(res->why),
						 "deadlock detected: %u records held for incomplete "
						 "blocks; a block needs %u of the %u payload slots",
						 nheld, need, cfg.payload_slots);
					break;
				} else {
					fail(res, "WAIT: errno %llu", errno, 0);
					goto out;
				}
			}
			if (now_ns() - t0 > 120000000000ULL) {
				fail(res, "no progress: %llu of %llu launches final", finals,
				     o->launches);
				goto out;
			}
			continue;
		}
		last_progress = now_ns();
		/* From the first empty poll to now the core polled; asleep in WAIT it did not. */
		if (empty_since && rc->mode != CXL_CCM_MODE_AXLE_IRQ)
			polling += last_progress - empty_since;
		empty_since = 0;
		for (; head != tail; head++) {
			struct cxl_ccm_metadata_record r;
			bool fresh = cxlccm_ring_record(&ring, head, &r);
			__u64 t = now_ns();
			unsigned int l = r.tag - base, idx, n = 0;
			const void *pc[2];
			size_t pn[2];

			if (!fresh || (r.flags & CXL_CCM_MD_FLAG_ERROR) || r.length != rec ||
			    l >= launched || r.result_offset % rec) {
				fail(res, "record %llu: bad (status %llu)", head, r.status);
				goto out;
			}
			cxlccm_ring_payload(&ring, r.payload_index, r.length, pc, pn);
			if (cxlccm_ring_crc32c(pc, pn) != r.checksum) {
				fail(res, "checksum mismatch, record %llu tag %llu", head, r.tag);
				goto out;
			}
			idx = r.result_offset / rec;
			if (nheld == sizeof(held) / sizeof(held[0]) || idx >= blocks * H) {
				fail(res, "record %llu: chunk %llu out of range", head, idx);
				goto out;
			}
			held[nheld++] = (struct llm_held){ r, l * blocks + idx / H, idx % H };
			res->records++;
			res->bytes += r.length;
			finals += !!(r.flags & CXL_CCM_MD_FLAG_FINAL);
			/* The host task of a whole block: concatenate the heads, project. */
			for (i = 0; i < nheld; i++)
				n += held[i].block == held[nheld - 1].block;
			if (n == H) {
				struct cxl_ccm_release_entry e[LLM_MAX_HEADS];
				unsigned int blk = held[nheld - 1].block, k = 0, rr, p, x;
				unsigned int bl = blk / blocks, b = blk % blocks;
				__s32 cat[LLM_MAX_ROWS][LLM_HIDDEN_MAX];

				for (i = 0; i < nheld;) {
					struct llm_held *hd = &held[i];

					if (hd->block != blk) {
						i++;
						continue;
					}
					/* A record may wrap around the ring's end, even mid-row. */
					cxlccm_ring_payload(&ring, hd->r.payload_index, hd->r.length,
							    pc, pn);
					for (rr = 0; rr < R; rr++)
						cxlccm_ring_read(pc, pn, (size_t)rr * D * 4, D * 4,
								 &cat[rr][hd->head * D]);
					e[k++] = (struct cxl_ccm_release_entry){
						hd->r.payload_index, hd->r.length };
					*hd = held[--nheld];
				}
				for (rr = 0; rr < R; rr++) {
					for (x = 0; x < hidden; x++)
						att[bl][x / D][b * R + rr][x % D] = cat[rr][x];
					for (p = 0; p < hidden; p++) {
						__s64 s = 0;

						for (x = 0; x < hidden; x++)
							s += (__s64)cat[rr][x] * llm_weight(p, x);
						proj[bl][b * R + rr][p] = s;
					}
				}
				{
					struct cxl_ccm_release rel = {
						.entries = (__u64)(unsigned long)e, .count = k,
						.flags = CXL_CCM_RELEASE_METADATA,
						.metadata_head = head + 1,
					};

					if (ioctl(fd, CXL_CCM_IOC_RELEASE, &rel)) {
						fail(res, "RELEASE: errno %llu", errno, 0);
						goto out;
					}
				}
			} else {
				/* The metadata is copied: its slot goes back at once. */
				struct cxl_ccm_release rel = {
					.flags = CXL_CCM_RELEASE_METADATA, .metadata_head = head + 1,
				};

				if (ioctl(fd, CXL_CCM_IOC_RELEASE, &rel)) {
					fail(res, "RELEASE: errno %llu", errno, 0);
					goto out;
				}
			}
			busy += now_ns() - t;
		}
	}
	res->e2e_us = (now_ns() - t0) / 1000.0;
	res->busy_us = busy / 1000.0;
	res->idle_us = res->e2e_us - res->busy_us;
	res->launch_us = in_launch / 1000.0;
	if (!res->deadlock && res->records != (unsigned long long)o->launches * blocks * H)
		fail(res, "%llu records, expected %llu", res->records,
		     (unsigned long long)o->launches * blocks * H);
	/* Every attention element and every projected element against the CPU. */
	for (i = 0; !res->deadlock && res->verified && i < o->launches; i++) {
		unsigned int h, r, p, x;

		for (h = 0; res->verified && h < H; h++)
			for (r = 0; r < o->q_rows; r++) {
				const __s32 *want = ref + (((__u64)i * H + h) * o->q_rows + r) * D;

				if (memcmp(att[i][h][r], want, D * 4)) {
					res->verified = false;
					snprintf(res->why, sizeof(res->why),
						 "launch %u head %u row %u differs from the CPU's "
						 "(element 0: %d, want %d)", i, h, r, att[i][h][r][0],
						 want[0]);
					break;
				}
			}
		for (r = 0; res->verified && r < o->q_rows; r++)
			for (p = 0; p < hidden; p++) {
				__s64 s = 0;

				for (x = 0; x < hidden; x++)
					s += (__s64)ref[(((__u64)i * H + x / D) * o->q_rows + r) * D +
							x % D] *
					     llm_weight(p, x);
				if (s != proj[i][r][p]) {
					fail(res, "launch %llu row %llu: projection differs", i, r);
					break;
				}
			}
	}
	memset(&st, 0, sizeof(st));
	if (!ioctl(fd, CXL_CCM_IOC_STATS, &st)) {
		res->credit_stalls = st.credit_stalls;
		res->ccm_idle_us = res->e2e_us - st.ccm_busy_ns / 1000.0;
		if (res->ccm_idle_us < 0)
			res->ccm_idle_us = 0;
		res->credit_wait_us = st.credit_wait_ns / 1000.0;
		res->interrupts = st.interrupts;
		res->polls = st.polls;
		res->stall_us = (polling + st.host_stall_ns) / 1000.0;
	}
	ret = res->verified ? 0 : -1;
out:
	/* The mappings hold the file: the tenant (and a deadlocked stream) goes once they are gone. */
	cxlccm_ring_unmap(&ring);
	close(fd);
	return ret;
}

#endif /* CCM_BENCH_LLM_H */
