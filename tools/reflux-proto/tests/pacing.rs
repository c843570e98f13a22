//! Tests of `pacing`: the speed factor's delay and the pacer's debt and credit.

use proptest::prelude::*;
use reflux_proto::pacing::{
    device_ns, effective_speed_permille, extra_delay_ns, host_ns_for_bytes, Pacer, PacerError,
    PacerParams, HOST_SPEED_PERMILLE,
};

#[test]
fn speed_factor() {
    assert_eq!(device_ns(1000, 500), 2000, "half speed takes twice as long");
    assert_eq!(extra_delay_ns(1000, 500), 1000);
    assert_eq!(extra_delay_ns(1000, 250), 3000);
    assert_eq!(extra_delay_ns(1000, HOST_SPEED_PERMILLE), 0);
    assert_eq!(
        extra_delay_ns(1000, 2000),
        0,
        "a faster engine cannot run faster than its CPU"
    );
    assert_eq!(device_ns(999, 3), 333_000);
    assert_eq!(device_ns(1, 0), 1000, "speed 0 counts as 1 permille");
    assert_eq!(device_ns(u64::MAX, 1), u64::MAX, "saturates");
    assert_eq!(
        extra_delay_ns(u64::MAX, 500),
        0,
        "saturated: nothing more to add"
    );
    assert_eq!(
        device_ns(u64::MAX, u32::MAX),
        u64::MAX / u64::from(u32::MAX) * 1000
            + (u64::MAX % u64::from(u32::MAX)) * 1000 / u64::from(u32::MAX)
    );
}

#[test]
fn throttling_halves_the_speed() {
    assert_eq!(effective_speed_permille(500, 1000), 500);
    assert_eq!(effective_speed_permille(500, 500), 250);
    assert_eq!(effective_speed_permille(1000, 500), 500);
    assert_eq!(effective_speed_permille(0, 500), 1, "never zero");
    assert_eq!(effective_speed_permille(u32::MAX, u32::MAX), u32::MAX);
    // At half host speed, throttled: 4x the host time, 3x extra.
    let s = effective_speed_permille(500, 500);
    assert_eq!(extra_delay_ns(10_000, s), 30_000);
}

#[test]
fn per_byte_cost() {
    assert_eq!(host_ns_for_bytes(4096, 250), 1024);
    assert_eq!(host_ns_for_bytes(1, 1), 1, "rounded up");
    assert_eq!(host_ns_for_bytes(0, 1000), 0);
    assert_eq!(host_ns_for_bytes(u64::MAX, u64::MAX), u64::MAX / 1000 + 1);
}

proptest! {
    /// `device_ns` is `floor(host_ns * 1000 / speed)`, saturated.
    #[test]
    fn device_ns_is_exact(host in any::<u64>(), speed in 1u32..) {
        let exact = u128::from(host) * 1000 / u128::from(speed);
        let want = u64::try_from(exact).unwrap_or(u64::MAX);
        prop_assert_eq!(device_ns(host, speed), want);
        prop_assert!(extra_delay_ns(host, speed) <= want);
    }
}

#[test]
fn pacer_accumulates_until_a_sleep_is_worth_it() {
    assert_eq!(
        Pacer::new(PacerParams {
            min_sleep_ns: 0,
            max_credit_ns: 0
        }),
        Err(PacerError::MinSleep)
    );
    let mut p = Pacer::new(PacerParams::DEFAULT).unwrap();
    // 10 us of work at half speed owes 10 us: below the 50 us minimum.
    for _ in 0..4 {
        assert_eq!(p.charge(10_000, 500), None);
    }
    assert_eq!(p.owed_ns(), 40_000);
    assert_eq!(p.charge(10_000, 500), Some(50_000));
    // Slept a little short: the rest stays owed.
    p.paid(45_000);
    assert_eq!((p.owed_ns(), p.credit_ns()), (5_000, 0));
    assert_eq!(p.due(), None);
    // Overslept: the surplus is credit, used up by later work.
    p.paid(25_000);
    assert_eq!((p.owed_ns(), p.credit_ns()), (0, 20_000));
    assert_eq!(p.charge(10_000, 500), None);
    assert_eq!((p.owed_ns(), p.credit_ns()), (0, 10_000));
    assert_eq!(p.charge(30_000, 500), None);
    assert_eq!((p.owed_ns(), p.credit_ns()), (20_000, 0));
    // A long preemption is credited only up to the cap.
    p.paid(1_000_000_000);
    assert_eq!((p.owed_ns(), p.credit_ns()), (0, 1_000_000));
    // At host speed nothing is owed.
    assert_eq!(p.charge(u64::MAX, HOST_SPEED_PERMILLE), None);
    assert_eq!(p.credit_ns(), 1_000_000);
}

#[test]
fn work_done_elsewhere_owes_its_whole_time() {
    let mut p = Pacer::new(PacerParams::DEFAULT).unwrap();
    // An engine step modelled at 30 us of host time, at twice the host's speed: 15 us, all of
    // it owed (a local step would owe nothing at this speed).
    assert_eq!(p.owe(device_ns(30_000, 2000)), None);
    assert_eq!(p.charge(30_000, 2000), None);
    assert_eq!(p.owed_ns(), 15_000);
    assert_eq!(p.owe(device_ns(80_000, 2000)), Some(55_000));
    // The time spent waiting for the engine is credit against what it owes.
    p.paid(55_000);
    p.paid(12_000);
    assert_eq!((p.owed_ns(), p.credit_ns()), (0, 12_000));
    assert_eq!(p.owe(20_000), None);
    assert_eq!((p.owed_ns(), p.credit_ns()), (8_000, 0));
}

proptest! {
    /// Over any sequence of work and imprecise sleeps, the time slept tracks the delay owed:
    /// never more than the credit cap ahead, never more than one minimum sleep (plus the last
    /// charge) behind.
    #[test]
    fn long_run_speed_is_right(
        steps in proptest::collection::vec((0u64..200_000, 100u32..=1000, 0u64..30_000, any::<bool>()), 1..300),
    ) {
        let params = PacerParams::DEFAULT;
        let mut p = Pacer::new(params).unwrap();
        let (mut owed_total, mut slept_total) = (0u128, 0u128);
        for (host_ns, speed, jitter, over) in steps {
            owed_total += u128::from(extra_delay_ns(host_ns, speed));
            if let Some(sleep) = p.charge(host_ns, speed) {
                prop_assert!(sleep >= params.min_sleep_ns);
                let slept = if over { sleep + jitter } else { sleep.saturating_sub(jitter) };
                p.paid(slept);
                slept_total += u128::from(slept);
            }
            prop_assert!(p.owed_ns() == 0 || p.credit_ns() == 0);
            prop_assert!(p.credit_ns() <= params.max_credit_ns);
            // owed_total = slept_total + owed - credit, up to the credit discarded by the cap.
            prop_assert!(owed_total + u128::from(p.credit_ns()) <= slept_total + u128::from(p.owed_ns()));
        }
        prop_assert!(slept_total <= owed_total + u128::from(p.credit_ns()) + 30_000 * 300);
    }
}
