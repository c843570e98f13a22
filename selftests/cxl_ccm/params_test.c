// SPDX-License-Identifier: GPL-2.0
/*
 * The software CCM device's latency model: every cost is a module parameter
 * of cxl_ccm_dev, visible in sysfs, with the defaults of the AXLE paper's
 * Table III (CXL.mem 70 ns, CXL.io 350 ns, DMA preparation 500 ns,
 * interrupt 50 us, remote polling interval 1 us).
 */
#include <stdio.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define PARAMS "/sys/module/cxl_ccm_dev/parameters/"

static long long param(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

FIXTURE(params) {};

FIXTURE_SETUP(params)
{
	if (access(PARAMS, F_OK))
		SKIP(return, "cxl_ccm_dev.ko is not loaded");
}

FIXTURE_TEARDOWN(params) {}

TEST_F(params, table_iii_defaults)
{
	EXPECT_EQ(70, param("cxl_mem_rtt_ns"));
	EXPECT_EQ(350, param("cxl_io_rtt_ns"));
	EXPECT_EQ(500, param("dma_prep_ns"));
	EXPECT_EQ(50000, param("irq_ns"));
	EXPECT_EQ(1000, param("remote_poll_interval_ns"));
	EXPECT_LE(0, param("dma_segment_ns"));
	EXPECT_LT(0, param("dma_ps_per_byte"));
}

TEST_F(params, window_is_visible)
{
	EXPECT_LT(0, param("mem_base"));
	EXPECT_LT(0, param("mem_window"));
	EXPECT_EQ(0, param("dev_mem_size") % (2 << 20));
}

TEST_HARNESS_MAIN
