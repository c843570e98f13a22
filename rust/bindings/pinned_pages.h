/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/{pinned_pages,vma,cache_mode}.rs (included from bindings_helper.h). */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <asm/set_memory.h>
