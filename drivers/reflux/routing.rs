// SPDX-License-Identifier: GPL-2.0

//! The driver's routing table: where each actor runs now, its epoch, whether it is migrating,
//! and how many requests routed through it are still in flight (what a migration drains).
//!
//! Every request is routed under the table's lock: its placement mask is the sides of its stages'
//! actors and its epochs are theirs, and it is counted in the `inflight` of the actors of the
//! steps it has still to run, from the one it resumes at. It leaves an actor's count as soon as
//! it has run that actor's step (the driver tells the table at each hop), not when it ends: a
//! request past an actor never uses it again (a run checks only the epochs of the steps it
//! runs), so a migration does not wait for it. A request that still needs an actor being
//! migrated is **parked** instead (drain-and-switch: new requests go to the destination, which
//! takes them once it is active) and routed again when the migration ends. A migration sets
//! `migrating` under the same lock, so from then on no request is routed through the actor and
//! `inflight` only falls: when it reaches zero the source has drained.

use kernel::prelude::*;

use crate::abi::{self, SubmissionDescriptor};
use crate::actor::control::MAX_ACTORS;
use crate::proto::dispatch::Dispatch;
use crate::proto::pipeline::{Hop, Route, Side};
use crate::proto::request::epoch_tag;

/// One actor's routing state.
#[derive(Clone, Copy)]
pub(crate) struct ActorRoute {
    /// Registered (a non-free slot of the actor table).
    pub(crate) registered: bool,
    /// Compute-dominated: pinned where it is, never migrated.
    pub(crate) pinned: bool,
    /// Where it runs (the destination, while migrating).
    pub(crate) side: Side,
    /// Its epoch as last stored in the PMR (odd while migrating).
    pub(crate) epoch: u64,
    /// A migration is moving it: requests that need it park.
    pub(crate) migrating: bool,
    /// Requests routed through it and not finished.
    pub(crate) inflight: u32,
    /// When it last moved (monotonic ns), for the scheduler's dwell time.
    pub(crate) last_move_ns: Option<u64>,
}

impl ActorRoute {
    const FREE: Self = Self {
        registered: false,
        pinned: false,
        side: Side::Device,
        epoch: 0,
        migrating: false,
        inflight: 0,
        last_move_ns: None,
    };
}

/// What routing a request did.
pub(crate) enum Routed {
    /// Routed: continue at this hop.
    Go(Hop),
    /// Parked until the migration of an actor it needs ends.
    Parked,
}

/// The routing table of one device.
pub(crate) struct Routing {
    pub(crate) actors: [ActorRoute; MAX_ACTORS],
    /// Indexed by tag: the step a parked request resumes at.
    pub(crate) parked: KVec<Option<u8>>,
    /// Request-level dispatch (paradigm B) instead of per-actor placement.
    pub(crate) dispatch: Option<Dispatch>,
}

impl Routing {
    /// An empty table for `depth` tags (no allocation when parking).
    pub(crate) fn new(depth: u32) -> Result<Self> {
        Ok(Self {
            actors: [ActorRoute::FREE; MAX_ACTORS],
            parked: KVec::from_elem(None, depth as usize, GFP_KERNEL)?,
            dispatch: None,
        })
    }

    /// The actor `id`'s entry, if it is registered.
    pub(crate) fn actor(&self, id: u8) -> Option<&ActorRoute> {
        self.actors.get(usize::from(id)).filter(|a| a.registered)
    }

    /// The actor `id`'s entry, if it is registered.
    pub(crate) fn actor_mut(&mut self, id: u8) -> Option<&mut ActorRoute> {
        self.actors
            .get_mut(usize::from(id))
            .filter(|a| a.registered)
    }

    /// Routes `d` (pipeline, direction, flags and actors already set) to resume at `step`: sets
    /// its placement and epochs from the table and counts it in the actors of its steps from
    /// `step` on, or parks it if one of those is migrating. `first`:
    /// the request was never routed (request-level dispatch chooses its side now; otherwise it
    /// keeps the side in `d.placement`).
    pub(crate) fn route(
        &mut self,
        d: &mut SubmissionDescriptor,
        step: u8,
        first: bool,
    ) -> Result<Routed> {
        let probe = Route::new(d.opcode, d.flags, 0).map_err(|_| EINVAL)?;
        let n = probe.steps();
        // The stages (indices into `actors`) of the steps from `step` on: a read runs its stages
        // in reverse.
        let ahead = stages_of(&probe, step, n);
        let mut placement = 0u8;
        let mut epochs = [0u32; abi::MAX_STAGES as usize];
        for i in 0..n {
            let id = d.actors[usize::from(i)];
            let a = self.actor(id).ok_or(EINVAL)?;
            if a.migrating && ahead & (1 << i) != 0 {
                let slot = self.parked.get_mut(usize::from(d.tag)).ok_or(EINVAL)?;
                *slot = Some(step);
                return Ok(Routed::Parked);
            }
            if matches!(a.side, Side::Device) {
                placement |= 1 << i;
            }
            epochs[usize::from(i)] = epoch_tag(a.epoch);
        }
        for i in 0..n {
            if ahead & (1 << i) != 0 {
                if let Some(a) = self.actor_mut(d.actors[usize::from(i)]) {
                    a.inflight = a.inflight.saturating_add(1);
                }
            }
        }
        if let Some(disp) = self.dispatch.as_mut().filter(|_| n > 0) {
            // The whole request on one side, chosen once, when it arrives.
            if first {
                placement = match disp.choose() {
                    Side::Device => ((1u32 << n) - 1) as u8,
                    Side::Host => 0,
                };
            } else {
                placement = d.placement;
            }
        }
        d.placement = placement;
        d.epochs = epochs;
        let route = Route::new(d.opcode, d.flags, placement).map_err(|_| EINVAL)?;
        // A read's first visit is the device's load, wherever step 0 runs; a resumed request
        // continues on the side of its step (a write with every step done: the device commits).
        let hop = if step == 0 {
            route.first()
        } else {
            match route.side(step) {
                Some(Side::Host) => Hop::Host(step),
                _ => Hop::Device(step),
            }
        };
        Ok(Routed::Go(hop))
    }

