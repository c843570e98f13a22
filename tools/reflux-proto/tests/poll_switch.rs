//! Tests of `poll_switch`: switching on the gap EWMA, hysteresis, robustness.

use proptest::prelude::*;
use reflux_proto::poll_switch::{
    PollSwitch, PollSwitchError, PollSwitchParams, WaitMode, MAX_GAP_LIMIT_NS,
};

const US: u64 = 1000;

fn switch() -> PollSwitch {
    PollSwitch::new(PollSwitchParams::DEFAULT).unwrap()
}

#[test]
fn parameters_are_validated() {
    let d = PollSwitchParams::DEFAULT;
    assert_eq!(d, PollSwitchParams::default());
    assert_eq!(d.validate(), Ok(()));
    let cases = [
        (
            PollSwitchParams {
                poll_below_ns: 50_000,
                ..d
            },
            PollSwitchError::Thresholds,
        ),
        (
            PollSwitchParams {
                weight_shift: 0,
                ..d
            },
            PollSwitchError::WeightShift,
        ),
        (
            PollSwitchParams {
                weight_shift: 17,
                ..d
            },
            PollSwitchError::WeightShift,
        ),
        (
            PollSwitchParams {
                max_gap_ns: 49_999,
                ..d
            },
            PollSwitchError::MaxGap,
        ),
        (
            PollSwitchParams {
                max_gap_ns: MAX_GAP_LIMIT_NS + 1,
                ..d
            },
            PollSwitchError::MaxGap,
        ),
    ];
    for (p, e) in cases {
        assert_eq!(PollSwitch::new(p), Err(e));
    }
}

#[test]
fn polls_when_gaps_shrink_and_sleeps_when_they_grow() {
    let mut s = switch();
    assert_eq!(s.mode(), WaitMode::Sleep, "low queue depth first: sleep");
    assert_eq!(
        s.ewma_ns(),
        50 * US,
        "the average starts at the sleep threshold"
    );
    // High queue depth: completions 5 us apart. A run of them, not one, switches to polling:
    // 5 + 45 * (7/8)^n < 20 from n = 9.
    let polled_after = (1..=100).find(|_| s.record_gap(5 * US) == WaitMode::Poll);
    assert_eq!(polled_after, Some(9));
    // Stalls are clamped to 200 us: one does not stop the polling, two in a row do.
    assert_eq!(s.record_gap(10_000 * US), WaitMode::Poll);
    assert_eq!(s.record_gap(10_000 * US), WaitMode::Sleep);
    assert_eq!(s.switches(), 2);
    // Back to polling, then low queue depth: 500 us apart.
    while s.record_gap(5 * US) != WaitMode::Poll {}
    let slept_after = (1..=100).find(|_| s.record_gap(500 * US) == WaitMode::Sleep);
    assert_eq!(slept_after, Some(2));
    assert_eq!(s.switches(), 4);
    // A steady gap converges.
    for _ in 0..200 {
        s.record_gap(30 * US);
    }
    assert!(s.ewma_ns().abs_diff(30 * US) <= 8, "{}", s.ewma_ns());
}

/// Counts mode switches over `n` completions whose gaps cycle through `pattern`, after `warmup`
/// completions of the same pattern.
fn switches_on(s: &mut PollSwitch, pattern: &[u64], warmup: usize, n: usize) -> u64 {
    for &g in pattern.iter().cycle().take(warmup) {
        s.record_gap(g);
    }
    let before = s.switches();
    for &g in pattern.iter().cycle().take(n) {
        s.record_gap(g);
    }
    s.switches() - before
}

#[test]
fn alternating_gaps_inside_the_band_do_not_flap() {
    // Mean 35 us, inside the 20..50 us band: whichever mode the switch is in, it stays.
    let pattern = [10 * US, 60 * US];
    let mut sleeping = switch();
    assert_eq!(switches_on(&mut sleeping, &pattern, 100, 100_000), 0);
    assert_eq!(sleeping.mode(), WaitMode::Sleep);
    let mut polling = switch();
    while polling.record_gap(US) != WaitMode::Poll {}
    assert_eq!(switches_on(&mut polling, &pattern, 100, 100_000), 0);
    assert_eq!(polling.mode(), WaitMode::Poll);
}

