/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libcxlccm's low level: the ring protocol's mechanics for code that reads a
 * tenant's rings itself (a benchmark that times its own loop, a test that
 * checks every record against a model), as liburing's inline helpers sit
 * beside its high-level API. cxlccm.c is built on these helpers, so there is
 * one implementation of the protocol (Documentation/cxl_ccm.rst, "The ring
 * protocol").
 *
 * struct cxlccm_ring holds the four mappings of a configured tenant and the
 * ring geometry the driver wrote into the headers. Over it:
 *   - cxlccm_ring_map() / cxlccm_ring_unmap(): all four areas, or none;
 *   - cxlccm_ring_md_tail() / cxlccm_ring_pl_tail(): a tail, loaded with the
 *     read barrier that write-combining memory needs (cxlccm_barrier.h);
 *   - cxlccm_ring_record(): the record of a metadata index, copied once;
 *   - cxlccm_ring_payload(): where a payload lies, as up to two pieces (it
 *     wraps at the ring end), as in struct cxlccm_record;
 *   - cxlccm_ring_read(), cxlccm_ring_copy(), cxlccm_ring_crc32c(): bytes of
 *     a payload copied out, and its CRC32C, over both pieces.
 * The caller keeps its own heads and releases with CXL_CCM_IOC_RELEASE. All
 * is static inline and allocates nothing.
 */
#ifndef CXLCCM_RING_H
#define CXLCCM_RING_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/cxl_ccm.h>

#include "cxlccm_barrier.h"

struct cxlccm_ring {
	const struct cxl_ccm_ring_headers *hdr;
	const struct cxl_ccm_metadata_record *md;
	const __u8 *pl;
	void *in;			/* NULL for a tenant without input buffer */
	__u32 md_slots;			/* metadata ring capacity (a power of 2) */
	__u32 pl_slots;			/* payload ring capacity (a power of 2) */
	__u32 slot_size;		/* payload slot bytes */
	__u64 pl_bytes;			/* pl_slots * slot_size */
	/* The mapped lengths (CONFIGURE's), for cxlccm_ring_unmap(). */
	__u64 headers_size, metadata_ring_size, payload_ring_size, input_size;
};

/* Maps @len bytes of @area of @fd at *@p: 0, or a negative errno and *@p NULL. */
static inline int cxlccm_ring_mmap(int fd, __u64 len, int prot, __u64 area, void **p)
{
	*p = mmap(NULL, len, prot, MAP_SHARED, fd, area);
	if (*p != MAP_FAILED)
		return 0;
	*p = NULL;
	return -errno;
}

/* Unmaps what is mapped; the tenant goes once its file and mappings are gone. */
static inline void cxlccm_ring_unmap(struct cxlccm_ring *ring)
{
	if (ring->hdr)
		munmap((void *)ring->hdr, ring->headers_size);
	if (ring->md)
		munmap((void *)ring->md, ring->metadata_ring_size);
	if (ring->pl)
		munmap((void *)ring->pl, ring->payload_ring_size);
	if (ring->in)
		munmap(ring->in, ring->input_size);
	memset(ring, 0, sizeof(*ring));
}

/*
 * Takes the geometry from the headers, as the driver set it (slot size 0 in
 * CONFIGURE means the default). Every index is masked with it, so it must
 * fit the mappings: otherwise a consumer would read past them.
 */
static inline int cxlccm_ring_geometry(struct cxlccm_ring *ring)
{
	const struct cxl_ccm_ring_headers *h = ring->hdr;

	if (ring->headers_size < sizeof(*h) ||
	    h->metadata.slot_size != sizeof(*ring->md))
		return -EPROTO;
	ring->md_slots = h->metadata.capacity;
	ring->pl_slots = h->payload.capacity;
	ring->slot_size = h->payload.slot_size;
	ring->pl_bytes = (__u64)ring->pl_slots * ring->slot_size;
	if (!ring->md_slots || (ring->md_slots & (ring->md_slots - 1)) ||
	    !ring->pl_slots || (ring->pl_slots & (ring->pl_slots - 1)) ||
	    !ring->slot_size ||
	    (__u64)ring->md_slots * sizeof(*ring->md) > ring->metadata_ring_size ||
	    ring->pl_bytes > ring->payload_ring_size)
		return -EPROTO;
	return 0;
}

/*
 * Maps the ring headers, both rings (read-only) and the input buffer
 * (read-write, if @cfg has one) of the tenant that CONFIGURE made of @fd,
 * with the sizes CONFIGURE returned in @cfg. 0, or a negative errno with
 * nothing mapped (-EPROTO: the headers' geometry does not fit the mappings).
 */
static inline int cxlccm_ring_map(struct cxlccm_ring *ring, int fd,
				  const struct cxl_ccm_configure *cfg)
{
	void *hdr, *md = NULL, *pl = NULL, *in = NULL;
	int rc;

	rc = cxlccm_ring_mmap(fd, cfg->headers_size, PROT_READ, CXL_CCM_MMAP_HEADERS, &hdr);
	if (!rc)
		rc = cxlccm_ring_mmap(fd, cfg->metadata_ring_size, PROT_READ,
				      CXL_CCM_MMAP_METADATA, &md);
	if (!rc)
		rc = cxlccm_ring_mmap(fd, cfg->payload_ring_size, PROT_READ,
				      CXL_CCM_MMAP_PAYLOAD, &pl);
	if (!rc && cfg->input_size)
		rc = cxlccm_ring_mmap(fd, cfg->input_size, PROT_READ | PROT_WRITE,
				      CXL_CCM_MMAP_INPUT, &in);
	memset(ring, 0, sizeof(*ring));
	ring->hdr = (const struct cxl_ccm_ring_headers *)hdr;
	ring->md = (const struct cxl_ccm_metadata_record *)md;
	ring->pl = (const __u8 *)pl;
	ring->in = in;
	ring->headers_size = cfg->headers_size;
	ring->metadata_ring_size = cfg->metadata_ring_size;
	ring->payload_ring_size = cfg->payload_ring_size;
	ring->input_size = cfg->input_size;
	if (!rc)
		rc = cxlccm_ring_geometry(ring);
	if (rc)
		cxlccm_ring_unmap(ring);
	return rc;
}

/* The tails: what is published so far, with the slots they cover readable. */
static inline __u32 cxlccm_ring_md_tail(const struct cxlccm_ring *ring)
{
	return cxl_ccm_load_tail(&ring->hdr->metadata.tail);
}

static inline __u32 cxlccm_ring_pl_tail(const struct cxlccm_ring *ring)
{
	return cxl_ccm_load_tail(&ring->hdr->payload.tail);
}

/*
 * Copies the record of free-running metadata index @index (below a tail
 * loaded before). Read once: every check and use then sees the same bytes,
 * even if the slot is rewritten. Returns whether its sequence number is
 * @index; a record that fails it is stale or torn and names no payload.
 */
static inline bool cxlccm_ring_record(const struct cxlccm_ring *ring, __u32 index,
				      struct cxl_ccm_metadata_record *rec)
{
	memcpy(rec, &ring->md[index & (ring->md_slots - 1)], sizeof(*rec));
	return rec->seq == index;
}

/*
 * The @len bytes of payload from free-running payload index @index, as they
 * lie in the ring: piece[0] up to the ring end, piece[1] (piece_len[1] 0
 * unless it wraps) from the ring start. A length beyond the ring (a torn
 * record) is cut to the ring, so the pieces never leave the mapping.
 */
static inline void cxlccm_ring_payload(const struct cxlccm_ring *ring, __u32 index, __u64 len,
				       const void *piece[2], size_t piece_len[2])
{
	__u64 off = (__u64)(index & (ring->pl_slots - 1)) * ring->slot_size;
	__u64 first = ring->pl_bytes - off;

	if (len > ring->pl_bytes)
		len = ring->pl_bytes;
	if (first > len)
		first = len;
	piece[0] = ring->pl + off;
	piece_len[0] = first;
	piece[1] = ring->pl;
	piece_len[1] = len - first;
}

/* Copies @n bytes from byte @off of a payload in pieces to @dst (none past its end). */
static inline void cxlccm_ring_read(const void *const piece[2], const size_t piece_len[2],
				    size_t off, size_t n, void *dst)
{
	size_t k;
	int i;

	for (i = 0; i < 2 && n; i++) {
		if (off >= piece_len[i]) {
			off -= piece_len[i];
			continue;
		}
		k = piece_len[i] - off < n ? piece_len[i] - off : n;
		memcpy(dst, (const __u8 *)piece[i] + off, k);
		dst = (__u8 *)dst + k;
		n -= k;
		off = 0;
	}
}

/* Copies the payload of (@index, @len) to @dst; returns the bytes copied. */
static inline size_t cxlccm_ring_copy(const struct cxlccm_ring *ring, __u32 index, __u64 len,
				      void *dst)
{
	const void *piece[2];
	size_t piece_len[2];

	cxlccm_ring_payload(ring, index, len, piece, piece_len);
	cxlccm_ring_read(piece, piece_len, 0, piece_len[0] + piece_len[1], dst);
	return piece_len[0] + piece_len[1];
}

/* The CRC32C of a payload in pieces, to compare with its record's checksum. */
static inline __u32 cxlccm_ring_crc32c(const void *const piece[2], const size_t piece_len[2])
{
	__u32 crc = cxl_ccm_crc32c_update(~0U, piece[0], piece_len[0]);

	return ~cxl_ccm_crc32c_update(crc, piece[1], piece_len[1]);
}

#endif
