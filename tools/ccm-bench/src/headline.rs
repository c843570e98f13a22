//! The paper's headline figures: AXLE at p1 against RP and BS over the nine Table IV workloads,
//! each an average with its 95 % interval.
//!
//! For each workload the figure is the ratio of total times over the repetitions (as
//! [`crate::ratio::paired`] gives per configuration): AXLE-p1's end-to-end time over the
//! baseline's, or for the idle and stall times the baseline's over AXLE-p1's (how many times
//! lower AXLE's is, as the paper reports them). The headline is the mean of the workloads'
//! ratios, and its interval comes from a bootstrap over the repetitions: repetition `k` of every
//! workload and mode ran in the same round of the matrix, so the rounds are resampled whole, and
//! each resample recomputes every workload's ratio and their mean.

use crate::ratio::{percentile, RatioCi, XorShift};
use crate::record::Run;

/// The nine workloads of the paper's Table IV, by their sweep names.
pub const WORKLOADS: [&str; 9] = [
    "knn-a", "knn-b", "knn-c", "pagerank", "sssp", "dlrm-sls", "llm", "ssb-q1.1", "ssb-q1.2",
];

/// The offload the headline measures, and its baselines.
pub const AXLE: &str = "AXLE-p1";

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

/// One headline figure: the mean over the workloads, its interval, and the extreme workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub mean: RatioCi,
    /// The workloads that had both sides in at least two common repetitions.
    pub workloads: usize,
    /// The workload with the ratio furthest in AXLE's favour, and that ratio.
    pub best: (String, f64),
}

/// Per workload, the (AXLE, baseline) values of `field` by repetition.
type Pairs = Vec<(String, Vec<(u32, f64, f64)>)>;

fn pairs(raw: &[Run], base: &str, field: &str) -> Pairs {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    WORKLOADS
        .iter()
        .filter_map(|w| {
            let of = |label: &str| -> Vec<(u32, f64)> {
                raw.iter()
                    .filter(|r| r.str("sweep") == *w && r.str("label") == label)
                    .map(|r| (r.num("rep") as u32, r.num(field)))
                    .filter(|(_, v)| ok(*v))
                    .collect()
            };
            let (a, b) = (of(AXLE), of(base));
            let reps: Vec<(u32, f64, f64)> = a
                .iter()
                .filter_map(|(k, x)| b.iter().find(|(j, _)| j == k).map(|(_, y)| (*k, *x, *y)))
                .collect();
            (reps.len() >= 2).then(|| (w.to_string(), reps))
        })
        .collect()
}

/// The figure of `metric` against `base`, from the repetitions of `raw`; `None` if no workload
/// has both sides.
pub fn figure(raw: &[Run], base: &str, metric: Metric, seed: u64) -> Option<Figure> {
    let per = pairs(raw, base, metric.field);
    if per.is_empty() {
        return None;
    }
    let mut reps: Vec<u32> = per
        .iter()
        .flat_map(|(_, r)| r.iter().map(|p| p.0))
        .collect();
    reps.sort_unstable();
    reps.dedup();
    // The workloads' ratios when the rounds drawn are `draw` (with repetition).
    let ratios = |draw: &[u32]| -> Vec<f64> {
        per.iter()
            .map(|(_, r)| {
                let (a, b) = draw.iter().fold((0.0, 0.0), |(a, b), k| {
                    r.iter()
                        .filter(|p| p.0 == *k)
                        .fold((a, b), |(a, b), p| (a + p.1, b + p.2))
                });
                match (a > 0.0 && b > 0.0, metric.axle_over_base) {
                    (false, _) => f64::NAN,
                    (true, true) => a / b,
                    (true, false) => b / a,
                }
            })
            .collect()
    };
    let mean_of = |v: &[f64]| {
        let ok: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        ok.iter().sum::<f64>() / ok.len() as f64
    };
    let all = ratios(&reps);
    let best = per
        .iter()
        .zip(&all)
        .map(|((w, _), r)| (w.clone(), *r))
        .reduce(|x, y| {
            let better = if metric.axle_over_base {
                y.1 < x.1
            } else {
                y.1 > x.1
            };
            if better {
                y
            } else {
                x
            }
        })?;
    let mut rng = XorShift(seed | 1);
    let mut samples: Vec<f64> = (0..crate::ratio::RESAMPLES)
        .map(|_| {
            let draw: Vec<u32> = reps.iter().map(|_| reps[rng.below(reps.len())]).collect();
            mean_of(&ratios(&draw))
        })
        .filter(|m| m.is_finite())
        .collect();
    samples.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| percentile(&samples, p);
    Some(Figure {
        mean: RatioCi {
            ratio: mean_of(&all),
            lo: q(0.025),
            hi: q(0.975),
            pairs: reps.len(),
        },
        workloads: per.len(),
        best,
    })
}

/// The headline as text, against each baseline, with the paper's figures beside ours.
pub fn text(raw: &[Run]) -> String {
    let paper = |base: &str, m: usize| -> &'static str {
        match (base, m) {
            ("RP", 0) => "paper: 30.21 % faster on average, at most 50.14 %",
            ("BS", 0) => "paper: 26.22 % faster on average, at most 48.88 %",
            ("RP", 1) => "paper: 13.99x",
            ("BS", 1) => "paper: 14.53x",
            ("RP", 2) => "paper: 3.93x",
            ("BS", 2) => "paper: 3.85x",
            (_, 3) => "paper: up to 6x",
            _ => "",
        }
    };
    let mut out = String::from(
        "AXLE-p1 over the nine Table IV workloads: the mean of the workloads' ratios, 95 % \
         interval from a bootstrap over the repetitions (rounds of the matrix)\n",
    );
    for base in ["RP", "BS"] {
        for (i, m) in METRICS.iter().enumerate() {
            let Some(f) = figure(raw, base, *m, 7) else {
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
            out += &format!(
                "  vs {base}, {}: {}{speed}; best {} {:.3}; {} workloads ({})\n",
                m.name,
                f.mean.render(),
                f.best.0,
                f.best.1,
                f.workloads,
                paper(base, i)
            );
        }
    }
    out
}
