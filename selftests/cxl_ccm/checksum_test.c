// SPDX-License-Identifier: GPL-2.0
/*
 * Every mode's record checksum is the device's (Documentation/cxl_ccm.rst,
 * "Checksums"): AXLE streams it in the metadata record; in RP and BS the
 * device leaves it in the tenant's checksum table (ABI 1.6) and the driver
 * loads it with the results instead of computing it on the host's cores.
 *
 * The device's checksum_fault parameter stores every table entry inverted.
 * With it, an RP or BS record must carry the inverted CRC32C of its payload:
 * a driver that computed the checksums itself would show the true one, and
 * an AXLE record must still be right (no table in AXLE). Records shorter than
 * a table entry's 16 bytes get the driver's own, right, checksum.
 *
 * Each test reloads cxl_ccm_dev with its current parameters plus the fault,
 * and the teardown loads it again as it found it.
 */
#include <sched.h>

#include "axle_lib.h"
#include "dev_params.h"

#define NODE "/dev/cxl_ccm0"

FIXTURE(checksum) {
	char orig[1024];
	struct axle_tenant t;
	bool loaded;
};

FIXTURE_VARIANT(checksum) {
	__u32 mode;
	bool table;	/* RP and BS: the checksums come from the table */
};

FIXTURE_VARIANT_ADD(checksum, rp) { .mode = CXL_CCM_MODE_RP, .table = true };
FIXTURE_VARIANT_ADD(checksum, bs) { .mode = CXL_CCM_MODE_BS, .table = true };
FIXTURE_VARIANT_ADD(checksum, axle) { .mode = CXL_CCM_MODE_AXLE, .table = false };

FIXTURE_SETUP(checksum)
{
	if (dev_param("checksum_fault") < 0)
		SKIP(return, "cxl_ccm_dev.ko is not loaded or has no checksum_fault");
	ASSERT_EQ(0, dev_params_command(self->orig, sizeof(self->orig)));
	self->t.fd = -1;
}

FIXTURE_TEARDOWN(checksum)
{
	if (self->t.fd >= 0)
		axle_close(&self->t);
	if (self->loaded)
		EXPECT_EQ(0, dev_reload(self->orig, NODE)) TH_LOG("restoring: %s", self->orig);
}

/* Reloads the device with the parameters found plus @extra; opens NODE. */
static void reload(struct __test_metadata *_metadata, FIXTURE_DATA(checksum) *self,
		   const char *extra)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "%s checksum_fault=1 %s", self->orig, extra);
	self->loaded = true;
	ASSERT_EQ(0, dev_reload(cmd, NODE)) TH_LOG("%s", cmd);
	ASSERT_TRUE(axle_open_or_skip(_metadata, &self->t, NODE));
}

/*
 * Launches @size bytes in @chunk-byte records and consumes them all; in
 * @inverted the number of records whose checksum is the inverted CRC32C of
 * their payload, in @first_right the result offset of the first right one
 * (or @size). A checksum that is neither fails the test.
 */
static void run(struct __test_metadata *_metadata, struct axle_tenant *t, __u32 size,
		__u32 chunk, __u32 *inverted, __u64 *first_right)
{
	__u32 head = t->cfg.index_base, records = 0, tail;
	struct cxl_ccm_release_entry e;
	static __u8 buf[4096];
	__u64 t0;

	*inverted = 0;
	*first_right = size;
	axle_fill(t, 0, size, 11);
	ASSERT_EQ(0, axle_ioc_launch(t->fd, 0, size, CXL_CCM_XFORM_OP_XOR, chunk, 3, NULL))
		TH_LOG("LAUNCH: %s", strerror(errno));
	t0 = axle_now_ns();
	while (records < size / chunk) {
		ASSERT_LT(axle_now_ns() - t0, AXLE_STALL_NS) TH_LOG("%u records", records);
		tail = cxlccm_ring_md_tail(&t->ring);
		for (; head != tail; head++, records++) {
			struct cxl_ccm_metadata_record r;
			__u32 crc;

			cxlccm_ring_record(&t->ring, head, &r);
			ASSERT_EQ(0, r.flags & CXL_CCM_MD_FLAG_ERROR);
			ASSERT_EQ(chunk, r.length);
			cxlccm_ring_copy(&t->ring, r.payload_index, r.length, buf);
			crc = axle_crc32c(buf, r.length);
			if (r.checksum == (__u32)~crc)
				++*inverted;
			else if (r.checksum == crc && r.result_offset < *first_right)
				*first_right = r.result_offset;
			else
				ASSERT_EQ(crc, r.checksum) TH_LOG("record at %llu",
								  (unsigned long long)r.result_offset);
			e.payload_index = r.payload_index;
			e.length = r.length;
			ASSERT_EQ(0, axle_ioc_release(t->fd, &e, 1, CXL_CCM_RELEASE_METADATA,
						      head + 1, NULL));
		}
		sched_yield();
	}
}

/*
 * Reloads the device with the fault, configures a tenant in @mode with
 * @slots slots of @slot bytes in each ring, and runs @size bytes in
 * @chunk-byte records (run()).
 */
static void faulty_run(struct __test_metadata *_metadata, FIXTURE_DATA(checksum) *self,
		       __u32 mode, __u32 slot, __u32 slots, __u32 size, __u32 chunk,
		       __u32 *inverted, __u64 *first_right)
{
	struct cxl_ccm_configure cfg = axle_config(slots, slots, slot, chunk,
						   CXL_CCM_ORDER_OUT_OF_ORDER, 0, size);

	reload(_metadata, self, "");
	cfg.mode = mode;
	axle_tenant_setup(_metadata, &self->t, &cfg);
	run(_metadata, &self->t, size, chunk, inverted, first_right);
}

/* With the fault, RP and BS records carry the table's (inverted) checksum, AXLE's the right one. */
TEST_F(checksum, records_carry_the_device_s_checksum)
{
	__u32 inverted;
	__u64 first_right;

	faulty_run(_metadata, self, variant->mode, 32, 4096, 64 << 10, 256, &inverted,
		   &first_right);
	EXPECT_EQ(variant->table ? 256U : 0U, inverted);
}

/*
 * The table has one entry per 16 bytes of output: shorter records have none,
 * and the driver computes their checksum itself (right, despite the fault).
 */
TEST_F(checksum, short_records_get_the_driver_s)
{
	__u32 inverted;
	__u64 first_right;

	faulty_run(_metadata, self, variant->mode, 8, 8192, 32 << 10, 8, &inverted, &first_right);
	EXPECT_EQ(0U, inverted);
	EXPECT_EQ(0ULL, first_right);
}

TEST_HARNESS_MAIN
