//! Tests of `request`: descriptor validation against the layout, and the epoch check.

use proptest::prelude::*;
use reflux_proto::abi::{
    opcode, LayoutParams, SubmissionDescriptor, DIR_FLUSH, DIR_MIGRATE, DIR_READ, DIR_WRITE,
    MAX_REQ_BLOCKS, PIPELINE_CHECKSUM, PIPELINE_COMPRESS, PIPELINE_PASSTHROUGH, PIPE_FLAG_CHECKSUM,
    STATUS_EINVAL,
};
use reflux_proto::pipeline::{PipelineError, Route};
use reflux_proto::request::{
    check_epoch, epoch_tag, is_migrating, EpochCheck, Request, RequestError,
};

const PARAMS: LayoutParams = LayoutParams {
    pmr_size: 1 << 30,
    ring_entries: 64,
    nr_buffers: 128,
    nr_actors: 8,
    nr_blocks: 1000,
};

fn write() -> SubmissionDescriptor {
    SubmissionDescriptor {
        tag: 5,
        opcode: opcode(PIPELINE_COMPRESS, DIR_WRITE),
        stage_start: 0,
        placement: 0b11,
        nr_blocks: 4,
        flags: PIPE_FLAG_CHECKSUM,
        actors: [1, 2],
        state: 5,
        buf_index: 124,
        lba: 996,
        epochs: [2, 4],
    }
}

fn err(d: SubmissionDescriptor) -> RequestError {
    Request::validate(&d, &PARAMS).expect_err("must be refused")
}

#[test]
fn a_valid_request() {
    let r = Request::validate(&write(), &PARAMS).expect("valid");
    assert_eq!(r.descriptor(), write());
    assert_eq!(r.route().steps(), 2);
    assert_eq!(r.actor(0), Some(1));
    assert_eq!(r.actor(1), Some(2));
    assert_eq!(r.actor(2), None);
    assert_eq!(r.routed_epoch(1), Some(4));
    assert_eq!(r.routed_epoch(2), None);
    // The last blocks, buffers and state blob are usable; stage_start may point past the steps
    // (a commit-only resubmission).
    let d = SubmissionDescriptor {
        stage_start: 2,
        state: 63,
        ..write()
    };
    assert!(Request::validate(&d, &PARAMS).is_ok());
}

#[test]
fn every_rule_has_its_error() {
    let w = write();
    assert_eq!(
        err(SubmissionDescriptor {
            opcode: opcode(9, DIR_WRITE),
            ..w
        }),
        RequestError::Pipeline(PipelineError::UnknownPipeline(9))
    );
    assert_eq!(
        err(SubmissionDescriptor { flags: 0x8001, ..w }),
        RequestError::Pipeline(PipelineError::UnknownFlags(0x8001))
    );
    assert_eq!(
        err(SubmissionDescriptor {
            placement: 0b100,
            ..w
        }),
        RequestError::Pipeline(PipelineError::PlacementOutOfRange(0b100))
    );
    assert_eq!(
        err(SubmissionDescriptor {
            stage_start: 3,
            ..w
        }),
        RequestError::StageStart(3)
    );
    for n in [0u8, MAX_REQ_BLOCKS as u8 + 1, 255] {
        assert_eq!(
            err(SubmissionDescriptor { nr_blocks: n, ..w }),
            RequestError::BlockCount(n)
        );
    }
    assert_eq!(
        err(SubmissionDescriptor { lba: 997, ..w }),
        RequestError::LbaRange
    );
    assert_eq!(
        err(SubmissionDescriptor {
            lba: u64::MAX - 1,
            ..w
        }),
        RequestError::LbaRange,
        "the LBA range check must not overflow"
    );
    assert_eq!(
        err(SubmissionDescriptor {
            buf_index: 125,
            ..w
        }),
        RequestError::BufferRange
    );
    assert_eq!(
        err(SubmissionDescriptor {
            buf_index: u32::MAX,
            ..w
        }),
        RequestError::BufferRange
    );
    assert_eq!(
        err(SubmissionDescriptor { state: 64, ..w }),
        RequestError::StateHandle(64)
    );
    assert_eq!(
        err(SubmissionDescriptor {
            actors: [1, 8],
            ..w
        }),
        RequestError::ActorId { stage: 1, id: 8 }
    );
    // A one-stage pipeline with an actor or epoch for a second stage.
    let one = SubmissionDescriptor {
        opcode: opcode(PIPELINE_CHECKSUM, DIR_READ),
        flags: 0,
        placement: 1,
        actors: [1, 0],
        epochs: [2, 0],
        ..w
    };
    assert!(Request::validate(&one, &PARAMS).is_ok());
    assert_eq!(
        err(SubmissionDescriptor {
            actors: [1, 1],
            ..one
        }),
        RequestError::Reserved
    );
    assert_eq!(
        err(SubmissionDescriptor {
            epochs: [2, 1],
            ..one
        }),
        RequestError::Reserved
    );
    // Every refusal completes with EINVAL.
    assert_eq!(RequestError::LbaRange.status(), STATUS_EINVAL);
    assert_eq!(
        RequestError::Pipeline(PipelineError::UnknownFlags(2)).status(),
        STATUS_EINVAL
    );
}

