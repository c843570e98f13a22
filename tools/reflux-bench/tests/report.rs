// SPDX-License-Identifier: GPL-2.0

//! The figures, results.json, the table and the plots of the made-up log.

#[allow(dead_code)]
mod common;

use common::{close, num};
use reflux_bench::json::Json;
use reflux_bench::log::parse_log;
use reflux_bench::report::Report;
use reflux_bench::stats;

#[test]
fn percentiles_by_nearest_rank() {
    let v: Vec<f64> = (1..=200).rev().map(f64::from).collect();
    assert_eq!(stats::percentile(&v, 99.0), Some(198.0));
    assert_eq!(stats::percentile(&v, 50.0), Some(100.0));
    assert_eq!(stats::median(&v), Some(100.5));
    assert_eq!(stats::percentile(&[3.0, 1.0, 2.0], 99.0), Some(3.0));
    assert_eq!(stats::percentile(&[7.0], 0.0), Some(7.0));
    assert_eq!(stats::median(&[]), None);
    assert_eq!(stats::dist(&[]), None);
    assert_eq!(stats::mean(&[1.0, 2.0, 6.0]), Some(3.0));
}

#[test]
fn results_json_numbers() {
    let bench = parse_log(common::LOG).unwrap();
    let report = Report::new(&bench);
    let text = report.json().render();
    let j = common::parse_json(&text);
    assert_eq!(j, report.json(), "results.json reads back as written");

    assert_eq!(num(&j, &["info", "duration_s"]), 2.0);
    assert_eq!(
        j.get("info").unwrap().get("bs").unwrap().str(),
        Some("128k")
    );
    // Steady: the mean over the samples ending after half the run.
    assert!(close(num(&j, &["paradigms", "A", "steady_mbps"]), 200.0));
    assert!(close(num(&j, &["paradigms", "B", "steady_mbps"]), 250.0));
    assert!(close(num(&j, &["paradigms", "C", "steady_mbps"]), 500.0));
    assert!(close(num(&j, &["paradigms", "C", "max_temp_c"]), 78.5));
    assert!(close(
        num(&j, &["paradigms", "C", "steady_max_temp_c"]),
        74.0
    ));
    assert!(close(
        num(&j, &["paradigms", "A", "steady_max_temp_c"]),
        82.5
    ));
    assert!(close(
        num(&j, &["paradigms", "A", "throttled_fraction"]),
        0.375
    ));
    assert!(close(
        num(&j, &["paradigms", "C", "throttled_fraction"]),
        0.0
    ));
    assert!(close(num(&j, &["ratios", "C/B"]), 2.0));
    assert!(close(num(&j, &["ratios", "C/A"]), 2.5));
    assert_eq!(num(&j, &["epoch_ms"]), 10.0);

    let c = j.get("paradigms").unwrap().get("C").unwrap();
    assert_eq!(num(c, &["round_count"]), 1.0);
    let c_all = c;
    // What a round recorded is in its entry of `rounds`.
    let c = &c.get("rounds").unwrap().arr().unwrap()[0];
    assert_eq!(num(c, &["round"]), 1.0);
    let samples = c.get("samples").unwrap();
    assert_eq!(samples.get("t_ms").unwrap().arr().unwrap().len(), 8);
    assert_eq!(
        samples.get("temp_c").unwrap().arr().unwrap()[1],
        Json::Num(78.5)
    );
    assert_eq!(
        samples.get("throttled").unwrap().arr().unwrap()[0],
        Json::Num(0.0)
    );
    let lz4 = samples.get("placements").unwrap().get("lz4").unwrap();
    assert_eq!(lz4.arr().unwrap()[0].str(), Some("host"));
    assert_eq!(lz4.arr().unwrap()[1].str(), Some("device"));
    let queue = samples.get("extra").unwrap().get("queue").unwrap();
    assert_eq!(queue.arr().unwrap()[5], Json::Null);
    assert_eq!(queue.arr().unwrap()[6], Json::Num(7.0));
    assert!(close(num(c, &["placement_device_fraction", "lz4"]), 0.75));
    assert_eq!(num(c, &["fio", "bw_mbps"]), 480.5);
    assert_eq!(
        c.get("fio").unwrap().get("verify").unwrap().str(),
        Some("ok")
    );

    // Moves 3, 4, 5, 6, 100 µs; totals 4, 6, 8, 10, 105 µs.
    let migrations = c.get("migrations").unwrap().arr().unwrap();
    assert_eq!(migrations.len(), 5);
    assert_eq!(num(&migrations[0], &["move_ns"]), 5000.0);
    assert_eq!(
        migrations[2].get("reason").unwrap().str(),
        Some("hot"),
        "unknown keys kept"
    );
    let m = c.get("migration_summary").unwrap();
    assert_eq!(
        Some(m),
        c_all.get("migration_summary"),
        "one round: pooled = the round's"
    );
    assert_eq!(num(m, &["count"]), 5.0);
    assert_eq!(num(m, &["move_ns", "median"]), 5000.0);
    assert_eq!(num(m, &["move_ns", "p99"]), 100_000.0);
    assert_eq!(num(m, &["move_ns", "max"]), 100_000.0);
    assert_eq!(num(m, &["total_ns", "median"]), 8000.0);
    assert_eq!(num(m, &["total_ns", "p99"]), 105_000.0);
    assert_eq!(num(m, &["drain_ns", "median"]), 3000.0);
    assert_eq!(num(m, &["ckpt_ns", "median"]), 1000.0);
    assert_eq!(num(m, &["handover_ns", "median"]), 2000.0);
    assert_eq!(num(m, &["rebuild_ns", "median"]), 1000.0);
    // Of the 10 ms epoch: 5 µs is 0.05 %, 100 µs is 1 %.
    assert!(close(num(m, &["move_pct_of_epoch", "median"]), 0.05));
    assert!(close(num(m, &["move_pct_of_epoch", "p99"]), 1.0));
    assert!(close(num(&j, &["move_pct_of_epoch", "median"]), 0.05));
    assert!(close(num(&j, &["move_pct_of_epoch", "p99"]), 1.0));
    let a = j.get("paradigms").unwrap().get("A").unwrap();
    assert_eq!(num(a, &["migration_summary", "count"]), 0.0);
    assert_eq!(num(a, &["migration_phases", "host_to_device", "n"]), 0.0);
    assert_eq!(
        a.get("migration_summary").unwrap().get("move_ns"),
        Some(&Json::Null)
    );

    let targets = j.get("targets").unwrap().arr().unwrap();
    let pass: Vec<&Json> = targets.iter().map(|t| t.get("pass").unwrap()).collect();
    assert_eq!(pass, [&Json::Bool(true); 4]);
    assert_eq!(j.get("ok"), Some(&Json::Bool(true)));
}

