// SPDX-License-Identifier: GPL-2.0
/*
 * Algorithm 1's phases 1 and 2 and the policy engine (duplex_series.h). The
 * loader (scx_duplex.c) includes this file, as the tree's sched_ext Makefile
 * builds one translation unit per scheduler; the host tests compile it on
 * its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "duplex_series.h"
#include "duplex_policy.h"

struct duplex_param_desc {
	const char *name;
	size_t off;
	double def, min, max;
	int integer;
	const char *doc;
};

#define DUPLEX_P(n, d, lo, hi, i, doc) { #n, offsetof(struct duplex_params, n), d, lo, hi, i, doc }

/* The parameters, their defaults, ranges and meaning (Documentation/tools.rst lists them). */
static const struct duplex_param_desc duplex_param_table[] = {
	DUPLEX_P(window, 10, 1, DUPLEX_WINDOW_MAX, 1, "samples in the sliding window (line 6)"),
	DUPLEX_P(oversub_load, 1.5, 0, 1000, 0,
		 "oversubscribed above this many runnable threads per CPU (line 9)"),
	DUPLEX_P(oversub_util, 0.85, 0, 1, 0, "... and this CPU utilization, window means"),
	DUPLEX_P(alpha_fast, 0.5, 0.001, 1, 0, "weight of the fast read-share EWMA (line 7)"),
	DUPLEX_P(alpha_slow, 0.1, 0.001, 1, 0, "weight of the slow one, below alpha_fast"),
	DUPLEX_P(phase_threshold, 0.1, 0, 1, 0, "|fast - slow| above which the phase changes (line 10)"),
	DUPLEX_P(slice_us, 20000, 100, 1000000, 1, "base time slice, us (line 20)"),
	DUPLEX_P(oversub_slice, 200, 10, 1000, 1, "slice when oversubscribed, % of base"),
	DUPLEX_P(vol_shrink, 50, 0, 100, 1, "% of the slice full volatility takes"),
	DUPLEX_P(phase_slice, 50, 1, 100, 1, "% a read/write task keeps in a phase change"),
	DUPLEX_P(slice_min, 50, 1, 100, 1, "lower bound of any slice, % of base"),
	DUPLEX_P(slice_max, 200, 100, 1000, 1, "upper bound of any slice, % of base"),
	DUPLEX_P(lag_slices, 1, 0, 100, 1, "vruntime credit a sleeper keeps, slices (line 13)"),
	DUPLEX_P(hysteresis, 60, 0, 1000, 1,
		 "imbalance (% of a task) a move must save (line 21)"),
	DUPLEX_P(phase_hysteresis, 20, 0, 1000, 1, "the hysteresis during a phase change"),
	DUPLEX_P(hyst_min, 20, 0, 1000, 1, "lowest hysteresis update() sets"),
	DUPLEX_P(hyst_max, 200, 0, 1000, 1, "highest hysteresis update() sets"),
	DUPLEX_P(hyst_step, 10, 0, 1000, 1, "update()'s step"),
	DUPLEX_P(move_budget, 0.5, 0, 100, 0,
		 "moves per placed task per period above which update() raises the hysteresis"),
	DUPLEX_P(load_weight, 80, 0, 1000, 1, "what a task's load costs a cluster, imbalance units"),
	DUPLEX_P(oversub_load_weight, 160, 0, 1000, 1, "the same when oversubscribed"),
	DUPLEX_P(share_read, 90, 0, 100, 1, "read share assumed for a read hint, %"),
	DUPLEX_P(share_write, 10, 0, 100, 1, "... for a write hint"),
	DUPLEX_P(share_balanced, 50, 0, 100, 1, "... for a balanced hint"),
	DUPLEX_P(task_alpha, 25, 1, 100, 1, "weight of a task's read-share EWMA, %"),
	DUPLEX_P(task_min_events, 1000, 1, 1e12, 1, "memory events per per-task sample"),
	DUPLEX_P(task_min_samples, 4, 1, 1000, 1, "samples before a measured share replaces the hint's"),
};

#define DUPLEX_NR_PARAMS (sizeof(duplex_param_table) / sizeof(duplex_param_table[0]))

/* Not fmin/fmax: the tree's Makefile links the loader without libm. */
static double duplex_clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double *duplex_param(struct duplex_params *p, const struct duplex_param_desc *d)
{
	return (double *)((char *)p + d->off);
}

