/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/debugfs.rs (included from bindings_helper.h). */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
