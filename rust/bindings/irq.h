/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/irq.rs (included from bindings_helper.h). */
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
