/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What scx_duplex's BPF program, its loader and the host tests share: the
 * classes, the statistics' layout and the structures that cross the
 * user/kernel boundary. It is included by BPF code (where vmlinux.h has
 * already defined the types) and by ordinary C.
 */
#ifndef SCX_DUPLEX_H
#define SCX_DUPLEX_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Task classes: a hint's word (duplex_parse_class()). */
enum duplex_class {
	DUPLEX_UNKNOWN = 0,
	DUPLEX_READ = 1,
	DUPLEX_WRITE = 2,
	DUPLEX_BALANCED = 3,
	DUPLEX_NR_CLASSES = 4,
};

/* Per-CPU statistics (the stats map's index). */
enum duplex_stat {
	/* Runs of tasks of each class on this CPU: DUPLEX_UNKNOWN..DUPLEX_BALANCED. */
	DUPLEX_STAT_PLACED = DUPLEX_NR_CLASSES,	/* a hinted task got its first cluster */
	DUPLEX_STAT_MOVED,			/* a hinted task changed cluster */
	DUPLEX_STAT_STAYED,			/* hysteresis kept a task on its cluster */
	DUPLEX_STAT_GLOBAL,			/* unhinted or pinned: the shared queue */
	DUPLEX_STAT_SAMPLES,			/* per-task read-share samples taken */
	DUPLEX_STAT_EV_READ,			/* read-event counts attributed here */
	DUPLEX_STAT_EV_WRITE,			/* write-event counts attributed here */
	DUPLEX_NR_STATS,
};

/* duplex_choose()'s verdict, the statistic it feeds. */
enum duplex_verdict {
	DUPLEX_KEPT = 0,	/* already on the best cluster */
	DUPLEX_PLACED_NEW = DUPLEX_STAT_PLACED,
	DUPLEX_MOVED_AWAY = DUPLEX_STAT_MOVED,
	DUPLEX_STAYED_PUT = DUPLEX_STAT_STAYED,
};

#define DUPLEX_MAX_CLUSTERS	16
#define DUPLEX_MAX_CLUSTER_CPUS	16
/* A cluster's dispatch queue, and the queue of everything not placed. */
#define DUPLEX_DSQ(cluster)	(1000 + (cluster))
#define DUPLEX_DSQ_SHARED	999

/*
 * One cluster's traffic: the read and write shares (percent of a task) of
 * the runnable hinted tasks placed on it, and how many they are.
 */
struct duplex_cluster {
	__s64 reads;
	__s64 writes;
	__s64 tasks;
};

/* The clusters map's only value: one lookup gives duplex_choose() them all. */
struct duplex_clusters {
	struct duplex_cluster c[DUPLEX_MAX_CLUSTERS];
};

/*
 * A task's measured read/write balance, from the memory events attributed to
 * it at each context switch (events since its last sample in acc_*).
 */
struct duplex_signal {
	__u64 acc_reads;
	__u64 acc_writes;
	__u32 share;		/* EWMA of the read share, permille */
	__u32 vol;		/* EWMA of |sample - share|, permille */
	__u32 samples;		/* samples folded in (saturates) */
	__u32 pad;
};

/* A hinted thread's record (the procs map, keyed by pid): where it ran. */
struct duplex_proc {
	__s32 tgid;
	__u32 cls;
	__u32 share;		/* the read share it was last placed with, percent */
	__u32 measured;		/* that share was measured, not assumed */
	__u64 runs[DUPLEX_MAX_CLUSTERS];	/* runs on each cluster's CPUs */
};

/*
 * What the loader's policy tells the BPF program (phase 2's scheduling hint
 * and the parameters of phases 3 and 4), rewritten every period. Percentages
 * of slice_ns, except where said.
 */
struct duplex_knobs {
	__u64 slice_ns;		/* the base time slice */
	__u32 oversubscribed;	/* the window shows oversubscription */
	__u32 phase_change;	/* the read-share trend crossed its threshold */
	__u32 sys_vol;		/* the system's read-share volatility, permille */
	__u32 use_measured;	/* account tasks by their measured read share */
	__u32 hysteresis;	/* imbalance (percent of a task) a move must save */
	__u32 load_weight;	/* what one task costs a cluster, same unit */
	__u32 oversub_slice;	/* the slice when oversubscribed */
	__u32 vol_shrink;	/* how much of the slice full volatility takes */
	__u32 phase_slice;	/* a read or write task's slice in a phase change */
	__u32 slice_min;	/* bounds of any per-task slice */
	__u32 slice_max;
	__u32 lag_slices;	/* vruntime credit a sleeper keeps, in slices */
	__u32 share[DUPLEX_NR_CLASSES];	/* a class's assumed read share, percent */
	__u32 task_alpha;	/* per-task EWMA weight, percent */
	__u32 task_min_samples;	/* samples before a measured share is trusted */
	__u64 task_min_events;	/* events per per-task sample */
};

#endif /* SCX_DUPLEX_H */
