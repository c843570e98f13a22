/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-task half of scx_duplex's policy (Algorithm 1, phases 3 and 4):
 * what the BPF program decides for each task, as functions of plain data so
 * that the program and the host tests run the same code. The program
 * includes this file; the host tests get the same functions as ordinary
 * symbols (tools/scx-duplex/host/duplex_export.c defines DUPLEX_API empty).
 *
 * Everything is integer arithmetic with unsigned division only: the BPF
 * target (-mcpu=v3) has no signed division and no floating point.
 */
#ifndef DUPLEX_POLICY_H
#define DUPLEX_POLICY_H

#include "scx_duplex.h"

#ifndef DUPLEX_API
/* Always inlined: BPF calls take at most five arguments. */
#define DUPLEX_API static inline __attribute__((always_inline))
#endif

#ifdef __bpf__
/* An open-coded iterator: the verifier checks the body once, not per round. */
#define duplex_for(i, lo, hi) bpf_for(i, lo, hi)
#else
#include <stdbool.h>
#define duplex_for(i, lo, hi) for ((i) = (lo); (i) < (hi); (i)++)
#endif

#define DUPLEX_INF (1LL << 60)

static inline __s64 duplex_abs(__s64 v)
{
	return v < 0 ? -v : v;
}

/* Whether a task's measured signal is used: asked for, and enough samples. */
DUPLEX_API bool duplex_trusted(const struct duplex_knobs *k, const struct duplex_signal *s)
{
	return k->use_measured && s->samples && s->samples >= k->task_min_samples;
}

/*
 * The read share (percent) a task counts for in its cluster: measured once
 * trusted, else its class's assumed share. A hint is a prior: it places
 * short-lived tasks that end before anything can be measured (section 4.5).
 */
DUPLEX_API __u32 duplex_task_share(const struct duplex_knobs *k, __u32 cls,
				   const struct duplex_signal *s)
{
	if (duplex_trusted(k, s))
		return s->share > 1000 ? 100 : s->share / 10;
	if (cls >= DUPLEX_NR_CLASSES)
		return 50;
	return k->share[cls] > 100 ? 100 : k->share[cls];
}

/* new = old * (1 - a) + x * a, a in percent, rounded. */
static inline __u64 duplex_ewma(__u64 old, __u64 x, __u32 a)
{
	return (old * (100 - a) + x * a + 50) / 100;
}

/*
 * Folds the memory events a task caused since the last context switch into
 * its signal (section 4.3.2: counters read at sched_switch). Events gather
 * until there are task_min_events of them, so that one short run does not
 * make a sample; then the sample's read share updates the share and
 * volatility EWMAs. True when a sample was taken.
 */
DUPLEX_API bool duplex_observe(struct duplex_signal *s, __u64 reads, __u64 writes,
			       const struct duplex_knobs *k)
{
	__u32 a = k->task_alpha > 100 ? 100 : k->task_alpha;
	__u64 total, x, dev;

	s->acc_reads += reads;
	s->acc_writes += writes;
	total = s->acc_reads + s->acc_writes;
	if (!total || total < k->task_min_events)
		return false;
	x = s->acc_reads * 1000 / total;
	s->acc_reads = 0;
	s->acc_writes = 0;
	if (!s->samples) {
		s->share = x;
		s->vol = 0;
	} else {
		dev = x > s->share ? x - s->share : s->share - x;
		s->vol = duplex_ewma(s->vol, dev, a);
		s->share = duplex_ewma(s->share, x, a);
	}
	if (s->samples < 0xffffffffU)
		s->samples++;
	return true;
}

/* A task of read share `share` (percent) enters (sign 1) or leaves (-1) a cluster. */
DUPLEX_API void duplex_account(struct duplex_cluster *c, __u32 share, __s64 sign)
{
	__sync_fetch_and_add(&c->reads, sign * (__s64)share);
	__sync_fetch_and_add(&c->writes, sign * (__s64)(100 - share));
	__sync_fetch_and_add(&c->tasks, sign);
}

/*
 * What placing the task on c costs: the read/write imbalance it adds (less
 * than zero when it removes some: a reader among writers) plus load_weight
 * per task the cluster would then run. Without the load term every task
 * could end on one cluster, whose mix is as balanced as can be; this
 * scheduler has no base scheduler under it to spread the load (section 4.2).
 * self: the task is counted in c already and is taken out first, so that
 * staying and moving compare fairly.
 */
DUPLEX_API __s64 duplex_cost(const struct duplex_cluster *c, __u32 share, bool self,
			     const struct duplex_knobs *k)
{
	__s64 r = c->reads, w = c->writes, t = c->tasks;
	__s64 s = share;

	if (self) {
		r -= s;
		w -= 100 - s;
		t -= 1;
	}
	return duplex_abs(r + s - w - (100 - s)) - duplex_abs(r - w) +
	       (__s64)k->load_weight * (t + 1);
}

