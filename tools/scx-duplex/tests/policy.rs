// SPDX-License-Identifier: GPL-2.0

//! The scheduler's policy, run from the C the BPF program and the loader are built from
//! (`bpf/duplex_policy.h`, `bpf/duplex_series.c`): hints, parameters, window, trends,
//! oversubscription, policies and their switching, the measured signal, accounting, placement,
//! slices, vruntime and deadlines, and the VM test's two scenarios.

use scx_duplex::engine::{self, Engine, Feedback, Params, Sample};
use scx_duplex::task::{self, Class, Cluster, Knobs, Signal, Verdict};

fn sample(running: f64, cpus: f64, util: f64) -> Sample {
    Sample {
        running,
        cpus,
        util,
        ..Sample::default()
    }
}

fn traffic(reads: f64, writes: f64) -> Sample {
    Sample {
        running: 1.0,
        cpus: 4.0,
        util: 0.5,
        reads,
        writes,
        traffic: 1,
        ..Sample::default()
    }
}

fn engine(counters: bool, policy: &str, settings: &[&str]) -> Engine {
    Engine::new(&Params::new(settings).unwrap(), counters, policy).unwrap()
}

/// The knobs the hint policy gives with the default parameters: the static ones.
fn knobs() -> Knobs {
    engine(false, "hint", &[]).tick(&sample(1.0, 4.0, 0.1))
}

#[test]
fn abi_sizes_match() {
    for (i, (c, rust)) in engine::abi_sizes().into_iter().enumerate() {
        assert_eq!(c, rust, "structure {i}: C {c} bytes, Rust {rust}");
    }
}

#[test]
fn hints_parse() {
    assert_eq!(engine::parse_class("read"), Some(Class::Read as u32));
    assert_eq!(engine::parse_class("write"), Some(Class::Write as u32));
    assert_eq!(
        engine::parse_class("balanced"),
        Some(Class::Balanced as u32)
    );
    for bad in ["reads", "", "Read", " read", "fast"] {
        assert_eq!(engine::parse_class(bad), None, "{bad:?}");
    }
}

#[test]
fn parameters_have_defaults_ranges_and_refusals() {
    let listing = Params::new(&[]).unwrap().listing();
    for (name, default) in [
        ("window", "10"),
        ("oversub_load", "1.5"),
        ("oversub_util", "0.85"),
        ("alpha_fast", "0.5"),
        ("alpha_slow", "0.1"),
        ("phase_threshold", "0.1"),
        ("slice_us", "20000"),
        ("hysteresis", "60"),
        ("load_weight", "80"),
        ("share_read", "90"),
    ] {
        let line = listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed:\n{listing}"));
        assert_eq!(line.split_whitespace().nth(1), Some(default), "{line}");
    }
    assert_eq!(listing.lines().count(), 27, "{listing}");
    for (bad, why) in [
        ("window=0", "from 1 to 64"),
        ("window=2.5", "integer"),
        ("oversub_util=1.5", "from 0 to 1"),
        ("alpha_fast=x", "alpha_fast"),
        ("nosuch=1", "NAME=VALUE"),
        ("window", "NAME=VALUE"),
        ("alpha_fast=0.05", "above alpha_slow"),
        ("hyst_min=300", "above hyst_max"),
    ] {
        let err = Params::new(&[bad])
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(err.contains(why), "{bad}: {err}");
    }
    // A setting takes effect: 1.75 threads per CPU is not oversubscribed above 2.
    let mut e = engine(false, "timeseries", &["oversub_load=2"]);
    let k = e.tick(&sample(7.0, 4.0, 0.9));
    assert_eq!((k.oversubscribed, e.hint().oversubscribed), (0, 0));
    assert_eq!(
        Params::new(&["slice_us=5000"])
            .unwrap()
            .listing()
            .lines()
            .nth(6)
            .map(|l| l.split_whitespace().nth(1) == Some("5000")),
        Some(true)
    );
}

