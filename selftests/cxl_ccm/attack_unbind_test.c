// SPDX-License-Identifier: GPL-2.0
/*
 * attack_unbind_test.c - an adversarial black-box test of cxl_ccm's unbind
 * under concurrent tenants, written only from include/uapi/linux/cxl_ccm.h,
 * Documentation/cxl_ccm.rst and tools/lib/cxlccm/cxlccm_barrier.h, without
 * reading the driver or the software device.
 *
 * The target: accesses of different tenants now run side by side, and an
 * unbind revokes the device's hardware handle, waits for every access in
 * progress and only then disables the device ("Each access to the hardware
 * goes through the device's hw ... unbinding revokes it, waiting for every
 * access in progress (a sleepable SRCU read side) before the device is
 * disabled and unmapped"). So, on one device (/dev/cxl_ccm6 by default,
 * CXL_CCM_ATTACK_DEV=N picks another):
 *
 * - five data processes, one tenant each (AXLE out of order, RP twice, BS,
 *   AXLE_IRQ in order; with and without SA_RESTART), launch STREAM_XFORM
 *   jobs, poll or WAIT, verify every record (seq, tag, length, offset,
 *   CRC32C, exact data; each word's top byte names the tenant whose input
 *   it came from, so a foreign word is told from a wrong one) and release
 *   in tight loops; tags must be consecutive and STATS.launched exact;
 * - three waiters: WAIT_FOREVER with and without SA_RESTART and a finite
 *   WAIT with SA_RESTART, all signalled, none with records to come;
 * - one process throwing bad pointers at every ioctl (NULL, PROT_NONE,
 *   read-only, straddling into PROT_NONE, a kernel address);
 * - the parent signals them (SIGUSR1/SIGINT, aimed at LAUNCH and WAIT),
 *   watches every call for a hang, and unbinds and binds the device three
 *   times under that load; each time a sentinel tenant of its own, with
 *   unconsumed records and a mapped input buffer, checks the documented
 *   state after the unbind (ENODEV, POLLHUP, SIGBUS, readable rings).
 *
 * KTAP: the plan first, one line per check, exit 0 only if all passed;
 * every check, exit 4, if the device is missing. Bounded to ~85 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>
#include "../../tools/lib/cxlccm/cxlccm_barrier.h"

#define DRV		"/sys/bus/platform/drivers/cxl_ccm/"
#define PLAN		23
#define NCYCLES		3
#define MS		1000000ULL
#define SEC		1000000000ULL
#define BAIL_S		85	/* whole-test watchdog */
#define HANG_NS		(10 * SEC)	/* any call */
#define AFTER_UNBIND_NS	(5 * SEC)	/* a call in flight once unbind returned */
#define UNBIND_LIMIT_NS	(15 * SEC)
#define PHASE_LIMIT_NS	(20 * SEC)

#define MD_SLOTS	128
#define PL_SLOTS	256
#define SLOT		32
#define SF		64
#define INPUT_SIZE	16384
#define JOB_MAX		2048	/* bytes */
#define JOBS_MAX	3
#define WAIT_SENTINEL	0xdeadbeefu

enum role { R_DATA, R_FOREVER_RESTART, R_FOREVER_EINTR, R_DEADLINE, R_BADPTR, R_PARENT };
enum { C_NONE, C_OPEN, C_MMAP, C_CLOSE, C_INFO, C_CONFIGURE, C_LAUNCH, C_RELEASE, C_STATS,
       C_WAIT, C_POLL, C_NCMD };
static const char *const cmd_name[C_NCMD] = { "-", "open", "mmap", "close/munmap", "INFO",
	"CONFIGURE", "LAUNCH", "RELEASE", "STATS", "WAIT", "poll" };
enum { E_OK, E_ENODEV, E_EINTR, E_ETIMEDOUT, E_EAGAIN, E_EFAULT, E_EIO, E_EBUSY, E_EINVAL,
       E_OTHER, E_N };
static const char *const err_name[E_N] = { "ok", "ENODEV", "EINTR", "ETIMEDOUT", "EAGAIN",
	"EFAULT", "EIO", "EBUSY", "EINVAL", "other" };

struct wstat {
	char name[32];
	int role, mode, order, restart, skip;
	pid_t pid;
	/* live state, read by the parent */
	volatile int cmd, forever;
	/* its handlers are installed: until then a SIGINT would kill it */
	volatile int ready;
	volatile uint64_t call_start, open_start, jobs_cur, last_sig_send;
	/* results, written by the worker only */
	uint64_t jobs, records, launches, tenants, bound_jobs;
	uint64_t bad_data, bad_tag, foreign, bad_zero, bad_launch, bad_stats, bad_errno;
	uint64_t bad_post, bad_sigbus, bad_ring, bad_close, bad_restart, bad_waitout, bad_efault;
	uint64_t post_ok, sigbus_ok, ring_ok, efault_ok, fresh_ok;
	uint64_t sig_handled, sig_in_launch, sig_in_wait, launch_eintr, wait_eintr, wait_enodev;
	uint64_t tally[C_NCMD][E_N];
	int nlogged;
};

#define NW 9
struct shared {
	volatile int stop;
	volatile uint32_t unbind_started, unbind_done, bind_done;
	volatile uint64_t last_unbind_done_ns;
	struct wstat w[NW + 1];	/* + the parent's own slot */
};

static struct shared *sh;
static struct wstat *W;
static char node[64], devname[32];
static long pgsz;
static struct cxl_ccm_info info;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / SEC, ns % SEC };

	nanosleep(&ts, NULL);
}

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "# ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		return;
}

/* A failure of the current worker: count it, log the first few. */
#define WFAIL(ctr, ...) do {						\
	W->ctr++;							\
	if (W->nlogged++ < 8) {						\
		char m_[300];						\
		snprintf(m_, sizeof(m_), __VA_ARGS__);			\
		say("%s: %s: %s", W->name, #ctr, m_);			\
	}								\
} while (0)

static uint32_t rng_state;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static int bucket(int e)
{
	switch (e) {
	case 0: return E_OK;
	case ENODEV: return E_ENODEV;
	case EINTR: return E_EINTR;
	case ETIMEDOUT: return E_ETIMEDOUT;
	case EAGAIN: return E_EAGAIN;
	case EFAULT: return E_EFAULT;
	case EIO: return E_EIO;
	case EBUSY: return E_EBUSY;
	case EINVAL: return E_EINVAL;
	default: return E_OTHER;
	}
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		n = -errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : (n < 0 ? (int)-n : EIO);
}

static void call_begin(int c, int forever)
{
	W->forever = forever;
	W->call_start = now_ns();
	__atomic_store_n(&W->cmd, c, __ATOMIC_RELEASE);
}

static void call_end(void)
{
	__atomic_store_n(&W->cmd, C_NONE, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- signals */

static volatile uint64_t sig_count, sig_last_ns;

static void on_sig(int s)
{
	int c = __atomic_load_n(&W->cmd, __ATOMIC_ACQUIRE);

	sig_count++;
	sig_last_ns = now_ns();
	W->sig_handled++;
	if (c == C_LAUNCH)
		W->sig_in_launch++;
	else if (c == C_WAIT)
		W->sig_in_wait++;
}

static void on_stop(int s)
{
	(void)s;
}

static sigjmp_buf bus_jb;
static volatile sig_atomic_t bus_armed;
static const char *volatile bus_where = "?";

static void on_bus(int s)
{
	char m[160];
	int n;

	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jb, 1);
	}
	n = snprintf(m, sizeof(m), "# %s: unexpected SIGBUS in %s\n", W ? W->name : "?",
		     bus_where);
	if (write(1, m, n) < 0)
		_exit(3);
	_exit(3);
}

