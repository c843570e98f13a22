//! The table and the plots of a benchmark.

use crate::ratio::{self, RatioCi};
use crate::record::{Run, Value};
use std::fmt::Write;

/// The fields that name a configuration; everything else is measured.
const KEY: [&str; 14] = [
    "workload",
    "sweep",
    "label",
    "mode",
    "sf",
    "order",
    "metadata_slots",
    "payload_slots",
    "poll_ns",
    "launches",
    "size",
    "chunk",
    "depth",
    "host_ns",
];

/// The measured times and counts, merged as medians over repetitions.
const MEASURED: [&str; 15] = [
    "e2e_us",
    "poll_busy_us",
    "local_polls",
    "host_busy_us",
    "host_idle_us",
    "launch_us",
    "release_us",
    "model_late",
    "model_deficit_us",
    "host_stall_us",
    "ccm_idle_us",
    "credit_wait_us",
    "credit_stalls",
    "interrupts",
    "polls",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Merges the repetitions of each configuration, in the order they first appear: the medians
/// of the measured fields, `reps`, `e2e_min_us` and `e2e_max_us`, and `verified` only if every
/// repetition verified (`why` from the first that did not).
pub fn merge(runs: &[Run]) -> Vec<Run> {
    let mut groups: Vec<(Vec<String>, Vec<&Run>)> = Vec::new();
    for r in runs {
        let k = config_key(r);
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|(_, rs)| {
            let mut m = rs[0].clone();
            for f in MEASURED {
                m.0.insert(
                    f.into(),
                    Value::Num(median(rs.iter().map(|r| r.num(f)).collect())),
                );
            }
            let e2e: Vec<f64> = rs.iter().map(|r| r.num("e2e_us")).collect();
            let (lo, hi) = e2e
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            m.0.insert("e2e_min_us".into(), Value::Num(lo));
            m.0.insert("e2e_max_us".into(), Value::Num(hi));
            if let Some(ci) = ci95(&e2e) {
                m.0.insert("e2e_ci95_us".into(), Value::Num(ci));
            }
            m.0.insert("reps".into(), Value::Num(rs.len() as f64));
            if let Some(bad) = rs.iter().find(|r| !r.verified()) {
                m.0.insert("verified".into(), Value::Bool(false));
                m.0.insert("why".into(), Value::Str(bad.str("why").to_string()));
            }
            if let Some(d) = rs.iter().find(|r| r.deadlock()) {
                m.0.insert("deadlock".into(), Value::Bool(true));
                if m.verified() {
                    m.0.insert("why".into(), Value::Str(d.str("why").to_string()));
                }
            }
            m
        })
        .collect()
}

/// What names a run's configuration: runs with the same key are repetitions of each other.
fn config_key(r: &Run) -> Vec<String> {
    KEY.iter().map(|k| format!("{:?}", r.0.get(*k))).collect()
}

/// The baselines every configuration is compared with, where its sweep has them.
pub const BASELINES: [&str; 2] = ["RP", "BS"];

/// Adds to each merged configuration its end-to-end time against each baseline of its sweep
/// (the first configuration of that mode): `e2e_vs_rp`, `e2e_vs_rp_lo`, `e2e_vs_rp_hi`, and the
/// same for BS, from the repetitions in `raw` paired by round (boot and `rep`,
/// [`Run::round`], [`ratio::paired`]).
pub fn attach_ratios(merged: &mut [Run], raw: &[Run]) {
    let reps = |key: &[String]| -> Vec<(u32, f64)> {
        raw.iter()
            .filter(|r| config_key(r) == key)
            .map(|r| (r.round(), r.num("e2e_us")))
            .collect()
    };
    let baselines: Vec<(String, &str, Vec<String>)> = merged
        .iter()
        .flat_map(|m| BASELINES.iter().map(move |b| (m, *b)))
        .filter(|(m, b)| m.str("mode") == *b)
        .map(|(m, b)| (m.str("sweep").to_string(), b, config_key(m)))
        .collect();
    for m in merged.iter_mut() {
        for base in BASELINES {
            let Some((_, _, bkey)) = baselines
                .iter()
                .find(|(s, b, _)| s == m.str("sweep") && *b == base)
            else {
                continue;
            };
            let key = config_key(m);
            if key == *bkey {
                continue;
            }
            let Some(r) = ratio::paired(&reps(&key), &reps(bkey), 1) else {
                continue;
            };
            let f = format!("e2e_vs_{}", base.to_lowercase());
            m.0.insert(f.clone(), Value::Num(r.ratio));
            m.0.insert(format!("{f}_lo"), Value::Num(r.lo));
            m.0.insert(format!("{f}_hi"), Value::Num(r.hi));
        }
    }
}

/// The ratio against `base` that [`attach_ratios`] recorded, if any.
pub fn ratio_vs(r: &Run, base: &str) -> Option<RatioCi> {
    let f = format!("e2e_vs_{}", base.to_lowercase());
    let (ratio, lo, hi) = (
        r.num(&f),
        r.num(&format!("{f}_lo")),
        r.num(&format!("{f}_hi")),
    );
    (ratio.is_finite() && lo.is_finite() && hi.is_finite()).then_some(RatioCi {
        ratio,
        lo,
        hi,
        pairs: r.num("reps") as usize,
    })
}

/// The runs of one sweep, in the order they ran.
pub fn sweep<'a>(runs: &'a [Run], name: &str) -> Vec<&'a Run> {
    runs.iter().filter(|r| r.str("sweep") == name).collect()
}

