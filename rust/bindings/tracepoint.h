/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/tracepoint.rs (included from bindings_helper.h). */
#include <linux/tracepoint.h>