static void set_handlers(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_stop;
	sa.sa_flags = 0;	/* the stop signal always interrupts */
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_bus;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/* 1 if touching *p raised SIGBUS. */
static int probe_faults(volatile uint8_t *p, int wr)
{
	if (sigsetjmp(bus_jb, 1))
		return 1;
	bus_armed = 1;
	if (wr)
		*p = 0x5a;
	else
		(void)*p;
	bus_armed = 0;
	return 0;
}

/* ---------------------------------------------------------------- tenant */

struct job {
	uint32_t tag, nbytes, chunk, nchunks, seen_n, next_off;
	int final, active;
	uint8_t seen[JOB_MAX / 32];
	uint32_t exp[JOB_MAX / 4];
};

struct ten {
	int fd;
	struct cxl_ccm_configure cfg;
	const volatile struct cxl_ccm_ring_headers *hdr;
	const volatile uint8_t *md, *pl;
	volatile uint8_t *in;
	uint32_t head, next_tag, slot, mcap, pcap;
	uint32_t unb_at_open;
	uint64_t launched;
	struct job jobs[JOBS_MAX];
	int njobs;
};

enum { T_OK = 0, T_UNBOUND = -1, T_FAIL = -2, T_STOP = -3 };

/* An ENODEV or SIGBUS on @t is legitimate once an unbind began after it opened. */
static int legit(const struct ten *t)
{
	return sh->unbind_started > t->unb_at_open;
}

static int wid(void)
{
	return (int)(W - sh->w);
}

static int xio(struct ten *t, int c, unsigned long req, void *arg, int forever)
{
	int r;

	call_begin(c, forever);
	r = ioctl(t->fd, req, arg) < 0 ? errno : 0;
	call_end();
	W->tally[c][bucket(r)]++;
	return r;
}

/*
 * Whether @r is what the documentation allows for command @c of this worker:
 * success, ENODEV once unbound, EINTR where a signal may end the call, and
 * ETIMEDOUT/EAGAIN from WAIT. EIO, EBUSY, EINVAL and the rest are failures.
 */
static int errno_ok(const struct ten *t, int c, int r, int forever)
{
	if (!r)
		return 1;
	if (r == ENODEV)
		return legit(t);
	switch (c) {
	case C_LAUNCH:
	case C_CONFIGURE:
		/*
		 * The stop signal (SIGUSR2) is installed without SA_RESTART on
		 * purpose, so from sh->stop on EINTR is right for every call.
		 */
		return r == EINTR && (!W->restart || sh->stop);
	case C_WAIT:
		if (r == ETIMEDOUT || r == EAGAIN)
			return !forever;
		if (r == EINTR)
			return !forever || !W->restart || sh->stop;
		return 0;
	default:
		return 0;
	}
}

static void ten_unmap(struct ten *t)
{
	call_begin(C_CLOSE, 0);
	if (t->hdr && munmap((void *)t->hdr, t->cfg.headers_size))
		WFAIL(bad_close, "munmap headers: %s", strerror(errno));
	if (t->md && munmap((void *)t->md, t->cfg.metadata_ring_size))
		WFAIL(bad_close, "munmap metadata: %s", strerror(errno));
	if (t->pl && munmap((void *)t->pl, t->cfg.payload_ring_size))
		WFAIL(bad_close, "munmap payload: %s", strerror(errno));
	if (t->in && munmap((void *)t->in, t->cfg.input_size))
		WFAIL(bad_close, "munmap input: %s", strerror(errno));
	call_end();
	t->hdr = NULL;
	t->md = t->pl = NULL;
	t->in = NULL;
}

static void ten_close(struct ten *t)
{
	ten_unmap(t);
	if (t->fd >= 0) {
		call_begin(C_CLOSE, 0);
		if (close(t->fd))
			WFAIL(bad_close, "close: %s", strerror(errno));
		call_end();
	}
	t->fd = -1;
}

static struct cxl_ccm_configure make_cfg(int mode, int order, uint32_t base)
{
	struct cxl_ccm_configure c;

	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.slot_size = SLOT;
	c.metadata_slots = MD_SLOTS;
	c.payload_slots = PL_SLOTS;
	c.streaming_factor = SF;
	c.streaming_order = order;
	c.index_base = base;
	c.poll_interval_ns = 100000;
	c.input_size = INPUT_SIZE;
	return c;
}

static void *map1(struct ten *t, uint64_t len, int prot, uint64_t off, int *err)
{
	void *p;

	call_begin(C_MMAP, 0);
	p = mmap(NULL, len, prot, MAP_SHARED, t->fd, off);
	call_end();
	if (p == MAP_FAILED) {
		*err = errno;
		return NULL;
	}
	return p;
}

/*
 * Open and configure a tenant. T_OK, T_UNBOUND (the device is or was being
 * unbound: try again later), T_FAIL, T_STOP.
 */
static int ten_open(struct ten *t, int mode, int order, uint32_t base)
{
	uint32_t us, ud, bd;
	int r, err = 0, tries;
	uint64_t i;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	us = sh->unbind_started;
	bd = sh->bind_done;
	t->unb_at_open = sh->unbind_done;
	W->jobs_cur = 0;	/* before open_start: the parent reads them in that order */
	__atomic_store_n(&W->open_start, now_ns(), __ATOMIC_SEQ_CST);
	call_begin(C_OPEN, 0);
	t->fd = open(node, O_RDWR | O_CLOEXEC);
	err = errno;
	call_end();
	if (t->fd < 0) {
		W->tally[C_OPEN][bucket(err)]++;
		ud = sh->unbind_done;
		/* Bound throughout (no unbind since the last bind): a refusal is a bug. */
		if (us == bd && sh->unbind_started == us && ud == us && !sh->stop) {
			WFAIL(bad_errno, "open %s while bound: %s", node, strerror(err));
			sleep_ns(50 * MS);
			return T_FAIL;
		}
		if (err != ENOENT && err != ENODEV && err != ENXIO)
			WFAIL(bad_errno, "open %s during unbind: %s", node, strerror(err));
		return T_UNBOUND;
	}
	W->tally[C_OPEN][E_OK]++;
	t->cfg = make_cfg(mode, order, base);
	for (tries = 0;; tries++) {
		r = xio(t, C_CONFIGURE, CXL_CCM_IOC_CONFIGURE, &t->cfg, 0);
		if (r != EINTR || tries > 100)
			break;
		if (!errno_ok(t, C_CONFIGURE, r, 0))
			WFAIL(bad_restart, "CONFIGURE returned EINTR under SA_RESTART");
		/* "an interrupted one leaves the file no tenant": configure again */
		t->cfg = make_cfg(mode, order, base);
	}
	if (r) {
		if (!errno_ok(t, C_CONFIGURE, r, 0))
			WFAIL(bad_errno, "CONFIGURE: %s", strerror(r));
		ten_close(t);
		return r == ENODEV ? T_UNBOUND : T_FAIL;
	}
	W->tenants++;
	t->hdr = map1(t, t->cfg.headers_size, PROT_READ, CXL_CCM_MMAP_HEADERS, &err);
	if (t->hdr)
		t->md = map1(t, t->cfg.metadata_ring_size, PROT_READ, CXL_CCM_MMAP_METADATA, &err);
	if (t->md)
		t->pl = map1(t, t->cfg.payload_ring_size, PROT_READ, CXL_CCM_MMAP_PAYLOAD, &err);
	if (t->pl)
		t->in = map1(t, t->cfg.input_size, PROT_READ | PROT_WRITE, CXL_CCM_MMAP_INPUT,
			     &err);
	if (!t->in) {
		/* mmap is not an ioctl: ENODEV once unbound is the documented answer */
		if (!(err == ENODEV && legit(t)))
			WFAIL(bad_errno, "mmap of a tenant area: %s", strerror(err));
		ten_close(t);
		return legit(t) ? T_UNBOUND : T_FAIL;
	}
	t->mcap = MD_SLOTS;
	t->pcap = PL_SLOTS;
	t->slot = SLOT;
	t->head = base;
	t->next_tag = base;
	bus_where = "ring headers right after CONFIGURE";
	if (t->hdr->metadata.capacity != MD_SLOTS || t->hdr->payload.capacity != PL_SLOTS ||
	    t->hdr->payload.slot_size != SLOT || t->hdr->metadata.tail != base) {
		WFAIL(bad_ring, "ring headers: md cap %u pl cap %u slot %u tail %u (base %u)",
		      t->hdr->metadata.capacity, t->hdr->payload.capacity,
		      t->hdr->payload.slot_size, t->hdr->metadata.tail, base);
		ten_close(t);
		return T_FAIL;
	}
	/* A new tenant's input buffer reads as zeros, whoever held it before. */
	if (sigsetjmp(bus_jb, 1)) {
		if (!legit(t))
			WFAIL(bad_sigbus, "SIGBUS reading a fresh input buffer while bound");
		ten_close(t);
		return T_UNBOUND;
	}
	bus_armed = 1;
	for (i = 0; i < INPUT_SIZE; i += 4)
		if (*(volatile uint32_t *)(t->in + i)) {
			bus_armed = 0;
			WFAIL(bad_zero, "fresh input buffer: word %llu is %#x",
			      (unsigned long long)i / 4, *(volatile uint32_t *)(t->in + i));
			break;
		}
	bus_armed = 0;
	W->fresh_ok++;
	W->jobs_cur = 0;
	return T_OK;
}

/* ---------------------------------------------------------------- records */

static void copy_pl(const struct ten *t, uint32_t pidx, uint32_t len, uint8_t *dst)
{
	uint64_t ringb = (uint64_t)t->pcap * t->slot;
	uint64_t off = (uint64_t)(pidx & (t->pcap - 1)) * t->slot;
	uint64_t first = len < ringb - off ? len : ringb - off;

	memcpy(dst, (const void *)(t->pl + off), first);
	if (len > first)
		memcpy(dst + first, (const void *)t->pl, len - first);
}

static void read_rec(const struct ten *t, uint32_t idx, struct cxl_ccm_metadata_record *r)
{
	memcpy(r, (const void *)(t->md + (uint64_t)(idx & (t->mcap - 1)) * sizeof(*r)),
	       sizeof(*r));
}

static struct job *find_job(struct ten *t, uint32_t tag)
{
	int i;

	for (i = 0; i < t->njobs; i++)
		if (t->jobs[i].active && t->jobs[i].tag == tag)
			return &t->jobs[i];
	return NULL;
}

/*
 * Verify the record at @idx. @track: count its chunk (a record seen twice is
 * a failure); without it (after an unbind, re-reading what was not released)
 * only its content is checked. @ctr_ring: count failures as ring failures.
 */
static int check_rec(struct ten *t, uint32_t idx, int track, int after_unbind)
{
	static uint8_t buf[JOB_MAX];
	struct cxl_ccm_metadata_record r;
	struct job *j;
	uint32_t c, i, words, want, mine = 0x40u + wid();
	int foreign = 0, wrong = 0;

#define RFAIL(...) do {						\
		if (after_unbind)					\
			WFAIL(bad_ring, __VA_ARGS__);			\
		else							\
			WFAIL(bad_data, __VA_ARGS__);			\
		return -1;						\
	} while (0)
	read_rec(t, idx, &r);
	if (r.seq != idx)
		RFAIL("record %u has seq %u", idx, r.seq);
	j = find_job(t, r.tag);
	if (!j) {
		W->bad_tag++;
		RFAIL("record %u: tag %u is no launch of this tenant", idx, r.tag);
	}
	if ((r.flags & CXL_CCM_MD_FLAG_ERROR) || r.status)
		RFAIL("tag %u: error record, status %u flags %#x", r.tag, r.status, r.flags);
	if (track && j->final)
		RFAIL("tag %u: record after FINAL", r.tag);
	if (r.result_offset % j->chunk || r.result_offset >= j->nbytes)
		RFAIL("tag %u: result_offset %llu (chunk %u, size %u)", r.tag,
		      (unsigned long long)r.result_offset, j->chunk, j->nbytes);
	want = j->nbytes - r.result_offset < j->chunk ? j->nbytes - r.result_offset : j->chunk;
	if (r.length != want)
		RFAIL("tag %u off %llu: length %u, want %u", r.tag,
		      (unsigned long long)r.result_offset, r.length, want);
	copy_pl(t, r.payload_index, r.length, buf);
	if (cxl_ccm_crc32c(buf, r.length) != r.checksum)
		RFAIL("tag %u off %llu: CRC32C %#x, record says %#x", r.tag,
		      (unsigned long long)r.result_offset, cxl_ccm_crc32c(buf, r.length),
		      r.checksum);
	words = r.length / 4;
	for (i = 0; i < words; i++) {
		uint32_t v;

		memcpy(&v, buf + 4 * i, 4);
		if (v == j->exp[r.result_offset / 4 + i])
			continue;
		if ((v >> 24) != mine && (v >> 24) >= 0x40 && (v >> 24) < 0x40 + NW + 1)
			foreign++;
		else
			wrong++;
	}
	if (foreign) {
		W->foreign++;
		RFAIL("tag %u off %llu: %d words carry another tenant's mark", r.tag,
		      (unsigned long long)r.result_offset, foreign);
	}
	if (wrong)
		RFAIL("tag %u off %llu: %d wrong words", r.tag,
		      (unsigned long long)r.result_offset, wrong);
	if (!track)
		return 0;
	c = r.result_offset / j->chunk;
	if (j->seen[c])
		RFAIL("tag %u off %llu: chunk delivered twice", r.tag,
		      (unsigned long long)r.result_offset);
	if (t->cfg.streaming_order == CXL_CCM_ORDER_IN_ORDER && r.result_offset != j->next_off)
		RFAIL("in order, tag %u: offset %llu, expected %u", r.tag,
		      (unsigned long long)r.result_offset, j->next_off);
	j->next_off = r.result_offset + r.length;
	j->seen[c] = 1;
	j->seen_n++;
	if (r.flags & CXL_CCM_MD_FLAG_FINAL) {
		if (j->seen_n != j->nchunks)
			RFAIL("tag %u: FINAL after %u of %u chunks", r.tag, j->seen_n, j->nchunks);
		j->final = 1;
	}
	W->records++;
	return 0;
#undef RFAIL
}

