// SPDX-License-Identifier: GPL-2.0

//! Request-level dispatch: profiling, then the faster side or the expected-completion rule,
//! never re-profiled.

use reflux_proto::dispatch::{Dispatch, Rule};
use reflux_proto::pipeline::Side;

#[test]
fn profiles_both_sides_then_balances_by_expected_wait() {
    let mut d = Dispatch::new(2, Rule::ExpectedWait);
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
    let mut d = Dispatch::new(1, Rule::ExpectedWait);
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
    let mut d = Dispatch::new(0, Rule::Faster);
    let s = d.choose();
    d.finished(s, 5);
    assert!(!d.profiled());
    let t = d.choose();
    assert_ne!(s, t);
    d.finished(t, 7);
    assert!(d.profiled());
}

#[test]
fn the_faster_rule_sends_everything_to_the_profiled_faster_side() {
    for (host, device, want) in [
        (3_000_000, 1_000_000, Side::Device),
        (1_000_000, 3_000_000, Side::Host),
    ] {
        let mut d = Dispatch::new(2, Rule::Faster);
        assert_eq!(d.rule(), Rule::Faster);
        let sides: Vec<_> = (0..4).map(|_| d.choose()).collect();
        for s in sides {
            d.finished(s, if s == Side::Host { host } else { device });
        }
        assert!(d.profiled());
        // However much is queued there, and however slow it has become.
        for _ in 0..100 {
            assert_eq!(d.choose(), want);
        }
        assert_eq!(d.outstanding(want), 100);
        assert_eq!(d.outstanding(want.other()), 0);
        for _ in 0..100 {
            d.finished(want, 50 * host.max(device));
        }
        assert_eq!(d.choose(), want);
    }
}
