// SPDX-License-Identifier: GPL-2.0
/*
 * CXL_CCM_IOC_WAIT under attack, written from include/uapi/linux/cxl_ccm.h
 * and Documentation/cxl_ccm.rst alone (the driver was not read). Every test
 * runs in each mode (AXLE polled, RP, BS, AXLE_IRQ) on /dev/cxl_ccm5, with
 * counters starting 256 below 2^32 so that they wrap during the test, and
 * every record the tenant produces is checked by axle_lib.h's consumer
 * (seq, tag, offsets, FINAL, CRC32C and every payload word against the
 * STREAM_XFORM transform), so a WAIT that corrupts or loses results fails.
 *
 * What it proves, per mode:
 *  - concurrent_waiters: three threads and a forked child sharing the file
 *    WAIT on the tenant (random min_records 1-4, timeouts 0, 1 ns, 1 us,
 *    2 ms, 50 ms, 200 ms) while the main thread launches, WAITs, consumes
 *    out of order and releases, and SIGUSR1 (no SA_RESTART) lands in the
 *    waiting threads. Every return must be one the header documents: 0 only
 *    with ready >= min_records, EAGAIN only for timeout 0, ETIMEDOUT not
 *    before the timeout nor long after it, EINVAL only once the consumer had
 *    released past the waiter's head; ready == metadata_tail - head always,
 *    and the tail reported was really published. The consumer holds some
 *    payloads back and WAITs with CXL_CCM_WAIT_FLAG_DEADLOCK (it is the only
 *    releaser): EDEADLK must come only while it holds payloads, never a hang.
 *  - signal_deadline: a finite WAIT is ended by a signal with EINTR, with
 *    and without SA_RESTART (never restarted), the outputs written; waiting
 *    again for what is left ends in ETIMEDOUT on time (the deadline is not
 *    extended); a WAIT_FOREVER wait survives signals under SA_RESTART and
 *    returns when records come, and gets EINTR without it; a huge finite
 *    timeout (2^64 - 2, 2^63) neither times out at once nor is restarted.
 *  - close_and_exit: a WAIT on one descriptor keeps waiting when that
 *    descriptor is closed by another thread and returns the records launched
 *    through a dup; a WAIT on a second tenant whose only descriptor is closed
 *    meanwhile times out; a forked child blocked in WAIT_FOREVER on the
 *    shared file dies at once on SIGKILL, and the tenant keeps working.
 *  - release_unseen: ready is counted from the caller's head (0 with timeout
 *    0, EAGAIN, ETIMEDOUT with 1 ns, EINVAL past the tail or for
 *    min_records 0); a waiter blocked on a head that the consumer then
 *    releases past (records it never saw) is not stranded: it returns when
 *    its count is reached (or EINVAL), never ETIMEDOUT; a new WAIT on that
 *    old head is EINVAL.
 *  - bad_pointers: NULL, low, kernel, straddling and read-only WAIT
 *    arguments from two threads get EFAULT without waiting (the doc: EFAULT
 *    comes before any wait), while a valid WAIT on the same file still
 *    returns the records that come.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "axle_lib.h"

#define NODE		"/dev/cxl_ccm5"
#define MS		1000000ULL
#define SEC		(1000 * MS)
#define REGION		4096
#define INPUT_SIZE	(64 * 1024)
#define BASE		0xffffff00U
#define NTHREADS	3
#define POISON		0xdeadbeefU

/* --- WAIT, signals, threads -------------------------------------------- */

/* WAIT with poisoned outputs; 0 or the errno. */
static int do_wait_f(int fd, struct cxl_ccm_wait *w, __u32 min, __u32 head, __u64 timeout,
		     __u32 flags)
{
	memset(w, 0, sizeof(*w));
	w->flags = flags;
	w->min_records = min;
	w->metadata_head = head;
	w->timeout_ns = timeout;
	w->ready = POISON;
	w->metadata_tail = POISON;
	return ioctl(fd, CXL_CCM_IOC_WAIT, w) ? errno : 0;
}

static int do_wait(int fd, struct cxl_ccm_wait *w, __u32 min, __u32 head, __u64 timeout)
{
	return do_wait_f(fd, w, min, head, timeout, 0);
}

static unsigned int nsig;

static void on_sig(int sig)
{
	__atomic_fetch_add(&nsig, 1, __ATOMIC_RELAXED);
}

static void set_handler(bool restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* Join @t within @ms; 0 or ETIMEDOUT (the thread is then left running). */
static int join_within(pthread_t t, unsigned int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &ts);
}

