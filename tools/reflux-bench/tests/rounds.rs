// SPDX-License-Identifier: GPL-2.0

//! Paradigms over several rounds: the collapse from the best second, the ratios paired by
//! round with their intervals, peak temperatures, the migrations' phases and the dilation.

#[allow(dead_code)]
mod common;

use common::{at, block, close, num};
use reflux_bench::json::Json;
use reflux_bench::log::parse_log;
use reflux_bench::report::collapse::Collapse;
use reflux_bench::report::migrations::Phase;
use reflux_bench::report::{Paired, Report};

/// C against B: both ran in some round.
fn c_over_b<'r>(report: &'r Report<'_>) -> &'r Paired {
    let c = report.comparison("C", "B").expect("C/B is always compared");
    c.paired.as_ref().expect("a round with both")
}

/// Eight samples of the first half (2 s), then eight of the second.
fn trajectory(first: [f64; 8], settled: f64) -> Vec<f64> {
    first.into_iter().chain([settled; 8]).collect()
}

#[test]
fn collapse_is_one_minus_settled_over_the_best_second() {
    // The best second of the first half is its four samples at 10 MB/s; 5.8 settled: 42 %.
    let mbps = trajectory([6.0, 8.0, 10.0, 10.0, 10.0, 10.0, 7.0, 6.0], 5.8);
    let bench = parse_log(&block("B", 1, &mbps, 70.0)).unwrap();
    let c = Collapse::of(&bench.get("B").unwrap().samples).unwrap();
    assert!(
        close(c.initial_mbps, 10.0) && close(c.settled_mbps, 5.8),
        "{c:?}"
    );
    assert!(close(c.fraction().unwrap(), 0.42), "{c:?}");
    let report = Report::new(&bench);
    let b = report.get("B").unwrap();
    assert_eq!(b.collapse.each.len(), 1);
    assert!(close(b.collapse.mean.unwrap(), 0.42));
    // The paper's B: 2 184 MB/s at first, 1 260 settled.
    let paper = trajectory([2184.0; 8], 1260.0);
    let bench = parse_log(&block("B", 1, &paper, 75.0)).unwrap();
    let c = Collapse::of(&bench.get("B").unwrap().samples).unwrap();
    assert!((c.fraction().unwrap() - 0.423).abs() < 1e-3, "{c:?}");
    // A first half shorter than a second: the whole of it.
    let bench = parse_log(&block("C", 1, &[4.0, 8.0, 5.0, 5.0], 48.0)).unwrap();
    let c = Collapse::of(&bench.get("C").unwrap().samples).unwrap();
    assert_eq!((c.initial_mbps, c.settled_mbps), (6.0, 5.0));
    // One sample: no first half to compare with.
    let bench = parse_log(&block("C", 1, &[4.0], 48.0)).unwrap();
    assert_eq!(Collapse::of(&bench.get("C").unwrap().samples), None);
}

#[test]
fn the_collapse_over_rounds_has_an_interval() {
    let log: String = [0.40, 0.42, 0.44]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            block(
                "B",
                i as u32 + 1,
                &trajectory([10.0; 8], 10.0 * (1.0 - f)),
                60.0,
            )
        })
        .collect();
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let c = &report.get("B").unwrap().collapse;
    assert!(close(c.mean.unwrap(), 0.42));
    let ci = c.ci.unwrap();
    assert!(ci.lo >= 0.40 - 1e-9 && ci.lo < 0.42 && ci.hi > 0.42 && ci.hi <= 0.44 + 1e-9);
    let j = report.json();
    assert!(close(
        num(&j, &["paradigms", "B", "collapse", "mean"]),
        0.42
    ));
    let t = report.table();
    let row = t.lines().find(|l| l.starts_with("B ")).unwrap();
    assert!(row.contains("42.0 % ["), "{row}");
}

