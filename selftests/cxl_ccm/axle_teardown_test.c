// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm AXLE tenants torn down at the worst moments, each time followed by
 * proof that the device recovered:
 *
 * - closing the file (with or without its mappings) while the device streams
 *   into unconsumed rings, more times than there are tenants: a leaked tenant
 *   would make a later CONFIGURE fail with EBUSY;
 * - a process that exits, or is killed, mid-stream with its maps mapped;
 * - unbinding the device under a streaming tenant and a blocked WAIT: the
 *   waiter wakes, the file's calls get ENODEV, the maps stay readable with
 *   the records they held, closing is clean; binding again gives a device
 *   whose new tenant works;
 * - all tenants of a device taken: one more CONFIGURE is EBUSY until one
 *   file is closed, and the tenant that takes its place starts clean;
 * - the device itself removed (cxl_ccm_dev unloaded) under a streaming
 *   tenant: the file's calls get ENODEV, closing is clean, and loading the
 *   device module again gives devices whose new tenants work.
 *
 * "Works" means a STREAM_XFORM whose every record is checked (axle_lib.h).
 * kmemleak and the kernel-log checks of `make check` watch every step.
 */
#include <signal.h>
#include <sys/wait.h>

#include "axle_lib.h"
#include "dev_params.h"

#define DRV	"/sys/bus/platform/drivers/cxl_ccm/"
#define MS	1000000ULL

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

/* A fresh tenant on @node runs a small job with every record checked. */
static void fresh_tenant_works(struct __test_metadata *_metadata, const char *node,
			       __u32 base)
{
	struct cxl_ccm_configure cfg = axle_config(32, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER,
						   base, 65536);
	struct axle_tenant t;
	struct axle_run r;
	unsigned int i;

	ASSERT_EQ(0, axle_open(&t, node)) TH_LOG("%s: %s", node, strerror(errno));
	axle_tenant_setup(_metadata, &t, &cfg);
	axle_run_init(_metadata, &r, &t, 4096, base ^ 0x5eed);
	for (i = 0; i < 8; i++)
		axle_launch(_metadata, &r, CXL_CCM_XFORM_OP_XOR, 0xc0ffee00 + i, 4096, 64);
	axle_drain(_metadata, &r);
	axle_check_stats(_metadata, &r);
	axle_run_free(&r);
	axle_close(&t);
}

/*
 * Configure @t on its open file with rings far smaller than the work, and
 * launch @n jobs of @bytes each (32-byte chunks) that nobody consumes yet.
 */
static void start_stream(struct __test_metadata *_metadata, struct axle_tenant *t,
			 struct axle_run *r, __u32 base, unsigned int n, __u32 bytes)
{
	struct cxl_ccm_configure cfg = axle_config(64, 128, 32, 256, CXL_CCM_ORDER_OUT_OF_ORDER,
						   base, (__u64)n * bytes);
	unsigned int i;

	axle_tenant_setup(_metadata, t, &cfg);
	axle_run_init(_metadata, r, t, bytes, base);
	for (i = 0; i < n; i++)
		axle_launch(_metadata, r, CXL_CCM_XFORM_OP_ADD, i, bytes, 32);
}

/* Wait up to 5 s for the device to stream at least @n records. */
static void wait_records(struct __test_metadata *_metadata, const struct axle_tenant *t,
			 __u32 n)
{
	__u64 t0 = axle_now_ns();

	while (cxlccm_ring_md_tail(&t->ring) - t->cfg.index_base < n &&
	       axle_now_ns() - t0 < 5000 * MS)
		axle_sleep_ns(MS);
	ASSERT_LE(n, cxlccm_ring_md_tail(&t->ring) - t->cfg.index_base)
		TH_LOG("the device did not stream");
}

/* Touch every byte of a read-only mapping. */
static __u8 read_all(const __u8 *p, __u64 len)
{
	__u8 x = 0;
	__u64 i;

	for (i = 0; i < len; i++)
		x ^= ((const volatile __u8 *)p)[i];
	return x;
}

FIXTURE(teardown) {
	struct axle_tenant t;
	bool unbound;
};

FIXTURE_SETUP(teardown)
{
	self->t.fd = -1;
	axle_open_or_skip(_metadata, &self->t, AXLE_NODE0);
}

FIXTURE_TEARDOWN(teardown)
{
	axle_close(&self->t);
	/* Leave cxl_ccm.1 bound for the tests that follow, whatever happened. */
	if (self->unbound && access(DRV "cxl_ccm.1", F_OK))
		write_str(DRV "bind", "cxl_ccm.1");
}

/*
 * Close a streaming tenant, more times than the device has tenants: with
 * its maps unmapped first, with the maps still mapped (the release then
 * comes at munmap; the maps read fine until then), and after consuming a
 * little. Each time the device is busy back-streaming into full rings.
 */
