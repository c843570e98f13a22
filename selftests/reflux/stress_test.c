// SPDX-License-Identifier: GPL-2.0
/*
 * Mixed-path stress of /dev/reflux0 with a checker that knows every block's
 * history.
 *
 * Every 4 KiB block written carries a header (magic, run id, LBA, generation,
 * writer) and a body derived from it, so a block read back is checked whole:
 * it must be this run's block for that LBA, untorn, and of a generation the
 * block can hold at that moment. Writers claim the blocks of an extent before
 * writing it (one write in flight per block), so each block's generations
 * rise one at a time; a read may then return any generation from the one
 * acknowledged when it was issued to the last one issued when it completed.
 *
 * At once, on one 8 MiB direct-I/O region (default):
 *   - io_uring writers at depth 32, one polled (IORING_SETUP_IOPOLL: the poll
 *     queue) and one interrupt-driven, extents of 4 KiB to 132 KiB at any
 *     block (so requests are split at the 128 KiB chunk boundary);
 *   - a pwrite writer and a pread reader (O_DIRECT);
 *   - a polled io_uring reader at depth 16;
 * and, on a region of its own, a buffered writer (fdatasync now and then) and a
 * buffered reader (which claims its blocks too: the page cache does not make a
 * buffered read atomic against a buffered write of the same page). With
 * STRESS_MIGRATE=1 a thread migrates every unpinned actor back and forth
 * every few milliseconds.
 *
 * Between phases everything stops, every block is read back and must hold
 * exactly its last acknowledged generation; then the disk is closed, the
 * driver is unbound and bound again (odd phases) or reloaded (even phases),
 * and every block is checked again.
 *
 * Environment: STRESS_SECONDS (per phase, 10), STRESS_PHASES (2),
 * STRESS_OFFSET_MB (64), STRESS_DIO_MB (8), STRESS_BUF_MB (2),
 * STRESS_REBIND and STRESS_RELOAD (shell commands; none: no disruption),
 * STRESS_MIGRATE (0), STRESS_HIPRI (1), STRESS_DEV (/dev/reflux0),
 * STRESS_WORKERS (psync: three O_DIRECT pwrite writers and three pread readers
 * only, on one queue, so that a torn block is told apart from a tag clash).
 *
 * Output: a plan, one TAP line per check, a summary line of figures. Exit 0
 * only if every planned check ran and passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <liburing.h>

#define MIGRATE		"/sys/kernel/debug/reflux0/migrate"
#define ACTORS		"/sys/kernel/debug/reflux0/actors"
#define LBS		4096
#define MAX_EXT		33	/* blocks: 132 KiB, over the 128 KiB chunk */
#define MAGIC		0x5346585553545231ULL
#define MAX_REPORTS	10
#define MAX_ACTORS	16

struct blk {
	_Atomic uint32_t issued;	/* the last generation handed to a write */
	_Atomic uint32_t acked;		/* the last generation acknowledged */
	_Atomic uint32_t claim;		/* a write (or buffered read) owns it */
};

struct stamp {
	uint64_t magic;
	uint64_t run;
	uint64_t lba;
	uint32_t gen;
	uint32_t writer;
};

static const char *dev = "/dev/reflux0";
static struct blk *tab;
static uint64_t base_lba, dio_n, buf_n;	/* DIO blocks, then buffered ones */
static uint64_t run_id;
static atomic_int stop;
static atomic_int reports;

/* Figures. */
static _Atomic uint64_t writes, hipri_writes, blocks_written;
static _Atomic uint64_t reads, blocks_checked, mismatches, io_errors;
static _Atomic uint64_t migrations, migrate_timeouts, migrate_failures;
static uint64_t full_checked, rebinds, reloads;

static int test_no, failed;

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failed = 1;
}

static void report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&reports, 1) >= MAX_REPORTS)
		return;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void fill_block(uint8_t *p, uint64_t lba, uint32_t gen, uint32_t writer)
{
	struct stamp st = { MAGIC, run_id, lba, gen, writer };
	uint64_t seed = mix(run_id ^ lba * 0x9E3779B97F4A7C15ULL ^ (uint64_t)gen << 40);
	size_t i;

	memcpy(p, &st, sizeof(st));
	for (i = sizeof(st); i < LBS; i += 8) {
		uint64_t v = mix(seed + i);

		memcpy(p + i, &v, 8);
	}
}

