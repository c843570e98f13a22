//! Tests of `thermal`: heating to the throttle threshold in the documented time, cooling,
//! hysteresis, steady states, and arithmetic safety for any input.

use proptest::prelude::*;
use reflux_proto::thermal::{
    Thermal, ThermalError, ThermalParams, ThrottleChange, MAX_MILLI_C, OCP_THROTTLE_MILLI_C,
};

const MS: u64 = 1000;
const S: u64 = 1_000_000;

fn model() -> Thermal {
    Thermal::new(ThermalParams::DEFAULT).unwrap()
}

/// Runs `ticks` ticks of `dt_us` at `busy_permille` utilisation of all cores; returns the times
/// (µs since the start of the run) of every throttle change.
fn run(t: &mut Thermal, dt_us: u64, ticks: u64, busy_permille: u64) -> Vec<(u64, ThrottleChange)> {
    let cores = u64::from(t.params().cores);
    let mut changes = Vec::new();
    for i in 1..=ticks {
        let busy = cores * dt_us * busy_permille / 1000;
        if let Some(c) = t.tick(dt_us, busy) {
            changes.push((i * dt_us, c));
        }
    }
    changes
}

#[test]
fn defaults_are_valid_and_documented() {
    let p = ThermalParams::DEFAULT;
    assert_eq!(p, ThermalParams::default());
    assert_eq!(p.validate(), Ok(()));
    assert_eq!(p.throttle_milli_c, 77_000);
    assert_eq!(OCP_THROTTLE_MILLI_C, 77_000);
    assert_eq!(p.unthrottle_milli_c, 72_000);
    let t = model();
    assert_eq!(t.temp_milli_c(), 35_000);
    assert!(!t.throttled());
    assert_eq!(t.speed_permille(), 1000);
}

#[test]
fn parameters_are_validated() {
    let d = ThermalParams::DEFAULT;
    let bad = [
        (
            ThermalParams {
                unthrottle_milli_c: 77_000,
                ..d
            },
            ThermalError::Thresholds,
        ),
        (
            ThermalParams {
                ambient_milli_c: 72_000,
                ..d
            },
            ThermalError::Thresholds,
        ),
        (
            ThermalParams {
                throttle_milli_c: MAX_MILLI_C + 1,
                ..d
            },
            ThermalError::Thresholds,
        ),
        (
            ThermalParams {
                full_load_rise_milli_c: MAX_MILLI_C + 1,
                ..d
            },
            ThermalError::Rise,
        ),
        (ThermalParams { tau_us: 0, ..d }, ThermalError::Tau),
        (ThermalParams { cores: 0, ..d }, ThermalError::Cores),
        (
            ThermalParams {
                throttled_speed_permille: 0,
                ..d
            },
            ThermalError::ThrottledSpeed,
        ),
        (
            ThermalParams {
                throttled_speed_permille: 1001,
                ..d
            },
            ThermalError::ThrottledSpeed,
        ),
    ];
    for (p, e) in bad {
        assert_eq!(Thermal::new(p), Err(e), "{p:?}");
    }
}

#[test]
fn full_load_throttles_after_about_2_4_seconds() {
    // Documented: tau * ln(60 / 18) = 2.408 s, whatever the tick.
    for dt in [10, MS, 10 * MS, 100 * MS] {
        let mut t = model();
        let mut last = t.temp_milli_c();
        let mut throttled_at = None;
        for i in 1..=(5 * S / dt) {
            let change = t.tick(dt, 4 * dt);
            assert!(t.temp_milli_c() >= last, "heating is monotone");
            last = t.temp_milli_c();
            if change == Some(ThrottleChange::Throttled) {
                throttled_at = Some(i * dt);
                break;
            }
            assert_eq!(change, None);
        }
        let at = throttled_at.expect("throttles within 5 s");
        assert!(
            (2_350 * MS..=2_550 * MS).contains(&at),
            "tick {dt} us: throttled at {at} us"
        );
        assert!(t.throttled());
        assert_eq!(t.speed_permille(), 500);
        assert_eq!(t.throttle_events(), 1);
        assert_eq!(t.util_permille(), 1000);
    }
}

