// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm teardown with files open: a file keeps working state of its own,
 * so unbinding the device under it turns its calls into ENODEV instead of a
 * use-after-free, closing it afterwards is clean, and binding again brings the
 * device node back. The module cannot be removed while a file is open.
 * kmemleak and the kernel-log checks of `make check` watch every step.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

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

TEST_HARNESS_MAIN