/* A hint's class; -1 for anything but the three words. */
int duplex_parse_class(const char *s)
{
	if (!strcmp(s, "read"))
		return DUPLEX_READ;
	if (!strcmp(s, "write"))
		return DUPLEX_WRITE;
	if (!strcmp(s, "balanced"))
		return DUPLEX_BALANCED;
	return -1;
}

void duplex_params_default(struct duplex_params *p)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < DUPLEX_NR_PARAMS; i++)
		*duplex_param(p, &duplex_param_table[i]) = duplex_param_table[i].def;
}

/* Sets NAME=VALUE; 0, or -1 with the reason in err. */
int duplex_param_set(struct duplex_params *p, const char *arg, char *err, size_t len)
{
	const char *eq = strchr(arg, '=');
	size_t i, n = eq ? (size_t)(eq - arg) : 0;
	char *end;
	double v;

	for (i = 0; i < DUPLEX_NR_PARAMS; i++) {
		const struct duplex_param_desc *d = &duplex_param_table[i];

		if (!eq || strlen(d->name) != n || strncmp(d->name, arg, n))
			continue;
		v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || isnan(v) || v < d->min || v > d->max ||
		    (d->integer && v != (double)(long long)v)) {
			snprintf(err, len, "%s: %s is not %s from %g to %g", d->name, eq + 1,
				 d->integer ? "an integer" : "a number", d->min, d->max);
			return -1;
		}
		*duplex_param(p, d) = v;
		return 0;
	}
	snprintf(err, len, "\"%s\" is not NAME=VALUE with a NAME of --params", arg);
	return -1;
}

/* What one parameter's range cannot say; 0, or -1 with the reason. */
int duplex_params_check(const struct duplex_params *p, char *err, size_t len)
{
	if (p->alpha_fast <= p->alpha_slow) {
		snprintf(err, len, "alpha_fast (%g) must be above alpha_slow (%g)", p->alpha_fast,
			 p->alpha_slow);
		return -1;
	}
	if (p->hyst_min > p->hyst_max) {
		snprintf(err, len, "hyst_min (%g) is above hyst_max (%g)", p->hyst_min, p->hyst_max);
		return -1;
	}
	return 0;
}

/* One line per parameter: name, value, range, meaning. The length it needed. */
int duplex_params_format(const struct duplex_params *p, char *buf, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < DUPLEX_NR_PARAMS; i++) {
		const struct duplex_param_desc *d = &duplex_param_table[i];
		int w = snprintf(buf + n, n < len ? len - n : 0, "%-20s %-8g [%g, %g] %s\n",
				 d->name, *duplex_param((struct duplex_params *)p, d), d->min,
				 d->max, d->doc);

		n += w > 0 ? w : 0;
	}
	return n;
}

int duplex_state_init(struct duplex_state *s, const struct duplex_params *p, int counters,
		      int policy)
{
	if (policy < 0 || policy >= duplex_nr_policies)
		return -1;
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->t.on = counters;
	s->hysteresis = p->hysteresis;
	s->policy = policy;
	duplex_policies[policy].init(s);
	return 0;
}

static const struct duplex_sample *duplex_window_at(const struct duplex_window *w, int i)
{
	return &w->s[(w->head + DUPLEX_WINDOW_MAX - w->len + i) % DUPLEX_WINDOW_MAX];
}

/* UpdateSlidingWindow (line 6): the last `window` samples. */
static void duplex_window_push(struct duplex_window *w, const struct duplex_sample *x,
			       int size)
{
	w->s[w->head] = *x;
	w->head = (w->head + 1) % DUPLEX_WINDOW_MAX;
	if (w->len < DUPLEX_WINDOW_MAX)
		w->len++;
	if (w->len > size)
		w->len = size;
}

/*
 * CalculateTrends (line 7): folds a sample's measured read share into the
 * EWMAs. Nothing without counters (the trends stay off) and nothing for a
 * period without traffic: there is no share to fold.
 */
static void duplex_trends_update(struct duplex_trends *t, const struct duplex_params *p,
				 const struct duplex_sample *x)
{
	double share;

	if (!t->on || !x->traffic || x->reads + x->writes <= 0)
		return;
	share = x->reads / (x->reads + x->writes);
	if (!t->have) {
		t->fast = t->slow = share;
		t->vol = 0;
		t->have = 1;
		return;
	}
	t->vol += p->alpha_slow * (fabs(share - t->fast) - t->vol);
	t->fast += p->alpha_fast * (share - t->fast);
	t->slow += p->alpha_slow * (share - t->slow);
}

