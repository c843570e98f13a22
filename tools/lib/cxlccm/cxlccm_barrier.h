/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * The read barrier between loading a ring tail and loading what it covers:
 * libcxlccm's, used through cxlccm_ring.h by the library and by the code
 * that reads the rings itself (the cxl_ccm selftests, bench/ccm_bench).
 *
 * The driver maps the metadata and payload rings write-combining, in the
 * kernel and in user space (Documentation/cxl_ccm.rst, "On real hardware"):
 * the device writes them by DMA into memory it does not snoop. Loads from
 * write-combining memory are weakly ordered and may be speculative (Intel
 * SDM Vol. 3A, "Memory Ordering": the x86 ordering rules are those of
 * write-back memory), so an acquire load of the tail - a plain MOV on x86 -
 * does not keep the record and payload loads after it, and a consumer could
 * read a slot before the tail that covers it. The kernel's rmb() is LFENCE on
 * x86 for this reason (arch/x86/include/asm/barrier.h; dma_rmb() is only a
 * compiler barrier there, enough for write-back DMA memory but not for this).
 * On arm64 write-combining is Normal Non-cacheable memory and the writer is a
 * device: the load barrier must reach the outer-shareable domain (DMB OSHLD,
 * the kernel's dma_rmb()).
 */
#ifndef CXLCCM_BARRIER_H
#define CXLCCM_BARRIER_H

#include <linux/types.h>

static inline void cxl_ccm_ring_rmb(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshld" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* A ring tail, loaded so that the slots it covers are read after it. */
static inline __u32 cxl_ccm_load_tail(const volatile __u32 *tail)
{
	__u32 v = __atomic_load_n(tail, __ATOMIC_ACQUIRE);

	cxl_ccm_ring_rmb();
	return v;
}

#endif
