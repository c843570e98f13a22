//! Tests of `pipeline`: stage lists, stage order, and the placement runs for every placement of
//! every pipeline.

use reflux_proto::abi::{
    opcode, DIR_FLUSH, DIR_READ, DIR_WRITE, NEXT_STAGE_DONE, PIPELINE_CHECKSUM, PIPELINE_COMPRESS,
    PIPELINE_ENCRYPT, PIPELINE_PASSTHROUGH, PIPE_FLAG_CHECKSUM,
};
use reflux_proto::pipeline::{
    Direction, Hop, Pipeline, PipelineError, Route, Run, Side, Stage, Stages,
};

fn stages(s: Stages) -> Vec<Stage> {
    (0..s.len()).map(|i| s.get(i).unwrap()).collect()
}

#[test]
fn predefined_pipelines() {
    use Stage::*;
    let table = [
        (Pipeline::Passthrough, 0, vec![]),
        (Pipeline::Checksum, 0, vec![Crc32c]),
        (Pipeline::Checksum, PIPE_FLAG_CHECKSUM, vec![Crc32c]),
        (Pipeline::Compress, 0, vec![Lz4]),
        (Pipeline::Compress, PIPE_FLAG_CHECKSUM, vec![Lz4, Crc32c]),
        (Pipeline::Encrypt, 0, vec![AesXts]),
        (Pipeline::Encrypt, PIPE_FLAG_CHECKSUM, vec![AesXts, Crc32c]),
    ];
    for (p, flags, want) in table {
        assert_eq!(stages(p.stages(flags).unwrap()), want, "{p:?} {flags:#x}");
    }
    assert_eq!(
        Pipeline::Passthrough.stages(PIPE_FLAG_CHECKSUM),
        Err(PipelineError::FlagNotApplicable(PIPE_FLAG_CHECKSUM))
    );
    assert_eq!(Pipeline::Passthrough.stages(0).unwrap().get(0), None);
    for (i, p) in Pipeline::ALL.iter().enumerate() {
        assert_eq!(usize::from(p.id()), i);
        assert_eq!(Pipeline::from_id(p.id()), Ok(*p));
    }
    assert_eq!(Pipeline::Compress.id(), PIPELINE_COMPRESS);
    assert_eq!(
        Stage::AesXts.actor_kind(),
        reflux_proto::abi::ACTOR_KIND_AES_XTS
    );
}

#[test]
fn unknown_pipeline_direction_flags_and_placement_are_rejected() {
    for p in 4..16u8 {
        assert_eq!(
            Route::new(opcode(p, DIR_WRITE), 0, 0),
            Err(PipelineError::UnknownPipeline(p))
        );
    }
    for d in 4..16u8 {
        assert_eq!(
            Route::new(opcode(PIPELINE_CHECKSUM, d), 0, 0),
            Err(PipelineError::UnknownDirection(d))
        );
    }
    for bit in 1..16 {
        let flags = 1u16 << bit;
        for p in [PIPELINE_PASSTHROUGH, PIPELINE_COMPRESS] {
            assert_eq!(
                Route::new(opcode(p, DIR_WRITE), flags | PIPE_FLAG_CHECKSUM, 0),
                Err(PipelineError::UnknownFlags(flags | PIPE_FLAG_CHECKSUM))
            );
        }
    }
    // A placement bit for a stage the pipeline lacks.
    assert_eq!(
        Route::new(opcode(PIPELINE_PASSTHROUGH, DIR_READ), 0, 1),
        Err(PipelineError::PlacementOutOfRange(1))
    );
    assert_eq!(
        Route::new(opcode(PIPELINE_COMPRESS, DIR_WRITE), 0, 0b10),
        Err(PipelineError::PlacementOutOfRange(0b10))
    );
    assert!(Route::new(
        opcode(PIPELINE_COMPRESS, DIR_WRITE),
        PIPE_FLAG_CHECKSUM,
        0b11
    )
    .is_ok());
    for mask in 4..=255u8 {
        assert_eq!(
            Route::new(opcode(PIPELINE_ENCRYPT, DIR_READ), PIPE_FLAG_CHECKSUM, mask),
            Err(PipelineError::PlacementOutOfRange(mask))
        );
    }
    // A flush moves no data.
    assert_eq!(
        Route::new(opcode(PIPELINE_CHECKSUM, DIR_FLUSH), 0, 0),
        Err(PipelineError::FlushWithStages)
    );
    let flush = Route::new(opcode(PIPELINE_PASSTHROUGH, DIR_FLUSH), 0, 0).unwrap();
    assert_eq!(flush.direction(), Direction::Flush);
    assert_eq!(flush.first(), Hop::Device(0));
    let run = flush.run(Side::Device, 0).unwrap();
    assert!(run.is_empty() && !run.load && !run.commit);
    assert_eq!(run.next, Hop::Done);
}

