/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_duplex: a duplex-aware sched_ext scheduler (CXLAimPod, section 4).
 *
 * CXL's link carries reads and writes on separate directions, so a memory
 * controller fed both at once gets more bandwidth than one fed a single
 * direction. This scheduler co-locates read-heavy and write-heavy tasks on the
 * same CPU cluster. It runs phases 3 and 4 of Algorithm 1 per task; the
 * loader runs phases 1 and 2 every period and hands their result over in
 * `knobs`. The decisions themselves are duplex_policy.h's, which the host
 * tests run too:
 *
 * - enqueue: a hinted task's read share (its measured one once trusted, else
 *   its class's) is placed on the cluster where it adds the least read/write
 *   imbalance plus load (duplex_choose(), with hysteresis), and inserted into
 *   that cluster's queue ordered by deadline (vruntime plus its own slice,
 *   duplex_task_slice()). Unhinted and pinned tasks go to a shared queue,
 *   ordered the same way.
 * - dispatch: a CPU takes the earlier deadline of its cluster's queue and the
 *   shared one.
 * - sched_switch (a tracing program, loaded only where the machine has memory
 *   event counters): the events since the last switch are the outgoing
 *   task's, folded into its read-share signal (section 4.3.2).
 *
 * Classes come from hints the loader resolves: a cgroup's (inherited by its
 * children) in cgroup_class, a process's own (overriding) in task_class.
 *
 * Any error (or the loader's exit) makes the kernel fall back to its default
 * scheduler: that is sched_ext's contract.
 */
#include <scx/common.bpf.h>
#include "scx_duplex.h"
#include "duplex_policy.h"

char _license[] SEC("license") = "GPL";

const volatile u32 nr_cpus = 1;
const volatile u32 cluster_size = 1;
const volatile u32 nr_clusters = 1;

/*
 * Phase 2's hint and the policy's parameters, rewritten by the loader every
 * period. A reader may see a half-written update for one decision: each
 * field is valid on its own.
 */
struct duplex_knobs knobs;

/* Algorithm 1's mvruntime: the vruntime the CPUs have reached. */
u64 mvruntime;

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct duplex_clusters);
} clusters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DUPLEX_NR_STATS);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, s32);	/* pid */
	__type(value, struct duplex_proc);
} procs SEC(".maps");

/* The loader's per-CPU memory event counters (perf_event_open fds), one map per event. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u32));
} read_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(u32));
} write_events SEC(".maps");

struct pmu_last {
	u64 reads, writes, valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct pmu_last);
} pmu_last SEC(".maps");

struct task_ctx {
	u32 cls;
	s32 cluster;		/* -1: none */
	u32 accounted;		/* counted in its cluster: it is runnable */
	u32 acct_share;		/* the read share it is counted with */
	u64 vruntime;
	u64 slice;		/* the slice it was last given */
	struct duplex_signal sig;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static void stat_add(u32 idx, u64 v)
{
	u64 *c = bpf_map_lookup_elem(&stats, &idx);

	if (c)
		*c += v;
}

static void stat_inc(u32 idx)
{
	stat_add(idx, 1);
}

static struct duplex_clusters *clusters_get(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&clusters, &zero);
}

/* A task of read share `share` enters (sign 1) or leaves (-1) cluster cl. */
static void account(s32 cl, u32 share, s64 sign)
{
	struct duplex_clusters *cs = clusters_get();
	u32 i = cl;

	if (!cs || cl < 0 || i >= DUPLEX_MAX_CLUSTERS)
		return;
	duplex_account(&cs->c[i], share, sign);
}

