// SPDX-License-Identifier: GPL-2.0
/*
 * Live migration of reflux's actors between the host and the device, through
 * the driver's debugfs interface (/sys/kernel/debug/reflux0/):
 *
 *   migrate     (write) "<actor_id> host\n" or "<actor_id> device\n": a
 *               synchronous drain-and-switch migration;
 *   actors      (read) one line per registered actor: its owner, epoch,
 *               generation (completed migrations in its checkpoint), and
 *               the blocks it ran as counted by its control state (ctl_runs,
 *               moved by every migration) and by its shared state in the PMR
 *               (invocations, never moved);
 *   migrations  (read) the last (at most 256) migrations and their phases;
 *   stats       (read) gains migrations, parked and reroutes.
 *
 * bad_input: malformed writes and unknown actors fail with EINVAL, a
 * migration to the side the actor is on with EALREADY, a pinned actor's with
 * EPERM, and none of them changes anything.
 *
 * race: worker threads do O_DIRECT I/O on the first 64 MiB of the disk while
 * the test migrates the actors named in REFLUX_ACTORS (default "2,1")
 * REFLUX_MIGRATIONS times (default 40), alternating each between the host and
 * the device. Every 512-byte piece of every block written carries (lba,
 * thread, sequence, per-write random word), so a stale block (an older
 * sequence), a torn one (pieces of different writes) or a misplaced one
 * cannot read back as good. Then, with nothing in flight: the data once more
 * (O_DIRECT and through the page cache), every actor's ctl_runs equal to its
 * invocations (a lost or replayed checkpoint breaks that), generations and
 * epochs advanced by exactly the migrations done, and the migrations file
 * and statistics accounting for them.
 *
 * The test migrates whatever pipeline the driver was loaded with; with
 * pipeline=0 (passthrough) no actor runs, and only the migrations themselves
 * and the data are checked. REFLUX_THREADS (default 4) and REFLUX_SEED (the
 * random seed, printed) tune the race.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/fs.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DEV		"/dev/reflux0"
#define DBG		"/sys/kernel/debug/reflux0/"
#define PARAMS		"/sys/module/reflux/parameters/"
#define LBS		4096		/* the device's logical block */
#define PIECE		512		/* the unit a torn write could tear at */
#define PIECES		(LBS / PIECE)
#define MAX_IO		(128 << 10)
#define REGION_MAX	(64ULL << 20)
#define MAX_THREADS	64
#define MAX_ACTORS	64		/* lines of the actors file we take */
#define MIG_KEPT	256		/* migrations the migrations file keeps */
#define MIG_READ	300		/* lines we read of it (more is a bug we report) */
#define STAMP_MAGIC	0x78756c66657252ULL	/* "Reflux\0\0" */
#define GOLDEN		0x9E3779B97F4A7C15ULL

/* Diagnostics as "# " lines on stdout; flushed, as the harness's children _exit(). */
#define note(fmt, ...) do { ksft_print_msg(fmt "\n", ##__VA_ARGS__); fflush(stdout); } while (0)

