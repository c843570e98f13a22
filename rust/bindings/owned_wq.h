/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/owned_wq.rs (included from bindings_helper.h). */
#include <linux/workqueue.h>
