/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/miscdevice.rs (included from bindings_helper.h). */
#include <linux/fs.h>
#include <linux/miscdevice.h>
