// SPDX-License-Identifier: GPL-2.0
/*
 * ccm_doc_test.c - independent black-box test of /dev/cxl_ccm6 written only
 * from include/uapi/linux/cxl_ccm.h and Documentation/cxl_ccm.rst.
 * TAP output; exit 0 only if every planned check ran and passed.
 *
 * Its first run failed 6 of 83 checks; each was traced to the test, not the
 * driver, and fixed here: the "unmapped" pointer was a freed page that later
 * tenant mappings reused (3 checks read garbage: EINVAL, not EFAULT); poll()
 * asked only for POLLIN, so POLLRDNORM could not be reported; the ring
 * headers were checked after a job had moved the tails; the tenant count was
 * taken after one file was closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/cxl_ccm.h>
#include "../../tools/lib/cxlccm/cxlccm_barrier.h"

#define DEV "/dev/cxl_ccm6"
#define PLAN 83

static int ntests, nfail;
static long pgsz;
static struct cxl_ccm_info info;

static void diag(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
}

/* one check; `why` explains expected vs got on failure */
static char why[1024];
#define WHY(...) snprintf(why, sizeof(why), __VA_ARGS__)
static void check(int ok, const char *desc)
{
	ntests++;
	if (!ok)
		nfail++;
	printf("%sok %d - %s\n", ok ? "" : "not ", ntests, desc);
	if (!ok && why[0])
		printf("# %s\n", why);
	why[0] = 0;
	fflush(stdout);
}
#define CHECK(c, d) check((c), (d))

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *watchdog(void *a)
{
	(void)a;
	sleep(175);
	printf("Bail out! watchdog: test exceeded 175 s (ran %d of %d)\n", ntests, PLAN);
	fflush(stdout);
	_exit(2);
}

static volatile sig_atomic_t nalarm;
static void on_alarm(int s) { (void)s; nalarm++; }

static void set_alarm(int usec, int restart)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = usec;
	it.it_interval.tv_usec = usec;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_alarm(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
}

/* threads are created with SIGALRM blocked so that only main gets it */
static int spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t s, old;
	int r;

	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, &old);
	r = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* ioctl returning -errno or 0 */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* a page mapped read-only and an address that faults (PROT_NONE) */
static void *ro_page, *bad_ptr;

/* ---------------------------------------------------------------- tenant */
struct ten {
	int fd;
	struct cxl_ccm_configure cfg;
	const volatile struct cxl_ccm_ring_headers *hdr;
	const struct cxl_ccm_metadata_record *md;
	const uint8_t *pl;
	uint8_t *in;
	struct cxl_ccm_ring_headers hdr0;	/* the headers right after CONFIGURE */
	uint32_t head;		/* next record to copy = released metadata head */
	uint32_t slot_size;
};

static struct cxl_ccm_configure def_cfg(void)
{
	struct cxl_ccm_configure c;

	memset(&c, 0, sizeof(c));
	c.mode = CXL_CCM_MODE_AXLE;
	c.slot_size = 32;
	c.metadata_slots = 256;
	c.payload_slots = 512;
	c.streaming_factor = 64;
	c.streaming_order = CXL_CCM_ORDER_OUT_OF_ORDER;
	c.index_base = 0;
	c.poll_interval_ns = 10000;
	c.input_size = 64 * 1024;
	return c;
}

static void ten_unmap(struct ten *t)
{
	if (t->hdr)
		munmap((void *)t->hdr, t->cfg.headers_size);
	if (t->md)
		munmap((void *)t->md, t->cfg.metadata_ring_size);
	if (t->pl)
		munmap((void *)t->pl, t->cfg.payload_ring_size);
	if (t->in)
		munmap(t->in, t->cfg.input_size);
	t->hdr = NULL;
	t->md = NULL;
	t->pl = NULL;
	t->in = NULL;
}

static void ten_close(struct ten *t)
{
	ten_unmap(t);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* configure and map; returns 0 or -errno (why[] set) */
static int ten_open(struct ten *t, const struct cxl_ccm_configure *c)
{
	void *p;
	int r;

	memset(t, 0, sizeof(*t));
	t->fd = open(DEV, O_RDWR);
	if (t->fd < 0) {
		WHY("open %s: %s", DEV, strerror(errno));
		return -errno;
	}
	t->cfg = *c;
	r = xioctl(t->fd, CXL_CCM_IOC_CONFIGURE, &t->cfg);
	if (r) {
		WHY("CONFIGURE: %s", strerror(-r));
		close(t->fd);
		t->fd = -1;
		return r;
	}
	p = mmap(NULL, t->cfg.headers_size, PROT_READ, MAP_SHARED, t->fd, CXL_CCM_MMAP_HEADERS);
	t->hdr = p == MAP_FAILED ? NULL : p;
	p = mmap(NULL, t->cfg.metadata_ring_size, PROT_READ, MAP_SHARED, t->fd, CXL_CCM_MMAP_METADATA);
	t->md = p == MAP_FAILED ? NULL : p;
	p = mmap(NULL, t->cfg.payload_ring_size, PROT_READ, MAP_SHARED, t->fd, CXL_CCM_MMAP_PAYLOAD);
	t->pl = p == MAP_FAILED ? NULL : p;
	p = mmap(NULL, t->cfg.input_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, CXL_CCM_MMAP_INPUT);
	t->in = p == MAP_FAILED ? NULL : p;
	if (!t->hdr || !t->md || !t->pl || !t->in) {
		WHY("mmap of a tenant area failed");
		ten_close(t);
		return -ENOMEM;
	}
	t->head = t->cfg.index_base;
	t->slot_size = t->hdr->payload.slot_size;
	memcpy(&t->hdr0, (const void *)t->hdr, sizeof(t->hdr0));
	return 0;
}

static int launch_xform(struct ten *t, uint64_t off, uint64_t size, uint32_t op,
			uint32_t operand, uint32_t chunk, uint32_t *tag)
{
	struct cxl_ccm_launch l;
	struct cxl_ccm_stream_xform_args xa;
	int r;

	memset(&l, 0, sizeof(l));
	memset(&xa, 0, sizeof(xa));
	xa.op = op;
	xa.operand = operand;
	xa.chunk_size = chunk;
	l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
	l.input_offset = off;
	l.input_size = size;
	l.arg_size = sizeof(xa);
	memcpy(l.args, &xa, sizeof(xa));
	r = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l);
	if (!r && tag)
		*tag = l.tag;
	return r;
}

/* per-launch expectation for the consumer */
struct expect {
	uint32_t tag;
	const uint8_t *out;	/* expected output or NULL (no data check) */
	uint64_t len;
	uint8_t *seen;		/* per byte coverage (len bytes), may be NULL */
	int final;		/* FINAL seen */
	int records;
	int error;		/* status of an ERROR record, -1 none */
	uint16_t last_flags;
	uint32_t last_length;
};

static void copy_payload(struct ten *t, uint32_t pidx, uint32_t len, uint8_t *dst)
{
	uint64_t cap = t->hdr->payload.capacity;
	uint64_t ringb = cap * t->slot_size;
	uint64_t off = (uint64_t)(pidx & (cap - 1)) * t->slot_size;
	uint64_t first = len < ringb - off ? len : ringb - off;

	memcpy(dst, t->pl + off, first);
	if (len > first)
		memcpy(dst + first, t->pl, len - first);
}

static int release_one(struct ten *t, uint32_t pidx, uint32_t len, uint32_t newhead)
{
	struct cxl_ccm_release_entry e = { pidx, len };
	struct cxl_ccm_release rel;

	memset(&rel, 0, sizeof(rel));
	rel.entries = (uintptr_t)&e;
	rel.count = len ? 1 : 0;
	rel.flags = CXL_CCM_RELEASE_METADATA;
	rel.metadata_head = newhead;
	return xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
}

/*
 * Consume records until every expectation saw FINAL (and full coverage when
 * data is checked), releasing each. Returns 0 or -1 with why[] set.
 */
static int consume(struct ten *t, struct expect *ex, int nex, int timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	static uint8_t buf[CXL_CCM_MAX_SLOT_SIZE * 64];

	for (;;) {
		int done = 1;

		for (int i = 0; i < nex; i++) {
			if (!ex[i].final)
				done = 0;
			else if (ex[i].seen)
				for (uint64_t b = 0; b < ex[i].len; b++)
					if (!ex[i].seen[b])
						done = 0;
		}
		if (done)
			return 0;
		if (now_ns() > deadline) {
			WHY("timeout consuming records (head %u tail %u)", t->head,
			    cxl_ccm_load_tail(&t->hdr->metadata.tail));
			return -1;
		}
		uint32_t tail = cxl_ccm_load_tail(&t->hdr->metadata.tail);

		if (tail == t->head) {
			struct cxl_ccm_wait w;

			memset(&w, 0, sizeof(w));
			w.min_records = 1;
			w.metadata_head = t->head;
			w.timeout_ns = 100000000ull;
			int r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);

			if (r && r != -ETIMEDOUT && r != -EINTR && r != -EAGAIN) {
				WHY("WAIT in consumer: %s", strerror(-r));
				return -1;
			}
			continue;
		}
		if ((uint32_t)(tail - t->head) > t->hdr->metadata.capacity) {
			WHY("tail %u more than a capacity ahead of head %u", tail, t->head);
			return -1;
		}
		for (; t->head != tail; t->head++) {
			struct cxl_ccm_metadata_record r;
			struct expect *e = NULL;

			memcpy(&r, (const void *)&t->md[t->head & (t->hdr->metadata.capacity - 1)], sizeof(r));
			if (r.seq != t->head) {
				WHY("record seq %u at index %u", r.seq, t->head);
				return -1;
			}
			for (int i = 0; i < nex; i++)
				if (ex[i].tag == r.tag)
					e = &ex[i];
			if (!e) {
				WHY("record of unexpected tag %u", r.tag);
				return -1;
			}
			if (e->final && !(r.flags & CXL_CCM_MD_FLAG_FINAL)) {
				/* out of order: FINAL is on the completing record, so nothing after */
				WHY("tag %u: record after FINAL", r.tag);
				return -1;
			}
			e->records++;
			e->last_flags = r.flags;
			e->last_length = r.length;
			if (r.flags & CXL_CCM_MD_FLAG_ERROR)
				e->error = r.status;
			else if (r.status) {
				WHY("status %u without ERROR", r.status);
				return -1;
			}
			if (r.length == 0 && !(r.flags & CXL_CCM_MD_FLAG_FINAL)) {
				WHY("length 0 record without FINAL");
				return -1;
			}
			if (r.length > sizeof(buf) ||
			    (uint64_t)r.length > (uint64_t)t->hdr->payload.capacity * t->slot_size) {
				WHY("record length %u too large", r.length);
				return -1;
			}
			copy_payload(t, r.payload_index, r.length, buf);
			if (r.length && cxl_ccm_crc32c(buf, r.length) != r.checksum) {
				WHY("tag %u off %llu: bad CRC32C", r.tag, (unsigned long long)r.result_offset);
				return -1;
			}
			if (e->out && r.length) {
				if (r.result_offset + r.length > e->len ||
				    memcmp(buf, e->out + r.result_offset, r.length)) {
					WHY("tag %u off %llu len %u: wrong data", r.tag,
					    (unsigned long long)r.result_offset, r.length);
					return -1;
				}
				if (e->seen)
					memset(e->seen + r.result_offset, 1, r.length);
			}
			if (r.flags & CXL_CCM_MD_FLAG_FINAL)
				e->final = 1;
			int rr = release_one(t, r.payload_index, r.length, t->head + 1);

			if (rr) {
				WHY("RELEASE of a good record: %s", strerror(-rr));
				return -1;
			}
		}
	}
}

