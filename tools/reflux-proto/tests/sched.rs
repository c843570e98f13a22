//! Tests of `sched`: the score's arithmetic, upload and offload with their thresholds, headroom,
//! dwell, one migration per epoch, pinned actors, throttling, the log line, and safety for any
//! input.

use proptest::prelude::*;
use reflux_proto::pipeline::Side;
use reflux_proto::sched::{
    busy_permille, project_milli_c, q_dev_permille, queue_depth, score, t_dev_permille,
    u_host_permille, ActorScore, ActorView, Move, Sample, SchedError, SchedParams, Scheduler,
    MAX_BACKOFF_MS, MAX_DWELL_MS, MAX_LOGGED, MAX_SLOPE_MILLI_C_PER_S, MAX_TRACKED,
};
use reflux_proto::thermal::{Thermal, ThermalParams, MAX_MILLI_C, OCP_THROTTLE_MILLI_C};

const MS: u64 = 1_000_000;
const P: SchedParams = SchedParams::DEFAULT;
/// The defaults with the flap back-off on, for the tests of the back-off.
const FLAP: SchedParams = SchedParams {
    flap_backoff: true,
    ..P
};
/// The defaults with the thermal lookahead on, for the tests of the lookahead.
const LA: SchedParams = SchedParams {
    lookahead: true,
    ..P
};
/// Every extension of the paper's scheme on.
const ALL: SchedParams = SchedParams {
    flap_backoff: true,
    lookahead: true,
    engine_share: true,
    u_reflux_only: true,
    ..P
};

/// A sample in which the host's utilisation and ReFlux's own are alike.
fn sample(now_ns: u64, temp_milli_c: u32, host_util_permille: u32) -> Sample {
    Sample {
        now_ns,
        temp_milli_c,
        dev_util_permille: 0,
        host_util_permille,
        reflux_util_permille: host_util_permille,
        host_freq_permille: None,
        finished: 0,
    }
}

fn actor(id: u8, side: Side, dev_queue: u32) -> ActorView {
    ActorView {
        id,
        side,
        pinned: false,
        dev_queue,
        engine_share_permille: 1000,
        inflight: 0,
        last_move_ns: None,
    }
}

fn upload(actor: u8, score: u32) -> Option<Move> {
    Some(Move {
        actor,
        to: Side::Host,
        score,
    })
}

fn offload(actor: u8, score: u32) -> Option<Move> {
    Some(Move {
        actor,
        to: Side::Device,
        score,
    })
}

/// Applies a decided migration to the views, as the driver does.
fn apply(actors: &mut [ActorView], m: Option<Move>, now_ns: u64) {
    if let Some(m) = m {
        let a = actors.iter_mut().find(|a| a.id == m.actor).unwrap();
        assert_eq!(a.side, m.to.other());
        a.side = m.to;
        a.last_move_ns = Some(now_ns);
    }
}

#[test]
fn defaults_are_the_paper_s() {
    assert_eq!(P, SchedParams::default());
    assert_eq!(P.validate(), Ok(()));
    // §4.4: 10 ms epochs, S = 0.5·T + 0.3·U + 0.2·Q, 100 ms before an actor is reconsidered.
    assert_eq!(P.epoch_ms, 10);
    assert_eq!(
        (P.alpha_permille, P.beta_permille, P.gamma_permille),
        (500, 300, 200)
    );
    assert_eq!(P.dwell_ms, 100);
    // None of our extensions: the temperature now, the dwell alone, the queue depth itself, the
    // host's utilisation.
    assert_eq!(
        (P.lookahead, P.flap_backoff, P.engine_share, P.u_reflux_only),
        (false, false, false, false)
    );
    // The values the paper does not give.
    assert_eq!(P.ambient_milli_c, 35_000);
    assert_eq!(P.throttle_milli_c, OCP_THROTTLE_MILLI_C);
    assert_eq!(P.q_full, 32);
    assert_eq!((P.theta_permille, P.theta_low_permille), (650, 400));
    assert_eq!(P.host_saturated_permille, 950);
    assert_eq!(
        (P.headroom_temp_permille, P.headroom_util_permille),
        (500, 800)
    );
    assert_eq!(P.min_inflight_permille, 125);
    // The extensions' own values, used only when switched on.
    assert_eq!((P.flap_window_ms, P.max_backoff_ms), (1_000, 5_000));
    assert_eq!(P.lookahead_max_ms, 500);
    let s = Scheduler::new();
    assert_eq!((s.slope_milli_c_per_s(), s.upload_ns()), (0, None));
    assert_eq!(s.horizon_ns(&P), 0);
    assert_eq!(s.horizon_ns(&LA), 500 * MS);
    assert_eq!(s, Scheduler::default());
    assert_eq!(s.inflight_permille(), 1000);
    assert_eq!((s.epochs(), s.moves(), s.throttled_epochs()), (0, 0, 0));
    // The queue depth is the actor's own, whatever its engine share.
    let mut a = actor(1, Side::Device, 20);
    a.engine_share_permille = 100;
    assert_eq!(queue_depth(&P, &a), 20);
}

/// The worked example of the module documentation ("Defaults"), computed.
#[test]
fn the_defaults_worked_example() {
    // The lowest temperature at which a device-placed actor with `queue` requests is uploaded
    // (or the host saturated, throttled), with the host `host` permille busy.
    let above_theta = |queue: u32, host: u32| {
        (35_000..=MAX_MILLI_C).find(|&t| score(&P, &sample(0, t, host), queue) > P.theta_permille)
    };
    // Host 30 % busy: a full queue from 65.324 °C (T_dev 722), half a queue from 73.724 °C
    // (T_dev 922), an empty one never (at most 500 + 90).
    assert_eq!(above_theta(32, 300), Some(65_324));
    assert_eq!(t_dev_permille(&P, 65_324), 722);
    assert_eq!(above_theta(16, 300), Some(73_724));
    assert_eq!(t_dev_permille(&P, 73_724), 922);
    assert_eq!(above_theta(0, 300), None);
    let d = Scheduler::new().step(&P, &sample(0, 65_324, 300), &[actor(1, Side::Device, 32)]);
    assert_eq!(d.migrate, upload(1, 651));
    // Host 95 % busy (saturated): a full queue throttles from 48.944 °C (T_dev 332).
    assert_eq!(above_theta(32, 950), Some(48_944));
    assert_eq!(t_dev_permille(&P, 48_944), 332);
    let d = Scheduler::new().step(&P, &sample(0, 48_944, 950), &[actor(1, Side::Device, 32)]);
    assert!(d.throttle && d.migrate.is_none());
    let d = Scheduler::new().step(&P, &sample(0, 48_943, 950), &[actor(1, Side::Device, 32)]);
    assert!(!d.throttle);
    // Uploaded at 65.324 °C, the stage leaves the device idle: with the thermal model's
    // defaults it cools below the headroom, 56 °C, and the stage (its device queue empty) is
    // offloaded after this long.
    let mut dev = Thermal::new(ThermalParams::DEFAULT).unwrap();
    dev.set_temp_milli_c(65_324);
    let mut s = Scheduler::new();
    let mut a = actor(1, Side::Host, 0);
    a.last_move_ns = Some(0);
    let mut t = 0;
    let d = loop {
        t += 10 * MS;
        dev.tick(10_000, 0);
        let d = s.step(&P, &sample(t, dev.temp_milli_c(), 300), &[a]);
        if d.migrate.is_some() || t > 10_000 * MS {
            break d;
        }
    };
    // 0.74 s (τ · ln(30.324 / 21) = 0.735 s), at 55.965 °C: T_dev 499, S 249 + 90.
    assert_eq!((t / MS, dev.temp_milli_c()), (740, 55_965));
    assert_eq!(d.migrate, offload(1, 339));
}

