// SPDX-License-Identifier: GPL-2.0

#include <linux/io.h>

/* The MMIO accessors are static inlines (x86: build_mmio_read/write). */
u32 rust_helper_readl(const void __iomem *addr)
{
	return readl(addr);
}

void rust_helper_writel(u32 value, void __iomem *addr)
{
	writel(value, addr);
}

u64 rust_helper_readq(const void __iomem *addr)
{
	return readq(addr);
}

void rust_helper_writeq(u64 value, void __iomem *addr)
{
	writeq(value, addr);
}
