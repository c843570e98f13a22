/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/configfs.rs (included from bindings_helper.h). */
#include <linux/configfs.h>