#[test]
fn idle_cools_below_unthrottle_then_toward_ambient() {
    let mut t = model();
    t.set_temp_milli_c(77_000);
    assert_eq!(t.tick(MS, 4 * MS), Some(ThrottleChange::Throttled));
    // Documented: 77 -> 72 in tau * ln(42 / 37) = 0.25 s; -> 40 in tau * ln(42 / 5) = 4.3 s.
    let changes = run(&mut t, MS, 300, 0);
    assert_eq!(changes.len(), 1);
    let (at, change) = changes[0];
    assert_eq!(change, ThrottleChange::Unthrottled);
    assert!(
        (230 * MS..=270 * MS).contains(&at),
        "unthrottled after {at} us"
    );
    run(&mut t, MS, 4_100, 0);
    assert!(
        t.temp_milli_c() < 40_000,
        "{} after 4.4 s",
        t.temp_milli_c()
    );
    run(&mut t, MS, 30_000, 0);
    assert!(t.temp_milli_c() >= 35_000 && t.temp_milli_c() < 35_010);
    assert_eq!(t.util_permille(), 0);
}

#[test]
fn sustained_full_load_cycles_without_flapping() {
    // Documented: throttled (half power) it heads for 65 C and unthrottles after ~1.1 s; then
    // ~0.5 s back up to 77 C: a ~1.6 s cycle.
    let mut t = model();
    let changes = run(&mut t, MS, 60_000, 1000);
    let throttles = changes
        .iter()
        .filter(|(_, c)| *c == ThrottleChange::Throttled)
        .count();
    assert!(
        (33..=40).contains(&throttles),
        "{throttles} throttle events in 60 s"
    );
    assert_eq!(t.throttle_events(), throttles as u64);
    // Changes alternate, and every state lasts at least 0.4 s.
    for pair in changes.windows(2) {
        assert_ne!(pair[0].1, pair[1].1);
        assert!(pair[1].0 - pair[0].0 >= 400 * MS, "{pair:?}");
    }
    let throttled_us: u64 = changes
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| c[1].0 - c[0].0)
        .sum();
    let share = throttled_us * 100 / (changes.last().unwrap().0 - changes[0].0);
    assert!((60..=75).contains(&share), "throttled {share}% of the time");
}

#[test]
fn constant_load_at_the_threshold_does_not_flap() {
    // A load whose unthrottled steady state is just above 77 C.
    let mut t = model();
    t.set_temp_milli_c(76_900);
    let changes = run(&mut t, MS, 60_000, 701);
    assert!(!changes.is_empty(), "it does reach the threshold");
    for pair in changes.windows(2) {
        assert!(
            pair[1].0 - pair[0].0 >= 500 * MS,
            "state changes {} ms apart",
            (pair[1].0 - pair[0].0) / MS
        );
    }
    // Just below: never throttles.
    let mut t = model();
    run(&mut t, MS, 60_000, 699);
    assert!(!t.throttled());
    assert_eq!(t.throttle_events(), 0);
    assert!(t.temp_milli_c() > 76_500 && t.temp_milli_c() < 77_000);
}

#[test]
fn jitter_around_the_threshold_is_absorbed_by_hysteresis() {
    // Without the power drop (throttled at full speed), the temperature hovers at 77 C with
    // tick-to-tick jitter from an on/off load: one throttle, no unthrottle.
    let p = ThermalParams {
        throttled_speed_permille: 1000,
        ..ThermalParams::DEFAULT
    };
    let mut t = Thermal::new(p).unwrap();
    t.set_temp_milli_c(76_990);
    let mut changes = 0;
    let mut seen_below = false;
    for i in 0..60_000u64 {
        // 70 % average load in a 10-tick pattern: steady state 77.0 C.
        let busy = if i % 10 < 7 { 4 * MS } else { 0 };
        if t.tick(MS, busy).is_some() {
            changes += 1;
        }
        seen_below |= t.temp_milli_c() < 77_000;
    }
    assert!(seen_below, "the temperature does dip below the threshold");
    assert_eq!(changes, 1);
    assert!(t.throttled());
}

