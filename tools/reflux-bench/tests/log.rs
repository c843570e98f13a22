// SPDX-License-Identifier: GPL-2.0

//! Parsing the benchmark's lines out of a log, and refusing malformed ones by line number.

#[allow(dead_code)]
mod common;

use reflux_bench::log::{parse_log, Dist, Place, Rw, Suite, Value};

#[test]
fn parses_the_blocks_and_ignores_other_lines() {
    let b = parse_log(common::LOG).unwrap();
    let names: Vec<&str> = b.paradigms.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["C", "A", "B"], "log order");
    assert_eq!(
        b.info,
        [
            ("duration_s".to_string(), Value::Num(2.0)),
            ("bs".into(), Value::Str("128k".into())),
            ("qd".into(), Value::Num(32.0)),
            ("pipeline".into(), Value::Str("compress+crc32c".into())),
            ("tau_ms".into(), Value::Num(500.0)),
        ]
    );
    let c = b.get("C").unwrap();
    assert_eq!(c.line, 4);
    assert_eq!(
        c.info,
        [("mode".to_string(), Value::Str("adaptive".into()))]
    );
    assert_eq!(c.samples.len(), 8);
    let s = &c.samples[1];
    assert_eq!((s.t_ms, s.mbps, s.temp_mc), (500.0, 300.0, 78500.0));
    assert!(!s.throttled);
    assert_eq!(s.inflight_permille, Some(1000.0));
    assert_eq!(
        s.placements,
        [
            ("lz4".to_string(), Place::Device),
            ("crc32c".into(), Place::Host)
        ]
    );
    assert_eq!(c.samples[6].extra, [("queue".to_string(), Value::Num(7.0))]);
    assert_eq!(c.migrations.len(), 5);
    let m = &c.migrations[2];
    assert_eq!((m.from, m.to), (Place::Device, Place::Host));
    assert_eq!(
        (m.move_ns(), m.total_ns, m.t_ms),
        (100_000.0, 105_000.0, Some(1900.0))
    );
    assert_eq!(m.actor, Some(Value::Num(2.0)));
    assert_eq!(m.extra, [("reason".to_string(), Value::Str("hot".into()))]);
    let f = c.fio.as_ref().unwrap();
    assert_eq!((f.bw_mbps, f.verify_ok, f.errors), (480.5, true, Some(0.0)));
    // A comes as TAP comments, B's last sample ends in a carriage return.
    let a = b.get("A").unwrap();
    assert_eq!(a.samples.len(), 8);
    assert!(a.samples[3].throttled);
    assert_eq!(
        b.get("B").unwrap().samples[3].placements[0].1,
        Place::Device
    );
}

#[test]
fn a_missing_paradigm_is_not_an_error() {
    let b = parse_log(
        "##reflux-bench begin B\n##reflux-bench fio bw_mbps=1 verify=ok\n##reflux-bench end B\n",
    )
    .unwrap();
    assert_eq!(b.paradigms.len(), 1);
    assert!(b.get("A").is_none() && b.get("C").is_none());
    assert!(b.get("B").unwrap().samples.is_empty());
    assert_eq!(parse_log("no benchmark here\n").unwrap().paradigms.len(), 0);
}

