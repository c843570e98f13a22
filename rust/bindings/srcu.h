/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/revocable.rs (included from bindings_helper.h). */
#include <linux/srcu.h>
