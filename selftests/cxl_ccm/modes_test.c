// SPDX-License-Identifier: GPL-2.0
/*
 * The RP, BS and AXLE_IRQ modes on the same device and the same rings as AXLE.
 *
 * RP: the launch is a mailbox command over CXL.io, the driver polls the
 * mailbox remotely, dequeues, then loads the results from device memory
 * into the rings. BS: the launch store is answered at completion (LAUNCH
 * returns only then), then the results are loaded. AXLE_IRQ: AXLE whose
 * waiters are woken by the device's interrupt (one per streamed batch)
 * instead of a poller. User space
 * consumes all of them exactly like AXLE, so every record is checked by the
 * same consumer (axle_lib.h: sequence, checksum, exact data, FINAL last,
 * coverage).
 *
 * Also: results larger than the rings arrive piece by piece as the consumer
 * releases; error and empty launches give their FINAL records; the modes'
 * own rules (SYNC only in BS); and one figure per mode for the same work.
 */
#include "axle_lib.h"

FIXTURE(modes) {
	struct axle_tenant t;
	struct axle_run r;
};

FIXTURE_VARIANT(modes) {
	__u32 mode;
	const char *name;
};

FIXTURE_VARIANT_ADD(modes, rp) {
	.mode = CXL_CCM_MODE_RP,
	.name = "RP",
};

FIXTURE_VARIANT_ADD(modes, bs) {
	.mode = CXL_CCM_MODE_BS,
	.name = "BS",
};

FIXTURE_VARIANT_ADD(modes, axle_irq) {
	.mode = CXL_CCM_MODE_AXLE_IRQ,
	.name = "AXLE_IRQ",
};

FIXTURE_SETUP(modes)
{
	self->t.fd = -1;
	if (!axle_open_or_skip(_metadata, &self->t, AXLE_NODE0))
		return;
	if (!(self->t.info.caps & (1ULL << variant->mode)))
		SKIP(return, "the device does not serve mode %s", variant->name);
}

FIXTURE_TEARDOWN(modes)
{
	axle_run_free(&self->r);
	axle_close(&self->t);
}

static void setup(struct __test_metadata *_metadata, struct axle_tenant *t, __u32 mode,
		  __u32 md_slots, __u32 pl_slots, __u32 base)
{
	struct cxl_ccm_configure cfg = axle_config(md_slots, pl_slots, 32, 256,
						   CXL_CCM_ORDER_OUT_OF_ORDER, base, 65536);

	cfg.mode = mode;
	cfg.poll_interval_ns = 0;	/* RP: the device's remote polling interval */
	axle_tenant_setup(_metadata, t, &cfg);
}

/* Launches of every op and chunk size; every record verified. */
TEST_F_TIMEOUT(modes, results_verified, 90)
{
	struct axle_run *r = &self->r;
	struct cxl_ccm_stats s;
	unsigned int i;
	__u64 t0 = axle_now_ns();

	setup(_metadata, &self->t, variant->mode, 64, 256, 0xfffffff0);
	axle_run_init(_metadata, r, &self->t, 4096, axle_seed(_metadata));
	for (i = 0; i < 24; i++)
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
			    4 * (1 + axle_below(&r->rng, 1024)), axle_random_chunk(r));
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(24U, s.launches_completed);
	/* The device had work for a while, and not for longer than the test ran. */
	EXPECT_LT(0ULL, s.ccm_busy_ns);
	EXPECT_GE(axle_now_ns() - t0, s.ccm_busy_ns);
	/*
	 * Every launch crossed the link (a store, and in RP three mailbox writes), so
	 * host cores stalled; at most the poller and this thread at once.
	 */
	EXPECT_LT(0ULL, s.host_stall_ns);
	EXPECT_GE(2 * (axle_now_ns() - t0), s.host_stall_ns);
	if (variant->mode == CXL_CCM_MODE_RP)
		EXPECT_LE(24U, s.polls) TH_LOG("RP completes by remote polls of the mailbox");
	if (variant->mode == CXL_CCM_MODE_AXLE_IRQ) {
		EXPECT_LT(0U, s.interrupts) TH_LOG("AXLE_IRQ raises interrupts");
	} else {
		EXPECT_EQ(0U, s.interrupts);
	}
}

/*
 * A WAIT that blocks before anything is launched returns once the records
 * are there: in AXLE_IRQ the interrupt wakes it (the poller never runs).
 */
