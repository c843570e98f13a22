/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The periodic half of scx_duplex's policy (Algorithm 1, phases 1 and 2) and
 * the policy engine of section 4.4: the parameters, the sliding window and
 * trends, the oversubscription test and the scheduling hint, and the table
 * of policies (init, schedule, update) between which the loader switches at
 * run time. Plain C with no BPF in it: the loader includes duplex_series.c,
 * and the host tests (tools/scx-duplex, build.rs) compile the same file.
 */
#ifndef DUPLEX_SERIES_H
#define DUPLEX_SERIES_H

#include <stddef.h>
#include "scx_duplex.h"

#define DUPLEX_WINDOW_MAX	64

/*
 * Every number of Algorithm 1, with its default, range and meaning in
 * duplex_param_table (duplex_series.c; scx_duplex --params prints it).
 */
struct duplex_params {
	double window, oversub_load, oversub_util;
	double alpha_fast, alpha_slow, phase_threshold;
	double slice_us, oversub_slice, vol_shrink, phase_slice, slice_min, slice_max;
	double lag_slices;
	double hysteresis, phase_hysteresis, hyst_min, hyst_max, hyst_step, move_budget;
	double load_weight, oversub_load_weight;
	double share_read, share_write, share_balanced;
	double task_alpha, task_min_events, task_min_samples;
};

/* CollectSystemMetrics()'s sample: one period of the whole system. */
struct duplex_sample {
	double running;		/* runnable threads */
	double cpus;		/* online CPUs */
	double util;		/* busy share of the CPUs' time, 0 to 1 */
	double reads;		/* memory read events in the period */
	double writes;		/* memory write events */
	int traffic;		/* reads and writes were measured */
	int pad;
};

/* The last `window` samples: s[(head + DUPLEX_WINDOW_MAX - len + i) % MAX], oldest first. */
struct duplex_window {
	struct duplex_sample s[DUPLEX_WINDOW_MAX];
	int head, len;
};

/*
 * Two EWMAs of the measured read share; their difference is the trend,
 * the mean distance of the samples from the fast one the volatility.
 * off: the machine has no memory event counters, so nothing is computed.
 */
struct duplex_trends {
	int on, have;
	double fast, slow, vol;
};

/* GenerateSchedulingHint()'s result, and what it was made from. */
struct duplex_hint {
	int oversubscribed;
	int phase_change;
	int trend_on;		/* read_share, trend and volatility mean something */
	int pad;
	double load, util;	/* the window's means */
	double read_share, trend, volatility;
};

/* What the BPF program did in the last period: update(feedback)'s input. */
struct duplex_feedback {
	double placed, moved, stayed;	/* duplex_choose() verdicts */
	double tasks;			/* runnable hinted tasks on clusters */
	double imbalance;		/* sum over clusters of |reads - writes| */
	double clusters;
};

/* What every policy reads and writes; it stays when the policy changes. */
struct duplex_state {
	struct duplex_params p;
	struct duplex_window w;
	struct duplex_trends t;
	struct duplex_hint h;
	struct duplex_feedback fb;
	double hysteresis;	/* the adaptive policy's current value */
	int policy;		/* index in duplex_policies */
	int switches;
};

/* Section 4.4's policy interface. */
struct duplex_policy {
	const char *name;
	/* Takes over the state as the previous policy left it. */
	void (*init)(struct duplex_state *s);
	/* Turns the state (phase 2's hint included) into the BPF program's knobs. */
	void (*schedule)(struct duplex_state *s, struct duplex_knobs *k);
	/* Learns from what the BPF program did with them. */
	void (*update)(struct duplex_state *s, const struct duplex_feedback *f);
};

extern const struct duplex_policy duplex_policies[];
extern const int duplex_nr_policies;

int duplex_parse_class(const char *s);
void duplex_params_default(struct duplex_params *p);
int duplex_param_set(struct duplex_params *p, const char *arg, char *err, size_t len);
int duplex_params_check(const struct duplex_params *p, char *err, size_t len);
int duplex_params_format(const struct duplex_params *p, char *buf, size_t len);

int duplex_state_init(struct duplex_state *s, const struct duplex_params *p, int counters,
		      int policy);
void duplex_collect(struct duplex_state *s, const struct duplex_sample *x);
int duplex_oversubscribed(const struct duplex_state *s);
void duplex_generate_hint(struct duplex_state *s);
void duplex_tick(struct duplex_state *s, const struct duplex_sample *x, struct duplex_knobs *k);
void duplex_feedback(struct duplex_state *s, const struct duplex_feedback *f);
int duplex_policy_find(const char *name);
void duplex_switch(struct duplex_state *s, int to);
int duplex_format(const struct duplex_state *s, const struct duplex_knobs *k, char *buf,
		  size_t len);
const struct duplex_hint *duplex_state_hint(const struct duplex_state *s);
double duplex_state_hysteresis(const struct duplex_state *s);
int duplex_state_window_len(const struct duplex_state *s);
int duplex_state_policy(const struct duplex_state *s);
int duplex_state_switches(const struct duplex_state *s);
size_t duplex_abi_size(int which);

#endif /* DUPLEX_SERIES_H */