/* WAIT's outputs: written on success, EAGAIN, ETIMEDOUT and EINTR. */
static void check_wait_out(const struct ten *t, const struct cxl_ccm_wait *w, int r)
{
	if (w->metadata_tail == WAIT_SENTINEL || w->ready == WAIT_SENTINEL ||
	    w->metadata_tail - t->head > t->mcap || w->ready != w->metadata_tail - t->head)
		WFAIL(bad_waitout, "WAIT %s: ready %#x metadata_tail %#x (head %u)",
		      r ? strerror(r) : "ok", w->ready, w->metadata_tail, t->head);
}

/* One step of consumption: wait for records or verify and release them. */
static int consume_step(struct ten *t, int allow_wait)
{
	struct cxl_ccm_release_entry e[MD_SLOTS];
	struct cxl_ccm_release rel;
	struct cxl_ccm_metadata_record rec;
	uint32_t tail, idx, n = 0, k, split;
	int r, spin;

	bus_where = "the ring mappings";
	tail = cxl_ccm_load_tail(&t->hdr->metadata.tail);
	if (tail == t->head && t->cfg.mode == CXL_CCM_MODE_AXLE) {
		for (spin = 0; spin < 200 && tail == t->head; spin++) {
			sched_yield();
			tail = cxl_ccm_load_tail(&t->hdr->metadata.tail);
		}
	}
	if (tail == t->head) {
		struct cxl_ccm_wait w;

		if (!allow_wait)
			return T_OK;
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = (rnd() & 7) ? 50 * MS : 0;
		w.ready = WAIT_SENTINEL;
		w.metadata_tail = WAIT_SENTINEL;
		r = xio(t, C_WAIT, CXL_CCM_IOC_WAIT, &w, 0);
		if (r == ENODEV && legit(t))
			return T_UNBOUND;
		if (!errno_ok(t, C_WAIT, r, 0)) {
			WFAIL(bad_errno, "WAIT: %s", strerror(r));
			return r == ENODEV ? T_UNBOUND : T_FAIL;
		}
		if (r == EINTR)
			W->wait_eintr++;
		check_wait_out(t, &w, r);
		if (!r && w.ready < 1)
			WFAIL(bad_waitout, "WAIT succeeded with ready %u", w.ready);
		return T_OK;
	}
	if (tail - t->head > t->mcap) {
		WFAIL(bad_data, "metadata tail %u is more than a capacity past head %u", tail,
		      t->head);
		return T_FAIL;
	}
	for (idx = t->head; idx != tail; idx++) {
		if (check_rec(t, idx, 1, 0))
			return T_FAIL;
		read_rec(t, idx, &rec);
		e[n].payload_index = rec.payload_index;
		e[n].length = rec.length;
		n++;
	}
	/* The payloads must not change before they are released (credit). */
	for (k = 0; k < n; k++) {
		static uint8_t b2[JOB_MAX];

		read_rec(t, t->head + k, &rec);
		copy_pl(t, rec.payload_index, rec.length, b2);
		if (cxl_ccm_crc32c(b2, rec.length) != rec.checksum) {
			WFAIL(bad_data, "tag %u: payload overwritten before release", rec.tag);
			return T_FAIL;
		}
	}
	/* Release in two calls, the later records first (the gap-aware head). */
	split = n > 1 ? rnd() % n : 0;
	memset(&rel, 0, sizeof(rel));
	if (split) {
		rel.entries = (uintptr_t)&e[split];
		rel.count = n - split;
		r = xio(t, C_RELEASE, CXL_CCM_IOC_RELEASE, &rel, 0);
		if (r)
			goto bad_release;
	}
	memset(&rel, 0, sizeof(rel));
	rel.entries = (uintptr_t)e;
	rel.count = split ? split : n;
	rel.flags = CXL_CCM_RELEASE_METADATA | ((rnd() & 3) ? 0 : CXL_CCM_RELEASE_PUBLISH);
	rel.metadata_head = tail;
	r = xio(t, C_RELEASE, CXL_CCM_IOC_RELEASE, &rel, 0);
	if (r)
		goto bad_release;
	t->head = tail;
	return T_OK;
bad_release:
	if (r == ENODEV && legit(t))
		return T_UNBOUND;
	WFAIL(bad_errno, "RELEASE of verified records: %s (processed %u)", strerror(r),
	      rel.processed);
	return r == ENODEV ? T_UNBOUND : T_FAIL;
}

/* Fill the input of job @j at @off; T_UNBOUND on a legitimate SIGBUS. */
static int fill_input(struct ten *t, struct job *j, uint32_t off, uint32_t op, uint32_t operand)
{
	uint32_t i, v, mark = (0x40u + wid()) << 24;

	if (sigsetjmp(bus_jb, 1)) {
		if (legit(t))
			return T_UNBOUND;
		WFAIL(bad_sigbus, "SIGBUS writing the input buffer while bound");
		return T_FAIL;
	}
	bus_armed = 1;
	for (i = 0; i < j->nbytes / 4; i++) {
		v = mark | (rnd() & 0x7fffff);
		*(volatile uint32_t *)(t->in + off + 4 * i) = v;
		j->exp[i] = op == CXL_CCM_XFORM_OP_XOR ? v ^ operand :
			    op == CXL_CCM_XFORM_OP_ADD ? v + operand : v;
	}
	bus_armed = 0;
	return T_OK;
}

static void launch_args(struct cxl_ccm_launch *l, uint64_t off, uint32_t size, uint32_t op,
			uint32_t operand, uint32_t chunk)
{
	struct cxl_ccm_stream_xform_args xa;

	memset(l, 0, sizeof(*l));
	memset(&xa, 0, sizeof(xa));
	xa.op = op;
	xa.operand = operand;
	xa.chunk_size = chunk;
	l->kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
	l->input_offset = off;
	l->input_size = size;
	l->arg_size = sizeof(xa);
	memcpy(l->args, &xa, sizeof(xa));
}

