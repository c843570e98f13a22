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
#include <unistd.h>

#include "cxlccm.h"
#include "cxlccm_ring.h"

struct cxlccm_tenant {
	int fd;
	struct cxl_ccm_info info;
	struct cxl_ccm_configure cfg;
	bool configured;
	bool broken;			/* a stale or torn record was seen */
	struct cxlccm_ring ring;
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

int cxlccm_configure(struct cxlccm_tenant *t, struct cxl_ccm_configure *cfg)
{
	int rc;

	if (t->configured)
		return -EBUSY;
	rc = ioc(t->fd, CXL_CCM_IOC_CONFIGURE, cfg);
	if (rc)
		return rc;
	rc = cxlccm_ring_map(&t->ring, t->fd, cfg);
	if (rc)
		return rc;
	t->cfg = *cfg;
	t->head = cfg->index_base;
	t->configured = true;
	return 0;
}

void *cxlccm_input(const struct cxlccm_tenant *t, size_t *size)
{
	if (size)
		*size = t->ring.in ? t->cfg.input_size : 0;
	return t->ring.in;
}

int cxlccm_launch(struct cxlccm_tenant *t, struct cxl_ccm_launch *l)
{
	return ioc(t->fd, CXL_CCM_IOC_LAUNCH, l);
}

unsigned int cxlccm_ready(struct cxlccm_tenant *t)
{
	if (!t->configured)
		return 0;
	return cxlccm_ring_md_tail(&t->ring) - t->head;
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
	if (!cxlccm_ring_record(&t->ring, t->head, &rec) || rec.length > t->ring.pl_bytes) {
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
	cxlccm_ring_payload(&t->ring, r->payload_index, r->length, r->payload, r->payload_len);
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
	cxlccm_ring_read(r->payload, r->payload_len, 0, r->length, dst);
	return r->length;
}

bool cxlccm_checksum_ok(const struct cxlccm_record *r)
{
	return cxlccm_ring_crc32c(r->payload, r->payload_len) == r->checksum;
}

void cxlccm_close(struct cxlccm_tenant *t)
{
	if (!t)
		return;
	cxlccm_ring_unmap(&t->ring);
	close(t->fd);
	free(t);
}