#[test]
fn write_runs_in_pipeline_order_read_in_reverse() {
    let w = Route::new(
        opcode(PIPELINE_COMPRESS, DIR_WRITE),
        PIPE_FLAG_CHECKSUM,
        0b01,
    )
    .unwrap();
    assert_eq!(w.stage_at(0), Some(Stage::Lz4));
    assert_eq!(w.stage_at(1), Some(Stage::Crc32c));
    assert_eq!(w.stage_at(2), None);
    assert_eq!(w.side(0), Some(Side::Device), "lz4 is stage 0, bit 0");
    assert_eq!(w.side(1), Some(Side::Host));
    let r = Route::new(
        opcode(PIPELINE_COMPRESS, DIR_READ),
        PIPE_FLAG_CHECKSUM,
        0b01,
    )
    .unwrap();
    assert_eq!(r.stage_at(0), Some(Stage::Crc32c), "a read verifies first");
    assert_eq!(r.stage_at(1), Some(Stage::Lz4));
    assert_eq!(r.stage_index(0), Some(1));
    assert_eq!(r.side(0), Some(Side::Host), "crc is stage 1, bit 1 clear");
    assert_eq!(r.side(1), Some(Side::Device));
    assert_eq!(r.side(2), None);
}

#[test]
fn handover_example_from_the_paper() {
    // Thermal pressure: compression uploaded to the host, the checksum stays on the device.
    let w = Route::new(
        opcode(PIPELINE_COMPRESS, DIR_WRITE),
        PIPE_FLAG_CHECKSUM,
        0b10,
    )
    .unwrap();
    assert_eq!(w.first(), Hop::Host(0));
    let host = w.run(Side::Host, 0).unwrap();
    assert_eq!((host.start, host.end, host.next), (0, 1, Hop::Device(1)));
    let dev = w.run(Side::Device, 1).unwrap();
    assert_eq!((dev.start, dev.end, dev.next), (1, 2, Hop::Done));
    assert!(dev.commit && !dev.load);
    // The read of that block: the device loads and verifies, the host decompresses.
    let r = Route::new(
        opcode(PIPELINE_COMPRESS, DIR_READ),
        PIPE_FLAG_CHECKSUM,
        0b10,
    )
    .unwrap();
    assert_eq!(r.first(), Hop::Device(0));
    let dev = r.run(Side::Device, 0).unwrap();
    assert_eq!((dev.start, dev.end, dev.next), (0, 1, Hop::Host(1)));
    assert!(dev.load && !dev.commit);
    assert_eq!(dev.next.next_stage(), 1);
    let host = r.run(Side::Host, 1).unwrap();
    assert_eq!((host.start, host.end, host.next), (1, 2, Hop::Done));
    assert_eq!(host.next.next_stage(), NEXT_STAGE_DONE);
}

#[test]
fn everything_on_the_host_is_a_plain_commit() {
    let w = Route::new(opcode(PIPELINE_ENCRYPT, DIR_WRITE), PIPE_FLAG_CHECKSUM, 0).unwrap();
    assert_eq!(w.first(), Hop::Host(0));
    let host = w.run(Side::Host, 0).unwrap();
    assert_eq!(
        host.next,
        Hop::Device(2),
        "the host hands the device a commit-only request"
    );
    let dev = w.run(Side::Device, 2).unwrap();
    assert!(dev.is_empty() && dev.commit);
    assert_eq!(dev.next, Hop::Done);
}

#[test]
fn steps_past_the_end_are_rejected() {
    let w = Route::new(opcode(PIPELINE_CHECKSUM, DIR_WRITE), 0, 1).unwrap();
    assert!(w.run(Side::Device, 1).is_ok());
    for s in 2..=255u8 {
        assert_eq!(
            w.run(Side::Device, s),
            Err(PipelineError::StepOutOfRange(s))
        );
        assert_eq!(w.run(Side::Host, s), Err(PipelineError::StepOutOfRange(s)));
    }
}

/// Drives a request from `first()` to `Done` as the driver and the device would, recording the
/// runs. Fails if it does not finish within a bound (a routing loop).
fn drive(route: &Route) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut hop = route.first();
    loop {
        let (side, step) = match hop {
            Hop::Host(s) => (Side::Host, s),
            Hop::Device(s) => (Side::Device, s),
            Hop::Done => return runs,
        };
        let run = route.run(side, step).expect("a hop names a valid step");
        assert_eq!(run.side, side);
        assert_eq!(run.start, step);
        hop = run.next;
        runs.push(run);
        assert!(
            runs.len() <= 2 * usize::from(route.steps()) + 2,
            "routing loop"
        );
    }
}

