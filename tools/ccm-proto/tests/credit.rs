//! Unit tests of `credit`: the device's credit check with stale heads, back-pressure counters, and
//! the host's head publishing policies.

use ccm_proto::credit::{Backpressure, CreditError, DeviceCredit, HeadPublisher, PublishPolicy};
use ccm_proto::ring::{RingGeometry, RingIndex};

fn idx(raw: u32) -> RingIndex {
    RingIndex::new(raw)
}

fn geo(capacity: u32) -> RingGeometry {
    RingGeometry::new(capacity).unwrap()
}

#[test]
fn device_produces_only_within_credit() {
    let mut d = DeviceCredit::new(geo(4), idx(0));
    assert_eq!(d.available(), 4);
    assert_eq!(d.try_reserve(3), Ok(idx(0)));
    assert_eq!((d.tail(), d.in_flight(), d.available()), (idx(3), 3, 1));
    assert!(d.can_reserve(1));
    assert!(!d.can_reserve(2));
    assert_eq!(
        d.try_reserve(2),
        Err(CreditError::NoCredit { available: 1 })
    );
    assert_eq!(d.tail(), idx(3), "a refusal reserves nothing");
    assert_eq!(d.try_reserve(1), Ok(idx(3)));
    assert_eq!(d.available(), 0);
    assert_eq!(
        d.try_reserve(0),
        Ok(idx(4)),
        "an empty reservation always succeeds"
    );
}

#[test]
fn backpressure_counts_refusals_and_episodes() {
    let mut d = DeviceCredit::new(geo(2), idx(0));
    d.try_reserve(2).unwrap();
    assert!(!d.is_stalled());
    assert_eq!(
        d.try_reserve(1),
        Err(CreditError::NoCredit { available: 0 })
    );
    assert_eq!(
        d.try_reserve(1),
        Err(CreditError::NoCredit { available: 0 })
    );
    assert!(d.is_stalled());
    assert_eq!(
        d.backpressure(),
        Backpressure {
            refusals: 2,
            episodes: 1
        }
    );
    assert_eq!(d.receive_head(idx(1)), Ok(1));
    assert_eq!(d.try_reserve(1), Ok(idx(2)));
    assert!(!d.is_stalled());
    assert_eq!(
        d.try_reserve(1),
        Err(CreditError::NoCredit { available: 0 })
    );
    assert_eq!(
        d.backpressure(),
        Backpressure {
            refusals: 3,
            episodes: 2
        }
    );
    // A request larger than the ring is an error of the caller, not back-pressure.
    assert_eq!(d.try_reserve(3), Err(CreditError::RequestTooLarge));
    assert_eq!(
        d.backpressure(),
        Backpressure {
            refusals: 3,
            episodes: 2
        }
    );
}

#[test]
fn stale_heads_are_conservative() {
    let mut d = DeviceCredit::new(geo(4), idx(0));
    d.try_reserve(4).unwrap();
    // The host has released up to 3 but the device still reads the old head 0, then 2, then 2.
    assert_eq!(d.receive_head(idx(0)), Ok(0));
    assert_eq!(d.available(), 0);
    assert_eq!(d.receive_head(idx(2)), Ok(2));
    assert_eq!(d.receive_head(idx(2)), Ok(0));
    assert_eq!(d.available(), 2);
    assert_eq!(d.head_seen(), idx(2));
}

#[test]
fn device_rejects_impossible_heads() {
    let mut d = DeviceCredit::new(geo(4), idx(10));
    d.try_reserve(3).unwrap();
    d.receive_head(idx(12)).unwrap();
    assert_eq!(d.receive_head(idx(11)), Err(CreditError::HeadRegressed));
    assert_eq!(d.receive_head(idx(0)), Err(CreditError::HeadRegressed));
    assert_eq!(d.receive_head(idx(14)), Err(CreditError::HeadBeyondTail));
    assert_eq!(d.receive_head(idx(1000)), Err(CreditError::HeadBeyondTail));
    assert_eq!(d.head_seen(), idx(12));
    assert_eq!(d.receive_head(idx(13)), Ok(1));
}

