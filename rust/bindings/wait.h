/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/wait.rs (included from bindings_helper.h). */
#include <linux/delay.h>
#include <linux/poll.h>
#include <linux/wait.h>
