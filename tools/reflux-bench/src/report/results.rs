// SPDX-License-Identifier: GPL-2.0

//! `results.json`: every round's samples and migrations, every figure the table shows, and
//! the intervals behind them. Its keys are documented in Documentation/reflux-results.rst.

use bench_stats::Ci;

use crate::json::{obj, Json};
use crate::log::{report_order, Fields, Migration, Sample, Suite, Value, PARADIGMS};
use crate::stats::Dist;

use super::compare::Paired;
use super::migrations::{Direction, Phases};
use super::repeated::Repeated;
use super::rounds::{Peak, Rounds};
use super::summary::{pct_of_epoch, phase, Summary};
use super::sweep::{Group, Metric, PointRatio, Sweep};
use super::{Report, EPOCH_MS};

pub fn round(x: f64, decimals: i32) -> f64 {
    let m = 10f64.powi(decimals);
    (x * m).round() / m
}

fn r4(v: Option<f64>) -> Json {
    v.map(|v| round(v, 4)).into()
}

fn fields_json(f: &Fields) -> Json {
    Json::Obj(f.iter().map(|(k, v)| (k.clone(), value_json(v))).collect())
}

fn value_json(v: &Value) -> Json {
    match v {
        Value::Num(n) => Json::Num(*n),
        Value::Str(s) => Json::Str(s.clone()),
    }
}

fn dist_json(d: Option<Dist>) -> Json {
    d.map_or(Json::Null, |d| {
        obj([
            ("median", d.median.into()),
            ("p99", d.p99.into()),
            ("max", d.max.into()),
        ])
    })
}

fn nums(v: impl Iterator<Item = f64>) -> Json {
    Json::Arr(v.map(Json::Num).collect())
}

/// `{"lo", "hi", "n"}` of an interval, or null.
fn ci_json(ci: Option<Ci>) -> Json {
    ci.map_or(Json::Null, |c| {
        obj([
            ("lo", round(c.lo, 4).into()),
            ("hi", round(c.hi, 4).into()),
            ("n", (c.n as f64).into()),
        ])
    })
}

/// `[{KEY: k, VALUE: v}, ...]` of (round or repetition, value) pairs.
fn each_json(each: &[(u32, f64)], key: &str, value: &str) -> Json {
    let pair = |(k, v): &(u32, f64)| {
        Json::Obj(vec![
            (key.to_string(), f64::from(*k).into()),
            (value.to_string(), round(*v, 4).into()),
        ])
    };
    Json::Arr(each.iter().map(pair).collect())
}

/// A figure over rounds or repetitions: `{"mean", "lo", "hi", "n", "each": [{KEY, "value"}]}`.
fn repeated_json(r: &Repeated, key: &str) -> Json {
    obj([
        ("mean", r4(r.mean)),
        ("lo", r4(r.ci.map(|c| c.lo))),
        ("hi", r4(r.ci.map(|c| c.hi))),
        ("n", (r.each.len() as f64).into()),
        ("each", each_json(&r.each, key, "value")),
    ])
}

/// A paired ratio: `{"ratio", "lo", "hi", "pairs", "differs", "each": [{KEY, "ratio"}]}`;
/// the interval's keys null with one pair.
fn paired_json(p: Option<&Paired>, key: &str) -> Json {
    let Some(p) = p else {
        return Json::Null;
    };
    obj([
        ("ratio", round(p.ratio, 4).into()),
        ("lo", r4(p.ci.map(|c| c.lo))),
        ("hi", r4(p.ci.map(|c| c.hi))),
        ("pairs", (p.each.len() as f64).into()),
        ("differs", p.ci.map(|c| c.differs()).into()),
        ("each", each_json(&p.each, key, "ratio")),
    ])
}

/// Columns of per-sample keys that not every sample need have: key, then a value per sample.
fn columns<'s>(samples: &'s [Sample], row: impl Fn(&'s Sample) -> Vec<(&'s str, Json)>) -> Json {
    let rows: Vec<Vec<(&str, Json)>> = samples.iter().map(row).collect();
    let mut keys: Vec<&str> = Vec::new();
    for r in &rows {
        for (k, _) in r {
            if !keys.contains(k) {
                keys.push(k);
            }
        }
    }
    Json::Obj(
        keys.iter()
            .map(|k| {
                let col = rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .find(|f| f.0 == *k)
                            .map_or(Json::Null, |f| f.1.clone())
                    })
                    .collect();
                (k.to_string(), Json::Arr(col))
            })
            .collect(),
    )
}

