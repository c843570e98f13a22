// SPDX-License-Identifier: GPL-2.0

#include <linux/sched/signal.h>

/* fatal_signal_pending() is a static inline. */
int rust_helper_fatal_signal_pending(struct task_struct *t)
{
	return fatal_signal_pending(t);
}