/// The sweeps, in the order they first appear.
pub fn sweep_names(runs: &[Run]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        let n = r.str("sweep");
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
}

/// The end-to-end time of the RP run of a sweep, the baseline the paper normalizes to.
pub fn rp_baseline(runs: &[&Run]) -> Option<f64> {
    runs.iter()
        .find(|r| r.str("mode") == "RP")
        .map(|r| r.num("e2e_us"))
        .filter(|t| t.is_finite() && *t > 0.0)
}

/// A readable table: every run, with its time normalized to RP where there is an RP run.
pub fn table(runs: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<9} {:<10} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7} {:>7} {:>7} {:>7}  {:<36} {:<36} verified",
        "sweep",
        "run",
        "SF",
        "slots",
        "e2e_us",
        "busy_us",
        "idle_us",
        "launch_us",
        "stall_us",
        "ccm_idle",
        "vs RP",
        "stalls",
        "spread",
        "ci95",
        "late",
        "vs RP, 95 % interval",
        "vs BS, 95 % interval"
    );
    for name in sweep_names(runs) {
        let s = sweep(runs, &name);
        let base = rp_baseline(&s);
        for r in s {
            let ratio = base.map_or("-".to_string(), |b| format!("{:.3}", r.num("e2e_us") / b));
            let _ = writeln!(
                out,
                "{:<9} {:<10} {:>5} {:>6} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>10.0} {:>8} {:>7} {:>7} {:>7} {:>7}  {:<36} {:<36} {}",
                name,
                r.str("label"),
                r.num("sf"),
                r.num("payload_slots"),
                r.num("e2e_us"),
                r.num("host_busy_us"),
                r.num("host_idle_us"),
                r.num("launch_us"),
                r.num("host_stall_us"),
                r.num("ccm_idle_us"),
                ratio,
                r.num("credit_stalls"),
                spread(r),
                ci(r),
                late(r),
                ratio_vs(r, "RP").map_or("-".to_string(), |c| c.render()),
                ratio_vs(r, "BS").map_or("-".to_string(), |c| c.render()),
                match (r.verified(), r.deadlock()) {
                    (true, false) => "yes".to_string(),
                    (true, true) => format!("yes, expected {}", r.str("why")),
                    (false, _) => r.str("why").to_string(),
                }
            );
        }
    }
    out.push_str(&ratio_summary(runs));
    out.push_str(&conditions(runs));
    out
}

/// The median number of chunks the emulator computed later than the model, `-` if none: a
/// configuration with any is measured on the emulator, not the model, and the headline
/// leaves it out.
fn late(r: &Run) -> String {
    let n = r.num("model_late");
    if n.is_finite() && n > 0.0 {
        format!("{n:.0}")
    } else {
        "-".to_string()
    }
}

