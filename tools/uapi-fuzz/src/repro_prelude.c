/* The calls of uapi-fuzz (tools/uapi-fuzz/src/calls.rs) in C, for
 * reproducers: each prints its result; a fault of a mapping access is a
 * result (errno = the signal number), as in the fuzzer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/cxl_ccm.h>

#define PAGE 4096
#define MAX_ENTRIES 8192
static const char *ccm_dev = "/dev/cxl_ccm7";
static const char *reflux_dev = "/dev/reflux0";
static const char *cfs_root = "/sys/kernel/config/reflux";
static const char *dbg_root = "/sys/kernel/debug/reflux0";
static const char *cfs_attrs[] = { "device", "start", "length", "pipeline", "checksum", "enable" };
static const char *dbg_files[] = { "actors", "migrate", "migrations", "migrate_stop", "sched",
				   "stats", "corrupt_lba", "peek_lba", "peek" };
static uint64_t r[64];
static int forked;
static pid_t kids[64];
static int nkids;
static unsigned char *arg_area, *ro_page, *none_page, *io_buf;
static uint64_t *entries_area;
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t in_access;

static __attribute__((unused)) void on_fault(int sig)
{
	if (in_access)
		siglongjmp(fault_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static __attribute__((unused)) void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static __attribute__((unused)) void setup(void)
{
	struct sigaction sa;

	arg_area = map_anon(5 * PAGE, PROT_READ | PROT_WRITE);
	ro_page = map_anon(PAGE, PROT_READ | PROT_WRITE);
	none_page = map_anon(PAGE, PROT_NONE);
	entries_area = map_anon(MAX_ENTRIES * 8, PROT_READ | PROT_WRITE);
	io_buf = map_anon((4 << 20) + PAGE, PROT_READ | PROT_WRITE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	alarm(120); /* a reproducer never hangs a regression run */
}

static __attribute__((unused)) uint64_t report(int i, const char *name, long ret, int err, uint64_t val)
{
	if (!forked)
		printf("call %d %s = %ld errno %d (%s) value %#llx\n", i, name, ret, err,
		       err ? strerror(err) : "ok", (unsigned long long)val);
	fflush(stdout);
	return val;
}

static __attribute__((unused)) uint64_t sysret(int i, const char *name, long ret)
{
	int err = ret < 0 ? errno : 0;

	return report(i, name, ret, err, ret < 0 ? 0 : (uint64_t)ret);
}

static __attribute__((unused)) uint64_t fdret(int i, const char *name, long ret)
{
	int err = ret < 0 ? errno : 0;

	return report(i, name, ret, err, ret < 0 ? UINT64_MAX : (uint64_t)ret);
}

static __attribute__((unused)) void put(unsigned char *s, int off, int w, uint64_t v)
{
	memcpy(s + off, &v, w); /* x86_64: little-endian */
}

static __attribute__((unused)) uint64_t get(const unsigned char *s, int off, int w)
{
	uint64_t v = 0;

	memcpy(&v, s + off, w);
	return v;
}

static __attribute__((unused)) uint64_t ptr_of(uint64_t kind, uint64_t good)
{
	switch (kind) {
	case 0: return good;
	case 1: return 0;
	case 2: return (uintptr_t)none_page;
	case 3: return (uintptr_t)ro_page;
	case 4: return good + 1;
	case 5: return 0xffff888000000000ULL;
	default: return kind;
	}
}

static __attribute__((unused)) unsigned long cmd_of(unsigned nr, unsigned size, uint64_t v)
{
#define ENC(dir, n, sz) ((unsigned long)(dir) << 30 | ((unsigned long)(sz) & 0x3fff) << 16 | 0xcf << 8 | (n))
	switch (v) {
	case 1: return ENC(3, nr, 0);
	case 2: return ENC(3, nr, size - 8);
	case 3: return ENC(3, nr, size + 8);
	case 4: return ENC(3, nr, 0x3fff);
	case 5: return ENC(2, nr, size);
	case 6: return ENC(1, nr, size);
	case 7: return ENC(3, 0x86, size);
	default: return ENC(3, nr, size);
	}
}

