//! The analytical model of the `validate` sweep (src/predict.rs): predictions worked by hand,
//! the regimes of AXLE, and the validation of measured runs against the model, directly and
//! through the command line.

#[allow(dead_code)] // not every test uses every helper
#[path = "../../cli-test-support/cli_support.rs"]
mod cli_support;
#[path = "../src/predict.rs"]
#[allow(dead_code)]
mod predict;
#[path = "../src/record.rs"]
#[allow(dead_code)]
mod record;

use std::time::Duration;

use cli_support::{run_bounded, Cwd, TempDir};
use predict::{validate, Synthetic, MODES};
use record::{Run, Value};

/// The configuration of the examples: one unit of 4 µthreads at 12 MHz (P = 4), Table III's
/// link (m 70, io 350, prep 500, ps 16, I 50 000, r 1 000), chunks of c = 256 B, sf 256.
struct Cfg {
    launches: u64,
    records: u64,
    sf: u64,
    host_ns: u64,
    poll_ns: u64,
    dilation_milli: u64,
}

/// ccm_bench's validate sweep: 6 launches of 16 records, h 50 µs, AXLE polling every 10 µs.
const SWEEP: Cfg = Cfg {
    launches: 6,
    records: 16,
    sf: 256,
    host_ns: 50_000,
    poll_ns: 10_000,
    dilation_milli: 1_000,
};

/// One JSON line of the validate sweep, as ccm_bench prints it (`poll_ns` 0 outside AXLE),
/// with the host's measured work exactly `host_ns` per record, dilated.
fn line(cfg: &Cfg, mode: &str, rep: u32, e2e_us: f64) -> String {
    let records = cfg.launches * cfg.records;
    let busy_us = (records * cfg.host_ns * cfg.dilation_milli) as f64 / 1e6;
    line_with_host(cfg, mode, rep, e2e_us, records, busy_us)
}

fn line_with_host(
    cfg: &Cfg,
    mode: &str,
    rep: u32,
    e2e_us: f64,
    records: u64,
    busy_us: f64,
) -> String {
    let poll = if mode == "AXLE" { cfg.poll_ns } else { 0 };
    format!(
        "{{\"rep\":{rep},\"workload\":\"synthetic\",\"sweep\":\"validate\",\"label\":\"{mode}\",\
         \"mode\":\"{mode}\",\"sf\":{},\"order\":\"out\",\"metadata_slots\":1024,\
         \"payload_slots\":1024,\"poll_ns\":{poll},\"launches\":{},\"size\":{},\"chunk\":256,\
         \"depth\":1,\"host_ns\":{},\"e2e_us\":{e2e_us},\"host_busy_us\":{busy_us},\"host_idle_us\":1,\
         \"launch_us\":1,\"ccm_idle_us\":1,\"credit_wait_us\":0,\"host_stall_us\":0,\
         \"records\":{records},\"bytes\":24576,\"credit_stalls\":0,\"interrupts\":0,\"polls\":0,\
         \"host_cpus\":\"0\",\"device_cpus\":\"1\",\"dilation_milli\":{},\
         \"model_deficit_us\":0,\"model_late\":0,\"ccm_units\":1,\"ccm_uthreads_per_unit\":4,\
         \"ccm_clock_mhz\":12,\"ccm_mem_mb_per_s\":614400,\"compute_model\":1,\
         \"cxl_mem_rtt_ns\":70,\"cxl_io_rtt_ns\":350,\"dma_prep_ns\":500,\"dma_ps_per_byte\":16,\
         \"irq_ns\":50000,\"remote_poll_interval_ns\":1000,\"verified\":true,\
         \"deadlock\":false,\"why\":\"\"}}",
        cfg.sf,
        cfg.launches,
        cfg.records * 256,
        cfg.host_ns,
        cfg.dilation_milli
    )
}

fn run(cfg: &Cfg, mode: &str, rep: u32, e2e_us: f64) -> Run {
    record::parse(&line(cfg, mode, rep, e2e_us)).unwrap()
}

fn synth(cfg: &Cfg, mode: &str) -> Synthetic {
    Synthetic::from_run(&run(cfg, mode, 0, 1.0)).unwrap()
}

