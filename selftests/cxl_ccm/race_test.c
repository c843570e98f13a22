// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm under racing threads of one process, on one file.
 *
 * configure_race: four threads CONFIGURE the same fresh file at once, 50
 * times. Exactly one wins each round; the others get EBUSY, and the winner's
 * tenant number is the one STATS reports. No tenant number leaks: afterwards
 * every tenant can be configured.
 *
 * stats_reset_race: one thread launches empty STREAM_XFORMs (one record each)
 * while two threads read the statistics with STATS_RESET in a loop. STATS_RESET subtracts what it
 * reported, so the launches the readers saw add up to exactly what was
 * launched: none counted twice, none lost.
 *
 * stats_read_race: one thread launches empty STREAM_XFORMs, three read STATS,
 * two read it with STATS_RESET and one polls with WAIT, until the readers
 * made STATS_CALLS calls. A counter read below its baseline wraps to near 2^64: no STATS may
 * report one. The records and launches the resets reported add up to exactly
 * what was launched.
 *
 * stats_fresh_tenant: a fresh tenant's first STATS counts nothing of the
 * tenant that held its number before.
 *
 * Uses cxl_ccm5; skips if it is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define NODE "/dev/cxl_ccm5"
#define RACERS 4
#define ROUNDS 50
#define LAUNCHES 600
/* The plain STATS calls of stats_read_race (CXL_CCM_STATS_CALLS overrides):
 * a wrapped counter was seen in about 1 of 10 000 calls before the snapshot
 * and the reset were serialised. */
#define STATS_CALLS 200000ULL
/* Far above any count a test can reach, far below a wrapped one. */
#define WRAPPED (1ULL << 62)

static void fill_cfg(struct cxl_ccm_configure *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = CXL_CCM_MODE_AXLE;
	cfg->slot_size = 32;
	cfg->streaming_factor = 32;
	cfg->metadata_slots = 1024;
	cfg->payload_slots = 1024;
	cfg->input_size = 64 << 10;
}

struct racer {
	pthread_t thread;
	pthread_barrier_t *start;
	int fd;
	int rc, err;
	struct cxl_ccm_configure cfg;
};

static void *configure_one(void *arg)
{
	struct racer *r = arg;

	fill_cfg(&r->cfg);
	pthread_barrier_wait(r->start);
	r->rc = ioctl(r->fd, CXL_CCM_IOC_CONFIGURE, &r->cfg);
	r->err = r->rc ? errno : 0;
	return NULL;
}

FIXTURE(race) {
	int fd;
	struct cxl_ccm_info info;
};

FIXTURE_SETUP(race)
{
	self->fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, NODE " is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
	ASSERT_LE(0, self->fd);
	memset(&self->info, 0, sizeof(self->info));
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_INFO, &self->info));
}

FIXTURE_TEARDOWN(race)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(race, configure_race, 120)
{
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_stats s;
	struct racer r[RACERS];
	pthread_barrier_t start;
	int round, i, fds[64];

	ASSERT_GE(64, self->info.max_tenants);
	for (round = 0; round < ROUNDS; round++) {
		int fd = open(NODE, O_RDWR | O_CLOEXEC), won = -1, busy = 0;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, pthread_barrier_init(&start, NULL, RACERS));
		for (i = 0; i < RACERS; i++) {
			r[i].start = &start;
			r[i].fd = fd;
			ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, configure_one, &r[i]));
		}
		for (i = 0; i < RACERS; i++) {
			pthread_join(r[i].thread, NULL);
			if (r[i].rc == 0) {
				EXPECT_EQ(-1, won) TH_LOG("round %d: two CONFIGUREs succeeded", round);
				won = i;
			} else {
				EXPECT_EQ(EBUSY, r[i].err) TH_LOG("round %d: %s", round,
								  strerror(r[i].err));
				busy += r[i].err == EBUSY;
			}
		}
		pthread_barrier_destroy(&start);
		ASSERT_LE(0, won) TH_LOG("round %d: no CONFIGURE succeeded", round);
		EXPECT_EQ(RACERS - 1, busy);
		memset(&s, 0, sizeof(s));
		ASSERT_EQ(0, ioctl(fd, CXL_CCM_IOC_STATS, &s));
		EXPECT_EQ(r[won].cfg.tenant, s.tenant) TH_LOG("round %d: the winner was told tenant "
							      "%u, STATS says %u", round,
							      r[won].cfg.tenant, s.tenant);
		close(fd);
	}

	for (i = 0; i < (int)self->info.max_tenants; i++) {
		fds[i] = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
		fill_cfg(&cfg);
		EXPECT_EQ(0, ioctl(fds[i], CXL_CCM_IOC_CONFIGURE, &cfg))
			TH_LOG("tenant %d: %s (a tenant number leaked?)", i, strerror(errno));
	}
	while (i--)
		close(fds[i]);
}

