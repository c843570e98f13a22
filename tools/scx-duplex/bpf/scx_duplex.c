/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_duplex: loads the duplex-aware scheduler (scx_duplex.bpf.c), keeps its
 * hint maps up to date and runs the periodic half of its policy: every
 * period it collects a sample (CollectSystemMetrics: /proc/stat and the
 * memory events the BPF program attributed), runs phases 1 and 2 and the
 * current policy's schedule() and update() (duplex_series.c), and hands the
 * result to the BPF program. SIGUSR1 switches to the next policy, the state
 * carried over. At exit it prints the per-CPU statistics and, per placed
 * thread, where it ran.
 *
 * Hints: --cgroup-hint PATH=CLASS marks a cgroup (a directory of the cgroup2
 * hierarchy) and every cgroup below it that has no hint of its own;
 * --task-hint PID=CLASS marks a process, overriding its cgroup's. CLASS is
 * read, write or balanced; anything else is refused before loading.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <scx/common.h>
#include "scx_duplex.h"
/* The tree's sched_ext Makefile compiles one file per scheduler: the policy comes in here. */
#include "duplex_series.c"
#include "scx_duplex.bpf.skel.h"

#define CGROUP2_MAGIC	0x63677270
#define MAX_HINTS	64

static const char usage[] =
"usage: scx_duplex [--cgroup-hint PATH=CLASS]... [--task-hint PID=CLASS]...\n"
"                  [--policy timeseries|hint] [--param NAME=VALUE]... [--params]\n"
"                  [--read-event TYPE:CONFIG] [--write-event TYPE:CONFIG] [--no-counters]\n"
"                  [--probe-counters]\n"
"                  [--cluster-size N] [--duration-s S] [--interval-ms MS] [--verbose]\n"
"  CLASS is read, write or balanced. Without --duration-s it runs until SIGINT;\n"
"  SIGUSR1 switches to the next policy. --params lists the parameters.\n"
"  Events are perf_event_attr type and config (default: LLC read and write misses);\n"
"  --probe-counters says whether they can be counted here and exits.\n";

struct hint {
	char path[PATH_MAX];
	int cls;
};

/* A memory event counter: perf_event_attr's type and config. */
struct event {
	__u32 type;
	__u64 config;
	const char *name;
};

struct opts {
	struct hint cg[MAX_HINTS];
	struct { int pid, cls; } task[MAX_HINTS];
	int nr_cg, nr_task, policy;
	long cluster_size, duration, interval_ms;
	struct event ev[2];		/* reads, writes */
	bool no_counters, probe;
	struct duplex_params params;
};

static struct opts o;
static volatile sig_atomic_t exit_req, switch_req;
static bool verbose;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		switch_req++;
	else
		exit_req = 1;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Splits KEY=CLASS; the class, or -1 (with a message). */
static int split_hint(char *arg, char **key)
{
	char *eq = strrchr(arg, '=');
	int cls;

	if (!eq) {
		fprintf(stderr, "scx_duplex: \"%s\" is not KEY=CLASS\n", arg);
		return -1;
	}
	*eq = '\0';
	*key = arg;
	cls = duplex_parse_class(eq + 1);
	if (cls < 0)
		fprintf(stderr, "scx_duplex: hint \"%s\" is not one of read, write, balanced\n",
			eq + 1);
	return cls;
}

static int add_cgroup_hint(char *arg)
{
	struct statfs sfs;
	struct stat st;
	char *key;
	int cls = split_hint(arg, &key);

	if (cls < 0)
		return -1;
	if (o.nr_cg == MAX_HINTS || !realpath(key, o.cg[o.nr_cg].path)) {
		fprintf(stderr, "scx_duplex: cgroup %s: %s\n", key,
			o.nr_cg == MAX_HINTS ? "too many hints" : strerror(errno));
		return -1;
	}
	/* A file in a cgroup (cgroup.procs) is on cgroup2 too, but is no cgroup. */
	if (statfs(o.cg[o.nr_cg].path, &sfs) || sfs.f_type != CGROUP2_MAGIC ||
	    stat(o.cg[o.nr_cg].path, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "scx_duplex: %s is not a cgroup2 directory\n", key);
		return -1;
	}
	o.cg[o.nr_cg++].cls = cls;
	return 0;
}

