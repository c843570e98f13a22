// SPDX-License-Identifier: GPL-2.0
/*
 * cxl_ccm tenant isolation: a tenant's input buffer is device memory, and a
 * tenant number (and so its partition) is handed out again once its holder is
 * gone. A new tenant must find its input buffer zeroed, whatever the previous
 * holder left there, and a process that kept a mapping of an input buffer
 * across an unbind must neither read nor write the partition afterwards: its
 * accesses get SIGBUS.
 *
 * Uses cxl_ccm.4, which no other selftest unbinds; skips if it is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

#include "kselftest_harness.h"

#define DRV "/sys/bus/platform/drivers/cxl_ccm/"
#define DEV "cxl_ccm.4"
#define NODE "/dev/cxl_ccm4"
#define INPUT_SIZE (256u << 10)
#define PATTERN_A 0xa5a5a5a5u
#define PATTERN_B 0x5b5b5b5bu

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

/* Opens the node and makes the file a tenant; returns the fd or -1. */
static int tenant_open(struct cxl_ccm_configure *cfg)
{
	int fd = open(NODE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = CXL_CCM_MODE_AXLE;
	cfg->metadata_slots = 64;
	cfg->payload_slots = 64;
	cfg->input_size = INPUT_SIZE;
	if (ioctl(fd, CXL_CCM_IOC_CONFIGURE, cfg)) {
		close(fd);
		return -1;
	}
	return fd;
}

static volatile uint32_t *map_input(int fd)
{
	void *p = mmap(NULL, INPUT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       CXL_CCM_MMAP_INPUT);

	return p == MAP_FAILED ? NULL : p;
}

static void fill(volatile uint32_t *in, uint32_t v)
{
	for (size_t i = 0; i < INPUT_SIZE / 4; i++)
		in[i] = v;
}

/* Words of the input buffer that are not `v`. */
static size_t count_not(volatile uint32_t *in, uint32_t v)
{
	size_t n = 0;

	for (size_t i = 0; i < INPUT_SIZE / 4; i++)
		n += in[i] != v;
	return n;
}

static sigjmp_buf fault_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(fault_jmp, 1);
}

/*
 * Touches every page of `in` (reading, or writing `v`); returns how many pages
 * faulted with SIGBUS.
 */
static size_t pages_faulting(volatile uint32_t *in, int write, uint32_t v)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	size_t page = sysconf(_SC_PAGESIZE) / 4;
	/* Kept in memory: they live across the siglongjmp. */
	volatile size_t faults = 0, i;
	volatile uint32_t sink;

	sigaction(SIGBUS, &sa, &old);
	for (i = 0; i < INPUT_SIZE / 4; i += page) {
		if (sigsetjmp(fault_jmp, 1)) {
			faults++;
			continue;
		}
		if (write)
			in[i] = v;
		else
			sink = in[i];
	}
	(void)sink;
	sigaction(SIGBUS, &old, NULL);
	return faults;
}

FIXTURE(isolation) {
	int fd;
};

FIXTURE_SETUP(isolation)
{
	self->fd = -1;
	if (access(NODE, F_OK) && errno == ENOENT)
		SKIP(return, NODE " is missing: load cxl_test, cxl_ccm_dev.ko and cxl_ccm.ko");
}

FIXTURE_TEARDOWN(isolation)
{
	if (self->fd >= 0)
		close(self->fd);
	/* Leave the device bound for the tests that follow, whatever happened. */
	if (access(DRV DEV, F_OK))
		write_str(DRV "bind", DEV);
}

/*
 * A tenant that unmapped and closed leaves its bytes in the partition; the
 * next tenant on the same partition must read zeros.
 */
TEST_F(isolation, new_tenant_input_is_zeroed)
{
	struct cxl_ccm_configure a, b;
	volatile uint32_t *in;
	int fd;

	fd = tenant_open(&a);
	ASSERT_LE(0, fd);
	in = map_input(fd);
	ASSERT_NE(NULL, in);
	fill(in, PATTERN_A);
	munmap((void *)in, INPUT_SIZE);
	close(fd);

	self->fd = tenant_open(&b);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(a.tenant, b.tenant) TH_LOG("the tenant number must be reused");
	in = map_input(self->fd);
	ASSERT_NE(NULL, in);
	EXPECT_EQ(0, count_not(in, 0)) TH_LOG("words of the previous tenant left");
	munmap((void *)in, INPUT_SIZE);
}

/*
 * Process A keeps its input mapping across the close of its file and an
 * unbind and bind of the device; process B becomes the tenant of the same
 * partition. A can neither read nor write through the old mapping (SIGBUS),
 * B sees none of A's bytes, and A's write attempts leave B's data intact.
 */
TEST_F(isolation, stale_mapping_after_unbind)
{
	int to_b[2], to_a[2], status;
	struct cxl_ccm_configure a;
	volatile uint32_t *old;
	char c = 0;
	pid_t pid;
	int fd;

	fd = tenant_open(&a);
	ASSERT_LE(0, fd);
	old = map_input(fd);
	ASSERT_NE(NULL, old);
	fill(old, PATTERN_A);
	/* The mapping keeps the file, and the tenant, until the unbind. */
	close(fd);
	ASSERT_EQ(0, write_str(DRV "unbind", DEV));
	ASSERT_EQ(0, write_str(DRV "bind", DEV));

	ASSERT_EQ(0, pipe(to_b));
	ASSERT_EQ(0, pipe(to_a));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Process B. Exit codes name the failed check. */
		struct cxl_ccm_configure b;
		volatile uint32_t *in;
		int bfd = tenant_open(&b);

		if (bfd < 0)
			_exit(10);
		if (b.tenant != a.tenant)
			_exit(11);
		in = map_input(bfd);
		if (!in)
			_exit(12);
		if (count_not(in, 0))
			_exit(13);	/* A's bytes, or anything not cleared */
		fill(in, PATTERN_B);
		if (write(to_a[1], &c, 1) != 1 || read(to_b[0], &c, 1) != 1)
			_exit(14);
		if (count_not(in, PATTERN_B))
			_exit(15);	/* A wrote into B's partition */
		_exit(0);
	}

	ASSERT_EQ(1, read(to_a[0], &c, 1)) TH_LOG("B did not get its tenant");
	EXPECT_EQ(INPUT_SIZE / sysconf(_SC_PAGESIZE), pages_faulting(old, 0, 0))
		TH_LOG("A's old mapping must not read B's partition");
	EXPECT_EQ(INPUT_SIZE / sysconf(_SC_PAGESIZE), pages_faulting(old, 1, PATTERN_A))
		TH_LOG("A's old mapping must not write B's partition");
	ASSERT_EQ(1, write(to_b[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("B: 10 configure, 11 other tenant, 12 mmap, 13 not zeroed, 15 overwritten");
	munmap((void *)old, INPUT_SIZE);
}

TEST_HARNESS_MAIN
