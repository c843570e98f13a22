// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm probe error paths: the driver's probe_fault parameter makes the
 * probe fail at each of its steps after the device was enabled (1: right
 * after, 2: once the device state exists, 3: after debugfs, 4: after the
 * interrupt, 5: once the binding and /dev/cxl_ccmN exist).
 * Whatever the step, the bind fails with the injected EIO, nothing of the
 * binding remains (device node, debugfs directory, driver link), and the
 * device is left disabled: the software device's register view
 * (/sys/kernel/debug/cxl_ccm_dev.N/regs) shows dev_ctrl, dev_status and every
 * tenant's enable bit clear. A file opened in the window between the node's
 * registration and the failure (the injected failure waits 100 ms) gets
 * ENODEV and does not keep the device running. kmemleak and the kernel-log
 * checks of `make check` watch every step.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define DRV "/sys/bus/platform/drivers/cxl_ccm/"
#define DEV "cxl_ccm.3"
#define NODE "/dev/cxl_ccm3"
#define DEBUGFS "/sys/kernel/debug/cxl_ccm3"
#define REGS "/sys/kernel/debug/cxl_ccm_dev.3/regs"
#define FAULT "/sys/module/cxl_ccm/parameters/probe_fault"

/* 0 or -errno of one write of s to path. */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : (err ? err : -EIO);
}

struct regs {
	unsigned long ctrl, status, tenants;
};

static int read_regs(struct regs *r)
{
	FILE *f = fopen(REGS, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "dev_ctrl %lx dev_status %lx tenants_enabled %lx",
		   &r->ctrl, &r->status, &r->tenants);
	fclose(f);
	return n == 3 ? 0 : -1;
}

static int info(int fd)
{
	struct cxl_ccm_info i;

	memset(&i, 0, sizeof(i));
	return ioctl(fd, CXL_CCM_IOC_INFO, &i);
}

/* Opens NODE in a loop until it succeeds or `stop` is set. */
struct opener {
	volatile int stop;
	int fd;
};

static void *open_loop(void *arg)
{
	struct opener *o = arg;

	while (!o->stop && o->fd < 0) {
		o->fd = open(NODE, O_RDWR | O_CLOEXEC);
		if (o->fd < 0)
			usleep(1000);
	}
	return NULL;
}

FIXTURE(probe) {
	int unused;
};

FIXTURE_SETUP(probe)
{
	struct regs r;

	if (access(NODE, F_OK) && errno == ENOENT)
		SKIP(return, NODE " is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
	if (access(FAULT, W_OK))
		SKIP(return, FAULT " is missing: a driver without the probe_fault hook");
	ASSERT_EQ(0, read_regs(&r)) TH_LOG("cannot read " REGS);
	ASSERT_EQ(1, r.ctrl & 1) TH_LOG("a bound device must be enabled: dev_ctrl %#lx", r.ctrl);
}

FIXTURE_TEARDOWN(probe)
{
	/* Leave the device bound for the tests that follow, whatever happened. */
	write_str(FAULT, "0");
	if (access(DRV DEV, F_OK))
		write_str(DRV "bind", DEV);
}

/* Unbinds, binds with probe_fault=step and checks what is left; rebinds. */
static void fail_at(struct __test_metadata *_metadata, int step, int race)
{
	struct opener o = { .stop = 0, .fd = -1 };
	pthread_t th;
	struct regs r;
	char v[16];
	int rc;

	ASSERT_EQ(0, write_str(DRV "unbind", DEV));
	ASSERT_EQ(0, read_regs(&r));
	EXPECT_EQ(0, r.ctrl) TH_LOG("unbind left dev_ctrl %#lx", r.ctrl);
	snprintf(v, sizeof(v), "%d", step);
	ASSERT_EQ(0, write_str(FAULT, v));
	if (race)
		ASSERT_EQ(0, pthread_create(&th, NULL, open_loop, &o));
	rc = write_str(DRV "bind", DEV);
	if (race) {
		o.stop = 1;
		pthread_join(th, NULL);
	}
	ASSERT_EQ(0, write_str(FAULT, "0"));
	EXPECT_EQ(-EIO, rc) TH_LOG("step %d: bind gave %s", step, strerror(-rc));
	EXPECT_NE(0, access(DRV DEV, F_OK)) TH_LOG("step %d: still bound", step);
	EXPECT_NE(0, access(NODE, F_OK)) TH_LOG("step %d: " NODE " survived", step);
	EXPECT_NE(0, access(DEBUGFS, F_OK)) TH_LOG("step %d: " DEBUGFS " survived", step);
	ASSERT_EQ(0, read_regs(&r));
	EXPECT_EQ(0, r.ctrl) TH_LOG("step %d: dev_ctrl %#lx after the failed probe", step, r.ctrl);
	EXPECT_EQ(0, r.status & 1)
		TH_LOG("step %d: dev_status %#lx: the device still serves", step, r.status);
	EXPECT_EQ(0, r.tenants) TH_LOG("step %d: tenants %#lx enabled", step, r.tenants);
	if (race) {
		/* The node exists at step 5: the opener must have won then. */
		if (step == 5)
			EXPECT_LE(0, o.fd) TH_LOG("step %d: never opened " NODE, step);
		if (o.fd >= 0) {
			errno = 0;
			EXPECT_EQ(-1, info(o.fd));
			EXPECT_EQ(ENODEV, errno) TH_LOG("step %d: INFO on a file of the failed probe",
							step);
			ASSERT_EQ(0, read_regs(&r));
			EXPECT_EQ(0, r.ctrl) TH_LOG("step %d: an open file kept dev_ctrl %#lx", step,
						    r.ctrl);
			EXPECT_EQ(0, close(o.fd));
		}
		TH_LOG("step %d: opener %s", step, o.fd >= 0 ? "got a file" : "got none");
	}
	ASSERT_EQ(0, write_str(DRV "bind", DEV)) TH_LOG("step %d: bind without the fault", step);
	ASSERT_EQ(0, read_regs(&r));
	EXPECT_EQ(1, r.ctrl & 1);
	o.fd = open(NODE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, o.fd);
	EXPECT_EQ(0, info(o.fd));
	close(o.fd);
}

TEST_F_TIMEOUT(probe, every_step_disables, 120)
{
	for (int step = 1; step <= 5; step++)
		fail_at(_metadata, step, 0);
}

TEST_F_TIMEOUT(probe, file_opened_before_failure, 120)
{
	for (int step = 3; step <= 5; step++)
		fail_at(_metadata, step, 1);
}

TEST_HARNESS_MAIN