/* Phase 1 (lines 5-7), after the loader's CollectSystemMetrics(). */
void duplex_collect(struct duplex_state *s, const struct duplex_sample *x)
{
	duplex_window_push(&s->w, x, (int)s->p.window);
	duplex_trends_update(&s->t, &s->p, x);
}

static void duplex_window_means(const struct duplex_window *w, double *load, double *util)
{
	int i;

	*load = *util = 0;
	for (i = 0; i < w->len; i++) {
		const struct duplex_sample *x = duplex_window_at(w, i);

		*load += x->running / (x->cpus > 0 ? x->cpus : 1);
		*util += x->util;
	}
	if (w->len) {
		*load /= w->len;
		*util /= w->len;
	}
}

/* DetectOversubscription (line 9, section 4.4.1): both window means strictly above. */
int duplex_oversubscribed(const struct duplex_state *s)
{
	double load, util;

	duplex_window_means(&s->w, &load, &util);
	return s->w.len && load > s->p.oversub_load && util > s->p.oversub_util;
}

/* GenerateSchedulingHint(oversub, trends) (line 10). */
void duplex_generate_hint(struct duplex_state *s)
{
	struct duplex_hint *h = &s->h;

	memset(h, 0, sizeof(*h));
	duplex_window_means(&s->w, &h->load, &h->util);
	h->oversubscribed = duplex_oversubscribed(s);
	/* have: a share was folded in, which duplex_trends_update() does only with counters. */
	h->trend_on = s->t.have;
	if (!h->trend_on) {
		h->read_share = h->trend = h->volatility = NAN;
		return;
	}
	h->read_share = s->t.fast;
	h->trend = s->t.fast - s->t.slow;
	h->volatility = s->t.vol;
	h->phase_change = fabs(h->trend) > s->p.phase_threshold;
}

/* The knobs every policy sets the same way: the parameters, as the BPF program wants them. */
static void duplex_knobs_base(const struct duplex_state *s, struct duplex_knobs *k)
{
	const struct duplex_params *p = &s->p;

	memset(k, 0, sizeof(*k));
	k->slice_ns = (__u64)(p->slice_us * 1000);
	k->hysteresis = (__u32)p->hysteresis;
	k->load_weight = (__u32)p->load_weight;
	k->oversub_slice = (__u32)p->oversub_slice;
	k->vol_shrink = (__u32)p->vol_shrink;
	k->phase_slice = (__u32)p->phase_slice;
	k->slice_min = (__u32)p->slice_min;
	k->slice_max = (__u32)p->slice_max;
	k->lag_slices = (__u32)p->lag_slices;
	k->share[DUPLEX_UNKNOWN] = 50;
	k->share[DUPLEX_READ] = (__u32)p->share_read;
	k->share[DUPLEX_WRITE] = (__u32)p->share_write;
	k->share[DUPLEX_BALANCED] = (__u32)p->share_balanced;
	k->task_alpha = (__u32)p->task_alpha;
	k->task_min_samples = (__u32)p->task_min_samples;
	k->task_min_events = (__u64)p->task_min_events;
}

/*
 * The hint policy: classes from the administrator's hints alone, placed for
 * read/write balance with a fixed hysteresis; the time series is kept (so
 * that a switch to the time-series policy finds it warm) but not acted on.
 */
static void hint_init(struct duplex_state *s)
{
}

static void hint_schedule(struct duplex_state *s, struct duplex_knobs *k)
{
	duplex_knobs_base(s, k);
}

static void hint_update(struct duplex_state *s, const struct duplex_feedback *f)
{
	s->fb = *f;
}

/*
 * The time-series policy (section 4.4.1, Algorithm 1): acts on phase 2's
 * hint. Oversubscribed: longer slices and load before read/write balance
 * (more aggressive load balancing). A phase change: a lower hysteresis and
 * shorter slices for read and write tasks, so that placement follows the new
 * mix. Measured read shares, where the machine has counters, replace the
 * hints' assumed ones. update() adapts the hysteresis to the migrations it
 * causes.
 */
static void ts_init(struct duplex_state *s)
{
	s->hysteresis = duplex_clamp(s->hysteresis, s->p.hyst_min, s->p.hyst_max);
}

static void ts_schedule(struct duplex_state *s, struct duplex_knobs *k)
{
	const struct duplex_hint *h = &s->h;

	duplex_knobs_base(s, k);
	k->oversubscribed = h->oversubscribed;
	k->phase_change = h->phase_change;
	k->sys_vol = h->trend_on ? (__u32)(duplex_clamp(h->volatility, 0, 1) * 1000) : 0;
	k->use_measured = s->t.on;
	k->hysteresis = (__u32)s->hysteresis;
	if (h->phase_change && s->p.phase_hysteresis < s->hysteresis)
		k->hysteresis = (__u32)s->p.phase_hysteresis;
	if (h->oversubscribed)
		k->load_weight = (__u32)s->p.oversub_load_weight;
}