static int add_task_hint(char *arg)
{
	char *key, *end, proc[32];
	int cls = split_hint(arg, &key);
	long pid;

	if (cls < 0)
		return -1;
	if (o.nr_task == MAX_HINTS) {
		fprintf(stderr, "scx_duplex: more than %d task hints\n", MAX_HINTS);
		return -1;
	}
	pid = strtol(key, &end, 10);
	if (*end || pid <= 0 || pid > INT_MAX) {
		fprintf(stderr, "scx_duplex: \"%s\" is not a process id\n", key);
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/%ld", pid);
	if (access(proc, F_OK)) {
		fprintf(stderr, "scx_duplex: no process %ld\n", pid);
		return -1;
	}
	o.task[o.nr_task].pid = pid;
	o.task[o.nr_task++].cls = cls;
	return 0;
}

static int parse_event(const char *arg, struct event *e)
{
	unsigned long long type;
	char *end;

	/* Digits only: strtoul() would take a sign or spaces, and wrap. */
	if (!isdigit((unsigned char)arg[0]))
		goto bad;
	errno = 0;
	type = strtoull(arg, &end, 0);
	if (*end != ':' || errno || type > UINT32_MAX || !isdigit((unsigned char)end[1]))
		goto bad;
	e->type = type;
	e->config = strtoull(end + 1, &end, 0);
	if (*end || errno)
		goto bad;
	e->name = arg;
	return 0;
bad:
	fprintf(stderr, "scx_duplex: event \"%s\" is not TYPE:CONFIG (a 32-bit and a 64-bit number)\n",
		arg);
	return -1;
}

static int parse_number(const char *arg, long lo, long hi, long *v, const char *what)
{
	char *end;

	errno = 0;
	*v = strtol(arg, &end, 10);
	if (*end || end == arg || errno || *v < lo || *v > hi) {
		fprintf(stderr, "scx_duplex: %s %ld to %ld\n", what, lo, hi);
		return -1;
	}
	return 0;
}

/* One option; 0, or the exit status. */
static int parse_opt(int opt, char *arg)
{
	char err[256];

	switch (opt) {
	case 'c':
		return add_cgroup_hint(arg) ? 1 : 0;
	case 't':
		return add_task_hint(arg) ? 1 : 0;
	case 'p':
		o.policy = duplex_policy_find(arg);
		if (o.policy >= 0)
			return 0;
		fprintf(stderr, "scx_duplex: no policy \"%s\" (timeseries, hint)\n", arg);
		return 1;
	case 'P':
		if (!duplex_param_set(&o.params, arg, err, sizeof(err)))
			return 0;
		fprintf(stderr, "scx_duplex: %s\n", err);
		return 1;
	case 'r':
		return parse_event(arg, &o.ev[0]) ? 1 : 0;
	case 'w':
		return parse_event(arg, &o.ev[1]) ? 1 : 0;
	case 'n':
		o.no_counters = true;
		return 0;
	case 'C':
		o.probe = true;
		return 0;
	case 's':
		return parse_number(arg, 1, DUPLEX_MAX_CLUSTER_CPUS, &o.cluster_size,
				    "cluster size") ? 1 : 0;
	case 'd':
		return parse_number(arg, 0, LONG_MAX, &o.duration, "duration") ? 1 : 0;
	case 'i':
		return parse_number(arg, 10, 10000, &o.interval_ms, "interval (ms)") ? 1 : 0;
	case 'v':
		verbose = true;
		return 0;
	}
	return 2;
}

/* The command line into `o`; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup-hint", required_argument, NULL, 'c' },
		{ "task-hint", required_argument, NULL, 't' },
		{ "policy", required_argument, NULL, 'p' },
		{ "param", required_argument, NULL, 'P' },
		{ "params", no_argument, NULL, 'L' },
		{ "read-event", required_argument, NULL, 'r' },
		{ "write-event", required_argument, NULL, 'w' },
		{ "no-counters", no_argument, NULL, 'n' },
		{ "probe-counters", no_argument, NULL, 'C' },
		{ "cluster-size", required_argument, NULL, 's' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char buf[8192], err[256];
	bool list = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'h' || opt == '?') {
			fputs(usage, stderr);
			return opt == 'h' ? 0 : 2;
		}
		if (opt == 'L') {
			list = true;
			continue;
		}
		rc = parse_opt(opt, optarg);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (duplex_params_check(&o.params, err, sizeof(err))) {
		fprintf(stderr, "scx_duplex: %s\n", err);
		return 1;
	}
	/* --params lists the parameters as the whole command line set them, once it is valid. */
	if (list) {
		duplex_params_format(&o.params, buf, sizeof(buf));
		fputs(buf, stdout);
		return 0;
	}
	return -1;
}

