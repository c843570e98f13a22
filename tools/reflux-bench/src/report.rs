// SPDX-License-Identifier: GPL-2.0

//! What the benchmark measured: per paradigm the steady throughput, temperatures, throttling
//! and migration times; the ratios between paradigms and the paper's targets; as JSON, a table
//! and three plots.

use std::fmt::Write;

use crate::json::{obj, Json};
use crate::log::{Bench, Fields, Migration, Paradigm, Sample, Value, PARADIGMS};
use crate::plot::{Plot, Rule, Scale, Series};
use crate::stats::{self, Dist};

/// The scheduling epoch migration costs are compared with.
pub const EPOCH_MS: f64 = 10.0;
/// Target: C's steady throughput at least this many times B's.
pub const SPEEDUP_TARGET: f64 = 1.7;
/// Target: C's steady maximum temperature below this (°C), where the device throttles.
pub const THROTTLE_C: f64 = 77.0;
/// Target: the median migration move time below this share of the epoch (%).
pub const MOVE_TARGET_PCT: f64 = 0.5;

/// The paradigm's colour in the plots.
pub fn colour(name: &str) -> &'static str {
    match name {
        "A" => "#d62728",
        "B" => "#ff7f0e",
        "Bq" => "#9467bd",
        "C" => "#2ca02c",
        "H" => "#1f77b4",
        _ => "#7f7f7f",
    }
}

const DRAIN: &str = "#1f77b4";
const RULE: &str = "#8b0000";

/// The samples of the second half of the run: those whose interval ends after half the last
/// sample's time (each sample's MB/s covers the interval ending at its `t_ms`); all of them if
/// the run has no length.
pub fn steady(samples: &[Sample]) -> &[Sample] {
    let Some(last) = samples.last() else {
        return samples;
    };
    let half = last.t_ms / 2.0;
    match samples.partition_point(|s| s.t_ms <= half) {
        i if i < samples.len() => &samples[i..],
        _ => samples,
    }
}

fn round(x: f64, decimals: i32) -> f64 {
    let m = 10f64.powi(decimals);
    (x * m).round() / m
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

/// One paradigm's figures.
pub struct Summary<'a> {
    pub p: &'a Paradigm,
    /// Mean MB/s of the samples of the second half of the run.
    pub steady_mbps: Option<f64>,
    pub max_temp_c: Option<f64>,
    /// The maximum over the second half.
    pub steady_max_temp_c: Option<f64>,
    /// The share of samples that were throttled.
    pub throttled_fraction: Option<f64>,
    pub total_ns: Option<Dist>,
    /// Checkpoint + handover + rebuild: the migration without its drain.
    pub move_ns: Option<Dist>,
    pub drain_ns: Option<Dist>,
    pub ckpt_ns: Option<Dist>,
    pub handover_ns: Option<Dist>,
    pub rebuild_ns: Option<Dist>,
}

impl<'a> Summary<'a> {
    pub fn of(p: &'a Paradigm) -> Summary<'a> {
        let temp = |s: &[Sample]| s.iter().map(|s| s.temp_mc / 1000.0).reduce(f64::max);
        let st = steady(&p.samples);
        let m = &p.migrations;
        let phase = |f: fn(&Migration) -> f64| stats::dist(&m.iter().map(f).collect::<Vec<_>>());
        Summary {
            p,
            steady_mbps: stats::mean(&st.iter().map(|s| s.mbps).collect::<Vec<_>>()),
            max_temp_c: temp(&p.samples),
            steady_max_temp_c: temp(st),
            throttled_fraction: stats::mean(
                &p.samples
                    .iter()
                    .map(|s| f64::from(u8::from(s.throttled)))
                    .collect::<Vec<_>>(),
            ),
            total_ns: phase(|m| m.total_ns),
            move_ns: phase(|m| m.move_ns()),
            drain_ns: phase(|m| m.drain_ns),
            ckpt_ns: phase(|m| m.ckpt_ns),
            handover_ns: phase(|m| m.handover_ns),
            rebuild_ns: phase(|m| m.rebuild_ns),
        }
    }

    /// The median and 99th percentile move time as a percentage of the epoch.
    pub fn move_pct_of_epoch(&self) -> Option<(f64, f64)> {
        let d = self.move_ns?;
        let epoch_ns = EPOCH_MS * 1e6;
        Some((100.0 * d.median / epoch_ns, 100.0 * d.p99 / epoch_ns))
    }

    fn verify(&self) -> &'static str {
        match &self.p.fio {
            Some(f) if f.verify_ok => "ok",
            Some(_) => "fail",
            None => "missing",
        }
    }
}

