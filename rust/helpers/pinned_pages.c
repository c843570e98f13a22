// SPDX-License-Identifier: GPL-2.0

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/pgtable.h>

struct page *rust_helper_alloc_pages_node(int nid, gfp_t gfp_mask, unsigned int order)
{
	return alloc_pages_node(nid, gfp_mask, order);
}

pgprot_t rust_helper_page_kernel(void)
{
	return PAGE_KERNEL;
}

pgprot_t rust_helper_pgprot_noncached(pgprot_t prot)
{
	return pgprot_noncached(prot);
}

unsigned long rust_helper_page_to_pfn(struct page *page)
{
	return page_to_pfn(page);
}

bool rust_helper_node_online(int nid)
{
	return node_online(nid);
}
