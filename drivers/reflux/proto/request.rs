// SPDX-License-Identifier: GPL-2.0

//! Validation of a submission descriptor, and the epoch check of drain-and-switch migration.
//!
//! The device trusts nothing in a descriptor: [`Request::validate`] checks it against the PMR
//! layout's parameters before the device touches any buffer, block or actor it names, and the
//! driver runs the same check before it submits, so that a driver bug shows up as `EINVAL` on the
//! host rather than as a device error. Every [`RequestError`] maps to
//! [`STATUS_EINVAL`](crate::abi::STATUS_EINVAL).
//!
//! Each stage's actor has an epoch counter in the PMR's epoch table, bumped by the host's
//! scheduler at the start and at the end of a migration (odd while migrating). The host copies
//! the low 32 bits of each stage's epoch into the descriptor when it routes the request;
//! [`check_epoch`] tells the side about to run a stage whether that routing still holds (§4.1:
//! "if a host thread reads a page whose epoch has advanced, it detects an in-flight migration and
//! retries after the migration completes").

use core::fmt;

use super::pipeline::{Direction, PipelineError, Route, MAX_STAGES};
use crate::abi::{self, LayoutParams, SubmissionDescriptor};

/// Why a descriptor is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestError {
    /// The opcode, flags or placement (see [`PipelineError`]).
    Pipeline(PipelineError),
    /// `stage_start` past the last step.
    StageStart(u8),
    /// A block count outside `1..=MAX_REQ_BLOCKS` (or nonzero on a flush).
    BlockCount(u8),
    /// Blocks past the device's capacity (or a nonzero LBA on a flush).
    LbaRange,
    /// Buffers past the buffer pool (or a nonzero buffer index on a flush).
    BufferRange,
    /// A state handle past the request-state area.
    StateHandle(u16),
    /// A stage's actor id past the actor table.
    ActorId {
        /// The stage (pipeline order).
        stage: u8,
        /// The actor id.
        id: u8,
    },
    /// An actor id or epoch for a stage the pipeline does not have.
    Reserved,
}

impl From<PipelineError> for RequestError {
    fn from(e: PipelineError) -> Self {
        Self::Pipeline(e)
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pipeline(e) => fmt::Display::fmt(e, f),
            Self::StageStart(s) => write!(f, "stage_start {s} is past the last step"),
            Self::BlockCount(n) => write!(f, "block count {n} out of range"),
            Self::LbaRange => f.write_str("blocks past the device capacity"),
            Self::BufferRange => f.write_str("buffers past the buffer pool"),
            Self::StateHandle(h) => write!(f, "state handle {h} past the request-state area"),
            Self::ActorId { stage, id } => write!(f, "stage {stage}: actor id {id} out of range"),
            Self::Reserved => f.write_str("actor id or epoch given for a missing stage"),
        }
    }
}

impl RequestError {
    /// The completion status of a request refused for this reason.
    pub const fn status(&self) -> i32 {
        abi::STATUS_EINVAL
    }
}

/// A validated submission descriptor.
///
/// # Invariants
///
/// For a read or a write: `1 <= nr_blocks <= MAX_REQ_BLOCKS`, blocks `lba..lba + nr_blocks`
/// exist, buffers `buf_index..buf_index + nr_blocks` exist, the state blob exists, every stage's
/// actor exists. For a flush: no block, LBA 0, buffer 0. For a migration: no block, LBA 0,
/// buffer 0, `actors[0]` an existing actor other than 0 and `epochs[0]` odd. In all: `stage_start <= steps`, and the
/// actor ids and epochs past the stage count are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    route: Route,
    desc: SubmissionDescriptor,
}

