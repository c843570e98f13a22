// SPDX-License-Identifier: GPL-2.0

//! The actors' control state on one side, and the PMR half of migration: checkpoint ("ready"),
//! rebuild and "active" (`proto::checkpoint` has the encoding and the recovery rules).
//!
//! Both the driver and the software device keep a [`Controls`] table: the control state of every
//! actor that side owns, and nothing for the others. A side runs a stage only if it holds the
//! actor's control state, and counts every block the actor runs in it, so a control state that a
//! migration lost or duplicated shows as a mismatch with the shared
//! [`ActorShared::invocations`], which both sides add to in the PMR.
//!
//! Ordering: the checkpoint bytes, `ckpt_len` and `ckpt_side` are written before `ckpt_epoch` is
//! stored with release; the destination loads `ckpt_epoch` with acquire before it reads the
//! slots. The destination writes `owner` before it stores `active_epoch` with release; the host
//! loads `active_epoch` with acquire before it trusts `owner`.

use core::mem::offset_of;
use core::sync::atomic::Ordering;

use kernel::{prelude::*, shared_mem::SharedMem};

use crate::abi::{ActorShared, PmrLayout, ACTOR_CLASS_REPLICATED, ACTOR_KIND_NONE};
use crate::proto::checkpoint::{
    self, slot_for_write, slot_offset, ActorControl, Checkpoint, CkptError, CKPT_BYTES,
};

/// Actors a side can hold: the actor table of the software device's format
/// (`tools/testing/reflux/format.rs`); a PMR with more slots uses the first ones only.
pub const MAX_ACTORS: usize = 16;

/// Why a PMR step of a migration failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// The actor id has no slot, or the slot is free.
    NoActor(u8),
    /// The PMR could not be accessed at an offset the layout gave.
    Pmr,
    /// The checkpoint is missing or does not decode.
    Checkpoint(CkptError),
}

impl core::fmt::Display for ControlError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoActor(id) => write!(f, "actor {id} is not registered"),
            Self::Pmr => f.write_str("PMR access out of range"),
            Self::Checkpoint(e) => core::fmt::Display::fmt(e, f),
        }
    }
}

impl From<ControlError> for Error {
    fn from(e: ControlError) -> Self {
        match e {
            ControlError::NoActor(_) => EINVAL,
            ControlError::Pmr | ControlError::Checkpoint(_) => EIO,
        }
    }
}

/// The control states one side holds.
///
/// # Invariants
///
/// `live[id]` is `Some` exactly for the actors this side owns and has rebuilt.
pub struct Controls {
    live: [Option<ActorControl>; MAX_ACTORS],
}

impl Default for Controls {
    fn default() -> Self {
        Self {
            live: [None; MAX_ACTORS],
        }
    }
}

impl Controls {
    /// Whether this side holds actor `id`.
    pub fn holds(&self, id: u8) -> bool {
        matches!(self.live.get(usize::from(id)), Some(Some(_)))
    }

    /// The control state of actor `id`, if held.
    pub fn get(&self, id: u8) -> Option<ActorControl> {
        self.live.get(usize::from(id)).copied().flatten()
    }

    /// Counts `blocks` runs of actor `id` (ignored if not held: the caller checked).
    pub fn ran(&mut self, id: u8, blocks: u64) {
        if let Some(Some(c)) = self.live.get_mut(usize::from(id)) {
            c.runs = c.runs.wrapping_add(blocks);
        }
    }

    /// Holds `control` for actor `id`.
    pub fn put(&mut self, id: u8, control: ActorControl) -> Result<(), ControlError> {
        let slot = self
            .live
            .get_mut(usize::from(id))
            .ok_or(ControlError::NoActor(id))?;
        *slot = Some(control);
        Ok(())
    }

    /// Gives up actor `id`: its control state, if held.
    pub fn take(&mut self, id: u8) -> Option<ActorControl> {
        self.live.get_mut(usize::from(id)).and_then(Option::take)
    }
}

