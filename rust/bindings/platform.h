/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/{platform,memremap}.rs (included from bindings_helper.h). */
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/platform_device.h>
