/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_duplex: a duplex-aware sched_ext scheduler (CXLAimPod, section 4).
 *
 * CXL's link carries reads and writes on separate directions, so a memory
 * controller fed both at once gets more bandwidth than one fed a single
 * direction. This scheduler co-locates read-heavy and write-heavy tasks on the
 * same CPU cluster: each cluster keeps a count of the reads and writes its
 * tasks generate (from their classes: 90, 10 and 50 % reads for read, write and
 * balanced), and a hinted task is queued on the cluster where it adds the
 * least read/write imbalance, moving only when that saves at least
 * `hysteresis` and never while the loader reports oversubscription
 * (tools/scx-duplex/src/place.rs holds the same rule, tested on the host).
 *
 * Classes come from hints the loader resolves: a cgroup's (inherited by its
 * children) in cgroup_class, a process's own (overriding) in task_class.
 * Tasks without a hint, and tasks that may not run everywhere, go to the
 * global queue and run as under a simple FIFO scheduler.
 *
 * Any error (or the loader's exit) makes the kernel fall back to its default
 * scheduler: that is sched_ext's contract.
 */
#include <scx/common.bpf.h>
#include "scx_duplex.h"

char _license[] SEC("license") = "GPL";

const volatile u32 nr_cpus = 1;
const volatile u32 cluster_size = 1;
const volatile u32 nr_clusters = 1;
const volatile s64 hysteresis = 60;

/* The loader's view, refreshed every period (phases 1 and 2 of Algorithm 1). */
u64 slice_ns = SCX_SLICE_DFL;
bool oversubscribed;

UEI_DEFINE(uei);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);	/* cgroup id (its directory's inode number) */
	__type(value, u32);	/* enum duplex_class, inheritance resolved */
} cgroup_class SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, s32);	/* tgid */
	__type(value, u32);
} task_class SEC(".maps");

struct cluster_acct {
	s64 reads, writes, tasks;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DUPLEX_MAX_CLUSTERS);
	__type(key, u32);
	__type(value, struct cluster_acct);
} clusters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DUPLEX_NR_STATS);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

struct task_ctx {
	u32 cls;
	s32 cluster;	/* -1: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static void stat_inc(u32 idx)
{
	u64 *c = bpf_map_lookup_elem(&stats, &idx);

	if (c)
		(*c)++;
}

static s64 read_share(u32 cls)
{
	return cls == DUPLEX_READ ? 90 : cls == DUPLEX_WRITE ? 10 : 50;
}

static s64 abs64(s64 v)
{
	return v < 0 ? -v : v;
}

/* Accounts a task of class cls entering (sign 1) or leaving (-1) a cluster. */
static void account(s32 cluster, u32 cls, s64 sign)
{
	u32 key = cluster;
	struct cluster_acct *a;

	if (cluster < 0 || cls == DUPLEX_UNKNOWN)
		return;
	a = bpf_map_lookup_elem(&clusters, &key);
	if (!a)
		return;
	__sync_fetch_and_add(&a->reads, sign * read_share(cls));
	__sync_fetch_and_add(&a->writes, sign * (100 - read_share(cls)));
	__sync_fetch_and_add(&a->tasks, sign);
}

/*
 * The id of the task's cgroup in the cgroup2 hierarchy, where the hints are.
 * Not scx_bpf_task_cgroup(): that is the cpu controller's cgroup, the root
 * unless the administrator enabled +cpu down to the hinted cgroups.
 */
static u64 task_cgroup_id(struct task_struct *p)
{
	return BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id);
}

/* The task's class: its process's own hint, else its cgroup's. */
static u32 class_of(struct task_struct *p, u64 cgid)
{
	s32 tgid = p->tgid;
	u32 *c = bpf_map_lookup_elem(&task_class, &tgid);

	if (c)
		return *c;
	c = bpf_map_lookup_elem(&cgroup_class, &cgid);
	return c ? *c : DUPLEX_UNKNOWN;
}

/* What a task of class cls adds to a cluster's imbalance (the task itself excluded). */
static s64 delta(u32 i, u32 cls, s32 here, s64 *tasks)
{
	struct cluster_acct *a = bpf_map_lookup_elem(&clusters, &i);
	s64 r, w;

	if (!a)
		return 1 << 30;
	r = a->reads;
	w = a->writes;
	*tasks = a->tasks;
	if ((s32)i == here) {
		r -= read_share(cls);
		w -= 100 - read_share(cls);
		*tasks -= 1;
	}
	return abs64(r + read_share(cls) - w - (100 - read_share(cls))) - abs64(r - w);
}

