// SPDX-License-Identifier: GPL-2.0

//! Parsing the benchmark's lines out of a log, and refusing malformed ones by line number.

#[allow(dead_code)]
mod common;

use reflux_bench::log::{parse_log, Place, Value};

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