/// What the figures were measured under, for the reader to judge them by: where the host and
/// the device model ran, and the cadence each RP configuration's remote polling achieved
/// (polls over the end-to-end time: the poller polls whenever a launch is outstanding, which
/// in RP is nearly always) against the model's 1 µs.
fn conditions(runs: &[Run]) -> String {
    let mut out = String::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for r in runs {
        let p = (
            r.str("host_cpus").to_string(),
            r.str("device_cpus").to_string(),
        );
        if !p.0.is_empty() && !seen.contains(&p) {
            seen.push(p);
        }
    }
    for (host, device) in &seen {
        let shared = host.split(',').any(|c| device.split(',').any(|d| d == c));
        let _ = writeln!(
            out,
            "placement: host on CPUs {host}, device model on CPUs {device}{}",
            if shared {
                " (shared: the device's compute takes host time)"
            } else {
                ""
            }
        );
    }
    out.push_str(&model_conditions(runs));
    for r in runs.iter().filter(|r| r.str("mode") == "RP") {
        let (polls, e2e) = (r.num("polls"), r.num("e2e_us"));
        if polls > 0.0 && e2e > 0.0 {
            let _ = writeln!(
                out,
                "RP remote polling, {} {}: {:.0} polls in {:.0} us: {:.0} polls/s, one per {:.2} us",
                r.str("sweep"),
                r.str("label"),
                polls,
                e2e,
                polls / e2e * 1e6,
                e2e / polls
            );
        }
    }
    out
}

/// The model's dilation, and the runs in which the emulated CCM computed later than its model
/// (those measured the emulator, not the model: their CCM times are overstated).
fn model_conditions(runs: &[Run]) -> String {
    let mut out = String::new();
    let mut dilations: Vec<f64> = runs
        .iter()
        .map(|r| r.num("dilation_milli"))
        .filter(|d| *d > 0.0)
        .collect();
    dilations.sort_by(f64::total_cmp);
    dilations.dedup();
    for d in &dilations {
        let _ = writeln!(
            out,
            "dilation: every modelled cost x {:.2} (dilation_milli {d:.0})",
            d / 1000.0
        );
    }
    let late: Vec<&Run> = runs.iter().filter(|r| r.num("model_late") > 0.0).collect();
    // The device sums each late chunk's lateness, so the sum grows with the queue behind a slow
    // chunk and can exceed the run's wall time: what is comparable across runs is the mean.
    let chunks: f64 = late.iter().map(|r| r.num("model_late")).sum();
    let lateness: f64 = late.iter().map(|r| r.num("model_deficit_us")).sum();
    let mean = if chunks > 0.0 { lateness / chunks } else { 0.0 };
    let _ = writeln!(
        out,
        "model deficit: {} of {} configurations had chunks computed later than the CCM model ({:.0} late chunks, {:.1} us late on average; medians over the repetitions){}",
        late.len(),
        runs.len(),
        chunks,
        mean,
        if late.is_empty() {
            ""
        } else {
            ": their device times are the emulator's"
        }
    );
    out
}

/// How many ratios against a baseline are measured precisely enough to quote: a 95 % interval
/// within ±10 % of the ratio (AXLE issue's bar), and how many show a difference at all.
fn ratio_summary(runs: &[Run]) -> String {
    let all: Vec<RatioCi> = runs
        .iter()
        .filter(|r| !BASELINES.contains(&r.str("mode")))
        .flat_map(|r| BASELINES.iter().filter_map(move |b| ratio_vs(r, b)))
        .collect();
    if all.is_empty() {
        return "ratios: none (a baseline and two paired repetitions are needed)\n".to_string();
    }
    let precise = all
        .iter()
        .filter(|c| c.relative_half_width() <= 0.10)
        .count();
    let differ = all.iter().filter(|c| c.differs()).count();
    format!(
        "ratios against RP/BS: {} in all, {precise} with a 95 % interval within ±10 %, {differ} differ from 1.0\n",
        all.len()
    )
}