impl Request {
    /// Checks `desc` against a PMR laid out with `params`.
    pub fn validate(
        desc: &SubmissionDescriptor,
        params: &LayoutParams,
    ) -> Result<Self, RequestError> {
        let route = Route::new(desc.opcode, desc.flags, desc.placement)?;
        let steps = route.steps();
        if desc.stage_start > steps {
            return Err(RequestError::StageStart(desc.stage_start));
        }
        let n = desc.nr_blocks;
        if matches!(route.direction(), Direction::Migrate) {
            return Self::validate_migrate(route, desc, params);
        }
        if matches!(route.direction(), Direction::Flush) {
            if n != 0 {
                return Err(RequestError::BlockCount(n));
            }
            if desc.lba != 0 {
                return Err(RequestError::LbaRange);
            }
            if desc.buf_index != 0 {
                return Err(RequestError::BufferRange);
            }
        } else {
            if n == 0 || u32::from(n) > abi::MAX_REQ_BLOCKS {
                return Err(RequestError::BlockCount(n));
            }
            match desc.lba.checked_add(u64::from(n)) {
                Some(end) if end <= params.nr_blocks => {}
                _ => return Err(RequestError::LbaRange),
            }
            match desc.buf_index.checked_add(u32::from(n)) {
                Some(end) if end <= params.nr_buffers => {}
                _ => return Err(RequestError::BufferRange),
            }
            if u32::from(desc.state) >= params.ring_entries {
                return Err(RequestError::StateHandle(desc.state));
            }
        }
        for stage in 0..MAX_STAGES {
            let (id, epoch) = (desc.actors[stage], desc.epochs[stage]);
            // `stage < MAX_STAGES <= 8`: the narrowing is lossless.
            let stage = stage as u8;
            if stage >= steps {
                if id != 0 || epoch != 0 {
                    return Err(RequestError::Reserved);
                }
            } else if u32::from(id) >= params.nr_actors {
                return Err(RequestError::ActorId { stage, id });
            }
        }
        // INVARIANT: every rule of the type invariant is checked above.
        Ok(Self { route, desc: *desc })
    }

    /// A migration: no block, LBA 0, buffer 0, an existing actor in `actors[0]` with an odd
    /// (migrating) epoch in `epochs[0]`, nothing in the second entries.
    fn validate_migrate(
        route: Route,
        desc: &SubmissionDescriptor,
        params: &LayoutParams,
    ) -> Result<Self, RequestError> {
        if desc.nr_blocks != 0 {
            return Err(RequestError::BlockCount(desc.nr_blocks));
        }
        if desc.lba != 0 {
            return Err(RequestError::LbaRange);
        }
        if desc.buf_index != 0 {
            return Err(RequestError::BufferRange);
        }
        let id = desc.actors[0];
        if id == 0 || u32::from(id) >= params.nr_actors {
            return Err(RequestError::ActorId { stage: 0, id });
        }
        if desc.epochs[0] & 1 == 0 || desc.actors[1..].iter().any(|a| *a != 0) {
            return Err(RequestError::Reserved);
        }
        if desc.epochs[1..].iter().any(|e| *e != 0) {
            return Err(RequestError::Reserved);
        }
        // INVARIANT: a migration's rules, checked above.
        Ok(Self { route, desc: *desc })
    }

    /// The actor a migration moves (`actors[0]`), for a [`Direction::Migrate`] request.
    pub const fn migrating_actor(&self) -> Option<u8> {
        if matches!(self.route.direction(), Direction::Migrate) {
            Some(self.desc.actors[0])
        } else {
            None
        }
    }

    /// The route: pipeline, direction, stages, placement.
    pub const fn route(&self) -> Route {
        self.route
    }

    /// The descriptor as submitted.
    pub const fn descriptor(&self) -> SubmissionDescriptor {
        self.desc
    }

    /// The actor id of stage `stage` (pipeline order), if the stage exists.
    pub const fn actor(&self, stage: u8) -> Option<u8> {
        if stage < self.route.steps() {
            Some(self.desc.actors[stage as usize])
        } else {
            None
        }
    }

    /// The epoch the host routed stage `stage` (pipeline order) in, if the stage exists.
    pub const fn routed_epoch(&self, stage: u8) -> Option<u32> {
        if stage < self.route.steps() {
            Some(self.desc.epochs[stage as usize])
        } else {
            None
        }
    }
}

/// The outcome of [`check_epoch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EpochCheck {
    /// The actor is where the request was routed: run the stage.
    Current,
    /// The actor is migrating (odd epoch): do not run it; complete with `EAGAIN`.
    Migrating,
    /// The actor has migrated since the request was routed: do not run it; complete with
    /// `EAGAIN` so that the host re-routes.
    Moved,
}

/// The low 32 bits of an epoch, as a descriptor carries them. A request would have to wait 2^32
/// migrations of one actor for a stale epoch to look current.
pub const fn epoch_tag(epoch: u64) -> u32 {
    epoch as u32
}

/// Whether an epoch means "migrating" (odd: between the two bumps of a migration).
pub const fn is_migrating(epoch: u64) -> bool {
    epoch & 1 != 0
}

/// Compares the epoch a request was routed in (`routed`, from its descriptor) with the actor's
/// epoch now (`current`, from the epoch table).
pub const fn check_epoch(routed: u32, current: u64) -> EpochCheck {
    if is_migrating(current) {
        EpochCheck::Migrating
    } else if epoch_tag(current) != routed {
        EpochCheck::Moved
    } else {
        EpochCheck::Current
    }
}