#[test]
fn parameters_are_validated() {
    let d = P;
    let bad = [
        (SchedParams { epoch_ms: 0, ..d }, SchedError::Epoch),
        (
            SchedParams {
                epoch_ms: 1001,
                ..d
            },
            SchedError::Epoch,
        ),
        (
            SchedParams {
                alpha_permille: 600,
                ..d
            },
            SchedError::Weights,
        ),
        (
            SchedParams {
                gamma_permille: 100,
                ..d
            },
            SchedError::Weights,
        ),
        (
            // Would sum to 1000 modulo 2^32.
            SchedParams {
                alpha_permille: u32::MAX,
                beta_permille: 1001,
                gamma_permille: 0,
                ..d
            },
            SchedError::Weights,
        ),
        (
            SchedParams {
                ambient_milli_c: 77_000,
                ..d
            },
            SchedError::Temperatures,
        ),
        (
            SchedParams {
                throttle_milli_c: 30_000,
                ..d
            },
            SchedError::Temperatures,
        ),
        (
            SchedParams {
                throttle_milli_c: MAX_MILLI_C + 1,
                ..d
            },
            SchedError::Temperatures,
        ),
        (SchedParams { q_full: 0, ..d }, SchedError::QueueFull),
        (
            SchedParams {
                theta_low_permille: 650,
                ..d
            },
            SchedError::Thresholds,
        ),
        (
            SchedParams {
                theta_low_permille: 700,
                ..d
            },
            SchedError::Thresholds,
        ),
        (
            SchedParams {
                theta_permille: 1001,
                ..d
            },
            SchedError::Thresholds,
        ),
        (
            SchedParams {
                host_saturated_permille: 0,
                ..d
            },
            SchedError::HostSaturated,
        ),
        (
            SchedParams {
                host_saturated_permille: 1001,
                ..d
            },
            SchedError::HostSaturated,
        ),
        (
            SchedParams {
                headroom_temp_permille: 0,
                ..d
            },
            SchedError::Headroom,
        ),
        (
            SchedParams {
                headroom_util_permille: 1001,
                ..d
            },
            SchedError::Headroom,
        ),
        (
            SchedParams {
                dwell_ms: MAX_DWELL_MS + 1,
                ..d
            },
            SchedError::Dwell,
        ),
        (
            SchedParams {
                min_inflight_permille: 0,
                ..d
            },
            SchedError::MinInflight,
        ),
        (
            SchedParams {
                min_inflight_permille: 1001,
                ..d
            },
            SchedError::MinInflight,
        ),
    ];
    for (p, e) in bad {
        assert_eq!(p.validate(), Err(e), "{p:?}");
        assert!(!e.to_string().is_empty());
    }
    // The edges that are allowed.
    let good = [
        SchedParams { epoch_ms: 1, ..d },
        SchedParams {
            epoch_ms: 1000,
            ..d
        },
        SchedParams {
            alpha_permille: 1000,
            beta_permille: 0,
            gamma_permille: 0,
            ..d
        },
        SchedParams {
            ambient_milli_c: 0,
            throttle_milli_c: MAX_MILLI_C,
            ..d
        },
        SchedParams { q_full: 1, ..d },
        SchedParams {
            theta_permille: 1000,
            theta_low_permille: 0,
            ..d
        },
        SchedParams {
            theta_permille: 401,
            ..d
        },
        SchedParams {
            host_saturated_permille: 1000,
            headroom_temp_permille: 1,
            headroom_util_permille: 1000,
            ..d
        },
        SchedParams { dwell_ms: 0, ..d },
        SchedParams {
            dwell_ms: MAX_DWELL_MS,
            ..d
        },
        SchedParams {
            min_inflight_permille: 1,
            ..d
        },
        SchedParams {
            min_inflight_permille: 1000,
            ..d
        },
    ];
    for p in good {
        assert_eq!(p.validate(), Ok(()), "{p:?}");
    }
}

#[test]
fn error_messages_are_distinct() {
    let all = [
        SchedError::Epoch,
        SchedError::Weights,
        SchedError::Temperatures,
        SchedError::QueueFull,
        SchedError::Thresholds,
        SchedError::HostSaturated,
        SchedError::Headroom,
        SchedError::Dwell,
        SchedError::MinInflight,
        SchedError::Backoff,
    ];
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a.to_string(), b.to_string());
        }
    }
}

#[test]
fn normalised_terms() {
    // T_dev: (temp - 35 °C) / 42 °C, rounded down, clamped.
    assert_eq!(t_dev_permille(&P, 0), 0);
    assert_eq!(t_dev_permille(&P, 35_000), 0);
    assert_eq!(t_dev_permille(&P, 35_041), 0);
    assert_eq!(t_dev_permille(&P, 35_042), 1);
    assert_eq!(t_dev_permille(&P, 56_000), 500);
    assert_eq!(t_dev_permille(&P, 65_323), 721);
    assert_eq!(t_dev_permille(&P, 65_324), 722);
    assert_eq!(t_dev_permille(&P, 76_999), 999);
    assert_eq!(t_dev_permille(&P, 77_000), 1000);
    assert_eq!(t_dev_permille(&P, u32::MAX), 1000);
    // Q_dev: queue / 32, rounded down, clamped.
    assert_eq!(q_dev_permille(&P, 0), 0);
    assert_eq!(q_dev_permille(&P, 1), 31);
    assert_eq!(q_dev_permille(&P, 16), 500);
    assert_eq!(q_dev_permille(&P, 31), 968);
    assert_eq!(q_dev_permille(&P, 32), 1000);
    assert_eq!(q_dev_permille(&P, u32::MAX), 1000);
}

#[test]
fn score_arithmetic() {
    // Idle and cool: nothing.
    assert_eq!(score(&P, &sample(0, 35_000, 0), 0), 0);
    // Everything full: 1000.
    assert_eq!(score(&P, &sample(0, 77_000, 1000), 32), 1000);
    // T 500, U 300, Q 500: (500·500 + 300·300 + 200·500) / 1000 = 440.
    assert_eq!(score(&P, &sample(0, 56_000, 300), 16), 440);
    // T 833, U 300, Q 1000: (416_500 + 90_000 + 200_000) / 1000 = 706 (rounded down).
    assert_eq!(t_dev_permille(&P, 70_000), 833);
    assert_eq!(score(&P, &sample(0, 70_000, 300), 32), 706);
    // The upload edge of the module documentation: host 30 % busy, full queue.
    assert_eq!(score(&P, &sample(0, 65_323, 300), 32), 650);
    assert_eq!(score(&P, &sample(0, 65_324, 300), 32), 651);
    // Half-full queue: from 73.7 °C (T_dev 922).
    assert_eq!(score(&P, &sample(0, 73_723, 300), 16), 650);
    assert_eq!(score(&P, &sample(0, 73_724, 300), 16), 651);
    // An empty queue never exceeds θ with the host 30 % busy: 500 + 90.
    assert_eq!(score(&P, &sample(0, MAX_MILLI_C, 300), 0), 590);
    // Saturated host, full queue: from 48.9 °C (T_dev 332).
    assert_eq!(score(&P, &sample(0, 48_943, 950), 32), 650);
    assert_eq!(score(&P, &sample(0, 48_944, 950), 32), 651);
    // Out-of-range inputs are clamped: below ambient, utilisation above 1000, queue above full.
    assert_eq!(score(&P, &sample(0, 20_000, 5_000), 1_000), 500);
    // Other weights: temperature only.
    let t_only = SchedParams {
        alpha_permille: 1000,
        beta_permille: 0,
        gamma_permille: 0,
        ..P
    };
    assert_eq!(score(&t_only, &sample(0, 56_000, 1000), 32), 500);
}