static uint64_t xorshift(uint64_t *s)
{
	/* xorshift64*: reproducible from the seed printed in the log. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser: derives independent streams and piece patterns. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile `p` (0..100) of the sorted `v[0..n)`. */
static uint64_t pct(const uint64_t *v, int n, int p)
{
	int rank = (p * n + 99) / 100;

	return v[rank > 0 ? rank - 1 : 0];
}

/* ---- The stamped blocks ---------------------------------------------------- */

/* The head of every 512-byte piece; the rest of the piece derives from it. */
struct stamp {
	uint64_t magic;
	uint64_t lba;		/* absolute logical block of the device */
	uint64_t seq;		/* the writer's sequence number of the write */
	uint64_t word;		/* random, per write: tells this run's data from older runs' */
	uint32_t thread;	/* the slice (thread) that owns the block */
	uint32_t piece;		/* 0..PIECES-1 within the block */
};

/* What the test last wrote to a block. */
struct block_state {
	uint64_t seq, word;
};

static void fill_piece(uint8_t *p, const struct stamp *s)
{
	uint64_t h = mix64(s->word ^ mix64(s->lba ^ ((uint64_t)s->thread << 40) ^
					  ((uint64_t)s->piece << 56) ^ s->seq * GOLDEN));
	size_t i;

	memcpy(p, s, sizeof(*s));
	for (i = sizeof(*s); i + 8 <= PIECE; i += 8) {
		uint64_t v = (h + i) * GOLDEN;

		memcpy(p + i, &v, 8);
	}
}

static void fill_block(uint8_t *p, uint64_t lba, uint32_t thread, const struct block_state *st)
{
	struct stamp s = {
		.magic = STAMP_MAGIC, .lba = lba, .seq = st->seq, .word = st->word, .thread = thread,
	};

	for (s.piece = 0; s.piece < PIECES; s.piece++)
		fill_piece(p + s.piece * PIECE, &s);
}

/* Why the block `got` is not the one `want` describes: corrupt, torn, misplaced or stale. */
static void diagnose(char *out, size_t len, const uint8_t *got, uint64_t lba, uint32_t thread,
		     const struct block_state *want)
{
	struct stamp s[PIECES];
	uint8_t piece[PIECE];
	int i, same = 1;

	for (i = 0; i < PIECES; i++) {
		memcpy(&s[i], got + i * PIECE, sizeof(s[i]));
		/* A piece that is not whole as written by someone, at its place in a block. */
		if (s[i].magic != STAMP_MAGIC || s[i].piece != (uint32_t)i) {
			snprintf(out, len, "lba %llu: piece %d is garbage (not a stamped piece %d)",
				 (unsigned long long)lba, i, i);
			return;
		}
		fill_piece(piece, &s[i]);
		if (memcmp(piece, got + i * PIECE, PIECE)) {
			snprintf(out, len, "lba %llu: piece %d is corrupt (its bytes do not match its stamp)",
				 (unsigned long long)lba, i);
			return;
		}
		if (s[i].seq != s[0].seq || s[i].word != s[0].word || s[i].lba != s[0].lba ||
		    s[i].thread != s[0].thread)
			same = 0;
	}
	if (!same) {
		char seqs[PIECES * 48] = "";
		size_t at = 0;

		for (i = 0; i < PIECES && at < sizeof(seqs); i++)
			at += snprintf(seqs + at, sizeof(seqs) - at, " %llu/%u/%llu",
				       (unsigned long long)s[i].lba, s[i].thread,
				       (unsigned long long)s[i].seq);
		snprintf(out, len, "lba %llu: torn, its pieces are of writes (lba/thread/seq)%s; "
			 "the last write was seq %llu", (unsigned long long)lba, seqs,
			 (unsigned long long)want->seq);
	} else if (s[0].lba != lba || s[0].thread != thread) {
		snprintf(out, len, "lba %llu: misplaced, holds lba %llu of thread %u (seq %llu)",
			 (unsigned long long)lba, (unsigned long long)s[0].lba, s[0].thread,
			 (unsigned long long)s[0].seq);
	} else if (s[0].seq < want->seq) {
		snprintf(out, len, "lba %llu: stale, seq %llu read after seq %llu was written",
			 (unsigned long long)lba, (unsigned long long)s[0].seq,
			 (unsigned long long)want->seq);
	} else {
		snprintf(out, len, "lba %llu: seq %llu word %#llx read, seq %llu word %#llx written"
			 " (a write never made, or another run's)", (unsigned long long)lba,
			 (unsigned long long)s[0].seq, (unsigned long long)s[0].word,
			 (unsigned long long)want->seq, (unsigned long long)want->word);
	}
}

/* ---- The workers ------------------------------------------------------------ */

struct worker {
	pthread_t tid;
	uint32_t idx;
	int fd;				/* O_DIRECT, shared by all workers */
	uint64_t base, len;		/* the slice of the region this worker owns, bytes */
	struct block_state *blocks;	/* per block of the slice: its last write */
	uint64_t rng, seq;
	uint8_t *buf, *scratch;		/* MAX_IO and LBS, aligned for O_DIRECT */
	uint64_t writes, reads;		/* during the race */
	uint64_t written, verified;	/* bytes */
	uint64_t ops;			/* completed I/Os, read by the main thread */
	int failed;
	char err[512];
};

static int stop_flag;		/* the main thread's "stop", or a worker's failure */
static int ready_count;		/* workers done filling their slice */

static int stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE);
}

/*
 * Reads [off, off + len) of `w`'s slice through `fd` into `buf` and checks
 * every block against the last write `w` made to it. 0, or -1 with `err` set.
 */
static int verify_range(const struct worker *w, int fd, uint8_t *buf, uint8_t *scratch,
			uint64_t off, size_t len, char *err, size_t errlen)
{
	ssize_t n = pread(fd, buf, len, off);
	size_t i;

	if (n != (ssize_t)len) {
		snprintf(err, errlen, "pread %zu at %llu: %s", len, (unsigned long long)off,
			 n < 0 ? strerror(errno) : "short read");
		return -1;
	}
	for (i = 0; i < len; i += LBS) {
		uint64_t lba = (off + i) / LBS;
		const struct block_state *st = &w->blocks[(off + i - w->base) / LBS];

		fill_block(scratch, lba, w->idx, st);
		if (memcmp(scratch, buf + i, LBS)) {
			diagnose(err, errlen, buf + i, lba, w->idx, st);
			return -1;
		}
	}
	return 0;
}

