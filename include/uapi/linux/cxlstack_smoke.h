/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cxlstack_smoke: the smoke-test device of the cxlstack build.
 *
 * /dev/cxlstack_smoke exercises the Rust abstractions of the tree end to end:
 * a misc device with per-open state, typed ioctls, pinned pages mapped into
 * user space with a chosen caching mode, and a kernel thread per open file
 * that writes a known sequence into those pages.
 *
 * Usage: open; CXLSTACK_SMOKE_SETUP (allocates the pages, starts the thread);
 * mmap(MAP_SHARED) any page range of the buffer; CXLSTACK_SMOKE_FILL (the
 * thread writes cxlstack_smoke_value(seed, i) into 64-bit word i for
 * i < count; the ioctl returns when it is done, with the fill's generation).
 */
#ifndef _UAPI_LINUX_CXLSTACK_SMOKE_H
#define _UAPI_LINUX_CXLSTACK_SMOKE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define CXLSTACK_SMOKE_ABI_VERSION 1

/* Caching of the buffer, in the kernel and in every user mapping. */
#define CXLSTACK_SMOKE_CACHED		0
#define CXLSTACK_SMOKE_WRITE_COMBINING	1
#define CXLSTACK_SMOKE_UNCACHED		2

struct cxlstack_smoke_info {
	__u32 abi_version;	/* out: CXLSTACK_SMOKE_ABI_VERSION */
	__u32 page_size;	/* out */
	__u32 max_pages;	/* out: the largest npages SETUP accepts */
	__u32 reserved;		/* out: 0 */
};

struct cxlstack_smoke_setup {
	__u32 npages;		/* in: 1..max_pages */
	__u32 cache_mode;	/* in: CXLSTACK_SMOKE_* */
	__u64 reserved[2];	/* in: must be 0 */
};

struct cxlstack_smoke_fill {
	__u64 seed;		/* in */
	__u64 count;		/* in: words to write, 1..npages * page_size / 8 */
	__u64 generation;	/* out: fills done on this file, this one included */
	__u64 reserved;		/* in: must be 0 */
};

/* 0xCE is shared with linux/cxl_mem.h, which uses numbers 01-02 only. */
#define CXLSTACK_SMOKE_IOC_MAGIC 0xCE
#define CXLSTACK_SMOKE_INFO  _IOR(CXLSTACK_SMOKE_IOC_MAGIC, 0x80, struct cxlstack_smoke_info)
#define CXLSTACK_SMOKE_SETUP _IOW(CXLSTACK_SMOKE_IOC_MAGIC, 0x81, struct cxlstack_smoke_setup)
#define CXLSTACK_SMOKE_FILL  _IOWR(CXLSTACK_SMOKE_IOC_MAGIC, 0x82, struct cxlstack_smoke_fill)

/* The value the thread writes into word i: distinct per seed and index. */
static inline __u64 cxlstack_smoke_value(__u64 seed, __u64 i)
{
	__u64 x = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 29);
}

#endif /* _UAPI_LINUX_CXLSTACK_SMOKE_H */