#[test]
fn cool_device_moves_nothing() {
    let mut s = Scheduler::new();
    let actors = [actor(1, Side::Device, 32), actor(2, Side::Device, 0)];
    // 40 °C: T 119; S = 59 + 90 + 200 = 349 and 149.
    let d = s.step(&P, &sample(0, 40_000, 300), &actors);
    assert_eq!(d.migrate, None);
    assert!(!d.throttle);
    assert_eq!(d.inflight_permille, 1000);
    assert_eq!(d.t_dev_permille, 119);
    assert_eq!(d.u_host_permille, 300);
    assert_eq!(
        d.scores(),
        &[
            ActorScore {
                id: 1,
                side: Side::Device,
                score: 349
            },
            ActorScore {
                id: 2,
                side: Side::Device,
                score: 149
            },
        ]
    );
    assert_eq!((s.epochs(), s.moves()), (1, 0));
}

#[test]
fn hot_device_uploads_the_device_actor() {
    let mut s = Scheduler::new();
    // Same queue depth, same score; only the device-placed one can be uploaded.
    let actors = [actor(1, Side::Host, 32), actor(2, Side::Device, 32)];
    let d = s.step(&P, &sample(0, 70_000, 300), &actors);
    assert_eq!(d.migrate, upload(2, 706));
    assert!(!d.throttle);
    assert_eq!(d.inflight_permille, 1000);
    assert_eq!(s.moves(), 1);
}

#[test]
fn upload_starts_strictly_above_theta() {
    let actors = [actor(4, Side::Device, 32)];
    let d = Scheduler::new().step(&P, &sample(0, 65_323, 300), &actors);
    assert_eq!(d.migrate, None);
    let d = Scheduler::new().step(&P, &sample(0, 65_324, 300), &actors);
    assert_eq!(d.migrate, upload(4, 651));
}

#[test]
fn dwell_is_respected() {
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Device, 32)];
    let t0 = 5_000 * MS;
    let d = s.step(&P, &sample(t0, 70_000, 300), &actors);
    assert_eq!(d.migrate, upload(1, 706));
    apply(&mut actors, d.migrate, t0);
    // Back on the host, its device queue empty, and the device cool with headroom: it would be
    // offloaded, but not within 100 ms of its upload.
    actors[0].dev_queue = 0;
    for t in (t0 + 10 * MS..t0 + 100 * MS).step_by(10 * MS as usize) {
        let d = s.step(&P, &sample(t, 40_000, 300), &actors);
        assert_eq!(d.migrate, None, "at {} ms", (t - t0) / MS);
    }
    let d = s.step(&P, &sample(t0 + 100 * MS - 1, 40_000, 300), &actors);
    assert_eq!(d.migrate, None);
    let d = s.step(&P, &sample(t0 + 100 * MS, 40_000, 300), &actors);
    assert_eq!(d.migrate, offload(1, 149));
    apply(&mut actors, d.migrate, t0 + 100 * MS);
    // And it is not uploaded again right away either.
    actors[0].dev_queue = 32;
    let d = s.step(&P, &sample(t0 + 150 * MS, 77_000, 300), &actors);
    assert_eq!(d.migrate, None);
    let d = s.step(&P, &sample(t0 + 200 * MS, 77_000, 300), &actors);
    assert_eq!(d.migrate, upload(1, 790));
}

#[test]
fn a_last_move_in_the_future_counts_as_just_now() {
    let mut a = actor(1, Side::Device, 32);
    a.last_move_ns = Some(u64::MAX);
    let d = Scheduler::new().step(&P, &sample(1_000 * MS, 77_000, 300), &[a]);
    assert_eq!(d.migrate, None);
    // A zero dwell lets it move at once, but not from the future.
    let no_dwell = SchedParams { dwell_ms: 0, ..P };
    let d = Scheduler::new().step(&no_dwell, &sample(1_000 * MS, 77_000, 300), &[a]);
    assert_eq!(d.migrate, None);
    a.last_move_ns = Some(1_000 * MS);
    let d = Scheduler::new().step(&no_dwell, &sample(1_000 * MS, 77_000, 300), &[a]);
    assert_eq!(d.migrate, upload(1, 790));
}

#[test]
fn one_migration_per_epoch_highest_score_first() {
    let mut s = Scheduler::new();
    let mut actors = [
        actor(1, Side::Device, 20),
        actor(2, Side::Device, 32),
        actor(3, Side::Device, 0),
    ];
    // 75 °C: T 952; S = 476 + 90 + 200·Q: 691, 766, 566.
    let d = s.step(&P, &sample(0, 75_000, 300), &actors);
    assert_eq!(d.migrate, upload(2, 766));
    apply(&mut actors, d.migrate, 0);
    // Next epoch: the other candidate (the third is below θ).
    let d = s.step(&P, &sample(10 * MS, 75_000, 300), &actors);
    assert_eq!(d.migrate, upload(1, 691));
    apply(&mut actors, d.migrate, 10 * MS);
    let d = s.step(&P, &sample(20 * MS, 75_000, 300), &actors);
    assert_eq!(d.migrate, None);
    assert_eq!(s.moves(), 2);
}

#[test]
fn ties_go_to_the_first_actor() {
    let actors = [actor(7, Side::Device, 32), actor(3, Side::Device, 32)];
    let d = Scheduler::new().step(&P, &sample(0, 70_000, 300), &actors);
    assert_eq!(d.migrate, upload(7, 706));
    let actors = [actor(3, Side::Device, 32), actor(7, Side::Device, 32)];
    let d = Scheduler::new().step(&P, &sample(0, 70_000, 300), &actors);
    assert_eq!(d.migrate, upload(3, 706));
}

#[test]
fn engine_share_tells_the_heavy_stage_from_the_light_one() {
    // Two stages of one pipeline on a device at 70 °C (T 833), the host 30 % busy, the same 32
    // requests queued for both; the second took 90 % of the engine's time, the first 10 %.
    let mut light = actor(1, Side::Device, 32);
    light.engine_share_permille = 100;
    let mut heavy = actor(2, Side::Device, 32);
    heavy.engine_share_permille = 900;
    let smp = sample(0, 70_000, 300);
    let off = SchedParams {
        engine_share: false,
        ..ALL
    };
    let on = SchedParams {
        engine_share: true,
        ..P
    };
    // Without the weighting both queues are full: 416 + 90 + 200 = 706 each, and the tie goes
    // to the first, the light stage.
    assert_eq!(
        (queue_depth(&off, &light), queue_depth(&off, &heavy)),
        (32, 32)
    );
    let d = Scheduler::new().step(&off, &smp, &[light, heavy]);
    assert_eq!(d.migrate, upload(1, 706));
    assert_eq!(d.scores()[1].score, 706);
    // With it, 3 and 28 requests count (Q 93 and 875): 525 stays below θ, 681 is uploaded.
    assert_eq!(
        (queue_depth(&on, &light), queue_depth(&on, &heavy)),
        (3, 28)
    );
    let d = Scheduler::new().step(&on, &smp, &[light, heavy]);
    assert_eq!(d.migrate, upload(2, 681));
    assert_eq!(d.scores()[0].score, 525);
    // A share above 1000 counts as 1000, a share of 0 leaves nothing, and 1000 (what the driver
    // reports when the engine did no work) counts the whole queue.
    heavy.engine_share_permille = u32::MAX;
    assert_eq!(queue_depth(&on, &heavy), 32);
    heavy.engine_share_permille = 0;
    assert_eq!(queue_depth(&on, &heavy), 0);
    heavy.dev_queue = u32::MAX;
    heavy.engine_share_permille = 1000;
    assert_eq!(queue_depth(&on, &heavy), u32::MAX);
}