/// A target of the paper, checked against a measurement.
pub struct Target {
    pub id: &'static str,
    pub what: String,
    pub measured: Option<f64>,
    /// The measurement as the table shows it.
    pub shown: String,
    /// `None` if there is nothing to judge (a paradigm or its migrations are missing).
    pub pass: Option<bool>,
}

/// The figures of every paradigm that ran.
pub struct Report<'a> {
    pub bench: &'a Bench,
    /// In the order A, B, C; only those that ran.
    pub paradigms: Vec<Summary<'a>>,
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

impl<'a> Report<'a> {
    pub fn new(bench: &'a Bench) -> Report<'a> {
        Report {
            bench,
            paradigms: PARADIGMS
                .iter()
                .filter_map(|n| bench.get(n))
                .map(Summary::of)
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Summary<'a>> {
        self.paradigms.iter().find(|s| s.p.name == name)
    }

    /// The ratio of two paradigms' steady throughputs.
    pub fn ratio(&self, num: &str, den: &str) -> Option<f64> {
        let n = self.get(num)?.steady_mbps?;
        let d = self.get(den)?.steady_mbps?;
        (d > 0.0).then(|| n / d)
    }

    pub fn targets(&self) -> Vec<Target> {
        let c = self.get("C");
        let speedup = self.ratio("C", "B");
        let temp = c.and_then(|c| c.steady_max_temp_c);
        let moved = c.and_then(|c| Some((c.move_ns?.median, c.move_pct_of_epoch()?.0)));
        let all_ok = self.paradigms.iter().all(|s| s.verify() == "ok");
        vec![
            Target {
                id: "c_over_b_steady",
                what: format!("C steady MB/s ≥ {SPEEDUP_TARGET} × B"),
                measured: speedup,
                shown: speedup.map_or("-".into(), |r| format!("{r:.3} ×")),
                pass: speedup.map(|r| r >= SPEEDUP_TARGET),
            },
            Target {
                id: "c_steady_max_temp_c",
                what: format!("C steady max temperature < {THROTTLE_C} °C"),
                measured: temp,
                shown: temp.map_or("-".into(), |t| format!("{t:.1} °C")),
                pass: temp.map(|t| t < THROTTLE_C),
            },
            Target {
                id: "c_median_move_pct_of_epoch",
                what: format!(
                    "C median migration move < {MOVE_TARGET_PCT} % of the {EPOCH_MS} ms epoch ({} µs)",
                    MOVE_TARGET_PCT / 100.0 * EPOCH_MS * 1000.0
                ),
                measured: moved.map(|m| m.1),
                shown: moved.map_or("-".into(), |(ns, pct)| {
                    format!("{:.2} µs = {pct:.3} %", ns / 1000.0)
                }),
                pass: moved.map(|m| m.1 < MOVE_TARGET_PCT),
            },
            Target {
                id: "fio_verify_all_ok",
                what: "fio verify ok for every paradigm".into(),
                measured: None,
                shown: self
                    .paradigms
                    .iter()
                    .map(|s| format!("{} {}", s.p.name, s.verify()))
                    .collect::<Vec<_>>()
                    .join(", "),
                pass: (!self.paradigms.is_empty()).then_some(all_ok),
            },
        ]
    }

    /// Why the run failed: no paradigm ran, or one's fio did not verify.
    pub fn problems(&self) -> Vec<String> {
        if self.paradigms.is_empty() {
            return vec!["no paradigm ran (no '##reflux-bench begin' line)".into()];
        }
        self.paradigms
            .iter()
            .filter_map(|s| match s.verify() {
                "ok" => None,
                "missing" => Some(format!("paradigm {}: no fio line", s.p.name)),
                v => Some(format!("paradigm {}: fio verify={v}", s.p.name)),
            })
            .collect()
    }

    /// Worth saying but not a failure: fio errors with a verified run.
    pub fn warnings(&self) -> Vec<String> {
        self.paradigms
            .iter()
            .filter_map(|s| {
                let e = s.p.fio.as_ref()?.errors?;
                (e > 0.0).then(|| format!("paradigm {}: fio reported errors={e}", s.p.name))
            })
            .collect()
    }

    fn paradigm_json(s: &Summary<'_>) -> Json {
        let p = s.p;
        let samples = obj([
            ("t_ms", nums(p.samples.iter().map(|s| s.t_ms))),
            ("mbps", nums(p.samples.iter().map(|s| s.mbps))),
            ("temp_c", nums(p.samples.iter().map(|s| s.temp_mc / 1000.0))),
            (
                "throttled",
                nums(p.samples.iter().map(|s| f64::from(u8::from(s.throttled)))),
            ),
            (
                "inflight_permille",
                Json::Arr(
                    p.samples
                        .iter()
                        .map(|s| s.inflight_permille.into())
                        .collect(),
                ),
            ),
            (
                "placements",
                columns(&p.samples, |s| {
                    s.placements
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.name().into()))
                        .collect()
                }),
            ),
            (
                "extra",
                columns(&p.samples, |s| {
                    s.extra
                        .iter()
                        .map(|(k, v)| (k.as_str(), value_json(v)))
                        .collect()
                }),
            ),
        ]);
        // Per actor kind: the share of the samples reporting it that had it on the device.
        let mut kinds: Vec<(&str, usize, usize)> = Vec::new();
        for (k, place) in p.samples.iter().flat_map(|s| &s.placements) {
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
        let device_fraction = Json::Obj(
            kinds
                .iter()
                .map(|(k, n, d)| (k.to_string(), round(*d as f64 / *n as f64, 4).into()))
                .collect(),
        );
        let fio = p.fio.as_ref().map_or(Json::Null, |f| {
            let mut o = vec![
                ("bw_mbps".to_string(), f.bw_mbps.into()),
                (
                    "verify".into(),
                    if f.verify_ok { "ok" } else { "fail" }.into(),
                ),
                ("errors".into(), f.errors.into()),
            ];
            o.extend(f.extra.iter().map(|(k, v)| (k.clone(), value_json(v))));
            Json::Obj(o)
        });
        let migrations = Json::Arr(
            p.migrations
                .iter()
                .map(|m| {
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
                })
                .collect(),
        );
        let pct = s.move_pct_of_epoch();
        let summary = obj([
            ("count", (p.migrations.len() as f64).into()),
            ("total_ns", dist_json(s.total_ns)),
            ("move_ns", dist_json(s.move_ns)),
            ("drain_ns", dist_json(s.drain_ns)),
            ("ckpt_ns", dist_json(s.ckpt_ns)),
            ("handover_ns", dist_json(s.handover_ns)),
            ("rebuild_ns", dist_json(s.rebuild_ns)),
            (
                "move_pct_of_epoch",
                pct.map_or(Json::Null, |(m, p)| {
                    obj([("median", round(m, 6).into()), ("p99", round(p, 6).into())])
                }),
            ),
        ]);
        obj([
            ("info", fields_json(&p.info)),
            ("samples", samples),
            ("placement_device_fraction", device_fraction),
            ("fio", fio),
            ("steady_mbps", s.steady_mbps.map(|v| round(v, 4)).into()),
            ("max_temp_c", s.max_temp_c.map(|v| round(v, 4)).into()),
            (
                "steady_max_temp_c",
                s.steady_max_temp_c.map(|v| round(v, 4)).into(),
            ),
            (
                "throttled_fraction",
                s.throttled_fraction.map(|v| round(v, 4)).into(),
            ),
            ("migrations", migrations),
            ("migration_summary", summary),
        ])
    }

    /// `results.json`.
    pub fn json(&self) -> Json {
        let paradigms = Json::Obj(
            PARADIGMS
                .iter()
                .map(|n| {
                    let v = self.get(n).map_or(Json::Null, Self::paradigm_json);
                    (n.to_string(), v)
                })
                .collect(),
        );
        let c_pct = self.get("C").and_then(Summary::move_pct_of_epoch);
        let targets = Json::Arr(
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
        );
        let problems = Json::Arr(self.problems().iter().map(|p| p.as_str().into()).collect());
        obj([
            ("info", fields_json(&self.bench.info)),
            ("paradigms", paradigms),
            (
                "ratios",
                obj([
                    ("C/B", self.ratio("C", "B").map(|v| round(v, 4)).into()),
                    ("C/A", self.ratio("C", "A").map(|v| round(v, 4)).into()),
                    ("C/H", self.ratio("C", "H").map(|v| round(v, 4)).into()),
                    ("B/H", self.ratio("B", "H").map(|v| round(v, 4)).into()),
                    ("C/Bq", self.ratio("C", "Bq").map(|v| round(v, 4)).into()),
                    ("Bq/H", self.ratio("Bq", "H").map(|v| round(v, 4)).into()),
                ]),
            ),
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
            ("targets", targets),
            ("ok", self.problems().is_empty().into()),
            ("problems", problems),
        ])
    }

    /// `table.txt`.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<8} {:>11} {:>9} {:>7} {:>13} {:>9} {:>10} {:>11} {:>11}  fio verify",
            "paradigm",
            "steady MB/s",
            "fio MB/s",
            "max °C",
            "steady max °C",
            "throttled",
            "migrations",
            "move med µs",
            "move p99 µs",
        );
        for name in PARADIGMS {
            let Some(s) = self.get(name) else {
                let _ = writeln!(out, "{name:<8} (did not run)");
                continue;
            };
            let mut verify = s.verify().to_string();
            if let Some(e) = s.p.fio.as_ref().and_then(|f| f.errors).filter(|e| *e > 0.0) {
                let _ = write!(verify, ", errors={e}");
            }
            let _ = writeln!(
                out,
                "{:<8} {:>11} {:>9} {:>7} {:>13} {:>9} {:>10} {:>11} {:>11}  {}",
                name,
                opt(s.steady_mbps, 1),
                opt(s.p.fio.as_ref().map(|f| f.bw_mbps), 1),
                opt(s.max_temp_c, 1),
                opt(s.steady_max_temp_c, 1),
                s.throttled_fraction
                    .map_or("-".into(), |f| format!("{:.1} %", 100.0 * f)),
                s.p.migrations.len(),
                opt(s.move_ns.map(|d| d.median / 1000.0), 2),
                opt(s.move_ns.map(|d| d.p99 / 1000.0), 2),
                verify
            );
        }
        let _ = writeln!(
            out,
            "\nsteady MB/s ratios: C/B {}   C/A {}   C/H {}   B/H {}   C/Bq {}   Bq/H {}",
            opt(self.ratio("C", "B"), 3),
            opt(self.ratio("C", "A"), 3),
            opt(self.ratio("C", "H"), 3),
            opt(self.ratio("B", "H"), 3),
            opt(self.ratio("C", "Bq"), 3),
            opt(self.ratio("Bq", "H"), 3)
        );
        let _ = writeln!(
            out,
            "\n{:<62} {:>22}  verdict",
            "target (paper)", "measured"
        );
        for t in self.targets() {
            let verdict = match t.pass {
                Some(true) => "pass",
                Some(false) => "miss",
                None => "n/a",
            };
            let _ = writeln!(out, "{:<62} {:>22}  {verdict}", t.what, t.shown);
        }
        let info = |f: &Fields| -> String {
            f.iter()
                .map(|(k, v)| match v {
                    Value::Num(n) => format!("{k}={n}"),
                    Value::Str(s) => format!("{k}={s}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !self.bench.info.is_empty() || self.paradigms.iter().any(|s| !s.p.info.is_empty()) {
            out.push('\n');
        }
        if !self.bench.info.is_empty() {
            let _ = writeln!(out, "info: {}", info(&self.bench.info));
        }
        for s in &self.paradigms {
            if !s.p.info.is_empty() {
                let _ = writeln!(out, "info {}: {}", s.p.name, info(&s.p.info));
            }
        }
        out
    }

    fn per_paradigm(&self, y: impl Fn(&Sample) -> f64) -> Vec<Series> {
        self.paradigms
            .iter()
            .map(|s| Series {
                name: if s.p.samples.is_empty() {
                    format!("{} (no samples)", s.p.name)
                } else {
                    s.p.name.clone()
                },
                colour: colour(&s.p.name),
                points: s
                    .p
                    .samples
                    .iter()
                    .map(|x| (x.t_ms / 1000.0, y(x)))
                    .collect(),
                ..Series::default()
            })
            .collect()
    }

    fn no_samples(&self) -> Option<String> {
        self.paradigms
            .iter()
            .all(|s| s.p.samples.is_empty())
            .then(|| "no samples".to_string())
    }

    /// `throughput.svg`: MB/s over time, a line per paradigm.
    pub fn throughput_svg(&self) -> String {
        Plot {
            title: "reflux: MB/s written per ~250 ms interval, by paradigm".into(),
            x_label: "time since the paradigm's start (s)".into(),
            y_label: "MB/s (10^6 bytes per second)".into(),
            series: self.per_paradigm(|s| s.mbps),
            y_zero: true,
            note: self.no_samples(),
            ..Plot::default()
        }
        .svg()
    }

    /// `temperature.svg`: device °C over time, a line per paradigm, and the throttle point.
    pub fn temperature_svg(&self) -> String {
        Plot {
            title: "reflux: device temperature, by paradigm".into(),
            x_label: "time since the paradigm's start (s)".into(),
            y_label: "device temperature (°C)".into(),
            series: self.per_paradigm(|s| s.temp_mc / 1000.0),
            h_rules: vec![Rule {
                at: THROTTLE_C,
                label: "throttle (OCP)".into(),
                colour: RULE,
            }],
            note: self.no_samples(),
            ..Plot::default()
        }
        .svg()
    }

    /// `migrations.svg`: the empirical CDFs of C's migration move times and drain times (µs).
    pub fn migrations_svg(&self) -> String {
        let target_us = MOVE_TARGET_PCT / 100.0 * EPOCH_MS * 1000.0;
        let mut plot = Plot {
            title: "reflux: paradigm C's migrations (empirical CDF)".into(),
            x_label: "microseconds".into(),
            y_label: "fraction of migrations ≤ x".into(),
            y_range: Some((0.0, 1.0)),
            v_rules: vec![Rule {
                at: target_us,
                label: format!("{MOVE_TARGET_PCT} % of epoch ({target_us} µs)"),
                colour: RULE,
            }],
            ..Plot::default()
        };
        let c = self.get("C");
        let m = c.map_or(&[][..], |c| &c.p.migrations[..]);
        if m.is_empty() {
            plot.note = Some(match c {
                Some(_) => "paradigm C recorded no migrations".into(),
                None => "paradigm C did not run".into(),
            });
            return plot.svg();
        }
        let cdf = |v: Vec<f64>| -> Vec<(f64, f64)> {
            let mut v = v;
            v.sort_by(|a, b| a.total_cmp(b));
            let n = v.len() as f64;
            v.iter()
                .enumerate()
                .flat_map(|(i, &x)| [(x, i as f64 / n), (x, (i + 1) as f64 / n)])
                .collect()
        };
        let moved: Vec<f64> = m.iter().map(|m| m.move_ns() / 1000.0).collect();
        let drain: Vec<f64> = m.iter().map(|m| m.drain_ns / 1000.0).collect();
        let (lo, hi) = moved
            .iter()
            .chain(&drain)
            .chain(std::iter::once(&target_us))
            .filter(|v| **v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(*v), b.max(*v)));
        if hi / lo > 100.0 {
            plot.x_scale = Scale::Log10;
            plot.x_label = "microseconds (logarithmic)".into();
        }
        plot.series = vec![
            Series {
                name: "move: ckpt+handover+rebuild".into(),
                colour: colour("C"),
                points: cdf(moved),
                ..Series::default()
            },
            Series {
                name: "drain".into(),
                colour: DRAIN,
                points: cdf(drain),
                ..Series::default()
            },
        ];
        plot.svg()
    }

    /// The output files: name and contents.
    pub fn files(&self) -> Vec<(&'static str, String)> {
        vec![
            ("results.json", self.json().render()),
            ("table.txt", self.table()),
            ("throughput.svg", self.throughput_svg()),
            ("temperature.svg", self.temperature_svg()),
            ("migrations.svg", self.migrations_svg()),
        ]
    }
}