TEST_F_TIMEOUT(teardown, close_while_streaming, 120)
{
	unsigned int cycle, cycles = self->t.info.max_tenants + 4;
	struct axle_tenant t;
	struct axle_run r;

	for (cycle = 0; cycle < cycles; cycle++) {
		ASSERT_EQ(0, axle_open(&t, AXLE_NODE0));
		start_stream(_metadata, &t, &r, 0xfffffff0 + cycle, 4, 65536);
		wait_records(_metadata, &t, 1);
		switch (cycle % 3) {
		case 0:		/* unmap, then close */
			axle_close(&t);
			break;
		case 1:		/* close with the maps mapped, read them, unmap */
			close(t.fd);
			t.fd = -1;
			read_all((const __u8 *)t.ring.hdr, t.cfg.headers_size);
			read_all((const __u8 *)t.ring.md, t.cfg.metadata_ring_size);
			read_all(t.ring.pl, t.cfg.payload_ring_size);
			axle_sleep_ns(10 * MS);
			axle_close(&t);
			break;
		default:	/* consume (and check) a few rounds, then close */
			axle_step(_metadata, &r);
			axle_step(_metadata, &r);
			axle_step(_metadata, &r);
			ASSERT_LT(0U, r.records);
			axle_close(&t);
			break;
		}
		axle_run_free(&r);
	}
	fresh_tenant_works(_metadata, AXLE_NODE0, 0xffffff00);
}

/*
 * A process exits mid-stream without unmapping or closing anything, and
 * another is killed by SIGKILL while it consumes; the device then serves a
 * new tenant.
 */
TEST_F_TIMEOUT(teardown, process_exit_mid_stream, 60)
{
	int sync[2], status, k;
	pid_t pid;
	char b;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, pipe(sync));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			struct axle_tenant t;
			struct axle_run r;

			close(sync[0]);
			ASSERT_EQ(0, axle_open(&t, AXLE_NODE0));
			start_stream(_metadata, &t, &r, 0x80000000, 8, 16384);
			wait_records(_metadata, &t, 8);
			ASSERT_EQ(1, write(sync[1], "x", 1));
			if (!k)
				_exit(0);
			alarm(30);	/* never outlive the test */
			for (;;)	/* consume until killed */
				axle_step(_metadata, &r);
		}
		close(sync[1]);
		ASSERT_EQ(1, read(sync[0], &b, 1)) TH_LOG("child %d failed to stream", k);
		close(sync[0]);
		if (k) {
			axle_sleep_ns(20 * MS);
			kill(pid, SIGKILL);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (k) {
			EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		} else {
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		}
	}
	fresh_tenant_works(_metadata, AXLE_NODE0, 0x7fffff00);
}

/*
 * Unbind cxl_ccm.1 under a streaming tenant whose rings are full and under a
 * WAIT that could never be satisfied: the waiter returns ENODEV, the file's
 * ioctls get ENODEV, the three ring maps stay readable and every record
 * below the tail is still intact (checked like any record), and munmap and
 * close are clean. Bound again, the device serves a new tenant.
 */
TEST_F_TIMEOUT(teardown, unbind_while_streaming, 60)
{
	const char *node = "/dev/cxl_ccm1";
	__u32 base = 0xffffffe0, tail;
	struct cxl_ccm_launch l;
	struct cxl_ccm_stats s;
	struct cxl_ccm_wait w;
	struct axle_tenant t;
	struct axle_run r;
	int status, fd;
	__u64 t0;
	pid_t pid;

	if (!axle_open_or_skip(_metadata, &t, node))
		return;
	start_stream(_metadata, &t, &r, base, 8, 16384);
	wait_records(_metadata, &t, 8);
	fd = t.fd;

	/* Nothing is released, so md_slots more records can never come. */
	tail = cxlccm_ring_md_tail(&t.ring);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret;

		alarm(30);	/* never outlive the test */
		ret = axle_ioc_wait(fd, &w, t.ring.md_slots, tail, CXL_CCM_WAIT_FOREVER);
		_exit(ret ? (errno == ENODEV ? 0 : 2) : 1);
	}
	axle_sleep_ns(100 * MS);

	self->unbound = true;
	if (write_str(DRV "unbind", "cxl_ccm.1")) {
		int err = errno;

		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ASSERT_TRUE(0) TH_LOG("unbind cxl_ccm.1: %s", strerror(err));
	}
	EXPECT_NE(0, access(node, F_OK));

	t0 = axle_now_ns();
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (axle_now_ns() - t0 > 5000 * MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ASSERT_TRUE(0) TH_LOG("a WAIT survived the unbind for 5 s");
		}
		axle_sleep_ns(MS);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("WAIT across unbind: status %#x (exit 1: returned 0, 2: not ENODEV)",
		       status);

	l = axle_xform_launch(0, 64, CXL_CCM_XFORM_OP_XOR, 32, 1);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, CXL_CCM_IOC_LAUNCH, &l));
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_release(fd, NULL, 0, CXL_CCM_RELEASE_METADATA, base, NULL));
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_wait(fd, &w, 1, base, 0));
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(-1, axle_ioc_stats(fd, &s, 0));
	EXPECT_EQ(ENODEV, errno);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, CXL_CCM_IOC_INFO, &t.info));
	EXPECT_EQ(ENODEV, errno);

	/*
	 * The rings stay mapped with what the device wrote: every record below
	 * the tail passes the full check. (The input buffer is device memory:
	 * it is not touched after unbind.)
	 */
	read_all((const __u8 *)t.ring.hdr, t.cfg.headers_size);
	read_all((const __u8 *)t.ring.md, t.cfg.metadata_ring_size);
	read_all(t.ring.pl, t.cfg.payload_ring_size);
	axle_poll(_metadata, &r);
	ASSERT_LE(8U, r.records);
	axle_run_free(&r);
	cxlccm_ring_unmap(&t.ring);
	EXPECT_EQ(0, close(t.fd));
	t.fd = -1;

	ASSERT_EQ(0, write_str(DRV "bind", "cxl_ccm.1"));
	self->unbound = false;
	fresh_tenant_works(_metadata, node, base);
}