/// Three identical rounds of B (10 MB/s) and C (20 MB/s).
fn identical_rounds() -> String {
    (1..=3)
        .map(|r| block("B", r, &[10.0; 4], 60.0) + &block("C", r, &[20.0; 4], 50.0))
        .collect()
}

#[test]
fn identical_rounds_give_a_zero_width_interval_at_the_exact_ratio() {
    let bench = parse_log(&identical_rounds()).unwrap();
    let report = Report::new(&bench);
    let p = c_over_b(&report);
    let ci = p.ci.unwrap();
    assert_eq!((p.ratio, ci.lo, ci.hi, ci.pairs), (2.0, 2.0, 2.0, 3));
    assert!(ci.differs());
    assert_eq!(p.each, [(1, 2.0), (2, 2.0), (3, 2.0)]);
    assert_eq!(p.render(), "2.000 [2.000, 2.000]");
    let c = report.get("C").unwrap();
    let s = c.steady_mbps.ci.unwrap();
    assert_eq!((c.steady_mbps.mean, s.lo, s.hi), (Some(20.0), 20.0, 20.0));
    let j = report.json();
    assert_eq!(num(&j, &["ratios", "C/B"]), 2.0);
    assert_eq!(num(&j, &["ratio_intervals", "C/B", "lo"]), 2.0);
    assert_eq!(num(&j, &["ratio_intervals", "C/B", "pairs"]), 3.0);
    let differs = at(&j, &["ratio_intervals", "C/B", "differs"]);
    assert_eq!(differs, &Json::Bool(true));
    let t = report.table();
    assert!(
        t.contains("2.000 [2.000, 2.000]") && t.contains("per round: 2.000 2.000 2.000"),
        "{t}"
    );
    assert_eq!(num(&j, &["paradigms", "C", "round_count"]), 3.0);
}

#[test]
fn an_interval_holding_one_is_no_difference() {
    // The same rates, shuffled between the paradigms' rounds.
    let c = [10.0, 14.0, 8.0, 12.0, 9.5, 13.0];
    let b = [13.0, 9.5, 12.0, 8.0, 14.0, 10.0];
    let log: String = (0..6)
        .map(|i| {
            block("B", i + 1, &[b[i as usize]; 4], 60.0)
                + &block("C", i + 1, &[c[i as usize]; 4], 50.0)
        })
        .collect();
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let p = c_over_b(&report);
    assert!(close(p.ratio, 1.0));
    assert!(!p.ci.unwrap().differs());
    let t = report.table();
    let l = t.lines().find(|l| l.starts_with("C/B ")).unwrap();
    assert!(l.contains("no difference (1.000 ["), "{l}");
    assert!(
        l.contains("per round: 0.769 1.474 0.667 1.500 0.679 1.300"),
        "{l}"
    );
    let j = report.json();
    let differs = at(&j, &["ratio_intervals", "C/B", "differs"]);
    assert_eq!(differs, &Json::Bool(false));
}

#[test]
fn rounds_pair_by_number_and_only_where_both_ran() {
    let log: String = (1..=3)
        .map(|r| block("B", r, &[10.0; 4], 60.0))
        .chain((2..=4).map(|r| block("C", r, &[10.0 * f64::from(r); 4], 50.0)))
        .collect();
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let p = c_over_b(&report);
    assert_eq!(p.each, [(2, 2.0), (3, 3.0)]);
    assert!(close(p.ratio, 2.5));
    assert_eq!(p.ci.unwrap().pairs, 2);
    // The table has a row per round and paradigm, round by round.
    let rows: Vec<(String, String)> = report
        .table()
        .lines()
        .skip(1)
        .take(6)
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_string(), w[1].to_string())
        })
        .collect();
    let want = [
        ("1", "B"),
        ("2", "B"),
        ("2", "C"),
        ("3", "B"),
        ("3", "C"),
        ("4", "C"),
    ];
    assert_eq!(rows, want.map(|(r, p)| (r.to_string(), p.to_string())));
}