/*
 * Too many moves per placed task: placements churn, raise the hysteresis.
 * No move while the clusters stay more unbalanced than the hysteresis: it
 * blocks moves that would help, lower it. Within [hyst_min, hyst_max].
 */
static void ts_update(struct duplex_state *s, const struct duplex_feedback *f)
{
	const struct duplex_params *p = &s->p;

	s->fb = *f;
	if (f->tasks <= 0)
		return;
	if (f->moved / f->tasks > p->move_budget)
		s->hysteresis += p->hyst_step;
	else if (!f->moved && f->clusters > 0 && f->imbalance / f->clusters > s->hysteresis)
		s->hysteresis -= p->hyst_step;
	s->hysteresis = duplex_clamp(s->hysteresis, p->hyst_min, p->hyst_max);
}

const struct duplex_policy duplex_policies[] = {
	{ "timeseries", ts_init, ts_schedule, ts_update },
	{ "hint", hint_init, hint_schedule, hint_update },
};
const int duplex_nr_policies = sizeof(duplex_policies) / sizeof(duplex_policies[0]);

/* One period: phase 1, phase 2, then the policy's schedule(state). */
void duplex_tick(struct duplex_state *s, const struct duplex_sample *x, struct duplex_knobs *k)
{
	duplex_collect(s, x);
	duplex_generate_hint(s);
	duplex_policies[s->policy].schedule(s, k);
}

void duplex_feedback(struct duplex_state *s, const struct duplex_feedback *f)
{
	duplex_policies[s->policy].update(s, f);
}

int duplex_policy_find(const char *name)
{
	int i;

	for (i = 0; i < duplex_nr_policies; i++)
		if (!strcmp(duplex_policies[i].name, name))
			return i;
	return -1;
}

/* Runtime switching (section 4.4): the new policy's init() takes the state over. */
void duplex_switch(struct duplex_state *s, int to)
{
	if (to < 0 || to >= duplex_nr_policies || to == s->policy)
		return;
	s->policy = to;
	s->switches++;
	duplex_policies[to].init(s);
}

/* The period's report line; unmeasured figures read "n/a". The length it needed. */
int duplex_format(const struct duplex_state *s, const struct duplex_knobs *k, char *buf,
		  size_t len)
{
	const struct duplex_hint *h = &s->h;
	char share[128] = "read share n/a trend off volatility n/a";
	/* The slice a hinted task gets before its own measurement counts. */
	struct duplex_signal none = { 0 };

	if (h->trend_on)
		snprintf(share, sizeof(share), "read share %.2f trend %+.2f%s volatility %.2f",
			 h->read_share, h->trend, h->phase_change ? " (phase change)" : "",
			 h->volatility);
	return snprintf(buf, len, "policy %s load %.2f util %.2f oversubscribed %d %s "
			"slice %llu us hysteresis %u load weight %u",
			duplex_policies[s->policy].name, h->load, h->util, h->oversubscribed,
			share, (unsigned long long)duplex_task_slice(k, DUPLEX_READ, &none) / 1000,
			k->hysteresis, k->load_weight);
}

/* The state's figures, for callers that do not see its layout (the host tests). */
const struct duplex_hint *duplex_state_hint(const struct duplex_state *s)
{
	return &s->h;
}

double duplex_state_hysteresis(const struct duplex_state *s)
{
	return s->hysteresis;
}

int duplex_state_window_len(const struct duplex_state *s)
{
	return s->w.len;
}

int duplex_state_policy(const struct duplex_state *s)
{
	return s->policy;
}

int duplex_state_switches(const struct duplex_state *s)
{
	return s->switches;
}

/* Sizes of the structures the host tests mirror, so that they can check their copies. */
size_t duplex_abi_size(int which)
{
	static const size_t sizes[] = {
		sizeof(struct duplex_knobs), sizeof(struct duplex_cluster),
		sizeof(struct duplex_signal), sizeof(struct duplex_sample),
		sizeof(struct duplex_hint), sizeof(struct duplex_feedback),
		sizeof(struct duplex_state), sizeof(struct duplex_params),
	};

	return which >= 0 && which < (int)(sizeof(sizes) / sizeof(sizes[0])) ? sizes[which] : 0;
}