/* Puts the effective class of the cgroup at `dir` and its descendants into the map. */
static void walk(int map, const char *dir, int inherited)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	__u64 id;
	__u32 cls = inherited;
	int i;

	if (stat(dir, &st))
		return;
	for (i = 0; i < o.nr_cg; i++)
		if (!strcmp(o.cg[i].path, dir))
			cls = o.cg[i].cls;
	id = st.st_ino;
	if (cls != DUPLEX_UNKNOWN)
		bpf_map_update_elem(map, &id, &cls, BPF_ANY);
	else
		bpf_map_delete_elem(map, &id);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		walk(map, sub, cls);
	}
	closedir(d);
}

/* The counters, per event and CPU; -1 where not open. */
static int ev_fd[2][DUPLEX_MAX_CLUSTERS * DUPLEX_MAX_CLUSTER_CPUS];

/*
 * Opens both memory event counters on every CPU (section 4.3.2); false, with
 * the reason in why, if the machine cannot count one of them anywhere.
 */
static bool open_counters(int nr_cpus, char *why, size_t len)
{
	struct perf_event_attr attr;
	int e, cpu;

	for (e = 0; e < 2; e++) {
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			memset(&attr, 0, sizeof(attr));
			attr.size = sizeof(attr);
			attr.type = o.ev[e].type;
			attr.config = o.ev[e].config;
			ev_fd[e][cpu] = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
						PERF_FLAG_FD_CLOEXEC);
			if (ev_fd[e][cpu] >= 0)
				continue;
			snprintf(why, len, "%s on CPU %d: %s", o.ev[e].name, cpu, strerror(errno));
			while (cpu-- > 0)
				close(ev_fd[e][cpu]);
			while (e-- > 0)
				for (cpu = 0; cpu < nr_cpus; cpu++)
					close(ev_fd[e][cpu]);
			return false;
		}
	}
	return true;
}

/* The counters into the BPF program's maps; false (with a message) if the kernel refuses one. */
static bool install_counters(struct scx_duplex *skel, int nr_cpus)
{
	int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		__u32 key = cpu;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.read_events), &key, &ev_fd[0][cpu],
					BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(skel->maps.write_events), &key, &ev_fd[1][cpu],
					BPF_ANY)) {
			fprintf(stderr, "scx_duplex: counters of CPU %d: %s\n", cpu, strerror(errno));
			return false;
		}
	}
	return true;
}

/* CPU utilization since the last call and runnable threads, from /proc/stat. */
static bool proc_stat(double *util, double *running)
{
	static unsigned long long last_idle, last_total;
	unsigned long long v[10] = { 0 }, idle, total = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	bool ok = false;
	int i;

	if (!f)
		return false;
	*running = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "cpu ", 4)) {
			sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			       &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
			for (i = 0; i < 10; i++)
				total += v[i];
			idle = v[3] + v[4];
			*util = total > last_total ?
				1.0 - (double)(idle - last_idle) / (double)(total - last_total) : 0;
			ok = last_total != 0;
			last_idle = idle;
			last_total = total;
		} else if (!strncmp(line, "procs_running ", 14)) {
			*running = atof(line + 14);
		}
	}
	fclose(f);
	return ok;
}

static int nr_possible;

/* A statistic summed over the CPUs. */
static __u64 stat_sum(struct scx_duplex *skel, __u32 idx)
{
	__u64 vals[nr_possible], sum = 0;
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, vals))
		return 0;
	for (cpu = 0; cpu < nr_possible; cpu++)
		sum += vals[cpu];
	return sum;
}

/* The change of a statistic since the last call. */
static double stat_delta(struct scx_duplex *skel, __u32 idx)
{
	static __u64 last[DUPLEX_NR_STATS];
	__u64 now = stat_sum(skel, idx), d = now - last[idx];

	last[idx] = now;
	return d;
}

/* CollectSystemMetrics (Algorithm 1, line 5); false until there is a period to measure. */
static bool collect(struct scx_duplex *skel, int nr_cpus, bool counters, struct duplex_sample *x)
{
	memset(x, 0, sizeof(*x));
	x->cpus = nr_cpus;
	x->reads = stat_delta(skel, DUPLEX_STAT_EV_READ);
	x->writes = stat_delta(skel, DUPLEX_STAT_EV_WRITE);
	x->traffic = counters;
	return proc_stat(&x->util, &x->running);
}