/* a normal small checked launch: n words XOR pattern */
static int alive(struct ten *t, const char *ctx)
{
	enum { N = 96 };
	static uint8_t exp[N * 4], seen[N * 4];
	uint32_t *in = (uint32_t *)t->in, tag = 0;
	struct expect e;
	int r;

	if (!t->in) {
		WHY("%s: tenant not set up", ctx);
		return 0;
	}
	for (int i = 0; i < N; i++) {
		uint32_t v = 0x9e3779b9u * (i + 1) ^ (uint32_t)(uintptr_t)ctx;

		in[i] = v;
		v ^= 0xa5a5a5a5u;
		memcpy(exp + 4 * i, &v, 4);
	}
	memset(seen, 0, sizeof(seen));
	r = launch_xform(t, 0, N * 4, CXL_CCM_XFORM_OP_XOR, 0xa5a5a5a5u, 0, &tag);
	if (r) {
		WHY("%s: LAUNCH: %s", ctx, strerror(-r));
		return 0;
	}
	memset(&e, 0, sizeof(e));
	e.tag = tag;
	e.out = exp;
	e.len = sizeof(exp);
	e.seen = seen;
	e.error = -1;
	if (consume(t, &e, 1, 5000))
		return 0;
	if (e.error != -1) {
		WHY("%s: error record status %d", ctx, e.error);
		return 0;
	}
	return 1;
}

/* launch something and wait for the error/final single record of it */
static int launch_raw_and_final(struct ten *t, struct cxl_ccm_launch *l, struct expect *e, int ms)
{
	int r = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, l);

	memset(e, 0, sizeof(*e));
	e->error = -1;
	if (r)
		return r;
	e->tag = l->tag;
	if (consume(t, e, 1, ms))
		return 1;
	return 0;
}

static int get_stats(int fd, struct cxl_ccm_stats *s, uint32_t flags)
{
	memset(s, 0, sizeof(*s));
	s->flags = flags;
	return xioctl(fd, CXL_CCM_IOC_STATS, s);
}

/* ------------------------------------------------------------------ tests */
static void test_info(void)
{
	int fd = open(DEV, O_RDWR);
	struct cxl_ccm_info i;
	int r;

	memset(&i, 0, sizeof(i));
	r = fd < 0 ? -errno : xioctl(fd, CXL_CCM_IOC_INFO, &i);
	WHY("INFO: r=%d abi %u tenants %u launch_slots %u max_release %u slots %u-%u rsv0 %u",
	    r, i.abi_version, i.max_tenants, i.launch_slots, i.max_release,
	    i.min_slot_size, i.max_slot_size, i.reserved0);
	CHECK(!r && i.abi_version == CXL_CCM_ABI_VERSION && i.max_tenants >= 1 &&
	      i.max_tenants <= 16 && i.launch_slots == CXL_CCM_LAUNCH_SLOTS &&
	      i.max_release == CXL_CCM_RELEASE_MAX && i.min_slot_size >= CXL_CCM_MIN_SLOT_SIZE &&
	      i.max_slot_size <= CXL_CCM_MAX_SLOT_SIZE && !i.reserved0 &&
	      !i.reserved[0] && !i.reserved[1] && !i.reserved[2] && !i.reserved[3] &&
	      (i.caps & CXL_CCM_CAP_MODE_AXLE) &&
	      (i.kernels & (1ull << CXL_CCM_KERNEL_STREAM_XFORM)) &&
	      (i.device_version >> 16) == 1,
	      "INFO: abi 1, limits and reserved fields as documented");
	info = i;
	diag("device %u.%u tenants %u caps %#llx kernels %#llx mem %llu",
	     i.device_version >> 16, i.device_version & 0xffff, i.max_tenants,
	     (unsigned long long)i.caps, (unsigned long long)i.kernels,
	     (unsigned long long)i.mem_size);

	memset(&i, 0, sizeof(i));
	i.flags = 1;
	r = xioctl(fd, CXL_CCM_IOC_INFO, &i);
	WHY("expected -EINVAL got %d", r);
	CHECK(r == -EINVAL, "INFO with nonzero flags is EINVAL");

	r = xioctl(fd, CXL_CCM_IOC_INFO, NULL);
	int r2 = xioctl(fd, CXL_CCM_IOC_INFO, bad_ptr);
	WHY("expected -EFAULT/-EFAULT got %d/%d", r, r2);
	CHECK(r == -EFAULT && r2 == -EFAULT, "INFO with NULL / unmapped argument is EFAULT");

	r = xioctl(fd, CXL_CCM_IOC_INFO, ro_page);
	WHY("expected -EFAULT got %d", r);
	CHECK(r == -EFAULT, "INFO into a read-only buffer is EFAULT");

	{
		char big[0x200];

		memset(big, 0, sizeof(big));
		r = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x80, char[0x58]), big);
		r2 = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x80, char[0x68]), big);
		int r3 = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x86, char[0x30]), big);
		int r4 = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x7f, struct cxl_ccm_info), big);

		WHY("expected ENOTTY x4 got %d %d %d %d", r, r2, r3, r4);
		CHECK(r == -ENOTTY && r2 == -ENOTTY && r3 == -ENOTTY && r4 == -ENOTTY,
		      "INFO with other encoded sizes and unknown commands are ENOTTY");
	}
	if (fd >= 0)
		close(fd);
}

static void test_before_configure(void)
{
	int fd = open(DEV, O_RDWR);
	struct cxl_ccm_launch l;
	struct cxl_ccm_release rel;
	struct cxl_ccm_wait w;
	struct cxl_ccm_stats s;
	struct cxl_ccm_stream_xform_args xa;
	int r1, r2, r3, r4, bad = 0;
	static const uint64_t offs[4] = { CXL_CCM_MMAP_HEADERS, CXL_CCM_MMAP_METADATA,
					  CXL_CCM_MMAP_PAYLOAD, CXL_CCM_MMAP_INPUT };

	memset(&l, 0, sizeof(l));
	memset(&xa, 0, sizeof(xa));
	l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
	l.input_size = 64;
	l.arg_size = sizeof(xa);
	r1 = xioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
	memset(&rel, 0, sizeof(rel));
	rel.flags = CXL_CCM_RELEASE_PUBLISH;
	r2 = xioctl(fd, CXL_CCM_IOC_RELEASE, &rel);
	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	r3 = xioctl(fd, CXL_CCM_IOC_WAIT, &w);
	r4 = get_stats(fd, &s, 0);
	WHY("expected EBADFD x4, got %d %d %d %d", r1, r2, r3, r4);
	CHECK(r1 == -EBADFD && r2 == -EBADFD && r3 == -EBADFD && r4 == -EBADFD,
	      "LAUNCH/RELEASE/WAIT/STATS before CONFIGURE are EBADFD");

	for (int i = 0; i < 4; i++) {
		void *p = mmap(NULL, pgsz, PROT_READ, MAP_SHARED, fd, offs[i]);

		if (p != MAP_FAILED) {
			munmap(p, pgsz);
			bad++;
		} else if (errno != EBADFD) {
			bad++;
			diag("mmap off %#llx: %s", (unsigned long long)offs[i], strerror(errno));
		}
	}
	WHY("%d of 4 mmaps did not fail with EBADFD", bad);
	CHECK(!bad, "mmap of every area before CONFIGURE is EBADFD");

	{
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, 0);

		WHY("poll returned %d revents %#x, expected POLLERR", n, p.revents);
		CHECK(n == 1 && (p.revents & POLLERR) && !(p.revents & POLLIN),
		      "poll() before CONFIGURE reports POLLERR");
	}

	/* now every malformed CONFIGURE on this same file */
	struct cxl_ccm_configure c;
	int r;
