// SPDX-License-Identifier: GPL-2.0

//! Why a run of stages failed ([`ExecError`]), and the completion status each failure maps to:
//! the one error type of [`super::exec`] and [`super::external`], on both sides.

use core::fmt;

use crate::proto::pipeline::MAX_STAGES;
use crate::proto::request::EpochCheck;

/// Why a run failed, and the completion status it maps to ([`ExecError::status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// `EAGAIN`: the actor of stage `stage` (pipeline order) is migrating or has moved since the
    /// host routed the request. `epochs` are the epochs seen, for the completion.
    Epoch {
        /// The stage.
        stage: u8,
        /// What the check found.
        check: EpochCheck,
        /// The low 32 bits of every stage's actor epoch as read.
        epochs: [u32; MAX_STAGES],
    },
    /// `EINVAL`: the actor named for stage `stage` is not of the stage's kind.
    ActorKind {
        /// The stage.
        stage: u8,
        /// The actor id.
        id: u8,
        /// The kind found in the actor table.
        kind: u32,
    },
    /// `EINVAL`: the actor's key cannot be expanded.
    Key,
    /// `EINVAL`: block `block`'s blob entry is impossible, or not what the step needs.
    BadState {
        /// The block of the request.
        block: u8,
    },
    /// `EIO`: block `block`'s stored bytes do not have the recorded checksum.
    Checksum {
        /// The block of the request.
        block: u8,
        /// The checksum recorded.
        stored: u32,
        /// The checksum of the bytes.
        computed: u32,
    },
    /// `EIO`: block `block` does not decode (corrupt LZ4 data, ciphertext of a bad length).
    Decode {
        /// The block of the request.
        block: u8,
    },
    /// `EIO`: a finished read left block `block` transformed (`flags`): it was stored by a
    /// pipeline that this read's pipeline cannot undo.
    NotUndone {
        /// The block of the request.
        block: u8,
        /// The flags left.
        flags: u16,
    },
    /// `EIO`: a PMR offset outside the mapping (a layout bug; requests are validated).
    Pmr,
}

impl ExecError {
    /// The completion status (`STATUS_*`) of a request that failed this way.
    pub const fn status(&self) -> i32 {
        use crate::abi::{STATUS_EAGAIN, STATUS_EINVAL, STATUS_EIO};
        match self {
            Self::Epoch { .. } => STATUS_EAGAIN,
            Self::ActorKind { .. } | Self::Key | Self::BadState { .. } => STATUS_EINVAL,
            Self::Checksum { .. } | Self::Decode { .. } | Self::NotUndone { .. } | Self::Pmr => {
                STATUS_EIO
            }
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Epoch { stage, check, .. } => {
                write!(f, "stage {stage}: actor epoch changed ({check:?})")
            }
            Self::ActorKind { stage, id, kind } => {
                write!(f, "stage {stage}: actor {id} is of kind {kind}")
            }
            Self::Key => f.write_str("the actor's XTS key cannot be expanded"),
            Self::BadState { block } => write!(f, "block {block}: impossible request state"),
            Self::Checksum {
                block,
                stored,
                computed,
            } => write!(
                f,
                "block {block}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            Self::Decode { block } => write!(f, "block {block}: stored data does not decode"),
            Self::NotUndone { block, flags } => write!(
                f,
                "block {block}: stored as {flags:#x}, which the read's pipeline does not undo"
            ),
            Self::Pmr => f.write_str("PMR offset outside the mapping"),
        }
    }
}
