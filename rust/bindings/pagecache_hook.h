/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/pagecache_hook.rs (included from bindings_helper.h). */
#include <linux/numa.h>
#include <linux/pagecache_hook.h>
#include <linux/rcupdate.h>