/// The properties of every request's journey.
fn check_journey(route: &Route) {
    let n = route.steps();
    let runs = drive(route);
    // Each step executed exactly once, in order, on the side it is placed on.
    let executed: Vec<(u8, Side)> = runs
        .iter()
        .flat_map(|r| (r.start..r.end).map(move |s| (s, r.side)))
        .collect();
    let expected: Vec<(u8, Side)> = (0..n).map(|s| (s, route.side(s).unwrap())).collect();
    assert_eq!(executed, expected, "{route:?}");
    // Runs are maximal: a hand-over goes to the other side, at the step where the side changes.
    for pair in runs.windows(2) {
        assert_ne!(
            pair[0].side, pair[1].side,
            "{route:?}: a hand-over to itself"
        );
        assert_eq!(pair[0].end, pair[1].start);
        if pair[0].end < n {
            assert_eq!(route.side(pair[0].end), Some(pair[1].side));
        }
    }
    let last = runs.last().expect("at least one run");
    assert_eq!(last.next, Hop::Done);
    // Loads and commits: exactly one, by the device, first and last.
    let loads: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].load).collect();
    let commits: Vec<usize> = (0..runs.len()).filter(|&i| runs[i].commit).collect();
    match route.direction() {
        Direction::Read => {
            assert_eq!(loads, vec![0], "{route:?}: a read loads once, first");
            assert!(commits.is_empty());
        }
        Direction::Write => {
            assert_eq!(
                commits,
                vec![runs.len() - 1],
                "{route:?}: a write commits once, last"
            );
            assert!(loads.is_empty());
        }
        Direction::Flush | Direction::Migrate => {
            assert!(loads.is_empty() && commits.is_empty());
            assert_eq!(runs.len(), 1);
        }
    }
    for r in &runs {
        if r.load || r.commit {
            assert_eq!(r.side, Side::Device, "only the device does I/O");
        }
        // An empty run is only ever a device visit that loads, commits or flushes.
        if r.is_empty() {
            let io = r.load
                || r.commit
                || matches!(route.direction(), Direction::Flush | Direction::Migrate);
            assert!(r.side == Side::Device && io, "{route:?}: idle run {r:?}");
        }
    }
    // The device's visits: one per maximal block of device steps, plus the load visit of a read
    // whose first step is on the host and the commit visit of a write whose last is.
    let device_blocks = (0..n)
        .filter(|&s| route.side(s) == Some(Side::Device))
        .filter(|&s| s == 0 || route.side(s - 1) == Some(Side::Host))
        .count();
    let mut expected_visits = device_blocks;
    match route.direction() {
        Direction::Read if n > 0 && route.side(0) == Some(Side::Host) => expected_visits += 1,
        Direction::Write if n == 0 || route.side(n - 1) == Some(Side::Host) => expected_visits += 1,
        Direction::Flush | Direction::Migrate => expected_visits += 1,
        Direction::Read if n == 0 => expected_visits += 1,
        _ => {}
    }
    let visits = runs.iter().filter(|r| r.side == Side::Device).count();
    assert_eq!(visits, expected_visits, "{route:?}");
}

#[test]
fn every_placement_of_every_pipeline() {
    let mut journeys = 0;
    for p in 0..16u8 {
        for d in 0..16u8 {
            for flags in [0, PIPE_FLAG_CHECKSUM] {
                for placement in 0..=255u8 {
                    let Ok(route) = Route::new(opcode(p, d), flags, placement) else {
                        continue;
                    };
                    check_journey(&route);
                    journeys += 1;
                }
            }
        }
    }
    // Passthrough: read, write, flush with placement 0, migrate to the host (0) and to the device
    // (1); checksum: 2 flag values x 2 masks; the
    // two-stage pipelines: 1 stage x 2 masks + 2 stages x 4 masks; all over read and write.
    let expected = 5 + 2 * (2 * 2 + 2 * (2 + 4));
    assert_eq!(journeys, expected);
}

#[test]
fn a_device_bounces_a_host_step_back() {
    // A resubmission at a host-placed step (e.g. after a placement change) is returned unrun.
    let r = Route::new(
        opcode(PIPELINE_ENCRYPT, DIR_WRITE),
        PIPE_FLAG_CHECKSUM,
        0b10,
    )
    .unwrap();
    let run = r.run(Side::Device, 0).unwrap();
    assert!(run.is_empty() && !run.commit && !run.load);
    assert_eq!(run.next, Hop::Host(0));
}

#[test]
fn side_names_and_abi_values() {
    use reflux_proto::abi::{SIDE_DEVICE, SIDE_HOST};
    for s in [Side::Host, Side::Device] {
        assert_eq!(Side::from_abi(s.abi()), s);
    }
    assert_eq!(
        (Side::Host.abi(), Side::Device.abi()),
        (SIDE_HOST, SIDE_DEVICE)
    );
    assert_eq!((Side::Host.name(), Side::Device.name()), ("host", "device"));
    // Anything but the host is the device, the side that formats the PMR.
    assert_eq!(Side::from_abi(7), Side::Device);
}
