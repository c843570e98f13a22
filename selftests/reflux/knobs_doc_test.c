// SPDX-License-Identifier: GPL-2.0
/*
 * knobs_doc_test: an adversarial black-box test of reflux's configfs
 * attachment attributes and debugfs knobs.
 *
 * Written from Documentation/reflux.rst ALONE, by someone who did not read
 * the implementation (drivers/, tools/testing/, rust/) nor the other tests.
 * Sections used:
 *   - "Configuration / Pipelines attached to byte ranges (configfs)": the
 *     attributes device, start, length, pipeline, checksum, enable, their
 *     values and the errno of every refusal;
 *   - "Migration: drain and switch", its "Interfaces" list: the debugfs files
 *     actors, migrate, migrations, migrate_stop;
 *   - "Statistics and test hooks": stats, corrupt_lba, peek_lba, peek;
 *   - "The page cache ..." and "The sleep/poll switch": the stats keys they
 *     name; "Module lifetime" and "What is tested" (reflux.attach);
 * and the generic semantics of configfs and debugfs files.  reflux has no
 * header under include/uapi.  Where the document is silent the test
 * expects what a kernel engineer would, and says so in its diagnostics.
 *
 * Runs as root in the VM with reflux (default parameters) and reflux_dev
 * loaded.  TAP output, fixed plan.  It leaves the system as it found it:
 * every configfs directory it creates is removed, every knob restored, the
 * scratch region of /dev/reflux0 (its last 2 MiB) written back.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long u64;
typedef unsigned __int128 u128;

#ifndef KD_PREFIX
#define KD_PREFIX ""
#endif
#define CFS_MNT KD_PREFIX "/sys/kernel/config"
#define CROOT KD_PREFIX "/sys/kernel/config/reflux"
#define DBG_MNT KD_PREFIX "/sys/kernel/debug"
#define DBG KD_PREFIX "/sys/kernel/debug/reflux0"
#define DEV KD_PREFIX "/dev/reflux0"
#define KMSG KD_PREFIX "/dev/kmsg"

#define KB 1024ULL
#define MB (1024 * KB)
#define CH (128 * KB)		/* the documented alignment of start/length */
#define BLK 4096ULL		/* the disk's block: "a page is a block, 4 KiB" */
#define NACT 16
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define CONFIGFS_MAGIC_ 0x62656570
#define DEBUGFS_MAGIC_ 0x64626720

/* ------------------------------------------------------------------ TAP */

static char diag[32768];
static size_t dlen;
static pthread_mutex_t dmu = PTHREAD_MUTEX_INITIALIZER;
static volatile int cur;

static void dg(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	pthread_mutex_lock(&dmu);
	if (dlen + strlen(line) + 4 < sizeof(diag))
		dlen += sprintf(diag + dlen, "# %s\n", line);
	pthread_mutex_unlock(&dmu);
}

static const char *en(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";
	return s ? s : "E?";
}

/* A printable copy of a written value for diagnostics. */
static const char *esc(const char *s, size_t n, char *o, size_t cap)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 12 < cap; i++) {
		unsigned char c = s[i];

		if (i == 40 && n > 48) {
			k += snprintf(o + k, cap - k, "...(%zu bytes)", n);
			break;
		}
		if (c == '\n')
			k += snprintf(o + k, cap - k, "\\n");
		else if (c == '\t')
			k += snprintf(o + k, cap - k, "\\t");
		else if (c < 32 || c > 126)
			k += snprintf(o + k, cap - k, "\\x%02x", c);
		else
			o[k++] = c;
	}
	o[k] = 0;
	return o;
}
#define ESC(s) esc((s), strlen(s), (char[160]){0}, 160)
#define ESCN(s, n) esc((s), (n), (char[160]){0}, 160)

/* ------------------------------------------------------------ file I/O */

static long wr_fd(int fd, const void *b, size_t n)
{
	ssize_t r = write(fd, b, n);

	return r < 0 ? -errno : r;
}

static long wr(const char *p, const void *b, size_t n)
{
	int fd = open(p, O_WRONLY);
	long r;

	if (fd < 0)
		return -errno;
	r = wr_fd(fd, b, n);
	close(fd);
	return r;
}

static long ws(const char *p, const char *s)
{
	return wr(p, s, strlen(s));
}

static long rd_fd(int fd, char *b, size_t cap)
{
	size_t k = 0;

	while (k + 1 < cap) {
		ssize_t r = read(fd, b + k, cap - 1 - k);

		if (r < 0) {
			b[k] = 0;
			return -errno;
		}
		if (r == 0)
			break;
		k += r;
	}
	b[k] = 0;
	return k;
}

static long rd(const char *p, char *b, size_t cap)
{
	int fd = open(p, O_RDONLY);
	long r;

	b[0] = 0;
	if (fd < 0)
		return -errno;
	r = rd_fd(fd, b, cap);
	close(fd);
	return r;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

static int in_set(int e, const int *set)
{
	for (; *set; set++)
		if (*set == e)
			return 1;
	return 0;
}

static const char *set_names(const int *set, char *o, size_t cap)
{
	size_t k = 0;

	o[0] = 0;
	for (; *set && k + 20 < cap; set++)
		k += snprintf(o + k, cap - k, "%s%s", k ? "|" : "", en(*set));
	return o;
}
#define SETN(s) set_names((s), (char[96]){0}, 96)

static const int E_INVAL[] = { EINVAL, 0 };
static const int E_INVAL_RANGE[] = { EINVAL, ERANGE, 0 };
static const int E_RANGE[] = { ERANGE, 0 };
static const int E_RANGE_INVAL[] = { ERANGE, EINVAL, 0 };
static const int E_RANGE_BUSY[] = { ERANGE, EBUSY, 0 };
static const int E_RANGE_INVAL_BUSY[] = { ERANGE, EINVAL, EBUSY, 0 };
static const int E_BUSY[] = { EBUSY, 0 };
static const int E_FAULT[] = { EFAULT, 0 };

/*
 * Parse a value read back (or written): decimal or 0x hex, an optional
 * K/M/G suffix, trailing whitespace.  Returns 0, or -1 if malformed or
 * beyond u64.
 */
static int rb_parse(const char *s, u64 *v)
{
	u128 x = 0;
	int base = 10, any = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++) {
		int d;

		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower(*s) - 'a' + 10;
		else
			break;
		x = x * base + d;
		any = 1;
		if (x >> 64)
			return -1;
	}
	if (!any)
		return -1;
	switch (*s) {
	case 'k': case 'K': x <<= 10; s++; break;
	case 'm': case 'M': x <<= 20; s++; break;
	case 'g': case 'G': x <<= 30; s++; break;
	}
	if (x >> 64)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return -1;
	*v = (u64)x;
	return 0;
}

static void u128s(char *o, u128 v)
{
	char t[48];
	int i = 0, k = 0;

	do {
		t[i++] = '0' + (int)(v % 10);
		v /= 10;
	} while (v);
	while (i)
		o[k++] = t[--i];
	o[k] = 0;
}

/* ------------------------------------------------------ configfs paths */

static char trk[128][80];
static int ntrk;
static pthread_mutex_t tmu = PTHREAD_MUTEX_INITIALIZER;

static void track(const char *d)
{
	int i;

	pthread_mutex_lock(&tmu);
	for (i = 0; i < ntrk; i++)
		if (!strcmp(trk[i], d))
			break;
	if (i == ntrk && ntrk < 128)
		snprintf(trk[ntrk++], 80, "%s", d);
	pthread_mutex_unlock(&tmu);
}

static void untrack(const char *d)
{
	int i;

	pthread_mutex_lock(&tmu);
	for (i = 0; i < ntrk; i++)
		if (!strcmp(trk[i], d)) {
			memmove(trk[i], trk[i + 1], (ntrk - i - 1) * 80);
			ntrk--;
			break;
		}
	pthread_mutex_unlock(&tmu);
}

static void nm(char *o, const char *tag)
{
	snprintf(o, 80, "kd%d_%s", (int)getpid(), tag);
}

static void dp(char *o, const char *d)
{
	snprintf(o, 512, "%s/%.200s", CROOT, d);
}

static void ap(char *o, const char *d, const char *attr)
{
	snprintf(o, 512, "%s/%.200s/%.64s", CROOT, d, attr);
}

static int mk(char *o, const char *tag)
{
	char p[512];

	nm(o, tag);
	dp(p, o);
	if (mkdir(p, 0755)) {
		int e = errno;

		dg("mkdir %s: %s", p, en(e));
		return -e;
	}
	track(o);
	return 0;
}

static int rmd(const char *d)
{
	char p[512];

	dp(p, d);
	if (rmdir(p))
		return -errno;
	untrack(d);
	return 0;
}

static long aset(const char *d, const char *attr, const char *v)
{
	char p[512];

	ap(p, d, attr);
	return ws(p, v);
}

static int aget(const char *d, const char *attr, char *o, size_t n)
{
	char p[512];
	long r;

	ap(p, d, attr);
	r = rd(p, o, n);
	if (r < 0)
		return r;
	chomp(o);
	return 0;
}

static long enable(const char *d, int on)
{
	long r = aset(d, "enable", on ? "1\n" : "0\n");

	return r < 0 ? r : 0;
}

/* 1 enabled, 0 not, -1 unreadable.  Accepts 1/Y/y as true. */
static int enabled(const char *d)
{
	char b[64];

	if (aget(d, "enable", b, sizeof(b)))
		return -1;
	return b[0] == '1' || b[0] == 'Y' || b[0] == 'y';
}

static int cfg(const char *d, u64 st, u64 len, const char *pipe, int cs)
{
	const char *attr[5] = { "device", "start", "length", "pipeline", "checksum" };
	char v[5][48];
	int i;

	snprintf(v[0], 48, "reflux0\n");
	snprintf(v[1], 48, "%llu\n", st);
	snprintf(v[2], 48, "%llu\n", len);
	snprintf(v[3], 48, "%s\n", pipe ? pipe : "");
	snprintf(v[4], 48, "%d\n", cs);
	for (i = 0; i < 5; i++) {
		long r;

		if ((i == 3 && !pipe) || (i == 4 && cs < 0))
			continue;
		r = aset(d, attr[i], v[i]);
		if (r != (long)strlen(v[i])) {
			dg("configuring %s: %s <- \"%s\": %s", d, attr[i], ESC(v[i]),
			   r < 0 ? en(-r) : "short write");
			return r < 0 ? (int)r : -EIO;
		}
	}
	return 0;
}

/* ------------------------------------------------------- debugfs paths */

static void dbp(char *o, const char *f)
{
	snprintf(o, 512, "%s/%s", DBG, f);
}

static long dset(const char *f, const char *v)
{
	char p[512];

	dbp(p, f);
	return ws(p, v);
}

static long dget(const char *f, char *o, size_t n)
{
	char p[512];

	dbp(p, f);
	return rd(p, o, n);
}

static int dget_num(const char *f, long long *v)
{
	char b[256], *end;
	long long x;

	if (dget(f, b, sizeof(b)) < 0)
		return -1;
	chomp(b);
	errno = 0;
	x = strtoll(b, &end, 0);
	if (end == b || *end || errno)
		return -1;
	*v = x;
	return 0;
}

/* ------------------------------------------------------------ actors */

struct actor {
	int seen, owner;	/* owner: 1 host, 2 device, 0 unknown */
	long long epoch, gen;
};

static int owner_of(const char *t)
{
	if (!strcasecmp(t, "host"))
		return 1;
	if (!strcasecmp(t, "device") || !strcasecmp(t, "dev"))
		return 2;
	return 0;
}

static const char *side(int o)
{
	return o == 1 ? "host" : o == 2 ? "device" : "?";
}

static int tokfind(char **t, int n, const char *k)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcasecmp(t[i], k))
			return i;
	return -1;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The actor a line is about: its first token, or the token after "actor"/"id". */
static int line_id(char **t, int n)
{
	int i;

	if (n && all_digits(t[0]))
		return atoi(t[0]);
	if (n && !strncasecmp(t[0], "actor", 5) && all_digits(t[0] + 5))
		return atoi(t[0] + 5);
	for (i = 0; i + 1 < n; i++)
		if ((!strcasecmp(t[i], "actor") || !strcasecmp(t[i], "id")) &&
		    all_digits(t[i + 1]))
			return atoi(t[i + 1]);
	return -1;
}

static long long after(char **t, int n, const char *k, const char *k2)
{
	int i = tokfind(t, n, k);

	if (i < 0 && k2)
		i = tokfind(t, n, k2);
	if (i < 0 || i + 1 >= n)
		return -1;
	return strtoll(t[i + 1], NULL, 0);
}

static void row_apply(struct actor *a, char **t, int n, const int *col)
{
	if (col[0] < n)
		a->owner = owner_of(t[col[0]]);
	if (col[1] >= 0 && col[1] < n)
		a->epoch = strtoll(t[col[1]], NULL, 0);
	if (col[2] >= 0 && col[2] < n)
		a->gen = strtoll(t[col[2]], NULL, 0);
	a->seen = 1;
}

static void kv_apply(struct actor *a, char **t, int n)
{
	int io = tokfind(t, n, "owner");
	long long v;

	if (io >= 0 && io + 1 < n)
		a->owner = owner_of(t[io + 1]);
	if ((v = after(t, n, "epoch", NULL)) >= 0)
		a->epoch = v;
	if ((v = after(t, n, "generation", "gen")) >= 0)
		a->gen = v;
	a->seen = 1;
}

/*
 * The document names the columns of "actors" (owner, epoch, generation,
 * ctl_runs, invocations, pinned) but not its layout: accept a header row
 * with data rows, "key value"/"key=value" pairs on the actor's line, or an
 * "actor N" line followed by its pairs.
 */
static int parse_actors(const char *txt, struct actor *a)
{
	char buf[16384], *save = NULL, *line;
	int col[4] = { -1, -1, -1, -1 }, curid = -1;

	memset(a, 0, sizeof(*a) * NACT);
	for (curid = 0; curid < NACT; curid++)
		a[curid].epoch = a[curid].gen = -1;
	curid = -1;
	snprintf(buf, sizeof(buf), "%s", txt);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *t[48], *p, *s2 = NULL;
		int n = 0, io, id;

		for (p = line; *p; p++)
			if (strchr("=:,|[]()", *p))
				*p = ' ';
		for (p = strtok_r(line, " \t", &s2); p && n < 48; p = strtok_r(NULL, " \t", &s2))
			t[n++] = p;
		if (!n)
			continue;
		io = tokfind(t, n, "owner");
		if (io >= 0 && (io + 1 >= n || !owner_of(t[io + 1]))) {
			col[0] = io;
			col[1] = tokfind(t, n, "epoch");
			col[2] = tokfind(t, n, "generation");
			if (col[2] < 0)
				col[2] = tokfind(t, n, "gen");
			col[3] = tokfind(t, n, "actor") >= 0 ? tokfind(t, n, "actor") : tokfind(t, n, "id");
			continue;
		}
		id = (col[0] >= 0 && col[3] > 0 && col[3] < n && io < 0) ?
			atoi(t[col[3]]) : line_id(t, n);
		if (id >= 0)
			curid = id;
		if (curid < 1 || curid >= NACT)
			continue;
		if (col[0] >= 0 && io < 0 && id >= 0)
			row_apply(&a[curid], t, n, col);
		else
			kv_apply(&a[curid], t, n);
	}
	return 0;
}