fn samples_json(samples: &[Sample]) -> Json {
    obj([
        ("t_ms", nums(samples.iter().map(|s| s.t_ms))),
        ("mbps", nums(samples.iter().map(|s| s.mbps))),
        ("temp_c", nums(samples.iter().map(|s| s.temp_mc / 1000.0))),
        (
            "throttled",
            nums(samples.iter().map(|s| f64::from(u8::from(s.throttled)))),
        ),
        (
            "inflight_permille",
            Json::Arr(samples.iter().map(|s| s.inflight_permille.into()).collect()),
        ),
        (
            "placements",
            columns(samples, |s| {
                s.placements
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.name().into()))
                    .collect()
            }),
        ),
        (
            "extra",
            columns(samples, |s| {
                s.extra
                    .iter()
                    .map(|(k, v)| (k.as_str(), value_json(v)))
                    .collect()
            }),
        ),
    ])
}

/// Per actor kind: the share of the samples reporting it that had it on the device.
fn device_fraction(samples: &[Sample]) -> Json {
    let mut kinds: Vec<(&str, usize, usize)> = Vec::new();
    for (k, place) in samples.iter().flat_map(|s| &s.placements) {
        let i = match kinds.iter().position(|e| e.0 == k) {
            Some(i) => i,
            None => {
                kinds.push((k, 0, 0));
                kinds.len() - 1
            }
        };
        kinds[i].1 += 1;
        kinds[i].2 += usize::from(place.name() == "device");
    }
    Json::Obj(
        kinds
            .iter()
            .map(|(k, n, d)| (k.to_string(), round(*d as f64 / *n as f64, 4).into()))
            .collect(),
    )
}

fn migration_json(m: &Migration) -> Json {
    let mut o = vec![
        (
            "actor".to_string(),
            m.actor.as_ref().map_or(Json::Null, value_json),
        ),
        ("from".into(), m.from.name().into()),
        ("to".into(), m.to.name().into()),
        ("t_ms".into(), m.t_ms.into()),
        ("drain_ns".into(), m.drain_ns.into()),
        ("ckpt_ns".into(), m.ckpt_ns.into()),
        ("handover_ns".into(), m.handover_ns.into()),
        ("rebuild_ns".into(), m.rebuild_ns.into()),
        ("total_ns".into(), m.total_ns.into()),
        ("move_ns".into(), m.move_ns().into()),
    ];
    o.extend(m.extra.iter().map(|(k, v)| (k.clone(), value_json(v))));
    Json::Obj(o)
}

/// The distributions of the migrations' times: `count`, `total_ns`, `move_ns`, ... as
/// `{median, p99, max}`, and the move as a percentage of the epoch.
fn migration_summary(count: usize, dist: impl Fn(fn(&Migration) -> f64) -> Option<Dist>) -> Json {
    let pct = pct_of_epoch(dist(Migration::move_ns));
    obj([
        ("count", (count as f64).into()),
        ("total_ns", dist_json(dist(|m| m.total_ns))),
        ("move_ns", dist_json(dist(Migration::move_ns))),
        ("drain_ns", dist_json(dist(|m| m.drain_ns))),
        ("ckpt_ns", dist_json(dist(|m| m.ckpt_ns))),
        ("handover_ns", dist_json(dist(|m| m.handover_ns))),
        ("rebuild_ns", dist_json(dist(|m| m.rebuild_ns))),
        (
            "move_pct_of_epoch",
            pct.map_or(Json::Null, |(m, p)| {
                obj([("median", round(m, 6).into()), ("p99", round(p, 6).into())])
            }),
        ),
    ])
}

fn fio_json(s: &Summary<'_>) -> Json {
    s.p.fio.as_ref().map_or(Json::Null, |f| {
        let mut o = vec![
            ("bw_mbps".to_string(), f.bw_mbps.into()),
            ("verify".into(), s.verify().into()),
            ("errors".into(), f.errors.into()),
        ];
        o.extend(f.extra.iter().map(|(k, v)| (k.clone(), value_json(v))));
        Json::Obj(o)
    })
}

