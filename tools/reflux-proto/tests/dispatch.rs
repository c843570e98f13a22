// SPDX-License-Identifier: GPL-2.0

//! Request-level dispatch: profiling, then the expected-completion rule, never re-profiled.

use reflux_proto::dispatch::Dispatch;
use reflux_proto::pipeline::Side;

#[test]
fn profiles_both_sides_then_prefers_the_cheaper() {
    let mut d = Dispatch::new(2);
    let mut sides = Vec::new();
    for _ in 0..4 {
        sides.push(d.choose());
    }
    assert_eq!(sides.iter().filter(|s| **s == Side::Host).count(), 2);
    assert!(!d.profiled());
    // The host takes 3 ms, the device 1 ms.
    for s in sides {
        d.finished(
            s,
            if s == Side::Host {
                3_000_000
            } else {
                1_000_000
            },
        );
    }
    assert!(d.profiled());
    assert_eq!(d.cost_ns(Side::Device), Some(1_000_000));
    assert_eq!(d.cost_ns(Side::Host), Some(3_000_000));
    // Idle: the device. With 3 on the device, (3+1)*1 > (0+1)*3: the host.
    assert_eq!(d.choose(), Side::Device);
    assert_eq!(d.choose(), Side::Device);
    assert_eq!(d.choose(), Side::Device);
    assert_eq!(d.choose(), Side::Host);
    assert_eq!(d.outstanding(Side::Device), 3);
    assert_eq!(d.outstanding(Side::Host), 1);
}

#[test]
fn the_profile_is_never_revised() {
    let mut d = Dispatch::new(1);
    let a = d.choose();
    let b = d.choose();
    assert_ne!(a, b);
    d.finished(Side::Host, 2_000);
    d.finished(Side::Device, 1_000);
    // The device becomes ten times slower: the dispatcher does not notice.
    for _ in 0..100 {
        let s = d.choose();
        d.finished(s, if s == Side::Device { 10_000 } else { 2_000 });
    }
    assert_eq!(d.cost_ns(Side::Device), Some(1_000));
}

#[test]
fn zero_profile_is_one() {
    let mut d = Dispatch::new(0);
    let s = d.choose();
    d.finished(s, 5);
    assert!(!d.profiled());
    let t = d.choose();
    assert_ne!(s, t);
    d.finished(t, 7);
    assert!(d.profiled());
}