#define CFGTRY(field_stmt, expect_errno, desc) do {				\
		c = def_cfg(); field_stmt;					\
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);			\
		WHY("expected %d got %d", -(expect_errno), r);			\
		CHECK(r == -(expect_errno), desc);				\
	} while (0)
	CFGTRY(c.flags = 1u << 1, EINVAL, "CONFIGURE unknown flag bit is EINVAL");
	CFGTRY(c.flags = 0x80000000u, EINVAL, "CONFIGURE flag bit 31 is EINVAL");
	CFGTRY(c.reserved0 = 1, EINVAL, "CONFIGURE nonzero reserved0 is EINVAL");
	CFGTRY(c.reserved[3] = 1ull << 63, EINVAL, "CONFIGURE nonzero reserved[3] is EINVAL");
	CFGTRY(c.mode = 4, EINVAL, "CONFIGURE unknown mode 4 is EINVAL");
	CFGTRY(c.mode = 0xffffffffu, EINVAL, "CONFIGURE mode U32_MAX is EINVAL");
	CFGTRY(c.streaming_order = 2, EINVAL, "CONFIGURE unknown streaming order is EINVAL");
	{
		static const uint32_t badslots[] = { 0, 3, 48, 0xffffffffu, 1u << 31 };
		int nb = 0;

		for (unsigned i = 0; i < sizeof(badslots) / 4; i++) {
			c = def_cfg();
			c.metadata_slots = badslots[i];
			r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
			if (r != -EINVAL) {
				nb++;
				diag("metadata_slots %u: %d", badslots[i], r);
			}
			c = def_cfg();
			c.payload_slots = badslots[i];
			r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
			if (r != -EINVAL) {
				nb++;
				diag("payload_slots %u: %d", badslots[i], r);
			}
		}
		WHY("%d bad ring capacities not refused with EINVAL", nb);
		CHECK(!nb, "CONFIGURE ring capacity 0, 3, 48, U32_MAX, 2^31 is EINVAL");
	}
	{
		static const uint32_t badss[] = { 1, 3, 4, 24, 8192, 0x80000000u, 0xffffffffu };
		int nb = 0;

		for (unsigned i = 0; i < sizeof(badss) / 4; i++) {
			c = def_cfg();
			c.slot_size = badss[i];
			c.streaming_factor = 0;
			r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
			if (r != -EINVAL) {
				nb++;
				diag("slot_size %u: %d", badss[i], r);
			}
		}
		WHY("%d bad slot sizes not refused with EINVAL", nb);
		CHECK(!nb, "CONFIGURE slot size not a power of two or outside 8..4096 is EINVAL");
	}
	{
		/* SF: not a multiple of the slot, larger than the payload ring, extreme */
		static const uint32_t badsf[] = { 1, 33, 48, 512 * 32 * 2, 0x80000000u, 0xffffffffu };
		int nb = 0;

		for (unsigned i = 0; i < sizeof(badsf) / 4; i++) {
			c = def_cfg();
			c.streaming_factor = badsf[i];
			r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
			if (r != -EINVAL) {
				nb++;
				diag("streaming_factor %u: %d", badsf[i], r);
			}
		}
		WHY("%d bad streaming factors not refused with EINVAL", nb);
		CHECK(!nb, "CONFIGURE streaming factor not a slot multiple or beyond the payload ring is EINVAL");
	}
	{
		static const uint64_t badin[] = { 1, 4097, CXL_CCM_MMAP_REGION_SIZE + 4096,
						  1ull << 63, ~0ull, ~0ull - 4095 };
		int nb = 0;

		for (unsigned i = 0; i < sizeof(badin) / 8; i++) {
			c = def_cfg();
			c.input_size = badin[i];
			r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
			if (r != -EINVAL) {
				nb++;
				diag("input_size %#llx: %d", (unsigned long long)badin[i], r);
			}
		}
		WHY("%d bad input sizes not refused with EINVAL", nb);
		CHECK(!nb, "CONFIGURE input size not a page multiple or above the window is EINVAL");
	}
	{
		/* larger than this tenant's share: must fail somehow, not succeed */
		c = def_cfg();
		c.input_size = CXL_CCM_MMAP_REGION_SIZE;
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
		int big = r;

		c = def_cfg();
		c.metadata_slots = 1u << 30;
		c.payload_slots = 1u << 30;
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
		WHY("input 256 MiB: %d, rings 2^30 slots: %d (expected failures)", big, r);
		CHECK(big < 0 && r < 0 && big != -EBUSY && r != -EBUSY,
		      "CONFIGURE beyond the partition / max_ring_slots fails (not as EBUSY)");
	}
	r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, NULL);
	int rb = xioctl(fd, CXL_CCM_IOC_CONFIGURE, bad_ptr);
	WHY("NULL %d unmapped %d, expected EFAULT", r, rb);
	CHECK(r == -EFAULT && rb == -EFAULT, "CONFIGURE with NULL / unmapped argument is EFAULT");

	/* read-only well-formed argument: EFAULT and still no tenant */
	{
		struct cxl_ccm_configure *ro;

		c = def_cfg();
		mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
		memcpy(ro_page, &c, sizeof(c));
		mprotect(ro_page, pgsz, PROT_READ);
		ro = ro_page;
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, ro);
		r1 = xioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
		WHY("read-only CONFIGURE %d (want EFAULT), LAUNCH after %d (want EBADFD)", r, r1);
		CHECK(r == -EFAULT && r1 == -EBADFD,
		      "CONFIGURE into a read-only argument is EFAULT and leaves no tenant");
	}
	{
		char big[0x200];

		memset(big, 0, sizeof(big));
		memcpy(big, &c, sizeof(c));
		r = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x81, char[0x68]), big);
		r2 = xioctl(fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x81, char[0x78]), big);
		WHY("expected ENOTTY got %d %d", r, r2);
		CHECK(r == -ENOTTY && r2 == -ENOTTY, "CONFIGURE with another encoded size is ENOTTY");
	}
	/* after all that, a good CONFIGURE on the same file works */
	{
		struct cxl_ccm_configure in = def_cfg(), out;

		in.index_base = 0xfffffff0u;
		out = in;
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &out);
		WHY("r=%d tenant %u hs %llu ms %llu ps %llu", r, out.tenant,
		    (unsigned long long)out.headers_size, (unsigned long long)out.metadata_ring_size,
		    (unsigned long long)out.payload_ring_size);
		CHECK(!r && out.tenant < info.max_tenants &&
		      out.headers_size >= sizeof(struct cxl_ccm_ring_headers) &&
		      out.metadata_ring_size >= (uint64_t)in.metadata_slots * 32 &&
		      out.payload_ring_size >= (uint64_t)in.payload_slots * in.slot_size &&
		      out.mode == in.mode && out.slot_size == in.slot_size &&
		      out.metadata_slots == in.metadata_slots && out.input_size == in.input_size &&
		      out.index_base == in.index_base && out.streaming_factor == in.streaming_factor,
		      "CONFIGURE after failed attempts succeeds; outputs set, inputs come back as given");
		c = def_cfg();
		r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
		struct cxl_ccm_stats s2;
		int rs = get_stats(fd, &s2, 0);

		WHY("second CONFIGURE %d (want EBUSY), STATS tenant %u vs %u (%d)", r, s2.tenant, out.tenant, rs);
		CHECK(r == -EBUSY && !rs && s2.tenant == out.tenant,
		      "a second CONFIGURE is EBUSY and the tenant is unchanged");
	}
	close(fd);
}

static void test_headers_and_mmap(struct ten *t)
{
	/* As CONFIGURE left them: a job has run since. */
	const struct cxl_ccm_ring_headers *h = &t->hdr0;
	int bad = 0, r;
	void *p;

	WHY("md cap %u slot %u tail %u; pl cap %u slot %u tail %u; launch head %u slots %u; base %u",
	    h->metadata.capacity, h->metadata.slot_size, h->metadata.tail, h->payload.capacity,
	    h->payload.slot_size, h->payload.tail, h->launch.head, h->launch.slots, t->cfg.index_base);
	CHECK(h->metadata.capacity == t->cfg.metadata_slots &&
	      h->metadata.slot_size == CXL_CCM_METADATA_RECORD_SIZE &&
	      h->payload.capacity == t->cfg.payload_slots && h->payload.slot_size == t->cfg.slot_size &&
	      h->metadata.tail == t->cfg.index_base && h->payload.tail == t->cfg.index_base &&
	      h->launch.head == t->cfg.index_base && h->launch.slots == CXL_CCM_LAUNCH_SLOTS,
	      "ring headers: capacities, slot sizes, tails and launch head at index_base");

	static const uint64_t ro_offs[3] = { CXL_CCM_MMAP_HEADERS, CXL_CCM_MMAP_METADATA, CXL_CCM_MMAP_PAYLOAD };
	for (int i = 0; i < 3; i++) {
		p = mmap(NULL, pgsz, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, ro_offs[i]);
		if (p != MAP_FAILED) {
			munmap(p, pgsz);
			bad++;
		} else if (errno != EPERM) {
			diag("PROT_WRITE at %#llx: %s", (unsigned long long)ro_offs[i], strerror(errno));
			bad++;
		}
	}
	WHY("%d ring areas not refused with EPERM", bad);
	CHECK(!bad, "mmap of a ring with PROT_WRITE is EPERM");

	bad = 0;
	for (int i = 0; i < 3; i++) {
		p = mmap(NULL, pgsz, PROT_READ, MAP_SHARED, t->fd, ro_offs[i]);
		if (p == MAP_FAILED) {
			bad++;
			continue;
		}
		r = mprotect(p, pgsz, PROT_READ | PROT_WRITE);
		if (!(r < 0 && errno == EACCES)) {
			diag("mprotect RW at %#llx: %d %s", (unsigned long long)ro_offs[i], r, strerror(errno));
			bad++;
		}
		munmap(p, pgsz);
	}
	WHY("%d ring maps not refused mprotect(PROT_WRITE) with EACCES", bad);
	CHECK(!bad, "mprotect() of a ring mapping to writable is EACCES");

	bad = 0;
	static const uint64_t all[4] = { CXL_CCM_MMAP_HEADERS, CXL_CCM_MMAP_METADATA,
					 CXL_CCM_MMAP_PAYLOAD, CXL_CCM_MMAP_INPUT };
	for (int i = 0; i < 4; i++) {
		p = mmap(NULL, pgsz, PROT_READ, MAP_PRIVATE, t->fd, all[i]);
		if (p != MAP_FAILED) {
			munmap(p, pgsz);
			bad++;
			diag("MAP_PRIVATE at %#llx succeeded", (unsigned long long)all[i]);
		} else if (errno != EINVAL) {
			bad++;
			diag("MAP_PRIVATE at %#llx: %s", (unsigned long long)all[i], strerror(errno));
		}
	}
	WHY("%d MAP_PRIVATE maps not EINVAL", bad);
	CHECK(!bad, "MAP_PRIVATE of any area is EINVAL");

	bad = 0;
	{
		const uint64_t sz[4] = { t->cfg.headers_size, t->cfg.metadata_ring_size,
					 t->cfg.payload_ring_size, t->cfg.input_size };
		for (int i = 0; i < 4; i++) {
			int prot = i == 3 ? PROT_READ | PROT_WRITE : PROT_READ;

			p = mmap(NULL, sz[i] + pgsz, prot, MAP_SHARED, t->fd, all[i]);
			if (p != MAP_FAILED) {
				munmap(p, sz[i] + pgsz);
				bad++;
				diag("oversized map at %#llx succeeded", (unsigned long long)all[i]);
			} else if (errno != EINVAL) {
				bad++;
				diag("oversized map at %#llx: %s", (unsigned long long)all[i], strerror(errno));
			}
		}
	}
	WHY("%d oversized maps not EINVAL", bad);
	CHECK(!bad, "mmap longer than its object is EINVAL");

	bad = 0;
	{
		static const uint64_t badoff[] = { 0x40000000ull, 0x10001000ull, 0x30001000ull,
						   0x00001000ull, 0x7ffffffff000ull };
		for (unsigned i = 0; i < sizeof(badoff) / 8; i++) {
			p = mmap(NULL, pgsz, PROT_READ, MAP_SHARED, t->fd, badoff[i]);
			if (p != MAP_FAILED) {
				munmap(p, pgsz);
				bad++;
				diag("map at %#llx succeeded", (unsigned long long)badoff[i]);
			} else if (errno != EINVAL) {
				bad++;
				diag("map at %#llx: %s", (unsigned long long)badoff[i], strerror(errno));
			}
		}
	}
	WHY("%d maps at unknown / not-window-start offsets not EINVAL", bad);
	CHECK(!bad, "mmap at an unknown offset or inside a window is EINVAL");

	/* input: read-write; partial munmap and mprotect of parts */
	{
		uint8_t *q = mmap(NULL, t->cfg.input_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				  t->fd, CXL_CCM_MMAP_INPUT);
		int ok = q != MAP_FAILED;

		if (ok) {
			q[0] = 0x5a;
			q[pgsz + 7] = 0xa5;
			ok = t->in[0] == 0x5a && t->in[pgsz + 7] == 0xa5;
			ok &= !munmap(q + pgsz, pgsz);	/* hole in the middle */
			ok &= !mprotect(q, pgsz, PROT_READ);
			ok &= q[0] == 0x5a;
			ok &= !mprotect(q, pgsz, PROT_READ | PROT_WRITE);
			q[0] = 0x11;
			ok &= t->in[0] == 0x11;
			q[2 * pgsz] = 0x22;
			ok &= t->in[2 * pgsz] == 0x22;
			munmap(q, pgsz);
			munmap(q + 2 * pgsz, t->cfg.input_size - 2 * pgsz);
		}
		WHY("second input map / partial munmap / mprotect misbehaved");
		CHECK(ok, "input maps read-write and shared; partial munmap and mprotect keep the rest usable");
	}
	{
		/* partial unmap of a second metadata map, then a normal job */
		const uint8_t *m = mmap(NULL, t->cfg.metadata_ring_size, PROT_READ, MAP_SHARED,
					t->fd, CXL_CCM_MMAP_METADATA);
		if (m != MAP_FAILED && t->cfg.metadata_ring_size > (uint64_t)pgsz) {
			munmap((void *)m, pgsz);
			munmap((void *)(m + pgsz), t->cfg.metadata_ring_size - pgsz);
		} else if (m != MAP_FAILED) {
			munmap((void *)m, t->cfg.metadata_ring_size);
		}
		p = mmap(NULL, 0, PROT_READ, MAP_SHARED, t->fd, CXL_CCM_MMAP_HEADERS);
		int z = p == MAP_FAILED ? errno : 0;

		if (p != MAP_FAILED)
			munmap(p, pgsz);
		int ok = alive(t, "after mmap abuse");

		{ char w2[sizeof(why)]; memcpy(w2, why, sizeof(w2)); WHY("%.900s (zero-length map errno %d)", w2, z); }
		CHECK(ok && z == EINVAL, "after mmap abuse the tenant completes a checked job");
	}
}

