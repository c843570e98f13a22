//! The paper's headline figures over the nine Table IV workloads: AXLE at p1, p10 and p100
//! against RP and BS (Figure 10 (j)), the idle times at p10 (Figure 12) and the host core stall
//! at p10 and p100 (Figure 13), each an average with its 95 % interval.
//!
//! For each workload the figure is the ratio of total times over the rounds (as
//! [`crate::ratio::paired`] gives per configuration): AXLE's end-to-end time over the
//! baseline's, or for the idle and stall times the baseline's over AXLE's (how many times lower
//! AXLE's is, as the paper reports them). The headline is the mean of the workloads' ratios (and
//! their geometric mean and extreme, as Figure 10 (j) gives them). Its interval comes from a
//! two-level bootstrap: boots are drawn with replacement, then each drawn boot's rounds with
//! replacement. Repetition `k` of every workload and mode ran in the same round of one boot, so
//! a round is resampled whole; drawing boots first makes the interval cover the boot-to-boot
//! spread, which rounds of one boot do not show.
//!
//! A workload is left out when one of its two configurations had chunks computed later than
//! the CCM model (a median `model_late` above zero): its device time is then the emulator's,
//! not the model's, and says nothing about the offload.

use crate::ratio::{percentile, RatioCi, XorShift};
use crate::record::{Run, ROUNDS_PER_BOOT};

/// The nine workloads of the paper's Table IV, by their sweep names.
pub const WORKLOADS: [&str; 9] = [
    "knn-a", "knn-b", "knn-c", "pagerank", "sssp", "dlrm-sls", "llm", "ssb-q1.1", "ssb-q1.2",
];

/// What is compared: the field, and whether AXLE's value is the numerator.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    pub name: &'static str,
    pub field: &'static str,
    /// `true`: AXLE over the baseline (time); `false`: the baseline over AXLE (reductions).
    pub axle_over_base: bool,
}

/// The paper's four comparisons (§V-B to V-D).
pub const METRICS: [Metric; 4] = [
    Metric {
        name: "end-to-end time, AXLE / baseline",
        field: "e2e_us",
        axle_over_base: true,
    },
    Metric {
        name: "CCM idle time, baseline / AXLE",
        field: "ccm_idle_us",
        axle_over_base: false,
    },
    Metric {
        name: "host idle time, baseline / AXLE",
        field: "host_idle_us",
        axle_over_base: false,
    },
    Metric {
        name: "host core stall time, baseline / AXLE",
        field: "host_stall_us",
        axle_over_base: false,
    },
];

/// One headline figure: the means over the workloads with intervals, and the extreme workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub mean: RatioCi,
    /// The geometric mean of the workloads' ratios, with its interval.
    pub geomean: RatioCi,
    /// The workloads that had both sides in at least two common rounds and no model deficit.
    pub workloads: usize,
    /// The workload with the ratio furthest in AXLE's favour, and that ratio.
    pub best: (String, f64),
    /// The workloads left out for a model deficit.
    pub late: Vec<String>,
}

/// Per workload, the (AXLE, baseline) values of `field` by round.
type Pairs = Vec<(String, Vec<(u32, f64, f64)>)>;

/// Whether the median of `model_late` over the runs of one configuration is above zero.
fn late(runs: &[&Run]) -> bool {
    let mut v: Vec<f64> = runs
        .iter()
        .map(|r| r.num("model_late"))
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return false;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2] > 0.0
}

