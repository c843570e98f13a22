//! The headline averages over the Table IV workloads, on made-up repetitions.

#[path = "../src/headline.rs"]
mod headline;
#[path = "../src/ratio.rs"]
#[allow(dead_code)]
mod ratio;
#[path = "../src/record.rs"]
#[allow(dead_code)]
mod record;

use std::collections::BTreeMap;

use headline::{figure, text, METRICS, WORKLOADS};
use record::{Run, Value};

fn run(sweep: &str, label: &str, rep: u32, e2e: f64, idle: f64) -> Run {
    booted(0, sweep, label, rep, e2e, idle)
}

fn booted(boot: u32, sweep: &str, label: &str, rep: u32, e2e: f64, idle: f64) -> Run {
    let mut m = BTreeMap::new();
    m.insert("boot".into(), Value::Num(f64::from(boot)));
    m.insert("sweep".into(), Value::Str(sweep.into()));
    m.insert("label".into(), Value::Str(label.into()));
    m.insert("rep".into(), Value::Num(f64::from(rep)));
    m.insert("e2e_us".into(), Value::Num(e2e));
    m.insert("ccm_idle_us".into(), Value::Num(idle));
    Run(m)
}

/// Every workload: RP takes `rp`, AXLE `axle` times that, in each of `reps` repetitions, with
/// a disturbance shared by both sides of a round.
fn matrix(axle: &[f64], reps: u32) -> Vec<Run> {
    let mut v = Vec::new();
    for k in 0..reps {
        let round = 1.0 + 0.3 * f64::from(k % 3);
        for (w, a) in WORKLOADS.iter().zip(axle) {
            v.push(run(w, "RP", k, 1000.0 * round, 400.0 * round));
            v.push(run(w, "AXLE-p1", k, 1000.0 * a * round, 100.0 * round));
        }
    }
    v
}

#[test]
fn the_mean_of_the_workloads_ratios_and_the_best_one() {
    let axle = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.7, 0.8, 0.9];
    let raw = matrix(&axle, 5);
    let f = figure(&raw, "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    assert_eq!(f.workloads, 9);
    let want = axle.iter().sum::<f64>() / 9.0;
    assert!((f.mean.ratio - want).abs() < 1e-12, "{}", f.mean.ratio);
    // A disturbance shared by both sides of each round cancels: the interval is the point.
    assert!((f.mean.lo - want).abs() < 1e-9 && (f.mean.hi - want).abs() < 1e-9);
    assert_eq!(f.best, ("knn-a".to_string(), 0.5));
    // Idle: RP's over AXLE's, 4 in every workload.
    let idle = figure(&raw, "AXLE-p1", "RP", METRICS[1], 1).unwrap();
    assert!((idle.mean.ratio - 4.0).abs() < 1e-12);
    // No BS runs: no figure.
    assert!(figure(&raw, "AXLE-p1", "BS", METRICS[0], 1).is_none());
    assert!(text(&raw).contains("AXLE-p1 vs RP, end-to-end time"));
}

#[test]
fn noise_widens_the_interval_and_equal_sides_show_no_difference() {
    let mut raw = matrix(&[1.0; 9], 6);
    // Noise on AXLE's side only, of mean zero over the repetitions: +10 % in even rounds,
    // -10 % in odd ones (the rounds' own disturbance is 1, 1.3, 1.6, 1, 1.3, 1.6).
    for r in raw.iter_mut() {
        if r.str("label") == "AXLE-p1" {
            let round = 1.0 + 0.3 * (r.num("rep") % 3.0);
            let sign = if r.num("rep") % 2.0 == 0.0 { 1.0 } else { -1.0 };
            r.0.insert(
                "e2e_us".into(),
                Value::Num(1000.0 * round * (1.0 + 0.1 * sign)),
            );
        }
    }
    let f = figure(&raw, "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    assert!(f.mean.lo < f.mean.ratio && f.mean.ratio < f.mean.hi);
    assert!(!f.mean.differs(), "{:?}", f.mean);
    assert!(f.mean.hi - f.mean.lo > 0.005);
}

#[test]
fn a_workload_with_one_repetition_is_left_out() {
    let mut raw = matrix(&[0.5; 9], 3);
    raw.retain(|r| !(r.str("sweep") == "llm" && r.num("rep") > 0.0));
    assert_eq!(
        figure(&raw, "AXLE-p1", "RP", METRICS[0], 1)
            .unwrap()
            .workloads,
        8
    );
}

#[test]
fn the_geometric_mean_is_reported_beside_the_mean() {
    let axle = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.7, 0.8, 0.9];
    let f = figure(&matrix(&axle, 4), "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    let want = (axle.iter().map(|x: &f64| x.ln()).sum::<f64>() / 9.0).exp();
    assert!(
        (f.geomean.ratio - want).abs() < 1e-12,
        "{}",
        f.geomean.ratio
    );
    assert!(f.geomean.ratio < f.mean.ratio);
}

/// Three boots whose AXLE/RP ratio differs from boot to boot (0.6, 0.8, 1.0), with rounds
/// that agree within each boot.
fn three_boots() -> Vec<Run> {
    let mut v = Vec::new();
    for (b, a) in [0.6, 0.8, 1.0].iter().enumerate() {
        for k in 0..5 {
            for w in WORKLOADS {
                v.push(booted(b as u32, w, "RP", k, 1000.0, 400.0));
                v.push(booted(b as u32, w, "AXLE-p1", k, 1000.0 * a, 100.0));
            }
        }
    }
    v
}

#[test]
fn the_interval_covers_the_spread_between_boots() {
    let f = figure(&three_boots(), "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    assert!((f.mean.ratio - 0.8).abs() < 1e-12);
    // Rounds alone, pooled over boots as one, would give a narrow interval; drawing boots
    // first can draw the 0.6 boot three times, or the 1.0 boot.
    assert!(f.mean.lo < 0.7 && f.mean.hi > 0.9, "{:?}", f.mean);
    assert_eq!(f.mean.pairs, 15);
}

#[test]
fn a_negative_control_one_boot_has_no_boot_spread() {
    // The same runs as one boot: the rounds agree, so the interval collapses on the point.
    let mut raw = three_boots();
    raw.retain(|r| r.num("boot") == 1.0);
    let f = figure(&raw, "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    assert!((f.mean.hi - f.mean.lo).abs() < 1e-9, "{:?}", f.mean);
}

#[test]
fn a_workload_the_emulator_was_late_for_is_left_out_and_named() {
    let mut raw = matrix(&[0.5; 9], 3);
    for r in raw.iter_mut().filter(|r| r.str("sweep") == "pagerank") {
        r.0.insert("model_late".into(), Value::Num(12.0));
    }
    let f = figure(&raw, "AXLE-p1", "RP", METRICS[0], 1).unwrap();
    assert_eq!(f.workloads, 8);
    assert_eq!(f.late, vec!["pagerank".to_string()]);
    assert!(text(&raw).contains("left out for a model deficit: pagerank"));
}

#[test]
fn no_figure_when_every_workload_ran_late_and_it_says_so() {
    let mut raw = matrix(&[0.5; 9], 3);
    for r in raw.iter_mut() {
        r.0.insert("model_late".into(), Value::Num(3.0));
    }
    assert!(figure(&raw, "AXLE-p1", "RP", METRICS[0], 1).is_none());
    let t = text(&raw);
    assert!(
        t.contains(
            "AXLE-p1 vs RP, end-to-end time, AXLE / baseline: none: every workload ran late"
        ),
        "{t}"
    );
}