/// Documentation/tools.rst lists the parameters as `scx_duplex --params` prints them: the
/// documented defaults are the code's.
#[test]
fn the_documented_parameters_are_the_codes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Documentation/tools.rst");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = doc
        .find("The parameters (``scx_duplex --params``")
        .expect("the parameter listing in tools.rst");
    let block: Vec<&str> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim_start())
        .collect();
    let listing = Params::new(&[]).unwrap().listing();
    assert_eq!(block, listing.lines().collect::<Vec<_>>());
}

#[test]
fn window_slides() {
    let mut e = engine(false, "timeseries", &["window=4"]);
    for r in 1..=6 {
        e.tick(&sample(f64::from(r), 1.0, 0.1 * f64::from(r)));
    }
    assert_eq!(e.window_len(), 4);
    let h = e.hint();
    assert!((h.load - 4.5).abs() < 1e-9, "{h:?}");
    assert!((h.util - 0.45).abs() < 1e-9, "{h:?}");
}

#[test]
fn oversubscription_needs_both_window_means() {
    let fill = |policy: &str, running: f64, util: f64| {
        let mut e = engine(false, policy, &[]);
        let mut k = Knobs::default();
        for _ in 0..10 {
            k = e.tick(&sample(running, 4.0, util));
        }
        (e.hint().oversubscribed, k)
    };
    // 7 threads on 4 CPUs = 1.75 per CPU, 90 % busy.
    let (over, k) = fill("timeseries", 7.0, 0.9);
    assert_eq!(over, 1);
    assert_eq!((k.oversubscribed, k.load_weight), (1, 160));
    assert_eq!(k.slice_ns, 20_000_000);
    let mut e = engine(false, "timeseries", &[]);
    let k = (0..10).fold(k, |_, _| e.tick(&sample(7.0, 4.0, 0.9)));
    assert!(
        e.report(&k)
            .contains("oversubscribed 1 read share n/a trend off volatility n/a slice 40000 us"),
        "{}",
        e.report(&k)
    );
    // Exactly 1.5 per CPU is not above; busy CPUs without threads, threads on idle CPUs.
    assert_eq!(fill("timeseries", 6.0, 0.9).0, 0);
    assert_eq!(fill("timeseries", 4.0, 0.99).0, 0);
    assert_eq!(fill("timeseries", 8.0, 0.85).0, 0);
    // The hint policy sees it and does not act on it.
    let (over, k) = fill("hint", 7.0, 0.9);
    assert_eq!((over, k.oversubscribed, k.load_weight), (1, 0, 80));
    // One spike does not make a window oversubscribed.
    let mut e = engine(false, "timeseries", &[]);
    for _ in 0..9 {
        e.tick(&sample(2.0, 4.0, 0.5));
    }
    let k = e.tick(&sample(40.0, 4.0, 1.0));
    assert_eq!((e.hint().oversubscribed, k.oversubscribed), (0, 0));
}

#[test]
fn without_counters_the_trend_is_off() {
    let mut e = engine(false, "timeseries", &[]);
    let mut k = Knobs::default();
    // Even samples that claim traffic: the machine has no counters.
    for i in 0..20 {
        k = e.tick(&traffic(if i < 10 { 90.0 } else { 10.0 }, 50.0));
    }
    let h = e.hint();
    assert_eq!((h.trend_on, h.phase_change), (0, 0));
    assert!(h.read_share.is_nan() && h.trend.is_nan() && h.volatility.is_nan());
    assert_eq!((k.sys_vol, k.phase_change, k.use_measured), (0, 0, 0));
    assert!(
        e.report(&k)
            .contains("read share n/a trend off volatility n/a"),
        "{}",
        e.report(&k)
    );
}