/*
 * Whether block `lba`, read as `p`, is one it may be: generation in [lo, hi],
 * whole. Reports why not.
 */
static int check_block(const uint8_t *p, uint64_t lba, uint32_t lo, uint32_t hi,
		       const char *who)
{
	static const uint8_t zero[LBS];
	uint8_t want[LBS];
	struct stamp st;

	atomic_fetch_add(&blocks_checked, 1);
	memcpy(&st, p, sizeof(st));
	if (st.magic != MAGIC || st.run != run_id) {
		atomic_fetch_add(&mismatches, 1);
		report("%s: LBA %llu: not a block of this run%s (want generation %u..%u)", who,
		       (unsigned long long)lba, memcmp(p, zero, LBS) ? "" : " (zeros)", lo, hi);
		return 0;
	}
	if (st.lba != lba) {
		atomic_fetch_add(&mismatches, 1);
		report("%s: LBA %llu holds LBA %llu's block (generation %u, writer %u)", who,
		       (unsigned long long)lba, (unsigned long long)st.lba, st.gen, st.writer);
		return 0;
	}
	fill_block(want, lba, st.gen, st.writer);
	if (memcmp(p, want, LBS)) {
		size_t i = 0;

		while (i < LBS && p[i] == want[i])
			i++;
		atomic_fetch_add(&mismatches, 1);
		report("%s: LBA %llu generation %u is torn from byte %zu", who,
		       (unsigned long long)lba, st.gen, i);
		return 0;
	}
	if (st.gen < lo || st.gen > hi) {
		atomic_fetch_add(&mismatches, 1);
		report("%s: LBA %llu holds generation %u, outside %u..%u", who,
		       (unsigned long long)lba, st.gen, lo, hi);
		return 0;
	}
	return 1;
}

static void *abuf(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, LBS, len))
		return NULL;
	return p;
}

/* Region: 0 the direct-I/O blocks, 1 the buffered ones. */
static void region(int r, uint64_t *first, uint64_t *n)
{
	*first = r ? dio_n : 0;
	*n = r ? buf_n : dio_n;
}

static void release(uint64_t i, unsigned int n)
{
	while (n--)
		atomic_store(&tab[i + n].claim, 0);
}

/* Claims `n` free blocks from index i, or none. */
static int claim(uint64_t i, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint32_t z = 0;

		if (!atomic_compare_exchange_strong(&tab[i + k].claim, &z, 1)) {
			release(i, k);
			return 0;
		}
	}
	return 1;
}

/* A random extent of region r, at most `max` blocks; claimed if `own`. */
static int pick(uint64_t *s, int r, unsigned int max, int own, uint64_t *i, unsigned int *n)
{
	uint64_t first, len;
	int tries;

	region(r, &first, &len);
	for (tries = 0; tries < 64 && !atomic_load(&stop); tries++) {
		*n = 1 + rnd(s) % max;
		if (*n > len)
			*n = len;
		*i = first + rnd(s) % (len - *n + 1);
		if (!own || claim(*i, *n))
			return 1;
	}
	return 0;
}

/* Stamps the next generation of blocks i..i+n into buf. */
static void stamp_extent(uint8_t *buf, uint64_t i, unsigned int n, uint32_t writer)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		uint32_t gen = atomic_fetch_add(&tab[i + k].issued, 1) + 1;

		fill_block(buf + (size_t)k * LBS, base_lba + i + k, gen, writer);
	}
}

static void acked_extent(const uint8_t *buf, uint64_t i, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct stamp st;

		memcpy(&st, buf + (size_t)k * LBS, sizeof(st));
		atomic_store(&tab[i + k].acked, st.gen);
	}
	atomic_fetch_add(&writes, 1);
	atomic_fetch_add(&blocks_written, n);
}

static void snapshot_lo(uint32_t *lo, uint64_t i, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		lo[k] = atomic_load(&tab[i + k].acked);
}