/// The pairs of every workload, and the workloads left out for a model deficit.
fn pairs(raw: &[Run], axle: &str, base: &str, field: &str) -> (Pairs, Vec<String>) {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let mut left_out = Vec::new();
    let per = WORKLOADS
        .iter()
        .filter_map(|w| {
            let runs = |label: &str| -> Vec<&Run> {
                raw.iter()
                    .filter(|r| r.str("sweep") == *w && r.str("label") == label)
                    .collect()
            };
            let (ra, rb) = (runs(axle), runs(base));
            if ra.is_empty() || rb.is_empty() {
                return None;
            }
            if late(&ra) || late(&rb) {
                left_out.push(w.to_string());
                return None;
            }
            let of = |rs: &[&Run]| -> Vec<(u32, f64)> {
                rs.iter()
                    .map(|r| (r.round(), r.num(field)))
                    .filter(|(_, v)| ok(*v))
                    .collect()
            };
            let (a, b) = (of(&ra), of(&rb));
            let reps: Vec<(u32, f64, f64)> = a
                .iter()
                .filter_map(|(k, x)| b.iter().find(|(j, _)| j == k).map(|(_, y)| (*k, *x, *y)))
                .collect();
            (reps.len() >= 2).then(|| (w.to_string(), reps))
        })
        .collect();
    (per, left_out)
}

/// The workloads' ratios when the rounds drawn are `draw` (with repetition).
fn ratios(per: &Pairs, draw: &[u32], axle_over_base: bool) -> Vec<f64> {
    per.iter()
        .map(|(_, r)| {
            let (a, b) = draw.iter().fold((0.0, 0.0), |(a, b), k| {
                r.iter()
                    .filter(|p| p.0 == *k)
                    .fold((a, b), |(a, b), p| (a + p.1, b + p.2))
            });
            match (a > 0.0 && b > 0.0, axle_over_base) {
                (false, _) => f64::NAN,
                (true, true) => a / b,
                (true, false) => b / a,
            }
        })
        .collect()
}

fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

fn mean_of(v: &[f64]) -> f64 {
    let ok = finite(v);
    ok.iter().sum::<f64>() / ok.len() as f64
}

fn geomean_of(v: &[f64]) -> f64 {
    let ok = finite(v);
    (ok.iter().map(|x| x.ln()).sum::<f64>() / ok.len() as f64).exp()
}

/// The rounds of every boot, boot by boot.
fn rounds_by_boot(per: &Pairs) -> Vec<Vec<u32>> {
    let mut rounds: Vec<u32> = per
        .iter()
        .flat_map(|(_, r)| r.iter().map(|p| p.0))
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    let mut boots: Vec<Vec<u32>> = Vec::new();
    for k in rounds {
        match boots.last_mut() {
            Some(b) if b[0] / ROUNDS_PER_BOOT == k / ROUNDS_PER_BOOT => b.push(k),
            _ => boots.push(vec![k]),
        }
    }
    boots
}

/// A draw of the two-level bootstrap: boots with replacement, then each one's rounds.
fn draw(boots: &[Vec<u32>], rng: &mut XorShift) -> Vec<u32> {
    let mut out = Vec::new();
    for _ in 0..boots.len() {
        let b = &boots[rng.below(boots.len())];
        out.extend((0..b.len()).map(|_| b[rng.below(b.len())]));
    }
    out
}

/// The figure of `metric` for the AXLE configuration labelled `axle` against `base`, from the
/// rounds of `raw`; `None` if no workload has both sides.
pub fn figure(raw: &[Run], axle: &str, base: &str, metric: Metric, seed: u64) -> Option<Figure> {
    let (per, late) = pairs(raw, axle, base, metric.field);
    if per.is_empty() {
        return None;
    }
    let boots = rounds_by_boot(&per);
    let all_rounds: Vec<u32> = boots.iter().flatten().copied().collect();
    let all = ratios(&per, &all_rounds, metric.axle_over_base);
    let better = |x: f64, y: f64| {
        if metric.axle_over_base {
            y < x
        } else {
            y > x
        }
    };
    let best = per
        .iter()
        .zip(&all)
        .map(|((w, _), r)| (w.clone(), *r))
        .reduce(|x, y| if better(x.1, y.1) { y } else { x })?;
    let mut rng = XorShift(seed | 1);
    let (mut means, mut geos) = (Vec::new(), Vec::new());
    for _ in 0..crate::ratio::RESAMPLES {
        let r = ratios(&per, &draw(&boots, &mut rng), metric.axle_over_base);
        let (m, g) = (mean_of(&r), geomean_of(&r));
        if m.is_finite() && g.is_finite() {
            means.push(m);
            geos.push(g);
        }
    }
    means.sort_by(|a, b| a.total_cmp(b));
    geos.sort_by(|a, b| a.total_cmp(b));
    let ci = |point: f64, s: &[f64]| RatioCi {
        ratio: point,
        lo: percentile(s, 0.025),
        hi: percentile(s, 0.975),
        pairs: all_rounds.len(),
    };
    Some(Figure {
        mean: ci(mean_of(&all), &means),
        geomean: ci(geomean_of(&all), &geos),
        workloads: per.len(),
        best,
        late,
    })
}

