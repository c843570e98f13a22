// SPDX-License-Identifier: GPL-2.0
/*
 * The software device's CCM compute model (Documentation/cxl_ccm.rst, "CCM
 * compute model"): a result leaves the device no earlier than the modelled
 * CCM would have computed it, and a chunk the emulator computed later than
 * its model is counted in STATS.model_late_chunks and model_deficit_ns.
 *
 * Each test reloads cxl_ccm_dev with its current parameters plus a modelled
 * CCM of its own, and the teardown loads it again as it found it.
 *
 * The negative control: MODEL_TEST_EXTRA=compute_model=0 appends that
 * parameter to every reload; results then leave at the emulator's pace and
 * results_wait_for_the_model fails (make check-harness runs it).
 */
#include <sched.h>
#include <stdlib.h>

#include "axle_lib.h"
#include "dev_params.h"

#define NODE "/dev/cxl_ccm0"
#define CHUNK 4096
#define CHUNKS 16

/*
 * A 4096-byte STREAM_XFORM chunk is 4624 instructions (16 per chunk, 4 per
 * word, one CRC32C per 8 bytes: the table in model/compute.rs). On one unit
 * of 8 µthreads at 1 MHz a µthread issues one every 8 µs: 36.992 ms per
 * chunk, 8 chunks at a time, and the dilation of 10 makes that 369.92 ms.
 * The test needs that CCM slower than the emulator. Without the model (the
 * negative control) the emulator delivered the 16 records between 20 and
 * 32 ms after the launch on the check kernel, and between 70 and 107 ms on
 * the KASAN one (make check-harness on each, TCG); 37 ms a chunk, undilated,
 * was not enough there.
 */
#define SLOW_CCM "ccm_units=1 ccm_uthreads_per_unit=8 ccm_clock_mhz=1 dilation_milli=10000"
#define SLOW_SLOTS 8
#define SLOW_CHUNK_NS (4624ULL * 8 * 1000)
/* A CCM far faster than any emulator: 16 single-µthread units at 100 GHz, 46 ns a chunk. */
#define FAST_CCM "ccm_uthreads_per_unit=1 ccm_clock_mhz=100000"
#define MS 1000000ULL

FIXTURE(model) {
	char orig[1024];
	struct axle_tenant t;
	bool loaded;
};

FIXTURE_SETUP(model)
{
	if (dev_param("compute_model") < 0)
		SKIP(return, "cxl_ccm_dev.ko is not loaded or has no compute model");
	ASSERT_EQ(0, dev_params_command(self->orig, sizeof(self->orig)));
	self->t.fd = -1;
}

FIXTURE_TEARDOWN(model)
{
	if (self->t.fd >= 0)
		axle_close(&self->t);
	if (self->loaded)
		EXPECT_EQ(0, dev_reload(self->orig, NODE)) TH_LOG("restoring: %s", self->orig);
}

/* Reloads the device with the parameters found plus @ccm (and MODEL_TEST_EXTRA), opens a tenant. */
static void reload_and_open(struct __test_metadata *_metadata, FIXTURE_DATA(model) *self,
			    const char *ccm)
{
	const char *extra = getenv("MODEL_TEST_EXTRA");
	struct cxl_ccm_configure cfg = axle_config(64, 4096, 32, CHUNK, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 1 << 20);
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "%s %s %s", self->orig, ccm, extra ? extra : "");
	self->loaded = true;
	ASSERT_EQ(0, dev_reload(cmd, NODE)) TH_LOG("%s", cmd);
	ASSERT_TRUE(axle_open_or_skip(_metadata, &self->t, NODE));
	axle_tenant_setup(_metadata, &self->t, &cfg);
}