static int read_actors(struct actor *a, char *txt, size_t cap)
{
	char local[16384];

	if (!txt) {
		txt = local;
		cap = sizeof(local);
	}
	if (dget("actors", txt, cap) < 0)
		return -1;
	parse_actors(txt, a);
	return a[1].seen && a[2].seen && a[3].seen && a[1].owner && a[2].owner && a[3].owner ? 0 : -1;
}

static void dg_text(const char *what, const char *txt)
{
	char b[4096], *s = NULL, *l;
	int n = 0;

	snprintf(b, sizeof(b), "%s", txt);
	dg("%s:", what);
	for (l = strtok_r(b, "\n", &s); l && n < 12; l = strtok_r(NULL, "\n", &s), n++)
		dg("  | %s", l);
}

/* ----------------------------------------------------- global state */

static int cfs_ok, dbg_ok, dev_ok, a_ok, mounted_cfs, mounted_dbg;
static u64 devsz, E, nblocks;
static char A[80], Bd[80], Cd[80];
static char pre_names[64][256];
static int npre, pre_enabled;
static long long mstop_orig = -1;
static long long peek_orig = -1;
static struct actor act_orig[NACT];
static int act_orig_ok;
static unsigned char *saved;		/* [E - 2 MiB, E) */
static unsigned char *saved_alias;	/* the block lbaA would be in 512-byte units */
static int saved_ok, data_restored;
static int kmsg_fd = -1;
static long mig_lines_before = -1;
static struct actor act_before_mig[NACT];

static u64 slot(int i)
{
	return E - 4 * MB + (u64)i * CH;
}

#define IO_OFF (E - 1 * MB)
#define BLKA_OFF (E - 2 * MB)
#define BLKB_OFF (E - 2 * MB + BLK)
#define SAVE_OFF (E - 2 * MB)
#define SAVE_LEN (2 * MB)

static int need(int cond, const char *what)
{
	if (!cond)
		dg("precondition failed: %s (see the environment check)", what);
	return cond;
}

/* ------------------------------------------------------ device data */

static void *abuf(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n))
		return NULL;
	memset(p, 0, n);
	return p;
}

static int dev_rw(int w, void *b, size_t n, u64 off)
{
	int fd = open(DEV, O_RDWR | O_DIRECT);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = w ? pwrite(fd, b, n, off) : pread(fd, b, n, off);
	if (r < 0)
		r = -errno;
	close(fd);
	return r == (ssize_t)n ? 0 : (r < 0 ? (int)r : -EIO);
}

static void pattern(unsigned char *b, char which)
{
	int i;

	for (i = 0; i < (int)BLK; i++)
		b[i] = (unsigned char)(i * 31 + 7 + which);
	memcpy(b, which == 'A' ? "KDocA!7q" : "KDocB!8r", 8);
}

/* ----------------------------------------------------------- I/O thread */

static struct {
	pthread_t th;
	int running;
	volatile int stop;
	volatile long ops, errs, mism;
	int e1;
	char m1[200];
} io;

static void io_fill(u64 *w, u64 gen, int b)
{
	int i;

	for (i = 0; i < (int)(BLK / 8); i++)
		w[i] = (gen << 32) ^ ((u64)b << 16) ^ (u64)i ^ 0x5a5a000000000000ULL;
}

static void *io_fn(void *x)
{
	int fd = open(DEV, O_RDWR | O_DIRECT);
	u64 *w = abuf(BLK), *r = abuf(BLK), gen;

	if (fd < 0 || !w || !r) {
		io.errs++;
		io.e1 = fd < 0 ? errno : ENOMEM;
		return NULL;
	}
	for (gen = 1; !io.stop; gen++) {
		int b;

		for (b = 0; b < 8 && !io.stop; b++) {
			u64 off = IO_OFF + b * BLK;

			io_fill(w, gen, b);
			if (pwrite(fd, w, BLK, off) != (ssize_t)BLK ||
			    pread(fd, r, BLK, off) != (ssize_t)BLK) {
				if (!io.errs++)
					io.e1 = errno;
				continue;
			}
			if (memcmp(w, r, BLK) && !io.mism++)
				snprintf(io.m1, sizeof(io.m1),
					 "block at %llu gen %llu: read word0 %016llx, wrote %016llx",
					 off, gen, r[0], w[0]);
			io.ops++;
		}
	}
	close(fd);
	free(w);
	free(r);
	return NULL;
}

static int io_start(void)
{
	if (io.running)
		return 0;
	io.stop = 0;
	if (pthread_create(&io.th, NULL, io_fn, NULL))
		return -1;
	io.running = 1;
	return 0;
}

static void io_stop(void)
{
	if (!io.running)
		return;
	io.stop = 1;
	pthread_join(io.th, NULL);
	io.running = 0;
}

/* --------------------------------------------------------- cleanup */

static void cleanup_cfs(void)
{
	char d[128][80];
	int i, n;

	pthread_mutex_lock(&tmu);
	n = ntrk;
	memcpy(d, trk, sizeof(trk));
	pthread_mutex_unlock(&tmu);
	for (i = n - 1; i >= 0; i--) {
		char p[512];

		enable(d[i], 0);
		dp(p, d[i]);
		if (!rmdir(p) || errno == ENOENT)
			untrack(d[i]);
	}
}

static void restore_knobs(void)
{
	struct actor now[NACT];
	char v[64];
	int i;

	if (act_orig_ok && !read_actors(now, NULL, 0)) {
		for (i = 1; i < 4; i++) {
			if (now[i].owner == act_orig[i].owner)
				continue;
			dset("migrate_stop", "0\n");
			snprintf(v, sizeof(v), "%d %s\n", i, side(act_orig[i].owner));
			dset("migrate", v);
		}
	}
	if (mstop_orig >= 0) {
		snprintf(v, sizeof(v), "%lld\n", mstop_orig);
		dset("migrate_stop", v);
	}
	if (peek_orig >= 0) {
		snprintf(v, sizeof(v), "%lld\n", peek_orig);
		dset("peek_lba", v);
	}
}

static int restore_data(void)
{
	int r1, r2 = 0;

	if (!saved_ok || data_restored)
		return 0;
	r1 = dev_rw(1, saved, SAVE_LEN, SAVE_OFF);
	if (saved_alias)
		r2 = dev_rw(1, saved_alias, BLK, (BLKA_OFF / BLK) * 512);
	if (!r1 && !r2)
		data_restored = 1;
	return r1 ? r1 : r2;
}

static void cleanup_all(void)
{
	io_stop();
	cleanup_cfs();
	restore_knobs();
	restore_data();
}

/* ------------------------------------------------ generic value checks */