/* Reap @pid within @ms; its wait status, or -1 (then it is killed). */
static int reap_within(pid_t pid, unsigned int ms)
{
	int status, i;

	for (i = 0; i < (int)ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static bool before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/* --- the fixture: one tenant per mode, and its checked consumer ---------- */

FIXTURE(wa) {
	struct axle_tenant t;
	struct axle_run r;
	bool have_run;
};

FIXTURE_VARIANT(wa) {
	__u32 mode;
};

FIXTURE_VARIANT_ADD(wa, axle) { .mode = CXL_CCM_MODE_AXLE };
FIXTURE_VARIANT_ADD(wa, rp) { .mode = CXL_CCM_MODE_RP };
FIXTURE_VARIANT_ADD(wa, bs) { .mode = CXL_CCM_MODE_BS };
FIXTURE_VARIANT_ADD(wa, axle_irq) { .mode = CXL_CCM_MODE_AXLE_IRQ };

FIXTURE_SETUP(wa)
{
	struct cxl_ccm_configure cfg;

	self->t.fd = -1;
	if (!axle_open_or_skip(_metadata, &self->t, NODE))
		return;
	if (!(self->t.info.caps & (1ULL << variant->mode)))
		SKIP(return, "%s does not serve mode %u", NODE, variant->mode);
	cfg = axle_config(64, 256, 32, 256, CXL_CCM_ORDER_OUT_OF_ORDER, BASE, INPUT_SIZE);
	cfg.mode = variant->mode;
	cfg.poll_interval_ns = 100000;	/* slept, not spun: 2 vCPUs, 5 waiters */
	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, &self->r, &self->t, REGION, axle_seed(_metadata));
	self->r.random_release = true;
	self->have_run = true;
}

FIXTURE_TEARDOWN(wa)
{
	if (self->have_run)
		axle_run_free(&self->r);
	if (self->t.fd >= 0)
		axle_close(&self->t);
}

/* --- state shared with the waiters (and the forked child) -------------- */

struct wstats {
	unsigned long calls, ok, again, timedout, eintr, einval, bad;
	unsigned long late;		/* successes whose head was released meanwhile */
	__u32 overshoot;		/* most records beyond min_records at success */
	__u64 overshoot_ns;		/* how long that WAIT took */
	char why[256];
};

struct shared {
	__u32 hint;		/* metadata head the consumer releases next */
	int stop;
	struct wstats w[NTHREADS + 1];
};

static void note_bad(struct wstats *s, const char *fmt, ...)
{
	va_list ap;

	if (s->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/*
 * The consumer's step: WAIT for one record from its head, check and copy
 * every record, then release (in random order; with @keep some payloads are
 * kept for later). The hint is published before the release. The consumer
 * is the only releaser (the waiters only wait), so it asks for the deadlock
 * check: a kept payload can hold the gap-aware head back until the device
 * has no room for its next batch, and then it must release everything.
 */
static void consume_step(struct __test_metadata *_metadata, struct axle_run *r,
			 struct shared *sh, bool keep)
{
	struct cxl_ccm_wait w;
	int err = do_wait_f(r->t->fd, &w, 1, r->head, 10 * SEC, CXL_CCM_WAIT_FLAG_DEADLOCK);

	if (err == EDEADLK) {
		ASSERT_EQ(w.metadata_tail - r->head, w.ready) TH_LOG("EDEADLK outputs");
		ASSERT_LT(0U, r->npend) TH_LOG("EDEADLK with every payload released");
		axle_release_pending(_metadata, r, true);
		err = do_wait(r->t->fd, &w, 1, r->head, 10 * SEC);
	}
	if (err)
		axle_dump(_metadata, r);
	ASSERT_EQ(0, err) TH_LOG("consumer WAIT from %u: %s (ready %u, tail %u)",
				 r->head, strerror(err), w.ready, w.metadata_tail);
	ASSERT_LE(1U, w.ready);
	ASSERT_EQ(w.metadata_tail - r->head, w.ready);
	axle_poll(_metadata, r);
	ASSERT_FALSE(before(r->head, w.metadata_tail))
		TH_LOG("WAIT reported tail %u, the ring shows %u", w.metadata_tail, r->head);
	if (sh)
		__atomic_store_n(&sh->hint, r->head, __ATOMIC_SEQ_CST);
	axle_release_pending(_metadata, r, !keep);
}

/* Consume until every launch delivered FINAL, then release everything. */
static void consume_all(struct __test_metadata *_metadata, struct axle_run *r,
			struct shared *sh)
{
	while (r->done < r->nl)
		consume_step(_metadata, r, sh, false);
	if (sh)
		__atomic_store_n(&sh->hint, r->head, __ATOMIC_SEQ_CST);
	axle_drain(_metadata, r);
}

static __u32 rand_size(struct axle_run *r)
{
	__u32 k = axle_below(&r->rng, 16);

	if (!k)
		return 0;			/* one FINAL record, length 0 */
	if (k == 1)
		return 4 * axle_below(&r->rng, 64) + 2;	/* FINAL | ERROR */
	return 4 * (1 + axle_below(&r->rng, REGION / 4));
}

/* --- concurrent waiters ------------------------------------------------- */

struct waiter {
	int fd;
	const struct cxlccm_ring *ring;
	struct shared *sh;
	struct wstats *st;
	struct axle_rng rng;
	__u64 end_ns;
	pthread_t tid;
};

static const __u64 timeouts[] = { 0, 1, 1000, 2 * MS, 50 * MS, 200 * MS };

static void judge(struct waiter *wa, int err, const struct cxl_ccm_wait *w, __u32 h,
		  __u32 min, __u64 timeout, __u64 elapsed)
{
	struct wstats *st = wa->st;
	__u32 now = cxlccm_ring_md_tail(wa->ring);
	__u32 hint = __atomic_load_n(&wa->sh->hint, __ATOMIC_SEQ_CST);
	bool outs = err == 0 || err == EAGAIN || err == ETIMEDOUT || err == EINTR;

	st->calls++;
	if (outs && w->ready != w->metadata_tail - h) {
		note_bad(st, "%s: head %u, ready %u but tail %u", strerror(err), h, w->ready,
			 w->metadata_tail);
		return;
	}
	/*
	 * From a head at or after the released one, ready fits the ring; more
	 * only once the consumer released past the head (while we waited).
	 */
	if (outs && ((w->ready > wa->ring->md_slots && !before(h, hint)) ||
		     before(now, w->metadata_tail))) {
		note_bad(st, "%s: head %u: tail %u reported, %u published", strerror(err), h,
			 w->metadata_tail, now);
		return;
	}
	switch (err) {
	case 0:
		st->ok++;
		if (w->ready < min)
			note_bad(st, "success with ready %u < min_records %u", w->ready, min);
		else if (elapsed > timeout + 2 * SEC)
			note_bad(st, "success after %llu ns of a %llu ns timeout",
				 (unsigned long long)elapsed, (unsigned long long)timeout);
		if (before(h, hint))
			st->late++;
		if (w->ready - min > st->overshoot) {
			st->overshoot = w->ready - min;
			st->overshoot_ns = elapsed;
		}
		break;
	case EAGAIN:
		st->again++;
		if (timeout || w->ready >= min)
			note_bad(st, "EAGAIN with timeout %llu, ready %u, min %u",
				 (unsigned long long)timeout, w->ready, min);
		break;
	case ETIMEDOUT:
		st->timedout++;
		if (!timeout || w->ready >= min)
			note_bad(st, "ETIMEDOUT with timeout %llu, ready %u, min %u",
				 (unsigned long long)timeout, w->ready, min);
		else if (elapsed + MS < timeout)
			note_bad(st, "ETIMEDOUT after %llu ns of a %llu ns timeout",
				 (unsigned long long)elapsed, (unsigned long long)timeout);
		else if (elapsed > timeout + 2 * SEC)
			note_bad(st, "ETIMEDOUT after %llu ns of a %llu ns timeout (extended)",
				 (unsigned long long)elapsed, (unsigned long long)timeout);
		break;
	case EINTR:
		st->eintr++;
		if (elapsed > timeout + 2 * SEC)
			note_bad(st, "EINTR after %llu ns of a %llu ns timeout",
				 (unsigned long long)elapsed, (unsigned long long)timeout);
		break;
	case EINVAL:
		/* Legitimate only if the consumer had released past our head. */
		st->einval++;
		if (!before(h, hint))
			note_bad(st, "EINVAL for head %u, consumer released at most %u, tail %u",
				 h, hint, now);
		break;
	default:
		note_bad(st, "WAIT from %u (min %u, timeout %llu): %s", h, min,
			 (unsigned long long)timeout, strerror(err));
	}
}

static void *waiter_loop(void *p)
{
	struct waiter *wa = p;
	struct cxl_ccm_wait w;
	__u64 timeout, t0;
	__u32 h, min;
	int err;

	while (!__atomic_load_n(&wa->sh->stop, __ATOMIC_SEQ_CST) && axle_now_ns() < wa->end_ns) {
		h = cxlccm_ring_md_tail(wa->ring);
		min = 1 + axle_below(&wa->rng, 4);
		timeout = timeouts[axle_below(&wa->rng, sizeof(timeouts) / sizeof(timeouts[0]))];
		t0 = axle_now_ns();
		err = do_wait(wa->fd, &w, min, h, timeout);
		judge(wa, err, &w, h, min, timeout, axle_now_ns() - t0);
		if (wa->st->bad > 100)
			break;
	}
	return NULL;
}

TEST_F_TIMEOUT(wa, concurrent_waiters, 240)
{
	struct axle_run *r = &self->r;
	struct waiter wa[NTHREADS + 1];
	unsigned long ok = 0;
	struct cxl_ccm_stats s;
	struct cxl_ccm_wait w;
	struct shared *sh;
	int i, status;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	sh->hint = r->head;
	set_handler(false);
	for (i = 0; i <= NTHREADS; i++) {
		wa[i].fd = self->t.fd;
		wa[i].ring = &self->t.ring;
		wa[i].sh = sh;
		wa[i].st = &sh->w[i];
		wa[i].rng.s = axle_rand64(&r->rng) | 1;
		wa[i].end_ns = axle_now_ns() + 150 * SEC;
	}
	/* The child shares the file (and the ring mappings) by fork. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		waiter_loop(&wa[NTHREADS]);
		_exit(0);
	}
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&wa[i].tid, NULL, waiter_loop, &wa[i]));

	for (i = 0; i < 48; i++) {
		while (axle_inflight(r) >= 3)
			consume_step(_metadata, r, sh, i % 3 == 0);
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng), rand_size(r),
			    axle_random_chunk(r));
		if (i % 4 == 1)
			pthread_kill(wa[i / 4 % NTHREADS].tid, SIGUSR1);
	}
	consume_all(_metadata, r, sh);

	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, join_within(wa[i].tid, 10000)) TH_LOG("waiter %d still in WAIT", i);
	status = reap_within(pid, 10000);
	ASSERT_NE(-1, status) TH_LOG("the forked waiter did not stop");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);

	for (i = 0; i <= NTHREADS; i++) {
		struct wstats *st = &sh->w[i];

		ksft_print_msg("%s %d: %lu calls: %lu ok (%lu after a release past the head; up to %u beyond min, in %llu ms), %lu EAGAIN, %lu ETIMEDOUT, %lu EINTR, %lu EINVAL\n",
			       i < NTHREADS ? "thread" : "child", i, st->calls, st->ok, st->late,
			       st->overshoot, (unsigned long long)(st->overshoot_ns / MS),
			       st->again, st->timedout, st->eintr, st->einval);
		EXPECT_EQ(0UL, st->bad) TH_LOG("waiter %d: %lu bad returns, first: %s", i,
					       st->bad, st->why);
		EXPECT_LT(0UL, st->calls);
		ok += st->ok;
	}
	EXPECT_LT(0UL, ok) TH_LOG("no waiter ever saw its records");
	axle_check_stats(_metadata, r);
	if (variant->mode == CXL_CCM_MODE_AXLE_IRQ) {
		ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
		EXPECT_LT(0ULL, s.interrupts) TH_LOG("AXLE_IRQ waiters woken without interrupts");
	}
	/* Everything consumed: one more record never comes. */
	EXPECT_EQ(ETIMEDOUT, do_wait(self->t.fd, &w, 1, r->head, 50 * MS));
	EXPECT_EQ(0U, w.ready);
	EXPECT_EQ(r->head, w.metadata_tail);
	munmap(sh, sizeof(*sh));
}

/* --- signals and the deadline ------------------------------------------- */

struct sw {
	int fd;
	__u32 head, min;
	__u64 timeout;
	bool loop;		/* wait again for what is left of the deadline */
	int err;		/* of the last call */
	__u32 ready, tail;	/* of the last call */
	unsigned int calls, eintr, bad_out;
	__u64 total, over;	/* elapsed; worst overrun of one call's timeout */
	int done;
	pthread_t tid;
};

static void *sw_thread(void *p)
{
	struct sw *a = p;
	__u64 start = axle_now_ns(), deadline = start + a->timeout, t0, left, el;
	struct cxl_ccm_wait w;

	for (;;) {
		t0 = axle_now_ns();
		left = a->timeout;
		if (a->loop) {
			if (t0 >= deadline)
				break;	/* an EINTR ended it at the deadline */
			left = deadline - t0;
		}
		a->err = do_wait(a->fd, &w, a->min, a->head, left);
		el = axle_now_ns() - t0;
		a->calls++;
		a->ready = w.ready;
		a->tail = w.metadata_tail;
		if (left < CXL_CCM_WAIT_FOREVER / 2 && el > left && el - left > a->over)
			a->over = el - left;
		if (a->err == EINTR || a->err == ETIMEDOUT || a->err == EAGAIN)
			a->bad_out += w.ready != 0 || w.metadata_tail != a->head;
		if (a->err != EINTR || !a->loop)
			break;
		a->eintr++;
	}
	if (a->err == EINTR && !a->loop)
		a->eintr++;
	a->total = axle_now_ns() - start;
	__atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void sw_start_min(struct __test_metadata *_metadata, struct sw *a, int fd, __u32 head,
			 __u32 min, __u64 timeout, bool loop)
{
	memset(a, 0, sizeof(*a));
	a->fd = fd;
	a->head = head;
	a->min = min;
	a->timeout = timeout;
	a->loop = loop;
	ASSERT_EQ(0, pthread_create(&a->tid, NULL, sw_thread, a));
}

#define sw_start(m, a, fd, head, timeout, loop) sw_start_min(m, a, fd, head, 1, timeout, loop)

static bool sw_done(struct sw *a)
{
	return __atomic_load_n(&a->done, __ATOMIC_SEQ_CST);
}

/* Signal @a every @period_ns until it is done or @max_ns passed. */
static void sw_pester(struct sw *a, __u64 period_ns, __u64 max_ns)
{
	__u64 start = axle_now_ns();

	while (!sw_done(a) && axle_now_ns() - start < max_ns) {
		axle_sleep_ns(period_ns);
		if (!sw_done(a))
			pthread_kill(a->tid, SIGUSR1);
	}
}

/* Launch one job and wait for @a, blocked until records come, to return 0. */
static void sw_feed(struct __test_metadata *_metadata, struct axle_run *r, struct sw *a)
{
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 7, 1024, 0);
	ASSERT_EQ(0, join_within(a->tid, 15000)) TH_LOG("WAIT not woken by the records");
	EXPECT_EQ(0, a->err) TH_LOG("woken WAIT: %s", strerror(a->err));
	EXPECT_LE(1U, a->ready);
	EXPECT_EQ(a->tail - a->head, a->ready);
	consume_all(_metadata, r, NULL);
}

TEST_F_TIMEOUT(wa, signal_deadline, 120)
{
	static const __u64 huge[] = { CXL_CCM_WAIT_FOREVER - 1, 1ULL << 63 };
	struct axle_run *r = &self->r;
	int fd = self->t.fd, restart;
	unsigned int before_sigs;
	struct sw a;
	size_t i;

	/* Finite waits: EINTR with or without SA_RESTART, deadline kept. */
	for (restart = 0; restart < 2; restart++) {
		set_handler(restart);
		sw_start(_metadata, &a, fd, r->head, 300 * MS, true);
		sw_pester(&a, 20 * MS, 2 * SEC);
		ASSERT_EQ(0, join_within(a.tid, 5000)) TH_LOG("finite WAIT restarted forever");
		ksft_print_msg("SA_RESTART %d: %u calls, %u EINTR, %llu ms, worst overrun %llu us\n",
			       restart, a.calls, a.eintr, (unsigned long long)(a.total / MS),
			       (unsigned long long)(a.over / 1000));
		EXPECT_LE(1U, a.eintr) TH_LOG("SA_RESTART %d: a signalled finite WAIT gave no EINTR",
					      restart);
		EXPECT_TRUE(a.err == ETIMEDOUT || a.err == EINTR)
			TH_LOG("SA_RESTART %d: last WAIT %s", restart, strerror(a.err));
		EXPECT_EQ(0U, a.bad_out) TH_LOG("EINTR/ETIMEDOUT without ready 0, tail %u", r->head);
		EXPECT_LE(300 * MS - MS, a.total);
		EXPECT_GE(300 * MS + 700 * MS, a.total) TH_LOG("deadline extended by signals");
		EXPECT_GE(200 * MS, a.over) TH_LOG("one call outlived its timeout");
	}

	/* The same on tenants whose WAIT spins (interval 0 and 20 us). */
	set_handler(true);
	for (i = 0; i < 2; i++) {
		struct cxl_ccm_configure cfg;
		int fd2 = open(NODE, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd2);
		cfg = axle_config(64, 256, 32, 256, CXL_CCM_ORDER_OUT_OF_ORDER, 0, 4096);
		cfg.mode = variant->mode;
		cfg.poll_interval_ns = i ? 20000 : 0;
		ASSERT_EQ(0, ioctl(fd2, CXL_CCM_IOC_CONFIGURE, &cfg)) TH_LOG("%s", strerror(errno));
		sw_start(_metadata, &a, fd2, 0, 300 * MS, true);
		sw_pester(&a, 20 * MS, 2 * SEC);
		ASSERT_EQ(0, join_within(a.tid, 5000)) TH_LOG("spinning WAIT restarted forever");
		ksft_print_msg("interval %llu: %u calls, %u EINTR, %llu ms\n",
			       (unsigned long long)cfg.poll_interval_ns, a.calls, a.eintr,
			       (unsigned long long)(a.total / MS));
		EXPECT_LE(1U, a.eintr) TH_LOG("interval %llu: a spinning WAIT ignored signals",
					      (unsigned long long)cfg.poll_interval_ns);
		EXPECT_TRUE(a.err == ETIMEDOUT || a.err == EINTR) TH_LOG("%s", strerror(a.err));
		EXPECT_EQ(0U, a.bad_out);
		EXPECT_GE(300 * MS + 700 * MS, a.total) TH_LOG("spinning WAIT overran its deadline");
		close(fd2);
	}

	/* WAIT_FOREVER under SA_RESTART: restarted, then woken by records. */
	set_handler(true);
	before_sigs = nsig;
	sw_start(_metadata, &a, fd, r->head, CXL_CCM_WAIT_FOREVER, false);
	sw_pester(&a, 20 * MS, 200 * MS);
	EXPECT_LT(before_sigs, nsig);
	EXPECT_FALSE(sw_done(&a)) TH_LOG("WAIT_FOREVER under SA_RESTART returned %s",
					  strerror(a.err));
	sw_feed(_metadata, r, &a);

	/* WAIT_FOREVER without SA_RESTART: EINTR, outputs written. */
	set_handler(false);
	sw_start(_metadata, &a, fd, r->head, CXL_CCM_WAIT_FOREVER, false);
	axle_sleep_ns(50 * MS);
	EXPECT_FALSE(sw_done(&a));
	pthread_kill(a.tid, SIGUSR1);
	if (join_within(a.tid, 3000)) {
		sw_feed(_metadata, r, &a);
		ASSERT_TRUE(0) TH_LOG("WAIT_FOREVER without SA_RESTART not ended by a signal");
	}
	EXPECT_EQ(EINTR, a.err) TH_LOG("%s", strerror(a.err));
	EXPECT_EQ(0U, a.bad_out);

	/* Huge finite timeouts: no overflow into "expired", not restarted. */
	set_handler(true);
	for (i = 0; i < 2; i++) {
		sw_start(_metadata, &a, fd, r->head, huge[i], false);
		axle_sleep_ns(150 * MS);
		EXPECT_FALSE(sw_done(&a)) TH_LOG("timeout %#llx: returned %s at once",
						  (unsigned long long)huge[i], strerror(a.err));
		pthread_kill(a.tid, SIGUSR1);
		if (join_within(a.tid, 3000)) {
			sw_feed(_metadata, r, &a);
			EXPECT_TRUE(0) TH_LOG("timeout %#llx: a finite WAIT restarted under SA_RESTART",
					      (unsigned long long)huge[i]);
			continue;
		}
		EXPECT_EQ(EINTR, a.err) TH_LOG("timeout %#llx: %s", (unsigned long long)huge[i],
					       strerror(a.err));
		EXPECT_EQ(0U, a.bad_out);
	}

	/* The tenant is intact: a few more checked launches. */
	for (i = 0; i < 6; i++)
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng), rand_size(r), 0);
	consume_all(_metadata, r, NULL);
	axle_check_stats(_metadata, r);
}

/* --- close() of another descriptor, exit of a waiter --------------------- */

TEST_F_TIMEOUT(wa, close_and_exit, 120)
{
	struct axle_run *r = &self->r;
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_wait w;
	struct sw a, b;
	int fd2, fd3, status;
	pid_t pid;

	set_handler(false);
	fd2 = dup(self->t.fd);
	ASSERT_LE(0, fd2);
	sw_start(_metadata, &a, fd2, r->head, 20 * SEC, false);

	/* A second tenant, waited on, its only descriptor closed meanwhile. */
	fd3 = open(NODE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd3);
	cfg = axle_config(64, 256, 32, 256, CXL_CCM_ORDER_OUT_OF_ORDER, 5, 4096);
	cfg.mode = variant->mode;
	ASSERT_EQ(0, ioctl(fd3, CXL_CCM_IOC_CONFIGURE, &cfg)) TH_LOG("%s", strerror(errno));
	sw_start(_metadata, &b, fd3, 5, 300 * MS, false);

	/* A forked waiter on the shared file, killed in WAIT_FOREVER. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(do_wait(self->t.fd, &w, 1, r->head, CXL_CCM_WAIT_FOREVER) + 100);

	axle_sleep_ns(100 * MS);
	ASSERT_EQ(0, close(fd2));
	ASSERT_EQ(0, close(fd3));
	kill(pid, SIGKILL);
	status = reap_within(pid, 3000);
	EXPECT_TRUE(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child in WAIT_FOREVER: status %#x (exit %d: WAIT returned %s)", status,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		       WIFEXITED(status) ? strerror(WEXITSTATUS(status) - 100) : "-");

	ASSERT_EQ(0, join_within(b.tid, 5000)) TH_LOG("WAIT on a closed tenant hangs");
	EXPECT_EQ(ETIMEDOUT, b.err) TH_LOG("WAIT on the closed descriptor: %s", strerror(b.err));
	EXPECT_EQ(0U, b.bad_out);

	axle_sleep_ns(50 * MS);
	EXPECT_FALSE(sw_done(&a)) TH_LOG("WAIT returned %s when its descriptor was closed",
					  strerror(a.err));
	/* Records launched through the surviving descriptor wake it. */
	sw_feed(_metadata, r, &a);
	EXPECT_EQ(EBADF, do_wait(fd2, &w, 1, r->head, 0));

	/* A killed waiter left the tenant working: checked launches. */
	while (r->nl < 12)
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng), rand_size(r),
			    axle_random_chunk(r));
	consume_all(_metadata, r, NULL);
	axle_check_stats(_metadata, r);
}

