// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm's ioctls attacked concurrently, written from
 * Documentation/cxl_ccm.rst and include/uapi/linux/cxl_ccm.h alone (the
 * implementation was not read). Processes share a tenant through fork() (the
 * document: "a thread, or a forked child" may use the same file meanwhile)
 * and coordinate through a shared anonymous mapping; no pthreads.
 *
 * launch_stats_release_wait_race: four tenants (AXLE and, if advertised,
 *   AXLE_IRQ, RP and BS, where the driver produces the rings) each with two LAUNCH processes (on the first tenant under a
 *   storm of SIGUSR1, one with SA_RESTART, one without), a consumer (WAIT + metadata
 *   RELEASE), two payload RELEASE processes, two STATS_RESET processes, a STATS
 *   reader and an extra WAIT process, counters starting near 2^32. Every
 *   launch succeeds, tags are consecutive from index_base, every launch's
 *   FINAL record comes once with the right payload and checksum, the
 *   STATS_RESET figures add up exactly to what happened (launches, FINALs,
 *   records, bytes), no STATS value is below its baseline, WAIT fails only
 *   with documented errnos.
 * double_release_race: two processes RELEASE the same entries at once: each
 *   entry is released exactly once, the other gets EINVAL, STATS.errors
 *   counts exactly the refusals, and once everything is released the
 *   published payload head reaches the payload tail.
 * metadata_head_race: two processes release the metadata head to h + 8 and
 *   h + 4 at once: the released head ends at h + 8, the smaller one refused
 *   (EINVAL) if it comes second, never a regression.
 * configure_race: max_tenants + 4 processes CONFIGURE at once: distinct
 *   tenant numbers, exactly max_tenants of them, EBUSY for the rest; debugfs
 *   names each winner as owner; none leaks afterwards.
 * poll_wakeup_race: two processes in poll() on one tenant (AXLE, RP,
 *   AXLE_IRQ), a launch 1-30 ms later (across the poller's 10 ms lease):
 *   both wake with POLLIN; POLLIN clears once everything is released.
 * unbind_configure_race: processes open, CONFIGURE, LAUNCH, STATS and close
 *   in a loop while the device is unbound and bound eight times: each call
 *   succeeds or gets ENODEV (open: ENOENT while the node is gone), binds and
 *   unbinds return, and afterwards every tenant number can be configured and
 *   a launch round-trips (no tenant leaked). The loopers never write their
 *   input (zeroed at CONFIGURE), so every payload is OPERAND repeated: a
 *   kernel oops whose registers hold 0x5a5a5a5a... (seen: "spinlock bad
 *   magic" in kmemleak's __delete_object from slab_free, in cxl_ccm's
 *   fops_release or in unrelated frees) is a launch's result written into
 *   host memory after it was freed.
 * unbind_under_load: launchers blocked on a full launch ring, a WAIT_FOREVER
 *   waiter, STATS and RELEASE callers and a poll() on a second tenant while
 *   the device is unbound: the unbind returns, every blocked call ends with
 *   ENODEV or EIO, later calls get ENODEV, poll() says POLLHUP, the ring
 *   mapping stays readable; after the bind the old files still get ENODEV
 *   (an unconfigured one cannot become a tenant of the new binding) and a new
 *   tenant round-trips.
 *
 * Every wait is bounded; a process that does not finish has its kernel stack
 * printed before it is killed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define DRV "/sys/bus/platform/drivers/cxl_ccm"
#define WORDS 16			/* 64 bytes per launch: one record */
#define LBYTES (WORDS * 4)
#define OPERAND 0x5a5a5a5au
#define MAXL 4096			/* launches per tenant at most */
#define NPROC 14
#define NT 4				/* tenants of the big race: AXLE, AXLE_IRQ, RP, BS */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static __u32 load_tail(const volatile __u32 *p)
{
	__u32 v = __atomic_load_n(p, __ATOMIC_ACQUIRE);

#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshld" ::: "memory");
#endif
	return v;
}

/* The device number to use: @want if bound, else the highest bound one. */
static int pick_dev(int want)
{
	char p[128];
	DIR *d;
	struct dirent *e;
	int best = -1;

	snprintf(p, sizeof(p), DRV "/cxl_ccm.%d", want);
	if (access(p, F_OK) == 0)
		return want;
	d = opendir(DRV);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int n;

		if (sscanf(e->d_name, "cxl_ccm.%d", &n) == 1 && n > best)
			best = n;
	}
	closedir(d);
	return best;
}

static int open_dev(int n)
{
	char p[64];

	snprintf(p, sizeof(p), "/dev/cxl_ccm%d", n);
	return open(p, O_RDWR | O_CLOEXEC);
}

static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), rc = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = errno;
	close(fd);
	return rc;
}

static void print_stack(pid_t pid, const char *who)
{
	char p[64], buf[4096];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/stack", pid);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	printf("# stuck: %s (pid %d), kernel stack:\n", who, pid);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		printf("#   %s\n", l);
}

/*
 * Waits for @n children until @secs have passed; names, with their stacks,
 * those still running, kills them and returns how many were stuck.
 */
static int reap(pid_t *pids, const char **names, int n, int secs)
{
	__u64 end = now_ns() + (__u64)secs * 1000000000ull;
	int left = n, stuck = 0;

	while (left > 0) {
		left = 0;
		for (int i = 0; i < n; i++) {
			int st;

			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				if (WIFSIGNALED(st))
					printf("# %s (pid %d) killed by signal %d\n", names[i], pids[i],
					       WTERMSIG(st));
				pids[i] = 0;
			} else {
				left++;
			}
		}
		if (!left)
			break;
		if (now_ns() > end) {
			for (int i = 0; i < n; i++) {
				if (pids[i] <= 0)
					continue;
				print_stack(pids[i], names[i]);
				stuck++;
			}
			/*
			 * Killed, and waited for a little: a task stuck in the
			 * kernel does not die, and must not hang the test too.
			 */
			for (int i = 0; i < n; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
			for (int w = 0; w < 40; w++) {
				int alive = 0;

				for (int i = 0; i < n; i++) {
					if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) == pids[i])
						pids[i] = 0;
					alive += pids[i] > 0;
				}
				if (!alive)
					break;
				usleep(50000);
			}
			break;
		}
		usleep(20000);
	}
	return stuck;
}

/* ---- A tenant and its rings ---------------------------------------------- */

struct tenant {
	int fd;
	struct cxl_ccm_configure cfg;
	const struct cxl_ccm_ring_headers *hdr;
	const struct cxl_ccm_metadata_record *md;
	const __u8 *pl;
	__u32 *in;
	__u32 slot;
	__u32 expect[WORDS];	/* the output of a launch: input ^ OPERAND */
};

static int tenant_setup(struct tenant *t, int dev, __u32 mode, __u32 base, __u32 md_slots,
			__u32 pl_slots)
{
	memset(t, 0, sizeof(*t));
	t->fd = open_dev(dev);
	if (t->fd < 0)
		return errno;
	t->cfg.mode = mode;
	t->cfg.slot_size = 32;
	t->cfg.streaming_factor = 64;
	t->cfg.metadata_slots = md_slots;
	t->cfg.payload_slots = pl_slots;
	t->cfg.index_base = base;
	t->cfg.poll_interval_ns = 100000;
	t->cfg.input_size = 4096;
	int rc = xioctl(t->fd, CXL_CCM_IOC_CONFIGURE, &t->cfg);

	if (rc)
		return rc;
	t->slot = 32;
	t->hdr = mmap(NULL, t->cfg.headers_size, PROT_READ, MAP_SHARED, t->fd, CXL_CCM_MMAP_HEADERS);
	t->md = mmap(NULL, t->cfg.metadata_ring_size, PROT_READ, MAP_SHARED, t->fd,
		     CXL_CCM_MMAP_METADATA);
	t->pl = mmap(NULL, t->cfg.payload_ring_size, PROT_READ, MAP_SHARED, t->fd,
		     CXL_CCM_MMAP_PAYLOAD);
	t->in = mmap(NULL, t->cfg.input_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
		     CXL_CCM_MMAP_INPUT);
	if (t->hdr == MAP_FAILED || t->md == MAP_FAILED || t->pl == MAP_FAILED || t->in == MAP_FAILED)
		return errno ? errno : EFAULT;
	for (int i = 0; i < WORDS; i++) {
		t->in[i] = 0x01000193u * (i + 1) ^ (base + 7);
		t->expect[i] = t->in[i] ^ OPERAND;
	}
	__sync_synchronize();
	return 0;
}