#[test]
fn gaps_straddling_a_threshold_switch_at_most_once() {
    for pattern in [
        vec![19 * US, 21 * US],
        vec![49 * US, 51 * US],
        vec![US, 100 * US],
        vec![10 * US, 10 * US, 10 * US, 95 * US],
        vec![0, 0, 0, 1_000 * US],
    ] {
        let mut s = switch();
        let total = switches_on(&mut s, &pattern, 0, 100_000);
        assert!(total <= 1, "{pattern:?}: {total} switches");
    }
}

#[test]
fn huge_gaps_are_clamped() {
    let max = PollSwitchParams::DEFAULT.max_gap_ns;
    let mut s = switch();
    for _ in 0..1000 {
        s.record_gap(u64::MAX);
    }
    assert!(s.ewma_ns() <= max && s.ewma_ns() > max - 100);
    // A long idle period does not keep the switch asleep for long once the load is back.
    let back = (1..=100).find(|_| s.record_gap(US) == WaitMode::Poll);
    assert!(
        back.unwrap() <= 20,
        "polling again after {back:?} short gaps"
    );
    s.reset();
    assert_eq!((s.mode(), s.ewma_ns()), (WaitMode::Sleep, 50 * US));
}

proptest! {
    /// Any gaps: the average stays within the clamp, and a switch happens only beyond its
    /// threshold.
    #[test]
    fn switches_only_past_the_thresholds(
        shift in 1u32..=16,
        gaps in proptest::collection::vec(prop_oneof![0u64..100_000, any::<u64>()], 1..300),
    ) {
        let p = PollSwitchParams { weight_shift: shift, max_gap_ns: MAX_GAP_LIMIT_NS, ..PollSwitchParams::DEFAULT };
        let mut s = PollSwitch::new(p).unwrap();
        for g in gaps {
            let before = s.mode();
            let after = s.record_gap(g);
            prop_assert!(s.ewma_ns() <= MAX_GAP_LIMIT_NS);
            if before != after {
                match after {
                    WaitMode::Poll => prop_assert!(s.ewma_ns() < p.poll_below_ns),
                    WaitMode::Sleep => prop_assert!(s.ewma_ns() > p.sleep_above_ns),
                }
            }
        }
    }
}

#[test]
fn the_switch_reports_its_parameters() {
    let p = PollSwitchParams {
        poll_below_ns: 5_000_000,
        sleep_above_ns: 20_000_000,
        weight_shift: 3,
        max_gap_ns: 80_000_000,
    };
    let s = PollSwitch::new(p).unwrap();
    assert_eq!(s.params(), p);
}

#[test]
fn new_parameters_apply_to_a_running_switch() {
    let mut s = switch();
    for _ in 0..64 {
        s.record_gap(5 * US);
    }
    assert_eq!(s.mode(), WaitMode::Poll);
    let before = s.ewma_ns();
    // Bad parameters change nothing.
    let bad = PollSwitchParams {
        poll_below_ns: 60 * US,
        ..s.params()
    };
    assert_eq!(s.set_params(bad), Err(PollSwitchError::Thresholds));
    assert_eq!((s.ewma_ns(), s.mode()), (before, WaitMode::Poll));
    // A lower poll threshold keeps the average and the mode until the next gap decides.
    let lower = PollSwitchParams {
        poll_below_ns: 2 * US,
        ..s.params()
    };
    assert_eq!(s.set_params(lower), Ok(()));
    assert_eq!((s.ewma_ns(), s.mode()), (before, WaitMode::Poll));
    assert_eq!(s.record_gap(5 * US), WaitMode::Poll);
    for _ in 0..64 {
        s.record_gap(30 * US);
    }
    assert_eq!(s.mode(), WaitMode::Poll, "inside the band: no switch");
    for _ in 0..64 {
        s.record_gap(100 * US);
    }
    assert_eq!(s.mode(), WaitMode::Sleep);
    // A smaller gap clamp clamps the average too.
    let tight = PollSwitchParams {
        poll_below_ns: 2 * US,
        sleep_above_ns: 10 * US,
        max_gap_ns: 20 * US,
        ..s.params()
    };
    assert_eq!(s.set_params(tight), Ok(()));
    assert!(s.ewma_ns() <= 20 * US);
}