/// One round of a paradigm.
fn round_json(s: &Summary<'_>) -> Json {
    let p = s.p;
    let migrations: Vec<&Migration> = p.migrations.iter().collect();
    let collapse = s.collapse.map_or(Json::Null, |c| {
        obj([
            ("initial_mbps", round(c.initial_mbps, 4).into()),
            ("settled_mbps", round(c.settled_mbps, 4).into()),
            ("fraction", r4(c.fraction())),
        ])
    });
    obj([
        ("round", f64::from(p.round).into()),
        ("info", fields_json(&p.info)),
        ("samples", samples_json(&p.samples)),
        ("placement_device_fraction", device_fraction(&p.samples)),
        ("fio", fio_json(s)),
        ("steady_mbps", r4(s.steady_mbps)),
        ("max_temp_c", r4(s.max_temp_c)),
        ("steady_max_temp_c", r4(s.steady_max_temp_c)),
        ("throttled_fraction", r4(s.throttled_fraction)),
        ("collapse", collapse),
        (
            "migrations",
            Json::Arr(p.migrations.iter().map(migration_json).collect()),
        ),
        (
            "migration_summary",
            migration_summary(migrations.len(), |f| phase(&migrations, f)),
        ),
    ])
}

/// One direction's phases: `{"n", PHASE: {median_ns, median_lo_ns, median_hi_ns, p99_ns,
/// native_median_ns}}`.
fn direction_json(d: &Direction) -> Json {
    let mut o = vec![("n".to_string(), (d.n as f64).into())];
    for s in &d.phases {
        let v = obj([
            ("median_ns", round(s.median, 1).into()),
            ("median_lo_ns", s.median_ci.map(|c| round(c.lo, 1)).into()),
            ("median_hi_ns", s.median_ci.map(|c| round(c.hi, 1)).into()),
            ("p99_ns", round(s.p99, 1).into()),
            (
                "native_median_ns",
                s.native_median.map(|v| round(v, 1)).into(),
            ),
        ]);
        o.push((s.phase.name().to_string(), v));
    }
    Json::Obj(o)
}

fn phases_json(p: &Phases) -> Json {
    Json::Obj(
        p.directions
            .iter()
            .map(|d| (d.key(), direction_json(d)))
            .collect(),
    )
}

fn peak_json(p: Option<&Peak>) -> Json {
    p.map_or(Json::Null, |p| {
        obj([
            ("each", each_json(&p.each, "round", "max_c")),
            ("median", round(p.median, 4).into()),
            ("max", round(p.max, 4).into()),
        ])
    })
}

/// One paradigm: its rounds, and what they give together.
fn paradigm_json(r: &Rounds<'_>) -> Json {
    obj([
        ("round_count", (r.rounds.len() as f64).into()),
        (
            "rounds",
            Json::Arr(r.rounds.iter().map(round_json).collect()),
        ),
        ("steady_mbps", r4(r.steady_mbps.mean)),
        ("steady_mbps_ci", ci_json(r.steady_mbps.ci)),
        ("max_temp_c", r4(r.peak_temp_c.as_ref().map(|p| p.max))),
        ("steady_max_temp_c", r4(r.steady_max_temp_c())),
        ("throttled_fraction", r4(r.throttled_fraction())),
        ("peak_temp_c", peak_json(r.peak_temp_c.as_ref())),
        ("collapse", repeated_json(&r.collapse, "round")),
        (
            "migration_summary",
            migration_summary(r.migrations.len(), |f| r.pooled(f)),
        ),
        ("migration_phases", phases_json(&r.phases)),
        ("verify", r.verify().into()),
    ])
}

fn group_json(g: &Group<'_>) -> Json {
    let mut o = vec![
        ("paradigm".to_string(), g.paradigm.into()),
        ("rw".into(), g.cond.rw.name().into()),
        ("bs".into(), (g.cond.bs as f64).into()),
        ("qd".into(), (g.cond.qd as f64).into()),
        ("dist".into(), g.cond.dist.name().into()),
        ("reps".into(), (g.points.len() as f64).into()),
        (
            "verify".into(),
            if g.verify_ok() { "ok" } else { "fail" }.into(),
        ),
    ];
    for m in Metric::ALL {
        o.push((m.key().to_string(), repeated_json(g.get(m), "rep")));
    }
    Json::Obj(o)
}