static int launch(int fd, __u32 *tag)
{
	struct cxl_ccm_stream_xform_args xa = { .op = CXL_CCM_XFORM_OP_XOR, .operand = OPERAND };
	struct cxl_ccm_launch l = { .kernel_id = CXL_CCM_KERNEL_STREAM_XFORM, .input_offset = 0,
				    .input_size = LBYTES, .arg_size = sizeof(xa) };
	int rc;

	memcpy(l.args, &xa, sizeof(xa));
	rc = xioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
	if (!rc && tag)
		*tag = l.tag;
	return rc;
}

/*
 * Checks record @i: seq, flags, length, result offset, checksum and payload
 * (input ^ OPERAND). Returns NULL or what is wrong.
 */
static const char *check_record(const struct tenant *t, const struct cxl_ccm_metadata_record *r,
				__u32 i)
{
	static char why[160];
	__u8 buf[LBYTES];
	__u64 ring = (__u64)t->cfg.payload_slots * t->slot;

	if (r->seq != i)
		return snprintf(why, sizeof(why), "seq %u at index %u", r->seq, i), why;
	if (r->flags != CXL_CCM_MD_FLAG_FINAL || r->status)
		return snprintf(why, sizeof(why), "flags %#x status %u", r->flags, r->status), why;
	if (r->length != LBYTES || r->result_offset != 0)
		return snprintf(why, sizeof(why), "length %u offset %llu", r->length,
				(unsigned long long)r->result_offset), why;
	__u64 start = (__u64)(r->payload_index & (t->cfg.payload_slots - 1)) * t->slot;

	for (int b = 0; b < LBYTES; b++)
		buf[b] = t->pl[(start + b) % ring];
	if (cxl_ccm_crc32c(buf, LBYTES) != r->checksum)
		return snprintf(why, sizeof(why), "checksum %#x, payload's %#x", r->checksum,
				cxl_ccm_crc32c(buf, LBYTES)), why;
	for (int w = 0; w < WORDS; w++) {
		__u32 v;

		memcpy(&v, buf + 4 * w, 4);
		if (v != t->expect[w])
			return snprintf(why, sizeof(why), "word %d: %#x, expected %#x", w, v,
					t->expect[w]), why;
	}
	return NULL;
}

/* ---- Shared state of one tenant's race ------------------------------------ */

struct race {
	/* launches */
	__u32 tags[MAXL];
	__u32 nlaunched;		/* slots taken in tags[] */
	__u32 launch_err[8];		/* first errnos other than 0 */
	__u32 nlaunch_err;
	__u32 launch_eintr;		/* EINTR of the launcher without SA_RESTART */
	__u32 signals;			/* SIGUSR1 sent to the launchers */
	pid_t launcher_pid[2];
	__u32 signal_storm;
	__u32 mode;
	__u32 launch_ebusy;		/* RP, BS: 64 completed launches wait for room */
	__u32 launchers_done;
	/* consumer */
	__u32 finals[MAXL];		/* FINAL records per tag offset */
	__u32 nrecords;
	__u32 bad_records;
	char bad_why[160];
	__u32 released_md;		/* metadata head the consumer released */
	__u32 consumer_done;
	__u32 consumer_err;
	/* payload releases */
	struct cxl_ccm_release_entry q[MAXL];
	__u32 qtail, qhead;
	__u32 release_err, release_errno;
	__u32 releasers_done;
	/* stats */
	__u64 sum_launched, sum_completed, sum_records, sum_bytes, sum_errors;
	__u32 resets;
	__u32 stats_calls;
	__u32 stats_bad;		/* values at or above 2^40, or a wrong tenant */
	char stats_why[160];
	__u32 stats_err;
	/* the extra waiter */
	__u32 waits, wait_unexpected, wait_errno;
	__u32 wait_eintr_like;
	__u32 all_done;
};

static void add_stats(struct race *r, const struct cxl_ccm_stats *s)
{
	__atomic_add_fetch(&r->sum_launched, s->launched, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->sum_completed, s->launches_completed, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->sum_records, s->records, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->sum_bytes, s->payload_bytes, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->sum_errors, s->errors, __ATOMIC_SEQ_CST);
}