/// The paper's value for a figure, where it gives one.
fn paper(axle: &str, base: &str, m: usize) -> &'static str {
    match (axle, base, m) {
        ("AXLE-p1", "RP", 0) => "paper: 30.21 % sooner on average, at most 50.14 %",
        ("AXLE-p1", "BS", 0) => "paper: 26.22 % sooner on average, at most 48.88 %",
        ("AXLE-p10", "RP", 1) => "paper: 13.99x",
        ("AXLE-p10", "BS", 1) => "paper: 14.53x (abstract; 13.74x in V-C)",
        ("AXLE-p10", "RP", 2) => "paper: 3.93x",
        ("AXLE-p10", "BS", 2) => "paper: 3.85x (abstract; 3.79x in V-C)",
        (_, _, 3) => "paper: up to 6x",
        _ => "",
    }
}

/// The comparisons the paper reports, as (AXLE configuration, metric index): Figure 10 (j) at
/// every polling interval, the idle times at p10 (Figure 12), the stall at p10 and p100
/// (Figure 13).
const FIGURES: [(&str, usize); 7] = [
    ("AXLE-p1", 0),
    ("AXLE-p10", 0),
    ("AXLE-p100", 0),
    ("AXLE-p10", 1),
    ("AXLE-p10", 2),
    ("AXLE-p10", 3),
    ("AXLE-p100", 3),
];

/// The headline as text, against each baseline, with the paper's figures beside ours.
pub fn text(raw: &[Run]) -> String {
    let mut out = String::from(
        "AXLE over the nine Table IV workloads: the mean (and geometric mean) of the workloads' \
         ratios, 95 % interval from a bootstrap over boots and the rounds within them\n",
    );
    for base in ["RP", "BS"] {
        for (axle, i) in FIGURES {
            let m = METRICS[i];
            let Some(f) = figure(raw, axle, base, m, 7) else {
                let (_, late) = pairs(raw, axle, base, m.field);
                if !late.is_empty() {
                    out += &format!(
                        "  {axle} vs {base}, {}: none: every workload ran late of the CCM model \
                         ({}) ({})\n",
                        m.name,
                        late.join(", "),
                        paper(axle, base, i)
                    );
                }
                continue;
            };
            let speed = if m.axle_over_base {
                format!(
                    " = {:.1} % [{:.1}, {:.1}] sooner",
                    (1.0 - f.mean.ratio) * 100.0,
                    (1.0 - f.mean.hi) * 100.0,
                    (1.0 - f.mean.lo) * 100.0
                )
            } else {
                String::new()
            };
            let late = if f.late.is_empty() {
                String::new()
            } else {
                format!("; left out for a model deficit: {}", f.late.join(", "))
            };
            out += &format!(
                "  {axle} vs {base}, {}: {}{speed}; geomean {}; best {} {:.3}; {} workloads{late} ({})\n",
                m.name,
                f.mean.render(),
                f.geomean.render(),
                f.best.0,
                f.best.1,
                f.workloads,
                paper(axle, base, i)
            );
        }
    }
    out
}