static void test_launch_bad(struct ten *t)
{
	struct cxl_ccm_stats s0, s1;
	struct cxl_ccm_launch l, g;
	struct cxl_ccm_stream_xform_args xa;
	int r, nbad = 0, ninval = 0;
	uint32_t tag0 = 0, tag1 = 0;

	/* a good launch gives the reference tag */
	r = launch_xform(t, 0, 64, CXL_CCM_XFORM_OP_COPY, 0, 0, &tag0);
	{
		struct expect e = { .tag = tag0, .error = -1 };

		if (!r)
			consume(t, &e, 1, 3000);
	}
	get_stats(t->fd, &s0, 0);

	memset(&xa, 0, sizeof(xa));
	memset(&g, 0, sizeof(g));
	g.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
	g.input_size = 64;
	g.arg_size = sizeof(xa);
	memcpy(g.args, &xa, sizeof(xa));

#define LTRY(stmt, desc) do {						\
		l = g; stmt;						\
		r = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l);		\
		if (r != -EINVAL) { nbad++; diag("%s: got %d", desc, r); } \
		else ninval++;						\
	} while (0)
	LTRY(l.tag = 1, "nonzero tag");
	LTRY(l.tag = 0xffffffffu, "tag U32_MAX");
	LTRY(l.flags = CXL_CCM_LAUNCH_SYNC, "LAUNCH_SYNC outside BS");
	LTRY(l.flags = 1u << 7, "unknown flag");
	LTRY(l.flags = 0x80000000u, "flag bit 31");
	LTRY(l.reserved[0] = 1, "reserved[0]");
	LTRY(l.reserved[1] = 1ull << 63, "reserved[1]");
	LTRY(l.kernel_id = CXL_CCM_KERNEL_ID_LIMIT, "kernel id 64");
	LTRY(l.kernel_id = 63, "kernel id 63");
	LTRY(l.kernel_id = 0xffffffffu, "kernel id U32_MAX");
	if (!(info.kernels & 1))
		LTRY(l.kernel_id = CXL_CCM_KERNEL_NOP, "NOP (not advertised)");
	LTRY(l.arg_size = 33, "arg_size 33");
	LTRY(l.arg_size = 0xffffffffu, "arg_size U32_MAX");
	LTRY(l.input_offset = t->cfg.input_size, "offset at end");
	LTRY(l.input_offset = t->cfg.input_size - 32, "range crossing end");
	LTRY((l.input_offset = 4, l.input_size = t->cfg.input_size), "size = buffer from 4");
	LTRY(l.input_size = t->cfg.input_size + 4, "size above buffer");
	LTRY(l.input_size = 1ull << 32, "size 2^32");
	LTRY(l.input_size = ~0ull, "size U64_MAX");
	LTRY((l.input_offset = ~0ull - 3, l.input_size = 8), "offset+size overflow");
	LTRY((l.input_offset = ~0ull, l.input_size = 1), "offset U64_MAX");
	LTRY((l.input_offset = 1ull << 63, l.input_size = 1ull << 63), "sum wraps to 0");
	WHY("%d malformed launches not EINVAL", nbad);
	CHECK(!nbad, "malformed LAUNCH (tag, flags, SYNC, reserved, kernel, arg_size, input range, overflow) is EINVAL");

	r = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, NULL);
	int r2 = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, bad_ptr);
	mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
	memcpy(ro_page, &g, sizeof(g));
	mprotect(ro_page, pgsz, PROT_READ);
	int r3 = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, ro_page);
	{
		char big[0x200];

		memset(big, 0, sizeof(big));
		memcpy(big, &g, sizeof(g));
		int r4 = xioctl(t->fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x82, char[0x48]), big);
		int r5 = xioctl(t->fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x82, char[0x58]), big);

		WHY("NULL %d unmapped %d read-only %d (want EFAULT); sizes %d %d (want ENOTTY)", r, r2, r3, r4, r5);
		CHECK(r == -EFAULT && r2 == -EFAULT && r3 == -EFAULT && r4 == -ENOTTY && r5 == -ENOTTY,
		      "LAUNCH with NULL/unmapped/read-only argument is EFAULT, wrong size ENOTTY");
	}
	/* a read-only launch must not have launched anything: no stray record */
	usleep(50000);
	{
		uint32_t tail = cxl_ccm_load_tail(&t->hdr->metadata.tail);

		get_stats(t->fd, &s1, 0);
		WHY("launched %llu -> %llu, tail %u head %u", (unsigned long long)s0.launched,
		    (unsigned long long)s1.launched, tail, t->head);
		CHECK(s1.launched == s0.launched && tail == t->head,
		      "failed launches launch nothing (STATS.launched unchanged, no records)");
		WHY("errors %llu -> %llu after %d EINVAL launches", (unsigned long long)s0.errors,
		    (unsigned long long)s1.errors, ninval);
		CHECK(s1.errors >= s0.errors + (uint64_t)ninval,
		      "STATS.errors counts the failed launches");
	}
	r = launch_xform(t, 0, 64, CXL_CCM_XFORM_OP_COPY, 0, 0, &tag1);
	{
		struct expect e = { .tag = tag1, .error = -1 };
		int c = r ? -1 : consume(t, &e, 1, 3000);

		WHY("tags %u then %u (want consecutive), r=%d consume=%d", tag0, tag1, r, c);
		CHECK(!r && !c && tag1 == tag0 + 1, "failed launches take no tag: next tag is consecutive");
	}

	/* device-refused packets: one FINAL|ERROR record of length 0 */
	{
		struct expect e;
		int rr;

		l = g;
		l.input_size = 6;
		rr = launch_raw_and_final(t, &l, &e, 3000);
		WHY("r=%d records %d flags %#x len %u status %d", rr, e.records, e.last_flags, e.last_length, e.error);
		CHECK(!rr && e.records == 1 && e.last_flags == (CXL_CCM_MD_FLAG_FINAL | CXL_CCM_MD_FLAG_ERROR) &&
		      e.last_length == 0 && e.error == CXL_CCM_STATUS_BAD_ARGS,
		      "input size not a multiple of 4: one FINAL|ERROR record, STATUS_BAD_ARGS");
		l = g;
		l.input_size = 0;
		rr = launch_raw_and_final(t, &l, &e, 3000);
		WHY("r=%d records %d flags %#x len %u status %d", rr, e.records, e.last_flags, e.last_length, e.error);
		CHECK(!rr && e.records == 1 && e.last_flags == CXL_CCM_MD_FLAG_FINAL && e.last_length == 0 &&
		      e.error == -1, "empty input: one FINAL record of length 0");
	}
	{
		/* xform argument abuse: BAD_ARGS records (or EINVAL) */
		static const struct { uint32_t op, chunk, rsv; } bads[] = {
			{ 3, 0, 0 }, { 0xffffffffu, 0, 0 }, { 0, 3, 0 }, { 0, 2, 0 },
			{ 0, 4096, 0 }, { 0, 0xfffffffcu, 0 }, { 0, 0, 1 },
		};
		int nb = 0;

		for (unsigned i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
			struct expect e;

			memset(&xa, 0, sizeof(xa));
			xa.op = bads[i].op;
			xa.chunk_size = bads[i].chunk;
			xa.reserved0 = bads[i].rsv;
			l = g;
			memcpy(l.args, &xa, sizeof(xa));
			int rr = launch_raw_and_final(t, &l, &e, 3000);

			if (rr == -EINVAL)
				continue;
			if (rr || e.records != 1 || e.error != CXL_CCM_STATUS_BAD_ARGS) {
				nb++;
				diag("xform op %u chunk %u rsv %u: r=%d records %d status %d", bads[i].op,
				     bads[i].chunk, bads[i].rsv, rr, e.records, e.error);
			}
		}
		WHY("%d bad xform argument blocks not refused", nb);
		CHECK(!nb, "bad STREAM_XFORM args (op, chunk_size, reserved) end in one STATUS_BAD_ARGS record or EINVAL");
	}
	CHECK(alive(t, "after bad launches"), "after bad launches the tenant completes a checked job");
}

