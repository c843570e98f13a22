// SPDX-License-Identifier: GPL-2.0

//! The sweeps' point lines: means over the reps with intervals, C against B and H paired by
//! rep, results.json's `sweeps`, the table's sections and the sweeps' plots.

#[allow(dead_code)]
mod common;

use common::{num, point};
use reflux_bench::json::Json;
use reflux_bench::log::{parse_log, Dist, Suite};
use reflux_bench::report::sweep::{Condition, Metric};
use reflux_bench::report::Report;

/// The block-size sweep: B at 10, 12, 14 MB/s in reps 1 to 3 (at every block size), C twice
/// B in each rep, H one and a half times; CPU per GiB B 4, C 2, H 8 (× 1e9).
fn bs_sweep() -> String {
    let mut log = String::new();
    for bs in [131072, 4096, 65536] {
        for rep in 1..=3u32 {
            let b = 8.0 + 2.0 * f64::from(rep);
            for (p, x, cpu) in [("B", 1.0, 4e9), ("C", 2.0, 2e9), ("H", 1.5, 8e9)] {
                let what = format!("bs {p} write {bs} 32 seq {rep}");
                log += &point(&what, b * x, 100.0 * b * x, cpu, "ok");
            }
        }
    }
    log
}

const COND: Condition = Condition {
    rw: reflux_bench::log::Rw::Write,
    dist: Dist::Seq,
    qd: 32,
    bs: 4096,
};

#[test]
fn points_group_by_paradigm_and_condition() {
    let bench = parse_log(&bs_sweep()).unwrap();
    let report = Report::new(&bench);
    assert!(report.paradigms.is_empty());
    let s = report.sweep(Suite::Bs).unwrap();
    assert!(report.sweep(Suite::Keys).is_none());
    let order: Vec<(&str, u64)> = s.groups.iter().map(|g| (g.paradigm, g.cond.bs)).collect();
    assert_eq!(
        order[..4],
        [("B", 4096), ("B", 65536), ("B", 131072), ("C", 4096)]
    );
    let b = s.group("B", COND).unwrap();
    assert_eq!(b.points.len(), 3);
    let bw = b.get(Metric::BwMbps);
    assert_eq!(bw.mean, Some(12.0));
    let ci = bw.ci.unwrap();
    assert!(
        ci.lo >= 10.0 && ci.lo < 12.0 && ci.hi > 12.0 && ci.hi <= 14.0,
        "{ci:?}"
    );
    assert_eq!(b.get(Metric::Iops).mean, Some(1200.0));
    let cpu = b.get(Metric::CpuNsPerGib).ci.unwrap();
    assert_eq!((cpu.value, cpu.lo, cpu.hi), (4e9, 4e9, 4e9));
}

#[test]
fn c_against_b_and_h_paired_by_rep() {
    let bench = parse_log(&bs_sweep()).unwrap();
    let report = Report::new(&bench);
    let s = report.sweep(Suite::Bs).unwrap();
    assert_eq!(s.metric(), Metric::BwMbps);
    assert_eq!(s.ratios.len(), 3);
    let r = s.ratios.iter().find(|r| r.cond == COND).unwrap();
    let vs: Vec<(&str, f64, f64, f64)> =
        r.vs.iter()
            .map(|(b, p)| {
                let p = p.as_ref().unwrap();
                let ci = p.ci.unwrap();
                (*b, p.ratio, ci.lo, ci.hi)
            })
            .collect();
    // Paired by rep, C's ratio is the same in every rep: no spread at all.
    let third = 2.0 / 1.5;
    assert_eq!(vs[0], ("B", 2.0, 2.0, 2.0));
    assert_eq!(vs[1].0, "H");
    assert!((vs[1].1 - third).abs() < 1e-12 && (vs[1].2 - third).abs() < 1e-12);
    let j = report.json();
    let ratio = &j
        .get("sweeps")
        .unwrap()
        .get("bs")
        .unwrap()
        .get("ratios")
        .unwrap()
        .arr()
        .unwrap()[0];
    assert_eq!(num(ratio, &["bs"]), 4096.0);
    assert_eq!(num(ratio, &["C/B", "ratio"]), 2.0);
    assert_eq!(num(ratio, &["C/B", "pairs"]), 3.0);
    assert_eq!(ratio.get("metric").unwrap().str(), Some("bw_mbps"));
    let t = report.table();
    assert!(t.contains("sweep bs (block-size sweep)"), "{t}");
    assert!(
        t.contains("C against B and H in MB/s, paired by rep:"),
        "{t}"
    );
    let l = t
        .lines()
        .find(|l| l.starts_with("write ") && l.contains(" 4096 "))
        .unwrap();
    assert!(
        l.contains("C/B 2.000 [2.000, 2.000]   C/H 1.333 [1.333, 1.333]"),
        "{l}"
    );
}