    /// Takes every parked request: `(tag, step)`, for the caller to route again.
    pub(crate) fn unpark(&mut self, out: &mut KVec<(u16, u8)>) {
        for (tag, slot) in self.parked.iter_mut().enumerate() {
            if let Some(step) = slot.take() {
                // `out` has room for every tag (the caller sized it); a tag fits in u16.
                if out.push((tag as u16, step), GFP_ATOMIC).is_err() {
                    *slot = Some(step);
                    return;
                }
            }
        }
    }

    /// Takes back the request `tag` that [`Self::route`] just parked.
    pub(crate) fn unpark_tag(&mut self, tag: u16) {
        if let Some(slot) = self.parked.get_mut(usize::from(tag)) {
            *slot = None;
        }
    }

    /// Whether an actor of the steps from `from` on of the request routed as `d` is migrating.
    pub(crate) fn needs_migrating(&self, d: &SubmissionDescriptor, from: u8) -> bool {
        let Ok(route) = Route::new(d.opcode, d.flags, d.placement) else {
            return false;
        };
        let ahead = stages_of(&route, from, route.steps());
        (0..route.steps()).any(|i| {
            ahead & (1 << i) != 0
                && self
                    .actor(d.actors[usize::from(i)])
                    .is_some_and(|a| a.migrating)
        })
    }

    /// Uncounts the request routed as `d` from the actors of its steps `from..to`, which it has
    /// run.
    ///
    /// Returns whether a migrating actor's drain ended: the caller wakes the migration
    /// ([`Migrator::drain_ended`](crate::migrator::Migrator::drain_ended)) once the lock is dropped.
    #[must_use = "a drain that ended wakes the migration waiting for it"]
    pub(crate) fn pass(&mut self, d: &SubmissionDescriptor, from: u8, to: u8) -> bool {
        match Route::new(d.opcode, d.flags, d.placement) {
            Ok(route) => self.uncount(d, &route, from, to),
            Err(_) => false,
        }
    }

    /// [`Self::pass`] with the request's route.
    fn uncount(&mut self, d: &SubmissionDescriptor, route: &Route, from: u8, to: u8) -> bool {
        let passed = stages_of(route, from, to.min(route.steps()));
        let mut drained = false;
        for i in 0..route.steps() {
            if passed & (1 << i) == 0 {
                continue;
            }
            if let Some(a) = self.actor_mut(d.actors[usize::from(i)]) {
                a.inflight = a.inflight.saturating_sub(1);
                drained |= a.migrating && a.inflight == 0;
            }
        }
        drained
    }

    /// Uncounts the request routed as `d` from the actors of its steps from `from` on (those it
    /// did not [`Self::pass`]): finished `ns` after it arrived, or (`None`) refused and about to
    /// be routed again (request-level dispatch keeps counting it on its side). Returns what
    /// [`Self::pass`] does.
    #[must_use = "a drain that ended wakes the migration waiting for it"]
    pub(crate) fn release(
        &mut self,
        d: &SubmissionDescriptor,
        from: u8,
        finished_ns: Option<u64>,
    ) -> bool {
        let Ok(route) = Route::new(d.opcode, d.flags, d.placement) else {
            return false;
        };
        if let (Some(disp), Some(ns)) = (
            self.dispatch.as_mut().filter(|_| route.steps() > 0),
            finished_ns,
        ) {
            let side = if d.placement != 0 {
                Side::Device
            } else {
                Side::Host
            };
            disp.finished(side, ns);
        }
        self.uncount(d, &route, from, route.steps())
    }
}

/// The stages (a bit per index into a descriptor's `actors`) that `route`'s steps `from..to` run.
fn stages_of(route: &Route, from: u8, to: u8) -> u32 {
    (from..to)
        .filter_map(|step| route.stage_index(step))
        .fold(0, |mask, i| mask | 1 << i)
}
