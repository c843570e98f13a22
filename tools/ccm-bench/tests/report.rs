//! The log parsing, the normalization to RP and the plots, on a made-up log.

#[path = "../src/ratio.rs"]
#[allow(dead_code)]
mod ratio;
#[path = "../src/record.rs"]
mod record;
#[path = "../src/report.rs"]
#[allow(dead_code)]
mod report;

const LOG: &str = r#"noise before
##cxlstack begin bench
{"workload":"stream_xform","sweep":"modes","label":"RP","mode":"RP","sf":256,"payload_slots":1024,"e2e_us":200.0,"host_busy_us":50.0,"host_idle_us":150.0,"launch_us":10.0,"credit_stalls":0,"verified":true,"why":""}
{"workload":"stream_xform","sweep":"modes","label":"AXLE-p1","mode":"AXLE","sf":256,"payload_slots":1024,"e2e_us":100.0,"host_busy_us":50.0,"host_idle_us":50.0,"launch_us":5.0,"credit_stalls":3,"verified":true,"why":""}
{"workload":"stream_xform","sweep":"sf","label":"AXLE-p1","mode":"AXLE","sf":32,"payload_slots":1024,"e2e_us":90.0,"host_busy_us":40.0,"host_idle_us":50.0,"launch_us":5.0,"credit_stalls":0,"verified":false,"why":"checksum mismatch, record 3 tag \"7\""}
ok 1 not json
##cxlstack end bench rc=0
{"sweep":"modes","label":"after the section"}
"#;

#[test]
fn parses_only_the_bench_section() {
    let runs = record::runs_in_log(LOG).unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].str("mode"), "RP");
    assert_eq!(runs[1].num("credit_stalls"), 3.0);
    assert!(runs[0].verified());
    assert!(!runs[2].verified());
    assert_eq!(runs[2].str("why"), "checksum mismatch, record 3 tag \"7\"");
}

#[test]
fn round_trips_through_json() {
    let runs = record::runs_in_log(LOG).unwrap();
    for r in &runs {
        assert_eq!(&record::parse(&r.to_json()).unwrap(), r);
    }
}

#[test]
fn refuses_malformed_lines() {
    for bad in [
        "{",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "{\"a\":\"\\q\"}",
        "[1]",
    ] {
        assert!(record::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn normalizes_to_rp() {
    let runs = record::runs_in_log(LOG).unwrap();
    let modes = report::sweep(&runs, "modes");
    assert_eq!(report::rp_baseline(&modes), Some(200.0));
    let table = report::table(&runs);
    let axle = table
        .lines()
        .find(|l| l.contains("AXLE-p1") && l.starts_with("modes"))
        .unwrap();
    assert!(axle.contains("0.500"), "{axle}");
    // No RP run in the SF sweep: no ratio, and the failure is shown.
    let sf = table.lines().find(|l| l.starts_with("sf")).unwrap();
    assert!(
        sf.contains(" - ") && sf.contains("checksum mismatch"),
        "{sf}"
    );
}

#[test]
fn merges_repetitions_into_medians() {
    let mut runs = record::runs_in_log(LOG).unwrap();
    let mut again = runs[0].clone();
    again.0.insert("e2e_us".into(), record::Value::Num(400.0));
    let mut third = runs[0].clone();
    third.0.insert("e2e_us".into(), record::Value::Num(300.0));
    third
        .0
        .insert("verified".into(), record::Value::Bool(false));
    third
        .0
        .insert("why".into(), record::Value::Str("stale record".into()));
    runs.push(again);
    runs.push(third);
    let merged = report::merge(&runs);
    assert_eq!(merged.len(), 3, "three configurations");
    let rp = &merged[0];
    assert_eq!((rp.num("e2e_us"), rp.num("reps")), (300.0, 3.0));
    assert_eq!((rp.num("e2e_min_us"), rp.num("e2e_max_us")), (200.0, 400.0));
    assert!(!rp.verified() && rp.str("why") == "stale record");
    let table = report::table(&merged);
    assert!(table.lines().nth(1).unwrap().contains(" 67%"), "{table}");
}

#[test]
fn plots_scale_to_the_largest_bar() {
    let runs = record::runs_in_log(LOG).unwrap();
    let svg = report::modes_plot(&runs, "modes").unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // RP is 1.0 (busy 0.25 + idle 0.75): the tallest bar spans the whole axis (260 px).
    assert!(
        svg.contains("height=\"65.0\"") && svg.contains("height=\"195.0\""),
        "{svg}"
    );
    assert!(report::sweep_plot(&runs, "capacity", "payload_slots", "t").is_none());
    assert!(
        report::modes_plot(&runs, "sf").is_none(),
        "no RP run to normalize to"
    );
    assert_eq!(report::sweep_names(&runs), ["modes", "sf"]);
}

/// Interleaved repetitions: the table gives each mode its ratio against RP and BS with a 95 %
/// interval, "no difference" where the interval holds 1.0, and counts them.
#[test]
fn ratios_with_intervals() {
    let mut log = String::from("##cxlstack begin bench\n");
    let e2e = |mode: &str, rep: u32| -> f64 {
        let noise = [1.0, 1.3, 0.8, 1.1, 0.9][rep as usize];
        match mode {
            "RP" => 200.0 * noise,
            "BS" => 100.0 * [1.2, 0.8, 1.1, 0.9, 1.0][rep as usize],
            _ => 100.0 * noise,
        }
    };
    for rep in 0..5 {
        for mode in ["RP", "BS", "AXLE"] {
            log.push_str(&format!(
                "{{\"rep\":{rep},\"sweep\":\"modes\",\"label\":\"{mode}\",\"mode\":\"{mode}\",\"e2e_us\":{},\"verified\":true,\"why\":\"\"}}\n",
                e2e(mode, rep)
            ));
        }
    }
    log.push_str("##cxlstack end bench rc=0\n");
    let raw = record::runs_in_log(&log).unwrap();
    let mut runs = report::merge(&raw);
    report::attach_ratios(&mut runs, &raw);
    let axle = runs.iter().find(|r| r.str("mode") == "AXLE").unwrap();
    let vs_rp = report::ratio_vs(axle, "RP").unwrap();
    // AXLE is half of RP in every repetition: paired, the interval is exactly 0.5.
    assert!((vs_rp.ratio - 0.5).abs() < 1e-12 && vs_rp.differs());
    let vs_bs = report::ratio_vs(axle, "BS").unwrap();
    assert!(!vs_bs.differs(), "{vs_bs:?}");
    let t = report::table(&runs);
    assert!(t.contains("0.500 [0.500, 0.500]"), "{t}");
    assert!(t.contains("no difference ("), "{t}");
    assert!(t.contains("ratios against RP/BS: 2 in all"), "{t}");
    assert!(
        report::ratio_vs(&runs[0], "RP").is_none(),
        "RP against itself"
    );
}
