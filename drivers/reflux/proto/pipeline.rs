// SPDX-License-Identifier: GPL-2.0

//! Predefined pipelines, stage order and per-stage placement runs (paper §4.1, §4.2, §4.4).
//!
//! A request names a predefined pipeline with a 4-bit id and enables optional stages with a flags
//! word. Resolved, a pipeline is a short list of **stages** in pipeline order:
//!
//! | pipeline | stages (write order) |
//! | --- | --- |
//! | [`Pipeline::Passthrough`] | none |
//! | [`Pipeline::Checksum`] | crc32c |
//! | [`Pipeline::Compress`] | lz4, then crc32c if [`PIPE_FLAG_CHECKSUM`] |
//! | [`Pipeline::Encrypt`] | aes-xts, then crc32c if [`PIPE_FLAG_CHECKSUM`] |
//!
//! A write runs the stages in pipeline order (transform, then checksum what is stored); a read
//! runs them in reverse (verify what was stored, then undo the transform). A **step** is a
//! position in that execution order; placement is per stage, because it is a stage's actor that
//! lives on one side.
//!
//! Each stage is placed on the host or on the device ([`SubmissionDescriptor::placement`]). A
//! side runs a **run**: the contiguous device- or host-placed steps from where the request was
//! handed to it, and hands the request to the other side at the first step placed there. The
//! device also does the I/O: it **loads** a read's blocks before the first step and **commits** a
//! write's blocks after the last one. [`Route::run`] computes a run; [`Route::first`] says where a
//! new request starts. Every step is run exactly once, in order, on the side it is placed on.
//!
//! [`SubmissionDescriptor::placement`]: crate::abi::SubmissionDescriptor::placement
//! [`PIPE_FLAG_CHECKSUM`]: crate::abi::PIPE_FLAG_CHECKSUM

use core::fmt;

use crate::abi;

/// The most stages a resolved pipeline has.
pub const MAX_STAGES: usize = abi::MAX_STAGES as usize;

/// Why a request's pipeline, direction, flags or placement is refused. The driver and the device
/// map every one to `EINVAL` ([`abi::STATUS_EINVAL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PipelineError {
    /// The pipeline id is not a `PIPELINE_*` value.
    UnknownPipeline(u8),
    /// The direction is not a `DIR_*` value.
    UnknownDirection(u8),
    /// The flags word has bits outside [`abi::PIPE_FLAGS_KNOWN`].
    UnknownFlags(u16),
    /// A known flag that the pipeline has no use for (an optional stage on
    /// [`Pipeline::Passthrough`]).
    FlagNotApplicable(u16),
    /// A flush with a pipeline other than [`Pipeline::Passthrough`]: a flush moves no data.
    FlushWithStages,
    /// The placement mask has a bit for a stage the pipeline does not have.
    PlacementOutOfRange(u8),
    /// A step past the end of the pipeline.
    StepOutOfRange(u8),
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPipeline(p) => write!(f, "unknown pipeline {p}"),
            Self::UnknownDirection(d) => write!(f, "unknown direction {d}"),
            Self::UnknownFlags(x) => write!(f, "unknown pipeline flags {x:#x}"),
            Self::FlagNotApplicable(x) => write!(f, "pipeline flags {x:#x} name no stage here"),
            Self::FlushWithStages => {
                f.write_str("a flush or a migration takes the passthrough pipeline")
            }
            Self::PlacementOutOfRange(m) => write!(f, "placement {m:#x} names a missing stage"),
            Self::StepOutOfRange(s) => write!(f, "step {s} is past the end of the pipeline"),
        }
    }
}

/// What a stage does. Each has a write-side and a read-side operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Write: compute the crc32c of the block's bytes. Read: verify it (`EIO` on mismatch).
    Crc32c,
    /// Write: LZ4-compress the block (kept raw if it does not shrink). Read: decompress.
    Lz4,
    /// Write: AES-XTS-encrypt the block, data unit = LBA. Read: decrypt.
    AesXts,
}

impl Stage {
    /// The [`abi::ActorShared::kind`] of an actor that implements this stage.
    pub const fn actor_kind(self) -> u32 {
        match self {
            Self::Crc32c => abi::ACTOR_KIND_CRC32C,
            Self::Lz4 => abi::ACTOR_KIND_LZ4,
            Self::AesXts => abi::ACTOR_KIND_AES_XTS,
        }
    }
}

