/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small consumer for the workload-kernel selftests (knn_test.c,
 * ssb_test.c): one tenant in a chosen mode with its rings and input mapped,
 * and a collector that takes records until a FINAL one, checking each
 * record's sequence number and checksum, copying its payload to the output
 * at result_offset and releasing it. The ring mechanics are libcxlccm's
 * (cxlccm_ring.h).
 */
#ifndef CXL_CCM_KERNEL_LIB_H
#define CXL_CCM_KERNEL_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"
#include "../../tools/lib/cxlccm/cxlccm_ring.h"

struct ktenant {
	int fd;
	struct cxl_ccm_info info;
	struct cxl_ccm_configure cfg;
	struct cxlccm_ring ring;
	__u32 head;
};

/* Opens /dev/cxl_ccm0; 0, or 1 if the test must be skipped (why in @why). */
static inline int ktenant_open(struct ktenant *t, __u16 kernel, __u32 mode, const char **why)
{
	memset(t, 0, sizeof(*t));
	t->fd = open("/dev/cxl_ccm0", O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		*why = "/dev/cxl_ccm0 is missing";
		return errno == ENOENT ? 1 : -1;
	}
	if (ioctl(t->fd, CXL_CCM_IOC_INFO, &t->info))
		return -1;
	if (!(t->info.kernels & (1ULL << kernel))) {
		*why = "the device does not implement the kernel";
		return 1;
	}
	if (!(t->info.caps & (1ULL << mode))) {
		*why = "the device does not serve the mode";
		return 1;
	}
	return 0;
}

/* Configures @t (SF 256, 32-byte slots, small rings) and maps everything. */
static inline void ktenant_setup(struct __test_metadata *_metadata, struct ktenant *t,
				 __u32 mode, __u64 input_size)
{
	t->cfg.mode = mode;
	t->cfg.slot_size = 32;
	t->cfg.metadata_slots = 64;
	t->cfg.payload_slots = 128;
	t->cfg.streaming_factor = 256;
	t->cfg.index_base = 0xffffffe0;
	t->cfg.input_size = input_size;
	int ret;

	ASSERT_EQ(0, ioctl(t->fd, CXL_CCM_IOC_CONFIGURE, &t->cfg)) TH_LOG("%s", strerror(errno));
	ret = cxlccm_ring_map(&t->ring, t->fd, &t->cfg);
	ASSERT_EQ(0, ret) TH_LOG("mapping the rings: %s", strerror(-ret));
	t->head = t->cfg.index_base;
}

static inline int ktenant_launch(int fd, __u16 kernel, __u64 input_size, const void *args)
{
	struct cxl_ccm_launch l = {
		.kernel_id = kernel, .input_size = input_size, .arg_size = 32,
	};

	memcpy(l.args, args, 32);
	return ioctl(fd, CXL_CCM_IOC_LAUNCH, &l);
}

/*
 * Consumes records until a FINAL one: payloads go to @out (of @out_size
 * bytes; NULL to drop them) at their result_offset, @status gets the last
 * record's status. Returns the number of records, or -1 with a message.
 */
static inline int ktenant_collect(struct __test_metadata *_metadata, struct ktenant *t,
				  void *out, __u64 out_size, __u32 *status)
{
	int records = 0, final = 0;
	time_t start = time(NULL);

	while (!final) {
		__u32 tail = cxlccm_ring_md_tail(&t->ring);

		if (tail == t->head) {
			if (time(NULL) - start > 20) {
				TH_LOG("no record for 20 s");
				return -1;
			}
			usleep(50);
			continue;
		}
		for (; t->head != tail; t->head++) {
			struct cxl_ccm_metadata_record r;
			struct cxl_ccm_release_entry e;
			struct cxl_ccm_release rel = {
				.entries = (__u64)(unsigned long)&e, .count = 1,
				.flags = CXL_CCM_RELEASE_METADATA, .metadata_head = t->head + 1,
			};
			__u8 buf[512];

			if (!cxlccm_ring_record(&t->ring, t->head, &r) || r.length > sizeof(buf)) {
				TH_LOG("record %u: seq %u length %u", t->head, r.seq, r.length);
				return -1;
			}
			e = (struct cxl_ccm_release_entry){ r.payload_index, r.length };
			cxlccm_ring_copy(&t->ring, r.payload_index, r.length, buf);
			if (cxl_ccm_crc32c(buf, r.length) != r.checksum) {
				TH_LOG("record %u: checksum mismatch", t->head);
				return -1;
			}
			if (out && r.length) {
				if (r.result_offset + r.length > out_size) {
					TH_LOG("record %u: result beyond the output", t->head);
					return -1;
				}
				memcpy((__u8 *)out + r.result_offset, buf, r.length);
			}
			*status = r.status;
			final |= !!(r.flags & CXL_CCM_MD_FLAG_FINAL);
			records++;
			if (ioctl(t->fd, CXL_CCM_IOC_RELEASE, &rel)) {
				TH_LOG("RELEASE: %s", strerror(errno));
				return -1;
			}
		}
	}
	return records;
}

/*
 * The fixture of a workload-kernel test: one tenant in each mode (a variant
 * per mode) with an input buffer of @input_size bytes, skipped where the
 * device lacks the kernel or the mode.
 */
#define KTENANT_FIXTURE(name, kernel, input_size)					\
	FIXTURE(name) {									\
		struct ktenant t;							\
	};										\
	FIXTURE_VARIANT(name) {								\
		__u32 mode;								\
	};										\
	FIXTURE_VARIANT_ADD(name, axle) { .mode = CXL_CCM_MODE_AXLE };			\
	FIXTURE_VARIANT_ADD(name, rp) { .mode = CXL_CCM_MODE_RP };			\
	FIXTURE_VARIANT_ADD(name, bs) { .mode = CXL_CCM_MODE_BS };			\
	FIXTURE_VARIANT_ADD(name, axle_irq) { .mode = CXL_CCM_MODE_AXLE_IRQ };		\
	FIXTURE_SETUP(name)								\
	{										\
		const char *why = "";							\
		int r = ktenant_open(&self->t, kernel, variant->mode, &why);		\
											\
		if (r == 1)								\
			SKIP(return, "%s", why);					\
		ASSERT_EQ(0, r);							\
		ktenant_setup(_metadata, &self->t, variant->mode, input_size);		\
	}										\
	FIXTURE_TEARDOWN(name)								\
	{										\
		if (self->t.fd >= 0)							\
			close(self->t.fd);						\
	}

#endif /* CXL_CCM_KERNEL_LIB_H */