#[test]
fn device_credit_across_the_wrap() {
    let mut d = DeviceCredit::new(geo(4), idx(u32::MAX - 1));
    assert_eq!(d.try_reserve(3), Ok(idx(u32::MAX - 1)));
    assert_eq!(d.tail(), idx(1));
    assert_eq!(d.in_flight(), 3);
    assert_eq!(d.receive_head(idx(0)), Ok(2));
    assert_eq!(d.available(), 3);
    assert_eq!(d.try_reserve(3), Ok(idx(1)));
    assert_eq!(d.tail(), idx(4));
    assert_eq!(
        d.receive_head(idx(u32::MAX)),
        Err(CreditError::HeadRegressed)
    );
}

#[test]
fn publish_every_release() {
    let mut p = HeadPublisher::new(geo(4), PublishPolicy::EveryRelease, idx(0)).unwrap();
    assert_eq!(p.on_release(idx(0), idx(3)), Ok(None));
    assert_eq!(p.on_release(idx(1), idx(3)), Ok(Some(idx(1))));
    assert_eq!(p.on_release(idx(1), idx(3)), Ok(None));
    assert_eq!(p.on_release(idx(3), idx(3)), Ok(Some(idx(3))));
    assert_eq!(p.published(), idx(3));
}

#[test]
fn published_heads_never_go_backwards() {
    let mut p = HeadPublisher::new(geo(4), PublishPolicy::EveryRelease, idx(5)).unwrap();
    p.on_release(idx(7), idx(8)).unwrap();
    assert_eq!(
        p.on_release(idx(6), idx(8)),
        Err(CreditError::HeadRegressed)
    );
    assert_eq!(p.flush(idx(6)), Err(CreditError::HeadRegressed));
    assert_eq!(
        p.on_release(idx(9), idx(8)),
        Err(CreditError::HeadBeyondTail)
    );
    assert_eq!(p.flush(idx(12)), Err(CreditError::HeadBeyondTail));
    assert_eq!(p.published(), idx(7));
}

#[test]
fn publish_batched_with_drain_rule() {
    let policy = PublishPolicy::Batched { threshold: 3 };
    let mut p = HeadPublisher::new(geo(8), policy, idx(u32::MAX)).unwrap();
    let tail = idx(6);
    assert_eq!(p.on_release(idx(0), tail), Ok(None));
    assert_eq!(p.on_release(idx(1), tail), Ok(None));
    assert_eq!(
        p.on_release(idx(2), tail),
        Ok(Some(idx(2))),
        "advance of 3 reaches the threshold"
    );
    assert_eq!(p.on_release(idx(3), tail), Ok(None));
    assert_eq!(p.on_release(idx(6), tail), Ok(Some(idx(6))));
    assert_eq!(
        p.on_release(idx(7), idx(7)),
        Ok(Some(idx(7))),
        "drained: publish below threshold"
    );
    assert_eq!(p.on_release(idx(7), idx(7)), Ok(None));
    assert_eq!(p.policy(), policy);
}

#[test]
fn flush_publishes_regardless_of_policy() {
    let mut p =
        HeadPublisher::new(geo(8), PublishPolicy::Batched { threshold: 8 }, idx(0)).unwrap();
    assert_eq!(p.on_release(idx(2), idx(5)), Ok(None));
    assert_eq!(p.flush(idx(2)), Ok(Some(idx(2))));
    assert_eq!(p.flush(idx(2)), Ok(None));
    assert_eq!(p.published(), idx(2));
}

#[test]
fn batched_threshold_is_validated() {
    let g = geo(4);
    let bad = |threshold| HeadPublisher::new(g, PublishPolicy::Batched { threshold }, idx(0));
    assert_eq!(bad(0).map(|_| ()), Err(CreditError::InvalidThreshold));
    assert_eq!(bad(5).map(|_| ()), Err(CreditError::InvalidThreshold));
    assert!(bad(4).is_ok());
    assert!(bad(1).is_ok());
}

#[test]
fn errors_display_their_cause() {
    assert_eq!(
        CreditError::NoCredit { available: 3 }.to_string(),
        "no credit: only 3 slots free"
    );
}