/// T, the compute model's time of one STREAM_XFORM chunk of 256 B on this CCM:
/// ops = 16 (per chunk) + 4 × 64 words + ceil(256 / 8) CRC = 304;
/// compute = ceil(304 × 4 µthreads per unit × 1000 / 12 MHz) = ceil(101 333.3) = 101 334 ns;
/// memory = ceil(2 × 256 B × 4 µthreads × 1000 / 614 400 MB/s) = ceil(3.3) = 4 ns.
const T: u64 = 101_334;

#[test]
fn chunk_time_and_slots_come_from_the_compute_model() {
    let s = synth(&SWEEP, "BS");
    assert_eq!((s.chunk_ns, s.slots, s.records, s.waves()), (T, 4, 16, 4));
    // One record per batch: a posted request's latency is 500 + ceil(350 / 2) = 675, and the
    // batch's bytes take ceil((256 + 32 + 8) × 16 / 1000) = ceil(4.736) = 5 on the link.
    assert_eq!(
        (s.batch_records(), s.dma_latency_ns(), s.dma_transfer_ns(1)),
        (1, 675, 5)
    );
    // ceil(16 × 256 × 16 / 1000) = ceil(65.536) = 66.
    assert_eq!(s.result_load_ns(), 66);
}

/// The validate sweep's configuration (n 16, P 4: W 4 full waves; b 1), per launch.
#[test]
fn hand_computed_predictions_of_the_sweep() {
    // BS: m + W·T + m + load + n·h = 70 + 405 336 + 70 + 66 + 800 000.
    let bs = 70 + 4 * T + 70 + 66 + 16 * 50_000;
    assert_eq!(bs, 1_205_542);
    // RP: ceil(io/2) + r/2 + W·T + r/2 + io + m + load + n·h
    //   = 175 + 500 + 405 336 + 500 + 350 + 70 + 66 + 800 000.
    let rp = 175 + 500 + 4 * T + 500 + 350 + 70 + 66 + 16 * 50_000;
    assert_eq!(rp, 1_206_997);
    // AXLE: arrival 70, wave 0 ends 70 + T = 101 404; its first record is visible 675 + 5
    // later, at 102 084; the host is idle: it starts at 102 084 + q/2 = 107 084. h·P = 200 000
    // > T: the host never catches up with the device again (wave k is visible by 70 + (k+1)·T
    // + 680 + 3 × 5, long before the host is free), so the launch ends at 107 084 + 16 × 50 000.
    let axle = 70 + T + 680 + 5_000 + 16 * 50_000;
    assert_eq!(axle, 907_084);
    // AXLE_IRQ: each batch (one record) costs I + h = 100 000 on the host, from 102 084 on.
    let irq = 70 + T + 680 + 16 * (50_000 + 50_000);
    assert_eq!(irq, 1_702_084);
    for (mode, per_launch) in [("BS", bs), ("RP", rp), ("AXLE", axle), ("AXLE_IRQ", irq)] {
        let s = synth(&SWEEP, mode);
        assert_eq!(s.launch_ns(mode), Some(per_launch as f64), "{mode}");
        assert_eq!(s.predict_ns(mode), Some(6.0 * per_launch as f64), "{mode}");
    }
    assert_eq!(synth(&SWEEP, "BS").predict_ns("AXLE-p1"), None);
}

/// A smaller launch with a partial wave and partial batches: n 6 (waves of 4 and 2), sf 512
/// (b 2), h 20 µs, q 1 µs, 3 launches.
#[test]
fn hand_computed_predictions_with_partial_waves_and_batches() {
    let cfg = Cfg {
        launches: 3,
        records: 6,
        sf: 512,
        host_ns: 20_000,
        poll_ns: 1_000,
        dilation_milli: 1_000,
    };
    // x(2) = ceil((512 + 64 + 8) × 16 / 1000) = ceil(9.344) = 10.
    assert_eq!(synth(&cfg, "AXLE").dma_transfer_ns(2), 10);
    // load = ceil(6 × 256 × 16 / 1000) = ceil(24.576) = 25.
    // BS: 70 + 2·T + 70 + 25 + 6 × 20 000 = 322 833.
    let bs = 70 + 2 * T + 70 + 25 + 120_000;
    assert_eq!(bs, 322_833);
    // RP: 175 + 500 + 2·T + 500 + 350 + 70 + 25 + 120 000 = 324 288.
    let rp = 175 + 500 + 2 * T + 500 + 350 + 70 + 25 + 120_000;
    assert_eq!(rp, 324_288);
    // AXLE: wave 0 ends 101 404.
    //   batch 0 (2 records) visible 101 404 + 675 + 10 = 102 089; host idle: 102 589 .. 142 589;
    //   batch 1 visible max(102 089, 102 089 + 10) = 102 099; host busy: 142 589 .. 182 589.
    // Wave 1 ends 70 + 2·T = 202 738.
    //   batch 2 visible 202 738 + 685 = 203 423; host idle: 203 923 .. 243 923.
    let axle = 243_923;
    assert_eq!(70 + 2 * T + 685 + 500 + 40_000, axle);
    // AXLE_IRQ: batch 0: 102 089 + I = 152 089, + 2h = 192 089; batch 1 (visible 102 099):
    // 192 089 + I + 2h = 282 089; batch 2 (visible 203 423): 282 089 + I + 2h = 372 089.
    let irq = 372_089;
    for (mode, per_launch) in [("BS", bs), ("RP", rp), ("AXLE", axle), ("AXLE_IRQ", irq)] {
        let s = synth(&cfg, mode);
        assert_eq!(s.launch_ns(mode), Some(per_launch as f64), "{mode}");
        assert_eq!(s.predict_ns(mode), Some(3.0 * per_launch as f64), "{mode}");
    }
}