/* every advertised kernel with extreme argument words */
static void test_extreme_args(struct ten *t)
{
	static const uint32_t words[] = { 0, 1, 1u << 29, 1u << 31, 0xffffffffu };
	int nbad = 0, nl = 0;
	uint64_t t0 = now_ns();

	memset(t->in, 0x7f, 4096);
	for (uint32_t k = 0; k < CXL_CCM_KERNEL_ID_LIMIT; k++) {
		if (!(info.kernels & (1ull << k)))
			continue;
		for (unsigned p = 0; p < 5 + 5 * 4 + 3; p++) {
			struct cxl_ccm_launch l;
			uint32_t a[8];
			struct expect e;

			if (now_ns() - t0 > 40000000000ull)
				break;
			memset(&l, 0, sizeof(l));
			if (p < 5) {
				for (int i = 0; i < 8; i++)
					a[i] = words[p];
			} else if (p < 25) {
				/* pairs: word x in the even, y in the odd positions */
				for (int i = 0; i < 8; i++)
					a[i] = (i & 1) ? words[(p - 5) % 5] : words[(p - 5) / 5 + 1 > 4 ? 4 : (p - 5) / 5 + 1];
			} else {
				/* small sane prefix, extreme tail */
				for (int i = 0; i < 8; i++)
					a[i] = i < (int)(p - 24) * 2 ? 1u + i : 0xffffffffu;
			}
			l.kernel_id = k;
			l.arg_size = 32;
			l.input_size = (p & 1) ? 4096 : t->cfg.input_size;
			memcpy(l.args, a, 32);
			int r = xioctl(t->fd, CXL_CCM_IOC_LAUNCH, &l);

			nl++;
			if (r == -EINVAL)
				continue;
			if (r) {
				nbad++;
				diag("kernel %u pattern %u: LAUNCH %s", k, p, strerror(-r));
				continue;
			}
			memset(&e, 0, sizeof(e));
			e.tag = l.tag;
			e.error = -1;
			if (consume(t, &e, 1, 8000)) {
				nbad++;
				diag("kernel %u pattern %u: %s", k, p, why);
				why[0] = 0;
				/* resynchronise: give up on this tenant's stream */
				goto out;
			}
		}
	}
out:
	WHY("%d of %d extreme launches neither EINVAL nor completed with FINAL", nbad, nl);
	CHECK(!nbad && nl > 0, "extreme argument words for every advertised kernel: EINVAL or a FINAL record");
	{
		struct cxl_ccm_info i;
		int fd = open(DEV, O_RDWR);

		memset(&i, 0, sizeof(i));
		int r = fd < 0 ? -errno : xioctl(fd, CXL_CCM_IOC_INFO, &i);

		if (fd >= 0)
			close(fd);
		int ok = alive(t, "after extreme args");

		{ char w2[600]; snprintf(w2, sizeof(w2), "%.500s", why); WHY("INFO %d; %s", r, w2); }
		CHECK(!r && ok, "after extreme arguments the device answers INFO and a checked job");
	}
}

static void test_release_bad(struct ten *t)
{
	enum { NREC = 8 };
	struct cxl_ccm_metadata_record rec[NREC];
	struct cxl_ccm_release rel;
	struct cxl_ccm_release_entry ent[4];
	struct cxl_ccm_stats s0, s1;
	uint32_t tag = 0, base = t->head;
	int r, got = 0;

	/* 8 one-slot records (chunk 32), held unreleased */
	for (int i = 0; i < 64; i++)
		((uint32_t *)t->in)[i] = i;
	r = launch_xform(t, 0, NREC * 32, CXL_CCM_XFORM_OP_ADD, 1, 32, &tag);
	{
		struct cxl_ccm_wait w;

		memset(&w, 0, sizeof(w));
		w.min_records = NREC;
		w.metadata_head = t->head;
		w.timeout_ns = 3000000000ull;
		int rw = r ? r : xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);

		got = !rw;
		for (int i = 0; got && i < NREC; i++) {
			memcpy(&rec[i], &t->md[(base + i) & (t->hdr->metadata.capacity - 1)], sizeof(rec[i]));
			if (rec[i].seq != base + i || rec[i].tag != tag || rec[i].length != 32)
				got = 0;
		}
		WHY("launch %d wait %d: 8 held records of 32 B not seen", r, rw);
		CHECK(got, "WAIT for 8 records succeeds and the records are well-formed");
	}
	get_stats(t->fd, &s0, 0);
	int nb = 0;
#define RTRY(stmt, want, desc) do {						\
		memset(&rel, 0, sizeof(rel)); stmt;				\
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);			\
		if (r != (want)) { nb++; diag("%s: got %d want %d", desc, r, want); } \
	} while (0)
	ent[0].payload_index = rec[0].payload_index;
	ent[0].length = 32;
	RTRY((rel.flags = 1u << 2), -EINVAL, "unknown flag");
	RTRY((rel.flags = 0x80000000u), -EINVAL, "flag bit 31");
	RTRY((rel.reserved[0] = 1), -EINVAL, "reserved[0]");
	RTRY((rel.reserved[1] = 1), -EINVAL, "reserved[1]");
	RTRY((rel.count = CXL_CCM_RELEASE_MAX + 1, rel.entries = (uintptr_t)ent), -EINVAL, "count 4097");
	RTRY((rel.count = 0xffffffffu, rel.entries = (uintptr_t)ent), -EINVAL, "count U32_MAX");
	RTRY((rel.count = 1, rel.entries = 0), -EFAULT, "entries NULL");
	RTRY((rel.count = 1, rel.entries = (uintptr_t)bad_ptr), -EFAULT, "entries unmapped");
	RTRY((rel.count = 2, rel.entries = ~0ull - 7), -EFAULT, "entries at U64_MAX-7");
	RTRY((rel.flags = CXL_CCM_RELEASE_METADATA, rel.metadata_head = base + NREC + 1), -EINVAL,
	     "metadata head past tail");
	RTRY((rel.flags = CXL_CCM_RELEASE_METADATA, rel.metadata_head = base - 1), -EINVAL,
	     "metadata head behind released");
	RTRY((rel.flags = CXL_CCM_RELEASE_METADATA, rel.metadata_head = base + 0x80000000u), -EINVAL,
	     "metadata head half a lap away");
	WHY("%d malformed releases not refused as documented", nb);
	CHECK(!nb, "malformed RELEASE (flags, reserved, count, entries pointer, metadata head) is EINVAL/EFAULT");

	r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, NULL);
	int r2 = xioctl(t->fd, CXL_CCM_IOC_RELEASE, bad_ptr);
	{
		/* read-only argument with a valid entry: EFAULT and nothing released */
		struct cxl_ccm_release *ro = ro_page;

		memset(&rel, 0, sizeof(rel));
		rel.count = 1;
		rel.entries = (uintptr_t)ent;
		rel.flags = CXL_CCM_RELEASE_METADATA | CXL_CCM_RELEASE_PUBLISH;
		rel.metadata_head = base + 1;
		mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
		memcpy(ro_page, &rel, sizeof(rel));
		mprotect(ro_page, pgsz, PROT_READ);
		int r3 = xioctl(t->fd, CXL_CCM_IOC_RELEASE, ro);
		char big[0x200];

		memset(big, 0, sizeof(big));
		int r4 = xioctl(t->fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x83, char[0x28]), big);

		WHY("NULL %d unmapped %d read-only %d (EFAULT), size %d (ENOTTY)", r, r2, r3, r4);
		CHECK(r == -EFAULT && r2 == -EFAULT && r3 == -EFAULT && r4 == -ENOTTY,
		      "RELEASE with NULL/unmapped/read-only argument is EFAULT, wrong size ENOTTY");
	}
	/* entries: not received, other lap, duplicate; processed counts applied */
	{
		uint32_t pcap = t->hdr->payload.capacity;

		memset(&rel, 0, sizeof(rel));
		ent[0].payload_index = rec[1].payload_index;
		ent[0].length = 32;
		ent[1].payload_index = rec[7].payload_index + 1;	/* not received */
		ent[1].length = 32;
		rel.entries = (uintptr_t)ent;
		rel.count = 2;
		rel.processed = 0xdeadbeef;
		rel.metadata_head_published = 0xdeadbeef;
		rel.payload_head_published = 0xdeadbeef;
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		WHY("r=%d processed %u mhp %#x php %#x (want EINVAL, 1, written)", r, rel.processed,
		    rel.metadata_head_published, rel.payload_head_published);
		CHECK(r == -EINVAL && rel.processed == 1 && rel.metadata_head_published != 0xdeadbeef &&
		      rel.payload_head_published != 0xdeadbeef,
		      "RELEASE stops at an entry not received: EINVAL, processed=1, out fields written");

		memset(&rel, 0, sizeof(rel));
		ent[0].payload_index = rec[1].payload_index;	/* already released */
		rel.entries = (uintptr_t)ent;
		rel.count = 1;
		rel.processed = 0xdeadbeef;
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		int rdup = r, pdup = rel.processed;

		ent[0].payload_index = rec[2].payload_index + pcap;	/* another lap */
		rel.processed = 0xdeadbeef;
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		int rlap = r, plap = rel.processed;

		ent[0].payload_index = rec[2].payload_index - pcap;
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		int rlap2 = r;

		ent[0].payload_index = rec[2].payload_index;
		ent[0].length = 0xffffffffu;			/* absurd length */
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		int rlen = r;

		ent[0].length = 33 + 32 * 6;			/* covers rec 2..8: 8 not received */
		r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		int rlen2 = r;

		WHY("dup %d (p %d), lap+ %d (p %d), lap- %d, len U32_MAX %d, len past tail %d; want EINVAL, processed 0",
		    rdup, pdup, rlap, plap, rlap2, rlen, rlen2);
		CHECK(rdup == -EINVAL && pdup == 0 && rlap == -EINVAL && plap == 0 && rlap2 == -EINVAL &&
		      rlen == -EINVAL && rlen2 == -EINVAL,
		      "RELEASE of an already released slot, another lap or beyond the tail is EINVAL");
	}
	get_stats(t->fd, &s1, 0);
	WHY("errors %llu -> %llu", (unsigned long long)s0.errors, (unsigned long long)s1.errors);
	CHECK(s1.errors > s0.errors, "STATS.errors counts rejected releases");
	/* now release everything properly (rec 1 is already released) */
	{
		int ok = 1;

		memset(&rel, 0, sizeof(rel));
		ent[0].payload_index = rec[0].payload_index;
		ent[0].length = 32;
		rel.entries = (uintptr_t)ent;
		rel.count = 1;
		rel.flags = CXL_CCM_RELEASE_METADATA;
		rel.metadata_head = base + 2;
		ok &= !xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		for (int i = 2; i < NREC; i++) {
			ok &= !release_one(t, rec[i].payload_index, 32, base + i + 1);
			uint8_t pl[32];
			uint32_t expw[8];

			copy_payload(t, rec[i].payload_index, 32, pl);
			for (int j = 0; j < 8; j++)
				expw[j] = (uint32_t)(rec[i].result_offset / 4 + j) + 1;
			ok &= !memcmp(pl, expw, 32) && cxl_ccm_crc32c(pl, 32) == rec[i].checksum;
		}
		memset(&rel, 0, sizeof(rel));
		rel.flags = CXL_CCM_RELEASE_PUBLISH;
		ok &= !xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
		WHY("r processed %u mhp %u php %u; want mhp %u", rel.processed,
		    rel.metadata_head_published, rel.payload_head_published, base + NREC);
		ok &= rel.metadata_head_published == base + NREC &&
		      rel.payload_head_published == rec[NREC - 1].payload_index + 1;
		t->head = base + NREC;
		CHECK(ok, "after the refused releases the right ones succeed and PUBLISH reports exact heads");
	}
	/* metadata head cannot go back */
	memset(&rel, 0, sizeof(rel));
	rel.flags = CXL_CCM_RELEASE_METADATA;
	rel.metadata_head = t->head - 1;
	r = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
	WHY("going back: %d", r);
	CHECK(r == -EINVAL, "RELEASE_METADATA behind the released head is EINVAL");
	CHECK(alive(t, "after bad releases"), "after bad releases the tenant completes a checked job");
}