struct resetter {
	pthread_t thread;
	int fd;
	volatile int *stop;
	__u64 launched, calls, failed;
};

static void *reset_loop(void *arg)
{
	struct resetter *r = arg;
	struct cxl_ccm_stats s;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		memset(&s, 0, sizeof(s));
		s.flags = CXL_CCM_STATS_RESET;
		if (ioctl(r->fd, CXL_CCM_IOC_STATS, &s)) {
			r->failed++;
			continue;
		}
		r->launched += s.launched;
		r->calls++;
	}
	return NULL;
}

TEST_F_TIMEOUT(race, stats_reset_race, 120)
{
	struct cxl_ccm_stream_xform_args xa = { .op = CXL_CCM_XFORM_OP_COPY };
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_release rel;
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	struct resetter r[2];
	volatile int stop = 0;
	__u64 total;
	int i;

	fill_cfg(&cfg);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = self->fd;
		r[i].stop = &stop;
		ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, reset_loop, &r[i]));
	}
	for (i = 0; i < LAUNCHES; i++) {
		memset(&l, 0, sizeof(l));
		l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
		l.arg_size = sizeof(xa);
		memcpy(l.args, &xa, sizeof(xa));
		ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("launch %d: %s", i,
									  strerror(errno));
		/* Each empty launch streams one record: give the ring back as we go. */
		if (i % 256 == 255) {
			struct cxl_ccm_wait w = { .min_records = 256,
						  .metadata_head = cfg.index_base + i - 255,
						  .timeout_ns = 5000000000ull };

			ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_WAIT, &w)) TH_LOG("%s",
										  strerror(errno));
			memset(&rel, 0, sizeof(rel));
			rel.flags = CXL_CCM_RELEASE_METADATA | CXL_CCM_RELEASE_PUBLISH;
			rel.metadata_head = cfg.index_base + i + 1;
			ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_RELEASE, &rel)) TH_LOG("%s",
											strerror(errno));
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(r[i].thread, NULL);
	memset(&s, 0, sizeof(s));
	s.flags = CXL_CCM_STATS_RESET;
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_STATS, &s));
	total = r[0].launched + r[1].launched + s.launched;
	TH_LOG("%llu + %llu resets, launches seen %llu + %llu + %llu",
	       (unsigned long long)r[0].calls, (unsigned long long)r[1].calls,
	       (unsigned long long)r[0].launched, (unsigned long long)r[1].launched,
	       (unsigned long long)s.launched);
	EXPECT_EQ(0ULL, r[0].failed + r[1].failed);
	EXPECT_EQ((__u64)LAUNCHES, total) TH_LOG("STATS_RESET lost or doubled launches");
	EXPECT_LT(10ULL, r[0].calls + r[1].calls) TH_LOG("the readers hardly ran: no race");
}

/* stats_read_race's threads: plain STATS readers, STATS_RESET readers. */
#define READERS 3
#define RESETTERS 2

struct reader {
	pthread_t thread;
	int fd, reset;
	__u32 poke_head;
	volatile int *stop;
	__u64 calls, failed, wrapped, launched, records;
	struct cxl_ccm_stats bad;
};