#[test]
fn the_qd_sweep_compares_host_cpu_per_gib() {
    let mut log = String::new();
    for qd in [1, 8, 32] {
        for rep in 0..2u32 {
            let wobble = 1.0 + 0.1 * f64::from(rep);
            for (p, cpu) in [("B", 6e9), ("C", 3e9), ("H", 9e9)] {
                let what = format!("qd {p} randwrite 4096 {qd} uniform {rep}");
                log += &point(&what, 50.0, 12800.0, cpu * wobble, "ok");
            }
        }
    }
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let s = report.sweep(Suite::Qd).unwrap();
    assert_eq!(s.metric(), Metric::CpuNsPerGib);
    for r in &s.ratios {
        let ratios: Vec<f64> =
            r.vs.iter()
                .map(|(_, p)| p.as_ref().unwrap().ratio)
                .collect();
        assert!((ratios[0] - 0.5).abs() < 1e-12 && (ratios[1] - 1.0 / 3.0).abs() < 1e-12);
    }
    let j = report.json();
    let qd = j.get("sweeps").unwrap().get("qd").unwrap();
    assert_eq!(qd.get("metric").unwrap().str(), Some("cpu_ns_per_gib"));
    assert_eq!(j.get("sweeps").unwrap().get("bs"), Some(&Json::Null));
    let t = report.table();
    assert!(t.contains("C against B and H in host CPU ns/GiB"), "{t}");
    let files: Vec<&str> = report.files().iter().map(|f| f.0).collect();
    assert_eq!(files, ["results.json", "table.txt", "qd_cpu.svg"]);
    let svg = &report.files()[2].1;
    common::check_svg(svg);
    assert_eq!(
        common::polylines(svg),
        ["B randwrite", "C randwrite", "H randwrite"]
    );
}

#[test]
fn each_sweep_has_its_plot() {
    let mut log = bs_sweep();
    for (i, dist) in ["zipf", "uniform", "pareto"].iter().enumerate() {
        for p in ["B", "C"] {
            log += &point(
                &format!("keys {p} randread 4096 32 {dist} 1"),
                10.0 + i as f64,
                1.0,
                1.0,
                "ok",
            );
        }
    }
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let files = report.files();
    let names: Vec<&str> = files.iter().map(|f| f.0).collect();
    assert_eq!(
        names,
        ["results.json", "table.txt", "bs_sweep.svg", "keys.svg"]
    );
    let bs = &files[2].1;
    common::check_svg(bs);
    assert_eq!(common::polylines(bs), ["B write", "C write", "H write"]);
    for tick in [">4K<", ">64K<", ">128K<", "(bytes, log2)"] {
        assert!(bs.contains(tick), "{tick}");
    }
    // An error bar per point with an interval: B, C and H at three block sizes.
    assert_eq!(bs.matches("<path ").count(), 9);
    let keys = &files[3].1;
    common::check_svg(keys);
    // Distributions in their order: uniform, zipf, pareto; a bar per paradigm in each.
    let u = keys.find(">uniform<").unwrap();
    assert!(u < keys.find(">zipf<").unwrap() && keys.find(">zipf<") < keys.find(">pareto<"));
    assert_eq!(
        keys.matches("<rect ").count(),
        1 + 6,
        "the page and the bars"
    );
}

#[test]
fn a_point_that_did_not_verify_is_a_problem() {
    let log = bs_sweep()
        + &common::block("C", 1, &[5.0; 4], 50.0)
        + &point("keys C read 4096 1 normal 1", 1.0, 1.0, 1.0, "fail");
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let line = log.lines().count();
    assert_eq!(
        report.problems(),
        [format!(
            "line {line}: point suite=keys paradigm=C rw=read bs=4096 qd=1 dist=normal rep=1: \
             verify=fail"
        )]
    );
    assert_eq!(report.targets()[3].pass, Some(false));
    assert!(report.targets()[3].shown.ends_with("points 1 fail"));
    let j = report.json();
    let keys = j.get("sweeps").unwrap().get("keys").unwrap();
    let g = &keys.get("points").unwrap().arr().unwrap()[0];
    assert_eq!(g.get("verify").unwrap().str(), Some("fail"));
    assert_eq!(j.get("ok"), Some(&Json::Bool(false)));
}

#[test]
fn points_without_a_paradigm_block_still_say_no_paradigm_ran() {
    let bench = parse_log(&bs_sweep()).unwrap();
    let report = Report::new(&bench);
    assert_eq!(report.problems().len(), 1);
    assert!(report.problems()[0].contains("no paradigm ran"));
    let t = report.table();
    assert!(t.starts_with("sweep bs"), "{t}");
}
