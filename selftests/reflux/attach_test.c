// SPDX-License-Identifier: GPL-2.0
/*
 * Pipelines attached to byte ranges of /dev/reflux0 through configfs
 * (/sys/kernel/config/reflux/<name>/{device,start,length,pipeline,checksum,
 * enable}). Run by tools/vm/init with the driver loaded with the passthrough
 * pipeline as the device's default and REFLUX_ATTACH=1; skips otherwise.
 *
 * - every refused value gets its errno (EINVAL, ENODEV, ERANGE, EBUSY);
 * - requests in an attached range take its pipeline, the rest the default:
 *   what the PMR stores (peek) shows LZ4 in the compress range, ciphertext in
 *   the encrypt range and raw blocks elsewhere, and a 3 MiB write across all
 *   three reads back bit-exact (O_DIRECT and buffered);
 *   a write across a range boundary is split there by the block layer;
 * - detaching a range keeps its data readable, and new writes there are
 *   stored by the default pipeline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV	"/dev/reflux0"
#define DBG	"/sys/kernel/debug/reflux0/"
#define CFS	"/sys/kernel/config/reflux/"
#define LBS	4096
#define MIB	(1024 * 1024)

#define META_CHECKSUMMED	(1 << 1)
#define META_COMPRESSED		(1 << 2)
#define META_ENCRYPTED		(1 << 3)

/* 0 or the errno of writing `val` to attribute `attr` of attachment `dir`. */
static int attr_set(const char *dir, const char *attr, const char *val)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), CFS "%s/%s", dir, attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static int attr_get(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), CFS "%s/%s", dir, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static void remove_attachment(const char *dir)
{
	char path[256];

	attr_set(dir, "enable", "0");
	snprintf(path, sizeof(path), CFS "%s", dir);
	rmdir(path);
}

static int make_attachment(const char *dir, const char *start, const char *len,
			   const char *pipeline, const char *checksum)
{
	char path[256];
	int err;

	snprintf(path, sizeof(path), CFS "%s", dir);
	if (mkdir(path, 0755))
		return errno;
	if ((err = attr_set(dir, "device", "reflux0")) ||
	    (err = attr_set(dir, "start", start)) ||
	    (err = attr_set(dir, "length", len)) ||
	    (err = attr_set(dir, "pipeline", pipeline)) ||
	    (err = attr_set(dir, "checksum", checksum)))
		return err;
	return attr_set(dir, "enable", "1");
}

/* Compressible text, different in every block (its LBA and a salt). */
static void fill(uint8_t *b, size_t len, uint64_t first_lba, unsigned int salt)
{
	static const char line[] = "ReFlux attaches this sentence to a range of the disk. ";
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = line[i % (sizeof(line) - 1)];
	for (i = 0; i < len / LBS; i++)
		snprintf((char *)b + i * LBS, 40, "lba %llu salt %u",
			 (unsigned long long)(first_lba + i), salt);
}

struct peeked {
	unsigned int len, flags;
	uint8_t stored[LBS];
};

static int peek(uint64_t lba, struct peeked *p)
{
	char buf[32], *hex;
	unsigned int i;
	int fd, ok;
	FILE *f;

	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)lba);
	fd = open(DBG "peek_lba", O_WRONLY);
	if (fd < 0 || write(fd, buf, strlen(buf)) < 0)
		return -1;
	close(fd);
	f = fopen(DBG "peek", "r");
	if (!f)
		return -1;
	hex = calloc(1, 3 * LBS);
	ok = hex && fscanf(f, "lba %*u stored_len %u flags %x", &p->len, &p->flags) == 2 &&
	     fgets(hex, 3 * LBS, f) && fgets(hex, 3 * LBS, f);
	fclose(f);
	for (i = 0; ok && i < p->len && i < LBS; i++)
		ok = sscanf(hex + 2 * i, "%2hhx", &p->stored[i]) == 1;
	free(hex);
	return ok ? 0 : -1;
}

/* Whether any 16-byte piece of `plain` is in `stored`. */
static int holds_plaintext(const uint8_t *plain, const uint8_t *stored, unsigned int len)
{
	unsigned int i, j;

	for (i = 0; i + 16 <= LBS; i += 16)
		for (j = 0; j + 16 <= len; j++)
			if (!memcmp(plain + i, stored + j, 16))
				return 1;
	return 0;
}

static uint64_t capacity_bytes(void)
{
	unsigned long long sectors = 0;
	FILE *f = fopen("/sys/block/reflux0/size", "r");

	if (f) {
		if (fscanf(f, "%llu", &sectors) != 1)
			sectors = 0;
		fclose(f);
	}
	return sectors * 512;
}

FIXTURE(cfs) {
	int fd;
	uint8_t *data, *back;
};

