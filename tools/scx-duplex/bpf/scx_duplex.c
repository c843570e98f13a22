/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_duplex: loads the duplex-aware scheduler (scx_duplex.bpf.c), keeps its
 * hint maps up to date, runs phases 1 and 2 of the policy (the sliding window
 * and the oversubscription test of tools/scx-duplex/src/series.rs) and prints
 * the scheduler's per-CPU statistics when it stops.
 *
 * Hints: --cgroup-hint PATH=CLASS marks a cgroup (a directory of the cgroup2
 * hierarchy) and every cgroup below it that has no hint of its own;
 * --task-hint PID=CLASS marks a process, overriding its cgroup's. CLASS is
 * read, write or balanced; anything else is refused before loading. There
 * are no hardware traffic counters here: the classes come from hints alone.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <scx/common.h>
#include "scx_duplex.h"
#include "scx_duplex.bpf.skel.h"

#define CGROUP2_MAGIC	0x63677270
#define MAX_HINTS	64
#define WINDOW		10
/* series.rs: the EWMAs' smoothing factors and the phase-change threshold. */
#define ALPHA_FAST	0.5
#define ALPHA_SLOW	0.1
#define PHASE_THRESHOLD	0.1

static const char usage[] =
"usage: scx_duplex [--cgroup-hint PATH=CLASS]... [--task-hint PID=CLASS]...\n"
"                  [--cluster-size N] [--duration-s S] [--interval-ms MS] [--verbose]\n"
"  CLASS is read, write or balanced. Without --duration-s it runs until SIGINT.\n";

struct hint {
	char path[PATH_MAX];
	int cls;
};

static struct hint cg_hints[MAX_HINTS];
static int nr_cg_hints;
static volatile int exit_req;
static bool verbose;

static void on_signal(int sig)
{
	exit_req = 1;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int parse_class(const char *s)
{
	if (!strcmp(s, "read"))
		return DUPLEX_READ;
	if (!strcmp(s, "write"))
		return DUPLEX_WRITE;
	if (!strcmp(s, "balanced"))
		return DUPLEX_BALANCED;
	fprintf(stderr, "scx_duplex: hint \"%s\" is not one of read, write, balanced\n", s);
	return -1;
}

/* Splits KEY=CLASS; the class, or -1 (with a message). */
static int split_hint(char *arg, char **key)
{
	char *eq = strrchr(arg, '=');

	if (!eq) {
		fprintf(stderr, "scx_duplex: \"%s\" is not KEY=CLASS\n", arg);
		return -1;
	}
	*eq = '\0';
	*key = arg;
	return parse_class(eq + 1);
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
	for (i = 0; i < nr_cg_hints; i++)
		if (!strcmp(cg_hints[i].path, dir))
			cls = cg_hints[i].cls;
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

/* One sample of phase 1: utilization since the last sample and runnable threads. */
static bool sample(double *util, double *running)
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

/*
 * The read share of the work scheduled since the last call, from the per-CPU
 * run counts of each class weighted as place.rs weighs them (90, 10 and 50 %
 * reads): the series' sample where there are no traffic counters. Negative
 * when no hinted task ran.
 */
static double run_read_share(struct scx_duplex *skel, int nr_possible)
{
	static __u64 last[DUPLEX_NR_CLASSES];
	__u64 vals[nr_possible], now[DUPLEX_NR_CLASSES] = { 0 }, d[DUPLEX_NR_CLASSES];
	__u32 idx;
	int cpu;

	for (idx = DUPLEX_READ; idx <= DUPLEX_BALANCED; idx++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, vals))
			return -1;
		for (cpu = 0; cpu < nr_possible; cpu++)
			now[idx] += vals[cpu];
		d[idx] = now[idx] - last[idx];
		last[idx] = now[idx];
	}
	if (!(d[DUPLEX_READ] + d[DUPLEX_WRITE] + d[DUPLEX_BALANCED]))
		return -1;
	return (0.9 * d[DUPLEX_READ] + 0.1 * d[DUPLEX_WRITE] + 0.5 * d[DUPLEX_BALANCED]) /
	       (double)(d[DUPLEX_READ] + d[DUPLEX_WRITE] + d[DUPLEX_BALANCED]);
}