static __attribute__((unused)) uint64_t c_ioctl(int i, const char *name, uint64_t fd, unsigned nr, unsigned size,
			uint64_t cmdv, uint64_t kind, const unsigned char *s, int retoff, int retw)
{
	long ret;
	int err;

	memset(arg_area, 0, 5 * PAGE);
	memcpy(arg_area, s, size);
	mprotect(ro_page, PAGE, PROT_READ | PROT_WRITE);
	memcpy(ro_page, s, size);
	mprotect(ro_page, PAGE, PROT_READ);
	ret = ioctl((int)fd, cmd_of(nr, size, cmdv), (void *)(uintptr_t)ptr_of(kind, (uintptr_t)arg_area));
	err = ret < 0 ? errno : 0;
	return report(i, name, ret, err, retoff >= 0 && kind == 0 ? get(arg_area, retoff, retw) : 0);
}

/* RELEASE's entries: e0..e3 first, the array ending at the area's end. */
static __attribute__((unused)) uint64_t entries_ptr(uint64_t kind, uint64_t count, const uint32_t e[8])
{
	uint64_t n = count < 4 ? 4 : count > MAX_ENTRIES ? MAX_ENTRIES : count;
	uint64_t *first = entries_area + (MAX_ENTRIES - n);

	memset(entries_area, 0, MAX_ENTRIES * 8);
	memcpy(first, e, 32);
	return ptr_of(kind, (uintptr_t)first);
}

static __attribute__((unused)) uint64_t c_ccm_open(int i, uint64_t dev, uint64_t flags)
{
	char path[64];

	if (dev == 0)
		snprintf(path, sizeof(path), "%s", ccm_dev);
	else
		snprintf(path, sizeof(path), "/dev/cxl_ccm%llu", (unsigned long long)dev - 1);
	return fdret(i, "ccm_open", open(path, (int)flags | O_CLOEXEC));
}

static __attribute__((unused)) uint64_t c_rfx_open(int i, uint64_t flags)
{
	return fdret(i, "rfx_open", open(reflux_dev, (int)flags | O_CLOEXEC));
}

static __attribute__((unused)) uint64_t c_close(int i, uint64_t fd) { return sysret(i, "close", close((int)fd)); }
static __attribute__((unused)) uint64_t c_ccm_dup(int i, uint64_t fd) { return fdret(i, "ccm_dup", dup((int)fd)); }
static __attribute__((unused)) uint64_t c_rfx_fsync(int i, uint64_t fd) { return sysret(i, "rfx_fsync", fsync((int)fd)); }

static __attribute__((unused)) uint64_t c_ccm_ioctl_raw(int i, uint64_t fd, uint64_t cmd, uint64_t kind)
{
	cmd = (cmd & ~0xff00ULL) | 0xcf00;
	return sysret(i, "ccm_ioctl_raw", ioctl((int)fd, (unsigned long)cmd,
						(void *)(uintptr_t)ptr_of(kind, (uintptr_t)arg_area)));
}

static __attribute__((unused)) uint64_t c_ccm_mmap(int i, uint64_t fd, uint64_t region, uint64_t delta, uint64_t len,
			   uint64_t prot, uint64_t flags)
{
	void *p = mmap(NULL, len, (int)prot, (int)flags, (int)fd, (off_t)((region << 28) + delta));

	if (p == MAP_FAILED)
		return report(i, "ccm_mmap", -1, errno, 0);
	return report(i, "ccm_mmap", 0, 0, (uintptr_t)p);
}

static __attribute__((unused)) uint64_t c_munmap(int i, uint64_t a, uint64_t len)
{
	return sysret(i, "munmap", munmap((void *)(uintptr_t)a, len));
}

static __attribute__((unused)) uint64_t c_mprotect(int i, uint64_t a, uint64_t len, uint64_t prot)
{
	return sysret(i, "mprotect", mprotect((void *)(uintptr_t)a, len, (int)prot));
}