/* The counters a reset rebases. */
static int stats_wrapped(const struct cxl_ccm_stats *s)
{
	const __u64 v[] = { s->launched, s->launches_completed, s->records, s->payload_bytes,
			    s->backpressure_waits, s->backpressure_ns, s->credit_stalls,
			    s->dma_batches, s->polls, s->empty_polls, s->credits_published,
			    s->errors, s->ccm_busy_ns, s->credit_wait_ns, s->host_stall_ns,
			    s->model_deficit_ns, s->model_late_chunks };
	unsigned int i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] >= WRAPPED)
			return 1;
	return 0;
}

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	struct cxl_ccm_stats s;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		memset(&s, 0, sizeof(s));
		s.flags = r->reset ? CXL_CCM_STATS_RESET : 0;
		if (ioctl(r->fd, CXL_CCM_IOC_STATS, &s)) {
			r->failed++;
			continue;
		}
		if (stats_wrapped(&s) && !r->wrapped++)
			r->bad = s;
		r->launched += s.launched;
		r->records += s.records;
		__atomic_add_fetch(&r->calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * A WAIT that checks once, in a loop: no side effect, but it polls the
 * rings under the tenant's lock, which the STATS calls take too.
 */
static void *poke_loop(void *arg)
{
	struct reader *r = arg;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		struct cxl_ccm_wait w = { .min_records = 1, .metadata_head = r->poke_head };

		ioctl(r->fd, CXL_CCM_IOC_WAIT, &w);
	}
	return NULL;
}

/* Waits for the records up to @tail and gives the ring back. */
static int consume_to(int fd, __u32 head, __u32 tail)
{
	struct cxl_ccm_wait w = { .min_records = tail - head, .metadata_head = head,
				  .timeout_ns = 5000000000ull };
	struct cxl_ccm_release rel = { .flags = CXL_CCM_RELEASE_METADATA |
						CXL_CCM_RELEASE_PUBLISH,
				       .metadata_head = tail };

	if (tail == head)
		return 0;
	return ioctl(fd, CXL_CCM_IOC_WAIT, &w) ?: ioctl(fd, CXL_CCM_IOC_RELEASE, &rel);
}

