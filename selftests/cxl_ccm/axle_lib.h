/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the cxl_ccm AXLE selftests: a tenant (open, CONFIGURE,
 * the four mmaps, checked), STREAM_XFORM launches whose input depends on a
 * per-launch seed, and a consumer that checks every record it reads against
 * an independent model of the expected output. The ring mechanics (mapping,
 * tail loads, record and payload copies) are libcxlccm's (cxlccm_ring.h);
 * what is checked about them is here.
 *
 * The consumer (struct axle_run) copies the records [head, tail) after an
 * acquire load of the metadata tail, and for each one checks:
 *   - seq == its free-running index (a stale or torn record otherwise);
 *   - the tag was launched by this file, and not finished yet;
 *   - flags, status, result_offset and length fit the launch;
 *   - the chunk was not seen before (a per-launch coverage bitmap) and FINAL
 *     comes last: every chunk of the launch has been seen when FINAL is;
 *   - with in-order streaming, launches in tag order and chunks in
 *     result_offset order;
 *   - the payload starts where the previous one ended (payload_index), and
 *     the payload tail already covers it;
 *   - the payload read from the ring (wrapping at its end) has the record's
 *     CRC32C and is exactly the transform of the launch's input.
 * It checks the credit rule from user space on every poll: neither tail is
 * ever more than a capacity ahead of what this consumer has released. Before
 * releasing a payload it checks it again, so a device that overwrote an
 * unreleased slot is caught. Releases go in batches (in random order and
 * random-size groups when asked), always with CXL_CCM_RELEASE_METADATA.
 *
 * The checker (axle_check_record()) has no side effect, so a test can feed it
 * a corrupted copy and check that it refuses it. Randomness comes from a
 * xorshift generator whose seed is printed (AXLE_SEED=<seed> repeats a run).
 */
#ifndef CXL_CCM_AXLE_LIB_H
#define CXL_CCM_AXLE_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"
#include "../../tools/lib/cxlccm/cxlccm_ring.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the device writes little-endian words; these tests compare host words"
#endif

#define AXLE_NODE0		"/dev/cxl_ccm0"
#define AXLE_MD_FLAGS		(CXL_CCM_MD_FLAG_FINAL | CXL_CCM_MD_FLAG_ERROR)
/* No new record for this long while launches are pending: a stall. */
#define AXLE_STALL_NS		(10ULL * 1000 * 1000 * 1000)
/* Input regions a run keeps in flight at most (well below 64 launch slots). */
#define AXLE_MAX_INFLIGHT	32

#define AXLE_DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define AXLE_MIN(a, b)		((a) < (b) ? (a) : (b))

