// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm binding and identification: every software CCM device
 * (cxl_ccm_dev.ko on cxl_test) is bound by cxl_ccm.ko, has a /dev/cxl_ccmN,
 * and CXL_CCM_IOC_INFO reports what the device's registers and the device
 * module's parameters say; malformed calls get the right errno. The device
 * serves every mode (AXLE out of order and in order, RP, BS, AXLE_IRQ) with
 * the STREAM_XFORM kernel.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define PARAMS "/sys/module/cxl_ccm_dev/parameters/"

static int read_u64(const char *path, unsigned long long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* The number of entries in DIR whose name starts with PREFIX. */
static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

FIXTURE(ccm) {
	int fd;
};

FIXTURE_SETUP(ccm)
{
	self->fd = open("/dev/cxl_ccm0", O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "/dev/cxl_ccm0 is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(ccm)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* One bound device and one device node per software device. */
TEST_F(ccm, every_device_is_bound)
{
	int devices = count_prefixed("/sys/bus/platform/devices", "cxl_ccm.");
	int nodes = count_prefixed("/dev", "cxl_ccm");
	int bound = count_prefixed("/sys/bus/platform/drivers/cxl_ccm", "cxl_ccm.");

	ASSERT_LT(0, devices);
	EXPECT_EQ(devices, nodes);
	EXPECT_EQ(devices, bound);
}

TEST_F(ccm, info_matches_device)
{
	struct cxl_ccm_info info;
	unsigned long long mem_size;

	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_INFO, &info));
	EXPECT_EQ(CXL_CCM_ABI_VERSION, info.abi_version);
	EXPECT_EQ(1, info.device_version >> 16);
	EXPECT_LE(1, info.max_tenants);
	EXPECT_GE(16, info.max_tenants);
	EXPECT_EQ(CXL_CCM_LAUNCH_SLOTS, info.launch_slots);
	EXPECT_EQ(CXL_CCM_MIN_SLOT_SIZE, info.min_slot_size);
	EXPECT_EQ(CXL_CCM_MAX_SLOT_SIZE, info.max_slot_size);
	EXPECT_EQ(CXL_CCM_RELEASE_MAX, info.max_release);
	EXPECT_EQ(0, info.reserved0);
	ASSERT_EQ(0, read_u64(PARAMS "dev_mem_size", &mem_size));
	EXPECT_EQ(mem_size, info.mem_size);
	/* Every mode (AXLE in both streaming orders); every kernel but NOP. */
	EXPECT_EQ(CXL_CCM_CAP_MODE_AXLE | CXL_CCM_CAP_MODE_RP | CXL_CCM_CAP_MODE_BS |
		  CXL_CCM_CAP_MODE_AXLE_IRQ | CXL_CCM_CAP_IN_ORDER, info.caps);
	EXPECT_EQ(1ULL << CXL_CCM_KERNEL_STREAM_XFORM | 1ULL << CXL_CCM_KERNEL_KNN |
		  1ULL << CXL_CCM_KERNEL_SSB_Q1_1 | 1ULL << CXL_CCM_KERNEL_SSB_Q1_2 |
		  1ULL << CXL_CCM_KERNEL_DLRM_SLS | 1ULL << CXL_CCM_KERNEL_PAGERANK |
		  1ULL << CXL_CCM_KERNEL_SSSP | 1ULL << CXL_CCM_KERNEL_LLM_ATTENTION, info.kernels);
}

TEST_F(ccm, bad_info)
{
	struct cxl_ccm_info info;

	memset(&info, 0, sizeof(info));
	info.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, CXL_CCM_IOC_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, CXL_CCM_IOC_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(CXL_CCM_IOC_MAGIC, 0x80, __u64), &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO(CXL_CCM_IOC_MAGIC, 0x9f)));
	EXPECT_EQ(ENOTTY, errno);
}

static struct cxl_ccm_configure good_config(void)
{
	struct cxl_ccm_configure c;