/// AXLE's two regimes: with h·P < T the device bounds a launch (W·T, then the last wave's
/// drain); with h·P > T the host does (one T, then n·h).
#[test]
fn axle_device_bound_and_host_bound() {
    let device = Cfg {
        host_ns: 1_000,
        poll_ns: 1_000,
        ..SWEEP
    };
    let s = synth(&device, "AXLE");
    assert!(s.host_ns * s.slots < s.chunk_ns);
    let t = s.launch_ns("AXLE").unwrap();
    let w_t = (s.waves() * s.chunk_ns) as f64;
    // The last wave's drain: its first batch lands 675 + 5 after the wave, the other three 5
    // apart (posted, overlapped); the host notices the first half a poll later and takes the
    // four records, 1 000 each: 70 + 405 336 + 680 + 500 + 4 × 1 000 = 410 586.
    assert_eq!(t, 410_586.0);
    let drain = t - 70.0 - w_t;
    assert!(drain > 0.0 && drain < 0.05 * w_t, "drain {drain}");

    let host = Cfg {
        host_ns: 50_000,
        ..device
    };
    let s = synth(&host, "AXLE");
    assert!(s.host_ns * s.slots > s.chunk_ns);
    let t = s.launch_ns("AXLE").unwrap();
    // T + n·h, plus the launch store, one batch's landing and half a poll: 70 + 101 334 + 680
    // + 500 + 800 000.
    let t_nh = (s.chunk_ns + s.records * s.host_ns) as f64;
    assert_eq!(t, t_nh + 70.0 + 680.0 + 500.0);
    // Far from the device-bound estimate: the host's n·h dominates.
    assert!(t > 1.5 * (s.waves() * s.chunk_ns) as f64);
}

/// Measured e2e equal to the prediction × D in every mode, `reps` repetitions each.
fn exact_runs(cfg: &Cfg, reps: u32) -> Vec<Run> {
    let d = cfg.dilation_milli as f64 / 1000.0;
    let mut runs = Vec::new();
    for rep in 0..reps {
        for mode in MODES {
            let us = synth(cfg, mode).predict_ns(mode).unwrap() * d / 1000.0;
            runs.push(run(cfg, mode, rep, us));
        }
    }
    runs
}

const DILATED: Cfg = Cfg {
    dilation_milli: 2_500,
    ..SWEEP
};

#[test]
fn the_prediction_times_the_dilation_passes() {
    let mut runs = exact_runs(&DILATED, 3);
    // Runs of other sweeps are not the validation's.
    runs.push(record::parse("{\"sweep\":\"modes\",\"mode\":\"RP\",\"e2e_us\":1}").unwrap());
    let v = validate(&runs);
    assert!(v.passed(), "{}", v.text());
    assert_eq!(v.runs, 12);
    let bs = &v.modes[1];
    // 6 × 1 205 542 ns × 2.5 = 18 083.13 µs.
    assert_eq!(bs.mode, "BS");
    assert!((bs.predicted_us - 18_083.13).abs() < 1e-6, "{bs:?}");
    assert!((bs.ratio - 1.0).abs() < 1e-12 && bs.pass && bs.reps == 3);
    let text = v.text();
    assert!(
        text.starts_with("validation: measured vs predicted per mode, tolerance 15 %\n"),
        "{text}"
    );
    for mode in MODES {
        let l = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(mode))
            .unwrap_or_else(|| panic!("no {mode} in {text}"));
        assert!(l.ends_with(" ok"), "{l}");
    }
    // Within the tolerance: 14 % slower everywhere still passes.
    for r in &mut runs {
        let us = r.num("e2e_us") * 1.14;
        r.0.insert("e2e_us".into(), Value::Num(us));
    }
    assert!(validate(&runs).passed());
}