/* --- ready counted from the caller's head; release of unseen records ---- */

TEST_F_TIMEOUT(wa, release_unseen, 120)
{
	struct axle_run *r = &self->r;
	int fd = self->t.fd, err;
	struct cxl_ccm_wait w;
	__u32 h0 = r->head;
	struct sw a;

	/* Empty tenant: tiny timeouts. */
	EXPECT_EQ(EAGAIN, do_wait(fd, &w, 1, h0, 0));
	EXPECT_EQ(0U, w.ready);
	EXPECT_EQ(h0, w.metadata_tail);
	EXPECT_EQ(ETIMEDOUT, do_wait(fd, &w, 1, h0, 1));
	EXPECT_EQ(0U, w.ready);
	EXPECT_EQ(h0, w.metadata_tail);
	EXPECT_EQ(ETIMEDOUT, do_wait(fd, &w, 3, h0, 1000));
	EXPECT_EQ(EINVAL, do_wait(fd, &w, 0, h0, 0));
	EXPECT_EQ(EINVAL, do_wait(fd, &w, 1, h0 + 1, 0)) TH_LOG("head past the tail");
	EXPECT_EQ(EINVAL, do_wait(fd, &w, 1, h0 - 1, 0)) TH_LOG("head behind the released head");

	/* Eight records (2048 bytes in chunks of 256). */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0x5a5a5a5a, 2048, 256);
	err = do_wait(fd, &w, 8, h0, 10 * SEC);
	ASSERT_EQ(0, err) TH_LOG("%s, ready %u", strerror(err), w.ready);
	ASSERT_EQ(8U, w.ready);
	ASSERT_EQ(h0 + 8, w.metadata_tail);
	EXPECT_EQ(0, do_wait(fd, &w, 5, h0 + 3, 0));
	EXPECT_EQ(5U, w.ready);
	EXPECT_EQ(EAGAIN, do_wait(fd, &w, 6, h0 + 3, 0));
	EXPECT_EQ(5U, w.ready);
	EXPECT_EQ(h0 + 8, w.metadata_tail);
	EXPECT_EQ(0, do_wait(fd, &w, 8, h0, 1));
	EXPECT_EQ(ETIMEDOUT, do_wait(fd, &w, 1, h0 + 8, 1));
	EXPECT_EQ(0U, w.ready);
	EXPECT_EQ(EINVAL, do_wait(fd, &w, 1, h0 + 9, 0));
	/* Counts no ring can hold: never success (head + min must not wrap). */
	for (err = 0; err < 3; err++) {
		static const __u32 big[] = { 65, 0x80000000U, 0xffffffffU };
		int e = do_wait(fd, &w, big[err], h0, 1 * MS);

		EXPECT_TRUE(e == ETIMEDOUT || e == EINVAL)
			TH_LOG("min_records %#x with 8 ready: %s (ready %u)", big[err],
			       strerror(e), w.ready);
		if (e == ETIMEDOUT)
			EXPECT_EQ(8U, w.ready);
	}

	/* A waiter on h0 for 12 records; the consumer releases the 8 first. */
	sw_start_min(_metadata, &a, fd, h0, 12, 20 * SEC, false);
	axle_sleep_ns(50 * MS);
	EXPECT_FALSE(sw_done(&a)) TH_LOG("12-record WAIT returned %s with 8 ready",
					  strerror(a.err));
	axle_poll(_metadata, r);
	axle_release_pending(_metadata, r, true);
	ASSERT_EQ(h0 + 8, r->md_released);
	EXPECT_EQ(EINVAL, do_wait(fd, &w, 1, h0, 0)) TH_LOG("head behind the released head");
	EXPECT_EQ(EAGAIN, do_wait(fd, &w, 1, h0 + 8, 0));
	EXPECT_EQ(0U, w.ready);

	/* Four more records: the old waiter's count is reached. */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 1024, 256);
	ASSERT_EQ(0, join_within(a.tid, 25000));
	ksft_print_msg("waiter on a head released past: %s, ready %u, tail %u\n",
		       strerror(a.err), a.ready, a.tail);
	EXPECT_TRUE(a.err == 0 || a.err == EINVAL)
		TH_LOG("a waiter whose records were released unseen: %s (ready %u, tail %u)",
		       strerror(a.err), a.ready, a.tail);
	if (!a.err) {
		EXPECT_EQ(a.tail - h0, a.ready);
		EXPECT_LE(12U, a.ready);
	}
	consume_all(_metadata, r, NULL);
	EXPECT_EQ(h0 + 12, r->head);
	axle_check_stats(_metadata, r);
}