#[test]
fn u_reflux_only_counts_reflux_s_own_host_time() {
    // The device at 77 °C (T 1000), one device-placed actor with a full queue; the host's CPUs
    // 96 % busy (the software device's threads among them), ReFlux's host stages 10 %.
    let smp = Sample {
        reflux_util_permille: 100,
        ..sample(0, 77_000, 960)
    };
    let actors = [actor(1, Side::Device, 32)];
    let on = SchedParams {
        u_reflux_only: true,
        ..P
    };
    let off = SchedParams {
        u_reflux_only: false,
        ..ALL
    };
    // Without the switch the host is saturated: no upload, the throttle engages.
    assert_eq!(u_host_permille(&off, &smp), 960);
    let d = Scheduler::new().step(&off, &smp, &actors);
    assert_eq!(
        (d.migrate, d.throttle, d.u_host_permille),
        (None, true, 960)
    );
    // With it the host has room: S = 500 + 30 + 200.
    assert_eq!(u_host_permille(&on, &smp), 100);
    let d = Scheduler::new().step(&on, &smp, &actors);
    assert_eq!((d.migrate, d.throttle), (upload(1, 730), false));
    // The frequency scales either.
    let slow = Sample {
        host_freq_permille: Some(500),
        ..smp
    };
    assert_eq!(
        (u_host_permille(&on, &slow), u_host_permille(&off, &slow)),
        (200, 1000)
    );
}

#[test]
fn the_busy_fraction_of_an_interval() {
    assert_eq!(busy_permille(0, 0), None);
    assert_eq!(busy_permille(0, 8), Some(0));
    assert_eq!(busy_permille(1, 3), Some(250));
    assert_eq!(busy_permille(2, 1), Some(666));
    assert_eq!(busy_permille(5, 0), Some(1000));
    // Ticks of 4 ms over 10 ms on two CPUs: five ticks, three of them busy.
    assert_eq!(busy_permille(12_000_000, 8_000_000), Some(600));
    // Absurd times are scaled down, not overflowed.
    assert_eq!(busy_permille(1 << 62, 3 << 62), Some(250));
    assert_eq!(busy_permille(u64::MAX, u64::MAX), Some(500));
    assert_eq!(busy_permille(u64::MAX, 0), Some(1000));
}

#[test]
fn upload_wins_over_offload_and_the_lowest_offload_wins() {
    // With the defaults an upload and an offload cannot both be due (their scores differ by at
    // most γ = 200 < θ - θ_low); narrow the band.
    let p = SchedParams {
        theta_permille: 550,
        theta_low_permille: 500,
        ..P
    };
    assert_eq!(p.validate(), Ok(()));
    // 51.8 °C: T 400; host 60 % busy: S = 200 + 180 + 200·Q.
    let smp = sample(0, 51_800, 600);
    let actors = [
        actor(1, Side::Host, 10),
        actor(2, Side::Host, 0),
        actor(3, Side::Device, 32),
    ];
    let d = Scheduler::new().step(&p, &smp, &actors);
    assert_eq!(d.migrate, upload(3, 580));
    // Without the upload candidate: the lowest-scoring host actor.
    let d = Scheduler::new().step(&p, &smp, &actors[..2]);
    assert_eq!(d.migrate, offload(2, 380));
    let d = Scheduler::new().step(&p, &smp, &actors[..1]);
    assert_eq!(d.migrate, offload(1, 442));
}

#[test]
fn pinned_actors_never_move() {
    let mut s = Scheduler::new();
    let mut hot = actor(1, Side::Device, 32);
    hot.pinned = true;
    let mut idle = actor(2, Side::Host, 0);
    idle.pinned = true;
    for i in 0..50 {
        let t = i * 10 * MS;
        // Hot: the device actor would be uploaded.
        let d = s.step(&P, &sample(t, 77_000, 300), &[hot, idle]);
        assert_eq!(d.migrate, None);
        assert!(!d.throttle);
        // Cool: the host actor would be offloaded.
        let d = s.step(&P, &sample(t, 35_000, 0), &[hot, idle]);
        assert_eq!(d.migrate, None);
    }
    assert_eq!(s.moves(), 0);
    // A movable actor beside a pinned one with a higher score moves.
    let d = s.step(
        &P,
        &sample(0, 77_000, 300),
        &[hot, actor(3, Side::Device, 16)],
    );
    assert_eq!(d.migrate, upload(3, 690));
}

#[test]
fn offload_needs_headroom_and_a_low_score() {
    let actors = [actor(5, Side::Host, 0)];
    let at = |temp, dev_util, host_util| {
        let smp = Sample {
            now_ns: 0,
            temp_milli_c: temp,
            dev_util_permille: dev_util,
            host_util_permille: host_util,
            reflux_util_permille: host_util,
            host_freq_permille: None,
            finished: 0,
        };
        Scheduler::new().step(&P, &smp, &actors).migrate
    };
    // T_dev 500 is not below the headroom temperature; 499 is. S = 249 + 90.
    assert_eq!(at(56_000, 0, 300), None);
    assert_eq!(at(55_999, 0, 300), offload(5, 339));
    // Engine utilisation 800 is not below the headroom utilisation; 799 is.
    assert_eq!(at(40_000, 800, 300), None);
    assert_eq!(at(40_000, 799, 300), offload(5, 149));
    // Headroom, but the score is not below θ_low: 59 + 300 = 359 moves, 200 + 300 = 500 does not.
    assert_eq!(at(40_000, 0, 1000), offload(5, 359));
    assert_eq!(at(51_800, 0, 1000), None);
    // The edge: S 399 moves, S 400 does not (T 240, U 933 and 934).
    assert_eq!(t_dev_permille(&P, 45_080), 240);
    assert_eq!(at(45_080, 0, 933), offload(5, 399));
    assert_eq!(at(45_080, 0, 934), None);
    // A device-placed actor with a low score stays.
    let d = Scheduler::new().step(&P, &sample(0, 35_000, 0), &[actor(6, Side::Device, 0)]);
    assert_eq!(d.migrate, None);
}

#[test]
fn saturated_host_throttles_instead_of_uploading() {
    let mut s = Scheduler::new();
    let actors = [actor(1, Side::Device, 32)];
    // U 949 is not saturated: upload.
    let d = s.step(&P, &sample(0, 70_000, 949), &actors);
    assert_eq!(d.migrate, upload(1, 901));
    assert!(!d.throttle);
    assert_eq!(d.inflight_permille, 1000);

    // U 950: saturated. Halving down to the floor, one step per epoch.
    let mut t = 0;
    let mut levels = Vec::new();
    for _ in 0..5 {
        t += 10 * MS;
        let d = s.step(&P, &sample(t, 70_000, 950), &actors);
        assert_eq!(d.migrate, None);
        assert!(d.throttle);
        assert_eq!(d.inflight_permille, s.inflight_permille());
        levels.push(d.inflight_permille);
    }
    assert_eq!(levels, [500, 250, 125, 125, 125]);
    assert_eq!(s.throttled_epochs(), 5);

    // The device cools: the condition clears, the fraction doubles back.
    let mut levels = Vec::new();
    for _ in 0..5 {
        t += 10 * MS;
        let d = s.step(&P, &sample(t, 40_000, 950), &actors);
        assert_eq!(d.migrate, None);
        assert!(!d.throttle);
        levels.push(d.inflight_permille);
    }
    assert_eq!(levels, [250, 500, 1000, 1000, 1000]);
    assert_eq!(s.throttled_epochs(), 5);
    assert_eq!(s.epochs(), 11);

    // A floor that is not a power-of-two fraction, and a relapse mid-recovery.
    let p = SchedParams {
        min_inflight_permille: 100,
        ..P
    };
    let mut s = Scheduler::new();
    let hot = sample(0, 70_000, 1000);
    let cool = sample(0, 35_000, 1000);
    let levels: Vec<u32> = [
        hot, hot, hot, hot, hot, cool, cool, hot, cool, cool, cool, cool,
    ]
    .iter()
    .map(|smp| s.step(&p, smp, &actors).inflight_permille)
    .collect();
    assert_eq!(
        levels,
        [500, 250, 125, 100, 100, 200, 400, 200, 400, 800, 1000, 1000]
    );
}