static void check_extent(const uint8_t *buf, const uint32_t *lo, uint64_t i, unsigned int n,
			 const char *who)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		check_block(buf + (size_t)k * LBS, base_lba + i + k, lo[k],
			    atomic_load(&tab[i + k].issued), who);
	atomic_fetch_add(&reads, 1);
}

static void io_failed(const char *who, const char *op, uint64_t i, unsigned int n, long res)
{
	atomic_fetch_add(&io_errors, 1);
	report("%s: %s of %u blocks at LBA %llu: %s", who, op, n,
	       (unsigned long long)(base_lba + i), res < 0 ? strerror((int)-res) : "short");
}

struct worker {
	const char *name;
	int id;
	int write;
	int uring;	/* 0: psync; else the depth */
	int hipri;
	int buffered;
	uint64_t seed;
	pthread_t thread;
};

struct slot {
	uint8_t *buf;
	uint64_t i;
	unsigned int n;
	uint32_t lo[MAX_EXT];
	int busy;
};

static int open_dev(int direct)
{
	return open(dev, O_RDWR | (direct ? O_DIRECT : 0));
}

/* Prepares slot s: a write (claimed, stamped) or a read (window noted). */
static int prep_slot(struct worker *w, struct slot *s)
{
	int r = w->buffered;

	if (!pick(&w->seed, r, w->buffered ? 8 : MAX_EXT, w->write || w->buffered, &s->i, &s->n))
		return 0;
	if (w->write)
		stamp_extent(s->buf, s->i, s->n, w->id);
	else
		snapshot_lo(s->lo, s->i, s->n);
	return 1;
}

/* Slot s's I/O finished with `res` bytes (or -errno). */
static void done_slot(struct worker *w, struct slot *s, long res)
{
	if (res != (long)s->n * LBS)
		io_failed(w->name, w->write ? "write" : "read", s->i, s->n, res);
	else if (w->write)
		acked_extent(s->buf, s->i, s->n);
	else
		check_extent(s->buf, s->lo, s->i, s->n, w->name);
	if (w->write || w->buffered)
		release(s->i, s->n);
}

static void run_psync(struct worker *w)
{
	struct slot s = { .buf = abuf(MAX_EXT * LBS) };
	int fd = open_dev(!w->buffered);
	unsigned int since_sync = 0;

	if (fd < 0 || !s.buf) {
		io_failed(w->name, "open", 0, 0, -errno);
		return;
	}
	while (!atomic_load(&stop)) {
		off_t off;
		long res;

		if (!prep_slot(w, &s))
			continue;
		off = (off_t)(base_lba + s.i) * LBS;
		if (w->write)
			res = pwrite(fd, s.buf, (size_t)s.n * LBS, off);
		else
			res = pread(fd, s.buf, (size_t)s.n * LBS, off);
		done_slot(w, &s, res < 0 ? -errno : res);
		if (w->write && w->buffered && ++since_sync == 32) {
			since_sync = 0;
			if (fdatasync(fd))
				io_failed(w->name, "fdatasync", 0, 0, -errno);
		}
	}
	if (w->buffered && w->write && fdatasync(fd))
		io_failed(w->name, "fdatasync", 0, 0, -errno);
	close(fd);
	free(s.buf);
}