struct wait_launcher {
	struct ten *t;
	int delay_ms;
	int r;
	uint32_t tag;
};

static void *delayed_launch(void *a)
{
	struct wait_launcher *w = a;

	usleep(w->delay_ms * 1000);
	w->r = launch_xform(w->t, 0, 32, CXL_CCM_XFORM_OP_COPY, 0, 0, &w->tag);
	return NULL;
}

static void drain_tag(struct ten *t, uint32_t tag)
{
	struct expect e = { .tag = tag, .error = -1 };

	consume(t, &e, 1, 3000);
}

static void test_wait(struct ten *t)
{
	struct cxl_ccm_wait w;
	int r, nb = 0;
	uint64_t t0, dt;

#define WTRY(stmt, want, desc) do {					\
		memset(&w, 0, sizeof(w)); w.min_records = 1;		\
		w.metadata_head = t->head; stmt;			\
		r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);		\
		if (r != (want)) { nb++; diag("%s: got %d", desc, r); } \
	} while (0)
	WTRY(w.min_records = 0, -EINVAL, "min_records 0");
	WTRY(w.flags = 1u << 1, -EINVAL, "unknown flag");
	WTRY(w.reserved0 = 1, -EINVAL, "reserved0");
	WTRY(w.reserved[1] = 1, -EINVAL, "reserved[1]");
	WTRY(w.metadata_head = t->head + 1, -EINVAL, "head past tail");
	WTRY(w.metadata_head = t->head - 1, -EINVAL, "head behind released");
	WTRY(w.metadata_head = t->head + 0x80000000u, -EINVAL, "head half a lap away");
	WHY("%d malformed waits not EINVAL", nb);
	CHECK(!nb, "malformed WAIT (min_records 0, flags, reserved, head outside [released, tail]) is EINVAL");

	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = t->head;
	w.ready = 0xdeadbeef;
	w.metadata_tail = 0xdeadbeef;
	r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
	WHY("r=%d ready %u tail %u head %u", r, w.ready, w.metadata_tail, t->head);
	CHECK(r == -EAGAIN && w.ready == 0 && w.metadata_tail == t->head,
	      "WAIT with timeout 0 and nothing ready is EAGAIN with ready/tail written");

	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = t->head;
	w.timeout_ns = 50000000;
	w.ready = 0xdeadbeef;
	w.metadata_tail = 0xdeadbeef;
	t0 = now_ns();
	r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
	dt = now_ns() - t0;
	WHY("r=%d after %llu ms ready %u tail %u", r, (unsigned long long)(dt / 1000000), w.ready, w.metadata_tail);
	CHECK(r == -ETIMEDOUT && dt >= 45000000ull && dt < 2000000000ull && w.ready == 0 &&
	      w.metadata_tail == t->head, "WAIT of 50 ms with nothing ready is ETIMEDOUT after ~50 ms, outputs written");

	/* EFAULT before any wait, even with WAIT_FOREVER */
	{
		struct cxl_ccm_wait *ro = ro_page;

		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = CXL_CCM_WAIT_FOREVER;
		mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
		memcpy(ro_page, &w, sizeof(w));
		mprotect(ro_page, pgsz, PROT_READ);
		t0 = now_ns();
		r = xioctl(t->fd, CXL_CCM_IOC_WAIT, ro);
		dt = now_ns() - t0;
		int r1 = xioctl(t->fd, CXL_CCM_IOC_WAIT, NULL);
		int r2 = xioctl(t->fd, CXL_CCM_IOC_WAIT, bad_ptr);
		char big[0x200];

		memset(big, 0, sizeof(big));
		int r3 = xioctl(t->fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x85, char[0x38]), big);

		WHY("read-only %d in %llu ms, NULL %d, unmapped %d, size %d", r,
		    (unsigned long long)(dt / 1000000), r1, r2, r3);
		CHECK(r == -EFAULT && dt < 1000000000ull && r1 == -EFAULT && r2 == -EFAULT && r3 == -ENOTTY,
		      "WAIT_FOREVER into a read-only argument is EFAULT at once; NULL/unmapped EFAULT; size ENOTTY");
	}
	/* WAIT_FOREVER woken by a launch from another thread */
	{
		struct wait_launcher wl = { .t = t, .delay_ms = 100 };
		pthread_t th;

		spawn(&th, delayed_launch, &wl);
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = CXL_CCM_WAIT_FOREVER;
		r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
		pthread_join(th, NULL);
		WHY("WAIT %d ready %u launch %d", r, w.ready, wl.r);
		CHECK(!r && w.ready >= 1 && w.metadata_tail == t->head + w.ready && !wl.r,
		      "a WAIT_FOREVER is woken by a launch from another thread");
		drain_tag(t, wl.tag);
	}
	/* a signal ends a finite wait with EINTR, even with SA_RESTART */
	{
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = 400000000ull;
		w.ready = 0xdeadbeef;
		w.metadata_tail = 0xdeadbeef;
		nalarm = 0;
		set_alarm(30000, 1);
		t0 = now_ns();
		r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
		dt = now_ns() - t0;
		stop_alarm();
		WHY("r=%d after %llu ms, alarms %d, ready %u tail %u", r, (unsigned long long)(dt / 1000000),
		    (int)nalarm, w.ready, w.metadata_tail);
		CHECK(r == -EINTR && dt < 390000000ull && w.ready == 0 && w.metadata_tail == t->head,
		      "a signal ends a finite WAIT with EINTR (not restarted under SA_RESTART), outputs written");
	}
	/* WAIT_FOREVER is restarted under SA_RESTART and returns when records come */
	{
		struct wait_launcher wl = { .t = t, .delay_ms = 250 };
		pthread_t th;

		spawn(&th, delayed_launch, &wl);
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = CXL_CCM_WAIT_FOREVER;
		nalarm = 0;
		set_alarm(20000, 1);
		r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
		stop_alarm();
		pthread_join(th, NULL);
		WHY("r=%d alarms %d ready %u launch %d", r, (int)nalarm, w.ready, wl.r);
		CHECK(!r && nalarm > 2 && w.ready >= 1 && !wl.r,
		      "a WAIT_FOREVER interrupted by SA_RESTART signals is restarted and returns the records");
		drain_tag(t, wl.tag);
	}
	/* DEADLOCK flag with nothing pending: not EDEADLK, just EAGAIN */
	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = t->head;
	w.flags = CXL_CCM_WAIT_FLAG_DEADLOCK;
	r = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
	WHY("r=%d", r);
	CHECK(r == -EAGAIN, "WAIT_FLAG_DEADLOCK with nothing in flight and timeout 0 is EAGAIN, not EDEADLK");
	CHECK(alive(t, "after wait abuse"), "after WAIT abuse the tenant completes a checked job");
}