#[test]
fn throttling_ignores_dwell_and_counts_pinned_actors() {
    let mut a = actor(1, Side::Device, 32);
    a.pinned = true;
    let d = Scheduler::new().step(&P, &sample(0, 70_000, 950), &[a]);
    assert!(d.throttle);
    assert_eq!(d.inflight_permille, 500);
    let mut b = actor(2, Side::Device, 32);
    b.last_move_ns = Some(0);
    let d = Scheduler::new().step(&P, &sample(MS, 70_000, 950), &[b]);
    assert!(d.throttle);
    // A host-placed actor with a high score is no reason to throttle.
    let d = Scheduler::new().step(&P, &sample(0, 77_000, 1000), &[actor(3, Side::Host, 32)]);
    assert!(!d.throttle);
    assert_eq!(d.inflight_permille, 1000);
}

#[test]
fn decisions_log_the_first_scores_and_count_the_rest() {
    let actors: Vec<ActorView> = (0..12u8)
        .map(|i| actor(i, Side::Device, u32::from(i)))
        .collect();
    let d = Scheduler::new().step(&P, &sample(0, 35_000, 0), &actors);
    assert_eq!(d.actors, 12);
    assert_eq!(d.scores().len(), MAX_LOGGED);
    for (i, s) in d.scores().iter().enumerate() {
        assert_eq!(s.id, i as u8);
        assert_eq!(s.score, score(&P, &sample(0, 35_000, 0), i as u32));
    }
    // The decision considers every actor, not only the logged ones.
    let mut actors = actors;
    actors[11].dev_queue = 32;
    let d = Scheduler::new().step(&P, &sample(0, 77_000, 1000), &actors[..0]);
    assert_eq!(d.scores(), &[]);
    let d = Scheduler::new().step(&P, &sample(0, 77_000, 300), &actors);
    assert_eq!(d.migrate, upload(11, 790));
}

#[test]
fn decisions_print_as_one_line() {
    let mut s = Scheduler::new();
    let actors = [
        actor(1, Side::Host, 0),
        actor(2, Side::Device, 32),
        actor(3, Side::Device, 16),
    ];
    let d = s.step(
        &P,
        &Sample {
            now_ns: 0,
            temp_milli_c: 70_000,
            dev_util_permille: 1500,
            host_util_permille: 300,
            reflux_util_permille: 300,
            host_freq_permille: None,
            finished: 0,
        },
        &actors,
    );
    assert_eq!(
        d.to_string(),
        "t_dev=833 u_host=300 dev_util=1000 inflight=1000 throttle=no move=2:dev->host(s=706) \
         scores=[1@host:506 2@dev:706 3@dev:606]"
    );
    let many: Vec<ActorView> = (0..10u8).map(|i| actor(i, Side::Device, 32)).collect();
    let d = s.step(&P, &sample(0, 70_000, 950), &many);
    assert_eq!(
        d.to_string(),
        "t_dev=833 u_host=950 dev_util=0 inflight=500 throttle=yes move=none \
         scores=[0@dev:901 1@dev:901 2@dev:901 3@dev:901 4@dev:901 5@dev:901 6@dev:901 \
         7@dev:901] +2"
    );
}

#[test]
fn invalid_parameters_are_safe() {
    let weird = [
        SchedParams {
            alpha_permille: u32::MAX,
            beta_permille: u32::MAX,
            gamma_permille: u32::MAX,
            ..P
        },
        SchedParams {
            ambient_milli_c: u32::MAX,
            throttle_milli_c: 0,
            q_full: 0,
            ..P
        },
        SchedParams {
            min_inflight_permille: 0,
            dwell_ms: u32::MAX,
            theta_permille: 0,
            theta_low_permille: u32::MAX,
            host_saturated_permille: u32::MAX,
            ..P
        },
        SchedParams {
            min_inflight_permille: u32::MAX,
            ..P
        },
    ];
    let actors = [
        actor(0, Side::Device, u32::MAX),
        actor(1, Side::Host, 0),
        actor(2, Side::Device, 0),
    ];
    for p in weird {
        assert!(p.validate().is_err());
        let mut s = Scheduler::new();
        for i in 0..20 {
            let smp = Sample {
                now_ns: u64::MAX - i,
                temp_milli_c: u32::MAX,
                dev_util_permille: u32::MAX,
                host_util_permille: u32::MAX,
                reflux_util_permille: u32::MAX,
                host_freq_permille: Some(i as u32),
                finished: 0,
            };
            let d = s.step(&p, &smp, &actors);
            assert!((1..=1000).contains(&d.inflight_permille));
            for sc in d.scores() {
                assert!(sc.score <= 1000);
            }
        }
    }
}

/// Valid weights: `α + β + γ = 1000`.
fn weights() -> impl Strategy<Value = (u32, u32, u32)> {
    (0u32..=1000)
        .prop_flat_map(|a| (Just(a), 0..=1000 - a))
        .prop_map(|(a, b)| (a, b, 1000 - a - b))
}

proptest! {
    /// The score is at most 1000 and monotone in the temperature and the queue depth, for any
    /// valid weights.
    #[test]
    fn score_is_bounded_and_monotone(
        (alpha, beta, gamma) in weights(),
        q_full in 1u32..=256,
        temps in (any::<u32>(), any::<u32>()),
        queues in (any::<u32>(), any::<u32>()),
        host in any::<u32>(),
    ) {
        let p = SchedParams {
            alpha_permille: alpha,
            beta_permille: beta,
            gamma_permille: gamma,
            q_full,
            ..P
        };
        prop_assert_eq!(p.validate(), Ok(()));
        let (t_lo, t_hi) = (temps.0.min(temps.1), temps.0.max(temps.1));
        let (q_lo, q_hi) = (queues.0.min(queues.1), queues.0.max(queues.1));
        let lo = score(&p, &sample(0, t_lo, host), q_lo);
        let mid_t = score(&p, &sample(0, t_hi, host), q_lo);
        let mid_q = score(&p, &sample(0, t_lo, host), q_hi);
        let hi = score(&p, &sample(0, t_hi, host), q_hi);
        prop_assert!(lo <= mid_t && mid_t <= hi);
        prop_assert!(lo <= mid_q && mid_q <= hi);
        prop_assert!(hi <= 1000);
    }

    /// Any run of epochs moves at most one actor per epoch, never a pinned one, never one
    /// within its dwell, uploads only from the device and offloads only from the host; the
    /// in-flight fraction stays between the floor and 1000.
    #[test]
    fn any_run_obeys_the_rules(
        views in proptest::collection::vec(
            (any::<bool>(), any::<bool>(), 0u32..64, 0u32..1100), 1..10),
        epochs in proptest::collection::vec(
            (30_000u32..90_000, 0u32..1100, 0u32..1100, 0u32..1100), 1..100),
        extended in any::<bool>(),
    ) {
        // The paper's scheme, or every extension on.
        let p = if extended { ALL } else { P };
        let mut actors: Vec<ActorView> = views
            .iter()
            .enumerate()
            .map(|(i, &(device, pinned, q, share))| ActorView {
                id: i as u8,
                side: if device { Side::Device } else { Side::Host },
                pinned,
                dev_queue: q,
                engine_share_permille: share,
                inflight: q,
                last_move_ns: None,
            })
            .collect();
        let mut s = Scheduler::new();
        let mut moves = 0;
        for (i, &(temp, dev_util, host_util, reflux_util)) in epochs.iter().enumerate() {
            let now = (i as u64 + 1) * 10 * MS;
            let smp = Sample { now_ns: now, temp_milli_c: temp, dev_util_permille: dev_util,
                host_util_permille: host_util, reflux_util_permille: reflux_util,
                host_freq_permille: None , finished: 0};
            let d = s.step(&p, &smp, &actors);
            prop_assert!((p.min_inflight_permille..=1000).contains(&d.inflight_permille));
            prop_assert_eq!(d.scores().len(), actors.len().min(MAX_LOGGED));
            if let Some(m) = d.migrate {
                moves += 1;
                let a = actors.iter().find(|a| a.id == m.actor).unwrap();
                prop_assert!(!a.pinned);
                prop_assert_eq!(a.side, m.to.other());
                // An upload is judged at the projected temperature, never below the measured.
                let measured = score(&p, &smp, queue_depth(&p, a));
                if m.to == Side::Host {
                    prop_assert!(m.score >= measured);
                } else {
                    prop_assert_eq!(m.score, measured);
                }
                if let Some(last) = a.last_move_ns {
                    prop_assert!(now - last >= u64::from(p.dwell_ms) * MS);
                }
                match m.to {
                    Side::Host => {
                        prop_assert!(m.score > p.theta_permille);
                        prop_assert!(u_host_permille(&p, &smp) < p.host_saturated_permille);
                    }
                    Side::Device => {
                        prop_assert!(m.score < p.theta_low_permille);
                        prop_assert!(d.t_dev_permille < p.headroom_temp_permille);
                        prop_assert!(dev_util < p.headroom_util_permille);
                    }
                }
                prop_assert!(!d.throttle || m.to == Side::Device);
                apply(&mut actors, d.migrate, now);
            }
        }
        prop_assert_eq!(s.moves(), moves);
        prop_assert_eq!(s.epochs(), epochs.len() as u64);
    }
}