/* The cluster for a hinted task now on `here` (-1: none); see place.rs. */
static s32 choose(u32 cls, s32 here)
{
	s64 best_d = 1 << 30, best_t = 1 << 30, here_d = 0, t;
	s32 best = 0;
	u32 i;

	if (here >= 0 && oversubscribed) {
		stat_inc(DUPLEX_STAT_FROZEN);
		return here;
	}
	bpf_for(i, 0, nr_clusters) {
		s64 d;

		if (i >= DUPLEX_MAX_CLUSTERS)
			break;
		d = delta(i, cls, here, &t);
		if ((s32)i == here)
			here_d = d;
		if (d < best_d || (d == best_d && t < best_t)) {
			best_d = d;
			best_t = t;
			best = i;
		}
	}
	if (here >= 0 && here != best && here_d < best_d + hysteresis) {
		stat_inc(DUPLEX_STAT_STAYED);
		return here;
	}
	return best;
}

static bool hinted(struct task_struct *p, struct task_ctx *tc)
{
	return tc->cls != DUPLEX_UNKNOWN && p->nr_cpus_allowed == nr_cpus;
}

s32 BPF_STRUCT_OPS(duplex_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	bool is_idle = false;
	s32 cpu, first;
	u32 i;

	if (!tc || !hinted(p, tc) || tc->cluster < 0)
		return scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	/* A CPU of the task's cluster: an idle one, else the previous one if it is there. */
	first = tc->cluster * cluster_size;
	bpf_for(i, 0, cluster_size) {
		if (i >= DUPLEX_MAX_CLUSTER_CPUS)
			break;
		cpu = first + i;
		if (cpu < nr_cpus && scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	}
	if (prev_cpu >= first && prev_cpu < first + (s32)cluster_size)
		return prev_cpu;
	return first;
}

void BPF_STRUCT_OPS(duplex_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u32 cls, i;
	s32 cl;

	if (!tc) {
		scx_bpf_dispatch(p, SCX_DSQ_GLOBAL, slice_ns, enq_flags);
		return;
	}
	cls = class_of(p, task_cgroup_id(p));
	if (cls != tc->cls) {
		account(tc->cluster, tc->cls, -1);
		tc->cls = cls;
		account(tc->cluster, tc->cls, 1);
	}
	if (!hinted(p, tc)) {
		if (tc->cluster >= 0) {
			account(tc->cluster, tc->cls, -1);
			tc->cluster = -1;
		}
		stat_inc(DUPLEX_STAT_GLOBAL);
		scx_bpf_dispatch(p, SCX_DSQ_GLOBAL, slice_ns, enq_flags);
		return;
	}
	cl = choose(cls, tc->cluster);
	if (cl != tc->cluster) {
		if (tc->cluster >= 0)
			stat_inc(DUPLEX_STAT_MOVED);
		account(tc->cluster, cls, -1);
		account(cl, cls, 1);
		tc->cluster = cl;
	}
	scx_bpf_dispatch(p, DUPLEX_DSQ(cl), slice_ns, enq_flags);
	bpf_for(i, 0, cluster_size) {
		if (i >= DUPLEX_MAX_CLUSTER_CPUS)
			break;
		if (cl * cluster_size + i < nr_cpus)
			scx_bpf_kick_cpu(cl * cluster_size + i, SCX_KICK_IDLE);
	}
}

void BPF_STRUCT_OPS(duplex_dispatch, s32 cpu, struct task_struct *prev)
{
	scx_bpf_consume(DUPLEX_DSQ(cpu / cluster_size));
}

void BPF_STRUCT_OPS(duplex_running, struct task_struct *p)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tc && tc->cls < DUPLEX_NR_CLASSES)
		stat_inc(tc->cls);
}

s32 BPF_STRUCT_OPS(duplex_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!tc)
		return -ENOMEM;
	tc->cls = DUPLEX_UNKNOWN;
	tc->cluster = -1;
	return 0;
}

void BPF_STRUCT_OPS(duplex_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tc)
		account(tc->cluster, tc->cls, -1);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(duplex_init)
{
	u32 i;
	s32 ret;

	if (!cluster_size || nr_clusters > DUPLEX_MAX_CLUSTERS)
		return -EINVAL;
	bpf_for(i, 0, nr_clusters) {
		ret = scx_bpf_create_dsq(DUPLEX_DSQ(i), -1);
		if (ret)
			return ret;
	}
	return 0;
}

void BPF_STRUCT_OPS(duplex_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(duplex_ops,
	       .select_cpu		= (void *)duplex_select_cpu,
	       .enqueue			= (void *)duplex_enqueue,
	       .dispatch		= (void *)duplex_dispatch,
	       .running			= (void *)duplex_running,
	       .init_task		= (void *)duplex_init_task,
	       .exit_task		= (void *)duplex_exit_task,
	       .init			= (void *)duplex_init,
	       .exit			= (void *)duplex_exit,
	       .name			= "duplex");