/* What the BPF program did since the last call: update(feedback)'s input. */
static void feedback(struct scx_duplex *skel, struct duplex_feedback *f)
{
	struct duplex_clusters cs;
	__u32 zero = 0, i;

	memset(f, 0, sizeof(*f));
	f->placed = stat_delta(skel, DUPLEX_STAT_PLACED);
	f->moved = stat_delta(skel, DUPLEX_STAT_MOVED);
	f->stayed = stat_delta(skel, DUPLEX_STAT_STAYED);
	f->clusters = skel->rodata->nr_clusters;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.clusters), &zero, &cs))
		return;
	for (i = 0; i < skel->rodata->nr_clusters; i++) {
		f->tasks += cs.c[i].tasks;
		f->imbalance += fabs((double)(cs.c[i].reads - cs.c[i].writes));
	}
}

static void print_stats(struct scx_duplex *skel, int nr_cpus)
{
	static const char *const names[DUPLEX_NR_STATS] = {
		"unknown", "read", "write", "balanced", "placed", "moved", "stayed", "global",
		"samples", "ev_read", "ev_write",
	};
	__u64 vals[DUPLEX_NR_STATS][nr_possible];
	__u32 idx;
	int cpu;

	for (idx = 0; idx < DUPLEX_NR_STATS; idx++)
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, vals[idx]))
			memset(vals[idx], 0, sizeof(vals[idx]));
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		printf("cpu %d:", cpu);
		for (idx = 0; idx < DUPLEX_NR_STATS; idx++)
			printf(" %s %llu", names[idx], (unsigned long long)vals[idx][cpu]);
		printf("\n");
	}
}

/* Per placed thread: its process, class, share and runs on each cluster. */
static void print_procs(struct scx_duplex *skel)
{
	static const char *const cls[] = { "unknown", "read", "write", "balanced" };
	int fd = bpf_map__fd(skel->maps.procs);
	__s32 key, next, *prev = NULL;
	struct duplex_proc r;
	__u32 i;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &r))
			continue;
		printf("proc %d pid %d class %s share %u measured %u runs", r.tgid, key,
		       r.cls < DUPLEX_NR_CLASSES ? cls[r.cls] : "?", r.share, r.measured);
		for (i = 0; i < skel->rodata->nr_clusters; i++)
			printf(" %llu", (unsigned long long)r.runs[i]);
		printf("\n");
	}
}

/* SIGUSR1: the next policy takes the state over. */
static void switch_policy(struct duplex_state *s)
{
	int from = s->policy;

	duplex_switch(s, (s->policy + 1) % duplex_nr_policies);
	printf("policy %s -> %s, carried: %d samples in the window, trends %s, hysteresis %.0f\n",
	       duplex_policies[from].name, duplex_policies[s->policy].name, s->w.len,
	       s->t.have ? "warm" : s->t.on ? "empty" : "off", s->hysteresis);
}

/* Every period: feedback to the policy, then phases 1 and 2 and schedule(). */
static void run(struct scx_duplex *skel, struct duplex_state *s, int nr_cpus, bool counters)
{
	struct timespec ts = { o.interval_ms / 1000, (o.interval_ms % 1000) * 1000000 };
	struct duplex_knobs k = skel->bss->knobs;
	struct duplex_feedback f;
	struct duplex_sample x;
	char line[512];
	long ticks = 0;

	while (!exit_req && !UEI_EXITED(skel, uei) &&
	       (!o.duration || ticks * o.interval_ms < o.duration * 1000)) {
		nanosleep(&ts, NULL);
		ticks++;
		if (switch_req) {
			switch_req = 0;
			switch_policy(s);
		}
		/* New cgroups take their hints at the next walk. */
		walk(bpf_map__fd(skel->maps.cgroup_class), "/sys/fs/cgroup", DUPLEX_UNKNOWN);
		feedback(skel, &f);
		duplex_feedback(s, &f);
		if (!collect(skel, nr_cpus, counters, &x))
			continue;
		duplex_tick(s, &x, &k);
		skel->bss->knobs = k;
		if (verbose) {
			duplex_format(s, &k, line, sizeof(line));
			printf("%s placed %.0f moved %.0f\n", line, f.placed, f.moved);
		}
		fflush(stdout);
	}
}

static void say_counters(bool counters, const char *why, int nr_cpus)
{
	if (counters)
		printf("scx_duplex: memory events: reads %s, writes %s, on %d CPUs\n",
		       o.ev[0].name, o.ev[1].name, nr_cpus);
	else
		printf("scx_duplex: no memory event counters (%s): read/write balance "
		       "unavailable, trend off; classes come from hints alone\n", why);
}