/// Offloads actor 1 (on the host, queue empty, device cool) at `t`, then uploads it (queue full,
/// device hot) `stay_ms` later; returns the upload's decision.
fn offload_then_upload(
    s: &mut Scheduler,
    p: &SchedParams,
    actors: &mut [ActorView; 1],
    t: u64,
    stay_ms: u64,
) -> reflux_proto::sched::Decision {
    actors[0].dev_queue = 0;
    let d = s.step(p, &sample(t, 40_000, 300), &actors[..]);
    assert_eq!(
        d.migrate.map(|m| m.to),
        Some(Side::Device),
        "offload at {} ms",
        t / MS
    );
    apply(&mut actors[..], d.migrate, t);
    actors[0].dev_queue = 32;
    let d = s.step(p, &sample(t + stay_ms * MS, 77_000, 300), &actors[..]);
    assert_eq!(d.migrate, upload(1, 790));
    apply(&mut actors[..], d.migrate, t + stay_ms * MS);
    d
}

#[test]
fn flaps_double_the_offload_hold_up_to_the_cap() {
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Device, 32)];
    let mut t = 1_000 * MS;
    // The first upload has no offload before it: no flap.
    let d = s.step(&FLAP, &sample(t, 77_000, 300), &actors);
    assert_eq!((d.migrate, d.hold_ms), (upload(1, 790), None));
    apply(&mut actors, d.migrate, t);
    let mut hold = FLAP.dwell_ms;
    for expect in [200, 400, 800, 1_600, 3_200, 5_000, 5_000] {
        // Offloaded once its hold has passed, uploaded again 150 ms later: a flap.
        t += u64::from(hold) * MS;
        let d = offload_then_upload(&mut s, &FLAP, &mut actors, t, 150);
        t += 150 * MS;
        assert_eq!(d.hold_ms, Some(expect));
        assert_eq!(s.hold_ms(1), expect);
        hold = expect;
        // Not offloaded a millisecond before the hold ends, with every other condition met.
        actors[0].dev_queue = 0;
        let before = t + u64::from(hold) * MS - MS;
        assert_eq!(
            s.step(&FLAP, &sample(before, 40_000, 300), &actors).migrate,
            None
        );
    }
    assert_eq!(s.flaps(), 7);
}

#[test]
fn a_long_stay_on_the_device_resets_the_hold() {
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Host, 0)];
    let d = offload_then_upload(&mut s, &FLAP, &mut actors, 1_000 * MS, 100);
    assert_eq!(d.hold_ms, Some(200));
    // Offloaded after its hold, it stays a whole flap window: no flap, back to the dwell.
    let t = 1_300 * MS;
    let d = offload_then_upload(&mut s, &FLAP, &mut actors, t, 1_000);
    assert_eq!(d.hold_ms, None);
    assert_eq!(s.hold_ms(1), 0);
    actors[0].dev_queue = 0;
    let up = t + 1_000 * MS;
    let d = s.step(&FLAP, &sample(up + 100 * MS, 40_000, 300), &actors);
    assert_eq!(d.migrate, offload(1, 149));
    assert_eq!(s.flaps(), 1);
}

#[test]
fn a_zero_flap_window_turns_the_back_off_off() {
    let p = SchedParams {
        flap_window_ms: 0,
        ..FLAP
    };
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Host, 0)];
    let mut t = 1_000 * MS;
    for _ in 0..4 {
        let d = offload_then_upload(&mut s, &p, &mut actors, t, 100);
        assert_eq!(d.hold_ms, None);
        t += 200 * MS;
    }
    assert_eq!((s.flaps(), s.hold_ms(1)), (0, 0));
}

#[test]
fn without_its_switch_a_flap_holds_nothing() {
    let off = SchedParams {
        flap_backoff: false,
        ..FLAP
    };
    for (p, hold) in [(FLAP, Some(200)), (off, None)] {
        let mut s = Scheduler::new();
        let mut actors = [actor(1, Side::Host, 0)];
        // Uploaded at 1.1 s, 100 ms after its offload: a flap, with the back-off.
        let d = offload_then_upload(&mut s, &p, &mut actors, 1_000 * MS, 100);
        assert_eq!(d.hold_ms, hold);
        assert_eq!(s.flaps(), u64::from(hold.is_some()));
        assert!(!d.to_string().contains("flap") || hold.is_some());
        // A dwell later, the device cool: offloaded at once without the back-off, held with it.
        actors[0].dev_queue = 0;
        let d = s.step(&p, &sample(1_200 * MS, 40_000, 300), &actors);
        let want = if hold.is_some() {
            None
        } else {
            offload(1, 149)
        };
        assert_eq!(d.migrate, want, "flap_backoff {}", p.flap_backoff);
    }
}

#[test]
fn the_cap_bounds_the_hold_and_untracked_ids_get_none() {
    let p = SchedParams {
        max_backoff_ms: 150,
        ..FLAP
    };
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Host, 0)];
    let d = offload_then_upload(&mut s, &p, &mut actors, 1_000 * MS, 100);
    assert_eq!(d.hold_ms, Some(150));
    // An id past the tracked ones migrates as before, without a hold.
    let id = MAX_TRACKED as u8;
    let mut a = [actor(id, Side::Device, 32)];
    a[0].last_move_ns = Some(900 * MS);
    let d = s.step(&FLAP, &sample(1_000 * MS, 77_000, 300), &a);
    assert_eq!((d.migrate, d.hold_ms), (upload(id, 790), None));
    assert_eq!(s.hold_ms(id), 0);
}

#[test]
fn flap_parameters_are_validated_and_logged() {
    for bad in [
        SchedParams {
            flap_window_ms: MAX_DWELL_MS + 1,
            ..FLAP
        },
        SchedParams {
            max_backoff_ms: MAX_BACKOFF_MS + 1,
            ..FLAP
        },
    ] {
        assert_eq!(bad.validate(), Err(SchedError::Backoff));
    }
    for good in [
        SchedParams {
            flap_window_ms: 0,
            max_backoff_ms: 0,
            ..FLAP
        },
        SchedParams {
            flap_window_ms: MAX_DWELL_MS,
            max_backoff_ms: MAX_BACKOFF_MS,
            ..FLAP
        },
    ] {
        assert_eq!(good.validate(), Ok(()));
    }
    let mut s = Scheduler::new();
    let mut actors = [actor(1, Side::Host, 0)];
    let d = offload_then_upload(&mut s, &FLAP, &mut actors, 1_000 * MS, 100);
    let line = d.to_string();
    assert!(
        line.contains("move=1:dev->host(s=790) flap hold=200ms scores="),
        "{line}"
    );
}

