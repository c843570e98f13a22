/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libcxlccm: offload kernels to a CXL computational memory device
 * (/dev/cxl_ccmN) and consume their back-streamed results, without
 * reimplementing the ring protocol.
 *
 * A tenant is one open file: cxlccm_open() opens the device and reads its
 * identity, cxlccm_configure() makes the file a tenant and maps its rings and
 * its input buffer (device memory). The caller writes inputs into
 * cxlccm_input(), launches kernels with cxlccm_launch(), and takes results
 * with cxlccm_next() as the device streams them: each record names its launch
 * (tag), where its bytes go in the launch's output (result_offset), and
 * where they are in the payload ring. The payload stays valid until the
 * record is released with cxlccm_release(), in any order and in batches;
 * the library tracks the metadata head itself. cxlccm_wait() blocks until
 * records are ready (or polls, per the tenant's mode).
 *
 * The ring protocol's memory ordering is in one place, here: the tails are
 * loaded with acquire semantics followed by the read barrier that
 * write-combining memory needs (LFENCE on x86, DMB OSHLD on arm64; see
 * Documentation/cxl_ccm.rst, "On real hardware"), and every record is
 * copied once and checked against its sequence number before use.
 *
 * Every function that can fail returns 0 (or a count) on success and a
 * negative errno on failure, as liburing does; errno is left alone. A
 * tenant is not thread-safe: one thread consumes, or the caller locks.
 *
 * Code that keeps its own heads and reads the rings itself uses the low
 * level these functions are built on, cxlccm_ring.h.
 */
#ifndef CXLCCM_H
#define CXLCCM_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/cxl_ccm.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cxlccm_tenant;

/* One result record, copied out of the metadata ring. */
struct cxlccm_record {
	__u32 index;		/* free-running metadata index */
	__u32 tag;		/* the launch (struct cxl_ccm_launch.tag) */
	__u64 result_offset;	/* byte offset in the launch's output */
	__u32 length;		/* payload bytes */
	__u32 checksum;		/* CRC32C of the payload (cxlccm_checksum_ok) */
	__u16 flags;		/* CXL_CCM_MD_FLAG_* */
	__u16 status;		/* CXL_CCM_STATUS_*, with CXL_CCM_MD_FLAG_ERROR */
	__u32 payload_index;	/* free-running payload index */
	/* The payload in the ring, in two pieces where it wraps at the ring end;
	 * valid until the record is released. */
	const void *payload[2];
	size_t payload_len[2];
};

/* Opens @node (e.g. "/dev/cxl_ccm0") and reads its identity. */
int cxlccm_open(const char *node, struct cxlccm_tenant **tenant);

/* The device's identity (CXL_CCM_IOC_INFO). */
const struct cxl_ccm_info *cxlccm_info(const struct cxlccm_tenant *t);

/*
 * Becomes a tenant with @cfg (CXL_CCM_IOC_CONFIGURE; its out fields are
 * written back) and maps the ring headers, both rings and the input buffer.
 * Once per tenant.
 */
int cxlccm_configure(struct cxlccm_tenant *t, struct cxl_ccm_configure *cfg);

/* The input buffer (device memory, write-combining) and its size. */
void *cxlccm_input(const struct cxlccm_tenant *t, size_t *size);

/*
 * Launches @l (CXL_CCM_IOC_LAUNCH); the tag is written to l->tag. Blocks
 * while CXL_CCM_LAUNCH_SLOTS launches are outstanding; in BS mode it returns
 * at completion.
 */
int cxlccm_launch(struct cxlccm_tenant *t, struct cxl_ccm_launch *l);

/* Records ready to take now (the metadata tail against the consumer head). */
unsigned int cxlccm_ready(struct cxlccm_tenant *t);

/*
 * Takes the next record into @r: 0, -EAGAIN if none is ready, -EIO if the
 * record is stale or torn (a device or driver bug; the tenant is then of no
 * further use).
 */
int cxlccm_next(struct cxlccm_tenant *t, struct cxlccm_record *r);

/*
 * Releases the payload of @n taken records, in any order (the driver's
 * gap-aware head advances over the contiguous released prefix), and every
 * metadata slot taken so far (their records were copied by cxlccm_next()).
 * Returns 0 or a negative errno; on -EINVAL nothing past the bad record was
 * released.
 */
int cxlccm_release(struct cxlccm_tenant *t, const struct cxlccm_record *r, unsigned int n);

/*
 * Waits until @min_records are ready or @timeout_ns passes
 * (CXL_CCM_WAIT_FOREVER: no limit): 0, -ETIMEDOUT, -EINTR, -EDEADLK (with
 * @deadlock_check: nothing can arrive before the caller releases), -EIO.
 */
int cxlccm_wait(struct cxlccm_tenant *t, unsigned int min_records, __u64 timeout_ns,
		bool deadlock_check);

/* The tenant's counters (CXL_CCM_IOC_STATS), reset afterwards if @reset. */
int cxlccm_stats(struct cxlccm_tenant *t, struct cxl_ccm_stats *s, bool reset);

/* Copies the record's payload to @dst (r->length bytes); returns r->length. */
size_t cxlccm_copy_payload(const struct cxlccm_record *r, void *dst);

/* Whether the payload in the ring has the record's CRC32C (both pieces). */
bool cxlccm_checksum_ok(const struct cxlccm_record *r);

/* Unmaps and closes; records taken and not released are dropped with it. */
void cxlccm_close(struct cxlccm_tenant *t);

#ifdef __cplusplus
}
#endif

#endif
