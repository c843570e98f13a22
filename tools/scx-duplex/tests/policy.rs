// SPDX-License-Identifier: GPL-2.0

//! The duplex scheduler's policy: hints, window, EWMA trends, oversubscription, time slice,
//! placement with hysteresis.

use scx_duplex::hint::{parse, resolve, BadHint, Class};
use scx_duplex::place::{choose, Cluster, HYSTERESIS};
use scx_duplex::series::{hint, oversubscribed, time_slice, Hint, Sample, Trends, Window};

fn sample(running: u32, cpus: u32, util: f64) -> Sample {
    Sample {
        running,
        cpus,
        util,
        ..Sample::default()
    }
}

fn traffic(read: u64, write: u64) -> Sample {
    Sample {
        running: 1,
        cpus: 1,
        util: 0.5,
        read_bytes: read,
        write_bytes: write,
    }
}

#[test]
fn hints_parse_and_inherit() {
    assert_eq!(parse("read"), Ok(Class::Read));
    assert_eq!(parse(" write\n"), Ok(Class::Write));
    assert_eq!(parse("balanced"), Ok(Class::Balanced));
    assert_eq!(parse("reads"), Err(BadHint("reads".into())));
    assert_eq!(parse(""), Err(BadHint(String::new())));
    assert!(parse("Read")
        .unwrap_err()
        .to_string()
        .contains("read, write, balanced"));
    // The task's own hint wins; else the nearest cgroup's; else unknown.
    let chain = [None, Some(Class::Write), Some(Class::Read)];
    assert_eq!(resolve(Some(Class::Balanced), &chain), Class::Balanced);
    assert_eq!(resolve(None, &chain), Class::Write);
    assert_eq!(resolve(None, &[Some(Class::Read)]), Class::Read);
    assert_eq!(resolve(None, &[None, None]), Class::Unknown);
}

#[test]
fn window_slides() {
    let mut w = Window::<4>::default();
    assert!(w.is_empty());
    assert_eq!(w.mean_load(), 0.0);
    for r in 1..=6 {
        w.push(sample(r, 1, 0.1 * f64::from(r)));
    }
    assert_eq!(w.len(), 4);
    let running: Vec<u32> = w.iter().map(|s| s.running).collect();
    assert_eq!(running, vec![3, 4, 5, 6]);
    assert!((w.mean_load() - 4.5).abs() < 1e-9);
    assert!((w.mean_util() - 0.45).abs() < 1e-9);
}

#[test]
fn oversubscription_needs_both_thresholds_on_average() {
    let fill = |running: u32, util: f64| {
        let mut w = Window::<8>::default();
        for _ in 0..8 {
            w.push(sample(running, 4, util));
        }
        w
    };
    // 7 threads on 4 CPUs = 1.75 per core.
    assert!(oversubscribed(&fill(7, 0.9)));
    // Exactly 1.5 per core is not above the threshold.
    assert!(!oversubscribed(&fill(6, 0.9)));
    // Busy CPUs but not enough threads, or threads but idle CPUs.
    assert!(!oversubscribed(&fill(4, 0.99)));
    assert!(!oversubscribed(&fill(8, 0.85)));
    assert!(!oversubscribed(&Window::<8>::default()));
    // One spike does not make a window oversubscribed.
    let mut w = fill(2, 0.5);
    w.push(sample(40, 4, 1.0));
    assert!(!oversubscribed(&w));
}

#[test]
fn trends_follow_phase_changes() {
    assert!(Trends::new(0.1, 0.5).is_none());
    assert!(Trends::new(0.0, 0.0).is_none());
    let mut t = Trends::new(0.5, 0.1).unwrap();
    assert_eq!(t.read_share(), None);
    // Steady 90 % reads: no trend, no volatility.
    for _ in 0..50 {
        t.update(&traffic(90, 10));
    }
    assert!((t.read_share().unwrap() - 0.9).abs() < 1e-6);
    assert!(t.trend().abs() < 1e-3);
    assert!(t.volatility() < 1e-3);
    // Turning to writes: the fast average leads, the trend goes negative.
    for _ in 0..3 {
        t.update(&traffic(10, 90));
    }
    assert!(t.trend() < -0.1, "trend {}", t.trend());
    assert!(t.volatility() > 0.05);
    // Samples without traffic change nothing.
    let before = (t.read_share(), t.trend());
    t.update(&traffic(0, 0));
    assert_eq!(before, (t.read_share(), t.trend()));
    let mut w = Window::<4>::default();
    w.push(sample(1, 4, 0.2));
    let h = hint(&w, &t);
    assert!(h.phase_change && !h.oversubscribed);
}

