// SPDX-License-Identifier: GPL-2.0

#include <asm/barrier.h>

/* rmb() and wmb() are macros. */
void rust_helper_rmb(void)
{
	rmb();
}

void rust_helper_wmb(void)
{
	wmb();
}