#[test]
fn refuses_malformed_lines_by_number() {
    let head = "noise\n##reflux-bench begin A\n";
    let cases: &[(&str, usize, &str)] = &[
        ("##reflux-bench sample t_ms=1 mbps=2 temp_mc=3 throttled=2", 3, "throttled=2"),
        ("##reflux-bench sample t_ms=1 mbps=fast temp_mc=3 throttled=0", 3, "mbps=fast"),
        ("##reflux-bench sample t_ms=1 mbps=-4 temp_mc=3 throttled=0", 3, "mbps=-4"),
        ("##reflux-bench sample t_ms=1 temp_mc=3 throttled=0", 3, "mbps= missing"),
        ("##reflux-bench sample t_ms=1 mbps=2 temp_mc=3 throttled=0 lz4", 3, "\"lz4\""),
        ("##reflux-bench sample t_ms=1 mbps=2 temp_mc=3 throttled=0 =device", 3, "\"=device\""),
        ("##reflux-bench sample t_ms=1 mbps= temp_mc=3 throttled=0", 3, "mbps= is not a number"),
        ("##reflux-bench sample t_ms=1 t_ms=2 mbps=2 temp_mc=3 throttled=0", 3, "t_ms given twice"),
        ("##reflux-bench migration from=host to=cloud drain_ns=1 ckpt_ns=1 handover_ns=1 rebuild_ns=1 total_ns=4", 3, "to=cloud"),
        ("##reflux-bench migration from=host to=device drain_ns=1 ckpt_ns=1 handover_ns=1 total_ns=4", 3, "rebuild_ns= missing"),
        ("##reflux-bench fio bw_mbps=1 verify=maybe", 3, "verify=maybe"),
        ("##reflux-bench fio verify=ok", 3, "bw_mbps= missing"),
        ("##reflux-bench fio bw_mbps=1 verify=ok\n##reflux-bench fio bw_mbps=1 verify=ok", 4, "second fio"),
        ("##reflux-bench samples t_ms=1", 3, "unknown directive \"samples\""),
        ("##reflux-bench", 3, "directive missing"),
        ("##reflux-bench begin B", 3, "inside paradigm A (begun on line 2)"),
        ("##reflux-bench end B", 3, "paradigm A is running"),
        ("##reflux-bench end A\n##reflux-bench end A", 4, "without begin"),
        ("##reflux-bench end A\n##reflux-bench begin A", 4, "ran already (begun on line 2)"),
        ("##reflux-bench end A\n##reflux-bench begin D", 4, "begin D"),
        ("##reflux-bench end A\n##reflux-bench sample t_ms=1 mbps=2 temp_mc=3 throttled=0", 4, "outside a begin/end block"),
        (
            "##reflux-bench sample t_ms=500 mbps=2 temp_mc=3 throttled=0\n\
             ##reflux-bench sample t_ms=250 mbps=2 temp_mc=3 throttled=0",
            4,
            "goes back",
        ),
        ("##reflux-bench fio bw_mbps=1 verify=ok", 2, "begin A has no end"),
    ];
    for (body, line, what) in cases {
        let log = format!("{head}{body}\n");
        let e = parse_log(&log).expect_err(body);
        assert_eq!(e.line, *line, "{body}: {e}");
        assert!(e.msg.contains(what), "{body}: {e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
    }
}

#[test]
fn keeps_unknown_keys() {
    let b = parse_log(
        "##reflux-bench begin C run=3\n\
         ##reflux-bench sample t_ms=0 mbps=2 temp_mc=-500 throttled=0 gpu=device note=x\n\
         ##reflux-bench info params= flags=a=1,b=2\n\
         ##reflux-bench migration from=host to=device drain_ns=1 ckpt_ns=1 handover_ns=1 rebuild_ns=1 total_ns=4 t_ms=-120\n\
         ##reflux-bench fio bw_mbps=1 verify=fail errors=2 runtime_s=20\n\
         ##reflux-bench end C rc=1\n",
    )
    .unwrap();
    let c = b.get("C").unwrap();
    assert_eq!(
        c.info,
        [
            ("run".to_string(), Value::Num(3.0)),
            ("params".into(), Value::Str(String::new())),
            ("flags".into(), Value::Str("a=1,b=2".into())),
        ]
    );
    assert_eq!(c.migrations[0].t_ms, Some(-120.0));
    let s = &c.samples[0];
    assert_eq!(s.temp_mc, -500.0);
    assert_eq!(s.placements, [("gpu".to_string(), Place::Device)]);
    assert_eq!(s.extra, [("note".to_string(), Value::Str("x".into()))]);
    let f = c.fio.as_ref().unwrap();
    assert!(!f.verify_ok);
    assert_eq!(f.extra, [("runtime_s".to_string(), Value::Num(20.0))]);
}

#[test]
fn rounds_number_the_blocks() {
    let log = [
        common::block("A", 1, &[1.0], 50.0),
        common::block("B", 1, &[1.0], 50.0),
        common::block("A", 2, &[2.0], 50.0),
        // No round= is round 1: an old log's blocks.
        "##reflux-bench begin C\n##reflux-bench fio bw_mbps=1 verify=ok\n##reflux-bench end C\n"
            .into(),
        common::block("A", 10, &[3.0], 50.0),
    ]
    .concat();
    let b = parse_log(&log).unwrap();
    let rounds: Vec<u32> = b.rounds("A").iter().map(|p| p.round).collect();
    assert_eq!(rounds, [1, 2, 10]);
    assert_eq!(b.get("C").unwrap().round, 1);
    assert_eq!(
        b.get("A").unwrap().samples[0].mbps,
        1.0,
        "get is the first round"
    );
    assert!(b.get("A").unwrap().info.is_empty(), "round= is not info");
    assert_eq!(b.names(), ["A", "B", "C"]);
}

#[test]
fn a_paradigm_twice_in_one_round_is_an_error() {
    let a1 = common::block("A", 1, &[1.0], 50.0);
    let cases = [
        (
            format!("{a1}{a1}"),
            5,
            "paradigm A round 1 ran already (begun on line 1)",
        ),
        (
            format!("{a1}##reflux-bench begin A\n"),
            5,
            "paradigm A round 1 ran already",
        ),
        (
            "##reflux-bench begin A round=0\n".into(),
            1,
            "round=0 is not a whole number ≥ 1",
        ),
        (
            "##reflux-bench begin A round=1.5\n".into(),
            1,
            "round=1.5 is not a whole number",
        ),
        ("##reflux-bench begin A round=two\n".into(), 1, "round=two"),
        (
            "##reflux-bench begin A round=1 round=2\n".into(),
            1,
            "round given twice",
        ),
    ];
    for (log, line, what) in cases {
        let e = parse_log(&log).expect_err(&log);
        assert_eq!(e.line, line, "{log}: {e}");
        assert!(e.msg.contains(what), "{log}: {e}");
    }
}

#[test]
fn variants_of_c_are_paradigms_reported_after_c() {
    let log = [
        common::block("H", 1, &[1.0], 50.0),
        common::block("C+share", 1, &[1.0], 50.0),
        common::block("A", 1, &[1.0], 50.0),
        common::block("C+lookahead", 1, &[1.0], 50.0),
        common::block("C", 1, &[1.0], 50.0),
        common::block("C+u_only", 1, &[1.0], 50.0),
        common::block("C+share", 2, &[1.0], 50.0),
    ]
    .concat();
    let b = parse_log(&log).unwrap();
    assert_eq!(
        b.names(),
        ["A", "C", "C+share", "C+lookahead", "C+u_only", "H"]
    );
    for bad in ["D", "C+", "C+Flap", "C+flap2", "B+flap", "C+flap-x", "Cx"] {
        let e = parse_log(&format!("##reflux-bench begin {bad}\n")).expect_err(bad);
        assert!(e.msg.contains(&format!("begin {bad}:")), "{bad}: {e}");
    }
}

/// A point line with every key, to break one key at a time.
const POINT: &str =
    "##reflux-bench point suite=bs paradigm=C rw=randwrite bs=4096 qd=32 dist=zipf \
                     rep=2 bw_mbps=12.5 iops=3051 cpu_ns_per_gib=4.5e9 verify=ok";

#[test]
fn point_lines_parse() {
    let b = parse_log(&format!("noise\n{POINT} note=x\n")).unwrap();
    assert!(b.paradigms.is_empty());
    let p = &b.points[0];
    assert_eq!(p.line, 2);
    assert_eq!(
        (p.suite, p.paradigm.as_str(), p.rw),
        (Suite::Bs, "C", Rw::RandWrite)
    );
    assert_eq!((p.bs, p.qd, p.dist, p.rep), (4096, 32, Dist::Zipf, 2));
    assert_eq!((p.bw_mbps, p.iops, p.cpu_ns_per_gib), (12.5, 3051.0, 4.5e9));
    assert!(p.verify_ok);
    assert_eq!(p.extra, [("note".to_string(), Value::Str("x".into()))]);
    let fail = POINT.replace("verify=ok", "verify=fail");
    assert!(!parse_log(&fail).unwrap().points[0].verify_ok);
    let variant = POINT.replace("paradigm=C", "paradigm=C+flap");
    assert_eq!(parse_log(&variant).unwrap().points[0].paradigm, "C+flap");
    // P, the store alone, is a point's paradigm only.
    let store = POINT.replace("paradigm=C", "paradigm=P");
    assert_eq!(parse_log(&store).unwrap().points[0].paradigm, "P");
    let block = "##reflux-bench begin P\n##reflux-bench end P\n";
    assert!(parse_log(block).is_err());
}

#[test]
fn point_lines_need_every_key_well_formed() {
    let keys = [
        "suite",
        "paradigm",
        "rw",
        "bs",
        "qd",
        "dist",
        "rep",
        "bw_mbps",
        "iops",
        "cpu_ns_per_gib",
        "verify",
    ];
    for k in keys {
        let line: Vec<&str> = POINT
            .split(' ')
            .filter(|t| !t.starts_with(&format!("{k}=")))
            .collect();
        let e = parse_log(&format!("x\n{}\n", line.join(" "))).expect_err(k);
        assert_eq!(e.line, 2, "{k}: {e}");
        assert!(e.msg.contains(&format!("{k}= missing")), "{k}: {e}");
    }
    let bad = [
        (
            "suite=bs",
            "suite=size",
            "suite=size is not one of bs, keys, qd",
        ),
        (
            "rw=randwrite",
            "rw=rw",
            "rw=rw is not one of read, write, randread, randwrite",
        ),
        (
            "dist=zipf",
            "dist=zipfian",
            "dist=zipfian is not one of seq, uniform, zipf",
        ),
        ("paradigm=C", "paradigm=D", "paradigm= D"),
        ("bs=4096", "bs=4k", "bs=4k is not a whole number"),
        ("qd=32", "qd=-1", "qd=-1"),
        ("rep=2", "rep=1.5", "rep=1.5"),
        (
            "bw_mbps=12.5",
            "bw_mbps=-1",
            "bw_mbps=-1 is not a number ≥ 0",
        ),
        ("iops=3051", "iops=NaN", "iops=NaN"),
        (
            "verify=ok",
            "verify=yes",
            "verify=yes is neither ok nor fail",
        ),
    ];
    for (good, worse, what) in bad {
        let e = parse_log(&POINT.replace(good, worse)).expect_err(worse);
        assert!(
            e.msg.starts_with("point: ") && e.msg.contains(what),
            "{worse}: {e}"
        );
    }
    let inside = format!("##reflux-bench begin A\n{POINT}\n##reflux-bench end A\n");
    let e = parse_log(&inside).unwrap_err();
    assert_eq!(
        (e.line, e.msg.as_str()),
        (2, "point inside paradigm A (begun on line 1)")
    );
}