static void print_stats(struct scx_duplex *skel, int nr_possible, int nr_cpus)
{
	static const char *const names[DUPLEX_NR_STATS] = {
		"unknown", "read", "write", "balanced", "moved", "stayed", "frozen", "global",
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup-hint", required_argument, NULL, 'c' },
		{ "task-hint", required_argument, NULL, 't' },
		{ "cluster-size", required_argument, NULL, 's' },
		{ "duration-s", required_argument, NULL, 'd' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct { int pid, cls; } task_hints[MAX_HINTS];
	/* Placement uses the online CPUs (numbered from 0); per-CPU maps have the possible ones. */
	int nr_task_hints = 0, nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nr_possible = libbpf_num_possible_cpus();
	long cluster_size = 1, duration = 0, interval_ms = 100;
	double loads[WINDOW] = { 0 }, utils[WINDOW] = { 0 };
	double fast = 0, slow = 0, volatility = 0;
	bool have_ewma = false;
	struct scx_duplex *skel;
	struct bpf_link *link;
	int opt, i, n = 0, ticks = 0;
	__u64 base_slice;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *key, *end;
		int cls;

		switch (opt) {
		case 'c':
			cls = split_hint(optarg, &key);
			if (cls < 0)
				return 1;
			if (nr_cg_hints == MAX_HINTS || !realpath(key, cg_hints[nr_cg_hints].path)) {
				fprintf(stderr, "scx_duplex: cgroup %s: %s\n", key,
					nr_cg_hints == MAX_HINTS ? "too many hints" : strerror(errno));
				return 1;
			}
			{
				struct statfs sfs;

				if (statfs(cg_hints[nr_cg_hints].path, &sfs) ||
				    sfs.f_type != CGROUP2_MAGIC) {
					fprintf(stderr, "scx_duplex: %s is not a cgroup2 directory\n",
						key);
					return 1;
				}
			}
			cg_hints[nr_cg_hints++].cls = cls;
			break;
		case 't':
			cls = split_hint(optarg, &key);
			if (cls < 0)
				return 1;
			if (nr_task_hints == MAX_HINTS) {
				fprintf(stderr, "scx_duplex: more than %d task hints\n", MAX_HINTS);
				return 1;
			}
			{
				long pid = strtol(key, &end, 10);
				char proc[32];

				if (*end || pid <= 0 || pid > INT_MAX) {
					fprintf(stderr, "scx_duplex: \"%s\" is not a process id\n", key);
					return 1;
				}
				snprintf(proc, sizeof(proc), "/proc/%ld", pid);
				if (access(proc, F_OK)) {
					fprintf(stderr, "scx_duplex: no process %ld\n", pid);
					return 1;
				}
				task_hints[nr_task_hints].pid = pid;
			}
			task_hints[nr_task_hints++].cls = cls;
			break;
		case 's':
			cluster_size = strtol(optarg, &end, 10);
			if (*end || cluster_size < 1 || cluster_size > DUPLEX_MAX_CLUSTER_CPUS) {
				fprintf(stderr, "scx_duplex: cluster size 1 to %d\n",
					DUPLEX_MAX_CLUSTER_CPUS);
				return 1;
			}
			break;
		case 'd':
			duration = strtol(optarg, &end, 10);
			if (*end || duration < 0) {
				fprintf(stderr, "scx_duplex: bad duration %s\n", optarg);
				return 1;
			}
			break;
		case 'i':
			interval_ms = strtol(optarg, &end, 10);
			if (*end || interval_ms < 10 || interval_ms > 10000) {
				fprintf(stderr, "scx_duplex: interval 10 to 10000 ms\n");
				return 1;
			}
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fputs(usage, stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	if ((nr_cpus + cluster_size - 1) / cluster_size > DUPLEX_MAX_CLUSTERS) {
		fprintf(stderr, "scx_duplex: %d CPUs need more than %d clusters of %ld\n", nr_cpus,
			DUPLEX_MAX_CLUSTERS, cluster_size);
		return 1;
	}
	libbpf_set_print(libbpf_print_fn);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = SCX_OPS_OPEN(duplex_ops, scx_duplex);
	skel->rodata->nr_cpus = nr_cpus;
	skel->rodata->cluster_size = cluster_size;
	skel->rodata->nr_clusters = (nr_cpus + cluster_size - 1) / cluster_size;
	SCX_OPS_LOAD(skel, duplex_ops, scx_duplex, uei);
	for (i = 0; i < nr_task_hints; i++) {
		__u32 cls = task_hints[i].cls;

		bpf_map_update_elem(bpf_map__fd(skel->maps.task_class), &task_hints[i].pid, &cls,
				    BPF_ANY);
	}
	walk(bpf_map__fd(skel->maps.cgroup_class), "/sys/fs/cgroup", DUPLEX_UNKNOWN);
	link = SCX_OPS_ATTACH(skel, duplex_ops, scx_duplex);
	base_slice = skel->data->slice_ns;
	printf("scx_duplex: %d CPUs in %u clusters; %d cgroup and %d task hints; no hardware "
	       "traffic counters: classes come from hints alone\n", nr_cpus,
	       skel->rodata->nr_clusters, nr_cg_hints, nr_task_hints);
	fflush(stdout);

	while (!exit_req && !UEI_EXITED(skel, uei) &&
	       (!duration || ticks * interval_ms < duration * 1000)) {
		struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000 };
		double util, running, mean_load = 0, mean_util = 0, x, shrink;

		nanosleep(&ts, NULL);
		ticks++;
		/* New cgroups take their hints at the next walk. */
		walk(bpf_map__fd(skel->maps.cgroup_class), "/sys/fs/cgroup", DUPLEX_UNKNOWN);
		if (!sample(&util, &running))
			continue;
		loads[n % WINDOW] = running / nr_cpus;
		utils[n % WINDOW] = util;
		n++;
		for (i = 0; i < (n < WINDOW ? n : WINDOW); i++) {
			mean_load += loads[i];
			mean_util += utils[i];
		}
		mean_load /= n < WINDOW ? n : WINDOW;
		mean_util /= n < WINDOW ? n : WINDOW;
		/* Trends (series.rs's Trends): a fast and a slow EWMA of the read share. */
		x = run_read_share(skel, nr_possible);
		if (x >= 0) {
			if (have_ewma)
				volatility += ALPHA_SLOW * (fabs(x - fast) - volatility);
			fast = have_ewma ? fast + ALPHA_FAST * (x - fast) : x;
			slow = have_ewma ? slow + ALPHA_SLOW * (x - slow) : x;
			have_ewma = true;
		}
		/* Oversubscribed: more than 1.5 runnable threads per CPU with the CPUs 85 % busy. */
		skel->bss->oversubscribed = mean_load > 1.5 && mean_util > 0.85;
		/* series.rs's time_slice: doubled when oversubscribed, else halved at most as the
		 * mix grows volatile. */
		shrink = 1.0 - 0.5 * (volatility < 0 ? 0 : volatility > 1 ? 1 : volatility);
		skel->data->slice_ns = skel->bss->oversubscribed ? 2 * base_slice :
				       (__u64)(base_slice * shrink);
		if (verbose)
			printf("load %.2f util %.2f oversubscribed %d read share %.2f trend %+.2f%s "
			       "volatility %.2f slice %llu us\n", mean_load, mean_util,
			       skel->bss->oversubscribed, fast, fast - slow,
			       fabs(fast - slow) > PHASE_THRESHOLD ? " (phase change)" : "",
			       volatility, (unsigned long long)skel->data->slice_ns / 1000);
	}
	print_stats(skel, nr_possible, nr_cpus);
	bpf_link__destroy(link);
	UEI_REPORT(skel, uei);
	scx_duplex__destroy(skel);
	return 0;
}