static __attribute__((unused)) uint64_t c_map_read(int i, uint64_t a)
{
	int sig = sigsetjmp(fault_jmp, 1);
	long v;

	if (sig) {
		in_access = 0;
		return report(i, "map_read", -1, sig, 0);
	}
	in_access = 1;
	v = *(volatile unsigned char *)(uintptr_t)a;
	in_access = 0;
	return report(i, "map_read", v, 0, 0);
}

static __attribute__((unused)) uint64_t c_map_write(int i, uint64_t a, uint64_t len, uint64_t byte)
{
	volatile unsigned char *p = (volatile unsigned char *)(uintptr_t)a;
	int sig = sigsetjmp(fault_jmp, 1);
	uint64_t k;

	if (len > (4 << 20))
		len = 4 << 20;
	if (sig) {
		in_access = 0;
		return report(i, "map_write", -1, sig, 0);
	}
	in_access = 1;
	for (k = 0; k < len; k++)
		p[k] = (unsigned char)byte;
	in_access = 0;
	return report(i, "map_write", (long)len, 0, 0);
}

static __attribute__((unused)) int read_u32(uint64_t a, uint32_t *v)
{
	int sig = sigsetjmp(fault_jmp, 1);

	if (sig) {
		in_access = 0;
		return sig;
	}
	in_access = 1;
	*v = *(volatile uint32_t *)(uintptr_t)a;
	in_access = 0;
	return 0;
}

/* The consumer loop once: release every record below the metadata tail. */
static __attribute__((unused)) uint64_t c_ccm_drain(int i, uint64_t fd, uint64_t hdr, uint64_t md, uint64_t head64,
			    uint64_t flags)
{
	static struct cxl_ccm_release_entry ents[CXL_CCM_RELEASE_MAX];
	struct cxl_ccm_release rel;
	uint32_t head = (uint32_t)head64, tail, cap, n, k;
	int sig;

	if ((sig = read_u32(hdr, &tail)) || (sig = read_u32(hdr + 4, &cap)))
		return report(i, "ccm_drain", -1, sig, 0);
	if (cap == 0 || (cap & (cap - 1)))
		return report(i, "ccm_drain", -1, EPROTO, head);
	n = tail - head;
	if (n > cap)
		n = cap;
	if (n > CXL_CCM_RELEASE_MAX)
		n = CXL_CCM_RELEASE_MAX;
	for (k = 0; k < n; k++) {
		uint64_t rec = md + (uint64_t)((head + k) & (cap - 1)) * 32;

		if ((sig = read_u32(rec + 8, &ents[k].payload_index)) ||
		    (sig = read_u32(rec + 12, &ents[k].length)))
			return report(i, "ccm_drain", -1, sig, 0);
	}
	memset(&rel, 0, sizeof(rel));
	rel.entries = (uintptr_t)ents;
	rel.count = n;
	rel.flags = (uint32_t)flags | CXL_CCM_RELEASE_METADATA;
	rel.metadata_head = head + n;
	{
		long ret = ioctl((int)fd, CXL_CCM_IOC_RELEASE, &rel);

		return report(i, "ccm_drain", ret, ret < 0 ? errno : 0, head + n);
	}
}

static __attribute__((unused)) uint64_t c_poll(int i, uint64_t fd, uint64_t events, uint64_t timeout)
{
	struct pollfd p = { .fd = (int)fd, .events = (short)events };
	long ret = poll(&p, 1, timeout > 1000 ? 1000 : (int)timeout);

	return report(i, "poll", ret, ret < 0 ? errno : 0, (uint16_t)p.revents);
}

static __attribute__((unused)) uint64_t c_fork(int i, uint64_t wait)
{
	pid_t pid = fork();

	if (pid == 0) {
		forked = 1;
		nkids = 0;
	} else if (pid > 0) {
		if (wait)
			waitpid(pid, NULL, 0);
		else if (nkids < 64)
			kids[nkids++] = pid;
	}
	return sysret(i, "fork", pid);
}