#[test]
fn missing_paradigms_give_null_ratios() {
    let log = "##reflux-bench begin C\n\
               ##reflux-bench sample t_ms=250 mbps=10 temp_mc=80000 throttled=1\n\
               ##reflux-bench fio bw_mbps=9 verify=ok\n\
               ##reflux-bench end C\n";
    let bench = parse_log(log).unwrap();
    let report = Report::new(&bench);
    let j = report.json();
    assert_eq!(j.get("paradigms").unwrap().get("A"), Some(&Json::Null));
    assert_eq!(j.get("ratios").unwrap().get("C/B"), Some(&Json::Null));
    assert_eq!(j.get("ratios").unwrap().get("C/A"), Some(&Json::Null));
    assert_eq!(j.get("move_pct_of_epoch"), Some(&Json::Null));
    assert!(report.problems().is_empty());
    let t = report.targets();
    assert_eq!(t[0].pass, None, "no B to compare with");
    assert_eq!(t[1].pass, Some(false), "80 °C is over 77");
    assert_eq!(t[2].pass, None, "no migrations");
    assert_eq!(t[3].pass, Some(true));
    let table = report.table();
    assert!(table.contains("did not run: A, B, Bq, H"), "{table}");
    let cb = table.lines().find(|l| l.starts_with("C/B ")).unwrap();
    assert_eq!(cb.split_whitespace().collect::<Vec<_>>(), ["C/B", "-"]);
    // One sample: it is the second half.
    assert_eq!(report.get("C").unwrap().steady_mbps.mean, Some(10.0));
    let svg = report.migrations_svg();
    common::check_svg(&svg);
    assert!(svg.contains("paradigm C recorded no migrations"), "{svg}");
}

#[test]
fn a_failed_or_missing_verify_is_a_problem() {
    let log = "##reflux-bench begin A\n##reflux-bench fio bw_mbps=1 verify=fail errors=3\n\
               ##reflux-bench end A\n##reflux-bench begin B\n##reflux-bench end B\n";
    let bench = parse_log(log).unwrap();
    let report = Report::new(&bench);
    assert_eq!(
        report.problems(),
        [
            "paradigm A round 1: fio verify=fail",
            "paradigm B round 1: no fio line"
        ]
    );
    assert_eq!(report.targets()[3].pass, Some(false));
    assert!(report.table().contains("fail, errors=3"));
    assert_eq!(report.json().get("ok"), Some(&Json::Bool(false)));
    let empty = parse_log("").unwrap();
    assert_eq!(Report::new(&empty).problems().len(), 1);
}

