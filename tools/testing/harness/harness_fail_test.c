// SPDX-License-Identifier: GPL-2.0
/*
 * A negative control for `make check-harness`: one passing and one failing
 * test. The harness must report the run as failed. Never run by `make check`.
 */
#include "kselftest_harness.h"

TEST(passes)
{
	EXPECT_EQ(1, 1);
}

TEST(fails_on_purpose)
{
	EXPECT_EQ(1, 2) TH_LOG("this failure is the point of the test");
}

TEST_HARNESS_MAIN