static void defaults(void)
{
	o.cluster_size = 1;
	o.interval_ms = 100;
	o.policy = duplex_policy_find("timeseries");
	o.ev[0] = (struct event){ PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL |
		  PERF_COUNT_HW_CACHE_OP_READ << 8 | PERF_COUNT_HW_CACHE_RESULT_MISS << 16,
		  "LLC read misses" };
	o.ev[1] = (struct event){ PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL |
		  PERF_COUNT_HW_CACHE_OP_WRITE << 8 | PERF_COUNT_HW_CACHE_RESULT_MISS << 16,
		  "LLC write misses" };
	duplex_params_default(&o.params);
}

/*
 * Opens and loads the program with the policy's first knobs, the counters
 * and the hints in place; NULL (with a message) if the counters cannot be
 * installed. A failure to open or load exits (SCX_BUG_ON).
 */
static struct scx_duplex *load(int nr_cpus, bool counters, struct duplex_state *s)
{
	struct scx_duplex *skel = SCX_OPS_OPEN(duplex_ops, scx_duplex);
	struct duplex_knobs k;
	int i;

	skel->rodata->nr_cpus = nr_cpus;
	skel->rodata->cluster_size = o.cluster_size;
	skel->rodata->nr_clusters = (nr_cpus + o.cluster_size - 1) / o.cluster_size;
	/* Without counters the sched_switch program has nothing to read: not even loaded. */
	bpf_program__set_autoload(skel->progs.duplex_switch, counters);
	duplex_state_init(s, &o.params, counters, o.policy);
	duplex_generate_hint(s);
	duplex_policies[s->policy].schedule(s, &k);
	skel->bss->knobs = k;
	SCX_OPS_LOAD(skel, duplex_ops, scx_duplex, uei);
	if (counters && !install_counters(skel, nr_cpus)) {
		scx_duplex__destroy(skel);
		return NULL;
	}
	for (i = 0; i < o.nr_task; i++) {
		__u32 cls = o.task[i].cls;

		bpf_map_update_elem(bpf_map__fd(skel->maps.task_class), &o.task[i].pid, &cls,
				    BPF_ANY);
	}
	walk(bpf_map__fd(skel->maps.cgroup_class), "/sys/fs/cgroup", DUPLEX_UNKNOWN);
	return skel;
}

int main(int argc, char **argv)
{
	/* Placement uses the online CPUs (numbered from 0); per-CPU maps have the possible ones. */
	int nr_cpus = sysconf(_SC_NPROCESSORS_ONLN), rc;
	static struct duplex_state state;
	struct scx_duplex *skel;
	struct bpf_link *link;
	char why[256] = "--no-counters";
	bool counters;

	defaults();
	rc = parse_args(argc, argv);
	if (rc >= 0)
		return rc;
	nr_possible = libbpf_num_possible_cpus();
	if ((nr_cpus + o.cluster_size - 1) / o.cluster_size > DUPLEX_MAX_CLUSTERS) {
		fprintf(stderr, "scx_duplex: %d CPUs need more than %d clusters of %ld\n", nr_cpus,
			DUPLEX_MAX_CLUSTERS, o.cluster_size);
		return 1;
	}
	counters = !o.no_counters && open_counters(nr_cpus, why, sizeof(why));
	if (o.probe) {
		say_counters(counters, why, nr_cpus);
		return 0;
	}
	if (access("/sys/kernel/sched_ext/state", F_OK)) {
		fprintf(stderr, "scx_duplex: this kernel has no sched_ext "
			"(CONFIG_SCHED_CLASS_EXT): nothing to load\n");
		return 1;
	}
	libbpf_set_print(libbpf_print_fn);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);
	skel = load(nr_cpus, counters, &state);
	if (!skel)
		return 1;
	link = SCX_OPS_ATTACH(skel, duplex_ops, scx_duplex);
	printf("scx_duplex: %d CPUs in %u clusters; %d cgroup and %d task hints; policy %s\n",
	       nr_cpus, skel->rodata->nr_clusters, o.nr_cg, o.nr_task,
	       duplex_policies[state.policy].name);
	say_counters(counters, why, nr_cpus);
	fflush(stdout);

	run(skel, &state, nr_cpus, counters);
	print_stats(skel, nr_cpus);
	print_procs(skel);
	printf("policy switches %d, last policy %s\n", state.switches,
	       duplex_policies[state.policy].name);
	bpf_link__destroy(link);
	UEI_REPORT(skel, uei);
	scx_duplex__destroy(skel);
	return 0;
}