TEST_F_TIMEOUT(race, stats_read_race, 300)
{
	struct cxl_ccm_stream_xform_args xa = { .op = CXL_CCM_XFORM_OP_COPY };
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	struct reader r[READERS + RESETTERS];
	pthread_t poker;
	volatile int stop = 0;
	__u64 launched = 0, calls, wrapped = 0, sum_launched = 0, sum_records = 0;
	__u32 head;
	int i;

	const char *env = getenv("CXL_CCM_STATS_CALLS");
	__u64 target = env ? strtoull(env, NULL, 10) : STATS_CALLS;

	fill_cfg(&cfg);
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &cfg));
	head = cfg.index_base;
	for (i = 0; i < READERS + RESETTERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = self->fd;
		r[i].stop = &stop;
		r[i].reset = i >= READERS;
		ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, read_loop, &r[i]));
	}
	r[0].poke_head = cfg.index_base;
	ASSERT_EQ(0, pthread_create(&poker, NULL, poke_loop, &r[0]));
	do {
		memset(&l, 0, sizeof(l));
		l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
		l.arg_size = sizeof(xa);
		memcpy(l.args, &xa, sizeof(xa));
		ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("launch %llu: %s",
									      (unsigned long long)launched,
									      strerror(errno));
		launched++;
		if (launched % 256 == 0) {
			ASSERT_EQ(0, consume_to(self->fd, head, cfg.index_base + launched))
				TH_LOG("%s", strerror(errno));
			head = cfg.index_base + launched;
		}
		for (calls = 0, i = 0; i < READERS; i++)
			calls += __atomic_load_n(&r[i].calls, __ATOMIC_RELAXED);
	} while (calls < target && launched < 10000000);
	ASSERT_EQ(0, consume_to(self->fd, head, cfg.index_base + launched))
		TH_LOG("%s", strerror(errno));
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < READERS + RESETTERS; i++)
		pthread_join(r[i].thread, NULL);
	pthread_join(poker, NULL);
	memset(&s, 0, sizeof(s));
	s.flags = CXL_CCM_STATS_RESET;
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_STATS, &s));
	for (i = READERS; i < READERS + RESETTERS; i++) {
		sum_launched += r[i].launched;
		sum_records += r[i].records;
	}
	sum_launched += s.launched;
	sum_records += s.records;
	for (i = 0; i < READERS + RESETTERS; i++) {
		wrapped += r[i].wrapped;
		if (r[i].wrapped)
			TH_LOG("reader %d: %llu wrapped, e.g. records %llu busy_ns %llu", i,
			       (unsigned long long)r[i].wrapped,
			       (unsigned long long)r[i].bad.records,
			       (unsigned long long)r[i].bad.ccm_busy_ns);
	}
	for (calls = 0, i = 0; i < READERS; i++)
		calls += r[i].calls;
	TH_LOG("%llu launches; STATS %llu, STATS_RESET %llu + %llu; wrapped %llu",
	       (unsigned long long)launched, (unsigned long long)calls,
	       (unsigned long long)r[READERS].calls, (unsigned long long)r[READERS + 1].calls,
	       (unsigned long long)wrapped);
	for (i = 0; i < READERS + RESETTERS; i++)
		EXPECT_EQ(0ULL, r[i].failed);
	EXPECT_EQ(0ULL, wrapped) TH_LOG("STATS read counters below their baseline");
	EXPECT_EQ(launched, sum_launched) TH_LOG("the resets reported %llu launches",
						 (unsigned long long)sum_launched);
	EXPECT_EQ(launched, sum_records) TH_LOG("the resets reported %llu records",
						(unsigned long long)sum_records);
	EXPECT_LT(10ULL, r[READERS].calls) TH_LOG("the resetter hardly ran: no race");
}

/*
 * stats_fresh_tenant: a tenant launches and closes; the next CONFIGURE of a
 * file takes the number it freed (the lowest free one) and reads STATS at
 * once: it counts since its own CONFIGURE, so nothing of the previous tenant.
 * The device zeroes its counters before it reports the tenant enabled.
 */
TEST_F_TIMEOUT(race, stats_fresh_tenant, 120)
{
	struct cxl_ccm_stream_xform_args xa = { .op = CXL_CCM_XFORM_OP_COPY };
	struct cxl_ccm_configure cfg;
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	int round, i, fd, stale = 0;

	close(self->fd);
	self->fd = -1;
	for (round = 0; round < 20; round++) {
		fd = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		fill_cfg(&cfg);
		ASSERT_EQ(0, ioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg));
		for (i = 0; i < 64; i++) {
			memset(&l, 0, sizeof(l));
			l.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM;
			l.arg_size = sizeof(xa);
			memcpy(l.args, &xa, sizeof(xa));
			ASSERT_EQ(0, ioctl(fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
		}
		ASSERT_EQ(0, consume_to(fd, cfg.index_base, cfg.index_base + 64))
			TH_LOG("%s", strerror(errno));
		close(fd);
		fd = open(NODE, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		fill_cfg(&cfg);
		ASSERT_EQ(0, ioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg));
		memset(&s, 0, sizeof(s));
		ASSERT_EQ(0, ioctl(fd, CXL_CCM_IOC_STATS, &s));
		if (s.records || s.payload_bytes || s.ccm_busy_ns) {
			if (!stale++)
				TH_LOG("round %d: a fresh tenant %u reads records %llu, busy %llu ns",
				       round, s.tenant, (unsigned long long)s.records,
				       (unsigned long long)s.ccm_busy_ns);
		}
		close(fd);
	}
	EXPECT_EQ(0, stale) TH_LOG("%d of 20 fresh tenants read an earlier tenant's counters",
				   stale);
}

TEST_HARNESS_MAIN