static int stats_sane(struct race *r, const struct cxl_ccm_stats *s, __u32 tenant)
{
	const __u64 lim = 1ull << 40;
	const __u64 *v = &s->launched;
	/* launched .. host_stall_ns: 16 counters after flags/tenant */
	for (int i = 0; i < 16; i++) {
		if (v[i] >= lim) {
			if (!r->stats_bad)
				snprintf(r->stats_why, sizeof(r->stats_why),
					 "counter %d of STATS is %llu (below its baseline?)", i,
					 (unsigned long long)v[i]);
			__atomic_add_fetch(&r->stats_bad, 1, __ATOMIC_SEQ_CST);
			return 0;
		}
	}
	if (s->tenant != tenant) {
		if (!r->stats_bad)
			snprintf(r->stats_why, sizeof(r->stats_why), "STATS tenant %u, expected %u",
				 s->tenant, tenant);
		__atomic_add_fetch(&r->stats_bad, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	return 1;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * Launcher @which: under a signal storm, launcher 0 restarts its calls
 * (SA_RESTART: a launch is never refused with EINTR, never doubled) and
 * launcher 1 does not (EINTR is a documented answer, not an error).
 */
/*
 * At least this many launches per launcher, however slow the machine: the
 * race is then run, not skipped because the time ran out before the start.
 */
#define MIN_LAUNCHES 32

static void launcher(struct tenant *t, struct race *r, __u64 run_ns, int max, int which)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = which ? 0 : SA_RESTART };
	__u64 deadline = now_ns() + run_ns;

	sigaction(SIGUSR1, &sa, NULL);
	r->launcher_pid[which] = getpid();
	for (int i = 0; i < max && (i < MIN_LAUNCHES || now_ns() < deadline); i++) {
		__u32 tag;
		int rc = launch(t->fd, &tag);

		if (rc == EINTR && which == 1) {
			__atomic_add_fetch(&r->launch_eintr, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		if (rc == EBUSY && (r->mode == CXL_CCM_MODE_RP || r->mode == CXL_CCM_MODE_BS)) {
			__atomic_add_fetch(&r->launch_ebusy, 1, __ATOMIC_SEQ_CST);
			usleep(1000);
			continue;
		}
		if (rc) {
			__u32 k = __atomic_fetch_add(&r->nlaunch_err, 1, __ATOMIC_SEQ_CST);

			if (k < 8)
				r->launch_err[k] = rc;
			if (rc == ENODEV || rc == EIO)
				break;
			continue;
		}
		__u32 k = __atomic_fetch_add(&r->nlaunched, 1, __ATOMIC_SEQ_CST);

		if (k < MAXL)
			r->tags[k] = tag;
	}
	__atomic_add_fetch(&r->launchers_done, 1, __ATOMIC_SEQ_CST);
}

static void consumer(struct tenant *t, struct race *r, int nlaunchers, __u64 run_ns)
{
	__u64 deadline = now_ns() + run_ns;
	__u32 head = t->cfg.index_base;

	for (;;) {
		struct cxl_ccm_wait w = { .min_records = 1, .metadata_head = head,
					  .timeout_ns = 20000000 };
		int rc = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);

		if (rc && rc != ETIMEDOUT) {
			r->consumer_err = rc;
			break;
		}
		__u32 tail = load_tail(&t->hdr->metadata.tail);

		for (; head != tail; head++) {
			struct cxl_ccm_metadata_record rec = t->md[head & (t->cfg.metadata_slots - 1)];
			const char *why = check_record(t, &rec, head);

			r->nrecords++;
			if (why) {
				if (!r->bad_records)
					snprintf(r->bad_why, sizeof(r->bad_why), "record %u: %s", head, why);
				r->bad_records++;
			}
			__u32 off = rec.tag - t->cfg.index_base;

			if (off < MAXL && (rec.flags & CXL_CCM_MD_FLAG_FINAL))
				__atomic_add_fetch(&r->finals[off], 1, __ATOMIC_SEQ_CST);
			r->q[r->qtail % MAXL] = (struct cxl_ccm_release_entry){ rec.payload_index,
										 rec.length };
			__atomic_store_n(&r->qtail, r->qtail + 1, __ATOMIC_RELEASE);
		}
		if (head != __atomic_load_n(&r->released_md, __ATOMIC_SEQ_CST)) {
			struct cxl_ccm_release rel = { .count = 0, .flags = CXL_CCM_RELEASE_METADATA,
						       .metadata_head = head };

			rc = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
			if (rc) {
				r->consumer_err = rc;
				break;
			}
			__atomic_store_n(&r->released_md, head, __ATOMIC_SEQ_CST);
		}
		__u32 done = __atomic_load_n(&r->launchers_done, __ATOMIC_SEQ_CST);
		__u32 n = __atomic_load_n(&r->nlaunched, __ATOMIC_SEQ_CST);

		if (done == (__u32)nlaunchers && head - t->cfg.index_base == n)
			break;
		if (now_ns() > deadline) {
			r->consumer_err = ETIME;
			break;
		}
	}
	__atomic_store_n(&r->consumer_done, 1, __ATOMIC_SEQ_CST);
}

static void releaser(struct tenant *t, struct race *r)
{
	for (unsigned int n = 0;; n++) {
		__u32 h = __atomic_load_n(&r->qhead, __ATOMIC_SEQ_CST);
		__u32 tl = __atomic_load_n(&r->qtail, __ATOMIC_ACQUIRE);

		if (h == tl) {
			if (__atomic_load_n(&r->consumer_done, __ATOMIC_SEQ_CST) &&
			    h == __atomic_load_n(&r->qtail, __ATOMIC_ACQUIRE))
				break;
			usleep(200);
			continue;
		}
		if (!__atomic_compare_exchange_n(&r->qhead, &h, h + 1, 0, __ATOMIC_SEQ_CST,
						  __ATOMIC_SEQ_CST))
			continue;
		struct cxl_ccm_release_entry e = r->q[h % MAXL];
		struct cxl_ccm_release rel = { .entries = (__u64)(uintptr_t)&e, .count = 1,
					       .flags = (n % 8 == 7) ? CXL_CCM_RELEASE_PUBLISH : 0 };
		int rc = xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);

		if (rc) {
			if (!r->release_err)
				r->release_errno = rc;
			__atomic_add_fetch(&r->release_err, 1, __ATOMIC_SEQ_CST);
		}
	}
	/* What is still unpublished goes now. */
	struct cxl_ccm_release rel = { .flags = CXL_CCM_RELEASE_PUBLISH };

	xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
	__atomic_add_fetch(&r->releasers_done, 1, __ATOMIC_SEQ_CST);
}

static void stats_proc(struct tenant *t, struct race *r, int reset)
{
	while (!__atomic_load_n(&r->all_done, __ATOMIC_SEQ_CST)) {
		struct cxl_ccm_stats s = { .flags = reset ? CXL_CCM_STATS_RESET : 0 };
		int rc = xioctl(t->fd, CXL_CCM_IOC_STATS, &s);

		if (rc) {
			r->stats_err = rc;
			break;
		}
		__atomic_add_fetch(&r->stats_calls, 1, __ATOMIC_SEQ_CST);
		stats_sane(r, &s, t->cfg.tenant);
		if (reset) {
			add_stats(r, &s);
			__atomic_add_fetch(&r->resets, 1, __ATOMIC_SEQ_CST);
		}
		sched_yield();
	}
}

static void extra_waiter(struct tenant *t, struct race *r)
{
	while (!__atomic_load_n(&r->consumer_done, __ATOMIC_SEQ_CST)) {
		struct cxl_ccm_wait w = { .min_records = 1,
					  .metadata_head = __atomic_load_n(&r->released_md,
									   __ATOMIC_SEQ_CST),
					  .timeout_ns = 10000000 };
		int rc = xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);

		r->waits++;
		/*
		 * EINVAL: the consumer released past the head between the load
		 * and the call (the head is checked when the call starts).
		 */
		if (rc == EINVAL)
			r->wait_eintr_like++;
		else if (rc && rc != ETIMEDOUT && rc != EAGAIN) {
			if (!r->wait_unexpected)
				r->wait_errno = rc;
			r->wait_unexpected++;
		}
	}
}

/* SIGUSR1 to each launcher in turn, every 200 us, until they are done. */
static void signaller(struct race *r)
{
	while (__atomic_load_n(&r->launchers_done, __ATOMIC_SEQ_CST) < 2) {
		for (int k = 0; k < 2; k++) {
			pid_t p = __atomic_load_n(&r->launcher_pid[k], __ATOMIC_SEQ_CST);

			if (p > 0 && !kill(p, SIGUSR1))
				r->signals++;
		}
		usleep(200);
	}
}