#[test]
fn a_slower_host_counts_as_busier() {
    let at = |util, freq| {
        u_host_permille(
            &P,
            &Sample {
                host_freq_permille: freq,
                finished: 0,
                ..sample(0, 35_000, util)
            },
        )
    };
    // Not exposed, 0, the maximum or above: as measured.
    assert_eq!(at(300, None), 300);
    assert_eq!(at(300, Some(0)), 300);
    assert_eq!(at(300, Some(1000)), 300);
    assert_eq!(at(300, Some(1200)), 300);
    // Half the frequency: twice the share, at most 1000.
    assert_eq!(at(300, Some(500)), 600);
    assert_eq!(at(600, Some(500)), 1000);
    assert_eq!(at(u32::MAX, Some(1)), 1000);
    // It moves the score and the saturation test: 40 % busy at 40 % of the maximum frequency
    // is a saturated host, which takes no upload (it throttles instead).
    let actors = [actor(1, Side::Device, 32)];
    let smp = Sample {
        host_freq_permille: Some(400),
        finished: 0,
        ..sample(0, 77_000, 400)
    };
    let d = Scheduler::new().step(&P, &smp, &actors);
    assert_eq!(
        (d.migrate, d.throttle, d.u_host_permille),
        (None, true, 1000)
    );
    assert_eq!(d.host_freq_permille, Some(400));
    assert!(d
        .to_string()
        .starts_with("t_dev=1000 u_host=1000 host_freq=400 dev_util=0 "));
    let d = Scheduler::new().step(&P, &sample(0, 77_000, 400), &actors);
    assert_eq!(d.migrate, upload(1, 820));
}

#[test]
fn the_projection_is_linear_rising_only_and_clamped() {
    // 50 °C/s for 200 ms: 10 °C more.
    assert_eq!(project_milli_c(60_000, 50_000, 200 * MS), 70_000);
    assert_eq!(project_milli_c(60_000, 50_000, 0), 60_000);
    // A falling or steady temperature is not projected.
    assert_eq!(project_milli_c(60_000, -50_000, 200 * MS), 60_000);
    assert_eq!(project_milli_c(60_000, 0, 200 * MS), 60_000);
    // Absurd rates and horizons are clamped, and so is the result.
    assert_eq!(project_milli_c(60_000, i64::MAX, u64::MAX), MAX_MILLI_C);
    assert_eq!(project_milli_c(u32::MAX, i64::MAX, u64::MAX), u32::MAX);
    assert_eq!(
        project_milli_c(0, 1, u64::MAX),
        (u64::from(MAX_DWELL_MS) * MS / 1_000_000_000) as u32
    );
}

/// Runs epochs 10 ms apart from `t` with the temperature rising by `step_mc` each, the
/// actors unchanged; returns the last decision.
fn heat(
    s: &mut Scheduler,
    p: &SchedParams,
    actors: &[ActorView],
    t: u64,
    from_mc: u32,
    step_mc: u32,
    epochs: u32,
) -> reflux_proto::sched::Decision {
    let mut last = None;
    for i in 0..epochs {
        let smp = sample(t + u64::from(i) * 10 * MS, from_mc + i * step_mc, 300);
        last = Some(s.step(p, &smp, actors));
    }
    last.unwrap()
}

#[test]
fn a_learned_upload_time_brings_a_heating_device_s_upload_forward() {
    // One actor with a half-full queue: at 30 % host load it scores above θ = 650 from
    // T_dev 880 (71.96 °C) on. The device heats by 0.5 °C per 10 ms epoch (50 °C/s), and the
    // last of 16 epochs sees 65.5 °C (T_dev 726, S 553).
    let actors = [actor(1, Side::Device, 16)];
    let p = LA;
    let off = SchedParams {
        lookahead_max_ms: 0,
        ..LA
    };
    let mut plain = Scheduler::new();
    let d = heat(&mut plain, &off, &actors, 1_000 * MS, 58_000, 500, 16);
    assert_eq!(d.migrate, None);
    assert_eq!(d.t_proj_permille, d.t_dev_permille);
    assert!(!d.to_string().contains("t_proj"));
    // The moving average of 15 rates of 50 °C/s, from 0.
    assert_eq!(plain.slope_milli_c_per_s(), 49_331);

    // No upload measured yet: the horizon is the cap, 500 ms, and the projection (90.2 °C)
    // is clamped to T_dev 1000.
    let mut first = Scheduler::new();
    let d = heat(&mut first, &p, &actors, 1_000 * MS, 58_000, 500, 16);
    assert_eq!((d.t_proj_permille, d.migrate), (1000, upload(1, 690)));

    // Uploads took 200 ms, every time: the projection, at the averaged 49.3 °C/s, is 9.9 °C
    // ahead.
    let mut ahead = learned(200 * MS);
    assert_eq!(ahead.horizon_ns(&p), 200 * MS);
    let d = heat(&mut ahead, &p, &actors, 1_000 * MS, 58_000, 500, 16);
    let projected = project_milli_c(65_500, 49_331, 200 * MS);
    assert_eq!(projected, 75_366);
    assert_eq!(d.t_dev_permille, t_dev_permille(&p, 65_500));
    assert_eq!(d.t_proj_permille, t_dev_permille(&p, projected));
    assert_eq!(d.migrate, upload(1, 670));
    assert!(d.to_string().contains(" t_proj=961 "), "{d}");

    // The cap bounds the horizon; 0 turns the lookahead off.
    for (cap, moves) in [(0, false), (50, false), (500, true)] {
        let q = SchedParams {
            lookahead_max_ms: cap,
            ..LA
        };
        let mut s = learned(200 * MS);
        let d = heat(&mut s, &q, &actors, 1_000 * MS, 58_000, 500, 16);
        assert_eq!(d.migrate.is_some(), moves, "cap {cap}");
    }
}

#[test]
fn without_its_switch_the_temperature_is_not_projected() {
    // The case above that the lookahead uploads (uploads took 200 ms, the device heats at
    // 50 °C/s), with the switch off and the cap left at 500 ms: scored at 65.5 °C, S 553.
    let actors = [actor(1, Side::Device, 16)];
    let off = SchedParams {
        lookahead: false,
        ..LA
    };
    assert_eq!(off.lookahead_max_ms, 500);
    let mut s = learned(200 * MS);
    assert_eq!((s.horizon_ns(&LA), s.horizon_ns(&off)), (200 * MS, 0));
    let d = heat(&mut s, &off, &actors, 1_000 * MS, 58_000, 500, 16);
    assert_eq!(s.slope_milli_c_per_s(), 49_331);
    assert_eq!((d.t_dev_permille, d.t_proj_permille), (726, 726));
    assert_eq!(d.scores()[0].score, 553);
    assert_eq!(d.migrate, None);
    // Nor before any upload was measured, when the horizon would be the cap.
    let d = heat(
        &mut Scheduler::new(),
        &off,
        &actors,
        1_000 * MS,
        58_000,
        500,
        16,
    );
    assert_eq!((d.t_proj_permille, d.migrate), (726, None));
}