/* Launch job @j; its tag must be the next one. */
static int do_launch(struct ten *t, struct job *j, uint32_t off, uint32_t op, uint32_t operand)
{
	struct cxl_ccm_launch l;
	int r, tries;

	for (tries = 0; tries < 200; tries++) {
		launch_args(&l, off, j->nbytes, op, operand, j->chunk);
		r = xio(t, C_LAUNCH, CXL_CCM_IOC_LAUNCH, &l, 0);
		if (!r)
			break;
		if (l.tag)
			WFAIL(bad_launch, "failed LAUNCH (%s) wrote tag %u", strerror(r), l.tag);
		if (r == ENODEV && legit(t))
			return T_UNBOUND;
		if (r == EINTR)
			W->launch_eintr++;
		if (!errno_ok(t, C_LAUNCH, r, 0)) {
			if (r == EINTR)
				WFAIL(bad_restart, "LAUNCH returned EINTR under SA_RESTART");
			else
				WFAIL(bad_errno, "LAUNCH: %s", strerror(r));
			if (r != EINTR)
				return r == ENODEV ? T_UNBOUND : T_FAIL;
		}
		/* EINTR: nothing launched, no tag taken; launch again */
	}
	if (r)
		return T_FAIL;
	if (l.tag != t->next_tag) {
		WFAIL(bad_launch, "LAUNCH tag %u, expected %u (tags are consecutive from "
		      "index_base; a failed launch takes none)", l.tag, t->next_tag);
		t->next_tag = l.tag;
	}
	t->next_tag++;
	t->launched++;
	W->launches++;
	j->tag = l.tag;
	j->active = 1;
	return T_OK;
}

static int check_stats(struct ten *t)
{
	struct cxl_ccm_stats s;
	int r;

	memset(&s, 0, sizeof(s));
	r = xio(t, C_STATS, CXL_CCM_IOC_STATS, &s, 0);
	if (r == ENODEV && legit(t))
		return T_UNBOUND;
	if (r) {
		WFAIL(bad_errno, "STATS: %s", strerror(r));
		return T_FAIL;
	}
	if (s.launched != t->launched)
		WFAIL(bad_stats, "STATS.launched %llu, %llu launches succeeded",
		      (unsigned long long)s.launched, (unsigned long long)t->launched);
	return T_OK;
}

/* One round: launch 1..3 jobs (BS: 1..2), consume all, check STATS. */
static int data_round(struct ten *t)
{
	uint32_t nj = 1 + rnd() % (t->cfg.mode == CXL_CCM_MODE_BS ? 2 : JOBS_MAX), k;
	uint64_t deadline;
	int r, done;

	t->njobs = nj;
	for (k = 0; k < nj; k++) {
		struct job *j = &t->jobs[k];
		uint32_t op = rnd() % 3, operand = rnd();

		memset(j, 0, sizeof(*j));
		j->nbytes = 64 * (1 + rnd() % (JOB_MAX / 64));
		j->chunk = (rnd() & 1) ? 32 : 64;
		j->nchunks = (j->nbytes + j->chunk - 1) / j->chunk;
		operand &= op == CXL_CCM_XFORM_OP_ADD ? 0x7fffff : 0xffffff;
		r = fill_input(t, j, k * 4096, op, operand);
		if (r)
			return r;
		r = do_launch(t, j, k * 4096, op, operand);
		if (r)
			return r;
	}
	deadline = now_ns() + 15 * SEC;
	for (;;) {
		for (done = 1, k = 0; k < nj; k++)
			done &= t->jobs[k].final;
		if (done)
			break;
		if (now_ns() > deadline) {
			WFAIL(bad_data, "jobs not complete after 15 s (head %u, tail %u)", t->head,
			      cxl_ccm_load_tail(&t->hdr->metadata.tail));
			return T_FAIL;
		}
		if (sh->stop && now_ns() > deadline - 12 * SEC)
			return T_STOP;
		r = consume_step(t, 1);
		if (r)
			return r;
	}
	r = check_stats(t);
	if (r)
		return r;
	for (k = 0; k < nj; k++)
		t->jobs[k].active = 0;
	W->jobs += nj;
	W->jobs_cur += nj;
	return T_OK;
}

static int expect_enodev(int r, const char *cmd)
{
	if (r == ENODEV)
		return 0;
	WFAIL(bad_post, "%s after unbind: %s", cmd, r ? strerror(r) : "success");
	return 1;
}

/*
 * The state an unbind leaves an old file in: every ioctl ENODEV, poll()
 * POLLHUP, the rings readable with what they held, every input page SIGBUS
 * on a read and on a write, munmap and close clean.
 */
static void after_unbind(struct ten *t, int check_ring)
{
	struct cxl_ccm_info i;
	struct cxl_ccm_launch l;
	struct cxl_ccm_release rel;
	struct cxl_ccm_wait w;
	struct cxl_ccm_stats s;
	struct pollfd pfd;
	uint32_t seen = sh->unbind_started, tail, idx;
	uint64_t t0 = now_ns(), p;
	int r, bad = 0;

	/* The zap comes at the end of the unbind: wait for the write to return. */
	while (sh->unbind_done < seen) {
		if (now_ns() - t0 > 20 * SEC) {
			WFAIL(bad_post, "unbind #%u never completed", seen);
			ten_close(t);
			return;
		}
		sleep_ns(2 * MS);
	}
	memset(&i, 0, sizeof(i));
	r = xio(t, C_INFO, CXL_CCM_IOC_INFO, &i, 0);
	bad += expect_enodev(r, "INFO");
	launch_args(&l, 0, 64, CXL_CCM_XFORM_OP_COPY, 0, 32);
	r = xio(t, C_LAUNCH, CXL_CCM_IOC_LAUNCH, &l, 0);
	bad += expect_enodev(r, "LAUNCH");
	memset(&rel, 0, sizeof(rel));
	rel.flags = CXL_CCM_RELEASE_METADATA;
	rel.metadata_head = t->head;
	r = xio(t, C_RELEASE, CXL_CCM_IOC_RELEASE, &rel, 0);
	bad += expect_enodev(r, "RELEASE");
	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = t->head;
	r = xio(t, C_WAIT, CXL_CCM_IOC_WAIT, &w, 0);
	bad += expect_enodev(r, "WAIT");
	memset(&s, 0, sizeof(s));
	r = xio(t, C_STATS, CXL_CCM_IOC_STATS, &s, 0);
	bad += expect_enodev(r, "STATS");
	pfd.fd = t->fd;
	pfd.events = POLLIN | POLLRDNORM;
	pfd.revents = 0;
	call_begin(C_POLL, 0);
	r = poll(&pfd, 1, 0);
	call_end();
	if (r != 1 || !(pfd.revents & POLLHUP)) {
		bad++;
		WFAIL(bad_post, "poll after unbind: %d, revents %#x (want POLLHUP)", r,
		      pfd.revents);
	}
	if (!bad)
		W->post_ok++;

	if (check_ring) {
		bus_where = "a ring mapping after unbind";
		tail = cxl_ccm_load_tail(&t->hdr->metadata.tail);
		if (tail - t->head > t->mcap) {
			WFAIL(bad_ring, "after unbind: tail %u, head %u", tail, t->head);
		} else {
			for (idx = t->head; idx != tail; idx++)
				if (check_rec(t, idx, 0, 1))
					break;
			if (idx == tail)
				W->ring_ok++;
		}
	}

	bad = 0;
	for (p = 0; p < t->cfg.input_size; p += pgsz) {
		if (!probe_faults(t->in + p, 0))
			bad++;
		if (!probe_faults(t->in + p, 1))
			bad++;
	}
	if (bad)
		WFAIL(bad_sigbus, "%d input page accesses after unbind did not SIGBUS", bad);
	else
		W->sigbus_ok++;
	ten_close(t);
}

/* ---------------------------------------------------------------- roles */

static int data_tenant(struct ten *t)
{
	int r;

	for (;;) {
		if (sh->stop)
			return T_STOP;
		r = data_round(t);
		if (r)
			return r;
		if (sh->unbind_done == sh->unbind_started && sh->unbind_done == sh->bind_done)
			W->bound_jobs++;
	}
}

/* WAIT with no records to come: only signals, the unbind or the stop end it. */
static int waiter_tenant(struct ten *t)
{
	struct cxl_ccm_wait w;
	uint64_t c0, t0, t1, h;
	int r, forever = W->role != R_DEADLINE;

	for (;;) {
		if (sh->stop)
			return T_STOP;
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		w.timeout_ns = forever ? CXL_CCM_WAIT_FOREVER : 300 * MS;
		w.ready = WAIT_SENTINEL;
		w.metadata_tail = WAIT_SENTINEL;
		c0 = sig_count;
		t0 = now_ns();
		r = xio(t, C_WAIT, CXL_CCM_IOC_WAIT, &w, forever);
		t1 = now_ns();
		h = sig_last_ns;
		if (r == ENODEV) {
			if (!legit(t)) {
				WFAIL(bad_errno, "WAIT: ENODEV while bound");
				return T_FAIL;
			}
			W->wait_enodev++;
			return T_UNBOUND;
		}
		if (!errno_ok(t, C_WAIT, r, forever)) {
			if (r == EINTR)
				WFAIL(bad_restart, "WAIT_FOREVER returned EINTR under SA_RESTART");
			else
				WFAIL(bad_errno, "WAIT (%s): %s", forever ? "forever" : "300 ms",
				      r ? strerror(r) : "success without records");
			if (r != EINTR)
				return T_FAIL;
		}
		if (r == EINTR) {
			W->wait_eintr++;
			if (sig_count == c0 && !sh->stop)
				WFAIL(bad_restart, "WAIT returned EINTR without a signal");
			check_wait_out(t, &w, r);
		} else if (r == ETIMEDOUT) {
			check_wait_out(t, &w, r);
			if (t1 - t0 < 295 * MS)
				WFAIL(bad_restart, "300 ms WAIT timed out after %llu ms",
				      (unsigned long long)(t1 - t0) / MS);
			/*
			 * A handler that ran well inside the call, with the call
			 * going on for long after: the signal did not end this
			 * finite wait (restarted, or ignored).
			 */
			if (sig_count != c0 && h > t0 + 5 * MS && t1 > h + 100 * MS)
				WFAIL(bad_restart, "a signal %llu ms into a 300 ms WAIT did not end "
				      "it (returned ETIMEDOUT %llu ms later)",
				      (unsigned long long)(h - t0) / MS,
				      (unsigned long long)(t1 - h) / MS);
		}
	}
}