/// The negative test: AXLE measured 25 % faster than predicted fails, naming AXLE.
#[test]
fn a_biased_mode_fails_naming_it() {
    let mut runs = exact_runs(&DILATED, 3);
    for r in runs.iter_mut().filter(|r| r.str("mode") == "AXLE") {
        let us = r.num("e2e_us") * 0.75;
        r.0.insert("e2e_us".into(), Value::Num(us));
    }
    let v = validate(&runs);
    assert!(!v.passed());
    assert_eq!(v.failed_modes(), ["AXLE"]);
    let axle = v.modes.iter().find(|m| m.mode == "AXLE").unwrap();
    assert!((axle.ratio - 0.75).abs() < 1e-9 && !axle.pass);
    let text = v.text();
    let l = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("AXLE"))
        .unwrap();
    assert!(l.contains("OFF BY -25.0 %"), "{l}");
    assert!(text.contains("validation FAILED: modes AXLE"), "{text}");
    // The others still pass.
    assert!(v.modes.iter().filter(|m| m.mode != "AXLE").all(|m| m.pass));
}

#[test]
fn a_missing_mode_fails() {
    let runs: Vec<Run> = exact_runs(&SWEEP, 2)
        .into_iter()
        .filter(|r| r.str("mode") != "AXLE_IRQ")
        .collect();
    let v = validate(&runs);
    assert!(!v.passed());
    assert_eq!(v.missing, ["AXLE_IRQ"]);
    assert!(v.modes.iter().all(|m| m.pass));
    assert!(v.text().contains("AXLE_IRQ      - MISSING"), "{}", v.text());
    assert!(!validate(&[]).passed(), "no run at all");
}

#[test]
fn the_median_ignores_one_outlier() {
    let mut runs = exact_runs(&SWEEP, 3);
    // Repetition 1 of RP took ten times as long (a preempted VM, say).
    let r = runs
        .iter_mut()
        .find(|r| r.str("mode") == "RP" && r.num("rep") == 1.0)
        .unwrap();
    let us = r.num("e2e_us") * 10.0;
    r.0.insert("e2e_us".into(), Value::Num(us));
    let v = validate(&runs);
    assert!(v.passed(), "{}", v.text());
    assert!((v.modes[0].ratio - 1.0).abs() < 1e-12);
    // A second outlier is the median: it fails.
    let r = runs
        .iter_mut()
        .find(|r| r.str("mode") == "RP" && r.num("rep") == 2.0)
        .unwrap();
    let us = r.num("e2e_us") * 10.0;
    r.0.insert("e2e_us".into(), Value::Num(us));
    assert_eq!(validate(&runs).failed_modes(), ["RP"]);
}

#[test]
fn a_run_without_a_model_field_fails_naming_it() {
    let mut r = run(&SWEEP, "BS", 0, 1.0);
    r.0.remove("ccm_units");
    r.0.remove("irq_ns");
    let e = Synthetic::from_run(&r).unwrap_err();
    assert!(e.contains("ccm_units") && e.contains("irq_ns"), "{e}");
    let mut runs = exact_runs(&SWEEP, 1);
    for r in &mut runs {
        r.0.remove("cxl_io_rtt_ns");
    }
    let v = validate(&runs);
    assert!(!v.passed() && v.modes.is_empty());
    assert!(v.text().contains("cxl_io_rtt_ns"), "{}", v.text());
    // One unusable run among good ones fails too.
    let mut runs = exact_runs(&SWEEP, 2);
    runs[0].0.remove("dilation_milli");
    assert!(!validate(&runs).passed());
}