/* Assert that a checker returned NULL, and say why not otherwise. */
#define AXLE_ASSERT_OK(why, fmt, ...) \
	ASSERT_TRUE(!(why)) TH_LOG(fmt ": %s", ##__VA_ARGS__, (why))

static inline __u64 axle_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void axle_sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

/* --- xorshift64* ------------------------------------------------------- */

struct axle_rng {
	__u64 s;
};

static inline __u64 axle_rand64(struct axle_rng *g)
{
	__u64 x = g->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static inline __u32 axle_rand32(struct axle_rng *g)
{
	return axle_rand64(g) >> 32;
}

/* Uniform enough in [0, n); 0 if n is 0. */
static inline __u32 axle_below(struct axle_rng *g, __u32 n)
{
	return n ? axle_rand32(g) % n : 0;
}

/*
 * The seed of a test: $AXLE_SEED if set, else a fixed value mixed with the
 * test name (so every test has its own stream), printed either way.
 */
static inline __u64 axle_seed(struct __test_metadata *_metadata)
{
	const char *env = getenv("AXLE_SEED");
	__u64 seed = 0xcf5eed0a11e0c0deULL;
	const char *p;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		for (p = _metadata->name; *p; p++)
			seed = (seed ^ (unsigned char)*p) * 0x100000001b3ULL;
	}
	if (!seed)
		seed = 1;
	ksft_print_msg("%s: seed %#llx (AXLE_SEED=%#llx repeats this run)\n",
		       _metadata->name, (unsigned long long)seed,
		       (unsigned long long)seed);
	return seed;
}

/* --- CRC32C (Castagnoli, reflected, init and final xor ~0) ----------- */

static __u32 axle_crc_table[256];

static inline __u32 axle_crc32c_update(__u32 crc, const void *data, size_t len)
{
	const __u8 *p = data;
	unsigned int i, bit;
	__u32 c;

	if (!axle_crc_table[1]) {
		for (i = 0; i < 256; i++) {
			c = i;
			for (bit = 0; bit < 8; bit++)
				c = (c >> 1) ^ (0x82f63b78U & (0U - (c & 1)));
			axle_crc_table[i] = c;
		}
	}
	while (len--)
		crc = (crc >> 8) ^ axle_crc_table[(crc ^ *p++) & 0xff];
	return crc;
}

static inline __u32 axle_crc32c(const void *data, size_t len)
{
	return ~axle_crc32c_update(~0U, data, len);
}

/* --- input pattern and the transform --------------------------------- */

static inline __u32 axle_mix(__u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* Input word @word of a launch with @seed: differs between launches. */
static inline __u32 axle_pattern(__u32 seed, __u32 word)
{
	return axle_mix(seed ^ axle_mix(word * 0x9e3779b9U + 0x632be5abU));
}

static inline __u32 axle_xform(__u32 op, __u32 operand, __u32 in)
{
	switch (op) {
	case CXL_CCM_XFORM_OP_XOR:
		return in ^ operand;
	case CXL_CCM_XFORM_OP_ADD:
		return in + operand;
	default:
		return in;
	}
}

/* --- tenant -------------------------------------------------------------- */

struct axle_tenant {
	int fd;
	struct cxl_ccm_info info;
	struct cxl_ccm_configure cfg;	/* as CONFIGURE returned it */
	struct cxlccm_ring ring;	/* the mappings and the geometry */
	__u32 sf_bytes;			/* streaming factor in bytes */
};

static inline struct cxl_ccm_configure axle_config(__u32 md_slots, __u32 pl_slots,
						   __u32 slot_size, __u32 sf,
						   __u32 order, __u32 index_base,
						   __u64 input_size)
{
	struct cxl_ccm_configure c;

	memset(&c, 0, sizeof(c));
	c.mode = CXL_CCM_MODE_AXLE;
	c.slot_size = slot_size;
	c.metadata_slots = md_slots;
	c.payload_slots = pl_slots;
	c.streaming_factor = sf;
	c.streaming_order = order;
	c.index_base = index_base;
	c.poll_interval_ns = 20000;
	c.input_size = input_size;
	return c;
}

/* Open @node and read INFO into @t; 0 or -errno. */
static inline int axle_open(struct axle_tenant *t, const char *node)
{
	memset(t, 0, sizeof(*t));
	t->fd = open(node, O_RDWR | O_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	if (ioctl(t->fd, CXL_CCM_IOC_INFO, &t->info))
		return -errno;
	return 0;
}

/*
 * Open @node for a test: SKIP (and false) if the node is missing or the
 * device does not advertise AXLE with STREAM_XFORM.
 */
static inline bool axle_open_or_skip(struct __test_metadata *_metadata,
				     struct axle_tenant *t, const char *node)
{
	int ret = axle_open(t, node);

	if (ret == -ENOENT)
		SKIP(return false, "%s is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko",
		     node);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", node, strerror(-ret));
	if (!(t->info.caps & CXL_CCM_CAP_MODE_AXLE) ||
	    !(t->info.kernels & (1ULL << CXL_CCM_KERNEL_STREAM_XFORM)))
		SKIP(return false, "%s advertises no AXLE data plane (caps %#llx, kernels %#llx)",
		     node, (unsigned long long)t->info.caps,
		     (unsigned long long)t->info.kernels);
	return true;
}

static inline void axle_close(struct axle_tenant *t)
{
	cxlccm_ring_unmap(&t->ring);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static inline __u64 axle_page_up(__u64 n)
{
	__u64 page = sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/*
 * Map the four areas of a configured tenant (cxlccm_ring.h) and check the
 * CONFIGURE output and the geometry in the ring headers against what was
 * asked for.
 */
static inline void axle_map(struct __test_metadata *_metadata, struct axle_tenant *t)
{
	const struct cxl_ccm_configure *c = &t->cfg;
	__u32 slot_size = c->slot_size ? c->slot_size : CXL_CCM_DEFAULT_SLOT_SIZE;
	const struct cxl_ccm_ring_headers *h;
	int ret;

	t->sf_bytes = c->streaming_factor ? c->streaming_factor : slot_size;
	ASSERT_GT(t->info.max_tenants, c->tenant);
	ASSERT_LE(sizeof(struct cxl_ccm_ring_headers), c->headers_size);
	ASSERT_EQ(axle_page_up(c->headers_size), c->headers_size);
	ASSERT_EQ(axle_page_up((__u64)c->metadata_slots * CXL_CCM_METADATA_RECORD_SIZE),
		  c->metadata_ring_size);
	ASSERT_EQ(axle_page_up((__u64)c->payload_slots * slot_size), c->payload_ring_size);

	ret = cxlccm_ring_map(&t->ring, t->fd, c);
	ASSERT_EQ(0, ret) TH_LOG("mapping the rings: %s", strerror(-ret));

	h = t->ring.hdr;
	ASSERT_EQ(c->metadata_slots, h->metadata.capacity);
	ASSERT_EQ((__u32)CXL_CCM_METADATA_RECORD_SIZE, h->metadata.slot_size);
	ASSERT_EQ(c->payload_slots, h->payload.capacity);
	ASSERT_EQ(slot_size, h->payload.slot_size);
	ASSERT_EQ((__u32)CXL_CCM_LAUNCH_SLOTS, h->launch.slots);
}

/* CONFIGURE @cfg on @t (opened) and map it. */
static inline void axle_tenant_setup(struct __test_metadata *_metadata, struct axle_tenant *t,
				     const struct cxl_ccm_configure *cfg)
{
	t->cfg = *cfg;
	ASSERT_EQ(0, ioctl(t->fd, CXL_CCM_IOC_CONFIGURE, &t->cfg))
		TH_LOG("CONFIGURE: %s", strerror(errno));
	axle_map(_metadata, t);
	/* Nothing launched yet: both tails at index_base. */
	ASSERT_EQ(cfg->index_base, cxlccm_ring_md_tail(&t->ring));
	ASSERT_EQ(cfg->index_base, cxlccm_ring_pl_tail(&t->ring));
}

/* Write the input of a launch with @seed: @size bytes at @off. */
static inline void axle_fill(struct axle_tenant *t, __u64 off, __u32 size, __u32 seed)
{
	__u8 *p = (__u8 *)t->ring.in + off;
	__u32 i, w;

	for (i = 0; i + 4 <= size; i += 4) {
		w = axle_pattern(seed, i / 4);
		memcpy(p + i, &w, 4);
	}
	for (w = axle_pattern(seed, i / 4); i < size; i++, w >>= 8)
		p[i] = w;
}

static inline struct cxl_ccm_launch axle_xform_launch(__u64 in_off, __u64 in_size,
						      __u32 op, __u32 chunk,
						      __u32 operand)
{
	struct cxl_ccm_stream_xform_args xa;
	struct cxl_ccm_launch l;

	memset(&xa, 0, sizeof(xa));
	xa.op = op;
	xa.chunk_size = chunk;
	xa.operand = operand;
	memset(&l, 0, sizeof(l));
	l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
	l.input_offset = in_off;
	l.input_size = in_size;
	l.arg_size = sizeof(xa);
	memcpy(l.args, &xa, sizeof(xa));
	return l;
}

/* LAUNCH a STREAM_XFORM; the ioctl's result, the tag in *@tag on success. */
static inline int axle_ioc_launch(int fd, __u64 in_off, __u64 in_size, __u32 op,
				  __u32 chunk, __u32 operand, __u32 *tag)
{
	struct cxl_ccm_launch l = axle_xform_launch(in_off, in_size, op, chunk, operand);
	int ret = ioctl(fd, CXL_CCM_IOC_LAUNCH, &l);

	if (!ret && tag)
		*tag = l.tag;
	return ret;
}

static inline int axle_ioc_release(int fd, const struct cxl_ccm_release_entry *e, __u32 n,
				   __u32 flags, __u32 md_head, __u32 *processed)
{
	struct cxl_ccm_release rel;
	int ret;

	memset(&rel, 0, sizeof(rel));
	rel.entries = (__u64)(uintptr_t)e;
	rel.count = n;
	rel.flags = flags;
	rel.metadata_head = md_head;
	rel.processed = 0xdeadbeef;
	ret = ioctl(fd, CXL_CCM_IOC_RELEASE, &rel);
	if (processed)
		*processed = rel.processed;
	return ret;
}

static inline int axle_ioc_stats(int fd, struct cxl_ccm_stats *s, __u32 flags)
{
	memset(s, 0, sizeof(*s));
	s->flags = flags;
	return ioctl(fd, CXL_CCM_IOC_STATS, s);
}

static inline int axle_ioc_wait(int fd, struct cxl_ccm_wait *w, __u32 min_records,
				__u32 head, __u64 timeout_ns)
{
	memset(w, 0, sizeof(*w));
	w->min_records = min_records;
	w->metadata_head = head;
	w->timeout_ns = timeout_ns;
	return ioctl(fd, CXL_CCM_IOC_WAIT, w);
}

/* --- the consumer ------------------------------------------------------- */

struct axle_launch {
	__u32 tag;
	__u32 seed;
	__u32 op;
	__u32 operand;
	__u64 in_off;
	__u32 in_size;
	__u32 out_size;		/* 0 if the launch must fail */
	__u32 chunk;		/* effective chunk bytes */
	__u32 nchunks;
	__u32 seen;		/* chunks seen */
	__u64 next_off;		/* in-order: result_offset of the next chunk */
	int region;		/* input region, -1 once FINAL was seen */
	bool expect_error;	/* input size not a multiple of 4 */
	bool final;
	__u8 *bitmap;		/* chunks seen */
};

/* A consumed record whose payload has not been released yet. */
struct axle_pending {
	__u32 payload_index;
	__u32 length;
	__u32 checksum;
	__u32 tag;
	__u64 result_offset;
};

struct axle_run {
	struct axle_tenant *t;
	struct axle_rng rng;
	__u32 base;			/* index_base */

	struct axle_launch *l;		/* launch n has tag base + n */
	unsigned int nl, lcap;
	unsigned int done;		/* launches whose FINAL was seen */
	unsigned int stream_pos;	/* in-order: the launch streaming now */

	__u32 region_size;
	unsigned int nregions;
	int *region_owner;		/* launch using the region, or -1 */
	unsigned int max_inflight;

	__u32 head;			/* next metadata index to copy */
	__u32 md_released;		/* metadata head last released */
	__u32 pl_next;			/* payload index the next payload starts at */
	__u32 gap_head;			/* first payload slot not released */
	__u8 *released;			/* per payload slot: released, head not past */

	struct axle_pending *pend;
	unsigned int npend, pcap;
	struct cxl_ccm_release_entry *ebuf;

	/* policy */
	bool in_order;
	bool random_release;		/* random order, random-size groups */
	bool publish;			/* CXL_CCM_RELEASE_PUBLISH on every release */
	unsigned int max_group;		/* entries per RELEASE at most */
	unsigned int hold_max;		/* random mode: entries kept across polls */

	__u64 records;
	__u64 payload_bytes;
	__u64 release_calls;
	__u64 last_progress;
	__u8 *buf;			/* a payload read from the ring */
	__u8 *buf2;
};

static inline void axle_run_free(struct axle_run *r)
{
	unsigned int i;

	for (i = 0; i < r->nl; i++)
		free(r->l[i].bitmap);
	free(r->l);
	free(r->region_owner);
	free(r->released);
	free(r->pend);
	free(r->ebuf);
	free(r->buf);
	free(r->buf2);
	memset(r, 0, sizeof(*r));
}

/*
 * A consumer for the mapped tenant @t. The input buffer is cut into regions
 * of @region_size bytes; a region is refilled only once the launch using it
 * has delivered its FINAL record.
 */
static inline void axle_run_init(struct __test_metadata *_metadata, struct axle_run *r,
				 struct axle_tenant *t, __u32 region_size, __u64 seed)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->t = t;
	r->rng.s = seed ? seed : 1;
	r->base = t->cfg.index_base;
	r->head = r->base;
	r->md_released = r->base;
	r->pl_next = r->base;
	r->gap_head = r->base;
	r->region_size = region_size;
	ASSERT_NE(0U, region_size);
	ASSERT_EQ(0U, region_size % 4);
	r->nregions = t->cfg.input_size / region_size;
	ASSERT_LT(0U, r->nregions) TH_LOG("input buffer smaller than a region");
	r->max_inflight = AXLE_MIN(r->nregions, AXLE_MAX_INFLIGHT);
	r->region_owner = malloc(r->nregions * sizeof(int));
	r->released = calloc(t->ring.pl_slots, 1);
	r->pcap = t->ring.pl_slots + 1;
	r->pend = calloc(r->pcap, sizeof(*r->pend));
	r->ebuf = calloc(CXL_CCM_RELEASE_MAX, sizeof(*r->ebuf));
	r->buf = malloc(t->ring.pl_bytes);
	r->buf2 = malloc(t->ring.pl_bytes);
	ASSERT_TRUE(r->region_owner && r->released && r->pend && r->ebuf &&
		    r->buf && r->buf2);
	for (i = 0; i < r->nregions; i++)
		r->region_owner[i] = -1;
	r->in_order = t->cfg.streaming_order == CXL_CCM_ORDER_IN_ORDER;
	r->publish = true;
	r->max_group = 64;
	r->hold_max = t->ring.pl_slots / 4 / AXLE_DIV_ROUND_UP(t->sf_bytes, t->ring.slot_size);
	r->last_progress = axle_now_ns();
}

static inline unsigned int axle_inflight(const struct axle_run *r)
{
	return r->nl - r->done;
}

static inline const struct axle_launch *axle_launch_of(const struct axle_run *r,
						       __u32 tag)
{
	__u32 n = tag - r->base;

	return n < r->nl ? &r->l[n] : NULL;
}

/*
 * Check @p bytes of payload claimed to be the chunk at @off of launch @l
 * with checksum @checksum: the checksum is the CRC32C of the bytes, and the
 * bytes are exactly the launch's transformed input. NULL if right.
 */
static inline const char *axle_verify_payload(const struct axle_launch *l, __u64 off,
					      __u32 len, __u32 checksum, const __u8 *p)
{
	static char why[256];
	__u32 crc = axle_crc32c(p, len);
	__u32 i, w, want;

	if (crc != checksum) {
		snprintf(why, sizeof(why),
			 "tag %u offset %llu: record checksum %#010x, payload CRC32C %#010x (partial or corrupt payload)",
			 l->tag, (unsigned long long)off, checksum, crc);
		return why;
	}
	for (i = 0; i < len / 4; i++) {
		memcpy(&w, p + 4 * i, 4);
		want = axle_xform(l->op, l->operand,
				  axle_pattern(l->seed, off / 4 + i));
		if (w != want) {
			snprintf(why, sizeof(why),
				 "tag %u offset %llu word %u: %#010x, expected %#010x (stale or foreign data)",
				 l->tag, (unsigned long long)off, i, w, want);
			return why;
		}
	}
	return NULL;
}

/*
 * Check the record read at metadata index @index, with @payload holding its
 * payload as read from the ring and @ptail the payload tail loaded after the
 * metadata tail. No side effect. NULL if the record is right, else why not.
 */
static inline const char *axle_check_record(const struct axle_run *r, __u32 index,
					    const struct cxl_ccm_metadata_record *rec,
					    const __u8 *payload, __u32 ptail)
{
	static char why[256];
	const struct axle_launch *l;
	__u32 n = rec->tag - r->base;
	__u32 len, c, slots;

#define WHY(...) do { snprintf(why, sizeof(why), __VA_ARGS__); return why; } while (0)
	if (rec->seq != index)
		WHY("seq %u in the slot of index %u: stale or torn record", rec->seq, index);
	if (n >= r->nl)
		WHY("tag %u was never launched on this file (%u launched from %u)",
		    rec->tag, r->nl, r->base);
	l = &r->l[n];
	if (l->final)
		WHY("tag %u: record after its FINAL record", rec->tag);
	if (rec->flags & ~AXLE_MD_FLAGS)
		WHY("tag %u: unknown flags %#x", rec->tag, rec->flags);
	if (r->in_order && n != r->stream_pos)
		WHY("in-order streaming: a record of tag %u before tag %u is final",
		    rec->tag, r->base + r->stream_pos);
	if (l->expect_error) {
		if (rec->flags != AXLE_MD_FLAGS || rec->status != CXL_CCM_STATUS_BAD_ARGS ||
		    rec->length)
			WHY("tag %u (input size %u): flags %#x status %u length %u, expected FINAL|ERROR, BAD_ARGS, 0",
			    rec->tag, l->in_size, rec->flags, rec->status, rec->length);
		return NULL;
	}
	if ((rec->flags & CXL_CCM_MD_FLAG_ERROR) || rec->status)
		WHY("tag %u failed: flags %#x status %u", rec->tag, rec->flags, rec->status);
	if (!l->nchunks) {
		if (rec->flags != CXL_CCM_MD_FLAG_FINAL || rec->length)
			WHY("tag %u (empty input): flags %#x length %u, expected one FINAL record of length 0",
			    rec->tag, rec->flags, rec->length);
		return NULL;
	}
	if (rec->result_offset >= l->out_size || rec->result_offset % l->chunk)
		WHY("tag %u: result_offset %llu, output %u bytes in chunks of %u",
		    rec->tag, (unsigned long long)rec->result_offset, l->out_size, l->chunk);
	c = rec->result_offset / l->chunk;
	len = AXLE_MIN(l->chunk, l->out_size - (__u32)rec->result_offset);
	if (rec->length != len)
		WHY("tag %u offset %llu: length %u, expected %u", rec->tag,
		    (unsigned long long)rec->result_offset, rec->length, len);
	if (l->bitmap[c / 8] & (1 << (c % 8)))
		WHY("tag %u: chunk at offset %llu delivered twice", rec->tag,
		    (unsigned long long)rec->result_offset);
	if (r->in_order && rec->result_offset != l->next_off)
		WHY("in-order streaming: tag %u offset %llu, expected offset %llu", rec->tag,
		    (unsigned long long)rec->result_offset, (unsigned long long)l->next_off);
	if ((rec->flags & CXL_CCM_MD_FLAG_FINAL) && l->seen + 1 != l->nchunks)
		WHY("tag %u: FINAL with %u of %u chunks seen", rec->tag, l->seen + 1,
		    l->nchunks);
	if (!(rec->flags & CXL_CCM_MD_FLAG_FINAL) && l->seen + 1 == l->nchunks)
		WHY("tag %u: every chunk seen but no FINAL on the last one", rec->tag);
	if (rec->payload_index != r->pl_next)
		WHY("tag %u offset %llu: payload_index %u, the previous payload ended at %u",
		    rec->tag, (unsigned long long)rec->result_offset, rec->payload_index,
		    r->pl_next);
	slots = AXLE_DIV_ROUND_UP(len, r->t->ring.slot_size);
	if (ptail - rec->payload_index < slots || ptail - rec->payload_index > r->t->ring.pl_slots)
		WHY("tag %u: payload [%u, +%u slots) not below the payload tail %u seen after the metadata tail",
		    rec->tag, rec->payload_index, slots, ptail);
#undef WHY
	return axle_verify_payload(l, rec->result_offset, rec->length, rec->checksum,
				   payload);
}

/* Mark @len bytes of payload at @index released in the user-side gap head. */
static inline void axle_gap_release(struct __test_metadata *_metadata, struct axle_run *r,
				    __u32 index, __u32 len)
{
	__u32 slots = AXLE_DIV_ROUND_UP(len, r->t->ring.slot_size);
	__u32 mask = r->t->ring.pl_slots - 1;
	__u32 s;

	for (s = 0; s < slots; s++) {
		ASSERT_LT(index + s - r->gap_head, r->pl_next - r->gap_head);
		ASSERT_EQ(0, r->released[(index + s) & mask]);
		r->released[(index + s) & mask] = 1;
	}
	while (r->gap_head != r->pl_next && r->released[r->gap_head & mask]) {
		r->released[r->gap_head & mask] = 0;
		r->gap_head++;
	}
}

/* Apply a record that axle_check_record() accepted. */
static inline void axle_accept(struct __test_metadata *_metadata, struct axle_run *r,
			       const struct cxl_ccm_metadata_record *rec)
{
	struct axle_launch *l = &r->l[rec->tag - r->base];
	struct axle_pending *p;
	__u32 c;

	r->records++;
	if (l->nchunks && !l->expect_error) {
		c = rec->result_offset / l->chunk;
		l->bitmap[c / 8] |= 1 << (c % 8);
		l->seen++;
		l->next_off += rec->length;
		r->pl_next += AXLE_DIV_ROUND_UP(rec->length, r->t->ring.slot_size);
		r->payload_bytes += rec->length;
		ASSERT_LT(r->npend, r->pcap);
		p = &r->pend[r->npend++];
		p->payload_index = rec->payload_index;
		p->length = rec->length;
		p->checksum = rec->checksum;
		p->tag = rec->tag;
		p->result_offset = rec->result_offset;
	}
	if (rec->flags & CXL_CCM_MD_FLAG_FINAL) {
		l->final = true;
		r->done++;
		if (r->in_order)
			r->stream_pos++;
		r->region_owner[l->region] = -1;
		l->region = -1;
		free(l->bitmap);
		l->bitmap = NULL;
	}
}

/*
 * Copy and check every record in [head, tail): each one is checked, payload
 * included, right after the tail that covers it was seen. Returns the number
 * of new records; releases nothing.
 */
static inline unsigned int axle_poll(struct __test_metadata *_metadata, struct axle_run *r)
{
	const struct axle_tenant *t = r->t;
	struct cxl_ccm_metadata_record rec;
	__u32 tail = cxlccm_ring_md_tail(&t->ring);
	__u32 ptail = cxlccm_ring_pl_tail(&t->ring);
	__u32 i, n = tail - r->head;
	const char *why;

	ASSERT_LE(tail - r->md_released, t->ring.md_slots)
		TH_LOG("metadata tail %u more than a capacity (%u) past the released head %u",
		       tail, t->ring.md_slots, r->md_released);
	ASSERT_LE(tail - r->head, t->ring.md_slots)
		TH_LOG("metadata tail %u went back before %u", tail, r->head);
	ASSERT_LE(ptail - r->gap_head, t->ring.pl_slots)
		TH_LOG("payload tail %u more than a capacity (%u) past the first unreleased slot %u: an unconsumed slot was overwritten",
		       ptail, t->ring.pl_slots, r->gap_head);
	for (i = r->head; i != tail; i++) {
		/* The checker sees the seq; a torn length is cut to the ring. */
		cxlccm_ring_record(&t->ring, i, &rec);
		cxlccm_ring_copy(&t->ring, rec.payload_index, rec.length, r->buf);
		why = axle_check_record(r, i, &rec, r->buf, ptail);
		AXLE_ASSERT_OK(why, "record %u", i);
		axle_accept(_metadata, r, &rec);
	}
	r->head = tail;
	return n;
}

/* Check a pending payload again, where it still lies in the ring. */
static inline const char *axle_recheck(const struct axle_run *r, const struct axle_pending *p)
{
	cxlccm_ring_copy(&r->t->ring, p->payload_index, p->length, r->buf2);
	return axle_verify_payload(axle_launch_of(r, p->tag), p->result_offset,
				   p->length, p->checksum, r->buf2);
}

/*
 * RELEASE @n pending payloads (after checking they are intact) together with
 * the metadata head.
 */
static inline void axle_release(struct __test_metadata *_metadata, struct axle_run *r,
				const struct axle_pending *p, unsigned int n)
{
	__u32 flags = CXL_CCM_RELEASE_METADATA;
	const char *why;
	__u32 processed;
	unsigned int i;

	ASSERT_LE(n, (unsigned int)CXL_CCM_RELEASE_MAX);
	for (i = 0; i < n; i++) {
		why = axle_recheck(r, &p[i]);
		AXLE_ASSERT_OK(why, "payload at %u changed before it was released",
			       p[i].payload_index);
		r->ebuf[i].payload_index = p[i].payload_index;
		r->ebuf[i].length = p[i].length;
	}
	if (r->publish)
		flags |= CXL_CCM_RELEASE_PUBLISH;
	ASSERT_EQ(0, axle_ioc_release(r->t->fd, r->ebuf, n, flags, r->head, &processed))
		TH_LOG("RELEASE of %u entries, metadata head %u: %s", n, r->head,
		       strerror(errno));
	ASSERT_EQ(n, processed);
	r->release_calls++;
	r->md_released = r->head;
	for (i = 0; i < n; i++)
		axle_gap_release(_metadata, r, p[i].payload_index, p[i].length);
}

/* Remove pending entry @i and return it. */
static inline struct axle_pending axle_take_pending(struct axle_run *r, unsigned int i)
{
	struct axle_pending p = r->pend[i];

	r->pend[i] = r->pend[--r->npend];
	return p;
}

/*
 * Release the pending payloads and the metadata head: everything if @all,
 * else (random mode) all but a random number of them, kept for later. Random
 * mode releases in random order and random-size groups.
 */
static inline void axle_release_pending(struct __test_metadata *_metadata, struct axle_run *r,
					bool all)
{
	unsigned int keep = 0, g, i, j;
	struct axle_pending tmp;

	if (r->random_release) {
		if (!all)
			keep = axle_below(&r->rng, r->hold_max + 1);
		for (i = r->npend; i > 1; i--) {
			j = axle_below(&r->rng, i);
			tmp = r->pend[i - 1];
			r->pend[i - 1] = r->pend[j];
			r->pend[j] = tmp;
		}
	}
	while (r->npend > keep) {
		g = r->random_release ? 1 + axle_below(&r->rng, r->max_group) : r->max_group;
		g = AXLE_MIN(g, r->npend - keep);
		g = AXLE_MIN(g, (unsigned int)CXL_CCM_RELEASE_MAX);
		axle_release(_metadata, r, &r->pend[r->npend - g], g);
		r->npend -= g;
	}
	if (r->md_released != r->head)
		axle_release(_metadata, r, NULL, 0);
}

static inline void axle_dump(struct __test_metadata *_metadata, const struct axle_run *r)
{
	struct cxl_ccm_stats s;

	TH_LOG("head %u, metadata tail %u, released %u; payload tail %u, next %u, gap head %u; launches %u, done %u, pending %u",
	       r->head, cxlccm_ring_md_tail(&r->t->ring), r->md_released,
	       cxlccm_ring_pl_tail(&r->t->ring), r->pl_next, r->gap_head, r->nl, r->done, r->npend);
	if (!axle_ioc_stats(r->t->fd, &s, 0))
		TH_LOG("stats: launched %llu completed %llu records %llu bytes %llu credit_stalls %llu dma_batches %llu errors %llu",
		       (unsigned long long)s.launched,
		       (unsigned long long)s.launches_completed,
		       (unsigned long long)s.records,
		       (unsigned long long)s.payload_bytes,
		       (unsigned long long)s.credit_stalls,
		       (unsigned long long)s.dma_batches,
		       (unsigned long long)s.errors);
}

/* Nothing new: fail after AXLE_STALL_NS without progress, else nap. */
static inline void axle_idle(struct __test_metadata *_metadata, struct axle_run *r)
{
	if (axle_now_ns() - r->last_progress > AXLE_STALL_NS) {
		axle_dump(_metadata, r);
		ASSERT_TRUE(0) TH_LOG("no new record for %llu s with launches pending",
				      AXLE_STALL_NS / 1000000000ULL);
	}
	axle_sleep_ns(20000);
}

/* One consumer step: poll, release (everything if nothing new came), nap. */
static inline void axle_step(struct __test_metadata *_metadata, struct axle_run *r)
{
	unsigned int n = axle_poll(_metadata, r);

	axle_release_pending(_metadata, r, n == 0);
	if (n)
		r->last_progress = axle_now_ns();
	else
		axle_idle(_metadata, r);
}

static inline int axle_free_region(const struct axle_run *r)
{
	unsigned int i;

	for (i = 0; i < r->nregions; i++)
		if (r->region_owner[i] < 0)
			return i;
	return -1;
}

/*
 * Launch a STREAM_XFORM of @in_size bytes of fresh input (a new seed), with
 * chunk size @chunk (0: the streaming factor). Consumes while every region
 * is busy. Returns the launch number (tag - index_base).
 */
static inline unsigned int axle_launch(struct __test_metadata *_metadata, struct axle_run *r,
				       __u32 op, __u32 operand, __u32 in_size, __u32 chunk)
{
	struct axle_launch *l;
	__u32 tag = 0;
	int reg;

	ASSERT_LE(in_size, r->region_size);
	for (;;) {
		reg = axle_free_region(r);
		if (reg >= 0 && axle_inflight(r) < r->max_inflight)
			break;
		axle_step(_metadata, r);
	}
	if (r->nl == r->lcap) {
		r->lcap = r->lcap ? 2 * r->lcap : 64;
		r->l = realloc(r->l, r->lcap * sizeof(*r->l));
		ASSERT_NE(NULL, r->l);
	}
	l = &r->l[r->nl];
	memset(l, 0, sizeof(*l));
	l->seed = axle_rand32(&r->rng);
	l->op = op;
	l->operand = operand;
	l->in_off = (__u64)reg * r->region_size;
	l->in_size = in_size;
	l->chunk = chunk ? chunk : r->t->sf_bytes;
	l->expect_error = in_size % 4;
	l->out_size = l->expect_error ? 0 : in_size;
	l->nchunks = AXLE_DIV_ROUND_UP(l->out_size, l->chunk);
	l->bitmap = calloc(l->nchunks / 8 + 1, 1);
	ASSERT_NE(NULL, l->bitmap);
	l->region = reg;

	axle_fill(r->t, l->in_off, in_size, l->seed);
	ASSERT_EQ(0, axle_ioc_launch(r->t->fd, l->in_off, in_size, op, chunk, operand, &tag))
		TH_LOG("LAUNCH %u bytes at %llu, chunk %u: %s", in_size,
		       (unsigned long long)l->in_off, chunk, strerror(errno));
	ASSERT_EQ(r->base + r->nl, tag) TH_LOG("tags are consecutive from index_base");
	l->tag = tag;
	r->region_owner[reg] = r->nl;
	r->last_progress = axle_now_ns();
	return r->nl++;
}

/*
 * Consume until every launch has delivered its FINAL record, release
 * everything, and check that nothing more was streamed than the records.
 */
static inline void axle_drain(struct __test_metadata *_metadata, struct axle_run *r)
{
	while (r->done < r->nl)
		axle_step(_metadata, r);
	axle_release_pending(_metadata, r, true);
	ASSERT_EQ(0U, r->npend);
	ASSERT_EQ(r->pl_next, r->gap_head);
	ASSERT_EQ(r->head, cxlccm_ring_md_tail(&r->t->ring)) TH_LOG("records after every FINAL");
	ASSERT_EQ(r->pl_next, cxlccm_ring_pl_tail(&r->t->ring))
		TH_LOG("payload that no record names");
}

/*
 * STATS agree with what this consumer saw. The device mirrors its record and
 * payload counters into its registers after the service pass that published
 * the records, so a consumer that saw the last FINAL may read them one pass
 * early: wait up to a second for them to catch up (never past what was seen:
 * the equality below still fails an over- or under-count).
 */
static inline void axle_check_stats(struct __test_metadata *_metadata, const struct axle_run *r)
{
	struct cxl_ccm_stats s;
	int i;

	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, axle_ioc_stats(r->t->fd, &s, 0)) TH_LOG("STATS: %s", strerror(errno));
		if (s.records >= r->records && s.payload_bytes >= r->payload_bytes)
			break;
		axle_sleep_ns(1000000);
	}
	EXPECT_EQ(r->t->cfg.tenant, s.tenant);
	EXPECT_EQ(r->nl, s.launched);
	EXPECT_EQ(r->records, s.records);
	EXPECT_EQ(r->payload_bytes, s.payload_bytes);
	/* A device that models HDM-H saw every store it consumed published. */
	EXPECT_EQ(0ULL, s.unpublished)
		TH_LOG("the device consumed %llu host stores before they were published",
		       (unsigned long long)s.unpublished);
}

/* A random chunk size: a multiple of 4 up to the streaming factor, or 0. */
static inline __u32 axle_random_chunk(struct axle_run *r)
{
	if (!axle_below(&r->rng, 8))
		return 0;
	return 4 * (1 + axle_below(&r->rng, r->t->sf_bytes / 4));
}

static inline __u32 axle_random_op(struct axle_run *r)
{
	static const __u32 ops[] = { CXL_CCM_XFORM_OP_COPY, CXL_CCM_XFORM_OP_XOR,
				     CXL_CCM_XFORM_OP_ADD };

	return ops[axle_below(&r->rng, 3)];
}

#endif /* CXL_CCM_AXLE_LIB_H */