static void *ro_page, *none_page, *straddle;
#define KPTR ((void *)0xffff888000000000UL)

/* A bad pointer call: EFAULT, or ENODEV once unbound; nothing else. */
static int bad_call(struct ten *t, int c, unsigned long req, void *arg, const char *what)
{
	int r = xio(t, c, req, arg, 0);

	if (r == EFAULT) {
		W->efault_ok++;
		return T_OK;
	}
	if (r == ENODEV && legit(t))
		return T_UNBOUND;
	WFAIL(bad_efault, "%s with %s: %s", cmd_name[c], what, r ? strerror(r) : "success");
	return r == ENODEV ? T_UNBOUND : T_OK;
}

#define BAD4(t, c, req, type) do {					\
	void *const ptrs_[] = { NULL, none_page, KPTR,			\
		(char *)straddle + pgsz - sizeof(type) / 2 };		\
	const char *const names_[] = { "NULL", "PROT_NONE", "a kernel address", \
		"a struct straddling into PROT_NONE" };			\
	unsigned int k_;						\
	for (k_ = 0; k_ < 4; k_++) {					\
		int r_ = bad_call(t, c, req, ptrs_[k_], names_[k_]);	\
		if (r_)							\
			return r_;					\
	}								\
} while (0)

static void ro_write(size_t off, const void *src, size_t len)
{
	mprotect(ro_page, pgsz, PROT_READ | PROT_WRITE);
	memcpy((char *)ro_page + off, src, len);
	mprotect(ro_page, pgsz, PROT_READ);
}

/* A CONFIGURE refused with EFAULT leaves a fresh file configurable. */
static int bad_configure(void)
{
	struct cxl_ccm_configure cfg = make_cfg(CXL_CCM_MODE_AXLE, 0, 0);
	struct ten f;
	int r, k;

	memset(&f, 0, sizeof(f));
	f.unb_at_open = sh->unbind_done;
	call_begin(C_OPEN, 0);
	f.fd = open(node, O_RDWR | O_CLOEXEC);
	call_end();
	if (f.fd < 0)
		return T_OK;	/* unbound right now; ten_open checks opens */
	ro_write(256, &cfg, sizeof(cfg));
	{
		void *const ptrs[] = { NULL, none_page, KPTR, (char *)ro_page + 256,
			(char *)straddle + pgsz - sizeof(cfg) / 2 };
		const char *const names[] = { "NULL", "PROT_NONE", "a kernel address",
			"a read-only page", "a struct straddling into PROT_NONE" };

		for (k = 0; k < 5; k++) {
			r = bad_call(&f, C_CONFIGURE, CXL_CCM_IOC_CONFIGURE, ptrs[k], names[k]);
			if (r)
				goto out;
		}
	}
	r = xio(&f, C_CONFIGURE, CXL_CCM_IOC_CONFIGURE, &cfg, 0);
	if (r && !(r == ENODEV && legit(&f)))
		WFAIL(bad_efault, "CONFIGURE after its EFAULTs: %s", strerror(r));
out:
	call_begin(C_CLOSE, 0);
	if (close(f.fd))
		WFAIL(bad_close, "close: %s", strerror(errno));
	call_end();
	return T_OK;
}

static int badptr_tenant(struct ten *t)
{
	struct cxl_ccm_info i;
	struct cxl_ccm_launch l;
	struct cxl_ccm_release rel;
	struct cxl_ccm_release_entry e;
	struct cxl_ccm_stats s;
	struct cxl_ccm_wait w;
	struct cxl_ccm_metadata_record rec;
	struct job *j = &t->jobs[0];
	uint32_t tail;
	uint64_t deadline;
	int r;

	for (;;) {
		if (sh->stop)
			return T_STOP;
		memset(&i, 0, sizeof(i));
		ro_write(0, &i, sizeof(i));
		BAD4(t, C_INFO, CXL_CCM_IOC_INFO, struct cxl_ccm_info);
		if ((r = bad_call(t, C_INFO, CXL_CCM_IOC_INFO, ro_page, "a read-only page")))
			return r;
		if ((r = bad_configure()))
			return r;

		/* a read-only LAUNCH takes no tag: the next good one is consecutive */
		launch_args(&l, 0, 256, CXL_CCM_XFORM_OP_COPY, 0, 32);
		ro_write(512, &l, sizeof(l));
		BAD4(t, C_LAUNCH, CXL_CCM_IOC_LAUNCH, struct cxl_ccm_launch);
		if ((r = bad_call(t, C_LAUNCH, CXL_CCM_IOC_LAUNCH, (char *)ro_page + 512,
				  "a read-only page")))
			return r;
		memset(j, 0, sizeof(*j));
		t->njobs = 1;
		j->nbytes = 256;
		j->chunk = 256 > SF ? SF : 256;
		j->nchunks = j->nbytes / j->chunk;
		if ((r = fill_input(t, j, 0, CXL_CCM_XFORM_OP_COPY, 0)))
			return r;
		if ((r = do_launch(t, j, 0, CXL_CCM_XFORM_OP_COPY, 0)))
			return r;

		/* WAIT: bad pointers, and read-only (its outputs cannot be written) */
		memset(&w, 0, sizeof(w));
		w.min_records = 1;
		w.metadata_head = t->head;
		ro_write(1280, &w, sizeof(w));
		BAD4(t, C_WAIT, CXL_CCM_IOC_WAIT, struct cxl_ccm_wait);
		if ((r = bad_call(t, C_WAIT, CXL_CCM_IOC_WAIT, (char *)ro_page + 1280,
				  "a read-only page")))
			return r;

		/* wait for the first record, then bad RELEASEs of it must release nothing */
		deadline = now_ns() + 10 * SEC;
		while ((tail = cxl_ccm_load_tail(&t->hdr->metadata.tail)) == t->head) {
			if (now_ns() > deadline) {
				WFAIL(bad_data, "no record in 10 s");
				return T_FAIL;
			}
			memset(&w, 0, sizeof(w));
			w.min_records = 1;
			w.metadata_head = t->head;
			w.timeout_ns = 50 * MS;
			r = xio(t, C_WAIT, CXL_CCM_IOC_WAIT, &w, 0);
			if (r == ENODEV && legit(t))
				return T_UNBOUND;
			if (!errno_ok(t, C_WAIT, r, 0)) {
				WFAIL(bad_errno, "WAIT: %s", strerror(r));
				return T_FAIL;
			}
		}
		if (check_rec(t, t->head, 0, 0))
			return T_FAIL;
		read_rec(t, t->head, &rec);
		e.payload_index = rec.payload_index;
		e.length = rec.length;
		BAD4(t, C_RELEASE, CXL_CCM_IOC_RELEASE, struct cxl_ccm_release);
		memset(&rel, 0, sizeof(rel));
		rel.entries = (uintptr_t)none_page;
		rel.count = 1;
		rel.flags = CXL_CCM_RELEASE_METADATA;
		rel.metadata_head = t->head + 1;
		if ((r = bad_call(t, C_RELEASE, CXL_CCM_IOC_RELEASE, &rel, "entries in PROT_NONE")))
			return r;
		rel.entries = (uintptr_t)KPTR;
		if ((r = bad_call(t, C_RELEASE, CXL_CCM_IOC_RELEASE, &rel,
				  "entries at a kernel address")))
			return r;
		rel.entries = (uintptr_t)&e;
		ro_write(768, &rel, sizeof(rel));
		if ((r = bad_call(t, C_RELEASE, CXL_CCM_IOC_RELEASE, (char *)ro_page + 768,
				  "a read-only page")))
			return r;
		/* then the rest of the job, every record checked and released for real */
		deadline = now_ns() + 15 * SEC;
		while (!j->final) {
			if (now_ns() > deadline) {
				WFAIL(bad_data, "job not complete in 15 s");
				return T_FAIL;
			}
			r = consume_step(t, 1);
			if (r)
				return r;
		}
		j->active = 0;

		/* STATS: a read-only STATS_RESET must not reset */
		memset(&s, 0, sizeof(s));
		s.flags = CXL_CCM_STATS_RESET;
		ro_write(1024, &s, sizeof(s));
		BAD4(t, C_STATS, CXL_CCM_IOC_STATS, struct cxl_ccm_stats);
		if ((r = bad_call(t, C_STATS, CXL_CCM_IOC_STATS, (char *)ro_page + 1024,
				  "a read-only page")))
			return r;
		if ((r = check_stats(t)))
			return r;
		W->jobs++;
		W->jobs_cur++;
	}
}

