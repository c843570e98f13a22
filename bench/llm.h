/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LLM decoding block of Table IV (h): OPT-2.7B's attention shape (32
 * heads of dimension 80, hidden size 2560) over a 1K-token context. Each
 * launch is a decoding step of --q-rows new tokens at the end of the context:
 * the device computes every head's causal attention over the 1024 cached keys
 * and values (the offloaded attention block of the paper's Table I), block by
 * block (chunk_rows query rows per record, one record per head). The host's
 * task for a block is the rest of the layer, the fully-connected part the
 * paper leaves on the host: it concatenates the heads, applies the output
 * projection (hidden x hidden) and the feed-forward network (hidden -> ffn,
 * ReLU, ffn -> hidden; OPT-2.7B's ffn is 10240), with int8 weights held in
 * host memory as a quantised model would. The task needs every head of its
 * block, so the host holds each record in the payload ring (zero copy) until
 * its block is whole, then releases the block.
 *
 * When the payload ring is smaller than one block's records (a block of 32
 * heads of 4 rows needs 1280 slots of 32 B), no block can complete and no
 * slot is freed: the deadlock of AXLE's Figure 16 (h). The run detects it
 * with CXL_CCM_WAIT_FLAG_DEADLOCK (the driver confirms that the producer
 * waits for credit under the heads the host released) and reports it as the
 * run's outcome instead of hanging; it is the expected outcome exactly when a
 * block does not fit.
 */
#ifndef CCM_BENCH_LLM_H
#define CCM_BENCH_LLM_H

#include "bench.h"
#include "../tools/lib/cxlccm/cxlccm_ring.h"

#define LLM_MAX_HEADS	32
#define LLM_MAX_DIM	128
#define LLM_MAX_ROWS	32	/* query rows per launch */
#define LLM_MAX_LAUNCHES 8
#define LLM_HIDDEN_MAX	(LLM_MAX_HEADS * LLM_MAX_DIM)
#define LLM_FFN_MAX	16384
/* Activations between the layers are int8, as the weights: the sums shifted down by these. */
#define LLM_PROJ_SHIFT	10
#define LLM_FFN_SHIFT	8

/* Element d of vector t of head h of Q (which 0), K (1) or V (2): small, so scores spread. */
static inline __s16 llm_elem(unsigned int which, unsigned int h, unsigned int t, unsigned int d)
{
	__u32 x = (which * 0x9e3779b9U) ^ (h * 0x85ebca6bU) ^ (t * 0xc2b2ae35U) ^ (d * 0x27d4eb2fU);

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (__s16)(x % 64) - 32;
}

/* The layer's int8 weights, generated once per shape: small, so sums stay in range. */
struct llm_layer {
	unsigned int hidden, ffn;
	__s8 *wo;	/* hidden x hidden: the output projection, row p for output p */
	__s8 *w1;	/* ffn x hidden */
	__s8 *w2;	/* hidden x ffn */
};

static inline void llm_fill(__s8 *w, __u64 n, __u32 seed)
{
	__u32 x = seed * 2654435761U + 1;
	__u64 i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		w[i] = (__s8)(x % 17) - 8;
	}
}

/* The weights for @o's shape (NULL if they cannot be allocated). */
static const struct llm_layer *llm_layer(const struct opts *o)
{
	static struct llm_layer l;
	unsigned int hidden = o->heads * o->head_dim;

	if (l.wo && l.hidden == hidden && l.ffn == o->ffn)
		return &l;
	free(l.wo);
	free(l.w1);
	free(l.w2);
	memset(&l, 0, sizeof(l));
	l.wo = malloc((__u64)hidden * hidden);
	l.w1 = malloc((__u64)o->ffn * hidden + 1);
	l.w2 = malloc((__u64)hidden * o->ffn + 1);
	if (!l.wo || !l.w1 || !l.w2)
		return NULL;
	l.hidden = hidden;
	l.ffn = o->ffn;
	llm_fill(l.wo, (__u64)hidden * hidden, 1);
	llm_fill(l.w1, (__u64)o->ffn * hidden, 2);
	llm_fill(l.w2, (__u64)hidden * o->ffn, 3);
	return &l;
}

/* @n outputs of int8 weight rows @w (@k wide) applied to the int8 vector @x. */
static inline void llm_gemv(const __s8 *w, unsigned int n, unsigned int k, const __s8 *x,
			    __s32 *y)
{
	unsigned int p, i;

	for (p = 0; p < n; p++, w += k) {
		__s32 s = 0;

		for (i = 0; i < k; i++)
			s += (__s32)w[i] * x[i];
		y[p] = s;
	}
}

static inline __s8 llm_narrow(__s32 v, unsigned int shift, bool relu)
{
	v >>= shift;
	if (relu && v < 0)
		v = 0;
	return v > 127 ? 127 : v < -128 ? -128 : (__s8)v;
}

/*
 * The host's part of the layer for one token: @cat (the heads' attention,
 * concatenated, int8) through the output projection and the FFN into @out.
 */