static void run_uring(struct worker *w)
{
	struct io_uring ring;
	struct slot *slots = calloc(w->uring, sizeof(*slots));
	int fd = open_dev(1), inflight = 0, k, ret;

	if (fd < 0 || !slots) {
		io_failed(w->name, "open", 0, 0, -errno);
		return;
	}
	ret = io_uring_queue_init(w->uring, &ring, w->hipri ? IORING_SETUP_IOPOLL : 0);
	if (ret) {
		io_failed(w->name, "io_uring_queue_init", 0, 0, ret);
		close(fd);
		return;
	}
	for (k = 0; k < w->uring; k++)
		slots[k].buf = abuf(MAX_EXT * LBS);
	while (!atomic_load(&stop) || inflight) {
		struct io_uring_cqe *cqe;

		for (k = 0; k < w->uring && !atomic_load(&stop); k++) {
			struct slot *s = &slots[k];
			struct io_uring_sqe *sqe;

			if (s->busy || !prep_slot(w, s))
				continue;
			sqe = io_uring_get_sqe(&ring);
			if (w->write)
				io_uring_prep_write(sqe, fd, s->buf, s->n * LBS,
						    (base_lba + s->i) * LBS);
			else
				io_uring_prep_read(sqe, fd, s->buf, s->n * LBS,
						   (base_lba + s->i) * LBS);
			io_uring_sqe_set_data64(sqe, k);
			s->busy = 1;
			inflight++;
		}
		ret = io_uring_submit_and_wait(&ring, inflight ? 1 : 0);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			io_failed(w->name, "io_uring_submit", 0, 0, ret);
			break;
		}
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			struct slot *s = &slots[cqe->user_data];

			done_slot(w, s, cqe->res);
			if (w->write && w->hipri && cqe->res > 0)
				atomic_fetch_add(&hipri_writes, 1);
			s->busy = 0;
			inflight--;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	for (k = 0; k < w->uring; k++)
		free(slots[k].buf);
	free(slots);
	close(fd);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (w->uring)
		run_uring(w);
	else
		run_psync(w);
	return NULL;
}

/* The unpinned actors of the disk's pipelines, from debugfs. */
static int actors(int *ids)
{
	FILE *f = fopen(ACTORS, "r");
	char line[256];
	int n = 0;

	if (!f)
		return 0;
	while (n < MAX_ACTORS && fgets(line, sizeof(line), f)) {
		int id, pinned;
		char *p = strstr(line, "pinned ");

		if (sscanf(line, "actor %d", &id) == 1 && p && sscanf(p, "pinned %d", &pinned) == 1 &&
		    !pinned)
			ids[n++] = id;
	}
	fclose(f);
	return n;
}

static void *migrator_main(void *arg)
{
	int ids[MAX_ACTORS], n = actors(ids), k = 0;
	int to_host[MAX_ACTORS] = { 0 };
	uint64_t seed = mix(run_id + 99);

	(void)arg;
	if (!n)
		report("migrator: no unpinned actor in " ACTORS);
	while (n && !atomic_load(&stop)) {
		char cmd[32];
		int fd = open(MIGRATE, O_WRONLY), len;

		to_host[k] = !to_host[k];
		len = snprintf(cmd, sizeof(cmd), "%d %s", ids[k], to_host[k] ? "host" : "device");
		if (fd < 0) {
			atomic_fetch_add(&migrate_failures, 1);
			report("migrator: open " MIGRATE ": %s", strerror(errno));
			break;
		}
		if (write(fd, cmd, len) == len)
			atomic_fetch_add(&migrations, 1);
		else if (errno == ETIMEDOUT)
			atomic_fetch_add(&migrate_timeouts, 1);
		else if (errno != EALREADY) {
			atomic_fetch_add(&migrate_failures, 1);
			report("migrator: '%s': %s", cmd, strerror(errno));
		}
		close(fd);
		k = (k + 1) % n;
		usleep(2000 + rnd(&seed) % 4000);
	}
	return NULL;
}

static struct worker mixed[] = {
	{ .name = "uring-hipri-writer", .id = 1, .write = 1, .uring = 32, .hipri = 1 },
	{ .name = "uring-writer", .id = 2, .write = 1, .uring = 32 },
	{ .name = "pwrite-writer", .id = 3, .write = 1 },
	{ .name = "pread-reader", .id = 4 },
	{ .name = "uring-hipri-reader", .id = 5, .uring = 16, .hipri = 1 },
	{ .name = "buffered-writer", .id = 6, .write = 1, .buffered = 1 },
	{ .name = "buffered-reader", .id = 7, .buffered = 1 },
};

/* STRESS_WORKERS=psync: only O_DIRECT pwrite and pread, three of each. */
static struct worker psync[] = {
	{ .name = "pwrite-writer-1", .id = 1, .write = 1 },
	{ .name = "pwrite-writer-2", .id = 2, .write = 1 },
	{ .name = "pwrite-writer-3", .id = 3, .write = 1 },
	{ .name = "pread-reader-1", .id = 4 },
	{ .name = "pread-reader-2", .id = 5 },
	{ .name = "pread-reader-3", .id = 6 },
};