static void worker_main(int wi)
{
	struct ten t;
	uint32_t base;
	int r;

	W = &sh->w[wi];
	W->pid = getpid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGALRM, SIG_DFL);	/* not the parent's bail-out */
	alarm(BAIL_S + 20);	/* never outlive the test */
	set_handlers(W->restart);
	__atomic_store_n(&W->ready, 1, __ATOMIC_RELEASE);
	rng_state = 0x9e3779b9u * (wi + 1) ^ (uint32_t)now_ns();
	if (!rng_state)
		rng_state = 1;
	while (!sh->stop) {
		base = 0xffffffc0u + 8 * wi + (rnd() & 3);	/* counters wrap early */
		r = ten_open(&t, W->mode, W->order, base);
		if (r) {
			sleep_ns((r == T_UNBOUND ? 5 : 20) * MS);
			continue;
		}
		switch (W->role) {
		case R_DATA:
			r = data_tenant(&t);
			break;
		case R_BADPTR:
			r = badptr_tenant(&t);
			break;
		default:
			r = waiter_tenant(&t);
			break;
		}
		if (r == T_UNBOUND)
			after_unbind(&t, W->role == R_DATA || W->role == R_BADPTR);
		else
			ten_close(&t);
	}
	_exit(0);
}

/* ---------------------------------------------------------------- parent */

static int nresults, nfailed;
static char why[600];

static void result(int ok, const char *desc)
{
	nresults++;
	if (!ok)
		nfailed++;
	printf("%sok %d %s\n", ok ? "" : "not ", nresults, desc);
	if (!ok && why[0])
		printf("# %s\n", why);
	why[0] = 0;
	fflush(stdout);
}

#define WHY(...) snprintf(why + strlen(why), sizeof(why) - strlen(why), __VA_ARGS__)

static int cycles_done, hung, worker_died, unbind_bad, bind_bad, progress_bad, baseline_ok;
static volatile sig_atomic_t sysfs_child;
static uint64_t sent_launch, sent_wait;

static void kill_workers(int sig)
{
	int i;

	for (i = 0; i < NW; i++)
		if (sh->w[i].pid > 0)
			kill(sh->w[i].pid, sig);
}

static void on_bail(int s)
{
	static const char m[] = "Bail out! the test ran past its time limit\n";

	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(1);
	kill_workers(SIGKILL);
	if (!sysfs_child && access(DRV, F_OK) == 0)
		write_str(DRV "bind", devname);
	_exit(1);
}

static void print_stack(pid_t pid)
{
	char path[64], buf[2048];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		say("  %d: %s", pid, line);
}

/*
 * One monitoring tick: signal the workers (aimed at LAUNCH and WAIT) and
 * look for calls that hang.
 */
static void monitor_tick(void)
{
	uint64_t now = now_ns(), u = sh->last_unbind_done_ns;
	static uint64_t last_sig;
	int i;

	for (i = 0; i < NW; i++) {
		struct wstat *w = &sh->w[i];
		int c = __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE);
		uint64_t st = w->call_start;

		if (w->skip || w->pid <= 0 || !c || c != __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE))
			continue;
		if ((!w->forever && now - st > HANG_NS && now > st) ||
		    (u && st < u && now - u > AFTER_UNBIND_NS)) {
			hung++;
			say("HANG: %s in %s for %llu ms (%llu ms after the last unbind returned)",
			    w->name, cmd_name[c], (unsigned long long)(now - st) / MS,
			    u ? (unsigned long long)(now - u) / MS : 0ULL);
			print_stack(w->pid);
			kill(w->pid, SIGKILL);
			w->skip = 1;
		}
	}
	if (now - last_sig < 3 * MS)
		return;
	last_sig = now;
	i = rand() % NW;
	{
		struct wstat *w = &sh->w[i];
		int c = __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE);
		int sig = (rand() & 1) ? SIGUSR1 : SIGINT;

		if (w->skip || w->pid <= 0 || !__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE))
			return;
		switch (w->role) {
		case R_DATA:
			if (c == C_LAUNCH || c == C_WAIT || !(rand() % 8)) {
				kill(w->pid, sig);
				sent_launch += c == C_LAUNCH;
				sent_wait += c == C_WAIT;
			}
			break;
		case R_DEADLINE:
			/* at most one per 100 ms, 20 ms into a wait */
			if (c == C_WAIT && now - w->call_start > 20 * MS &&
			    now - w->last_sig_send > 100 * MS) {
				w->last_sig_send = now;
				kill(w->pid, sig);
			}
			break;
		case R_FOREVER_RESTART:
		case R_FOREVER_EINTR:
			if (now - w->last_sig_send > 40 * MS) {
				w->last_sig_send = now;
				kill(w->pid, sig);
			}
			break;
		default:
			if (!(rand() % 4))
				kill(w->pid, sig);
		}
	}
}

static void reap_workers(int final)
{
	int i, st;

	for (i = 0; i < NW; i++) {
		struct wstat *w = &sh->w[i];
		pid_t p;

		if (w->pid <= 0)
			continue;
		p = waitpid(w->pid, &st, final ? 0 : WNOHANG);
		if (p != w->pid)
			continue;
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !w->skip) {
			worker_died++;
			say("%s (pid %d) ended with %s %d", w->name, w->pid,
			    WIFEXITED(st) ? "exit status" : "signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
		w->pid = -w->pid;
	}
}

/* Tick until @done() or @limit ns pass; returns whether done. */
static int monitor_until(int (*done)(void), uint64_t limit)
{
	uint64_t t0 = now_ns();

	for (;;) {
		if (done && done())
			return 1;
		if (now_ns() - t0 > limit)
			return done ? 0 : 1;
		monitor_tick();
		reap_workers(0);
		sleep_ns(1 * MS + rand() % (2 * MS));
	}
}

/* Every worker on a tenant opened after the last unbind, and working. */
static int all_progressed(void)
{
	uint64_t u = sh->last_unbind_done_ns;
	int i;

	for (i = 0; i < NW; i++) {
		struct wstat *w = &sh->w[i];

		if (w->skip || w->pid <= 0)
			continue;
		if (w->open_start <= u)
			return 0;
		if ((w->role == R_DATA || w->role == R_BADPTR) && !w->jobs_cur)
			return 0;
		if (w->role != R_DATA && w->role != R_BADPTR && w->cmd != C_WAIT)
			return 0;
	}
	return 1;
}

/* Write @what to DRV@file in a child, monitoring meanwhile. */
static int sysfs_write(const char *file, uint64_t *took)
{
	uint64_t t0 = now_ns();
	int st, reported = 0;
	char path[128];
	pid_t p;

	snprintf(path, sizeof(path), DRV "%s", file);
	p = fork();
	if (!p) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(write_str(path, devname));
	}
	sysfs_child = p;
	for (;;) {
		pid_t q = waitpid(p, &st, WNOHANG);

		if (q == p)
			break;
		if (now_ns() - t0 > UNBIND_LIMIT_NS && !reported) {
			reported = 1;
			hung++;
			say("HANG: writing %s to %s for %llu s", devname, path,
			    (unsigned long long)(now_ns() - t0) / SEC);
			print_stack(p);
			return ETIMEDOUT;
		}
		monitor_tick();
		reap_workers(0);
		sleep_ns(1 * MS);
	}
	sysfs_child = 0;
	*took = now_ns() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EIO;
}

/* The parent's own tenant: unconsumed records and an input mapping, across an unbind. */
static struct ten sent;
static int sent_ready;

static void sentinel_prepare(void)
{
	struct job *j = &sent.jobs[0];
	uint64_t t0;
	int r;

	W = &sh->w[NW];
	sent_ready = 0;
	r = ten_open(&sent, CXL_CCM_MODE_AXLE, CXL_CCM_ORDER_OUT_OF_ORDER, 0xfffffff0u);
	if (r) {
		WFAIL(bad_post, "sentinel tenant: open/CONFIGURE failed (%d)", r);
		return;
	}
	memset(j, 0, sizeof(*j));
	sent.njobs = 1;
	j->nbytes = 1024;
	j->chunk = 32;
	j->nchunks = 32;
	if (fill_input(&sent, j, 0, CXL_CCM_XFORM_OP_XOR, 0x00a5a5a5) ||
	    do_launch(&sent, j, 0, CXL_CCM_XFORM_OP_XOR, 0x00a5a5a5)) {
		WFAIL(bad_post, "sentinel tenant: launch failed");
		ten_close(&sent);
		return;
	}
	/* let all 32 records arrive, consume none; an AXLE tenant needs no WAIT */
	t0 = now_ns();
	while (cxl_ccm_load_tail(&sent.hdr->metadata.tail) - sent.head < 32 &&
	       now_ns() - t0 < 10 * SEC)
		monitor_until(NULL, 2 * MS);
	if (cxl_ccm_load_tail(&sent.hdr->metadata.tail) - sent.head != 32)
		WFAIL(bad_ring, "sentinel: %u of 32 records after 10 s",
		      cxl_ccm_load_tail(&sent.hdr->metadata.tail) - sent.head);
	/* and write something into every input page, to be zapped */
	for (uint64_t p = 0; p < INPUT_SIZE; p += pgsz)
		sent.in[p + 8] = 0x77;
	sent_ready = 1;
}

static void sentinel_check(void)
{
	W = &sh->w[NW];
	if (!sent_ready)
		return;
	after_unbind(&sent, 1);
	sent_ready = 0;
}