static void llm_host_row(const struct llm_layer *l, const __s8 *cat, __s32 *out)
{
	static __s32 acc[LLM_FFN_MAX];
	static __s8 x[LLM_FFN_MAX];
	unsigned int i;

	llm_gemv(l->wo, l->hidden, l->hidden, cat, out);
	if (!l->ffn)
		return;
	for (i = 0; i < l->hidden; i++)
		x[i] = llm_narrow(out[i], LLM_PROJ_SHIFT, false);
	llm_gemv(l->w1, l->ffn, l->hidden, x, acc);
	for (i = 0; i < l->ffn; i++)
		x[i] = llm_narrow(acc[i], LLM_FFN_SHIFT, true);
	llm_gemv(l->w2, l->hidden, l->ffn, x, out);
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

/* The layer's output for every launch and row from the CPU's attention: once per shape. */
static const __s32 *llm_layer_reference(const struct opts *o, const struct llm_layer *layer,
					const __s32 *att)
{
	static __s32 *ref;
	static unsigned int shape[6];
	unsigned int now[6] = { o->tokens, o->launches, o->q_rows, o->heads, o->head_dim, o->ffn };
	const unsigned int H = o->heads, D = o->head_dim, hidden = H * D;
	static __s8 cat[LLM_HIDDEN_MAX];
	unsigned int l, r, x;

	if (ref && !memcmp(shape, now, sizeof(now)))
		return ref;
	free(ref);
	ref = malloc((__u64)o->launches * o->q_rows * hidden * 4);
	if (!ref)
		return NULL;
	memcpy(shape, now, sizeof(now));
	for (l = 0; l < o->launches; l++)
		for (r = 0; r < o->q_rows; r++) {
			for (x = 0; x < hidden; x++)
				cat[x] = (__s8)att[(((__u64)l * H + x / D) * o->q_rows + r) * D + x % D];
			llm_host_row(layer, cat, ref + ((__u64)l * o->q_rows + r) * hidden);
		}
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
	static __s32 out[LLM_MAX_LAUNCHES][LLM_MAX_ROWS][LLM_HIDDEN_MAX];
	static __s32 cat[LLM_MAX_ROWS][LLM_HIDDEN_MAX];
	static __s8 cat8[LLM_HIDDEN_MAX];
	__u64 t0, busy = 0, in_launch = 0, polling = 0, empty_since = 0, last_progress;
	const __s32 *ref = llm_reference(o);
	const struct llm_layer *layer = llm_layer(o);
	const __s32 *ref_out = ref && layer ? llm_layer_reference(o, layer, ref) : NULL;
	__u32 head, base;
	int fd, ret = -1, err;

	memset(res, 0, sizeof(*res));
	res->verified = true;
	if (!ref || !layer || !ref_out)
		return fail(res, "out of memory", 0, 0);
	if (H > LLM_MAX_HEADS || D > LLM_MAX_DIM || o->q_rows > LLM_MAX_ROWS || !R ||
	    o->ffn > LLM_FFN_MAX ||
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
	cfg.poll_interval_ns = dilate(rc->poll_ns);
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
	res->load_ns = load_ns(&ring.hdr->metadata.tail);

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
		res->local_polls++;
		if (tail == head) {
			/*
			 * Nothing new. Interrupt mode sleeps in WAIT, and RP waits there
			 * while the driver polls the device's mailbox on this core (the
			 * paper's flow, as in every other workload); the locally polled
			 * modes spin at their interval and, after 200 µs without a
			 * record, ask the driver whether anything can still come.
			 */
			bool irq = rc->mode == CXL_CCM_MODE_AXLE_IRQ || rc->mode == CXL_CCM_MODE_RP;

			if (!empty_since)
				empty_since = now_ns();
			struct cxl_ccm_wait w = {
				.min_records = 1, .metadata_head = head,
				.timeout_ns = irq ? 10000000000ULL : 0,
				.flags = CXL_CCM_WAIT_FLAG_DEADLOCK,
			};

			if (!irq)
				poll_pause(o, dilate(rc->poll_ns));
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
		if (empty_since && rc->mode != CXL_CCM_MODE_AXLE_IRQ && rc->mode != CXL_CCM_MODE_RP)
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
				unsigned int blk = held[nheld - 1].block, k = 0, rr, x;
				unsigned int bl = blk / blocks, b = blk % blocks;

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
					for (x = 0; x < hidden; x++) {
						att[bl][x / D][b * R + rr][x % D] = cat[rr][x];
						/* Within int8: an average of int16 values in [-32, 31]. */
						cat8[x] = (__s8)cat[rr][x];
					}
					llm_host_row(layer, cat8, out[bl][b * R + rr]);
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
	/* Every attention element and every output of the layer against the CPU. */
	for (i = 0; !res->deadlock && res->verified && i < o->launches; i++) {
		unsigned int h, r;

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
			if (memcmp(out[i][r], ref_out + ((__u64)i * o->q_rows + r) * hidden,
				   (size_t)hidden * 4))
				fail(res, "launch %llu row %llu: the layer's output differs", i, r);
	}
	read_stats(fd, polling, res);
	ret = res->verified ? 0 : -1;
out:
	/* The mappings hold the file: the tenant (and a deadlocked stream) goes once they are gone. */
	cxlccm_ring_unmap(&ring);
	close(fd);
	return ret;
}

#endif /* CCM_BENCH_LLM_H */