#[test]
fn configurations_the_model_does_not_cover_are_refused() {
    for (field, value, why) in [
        ("depth", 2.0, "depth"),
        ("size", 1000.0, "multiple"),
        ("ccm_units", 0.0, "ccm_units"),
        ("compute_model", 0.0, "compute_model"),
        ("host_ns", 1.5, "host_ns"),
    ] {
        let mut r = run(&SWEEP, "RP", 0, 1.0);
        r.0.insert(field.into(), Value::Num(value));
        let e = Synthetic::from_run(&r).unwrap_err();
        assert!(e.contains(why), "{field}: {e}");
    }
}

// ---------------------------------------------------------------------------
// The command line

const BIN: &str = env!("CARGO_BIN_EXE_ccm-bench");

fn bench_log(runs: &[Run]) -> String {
    let mut s = String::from("##cxlstack begin bench\n");
    for r in runs {
        s.push_str(&r.to_json());
        s.push('\n');
    }
    s.push_str("##cxlstack end bench rc=0\n");
    s
}

#[test]
fn the_command_writes_validation_txt_and_fails_on_a_biased_mode() {
    let t = TempDir::new("validate");
    let mut runs = exact_runs(&DILATED, 2);
    let log = t.file("ok.log", bench_log(&runs).as_bytes());
    let out = t.sub("ok");
    let o = run_bounded(
        BIN,
        &["--log", &log, "--out", &out],
        Cwd::Scratch,
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    let text = std::fs::read_to_string(format!("{out}/validation.txt")).unwrap();
    assert!(text.contains("validation passed"), "{text}");
    assert!(
        o.stdout.contains("validation: measured vs predicted"),
        "{}",
        o.stdout
    );

    for r in runs.iter_mut().filter(|r| r.str("mode") == "AXLE") {
        let us = r.num("e2e_us") * 0.75;
        r.0.insert("e2e_us".into(), Value::Num(us));
    }
    let log = t.file("biased.log", bench_log(&runs).as_bytes());
    let out = t.sub("biased");
    let o = run_bounded(
        BIN,
        &["--log", &log, "--out", &out],
        Cwd::Scratch,
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("AXLE"), "{}", o.stderr);
    let text = std::fs::read_to_string(format!("{out}/validation.txt")).unwrap();
    assert!(text.contains("OFF BY -25.0 %"), "{text}");
    // Everything else is still written.
    assert!(std::path::Path::new(&format!("{out}/results.json")).exists());
}

#[test]
fn a_log_without_the_validate_sweep_is_not_validated() {
    let t = TempDir::new("novalidate");
    let runs: Vec<Run> = exact_runs(&SWEEP, 1)
        .into_iter()
        .map(|mut r| {
            r.0.insert("sweep".into(), Value::Str("modes".into()));
            r
        })
        .collect();
    let log = t.file("tests.log", bench_log(&runs).as_bytes());
    let out = t.sub("out");
    let o = run_bounded(
        BIN,
        &["--log", &log, "--out", &out],
        Cwd::Scratch,
        Duration::from_secs(10),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!std::path::Path::new(&format!("{out}/validation.txt")).exists());
    assert!(!o.stdout.contains("validation"), "{}", o.stdout);
}

/// The prediction takes the host's work per record as measured: a host that spends 80 µs per
/// record where `host_ns` says 50 moves the prediction by exactly that work, and the check
/// still passes.
#[test]
fn the_host_work_is_taken_as_measured() {
    let cfg = Cfg {
        dilation_milli: 2_000,
        ..SWEEP
    };
    let slow_host = Cfg {
        host_ns: 80_000,
        ..SWEEP
    };
    let records = cfg.launches * cfg.records;
    // 80 µs per record measured, dilated by 2.
    let busy_us = (records * 80_000 * 2_000) as f64 / 1e6;
    let mut runs = Vec::new();
    for mode in MODES {
        let e2e_us = synth(&slow_host, mode).predict_ns(mode).unwrap() * 2.0 / 1000.0;
        for rep in 0..3 {
            let l = line_with_host(&cfg, mode, rep, e2e_us, records, busy_us);
            runs.push(record::parse(&l).unwrap());
        }
    }
    let v = validate(&runs);
    assert!(v.passed(), "{}", v.text());
    assert!(v.modes.iter().all(|m| m.host_ns == 80_000.0));
    // The nominal 50 µs would have called every mode slow.
    let nominal = synth(&cfg, "BS").predict_ns("BS").unwrap() * 2.0 / 1000.0;
    let bs = v.modes.iter().find(|m| m.mode == "BS").unwrap();
    assert!(bs.measured_us / nominal > 1.15);
}
