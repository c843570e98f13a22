// SPDX-License-Identifier: GPL-2.0

#include <linux/srcu.h>

/* init_srcu_struct() is a macro (a lockdep class per call site) over a function. */
int rust_helper_init_srcu(struct srcu_struct *ssp)
{
	return init_srcu_struct(ssp);
}

int rust_helper_srcu_read_lock(struct srcu_struct *ssp)
{
	return srcu_read_lock(ssp);
}

void rust_helper_srcu_read_unlock(struct srcu_struct *ssp, int idx)
{
	srcu_read_unlock(ssp, idx);
}
