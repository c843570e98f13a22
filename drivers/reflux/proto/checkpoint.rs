// SPDX-License-Identifier: GPL-2.0

//! An actor's control state, its checkpoint in the PMR, and crash recovery of a migration.
//!
//! # Control state and shared state (§4.2)
//!
//! An actor's **shared state** (the [`ActorShared`] header and the data after it: statistics,
//! per-range metadata) stays in the PMR and is used in place by whichever side runs the actor.
//! Its **control state** ([`ActorControl`]) lives with the side that runs it (the owner) and is
//! the only thing a migration moves: the source serialises it into the actor's control area, the
//! destination rebuilds the actor from it. A side that holds no control state for an actor cannot
//! run it; that is what makes ownership real rather than a flag.
//!
//! # Two checkpoint slots
//!
//! The control area holds two [`CKPT_BYTES`]-byte slots, at offsets 0 and [`CKPT_SLOT_STRIDE`].
//! A writer always writes the slot that does **not** hold the checkpoint [`ActorShared::ckpt_epoch`]
//! names, and publishes it by storing `ckpt_epoch` last (release). A crash in the middle of a
//! write therefore tears only the slot no one refers to; the reader ([`find`]) takes the slot whose
//! recorded epoch is `ckpt_epoch` and whose checksum holds.
//!
//! # The two-phase commit (§4.5) and recovery
//!
//! A migration of an actor at even epoch `e`: the host bumps the epoch to `e + 1` (odd:
//! migrating) before the drain (the source refuses runs it has not started); once drained, the
//! source writes the checkpoint for epoch `e + 1` and stores
//! `ckpt_epoch = e + 1` ("ready"); the destination rebuilds, writes `owner` and then stores
//! `active_epoch = e + 1` ("active"); the host bumps the epoch to `e + 2`. After a crash,
//! [`recover`] decides from the PMR alone: an even epoch is settled; an odd epoch with
//! `active_epoch` equal to it rolls forward (the destination owns the actor); any other odd epoch
//! rolls back to the source, which is `ckpt_side` if "ready" was stored and the untouched `owner`
//! otherwise (the destination writes `owner` only after "ready"). Either way the epoch becomes
//! the next even value, so requests routed before the crash are refused and re-routed.
//!
//! The live control state of the crashed owner is lost with the power; the owner rebuilds it from
//! the newest checkpoint. Whatever ran since that checkpoint is still counted in the shared state
//! (the PMR is persistent), so only the control state's counters lag: the paper's "only the ~8 KB
//! control state may need re-checkpointing".

use core::fmt;

use crate::abi::{ActorShared, ACTOR_CONTROL_SIZE, SIDE_DEVICE, SIDE_HOST};

/// Magic of a checkpoint slot: the bytes `"RFXC"` in memory order.
pub const CKPT_MAGIC: u32 = u32::from_le_bytes(*b"RFXC");
/// Version of the checkpoint encoding.
pub const CKPT_VERSION: u32 = 1;
/// Bytes of one encoded checkpoint.
pub const CKPT_BYTES: usize = 64;
/// Offset of slot 1 in the control area (slot 0 is at 0).
pub const CKPT_SLOT_STRIDE: usize = 2048;
const _: () = assert!(CKPT_SLOT_STRIDE + CKPT_BYTES <= ACTOR_CONTROL_SIZE as usize);
const _: () = assert!(CKPT_BYTES <= CKPT_SLOT_STRIDE);

/// The control state of one actor instance: what moves on migration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActorControl {
    /// `ACTOR_KIND_*`: a checkpoint of another kind is refused.
    pub kind: u32,
    /// How many times the control state changed sides (completed migrations).
    pub generation: u64,
    /// Blocks this actor ran, on either side, as its control state counts them. The shared
    /// state's [`ActorShared::invocations`] counts the same blocks in the PMR; the two agree when
    /// nothing runs and no crash lost the tail of the control state.
    pub runs: u64,
}

/// A checkpoint as found in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The epoch it was written for (odd: a migration's; even: a snapshot at unmount).
    pub epoch: u64,
    /// Write sequence: one more than the newest valid slot when it was written. Two snapshots
    /// can share an epoch (two unmounts without a migration between); the newer wins.
    pub seq: u64,
    /// `SIDE_*` that wrote it.
    pub side: u32,
    /// The state.
    pub control: ActorControl,
}

/// Why a slot holds no usable checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CkptError {
    /// Wrong magic or version: never written, or another format.
    Format,
    /// The checksum does not match: a torn or corrupted slot.
    Checksum,
    /// A side that is not `SIDE_HOST` or `SIDE_DEVICE`.
    Side(u32),
    /// Neither slot holds a valid checkpoint of the wanted epoch.
    Missing(u64),
    /// A checkpoint of another actor kind.
    Kind {
        /// The kind expected.
        want: u32,
        /// The kind found.
        found: u32,
    },
}

impl fmt::Display for CkptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Format => f.write_str("no checkpoint (magic or version)"),
            Self::Checksum => f.write_str("checkpoint checksum mismatch"),
            Self::Side(s) => write!(f, "checkpoint written by unknown side {s}"),
            Self::Missing(e) => write!(f, "no valid checkpoint of epoch {e}"),
            Self::Kind { want, found } => {
                write!(f, "checkpoint of actor kind {found}, expected {want}")
            }
        }
    }
}

/// FNV-1a, 64 bits: enough to tell a torn slot from a whole one (not an integrity MAC).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn put32(out: &mut [u8; CKPT_BYTES], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(out: &mut [u8; CKPT_BYTES], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get32(b: &[u8; CKPT_BYTES], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn get64(b: &[u8; CKPT_BYTES], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

