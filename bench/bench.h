/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the runs of ccm_bench share: the options of a workload, the
 * configuration of a run, its measured result, the clock and the host task.
 */
#ifndef CCM_BENCH_H
#define CCM_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/cxl_ccm.h>

struct opts {
	const char *node;
	unsigned int launches, depth, size, chunk, host_ns;
	bool table, quick;
	/* KNN: a query against rows of dim elements per launch; 0 for STREAM_XFORM. */
	const char *workload;
	unsigned int dim, rows;
	/* SSB: the kernel (Q1.1 or Q1.2) over `rows` lineorder rows; 0 otherwise. */
	unsigned int ssb;
	/* DLRM SLS: `samples` lists of `pooling` indices into `rows` x `dim`; 0 otherwise. */
	unsigned int samples, pooling;
	/* PageRank: `vertices` and `edges` of the graph, one iteration per launch; 0 otherwise. */
	unsigned int vertices, edges;
	/* SSSP instead of PageRank on that graph (edges get weights 1-100; source vertex 0). */
	bool sssp;
	/*
	 * LLM attention: heads of head_dim over a context of tokens, q_rows query rows
	 * per launch in records of chunk_rows rows, weights shifted by shift; 0 otherwise.
	 */
	unsigned int heads, head_dim, tokens, q_rows, chunk_rows, shift;
	/* LLM: the FFN's inner size after the attention (OPT-2.7B: 10240); 0: none. */
	unsigned int ffn;
	/*
	 * --poll-yield: a polling consumer gives its CPU to any other runnable thread
	 * between polls. Under emulation the software device's threads run on the
	 * host's CPUs; on hardware the device computes on its own.
	 */
	bool poll_yield;
};

struct run {
	const char *label;
	__u32 mode, sf, md_slots, pl_slots, poll_ns;
	/* CXL_CCM_ORDER_*: in order, the device schedules FIFO; out of order, round-robin. */
	__u32 order;
	/* CONFIGURE flags: CXL_CCM_CONFIGURE_FIFO schedules an out-of-order tenant FIFO. */
	__u32 flags;
};

struct result {
	double e2e_us, busy_us, idle_us, launch_us, ccm_idle_us, credit_wait_us;
	/* Time in RELEASE calls: the consumer returning credit (part of host idle time). */
	double release_us;
	/*
	 * Host core stall as the paper's Figure 13 counts it: the cycles a core
	 * spends in the memory operations of the host-CCM interaction, i.e. each
	 * local poll's load of the ring tail (local_polls times the measured time
	 * of one, load_ns) plus the driver's link stalls (STATS.host_stall_ns:
	 * CXL.mem/CXL.io accesses, remote polls, the BS store's wait). Not the
	 * time between polls, which a core could spend elsewhere.
	 */
	double stall_us;
	/* The earlier measure, kept: every nanosecond spent polling plus the link stalls. */
	double poll_busy_us;
	unsigned long long local_polls;
	double load_ns;
	unsigned long long records, bytes, credit_stalls, interrupts, polls;
	/* The device computed later than its model (STATS.model_*): the run measured the emulator. */
	double model_deficit_us;
	unsigned long long model_late;
	bool verified;
	/* The run stopped in a detected deadlock (why says which); verified if it was expected. */
	bool deadlock;
	char why[160];
};

/*
 * The device's dilation in thousandths (calib.h): the costs this program
 * models itself (the host task, polling intervals) stretch as the device's do.
 * Options and results give them undilated.
 */
static unsigned int dilation = 1000;

static inline __u64 dilate(__u64 ns)
{
	return ns * dilation / 1000;
}

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void spin_ns(__u64 ns)
{
	__u64 until = now_ns() + ns;

	while (now_ns() < until)
		;
}

/* One pause of a polling consumer: its interval, then (--poll-yield) its CPU to others. */
static inline void poll_pause(const struct opts *o, __u32 poll_ns)
{
	if (poll_ns)
		spin_ns(poll_ns);
	if (o->poll_yield)
		sched_yield();
}

/* The host task of one record: the work the application does with it. */
static inline void host_task(__u64 ns)
{
	if (ns)
		spin_ns(ns);
}

/*
 * The mean time of one load of @p (a ring's tail), in ns, over 4096 loads:
 * what one local poll stalls a core for.
 */
static inline double load_ns(const volatile __u32 *p)
{
	__u64 t = now_ns();
	__u32 sink = 0;
	int i;

	for (i = 0; i < 4096; i++)
		sink += __atomic_load_n(p, __ATOMIC_ACQUIRE);
	t = now_ns() - t;
	__asm__ volatile("" : : "r"(sink));
	return t / 4096.0;
}

/*
 * The run's device-side figures from the tenant's STATS, after the timed part:
 * credit, idle, interrupts, polls, the model deficit, and the host core stall
 * (this loop's @polling ns and local polls plus the driver's link stalls).
 */
static inline void read_stats(int fd, __u64 polling, struct result *res)
{
	struct cxl_ccm_stats st;

	memset(&st, 0, sizeof(st));
	if (ioctl(fd, CXL_CCM_IOC_STATS, &st))
		return;
	res->credit_stalls = st.credit_stalls;
	res->ccm_idle_us = res->e2e_us - st.ccm_busy_ns / 1000.0;
	if (res->ccm_idle_us < 0)
		res->ccm_idle_us = 0;
	res->credit_wait_us = st.credit_wait_ns / 1000.0;
	res->interrupts = st.interrupts;
	res->polls = st.polls;
	res->poll_busy_us = (polling + st.host_stall_ns) / 1000.0;
	res->stall_us = (res->local_polls * res->load_ns + st.host_stall_ns) / 1000.0;
	res->model_deficit_us = st.model_deficit_ns / 1000.0;
	res->model_late = st.model_late_chunks;
}

static inline int fail(struct result *res, const char *fmt, unsigned long long a,
		unsigned long long b)
{
	res->verified = false;
	snprintf(res->why, sizeof(res->why), fmt, a, b);
	return -1;
}

#endif /* CCM_BENCH_H */