static int exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static uint64_t sum(size_t off)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i <= NW; i++)
		s += *(uint64_t *)((char *)&sh->w[i] + off);
	return s;
}
#define SUM(f) sum(offsetof(struct wstat, f))

static void setup_worker(int i, const char *name, int role, int mode, int order, int restart)
{
	struct wstat *w = &sh->w[i];

	snprintf(w->name, sizeof(w->name), "%s", name);
	w->role = role;
	w->mode = mode;
	w->order = order;
	w->restart = restart;
	if (!(info.caps & (1ULL << mode)) ||
	    (order == CXL_CCM_ORDER_IN_ORDER && !(info.caps & CXL_CCM_CAP_IN_ORDER))) {
		w->skip = 1;
		say("%s: mode %d%s not advertised, not run", name, mode,
		    order ? " in order" : "");
	}
}

/* A verified AXLE job on a fresh tenant, in the parent. */
static int fresh_job(void)
{
	struct ten t;
	uint64_t before = SUM(bad_data) + SUM(bad_tag) + SUM(bad_errno) + SUM(bad_stats);
	int r;

	W = &sh->w[NW];
	r = ten_open(&t, CXL_CCM_MODE_AXLE, CXL_CCM_ORDER_OUT_OF_ORDER, 0xfffffffe);
	if (r)
		return 0;
	r = data_round(&t);
	ten_close(&t);
	return !r && SUM(bad_data) + SUM(bad_tag) + SUM(bad_errno) + SUM(bad_stats) == before;
}