#[test]
fn peak_temperature_over_rounds() {
    let log: String = [48.0, 75.0, 50.0]
        .iter()
        .enumerate()
        .map(|(i, t)| block("C", i as u32 + 1, &[1.0; 4], *t))
        .collect();
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    let p = report.get("C").unwrap().peak_temp_c.as_ref().unwrap();
    assert_eq!((p.median, p.max), (50.0, 75.0));
    assert_eq!(p.each, [(1, 48.0), (2, 75.0), (3, 50.0)]);
    let j = report.json();
    assert_eq!(num(&j, &["paradigms", "C", "peak_temp_c", "median"]), 50.0);
    assert_eq!(num(&j, &["paradigms", "C", "max_temp_c"]), 75.0);
}

/// A migration line: `dir` is `host device` or `device host`; times in µs.
fn migration(dir: &str, drain: u32, ckpt: u32, handover: u32, rebuild: u32) -> String {
    let (from, to) = dir.split_once(' ').unwrap();
    let ns = |us: u32| us * 1000;
    format!(
        "##reflux-bench migration from={from} to={to} drain_ns={} ckpt_ns={} handover_ns={} \
         rebuild_ns={} total_ns={}\n",
        ns(drain),
        ns(ckpt),
        ns(handover),
        ns(rebuild),
        ns(drain + ckpt + handover + rebuild)
    )
}

/// C in two rounds: host → device drains 1, 2, 3 µs, moves 30, 60, 90; device → host drains
/// 10 and 30 ms, moves 300 and 500 µs.
fn migrating(info: &str) -> String {
    let round = |r: u32, lines: &[String]| {
        let b = block("C", r, &[5.0; 4], 50.0);
        let (head, tail) = b.split_at(b.find("##reflux-bench fio").unwrap());
        format!("{head}{}{tail}", lines.concat())
    };
    format!(
        "{info}{}{}",
        round(
            1,
            &[
                migration("host device", 1, 10, 10, 10),
                migration("device host", 10_000, 100, 100, 100),
            ]
        ),
        round(
            2,
            &[
                migration("host device", 3, 30, 30, 30),
                migration("host device", 2, 20, 20, 20),
                migration("device host", 30_000, 100, 300, 100),
            ]
        )
    )
}

#[test]
fn migration_phases_per_direction_pooled_over_rounds() {
    let bench = parse_log(&migrating("")).unwrap();
    let report = Report::new(&bench);
    let c = report.get("C").unwrap();
    assert_eq!(c.migrations.len(), 5);
    let [up, down] = &c.phases.directions;
    assert_eq!(
        (up.label(), up.n, down.label(), down.n),
        ("host → device".into(), 3, "device → host".into(), 2)
    );
    let at = |d: &reflux_bench::report::migrations::Direction, p: Phase| {
        let s = d.get(p).unwrap();
        (s.median, s.p99)
    };
    assert_eq!(at(up, Phase::Drain), (2000.0, 3000.0));
    assert_eq!(at(up, Phase::Move), (60_000.0, 90_000.0));
    assert_eq!(at(up, Phase::Ckpt), (20_000.0, 30_000.0));
    assert_eq!(at(down, Phase::Drain), (20_000_000.0, 30_000_000.0));
    assert_eq!(at(down, Phase::Handover), (200_000.0, 300_000.0));
    assert_eq!(at(down, Phase::Move), (400_000.0, 500_000.0));
    let ci = up.get(Phase::Move).unwrap().median_ci.unwrap();
    assert!(ci.lo >= 30_000.0 && ci.lo <= 60_000.0 && ci.hi >= 60_000.0 && ci.hi <= 90_000.0);
    assert_eq!(
        up.get(Phase::Move).unwrap().native_median,
        None,
        "no dilation given"
    );
    let j = report.json();
    let phases = ["paradigms", "C", "migration_phases"];
    assert_eq!(
        num(&j, &[&phases[..], &["host_to_device", "n"]].concat()),
        3.0
    );
    assert_eq!(
        num(
            &j,
            &[&phases[..], &["device_to_host", "rebuild", "median_ns"]].concat()
        ),
        100_000.0
    );
    assert_eq!(j.get("dilation"), Some(&Json::Null));
    let t = report.table();
    assert!(
        t.lines()
            .any(|l| l.contains("device → host") && l.contains("move")),
        "{t}"
    );
}