/// A predefined pipeline (the low nibble of the opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pipeline {
    /// [`abi::PIPELINE_PASSTHROUGH`].
    Passthrough,
    /// [`abi::PIPELINE_CHECKSUM`].
    Checksum,
    /// [`abi::PIPELINE_COMPRESS`].
    Compress,
    /// [`abi::PIPELINE_ENCRYPT`].
    Encrypt,
}

impl Pipeline {
    /// Every pipeline, in id order.
    pub const ALL: [Self; abi::PIPELINE_COUNT as usize] = [
        Self::Passthrough,
        Self::Checksum,
        Self::Compress,
        Self::Encrypt,
    ];

    /// The pipeline with id `id`.
    pub const fn from_id(id: u8) -> Result<Self, PipelineError> {
        match id {
            abi::PIPELINE_PASSTHROUGH => Ok(Self::Passthrough),
            abi::PIPELINE_CHECKSUM => Ok(Self::Checksum),
            abi::PIPELINE_COMPRESS => Ok(Self::Compress),
            abi::PIPELINE_ENCRYPT => Ok(Self::Encrypt),
            _ => Err(PipelineError::UnknownPipeline(id)),
        }
    }

    /// The pipeline's name, as the administrator writes it (configfs).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Passthrough => "passthrough",
            Self::Checksum => "checksum",
            Self::Compress => "compress",
            Self::Encrypt => "encrypt",
        }
    }

    /// The pipeline named `name`.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name().as_bytes() == name)
    }

    /// The pipeline's id.
    pub const fn id(self) -> u8 {
        match self {
            Self::Passthrough => abi::PIPELINE_PASSTHROUGH,
            Self::Checksum => abi::PIPELINE_CHECKSUM,
            Self::Compress => abi::PIPELINE_COMPRESS,
            Self::Encrypt => abi::PIPELINE_ENCRYPT,
        }
    }

    /// The pipeline's stages with the optional ones that `flags` enables, in pipeline order.
    pub const fn stages(self, flags: u16) -> Result<Stages, PipelineError> {
        if flags & !abi::PIPE_FLAGS_KNOWN != 0 {
            return Err(PipelineError::UnknownFlags(flags));
        }
        let crc = flags & abi::PIPE_FLAG_CHECKSUM != 0;
        let first = match self {
            Self::Passthrough if flags != 0 => return Err(PipelineError::FlagNotApplicable(flags)),
            Self::Passthrough => return Ok(Stages::EMPTY),
            // The checksum stage is the pipeline; the flag asks for what is already there.
            Self::Checksum => return Ok(Stages::one(Stage::Crc32c)),
            Self::Compress => Stage::Lz4,
            Self::Encrypt => Stage::AesXts,
        };
        if crc {
            Ok(Stages::two(first, Stage::Crc32c))
        } else {
            Ok(Stages::one(first))
        }
    }
}

/// A request's direction (the high nibble of the opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// [`abi::DIR_READ`]: the device loads, then the stages run in reverse order.
    Read,
    /// [`abi::DIR_WRITE`]: the stages run in pipeline order, then the device commits.
    Write,
    /// [`abi::DIR_FLUSH`]: no stage; the device completes once earlier writes are on NAND.
    Flush,
    /// [`abi::DIR_MIGRATE`]: no stage; the device's part of an actor's migration. The
    /// placement byte is the destination (1: the device), not a stage mask.
    Migrate,
}

impl Direction {
    /// The direction with id `id`.
    pub const fn from_id(id: u8) -> Result<Self, PipelineError> {
        match id {
            abi::DIR_READ => Ok(Self::Read),
            abi::DIR_WRITE => Ok(Self::Write),
            abi::DIR_FLUSH => Ok(Self::Flush),
            abi::DIR_MIGRATE => Ok(Self::Migrate),
            _ => Err(PipelineError::UnknownDirection(id)),
        }
    }

    /// The direction's id.
    pub const fn id(self) -> u8 {
        match self {
            Self::Read => abi::DIR_READ,
            Self::Write => abi::DIR_WRITE,
            Self::Flush => abi::DIR_FLUSH,
            Self::Migrate => abi::DIR_MIGRATE,
        }
    }
}

