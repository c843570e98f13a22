// SPDX-License-Identifier: GPL-2.0
/*
 * The cxl_ccm and cxl_ccm_dev trace events, read through tracefs while a
 * tenant of /dev/cxl_ccm4 (libcxlccm) runs into back-pressure on purpose:
 * one launch of more records than its metadata ring holds, a WAIT with the
 * deadlock check before anything is released, then every record consumed
 * and released. Each event must fire with fields that agree with what the
 * test did and with each other: the launch's tag and size, dma_batch records
 * that add up to the launch, the device stalling for credit and resuming,
 * the deadlock and the WAIT's -EDEADLK, every RELEASE. With the events
 * disabled the same work leaves the trace buffer empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "../../tools/lib/cxlccm/cxlccm.h"
#include "kselftest_harness.h"

#define DEV_NR		4
#define NODE		"/dev/cxl_ccm4"
#define TRACING		"/sys/kernel/tracing"
#define MD_SLOTS	64
#define CHUNK		256
#define LAUNCH_BYTES	(4 * MD_SLOTS * CHUNK)	/* four rings' worth of records */
#define RECORDS		(LAUNCH_BYTES / CHUNK)
#define TRACE_MAX	(4 << 20)

static int write_file(const char *rel, const char *s)
{
	char path[256];
	int fd, ok;

	snprintf(path, sizeof(path), TRACING "/%s", rel);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

/* The trace buffer's text, NUL-terminated (static: one reader at a time). */
static char *read_trace(void)
{
	static char buf[TRACE_MAX];
	size_t n = 0;
	ssize_t r;
	int fd = open(TRACING "/trace", O_RDONLY);

	if (fd < 0)
		return NULL;
	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	return buf;
}

/* Turns both systems' events on or off and empties the buffer. */
static int trace_events(int on)
{
	const char *v = on ? "1" : "0";

	if (write_file("events/cxl_ccm/enable", v) || write_file("events/cxl_ccm_dev/enable", v))
		return -1;
	return write_file("trace", "");
}

/* What the trace said about one tenant of DEV_NR. */
struct seen {
	int launches, launch_tag, launch_kernel, launch_mode;
	unsigned int launch_bytes;
	unsigned long long batch_records, batch_bytes;
	int batches, seq_ok;
	unsigned int next_seq;
	int stalls, resumes, stalled;
	unsigned long long resume_ns;
	int deadlocks, deadlock_ready;
	int waits, wait_edeadlk, wait_ok;
	int releases, release_errors;
	unsigned long long released, driver_records, driver_bytes;
	int foreign;
};

static void parse(char *text, unsigned int tenant, struct seen *s)
{
	char *line, *save = NULL;

	memset(s, 0, sizeof(*s));
	s->seq_ok = 1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int dev, t, a, b, c, d, e;
		unsigned long long x;
		int ret;
		char mode[16];
		const char *p;

		if (*line == '#')
			continue;
		if ((p = strstr(line, " cxl_ccm_launch: ")) &&
		    sscanf(p, " cxl_ccm_launch: cxl_ccm%u tenant=%u mode=%15s tag=%u kernel=%u bytes=%u ns=%llu",
			   &dev, &t, mode, &a, &b, &c, &x) == 7) {
			if (dev != DEV_NR || t != tenant)
				continue;
			s->launches++;
			s->launch_tag = a;
			s->launch_kernel = b;
			s->launch_bytes = c;
			s->launch_mode = !strcmp(mode, "axle");
		} else if ((p = strstr(line, " cxl_ccm_dev_dma_batch: ")) &&
			   sscanf(p, " cxl_ccm_dev_dma_batch: cxl_ccm.%u tenant=%u seq=%u records=%u bytes=%u land_ns=%llu",
				  &dev, &t, &a, &b, &c, &x) == 6) {
			if (dev != DEV_NR || t != tenant)
				continue;
			/* Batches stream the metadata ring in order, from index 0. */
			if (a != s->next_seq || !b)
				s->seq_ok = 0;
			s->next_seq = a + b;
			s->batches++;
			s->batch_records += b;
			s->batch_bytes += c;
		} else if ((p = strstr(line, " cxl_ccm_dev_credit_stall: ")) &&
			   sscanf(p, " cxl_ccm_dev_credit_stall: cxl_ccm.%u tenant=%u stalled=%u md_head=%u pl_head=%u ns=%llu",
				  &dev, &t, &a, &b, &c, &x) == 6) {
			if (dev != DEV_NR || t != tenant)
				continue;
			/* A stall under new heads is traced again: count stretches. */
			if (a) {
				s->stalls += !s->stalled;
				s->stalled = 1;
			} else {
				s->stalled = 0;
				s->resumes++;
				s->resume_ns += x;
			}
		} else if ((p = strstr(line, " cxl_ccm_deadlock: ")) &&
			   sscanf(p, " cxl_ccm_deadlock: cxl_ccm%u tenant=%u min=%u ready=%u",
				  &dev, &t, &a, &b) == 4) {
			if (dev != DEV_NR || t != tenant)
				continue;
			s->deadlocks++;
			s->deadlock_ready = b;
		} else if ((p = strstr(line, " cxl_ccm_wait: ")) &&
			   sscanf(p, " cxl_ccm_wait: cxl_ccm%u tenant=%u min=%u ready=%u ns=%llu ret=%d",
				  &dev, &t, &a, &b, &x, &ret) == 6) {
			if (dev != DEV_NR || t != tenant)
				continue;
			s->waits++;
			s->wait_edeadlk += ret == -EDEADLK;
			s->wait_ok += ret == 0;
		} else if ((p = strstr(line, " cxl_ccm_release: ")) &&
			   sscanf(p, " cxl_ccm_release: cxl_ccm%u tenant=%u entries=%u md_head=%u pl_head=%u ret=%d",
				  &dev, &t, &a, &d, &e, &ret) == 6) {
			if (dev != DEV_NR || t != tenant)
				continue;
			s->releases++;
			s->released += a;
			s->release_errors += ret != 0;
		} else if ((p = strstr(line, " cxl_ccm_records: ")) &&
			   sscanf(p, " cxl_ccm_records: cxl_ccm%u tenant=%u records=%u bytes=%llu",
				  &dev, &t, &a, &x) == 4) {
			if (dev != DEV_NR || t != tenant)
				continue;
			s->driver_records += a;
			s->driver_bytes += x;
		} else if (strstr(line, "cxl_ccm")) {
			s->foreign++;
		}
	}
}