static struct worker *workers = mixed;
static size_t nr_workers = sizeof(mixed) / sizeof(mixed[0]);

/* One workload phase of `seconds`; returns whether it ran clean. */
static int phase(unsigned int seconds, int migrate, int hipri)
{
	uint64_t m0 = atomic_load(&mismatches), e0 = atomic_load(&io_errors);
	uint64_t f0 = atomic_load(&migrate_failures);
	pthread_t migrator;
	size_t k;

	atomic_store(&stop, 0);
	for (k = 0; k < nr_workers; k++) {
		struct worker *w = &workers[k];

		w->seed = mix(run_id + k + 1);
		if (w->hipri && !hipri)
			w->hipri = 0;
		if (pthread_create(&w->thread, NULL, worker_main, w)) {
			printf("# pthread_create failed\n");
			exit(1);
		}
	}
	if (migrate && pthread_create(&migrator, NULL, migrator_main, NULL)) {
		printf("# pthread_create failed\n");
		exit(1);
	}
	sleep(seconds);
	atomic_store(&stop, 1);
	for (k = 0; k < nr_workers; k++)
		pthread_join(workers[k].thread, NULL);
	if (migrate)
		pthread_join(migrator, NULL);
	return atomic_load(&mismatches) == m0 && atomic_load(&io_errors) == e0 &&
	       atomic_load(&migrate_failures) == f0;
}

/* Every block of both regions read back with O_DIRECT: exactly its last acknowledged generation. */
static int verify_all(const char *when)
{
	uint64_t m0 = atomic_load(&mismatches), e0 = atomic_load(&io_errors), i;
	uint8_t *buf = abuf(32 * LBS);
	int fd = open_dev(1);

	if (fd < 0 || !buf) {
		io_failed(when, "open", 0, 0, -errno);
		free(buf);
		return 0;
	}
	for (i = 0; i < dio_n + buf_n; i += 32) {
		unsigned int n = dio_n + buf_n - i < 32 ? dio_n + buf_n - i : 32, k;
		long res = pread(fd, buf, (size_t)n * LBS, (off_t)(base_lba + i) * LBS);

		if (res != (long)n * LBS) {
			io_failed(when, "read", i, n, res < 0 ? -errno : res);
			continue;
		}
		for (k = 0; k < n; k++) {
			uint32_t g = atomic_load(&tab[i + k].acked);

			check_block(buf + (size_t)k * LBS, base_lba + i + k, g, g, when);
		}
		full_checked += n;
	}
	close(fd);
	free(buf);
	return atomic_load(&mismatches) == m0 && atomic_load(&io_errors) == e0;
}

/* Every block gets generation 1, so that nothing from before this run counts. */
static int init_regions(void)
{
	uint8_t *buf = abuf(32 * LBS);
	int fd = open_dev(1);
	uint64_t i;

	if (fd < 0 || !buf)
		return 0;
	for (i = 0; i < dio_n + buf_n; i += 32) {
		unsigned int n = dio_n + buf_n - i < 32 ? dio_n + buf_n - i : 32, k;

		for (k = 0; k < n; k++) {
			atomic_store(&tab[i + k].issued, 1);
			fill_block(buf + (size_t)k * LBS, base_lba + i + k, 1, 0);
		}
		if (pwrite(fd, buf, (size_t)n * LBS, (off_t)(base_lba + i) * LBS) != (long)n * LBS) {
			io_failed("init", "write", i, n, -errno);
			close(fd);
			free(buf);
			return 0;
		}
		for (k = 0; k < n; k++)
			atomic_store(&tab[i + k].acked, 1);
	}
	close(fd);
	free(buf);
	return 1;
}

/* Runs a disruption command and waits for the disk to come back. */
static int disrupt(const char *cmd)
{
	struct stat st;
	int ret = system(cmd), i;

	if (ret) {
		printf("# '%s' exited with %d\n", cmd, ret);
		return 0;
	}
	for (i = 0; i < 100; i++) {
		if (stat(dev, &st) == 0)
			return 1;
		usleep(100000);
	}
	printf("# %s did not come back after '%s'\n", dev, cmd);
	return 0;
}