fn point_ratio_json(r: &PointRatio, metric: Metric) -> Json {
    let mut o = vec![
        ("rw".to_string(), r.cond.rw.name().into()),
        ("bs".into(), (r.cond.bs as f64).into()),
        ("qd".into(), (r.cond.qd as f64).into()),
        ("dist".into(), r.cond.dist.name().into()),
        ("metric".into(), metric.key().into()),
    ];
    for (base, p) in &r.vs {
        o.push((format!("C/{base}"), paired_json(p.as_ref(), "rep")));
    }
    Json::Obj(o)
}

fn sweep_json(s: Option<&Sweep<'_>>) -> Json {
    s.map_or(Json::Null, |s| {
        let m = s.metric();
        obj([
            ("title", s.suite.title().into()),
            ("metric", m.key().into()),
            (
                "points",
                Json::Arr(s.groups.iter().map(group_json).collect()),
            ),
            (
                "ratios",
                Json::Arr(s.ratios.iter().map(|r| point_ratio_json(r, m)).collect()),
            ),
        ])
    })
}

impl Report<'_> {
    fn paradigms_json(&self) -> Json {
        let names = report_order(
            PARADIGMS
                .iter()
                .copied()
                .chain(self.paradigms.iter().map(|r| r.name)),
        );
        Json::Obj(
            names
                .iter()
                .map(|n| (n.to_string(), self.get(n).map_or(Json::Null, paradigm_json)))
                .collect(),
        )
    }

    fn comparisons_json(&self, with_ci: bool) -> Json {
        Json::Obj(
            self.comparisons
                .iter()
                .map(|c| {
                    let v = match (with_ci, &c.paired) {
                        (true, p) => paired_json(p.as_ref(), "round"),
                        (false, p) => p.as_ref().map(|p| round(p.ratio, 4)).into(),
                    };
                    (c.key(), v)
                })
                .collect(),
        )
    }

    fn dilation_json(&self) -> Json {
        self.dilation.map_or(Json::Null, |d| {
            obj([
                ("calib_host_ns", d.host_ns.into()),
                ("calib_guest_ns", d.guest_ns.into()),
                ("factor", round(d.factor(), 4).into()),
            ])
        })
    }

    fn targets_json(&self) -> Json {
        Json::Arr(
            self.targets()
                .into_iter()
                .map(|t| {
                    obj([
                        ("id", t.id.into()),
                        ("target", t.what.as_str().into()),
                        ("measured", t.measured.map(|v| round(v, 6)).into()),
                        ("pass", t.pass.into()),
                    ])
                })
                .collect(),
        )
    }

    /// `results.json`.
    pub fn json(&self) -> Json {
        let c_pct = self
            .get("C")
            .and_then(|c| pct_of_epoch(c.pooled(Migration::move_ns)));
        let sweeps = Json::Obj(
            Suite::ALL
                .iter()
                .map(|s| (s.name().to_string(), sweep_json(self.sweep(*s))))
                .collect(),
        );
        let problems = Json::Arr(self.problems().iter().map(|p| p.as_str().into()).collect());
        obj([
            ("info", fields_json(&self.bench.info)),
            ("dilation", self.dilation_json()),
            ("paradigms", self.paradigms_json()),
            ("ratios", self.comparisons_json(false)),
            ("ratio_intervals", self.comparisons_json(true)),
            ("epoch_ms", EPOCH_MS.into()),
            (
                "move_pct_of_epoch",
                c_pct.map_or(Json::Null, |(m, p)| {
                    obj([
                        ("paradigm", "C".into()),
                        ("median", round(m, 6).into()),
                        ("p99", round(p, 6).into()),
                    ])
                }),
            ),
            ("sweeps", sweeps),
            ("targets", self.targets_json()),
            ("ok", self.problems().is_empty().into()),
            ("problems", problems),
        ])
    }
}