// The encoding: magic, version, kind, side (u32 each), epoch, generation, runs, seq (u64 each),
// zeros, and the FNV-1a of everything before it in the last 8 bytes.
const SUM_AT: usize = CKPT_BYTES - 8;

impl Checkpoint {
    /// The slot image of this checkpoint.
    pub fn encode(&self) -> [u8; CKPT_BYTES] {
        let mut out = [0u8; CKPT_BYTES];
        put32(&mut out, 0, CKPT_MAGIC);
        put32(&mut out, 4, CKPT_VERSION);
        put32(&mut out, 8, self.control.kind);
        put32(&mut out, 12, self.side);
        put64(&mut out, 16, self.epoch);
        put64(&mut out, 24, self.control.generation);
        put64(&mut out, 32, self.control.runs);
        put64(&mut out, 40, self.seq);
        let sum = fnv1a(&out[..SUM_AT]);
        put64(&mut out, SUM_AT, sum);
        out
    }

    /// Decodes a slot image.
    pub fn decode(b: &[u8; CKPT_BYTES]) -> Result<Self, CkptError> {
        if get32(b, 0) != CKPT_MAGIC || get32(b, 4) != CKPT_VERSION {
            return Err(CkptError::Format);
        }
        if fnv1a(&b[..SUM_AT]) != get64(b, SUM_AT) {
            return Err(CkptError::Checksum);
        }
        let side = get32(b, 12);
        if side != SIDE_HOST && side != SIDE_DEVICE {
            return Err(CkptError::Side(side));
        }
        Ok(Self {
            epoch: get64(b, 16),
            seq: get64(b, 40),
            side,
            control: ActorControl {
                kind: get32(b, 8),
                generation: get64(b, 24),
                runs: get64(b, 32),
            },
        })
    }

    /// The control state the side `owner` runs with after rebuilding from this checkpoint: a
    /// checkpoint written by the other side is a hand-over, which counts one generation.
    pub fn rebuild(&self, owner: u32) -> ActorControl {
        let mut c = self.control;
        if self.side != owner {
            c.generation = c.generation.wrapping_add(1);
        }
        c
    }
}

/// The byte offset of slot `slot` (0 or 1) in the control area.
pub const fn slot_offset(slot: usize) -> usize {
    if slot == 0 {
        0
    } else {
        CKPT_SLOT_STRIDE
    }
}

/// The newest valid checkpoint of epoch `epoch` among the slots, with its slot index.
fn newest(slots: &[[u8; CKPT_BYTES]; 2], epoch: u64) -> Result<(usize, Checkpoint), CkptError> {
    let mut best: Option<(usize, Checkpoint)> = None;
    let mut last = CkptError::Missing(epoch);
    for (i, s) in slots.iter().enumerate() {
        match Checkpoint::decode(s) {
            Ok(c) if c.epoch == epoch => {
                if best.map_or(true, |(_, b)| c.seq > b.seq) {
                    best = Some((i, c));
                }
            }
            Ok(_) | Err(CkptError::Format) => {}
            Err(e) => last = e,
        }
    }
    best.ok_or(last)
}

/// The checkpoint of epoch `epoch` of an actor of kind `kind`, from the two slot images: the
/// newest valid one of that epoch.
pub fn find(slots: &[[u8; CKPT_BYTES]; 2], epoch: u64, kind: u32) -> Result<Checkpoint, CkptError> {
    let (_, c) = newest(slots, epoch)?;
    if c.control.kind != kind {
        return Err(CkptError::Kind {
            want: kind,
            found: c.control.kind,
        });
    }
    Ok(c)
}

/// Where a new checkpoint goes and its sequence number: the slot not holding the checkpoint
/// [`find`] returns for `current` (the actor's `ckpt_epoch`), so that the published checkpoint
/// survives a torn write, and a sequence above every valid slot's.
pub fn slot_for_write(slots: &[[u8; CKPT_BYTES]; 2], current: u64) -> (usize, u64) {
    let seq = slots
        .iter()
        .filter_map(|s| Checkpoint::decode(s).ok())
        .map(|c| c.seq)
        .max()
        .map_or(0, |m| m.wrapping_add(1));
    match newest(slots, current) {
        Ok((i, _)) => (1 - i, seq),
        Err(_) => (0, seq),
    }
}

/// How an actor's placement was settled at mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No migration was in progress.
    Settled,
    /// A migration was in progress and had not reached "active": the source keeps the actor.
    RolledBack,
    /// A migration had reached "active": the destination keeps the actor.
    RolledForward,
}

/// The result of [`recover`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// `SIDE_*` that owns the actor.
    pub owner: u32,
    /// The epoch to store: even, and greater than an odd one found.
    pub epoch: u64,
    /// What happened.
    pub outcome: Outcome,
}

/// Settles an actor whose epoch is `epoch` and whose shared-state header is `sh`, after a crash
/// or a clean stop (see the module documentation).
pub fn recover(epoch: u64, sh: &ActorShared) -> Recovered {
    if epoch & 1 == 0 {
        return Recovered {
            owner: sh.owner,
            epoch,
            outcome: Outcome::Settled,
        };
    }
    let next = epoch.wrapping_add(1);
    if sh.active_epoch == epoch {
        Recovered {
            owner: sh.owner,
            epoch: next,
            outcome: Outcome::RolledForward,
        }
    } else {
        let owner = if sh.ckpt_epoch == epoch {
            sh.ckpt_side
        } else {
            sh.owner
        };
        Recovered {
            owner,
            epoch: next,
            outcome: Outcome::RolledBack,
        }
    }
}