/* --- bad pointers beside a valid WAIT ------------------------------------ */

struct bp {
	int fd;
	void *ptr[5];
	struct wstats st;
	int stop;
	pthread_t tid;
};

static void *bp_thread(void *p)
{
	struct bp *b = p;
	__u64 t0, el;
	int i, k, ret;

	for (i = 0; i < 30 && !__atomic_load_n(&b->stop, __ATOMIC_SEQ_CST); i++) {
		for (k = 0; k < 5; k++) {
			t0 = axle_now_ns();
			errno = 0;
			ret = ioctl(b->fd, CXL_CCM_IOC_WAIT, b->ptr[k]);
			el = axle_now_ns() - t0;
			b->st.calls++;
			if (ret != -1 || errno != EFAULT)
				note_bad(&b->st, "WAIT(%p): %d, %s", b->ptr[k], ret, strerror(errno));
			else if (el > 500 * MS)
				note_bad(&b->st, "WAIT(%p): EFAULT after %llu ms (it waited first)",
					 b->ptr[k], (unsigned long long)(el / MS));
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(wa, bad_pointers, 120)
{
	long page = sysconf(_SC_PAGESIZE);
	struct axle_run *r = &self->r;
	struct cxl_ccm_wait w, *ro, *edge;
	struct bp b[2];
	__u8 *area;
	struct sw a;
	__u64 t0;
	int i;

	/* A read-only and a straddling argument, both well-formed. */
	area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	ASSERT_EQ(0, munmap(area + 2 * page, page));
	memset(&w, 0, sizeof(w));
	w.min_records = 1;
	w.metadata_head = r->head;
	w.timeout_ns = SEC;
	ro = (struct cxl_ccm_wait *)area;
	*ro = w;
	ASSERT_EQ(0, mprotect(area, page, PROT_READ));
	edge = (struct cxl_ccm_wait *)(area + 2 * page - 24);
	memcpy(edge, &w, 24);

	set_handler(false);
	sw_start(_metadata, &a, self->t.fd, r->head, 20 * SEC, false);
	for (i = 0; i < 2; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].fd = self->t.fd;
		b[i].ptr[0] = NULL;
		b[i].ptr[1] = (void *)16;
		b[i].ptr[2] = (void *)0xffff888000000000ULL;
		b[i].ptr[3] = edge;
		b[i].ptr[4] = ro;
		ASSERT_EQ(0, pthread_create(&b[i].tid, NULL, bp_thread, &b[i]));
	}
	axle_sleep_ns(100 * MS);
	EXPECT_FALSE(sw_done(&a)) TH_LOG("valid WAIT returned %s", strerror(a.err));
	/* Records wake the valid waiter while the bad calls go on. */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 7, 1024, 0);
	ASSERT_EQ(0, join_within(a.tid, 15000)) TH_LOG("WAIT not woken by the records");
	EXPECT_EQ(0, a.err) TH_LOG("woken WAIT: %s", strerror(a.err));
	EXPECT_LE(1U, a.ready);
	EXPECT_EQ(a.tail - a.head, a.ready);
	/* Stop them before releasing, so that their head stays valid. */
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&b[i].stop, 1, __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, join_within(b[i].tid, 60000)) TH_LOG("bad-pointer WAIT hangs");
		ksft_print_msg("bad-pointer thread %d: %lu calls\n", i, b[i].st.calls);
		EXPECT_EQ(0UL, b[i].st.bad) TH_LOG("%lu of %lu bad-pointer WAITs wrong, first: %s",
						   b[i].st.bad, b[i].st.calls, b[i].st.why);
	}
	consume_all(_metadata, r, NULL);

	/* Records ready, argument read-only: still EFAULT, at once. */
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 512, 0);
	ASSERT_EQ(0, do_wait(self->t.fd, &w, 1, r->head, 10 * SEC));
	ro = (struct cxl_ccm_wait *)area;
	ASSERT_EQ(0, mprotect(area, page, PROT_READ | PROT_WRITE));
	ro->metadata_head = r->head;
	ASSERT_EQ(0, mprotect(area, page, PROT_READ));
	t0 = axle_now_ns();
	EXPECT_EQ(-1, ioctl(self->t.fd, CXL_CCM_IOC_WAIT, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_GT(500 * MS, axle_now_ns() - t0);
	consume_all(_metadata, r, NULL);
	axle_check_stats(_metadata, r);
	munmap(area, 2 * page);
}

TEST_HARNESS_MAIN