/*
 * The workload: one launch of RECORDS chunks into a MD_SLOTS-slot metadata
 * ring; a WAIT for all of them with the deadlock check, which must say
 * -EDEADLK once the device stalls; then every record taken and released in
 * batches. Returns 0 or a negative errno; *tenant is the tenant's number.
 */
static int workload(unsigned int *tenant, int *wait_rc, char *err, size_t errlen)
{
	struct cxl_ccm_configure cfg = {
		.mode = CXL_CCM_MODE_AXLE, .slot_size = 32, .streaming_factor = CHUNK,
		.metadata_slots = MD_SLOTS, .payload_slots = MD_SLOTS * CHUNK / 32,
		.input_size = LAUNCH_BYTES,
	};
	struct cxl_ccm_stream_xform_args xa = {
		.op = CXL_CCM_XFORM_OP_XOR, .chunk_size = CHUNK, .operand = 1,
	};
	struct cxl_ccm_launch l = {
		.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM, .input_size = LAUNCH_BYTES,
		.arg_size = sizeof(xa),
	};
	struct cxlccm_record batch[32];
	struct cxlccm_tenant *t;
	unsigned int taken = 0, n = 0;
	int rc;

	rc = cxlccm_open(NODE, &t);
	if (rc) {
		snprintf(err, errlen, "open: %d", rc);
		return rc;
	}
	rc = cxlccm_configure(t, &cfg);
	if (rc) {
		snprintf(err, errlen, "CONFIGURE: %d", rc);
		goto out;
	}
	*tenant = cfg.tenant;
	memset(cxlccm_input(t, NULL), 0x5a, LAUNCH_BYTES);
	memcpy(l.args, &xa, sizeof(xa));
	rc = cxlccm_launch(t, &l);
	if (rc) {
		snprintf(err, errlen, "LAUNCH: %d", rc);
		goto out;
	}
	/* Nothing is released: the device fills the ring and stalls. */
	*wait_rc = cxlccm_wait(t, RECORDS, 10ULL * 1000 * 1000 * 1000, true);
	while (taken < RECORDS) {
		rc = cxlccm_next(t, &batch[n]);
		if (rc == -EAGAIN) {
			rc = cxlccm_release(t, batch, n);
			n = 0;
			if (!rc)
				rc = cxlccm_wait(t, 1, 10ULL * 1000 * 1000 * 1000, false);
		} else if (!rc) {
			taken++;
			if (++n == 32) {
				rc = cxlccm_release(t, batch, n);
				n = 0;
			}
		}
		if (rc) {
			snprintf(err, errlen, "after %u records: %d", taken, rc);
			goto out;
		}
	}
	rc = cxlccm_release(t, batch, n);
	if (rc)
		snprintf(err, errlen, "last RELEASE: %d", rc);
out:
	cxlccm_close(t);
	return rc;
}

