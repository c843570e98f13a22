/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/dma_sg.rs (included from bindings_helper.h). */
#include <linux/dma-direction.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
