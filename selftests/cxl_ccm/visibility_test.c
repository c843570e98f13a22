// SPDX-License-Identifier: GPL-2.0
/*
 * Host-only coherent device memory (HDM-H): the device sees a host store into
 * its memory only once the driver has published it (a write barrier that
 * drains the write-combining buffers). The software device models this when
 * loaded with check_visibility=1 (as `make check` loads it): it decides from
 * what was published whether a launch packet or a credit has arrived, and
 * counts every launch packet, input, descriptor table or credit head it
 * consumed before it was published in STATS.unpublished (and logs it with
 * "HDM-H violation:", which fails the run's kernel-log check).
 *
 * In every mode, with in-order and out-of-order streaming, rings that wrap
 * and results that wait for credit (so credit heads are consumed), every
 * record is verified and STATS.unpublished stays 0. The negative control is
 * `make check-harness` (mode harness-hdmh): the driver's skip_publish hook
 * omits the publish between a launch packet and its tag, and this test must
 * fail there.
 */
#include "axle_lib.h"

#define CHECK_PARAM "/sys/module/cxl_ccm_dev/parameters/check_visibility"

FIXTURE(visibility) {
	struct axle_tenant t;
	struct axle_run r;
};

FIXTURE_VARIANT(visibility) {
	__u32 mode;
	__u32 order;
	const char *name;
};

FIXTURE_VARIANT_ADD(visibility, axle) {
	.mode = CXL_CCM_MODE_AXLE, .order = CXL_CCM_ORDER_OUT_OF_ORDER, .name = "AXLE",
};

FIXTURE_VARIANT_ADD(visibility, axle_in_order) {
	.mode = CXL_CCM_MODE_AXLE, .order = CXL_CCM_ORDER_IN_ORDER, .name = "AXLE in order",
};

FIXTURE_VARIANT_ADD(visibility, rp) {
	.mode = CXL_CCM_MODE_RP, .order = CXL_CCM_ORDER_OUT_OF_ORDER, .name = "RP",
};

FIXTURE_VARIANT_ADD(visibility, bs) {
	.mode = CXL_CCM_MODE_BS, .order = CXL_CCM_ORDER_OUT_OF_ORDER, .name = "BS",
};

FIXTURE_VARIANT_ADD(visibility, axle_irq) {
	.mode = CXL_CCM_MODE_AXLE_IRQ, .order = CXL_CCM_ORDER_OUT_OF_ORDER, .name = "AXLE_IRQ",
};

static bool checking(void)
{
	char c = 'N';
	FILE *f = fopen(CHECK_PARAM, "r");

	if (f) {
		if (fread(&c, 1, 1, f) != 1)
			c = 'N';
		fclose(f);
	}
	return c == 'Y';
}

FIXTURE_SETUP(visibility)
{
	self->t.fd = -1;
	if (!axle_open_or_skip(_metadata, &self->t, AXLE_NODE0))
		return;
	if (!checking())
		SKIP(return, "cxl_ccm_dev was loaded without check_visibility=1");
	if (!(self->t.info.caps & (1ULL << variant->mode)))
		SKIP(return, "the device does not serve mode %s", variant->name);
}

FIXTURE_TEARDOWN(visibility)
{
	axle_run_free(&self->r);
	axle_close(&self->t);
}

/*
 * Small rings (16 metadata, 64 payload slots of 32 B) against up to 4 KiB
 * results: the device waits for credit again and again, reads the credit
 * line each time, and the indexes wrap (index_base just below 2^32).
 */
TEST_F_TIMEOUT(visibility, every_store_published, 120)
{
	struct cxl_ccm_configure cfg = axle_config(16, 64, 32, 256, variant->order, 0xffffff00,
						   65536);
	struct axle_run *r = &self->r;
	struct cxl_ccm_stats s;
	unsigned int i;

	cfg.mode = variant->mode;
	cfg.poll_interval_ns = 0;
	axle_tenant_setup(_metadata, &self->t, &cfg);
	axle_run_init(_metadata, r, &self->t, 4096, axle_seed(_metadata));
	for (i = 0; i < 40; i++)
		axle_launch(_metadata, r, axle_random_op(r), axle_rand32(&r->rng),
			    4 * (1 + axle_below(&r->rng, 1024)), axle_random_chunk(r));
	axle_drain(_metadata, r);
	axle_check_stats(_metadata, r);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(40U, s.launches_completed);
	if (variant->mode == CXL_CCM_MODE_AXLE || variant->mode == CXL_CCM_MODE_AXLE_IRQ)
		EXPECT_LT(0ULL, s.credit_stalls) TH_LOG("the rings never ran out of credit");
	TH_LOG("%s: %llu launches, %llu records, %llu credit stalls, unpublished %llu",
	       variant->name, (unsigned long long)s.launched, (unsigned long long)s.records,
	       (unsigned long long)s.credit_stalls, (unsigned long long)s.unpublished);
}

TEST_HARNESS_MAIN