/*
 * Every tenant of cxl_ccm2 taken: the next CONFIGURE is EBUSY. Closing one
 * file, whose tenant had filled its rings without consuming, frees its
 * tenant: the waiting file's CONFIGURE then succeeds, and its tenant starts
 * clean (a record or payload of the previous owner would fail the checks).
 */
TEST_F_TIMEOUT(teardown, tenant_limit, 60)
{
	const char *node = "/dev/cxl_ccm2";
	struct cxl_ccm_configure cfg, busy;
	struct axle_tenant *t, extra;
	struct axle_run r, vr;
	unsigned int n, i, j, victim;

	if (!axle_open_or_skip(_metadata, &extra, node))
		return;
	n = extra.info.max_tenants;
	victim = n / 2;
	t = calloc(n, sizeof(*t));
	ASSERT_NE(NULL, t);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, axle_open(&t[i], node));
		if (i == victim) {
			start_stream(_metadata, &t[i], &vr, 0xfffffff8, 2, 4096);
			axle_run_free(&vr);
		} else {
			cfg = axle_config(4, 4, 32, 32, CXL_CCM_ORDER_OUT_OF_ORDER, 1000 * i, 4096);
			axle_tenant_setup(_metadata, &t[i], &cfg);
		}
		for (j = 0; j < i; j++)
			ASSERT_NE(t[j].cfg.tenant, t[i].cfg.tenant);
	}
	wait_records(_metadata, &t[victim], 1);

	cfg = axle_config(32, 64, 32, 128, CXL_CCM_ORDER_OUT_OF_ORDER, 0xfffffff8, 65536);
	busy = cfg;
	errno = 0;
	EXPECT_EQ(-1, ioctl(extra.fd, CXL_CCM_IOC_CONFIGURE, &busy));
	EXPECT_EQ(EBUSY, errno);

	axle_close(&t[victim]);
	axle_tenant_setup(_metadata, &extra, &cfg);
	for (i = 0; i < n; i++)
		if (i != victim)
			EXPECT_NE(t[i].cfg.tenant, extra.cfg.tenant);
	axle_run_init(_metadata, &r, &extra, 4096, 0x17);
	for (i = 0; i < 8; i++)
		axle_launch(_metadata, &r, CXL_CCM_XFORM_OP_XOR, i, 4096, 32);
	axle_drain(_metadata, &r);
	axle_check_stats(_metadata, &r);
	axle_run_free(&r);

	axle_close(&extra);
	for (i = 0; i < n; i++)
		axle_close(&t[i]);
	free(t);
}

/*
 * Unload the device module under a streaming tenant: the devices go, the
 * driver unbinds them (stopping every tenant first), the tenant's calls get
 * ENODEV and closing it is clean. Loading the module again with the same
 * parameters brings the devices back, and a new tenant works.
 */
TEST_F_TIMEOUT(teardown, device_removed_while_streaming, 60)
{
	const char *node = "/dev/cxl_ccm3";
	struct cxl_ccm_launch l;
	struct axle_tenant t;
	struct axle_run r;
	char cmd[1024];

	if (!axle_open_or_skip(_metadata, &t, node))
		return;
	ASSERT_EQ(0, dev_params_command(cmd, sizeof(cmd)));
	start_stream(_metadata, &t, &r, 0xfffffffa, 8, 16384);
	wait_records(_metadata, &t, 8);

	ASSERT_EQ(0, system("modprobe -r cxl_ccm_dev")) TH_LOG("unloading the device module");
	EXPECT_NE(0, access(node, F_OK));
	l = axle_xform_launch(0, 64, CXL_CCM_XFORM_OP_XOR, 32, 1);
	errno = 0;
	EXPECT_EQ(-1, ioctl(t.fd, CXL_CCM_IOC_LAUNCH, &l));
	EXPECT_EQ(ENODEV, errno);
	/* What was streamed before the removal is still intact. */
	axle_poll(_metadata, &r);
	axle_run_free(&r);
	axle_close(&t);

	ASSERT_EQ(0, dev_load(cmd, node)) TH_LOG("%s: %s did not come back", cmd, node);
	fresh_tenant_works(_metadata, node, 0x7fffffff);
}

TEST_HARNESS_MAIN