/*
 * SelectCPU's cluster (Algorithm 1, line 21; section 5.2): the cheapest of
 * the nr clusters, fewer tasks breaking ties, then the lower index. A task
 * on `here` (-1: none yet) moves only if that saves at least the
 * hysteresis: migrations cost caches. self: the task is counted on `here`.
 * -1 only for no clusters.
 */
DUPLEX_API __s32 duplex_choose(const struct duplex_cluster *c, __u32 nr, __u32 share,
			       __s32 here, bool self, const struct duplex_knobs *k,
			       __u32 *verdict)
{
	__s64 best_cost = DUPLEX_INF, best_tasks = DUPLEX_INF, here_cost = DUPLEX_INF;
	__s32 best = -1;
	__u32 i;

	duplex_for(i, 0, nr) {
		bool mine = (__s32)i == here && self;
		__s64 cost, tasks;

		if (i >= DUPLEX_MAX_CLUSTERS)
			break;
		cost = duplex_cost(&c[i], share, mine, k);
		tasks = c[i].tasks - mine;
		if ((__s32)i == here)
			here_cost = cost;
		if (cost < best_cost || (cost == best_cost && tasks < best_tasks)) {
			best_cost = cost;
			best_tasks = tasks;
			best = i;
		}
	}
	if (here < 0 || here_cost == DUPLEX_INF) {
		*verdict = best < 0 ? DUPLEX_KEPT : DUPLEX_PLACED_NEW;
		return best;
	}
	if (best == here) {
		*verdict = DUPLEX_KEPT;
		return here;
	}
	if (here_cost < best_cost + (__s64)k->hysteresis) {
		*verdict = DUPLEX_STAYED_PUT;
		return here;
	}
	*verdict = DUPLEX_MOVED_AWAY;
	return best;
}

/*
 * CalculateTimeSlice(hint, task) (Algorithm 1, line 20). Oversubscribed:
 * every task gets oversub_slice, fewer switches stealing from the work.
 * Otherwise a task without a class gets the base slice; a hinted one loses up
 * to vol_shrink of it as its read share (its own once measured, else the
 * system's) grows volatile, so that it comes back to enqueue, and to
 * placement, sooner; and in a phase change a read or write task (the ones
 * whose placement matters) gets phase_slice of that. Always within
 * [slice_min, slice_max].
 */
DUPLEX_API __u64 duplex_task_slice(const struct duplex_knobs *k, __u32 cls,
				   const struct duplex_signal *s)
{
	__u64 base = k->slice_ns, slice, vol, shrink;
	__u64 lo = base * k->slice_min / 100, hi = base * k->slice_max / 100;

	if (k->oversubscribed) {
		slice = base * k->oversub_slice / 100;
	} else if (cls == DUPLEX_UNKNOWN) {
		slice = base;
	} else {
		vol = duplex_trusted(k, s) ? s->vol : k->sys_vol;
		vol = vol > 1000 ? 1000 : vol;
		shrink = k->vol_shrink > 100 ? 100 : k->vol_shrink;
		slice = base * (100000 - vol * shrink) / 100000;
		if (k->phase_change && cls != DUPLEX_BALANCED)
			slice = slice * k->phase_slice / 100;
	}
	if (slice < lo)
		slice = lo;
	if (slice > hi)
		slice = hi;
	return slice;
}

/*
 * UpdateVruntime(task, mvruntime) (Algorithm 1, line 13): a task that slept
 * comes back no further than lag behind mvruntime, the vruntime the CPUs have
 * reached, so that sleeping banks at most that much priority. Compared
 * wrap-safe.
 */
DUPLEX_API __u64 duplex_vruntime(__u64 vruntime, __u64 mvruntime, __u64 lag)
{
	__u64 floor = mvruntime - lag;

	return (__s64)(vruntime - floor) < 0 ? floor : vruntime;
}

/*
 * CalculateDeadline(task, vruntime) (line 14): the vruntime at which the task
 * will have used its slice, the slice scaled by the inverse of its weight
 * (100 for nice 0): a shorter slice or a heavier weight runs sooner.
 */
DUPLEX_API __u64 duplex_deadline(__u64 vruntime, __u64 slice, __u32 weight)
{
	return vruntime + slice * 100 / (weight ? weight : 100);
}

/* The vruntime a task pays for running `used` ns. */
DUPLEX_API __u64 duplex_charge(__u64 used, __u32 weight)
{
	return used * 100 / (weight ? weight : 100);
}

/*
 * TaskQueue.PopFirst() (line 19) over the two queues a CPU serves, its
 * cluster's and the shared one, each ordered by deadline: whether queue a's
 * head (deadline da) comes first.
 */
DUPLEX_API bool duplex_first(bool has_a, __u64 da, bool has_b, __u64 db)
{
	if (!has_a)
		return false;
	return !has_b || (__s64)(da - db) <= 0;
}

#endif /* DUPLEX_POLICY_H */