static int write_range(struct worker *w, uint64_t off, size_t len)
{
	struct block_state st = { .seq = ++w->seq, .word = xorshift(&w->rng) };
	ssize_t n;
	size_t i;

	for (i = 0; i < len; i += LBS)
		fill_block(w->buf + i, (off + i) / LBS, w->idx, &st);
	n = pwrite(w->fd, w->buf, len, off);
	if (n != (ssize_t)len) {
		snprintf(w->err, sizeof(w->err), "pwrite %zu at %llu: %s", len,
			 (unsigned long long)off, n < 0 ? strerror(errno) : "short write");
		return -1;
	}
	/* Acknowledged: from now on only this write's data may be read back. */
	for (i = 0; i < len; i += LBS)
		w->blocks[(off + i - w->base) / LBS] = st;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t off;

	/* Fill the slice first, so that every block has a known last write. */
	for (off = w->base; off < w->base + w->len; off += MAX_IO) {
		size_t len = w->base + w->len - off < MAX_IO ? w->base + w->len - off : MAX_IO;

		if (write_range(w, off, len)) {
			w->failed = 1;
			__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
			/* Ready all the same: the main thread must not wait forever. */
			__atomic_add_fetch(&ready_count, 1, __ATOMIC_RELEASE);
			return NULL;
		}
	}
	__atomic_add_fetch(&ready_count, 1, __ATOMIC_RELEASE);

	while (!stopping()) {
		uint64_t blocks = w->len / LBS;
		uint64_t n = 1 + xorshift(&w->rng) % (MAX_IO / LBS);
		size_t len;

		if (n > blocks)
			n = blocks;
		len = n * LBS;
		off = w->base + xorshift(&w->rng) % (blocks - n + 1) * LBS;
		if (xorshift(&w->rng) & 1) {
			if (write_range(w, off, len))
				goto fail;
			w->writes++;
			w->written += len;
		} else {
			if (verify_range(w, w->fd, w->buf, w->scratch, off, len, w->err,
					 sizeof(w->err)))
				goto fail;
			w->reads++;
			w->verified += len;
		}
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
fail:
	w->failed = 1;
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- debugfs ------------------------------------------------------------------ */

/* One write of `s[0..len)` to the migrate file: 0, the write's errno, or -1 for a short write. */
static int migrate_write(const char *s, size_t len)
{
	int fd = open(DBG "migrate", O_WRONLY), err = 0;
	ssize_t n;

	if (fd < 0)
		return errno;
	n = write(fd, s, len);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = -1;
	close(fd);
	return err;
}

static int migrate_to(unsigned int id, const char *side)
{
	char s[32];

	snprintf(s, sizeof(s), "%u %s\n", id, side);
	return migrate_write(s, strlen(s));
}

static const char *err_name(int err)
{
	return err < 0 ? "short write" : err ? strerror(err) : "success";
}

static const char *other_side(const char *side)
{
	return strcmp(side, "host") ? "host" : "device";
}

/* A line of "key value" pairs. */
struct kv {
	int n;
	char *key[24], *val[24];
};

/* Splits `line` (in place) into pairs. 0, or -1 if a key has no value or there are too many. */
static int split_pairs(char *line, struct kv *kv)
{
	char *save = NULL, *tok;

	kv->n = 0;
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		char *val = strtok_r(NULL, " \t\n", &save);

		if (!val || kv->n == (int)ARRAY_SIZE(kv->key))
			return -1;
		kv->key[kv->n] = tok;
		kv->val[kv->n] = val;
		kv->n++;
	}
	return 0;
}

static const char *kv_str(const struct kv *kv, const char *key)
{
	int i;

	for (i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

static int kv_u64(const struct kv *kv, const char *key, uint64_t *v)
{
	const char *s = kv_str(kv, key);
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int is_side(const char *s)
{
	return s && (!strcmp(s, "host") || !strcmp(s, "device"));
}

struct actor {
	unsigned int id;
	char kind[16], owner[8];
	uint64_t epoch, generation, ctl_runs, invocations, pinned;
};

struct actors {
	int n;
	struct actor a[MAX_ACTORS];
	char bad[256];		/* why the file did not parse */
};

/* Reads the actors file into `t`: the number of actors, or -1 (t->bad says why). */
static int read_actors(struct actors *t)
{
	FILE *f = fopen(DBG "actors", "r");
	char line[512], copy[512];

	t->n = 0;
	if (!f) {
		snprintf(t->bad, sizeof(t->bad), DBG "actors: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct actor *a = &t->a[t->n];
		uint64_t id;
		struct kv kv;

		if (line[strspn(line, " \t\n")] == '\0')
			continue;
		snprintf(copy, sizeof(copy), "%s", line);
		if (t->n == MAX_ACTORS || split_pairs(line, &kv) || kv.n < 1 ||
		    strcmp(kv.key[0], "actor") || kv_u64(&kv, "actor", &id) ||
		    !kv_str(&kv, "kind") || !is_side(kv_str(&kv, "owner")) ||
		    kv_u64(&kv, "epoch", &a->epoch) || kv_u64(&kv, "generation", &a->generation) ||
		    kv_u64(&kv, "ctl_runs", &a->ctl_runs) ||
		    kv_u64(&kv, "invocations", &a->invocations) || kv_u64(&kv, "pinned", &a->pinned)) {
			snprintf(t->bad, sizeof(t->bad), "actors: cannot parse \"%.*s\"",
				 (int)strcspn(copy, "\n"), copy);
			fclose(f);
			return -1;
		}
		a->id = id;
		snprintf(a->kind, sizeof(a->kind), "%s", kv_str(&kv, "kind"));
		snprintf(a->owner, sizeof(a->owner), "%s", kv_str(&kv, "owner"));
		t->n++;
	}
	fclose(f);
	return t->n;
}

static const struct actor *find_actor(const struct actors *t, unsigned int id)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->a[i].id == id)
			return &t->a[i];
	return NULL;
}

/* The value of `key` in the stats file: 0, or -1 if absent. */
static int read_stat(const char *key, uint64_t *v)
{
	FILE *f = fopen(DBG "stats", "r");
	char line[256], k[64];
	unsigned long long x;
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", k, &x) == 2 && !strcmp(k, key)) {
			*v = x;
			found = 0;
		}
	fclose(f);
	return found;
}

struct mig_rec {
	unsigned int actor;
	char from[8], to[8];
	uint64_t drain, ckpt, handover, rebuild, total;
};

/* One migration the race made. */
struct mig_log {
	unsigned int actor;
	const char *from, *to;
	uint64_t elapsed_ns;	/* of the write(), as the test saw it */
	uint64_t ios;		/* I/Os the workers completed meanwhile */
};

/*
 * Reads the migrations file (a header line, then one line per migration) into
 * `r[0..max)`: the number of records, or -1 (`bad` says why).
 */
static int read_migrations(struct mig_rec *r, int max, char *bad, size_t badlen)
{
	FILE *f = fopen(DBG "migrations", "r");
	char line[512], copy[512];
	int n = 0, first = 1;

	if (!f) {
		snprintf(bad, badlen, DBG "migrations: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t actor;
		struct kv kv;

		/* The header, whatever it says (it may name the columns: "actor from ..."). */
		if (first) {
			first = 0;
			continue;
		}
		if (line[strspn(line, " \t\n")] == '\0')
			continue;
		snprintf(copy, sizeof(copy), "%s", line);
		if (n == max) {
			snprintf(bad, badlen, "migrations: more than %d lines", max);
			fclose(f);
			return -1;
		}
		if (split_pairs(line, &kv) || kv.n < 1 || strcmp(kv.key[0], "actor") ||
		    kv_u64(&kv, "actor", &actor) ||
		    !is_side(kv_str(&kv, "from")) || !is_side(kv_str(&kv, "to")) ||
		    kv_u64(&kv, "drain_ns", &r[n].drain) || kv_u64(&kv, "ckpt_ns", &r[n].ckpt) ||
		    kv_u64(&kv, "handover_ns", &r[n].handover) ||
		    kv_u64(&kv, "rebuild_ns", &r[n].rebuild) ||
		    kv_u64(&kv, "total_ns", &r[n].total)) {
			snprintf(bad, badlen, "migrations: cannot parse \"%.*s\"",
				 (int)strcspn(copy, "\n"), copy);
			fclose(f);
			return -1;
		}
		r[n].actor = actor;
		snprintf(r[n].from, sizeof(r[n].from), "%s", kv_str(&kv, "from"));
		snprintf(r[n].to, sizeof(r[n].to), "%s", kv_str(&kv, "to"));
		n++;
	}
	fclose(f);
	return n;
}

/*
 * The actors the loaded pipeline runs, as a bit mask of actor ids (actor id
 * == kind: 1 crc32c, 2 lz4, 3 aes-xts), from the module's parameters and the
 * pipelines' definition (drivers/reflux/proto/pipeline.rs); -1 if unknown.
 */
static int pipeline_actors(void)
{
	unsigned int pipeline;
	char crc = 'N';
	FILE *f = fopen(PARAMS "pipeline", "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%u", &pipeline) == 1;
	fclose(f);
	f = fopen(PARAMS "checksum", "r");
	if (!ok || !f || fscanf(f, " %c", &crc) != 1) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	switch (pipeline) {
	case 0: return 0;
	case 1: return 1 << 1;
	case 2: return 1 << 2 | (crc == 'Y') << 1;
	case 3: return 1 << 3 | (crc == 'Y') << 1;
	}
	return -1;
}

/* ---- The fixture -------------------------------------------------------------- */

FIXTURE(migrate) {
	unsigned int ids[MAX_ACTORS];	/* REFLUX_ACTORS */
	int nids;
	char ids_text[256];
	int migrations;			/* REFLUX_MIGRATIONS */
	int threads;			/* REFLUX_THREADS */
	uint64_t seed;
	int fd_direct, fd_buffered;
	struct worker *workers;
	struct block_state *blocks;
	uint8_t *bufs;
	struct actors *before, *after;
	struct mig_rec *recs;
	struct mig_log *log;		/* the race's migrations */
	const struct mig_rec **mine;	/* their lines in the migrations file */
};

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 0) : dflt;
}

FIXTURE_SETUP(migrate)
{
	const char *list = getenv("REFLUX_ACTORS");
	const char *seed = getenv("REFLUX_SEED");
	char buf[256], *tok, *save = NULL;
	int i;

	self->fd_direct = self->fd_buffered = -1;
	if (access(DEV, F_OK))
		SKIP(return, DEV " does not exist (reflux and reflux_dev not loaded)");
	if (access(DBG "stats", F_OK))
		SKIP(return, DBG " does not exist (debugfs not mounted)");
	/* The driver has a reflux0 directory: it must have the migration files. */
	ASSERT_EQ(0, access(DBG "migrate", W_OK)) TH_LOG(DBG "migrate: %s", strerror(errno));
	ASSERT_EQ(0, access(DBG "actors", R_OK)) TH_LOG(DBG "actors: %s", strerror(errno));
	ASSERT_EQ(0, access(DBG "migrations", R_OK)) TH_LOG(DBG "migrations: %s", strerror(errno));

	snprintf(self->ids_text, sizeof(self->ids_text), "%s", list && *list ? list : "2,1");
	snprintf(buf, sizeof(buf), "%s", self->ids_text);
	self->nids = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long id = strtol(tok, &end, 10);

		ASSERT_TRUE(end != tok && !*end && id > 0 && id < 256)
			TH_LOG("REFLUX_ACTORS: \"%s\" is not an actor id", tok);
		/* Braced: an ASSERT_*() is two statements (the check, then its TH_LOG handler). */
		for (i = 0; i < self->nids; i++) {
			ASSERT_NE(self->ids[i], (unsigned int)id)
				TH_LOG("REFLUX_ACTORS names actor %ld twice", id);
		}
		ASSERT_GT(MAX_ACTORS, self->nids);
		self->ids[self->nids++] = id;
	}
	ASSERT_LT(0, self->nids) TH_LOG("REFLUX_ACTORS names no actor");
	self->migrations = env_long("REFLUX_MIGRATIONS", 40);
	ASSERT_TRUE(self->migrations > 0 && self->migrations <= 1000000)
		TH_LOG("REFLUX_MIGRATIONS=%d", self->migrations);
	self->threads = env_long("REFLUX_THREADS", 4);
	ASSERT_TRUE(self->threads > 0 && self->threads <= MAX_THREADS)
		TH_LOG("REFLUX_THREADS=%d (1..%d)", self->threads, MAX_THREADS);
	self->seed = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + getpid();
	if (!self->seed)
		self->seed = 1;
	self->before = calloc(1, sizeof(*self->before));
	self->after = calloc(1, sizeof(*self->after));
	self->recs = calloc(MIG_READ, sizeof(*self->recs));
	ASSERT_TRUE(self->before && self->after && self->recs);
}

