// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libcxlccm: see cxlccm.h. The ring protocol (Documentation/cxl_ccm.rst,
 * "The ring protocol"): the device publishes a record's payload, then the
 * payload tail, then the record, then the metadata tail; the consumer loads
 * the metadata tail, issues a read barrier, copies each record once and
 * checks its sequence number, then reads the payload it names. Releases give
 * the payload slots back in any order and the metadata slots in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cxlccm.h"
#include "cxlccm_barrier.h"

struct cxlccm_tenant {
	int fd;
	struct cxl_ccm_info info;
	struct cxl_ccm_configure cfg;
	bool configured;
	bool broken;			/* a stale or torn record was seen */
	const struct cxl_ccm_ring_headers *hdr;
	const struct cxl_ccm_metadata_record *md;
	const __u8 *pl;
	void *in;
	__u32 md_slots, pl_slots, slot_size;
	__u64 pl_bytes;
	__u32 head;			/* next metadata index to take */
};

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int cxlccm_open(const char *node, struct cxlccm_tenant **tenant)
{
	struct cxlccm_tenant *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->fd = open(node, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		rc = -errno;
		free(t);
		return rc;
	}
	rc = ioc(t->fd, CXL_CCM_IOC_INFO, &t->info);
	if (rc) {
		close(t->fd);
		free(t);
		return rc;
	}
	*tenant = t;
	return 0;
}

const struct cxl_ccm_info *cxlccm_info(const struct cxlccm_tenant *t)
{
	return &t->info;
}

static void *map(const struct cxlccm_tenant *t, size_t len, int prot, __u64 off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, t->fd, off);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(struct cxlccm_tenant *t)
{
	if (t->hdr)
		munmap((void *)t->hdr, t->cfg.headers_size);
	if (t->md)
		munmap((void *)t->md, t->cfg.metadata_ring_size);
	if (t->pl)
		munmap((void *)t->pl, t->cfg.payload_ring_size);
	if (t->in)
		munmap(t->in, t->cfg.input_size);
	t->hdr = NULL;
	t->md = NULL;
	t->pl = NULL;
	t->in = NULL;
}

int cxlccm_configure(struct cxlccm_tenant *t, struct cxl_ccm_configure *cfg)
{
	int rc;

	if (t->configured)
		return -EBUSY;
	rc = ioc(t->fd, CXL_CCM_IOC_CONFIGURE, cfg);
	if (rc)
		return rc;
	t->cfg = *cfg;
	t->hdr = map(t, cfg->headers_size, PROT_READ, CXL_CCM_MMAP_HEADERS);
	t->md = map(t, cfg->metadata_ring_size, PROT_READ, CXL_CCM_MMAP_METADATA);
	t->pl = map(t, cfg->payload_ring_size, PROT_READ, CXL_CCM_MMAP_PAYLOAD);
	t->in = cfg->input_size ?
		map(t, cfg->input_size, PROT_READ | PROT_WRITE, CXL_CCM_MMAP_INPUT) : NULL;
	if (!t->hdr || !t->md || !t->pl || (cfg->input_size && !t->in)) {
		rc = -errno;
		unmap(t);
		return rc ? rc : -ENOMEM;
	}
	/* The geometry as the driver set it (slot size 0 means the default). */
	t->md_slots = t->hdr->metadata.capacity;
	t->pl_slots = t->hdr->payload.capacity;
	t->slot_size = t->hdr->payload.slot_size;
	t->pl_bytes = (__u64)t->pl_slots * t->slot_size;
	t->head = cfg->index_base;
	t->configured = true;
	return 0;
}

void *cxlccm_input(const struct cxlccm_tenant *t, size_t *size)
{
	if (size)
		*size = t->in ? t->cfg.input_size : 0;
	return t->in;
}

int cxlccm_launch(struct cxlccm_tenant *t, struct cxl_ccm_launch *l)
{
	return ioc(t->fd, CXL_CCM_IOC_LAUNCH, l);
}

unsigned int cxlccm_ready(struct cxlccm_tenant *t)
{
	if (!t->configured)
		return 0;
	return cxl_ccm_load_tail(&t->hdr->metadata.tail) - t->head;
}