#[test]
fn measured_trends_follow_a_phase_change() {
    let mut e = engine(true, "timeseries", &[]);
    let mut k = Knobs::default();
    for _ in 0..50 {
        k = e.tick(&traffic(900.0, 100.0));
    }
    let h = e.hint();
    assert_eq!(h.trend_on, 1);
    assert!((h.read_share - 0.9).abs() < 1e-6 && h.trend.abs() < 1e-3 && h.volatility < 1e-3);
    assert_eq!((k.phase_change, k.hysteresis, k.use_measured), (0, 60, 1));
    // Turning to writes: the fast average leads, the trend goes negative.
    for _ in 0..3 {
        k = e.tick(&traffic(100.0, 900.0));
    }
    let h = e.hint();
    assert!(h.trend < -0.1, "{h:?}");
    assert!(h.volatility > 0.05, "{h:?}");
    assert_eq!((k.phase_change, k.hysteresis), (1, 20));
    assert!(k.sys_vol > 50, "{k:?}");
    assert!(e.report(&k).contains("(phase change)"), "{}", e.report(&k));
    // A period without events changes nothing.
    let before = e.hint();
    e.tick(&traffic(0.0, 0.0));
    assert_eq!(
        (before.read_share, before.trend),
        (e.hint().read_share, e.hint().trend)
    );
}

#[test]
fn time_slices_follow_hint_class_and_volatility() {
    let k = knobs();
    let none = Signal::default();
    let slice = |k: &Knobs, c: Class, s: &Signal| task::task_slice(k, c, s) / 1000;
    assert_eq!(slice(&k, Class::Unknown, &none), 20_000);
    assert_eq!(slice(&k, Class::Read, &none), 20_000);
    // The system's volatility at its highest takes half of a hinted task's slice.
    let vol = Knobs { sys_vol: 1000, ..k };
    assert_eq!(slice(&vol, Class::Write, &none), 10_000);
    assert_eq!(slice(&vol, Class::Unknown, &none), 20_000);
    // Oversubscribed: double, whatever the class.
    let over = Knobs {
        oversubscribed: 1,
        sys_vol: 1000,
        ..k
    };
    assert_eq!(slice(&over, Class::Read, &none), 40_000);
    // A phase change halves a read or write task's slice, not a balanced one's; never below
    // slice_min.
    let phase = Knobs {
        phase_change: 1,
        ..k
    };
    assert_eq!(slice(&phase, Class::Read, &none), 10_000);
    assert_eq!(slice(&phase, Class::Balanced, &none), 20_000);
    assert_eq!(
        slice(
            &Knobs {
                sys_vol: 1000,
                ..phase
            },
            Class::Read,
            &none
        ),
        10_000
    );
    // A trusted measurement is the task's own volatility: 400 permille takes a fifth.
    let measured = Signal {
        share: 500,
        vol: 400,
        samples: 4,
        ..Signal::default()
    };
    let m = Knobs {
        use_measured: 1,
        ..k
    };
    assert_eq!(slice(&m, Class::Read, &measured), 16_000);
    let young = Signal {
        samples: 3,
        ..measured
    };
    assert_eq!(slice(&m, Class::Read, &young), 20_000);
    assert_eq!(slice(&k, Class::Read, &measured), 20_000);
}