#[test]
fn the_table() {
    let bench = parse_log(common::LOG).unwrap();
    let t = Report::new(&bench).table();
    // A row per round and paradigm: the round, then the paradigm.
    let row = |p: &str| {
        t.lines()
            .find(|l| l.split_whitespace().take(2).eq(["1", p]))
            .unwrap_or_else(|| panic!("no row {p} in\n{t}"))
            .to_string()
    };
    let a = row("A");
    assert!(
        a.contains("200.0") && a.contains("190.0") && a.contains("82.5") && a.contains("37.5 %"),
        "{a}"
    );
    let c = row("C");
    assert!(
        c.contains("500.0") && c.contains("480.5") && c.contains("5.00") && c.contains("100.00"),
        "{c}"
    );
    assert!(c.trim_end().ends_with("ok"), "{c}");
    let ratio = |k: &str| {
        let l = t.lines().find(|l| l.starts_with(&format!("{k} "))).unwrap();
        l.split_whitespace().nth(1).unwrap().to_string()
    };
    assert_eq!(
        (ratio("C/B"), ratio("C/A")),
        ("2.000".into(), "2.500".into())
    );
    for target in ["1.7 × B", "< 77 °C", "(50 µs)", "every paradigm"] {
        let l = t.lines().find(|l| l.contains(target)).unwrap();
        assert!(l.ends_with("pass"), "{l}");
    }
    assert!(t.contains("5.00 µs = 0.050 %"), "{t}");
    assert!(t.contains("info: duration_s=2 bs=128k qd=32"), "{t}");
    assert!(t.contains("info C round 1: mode=adaptive"), "{t}");
    // Every row lines up with the header.
    let header = t.lines().next().unwrap();
    let h = header.chars().count() - "  fio verify".len();
    for p in ["A", "B", "C"] {
        let r = row(p);
        assert_eq!(r.chars().count() - "  ok".len(), h, "{header}\n{r}");
    }
}

#[test]
fn plots_are_well_formed_with_a_line_per_paradigm() {
    let bench = parse_log(common::LOG).unwrap();
    let report = Report::new(&bench);
    for (name, svg) in [
        ("throughput", report.throughput_svg()),
        ("temperature", report.temperature_svg()),
    ] {
        common::check_svg(&svg);
        assert_eq!(common::polylines(&svg), ["A", "B", "C"], "{name}");
        for colour in ["#d62728", "#ff7f0e", "#2ca02c"] {
            assert!(svg.contains(colour), "{name}: {colour}");
        }
        // Eight samples of A: eight points.
        let a = svg.split("<polyline ").nth(1).unwrap();
        let points = a
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(points.split(' ').count(), 8, "{name}: {points}");
    }
    let t = report.temperature_svg();
    assert!(
        t.contains("throttle (OCP)") && t.contains("stroke-dasharray"),
        "{t}"
    );
    let m = report.migrations_svg();
    common::check_svg(&m);
    assert_eq!(
        common::polylines(&m),
        ["move: ckpt+handover+rebuild", "drain"]
    );
    // 3 to 100 µs and 50 µs: linear; an empirical CDF has two points per migration.
    assert!(m.contains(">microseconds<"), "{m}");
    let moved = m.split("<polyline ").nth(1).unwrap();
    let points = moved
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(points.split(' ').count(), 10, "{points}");
}

#[test]
fn migration_times_spanning_decades_plot_on_a_log_axis() {
    let log = "##reflux-bench begin C\n\
               ##reflux-bench migration from=host to=device drain_ns=9000000 ckpt_ns=100 handover_ns=300 rebuild_ns=100 total_ns=9000500\n\
               ##reflux-bench fio bw_mbps=9 verify=ok\n\
               ##reflux-bench end C\n";
    let bench = parse_log(log).unwrap();
    let m = Report::new(&bench).migrations_svg();
    common::check_svg(&m);
    assert!(m.contains("microseconds (logarithmic)"), "{m}");
    assert!(m.contains(">0.1<") && m.contains(">10000<"), "{m}");
}

#[test]
fn the_host_only_reference() {
    let log = "##reflux-bench begin B\n\
               ##reflux-bench sample t_ms=250 mbps=20 temp_mc=50000 throttled=0\n\
               ##reflux-bench fio bw_mbps=20 verify=ok\n\
               ##reflux-bench end B\n\
               ##reflux-bench begin C\n\
               ##reflux-bench sample t_ms=250 mbps=30 temp_mc=50000 throttled=0\n\
               ##reflux-bench fio bw_mbps=30 verify=ok\n\
               ##reflux-bench end C\n\
               ##reflux-bench begin H\n\
               ##reflux-bench sample t_ms=250 mbps=25 temp_mc=35000 throttled=0\n\
               ##reflux-bench fio bw_mbps=25 verify=ok\n\
               ##reflux-bench end H\n";
    let bench = parse_log(log).unwrap();
    let report = Report::new(&bench);
    let j = report.json();
    assert!(close(num(&j, &["ratios", "C/H"]), 1.2));
    assert!(close(num(&j, &["ratios", "B/H"]), 0.8));
    assert!(close(num(&j, &["paradigms", "H", "steady_mbps"]), 25.0));
    let t = report.table();
    for (k, r) in [("C/H", "1.200"), ("B/H", "0.800")] {
        let l = t.lines().find(|l| l.starts_with(&format!("{k} "))).unwrap();
        assert_eq!(l.split_whitespace().nth(1), Some(r), "{l}");
    }
    assert!(
        t.lines()
            .any(|l| l.split_whitespace().take(2).eq(["1", "H"])),
        "{t}"
    );
    assert!(parse_log("##reflux-bench begin D\n").is_err());
}