fn shared_at(layout: &PmrLayout, id: u8) -> Result<usize, ControlError> {
    if usize::from(id) >= MAX_ACTORS {
        return Err(ControlError::NoActor(id));
    }
    layout
        .actor_shared(id)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(ControlError::NoActor(id))
}

fn control_at(layout: &PmrLayout, id: u8) -> Result<usize, ControlError> {
    layout
        .actor_control(id)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(ControlError::NoActor(id))
}

/// The shared-state header of actor `id` (a snapshot: fields of other writers may change).
pub fn header(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
) -> Result<ActorShared, ControlError> {
    let at = shared_at(layout, id)?;
    let mut raw = [0u8; core::mem::size_of::<ActorShared>()];
    pmr.read_bytes(at, &mut raw)
        .map_err(|_| ControlError::Pmr)?;
    let sh = ActorShared::from_bytes(&raw);
    if sh.kind == ACTOR_KIND_NONE {
        return Err(ControlError::NoActor(id));
    }
    Ok(sh)
}

fn u64_field(pmr: &impl SharedMem, at: usize, order: Ordering) -> Result<u64, ControlError> {
    Ok(pmr
        .atomic_u64(at)
        .map_err(|_| ControlError::Pmr)?
        .load(order))
}

fn store_u64(pmr: &impl SharedMem, at: usize, v: u64) -> Result<(), ControlError> {
    pmr.atomic_u64(at)
        .map_err(|_| ControlError::Pmr)?
        .store(v, Ordering::Release);
    Ok(())
}

fn store_u32(pmr: &impl SharedMem, at: usize, v: u32, order: Ordering) -> Result<(), ControlError> {
    pmr.atomic_u32(at)
        .map_err(|_| ControlError::Pmr)?
        .store(v, order);
    Ok(())
}

fn slots(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
) -> Result<[[u8; CKPT_BYTES]; 2], ControlError> {
    let base = control_at(layout, id)?;
    let mut s = [[0u8; CKPT_BYTES]; 2];
    for (i, slot) in s.iter_mut().enumerate() {
        pmr.read_bytes(base + slot_offset(i), slot)
            .map_err(|_| ControlError::Pmr)?;
    }
    Ok(s)
}

/// Writes `control` as side `side`'s checkpoint of actor `id` for epoch `epoch`, and publishes
/// it: `ckpt_epoch = epoch` is the "ready" flag of a migration (odd epoch) or a snapshot (even).
pub fn checkpoint(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
    side: u32,
    epoch: u64,
    control: &ActorControl,
) -> Result<(), ControlError> {
    let sh_at = shared_at(layout, id)?;
    let current = u64_field(
        pmr,
        sh_at + offset_of!(ActorShared, ckpt_epoch),
        Ordering::Acquire,
    )?;
    let images = slots(pmr, layout, id)?;
    let (slot, seq) = slot_for_write(&images, current);
    let image = Checkpoint {
        epoch,
        seq,
        side,
        control: *control,
    }
    .encode();
    pmr.write_bytes(control_at(layout, id)? + slot_offset(slot), &image)
        .map_err(|_| ControlError::Pmr)?;
    store_u32(
        pmr,
        sh_at + offset_of!(ActorShared, ckpt_len),
        CKPT_BYTES as u32,
        Ordering::Relaxed,
    )?;
    store_u32(
        pmr,
        sh_at + offset_of!(ActorShared, ckpt_side),
        side,
        Ordering::Relaxed,
    )?;
    // Release: the slot and the two fields above before the flag.
    store_u64(pmr, sh_at + offset_of!(ActorShared, ckpt_epoch), epoch)
}