FIXTURE_TEARDOWN(migrate)
{
	if (self->fd_direct >= 0)
		close(self->fd_direct);
	if (self->fd_buffered >= 0)
		close(self->fd_buffered);
	free(self->workers);
	free(self->blocks);
	free(self->bufs);
	free(self->before);
	free(self->after);
	free(self->recs);
	free(self->log);
	free(self->mine);
}

/* ---- bad_input ---------------------------------------------------------------- */

TEST_F(migrate, bad_input)
{
	static const char *const bad[] = {
		"9 host\n", "0 host\n", "2 sideways\n", "", "\n", "2\n", "abc device\n",
	};
	uint64_t migs0, migs1;
	int i, r, pinned = 0;

	ASSERT_LE(0, read_actors(self->before)) TH_LOG("%s", self->before->bad);
	ASSERT_EQ(0, read_stat("migrations", &migs0)) TH_LOG("stats has no \"migrations\"");
	/* The ids the inputs name as unknown must be. */
	ASSERT_EQ(NULL, find_actor(self->before, 9)) TH_LOG("actor 9 is registered");
	ASSERT_EQ(NULL, find_actor(self->before, 0)) TH_LOG("actor 0 is registered");

	for (i = 0; i < (int)ARRAY_SIZE(bad); i++) {
		size_t len = strlen(bad[i]);

		r = migrate_write(bad[i], len);
		EXPECT_EQ(EINVAL, r) TH_LOG("migrate \"%.*s\": %s, expected EINVAL",
					    (int)strcspn(bad[i], "\n"), bad[i], err_name(r));
	}

	for (i = 0; i < self->before->n; i++) {
		const struct actor *a = &self->before->a[i];

		if (a->pinned) {
			/* Compute-dominated: stays where it was registered. */
			r = migrate_to(a->id, other_side(a->owner));
			EXPECT_EQ(EPERM, r) TH_LOG("pinned actor %u to the %s: %s, expected EPERM",
						   a->id, other_side(a->owner), err_name(r));
			pinned++;
		} else {
			r = migrate_to(a->id, a->owner);
			EXPECT_EQ(EALREADY, r) TH_LOG("actor %u to the %s, where it is: %s, "
						      "expected EALREADY", a->id, a->owner,
						      err_name(r));
		}
	}
	if (!pinned)
		note("no pinned actor registered: EPERM not exercised");

	/* Nothing above migrated anything. */
	ASSERT_LE(0, read_actors(self->after)) TH_LOG("%s", self->after->bad);
	ASSERT_EQ(self->before->n, self->after->n);
	for (i = 0; i < self->before->n; i++) {
		const struct actor *a = &self->before->a[i];
		const struct actor *b = find_actor(self->after, a->id);

		ASSERT_NE(NULL, b) TH_LOG("actor %u is gone", a->id);
		EXPECT_STREQ(a->owner, b->owner) TH_LOG("actor %u moved", a->id);
		EXPECT_EQ(a->generation, b->generation) TH_LOG("actor %u's generation", a->id);
		EXPECT_EQ(a->epoch, b->epoch) TH_LOG("actor %u's epoch", a->id);
	}
	ASSERT_EQ(0, read_stat("migrations", &migs1));
	EXPECT_EQ(migs0, migs1) TH_LOG("refused migrations were counted as done");
}

