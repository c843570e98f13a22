// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm teardown with files open: a file keeps working state of its own,
 * so unbinding the device under it turns its calls into ENODEV instead of a
 * use-after-free, closing it afterwards is clean, and binding again brings the
 * device node back. The module cannot be removed while a file is open.
 * Files closed while an unbind is under way leave their DMA regions to the
 * unbind, which frees them only once the device has stopped.
 * kmemleak and the kernel-log checks of `make check` watch every step.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "axle_lib.h"

#define DRV "/sys/bus/platform/drivers/cxl_ccm/"
#define DEV "cxl_ccm.0"
#define NODE "/dev/cxl_ccm0"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int info(int fd)
{
	struct cxl_ccm_info i;

	memset(&i, 0, sizeof(i));
	return ioctl(fd, CXL_CCM_IOC_INFO, &i);
}

FIXTURE(teardown) {
	int fd;
};

FIXTURE_SETUP(teardown)
{
	self->fd = open(NODE, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, NODE " is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(teardown)
{
	if (self->fd >= 0)
		close(self->fd);
	/* Leave the device bound for the tests that follow, whatever happened. */
	if (access(DRV DEV, F_OK))
		write_str(DRV "bind", DEV);
}

TEST_F(teardown, unbind_with_file_open)
{
	ASSERT_EQ(0, info(self->fd));
	ASSERT_EQ(0, write_str(DRV "unbind", DEV));
	EXPECT_NE(0, access(DRV DEV, F_OK));
	EXPECT_NE(0, access(NODE, F_OK)) TH_LOG(NODE " must go with the binding");

	errno = 0;
	EXPECT_EQ(-1, info(self->fd));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;

	ASSERT_EQ(0, write_str(DRV "bind", DEV));
	self->fd = open(NODE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG(NODE " must come back with the binding");
	EXPECT_EQ(0, info(self->fd));
}

TEST_F(teardown, module_pinned_while_open)
{
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cxl_ccm", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, info(self->fd));
}

/*
 * One short life of a tenant, as fast as it goes: open, CONFIGURE, one
 * LAUNCH, close. Whatever an unbind makes of it (ENODEV, ENOENT) is fine.
 */
static void churn(const volatile int *stop)
{
	struct cxl_ccm_configure cfg = axle_config(16, 16, 32, 32, CXL_CCM_ORDER_OUT_OF_ORDER,
						   0, 4096);
	int fd;

	while (!*stop) {
		fd = open(NODE, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			usleep(1000);
			continue;
		}
		if (!ioctl(fd, CXL_CCM_IOC_CONFIGURE, &cfg))
			axle_ioc_launch(fd, 0, 64, CXL_CCM_XFORM_OP_XOR, 0, 0x3c3c3c3c, NULL);
		close(fd);
	}
}

/* A fresh tenant computes one XOR launch right: the device survived. */
static void check_device_works(struct __test_metadata *_metadata)
{
	struct cxl_ccm_configure cfg = axle_config(16, 16, 32, 64, CXL_CCM_ORDER_IN_ORDER,
						   0, 4096);
	struct cxl_ccm_metadata_record rec;
	struct axle_tenant t;
	struct cxl_ccm_wait w;
	__u32 in[16], out[16], i;

	ASSERT_EQ(0, axle_open(&t, NODE));
	axle_tenant_setup(_metadata, &t, &cfg);
	axle_fill(&t, 0, sizeof(in), 7);
	memcpy(in, t.ring.in, sizeof(in));
	ASSERT_EQ(0, axle_ioc_launch(t.fd, 0, sizeof(in), CXL_CCM_XFORM_OP_XOR, 0, 0x5a5a5a5a,
				     NULL));
	ASSERT_EQ(0, axle_ioc_wait(t.fd, &w, 1, 0, AXLE_STALL_NS)) TH_LOG("WAIT: %s",
									  strerror(errno));
	ASSERT_TRUE(cxlccm_ring_record(&t.ring, 0, &rec));
	ASSERT_EQ(0, rec.flags & CXL_CCM_MD_FLAG_ERROR) TH_LOG("status %u", rec.status);
	ASSERT_EQ(sizeof(out), rec.length);
	ASSERT_EQ(sizeof(out), cxlccm_ring_copy(&t.ring, rec.payload_index, rec.length, out));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(in[i] ^ 0x5a5a5a5a, out[i]) TH_LOG("word %u", i);
	axle_close(&t);
}

/*
 * Unbind and bind while four processes open, configure, launch and close
 * tenants in a loop. The unbind revokes the hardware, waits for the users
 * inside (a CONFIGURE waiting for its enable), and only then disables the
 * device: a file closed in between must not free a region the device still
 * serves (its launch was just taken, its launch head is about to be stored).
 * That write to freed memory is what KASAN, or the corrupted slab it leaves
 * behind, would report; then a fresh tenant must still compute right.
 */
TEST_F_TIMEOUT(teardown, unbind_while_files_close, 300)
{
	volatile int *stop = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t kids[4];
	int k, c, status;

	ASSERT_NE(MAP_FAILED, stop);
	close(self->fd);
	self->fd = -1;
	*stop = 0;
	for (k = 0; k < 4; k++) {
		kids[k] = fork();
		ASSERT_LE(0, kids[k]);
		if (!kids[k]) {
			churn(stop);
			_exit(0);
		}
	}
	for (c = 0; c < 12; c++) {
		usleep(100000 + (c % 4) * 50000);
		ASSERT_EQ(0, write_str(DRV "unbind", DEV)) TH_LOG("unbind, cycle %d", c);
		usleep(50000 + (c % 3) * 50000);
		ASSERT_EQ(0, write_str(DRV "bind", DEV)) TH_LOG("bind, cycle %d", c);
	}
	*stop = 1;
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(kids[k], waitpid(kids[k], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	check_device_works(_metadata);
}

TEST_HARNESS_MAIN