#[test]
fn the_counter_path_measures_a_task_with_a_fake_source() {
    let k = Knobs {
        use_measured: 1,
        ..knobs()
    };
    let mut s = Signal::default();
    // Fewer than task_min_events (1000) events make no sample; they wait for more.
    assert!(!task::observe(&mut s, 400, 100, &k));
    assert!(task::observe(&mut s, 400, 100, &k));
    assert_eq!((s.share, s.vol, s.samples, s.acc_reads), (800, 0, 1, 0));
    for _ in 0..20 {
        assert!(task::observe(&mut s, 900, 100, &k));
    }
    assert!((895..=905).contains(&s.share), "{s:?}");
    let steady = s.vol;
    // Its phase flips: the share follows, the volatility rises.
    for _ in 0..4 {
        task::observe(&mut s, 100, 900, &k);
    }
    assert!(s.share < 500 && s.vol > steady + 100, "{s:?}");
    // The hint is the prior until enough samples exist, and only when measuring is asked for.
    let young = Signal {
        share: 100,
        samples: 3,
        ..Signal::default()
    };
    assert_eq!(task::task_share(&k, Class::Read, &young), 90);
    let old = Signal {
        samples: 4,
        ..young
    };
    assert_eq!(task::task_share(&k, Class::Read, &old), 10);
    assert_eq!(task::task_share(&knobs(), Class::Read, &old), 90);
    assert!(task::trusted(&k, &old) && !task::trusted(&k, &young));
    // A writer hinted read, measured: it joins the readers' cluster, not the writers'.
    let clusters = cluster_set(&[&[Class::Read], &[Class::Write]]);
    let hinted = task::task_share(&k, Class::Read, &young);
    let measured = task::task_share(&k, Class::Read, &old);
    assert_eq!(task::choose(&clusters, hinted, None, false, &k).0, Some(1));
    assert_eq!(
        task::choose(&clusters, measured, None, false, &k).0,
        Some(0)
    );
}

fn share(c: Class) -> u32 {
    task::task_share(&knobs(), c, &Signal::default())
}

fn cluster_set(members: &[&[Class]]) -> Vec<Cluster> {
    members
        .iter()
        .map(|m| {
            let mut c = Cluster::default();
            m.iter().for_each(|&t| task::enter(&mut c, share(t)));
            c
        })
        .collect()
}

#[test]
fn accounting_enters_and_leaves() {
    let mut c = cluster_set(&[&[Class::Read, Class::Write, Class::Balanced]])[0];
    assert_eq!((c.reads, c.writes, c.tasks), (150, 150, 3));
    task::leave(&mut c, share(Class::Read));
    assert_eq!((c.reads, c.writes, c.tasks), (60, 140, 2));
    assert_eq!(
        task::cost(&c, share(Class::Read), false, &knobs()),
        -80 + 3 * 80
    );
}

#[test]
fn readers_go_where_writers_are() {
    let k = knobs();
    let (r, w) = (share(Class::Read), share(Class::Write));
    let even = cluster_set(&[&[Class::Read; 3], &[Class::Write; 3]]);
    assert_eq!(
        task::choose(&even, w, None, false, &k),
        (Some(0), Verdict::Placed)
    );
    assert_eq!(
        task::choose(&even, r, None, false, &k),
        (Some(1), Verdict::Placed)
    );
    // Fewer tasks break a tie; then the lower index.
    let tie = cluster_set(&[&[Class::Balanced; 2], &[Class::Balanced]]);
    assert_eq!(
        task::choose(
            &tie,
            50,
            None,
            false,
            &Knobs {
                load_weight: 0,
                ..k
            }
        )
        .0,
        Some(1)
    );
    assert_eq!(
        task::choose(&cluster_set(&[&[], &[]]), r, None, false, &k).0,
        Some(0)
    );
    assert_eq!(task::choose(&[], r, None, false, &k), (None, Verdict::Kept));
    // A stale current cluster is a first placement.
    assert_eq!(
        task::choose(&even, r, Some(9), true, &k),
        (Some(1), Verdict::Placed)
    );
}