/// One bar of a stacked bar chart: label and stacked segments (value, colour).
pub struct Bar {
    pub label: String,
    pub parts: Vec<(f64, &'static str)>,
}

/// A stacked bar chart as SVG; the legend names the segments in order.
pub fn bar_chart(title: &str, y_label: &str, bars: &[Bar], legend: &[(&str, &str)]) -> String {
    let (w, h, left, bottom, top) = (120 + 90 * bars.len().max(1), 360, 70.0, 300.0, 40.0);
    let max = bars
        .iter()
        .map(|b| b.parts.iter().map(|p| p.0.max(0.0)).sum::<f64>())
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = (bottom - top) / max;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n\
         <text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n\
         <line x1=\"{left}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"black\"/>\n",
        w / 2,
        xml(title),
        (bottom + top) / 2.0,
        (bottom + top) / 2.0,
        xml(y_label),
        w - 20
    );
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = bottom - v * scale;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{y:.1}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            fmt_num(v)
        );
    }
    for (i, b) in bars.iter().enumerate() {
        let x = left + 20.0 + 90.0 * i as f64;
        let mut y = bottom;
        for (v, colour) in &b.parts {
            let hgt = v.max(0.0) * scale;
            y -= hgt;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"60\" height=\"{hgt:.1}\" fill=\"{colour}\"/>"
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x + 30.0,
            bottom + 16.0,
            xml(&b.label)
        );
    }
    for (i, (name, colour)) in legend.iter().enumerate() {
        let y = bottom + 36.0 + 16.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"{y}\">{}</text>",
            y - 9.0,
            left + 16.0,
            xml(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Two-sided 95 % quantiles of Student's t for 1 to 10 degrees of freedom.
const T95: [f64; 10] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
];

/// The half-width of the 95 % confidence interval of the mean of `xs` (Student's t; the normal
/// 1.96 beyond 11 samples); `None` for fewer than two.
pub fn ci95(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = T95.get(n - 2).copied().unwrap_or(1.96);
    Some(t * var.sqrt() / (n as f64).sqrt())
}

/// The 95 % confidence interval's half-width relative to the median, where there is one.
fn ci(r: &Run) -> String {
    let (ci, mid) = (r.num("e2e_ci95_us"), r.num("e2e_us"));
    if ci.is_finite() && mid > 0.0 {
        format!("±{:.0}%", 100.0 * ci / mid)
    } else {
        "-".to_string()
    }
}

/// How far the repetitions' end-to-end times spread, relative to their median.
fn spread(r: &Run) -> String {
    let (lo, hi, mid) = (r.num("e2e_min_us"), r.num("e2e_max_us"), r.num("e2e_us"));
    if r.num("reps") > 1.0 && mid > 0.0 {
        format!("{:.0}%", 100.0 * (hi - lo) / mid)
    } else {
        "-".to_string()
    }
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub const BUSY: &str = "#4e9a06";
pub const IDLE: &str = "#c4a000";

/// The Figure-10-style plot of one sweep (`modes`, or a workload's): each mode's end-to-end
/// time normalized to RP, split into host busy and host idle time.
pub fn modes_plot(runs: &[Run], name: &str) -> Option<String> {
    let s = sweep(runs, name);
    let base = rp_baseline(&s)?;
    let bars: Vec<Bar> = s
        .iter()
        .map(|r| Bar {
            label: r.str("label").to_string(),
            parts: vec![
                (r.num("host_busy_us") / base, BUSY),
                (r.num("host_idle_us") / base, IDLE),
            ],
        })
        .collect();
    let title = format!(
        "{}: end-to-end time normalized to RP",
        s.first()?.str("workload")
    );
    Some(bar_chart(
        &title,
        "time / RP",
        &bars,
        &[
            ("host busy", BUSY),
            ("host idle (waiting for the CCM)", IDLE),
        ],
    ))
}

/// A sweep's end-to-end times in microseconds, labelled by `key`.
pub fn sweep_plot(runs: &[Run], name: &str, key: &str, title: &str) -> Option<String> {
    let s = sweep(runs, name);
    if s.is_empty() {
        return None;
    }
    let bars: Vec<Bar> = s
        .iter()
        .map(|r| Bar {
            label: format!("{} {}", key, r.num(key)),
            parts: vec![(r.num("host_busy_us"), BUSY), (r.num("host_idle_us"), IDLE)],
        })
        .collect();
    Some(bar_chart(
        title,
        "microseconds",
        &bars,
        &[("host busy", BUSY), ("host idle", IDLE)],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::parse;

    fn run(rep: u32, e2e: f64, verified: bool, deadlock: bool) -> Run {
        parse(&format!(
            "{{\"rep\":{rep},\"sweep\":\"llm-capacity\",\"label\":\"AXLE-p1\",\"mode\":\"AXLE\",\
             \"payload_slots\":128,\"e2e_us\":{e2e},\"verified\":{verified},\
             \"deadlock\":{deadlock},\"why\":\"deadlock detected: 3 records held\"}}"
        ))
        .unwrap()
    }

    #[test]
    fn confidence_intervals() {
        assert_eq!(ci95(&[5.0]), None);
        // 1, 2, 3: mean 2, s = 1, t(2) = 4.303: 4.303 / sqrt(3).
        let c = ci95(&[1.0, 2.0, 3.0]).unwrap();
        assert!((c - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(ci95(&[7.0, 7.0]), Some(0.0));
        // Beyond the table: the normal quantile.
        let many: Vec<f64> = (0..20).map(|i| f64::from(i % 2)).collect();
        let s = (20.0 / 4.0 / 19.0f64).sqrt();
        assert!((ci95(&many).unwrap() - 1.96 * s / 20f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn conditions_name_the_placement_and_the_rp_cadence() {
        let rp = parse(
            "{\"sweep\":\"modes\",\"label\":\"RP\",\"mode\":\"RP\",\"polls\":2000,\
             \"e2e_us\":4000,\"host_cpus\":\"0\",\"device_cpus\":\"1\"}",
        )
        .unwrap();
        let c = conditions(std::slice::from_ref(&rp));
        assert!(
            c.contains("host on CPUs 0, device model on CPUs 1\n"),
            "{c}"
        );
        assert!(c.contains("500000 polls/s, one per 2.00 us"), "{c}");
        let mut shared = rp;
        shared
            .0
            .insert("device_cpus".into(), Value::Str("0,1".into()));
        assert!(conditions(&[shared]).contains("(shared"));
    }

    #[test]
    fn conditions_report_the_dilation_and_any_model_deficit() {
        let on_time = parse(
            "{\"sweep\":\"modes\",\"label\":\"AXLE\",\"mode\":\"AXLE\",\
             \"dilation_milli\":12500,\"model_late\":0,\"model_deficit_us\":0}",
        )
        .unwrap();
        let c = conditions(std::slice::from_ref(&on_time));
        assert!(c.contains("every modelled cost x 12.50"), "{c}");
        assert!(c.contains("model deficit: 0 of 1 configurations"), "{c}");
        let mut late = on_time.clone();
        late.0.insert("model_late".into(), Value::Num(3.0));
        late.0.insert("model_deficit_us".into(), Value::Num(40.0));
        let c = conditions(&[on_time, late]);
        assert!(
            c.contains("1 of 2 configurations had chunks computed later than the CCM model (3 late chunks, 13.3 us late on average; medians over the repetitions): their device times are the emulator's"),
            "{c}"
        );
    }

    #[test]
    fn an_expected_deadlock_is_reported_not_failed() {
        let m = merge(&[run(0, 10.0, true, true), run(1, 30.0, true, true)]);
        assert_eq!(m.len(), 1);
        assert!(m[0].verified() && m[0].deadlock());
        assert_eq!(m[0].num("e2e_us"), 20.0);
        let t = table(&m);
        assert!(t.contains("yes, expected deadlock detected"), "{t}");
    }

    #[test]
    fn an_unexpected_deadlock_fails_its_configuration() {
        let m = merge(&[run(0, 10.0, true, false), run(1, 30.0, false, true)]);
        assert!(!m[0].verified() && m[0].deadlock());
        assert!(table(&m).contains("deadlock detected: 3 records held"));
    }
}
