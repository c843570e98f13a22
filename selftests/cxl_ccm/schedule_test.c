// SPDX-License-Identifier: GPL-2.0
/*
 * How the device schedules an out-of-order tenant's launches: round-robin
 * over them by default (Table III), first in, first out with
 * CXL_CCM_CONFIGURE_FIFO. Two launches of 256 chunks go in back to back; the
 * order of their records shows the schedule: round-robin alternates between
 * the launches all along, FIFO streams the first launch's records before
 * the second's (bar a few chunks the two µthreads finish out of order at the
 * boundary). Every record's payload is checked as well.
 */
#include "axle_lib.h"

#define CHUNK		256
#define LAUNCH_BYTES	(64 << 10)
#define RECORDS		(2 * LAUNCH_BYTES / CHUNK)

FIXTURE(sched) {
	struct axle_tenant t;
};

FIXTURE_VARIANT(sched) {
	__u32 flags;
	bool fifo;
};

FIXTURE_VARIANT_ADD(sched, round_robin) { .flags = 0, .fifo = false };
FIXTURE_VARIANT_ADD(sched, fifo) { .flags = CXL_CCM_CONFIGURE_FIFO, .fifo = true };

FIXTURE_SETUP(sched)
{
	if (!axle_open_or_skip(_metadata, &self->t, AXLE_NODE0))
		return;
}

FIXTURE_TEARDOWN(sched)
{
	axle_close(&self->t);
}

TEST_F_TIMEOUT(sched, launch_order, 60)
{
	/* Room for every record: nothing is released until both launches are done. */
	struct cxl_ccm_configure cfg = axle_config(1024, 2 * LAUNCH_BYTES / 32, 32, CHUNK,
						   CXL_CCM_ORDER_OUT_OF_ORDER, 0,
						   2 * LAUNCH_BYTES);
	struct axle_tenant *t = &self->t;
	struct cxl_ccm_wait w;
	__u32 tags[2], i, switches = 0, prev = 0;
	__u8 got[CHUNK];

	cfg.flags = variant->flags;
	axle_tenant_setup(_metadata, t, &cfg);
	axle_fill(t, 0, LAUNCH_BYTES, 1);
	axle_fill(t, LAUNCH_BYTES, LAUNCH_BYTES, 2);
	ASSERT_EQ(0, axle_ioc_launch(t->fd, 0, LAUNCH_BYTES, CXL_CCM_XFORM_OP_COPY, CHUNK, 0,
				     &tags[0]));
	ASSERT_EQ(0, axle_ioc_launch(t->fd, LAUNCH_BYTES, LAUNCH_BYTES, CXL_CCM_XFORM_OP_COPY,
				     CHUNK, 0, &tags[1]));
	ASSERT_EQ(0, axle_ioc_wait(t->fd, &w, RECORDS, 0, 20ULL * 1000 * 1000 * 1000))
		TH_LOG("WAIT: %s (%u ready)", strerror(errno), w.ready);
	for (i = 0; i < RECORDS; i++) {
		struct cxl_ccm_metadata_record r;
		__u32 l;

		cxlccm_ring_record(&t->ring, i, &r);
		ASSERT_EQ(i, r.seq);
		ASSERT_EQ(0, r.status);
		ASSERT_EQ(CHUNK, r.length);
		l = r.tag == tags[1];
		ASSERT_TRUE(r.tag == tags[0] || l) TH_LOG("record %u: tag %u", i, r.tag);
		cxlccm_ring_copy(&t->ring, r.payload_index, r.length, got);
		for (__u32 k = 0; k < CHUNK; k += 4) {
			__u32 want = axle_pattern(l + 1, (r.result_offset + k) / 4), v;

			memcpy(&v, got + k, 4);
			ASSERT_EQ(want, v) TH_LOG("record %u word %u", i, k / 4);
		}
		switches += i && l != prev;
		prev = l;
	}
	TH_LOG("%u switches between the launches in %u records", switches, RECORDS);
	if (variant->fifo) {
		EXPECT_GE(4U, switches) TH_LOG("FIFO interleaved the launches");
	} else {
		EXPECT_LE(32U, switches) TH_LOG("round-robin did not alternate");
	}
}

TEST_HARNESS_MAIN