/* The task stops counting in its cluster (it sleeps, exits or loses its hint). */
static void unaccount(struct task_ctx *tc)
{
	if (!tc->accounted)
		return;
	account(tc->cluster, tc->acct_share, -1);
	tc->accounted = 0;
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

static bool hinted(struct task_struct *p, struct task_ctx *tc)
{
	return tc->cls != DUPLEX_UNKNOWN && p->nr_cpus_allowed == nr_cpus;
}

/*
 * SelectCPU's cluster half (Algorithm 1, line 21): the cluster for a hinted
 * task, accounted there; -1 if there is none.
 */
static s32 place(struct task_ctx *tc)
{
	struct duplex_clusters *cs = clusters_get();
	u32 share = duplex_task_share(&knobs, tc->cls, &tc->sig), verdict = DUPLEX_KEPT;
	s32 cl;

	if (!cs)
		return -1;
	/* A new measurement: the cluster's figures follow before anything is compared. */
	if (tc->accounted && share != tc->acct_share) {
		account(tc->cluster, tc->acct_share, -1);
		account(tc->cluster, share, 1);
		tc->acct_share = share;
	}
	cl = duplex_choose(cs->c, nr_clusters, share, tc->cluster, tc->accounted, &knobs,
			   &verdict);
	if (cl < 0)
		return -1;
	if (verdict != DUPLEX_KEPT)
		stat_inc(verdict);
	if (cl != tc->cluster)
		unaccount(tc);
	if (!tc->accounted) {
		account(cl, share, 1);
		tc->accounted = 1;
		tc->acct_share = share;
	}
	tc->cluster = cl;
	return cl;
}

/*
 * SelectCPU's CPU half (line 21): for a placed task a CPU of its cluster.
 * Oversubscribed (the hint), the previous CPU if it is there: no CPU stays
 * idle for long and a migration costs the caches. Otherwise an idle one,
 * the previous first.
 */
s32 BPF_STRUCT_OPS(duplex_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	bool is_idle = false, in;
	s32 cpu, first;
	u32 i;

	if (!tc || !hinted(p, tc) || tc->cluster < 0)
		return scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	first = tc->cluster * cluster_size;
	in = prev_cpu >= first && prev_cpu < first + (s32)cluster_size;
	if (in && (knobs.oversubscribed || scx_bpf_test_and_clear_cpu_idle(prev_cpu)))
		return prev_cpu;
	bpf_for(i, 0, cluster_size) {
		if (i >= DUPLEX_MAX_CLUSTER_CPUS)
			break;
		cpu = first + i;
		if (cpu < nr_cpus && scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	}
	return in ? prev_cpu : first;
}

/* NotifyCompletion (line 24): wake the idle CPUs that can take the task. */
static void notify(struct task_struct *p, s32 cl)
{
	s32 cpu;
	u32 i;

	if (cl < 0) {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	bpf_for(i, 0, cluster_size) {
		if (i >= DUPLEX_MAX_CLUSTER_CPUS)
			break;
		if (cl * cluster_size + i < nr_cpus)
			scx_bpf_kick_cpu(cl * cluster_size + i, SCX_KICK_IDLE);
	}
}

/*
 * Phase 3 (lines 12-16) and the slice of phase 4 (line 20) for one task:
 * place it, bring its vruntime up to mvruntime less the lag, and insert it
 * into its queue by deadline.
 */
void BPF_STRUCT_OPS(duplex_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u64 dsq = DUPLEX_DSQ_SHARED, slice;
	u32 cls;
	s32 cl = -1;

	if (!tc) {
		scx_bpf_dispatch_vtime(p, DUPLEX_DSQ_SHARED, SCX_SLICE_DFL, mvruntime, enq_flags);
		return;
	}
	cls = class_of(p, task_cgroup_id(p));
	if (cls != tc->cls) {
		unaccount(tc);
		tc->cls = cls;
	}
	if (hinted(p, tc))
		cl = place(tc);
	if (cl < 0) {
		unaccount(tc);
		tc->cluster = -1;
		stat_inc(DUPLEX_STAT_GLOBAL);
	} else {
		dsq = DUPLEX_DSQ(cl);
	}
	slice = duplex_task_slice(&knobs, cl < 0 ? DUPLEX_UNKNOWN : tc->cls, &tc->sig);
	if (!slice)
		slice = SCX_SLICE_DFL;
	tc->slice = slice;
	tc->vruntime = duplex_vruntime(tc->vruntime, mvruntime,
				       (u64)knobs.lag_slices * knobs.slice_ns);
	scx_bpf_dispatch_vtime(p, dsq, slice, duplex_deadline(tc->vruntime, slice, p->scx.weight),
			       enq_flags);
	notify(p, cl);
}

/* The deadline of a queue's first task, if it has one. */
static bool dsq_head(u64 dsq, u64 *deadline)
{
	struct task_struct *p;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		*deadline = p->scx.dsq_vtime;
		return true;
	}
	return false;
}

/* Phase 4's PopFirst and DispatchTask (lines 18-23): the earlier of two deadlines. */
void BPF_STRUCT_OPS(duplex_dispatch, s32 cpu, struct task_struct *prev)
{
	u64 own = DUPLEX_DSQ(cpu / cluster_size), a = 0, b = 0;
	bool has_a = dsq_head(own, &a), has_b = dsq_head(DUPLEX_DSQ_SHARED, &b);

	if (duplex_first(has_a, a, has_b, b)) {
		if (!scx_bpf_consume(own))
			scx_bpf_consume(DUPLEX_DSQ_SHARED);
	} else if (!scx_bpf_consume(DUPLEX_DSQ_SHARED)) {
		scx_bpf_consume(own);
	}
}

/* Where a placed thread ran: the ground truth the VM test compares with its workers. */
static void proc_ran(struct task_struct *p, struct task_ctx *tc)
{
	/*
	 * The verifier keeps no bounds of a 32-bit division's result, not even
	 * its zero upper half; barrier_var() makes the compiler check all 64 bits.
	 */
	u64 cl = bpf_get_smp_processor_id() / cluster_size;
	s32 pid = p->pid;
	struct duplex_proc *r = bpf_map_lookup_elem(&procs, &pid);

	if (!r) {
		struct duplex_proc fresh = { .tgid = p->tgid };

		bpf_map_update_elem(&procs, &pid, &fresh, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&procs, &pid);
		if (!r)
			return;
	}
	r->cls = tc->cls;
	r->share = tc->acct_share;
	r->measured = duplex_trusted(&knobs, &tc->sig);
	barrier_var(cl);
	if (cl < DUPLEX_MAX_CLUSTERS)
		__sync_fetch_and_add(&r->runs[cl], 1);
}

void BPF_STRUCT_OPS(duplex_running, struct task_struct *p)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (!tc)
		return;
	if (tc->cls < DUPLEX_NR_CLASSES)
		stat_inc(tc->cls);
	/* Racy between CPUs; an error is one task's, and the next run corrects it. */
	if ((s64)(tc->vruntime - mvruntime) > 0)
		mvruntime = tc->vruntime;
	if (tc->cluster >= 0)
		proc_ran(p, tc);
}

/* The vruntime the run cost: the slice used, scaled by the inverse of the weight. */
void BPF_STRUCT_OPS(duplex_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tc && tc->slice > p->scx.slice)
		tc->vruntime += duplex_charge(tc->slice - p->scx.slice, p->scx.weight);
}

