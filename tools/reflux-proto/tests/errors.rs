//! Every error names its cause: a distinct, non-empty message per variant (they end up in the
//! kernel log).

use std::collections::BTreeSet;

use reflux_proto::abi::{LayoutError, SuperblockError};
use reflux_proto::block_meta::BlockMetaError;
use reflux_proto::pacing::PacerError;
use reflux_proto::pipeline::PipelineError;
use reflux_proto::poll_switch::PollSwitchError;
use reflux_proto::request::RequestError;
use reflux_proto::thermal::ThermalError;
use reflux_proto::xts::XtsError;

fn distinct(messages: Vec<String>) {
    let n = messages.len();
    assert!(messages.iter().all(|m| !m.is_empty()), "{messages:?}");
    assert_eq!(
        messages.iter().collect::<BTreeSet<_>>().len(),
        n,
        "{messages:?}"
    );
}

#[test]
fn errors_display_their_cause() {
    distinct(
        [
            LayoutError::RingEntries,
            LayoutError::Buffers,
            LayoutError::Actors,
            LayoutError::Blocks,
            LayoutError::Overflow,
            LayoutError::TooSmall { needed: 8192 },
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    let needed = LayoutError::TooSmall { needed: 8192 }.to_string();
    assert!(needed.contains("8192"), "{needed}");
    distinct(
        [
            SuperblockError::BadMagic,
            SuperblockError::BadVersion { major: 2 },
            SuperblockError::BadBlockSize,
            SuperblockError::BadCleanFlag,
            SuperblockError::PmrTooSmall,
            SuperblockError::Layout(LayoutError::Blocks),
            SuperblockError::AreaMismatch { area: 3 },
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    let pipeline = [
        PipelineError::UnknownPipeline(9),
        PipelineError::UnknownDirection(7),
        PipelineError::UnknownFlags(0x80),
        PipelineError::FlagNotApplicable(1),
        PipelineError::FlushWithStages,
        PipelineError::PlacementOutOfRange(4),
        PipelineError::StepOutOfRange(3),
    ];
    distinct(pipeline.iter().map(ToString::to_string).collect());
    distinct(
        [
            RequestError::Pipeline(PipelineError::UnknownPipeline(9)),
            RequestError::StageStart(3),
            RequestError::BlockCount(0),
            RequestError::LbaRange,
            RequestError::BufferRange,
            RequestError::StateHandle(70),
            RequestError::ActorId { stage: 1, id: 9 },
            RequestError::Reserved,
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    distinct(
        [
            BlockMetaError::LengthTooLarge(5000),
            BlockMetaError::UnknownFlags(0x10),
            BlockMetaError::BadLength { len: 1, flags: 1 },
            BlockMetaError::NotValid { len: 1, flags: 0 },
            BlockMetaError::ChecksumMismatch {
                stored: 1,
                computed: 2,
            },
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    distinct(
        [
            ThermalError::Thresholds,
            ThermalError::Rise,
            ThermalError::Tau,
            ThermalError::Cores,
            ThermalError::ThrottledSpeed,
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    distinct(
        [
            PollSwitchError::Thresholds,
            PollSwitchError::WeightShift,
            PollSwitchError::MaxGap,
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
    );
    assert!(!PacerError::MinSleep.to_string().is_empty());
    assert!(XtsError::Length(17).to_string().contains("17"));
}