/* Each value must be refused with an errno in errs and change nothing. */
static int refuse_each(const char *path, const char *const *v, int n, const int *errs,
		       const char *doc)
{
	char before[4096], after[4096];
	int i, ok = 1;

	if (rd(path, before, sizeof(before)) < 0) {
		dg("cannot read %s: %s", path, en(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		long r = ws(path, v[i]);

		if (r >= 0) {
			dg("wrote \"%s\" to %s: accepted (returned %ld); expected %s (%s)",
			   ESC(v[i]), path, r, SETN(errs), doc);
			ok = 0;
		} else if (!in_set(-r, errs)) {
			dg("wrote \"%s\" to %s: %s; expected %s (%s)", ESC(v[i]), path,
			   en(-r), SETN(errs), doc);
			ok = 0;
		}
		rd(path, after, sizeof(after));
		if (strcmp(before, after)) {
			dg("after \"%s\" %s reads \"%s\", was \"%s\": a refused write changed it",
			   ESC(v[i]), path, ESC(after), ESC(before));
			ok = 0;
			ws(path, before);
		}
	}
	return ok;
}

struct vv {
	const char *s;
	u64 want;
};

/* Each value must be accepted whole and read back as the number wanted. */
static int accept_each(const char *path, const struct vv *v, int n)
{
	char b[4096];
	int i, ok = 1;

	for (i = 0; i < n; i++) {
		long r = ws(path, v[i].s);
		u64 got;

		if (r != (long)strlen(v[i].s)) {
			dg("wrote \"%s\" to %s: %s%ld; expected it accepted", ESC(v[i].s), path,
			   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r);
			ok = 0;
			continue;
		}
		rd(path, b, sizeof(b));
		chomp(b);
		if (rb_parse(b, &got) || got != v[i].want) {
			dg("wrote \"%s\" to %s: reads back \"%s\", expected %llu", ESC(v[i].s), path,
			   ESC(b), v[i].want);
			ok = 0;
		}
	}
	return ok;
}

#define MUST_REFUSE (~0ULL)
struct uv {
	const char *s;
	size_t n;
	u64 want;		/* MUST_REFUSE: no reading of it is acceptable */
};

/* Undocumented forms: refused with errs and no change, or taken exactly. */
static int refuse_or_exact(const char *path, const struct uv *v, int n, const int *errs)
{
	char before[4096], after[4096];
	int i, ok = 1;

	if (rd(path, before, sizeof(before)) < 0) {
		dg("cannot read %s: %s", path, en(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		long r = wr(path, v[i].s, v[i].n);
		u64 got = 0;

		rd(path, after, sizeof(after));
		if (r < 0) {
			if (!in_set(-r, errs)) {
				dg("\"%s\": %s; expected a clean refusal (%s) or acceptance",
				   ESCN(v[i].s, v[i].n), en(-r), SETN(errs));
				ok = 0;
			}
			if (strcmp(before, after)) {
				dg("\"%s\" refused but the value changed to \"%s\"",
				   ESCN(v[i].s, v[i].n), ESC(after));
				ok = 0;
			}
			continue;
		}
		chomp(after);
		if (v[i].want == MUST_REFUSE || r != (long)v[i].n || rb_parse(after, &got) ||
		    got != v[i].want) {
			char w[32];

			snprintf(w, sizeof(w), "%llu", v[i].want);
			dg("\"%s\": accepted (returned %ld) and reads \"%s\"; the doc is silent on this form, so only a refusal or exactly %s is acceptable",
			   ESCN(v[i].s, v[i].n), r, ESC(after),
			   v[i].want == MUST_REFUSE ? "a refusal (it is not a valid value read in decimal)" : w);
			ok = 0;
		} else {
			dg("note: \"%s\" accepted as %llu (doc silent)", ESCN(v[i].s, v[i].n), got);
		}
		ws(path, before);
	}
	return ok;
}

static int read_num(const char *path, u64 *v)
{
	char b[4096];

	if (rd(path, b, sizeof(b)) < 0)
		return -1;
	chomp(b);
	return rb_parse(b, v);
}

/* ------------------------------------------------------- environment */

static int fs_magic(const char *p, long magic)
{
	struct statfs s;

	return !statfs(p, &s) && (long)s.f_type == magic;
}

static void list_pre(void)
{
	DIR *d = opendir(CROOT);
	struct dirent *e;

	npre = pre_enabled = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && npre < 64) {
		char dev[64];

		if (e->d_name[0] == '.')
			continue;
		snprintf(pre_names[npre++], 256, "%s", e->d_name);
		if (!aget(e->d_name, "device", dev, sizeof(dev)) && !strcmp(dev, "reflux0") &&
		    enabled(e->d_name) == 1)
			pre_enabled++;
	}
	closedir(d);
}

static int env_mounts(void)
{
	struct stat st;

	if (stat(CROOT, &st) && !fs_magic(CFS_MNT, CONFIGFS_MAGIC_)) {
		if (mount("none", CFS_MNT, "configfs", 0, NULL))
			dg("mount -t configfs none %s: %s", CFS_MNT, en(errno));
		else
			mounted_cfs = 1;
	}
	cfs_ok = !stat(CROOT, &st) && S_ISDIR(st.st_mode);
	if (!cfs_ok)
		dg("%s missing: %s", CROOT, en(errno));
	if (stat(DBG, &st) && !fs_magic(DBG_MNT, DEBUGFS_MAGIC_)) {
		if (mount("none", DBG_MNT, "debugfs", 0, NULL))
			dg("mount -t debugfs none %s: %s", DBG_MNT, en(errno));
		else
			mounted_dbg = 1;
	}
	dbg_ok = !stat(DBG, &st) && S_ISDIR(st.st_mode);
	if (!dbg_ok)
		dg("%s missing: %s", DBG, en(errno));
	return cfs_ok && dbg_ok;
}

static int env_device(void)
{
	int fd = open(DEV, O_RDWR | O_DIRECT);

	if (fd < 0) {
		dg("open %s: %s", DEV, en(errno));
		return 0;
	}
	if (ioctl(fd, BLKGETSIZE64, &devsz)) {
		dg("BLKGETSIZE64: %s", en(errno));
		close(fd);
		return 0;
	}
	close(fd);
	E = devsz & ~(CH - 1);
	nblocks = devsz / BLK;
	if (E < 16 * MB) {
		dg("device of %llu bytes: too small for the scratch layout", devsz);
		return 0;
	}
	saved = abuf(SAVE_LEN);
	saved_alias = abuf(BLK);
	if (!saved || !saved_alias || dev_rw(0, saved, SAVE_LEN, SAVE_OFF) ||
	    dev_rw(0, saved_alias, BLK, (BLKA_OFF / BLK) * 512)) {
		dg("saving the scratch region [%llu, +2 MiB) failed", SAVE_OFF);
		return 0;
	}
	saved_ok = 1;
	dev_ok = 1;
	dg("device %llu bytes; scratch region [%llu, %llu) saved", devsz, SAVE_OFF, E);
	return 1;
}

static int c_env(void)
{
	char txt[16384];
	int ok = env_mounts();

	ok &= env_device();
	if (cfs_ok) {
		list_pre();
		if (npre)
			dg("note: %d configfs entries existed before the test (%d enabled on reflux0); left alone",
			   npre, pre_enabled);
	}
	if (dbg_ok) {
		if (dget_num("migrate_stop", &mstop_orig))
			dg("migrate_stop unreadable");
		if (dget_num("peek_lba", &peek_orig))
			peek_orig = -1;
		act_orig_ok = !read_actors(act_orig, txt, sizeof(txt));
		if (!act_orig_ok)
			dg_text("actors could not be parsed (owner of actors 1-3)", txt);
		if (mstop_orig != 0) {
			dg("migrate_stop is %lld at start: migrations would pause (doc: fault injection)",
			   mstop_orig);
			ok = 0;
		}
	}
	return ok;
}

/* ------------------------------------------------------ configfs checks */

/*
 * The refusal lists of configfs attributes hold no 0-byte write: generic
 * configfs answers one with EFAULT before the driver sees it, which
 * c_cfs_zero_write reports as a note.  "\n" is the empty value.
 */

static const char *ATTRS[] = { "device", "start", "length", "pipeline", "checksum", "enable" };

static int c_mkdir(void)
{
	char p[512];
	struct stat st;
	int i, ok = 1;

	if (!need(cfs_ok, "configfs"))
		return 0;
	if (mk(A, "a"))
		return 0;
	for (i = 0; i < 6; i++) {
		ap(p, A, ATTRS[i]);
		if (stat(p, &st) || !S_ISREG(st.st_mode)) {
			dg("attribute %s missing (documented)", p);
			ok = 0;
		}
	}
	a_ok = ok;	/* later checks need only the directory and its attributes */
	if (enabled(A) != 0) {
		dg("a fresh attachment's enable does not read 0 (doc silent; expected disabled)");
		ok = 0;
	}
	dp(p, A);
	if (!mkdir(p, 0755) || errno != EEXIST) {
		dg("mkdir of an existing attachment: %s, expected EEXIST", en(errno));
		ok = 0;
	}
	return ok;
}

static int c_dir_noncreate(void)
{
	char p[512], b[64];
	int fd, ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	ap(p, A, "sub");
	if (!mkdir(p, 0755)) {
		dg("mkdir inside an attachment succeeded (an attachment has no children)");
		rmdir(p);
		ok = 0;
	}
	ap(p, A, "newfile");
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0) {
		dg("creating a file in an attachment succeeded");
		close(fd);
		unlink(p);
		ok = 0;
	}
	ap(p, A, "start");
	if (!unlink(p)) {
		dg("unlink of the start attribute succeeded");
		ok = 0;
	}
	if (aget(A, "start", b, sizeof(b))) {
		dg("start no longer readable after the attempts");
		ok = 0;
	}
	return ok;
}

static int c_device_valid(void)
{
	char b[128];
	int ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	if (aset(A, "device", "reflux0\n") != 8 || aget(A, "device", b, sizeof(b)) ||
	    strcmp(b, "reflux0")) {
		dg("device <- \"reflux0\\n\": reads \"%s\"", ESC(b));
		ok = 0;
	}
	if (aset(A, "device", "reflux0") != 7 || aget(A, "device", b, sizeof(b)) ||
	    strcmp(b, "reflux0")) {
		dg("device <- \"reflux0\" (no newline): reads \"%s\"", ESC(b));
		ok = 0;
	}
	return ok;
}

static int c_device_malformed(void)
{
	static char longname[301];
	const char *v[] = { "\n", " ", "reflux0 reflux1\n", "reflux0/..\n",
			    "reflux0\nreflux1\n", longname, "\x01\x02\n" };
	char p[512];

	if (!need(a_ok, "attachment A"))
		return 0;
	memset(longname, 'a', 300);
	dg("doc: a malformed device name is EINVAL; a 300-byte name cannot name a disk (DISK_NAME_LEN 32)");
	ap(p, A, "device");
	return refuse_each(p, v, NELEM(v), E_INVAL, "malformed device name -> EINVAL");
}

static int c_device_unbound(void)
{
	long r;
	int ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	r = aset(A, "device", "reflux9\n");
	if (r != 8) {
		dg("device <- \"reflux9\": %s; doc: an unbound name is checked at enable (ENODEV)",
		   r < 0 ? en(-r) : "short");
		ok = 0;
	}
	if (aset(A, "start", "0\n") != 2 || aset(A, "length", "131072\n") != 7)
		ok = 0;
	r = enable(A, 1);
	if (r != -ENODEV) {
		dg("enable with device reflux9: %s, doc says ENODEV", r ? en(-r) : "success");
		ok = 0;
	}
	if (enabled(A) != 0) {
		dg("enable reads 1 after the refusal");
		enable(A, 0);
		ok = 0;
	}
	aset(A, "device", "reflux0\n");
	return ok;
}

static const struct vv NUMS[] = {
	{ "0\n", 0 }, { "131072\n", 131072 }, { "131072", 131072 }, { "128K\n", 131072 },
	{ "1M\n", 1 << 20 }, { "64M\n", 64 << 20 }, { "1G\n", 1ULL << 30 },
	{ "4294967296\n", 1ULL << 32 }, { "6G\n", 6ULL << 30 }, { "384K\n", 393216 },
	{ "18446744073709420544\n", 18446744073709420544ULL },
};

static int c_start_valid(void)
{
	char p[512];

	if (!need(a_ok, "attachment A"))
		return 0;
	ap(p, A, "start");
	return accept_each(p, NUMS, sizeof(NUMS) / sizeof(NUMS[0]));
}

static int c_length_valid(void)
{
	char p[512];

	if (!need(a_ok, "attachment A"))
		return 0;
	ap(p, A, "length");
	return accept_each(p, NUMS, sizeof(NUMS) / sizeof(NUMS[0]));
}

static int set_before(const char *attr, const char *v)
{
	long r = aset(A, attr, v);

	if (r != (long)strlen(v))
		dg("setting up: %s <- \"%s\": %s%ld", attr, ESC(v), r < 0 ? en(-r) : "returned ",
		   r < 0 ? 0L : r);
	return r == (long)strlen(v);
}

static int c_start_unaligned(void)
{
	const char *v[] = { "1\n", "512\n", "4096\n", "65536\n", "131071\n", "131073\n",
			    "196608\n", "127K\n", "129K\n", "1000000\n", "4294967295\n",
			    "18446744073709551615\n" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	ap(p, A, "start");
	return refuse_each(p, v, NELEM(v), E_INVAL, "start not a multiple of 128 KiB -> EINVAL");
}

static int c_start_malformed(void)
{
	const char *v[] = { "\n", " ", "\t\n", "abc\n", "-131072\n", "128Kx\n", "128KK\n",
			    "128KB\n", "1 28K\n", "1.5M\n", "131072\n131072\n", "0x\n", "K\n",
			    "1e6\n", "131072abc" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	ap(p, A, "start");
	return refuse_each(p, v, NELEM(v), E_INVAL, "a malformed number -> EINVAL");
}

static int c_start_overflow(void)
{
	const char *v[] = { "18446744073709551616\n", "18446744073709682688\n",
			    "99999999999999999999999\n", "17179869184G\n", "17179869185G\n",
			    "18014398509481984K\n", "17592186044416M\n",
			    "340282366920938463463374607431768211456\n" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	dg("values beyond u64, some wrapping to 0, 128K or 1G if multiplied without an overflow check");
	ap(p, A, "start");
	return refuse_each(p, v, NELEM(v), E_INVAL_RANGE,
			   "doc: malformed number -> EINVAL (ERANGE tolerated for overflow)");
}

static int c_start_undoc(void)
{
	static const struct uv v[] = {
		{ "+131072\n", 8, 131072 }, { "0x20000\n", 8, 131072 }, { "0X20000\n", 8, 131072 },
		{ "128k\n", 5, 131072 }, { "1m\n", 3, 1 << 20 }, { "1g\n", 3, 1ULL << 30 },
		{ "1T\n", 3, 1ULL << 40 }, { " 131072\n", 8, 131072 }, { "131072 \n", 8, 131072 },
		{ "131072\n\n", 8, 131072 }, { "131072\0", 7, 131072 },
		{ "0400000\n", 8, MUST_REFUSE },	/* decimal 400000: unaligned; octal would be 128K */
	};
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	dg("doc documents decimal bytes with K, M, G suffixes only");
	ap(p, A, "start");
	return refuse_or_exact(p, v, NELEM(v), E_INVAL_RANGE);
}

static int c_length_invalid(void)
{
	const char *v[] = { "4096\n", "65536\n", "131073\n", "abc\n", "-131072\n", " \n",
			    "18446744073709551616\n", "17179869184G\n", "128Kx\n" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("length", "393216\n"))
		return 0;
	ap(p, A, "length");
	return refuse_each(p, v, NELEM(v), E_INVAL_RANGE,
			   "unaligned/malformed -> EINVAL (ERANGE tolerated beyond u64)");
}

static const char *PIPES[] = { "passthrough", "checksum", "compress", "encrypt" };

static int c_pipeline_valid(void)
{
	char b[128], v[64];
	int i, ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	for (i = 0; i < 4; i++) {
		snprintf(v, sizeof(v), "%s\n", PIPES[i]);
		if (aset(A, "pipeline", v) != (long)strlen(v) || aget(A, "pipeline", b, sizeof(b)) ||
		    strcmp(b, PIPES[i])) {
			dg("pipeline <- %s: reads \"%s\"", PIPES[i], ESC(b));
			ok = 0;
		}
	}
	if (aset(A, "pipeline", "checksum") != 8 || aget(A, "pipeline", b, sizeof(b)) ||
	    strcmp(b, "checksum")) {
		dg("pipeline <- \"checksum\" without newline: reads \"%s\"", ESC(b));
		ok = 0;
	}
	return ok;
}

static int c_pipeline_invalid(void)
{
	const char *v[] = { "\n", " \n", "Compress\n", "COMPRESS\n", "compres\n",
			    "compressx\n", "compress checksum\n", "compress\ncompress\n",
			    "passthrough,checksum\n", "lz4\n", "none\n" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("pipeline", "encrypt\n"))
		return 0;
	ap(p, A, "pipeline");
	return refuse_each(p, v, NELEM(v), E_INVAL, "doc: passthrough|checksum|compress|encrypt, else EINVAL");
}

static int bool_reads(const char *attr, int want)
{
	char b[64];

	if (aget(A, attr, b, sizeof(b)))
		return 0;
	if (want)
		return !strcmp(b, "1") || !strcasecmp(b, "y");
	return !strcmp(b, "0") || !strcasecmp(b, "n");
}

static int c_checksum_valid(void)
{
	int ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	if (aset(A, "checksum", "1\n") != 2 || !bool_reads("checksum", 1)) {
		dg("checksum <- 1 does not read back 1");
		ok = 0;
	}
	if (aset(A, "checksum", "0\n") != 2 || !bool_reads("checksum", 0)) {
		dg("checksum <- 0 does not read back 0");
		ok = 0;
	}
	if (aset(A, "checksum", "1") != 1 || !bool_reads("checksum", 1)) {
		dg("checksum <- \"1\" (no newline) does not read back 1");
		ok = 0;
	}
	return ok;
}

static int c_checksum_invalid(void)
{
	const char *v[] = { "2\n", "-1\n", "\n", " \n", "abc\n", "1x\n", "10\n", "0.5\n",
			    "11", "yes please\n" };
	char p[512];

	if (!need(a_ok, "attachment A") || !set_before("checksum", "0\n"))
		return 0;
	dg("doc: a malformed boolean is EINVAL; \"1x\", \"10\", \"yes please\" are not booleans even if kstrtobool's first-character rule takes them");
	ap(p, A, "checksum");
	return refuse_each(p, v, NELEM(v), E_INVAL, "malformed boolean -> EINVAL");
}

static int c_enable_malformed(void)
{
	const char *v[] = { "2\n", "-1\n", "\n", "abc\n", "1x\n", "10\n", "yes please\n",
			    "11" };
	char p[512];
	int ok;

	if (!need(a_ok, "attachment A") || cfg(A, slot(0), CH, "checksum", 0))
		return 0;
	dg("A is a valid attachment [%llu,+128K): a lenient parse would attach it", slot(0));
	ap(p, A, "enable");
	ok = refuse_each(p, v, NELEM(v), E_INVAL, "malformed boolean -> EINVAL");
	if (enabled(A) != 0) {
		dg("A is enabled after malformed writes");
		enable(A, 0);
		ok = 0;
	}
	return ok;
}

/* Enable must fail with an errno in errs and leave enable at 0. */
static int expect_enable_(const char *d, const int *errs, const char *what)
{
	long r = enable(d, 1);
	int ok = 1;

	if (r == 0) {
		dg("%s: enable=1 succeeded; expected %s", what, SETN(errs));
		enable(d, 0);
		ok = 0;
	} else if (!in_set(-r, errs)) {
		dg("%s: enable=1 failed with %s; expected %s", what, en(-r), SETN(errs));
		ok = 0;
	}
	if (enabled(d) != 0) {
		dg("%s: enable does not read 0 after the refusal", what);
		enable(d, 0);
		ok = 0;
	}
	return ok;
}

static int c_enable_zero_len(void)
{
	if (!need(a_ok, "attachment A") || cfg(A, slot(0), 0, "passthrough", 0))
		return 0;
	return expect_enable_(A, E_INVAL, "length 0 (doc: EINVAL)");
}

static int c_enable_past_end(void)
{
	u64 up = (devsz + CH - 1) & ~(CH - 1);
	int ok;

	if (!need(a_ok && dev_ok, "attachment A and the device"))
		return 0;
	ok = !cfg(A, up, CH, "passthrough", 0) &&
	     expect_enable_(A, E_RANGE, "start at the device's end (doc: ERANGE)");
	ok &= !cfg(A, up + (1ULL << 30), CH, NULL, -1) &&
	      expect_enable_(A, E_RANGE, "start 1 GiB past the end (doc: ERANGE)");
	ok &= !cfg(A, 1ULL << 62, CH, NULL, -1) &&
	      expect_enable_(A, E_RANGE, "start 2^62 (doc: ERANGE)");
	return ok;
}

static int c_enable_straddle_end(void)
{
	int ok;

	if (!need(a_ok && dev_ok, "attachment A and the device"))
		return 0;
	ok = !cfg(A, E - CH, 2 * CH, "passthrough", 0) &&
	     expect_enable_(A, E_RANGE, "[end-128K, end+128K) (doc: ERANGE)");
	ok &= !cfg(A, 0, E + CH, NULL, -1) &&
	      expect_enable_(A, pre_enabled ? E_RANGE_BUSY : E_RANGE,
			     "[0, end+128K) (doc: ERANGE; EBUSY if it overlaps a pre-existing attachment)");
	return ok;
}

static int c_enable_wrap(void)
{
	const u64 top = 0 - CH;	/* 2^64 - 128K, aligned */
	const struct { u64 s, l; } w[] = {
		{ top, CH }, { top, 2 * CH }, { CH, top }, { 2 * CH, top }, { top, top }, { 0, top },
	};
	int i, ok = 1;

	if (!need(a_ok && dev_ok, "attachment A and the device"))
		return 0;
	dg("ranges whose end wraps past 2^64 to 0 or 128K; only ERANGE (EINVAL tolerated) is right");
	for (i = 0; i < 6; i++) {
		char what[96];

		snprintf(what, sizeof(what), "start %llu length %llu", w[i].s, w[i].l);
		ok &= !cfg(A, w[i].s, w[i].l, "passthrough", 0) &&
		      expect_enable_(A, pre_enabled ? E_RANGE_INVAL_BUSY : E_RANGE_INVAL, what);
	}
	return ok;
}

static int c_enable_at_end(void)
{
	char d[80];
	long r;
	int ok = 1;

	if (!need(cfs_ok && dev_ok, "configfs and the device") || mk(d, "end"))
		return 0;
	if (cfg(d, E - CH, CH, "checksum", 0))
		ok = 0;
	else if ((r = enable(d, 1))) {
		dg("[%llu, %llu) (device %llu bytes): enable %s; the range is inside the device",
		   E - CH, E, devsz, en(-r));
		ok = 0;
	} else if (enabled(d) != 1) {
		dg("enable succeeded but reads 0");
		ok = 0;
	}
	enable(d, 0);
	if (rmd(d))
		ok = 0;
	return ok;
}

static int c_enable_ok(void)
{
	long r;

	if (!need(a_ok, "attachment A") || cfg(A, slot(2), 2 * CH, "compress", 1))
		return 0;
	r = enable(A, 1);
	if (r) {
		dg("enable of [%llu,+256K) compress+checksum: %s", slot(2), en(-r));
		return 0;
	}
	if (enabled(A) != 1) {
		dg("enable succeeded but does not read 1");
		return 0;
	}
	return 1;
}

static int c_enabled_busy(void)
{
	const char *attr[] = { "device", "start", "length", "pipeline", "checksum" };
	const char *val[] = { "reflux9\n", "1M\n", "128K\n", "encrypt\n", "0\n" };
	char p[512];
	int i, ok = 1;

	if (!need(a_ok && enabled(A) == 1, "A enabled"))
		return 0;
	for (i = 0; i < 5; i++) {
		const char *v[1] = { val[i] };

		ap(p, A, attr[i]);
		ok &= refuse_each(p, v, 1, E_BUSY, "doc: while enabled the values are fixed (EBUSY)");
	}
	if (enabled(A) != 1) {
		dg("A no longer enabled");
		ok = 0;
	}
	return ok;
}

static int probe_enable(const char *d, u64 s, u64 l, long *res)
{
	*res = -EIO;
	if (cfg(d, s, l, "passthrough", 0))
		return -1;
	*res = enable(d, 1);
	if (!*res)
		enable(d, 0);
	return 0;
}

static int c_enable_again(void)
{
	long r, pr;
	int ok = 1;

	if (!need(a_ok && enabled(A) == 1, "A enabled") || mk(Bd, "b"))
		return 0;
	r = enable(A, 1);
	if (r && r != -EBUSY && r != -EALREADY) {
		dg("enable=1 on an enabled attachment: %s (doc silent; expected success or EBUSY)",
		   en(-r));
		ok = 0;
	}
	if (enabled(A) != 1) {
		dg("A reads not enabled after a second enable=1");
		ok = 0;
	}
	if (enable(A, 0) || enabled(A) != 0) {
		dg("one enable=0 did not disable A");
		ok = 0;
	}
	if (probe_enable(Bd, slot(2), 2 * CH, &pr) || pr) {
		dg("after a double enable and one disable, the same range cannot be attached by another (%s): attached twice?",
		   en(-pr));
		ok = 0;
	}
	if (enable(A, 1)) {
		dg("re-enabling A failed");
		ok = 0;
	}
	return ok;
}

static int c_overlap(void)
{
	const struct { int s; u64 l; const char *what; } o[] = {
		{ 3, 2 * CH, "partial overlap [slot3,+256K)" },
		{ 2, 2 * CH, "identical range" },
		{ 1, 4 * CH, "superset [slot1,+512K)" },
		{ 3, CH, "inner [slot3,+128K)" },
		{ 1, 2 * CH, "overlapping the first 128K" },
	};
	int i, ok = 1;

	if (!need(a_ok && enabled(A) == 1 && Bd[0], "A enabled, B created"))
		return 0;
	dg("A is enabled on [slot2,+256K) = [%llu,%llu)", slot(2), slot(4));
	for (i = 0; i < 5; i++)
		ok &= !cfg(Bd, slot(o[i].s), o[i].l, "passthrough", 0) &&
		      expect_enable_(Bd, E_BUSY, o[i].what);
	return ok;
}

static int c_adjacent(void)
{
	long r = -EIO;
	int ok = 1;

	if (!need(a_ok && enabled(A) == 1 && Bd[0], "A enabled, B created") || mk(Cd, "c"))
		return 0;
	if (cfg(Bd, slot(4), CH, "passthrough", 0) || (r = enable(Bd, 1))) {
		dg("[slot4,+128K), starting at A's end: %s; adjacency is not overlap",
		   en(-(int)r));
		ok = 0;
	}
	r = -EIO;
	if (cfg(Cd, slot(1), CH, "passthrough", 0) || (r = enable(Cd, 1))) {
		dg("[slot1,+128K), ending at A's start: %s; adjacency is not overlap",
		   en(-(int)r));
		ok = 0;
	}
	enable(Bd, 0);
	enable(Cd, 0);
	return ok;
}

static int c_disable_frees(void)
{
	long r, pr;
	int ok = 1;

	if (!need(a_ok && enabled(A) == 1 && Bd[0], "A enabled, B created"))
		return 0;
	if ((r = enable(A, 0)) || enabled(A) != 0) {
		dg("enable=0: %s, reads %d", en(-(int)r), enabled(A));
		ok = 0;
	}
	if ((r = enable(A, 0)) || enabled(A) != 0) {
		dg("enable=0 on a disabled attachment: %s (doc silent; expected success)",
		   en(-(int)r));
		ok = 0;
	}
	if (probe_enable(Bd, slot(3), CH, &pr) || pr) {
		dg("after A was disabled, [slot3,+128K) still refused: %s", en(-(int)pr));
		ok = 0;
	}
	return ok;
}

static int c_rmdir_enabled(void)
{
	char d[80], d2[80];
	long r, pr;
	int ok = 1;

	if (!need(cfs_ok && dev_ok, "configfs") || mk(d, "rmen"))
		return 0;
	if (cfg(d, slot(6), CH, "compress", 1) || (r = enable(d, 1))) {
		dg("could not enable [slot6,+128K)");
		rmd(d);
		return 0;
	}
	if ((r = rmd(d))) {
		dg("rmdir of an enabled attachment: %s; doc: rmdir detaches it", en(-r));
		enable(d, 0);
		rmd(d);
		ok = 0;
	}
	if (mk(d2, "rmen2"))
		return 0;
	if (probe_enable(d2, slot(6), CH, &pr) || pr) {
		dg("after rmdir, the range is still attached: a new attachment gets %s",
		   en(-(int)pr));
		ok = 0;
	}
	rmd(d2);
	return ok;
}

static int c_cfs_read_offsets(void)
{
	char p[512], full[256], b[256];
	long n, r;
	int fd, i, ok = 1;

	if (!need(a_ok, "attachment A") || !set_before("start", "131072\n"))
		return 0;
	ap(p, A, "start");
	n = rd(p, full, sizeof(full));
	fd = open(p, O_RDONLY);
	if (n <= 1 || fd < 0) {
		dg("start: read %ld bytes, open %s", n, fd < 0 ? en(errno) : "ok");
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (i = 1; i <= n; i++) {
		r = pread(fd, b, sizeof(b) - 1, i);
		if (r != n - i || memcmp(b, full + i, n - i)) {
			dg("pread at offset %d: %ld bytes \"%s\", expected \"%s\"", i, r,
			   r > 0 ? ESCN(b, r) : "", ESC(full + i));
			ok = 0;
		}
	}
	r = pread(fd, b, sizeof(b), 1 << 20);
	if (r != 0) {
		dg("pread past the end (1 MiB) returned %ld (%s), expected 0", r,
		   r < 0 ? en(errno) : "data");
		ok = 0;
	}
	close(fd);
	fd = open(p, O_RDONLY);
	for (i = 0; fd >= 0 && i < (int)sizeof(b) - 1; i++)
		if (read(fd, b + i, 1) != 1)
			break;
	b[i] = 0;
	if (i != n || memcmp(b, full, n)) {
		dg("byte-by-byte read gave \"%s\", a whole read \"%s\"", ESCN(b, i), ESC(full));
		ok = 0;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

/* After a write through an fd at off: refused and unchanged, or the value written. */
static int pw_judge(const char *path, const char *before, long r, int e, const char *v,
		    u64 want, long long off)
{
	u64 got = 0;
	int have = !read_num(path, &got);
	char now[256];

	rd(path, now, sizeof(now));
	if (r < 0 && e != EFAULT && !strcmp(now, before))
		return 1;
	if (r == (long)strlen(v) && have && got == want)
		return 1;
	dg("pwrite \"%s\" at offset %lld: %s%ld, now reads \"%s\" (was \"%s\"); expected a refusal leaving it, or the buffer taken whole",
	   ESC(v), off, r < 0 ? en(e) : "returned ", r < 0 ? 0L : r, ESC(now), ESC(before));
	ws(path, before);
	return 0;
}

static int c_cfs_pwrite_offset(void)
{
	const long long offs[] = { 1, 3, 6, 4095, 4096, 1LL << 30 };
	char p[512], before[256];
	int i, ok = 1;

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	ap(p, A, "start");
	rd(p, before, sizeof(before));
	dg("doc silent on offsets; generic configfs takes each write whole, never splices");
	for (i = 0; i < 6; i++) {
		int fd = open(p, O_WRONLY);
		long r = fd < 0 ? -errno : pwrite(fd, "262144\n", 7, offs[i]);
		int e = r < 0 ? (fd < 0 ? (int)-r : errno) : 0;

		if (fd >= 0)
			close(fd);
		ok &= pw_judge(p, before, r, e, "262144\n", 262144, offs[i]);
		ws(p, before);
	}
	return ok;
}

static int c_cfs_zero_write(void)
{
	const char *attrs[] = { "start", "pipeline", "enable" };
	char p[512], before[256], after[256];
	int i, ok = 1;

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	for (i = 0; i < 3; i++) {
		int fd;
		long r;

		ap(p, A, attrs[i]);
		rd(p, before, sizeof(before));
		fd = open(p, O_WRONLY);
		r = fd < 0 ? -errno : wr_fd(fd, "131072\n", 0);
		if (fd >= 0)
			close(fd);
		rd(p, after, sizeof(after));
		if (r == -EFAULT && !strcmp(before, after)) {
			dg("note: 0-byte write to %s: EFAULT. Tolerated: generic configfs (fill_write_buffer returns -EFAULT when it copied nothing) answers so before the driver's store is called",
			   attrs[i]);
			continue;
		}
		if (!(r == 0 || r == -EINVAL) || strcmp(before, after)) {
			dg("0-byte write to %s: %s%ld, reads \"%s\" (was \"%s\"); expected 0 or EINVAL, no change",
			   attrs[i], r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, ESC(after),
			   ESC(before));
			ok = 0;
		}
	}
	return ok;
}

static int long_judge(const char *path, const char *before, const char *buf, size_t n,
		      u64 whole)
{
	long r = wr(path, buf, n);
	char now[512], pre[64];
	u64 got = 0, pv = 0;
	int have;

	rd(path, now, sizeof(now));
	chomp(now);
	have = !rb_parse(now, &got);
	if (r < 0 && r != -EFAULT && !strcmp(now, before))
		return 1;
	if (r == (long)n && whole != MUST_REFUSE && have && got == whole)
		return 1;
	if (r > 0 && r < (long)n) {
		snprintf(pre, sizeof(pre), "%.*s", (int)(r < 60 ? r : 60), buf);
		if (r <= 40 && !rb_parse(pre, &pv) && have && pv == got)
			return 1;
		if (r > 40) {
			/* a prefix of only digits: its value is that of the digits */
			u128 x = 0;
			long i;
			int over = 0;

			for (i = 0; i < r && isdigit((unsigned char)buf[i]); i++) {
				x = x * 10 + (buf[i] - '0');
				over |= (int)(x >> 64 != 0);
			}
			if (i == r && !over && have && (u64)x == got)
				return 1;
		}
	}
	dg("%zu-byte write to %s: %s%ld, now reads \"%s\" (was \"%s\"); expected a refusal, the whole value, or an honest short write",
	   n, path, r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, ESC(now), ESC(before));
	ws(path, before);
	return 0;
}

static int c_cfs_long_write(void)
{
	char p[512], before[256], *buf = malloc(8192);
	int ok = 1;

	if (!buf || !need(a_ok, "attachment A") || !set_before("start", "393216\n")) {
		free(buf);
		return 0;
	}
	ap(p, A, "start");
	rd(p, before, sizeof(before));
	chomp(before);
	memset(buf, '1', 8192);
	ok &= long_judge(p, before, buf, 8192, MUST_REFUSE);
	memset(buf, '0', 8192);
	memcpy(buf + 8192 - 6, "262144", 6);
	ok &= long_judge(p, before, buf, 8192, 262144);
	ap(p, A, "device");
	rd(p, before, sizeof(before));
	chomp(before);
	memset(buf, 'a', 8192);
	ok &= long_judge(p, before, buf, 8192, MUST_REFUSE);
	free(buf);
	return ok;
}

static char *mapn(int prot, size_t n)
{
	char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0, n);
	return m;
}

static int fault_write(const char *path, const char *val, int prot, const int *errs, long want)
{
	char *m = mapn(PROT_READ | PROT_WRITE, 4096), before[256], after[256];
	long r;
	int ok = 1;

	if (!m)
		return 0;
	strcpy(m, val);
	mprotect(m, 4096, prot);
	rd(path, before, sizeof(before));
	r = wr(path, m, strlen(val));
	rd(path, after, sizeof(after));
	if (want >= 0 && r != want) {
		dg("write of \"%s\" from a %s buffer to %s: %s%ld; a read-only buffer is valid for write(2)",
		   ESC(val), prot == PROT_READ ? "read-only" : "PROT_NONE", path,
		   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r);
		ok = 0;
	}
	if (want < 0 && (r >= 0 || !in_set(-r, errs) || strcmp(before, after))) {
		dg("write from a PROT_NONE buffer to %s: %s%ld, reads \"%s\" (was \"%s\"); expected EFAULT and no change",
		   path, r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, ESC(after), ESC(before));
		ws(path, before);
		ok = 0;
	}
	munmap(m, 4096);
	return ok;
}

static int c_cfs_efault(void)
{
	char p[512];
	int ok;

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n") ||
	    !set_before("pipeline", "checksum\n"))
		return 0;
	ap(p, A, "start");
	ok = fault_write(p, "262144\n", PROT_NONE, E_FAULT, -1);
	ap(p, A, "pipeline");
	ok &= fault_write(p, "compress\n", PROT_NONE, E_FAULT, -1);
	ap(p, A, "enable");
	ok &= fault_write(p, "1\n", PROT_NONE, E_FAULT, -1);
	return ok;
}

static int c_cfs_robuf(void)
{
	char p[512];
	u64 v = 0;
	int ok;

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	ap(p, A, "start");
	ok = fault_write(p, "262144\n", PROT_READ, NULL, 7);
	if (read_num(p, &v) || v != 262144) {
		dg("after the write from a read-only buffer start reads %llu, expected 262144", v);
		ok = 0;
	}
	return ok;
}

static int c_cfs_straddle(void)
{
	char p[512], before[256], now[256], *m;
	const char *val = "2621440\n";	/* its 6-byte prefix 262144 is also valid */
	u64 got = 0, pv = 0;
	long r;
	int ok = 0;

	if (!need(a_ok, "attachment A") || !set_before("start", "393216\n"))
		return 0;
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	memcpy(m + 4096 - 6, val, 8);
	mprotect(m + 4096, 4096, PROT_NONE);
	ap(p, A, "start");
	rd(p, before, sizeof(before));
	chomp(before);
	r = wr(p, m + 4096 - 6, 8);
	rd(p, now, sizeof(now));
	chomp(now);
	if (r < 0 && (r == -EFAULT || r == -EINVAL) && !strcmp(now, before))
		ok = 1;
	else if (r > 0 && r < 8) {
		char pre[16];

		snprintf(pre, sizeof(pre), "%.*s", (int)r, val);
		ok = !rb_parse(now, &got) && !rb_parse(pre, &pv) && got == pv;
	}
	if (!ok) {
		dg("8-byte write \"2621440\\n\" whose last 2 bytes are on a PROT_NONE page: %s%ld, reads \"%s\" (was \"%s\"); expected EFAULT (or EINVAL from a torn prefix) and no change, or an honest short write",
		   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, ESC(now), ESC(before));
		ws(p, before);
	}
	munmap(m, 8192);
	return ok;
}

static int c_cfs_read_fault(void)
{
	char p[512], b[64], *m;
	long r1, r2;
	int fd, ok = 1;

	if (!need(a_ok, "attachment A"))
		return 0;
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	mprotect(m, 4096, PROT_NONE);
	mprotect(m + 4096, 4096, PROT_READ);
	ap(p, A, "pipeline");
	fd = open(p, O_RDONLY);
	r1 = fd < 0 ? -errno : (read(fd, m, 64) < 0 ? -errno : 0);
	if (fd >= 0)
		close(fd);
	fd = open(p, O_RDONLY);
	r2 = fd < 0 ? -errno : (read(fd, m + 4096, 64) < 0 ? -errno : 0);
	if (fd >= 0)
		close(fd);
	if (r1 != -EFAULT || r2 != -EFAULT) {
		dg("read into PROT_NONE: %s, into read-only: %s; expected EFAULT for both",
		   en(-r1), en(-r2));
		ok = 0;
	}
	if (aget(A, "pipeline", b, sizeof(b))) {
		dg("pipeline unreadable after the faulting reads");
		ok = 0;
	}
	munmap(m, 8192);
	return ok;
}

static int c_orphan_attr(void)
{
	char d[80], p[512], b[64];
	long r, rr;
	int fd, ok = 1;
	struct stat st;

	if (!need(cfs_ok, "configfs") || mk(d, "orph"))
		return 0;
	ap(p, d, "start");
	fd = open(p, O_RDWR);
	if (fd < 0) {
		dg("open %s: %s", p, en(errno));
		rmd(d);
		return 0;
	}
	if ((r = rmd(d))) {
		dg("rmdir with an attribute open: %s (generic configfs allows it)", en(-r));
		close(fd);
		rmd(d);
		return 0;
	}
	r = wr_fd(fd, "262144\n", 7);
	rr = pread(fd, b, sizeof(b), 0);
	if (rr < 0)
		rr = -errno;
	close(fd);
	dg("note: through the fd of a removed attachment, write %s%ld, read %s%ld (doc silent; an errno such as ENOENT or a clean result)",
	   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, rr < 0 ? en(-rr) : "returned ",
	   rr < 0 ? 0L : rr);
	if (r == -EFAULT || rr == -EFAULT) {
		dg("EFAULT with valid buffers");
		ok = 0;
	}
	dp(p, d);
	if (!stat(p, &st)) {
		dg("the removed attachment %s is back", p);
		ok = 0;
	}
	return ok;
}

static int c_orphan_enable(void)
{
	char d[80], d3[80], d4[80], p[512];
	long r, pr;
	int fd, ok = 1;

	if (!need(cfs_ok && dev_ok, "configfs") || mk(d, "oen") || mk(d3, "oen3") || mk(d4, "oen4"))
		return 0;
	if (cfg(d, slot(7), CH, "compress", 1) || enable(d, 1)) {
		dg("could not enable [slot7,+128K) compress+checksum");
		return 0;
	}
	ap(p, d, "enable");
	fd = open(p, O_RDWR);
	if (fd < 0 || rmd(d)) {
		dg("open enable / rmdir of the enabled attachment failed");
		if (fd >= 0)
			close(fd);
		return 0;
	}
	r = wr_fd(fd, "1\n", 2);
	dg("note: enable=1 through the fd of the removed (detached) attachment: %s%ld",
	   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r);
	if (cfg(d3, slot(7), CH, "passthrough", 0) || (pr = enable(d3, 1))) {
		dg("the range of the removed attachment cannot be attached again: the orphan fd re-attached it?");
		ok = 0;
	} else {
		r = wr_fd(fd, "0\n", 2);
		if (probe_enable(d4, slot(7), CH, &pr) || pr != -EBUSY) {
			dg("enable=0 through the orphan fd (%s) detached another attachment's range: a probe gets %s, expected EBUSY",
			   r < 0 ? en(-r) : "ok", pr ? en(-(int)pr) : "success");
			ok = 0;
		}
		enable(d3, 0);
	}
	close(fd);
	rmd(d3);
	rmd(d4);
	return ok;
}

/* --------------------------------------------------------------- races */

struct wa {
	const char *path, *val;
	int iters;
	pthread_barrier_t *bar;
	long bad, e;
};

static void *writer_fn(void *x)
{
	struct wa *w = x;
	int i;

	if (w->bar)
		pthread_barrier_wait(w->bar);
	for (i = 0; i < w->iters; i++) {
		long r = ws(w->path, w->val);

		if (r != (long)strlen(w->val) && !w->bad++)
			w->e = r;
	}
	return NULL;
}

struct ra {
	const char *path;
	const char *const *vals;
	int nvals, numeric, iters;
	pthread_barrier_t *bar;
	long bad;
	char first[128];
};

static int among(const char *s, const char *const *vals, int n, int numeric)
{
	u64 a, b;
	int i;

	for (i = 0; i < n; i++) {
		char v[128];

		snprintf(v, sizeof(v), "%s", vals[i]);
		chomp(v);
		if (!numeric && !strcmp(s, v))
			return 1;
		if (numeric && !rb_parse(s, &a) && !rb_parse(v, &b) && a == b)
			return 1;
	}
	return 0;
}

static void *reader_fn(void *x)
{
	struct ra *r = x;
	char b[256];
	int i;

	if (r->bar)
		pthread_barrier_wait(r->bar);
	for (i = 0; i < r->iters; i++) {
		if (rd(r->path, b, sizeof(b)) < 0)
			continue;
		chomp(b);
		if (!among(b, r->vals, r->nvals, r->numeric) && !r->bad++)
			snprintf(r->first, sizeof(r->first), "%s", b);
	}
	return NULL;
}

/* 4 writers of vals[1..4] and a reader; vals[0] is the value before. */
static int race_attr(const char *path, const char *const *vals, int numeric, int iters)
{
	pthread_barrier_t bar;
	pthread_t th[5];
	struct wa w[4];
	struct ra r = { path, vals, 5, numeric, iters * 2, &bar, 0, "" };
	char fin[256];
	int i, ok = 1;

	if (ws(path, vals[0]) != (long)strlen(vals[0]))
		return 0;
	pthread_barrier_init(&bar, NULL, 5);
	for (i = 0; i < 4; i++) {
		w[i] = (struct wa){ path, vals[i + 1], iters, &bar, 0, 0 };
		pthread_create(&th[i], NULL, writer_fn, &w[i]);
	}
	pthread_create(&th[4], NULL, reader_fn, &r);
	for (i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < 4; i++)
		if (w[i].bad) {
			dg("writer of \"%s\": %ld failed writes, first %s", ESC(w[i].val), w[i].bad,
			   w[i].e < 0 ? en(-w[i].e) : "short");
			ok = 0;
		}
	if (r.bad) {
		dg("reader saw %ld values not among those written, first \"%s\"", r.bad,
		   ESC(r.first));
		ok = 0;
	}
	rd(path, fin, sizeof(fin));
	chomp(fin);
	if (!among(fin, vals + 1, 4, numeric)) {
		dg("final value \"%s\" is none of the 4 written", ESC(fin));
		ok = 0;
	}
	return ok;
}

static int c_race_start(void)
{
	const char *v[] = { "1179648\n", "131072\n", "262144\n", "393216\n", "524288\n" };
	char p[512];

	if (!need(a_ok && enabled(A) == 0, "A disabled"))
		return 0;
	ap(p, A, "start");
	return race_attr(p, v, 1, 300);
}

static int c_race_pipeline(void)
{
	const char *v[] = { "passthrough\n", "checksum\n", "compress\n", "encrypt\n", "passthrough\n" };
	char p[512];

	if (!need(a_ok && enabled(A) == 0, "A disabled"))
		return 0;
	ap(p, A, "pipeline");
	return race_attr(p, v, 0, 300);
}

struct ea {
	const char *path, *val;
	pthread_barrier_t *bar;
	long r;
};

static void *en_fn(void *x)
{
	struct ea *a = x;

	pthread_barrier_wait(a->bar);
	a->r = ws(a->path, a->val);
	return NULL;
}

/* Run two writes at once; results in r1, r2 (bytes or -errno). */
static void pair(const char *p1, const char *v1, const char *p2, const char *v2, long *r1,
		 long *r2)
{
	pthread_barrier_t bar;
	pthread_t t1, t2;
	struct ea x = { p1, v1, &bar, 0 }, y = { p2, v2, &bar, 0 };

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t1, NULL, en_fn, &x);
	pthread_create(&t2, NULL, en_fn, &y);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_barrier_destroy(&bar);
	*r1 = x.r;
	*r2 = y.r;
}

static int c_race_enable_pair(void)
{
	char P[80], Q[80];
	int i, ok = 1, both = 0, none = 0;

	if (!need(cfs_ok && dev_ok, "configfs") || mk(P, "p") || mk(Q, "q"))
		return 0;
	if (cfg(P, slot(9), CH, "checksum", 0) || cfg(Q, slot(9), CH, "compress", 0))
		return 0;
	for (i = 0; i < 40; i++) {
		char pp[512], pq[512];
		long r1, r2;
		int succ;

		ap(pp, P, "enable");
		ap(pq, Q, "enable");
		pair(pp, "1\n", pq, "1\n", &r1, &r2);
		succ = (r1 == 2) + (r2 == 2);
		if (r1 == 2 && r2 == 2)
			both++;
		else if (r1 != 2 && r2 != 2)
			none++;
		if ((r1 != 2 && r1 != -EBUSY) || (r2 != 2 && r2 != -EBUSY)) {
			dg("round %d: results %ld, %ld; expected one success and one EBUSY", i, r1, r2);
			ok = 0;
		}
		if (enabled(P) + enabled(Q) != succ) {
			dg("round %d: enable reads %d and %d", i, enabled(P), enabled(Q));
			ok = 0;
		}
		enable(P, 0);
		enable(Q, 0);
	}
	if (both || none) {
		dg("of 40 rounds, %d attached both identical ranges, %d attached neither", both, none);
		ok = 0;
	}
	rmd(P);
	rmd(Q);
	return ok;
}

static int c_race_enable_start(void)
{
	char R[80], Pr[80];
	const u64 X = slot(10), Y = slot(11);
	int i, ok = 1;

	if (!need(cfs_ok && dev_ok, "configfs") || mk(R, "r") || mk(Pr, "pr"))
		return 0;
	dg("each round: enable=1 racing start<-Y on an attachment at X; the range attached must be the one start reads");
	for (i = 0; i < 30 && ok; i++) {
		char ys[32];
		long r1, r2, pr;
		u64 s = 0;

		if (cfg(R, X, CH, "checksum", 0))
			return 0;
		snprintf(ys, sizeof(ys), "%llu\n", Y);
		{
			char pe[512], ps[512];

			ap(pe, R, "enable");
			ap(ps, R, "start");
			pair(pe, "1\n", ps, ys, &r1, &r2);
		}
		if (r1 != 2) {
			dg("round %d: enable=1 %s; the attachment is valid at X and at Y", i,
			   r1 < 0 ? en(-r1) : "short");
			ok = 0;
		}
		if (r2 < 0 && r2 != -EBUSY) {
			dg("round %d: start write %s (EBUSY or success expected)", i, en(-r2));
			ok = 0;
		}
		if (enabled(R) == 1 && !aget(R, "start", ys, sizeof(ys)) && !rb_parse(ys, &s)) {
			u64 other = s == X ? Y : X;

			if (probe_enable(Pr, s, CH, &pr) || pr != -EBUSY) {
				dg("round %d: start reads %llu but a probe there gets %s: not attached where it says",
				   i, s, pr ? en(-(int)pr) : "success");
				ok = 0;
			}
			if (probe_enable(Pr, other, CH, &pr) || pr) {
				dg("round %d: start reads %llu but %llu is attached (probe: %s): torn state",
				   i, s, other, en(-(int)pr));
				ok = 0;
			}
		}
		enable(R, 0);
	}
	rmd(R);
	rmd(Pr);
	return ok;
}

static struct {
	char d[80];
	volatile int stop;
	long writes, bad;
	char first[160];
} mr;

static void *mkrace_fn(void *x)
{
	const char *attr[] = { "device", "start", "length", "pipeline", "checksum", "enable" };
	char val[6][32] = { "reflux0\n", "", "131072\n", "compress\n", "1\n", "1\n" };
	const int okw[] = { ENOENT, EBUSY, ENODEV, EINVAL, 0 };
	int i;

	snprintf(val[1], 32, "%llu\n", slot(15));
	while (!mr.stop) {
		for (i = 0; i < 6; i++) {
			char p[512];
			int fd;
			long r;

			ap(p, mr.d, attr[i]);
			fd = open(p, O_WRONLY);
			if (fd < 0) {
				if (errno != ENOENT && !mr.bad++)
					snprintf(mr.first, sizeof(mr.first), "open %s: %s", attr[i], en(errno));
				continue;
			}
			r = wr_fd(fd, val[i], strlen(val[i]));
			close(fd);
			mr.writes++;
			if (r < 0 && !in_set(-r, okw) && !mr.bad++)
				snprintf(mr.first, sizeof(mr.first), "write %s: %s", attr[i], en(-r));
		}
	}
	return NULL;
}

static int c_race_mkdir(void)
{
	char p[512], probe[80];
	pthread_t th;
	long pr = -EIO;
	int i, ok = 1, rmfail = 0;

	if (!need(cfs_ok && dev_ok, "configfs"))
		return 0;
	nm(mr.d, "mk");
	track(mr.d);
	dp(p, mr.d);
	mr.stop = 0;
	pthread_create(&th, NULL, mkrace_fn, NULL);
	for (i = 0; i < 200; i++) {
		int t;

		if (mkdir(p, 0755) && errno != EEXIST) {
			dg("mkdir %s: %s", p, en(errno));
			ok = 0;
			break;
		}
		usleep(rand() % 500);
		for (t = 0; t < 20 && rmdir(p); t++) {
			if (errno != EBUSY) {
				rmfail++;
				break;
			}
			usleep(100);
		}
	}
	mr.stop = 1;
	pthread_join(th, NULL);
	rmdir(p);
	untrack(mr.d);
	dg("%d mkdir/rmdir cycles against %ld attribute writes", i, mr.writes);
	if (mr.bad) {
		dg("%ld writes failed with an unexpected errno (ENOENT/EBUSY/ENODEV/EINVAL allowed), first: %s",
		   mr.bad, mr.first);
		ok = 0;
	}
	if (rmfail) {
		dg("%d rmdirs failed with something other than EBUSY", rmfail);
		ok = 0;
	}
	if (mk(probe, "mkprobe") || probe_enable(probe, slot(15), CH, &pr) || pr) {
		dg("after the race [slot15,+128K) cannot be attached: a leaked attachment? (%s)",
		   en(-(int)pr));
		ok = 0;
	}
	rmd(probe);
	return ok;
}

static int c_enospc(void)
{
	char d[10][80];
	int i, k, ok = 1, made = 0;
	long r;

	if (!need(cfs_ok && dev_ok, "configfs"))
		return 0;
	cleanup_cfs();		/* everything of ours disabled and removed first */
	k = 8 - pre_enabled;
	if (k < 1) {
		dg("%d attachments already enabled on reflux0 before the test", pre_enabled);
		return 0;
	}
	dg("doc: more than 8 attachments -> ENOSPC; %d existed, so %d more must enable", pre_enabled, k);
	for (i = 0; i <= k; i++) {
		char tag[16];

		snprintf(tag, sizeof(tag), "n%d", i);
		if (mk(d[i], tag) || cfg(d[i], slot(i), CH, "checksum", 0)) {
			ok = 0;
			break;
		}
		made++;
		r = enable(d[i], 1);
		if (i < k && r) {
			dg("attachment %d of 8 at [%llu,+128K): %s (a leak from earlier checks would show here)",
			   i + 1 + pre_enabled, slot(i), en(-r));
			ok = 0;
		}
		if (i == k && r != -ENOSPC) {
			dg("the 9th attachment: %s, doc says ENOSPC", r ? en(-r) : "success");
			ok = 0;
		}
	}
	if (made == k + 1) {
		enable(d[0], 0);
		if ((r = enable(d[k], 1))) {
			dg("after disabling one of 8, the 9th still cannot enable: %s", en(-r));
			ok = 0;
		}
	}
	for (i = 0; i < made; i++) {
		enable(d[i], 0);
		rmd(d[i]);
	}
	return ok;
}

/* ------------------------------------------------------- debugfs checks */

static const char *DFILES[] = { "stats", "actors", "migrate", "migrations", "migrate_stop",
				"corrupt_lba", "peek_lba", "peek" };

static int c_dbg_files(void)
{
	char p[512];
	struct stat st;
	int i, ok = 1;

	if (!need(dbg_ok, "debugfs reflux0"))
		return 0;
	for (i = 0; i < 8; i++) {
		dbp(p, DFILES[i]);
		if (stat(p, &st) || !S_ISREG(st.st_mode)) {
			dg("%s missing (documented)", p);
			ok = 0;
		}
	}
	return ok;
}

static int c_stats_format(void)
{
	static char b[65536];
	const char *keys[] = { "pagecache_node", "pagecache_tagged", "pagecache_stale",
			       "irq_wait", "irq_wait_switches", "irq_gap_ewma_ns", "irq_polled",
			       "host_shared_scratch", "reroutes" };
	char *s = NULL, *l, copy[256];
	int i, ok = 1, lines = 0, bad = 0;

	if (!need(dbg_ok, "debugfs") || dget("stats", b, sizeof(b)) <= 0) {
		dg("stats unreadable or empty");
		return 0;
	}
	for (i = 0; i < 9; i++) {
		char k1[64], k2[64];

		snprintf(k1, sizeof(k1), "\n%s ", keys[i]);
		snprintf(k2, sizeof(k2), "%s ", keys[i]);
		if (!strstr(b, k1) && strncmp(b, k2, strlen(k2))) {
			dg("stats lacks the documented key %s", keys[i]);
			ok = 0;
		}
	}
	for (l = strtok_r(b, "\n", &s); l; l = strtok_r(NULL, "\n", &s)) {
		char *t, *s2 = NULL;
		int n = 0;

		snprintf(copy, sizeof(copy), "%s", l);
		for (t = strtok_r(l, " \t", &s2); t; t = strtok_r(NULL, " \t", &s2))
			n++;
		lines++;
		if (n != 2 && n != 0 && bad++ < 3) {
			dg("stats line \"%s\" is not \"key value\" (doc: one key value per line)", ESC(copy));
			ok = 0;
		}
	}
	dg("%d stats lines", lines);
	return ok;
}

static int c_ro_files(void)
{
	const char *f[] = { "stats", "actors", "migrations", "peek" };
	char p[512], b[4096];
	int i, ok = 1;

	if (!need(dbg_ok, "debugfs"))
		return 0;
	for (i = 0; i < 4; i++) {
		long r;

		dbp(p, f[i]);
		r = ws(p, "0\n");
		if (r >= 0 || r == -EFAULT) {
			dg("write to the read-only %s: %s%ld; expected a refusal", f[i],
			   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r);
			ok = 0;
		}
		if (rd(p, b, sizeof(b)) < 0 && strcmp(f[i], "peek")) {
			dg("%s unreadable after the write attempt", f[i]);
			ok = 0;
		}
	}
	return ok;
}

static int mstop_set(const char *v)
{
	long r = dset("migrate_stop", v);

	if (r != (long)strlen(v))
		dg("migrate_stop <- \"%s\": %s%ld", ESC(v), r < 0 ? en(-r) : "returned ",
		   r < 0 ? 0L : r);
	return r == (long)strlen(v);
}

static void mstop_restore(void)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld\n", mstop_orig < 0 ? 0 : mstop_orig);
	dset("migrate_stop", v);
}

static int c_mstop_valid(void)
{
	const struct vv v[] = { { "0\n", 0 }, { "1\n", 1 }, { "2\n", 2 }, { "3\n", 3 },
				{ "1", 1 }, { "0", 0 } };
	char p[512];
	int ok;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop readable and 0"))
		return 0;
	dbp(p, "migrate_stop");
	ok = accept_each(p, v, 6);
	mstop_restore();
	return ok;
}

static int c_mstop_invalid(void)
{
	const char *v[] = { "4\n", "5", "-1\n", "\n", " \n", "abc\n", "1x\n", "2 3\n",
			    "257\n", "65539\n", "4294967297\n", "4294967299\n",
			    "18446744073709551616\n", "18446744073709551617\n",
			    "99999999999999999999\n", "1.0\n" };
	char p[512];
	int ok;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop") || !mstop_set("2\n"))
		return 0;
	dg("doc: migrate_stop is 0-3; the errno of a refusal is not documented (EINVAL/ERANGE accepted); 257, 65539, 2^32+1, 2^64+1 would truncate to 1 or 3");
	dbp(p, "migrate_stop");
	ok = refuse_each(p, v, NELEM(v), E_INVAL_RANGE, "only 0-3 are documented");
	mstop_restore();
	return ok;
}

static int c_mstop_undoc(void)
{
	static const struct uv v[] = {
		{ "+1\n", 3, 1 }, { "0x1\n", 4, 1 }, { " 1\n", 3, 1 }, { "1 \n", 3, 1 },
		{ "01\n", 3, 1 }, { "1\0", 2, 1 }, { "1\n\n", 3, 1 },
	};
	char p[512];
	int ok;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop") || !mstop_set("2\n"))
		return 0;
	dbp(p, "migrate_stop");
	ok = refuse_or_exact(p, v, NELEM(v), E_INVAL_RANGE);
	mstop_restore();
	return ok;
}

static int c_mstop_offsets(void)
{
	const long long offs[] = { 1, 2, 4095, 4096, 1LL << 30 };
	char p[512], full[64], b[64], before[64];
	long n, r;
	int fd, i, ok = 1;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop") || !mstop_set("2\n"))
		return 0;
	dbp(p, "migrate_stop");
	fd = open(p, O_RDONLY);
	n = fd < 0 ? -1 : rd_fd(fd, full, sizeof(full));
	for (i = 1; n > 1 && i <= n; i++) {
		r = pread(fd, b, sizeof(b), i);
		if (r != n - i || memcmp(b, full + i, n - i)) {
			dg("same fd, pread at %d: %ld bytes, expected \"%s\"", i, r, ESC(full + i));
			ok = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	fd = open(p, O_RDONLY);
	r = fd < 0 ? -1 : pread(fd, b, sizeof(b), 1);
	if (fd >= 0)
		close(fd);
	if (n > 1 && r != 0 && (r != n - 1 || memcmp(b, full + 1, n - 1))) {
		dg("fresh fd, pread at 1: %ld, expected \"%s\" (or 0, generic simple_attr)", r,
		   ESC(full + 1));
		ok = 0;
	}
	rd(p, before, sizeof(before));
	for (i = 0; i < 5; i++) {
		int e;

		fd = open(p, O_WRONLY);
		r = fd < 0 ? -1 : pwrite(fd, "3\n", 2, offs[i]);
		e = r < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		ok &= pw_judge(p, before, r, e, "3\n", 3, offs[i]);
		ws(p, before);
	}
	mstop_restore();
	if (n <= 1)
		dg("migrate_stop: a whole read gave %ld bytes", n);
	return ok && n > 1;
}

static int c_mstop_zero_long(void)
{
	char p[512], before[64], after[64], *buf = malloc(8192);
	long r;
	int fd, ok = 1;

	if (!buf || !need(dbg_ok && mstop_orig == 0, "migrate_stop") || !mstop_set("2\n")) {
		free(buf);
		return 0;
	}
	dbp(p, "migrate_stop");
	rd(p, before, sizeof(before));
	fd = open(p, O_WRONLY);
	r = fd < 0 ? -errno : wr_fd(fd, "3\n", 0);
	if (fd >= 0)
		close(fd);
	rd(p, after, sizeof(after));
	if (!(r == 0 || r == -EINVAL) || strcmp(before, after)) {
		dg("0-byte write: %s%ld, reads \"%s\" (was \"%s\"); expected 0 or EINVAL, no change",
		   r < 0 ? en(-r) : "returned ", r < 0 ? 0L : r, ESC(after), ESC(before));
		ok = 0;
	}
	chomp(before);
	memset(buf, '1', 8192);
	ok &= long_judge(p, before, buf, 8192, MUST_REFUSE);
	memset(buf, '0', 8192);
	buf[8191] = '1';
	ok &= long_judge(p, before, buf, 8192, 1);
	mstop_restore();
	free(buf);
	return ok;
}

static int c_mstop_efault(void)
{
	char p[512], *m;
	long long v = -1;
	long r;
	int fd, ok;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop") || !mstop_set("2\n"))
		return 0;
	dbp(p, "migrate_stop");
	ok = fault_write(p, "3\n", PROT_NONE, E_FAULT, -1);
	ok &= fault_write(p, "3\n", PROT_READ, NULL, 2);
	if (dget_num("migrate_stop", &v) || v != 3) {
		dg("after writing 3 from a read-only buffer it reads %lld", v);
		ok = 0;
	}
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open(p, O_RDONLY);
	r = (fd < 0 || m == MAP_FAILED) ? -1 : read(fd, m, 64);
	if (r >= 0 || errno != EFAULT) {
		dg("read into a read-only buffer: %ld (%s), expected EFAULT", r, en(errno));
		ok = 0;
	}
	if (fd >= 0)
		close(fd);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	mstop_restore();
	return ok;
}

static int c_mstop_race(void)
{
	const char *v[] = { "0\n", "0\n", "1\n", "2\n", "3\n" };
	char p[512];
	int ok;

	if (!need(dbg_ok && mstop_orig == 0, "migrate_stop"))
		return 0;
	dbp(p, "migrate_stop");
	ok = race_attr(p, v, 1, 300);
	mstop_restore();
	return ok;
}

/* Whether the hex dump in txt holds the 8 bytes b (any spacing, 0x prefixes, case). */
static int hex_has(const char *txt, const unsigned char *b)
{
	static char norm[1 << 17];
	char want[17];
	size_t k = 0;
	int i;

	for (; *txt && k + 1 < sizeof(norm); txt++) {
		if (txt[0] == '0' && (txt[1] == 'x' || txt[1] == 'X')) {
			txt++;
			continue;
		}
		if (isxdigit((unsigned char)*txt))
			norm[k++] = tolower(*txt);
	}
	norm[k] = 0;
	for (i = 0; i < 8; i++)
		sprintf(want + 2 * i, "%02x", b[i]);
	return strstr(norm, want) != NULL;
}

static unsigned char *blkA, *blkB;
static int blocks_ok;

static int write_blocks(void)
{
	if (!blkA)
		blkA = abuf(BLK);
	if (!blkB)
		blkB = abuf(BLK);
	if (!blkA || !blkB || !dev_ok)
		return 0;
	pattern(blkA, 'A');
	pattern(blkB, 'B');
	blocks_ok = !dev_rw(1, blkA, BLK, BLKA_OFF) && !dev_rw(1, blkB, BLK, BLKB_OFF);
	return blocks_ok;
}

static int peek_shows(const unsigned char *b)
{
	static char txt[1 << 17];

	if (dget("peek", txt, sizeof(txt)) < 0)
		return -1;
	return hex_has(txt, b);
}

static int peek_at(u64 lba, const unsigned char *b, const char *name)
{
	char v[32];
	long long got;
	int ok = 1;

	snprintf(v, sizeof(v), "%llu\n", lba);
	if (dset("peek_lba", v) != (long)strlen(v)) {
		dg("peek_lba <- %llu refused", lba);
		return 0;
	}
	if (peek_shows(b) != 1) {
		dg("peek_lba %llu: peek does not show block %s's first 8 stored bytes in hex (passthrough stores them as written)",
		   lba, name);
		ok = 0;
	}
	if (!dget_num("peek_lba", &got) && (u64)got != lba) {
		dg("peek_lba reads %lld after writing %llu", got, lba);
		ok = 0;
	}
	return ok;
}

static int c_peek_valid(void)
{
	int ok;

	if (!need(dbg_ok && dev_ok, "debugfs and the device") || !write_blocks())
		return 0;
	dg("blocks are 4 KiB (doc: a page is a block); A at lba %llu, B at %llu", BLKA_OFF / BLK,
	   BLKB_OFF / BLK);
	ok = peek_at(BLKA_OFF / BLK, blkA, "A");
	ok &= peek_at(BLKB_OFF / BLK, blkB, "B");
	ok &= peek_at(BLKA_OFF / BLK, blkA, "A");
	return ok;
}

static int c_peek_invalid(void)
{
	const u64 la = BLKA_OFF / BLK, lb = BLKB_OFF / BLK;
	char v[13][64];
	int i, ok = 1, malformed_from = 6;

	if (!need(dbg_ok && blocks_ok, "peek blocks") || !peek_at(la, blkA, "A"))
		return 0;
	snprintf(v[0], 64, "%llu\n", nblocks);
	snprintf(v[1], 64, "%llu\n", nblocks + 1);
	snprintf(v[2], 64, "%llu\n", lb + (1ULL << 32));
	u128s(v[3], ((u128)1 << 64) + lb);
	strcat(v[3], "\n");
	snprintf(v[4], 64, "%llu\n", lb + (1ULL << 63));
	snprintf(v[5], 64, "%llu\n", lb + (1ULL << 52));	/* x 4096 wraps to lb's offset */
	snprintf(v[6], 64, "-1\n");
	snprintf(v[7], 64, "abc\n");
	snprintf(v[8], 64, "%s", "");
	snprintf(v[9], 64, "%llux\n", lb);
	snprintf(v[10], 64, "%llu 1\n", lb);
	snprintf(v[11], 64, "%llu.5\n", lb);
	snprintf(v[12], 64, "-%llu\n", lb);
	dg("past-end values (doc silent): refused, or at least never an alias of block B; malformed ones: EINVAL");
	for (i = 0; i < 13; i++) {
		long r = dset("peek_lba", v[i]);
		int sb = peek_shows(blkB);

		if (r == 0 && !v[i][0])
			r = -EINVAL;	/* a 0-byte write that wrote nothing is fine */
		if (r >= 0 && i >= malformed_from) {
			dg("peek_lba <- \"%s\" accepted (malformed)", ESC(v[i]));
			ok = 0;
		} else if (r < 0 && !in_set(-r, E_INVAL_RANGE)) {
			dg("peek_lba <- \"%s\": %s, expected EINVAL or ERANGE", ESC(v[i]), en(-r));
			ok = 0;
		}
		if (sb == 1) {
			dg("after peek_lba <- \"%s\" (%s) peek shows block B: truncated or lenient parse",
			   ESC(v[i]), r < 0 ? en(-r) : "accepted");
			ok = 0;
		}
		if (r < 0 && peek_shows(blkA) != 1) {
			dg("after the refused \"%s\" peek no longer shows block A", ESC(v[i]));
			ok = 0;
		}
		if (r >= 0 && i < malformed_from && sb != 1)
			dg("note: peek_lba <- \"%s\" past the end accepted (doc silent); peek shows no alias",
			   ESC(v[i]));
		if (r >= 0)
			peek_at(la, blkA, "A");
	}
	return ok;
}

static int corrupt_refused;

static int c_corrupt_invalid(void)
{
	const u64 la = BLKA_OFF / BLK;
	char v[14][64];
	int i, ok = 1;

	if (!need(dbg_ok && dev_ok, "debugfs and the device") || !write_blocks())
		return 0;
	snprintf(v[0], 64, "%llu\n", nblocks);
	snprintf(v[1], 64, "%llu\n", nblocks + 7);
	snprintf(v[2], 64, "%llu\n", la + (1ULL << 32));
	u128s(v[3], ((u128)1 << 64) + la);
	strcat(v[3], "\n");
	snprintf(v[4], 64, "%llu\n", la + (1ULL << 63));
	snprintf(v[5], 64, "18446744073709551615\n");
	snprintf(v[6], 64, "-1\n");
	snprintf(v[7], 64, "abc\n");
	snprintf(v[8], 64, "%s", "");
	snprintf(v[9], 64, "\n");
	snprintf(v[10], 64, "%llux\n", la);
	snprintf(v[11], 64, "%llu 1\n", la);
	snprintf(v[12], 64, "%llu.5\n", la);
	snprintf(v[13], 64, "%llu\n", la + (1ULL << 52));	/* x 4096 wraps to la's offset */
	dg("doc silent on corrupt_lba's refusals; a block past the end or a malformed number is expected to be EINVAL/ERANGE; the values alias block A (lba %llu) if truncated or parsed leniently",
	   la);
	for (i = 0; i < 14; i++) {
		long r = dset("corrupt_lba", v[i]);

		if (r == 0 && !v[i][0])
			continue;	/* a 0-byte write that wrote nothing is fine */
		if (r >= 0 || !in_set(-r, E_INVAL_RANGE)) {
			dg("corrupt_lba <- \"%s\": %s%ld, expected EINVAL or ERANGE", ESC(v[i]),
			   r < 0 ? en(-r) : "accepted, returned ", r < 0 ? 0L : r);
			ok = 0;
		}
	}
	corrupt_refused = 1;
	return ok;
}

static int c_corrupt_nochange(void)
{
	unsigned char *b = abuf(BLK);
	int ok = 1;

	if (!b || !need(corrupt_refused && blocks_ok, "the corrupt_lba writes")) {
		free(b);
		return 0;
	}
	usleep(300000);
	if (dev_rw(0, b, BLK, BLKA_OFF) || memcmp(b, blkA, BLK)) {
		dg("block A (lba %llu) changed after refused corrupt_lba writes: first byte %02x, written %02x",
		   BLKA_OFF / BLK, b[0], blkA[0]);
		ok = 0;
	}
	if (dev_rw(0, b, BLK, BLKB_OFF) || memcmp(b, blkB, BLK)) {
		dg("block B changed after refused corrupt_lba writes");
		ok = 0;
	}
	free(b);
	return ok;
}

static int c_corrupt_valid(void)
{
	unsigned char *b = abuf(BLK);
	char v[32];
	long r;
	int i, ok = 0, rest = 0;

	if (!b || !need(dbg_ok && dev_ok, "debugfs and the device") || !write_blocks()) {
		free(b);
		return 0;
	}
	snprintf(v, sizeof(v), "%llu\n", BLKA_OFF / BLK);
	r = dset("corrupt_lba", v);
	if (r != (long)strlen(v)) {
		dg("corrupt_lba <- %s: %s", ESC(v), r < 0 ? en(-r) : "short");
		free(b);
		return 0;
	}
	for (i = 0; i < 40 && !ok; i++) {
		usleep(50000);
		if (dev_rw(0, b, BLK, BLKA_OFF))
			continue;
		ok = b[0] != blkA[0];
		rest = !memcmp(b + 1, blkA + 1, BLK - 1);
	}
	if (!ok)
		dg("after 2 s block A's first byte still reads %02x (doc: the device flips the first stored byte; passthrough returns it flipped)",
		   b[0]);
	else if (!rest) {
		dg("the flip changed more than the first byte");
		ok = 0;
	} else
		dg("first byte %02x -> %02x", blkA[0], b[0]);
	if (dev_rw(1, blkA, BLK, BLKA_OFF) || dev_rw(0, b, BLK, BLKA_OFF) || memcmp(b, blkA, BLK)) {
		dg("rewriting block A after the flip did not restore it");
		ok = 0;
	}
	free(b);
	return ok;
}

static int c_actors(void)
{
	static char txt[16384];
	struct actor a[NACT];
	int i, ok = 1;

	if (!need(dbg_ok, "debugfs"))
		return 0;
	if (read_actors(a, txt, sizeof(txt))) {
		dg_text("actors: could not find owner host|device for actors 1, 2, 3", txt);
		return 0;
	}
	for (i = 1; i < 4; i++) {
		if (a[i].epoch < 0 || a[i].epoch % 2) {
			dg("actor %d epoch %lld: expected an even (settled) epoch", i, a[i].epoch);
			ok = 0;
		}
		if (a[i].gen < 0) {
			dg("actor %d: no generation found", i);
			ok = 0;
		}
	}
	if (!ok)
		dg_text("actors", txt);
	return ok;
}

static int same_actors(const struct actor *x, const struct actor *y)
{
	int i;

	for (i = 1; i < 4; i++)
		if (x[i].owner != y[i].owner || x[i].epoch != y[i].epoch || x[i].gen != y[i].gen) {
			dg("actor %d: owner %s epoch %lld gen %lld, was %s %lld %lld", i,
			   side(y[i].owner), y[i].epoch, y[i].gen, side(x[i].owner), x[i].epoch,
			   x[i].gen);
			return 0;
		}
	return 1;
}

static int c_migrate_invalid(void)
{
	struct actor b[NACT], a[NACT];
	const char *fmt[] = { "", "\n", "2", "2\n", "2 \n", "%s\n", "2 %sx\n", "2 %s extra\n",
			      "2 %s %s\n", "0 %s\n", "4 %s\n", "9 %s\n", "-1 %s\n",
			      "4294967298 %s\n", "18446744073709551618 %s\n", "258 %s\n",
			      "x %s\n", "2x %s\n", "2%s\n", "%s 2\n", "2 %.3s\n", "2.0 %s\n" };
	const int nf = sizeof(fmt) / sizeof(fmt[0]);
	const char *other;
	int i, ok = 1;

	if (!need(dbg_ok && mstop_orig == 0, "debugfs"))
		return 0;
	if (read_actors(b, NULL, 0)) {
		dg("actors unreadable or unparsable (see the actors check)");
		return 0;
	}
	other = side(3 - b[2].owner);
	dg("every value names the side actor 2 is NOT on (%s), so a lenient parse would migrate it visibly",
	   other);
	for (i = 0; i < nf; i++) {
		char v[96];
		long r;

		snprintf(v, sizeof(v), fmt[i], other, other);
		r = dset("migrate", v);
		if (r != -EINVAL) {
			dg("migrate <- \"%s\": %s%ld; doc: EINVAL (syntax, unknown actor)", ESC(v),
			   r < 0 ? en(-r) : "accepted, returned ", r < 0 ? 0L : r);
			ok = 0;
		}
	}
	if (read_actors(a, NULL, 0) || !same_actors(b, a))
		ok = 0;
	return ok;
}

static int c_migrate_already(void)
{
	struct actor b[NACT], a[NACT];
	int i, ok = 1;

	if (!need(dbg_ok && mstop_orig == 0, "debugfs"))
		return 0;
	if (read_actors(b, NULL, 0)) {
		dg("actors unreadable or unparsable (see the actors check)");
		return 0;
	}
	for (i = 1; i < 4; i++) {
		char v[32];
		long r;

		snprintf(v, sizeof(v), "%d %s\n", i, side(b[i].owner));
		r = dset("migrate", v);
		if (r != -EALREADY) {
			dg("migrate <- \"%s\" (where it is): %s, doc: EALREADY", ESC(v),
			   r < 0 ? en(-r) : "accepted");
			ok = 0;
		}
	}
	if (read_actors(a, NULL, 0) || !same_actors(b, a))
		ok = 0;
	return ok;
}

static char IOD[80];

/* The I/O range goes through compress + checksum so migrations drain real requests. */
static int io_ensure(void)
{
	if (!dev_ok || !cfs_ok) {
		dg("precondition failed: the device and configfs (see the environment check)");
		return 0;
	}
	if (!IOD[0]) {
		if (mk(IOD, "io") || cfg(IOD, IO_OFF, CH, "compress", 1) || enable(IOD, 1)) {
			dg("could not attach compress+checksum over the I/O range [%llu,+128K)", IO_OFF);
			return 0;
		}
	}
	if (io_start()) {
		dg("could not start the I/O thread");
		return 0;
	}
	return 1;
}

static long count_lines(const char *f)
{
	static char b[1 << 18];
	long n = 0;
	char *p;

	if (dget(f, b, sizeof(b)) < 0)
		return -1;
	for (p = b; *p; p++)
		n += *p == '\n';
	return n;
}

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static int c_migrate_io(void)
{
	struct actor a[NACT];
	char v[32];
	long long t0;
	long r;
	int ok = 1, to;

	if (!need(dbg_ok && mstop_orig == 0 && act_orig_ok, "debugfs, actors") || !io_ensure())
		return 0;
	usleep(300000);
	mig_lines_before = count_lines("migrations");
	if (read_actors(act_before_mig, NULL, 0)) {
		dg("actors unreadable before the migration");
		return 0;
	}
	to = 3 - act_before_mig[2].owner;
	snprintf(v, sizeof(v), "2 %s\n", side(to));
	t0 = ms_now();
	r = dset("migrate", v);
	dg("migrate <- \"%s\" under I/O: %s%ld after %lld ms", ESC(v), r < 0 ? en(-r) : "returned ",
	   r < 0 ? 0L : r, ms_now() - t0);
	if (r != (long)strlen(v))
		ok = 0;
	if (read_actors(a, NULL, 0)) {
		dg("actors unreadable after the migration");
		return 0;
	}
	if (a[2].owner != to || a[2].gen != act_before_mig[2].gen + 1 ||
	    a[2].epoch != act_before_mig[2].epoch + 2) {
		dg("actor 2: owner %s gen %lld epoch %lld; expected %s, gen %lld, epoch %lld (doc: one generation per move, epoch +1 at start and +1 at end)",
		   side(a[2].owner), a[2].gen, a[2].epoch, side(to), act_before_mig[2].gen + 1,
		   act_before_mig[2].epoch + 2);
		ok = 0;
	}
	return ok;
}

static int c_migrate_race(void)
{
	struct actor b[NACT], a[NACT];
	char v[32], p[512];
	long r1, r2;
	int ok = 1, back;

	if (!need(dbg_ok && mstop_orig == 0, "debugfs") || !io_ensure())
		return 0;
	if (read_actors(b, NULL, 0)) {
		dg("actors unreadable");
		return 0;
	}
	back = 3 - b[2].owner;
	snprintf(v, sizeof(v), "2 %s", side(back));	/* no newline: also a valid form */
	dbp(p, "migrate");
	pair(p, v, p, v, &r1, &r2);
	if (!((r1 == (long)strlen(v) && r2 == -EALREADY) ||
	      (r2 == (long)strlen(v) && r1 == -EALREADY))) {
		dg("two concurrent \"%s\": %s%ld and %s%ld; expected one success and one EALREADY (EBUSY is not a documented answer)",
		   v, r1 < 0 ? en(-r1) : "", r1 < 0 ? 0L : r1, r2 < 0 ? en(-r2) : "",
		   r2 < 0 ? 0L : r2);
		ok = 0;
	}
	if (read_actors(a, NULL, 0) || a[2].owner != back || a[2].gen != b[2].gen + 1 ||
	    a[2].epoch != b[2].epoch + 2) {
		dg("actor 2 after the race: owner %s gen %lld epoch %lld; expected %s gen %lld epoch %lld (one migration, not two)",
		   side(a[2].owner), a[2].gen, a[2].epoch, side(back), b[2].gen + 1, b[2].epoch + 2);
		ok = 0;
	}
	return ok;
}

static int c_migrations_log(void)
{
	long now = count_lines("migrations");

	if (!need(mig_lines_before >= 0, "migrations read before the migrations"))
		return 0;
	dg("migrations had %ld lines before, %ld after 2 migrations (assumed: one line per migration)",
	   mig_lines_before, now);
	if (mig_lines_before < 200)
		return now == mig_lines_before + 2;
	return now >= mig_lines_before;
}

static int io_verdict(long ops0, const char *phase)
{
	usleep(300000);
	if (io.errs || io.mism || io.ops <= ops0) {
		dg("%s: I/O thread %ld ops (%ld in this phase), %ld errors (first %s), %ld mismatches %s",
		   phase, io.ops, io.ops - ops0, io.errs, en(io.e1), io.mism, io.m1);
		return 0;
	}
	dg("%s: %ld verified 4 KiB write+read pairs in this phase", phase, io.ops - ops0);
	return 1;
}

static int c_knobs_under_io(void)
{
	struct actor b[NACT];
	static char txt[1 << 17];
	long ops0;
	int i, ok = 1;

	if (!need(dbg_ok && mstop_orig == 0, "debugfs") || !io_ensure())
		return 0;
	ops0 = io.ops;
	for (i = 0; i < 10; i++) {
		char v[32];
		int k;

		for (k = 1; k <= 4; k++) {
			snprintf(v, sizeof(v), "%d\n", k % 4);
			if (!mstop_set(v))
				ok = 0;
		}
		snprintf(v, sizeof(v), "%llu\n", (i & 1 ? BLKB_OFF : BLKA_OFF) / BLK);
		dset("peek_lba", v);
		dget("peek", txt, sizeof(txt));
		dget("stats", txt, sizeof(txt));
		dget("actors", txt, sizeof(txt));
		dget("migrations", txt, sizeof(txt));
		usleep(20000);
	}
	mstop_restore();
	if (!ok)
		dg("a migrate_stop write failed under I/O");
	if (!read_actors(b, NULL, 0)) {
		char v[32];
		long r1, r2;

		snprintf(v, sizeof(v), "1 %s\n", side(3 - b[1].owner));
		r1 = dset("migrate", v);
		snprintf(v, sizeof(v), "1 %s\n", side(b[1].owner));
		r2 = dset("migrate", v);
		if (r1 < 0 || r2 < 0) {
			dg("migrating actor 1 (crc32c) away and back under I/O: %s, %s", en(-r1 > 0 ? -r1 : 0),
			   en(-r2 > 0 ? -r2 : 0));
			ok = 0;
		}
	}
	return io_verdict(ops0, "debugfs knobs and migrations") && ok;
}

static int c_cfs_under_io(void)
{
	const struct { const char *p; int cs; } cyc[] = {
		{ "encrypt", 1 }, { "checksum", 0 }, { "passthrough", 0 }, { "compress", 0 },
		{ "encrypt", 0 }, { "compress", 1 },
	};
	char d2[80];
	long ops0, r;
	int i, ok = 1;

	if (!need(cfs_ok, "configfs") || !io_ensure())
		return 0;
	ops0 = io.ops;
	for (i = 0; i < 12; i++) {
		enable(IOD, 0);
		r = -EIO;
		if (cfg(IOD, IO_OFF, CH, cyc[i % 6].p, cyc[i % 6].cs) || (r = enable(IOD, 1))) {
			dg("cycle %d: attaching %s (checksum %d) under I/O failed: %s", i,
			   cyc[i % 6].p, cyc[i % 6].cs, en(-r));
			ok = 0;
		}
		usleep(30000);
	}
	if (rmd(IOD)) {
		dg("rmdir of the enabled I/O attachment under I/O failed");
		ok = 0;
	}
	IOD[0] = 0;
	if (mk(d2, "io2") || cfg(d2, IO_OFF, CH, "encrypt", 1) || enable(d2, 1)) {
		dg("re-attaching encrypt over the I/O range failed");
		ok = 0;
	}
	usleep(100000);
	if (rmd(d2))
		ok = 0;
	ok &= io_verdict(ops0, "attach/detach/pipeline changes");
	io_stop();
	return ok;
}

/* ---------------------------------------------------------- final checks */

static int c_cleanup_cfs(void)
{
	char prefix[32];
	DIR *d;
	struct dirent *e;
	int i, ok = 1, seen[64] = { 0 };

	if (!need(cfs_ok, "configfs"))
		return 0;
	io_stop();
	cleanup_cfs();
	snprintf(prefix, sizeof(prefix), "kd%d_", (int)getpid());
	d = opendir(CROOT);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			dg("left behind: %s", e->d_name);
			ok = 0;
		}
		for (i = 0; i < npre; i++)
			if (!strcmp(pre_names[i], e->d_name))
				seen[i] = 1;
	}
	closedir(d);
	for (i = 0; i < npre; i++)
		if (!seen[i]) {
			dg("pre-existing entry %s is gone", pre_names[i]);
			ok = 0;
		}
	return ok;
}

static int c_restore_knobs(void)
{
	struct actor a[NACT];
	long long v = -1;
	int i, ok = 1;

	if (!need(dbg_ok, "debugfs"))
		return 0;
	restore_knobs();
	if (mstop_orig >= 0 && (dget_num("migrate_stop", &v) || v != mstop_orig)) {
		dg("migrate_stop reads %lld, was %lld", v, mstop_orig);
		ok = 0;
	}
	if (peek_orig >= 0 && (dget_num("peek_lba", &v) || v != peek_orig)) {
		dg("peek_lba reads %lld, was %lld", v, peek_orig);
		ok = 0;
	}
	if (!act_orig_ok || read_actors(a, NULL, 0))
		return 0;
	for (i = 1; i < 4; i++)
		if (a[i].owner != act_orig[i].owner) {
			dg("actor %d is on the %s, was on the %s", i, side(a[i].owner),
			   side(act_orig[i].owner));
			ok = 0;
		}
	return ok;
}

static int c_restore_data(void)
{
	unsigned char *b = abuf(SAVE_LEN);
	int r, ok = 1;

	if (!b || !need(saved_ok, "the scratch region saved")) {
		free(b);
		return 0;
	}
	io_stop();
	data_restored = 0;
	r = restore_data();
	if (r || dev_rw(0, b, SAVE_LEN, SAVE_OFF) || memcmp(b, saved, SAVE_LEN)) {
		dg("the scratch region [%llu,+2 MiB) does not read back as saved (%s)", SAVE_OFF,
		   en(-r));
		ok = 0;
	}
	if (dev_rw(0, b, BLK, (BLKA_OFF / BLK) * 512) || memcmp(b, saved_alias, BLK)) {
		dg("the block at lba A in 512-byte units does not read back as saved");
		ok = 0;
	}
	free(b);
	return ok;
}

static int c_kmsg(void)
{
	const char *pat[] = { "BUG:", "WARNING:", "Oops", "KASAN", "UBSAN", "Call Trace" };
	char rec[8192];
	int i, hits = 0, n = 0;

	if (kmsg_fd < 0) {
		dg("/dev/kmsg could not be opened at start");
		return 0;
	}
	for (;;) {
		ssize_t r = read(kmsg_fd, rec, sizeof(rec) - 1);

		if (r < 0 && errno == EPIPE)
			continue;
		if (r <= 0)
			break;
		rec[r] = 0;
		n++;
		for (i = 0; i < 6; i++)
			if (strstr(rec, pat[i])) {
				char *semi = strchr(rec, ';');

				if (hits++ < 10) {
					chomp(rec);
					dg("kmsg: %s", semi ? semi + 1 : rec);
				}
				break;
			}
	}
	dg("%d kernel log records since the start", n);
	return hits == 0;
}

/* ------------------------------------------------------------------ main */

static const struct {
	int (*fn)(void);
	const char *name;
} checks[] = {
	{ c_env, "environment: configfs reflux/, debugfs reflux0/, /dev/reflux0 sized, scratch saved" },
	{ c_mkdir, "configfs: mkdir makes an attachment with the 6 documented attributes, enable 0" },
	{ c_dir_noncreate, "configfs: no mkdir, file creation or unlink inside an attachment" },
	{ c_device_valid, "device: reflux0 reads back, with and without newline" },
	{ c_device_malformed, "device: malformed names refused with EINVAL, unchanged" },
	{ c_device_unbound, "device: an unbound name is accepted, enable then fails with ENODEV" },
	{ c_start_valid, "start: bytes, K/M/G, >4 GiB and max aligned u64 read back" },
	{ c_length_valid, "length: bytes, K/M/G, >4 GiB and max aligned u64 read back" },
	{ c_start_unaligned, "start: values not a multiple of 128 KiB refused with EINVAL, unchanged" },
	{ c_start_malformed, "start: empty, whitespace, negative, garbage refused with EINVAL, unchanged" },
	{ c_start_overflow, "start: numbers beyond u64 (digits, wrapping suffixes) refused, unchanged" },
	{ c_start_undoc, "start: undocumented forms (+, hex, octal, k, T, spaces, NUL) refused or exact" },
	{ c_length_invalid, "length: unaligned, malformed, beyond-u64 values refused, unchanged" },
	{ c_pipeline_valid, "pipeline: passthrough, checksum, compress, encrypt read back" },
	{ c_pipeline_invalid, "pipeline: unknown, misspelt, wrong-case, combined names refused (EINVAL)" },
	{ c_checksum_valid, "checksum: 1 and 0 read back" },
	{ c_checksum_invalid, "checksum: 2, -1, 1x, 10, empty, ... refused with EINVAL, unchanged" },
	{ c_enable_malformed, "enable: malformed booleans refused with EINVAL, nothing attached" },
	{ c_enable_zero_len, "enable: length 0 fails with EINVAL" },
	{ c_enable_past_end, "enable: a range starting at or past the device end fails with ERANGE" },
	{ c_enable_straddle_end, "enable: a range straddling the device end fails with ERANGE" },
	{ c_enable_wrap, "enable: start+length wrapping past 2^64 is refused (ERANGE)" },
	{ c_enable_at_end, "enable: the last 128 KiB of the device attaches" },
	{ c_enable_ok, "enable: a valid compress+checksum attachment enables and reads 1" },
	{ c_enabled_busy, "enabled: writes to device/start/length/pipeline/checksum fail EBUSY" },
	{ c_enable_again, "enable=1 twice then enable=0 once leaves the range free (no double attach)" },
	{ c_overlap, "overlapping attachments (partial, identical, super/subset) fail with EBUSY" },
	{ c_adjacent, "adjacent attachments (touching at either end) enable" },
	{ c_disable_frees, "enable=0 detaches (range free again) and is idempotent" },
	{ c_rmdir_enabled, "rmdir of an enabled attachment succeeds and frees its range" },
	{ c_cfs_read_offsets, "configfs: pread at every offset, past the end and byte by byte agree" },
	{ c_cfs_pwrite_offset, "configfs: pwrite at offsets never splices into the value" },
	{ c_cfs_zero_write, "configfs: 0-byte writes change nothing (0 or EINVAL; EFAULT noted)" },
	{ c_cfs_long_write, "configfs: writes over a page refused or honestly short, never wrong" },
	{ c_cfs_efault, "configfs: write from a PROT_NONE buffer fails EFAULT, unchanged" },
	{ c_cfs_robuf, "configfs: write from a read-only buffer is accepted" },
	{ c_cfs_straddle, "configfs: write straddling an unmapped page: EFAULT or honest short" },
	{ c_cfs_read_fault, "configfs: read into PROT_NONE or read-only memory fails EFAULT" },
	{ c_orphan_attr, "configfs: write/read through an fd of a removed attachment is clean" },
	{ c_orphan_enable, "configfs: enable through a removed attachment's fd attaches/detaches nothing" },
	{ c_race_start, "race: 4 writers + reader of start see only written values" },
	{ c_race_pipeline, "race: 4 writers + reader of pipeline see only written names" },
	{ c_race_enable_pair, "race: two identical-range attachments enabled at once, one wins" },
	{ c_race_enable_start, "race: enable vs start write, attached range matches start" },
	{ c_race_mkdir, "race: mkdir/rmdir vs attribute writers, clean errnos, nothing leaked" },
	{ c_enospc, "8 attachments enable, the 9th fails ENOSPC, freeing one admits it" },
	{ c_dbg_files, "debugfs: the 8 documented files exist" },
	{ c_stats_format, "debugfs stats: one key value per line, documented keys present" },
	{ c_ro_files, "debugfs: writes to stats/actors/migrations/peek refused" },
	{ c_mstop_valid, "migrate_stop: 0, 1, 2, 3 read back" },
	{ c_mstop_invalid, "migrate_stop: 4, -1, garbage, truncating values refused, unchanged" },
	{ c_mstop_undoc, "migrate_stop: undocumented forms (+1, 0x1, spaces, 01, NUL) refused or exact" },
	{ c_mstop_offsets, "migrate_stop: pread offsets agree, pwrite at offsets never splices" },
	{ c_mstop_zero_long, "migrate_stop: 0-byte and over-a-page writes change nothing wrongly" },
	{ c_mstop_efault, "migrate_stop: EFAULT from PROT_NONE, read-only source ok, EFAULT reading" },
	{ c_mstop_race, "migrate_stop: 4 writers + reader see only 0..3" },
	{ c_peek_valid, "peek_lba selects the block whose stored bytes peek shows in hex" },
	{ c_peek_invalid, "peek_lba: past-end, truncating, malformed values never alias a block" },
	{ c_corrupt_invalid, "corrupt_lba: past-end, truncating, malformed values refused" },
	{ c_corrupt_nochange, "corrupt_lba: the refused writes flipped no byte of the aliased block" },
	{ c_corrupt_valid, "corrupt_lba flips only the first stored byte of the block (passthrough)" },
	{ c_actors, "actors: 1-3 listed with owner host|device, even epoch, generation" },
	{ c_migrate_invalid, "migrate: malformed/unknown-actor writes fail EINVAL, actors unchanged" },
	{ c_migrate_already, "migrate: to the side an actor is on fails EALREADY, unchanged" },
	{ c_migrate_io, "migrate actor 2 under I/O: done, owner moved, generation +1, epoch +2" },
	{ c_migrate_race, "migrate: two identical concurrent writes, one success + one EALREADY" },
	{ c_migrations_log, "migrations: the two migrations are recorded" },
	{ c_knobs_under_io, "I/O during migrate_stop/peek_lba writes and migrations: no error" },
	{ c_cfs_under_io, "I/O during attach/detach/pipeline changes of its range: no error" },
	{ c_cleanup_cfs, "every configfs directory created was removed, others untouched" },
	{ c_restore_knobs, "migrate_stop, peek_lba and actor placement restored" },
	{ c_restore_data, "the scratch region of /dev/reflux0 restored bit-exact" },
	{ c_kmsg, "kernel log: no BUG/WARNING/Oops/KASAN/UBSAN/Call Trace" },
};
#define NCHECKS ((int)(sizeof(checks) / sizeof(checks[0])))

static void on_signal(int sig)
{
	char b[512];
	int k, n;

	n = snprintf(b, sizeof(b), "# signal %d before the end of check %d: aborting\n", sig,
		     cur + 1);
	if (write(1, b, n) < 0)
		_exit(2);
	if (dlen && write(1, diag, dlen) < 0)
		_exit(2);
	for (k = cur; k < NCHECKS; k++) {
		n = snprintf(b, sizeof(b), "not ok %d - %s\n", k + 1, checks[k].name);
		if (write(1, b, n) < 0)
			_exit(2);
	}
	io_stop();
	cleanup_cfs();
	restore_knobs();
	restore_data();
	_exit(1);
}

static void kmsg_open(void)
{
	int w = open(KMSG, O_WRONLY);

	if (w >= 0) {
		if (write(w, "knobs_doc_test: start\n", 22) < 0)
			w = -w;
		close(w < 0 ? -w : w);
	}
	kmsg_fd = open(KMSG, O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
}

int main(void)
{
	int i, passed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(getpid());
	signal(SIGALRM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	alarm(1200);
	kmsg_open();
	printf("1..%d\n", NCHECKS);
	for (i = 0; i < NCHECKS; i++) {
		int r;

		cur = i;
		r = checks[i].fn();
		pthread_mutex_lock(&dmu);
		printf("%s %d - %s\n", r ? "ok" : "not ok", i + 1, checks[i].name);
		fputs(diag, stdout);
		diag[0] = 0;
		dlen = 0;
		cur = i + 1;	/* printed: an abort from now on reports only the rest */
		pthread_mutex_unlock(&dmu);
		passed += !!r;
	}
	alarm(0);
	cleanup_all();
	if (mounted_cfs)
		umount(CFS_MNT);
	if (mounted_dbg)
		umount(DBG_MNT);
	return passed == NCHECKS ? 0 : 1;
}