/// Where a stage runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The host CPU.
    Host,
    /// The device's engine cores.
    Device,
}

impl Side {
    /// Its name in logs and debugfs files.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Device => "device",
        }
    }

    /// Its `SIDE_*` value in the PMR ([`abi::ActorShared::owner`]).
    pub const fn abi(self) -> u32 {
        match self {
            Self::Host => abi::SIDE_HOST,
            Self::Device => abi::SIDE_DEVICE,
        }
    }

    /// The side a `SIDE_*` value names (any value other than `SIDE_HOST` is the device, the
    /// side that formats the PMR).
    pub const fn from_abi(side: u32) -> Self {
        if side == abi::SIDE_HOST {
            Self::Host
        } else {
            Self::Device
        }
    }

    /// The other side.
    pub const fn other(self) -> Self {
        match self {
            Self::Host => Self::Device,
            Self::Device => Self::Host,
        }
    }
}

/// The stages of a resolved pipeline, in pipeline order.
///
/// # Invariants
///
/// `len <= MAX_STAGES`; entries at and after `len` are unused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stages {
    list: [Stage; MAX_STAGES],
    len: u8,
}

impl Stages {
    /// No stage.
    pub const EMPTY: Self = Self {
        list: [Stage::Crc32c; MAX_STAGES],
        len: 0,
    };

    const fn one(a: Stage) -> Self {
        Self {
            list: [a; MAX_STAGES],
            len: 1,
        }
    }

    const fn two(a: Stage, b: Stage) -> Self {
        Self {
            list: [a, b],
            len: 2,
        }
    }

    /// Number of stages.
    pub const fn len(&self) -> u8 {
        self.len
    }

    /// Whether there is no stage.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stage `index` (pipeline order), if it exists.
    pub const fn get(&self, index: u8) -> Option<Stage> {
        if index < self.len {
            Some(self.list[index as usize])
        } else {
            None
        }
    }
}

/// Where a request goes next: to a side, at a step, or nowhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hop {
    /// The host continues at this step.
    Host(u8),
    /// The device continues at this step (a descriptor with this `stage_start`).
    Device(u8),
    /// The request is finished.
    Done,
}

impl Hop {
    const fn to(side: Side, step: u8) -> Self {
        match side {
            Side::Host => Self::Host(step),
            Side::Device => Self::Device(step),
        }
    }

    /// The value of [`abi::CompletionEntry::next_stage`] for this hop, from the device's view:
    /// the step the host continues at, or [`abi::NEXT_STAGE_DONE`].
    pub const fn next_stage(self) -> u8 {
        match self {
            Self::Host(step) | Self::Device(step) => step,
            Self::Done => abi::NEXT_STAGE_DONE,
        }
    }
}

/// What one side does with a request it holds: run steps `start..end`, loading first or
/// committing last, then hand it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    /// The side that runs.
    pub side: Side,
    /// The first step it runs.
    pub start: u8,
    /// One past the last step it runs; `start == end` for a run of no step.
    pub end: u8,
    /// The device must first load the request's blocks into its buffers (a read's first visit).
    pub load: bool,
    /// The device must, after the steps, commit the request's blocks (a write's last visit).
    pub commit: bool,
    /// Where the request goes after the run.
    pub next: Hop,
}

impl Run {
    /// Whether the run runs no step (it may still load or commit).
    pub const fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A request's pipeline, direction and placement, validated: everything needed to route it.
///
/// # Invariants
///
/// `placement` has no bit at or above `stages.len()`; a flush has no stage; a migration has no
/// stage and a placement of 0 or 1 (its destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    pipeline: Pipeline,
    direction: Direction,
    stages: Stages,
    placement: u8,
}