int main(void)
{
	unsigned int seconds = env_u64("STRESS_SECONDS", 10);
	unsigned int phases = env_u64("STRESS_PHASES", 2), p;
	int migrate = env_u64("STRESS_MIGRATE", 0), hipri = env_u64("STRESS_HIPRI", 1);
	const char *rebind = getenv("STRESS_REBIND"), *reload = getenv("STRESS_RELOAD");
	uint64_t t0 = now_ns();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("STRESS_DEV"))
		dev = getenv("STRESS_DEV");
	if (getenv("STRESS_WORKERS") && !strcmp(getenv("STRESS_WORKERS"), "psync")) {
		workers = psync;
		nr_workers = sizeof(psync) / sizeof(psync[0]);
	}
	base_lba = env_u64("STRESS_OFFSET_MB", 64) * 256;
	dio_n = env_u64("STRESS_DIO_MB", 8) * 256;
	buf_n = env_u64("STRESS_BUF_MB", 2) * 256;
	run_id = mix(now_ns() ^ getpid());
	tab = calloc(dio_n + buf_n, sizeof(*tab));
	if (!tab || dio_n < MAX_EXT || buf_n < 8)
		return 1;
	/* init, and per phase: workload, verify, [disruption, verify]. */
	printf("1..%u\n", 1 + phases * 4);
	printf("# run %016llx: LBA %llu, %llu direct + %llu buffered blocks, %u x %u s, "
	       "%zu workers, migrate %d, hipri %d\n", (unsigned long long)run_id,
	       (unsigned long long)base_lba, (unsigned long long)dio_n,
	       (unsigned long long)buf_n, phases, seconds, nr_workers, migrate, hipri);
	tap(init_regions(), "every block written once");
	for (p = 1; p <= phases; p++) {
		const char *cmd = p % 2 ? rebind : reload;

		tap(phase(seconds, migrate, hipri), "phase %u: mixed I/O%s, every read checked", p,
		    migrate ? " with migrations" : "");
		tap(verify_all("quiesced"), "phase %u: every block at its last acknowledged generation",
		    p);
		if (cmd && *cmd) {
			int ok = disrupt(cmd);

			tap(ok, "phase %u: %s", p, p % 2 ? "unbound and bound again" : "reloaded");
			if (ok && p % 2)
				rebinds++;
			else if (ok)
				reloads++;
			tap(ok && verify_all(p % 2 ? "after rebind" : "after reload"),
			    "phase %u: every block intact after the %s", p, p % 2 ? "rebind" : "reload");
		} else {
			tap(1, "phase %u: no disruption # SKIP no command", p);
			tap(1, "phase %u: no check after a disruption # SKIP no command", p);
		}
	}
	printf("# summary: %.1f MiB written in %llu writes (%llu polled), %.1f MiB read and checked "
	       "in %llu reads, %.1f MiB checked whole-region, migrations %llu (timeouts %llu, "
	       "failures %llu), rebinds %llu, reloads %llu, mismatches %llu, I/O errors %llu, "
	       "%.0f s\n",
	       atomic_load(&blocks_written) * LBS / 1048576.0,
	       (unsigned long long)atomic_load(&writes),
	       (unsigned long long)atomic_load(&hipri_writes),
	       (atomic_load(&blocks_checked) - full_checked) * LBS / 1048576.0,
	       (unsigned long long)atomic_load(&reads), full_checked * LBS / 1048576.0,
	       (unsigned long long)atomic_load(&migrations),
	       (unsigned long long)atomic_load(&migrate_timeouts),
	       (unsigned long long)atomic_load(&migrate_failures), (unsigned long long)rebinds,
	       (unsigned long long)reloads, (unsigned long long)atomic_load(&mismatches),
	       (unsigned long long)atomic_load(&io_errors), (now_ns() - t0) / 1e9);
	return failed || test_no != (int)(1 + phases * 4);
}
