// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libcxlccm example: XOR 256 KiB of words on the device with STREAM_XFORM,
 * in 8 launches of 32 KiB kept in flight together, and consume the
 * back-streamed results out of order: every record's checksum and bytes are
 * checked against the expected output, and the records are released in
 * batches. Prints one line and exits 0 if every byte arrived exactly once.
 *
 *   xform [/dev/cxl_ccmN] [AXLE|RP|BS|AXLE_IRQ]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cxlccm.h"

#define LAUNCHES	8
#define LAUNCH_BYTES	(32 * 1024)
#define CHUNK		256
#define OPERAND		0x5a5a5a5aU

static __u32 mode_of(const char *name)
{
	static const char *const names[] = { "AXLE", "RP", "BS", "AXLE_IRQ" };

	for (__u32 m = 0; m < 4; m++)
		if (!strcmp(name, names[m]))
			return m;
	fprintf(stderr, "xform: unknown mode %s\n", name);
	exit(2);
}

static void fail(const char *what, int rc)
{
	fprintf(stderr, "xform: %s: %s\n", what, strerror(-rc));
	exit(1);
}

/* Checks one record against the input it was computed from. */
static int check(const struct cxlccm_record *r, const __u32 *in, const __u32 *tags,
		 unsigned char *seen)
{
	__u32 out[CHUNK / 4];
	unsigned int l;

	for (l = 0; l < LAUNCHES && tags[l] != r->tag; l++)
		;
	if (l == LAUNCHES || r->length > CHUNK || r->result_offset % CHUNK ||
	    r->result_offset + r->length > LAUNCH_BYTES)
		return -1;
	if (!cxlccm_checksum_ok(r))
		return -1;
	cxlccm_copy_payload(r, out);
	for (__u32 i = 0; i < r->length / 4; i++) {
		__u32 w = (l * LAUNCH_BYTES + r->result_offset) / 4 + i;

		if (out[i] != (in[w] ^ OPERAND))
			return -1;
	}
	if (seen[(l * LAUNCH_BYTES + r->result_offset) / CHUNK]++)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct cxl_ccm_configure cfg = {
		.mode = mode_of(argc > 2 ? argv[2] : "AXLE"),
		.slot_size = 32, .streaming_factor = 256,
		.metadata_slots = 256, .payload_slots = 1024,
		.input_size = LAUNCHES * LAUNCH_BYTES,
	};
	static unsigned char seen[LAUNCHES * LAUNCH_BYTES / CHUNK];
	struct cxlccm_record batch[64];
	struct cxlccm_tenant *t;
	struct cxl_ccm_stats s;
	unsigned int finals = 0, records = 0, n = 0;
	__u32 tags[LAUNCHES], *in;
	int rc;

	rc = cxlccm_open(argc > 1 ? argv[1] : "/dev/cxl_ccm0", &t);
	if (rc)
		fail("open", rc);
	rc = cxlccm_configure(t, &cfg);
	if (rc)
		fail("CONFIGURE", rc);
	in = cxlccm_input(t, NULL);
	for (__u32 i = 0; i < LAUNCHES * LAUNCH_BYTES / 4; i++)
		in[i] = i * 2654435761U;
	for (unsigned int l = 0; l < LAUNCHES; l++) {
		struct cxl_ccm_stream_xform_args xa = {
			.op = CXL_CCM_XFORM_OP_XOR, .chunk_size = CHUNK, .operand = OPERAND,
		};
		struct cxl_ccm_launch launch = {
			.kernel_id = CXL_CCM_KERNEL_STREAM_XFORM,
			.input_offset = (__u64)l * LAUNCH_BYTES,
			.input_size = LAUNCH_BYTES, .arg_size = sizeof(xa),
		};

		memcpy(launch.args, &xa, sizeof(xa));
		rc = cxlccm_launch(t, &launch);
		if (rc)
			fail("LAUNCH", rc);
		tags[l] = launch.tag;
	}
	while (finals < LAUNCHES) {
		rc = cxlccm_next(t, &batch[n]);
		if (rc == -EAGAIN) {
			/* Nothing ready: give back what was taken, then block. */
			rc = cxlccm_release(t, batch, n);
			if (rc)
				fail("RELEASE", rc);
			n = 0;
			rc = cxlccm_wait(t, 1, 10ULL * 1000 * 1000 * 1000, true);
			if (rc)
				fail("WAIT", rc);
			continue;
		}
		if (rc)
			fail("next", rc);
		if (batch[n].flags & CXL_CCM_MD_FLAG_ERROR) {
			fprintf(stderr, "xform: launch %u failed: status %u\n", batch[n].tag,
				batch[n].status);
			return 1;
		}
		if (batch[n].length && check(&batch[n], in, tags, seen)) {
			fprintf(stderr, "xform: record %u (tag %u, offset %llu) is wrong\n",
				batch[n].index, batch[n].tag,
				(unsigned long long)batch[n].result_offset);
			return 1;
		}
		finals += !!(batch[n].flags & CXL_CCM_MD_FLAG_FINAL);
		records++;
		if (++n == 64) {
			rc = cxlccm_release(t, batch, n);
			if (rc)
				fail("RELEASE", rc);
			n = 0;
		}
	}
	rc = cxlccm_release(t, batch, n);
	if (rc)
		fail("RELEASE", rc);
	for (size_t c = 0; c < sizeof(seen); c++) {
		if (seen[c] != 1) {
			fprintf(stderr, "xform: chunk %zu arrived %u times\n", c, seen[c]);
			return 1;
		}
	}
	rc = cxlccm_stats(t, &s, false);
	if (rc)
		fail("STATS", rc);
	printf("xform: %u launches, %u records, %llu credit stalls, all %zu chunks exact\n",
	       LAUNCHES, records, (unsigned long long)s.credit_stalls, sizeof(seen));
	cxlccm_close(t);
	return 0;
}