FIXTURE_SETUP(cfs)
{
	if (!getenv("REFLUX_ATTACH"))
		SKIP(return, "REFLUX_ATTACH is not set (run by tools/vm/init)");
	ASSERT_EQ(0, access(CFS, F_OK)) TH_LOG("%s: %s", CFS, strerror(errno));
	/* What a failed test left (the harness may skip the teardown after a failed assert). */
	remove_attachment("a");
	remove_attachment("b");
	self->fd = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV, strerror(errno));
	ASSERT_EQ(0, posix_memalign((void **)&self->data, LBS, 3 * MIB));
	ASSERT_EQ(0, posix_memalign((void **)&self->back, LBS, 3 * MIB));
}

FIXTURE_TEARDOWN(cfs)
{
	if (!getenv("REFLUX_ATTACH"))
		return;
	remove_attachment("a");
	remove_attachment("b");
	close(self->fd);
	free(self->data);
	free(self->back);
}

TEST_F(cfs, refused_values)
{
	char v[64];

	ASSERT_EQ(0, mkdir(CFS "a", 0755));
	ASSERT_EQ(0, attr_get("a", "enable", v, sizeof(v)));
	ASSERT_STREQ("0", v);
	ASSERT_EQ(0, attr_get("a", "pipeline", v, sizeof(v)));
	ASSERT_STREQ("passthrough", v);
	/* Malformed values. */
	ASSERT_EQ(EINVAL, attr_set("a", "start", "4096"));
	ASSERT_EQ(EINVAL, attr_set("a", "start", "one"));
	ASSERT_EQ(EINVAL, attr_set("a", "length", "1.5M"));
	ASSERT_EQ(EINVAL, attr_set("a", "length", "99999999999999999999"));
	ASSERT_EQ(EINVAL, attr_set("a", "pipeline", "gzip"));
	ASSERT_EQ(EINVAL, attr_set("a", "checksum", "2"));
	ASSERT_EQ(EINVAL, attr_set("a", "device", "a/b"));
	ASSERT_EQ(EINVAL, attr_set("a", "device", "\n"));
	ASSERT_EQ(EINVAL, attr_set("a", "enable", "yes please"));
	/* Nothing named, nothing bound by that name, nothing to attach, too far. */
	ASSERT_EQ(EINVAL, attr_set("a", "enable", "1"));
	ASSERT_EQ(0, attr_set("a", "device", "reflux9"));
	ASSERT_EQ(ENODEV, attr_set("a", "enable", "1"));
	ASSERT_EQ(0, attr_set("a", "device", "reflux0"));
	ASSERT_EQ(EINVAL, attr_set("a", "enable", "1")) TH_LOG("a zero length was attached");
	/* The last 128 KiB boundary and 256 KiB from there: past the end. */
	ASSERT_NE(0, capacity_bytes());
	snprintf(v, sizeof(v), "%llu", (unsigned long long)(capacity_bytes() & ~(128ULL * 1024 - 1)));
	ASSERT_EQ(0, attr_set("a", "start", v));
	ASSERT_EQ(0, attr_set("a", "length", "256K"));
	ASSERT_EQ(ERANGE, attr_set("a", "enable", "1"));
	ASSERT_EQ(0, attr_get("a", "enable", v, sizeof(v)));
	ASSERT_STREQ("0", v);
	/* What was accepted reads back. */
	ASSERT_EQ(0, attr_get("a", "length", v, sizeof(v)));
	ASSERT_STREQ("262144", v);
	ASSERT_EQ(0, attr_get("a", "device", v, sizeof(v)));
	ASSERT_STREQ("reflux0", v);
}

TEST_F(cfs, overlap_and_busy)
{
	char v[64];

	ASSERT_EQ(0, make_attachment("a", "1M", "1M", "compress", "1"));
	ASSERT_EQ(0, attr_get("a", "enable", v, sizeof(v)));
	ASSERT_STREQ("1", v);
	ASSERT_EQ(0, attr_set("a", "enable", "1")) TH_LOG("enable is idempotent");
	ASSERT_EQ(EBUSY, attr_set("a", "start", "0")) TH_LOG("changed while enabled");
	ASSERT_EQ(EBUSY, attr_set("a", "pipeline", "encrypt"));
	ASSERT_EQ(EBUSY, make_attachment("b", "1536K", "1M", "encrypt", "0"));
	ASSERT_EQ(0, attr_set("b", "start", "2M"));
	ASSERT_EQ(0, attr_set("b", "enable", "1")) TH_LOG("an adjacent range was refused");
	ASSERT_EQ(0, attr_set("a", "enable", "0"));
	ASSERT_EQ(0, attr_get("a", "enable", v, sizeof(v)));
	ASSERT_STREQ("0", v);
	ASSERT_EQ(0, attr_set("a", "start", "0"));
}

