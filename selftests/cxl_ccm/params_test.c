// SPDX-License-Identifier: GPL-2.0
/*
 * The software CCM device's latency model: every cost is a module parameter
 * of cxl_ccm_dev, visible in sysfs, with the defaults of the AXLE paper's
 * Table III (CXL.mem 70 ns, CXL.io 350 ns, DMA preparation 500 ns,
 * interrupt 50 us, remote polling interval 1 us), and so is the CCM compute
 * model's.
 */
#include <stdio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "dev_params.h"

FIXTURE(params) {};

FIXTURE_SETUP(params)
{
	if (access(DEV_PARAMS, F_OK))
		SKIP(return, "cxl_ccm_dev.ko is not loaded");
}

FIXTURE_TEARDOWN(params) {}

TEST_F(params, table_iii_defaults)
{
	EXPECT_EQ(70, dev_param("cxl_mem_rtt_ns"));
	EXPECT_EQ(350, dev_param("cxl_io_rtt_ns"));
	EXPECT_EQ(500, dev_param("dma_prep_ns"));
	EXPECT_EQ(50000, dev_param("irq_ns"));
	EXPECT_EQ(1000, dev_param("remote_poll_interval_ns"));
	EXPECT_LE(0, dev_param("dma_segment_ns"));
	EXPECT_LT(0, dev_param("dma_ps_per_byte"));
}

/* The modelled CCM (Table III: 16 units of 16 µthreads at 2 GHz, DDR5-4800 x 16), undilated. */
TEST_F(params, ccm_compute_model_defaults)
{
	EXPECT_EQ(1, dev_param("compute_model"));
	EXPECT_EQ(16, dev_param("ccm_units"));
	EXPECT_EQ(16, dev_param("ccm_uthreads_per_unit"));
	EXPECT_EQ(2000, dev_param("ccm_clock_mhz"));
	EXPECT_EQ(614400, dev_param("ccm_mem_mb_per_s"));
	EXPECT_EQ(1000, dev_param("dilation_milli"));
}

TEST_F(params, window_is_visible)
{
	EXPECT_LT(0, dev_param("mem_base"));
	EXPECT_LT(0, dev_param("mem_window"));
	EXPECT_EQ(0, dev_param("dev_mem_size") % (2 << 20));
}

TEST_HARNESS_MAIN