/* ---- race --------------------------------------------------------------------- */

static uint64_t total_ops(const struct worker *w, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += __atomic_load_n(&w[i].ops, __ATOMIC_RELAXED);
	return sum;
}

/*
 * Does the tail of the migrations file, `r[0..n)`, hold the last `k` of
 * `log[0..done)`? Oldest-first files end with them; newest-first ones start
 * with them in reverse. 1 (oldest first), 2 (newest first) or 0.
 */
static int match_log(const struct mig_rec *r, int n, const struct mig_log *log, int done, int k,
		     const struct mig_rec **mine)
{
	int order, j;

	for (order = 1; order <= 2; order++) {
		for (j = 0; j < k; j++) {
			const struct mig_rec *m = order == 1 ? &r[n - k + j] : &r[k - 1 - j];
			const struct mig_log *l = &log[done - k + j];

			if (m->actor != l->actor || strcmp(m->from, l->from) || strcmp(m->to, l->to))
				break;
			mine[j] = m;
		}
		if (j == k)
			return order;
	}
	return 0;
}

/* The race test (a function of its own: its locals are many). */
static void race(struct __test_metadata *_metadata, FIXTURE_DATA(migrate) *self)
{
	uint64_t size, region, slice, stat0[3], stat1[3];
	static const char *const stat_keys[3] = { "migrations", "parked", "reroutes" };
	const char *expected[MAX_ACTORS];
	int count[MAX_ACTORS] = { 0 };
	struct mig_log *log;
	const struct mig_rec **mine;
	uint64_t rng = mix64(self->seed), ops0, ops1, off, reads = 0, writes = 0;
	uint64_t verified_ios = 0, verified_bytes = 0, written = 0;
	int i, j, r, n0, n1, k, done = 0, order, pipe_mask, overlapped = 0, failed = 0;
	char mig_why[256] = "", bad[256];

	/*
	 * The actors start on the host, and the migrations are rounded up to
	 * an even number per actor, so that they end there: the host shows its
	 * live control state, the device only its last checkpoint, and the
	 * ctl_runs check below needs the live count. Every migration in between
	 * carries the count across the link.
	 */
	ASSERT_LE(0, read_actors(self->before)) TH_LOG("%s", self->before->bad);
	for (i = 0; i < self->nids; i++) {
		const struct actor *a = find_actor(self->before, self->ids[i]);

		if (a && !a->pinned && strcmp(a->owner, "host")) {
			r = migrate_to(self->ids[i], "host");
			ASSERT_EQ(0, r) TH_LOG("actor %u to the host first: %s", self->ids[i],
					       err_name(r));
		}
	}
	self->migrations = (self->migrations + 2 * self->nids - 1) / (2 * self->nids) *
			   (2 * self->nids);
	/* The actors to migrate: registered, not pinned. */
	ASSERT_LE(0, read_actors(self->before)) TH_LOG("%s", self->before->bad);
	for (i = 0; i < self->nids; i++) {
		const struct actor *a = find_actor(self->before, self->ids[i]);

		ASSERT_NE(NULL, a) TH_LOG("REFLUX_ACTORS: actor %u is not registered", self->ids[i]);
		ASSERT_EQ(0, a->pinned) TH_LOG("REFLUX_ACTORS: actor %u is pinned", a->id);
		expected[i] = strcmp(a->owner, "host") ? "device" : "host";
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, read_stat(stat_keys[i], &stat0[i]))
			TH_LOG("stats has no \"%s\"", stat_keys[i]);
	}
	n0 = read_migrations(self->recs, MIG_READ, bad, sizeof(bad));
	ASSERT_LE(0, n0) TH_LOG("%s", bad);

	/* The region and its slices: whole blocks, one slice per worker. */
	self->fd_direct = open(DEV, O_RDWR | O_DIRECT);
	ASSERT_LE(0, self->fd_direct) TH_LOG("open %s O_DIRECT: %s", DEV, strerror(errno));
	self->fd_buffered = open(DEV, O_RDONLY);
	ASSERT_LE(0, self->fd_buffered) TH_LOG("open %s: %s", DEV, strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd_direct, BLKGETSIZE64, &size));
	region = size < REGION_MAX ? size : REGION_MAX;
	slice = region / self->threads / LBS * LBS;
	ASSERT_LE(LBS, slice) TH_LOG("%llu bytes is too small for %d threads",
				     (unsigned long long)size, self->threads);
	region = slice * self->threads;
	note("migrate: seed %#llx, migrations %d, actors %s, threads %d, region %llu of %llu bytes",
	     (unsigned long long)self->seed, self->migrations, self->ids_text, self->threads,
	     (unsigned long long)region, (unsigned long long)size);

	self->workers = calloc(self->threads, sizeof(*self->workers));
	self->blocks = calloc(region / LBS, sizeof(*self->blocks));
	ASSERT_TRUE(self->workers && self->blocks);
	ASSERT_EQ(0, posix_memalign((void **)&self->bufs, LBS,
				    (size_t)self->threads * (MAX_IO + LBS)));
	log = self->log = calloc(self->migrations, sizeof(*log));
	mine = self->mine = calloc(MIG_KEPT, sizeof(*mine));
	ASSERT_TRUE(log && mine);

	for (i = 0; i < self->threads; i++) {
		struct worker *w = &self->workers[i];

		w->idx = i;
		w->fd = self->fd_direct;
		w->base = i * slice;
		w->len = slice;
		w->blocks = self->blocks + i * (slice / LBS);
		w->rng = mix64(self->seed + i + 1) | 1;
		w->buf = self->bufs + (size_t)i * (MAX_IO + LBS);
		w->scratch = w->buf + MAX_IO;
		ASSERT_EQ(0, pthread_create(&w->tid, NULL, worker_main, w));
	}
	/* The race starts once every slice holds known data. */
	while (__atomic_load_n(&ready_count, __ATOMIC_ACQUIRE) < self->threads)
		usleep(1000);

	ops0 = total_ops(self->workers, self->threads);
	for (done = 0; done < self->migrations && !stopping(); done++) {
		int ai = done % self->nids;
		unsigned int id = self->ids[ai];
		const struct actor *a;
		uint64_t t0, ios0;

		/* No ASSERT until the workers are joined: record and stop instead. */
		if (read_actors(self->after) < 0) {
			snprintf(mig_why, sizeof(mig_why), "%s", self->after->bad);
			break;
		}
		a = find_actor(self->after, id);
		if (!a || strcmp(a->owner, expected[ai]) || a->epoch % 2) {
			snprintf(mig_why, sizeof(mig_why), "before migration %d: actor %u %s", done,
				 id, !a ? "is gone" : a->epoch % 2 ? "has an odd epoch" :
				 "is not where its last migration put it");
			break;
		}
		log[done].actor = id;
		log[done].from = expected[ai];
		log[done].to = other_side(expected[ai]);
		ios0 = total_ops(self->workers, self->threads);
		t0 = now_ns();
		r = migrate_to(id, log[done].to);
		log[done].elapsed_ns = now_ns() - t0;
		log[done].ios = total_ops(self->workers, self->threads) - ios0;
		if (r) {
			snprintf(mig_why, sizeof(mig_why), "migration %d, actor %u from the %s to the "
				 "%s: %s (errno %d)", done, id, log[done].from, log[done].to,
				 err_name(r), r);
			break;
		}
		overlapped += log[done].ios > 0;
		expected[ai] = log[done].to;
		count[ai]++;
		usleep(xorshift(&rng) % 5001);
	}
	ops1 = total_ops(self->workers, self->threads);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (i = 0; i < self->threads; i++)
		pthread_join(self->workers[i].tid, NULL);

	for (i = 0; i < self->threads; i++) {
		struct worker *w = &self->workers[i];

		if (w->failed) {
			TH_LOG("thread %d: %s", i, w->err);
			failed++;
		}
		reads += w->reads;
		writes += w->writes;
		written += w->written;
		verified_ios += w->reads;
		verified_bytes += w->verified;
	}
	ASSERT_EQ(0, failed) TH_LOG("I/O failed or read wrong data during the migrations");
	ASSERT_EQ(0, mig_why[0]) TH_LOG("%s", mig_why);
	ASSERT_EQ(self->migrations, done);
	/* The migrations raced with I/O, or this test showed nothing about the race. */
	ASSERT_LT(ops0, ops1) TH_LOG("no I/O completed while the actors migrated");
	note("race: %llu writes (%llu bytes) and %llu verified reads during the migrations; "
	     "%d of %d migrations saw I/O complete while they ran", (unsigned long long)writes,
	     (unsigned long long)written, (unsigned long long)reads, overlapped, done);

	/* Quiescent: every block once more, O_DIRECT. */
	for (i = 0; i < self->threads; i++) {
		struct worker *w = &self->workers[i];

		for (off = w->base; off < w->base + w->len; off += MAX_IO) {
			size_t len = w->base + w->len - off < MAX_IO ? w->base + w->len - off : MAX_IO;

			ASSERT_EQ(0, verify_range(w, self->fd_direct, w->buf, w->scratch, off, len,
						  w->err, sizeof(w->err)))
				TH_LOG("after the migrations, O_DIRECT: %s", w->err);
			verified_ios++;
			verified_bytes += len;
		}
	}

	/*
	 * The counters, while nothing is in flight: before the buffered pass
	 * below, whose readahead may still be running when its reads return.
	 */
	ASSERT_LE(0, read_actors(self->after)) TH_LOG("%s", self->after->bad);
	ASSERT_EQ(self->before->n, self->after->n) TH_LOG("actors appeared or went");
	for (i = 0; i < self->after->n; i++) {
		const struct actor *b = &self->after->a[i];
		const struct actor *a = find_actor(self->before, b->id);
		int migrated = -1;

		ASSERT_NE(NULL, a) TH_LOG("actor %u appeared", b->id);
		/*
		 * A lost or replayed checkpoint leaves the control state's count
		 * behind or ahead. Only the host's count is live: for an actor on
		 * the device the file shows its last checkpoint.
		 */
		if (!strcmp(b->owner, "host"))
			EXPECT_EQ(b->invocations, b->ctl_runs)
			TH_LOG("actor %u (%s): ctl_runs %llu, invocations %llu", b->id, b->kind,
			       (unsigned long long)b->ctl_runs, (unsigned long long)b->invocations);
		EXPECT_EQ(0, b->epoch % 2) TH_LOG("actor %u: odd epoch %llu with no migration running",
						  b->id, (unsigned long long)b->epoch);
		for (j = 0; j < self->nids; j++)
			if (self->ids[j] == b->id)
				migrated = j;
		if (migrated < 0) {
			EXPECT_EQ(a->generation, b->generation)
				TH_LOG("actor %u was not migrated but its generation moved", b->id);
			EXPECT_STREQ(a->owner, b->owner)
				TH_LOG("actor %u was not migrated but moved", b->id);
			continue;
		}
		EXPECT_EQ(a->generation + count[migrated], b->generation)
			TH_LOG("actor %u: generation %llu -> %llu after %d migrations", b->id,
			       (unsigned long long)a->generation, (unsigned long long)b->generation,
			       count[migrated]);
		/* Each migration takes the epoch e -> e + 1 (migrating) -> e + 2 (proto/checkpoint.rs). */
		EXPECT_EQ(a->epoch + 2ULL * count[migrated], b->epoch)
			TH_LOG("actor %u: epoch %llu -> %llu after %d migrations", b->id,
			       (unsigned long long)a->epoch, (unsigned long long)b->epoch,
			       count[migrated]);
		EXPECT_STREQ(expected[migrated], b->owner)
			TH_LOG("actor %u is on the %s, its last migration was to the %s", b->id,
			       b->owner, expected[migrated]);
	}
	pipe_mask = pipeline_actors();
	for (j = 0; j < self->nids; j++) {
		const struct actor *a = find_actor(self->before, self->ids[j]);
		const struct actor *b = find_actor(self->after, self->ids[j]);
		uint64_t ran = b->invocations - a->invocations;

		note("actor %u (%s): %d migrations, ran %llu blocks, now on the %s", b->id, b->kind,
		     count[j], (unsigned long long)ran, b->owner);
		/* An actor of the pipeline that ran nothing: the race did not exercise it. */
		if (pipe_mask > 0 && (pipe_mask >> b->id & 1)) {
			EXPECT_LT(0, ran) TH_LOG("actor %u is in the pipeline but ran no block",
						 b->id);
		}
	}
	if (pipe_mask < 0)
		note("the pipeline is unknown (" PARAMS " unreadable): not checking that the actors ran");
	else if (!(pipe_mask & ~1))
		note("the pipeline runs no actor: only the migrations and the data were checked");

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, read_stat(stat_keys[i], &stat1[i]));
	}
	EXPECT_EQ(stat0[0] + done, stat1[0])
		TH_LOG("stats: migrations %llu -> %llu after %d", (unsigned long long)stat0[0],
		       (unsigned long long)stat1[0], done);
	note("stats: migrations +%llu, parked +%llu, reroutes +%llu",
	     (unsigned long long)(stat1[0] - stat0[0]), (unsigned long long)(stat1[1] - stat0[1]),
	     (unsigned long long)(stat1[2] - stat0[2]));

	/* The migrations file: its last lines are this test's, each with a time. */
	n1 = read_migrations(self->recs, MIG_READ, bad, sizeof(bad));
	ASSERT_LE(0, n1) TH_LOG("%s", bad);
	k = done < MIG_KEPT ? done : MIG_KEPT;
	ASSERT_EQ(n0 + done < MIG_KEPT ? n0 + done : MIG_KEPT, n1)
		TH_LOG("migrations: %d lines before, %d after %d migrations (keeps the last %d)", n0,
		       n1, done, MIG_KEPT);
	order = match_log(self->recs, n1, log, done, k, mine);
	ASSERT_NE(0, order) TH_LOG("migrations: the last %d lines are not this test's migrations", k);
	{
		uint64_t tot[MIG_KEPT], ph[4][MIG_KEPT], el[MIG_KEPT];
		static const char *const ph_names[4] = { "drain", "ckpt", "handover", "rebuild" };

		for (j = 0; j < k; j++) {
			const struct mig_log *l = &log[done - k + j];

			/* Synchronous: the whole migration happened inside the write. */
			EXPECT_LT(0, mine[j]->total) TH_LOG("migration of actor %u: total_ns 0", l->actor);
			EXPECT_GE(l->elapsed_ns, mine[j]->total)
				TH_LOG("migration of actor %u: total_ns %llu, but the write took %llu ns",
				       l->actor, (unsigned long long)mine[j]->total,
				       (unsigned long long)l->elapsed_ns);
			tot[j] = mine[j]->total;
			ph[0][j] = mine[j]->drain;
			ph[1][j] = mine[j]->ckpt;
			ph[2][j] = mine[j]->handover;
			ph[3][j] = mine[j]->rebuild;
			el[j] = l->elapsed_ns;
		}
		qsort(tot, k, sizeof(tot[0]), cmp_u64);
		qsort(el, k, sizeof(el[0]), cmp_u64);
		note("migration total_ns over the last %d (%s first): min %llu median %llu p99 %llu "
		     "max %llu; the write, median %llu", k, order == 1 ? "oldest" : "newest",
		     (unsigned long long)tot[0], (unsigned long long)pct(tot, k, 50),
		     (unsigned long long)pct(tot, k, 99), (unsigned long long)tot[k - 1],
		     (unsigned long long)pct(el, k, 50));
		for (i = 0; i < 4; i++)
			qsort(ph[i], k, sizeof(ph[i][0]), cmp_u64);
		note("migration phase medians: %s_ns %llu %s_ns %llu %s_ns %llu %s_ns %llu",
		     ph_names[0], (unsigned long long)pct(ph[0], k, 50),
		     ph_names[1], (unsigned long long)pct(ph[1], k, 50),
		     ph_names[2], (unsigned long long)pct(ph[2], k, 50),
		     ph_names[3], (unsigned long long)pct(ph[3], k, 50));
	}

	/*
	 * Every block once more through the page cache, emptied first so that
	 * the reads reach the device.
	 */
	ASSERT_EQ(0, ioctl(self->fd_buffered, BLKFLSBUF, 0)) TH_LOG("BLKFLSBUF: %s", strerror(errno));
	for (i = 0; i < self->threads; i++) {
		struct worker *w = &self->workers[i];

		for (off = w->base; off < w->base + w->len; off += MAX_IO) {
			size_t len = w->base + w->len - off < MAX_IO ? w->base + w->len - off : MAX_IO;

			ASSERT_EQ(0, verify_range(w, self->fd_buffered, w->buf, w->scratch, off, len,
						  w->err, sizeof(w->err)))
				TH_LOG("after the migrations, buffered: %s", w->err);
			verified_ios++;
			verified_bytes += len;
		}
	}

	note("migrate: %d migrations, %llu I/Os verified, %llu bytes", done,
	     (unsigned long long)verified_ios, (unsigned long long)verified_bytes);
}

/*
 * GCC 12 warns that the harness's wrapper keeps a local (its fork()'s pid)
 * across its setjmp() (-Wclobbered), for this test and not the other,
 * depending on its register allocation; the warning is the harness's.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclobbered"
TEST_F_TIMEOUT(migrate, race, 900)
{
	race(_metadata, self);
}
#pragma GCC diagnostic pop

TEST_HARNESS_MAIN
