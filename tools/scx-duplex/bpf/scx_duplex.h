/* SPDX-License-Identifier: GPL-2.0 */
/* What scx_duplex's BPF program and its loader share. */
#ifndef SCX_DUPLEX_H
#define SCX_DUPLEX_H

/* Task classes (tools/scx-duplex/src/hint.rs). */
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
	DUPLEX_STAT_MOVED = DUPLEX_NR_CLASSES,	/* a hinted task changed cluster */
	DUPLEX_STAT_STAYED,			/* hysteresis kept a task on its cluster */
	DUPLEX_STAT_FROZEN,			/* oversubscribed: nobody moves */
	DUPLEX_STAT_GLOBAL,			/* unhinted or pinned: the global queue */
	DUPLEX_NR_STATS,
};

#define DUPLEX_MAX_CLUSTERS	16
#define DUPLEX_MAX_CLUSTER_CPUS	16
/* A cluster's dispatch queue. */
#define DUPLEX_DSQ(cluster)	(1000 + (cluster))

#endif /* SCX_DUPLEX_H */
