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
 * Uses cxl_ccm5; skips if it is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define NODE "/dev/cxl_ccm5"
#define RACERS 4
#define ROUNDS 50
#define LAUNCHES 600

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

TEST_HARNESS_MAIN