/* A sleeping task sends no traffic: its cluster stops counting it. */
void BPF_STRUCT_OPS(duplex_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tc)
		unaccount(tc);
}

s32 BPF_STRUCT_OPS(duplex_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!tc)
		return -ENOMEM;
	tc->cls = DUPLEX_UNKNOWN;
	tc->cluster = -1;
	tc->accounted = 0;
	tc->vruntime = mvruntime;
	return 0;
}

void BPF_STRUCT_OPS(duplex_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tc = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tc)
		unaccount(tc);
}

/*
 * The outgoing task's memory events since the last switch on this CPU
 * (section 4.3.2): into its read-share signal and the CPU's totals, which
 * the loader's time series reads. Loaded only when the loader opened the
 * counters.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(duplex_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct bpf_perf_event_value r, w;
	struct task_ctx *tc;
	struct pmu_last *last;
	u32 zero = 0;
	u64 dr, dw;

	if (bpf_perf_event_read_value(&read_events, BPF_F_CURRENT_CPU, &r, sizeof(r)) ||
	    bpf_perf_event_read_value(&write_events, BPF_F_CURRENT_CPU, &w, sizeof(w)))
		return 0;
	last = bpf_map_lookup_elem(&pmu_last, &zero);
	if (!last)
		return 0;
	dr = last->valid ? r.counter - last->reads : 0;
	dw = last->valid ? w.counter - last->writes : 0;
	last->reads = r.counter;
	last->writes = w.counter;
	last->valid = 1;
	stat_add(DUPLEX_STAT_EV_READ, dr);
	stat_add(DUPLEX_STAT_EV_WRITE, dw);
	tc = bpf_task_storage_get(&task_ctxs, prev, 0, 0);
	if (tc && duplex_observe(&tc->sig, dr, dw, &knobs))
		stat_inc(DUPLEX_STAT_SAMPLES);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(duplex_init)
{
	u32 i;
	s32 ret;

	if (!cluster_size || !nr_clusters || nr_clusters > DUPLEX_MAX_CLUSTERS)
		return -EINVAL;
	bpf_for(i, 0, nr_clusters) {
		ret = scx_bpf_create_dsq(DUPLEX_DSQ(i), -1);
		if (ret)
			return ret;
	}
	return scx_bpf_create_dsq(DUPLEX_DSQ_SHARED, -1);
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
	       .stopping		= (void *)duplex_stopping,
	       .quiescent		= (void *)duplex_quiescent,
	       .init_task		= (void *)duplex_init_task,
	       .exit_task		= (void *)duplex_exit_task,
	       .init			= (void *)duplex_init,
	       .exit			= (void *)duplex_exit,
	       .name			= "duplex");