static int cmp_u32_from(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

FIXTURE(ca) {
	int dev;
};

FIXTURE_SETUP(ca)
{
	self->dev = pick_dev(5);
	if (self->dev < 0)
		SKIP(return, "no cxl_ccm device bound");
}

FIXTURE_TEARDOWN(ca)
{
}

/* Every process of the big race starts at once, when *go_flag is set. */
static __u32 *go_flag;

static void wait_go(void)
{
	while (go_flag && !__atomic_load_n(go_flag, __ATOMIC_SEQ_CST))
		usleep(200);
}

/* Starts the processes of one tenant's race; returns how many. */
static int start_race(struct tenant *t, struct race *r, pid_t *pids, const char **names,
		      __u64 run_ns)
{
	int n = 0;
#define SPAWN(name, body)                                  \
	do {                                               \
		pid_t p = fork();                          \
		if (p == 0) {                              \
			wait_go();                         \
			body;                              \
			_exit(0);                          \
		}                                          \
		names[n] = name;                           \
		pids[n++] = p;                             \
	} while (0)
	SPAWN("launcher 1", launcher(t, r, run_ns, MAXL / 4, 0));
	SPAWN("launcher 2", launcher(t, r, run_ns, MAXL / 4, 1));
	SPAWN("consumer", consumer(t, r, 2, run_ns + 60000000000ull));
	SPAWN("releaser 1", releaser(t, r));
	SPAWN("releaser 2", releaser(t, r));
	SPAWN("STATS_RESET", stats_proc(t, r, 1));
	SPAWN("STATS_RESET 2", stats_proc(t, r, 1));
	SPAWN("STATS", stats_proc(t, r, 0));
	SPAWN("WAIT", extra_waiter(t, r));
	if (r->signal_storm)
		SPAWN("signaller", signaller(r));
#undef SPAWN
	return n;
}

TEST_F_TIMEOUT(ca, launch_stats_release_wait_race, 170)
{
	struct cxl_ccm_info info = { 0 };
	struct tenant t[NT];
	struct race *r[NT];
	pid_t pids[NT][NPROC];
	const char *names[NT][NPROC];
	int np[NT], fails = 0;
	__u32 bases[NT] = { 0xffffff00u, 0xfffffff0u, 0xffffff80u, 0x7ffffff0u };
	__u32 modes[NT] = { CXL_CCM_MODE_AXLE, CXL_CCM_MODE_AXLE_IRQ, CXL_CCM_MODE_RP,
			    CXL_CCM_MODE_BS };
	int fd = open_dev(self->dev);

	ASSERT_LE(0, fd) TH_LOG("open /dev/cxl_ccm%d: %s", self->dev, strerror(errno));
	ASSERT_EQ(0, xioctl(fd, CXL_CCM_IOC_INFO, &info));
	close(fd);
	for (int k = 1; k < NT; k++)
		if (!(info.caps & (1ull << modes[k])))
			modes[k] = CXL_CCM_MODE_AXLE;
	for (int k = 0; k < NT; k++) {
		int rc = tenant_setup(&t[k], self->dev, modes[k], bases[k], 256, 512);

		ASSERT_EQ(0, rc) TH_LOG("tenant %d (mode %u): %s", k, modes[k], strerror(rc));
		r[k] = mmap(NULL, sizeof(struct race), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, r[k]);
		memset(r[k], 0, sizeof(struct race));
		r[k]->released_md = bases[k];
		r[k]->signal_storm = k == 0;
		r[k]->mode = modes[k];
	}
	go_flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, go_flag);
	*go_flag = 0;
	/* Each process times its part from the start signal, not from here. */
	__u64 run_ns = 6000000000ull;

	for (int k = 0; k < NT; k++)
		np[k] = start_race(&t[k], r[k], pids[k], names[k], run_ns);
	usleep(300000);
	__atomic_store_n(go_flag, 1, __ATOMIC_SEQ_CST);
	/* Launchers, consumer and releasers first; then the stats processes. */
	for (int k = 0; k < NT; k++) {
		int stuck = reap(pids[k], names[k], 5, 90);

		__atomic_store_n(&r[k]->all_done, 1, __ATOMIC_SEQ_CST);
		stuck += reap(pids[k] + 5, names[k] + 5, np[k] - 5, 30);
		if (stuck) {
			printf("# tenant %u: %d processes did not finish\n", t[k].cfg.tenant, stuck);
			fails++;
		}
	}
	for (int k = 0; k < NT; k++) {
		struct race *x = r[k];
		__u32 n = x->nlaunched, base = bases[k];
		struct cxl_ccm_stats s;
		int settle;

		printf("# tenant %u mode %u: %u launches, %u records, %u STATS_RESET, %u STATS calls, %u extra WAITs (%u EINVAL for a head released meanwhile); %u signals, %u EINTR\n",
		       t[k].cfg.tenant, modes[k], n, x->nrecords, x->resets, x->stats_calls,
		       x->waits, x->wait_eintr_like, x->signals, x->launch_eintr);
		if (x->launch_ebusy)
			printf("# tenant %u: %u launches refused with EBUSY (64 completed launches waiting for room)\n",
			       t[k].cfg.tenant, x->launch_ebusy);
		if (x->nlaunch_err) {
			printf("# tenant %u: %u LAUNCH failures, first errno %u (%s)\n",
			       t[k].cfg.tenant, x->nlaunch_err, x->launch_err[0],
			       strerror(x->launch_err[0]));
			fails++;
		}
		if (n == 0 || n > MAXL) {
			printf("# tenant %u: %u launches\n", t[k].cfg.tenant, n);
			fails++;
			continue;
		}
		/* Tags: consecutive from index_base, each once. */
		__u32 *off = malloc(n * sizeof(*off));

		for (__u32 i = 0; i < n; i++)
			off[i] = x->tags[i] - base;
		qsort(off, n, sizeof(*off), cmp_u32_from);
		for (__u32 i = 0; i < n; i++)
			if (off[i] != i) {
				printf("# tenant %u: sorted tag %u is index_base + %u (tags not consecutive or repeated)\n",
				       t[k].cfg.tenant, i, off[i]);
				fails++;
				break;
			}
		free(off);
		for (__u32 i = 0; i < n; i++)
			if (x->finals[i] != 1) {
				printf("# tenant %u: launch index_base + %u has %u FINAL records\n",
				       t[k].cfg.tenant, i, x->finals[i]);
				fails++;
				break;
			}
		if (x->nrecords != n || x->bad_records) {
			printf("# tenant %u: %u records for %u launches, %u bad (%s)\n", t[k].cfg.tenant,
			       x->nrecords, n, x->bad_records, x->bad_why);
			fails++;
		}
		if (x->consumer_err) {
			printf("# tenant %u: consumer stopped with %s\n", t[k].cfg.tenant,
			       strerror(x->consumer_err));
			fails++;
		}
		if (x->release_err) {
			printf("# tenant %u: %u payload RELEASEs failed, first with %s\n",
			       t[k].cfg.tenant, x->release_err, strerror(x->release_errno));
			fails++;
		}
		if (x->wait_unexpected) {
			printf("# tenant %u: %u WAITs failed with an undocumented errno, first %s\n",
			       t[k].cfg.tenant, x->wait_unexpected, strerror(x->wait_errno));
			fails++;
		}
		if (x->stats_err || x->stats_bad) {
			printf("# tenant %u: STATS errno %u, %u bad readings: %s\n", t[k].cfg.tenant,
			       x->stats_err, x->stats_bad, x->stats_why);
			fails++;
		}
		/*
		 * The rest since the last reset: the device mirrors its counters a
		 * service pass late, so read until the sums add up (at most 3 s);
		 * the driver's own counters must add up at the first read.
		 */
		for (settle = 0; settle < 30; settle++) {
			memset(&s, 0, sizeof(s));
			s.flags = CXL_CCM_STATS_RESET;
			if (xioctl(t[k].fd, CXL_CCM_IOC_STATS, &s)) {
				printf("# final STATS_RESET: %s\n", strerror(errno));
				fails++;
				break;
			}
			stats_sane(x, &s, t[k].cfg.tenant);
			add_stats(x, &s);
			if (x->sum_records == n && x->sum_bytes == (__u64)n * LBYTES)
				break;
			usleep(100000);
		}
		printf("# tenant %u: STATS_RESET sums: launched %llu completed %llu records %llu bytes %llu errors %llu; unpublished %llu\n",
		       t[k].cfg.tenant, (unsigned long long)x->sum_launched,
		       (unsigned long long)x->sum_completed, (unsigned long long)x->sum_records,
		       (unsigned long long)x->sum_bytes, (unsigned long long)x->sum_errors,
		       (unsigned long long)s.unpublished);
		if (x->sum_launched != n || x->sum_completed != n || x->sum_records != n ||
		    x->sum_bytes != (__u64)n * LBYTES || x->sum_errors != x->launch_ebusy) {
			printf("# tenant %u: the STATS_RESET figures do not add up to %u launches of one %d-byte record and %u refused launches\n",
			       t[k].cfg.tenant, n, LBYTES, x->launch_ebusy);
			fails++;
		}
		if (s.unpublished) {
			printf("# tenant %u: %llu unpublished host stores\n", t[k].cfg.tenant,
			       (unsigned long long)s.unpublished);
			fails++;
		}
	}
	for (int k = 0; k < NT; k++)
		close(t[k].fd);
	EXPECT_EQ(0, fails);
}

/* Two processes release the same entries: each exactly once. */
struct dbl {
	struct cxl_ccm_release_entry e[64];
	int rc[2][64];
	__u32 go;
	__u32 ready;
};

TEST_F_TIMEOUT(ca, double_release_race, 90)
{
	struct tenant t;
	struct dbl *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	int rc = tenant_setup(&t, self->dev, CXL_CCM_MODE_AXLE, 0xffffffc0u, 256, 512);
	__u32 head = t.cfg.index_base, refused = 0, fails = 0;

	ASSERT_EQ(0, rc) TH_LOG("tenant: %s", strerror(rc));
	ASSERT_NE(MAP_FAILED, d);
	for (int round = 0; round < 4; round++) {
		const int n = 40;

		for (int i = 0; i < n; i++)
			ASSERT_EQ(0, launch(t.fd, NULL));
		struct cxl_ccm_wait w = { .min_records = n, .metadata_head = head,
					  .timeout_ns = 20000000000ull };

		rc = xioctl(t.fd, CXL_CCM_IOC_WAIT, &w);
		ASSERT_EQ(0, rc) TH_LOG("WAIT for %d records: %s (ready %u)", n, strerror(rc), w.ready);
		for (int i = 0; i < n; i++) {
			struct cxl_ccm_metadata_record rec = t.md[(head + i) & (t.cfg.metadata_slots - 1)];
			const char *why = check_record(&t, &rec, head + i);

			ASSERT_EQ(NULL, why) TH_LOG("%s", why);
			d->e[i] = (struct cxl_ccm_release_entry){ rec.payload_index, rec.length };
		}
		head += n;
		struct cxl_ccm_release mrel = { .flags = CXL_CCM_RELEASE_METADATA, .metadata_head = head };

		ASSERT_EQ(0, xioctl(t.fd, CXL_CCM_IOC_RELEASE, &mrel));
		d->go = 0;
		d->ready = 0;
		pid_t pids[2];
		const char *names[2] = { "releaser 1", "releaser 2" };

		for (int k = 0; k < 2; k++) {
			pids[k] = fork();
			if (pids[k] == 0) {
				__atomic_add_fetch(&d->ready, 1, __ATOMIC_SEQ_CST);
				while (!__atomic_load_n(&d->go, __ATOMIC_SEQ_CST))
					;
				for (int i = 0; i < n; i++) {
					struct cxl_ccm_release rel = {
						.entries = (__u64)(uintptr_t)&d->e[i], .count = 1 };

					d->rc[k][i] = xioctl(t.fd, CXL_CCM_IOC_RELEASE, &rel);
				}
				_exit(0);
			}
		}
		while (__atomic_load_n(&d->ready, __ATOMIC_SEQ_CST) < 2)
			usleep(1000);
		__atomic_store_n(&d->go, 1, __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, reap(pids, names, 2, 30));
		for (int i = 0; i < n; i++) {
			int a = d->rc[0][i], b = d->rc[1][i];

			if (!((a == 0 && b == EINVAL) || (a == EINVAL && b == 0))) {
				if (fails++ < 5)
					printf("# round %d entry %d (payload_index %u): releases gave %s and %s\n",
					       round, i, d->e[i].payload_index, strerror(a), strerror(b));
			}
			refused += (a == EINVAL) + (b == EINVAL);
		}
		struct cxl_ccm_release pub = { .flags = CXL_CCM_RELEASE_PUBLISH };

		ASSERT_EQ(0, xioctl(t.fd, CXL_CCM_IOC_RELEASE, &pub));
		__u32 ptail = load_tail(&t.hdr->payload.tail);

		if (pub.payload_head_published != ptail || pub.metadata_head_published != head) {
			printf("# round %d: everything released, published heads md %#x pl %#x, tails md %#x pl %#x\n",
			       round, pub.metadata_head_published, pub.payload_head_published, head, ptail);
			fails++;
		}
	}
	struct cxl_ccm_stats s = { 0 };

	ASSERT_EQ(0, xioctl(t.fd, CXL_CCM_IOC_STATS, &s));
	printf("# %u refused double releases, STATS.errors %llu, launched %llu\n", refused,
	       (unsigned long long)s.errors, (unsigned long long)s.launched);
	if (s.errors != refused) {
		printf("# STATS.errors counts %llu rejected releases, %u were refused\n",
		       (unsigned long long)s.errors, refused);
		fails++;
	}
	close(t.fd);
	EXPECT_EQ(0, fails);
}