impl Route {
    /// Validates the opcode byte (pipeline and direction), the flags word and the placement mask
    /// of a descriptor.
    pub const fn new(opcode: u8, flags: u16, placement: u8) -> Result<Self, PipelineError> {
        let pipeline = match Pipeline::from_id(abi::opcode_pipeline(opcode)) {
            Ok(p) => p,
            Err(e) => return Err(e),
        };
        let direction = match Direction::from_id(abi::opcode_direction(opcode)) {
            Ok(d) => d,
            Err(e) => return Err(e),
        };
        let stages = match pipeline.stages(flags) {
            Ok(s) => s,
            Err(e) => return Err(e),
        };
        if matches!(direction, Direction::Flush | Direction::Migrate) && !stages.is_empty() {
            return Err(PipelineError::FlushWithStages);
        }
        if matches!(direction, Direction::Migrate) {
            if flags != 0 || placement > 1 {
                return Err(PipelineError::PlacementOutOfRange(placement));
            }
            // INVARIANT: a migration has no stage; its placement byte names the destination.
            return Ok(Self {
                pipeline,
                direction,
                stages,
                placement,
            });
        }
        // Widened so that the shift stays in range whatever `MAX_STAGES` grows to.
        if (placement as u32) >> stages.len() != 0 {
            return Err(PipelineError::PlacementOutOfRange(placement));
        }
        // INVARIANT: the placement and flush checks above.
        Ok(Self {
            pipeline,
            direction,
            stages,
            placement,
        })
    }

    /// The pipeline.
    pub const fn pipeline(&self) -> Pipeline {
        self.pipeline
    }

    /// The direction.
    pub const fn direction(&self) -> Direction {
        self.direction
    }

    /// The stages, in pipeline order.
    pub const fn stages(&self) -> Stages {
        self.stages
    }

    /// The placement mask: bit `i` set if stage `i` runs on the device.
    pub const fn placement(&self) -> u8 {
        self.placement
    }

    /// Number of steps (= stages).
    pub const fn steps(&self) -> u8 {
        self.stages.len()
    }

    /// The stage (pipeline-order index, which is also the index into the descriptor's `actors`
    /// and `epochs`) that step `step` runs, if the step exists.
    pub const fn stage_index(&self, step: u8) -> Option<u8> {
        let n = self.stages.len();
        if step >= n {
            return None;
        }
        match self.direction {
            Direction::Write | Direction::Flush | Direction::Migrate => Some(step),
            Direction::Read => Some(n - 1 - step),
        }
    }

    /// The stage step `step` runs, if the step exists.
    pub const fn stage_at(&self, step: u8) -> Option<Stage> {
        match self.stage_index(step) {
            Some(i) => self.stages.get(i),
            None => None,
        }
    }

    /// The side step `step` is placed on, if the step exists.
    pub const fn side(&self, step: u8) -> Option<Side> {
        match self.stage_index(step) {
            Some(i) if self.placement & (1 << i) != 0 => Some(Side::Device),
            Some(_) => Some(Side::Host),
            None => None,
        }
    }

    /// Where a new request starts: a read or a flush on the device (it loads first); a write on
    /// the side of its first step, or on the device if it has no step (it only commits).
    pub const fn first(&self) -> Hop {
        match (self.direction, self.side(0)) {
            (Direction::Write, Some(Side::Host)) => Hop::Host(0),
            _ => Hop::Device(0),
        }
    }

    /// The run of `side` on a request handed to it at step `from`: the steps from `from` for as
    /// long as they are placed on `side`, and where the request goes next.
    ///
    /// A run may be empty: the device bounces a request whose step `from` is host-placed
    /// straight back (after loading it, on a read's first visit), and commits a write that
    /// arrives with every step done.
    pub const fn run(&self, side: Side, from: u8) -> Result<Run, PipelineError> {
        let n = self.steps();
        if from > n {
            return Err(PipelineError::StepOutOfRange(from));
        }
        let mut end = from;
        while end < n {
            match self.side(end) {
                Some(s) if same_side(s, side) => end += 1,
                _ => break,
            }
        }
        let is_device = matches!(side, Side::Device);
        let next = if end < n {
            // Step `end` exists and is placed on the other side, by the loop above.
            Hop::to(side.other(), end)
        } else if matches!(self.direction, Direction::Write) && !is_device {
            // Only the device commits: a write the host finished goes back to it.
            Hop::Device(n)
        } else {
            Hop::Done
        };
        Ok(Run {
            side,
            start: from,
            end,
            load: is_device && matches!(self.direction, Direction::Read) && from == 0,
            commit: is_device && matches!(self.direction, Direction::Write) && end == n,
            next,
        })
    }
}

/// `a == b`, in a `const fn`.
const fn same_side(a: Side, b: Side) -> bool {
    matches!(
        (a, b),
        (Side::Host, Side::Host) | (Side::Device, Side::Device)
    )
}
