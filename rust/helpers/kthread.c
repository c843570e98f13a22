// SPDX-License-Identifier: GPL-2.0

#include <linux/kthread.h>

/* kthread_should_stop() is a function, but kthread_create() is a macro. */
struct task_struct *rust_helper_kthread_create_on_node_str(int (*threadfn)(void *data),
							   void *data, int node,
							   const char *name)
{
	return kthread_create_on_node(threadfn, data, node, "%s", name);
}

/* cond_resched() is a macro. */
void rust_helper_cond_resched(void)
{
	cond_resched();
}