#[test]
fn a_flush_names_no_data() {
    let flush = SubmissionDescriptor {
        opcode: opcode(PIPELINE_PASSTHROUGH, DIR_FLUSH),
        ..Default::default()
    };
    assert!(Request::validate(&flush, &PARAMS).is_ok());
    assert_eq!(
        err(SubmissionDescriptor {
            nr_blocks: 1,
            ..flush
        }),
        RequestError::BlockCount(1)
    );
    assert_eq!(
        err(SubmissionDescriptor { lba: 1, ..flush }),
        RequestError::LbaRange
    );
    assert_eq!(
        err(SubmissionDescriptor {
            buf_index: 1,
            ..flush
        }),
        RequestError::BufferRange
    );
    assert_eq!(
        err(SubmissionDescriptor {
            actors: [1, 0],
            ..flush
        }),
        RequestError::Reserved
    );
}

#[test]
fn a_migration_names_one_actor_at_an_odd_epoch() {
    let m = SubmissionDescriptor {
        opcode: opcode(PIPELINE_PASSTHROUGH, DIR_MIGRATE),
        placement: 1,
        actors: [2, 0],
        epochs: [5, 0],
        ..Default::default()
    };
    let ok = Request::validate(&m, &PARAMS).expect("valid");
    assert_eq!(ok.migrating_actor(), Some(2));
    assert_eq!(ok.route().placement(), 1);
    assert_eq!(
        err(SubmissionDescriptor {
            epochs: [4, 0],
            ..m
        }),
        RequestError::Reserved
    );
    assert_eq!(
        err(SubmissionDescriptor {
            actors: [0, 0],
            ..m
        }),
        RequestError::ActorId { stage: 0, id: 0 }
    );
    assert!(matches!(
        err(SubmissionDescriptor { placement: 2, ..m }),
        RequestError::Pipeline(_)
    ));
    assert!(matches!(
        err(SubmissionDescriptor { flags: 1, ..m }),
        RequestError::Pipeline(_)
    ));
    assert_eq!(
        err(SubmissionDescriptor { nr_blocks: 1, ..m }),
        RequestError::BlockCount(1)
    );
    assert_eq!(
        err(SubmissionDescriptor {
            actors: [2, 1],
            ..m
        }),
        RequestError::Reserved
    );
    // A read is not a migration.
    let read = SubmissionDescriptor {
        opcode: opcode(PIPELINE_PASSTHROUGH, DIR_READ),
        nr_blocks: 1,
        ..Default::default()
    };
    assert_eq!(
        Request::validate(&read, &PARAMS).map(|r| r.migrating_actor()),
        Ok(None)
    );
}

proptest! {
    /// Whatever the bytes, validation never panics, and an accepted descriptor is in range.
    #[test]
    fn arbitrary_descriptors(b in any::<[u8; 32]>()) {
        let d = SubmissionDescriptor::from_bytes(&b);
        if let Ok(r) = Request::validate(&d, &PARAMS) {
            let route = Route::new(d.opcode, d.flags, d.placement).unwrap();
            prop_assert_eq!(r.route(), route);
            prop_assert!(d.stage_start <= route.steps());
            if d.nr_blocks > 0 {
                prop_assert!(d.lba + u64::from(d.nr_blocks) <= PARAMS.nr_blocks);
                prop_assert!(d.buf_index + u32::from(d.nr_blocks) <= PARAMS.nr_buffers);
                prop_assert!(u32::from(d.state) < PARAMS.ring_entries);
            }
        }
    }
}

#[test]
fn epoch_check() {
    assert!(!is_migrating(0));
    assert!(is_migrating(1));
    assert_eq!(check_epoch(0, 0), EpochCheck::Current);
    assert_eq!(
        check_epoch(0, 1),
        EpochCheck::Migrating,
        "migration started"
    );
    assert_eq!(check_epoch(0, 2), EpochCheck::Moved, "migration finished");
    assert_eq!(check_epoch(2, 2), EpochCheck::Current, "re-routed after it");
    // The descriptor carries the low 32 bits.
    let big = (7u64 << 32) | 10;
    assert_eq!(epoch_tag(big), 10);
    assert_eq!(check_epoch(10, big), EpochCheck::Current);
    assert_eq!(check_epoch(10, big + 2), EpochCheck::Moved);
    assert_eq!(check_epoch(u32::MAX - 1, u64::MAX - 1), EpochCheck::Current);
    assert_eq!(check_epoch(u32::MAX - 1, u64::MAX), EpochCheck::Migrating);
}