	memset(&c, 0, sizeof(c));
	c.mode = CXL_CCM_MODE_AXLE;
	c.metadata_slots = 64;
	c.payload_slots = 256;
	c.poll_interval_ns = 500;
	return c;
}

static int configure(int fd, struct cxl_ccm_configure c)
{
	return ioctl(fd, CXL_CCM_IOC_CONFIGURE, &c);
}

/*
 * Malformed CONFIGURE requests are EINVAL whatever the device supports; a
 * well-formed one succeeds once, then the file is a tenant (EBUSY).
 */
TEST_F(ccm, configure_validation)
{
	struct cxl_ccm_configure c;
	struct cxl_ccm_info info;

	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_INFO, &info));

#define EXPECT_EINVAL(field, value) do {				\
		c = good_config();					\
		c.field = (value);					\
		errno = 0;						\
		EXPECT_EQ(-1, configure(self->fd, c)) TH_LOG(#field " = " #value); \
		EXPECT_EQ(EINVAL, errno) TH_LOG(#field " = " #value);	\
	} while (0)

	EXPECT_EINVAL(flags, CXL_CCM_CONFIGURE_FIFO << 1);
	EXPECT_EINVAL(reserved0, 1);
	EXPECT_EINVAL(reserved[3], 1);
	EXPECT_EINVAL(mode, 4);
	EXPECT_EINVAL(mode, 0xffffffff);
	EXPECT_EINVAL(streaming_order, 2);
	EXPECT_EINVAL(metadata_slots, 0);
	EXPECT_EINVAL(metadata_slots, 3);
	EXPECT_EINVAL(metadata_slots, info.max_ring_slots * 2);
	EXPECT_EINVAL(payload_slots, 0);
	EXPECT_EINVAL(payload_slots, 100);
	EXPECT_EINVAL(slot_size, 12);
	EXPECT_EINVAL(slot_size, info.max_slot_size * 2);
	EXPECT_EINVAL(slot_size, info.min_slot_size / 2);
	EXPECT_EINVAL(streaming_factor, 48);
	EXPECT_EINVAL(streaming_factor, 257 * 32);
	EXPECT_EINVAL(poll_interval_ns, 2000000000ULL);
	EXPECT_EINVAL(input_size, 1);
	EXPECT_EINVAL(input_size, info.mem_size);
#undef EXPECT_EINVAL

	EXPECT_EQ(-1, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, NULL));
	EXPECT_EQ(EFAULT, errno);

	c = good_config();
	ASSERT_EQ(0, configure(self->fd, c));
	c = good_config();
	EXPECT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_CONFIGURE, &c) == 0);
	EXPECT_EQ(EBUSY, errno);
}

/*
 * Every mode the device advertises can be configured (each on a fresh file);
 * a file that failed to configure is still no tenant.
 */
TEST_F(ccm, advertised_modes_configure)
{
	struct cxl_ccm_launch launch;
	struct cxl_ccm_configure c;
	struct cxl_ccm_info info;
	__u32 mode;
	int fd;

	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ioctl(self->fd, CXL_CCM_IOC_INFO, &info));
	for (mode = 0; mode < 4; mode++) {
		if (!(info.caps & (1ULL << mode)))
			continue;
		fd = open("/dev/cxl_ccm0", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		c = good_config();
		c.mode = mode;
		EXPECT_EQ(0, configure(fd, c)) TH_LOG("mode %u: %s", mode, strerror(errno));
		close(fd);
	}
	c = good_config();
	c.metadata_slots = 3;
	EXPECT_EQ(-1, configure(self->fd, c));
	memset(&launch, 0, sizeof(launch));
	EXPECT_EQ(-1, ioctl(self->fd, CXL_CCM_IOC_LAUNCH, &launch));
	EXPECT_EQ(EBADFD, errno);
}

TEST_HARNESS_MAIN