TEST_F_TIMEOUT(modes, wait_wakes, 30)
{
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	struct cxl_ccm_wait w;

	setup(_metadata, &self->t, variant->mode, 16, 64, 0xfffffffe);
	memset(self->t.ring.in, 0x5a, 4096);
	l = axle_xform_launch(0, 256, CXL_CCM_XFORM_OP_XOR, 64, 1);
	ASSERT_EQ(0, ioctl(self->t.fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, axle_ioc_wait(self->t.fd, &w, 4, self->t.cfg.index_base,
				   5000000000ULL)) TH_LOG("WAIT: %s", strerror(errno));
	EXPECT_LE(4U, w.ready);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	if (variant->mode == CXL_CCM_MODE_AXLE_IRQ) {
		int i;

		/*
		 * The WAIT may find the records before the interrupt that
		 * announces them is handled: give the handler a second.
		 */
		for (i = 0; i < 100 && !s.interrupts; i++) {
			usleep(10000);
			ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
		}
		EXPECT_LT(0U, s.interrupts);
	}
}

/* The software device's interrupt cost (module parameter), or -1 on hardware. */
static long long irq_cost_ns(void)
{
	FILE *f = fopen("/sys/module/cxl_ccm_dev/parameters/irq_ns", "r");
	long long ns = -1;

	if (f) {
		if (fscanf(f, "%lld", &ns) != 1)
			ns = -1;
		fclose(f);
	}
	return ns;
}

/*
 * AXLE_IRQ as the paper models it: one interrupt per streamed batch (per DMA
 * request), none coalesced, each one's handling (50 µs) paid on the host's
 * interrupt path and so counted in the host core stall. A device that keeps
 * one interrupt outstanding (cxl_ccm_dev irq_coalesce=1) raises fewer.
 */
TEST_F_TIMEOUT(modes, one_interrupt_per_batch, 60)
{
	struct axle_run *r = &self->r;
	struct cxl_ccm_stats s;
	long long cost = irq_cost_ns();
	unsigned int i;

	if (variant->mode != CXL_CCM_MODE_AXLE_IRQ)
		SKIP(return, "interrupts are AXLE_IRQ's");
	setup(_metadata, &self->t, variant->mode, 64, 256, 0x100);
	axle_run_init(_metadata, r, &self->t, 4096, axle_seed(_metadata));
	for (i = 0; i < 16; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, axle_rand32(&r->rng), 4096, 64);
	axle_drain(_metadata, r);
	/* The handler may still be paying for the last ones: give it a second. */
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	for (i = 0; i < 100 && s.interrupts != s.dma_batches; i++) {
		usleep(10000);
		ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	}
	TH_LOG("%llu batches, %llu interrupts, host stall %llu us",
	       (unsigned long long)s.dma_batches, (unsigned long long)s.interrupts,
	       (unsigned long long)(s.host_stall_ns / 1000));
	EXPECT_LE(16ULL, s.dma_batches);
	EXPECT_EQ(s.dma_batches, s.interrupts) TH_LOG("one interrupt per streamed batch");
	if (cost > 0)
		EXPECT_LE(s.interrupts * (unsigned long long)cost, s.host_stall_ns)
			TH_LOG("each interrupt's %lld ns is paid on the host", cost);
}

/*
 * One launch whose results are 8 times the payload ring: the driver copies
 * what fits, and the rest as the consumer releases.
 */
TEST_F_TIMEOUT(modes, results_larger_than_rings, 60)
{
	struct axle_run *r = &self->r;

	setup(_metadata, &self->t, variant->mode, 16, 64, 0x7ffffffe);
	axle_run_init(_metadata, r, &self->t, 16384, axle_seed(_metadata));
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, 0x01010101, 16384, 64);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 0xdeadbeef, 16384, 0);
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
}

/* Waits up to 10 s until @n records are ready after @head. */
static bool ready(const struct axle_tenant *t, __u32 head, __u32 n)
{
	__u64 t0 = axle_now_ns();

	while (cxlccm_ring_md_tail(&t->ring) - head < n)
		if (axle_now_ns() - t0 > 10000000000ULL)
			return false;
	return true;
}

/* Releases records [@head, @head + @n) and the metadata with them. */
static int release(const struct axle_tenant *t, __u32 head, __u32 n)
{
	struct cxl_ccm_release_entry e[64];
	struct cxl_ccm_metadata_record rec;
	__u32 i;

	for (i = 0; i < n; i++) {
		cxlccm_ring_record(&t->ring, head + i, &rec);
		e[i].payload_index = rec.payload_index;
		e[i].length = rec.length;
	}
	return axle_ioc_release(t->fd, e, n, CXL_CCM_RELEASE_METADATA, head + n, NULL);
}

/*
 * RP, BS: the driver refills the rings up to the heads user space released,
 * whether or not it would have published them to a device. A release of a
 * whole ring after a small one (the metadata head then moves more than a lap
 * past the last head a streaming device would have seen) is still valid.
 */