int main(void)
{
	const char *env = getenv("CXL_CCM_ATTACK_DEV");
	int devn = env ? atoi(env) : 6, i, fd, ok, c, e;
	uint64_t took;
	char path[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	pgsz = sysconf(_SC_PAGESIZE);
	snprintf(node, sizeof(node), "/dev/cxl_ccm%d", devn);
	snprintf(devname, sizeof(devname), "cxl_ccm.%d", devn);
	signal(SIGPIPE, SIG_IGN);
	printf("1..%d\n", PLAN);

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		for (i = 1; i <= PLAN; i++)
			printf("ok %d attack_unbind check %d # SKIP %s: %s (load cxl_test, "
			       "cxl_ccm_dev.ko and cxl_ccm.ko)\n", i, i, node, strerror(errno));
		return 4;
	}
	memset(&info, 0, sizeof(info));
	ok = !ioctl(fd, CXL_CCM_IOC_INFO, &info);
	close(fd);
	snprintf(path, sizeof(path), DRV "%s", devname);
	if (!ok || !exists(path)) {
		WHY("INFO: %s; %s %s", ok ? "ok" : strerror(errno), path,
		    exists(path) ? "exists" : "missing");
		ok = 0;
	}
	c = CXL_CCM_CAP_MODE_AXLE | CXL_CCM_CAP_MODE_RP | CXL_CCM_CAP_MODE_BS |
	    CXL_CCM_CAP_MODE_AXLE_IRQ;
	if (ok && ((info.caps & c) != (uint64_t)c ||
		   !(info.kernels & (1ULL << CXL_CCM_KERNEL_STREAM_XFORM)) ||
		   info.max_tenants < NW + 2)) {
		WHY("caps %#llx kernels %#llx max_tenants %u", (unsigned long long)info.caps,
		    (unsigned long long)info.kernels, info.max_tenants);
		ok = 0;
	}
	result(ok, "INFO advertises AXLE, RP, BS, AXLE_IRQ, STREAM_XFORM and enough tenants");
	if (!(info.kernels & (1ULL << CXL_CCM_KERNEL_STREAM_XFORM)) || info.max_tenants < NW + 2) {
		printf("Bail out! the device cannot run this test\n");
		return 1;
	}

	none_page = mmap(NULL, pgsz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, pgsz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	straddle = mmap(NULL, 2 * pgsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (none_page == MAP_FAILED || ro_page == MAP_FAILED || straddle == MAP_FAILED ||
	    sh == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	mprotect((char *)straddle + pgsz, pgsz, PROT_NONE);
	memset(sh, 0, sizeof(*sh));
	setup_worker(0, "axle", R_DATA, CXL_CCM_MODE_AXLE, CXL_CCM_ORDER_OUT_OF_ORDER, 0);
	setup_worker(1, "rp-restart", R_DATA, CXL_CCM_MODE_RP, CXL_CCM_ORDER_OUT_OF_ORDER, 1);
	setup_worker(2, "rp-eintr", R_DATA, CXL_CCM_MODE_RP, CXL_CCM_ORDER_OUT_OF_ORDER, 0);
	setup_worker(3, "bs-restart", R_DATA, CXL_CCM_MODE_BS, CXL_CCM_ORDER_OUT_OF_ORDER, 1);
	setup_worker(4, "axle_irq-inorder", R_DATA, CXL_CCM_MODE_AXLE_IRQ,
		     CXL_CCM_ORDER_IN_ORDER, 1);
	i = (info.caps & CXL_CCM_CAP_MODE_AXLE_IRQ) ? CXL_CCM_MODE_AXLE_IRQ : CXL_CCM_MODE_AXLE;
	setup_worker(5, "wait-forever-restart", R_FOREVER_RESTART, i, 0, 1);
	setup_worker(6, "wait-forever-eintr", R_FOREVER_EINTR, i, 0, 0);
	setup_worker(7, "wait-300ms-restart", R_DEADLINE, i, 0, 1);
	setup_worker(8, "bad-pointers", R_BADPTR, CXL_CCM_MODE_AXLE, 0, 0);
	snprintf(sh->w[NW].name, sizeof(sh->w[NW].name), "parent");
	sh->w[NW].role = R_PARENT;

	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_bail;
		sigaction(SIGALRM, &sa, NULL);
		W = &sh->w[NW];
		set_handlers(1);
		signal(SIGINT, SIG_DFL);
		sa.sa_handler = on_bail;
		sigaction(SIGALRM, &sa, NULL);
		alarm(BAIL_S);
	}
	srand(now_ns());
	for (i = 0; i < NW; i++) {
		pid_t p;

		if (sh->w[i].skip)
			continue;
		p = fork();
		if (p < 0) {
			printf("Bail out! fork: %s\n", strerror(errno));
			kill_workers(SIGKILL);
			return 1;
		}
		if (!p)
			worker_main(i);
		sh->w[i].pid = p;
	}

	/* Baseline: everyone working before any unbind. */
	monitor_until(NULL, 1 * SEC);
	baseline_ok = monitor_until(all_progressed, PHASE_LIMIT_NS);
	{
		uint64_t j = 0;

		for (i = 0; i < 5; i++)
			j += sh->w[i].skip ? 1 : sh->w[i].jobs > 0;
		baseline_ok &= j == 5;
	}

	for (c = 1; c <= NCYCLES; c++) {
		sentinel_prepare();
		monitor_until(NULL, 300 * MS);	/* everyone mid-flight */
		__atomic_add_fetch(&sh->unbind_started, 1, __ATOMIC_SEQ_CST);
		e = sysfs_write("unbind", &took);
		if (e == ETIMEDOUT)
			break;
		sh->last_unbind_done_ns = now_ns();
		__atomic_add_fetch(&sh->unbind_done, 1, __ATOMIC_SEQ_CST);
		say("cycle %d: unbind took %llu ms (%s)", c, (unsigned long long)took / MS,
		    e ? strerror(e) : "ok");
		if (e || exists(path) || exists(node)) {
			unbind_bad++;
			say("cycle %d: unbind: %s; %s %s, %s %s", c, e ? strerror(e) : "ok", path,
			    exists(path) ? "still bound" : "gone", node,
			    exists(node) ? "still there" : "gone");
		}
		sentinel_check();
		monitor_until(NULL, 200 * MS);	/* workers knock on a missing node */
		e = sysfs_write("bind", &took);
		if (e == ETIMEDOUT)
			break;
		for (i = 0; i < 200 && !exists(node); i++)
			sleep_ns(10 * MS);
		/* from here on, a refused open is a failure */
		__atomic_add_fetch(&sh->bind_done, 1, __ATOMIC_SEQ_CST);
		say("cycle %d: bind took %llu ms (%s)", c, (unsigned long long)took / MS,
		    e ? strerror(e) : "ok");
		if (e || !exists(path) || !exists(node)) {
			bind_bad++;
			say("cycle %d: bind: %s; %s %s, %s %s", c, e ? strerror(e) : "ok", path,
			    exists(path) ? "bound" : "missing", node,
			    exists(node) ? "back" : "missing");
			break;
		}
		cycles_done++;
		if (!monitor_until(all_progressed, PHASE_LIMIT_NS)) {
			progress_bad++;
			for (i = 0; i < NW; i++)
				if (!sh->w[i].skip && sh->w[i].pid > 0 &&
				    (sh->w[i].open_start <= sh->last_unbind_done_ns ||
				     ((sh->w[i].role == R_DATA || sh->w[i].role == R_BADPTR) &&
				      !sh->w[i].jobs_cur)))
					say("cycle %d: %s made no progress after the bind", c,
					    sh->w[i].name);
		}
	}
	if (cycles_done != NCYCLES)
		say("only %d of %d unbind/bind cycles completed", cycles_done, NCYCLES);

	/* Stop: every worker must leave its calls and exit cleanly. */
	sh->stop = 1;
	{
		uint64_t t0 = now_ns();

		while (now_ns() - t0 < 10 * SEC) {
			int alive = 0;

			kill_workers(SIGUSR2);
			reap_workers(0);
			for (i = 0; i < NW; i++)
				alive += sh->w[i].pid > 0;
			if (!alive)
				break;
			monitor_tick();
			sleep_ns(20 * MS);
		}
		for (i = 0; i < NW; i++)
			if (sh->w[i].pid > 0) {
				hung++;
				say("HANG: %s did not stop (in %s)", sh->w[i].name,
				    cmd_name[sh->w[i].cmd]);
				print_stack(sh->w[i].pid);
				kill(sh->w[i].pid, SIGKILL);
			}
		reap_workers(1);
	}
	if (!exists(path) && !sysfs_child)
		write_str(DRV "bind", devname);

	/* ---- results ---- */
	for (i = 0; i <= NW; i++) {
		struct wstat *w = &sh->w[i];
		char t[400];
		int n = 0;

		if (w->skip && i < NW) {
			say("%s: skipped", w->name);
			continue;
		}
		say("%s: %llu tenants, %llu jobs, %llu records, %llu launches, signals %llu "
		    "(%llu in LAUNCH, %llu in WAIT), EINTR launch %llu wait %llu, ENODEV waits %llu",
		    w->name, (unsigned long long)w->tenants, (unsigned long long)w->jobs,
		    (unsigned long long)w->records, (unsigned long long)w->launches,
		    (unsigned long long)w->sig_handled, (unsigned long long)w->sig_in_launch,
		    (unsigned long long)w->sig_in_wait, (unsigned long long)w->launch_eintr,
		    (unsigned long long)w->wait_eintr, (unsigned long long)w->wait_enodev);
		for (int cc = 1; cc < C_NCMD; cc++)
			for (int ee = 0; ee < E_N; ee++)
				if (w->tally[cc][ee] && n < (int)sizeof(t) - 40)
					n += snprintf(t + n, sizeof(t) - n, " %s:%s=%llu",
						      cmd_name[cc], err_name[ee],
						      (unsigned long long)w->tally[cc][ee]);
		if (n)
			say("%s:%s", w->name, t);
	}

	result(baseline_ok, "baseline: tenants in every mode complete verified jobs concurrently");
	for (i = 0; i < 5; i++) {
		struct wstat *w = &sh->w[i];
		char d[160];

		snprintf(d, sizeof(d), "%s tenant: every record verified (seq, tag, length, "
			 "CRC32C, exact data) through %d unbinds", w->name, NCYCLES);
		if (w->skip) {
			printf("ok %d %s # SKIP mode not advertised\n", ++nresults, d);
			continue;
		}
		if (w->bad_data || w->bad_tag || !w->records || !w->jobs)
			WHY("%llu bad records, %llu unknown tags, %llu records, %llu jobs",
			    (unsigned long long)w->bad_data, (unsigned long long)w->bad_tag,
			    (unsigned long long)w->records, (unsigned long long)w->jobs);
		result(!w->bad_data && !w->bad_tag && w->records && w->jobs, d);
	}
	WHY("foreign %llu, non-zero fresh input %llu, fresh inputs checked %llu",
	    (unsigned long long)SUM(foreign), (unsigned long long)SUM(bad_zero),
	    (unsigned long long)SUM(fresh_ok));
	result(!SUM(foreign) && !SUM(bad_zero) && SUM(fresh_ok) > NCYCLES * 5,
	       "no tenant saw another's data, and every fresh input buffer read zero");
	WHY("tag errors %llu, STATS.launched mismatches %llu", (unsigned long long)SUM(bad_launch),
	    (unsigned long long)SUM(bad_stats));
	result(!SUM(bad_launch) && !SUM(bad_stats) && SUM(launches),
	       "tags consecutive from index_base, failed launches take none, STATS.launched exact");
	WHY("unbind failures %d, bind failures %d, cycles %d", unbind_bad, bind_bad, cycles_done);
	result(!unbind_bad && !bind_bad && cycles_done == NCYCLES,
	       "unbind under load returns, removes the node; bind brings it back (3 cycles)");
	WHY("%llu calls ended with an undocumented errno (see the log)",
	    (unsigned long long)SUM(bad_errno));
	result(!SUM(bad_errno),
	       "every call ended with success or its documented errno (ENODEV only once unbound)");
	WHY("%d hangs", hung);
	result(!hung, "no call hung: none over 10 s, none in flight 5 s after unbind returned");
	WHY("failures %llu, files checked %llu", (unsigned long long)SUM(bad_post),
	    (unsigned long long)SUM(post_ok));
	result(!SUM(bad_post) && sh->w[NW].post_ok == NCYCLES,
	       "after unbind an old file gets ENODEV from every ioctl and POLLHUP from poll()");
	WHY("failures %llu, mappings checked %llu", (unsigned long long)SUM(bad_sigbus),
	    (unsigned long long)SUM(sigbus_ok));
	result(!SUM(bad_sigbus) && sh->w[NW].sigbus_ok == NCYCLES,
	       "kept input mappings SIGBUS on every page, read and write, after unbind");
	WHY("ring failures %llu, rings checked %llu (sentinel %llu), munmap/close failures %llu",
	    (unsigned long long)SUM(bad_ring), (unsigned long long)SUM(ring_ok),
	    (unsigned long long)sh->w[NW].ring_ok, (unsigned long long)SUM(bad_close));
	result(!SUM(bad_ring) && sh->w[NW].ring_ok == NCYCLES && !SUM(bad_close),
	       "ring mappings stay readable after unbind with intact records; munmap/close clean");
	{
		struct wstat *w = &sh->w[5];

		WHY("signals %llu (in WAIT %llu), EINTR %llu, restart failures %llu, ENODEV %llu, "
		    "bad outputs %llu", (unsigned long long)w->sig_handled,
		    (unsigned long long)w->sig_in_wait, (unsigned long long)w->wait_eintr,
		    (unsigned long long)w->bad_restart, (unsigned long long)w->wait_enodev,
		    (unsigned long long)w->bad_waitout);
		result(!w->skip && w->sig_in_wait && !w->bad_restart && w->wait_enodev == NCYCLES,
		       "WAIT_FOREVER under SA_RESTART: restarted across signals, ENODEV at each unbind");
		w = &sh->w[6];
		WHY("signals %llu, EINTR %llu, restart failures %llu, ENODEV %llu, bad outputs %llu",
		    (unsigned long long)w->sig_handled, (unsigned long long)w->wait_eintr,
		    (unsigned long long)w->bad_restart, (unsigned long long)w->wait_enodev,
		    (unsigned long long)w->bad_waitout);
		result(!w->skip && w->wait_eintr && !w->bad_restart && !w->bad_waitout &&
		       w->wait_enodev == NCYCLES,
		       "WAIT_FOREVER without SA_RESTART: EINTR with outputs written, ENODEV at unbind");
		w = &sh->w[7];
		WHY("signals %llu, EINTR %llu, deadline failures %llu, bad outputs %llu, ENODEV %llu",
		    (unsigned long long)w->sig_handled, (unsigned long long)w->wait_eintr,
		    (unsigned long long)w->bad_restart, (unsigned long long)w->bad_waitout,
		    (unsigned long long)w->wait_enodev);
		result(!w->skip && w->wait_eintr && !w->bad_restart && !w->bad_waitout &&
		       w->wait_enodev == NCYCLES,
		       "finite WAIT under SA_RESTART: a signal ends it with EINTR, never restarted");
	}
	{
		uint64_t inl = 0, inw = 0, bad = 0;

		for (i = 0; i < 5; i++) {
			inl += sh->w[i].sig_in_launch;
			inw += sh->w[i].sig_in_wait;
			bad += sh->w[i].bad_restart + sh->w[i].bad_waitout;
		}
		WHY("signals in LAUNCH %llu, in WAIT %llu (aimed %llu/%llu), EINTR/restart or WAIT "
		    "output failures %llu", (unsigned long long)inl, (unsigned long long)inw,
		    (unsigned long long)sent_launch, (unsigned long long)sent_wait,
		    (unsigned long long)bad);
		result(inl && inw && !bad,
		       "signals in LAUNCH and WAIT of data tenants: EINTR only where documented");
	}
	WHY("EFAULT as expected %llu, wrong answers %llu", (unsigned long long)sh->w[8].efault_ok,
	    (unsigned long long)sh->w[8].bad_efault);
	result(sh->w[8].efault_ok && !sh->w[8].bad_efault && !sh->w[8].bad_data &&
	       !sh->w[8].bad_launch && !sh->w[8].bad_stats && sh->w[8].jobs,
	       "bad pointers to every ioctl: EFAULT (ENODEV once unbound), nothing changed");
	WHY("cycles without progress %d", progress_bad);
	result(!progress_bad && cycles_done == NCYCLES,
	       "after every rebind, new tenants in every mode complete verified jobs");
	WHY("%d workers ended abnormally", worker_died);
	result(!worker_died, "every worker exited cleanly (no unexpected signal or SIGBUS)");
	/* still under the whole-test alarm; the workers are gone */
	sh->stop = 0;
	ok = exists(path) && exists(node) && fresh_job();
	alarm(0);
	WHY("%s %s", path, exists(path) ? "bound" : "missing");
	result(ok, "the device is left bound and a fresh tenant completes a verified job");
	if (nresults != PLAN)
		printf("# planned %d, ran %d\n", PLAN, nresults);
	return nfailed || nresults != PLAN ? 1 : 0;
}