#[test]
fn time_slices_stay_within_bounds() {
    let h = |oversubscribed, volatility| Hint {
        oversubscribed,
        phase_change: false,
        volatility,
    };
    assert_eq!(time_slice(20_000_000, &h(false, 0.0)), 20_000_000);
    assert_eq!(time_slice(20_000_000, &h(false, 1.0)), 10_000_000);
    assert_eq!(time_slice(20_000_000, &h(false, 7.0)), 10_000_000);
    assert_eq!(time_slice(20_000_000, &h(true, 1.0)), 40_000_000);
    assert_eq!(time_slice(u64::MAX, &h(true, 0.0)), u64::MAX);
}

fn cluster(read: u32, write: u32, balanced: u32) -> Cluster {
    let mut c = Cluster::default();
    (0..read).for_each(|_| c.enter(Class::Read));
    (0..write).for_each(|_| c.enter(Class::Write));
    (0..balanced).for_each(|_| c.enter(Class::Balanced));
    c
}

#[test]
fn accounting_enters_and_leaves() {
    let mut c = cluster(2, 1, 1);
    assert_eq!((c.reads, c.writes, c.tasks), (240, 160, 4));
    c.leave(Class::Read);
    c.leave(Class::Unknown);
    assert_eq!((c.reads, c.writes, c.tasks), (150, 150, 2));
    assert_eq!(c.imbalance(), 0);
    let mut empty = Cluster::default();
    empty.leave(Class::Write);
    assert_eq!(empty, Cluster::default());
}

#[test]
fn readers_go_where_writers_are() {
    let clusters = [cluster(3, 0, 0), cluster(0, 3, 0)];
    // A new write-heavy task joins the read-heavy cluster, a new reader the write-heavy one.
    assert_eq!(choose(&clusters, Class::Write, None, false), Some(0));
    assert_eq!(choose(&clusters, Class::Read, None, false), Some(1));
    // Unknown tasks go to the least loaded cluster, or stay.
    let loaded = [cluster(3, 0, 0), cluster(0, 1, 0)];
    assert_eq!(choose(&loaded, Class::Unknown, None, false), Some(1));
    assert_eq!(choose(&loaded, Class::Unknown, Some(0), false), Some(0));
    assert_eq!(choose(&[], Class::Read, None, false), None);
}

#[test]
fn hysteresis_keeps_tasks_from_bouncing() {
    // A reader on cluster 0 with one other reader and a writer; cluster 1 holds one writer.
    // Staying adds 80 of imbalance, moving removes 80: a saving of 160 (>= HYSTERESIS).
    let clusters = [cluster(2, 1, 0), cluster(0, 1, 0)];
    const _: () = assert!(HYSTERESIS <= 160);
    assert_eq!(choose(&clusters, Class::Read, Some(0), false), Some(1));
    // A small gain is not worth a migration: a balanced task on a slightly read-heavy cluster
    // stays.
    let clusters = [cluster(1, 0, 2), cluster(0, 0, 1)];
    assert_eq!(choose(&clusters, Class::Balanced, Some(0), false), Some(0));
    // Oversubscribed: nobody moves, however unbalanced.
    let clusters = [cluster(4, 0, 0), cluster(0, 4, 0)];
    assert_eq!(choose(&clusters, Class::Read, Some(0), true), Some(0));
    assert_eq!(choose(&clusters, Class::Read, Some(0), false), Some(1));
    // A stale current index is ignored.
    assert_eq!(choose(&clusters, Class::Read, Some(9), false), Some(1));
}

#[test]
fn placing_a_mixed_population_balances_every_cluster() {
    // Eight readers and eight writers arrive alternately in phases; every cluster ends with both.
    let mut clusters = [Cluster::default(); 4];
    let arrivals = [Class::Read; 8].into_iter().chain([Class::Write; 8]);
    for c in arrivals {
        let i = choose(&clusters, c, None, false).unwrap();
        clusters[i].enter(c);
    }
    for (i, k) in clusters.iter().enumerate() {
        assert!(k.imbalance() <= 80, "cluster {i}: {k:?}");
        assert_eq!(k.tasks, 4, "cluster {i}: {k:?}");
    }
}