/* ---- Two metadata heads released at once ----------------------------------- */

struct mhr {
	int rc[2];
	__u32 go, ready;
};

/*
 * One process releases the metadata head to h + 8, another to h + 4, at
 * once: the released head ends at h + 8 (a smaller head is refused if it
 * comes second, EINVAL), never regresses to h + 4.
 */
TEST_F_TIMEOUT(ca, metadata_head_race, 90)
{
	struct tenant t;
	struct mhr *x = mmap(NULL, sizeof(*x), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	int rc = tenant_setup(&t, self->dev, CXL_CCM_MODE_AXLE, 0xfffffff0u, 64, 128);
	__u32 head = t.cfg.index_base;
	int fails = 0, big_first = 0, small_first = 0;

	ASSERT_EQ(0, rc) TH_LOG("tenant: %s", strerror(rc));
	ASSERT_NE(MAP_FAILED, x);
	for (int round = 0; round < 30; round++) {
		struct cxl_ccm_release_entry e[8];
		__u32 to[2] = { head + 8, head + 4 };
		pid_t pids[2];
		const char *names[2] = { "release to +8", "release to +4" };

		for (int i = 0; i < 8; i++)
			ASSERT_EQ(0, launch(t.fd, NULL));
		struct cxl_ccm_wait w = { .min_records = 8, .metadata_head = head,
					  .timeout_ns = 10000000000ull };

		rc = xioctl(t.fd, CXL_CCM_IOC_WAIT, &w);
		ASSERT_EQ(0, rc) TH_LOG("WAIT: %s", strerror(rc));
		for (int i = 0; i < 8; i++) {
			struct cxl_ccm_metadata_record rec = t.md[(head + i) & (t.cfg.metadata_slots - 1)];

			e[i] = (struct cxl_ccm_release_entry){ rec.payload_index, rec.length };
		}
		x->go = 0;
		x->ready = 0;
		for (int k = 0; k < 2; k++) {
			pids[k] = fork();
			if (pids[k] == 0) {
				struct cxl_ccm_release rel = { .flags = CXL_CCM_RELEASE_METADATA,
							       .metadata_head = to[k] };

				__atomic_add_fetch(&x->ready, 1, __ATOMIC_SEQ_CST);
				while (!__atomic_load_n(&x->go, __ATOMIC_SEQ_CST))
					;
				x->rc[k] = xioctl(t.fd, CXL_CCM_IOC_RELEASE, &rel);
				_exit(0);
			}
		}
		while (__atomic_load_n(&x->ready, __ATOMIC_SEQ_CST) < 2)
			usleep(500);
		__atomic_store_n(&x->go, 1, __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, reap(pids, names, 2, 30));
		/* Payload back, then publish: the published metadata head is the released one. */
		struct cxl_ccm_release rel = { .entries = (__u64)(uintptr_t)e, .count = 8,
					       .flags = CXL_CCM_RELEASE_PUBLISH };
		int prc = xioctl(t.fd, CXL_CCM_IOC_RELEASE, &rel);

		if (x->rc[0] == 0 && x->rc[1] == EINVAL)
			big_first++;
		else if (x->rc[0] == 0 && x->rc[1] == 0)
			small_first++;
		if (prc || rel.metadata_head_published != head + 8 ||
		    !((x->rc[0] == 0 && x->rc[1] == EINVAL) || (x->rc[0] == 0 && x->rc[1] == 0))) {
			if (fails++ < 5)
				printf("# round %d: to +8: %s, to +4: %s; then the published metadata head is +%d (release %s)\n",
				       round, strerror(x->rc[0]), strerror(x->rc[1]),
				       (int)(rel.metadata_head_published - head), strerror(prc));
		}
		/* A WAIT from the smaller head must now be refused (behind the released one). */
		struct cxl_ccm_wait w2 = { .min_records = 1, .metadata_head = head + 4, .timeout_ns = 0 };

		rc = xioctl(t.fd, CXL_CCM_IOC_WAIT, &w2);
		if (rc != EINVAL) {
			if (fails++ < 5)
				printf("# round %d: WAIT from +4 after the release to +8: %s, EINVAL expected\n",
				       round, strerror(rc));
		}
		head += 8;
	}
	printf("# 30 rounds: +8 first %d, +4 first %d, %d wrong\n", big_first, small_first, fails);
	close(t.fd);
	EXPECT_EQ(0, fails);
}

/* ---- CONFIGURE from many processes at once --------------------------------- */

struct cfgrace {
	int tenant[40];
	int err[40];
	pid_t pid[40];
	__u32 reported;
};

TEST_F_TIMEOUT(ca, configure_race, 90)
{
	struct cxl_ccm_info info = { 0 };
	int fd = open_dev(self->dev), go[2], hold[2], fails = 0;
	struct cfgrace *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, xioctl(fd, CXL_CCM_IOC_INFO, &info));
	close(fd);
	int m = info.max_tenants, k = m + 4;

	ASSERT_LE(k, 40);
	for (int round = 0; round < 2; round++) {
		pid_t pids[40];
		const char *names[40];

		memset(c, 0, sizeof(*c));
		ASSERT_EQ(0, pipe(go));
		ASSERT_EQ(0, pipe(hold));
		for (int i = 0; i < k; i++) {
			names[i] = "configurer";
			pids[i] = fork();
			if (pids[i] == 0) {
				char b;
				int f = open_dev(self->dev);
				struct cxl_ccm_configure cfg = { .mode = CXL_CCM_MODE_AXLE, .slot_size = 32,
								 .streaming_factor = 32, .metadata_slots = 16,
								 .payload_slots = 16, .input_size = 4096 };

				close(go[1]);
				close(hold[1]);
				if (read(go[0], &b, 1) < 0)
					_exit(1);
				c->err[i] = f < 0 ? errno : xioctl(f, CXL_CCM_IOC_CONFIGURE, &cfg);
				c->tenant[i] = c->err[i] ? -1 : (int)cfg.tenant;
				c->pid[i] = getpid();
				__atomic_add_fetch(&c->reported, 1, __ATOMIC_SEQ_CST);
				if (read(hold[0], &b, 1) < 0)
					_exit(1);
				_exit(0);
			}
		}
		close(go[0]);
		close(hold[0]);
		usleep(200000);
		close(go[1]);	/* every child's read() returns at once */
		for (int w = 0; w < 600 && __atomic_load_n(&c->reported, __ATOMIC_SEQ_CST) < (__u32)k; w++)
			usleep(50000);
		int wins = 0, busy = 0, other = 0, seen[40] = { 0 };

		for (int i = 0; i < k; i++) {
			if (!c->err[i] && c->tenant[i] >= 0 && c->tenant[i] < 40) {
				wins++;
				if (seen[c->tenant[i]]++) {
					printf("# round %d: tenant %d given twice\n", round, c->tenant[i]);
					fails++;
				}
			} else if (c->err[i] == EBUSY) {
				busy++;
			} else {
				other++;
				printf("# round %d: process %d: CONFIGURE %s\n", round, i,
				       strerror(c->err[i]));
			}
		}
		printf("# round %d: %d processes: %d tenants, %d EBUSY, %d other (max_tenants %d, %u reported)\n",
		       round, k, wins, busy, other, m, c->reported);
		if (wins != m || busy != k - m || other) {
			printf("# round %d: expected %d tenants and %d EBUSY\n", round, m, k - m);
			fails++;
		}
		/* debugfs names each winner as its tenant's owner. */
		char path[96], line[512];

		snprintf(path, sizeof(path), "/sys/kernel/debug/cxl_ccm%d/stats", self->dev);
		FILE *f = fopen(path, "r");
		int owner_col = -1, checked = 0;

		while (f && fgets(line, sizeof(line), f)) {
			char copy[512], *tok, *save;
			int col = 0, tnum = -1;
			long owner = -1;

			strcpy(copy, line);
			if (owner_col < 0) {
				for (tok = strtok_r(copy, " \t\n", &save); tok;
				     tok = strtok_r(NULL, " \t\n", &save), col++)
					if (!strcmp(tok, "owner"))
						owner_col = col;
				continue;
			}
			for (tok = strtok_r(copy, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save), col++) {
				if (col == 0 && sscanf(tok, "%d", &tnum) != 1)
					break;
				if (col == owner_col)
					owner = strtol(tok, NULL, 10);
			}
			for (int i = 0; i < k; i++)
				if (!c->err[i] && c->tenant[i] == tnum) {
					checked++;
					if (owner != c->pid[i]) {
						printf("# round %d: debugfs owner of tenant %d is %ld, configured by pid %d: %s",
						       round, tnum, owner, c->pid[i], line);
						fails++;
					}
				}
		}
		if (f)
			fclose(f);
		if (checked != wins) {
			printf("# round %d: debugfs (%s) has an owner for %d of %d tenants (owner column %d)\n",
			       round, path, checked, wins, owner_col);
			fails++;
		}
		close(hold[1]);
		ASSERT_EQ(0, reap(pids, names, k, 30));
		/* No tenant number leaked: all can be configured again. */
		int fds[40], again = 0;

		for (int i = 0; i < m; i++) {
			struct cxl_ccm_configure cfg = { .mode = CXL_CCM_MODE_AXLE, .slot_size = 32,
							 .streaming_factor = 32, .metadata_slots = 16,
							 .payload_slots = 16, .input_size = 4096 };

			fds[i] = open_dev(self->dev);
			if (fds[i] >= 0 && !xioctl(fds[i], CXL_CCM_IOC_CONFIGURE, &cfg))
				again++;
		}
		for (int i = 0; i < m; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (again != m) {
			printf("# round %d: after the race only %d of %d tenants could be configured\n",
			       round, again, m);
			fails++;
		}
	}
	EXPECT_EQ(0, fails);
}

/* ---- poll() wake-ups ------------------------------------------------------- */

struct pw {
	int revents[2];
	__u64 ns[2];
	__u32 ready;
};

/*
 * Two processes sleep in poll() on one tenant; the launch comes 1-30 ms
 * later (across the poller's 10 ms lease); both must wake with POLLIN.
 */
TEST_F_TIMEOUT(ca, poll_wakeup_race, 150)
{
	struct cxl_ccm_info info = { 0 };
	struct pw *pw = mmap(NULL, sizeof(*pw), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	__u32 modes[3] = { CXL_CCM_MODE_AXLE, CXL_CCM_MODE_RP, CXL_CCM_MODE_AXLE_IRQ };
	int fd = open_dev(self->dev), fails = 0;

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, pw);
	ASSERT_EQ(0, xioctl(fd, CXL_CCM_IOC_INFO, &info));
	close(fd);
	for (int m = 0; m < 3; m++) {
		struct tenant t;
		__u32 head = 0;
		__u64 worst = 0;
		int lost = 0, rc;

		if (!(info.caps & (1ull << modes[m])))
			continue;
		rc = tenant_setup(&t, self->dev, modes[m], 0, 64, 128);
		ASSERT_EQ(0, rc) TH_LOG("mode %u: %s", modes[m], strerror(rc));
		for (int it = 0; it < 25; it++) {
			pid_t pids[2];
			const char *names[2] = { "poller", "poller" };

			memset(pw, 0, sizeof(*pw));
			for (int k = 0; k < 2; k++) {
				pids[k] = fork();
				if (pids[k] == 0) {
					struct pollfd p = { .fd = t.fd, .events = POLLIN };
					__u64 t0 = now_ns();

					__atomic_add_fetch(&pw->ready, 1, __ATOMIC_SEQ_CST);
					int n = poll(&p, 1, 5000);

					pw->ns[k] = now_ns() - t0;
					pw->revents[k] = n > 0 ? p.revents : n == 0 ? 0 : -errno;
					_exit(0);
				}
			}
			while (__atomic_load_n(&pw->ready, __ATOMIC_SEQ_CST) < 2)
				usleep(500);
			usleep(1000 + (it * 7919 % 30) * 1000);
			ASSERT_EQ(0, launch(t.fd, NULL));
			if (reap(pids, names, 2, 20)) {
				fails++;
				break;
			}
			for (int k = 0; k < 2; k++) {
				if (!(pw->revents[k] & POLLIN)) {
					if (lost++ < 3)
						printf("# mode %u round %d: poller %d: revents %#x after %llu ms\n",
						       modes[m], it, k, pw->revents[k],
						       (unsigned long long)(pw->ns[k] / 1000000));
				}
				if (pw->ns[k] > worst)
					worst = pw->ns[k];
			}
			/* Consume the record so that POLLIN clears. */
			struct cxl_ccm_wait w = { .min_records = 1, .metadata_head = head,
						  .timeout_ns = 5000000000ull };

			rc = xioctl(t.fd, CXL_CCM_IOC_WAIT, &w);
			ASSERT_EQ(0, rc) TH_LOG("mode %u: WAIT: %s", modes[m], strerror(rc));
			struct cxl_ccm_metadata_record rec = t.md[head & (t.cfg.metadata_slots - 1)];
			const char *why = check_record(&t, &rec, head);

			ASSERT_EQ(NULL, why) TH_LOG("mode %u: %s", modes[m], why);
			struct cxl_ccm_release_entry e = { rec.payload_index, rec.length };
			struct cxl_ccm_release rel = { .entries = (__u64)(uintptr_t)&e, .count = 1,
						       .flags = CXL_CCM_RELEASE_METADATA |
								CXL_CCM_RELEASE_PUBLISH,
						       .metadata_head = head + 1 };

			ASSERT_EQ(0, xioctl(t.fd, CXL_CCM_IOC_RELEASE, &rel));
			head++;
			struct pollfd p = { .fd = t.fd, .events = POLLIN };

			if (poll(&p, 1, 0) != 0) {
				printf("# mode %u round %d: POLLIN (%#x) with everything released\n", modes[m],
				       it, p.revents);
				fails++;
			}
		}
		printf("# mode %u: 25 rounds, %d pollers not woken, slowest wake-up %llu ms\n", modes[m],
		       lost, (unsigned long long)(worst / 1000000));
		fails += lost;
		close(t.fd);
	}
	EXPECT_EQ(0, fails);
}

/* ---- CONFIGURE and friends racing unbind/bind cycles ---------------------- */

#define NE 160
struct ucfg {
	__u32 open_h[NE], cfg_h[NE], launch_h[NE], stats_h[NE];
	__u32 stop;
	/*
	 * The parent's phase: 0 bound, 1 unbinding, 2 unbound, 3 binding, 4
	 * bound again (the bind returned and the node is there). A file
	 * opened in phase 0 or 4 and closed before the phase changed is a
	 * file of a bound device: its calls must not get ENODEV.
	 */
	__u32 phase, gen;
	__u32 enodev_bound;
	__u32 enodev_bound_what[4];
};

static void hist_add(__u32 *h, int e)
{
	__atomic_add_fetch(&h[e >= 0 && e < NE ? e : NE - 1], 1, __ATOMIC_SEQ_CST);
}

/* Prints a histogram; returns how many calls gave an errno outside @ok. */
static int hist_show(const char *what, const __u32 *h, const int *ok, int nok)
{
	char line[512];
	int len = 0, bad = 0;

	for (int e = 0; e < NE; e++) {
		if (!h[e])
			continue;
		int allowed = 0;

		for (int i = 0; i < nok; i++)
			allowed |= ok[i] == e;
		if (!allowed)
			bad += h[e];
		len += snprintf(line + len, sizeof(line) - len, " %s%s: %u;", e ? strerror(e) : "ok",
				allowed ? "" : " (undocumented here)", h[e]);
		if (len >= (int)sizeof(line) - 64)
			break;
	}
	printf("# %s:%s\n", what, len ? line : " none");
	return bad;
}

static int sysfs_write_bounded(const char *path, const char *val, int secs)
{
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(sysfs_write(path, val));
	for (int w = 0; w < secs * 20; w++) {
		if (waitpid(p, &st, WNOHANG) == p)
			return WEXITSTATUS(st);
		usleep(50000);
	}
	print_stack(p, path);
	return ETIME;
}

TEST_F_TIMEOUT(ca, unbind_configure_race, 170)
{
	int dev = pick_dev(4), fails = 0;
	char name[32], node[64];
	struct ucfg *u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
	pid_t pids[4];
	const char *names[4] = { "looper", "looper", "looper", "looper" };
	struct cxl_ccm_info info = { 0 };

	ASSERT_LE(0, dev);
	ASSERT_NE(MAP_FAILED, u);
	memset(u, 0, sizeof(*u));
	snprintf(name, sizeof(name), "cxl_ccm.%d", dev);
	snprintf(node, sizeof(node), "/dev/cxl_ccm%d", dev);
	for (int k = 0; k < 4; k++) {
		pids[k] = fork();
		if (pids[k] == 0) {
			while (!__atomic_load_n(&u->stop, __ATOMIC_SEQ_CST)) {
				int fd = open_dev(dev);
				struct cxl_ccm_configure cfg = { .mode = CXL_CCM_MODE_AXLE, .slot_size = 32,
								 .streaming_factor = 32, .metadata_slots = 16,
								 .payload_slots = 16, .input_size = 4096 };
				struct cxl_ccm_stats s = { 0 };

				__u32 g0 = __atomic_load_n(&u->gen, __ATOMIC_SEQ_CST);
				__u32 ph = __atomic_load_n(&u->phase, __ATOMIC_SEQ_CST);

				if (fd < 0) {
					hist_add(u->open_h, errno);
					usleep(2000);
					continue;
				}
				hist_add(u->open_h, 0);
				int rc = xioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg), rl = -1, rs = -1;

				hist_add(u->cfg_h, rc);
				if (!rc) {
					rl = launch(fd, NULL);
					rs = xioctl(fd, CXL_CCM_IOC_STATS, &s);
					hist_add(u->launch_h, rl);
					hist_add(u->stats_h, rs);
				}
				/* Opened and used within one bound phase? */
				if ((ph == 0 || ph == 4) && g0 == __atomic_load_n(&u->gen, __ATOMIC_SEQ_CST) &&
				    (rc == ENODEV || rl == ENODEV || rs == ENODEV)) {
					__atomic_add_fetch(&u->enodev_bound, 1, __ATOMIC_SEQ_CST);
					__atomic_add_fetch(&u->enodev_bound_what[rc == ENODEV ? 0 : rl == ENODEV ? 1 : 2], 1,
							   __ATOMIC_SEQ_CST);
				}
				close(fd);
			}
			_exit(0);
		}
	}
#define PHASE(p) do { __atomic_add_fetch(&u->gen, 1, __ATOMIC_SEQ_CST); \
		       __atomic_store_n(&u->phase, p, __ATOMIC_SEQ_CST); } while (0)
	for (int cycle = 0; cycle < 8; cycle++) {
		usleep(400000);
		PHASE(1);
		int rc = sysfs_write_bounded(DRV "/unbind", name, 60);

		PHASE(2);

		if (rc) {
			printf("# cycle %d: unbind %s: %s\n", cycle, name, strerror(rc));
			fails++;
			break;
		}
		usleep(300000);
		PHASE(3);
		rc = sysfs_write_bounded(DRV "/bind", name, 60);
		for (int w = 0; w < 100 && access(node, F_OK); w++)
			usleep(100000);
		PHASE(4);
		if (rc || access(node, F_OK)) {
			printf("# cycle %d: bind %s: %s, %s %s\n", cycle, name, strerror(rc), node,
			       access(node, F_OK) ? "missing" : "present");
			fails++;
			break;
		}
	}
	usleep(300000);
	__atomic_store_n(&u->stop, 1, __ATOMIC_SEQ_CST);
	if (reap(pids, names, 4, 30)) {
		printf("# loopers did not finish\n");
		fails++;
	}
	{
		int ok_open[] = { 0, ENOENT, ENODEV, ENXIO };
		int ok_cfg[] = { 0, ENODEV };
		int ok_launch[] = { 0, ENODEV, EIO };
		int ok_stats[] = { 0, ENODEV };

		fails += !!hist_show("open", u->open_h, ok_open, 4);
		fails += !!hist_show("CONFIGURE", u->cfg_h, ok_cfg, 2);
		fails += !!hist_show("LAUNCH", u->launch_h, ok_launch, 3);
		fails += !!hist_show("STATS", u->stats_h, ok_stats, 2);
	}
	if (u->cfg_h[0] == 0) {
		printf("# no CONFIGURE succeeded: the loopers never ran against a bound device\n");
		fails++;
	}
	if (u->enodev_bound) {
		printf("# %u files opened and used while the device was bound (the bind had returned) got ENODEV: CONFIGURE %u, LAUNCH %u, STATS %u\n",
		       u->enodev_bound, u->enodev_bound_what[0], u->enodev_bound_what[1],
		       u->enodev_bound_what[2]);
		fails++;
	}
	/* Nothing leaked: every tenant number, then a launch that round-trips. */
	int fd = open_dev(dev), again = 0, fds[40];

	ASSERT_LE(0, fd) TH_LOG("%s: %s", node, strerror(errno));
	ASSERT_EQ(0, xioctl(fd, CXL_CCM_IOC_INFO, &info));
	close(fd);
	for (__u32 i = 0; i < info.max_tenants && i < 40; i++) {
		struct cxl_ccm_configure cfg = { .mode = CXL_CCM_MODE_AXLE, .slot_size = 32,
						 .streaming_factor = 32, .metadata_slots = 16,
						 .payload_slots = 16, .input_size = 4096 };

		fds[i] = open_dev(dev);
		if (fds[i] >= 0 && !xioctl(fds[i], CXL_CCM_IOC_CONFIGURE, &cfg))
			again++;
		else if (fds[i] >= 0)
			printf("# tenant %u after the cycles: %s\n", i, strerror(errno));
	}
	for (__u32 i = 0; i < info.max_tenants && i < 40; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (again != (int)info.max_tenants) {
		printf("# after the cycles %d of %u tenants could be configured\n", again,
		       info.max_tenants);
		fails++;
	}
	struct tenant t2;
	int rc = tenant_setup(&t2, dev, CXL_CCM_MODE_AXLE, 0, 64, 128);

	if (!rc)
		rc = launch(t2.fd, NULL);
	if (!rc) {
		struct cxl_ccm_wait w = { .min_records = 1, .metadata_head = 0,
					  .timeout_ns = 10000000000ull };

		rc = xioctl(t2.fd, CXL_CCM_IOC_WAIT, &w);
	}
	const char *why = rc ? strerror(rc) : check_record(&t2, &t2.md[0], 0);

	if (why) {
		printf("# a tenant after the cycles: %s\n", why);
		fails++;
	}
	if (t2.fd >= 0)
		close(t2.fd);
	EXPECT_EQ(0, fails);
}

