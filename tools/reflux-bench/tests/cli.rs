// SPDX-License-Identifier: GPL-2.0

//! The program: the files it writes and its exit status.

#[allow(dead_code)]
mod common;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A scratch directory of its own for each test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("reflux-bench-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn run(dir: &Scratch, log: &str) -> Output {
    let path = dir.0.join("tests.log");
    fs::write(&path, log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_reflux-bench"))
        .arg("--log")
        .arg(&path)
        .arg("--out")
        .arg(dir.0.join("out"))
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn writes_every_file_and_succeeds() {
    let d = Scratch::new("ok");
    let o = run(&d, common::LOG);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.0.join("out");
    for f in [
        "results.json",
        "table.txt",
        "throughput.svg",
        "temperature.svg",
        "migrations.svg",
    ] {
        let body = fs::read_to_string(out.join(f)).unwrap();
        if f.ends_with(".svg") {
            common::check_svg(&body);
        }
    }
    let table = fs::read_to_string(out.join("table.txt")).unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).starts_with(&table));
    let j = common::parse_json(&fs::read_to_string(out.join("results.json")).unwrap());
    assert_eq!(
        j.get("ratios").unwrap().get("C/B").unwrap().num(),
        Some(2.0)
    );
}

#[test]
fn a_failed_verify_exits_nonzero_with_the_outputs_written() {
    let d = Scratch::new("fail");
    let log = common::LOG.replace("fio bw_mbps=245 verify=ok", "fio bw_mbps=245 verify=fail");
    let o = run(&d, &log);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("paradigm B round 1: fio verify=fail"),
        "{}",
        stderr(&o)
    );
    assert!(d.0.join("out/table.txt").exists());
}

#[test]
fn a_malformed_line_exits_nonzero_naming_it() {
    let d = Scratch::new("malformed");
    let log = common::LOG.replace("mbps=600", "mbps=lots");
    let o = run(&d, &log);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("line 11: sample: mbps=lots"), "{e}");
    assert!(!d.0.join("out").exists(), "nothing written");
}

#[test]
fn no_paradigm_exits_nonzero() {
    let d = Scratch::new("empty");
    let o = run(
        &d,
        "##cxlstack begin reflux.bench\n##cxlstack end reflux.bench rc=1\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no paradigm ran"), "{}", stderr(&o));
}

#[test]
fn a_missing_paradigm_is_fine() {
    let d = Scratch::new("missing");
    let o = run(
        &d,
        "##reflux-bench begin A\n##reflux-bench fio bw_mbps=5 verify=ok\n##reflux-bench end A\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bad_arguments_print_the_usage() {
    let o = Command::new(env!("CARGO_BIN_EXE_reflux-bench"))
        .arg("--log")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("usage: reflux-bench --log"));
}

#[test]
fn rounds_and_a_sweep_write_the_sweeps_plot() {
    let d = Scratch::new("sweep");
    let log = [
        common::LOG.to_string(),
        common::block("C", 2, &[400.0; 8], 70.0),
        common::point("bs C write 4096 1 seq 1", 10.0, 2441.0, 1e9, "ok"),
        common::point("bs B write 4096 1 seq 1", 5.0, 1220.0, 2e9, "ok"),
    ]
    .concat();
    let o = run(&d, &log);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.0.join("out");
    common::check_svg(&fs::read_to_string(out.join("bs_sweep.svg")).unwrap());
    for absent in ["keys.svg", "qd_cpu.svg"] {
        assert!(!out.join(absent).exists(), "{absent}");
    }
    let j = common::parse_json(&fs::read_to_string(out.join("results.json")).unwrap());
    assert_eq!(common::num(&j, &["paradigms", "C", "round_count"]), 2.0);
    assert_eq!(common::num(&j, &["paradigms", "C", "steady_mbps"]), 450.0);
}

#[test]
fn a_point_that_did_not_verify_exits_nonzero_naming_it() {
    let d = Scratch::new("point");
    let log = common::LOG.to_string()
        + &common::point("qd H read 4096 8 uniform 3", 1.0, 1.0, 1.0, "fail");
    let o = run(&d, &log);
    assert_eq!(o.status.code(), Some(1));
    let line = log.lines().count();
    let want = format!("line {line}: point suite=qd paradigm=H rw=read bs=4096 qd=8 dist=uniform rep=3: verify=fail");
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(d.0.join("out/qd_cpu.svg").exists());
}