#[test]
fn the_dilation_divides_the_medians() {
    let bench = parse_log(&migrating(
        "##reflux-bench info calib_host_ns=100 calib_guest_ns=1000\n",
    ))
    .unwrap();
    let report = Report::new(&bench);
    let d = report.dilation.unwrap();
    assert_eq!(d.factor(), 10.0);
    let [up, down] = &report.get("C").unwrap().phases.directions;
    assert_eq!(up.get(Phase::Move).unwrap().native_median, Some(6000.0));
    assert_eq!(
        down.get(Phase::Drain).unwrap().native_median,
        Some(2_000_000.0)
    );
    let j = report.json();
    assert_eq!(num(&j, &["dilation", "factor"]), 10.0);
    assert_eq!(
        num(
            &j,
            &[
                "paradigms",
                "C",
                "migration_phases",
                "host_to_device",
                "move",
                "native_median_ns"
            ]
        ),
        6000.0
    );
    let t = report.table();
    assert!(t.contains("native = median / D, D = 10.00"), "{t}");
    let row = t
        .lines()
        .find(|l| l.contains("host → device") && l.contains("move"))
        .unwrap();
    assert!(row.trim_end().ends_with("6.000"), "{row}");
    assert!(report.warnings().is_empty());
    // Only one of the two, or not a time: no dilation, and a word about it.
    let one = parse_log("##reflux-bench info calib_host_ns=100\n").unwrap();
    assert_eq!(Report::new(&one).dilation, None);
    let bad = parse_log("##reflux-bench info calib_host_ns=0 calib_guest_ns=5\n").unwrap();
    let r = Report::new(&bad);
    assert_eq!(r.dilation, None);
    assert!(
        r.warnings()[0].contains("calib_host_ns"),
        "{:?}",
        r.warnings()
    );
}

#[test]
fn variants_of_c_are_compared_with_c() {
    let log: String = (1..=2)
        .map(|r| {
            block("C", r, &[10.0; 4], 50.0)
                + &block("C+flap", r, &[12.0; 4], 50.0)
                + &block("C+lookahead", r, &[9.0; 4], 50.0)
        })
        .collect();
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    assert!(close(report.ratio("C+flap", "C").unwrap(), 1.2));
    assert!(close(report.ratio("C+lookahead", "C").unwrap(), 0.9));
    let j = report.json();
    let keys: Vec<&str> = match j.get("paradigms").unwrap() {
        Json::Obj(f) => f.iter().map(|f| f.0.as_str()).collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(keys, ["A", "B", "Bq", "C", "C+flap", "C+lookahead", "H"]);
    assert!(close(num(&j, &["ratios", "C+flap/C"]), 1.2));
    let t = report.table();
    let order: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("C+") && l.contains("/C "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(order, ["C+flap/C", "C+lookahead/C"]);
    assert_ne!(report.colour("C+flap"), report.colour("C+lookahead"));
}

#[test]
fn plots_show_the_mean_of_the_rounds_and_their_spread() {
    let log = block("A", 1, &[10.0; 4], 60.0)
        + &block("A", 2, &[20.0; 4], 70.0)
        + &block("C", 1, &[5.0; 4], 50.0);
    let bench = parse_log(&log).unwrap();
    let report = Report::new(&bench);
    for svg in [report.throughput_svg(), report.temperature_svg()] {
        common::check_svg(&svg);
        assert_eq!(common::polylines(&svg), ["A (mean of 2 rounds)", "C"]);
        // A band for A's two rounds; none for C's one.
        assert_eq!(svg.matches("<polygon ").count(), 1, "{svg}");
    }
}