#[test]
fn a_cooling_device_and_host_placed_actors_see_the_measured_temperature() {
    let mut s = Scheduler::new();
    // Cooling: nothing is projected.
    let dev = [actor(1, Side::Device, 16)];
    let mut d = None;
    for i in 0..10u32 {
        d = Some(s.step(
            &LA,
            &sample(u64::from(i) * 10 * MS, 70_000 - i * 500, 300),
            &dev,
        ));
    }
    let d = d.unwrap();
    assert!(s.slope_milli_c_per_s() < 0);
    assert_eq!((d.t_proj_permille, d.migrate), (d.t_dev_permille, None));
    // Heating fast, a host-placed actor is still scored, and the headroom judged, at the
    // temperature now: an offload is decided at 40 °C whatever the projection.
    // (With a device-placed actor beside it, whose projection the decision shows.)
    let host = [actor(2, Side::Host, 0), actor(3, Side::Device, 0)];
    let mut s = Scheduler::new();
    let d = heat(&mut s, &LA, &host, 0, 30_000, 1_000, 11);
    assert!(d.t_proj_permille > d.t_dev_permille);
    assert_eq!(
        d.migrate,
        offload(2, score(&LA, &sample(0, 40_000, 300), 0))
    );
}

/// A scheduler that saw `n` uploads of `ns` each: their deviation has decayed to nothing.
fn learned(ns: u64) -> Scheduler {
    let mut s = Scheduler::new();
    for _ in 0..100 {
        s.learn_upload_ns(ns);
    }
    assert_eq!(s.upload_ns(), Some((ns, 0)));
    s
}

#[test]
fn the_horizon_is_the_mean_upload_time_plus_four_deviations() {
    let long = SchedParams {
        lookahead_max_ms: MAX_DWELL_MS,
        ..LA
    };
    let mut s = Scheduler::new();
    // The first: the deviation is half of it.
    s.learn_upload_ns(200 * MS);
    assert_eq!(s.upload_ns(), Some((200 * MS, 100 * MS)));
    assert_eq!(s.horizon_ns(&long), 600 * MS);
    assert_eq!(s.horizon_ns(&LA), 500 * MS);
    // (3 · 200 + 100) / 4 and (3 · 100 + |200 − 100|) / 4.
    s.learn_upload_ns(100 * MS);
    assert_eq!(s.upload_ns(), Some((175 * MS, 100 * MS)));
    assert_eq!(s.horizon_ns(&long), 575 * MS);
    // A drain ten times the mean widens the horizon at once: (3 · 175 + 1750) / 4 and
    // (3 · 100 + 1575) / 4.
    s.learn_upload_ns(1_750 * MS);
    assert_eq!(s.upload_ns(), Some((568_750_000, 468_750_000)));
    assert_eq!(s.horizon_ns(&long), 2_443_750_000);
    // Steady times narrow it back to the mean.
    let s = learned(30 * MS);
    assert_eq!(s.horizon_ns(&long), 30 * MS);
    // A measured zero is a zero horizon, not an unknown one.
    let mut z = Scheduler::new();
    z.learn_upload_ns(0);
    assert_eq!((z.upload_ns(), z.horizon_ns(&LA)), (Some((0, 0)), 0));
    // Absurd times are bounded.
    let mut s = Scheduler::new();
    for _ in 0..64 {
        s.learn_upload_ns(u64::MAX);
    }
    let max = u64::from(MAX_DWELL_MS) * MS;
    let (mean, dev) = s.upload_ns().unwrap();
    assert!(mean <= max && dev <= max);
    assert_eq!(s.horizon_ns(&long), max);
}

#[test]
fn the_lookahead_cap_is_validated_and_logged() {
    let bad = SchedParams {
        lookahead_max_ms: MAX_DWELL_MS + 1,
        ..LA
    };
    assert_eq!(bad.validate(), Err(SchedError::Lookahead));
    assert!(!SchedError::Lookahead.to_string().is_empty());
    let good = SchedParams {
        lookahead_max_ms: MAX_DWELL_MS,
        ..LA
    };
    assert_eq!(good.validate(), Ok(()));
}

proptest! {
    /// With any samples (clocks going backwards, absurd temperatures) and upload times, the
    /// projected `T_dev` is at least the measured one and at most 1000, the rate stays within
    /// its bound and the horizon within the dwell's.
    #[test]
    fn the_lookahead_is_safe_for_any_input(
        steps in proptest::collection::vec((any::<u64>(), any::<u32>(), any::<u64>()), 1..64),
    ) {
        let mut s = Scheduler::new();
        let actors = [actor(1, Side::Device, 8), actor(2, Side::Host, 0)];
        for &(now, temp, up) in &steps {
            s.learn_upload_ns(up);
            let d = s.step(&LA, &sample(now, temp, 300), &actors);
            prop_assert!(d.t_dev_permille <= d.t_proj_permille && d.t_proj_permille <= 1000);
            prop_assert!(s.slope_milli_c_per_s().abs() <= MAX_SLOPE_MILLI_C_PER_S);
            let max = u64::from(MAX_DWELL_MS) * MS;
            let (mean, dev) = s.upload_ns().unwrap();
            prop_assert!(mean <= max && dev <= max);
            prop_assert!(s.horizon_ns(&LA) <= u64::from(LA.lookahead_max_ms) * MS);
        }
    }
}

/// A sample at `now_ns` with `finished` requests finished so far, 60 °C, 30 % host load.
fn paced(now_ns: u64, finished: u64) -> Sample {
    Sample {
        finished,
        ..sample(now_ns, 60_000, 300)
    }
}

#[test]
fn the_drain_estimate_is_the_requests_in_flight_times_the_pace() {
    let mut s = Scheduler::new();
    let none: [ActorView; 0] = [];
    // No window closed yet.
    s.step(&P, &paced(1_000 * MS, 500), &none);
    s.step(&P, &paced(1_050 * MS, 505), &none);
    assert_eq!(s.drain_ns(32), None);
    // 10 requests in 100 ms: 10 ms each; 32 in flight drain in 320 ms.
    s.step(&P, &paced(1_100 * MS, 510), &none);
    assert_eq!(s.drain_ns(32), Some(320 * MS));
    assert_eq!(s.drain_ns(0), Some(0));
    // None finished in a window: at least the window each.
    s.step(&P, &paced(1_220 * MS, 510), &none);
    assert_eq!(s.drain_ns(2), Some(240 * MS));
    // Bounded.
    assert_eq!(s.drain_ns(u32::MAX), Some(u64::from(MAX_DWELL_MS) * MS));
    // A counter going backwards (a reload) restarts the window, keeping the last pace.
    s.step(&P, &paced(1_330 * MS, 3), &none);
    assert_eq!(s.drain_ns(2), Some(240 * MS));
    s.step(&P, &paced(1_430 * MS, 53), &none);
    assert_eq!(s.drain_ns(2), Some(4 * MS));
}

#[test]
fn a_full_device_queue_lengthens_that_actor_s_horizon() {
    // Uploads took 20 ms; requests finish every 10 ms; the device heats at 50 °C/s.
    let mut s = learned(20 * MS);
    let mut actors = [actor(1, Side::Device, 16), actor(2, Side::Device, 16)];
    actors[0].inflight = 32;
    actors[1].inflight = 1;
    let mut d = None;
    for i in 0..16u32 {
        let t = 1_000 * MS + u64::from(i) * 10 * MS;
        let smp = Sample {
            finished: u64::from(i),
            ..sample(t, 58_000 + i * 500, 300)
        };
        d = Some(s.step(&LA, &smp, &actors));
    }
    let d = d.unwrap();
    assert_eq!(s.drain_ns(32), Some(320 * MS));
    // Actor 1's drain (320 ms) is its horizon, actor 2's the learned 20 ms: at 65.5 °C only
    // actor 1 projects past θ (T_dev 1000 vs 749).
    let s1 = d.scores()[0].score;
    let s2 = d.scores()[1].score;
    assert_eq!(d.migrate, upload(1, s1));
    assert!(
        s1 > LA.theta_permille && s2 < LA.theta_permille,
        "{s1} {s2}"
    );
    assert_eq!(d.t_proj_permille, 1000);
}