/// The published checkpoint of actor `id` if it is of epoch `epoch` (`None`: any epoch).
pub fn load(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
    epoch: Option<u64>,
) -> Result<Checkpoint, ControlError> {
    let sh_at = shared_at(layout, id)?;
    // Acquire: the slot was written before the flag.
    let ready = u64_field(
        pmr,
        sh_at + offset_of!(ActorShared, ckpt_epoch),
        Ordering::Acquire,
    )?;
    if let Some(want) = epoch {
        if ready != want {
            return Err(ControlError::Checkpoint(CkptError::Missing(want)));
        }
    }
    let kind = header(pmr, layout, id)?.kind;
    checkpoint::find(&slots(pmr, layout, id)?, ready, kind).map_err(ControlError::Checkpoint)
}

/// Marks side `side` the owner of actor `id` from epoch `epoch`: `owner`, then `active_epoch`
/// (release), the "active" flag.
pub fn activate(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
    side: u32,
    epoch: u64,
) -> Result<(), ControlError> {
    let sh_at = shared_at(layout, id)?;
    store_u32(
        pmr,
        sh_at + offset_of!(ActorShared, owner),
        side,
        Ordering::Relaxed,
    )?;
    store_u64(pmr, sh_at + offset_of!(ActorShared, active_epoch), epoch)
}

/// The epoch of actor `id` (acquire).
pub fn epoch(pmr: &impl SharedMem, layout: &PmrLayout, id: u8) -> Result<u64, ControlError> {
    let at = layout
        .epoch(id)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(ControlError::NoActor(id))?;
    u64_field(pmr, at, Ordering::Acquire)
}

/// Whether side `side` should checkpoint its copy of actor `id` when it stops: it owns it (the
/// other side's copy of a replicated actor is transient).
pub fn owns(pmr: &impl SharedMem, layout: &PmrLayout, id: u8, side: u32) -> bool {
    header(pmr, layout, id).is_ok_and(|sh| sh.owner == side)
}

/// Registers actor `id` while the device is stopped (the host owns the PMR): its owner and its
/// `ACTOR_CLASS_*`, class last (release).
pub fn register(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
    owner: u32,
    class: u32,
) -> Result<(), ControlError> {
    let sh_at = shared_at(layout, id)?;
    store_u32(
        pmr,
        sh_at + offset_of!(ActorShared, owner),
        owner,
        Ordering::Relaxed,
    )?;
    store_u32(
        pmr,
        sh_at + offset_of!(ActorShared, class),
        class,
        Ordering::Release,
    )
}

/// Stores the epoch of actor `id` (release: what was written before is seen with it).
pub fn set_epoch(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    id: u8,
    value: u64,
) -> Result<(), ControlError> {
    let at = layout
        .epoch(id)
        .and_then(|o| usize::try_from(o).ok())
        .ok_or(ControlError::NoActor(id))?;
    store_u64(pmr, at, value)
}

/// Rebuilds, for side `side`, every actor of the table it owns (and every replicated one) from
/// its published checkpoint; returns how many. An actor whose checkpoint is unusable is left unheld (its stages
/// then fail with `EAGAIN` instead of running with an invented state) and reported through `bad`.
pub fn rebuild_owned(
    pmr: &impl SharedMem,
    layout: &PmrLayout,
    side: u32,
    controls: &mut Controls,
    mut bad: impl FnMut(u8, ControlError),
) -> u32 {
    let mut n = 0;
    let nr = usize::try_from(layout.params().nr_actors)
        .unwrap_or(0)
        .min(MAX_ACTORS);
    for id in 1..nr {
        // `nr <= MAX_ACTORS <= 256`: the id fits.
        let id = id as u8;
        let Ok(sh) = header(pmr, layout, id) else {
            continue;
        };
        if sh.owner != side && sh.class != ACTOR_CLASS_REPLICATED {
            continue;
        }
        match load(pmr, layout, id, None) {
            Ok(c) => {
                if controls.put(id, c.rebuild(side)).is_ok() {
                    n += 1;
                }
            }
            Err(e) => bad(id, e),
        }
    }
    n
}