TEST_F(cfs, each_range_takes_its_pipeline)
{
	struct peeked p;
	int bfd;

	ASSERT_EQ(0, make_attachment("a", "1M", "1M", "compress", "1"));
	ASSERT_EQ(0, make_attachment("b", "2M", "1M", "encrypt", "0"));
	/* One write across the default range and both attachments. */
	fill(self->data, 3 * MIB, 0, 1);
	ASSERT_EQ(3 * MIB, pwrite(self->fd, self->data, 3 * MIB, 0));
	memset(self->back, 0, 3 * MIB);
	ASSERT_EQ(3 * MIB, pread(self->fd, self->back, 3 * MIB, 0));
	ASSERT_EQ(0, memcmp(self->data, self->back, 3 * MIB));

	ASSERT_EQ(0, peek(100, &p));
	ASSERT_EQ(LBS, p.len);
	ASSERT_EQ(0, p.flags & (META_COMPRESSED | META_ENCRYPTED | META_CHECKSUMMED))
		TH_LOG("default range: flags %#x", p.flags);
	ASSERT_EQ(0, memcmp(p.stored, self->data + 100 * LBS, LBS));

	ASSERT_EQ(0, peek(300, &p));
	ASSERT_EQ(META_COMPRESSED | META_CHECKSUMMED,
		  p.flags & (META_COMPRESSED | META_ENCRYPTED | META_CHECKSUMMED))
		TH_LOG("compress range: flags %#x", p.flags);
	ASSERT_GT(LBS / 2, p.len) TH_LOG("compressed to %u bytes", p.len);

	ASSERT_EQ(0, peek(600, &p));
	ASSERT_EQ(META_ENCRYPTED, p.flags & (META_COMPRESSED | META_ENCRYPTED | META_CHECKSUMMED))
		TH_LOG("encrypt range: flags %#x", p.flags);
	ASSERT_EQ(0, holds_plaintext(self->data + 600 * LBS, p.stored, p.len));

	/* The last block before the compress range and the first in it, in one buffered write. */
	fill(self->data, 2 * LBS, 255, 2);
	bfd = open(DEV, O_RDWR);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(2 * LBS, pwrite(bfd, self->data, 2 * LBS, 255 * LBS));
	ASSERT_EQ(0, fsync(bfd));
	close(bfd);
	ASSERT_EQ(2 * LBS, pread(self->fd, self->back, 2 * LBS, 255 * LBS));
	ASSERT_EQ(0, memcmp(self->data, self->back, 2 * LBS));
	ASSERT_EQ(0, peek(255, &p));
	ASSERT_EQ(0, p.flags & META_COMPRESSED);
	ASSERT_EQ(0, peek(256, &p));
	ASSERT_NE(0, p.flags & META_COMPRESSED);
}

TEST_F(cfs, detaching_keeps_the_data)
{
	struct peeked p;

	ASSERT_EQ(0, make_attachment("a", "1M", "1M", "compress", "1"));
	ASSERT_EQ(0, make_attachment("b", "2M", "1M", "encrypt", "1"));
	fill(self->data, 2 * MIB, 256, 3);
	ASSERT_EQ(2 * MIB, pwrite(self->fd, self->data, 2 * MIB, 1 * MIB));
	ASSERT_EQ(0, attr_set("a", "enable", "0"));
	ASSERT_EQ(0, rmdir(CFS "b")) TH_LOG("rmdir of an enabled attachment: %s", strerror(errno));
	/* Stored compressed and encrypted; read through the default pipeline. */
	ASSERT_EQ(0, peek(300, &p));
	ASSERT_NE(0, p.flags & META_COMPRESSED);
	ASSERT_EQ(0, peek(600, &p));
	ASSERT_NE(0, p.flags & META_ENCRYPTED);
	memset(self->back, 0, 2 * MIB);
	ASSERT_EQ(2 * MIB, pread(self->fd, self->back, 2 * MIB, 1 * MIB));
	ASSERT_EQ(0, memcmp(self->data, self->back, 2 * MIB));
	/* New writes there are stored raw. */
	ASSERT_EQ(LBS, pwrite(self->fd, self->data + 44 * LBS, LBS, 300 * LBS));
	ASSERT_EQ(0, peek(300, &p));
	ASSERT_EQ(0, p.flags & (META_COMPRESSED | META_ENCRYPTED));
	ASSERT_EQ(LBS, pwrite(self->fd, self->data + 344 * LBS, LBS, 600 * LBS));
	ASSERT_EQ(0, peek(600, &p));
	ASSERT_EQ(0, p.flags & (META_COMPRESSED | META_ENCRYPTED));
}

TEST_HARNESS_MAIN