TEST_F_TIMEOUT(modes, release_more_than_a_lap, 60)
{
	struct cxl_ccm_launch l;
	__u32 head;

	if (variant->mode == CXL_CCM_MODE_AXLE_IRQ)
		SKIP(return, "a streaming device waits for published credit");
	setup(_metadata, &self->t, variant->mode, 16, 64, 0xfffffff8);
	l = axle_xform_launch(0, 4096, CXL_CCM_XFORM_OP_COPY, 32, 0);
	ASSERT_EQ(0, ioctl(self->t.fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
	head = self->t.cfg.index_base;
	ASSERT_TRUE(ready(&self->t, head, 3));
	ASSERT_EQ(0, release(&self->t, head, 3)) TH_LOG("%s", strerror(errno));
	head += 3;
	ASSERT_TRUE(ready(&self->t, head, 16)) TH_LOG("the driver did not refill the ring");
	ASSERT_EQ(0, release(&self->t, head, 16)) TH_LOG("%s", strerror(errno));
	head += 16;
	ASSERT_TRUE(ready(&self->t, head, 16));
	EXPECT_EQ(0, release(&self->t, head, 16)) TH_LOG("%s", strerror(errno));
}

/* An empty input and a bad size: one FINAL record each (ERROR for the bad one). */
TEST_F(modes, empty_and_error)
{
	struct axle_run *r = &self->r;

	setup(_metadata, &self->t, variant->mode, 16, 64, 5);
	axle_run_init(_metadata, r, &self->t, 1024, axle_seed(_metadata));
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_COPY, 0, 0, 0);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 7, 6, 0);
	axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, 7, 256, 64);
	axle_drain(_metadata, r);
	EXPECT_EQ(1U + 1 + 4, r->records);
}

/* SYNC belongs to BS: refused on the other modes, accepted (and implied) on BS. */
TEST_F(modes, sync_flag)
{
	struct cxl_ccm_launch l;
	__u32 tag;

	setup(_metadata, &self->t, variant->mode, 16, 64, 0);
	l = axle_xform_launch(0, 64, CXL_CCM_XFORM_OP_COPY, 0, 0);
	l.flags = CXL_CCM_LAUNCH_SYNC;
	errno = 0;
	if (variant->mode != CXL_CCM_MODE_BS) {
		EXPECT_EQ(-1, ioctl(self->t.fd, CXL_CCM_IOC_LAUNCH, &l));
		EXPECT_EQ(EINVAL, errno);
		return;
	}
	ASSERT_EQ(0, ioctl(self->t.fd, CXL_CCM_IOC_LAUNCH, &l)) TH_LOG("%s", strerror(errno));
	tag = l.tag;
	EXPECT_EQ(0U, tag);
	/* Synchronous: the results are in the rings when LAUNCH returns. */
	EXPECT_EQ(1U, cxlccm_ring_md_tail(&self->t.ring) - self->t.cfg.index_base);
}

/*
 * The same work in this mode and in AXLE, timed in the same run: a figure,
 * not an assertion (emulated hardware).
 */
TEST_F_TIMEOUT(modes, figure_against_axle, 120)
{
	struct axle_tenant axle = { .fd = -1 };
	struct axle_run ra, *r = &self->r;
	__u64 t0, t_mode, t_axle;
	unsigned int i;

	setup(_metadata, &self->t, variant->mode, 64, 256, 0);
	axle_run_init(_metadata, r, &self->t, 4096, 1);
	t0 = axle_now_ns();
	for (i = 0; i < 32; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_XOR, i, 4096, 128);
	axle_drain(_metadata, r);
	t_mode = axle_now_ns() - t0;

	ASSERT_EQ(0, axle_open(&axle, AXLE_NODE0));
	setup(_metadata, &axle, CXL_CCM_MODE_AXLE, 64, 256, 0);
	axle_run_init(_metadata, &ra, &axle, 4096, 1);
	t0 = axle_now_ns();
	for (i = 0; i < 32; i++)
		axle_launch(_metadata, &ra, CXL_CCM_XFORM_OP_XOR, i, 4096, 128);
	axle_drain(_metadata, &ra);
	t_axle = axle_now_ns() - t0;
	ksft_print_msg("%s: 32 launches x 4 KiB in %llu us; AXLE %llu us (%.2fx)\n",
		       variant->name, (unsigned long long)t_mode / 1000,
		       (unsigned long long)t_axle / 1000, (double)t_mode / (double)t_axle);
	axle_run_free(&ra);
	axle_close(&axle);
}

TEST_HARNESS_MAIN
