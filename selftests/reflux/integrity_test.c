// SPDX-License-Identifier: GPL-2.0
/*
 * What the device stores, seen through the driver's debugfs test hooks
 * (/sys/kernel/debug/reflux0/{corrupt_lba,peek_lba,peek}). Run by
 * tools/vm/init with the driver loaded for the pipeline named in
 * REFLUX_EXPECT:
 *
 *   eio         (checksum pipelines) a PMR byte the device flips in a
 *               stored block makes the next read of it fail with EIO; it
 *               never returns wrong data; a rewrite heals the block;
 *   flipped     (passthrough) the same flip is returned as is: the control
 *               that shows the flip really happens;
 *   ciphertext  (encrypt pipelines) the stored bytes of a block of text hold
 *               none of its 16-byte pieces.
 *
 * Without REFLUX_EXPECT the test skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV	"/dev/reflux0"
#define DBG	"/sys/kernel/debug/reflux0/"
#define LBS	4096
#define LBA	77

static const char *expect(void)
{
	const char *e = getenv("REFLUX_EXPECT");

	return e ? e : "";
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static void text_block(uint8_t *b)
{
	static const char line[] = "ReFlux keeps this sentence secret from the media. ";
	size_t i;

	for (i = 0; i < LBS; i++)
		b[i] = line[i % (sizeof(line) - 1)];
}

FIXTURE(blk) {
	int fd;
	uint8_t *data, *back;
};

FIXTURE_SETUP(blk)
{
	if (!*expect())
		SKIP(return, "REFLUX_EXPECT is not set (run by tools/vm/init)");
	self->fd = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", DEV, strerror(errno));
	ASSERT_EQ(0, posix_memalign((void **)&self->data, LBS, LBS));
	ASSERT_EQ(0, posix_memalign((void **)&self->back, LBS, LBS));
	text_block(self->data);
	ASSERT_EQ(LBS, pwrite(self->fd, self->data, LBS, (off_t)LBA * LBS));
	ASSERT_EQ(LBS, pread(self->fd, self->back, LBS, (off_t)LBA * LBS));
	ASSERT_EQ(0, memcmp(self->data, self->back, LBS));
}

FIXTURE_TEARDOWN(blk)
{
	if (!*expect())
		return;
	close(self->fd);
	free(self->data);
	free(self->back);
}

TEST_F(blk, corrupted_media)
{
	char lba[32];
	ssize_t n;
	int i, diffs = 0;

	if (strcmp(expect(), "eio") && strcmp(expect(), "flipped"))
		SKIP(return, "not a corruption run");
	snprintf(lba, sizeof(lba), "%d\n", LBA);
	ASSERT_EQ(0, write_str(DBG "corrupt_lba", lba)) TH_LOG("corrupt_lba: %s", strerror(errno));
	memset(self->back, 0, LBS);
	errno = 0;
	n = pread(self->fd, self->back, LBS, (off_t)LBA * LBS);
	if (!strcmp(expect(), "eio")) {
		ASSERT_EQ(-1, n) TH_LOG("a corrupted checksummed block was read");
		ASSERT_EQ(EIO, errno) TH_LOG("read: %s", strerror(errno));
	} else {
		ASSERT_EQ(LBS, n);
		for (i = 0; i < LBS; i++)
			diffs += self->data[i] != self->back[i];
		ASSERT_EQ(1, diffs) TH_LOG("passthrough: %d bytes differ, expected the flipped one",
					   diffs);
	}
	/* A rewrite heals the block. */
	ASSERT_EQ(LBS, pwrite(self->fd, self->data, LBS, (off_t)LBA * LBS));
	ASSERT_EQ(LBS, pread(self->fd, self->back, LBS, (off_t)LBA * LBS));
	ASSERT_EQ(0, memcmp(self->data, self->back, LBS));
}

TEST_F(blk, no_plaintext_stored)
{
	char lba[32], *text, *hex;
	uint8_t stored[LBS];
	unsigned int len, flags, i, j;
	FILE *f;

	if (strcmp(expect(), "ciphertext"))
		SKIP(return, "not an encryption run");
	snprintf(lba, sizeof(lba), "%d\n", LBA);
	ASSERT_EQ(0, write_str(DBG "peek_lba", lba));
	f = fopen(DBG "peek", "r");
	ASSERT_NE(NULL, f);
	text = calloc(1, 3 * LBS);
	ASSERT_NE(NULL, text);
	ASSERT_EQ(2, fscanf(f, "lba %*u stored_len %u flags %x", &len, &flags));
	ASSERT_NE(NULL, fgets(text, 3 * LBS, f));	/* rest of the line */
	ASSERT_NE(NULL, fgets(text, 3 * LBS, f));	/* the hex */
	fclose(f);
	ASSERT_EQ(LBS, len) TH_LOG("an encrypted block stores whole blocks");
	hex = text;
	for (i = 0; i < LBS; i++)
		ASSERT_EQ(1, sscanf(hex + 2 * i, "%2hhx", &stored[i]));
	/* No 16-byte piece of the text, at any offset, is in the stored bytes. */
	for (i = 0; i + 16 <= LBS; i += 16)
		for (j = 0; j + 16 <= LBS; j++)
			ASSERT_NE(0, memcmp(self->data + i, stored + j, 16))
				TH_LOG("plaintext at %u stored at %u", i, j);
	free(text);
}

TEST_HARNESS_MAIN
