// SPDX-License-Identifier: GPL-2.0
/*
 * Acknowledged writes survive a power cut. Run twice, in two boots of the VM
 * on the same PMR backing file:
 *
 *   REFLUX_POWERCUT=write   writes a pattern (O_DIRECT and buffered +
 *                           fsync), then prints "##cxlstack acked" and
 *                           keeps writing unacknowledged data until the
 *                           host kills the VM (QEMU gets SIGKILL: no
 *                           shutdown, no unmount, no flush);
 *   REFLUX_POWERCUT=verify  after the reboot, reads every acknowledged
 *                           block back and compares.
 *
 * REFLUX_POWERCUT=fill writes the same pattern and exits: with verify, after
 * reloading the driver with another pipeline placement, it checks that a
 * stage placed on the host and the same stage on the device store data the
 * other reads back.
 *
 * Without REFLUX_POWERCUT the test skips: make check runs it through
 * tools/vm/check.sh's power-cut step.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV		"/dev/reflux0"
#define LBS		4096
#define DIRECT_BLOCKS	1024	/* 4 MiB at offset 0, O_DIRECT */
#define BUF_OFF		(8 << 20)
#define BUF_BYTES	(1 << 20)	/* 1 MiB at 8 MiB, buffered + fsync */
#define SEED		0x5eed2026c0ffeeULL

static void fill(uint8_t *buf, size_t len, uint64_t off)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = (off + i) * 0x9E3779B97F4A7C15ULL ^ SEED;

		memcpy(buf + i, &v, 8);
	}
}

static const char *mode(void)
{
	const char *m = getenv("REFLUX_POWERCUT");

	return m ? m : "";
}

TEST(powercut)
{
	uint8_t *buf, *want;
	int fd, fdb;
	size_t i;

	if (strcmp(mode(), "write") && strcmp(mode(), "fill") && strcmp(mode(), "verify"))
		SKIP(return, "REFLUX_POWERCUT is not write, fill or verify (run by check.sh)");
	ASSERT_EQ(0, posix_memalign((void **)&buf, LBS, BUF_BYTES));
	ASSERT_EQ(0, posix_memalign((void **)&want, LBS, BUF_BYTES));
	fd = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", DEV, strerror(errno));
	fdb = open(DEV, O_RDWR);
	ASSERT_LE(0, fdb);

	if (strcmp(mode(), "verify")) {
		for (i = 0; i < DIRECT_BLOCKS; i++) {
			fill(buf, LBS, i * LBS);
			ASSERT_EQ(LBS, pwrite(fd, buf, LBS, i * LBS));
		}
		fill(buf, BUF_BYTES, BUF_OFF);
		ASSERT_EQ(BUF_BYTES, pwrite(fdb, buf, BUF_BYTES, BUF_OFF));
		ASSERT_EQ(0, fsync(fdb));
		if (!strcmp(mode(), "fill")) {
			TH_LOG("pattern written");
			goto out;
		}
		/* Everything above is acknowledged: the host may cut the power now. */
		printf("##cxlstack acked\n");
		fflush(stdout);
		fsync(1);
		/* Unacknowledged traffic elsewhere until the power goes. */
		for (i = 0;; i++) {
			memset(buf, (int)i, LBS);
			pwrite(fd, buf, LBS, (16 << 20) + (i % 256) * LBS);
		}
	}

	for (i = 0; i < DIRECT_BLOCKS; i++) {
		ASSERT_EQ(LBS, pread(fd, buf, LBS, i * LBS));
		fill(want, LBS, i * LBS);
		ASSERT_EQ(0, memcmp(buf, want, LBS)) TH_LOG("O_DIRECT block %zu lost", i);
	}
	ASSERT_EQ(BUF_BYTES, pread(fd, buf, BUF_BYTES, BUF_OFF));
	fill(want, BUF_BYTES, BUF_OFF);
	ASSERT_EQ(0, memcmp(buf, want, BUF_BYTES)) TH_LOG("fsynced buffered data lost");
	TH_LOG("%d O_DIRECT blocks and %d fsynced bytes read back", DIRECT_BLOCKS, BUF_BYTES);
out:
	close(fd);
	close(fdb);
	free(buf);
	free(want);
}

TEST_HARNESS_MAIN