#[test]
fn hysteresis_and_load_decide_moves() {
    let k = knobs();
    // A reader with another reader and a writer; the other cluster holds one writer: moving
    // saves 240, it moves.
    let c = cluster_set(&[&[Class::Read, Class::Read, Class::Write], &[Class::Write]]);
    assert_eq!(
        task::choose(&c, 90, Some(0), true, &k),
        (Some(1), Verdict::Moved)
    );
    // A task of read share 60 beside a reader; the other cluster holds a task of share 40:
    // moving saves 40 of imbalance, loads equal. Below the hysteresis it stays, at it it moves.
    let mut c = vec![Cluster::default(); 2];
    task::enter(&mut c[0], 90);
    task::enter(&mut c[0], 60);
    task::enter(&mut c[1], 40);
    assert_eq!(
        task::choose(&c, 60, Some(0), true, &k),
        (Some(0), Verdict::Stayed)
    );
    let at = Knobs {
        hysteresis: 40,
        ..k
    };
    assert_eq!(
        task::choose(&c, 60, Some(0), true, &at),
        (Some(1), Verdict::Moved)
    );
    // A sleeper (not counted on its cluster) compares the same way.
    let mut awake = c.clone();
    task::leave(&mut awake[0], 60);
    assert_eq!(
        task::choose(&awake, 60, Some(0), false, &k),
        (Some(0), Verdict::Stayed)
    );
    // All four on one cluster is as balanced as can be: the load term still spreads them.
    let pile = cluster_set(&[&[Class::Read, Class::Write, Class::Read, Class::Write], &[]]);
    assert_eq!(
        task::choose(&pile, 90, Some(0), true, &k),
        (Some(1), Verdict::Moved)
    );
    let blind = Knobs {
        load_weight: 0,
        ..k
    };
    assert_eq!(
        task::choose(&pile, 90, Some(0), true, &blind),
        (Some(0), Verdict::Kept)
    );
}

#[test]
fn eight_readers_then_eight_writers_balance_four_clusters() {
    let k = knobs();
    let mut clusters = vec![Cluster::default(); 4];
    for c in [Class::Read; 8].into_iter().chain([Class::Write; 8]) {
        let (i, v) = task::choose(&clusters, share(c), None, false, &k);
        assert_eq!(v, Verdict::Placed);
        task::enter(&mut clusters[i.unwrap()], share(c));
    }
    for (i, c) in clusters.iter().enumerate() {
        assert_eq!((c.reads - c.writes, c.tasks), (0, 4), "cluster {i}: {c:?}");
    }
}

/// One worker process of the VM test: what it truly does, what its hint says, where it is.
#[derive(Clone, Copy, Debug)]
struct Worker {
    reader: bool,
    share: u32,
    cluster: Option<usize>,
}

/// Places a task as the BPF program's enqueue does; true if it changed cluster.
fn enqueue(clusters: &mut [Cluster], w: &mut Worker, k: &Knobs) -> bool {
    let (to, _) = task::choose(clusters, w.share, w.cluster, w.cluster.is_some(), k);
    let to = to.unwrap();
    if w.cluster == Some(to) {
        return false;
    }
    if let Some(from) = w.cluster {
        task::leave(&mut clusters[from], w.share);
    }
    task::enter(&mut clusters[to], w.share);
    w.cluster = Some(to);
    true
}

/// The VM check (suite_scx's scx_placement): every cluster the workers use has a true reader
/// and a true writer, and they use more than one.
fn vm_check(workers: &[Worker]) -> Result<(), String> {
    let mut used = std::collections::BTreeMap::new();
    for w in workers {
        let e = used.entry(w.cluster.unwrap()).or_insert((false, false));
        if w.reader {
            e.0 = true;
        } else {
            e.1 = true;
        }
    }
    for (c, (r, w)) in &used {
        if !r || !w {
            return Err(format!(
                "cluster {c} lacks a {}",
                if *r { "writer" } else { "reader" }
            ));
        }
    }
    (used.len() > 1).then_some(()).ok_or("one cluster".into())
}