/* ---- Unbind under load ----------------------------------------------------- */

enum { U_LAUNCH, U_LAUNCH2, U_WAIT, U_STATS, U_RELEASE, U_POLL, U_N };
static const char *u_names[U_N] = { "LAUNCH", "LAUNCH", "WAIT_FOREVER", "STATS", "RELEASE",
				    "poll" };

struct unb {
	int during[U_N];	/* the errno that ended the loop */
	int after[U_N];		/* the errno of a call made once the unbind returned */
	int revents;		/* poll's last revents */
	__u32 calls[U_N];
	__u32 unbound;
	__u32 stopped[U_N];
};

static int u_call(int kind, struct tenant *t, struct unb *u, int *revents)
{
	switch (kind) {
	case U_LAUNCH:
	case U_LAUNCH2:
		return launch(t->fd, NULL);
	case U_WAIT: {
		struct cxl_ccm_wait w = { .min_records = 100000, .metadata_head = t->cfg.index_base,
					  .timeout_ns = CXL_CCM_WAIT_FOREVER };
		return xioctl(t->fd, CXL_CCM_IOC_WAIT, &w);
	}
	case U_STATS: {
		struct cxl_ccm_stats s = { .flags = (u->calls[kind] & 1) ? CXL_CCM_STATS_RESET : 0 };
		return xioctl(t->fd, CXL_CCM_IOC_STATS, &s);
	}
	case U_RELEASE: {
		struct cxl_ccm_release rel = { .flags = CXL_CCM_RELEASE_PUBLISH };
		return xioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel);
	}
	case U_POLL: {
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		int n = poll(&p, 1, 100);

		if (n < 0)
			return errno;
		*revents = p.revents;
		return (p.revents & (POLLHUP | POLLERR)) ? ENODEV : 0;
	}
	}
	return EINVAL;
}