/* tiny payload ring, nobody releasing: EDEADLK; then everything arrives */
static void test_deadlock(void)
{
	struct cxl_ccm_configure c = def_cfg();
	struct ten t;
	int r, saw = 0, other = 0;
	uint32_t tag = 0;

	c.payload_slots = 2;
	c.metadata_slots = 64;
	c.streaming_factor = 64;
	c.index_base = 0x7ffffff0u;
	r = ten_open(&t, &c);
	if (!r) {
		enum { N = 1024 };
		static uint8_t exp[N], seen[N];

		for (int i = 0; i < N / 4; i++)
			((uint32_t *)t.in)[i] = i * 7;
		memcpy(exp, t.in, N);
		memset(seen, 0, sizeof(seen));
		r = launch_xform(&t, 0, N, CXL_CCM_XFORM_OP_COPY, 0, 32, &tag);
		uint64_t dl = now_ns() + 3000000000ull;

		while (!r && now_ns() < dl) {
			struct cxl_ccm_wait w;

			memset(&w, 0, sizeof(w));
			w.min_records = N / 32;
			w.metadata_head = t.head;
			w.flags = CXL_CCM_WAIT_FLAG_DEADLOCK;
			w.timeout_ns = 20000000;
			w.ready = 0xdeadbeef;
			int rw = xioctl(t.fd, CXL_CCM_IOC_WAIT, &w);

			if (rw == -EDEADLK) {
				saw = w.ready != 0xdeadbeef && w.ready <= 2 ? 1 : -1;
				break;
			}
			if (rw != -ETIMEDOUT && rw != -EAGAIN) {
				other = rw;
				break;
			}
		}
		WHY("launch %d, EDEADLK seen %d (ready written & <= 2 slots), other %d", r, saw, other);
		CHECK(saw == 1, "WAIT_FLAG_DEADLOCK: 32 records into a 2-slot payload ring unreleased is EDEADLK");
		struct expect e = { .tag = tag, .out = exp, .len = N, .seen = seen, .error = -1 };
		int cr = r ? -1 : consume(&t, &e, 1, 10000);

		{ char w2[600]; snprintf(w2, sizeof(w2), "%.500s", why); WHY("%s", w2); }
		CHECK(!cr && e.records == N / 32, "after releasing, all 32 records arrive intact through a 2-slot ring");
		ten_close(&t);
	} else {
		CHECK(0, "WAIT_FLAG_DEADLOCK: 32 records into a 2-slot payload ring unreleased is EDEADLK");
		CHECK(0, "after releasing, all 32 records arrive intact through a 2-slot ring");
	}
}

static void test_poll(struct ten *t)
{
	/* revents holds only the events asked for (and POLLERR/POLLHUP). */
	struct pollfd p = { .fd = t->fd, .events = POLLIN | POLLRDNORM };
	uint32_t tag = 0;
	int n, r;

	n = poll(&p, 1, 0);
	WHY("poll %d revents %#x", n, p.revents);
	CHECK(n == 0, "poll() with nothing ready reports nothing");
	uint64_t t0 = now_ns();

	n = poll(&p, 1, 100);
	uint64_t dt = now_ns() - t0;

	r = launch_xform(t, 0, 64, CXL_CCM_XFORM_OP_COPY, 0, 32, &tag);
	p.revents = 0;
	int n2 = poll(&p, 1, 3000);
	short rev = p.revents;

	/* copying the records alone does not clear POLLIN */
	usleep(20000);
	p.revents = 0;
	int n3 = poll(&p, 1, 0);
	short rev3 = p.revents;

	WHY("timeout poll %d in %llu ms; launch %d; poll %d %#x; again %d %#x", n,
	    (unsigned long long)(dt / 1000000), r, n2, rev, n3, rev3);
	CHECK(n == 0 && dt >= 90000000ull && !r && n2 == 1 && (rev & POLLIN) && (rev & POLLRDNORM) &&
	      n3 == 1 && (rev3 & POLLIN),
	      "poll() times out empty, then POLLIN|POLLRDNORM after a launch, held until release");
	drain_tag(t, tag);
	p.revents = 0;
	n = poll(&p, 1, 0);
	WHY("after release: poll %d %#x", n, p.revents);
	CHECK(n == 0, "no POLLIN once RELEASE_METADATA passed the records");
}

static void test_stats(struct ten *t)
{
	struct cxl_ccm_stats s, s2;
	int r, nb = 0;

	memset(&s, 0, sizeof(s));
	s.flags = 1u << 1;
	if ((r = xioctl(t->fd, CXL_CCM_IOC_STATS, &s)) != -EINVAL)
		nb++, diag("STATS flag 2: %d", r);
	if ((r = xioctl(t->fd, CXL_CCM_IOC_STATS, NULL)) != -EFAULT)
		nb++, diag("STATS NULL: %d", r);
	if ((r = xioctl(t->fd, CXL_CCM_IOC_STATS, bad_ptr)) != -EFAULT)
		nb++, diag("STATS unmapped: %d", r);
	WHY("%d bad STATS calls", nb);
	CHECK(!nb, "STATS: bad flags EINVAL, NULL/unmapped EFAULT");

	/* read-only argument with RESET: EFAULT and nothing reset */
	get_stats(t->fd, &s, 0);
	memset(&s2, 0, sizeof(s2));
	s2.flags = CXL_CCM_STATS_RESET;
	mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
	memcpy(ro_page, &s2, sizeof(s2));
	mprotect(ro_page, pgsz, PROT_READ);
	r = xioctl(t->fd, CXL_CCM_IOC_STATS, ro_page);
	get_stats(t->fd, &s2, 0);
	WHY("r=%d launched %llu -> %llu", r, (unsigned long long)s.launched, (unsigned long long)s2.launched);
	CHECK(r == -EFAULT && s.launched > 0 && s2.launched >= s.launched,
	      "STATS_RESET into a read-only argument is EFAULT and resets nothing");

	/* exact counters of one known job after a reset */
	get_stats(t->fd, &s, CXL_CCM_STATS_RESET);
	get_stats(t->fd, &s2, 0);
	WHY("tenant %u/%u; after reset launched %llu completed %llu", s.tenant, t->cfg.tenant,
	    (unsigned long long)s2.launched, (unsigned long long)s2.launches_completed);
	CHECK(s.tenant == t->cfg.tenant && s.launched > 0 && s2.launched == 0 && s2.launches_completed == 0 &&
	      s2.errors == 0 && s2.records == 0, "STATS_RESET returns the values and then zeroes them");
	int ok = alive(t, "stats job");
	uint64_t dl = now_ns() + 1000000000ull;

	do {
		get_stats(t->fd, &s2, 0);
		if (s2.records == 384 / t->cfg.streaming_factor && s2.payload_bytes == 384)
			break;
		usleep(5000);
	} while (now_ns() < dl);
	WHY("ok %d launched %llu completed %llu records %llu bytes %llu errors %llu", ok,
	    (unsigned long long)s2.launched, (unsigned long long)s2.launches_completed,
	    (unsigned long long)s2.records, (unsigned long long)s2.payload_bytes,
	    (unsigned long long)s2.errors);
	/* 96 words = 384 B at SF 64 ... chunk 0 means SF: 384/64 = 6 records */
	CHECK(ok && s2.launched == 1 && s2.launches_completed == 1 && s2.errors == 0 &&
	      s2.payload_bytes == 384 && s2.records == 384 / t->cfg.streaming_factor,
	      "STATS after one job: launched 1, completed 1, records and payload_bytes exact");
}

struct lthr {
	struct ten *t;
	int n;
	uint32_t tags[16];
	int fails;
};

static void *launcher(void *a)
{
	struct lthr *l = a;

	for (int i = 0; i < l->n; i++) {
		if (launch_xform(l->t, 4096, 32, CXL_CCM_XFORM_OP_XOR, 0xffffffffu, 0, &l->tags[i]))
			l->fails++;
		struct cxl_ccm_stats s;

		get_stats(l->t->fd, &s, 0);
	}
	return NULL;
}

static void test_threads(struct ten *t)
{
	enum { NT = 4, PER = 12 };
	struct lthr th[NT];
	pthread_t id[NT];
	struct expect ex[NT * PER];
	uint32_t base;
	int fails = 0, n = 0;

	memset(t->in + 4096, 0, 32);
	memset(th, 0, sizeof(th));
	{
		uint32_t tg;

		launch_xform(t, 4096, 32, CXL_CCM_XFORM_OP_COPY, 0, 0, &tg);
		drain_tag(t, tg);
		base = tg + 1;
	}
	for (int i = 0; i < NT; i++) {
		th[i].t = t;
		th[i].n = PER;
		spawn(&id[i], launcher, &th[i]);
	}
	for (int i = 0; i < NT; i++)
		pthread_join(id[i], NULL);
	static uint8_t ones[32];

	memset(ones, 0xff, sizeof(ones));
	uint64_t seenmask = 0;

	for (int i = 0; i < NT; i++) {
		fails += th[i].fails;
		for (int j = 0; j < PER; j++) {
			uint32_t d = th[i].tags[j] - base;

			if (d < 64)
				seenmask |= 1ull << d;
			memset(&ex[n], 0, sizeof(ex[n]));
			ex[n].tag = th[i].tags[j];
			ex[n].out = ones;
			ex[n].len = 32;
			ex[n].error = -1;
			n++;
		}
	}
	int c = consume(t, ex, n, 10000);
	char w2[600];

	snprintf(w2, sizeof(w2), "%.500s", why);

	WHY("fails %d, tag mask %#llx (want %#llx), consume %d: %s", fails, (unsigned long long)seenmask,
	    (unsigned long long)((1ull << (NT * PER)) - 1), c, w2);
	CHECK(!fails && seenmask == (1ull << (NT * PER)) - 1 && !c,
	      "4 threads launching on one file get distinct consecutive tags and every result");
	CHECK(alive(t, "after threads"), "after concurrent launches the tenant completes a checked job");
}