/// Every arrival order of the four workers, each first preceded by its main thread (the same
/// hint, runnable while it starts the worker, then asleep), then enqueues until nobody moves.
fn settle(hints: [Class; 4], with_main: bool, k: &Knobs) -> Vec<Vec<Worker>> {
    let truth = [true, true, false, false];
    let mut outcomes = Vec::new();
    for order in permutations(4) {
        let mut clusters = vec![Cluster::default(); 2];
        let mut ws: Vec<Worker> = (0..4)
            .map(|i| Worker {
                reader: truth[i],
                share: share(hints[i]),
                cluster: None,
            })
            .collect();
        for &i in &order {
            let mut main = Worker {
                cluster: None,
                ..ws[i]
            };
            if with_main {
                enqueue(&mut clusters, &mut main, k);
            }
            enqueue(&mut clusters, &mut ws[i], k);
            if let Some(c) = main.cluster {
                task::leave(&mut clusters[c], main.share);
            }
        }
        let mut rounds = 0;
        while (0..4).fold(false, |moved, i| {
            enqueue(&mut clusters, &mut ws[i], k) | moved
        }) {
            rounds += 1;
            assert!(
                rounds < 20,
                "order {order:?}: placements never settle: {ws:?}"
            );
        }
        outcomes.push(ws);
    }
    outcomes
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

#[test]
fn the_vm_scenarios_pass_and_fail_in_every_arrival_order() {
    use Class::{Balanced, Read, Write};
    // The hint policy's knobs, as the VM runs start with; then the time-series policy's when
    // oversubscribed (the positive run switches to it while four workers load two CPUs).
    let k = knobs();
    let over = Knobs {
        oversubscribed: 1,
        load_weight: 160,
        ..k
    };
    assert_eq!(permutations(4).len(), 24);
    for with_main in [false, true] {
        // Correct hints: two readers, two writers.
        for ws in settle([Read, Read, Write, Write], with_main, &k) {
            assert_eq!(vm_check(&ws), Ok(()), "{ws:?}");
            let mut clusters = vec![Cluster::default(); 2];
            ws.iter()
                .for_each(|w| task::enter(&mut clusters[w.cluster.unwrap()], w.share));
            let mut after = ws.clone();
            for w in &mut after {
                assert!(
                    !enqueue(&mut clusters, w, &over),
                    "moved when oversubscribed: {ws:?}"
                );
            }
        }
        // The negative control's hints: the second reader hinted write, the writers balanced.
        for ws in settle([Read, Write, Balanced, Balanced], with_main, &k) {
            let err = vm_check(&ws).expect_err(&format!("wrong hints passed: {ws:?}"));
            assert!(err.contains("lacks"), "{err}: {ws:?}");
        }
    }
}

#[test]
fn vruntime_deadline_and_dispatch_order() {
    const MS: u64 = 1_000_000;
    // A sleeper keeps at most the lag of credit; a task ahead keeps its vruntime.
    assert_eq!(task::vruntime(0, 100 * MS, 20 * MS), 80 * MS);
    assert_eq!(task::vruntime(90 * MS, 100 * MS, 20 * MS), 90 * MS);
    assert_eq!(task::vruntime(130 * MS, 100 * MS, 20 * MS), 130 * MS);
    // Early on, mvruntime - lag wraps below zero: still no jump.
    assert_eq!(task::vruntime(3, 5, 20 * MS), 3);
    // Deadlines: the slice scaled by the inverse weight (100: nice 0).
    assert_eq!(task::deadline(MS, 20 * MS, 100), 21 * MS);
    assert_eq!(task::deadline(MS, 20 * MS, 200), 11 * MS);
    assert_eq!(task::deadline(MS, 20 * MS, 0), 21 * MS);
    assert_eq!(task::charge(10 * MS, 50), 20 * MS);
    // The earlier head first, wrap-safe; an empty queue never.
    assert!(task::first(Some(5), Some(7)));
    assert!(!task::first(Some(7), Some(5)));
    assert!(task::first(Some(5), None));
    assert!(!task::first(None, Some(5)));
    assert!(!task::first(None, None));
    assert!(task::first(Some(u64::MAX - 5), Some(3)));
}

#[test]
fn switching_policies_carries_the_state() {
    let high = sample(8.0, 4.0, 1.0);
    let low = sample(1.0, 4.0, 0.5);
    let mut e = engine(false, "timeseries", &[]);
    for _ in 0..8 {
        let k = e.tick(&high);
        assert_eq!(k.oversubscribed as i32, e.hint().oversubscribed);
    }
    assert_eq!(e.hint().oversubscribed, 1);
    assert!(e.switch_to("hint"));
    let k = e.tick(&low);
    // The hint policy does not act on oversubscription, but the window goes on.
    assert_eq!(
        (k.oversubscribed, k.load_weight, e.window_len()),
        (0, 80, 9)
    );
    assert_eq!(e.hint().oversubscribed, 1);
    assert!(e.switch_to("timeseries"));
    let k = e.tick(&low);
    assert_eq!(
        (k.oversubscribed, k.load_weight),
        (1, 160),
        "window not carried"
    );
    // A fresh state with the same two samples sees no oversubscription.
    let mut fresh = engine(false, "timeseries", &[]);
    fresh.tick(&low);
    assert_eq!(fresh.tick(&low).oversubscribed, 0);
    assert_eq!(e.switches(), 2);
    assert!(!e.switch_to("nope"));
    assert!(e.switch_to("timeseries"));
    assert_eq!(
        e.switches(),
        2,
        "switching to the current policy is no switch"
    );
    assert_eq!(e.policy(), engine::policy_index("timeseries").unwrap());
}

fn churn(tasks: f64, moved: f64, imbalance: f64) -> Feedback {
    Feedback {
        placed: 0.0,
        moved,
        stayed: 0.0,
        tasks,
        imbalance,
        clusters: 2.0,
    }
}

#[test]
fn update_adapts_the_hysteresis_and_it_survives_a_switch() {
    let mut e = engine(false, "timeseries", &[]);
    // Three moves among four tasks: churn, the hysteresis rises by a step a period.
    e.feedback(&churn(4.0, 3.0, 0.0));
    assert_eq!(e.hysteresis(), 70.0);
    for _ in 0..30 {
        e.feedback(&churn(4.0, 3.0, 0.0));
    }
    assert_eq!(e.hysteresis(), 200.0);
    // Within budget, balanced: nothing changes. No tasks: nothing to learn.
    e.feedback(&churn(4.0, 1.0, 0.0));
    e.feedback(&churn(0.0, 9.0, 0.0));
    assert_eq!(e.hysteresis(), 200.0);
    // Stuck: no move while the clusters stay more unbalanced than the hysteresis.
    e.feedback(&churn(4.0, 0.0, 2.0 * 300.0));
    assert_eq!(e.hysteresis(), 190.0);
    let k = e.tick(&sample(1.0, 4.0, 0.1));
    assert_eq!(k.hysteresis, 190);
    // The hint policy keeps its fixed hysteresis and learns nothing; the value comes back.
    e.switch_to("hint");
    assert_eq!(e.tick(&sample(1.0, 4.0, 0.1)).hysteresis, 60);
    e.feedback(&churn(4.0, 3.0, 0.0));
    e.switch_to("timeseries");
    assert_eq!(e.tick(&sample(1.0, 4.0, 0.1)).hysteresis, 190);
    for _ in 0..30 {
        e.feedback(&churn(4.0, 0.0, 2.0 * 300.0));
    }
    assert_eq!(e.hysteresis(), 20.0);
}

#[test]
fn measured_shares_are_the_time_series_policys_with_counters() {
    let lo = sample(1.0, 4.0, 0.1);
    assert_eq!(engine(true, "timeseries", &[]).tick(&lo).use_measured, 1);
    assert_eq!(engine(false, "timeseries", &[]).tick(&lo).use_measured, 0);
    assert_eq!(engine(true, "hint", &[]).tick(&lo).use_measured, 0);
    assert!(Engine::new(&Params::new(&[]).unwrap(), true, "nope").is_none());
}
