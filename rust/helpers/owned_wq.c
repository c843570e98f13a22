// SPDX-License-Identifier: GPL-2.0

#include <linux/workqueue.h>

/* alloc_workqueue() is a macro over a variadic function. */
struct workqueue_struct *rust_helper_alloc_workqueue_str(const char *name, unsigned int flags,
							 int max_active)
{
	return alloc_workqueue("%s", flags, max_active, name);
}
