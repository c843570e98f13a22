/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/kthread.rs (included from bindings_helper.h). */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/delay.h>