/* Points @r's payload pieces into the ring, wrapping at its end. */
static void place_payload(const struct cxlccm_tenant *t, struct cxlccm_record *r)
{
	__u64 off = (__u64)(r->payload_index & (t->pl_slots - 1)) * t->slot_size;
	__u64 first = t->pl_bytes - off;

	if (first > r->length)
		first = r->length;
	r->payload[0] = t->pl + off;
	r->payload_len[0] = first;
	r->payload[1] = t->pl;
	r->payload_len[1] = r->length - first;
}

int cxlccm_next(struct cxlccm_tenant *t, struct cxlccm_record *r)
{
	struct cxl_ccm_metadata_record rec;

	if (!t->configured)
		return -EBADFD;
	if (t->broken)
		return -EIO;
	if (!cxlccm_ready(t))
		return -EAGAIN;
	/* Copied once: the checks below and the caller see the same bytes. */
	memcpy(&rec, &t->md[t->head & (t->md_slots - 1)], sizeof(rec));
	if (rec.seq != t->head || rec.length > t->pl_bytes) {
		t->broken = true;
		return -EIO;
	}
	*r = (struct cxlccm_record){
		.index = rec.seq,
		.tag = rec.tag,
		.result_offset = rec.result_offset,
		.length = rec.length,
		.checksum = rec.checksum,
		.flags = rec.flags,
		.status = rec.status,
		.payload_index = rec.payload_index,
	};
	place_payload(t, r);
	t->head++;
	return 0;
}

/* One RELEASE of up to CXL_CCM_RELEASE_MAX entries and the metadata head. */
static int release_some(struct cxlccm_tenant *t, const struct cxlccm_record *r, unsigned int n)
{
	struct cxl_ccm_release_entry e[256];
	struct cxl_ccm_release rel;
	unsigned int i;

	for (i = 0; i < n; i++)
		e[i] = (struct cxl_ccm_release_entry){ r[i].payload_index, r[i].length };
	memset(&rel, 0, sizeof(rel));
	rel.entries = (__u64)(unsigned long)e;
	rel.count = n;
	rel.flags = CXL_CCM_RELEASE_METADATA;
	rel.metadata_head = t->head;
	return ioc(t->fd, CXL_CCM_IOC_RELEASE, &rel);
}

int cxlccm_release(struct cxlccm_tenant *t, const struct cxlccm_record *r, unsigned int n)
{
	unsigned int done = 0;
	int rc;

	if (!t->configured)
		return -EBADFD;
	do {
		unsigned int k = n - done > 256 ? 256 : n - done;

		rc = release_some(t, r + done, k);
		if (rc)
			return rc;
		done += k;
	} while (done < n);
	return 0;
}

int cxlccm_wait(struct cxlccm_tenant *t, unsigned int min_records, __u64 timeout_ns,
		bool deadlock_check)
{
	struct cxl_ccm_wait w;

	if (!t->configured)
		return -EBADFD;
	memset(&w, 0, sizeof(w));
	w.min_records = min_records;
	w.metadata_head = t->head;
	w.timeout_ns = timeout_ns;
	w.flags = deadlock_check ? CXL_CCM_WAIT_FLAG_DEADLOCK : 0;
	return ioc(t->fd, CXL_CCM_IOC_WAIT, &w);
}

int cxlccm_stats(struct cxlccm_tenant *t, struct cxl_ccm_stats *s, bool reset)
{
	memset(s, 0, sizeof(*s));
	s->flags = reset ? CXL_CCM_STATS_RESET : 0;
	return ioc(t->fd, CXL_CCM_IOC_STATS, s);
}

size_t cxlccm_copy_payload(const struct cxlccm_record *r, void *dst)
{
	memcpy(dst, r->payload[0], r->payload_len[0]);
	memcpy((__u8 *)dst + r->payload_len[0], r->payload[1], r->payload_len[1]);
	return r->length;
}

bool cxlccm_checksum_ok(const struct cxlccm_record *r)
{
	__u32 crc = cxl_ccm_crc32c_update(~0U, r->payload[0], r->payload_len[0]);

	return ~cxl_ccm_crc32c_update(crc, r->payload[1], r->payload_len[1]) == r->checksum;
}

void cxlccm_close(struct cxlccm_tenant *t)
{
	if (!t)
		return;
	unmap(t);
	close(t->fd);
	free(t);
}