TEST_F_TIMEOUT(ca, unbind_under_load, 170)
{
	int dev = pick_dev(6), fails = 0;
	char name[32], path[96];
	struct tenant t0, t1;
	struct unb *u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	pid_t pids[U_N];
	const char *names[U_N];

	ASSERT_LE(0, dev);
	ASSERT_NE(MAP_FAILED, u);
	memset(u, 0, sizeof(*u));
	snprintf(name, sizeof(name), "cxl_ccm.%d", dev);
	/* t0: nobody consumes, so its launch ring fills and launchers block. */
	ASSERT_EQ(0, tenant_setup(&t0, dev, CXL_CCM_MODE_AXLE, 0xfffffff8u, 16, 32));
	ASSERT_EQ(0, tenant_setup(&t1, dev, CXL_CCM_MODE_AXLE, 0, 64, 128));
	int unconf = open_dev(dev);	/* opened, never configured */

	ASSERT_LE(0, unconf);
	for (int k = 0; k < U_N; k++) {
		struct tenant *t = k == U_POLL ? &t1 : &t0;

		names[k] = u_names[k];
		pids[k] = fork();
		if (pids[k] == 0) {
			int rc, rev = 0;

			for (;;) {
				rc = u_call(k, t, u, &rev);
				u->calls[k]++;
				if (rc)
					break;
				if (k == U_STATS || k == U_RELEASE)
					usleep(1000);
			}
			u->during[k] = rc;
			u->revents = k == U_POLL ? rev : u->revents;
			for (int w = 0; w < 1200 && !__atomic_load_n(&u->unbound, __ATOMIC_SEQ_CST); w++)
				usleep(50000);
			u->after[k] = u_call(k, t, u, &rev);
			if (k == U_POLL)
				u->revents = rev;
			u->stopped[k] = 1;
			_exit(0);
		}
	}
	usleep(1500000);
	/* Before the unbind every call is still going (launchers blocked, waiter waiting). */
	for (int k = 0; k < U_N; k++)
		if (u->stopped[k] || u->during[k]) {
			printf("# %s stopped before the unbind: %s\n", names[k], strerror(u->during[k]));
			fails++;
		}
	printf("# before the unbind: %u launches, %u STATS, %u RELEASE, %u polls\n",
	       u->calls[U_LAUNCH] + u->calls[U_LAUNCH2], u->calls[U_STATS], u->calls[U_RELEASE],
	       u->calls[U_POLL]);
	__u64 t_start = now_ns();
	pid_t unb = fork();

	if (unb == 0)
		_exit(sysfs_write(DRV "/unbind", name));
	const char *uname[1] = { "unbind" };
	pid_t upid[1] = { unb };
	int st = 0;

	/* reap() forgets the status: wait here first. */
	for (int w = 0; w < 1200; w++) {
		if (waitpid(unb, &st, WNOHANG) == unb) {
			upid[0] = 0;
			break;
		}
		usleep(50000);
	}
	if (upid[0]) {
		printf("# the unbind of %s did not return within 60 s\n", name);
		reap(upid, uname, 1, 0);
		fails++;
	} else {
		printf("# unbind of %s returned %d after %llu ms\n", name, WEXITSTATUS(st),
		       (unsigned long long)((now_ns() - t_start) / 1000000));
		if (WEXITSTATUS(st)) {
			printf("# unbind failed: %s\n", strerror(WEXITSTATUS(st)));
			fails++;
		}
	}
	__atomic_store_n(&u->unbound, 1, __ATOMIC_SEQ_CST);
	if (reap(pids, names, U_N, 30)) {
		printf("# calls in progress did not end within 30 s of the unbind\n");
		fails++;
	}
	for (int k = 0; k < U_N; k++) {
		int d = u->during[k], a = u->after[k];

		printf("# %-12s %u calls; ended with %s; after the unbind: %s\n", names[k], u->calls[k],
		       strerror(d), strerror(a));
		if (k == U_POLL)
			continue;
		if (d != ENODEV && d != EIO) {
			printf("# %s in progress at the unbind ended with %s, expected ENODEV or EIO\n",
			       names[k], strerror(d));
			fails++;
		}
		if (a != ENODEV) {
			printf("# %s after the unbind: %s, expected ENODEV\n", names[k], strerror(a));
			fails++;
		}
	}
	if (!(u->revents & POLLHUP)) {
		printf("# poll() after the unbind: revents %#x, POLLHUP expected\n", u->revents);
		fails++;
	}
	/* The ring mapping stays readable (a child: a SIGBUS would kill it). */
	pid_t rd = fork();

	if (rd == 0) {
		volatile __u32 v = load_tail(&t0.hdr->metadata.tail);

		(void)v;
		v = t0.md[0].seq;
		_exit(0);
	}
	waitpid(rd, &st, 0);
	if (!WIFEXITED(st)) {
		printf("# reading the ring mapping after the unbind: killed by signal %d\n",
		       WTERMSIG(st));
		fails++;
	}
	/* Bind again. */
	int brc = sysfs_write(DRV "/bind", name);

	snprintf(path, sizeof(path), "/dev/cxl_ccm%d", dev);
	for (int w = 0; w < 100 && access(path, F_OK); w++)
		usleep(100000);
	if (brc || access(path, F_OK)) {
		printf("# bind %s: %s; %s %s\n", name, strerror(brc), path,
		       access(path, F_OK) ? "missing" : "present");
		fails++;
	} else {
		struct cxl_ccm_stats s = { 0 };
		struct cxl_ccm_configure cfg = { .mode = CXL_CCM_MODE_AXLE, .slot_size = 32,
						 .streaming_factor = 32, .metadata_slots = 16,
						 .payload_slots = 16, .input_size = 4096 };
		int a = xioctl(t0.fd, CXL_CCM_IOC_STATS, &s);
		int b = xioctl(unconf, CXL_CCM_IOC_CONFIGURE, &cfg);

		printf("# after the bind: old tenant's STATS %s, old unconfigured file's CONFIGURE %s\n",
		       strerror(a), strerror(b));
		if (a != ENODEV || b != ENODEV) {
			printf("# a file of the old binding must get ENODEV\n");
			fails++;
		}
		struct tenant t2;
		int rc = tenant_setup(&t2, dev, CXL_CCM_MODE_AXLE, 0, 64, 128);
		__u32 tag = 0;

		if (!rc)
			rc = launch(t2.fd, &tag);
		if (!rc) {
			struct cxl_ccm_wait w = { .min_records = 1, .metadata_head = 0,
						  .timeout_ns = 10000000000ull };

			rc = xioctl(t2.fd, CXL_CCM_IOC_WAIT, &w);
		}
		const char *why = rc ? strerror(rc) : check_record(&t2, &t2.md[0], 0);

		if (why) {
			printf("# a new tenant after the bind: %s\n", why);
			fails++;
		}
		if (t2.fd >= 0)
			close(t2.fd);
	}
	close(unconf);
	close(t0.fd);
	close(t1.fd);
	EXPECT_EQ(0, fails);
}

TEST_HARNESS_MAIN