/* Launches CHUNKS chunks; the arrival time of each record after the launch, sorted, in @at. */
static void run_one(struct __test_metadata *_metadata, struct axle_tenant *t, __u64 *at)
{
	struct cxl_ccm_release_entry e;
	__u32 head = 0, tail, n = 0, i, j;
	__u64 t0;

	axle_fill(t, 0, CHUNKS * CHUNK, 7);
	t0 = axle_now_ns();
	ASSERT_EQ(0, axle_ioc_launch(t->fd, 0, CHUNKS * CHUNK, CXL_CCM_XFORM_OP_XOR, CHUNK, 5,
				     NULL));
	while (n < CHUNKS) {
		ASSERT_LT(axle_now_ns() - t0, AXLE_STALL_NS) TH_LOG("%u of %u records", n, CHUNKS);
		tail = cxlccm_ring_md_tail(&t->ring);
		for (; head != tail; head++) {
			struct cxl_ccm_metadata_record r;

			cxlccm_ring_record(&t->ring, head, &r);
			ASSERT_EQ(0, r.flags & CXL_CCM_MD_FLAG_ERROR);
			at[n++] = axle_now_ns() - t0;
			e.payload_index = r.payload_index;
			e.length = r.length;
			ASSERT_EQ(0, axle_ioc_release(t->fd, &e, 1, CXL_CCM_RELEASE_METADATA,
						      head + 1, NULL));
		}
		sched_yield();
	}
	/* Insertion sort: the records' arrival order is the device's, not the model's. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && at[j - 1] > at[j]; j--) {
			__u64 x = at[j];

			at[j] = at[j - 1];
			at[j - 1] = x;
		}
}

/*
 * On the slow CCM, 16 chunks take 2 rounds of 8 µthreads: the k-th record to
 * arrive (from 0) cannot leave before round k / 8 + 1 has ended, and the
 * emulator, faster than this CCM, is never late.
 */
TEST_F_TIMEOUT(model, results_wait_for_the_model, 120)
{
	long long dil;
	__u64 at[CHUNKS], chunk_ns;
	struct cxl_ccm_stats s;
	unsigned int k;

	reload_and_open(_metadata, self, SLOW_CCM);
	dil = dev_param("dilation_milli");
	ASSERT_GE(dil, 1000);
	chunk_ns = SLOW_CHUNK_NS * dil / 1000;
	run_one(_metadata, &self->t, at);
	for (k = 0; k < CHUNKS; k++) {
		__u64 got = at[k], due = (k / SLOW_SLOTS + 1) * chunk_ns;

		EXPECT_GE(got, due)
			TH_LOG("record %u after %llu ns, before its modelled %llu ns", k,
			       (unsigned long long)got, (unsigned long long)due);
	}
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(0ULL, s.model_late_chunks) TH_LOG("deficit %llu ns",
						    (unsigned long long)s.model_deficit_ns);
	TH_LOG("first record after %llu us, last after %llu us (modelled %llu, %llu)",
	       (unsigned long long)at[0] / 1000, (unsigned long long)at[CHUNKS - 1] / 1000,
	       (unsigned long long)chunk_ns / 1000,
	       (unsigned long long)(CHUNKS / SLOW_SLOTS) * chunk_ns / 1000);
}

/*
 * On a CCM no emulator keeps up with, every chunk is late, the deficit says
 * by how much, and STATS_RESET starts both counts again.
 */
TEST_F_TIMEOUT(model, late_chunks_are_counted, 120)
{
	struct cxl_ccm_stats s;
	__u64 at[CHUNKS], t0;

	reload_and_open(_metadata, self, FAST_CCM);
	run_one(_metadata, &self->t, at);
	/* The device mirrors its counters after the pass that streamed the records. */
	t0 = axle_now_ns();
	do {
		ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	} while (s.model_late_chunks < CHUNKS && axle_now_ns() - t0 < 1000 * MS);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, CXL_CCM_STATS_RESET));
	EXPECT_EQ((__u64)CHUNKS, s.model_late_chunks);
	EXPECT_GE(s.model_deficit_ns, s.model_late_chunks);
	ASSERT_EQ(0, axle_ioc_stats(self->t.fd, &s, 0));
	EXPECT_EQ(0ULL, s.model_late_chunks);
	EXPECT_EQ(0ULL, s.model_deficit_ns);
}

TEST_HARNESS_MAIN