FIXTURE(trace) {
	unsigned int tenant;
	int wait_rc;
	char err[128];
	struct seen s;
};

FIXTURE_SETUP(trace)
{
	if (access(TRACING "/trace", F_OK) && mount("tracefs", TRACING, "tracefs", 0, NULL))
		SKIP(return, "no tracefs: %s", strerror(errno));
	ASSERT_EQ(0, write_file("buffer_size_kb", "4096"));
	ASSERT_EQ(0, write_file("tracing_on", "1"));
}

FIXTURE_TEARDOWN(trace)
{
	trace_events(0);
}

/* Every event exists, with the fields the documentation names. */
TEST_F(trace, formats)
{
	static const char *const events[][2] = {
		{ "cxl_ccm/cxl_ccm_launch", "field:u64 ns;" },
		{ "cxl_ccm/cxl_ccm_release", "field:int ret;" },
		{ "cxl_ccm/cxl_ccm_wait", "field:u32 ready;" },
		{ "cxl_ccm/cxl_ccm_deadlock", "field:u32 min;" },
		{ "cxl_ccm/cxl_ccm_records", "field:u64 bytes;" },
		{ "cxl_ccm_dev/cxl_ccm_dev_dma_batch", "field:u32 records;" },
		{ "cxl_ccm_dev/cxl_ccm_dev_credit_stall", "field:u32 stalled;" },
	};

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		char path[256], buf[4096] = { 0 };
		int fd;

		snprintf(path, sizeof(path), TRACING "/events/%s/format", events[i][0]);
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
		ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
		close(fd);
		EXPECT_NE(NULL, strstr(buf, events[i][1])) TH_LOG("%s lacks %s", path, events[i][1]);
	}
}

/* A back-pressured run: every event fires, and the fields agree. */
TEST_F(trace, backpressure)
{
	struct seen *s = &self->s;

	ASSERT_EQ(0, trace_events(1));
	ASSERT_EQ(0, workload(&self->tenant, &self->wait_rc, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(-EDEADLK, self->wait_rc);
	parse(read_trace(), self->tenant, s);
	TH_LOG("launch tag %d, %d batches of %llu records / %llu bytes, %d stalls (%d resumes, %llu ns), "
	       "%d deadlocks, %d waits, %d releases of %llu, driver saw %llu records",
	       s->launch_tag, s->batches, s->batch_records, s->batch_bytes, s->stalls,
	       s->resumes, s->resume_ns, s->deadlocks, s->waits, s->releases, s->released,
	       s->driver_records);
	EXPECT_EQ(1, s->launches);
	EXPECT_EQ(1, s->launch_mode);
	EXPECT_EQ(CXL_CCM_KERNEL_STREAM_XFORM, s->launch_kernel);
	EXPECT_EQ(LAUNCH_BYTES, s->launch_bytes);
	/* Every record back-streamed once, in order, in batches. */
	EXPECT_EQ(RECORDS, s->batch_records);
	EXPECT_EQ(LAUNCH_BYTES, s->batch_bytes);
	EXPECT_EQ(1, s->seq_ok);
	EXPECT_LT(1, s->batches);
	/* The ring holds a quarter of the records: the device stalled and resumed. */
	EXPECT_LE(1, s->stalls);
	EXPECT_EQ(s->stalls, s->resumes);
	EXPECT_LT(0, s->resume_ns);
	/* The deadlock check found the tenant stuck with a full ring and said so. */
	EXPECT_EQ(1, s->deadlocks);
	EXPECT_EQ(MD_SLOTS, s->deadlock_ready);
	EXPECT_EQ(1, s->wait_edeadlk);
	EXPECT_EQ(s->waits - 1, s->wait_ok);
	/* Every record released, and seen by the driver's scans, once. */
	EXPECT_EQ(RECORDS, s->released);
	EXPECT_EQ(0, s->release_errors);
	EXPECT_EQ(RECORDS, s->driver_records);
	EXPECT_EQ(LAUNCH_BYTES, s->driver_bytes);
}

/* Disabled events record nothing: the same run leaves the buffer empty. */
TEST_F(trace, disabled)
{
	ASSERT_EQ(0, trace_events(0));
	ASSERT_EQ(0, workload(&self->tenant, &self->wait_rc, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	parse(read_trace(), self->tenant, &self->s);
	EXPECT_EQ(0, self->s.launches);
	EXPECT_EQ(0, self->s.batches);
	EXPECT_EQ(0, self->s.waits);
	EXPECT_EQ(0, self->s.foreign);
}

TEST_HARNESS_MAIN