static void test_fork(struct ten *t)
{
	pid_t pid;
	int st = -1, pfd[2];
	uint32_t ctag = 0;

	if (pipe(pfd))
		pfd[0] = pfd[1] = -1;
	pid = fork();
	if (pid == 0) {
		/* child: reads the inherited maps, writes input, launches on the file */
		int ok = t->hdr->metadata.capacity == t->cfg.metadata_slots;
		uint32_t tag = 0;

		for (int i = 0; i < 8; i++)
			((uint32_t *)(t->in + 8192))[i] = 0x1000 + i;
		ok &= !launch_xform(t, 8192, 32, CXL_CCM_XFORM_OP_ADD, 1, 0, &tag);
		if (write(pfd[1], &tag, 4) != 4)
			ok = 0;
		_exit(ok ? 0 : 1);
	}
	if (pid > 0) {
		if (read(pfd[0], &ctag, 4) != 4)
			ctag = 0xffffffffu;
		waitpid(pid, &st, 0);
	}
	close(pfd[0]);
	close(pfd[1]);
	uint32_t exp[8];
	static uint8_t seen[32];

	for (int i = 0; i < 8; i++)
		exp[i] = 0x1001 + i;
	memset(seen, 0, sizeof(seen));
	struct expect e = { .tag = ctag, .out = (uint8_t *)exp, .len = 32, .seen = seen, .error = -1 };
	int c = pid > 0 ? consume(t, &e, 1, 3000) : -1;

	{ char w2[600]; snprintf(w2, sizeof(w2), "%.500s", why); WHY("child status %#x tag %u consume %d %s", st, ctag, c, w2); }
	CHECK(pid > 0 && WIFEXITED(st) && !WEXITSTATUS(st) && !c,
	      "a forked child uses the inherited maps and file; the parent consumes its launch");

	/* child killed while holding maps; parent keeps working */
	pid = fork();
	if (pid == 0) {
		volatile uint32_t x = 0;

		for (;;)
			x += t->hdr->metadata.tail + t->in[0];
	}
	usleep(20000);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	CHECK(pid > 0 && alive(t, "after child killed"), "after a child with maps is killed the tenant still works");
}

/* a mapping keeps the file and the tenant alive after close */
static void test_map_outlives_close(void)
{
	struct ten t;
	struct cxl_ccm_configure c = def_cfg();
	int r = ten_open(&t, &c);
	int ok = !r;

	if (!r) {
		close(t.fd);
		t.fd = -1;
		ok = t.hdr->metadata.capacity == c.metadata_slots && t.hdr->payload.capacity == c.payload_slots;
		t.in[5] = 0x42;
		ok &= t.in[5] == 0x42;
		ten_unmap(&t);
	}
	WHY("r=%d", r);
	CHECK(ok, "ring and input maps stay usable after close() of the file");
}

static void test_tenant_limit(struct ten *mine)
{
	int fds[20], nf = 0, nt = 0, extra = -1, r_extra = 0, r_launch = 0, r_after = -1, dup_t = 0;
	int configured;	/* files this test configured, before one is closed */
	uint32_t seen = 0;

	(void)mine;
	for (int i = 0; i < 20; i++)
		fds[i] = -1;
	/* take every free tenant number */
	for (int i = 0; i < 17; i++) {
		struct cxl_ccm_configure c = def_cfg();

		c.metadata_slots = 16;
		c.payload_slots = 16;
		c.streaming_factor = 32;
		c.input_size = 4096;
		int fd = open(DEV, O_RDWR);

		if (fd < 0)
			break;
		int r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);

		if (r == -EBUSY) {
			extra = fd;
			r_extra = r;
			break;
		}
		if (r) {
			diag("CONFIGURE #%d: %s", i, strerror(-r));
			close(fd);
			break;
		}
		if (c.tenant < 32 && (seen & (1u << c.tenant)))
			dup_t++;
		if (c.tenant < 32)
			seen |= 1u << c.tenant;
		fds[nf++] = fd;
	}
	nt = __builtin_popcount(seen);
	configured = nf;
	if (extra >= 0) {
		struct cxl_ccm_launch l;

		memset(&l, 0, sizeof(l));
		l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
		l.arg_size = 16;
		r_launch = xioctl(extra, CXL_CCM_IOC_LAUNCH, &l);
		if (nf > 0) {
			close(fds[nf - 1]);
			fds[--nf] = -1;
		}
		struct cxl_ccm_configure c = def_cfg();

		c.input_size = 4096;
		/* closing may take until the device acknowledges: retry briefly */
		for (int k = 0; k < 100; k++) {
			c = def_cfg();
			c.input_size = 4096;
			r_after = xioctl(extra, CXL_CCM_IOC_CONFIGURE, &c);
			if (r_after != -EBUSY)
				break;
			usleep(10000);
		}
	}
	WHY("%d files configured (+2 held by this test), distinct tenants %d dup %d; one more: %d (want EBUSY), "
	    "LAUNCH on it %d (want EBADFD)", configured, nt, dup_t, r_extra, r_launch);
	CHECK(extra >= 0 && r_extra == -EBUSY && !dup_t && r_launch == -EBADFD &&
	      (uint32_t)configured + 2 == info.max_tenants,
	      "CONFIGURE beyond max_tenants is EBUSY and that file stays no tenant");
	WHY("CONFIGURE after a close: %d", r_after);
	CHECK(r_after == 0, "once a tenant file closes, the refused file can CONFIGURE");
	for (int i = 0; i < nf; i++)
		close(fds[i]);
	if (extra >= 0)
		close(extra);
}

static void test_configure_signals(void)
{
	int nbad = 0, nintr = 0, nok = 0, tenant_left = 0;

	nalarm = 0;
	set_alarm(1000, 0);
	for (int i = 0; i < 25; i++) {
		int fd = open(DEV, O_RDWR);

		if (fd < 0) {
			if (errno != EINTR)
				nbad++;
			continue;
		}
		struct cxl_ccm_configure c = def_cfg();

		c.input_size = 4096;
		int r = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);

		if (!r) {
			nok++;
		} else if (r == -EINTR) {
			struct cxl_ccm_stats s;

			nintr++;
			if (get_stats(fd, &s, 0) != -EBADFD)
				tenant_left++;
		} else {
			nbad++;
			diag("CONFIGURE under signals: %s", strerror(-r));
		}
		close(fd);
	}
	stop_alarm();
	WHY("ok %d EINTR %d other %d, interrupted files that were tenants %d", nok, nintr, nbad, tenant_left);
	CHECK(!nbad && !tenant_left, "CONFIGURE under a 1 ms SIGALRM: success or EINTR only; EINTR leaves no tenant");
}

static void test_wrap(void)
{
	struct cxl_ccm_configure c = def_cfg();
	struct ten t;
	int ok = 0;

	c.metadata_slots = 4;
	c.payload_slots = 8;
	c.streaming_factor = 64;
	c.index_base = 0xfffffff9u;
	c.streaming_order = CXL_CCM_ORDER_IN_ORDER;
	if ((info.caps & CXL_CCM_CAP_IN_ORDER) && !ten_open(&t, &c)) {
		ok = 1;
		for (int k = 0; k < 4 && ok; k++)
			ok = alive(&t, "wrap");
		ok &= t.head - c.index_base > 4 && t.head < 0x100;
		ten_close(&t);
	}
	CHECK(ok, "4-slot/8-slot rings with counters crossing 2^32 deliver checked results (in order)");
}

int main(void)
{
	pthread_t wd;
	sigset_t s;
	struct ten t;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pgsz = sysconf(_SC_PAGESIZE);
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	signal(SIGPIPE, SIG_IGN);

	ro_page = mmap(NULL, pgsz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * A page kept mapped PROT_NONE: every access faults, and no later mmap can
	 * land there (an unmapped page was reused by the tenants' mappings, and the
	 * "unmapped" argument then read as garbage: EINVAL, not EFAULT).
	 */
	bad_ptr = mmap(NULL, pgsz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	printf("1..%d\n", PLAN);
	if (access(DEV, F_OK))
		diag("%s missing: every check will fail", DEV);

	test_info();			/* 5 */
	test_before_configure();	/* 3 + 16 */
	{
		struct cxl_ccm_configure c = def_cfg();

		r = ten_open(&t, &c);
		if (r)
			diag("main tenant: %s", why);
	}
	if (r) {
		memset(&t, 0, sizeof(t));
		t.fd = -1;
	}
	CHECK(!r && alive(&t, "first job"), "a configured AXLE tenant completes a checked STREAM_XFORM job");
	if (!r) {
		test_headers_and_mmap(&t);	/* 8 */
		test_launch_bad(&t);		/* 9 */
		test_release_bad(&t);		/* 9 */
		test_wait(&t);			/* 9 */
		test_poll(&t);			/* 3 */
		test_stats(&t);			/* 4 */
		test_threads(&t);		/* 2 */
		test_fork(&t);			/* 2 */
		test_extreme_args(&t);		/* 2 */
	}
	test_deadlock();			/* 2 */
	test_map_outlives_close();		/* 1 */
	test_wrap();				/* 1 */
	test_configure_signals();		/* 1 */
	{
		/* tenant limit: this tenant plus one configured in the test = 2 held */
		struct ten t2;
		struct cxl_ccm_configure c = def_cfg();
		int r2 = ten_open(&t2, &c);

		if (!r2) {
			test_tenant_limit(&t);	/* 2 */
			CHECK(alive(&t, "after tenant limit") && alive(&t2, "second tenant"),
			      "after the tenant limit both held tenants still complete checked jobs");
			ten_close(&t2);
		} else {
			CHECK(0, "CONFIGURE beyond max_tenants is EBUSY and that file stays no tenant");
			CHECK(0, "once a tenant file closes, the refused file can CONFIGURE");
			CHECK(0, "after the tenant limit both held tenants still complete checked jobs");
		}
	}
	ten_close(&t);
	{
		/* a fresh tenant after everything */
		struct ten t3;
		struct cxl_ccm_configure c = def_cfg();
		int ok = !ten_open(&t3, &c) && alive(&t3, "final");

		if (t3.fd >= 0)
			ten_close(&t3);
		CHECK(ok, "a fresh tenant after all abuse completes a checked job");
	}
	if (ntests != PLAN) {
		printf("# planned %d checks, ran %d\n", PLAN, ntests);
		return 1;
	}
	return nfail ? 1 : 0;
}