#[test]
fn steady_state_is_ambient_plus_rise_times_utilisation() {
    for (permille, want) in [
        (0u64, 35_000u32),
        (250, 50_000),
        (500, 65_000),
        (650, 74_000),
    ] {
        let mut t = model();
        run(&mut t, MS, 30_000, permille);
        let got = t.temp_milli_c();
        assert!(got.abs_diff(want) <= 100, "{permille}: {got} vs {want}");
        assert_eq!(u64::from(t.util_permille()), permille);
        // One long tick gets there too, short by the implicit step's `R·u·τ/(τ + dt)` (33 mC).
        let mut t = model();
        t.tick(3600 * S, 4 * 3600 * S * permille / 1000);
        assert!(t.temp_milli_c() <= want && t.temp_milli_c() + 40 >= want);
    }
}

#[test]
fn extreme_inputs_do_not_overflow() {
    let mut t = model();
    assert_eq!(t.tick(0, u64::MAX), None, "no time, no change");
    assert_eq!(t.temp_milli_c(), 35_000);
    t.tick(u64::MAX, u64::MAX);
    // Fully busy for ~584,000 years: the unthrottled steady state.
    assert!(
        t.temp_milli_c().abs_diff(95_000) <= 10,
        "{}",
        t.temp_milli_c()
    );
    assert!(t.throttled());
    t.tick(u64::MAX, 0);
    assert!(t.temp_milli_c() < 35_010);
    t.tick(1, u64::MAX);
    assert_eq!(
        t.util_permille(),
        1000,
        "busy beyond the cores counts as fully busy"
    );
    t.set_temp_milli_c(u32::MAX);
    assert_eq!(t.temp_milli_c(), MAX_MILLI_C);
    t.set_temp_milli_c(0);
    assert_eq!(t.temp_milli_c(), 35_000);
    // The largest parameters.
    let p = ThermalParams {
        ambient_milli_c: 0,
        unthrottle_milli_c: MAX_MILLI_C - 1,
        throttle_milli_c: MAX_MILLI_C,
        full_load_rise_milli_c: MAX_MILLI_C,
        tau_us: u32::MAX,
        cores: u32::MAX,
        throttled_speed_permille: 1000,
    };
    let mut t = Thermal::new(p).unwrap();
    for (dt, busy) in [
        (1, u64::MAX),
        (u64::MAX, u64::MAX),
        (u64::MAX / 3, 7),
        (S, u64::MAX),
    ] {
        t.tick(dt, busy);
        assert!(t.temp_milli_c() <= MAX_MILLI_C);
    }
}

proptest! {
    /// Any sequence of ticks keeps the temperature between ambient and the model's maximum and
    /// the utilisation at most 1000 permille; changes alternate.
    #[test]
    fn any_ticks_stay_in_range(
        ticks in proptest::collection::vec(
            (prop_oneof![0u64..10_000, any::<u64>()], prop_oneof![0u64..100_000, any::<u64>()]),
            1..200,
        ),
    ) {
        let mut t = model();
        let mut last = None;
        for (dt, busy) in ticks {
            if let Some(c) = t.tick(dt, busy) {
                prop_assert_ne!(Some(c), last);
                last = Some(c);
            }
            prop_assert!((35_000..=MAX_MILLI_C).contains(&t.temp_milli_c()));
            prop_assert!(t.util_permille() <= 1000);
            prop_assert_eq!(t.throttled(), last == Some(ThrottleChange::Throttled));
        }
    }
}