static __attribute__((unused)) uint64_t c_rfx_rw(int i, const char *name, uint64_t fd, uint64_t off, uint64_t len,
			 uint64_t mis, int byte)
{
	unsigned char *b;
	long ret;

	if (len > (4 << 20))
		len = 4 << 20;
	b = io_buf + (mis > PAGE ? PAGE : mis);
	if (byte >= 0) {
		memset(b, byte, len);
		ret = pwrite((int)fd, b, len, (off_t)off);
	} else {
		ret = pread((int)fd, b, len, (off_t)off);
	}
	return sysret(i, name, ret);
}

static __attribute__((unused)) uint64_t c_rfx_pread(int i, uint64_t fd, uint64_t off, uint64_t len, uint64_t mis)
{
	return c_rfx_rw(i, "rfx_pread", fd, off, len, mis, -1);
}

static __attribute__((unused)) uint64_t c_rfx_pwrite(int i, uint64_t fd, uint64_t off, uint64_t len, uint64_t mis,
			     uint64_t byte)
{
	return c_rfx_rw(i, "rfx_pwrite", fd, off, len, mis, (unsigned char)byte);
}

static __attribute__((unused)) uint64_t c_rfx_blkioctl(int i, uint64_t fd, uint64_t op, uint64_t start, uint64_t len)
{
	static const unsigned long cmds[] = { BLKGETSIZE64, BLKSSZGET, BLKFLSBUF, BLKDISCARD,
					      BLKZEROOUT, BLKPBSZGET, BLKSECDISCARD, 0x12ff };
	uint64_t range[2] = { start, len };
	unsigned long cmd = op < 8 ? cmds[op] : 0x12ff;
	long ret = ioctl((int)fd, cmd, cmd == BLKFLSBUF ? NULL : (void *)range);

	return report(i, "rfx_blkioctl", ret, ret < 0 ? errno : 0, range[0]);
}

static __attribute__((unused)) void cfs_path(char *p, size_t n, uint64_t dir, const char *attr)
{
	snprintf(p, n, "%s/fz%llu%s%s", cfs_root, (unsigned long long)(dir % 8), attr ? "/" : "",
		 attr ? attr : "");
}

static __attribute__((unused)) uint64_t c_cfs_mkdir(int i, uint64_t dir)
{
	char p[256];

	cfs_path(p, sizeof(p), dir, NULL);
	return sysret(i, "cfs_mkdir", mkdir(p, 0755));
}

static __attribute__((unused)) uint64_t c_cfs_rmdir(int i, uint64_t dir)
{
	char p[256];

	cfs_path(p, sizeof(p), dir, NULL);
	return sysret(i, "cfs_rmdir", rmdir(p));
}

static __attribute__((unused)) uint64_t file_op(int i, const char *name, const char *path, const char *value)
{
	char buf[4096];
	int fd = open(path, (value ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	long ret;

	if (fd < 0)
		return report(i, name, -1, errno, 0);
	ret = value ? write(fd, value, strlen(value)) : read(fd, buf, sizeof(buf));
	report(i, name, ret, ret < 0 ? errno : 0, 0);
	close(fd);
	return 0;
}

static __attribute__((unused)) uint64_t c_cfs_write(int i, uint64_t dir, uint64_t attr, const char *value)
{
	char p[256];

	cfs_path(p, sizeof(p), dir, attr < 6 ? cfs_attrs[attr] : "nosuch");
	return file_op(i, "cfs_write", p, value);
}

static __attribute__((unused)) uint64_t c_cfs_read(int i, uint64_t dir, uint64_t attr)
{
	char p[256];

	cfs_path(p, sizeof(p), dir, attr < 6 ? cfs_attrs[attr] : "nosuch");
	return file_op(i, "cfs_read", p, NULL);
}

static __attribute__((unused)) uint64_t c_dbg_write(int i, uint64_t file, const char *value)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dbg_root, file < 9 ? dbg_files[file] : "nosuch");
	return file_op(i, "dbg_write", p, value);
}

static __attribute__((unused)) uint64_t c_dbg_read(int i, uint64_t file)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dbg_root, file < 9 ? dbg_files[file] : "nosuch");
	return file_op(i, "dbg_read", p, NULL);
}
