// SPDX-License-Identifier: GPL-2.0

//! The modelled CCM's clock: when each chunk would have been computed by the CCM the device
//! models ([`crate::model::compute`]), and the completions the µthreads delivered earlier than
//! that, held back until then.
//!
//! The µthreads compute every chunk for real (its result is verified by the host); the clock only
//! decides when the result may leave. A chunk the µthreads finish *after* its modelled time is
//! late: the emulator, not the model, set its time, and the tenant's `model_deficit_ns` and
//! `model_late` registers say by how much, so a benchmark can tell that it measured the emulator.
//!
//! The modelled CCM has one timeline for all tenants (they share its µthreads): a chunk starts
//! when its launch arrived or when a virtual µthread frees up, whichever is later.

use kernel::prelude::*;

use crate::model::compute::{self, ComputeModel, Work};
use crate::pacer::now_ns;
use crate::uthreads::Done;

/// The modelled CCM's timeline and the completions waiting for their modelled time.
///
/// # Invariants
///
/// `free_at.len() == model.slots()`, a min-heap ([`compute::place_in_heap`]); `held` has one slot per ticket the device can have in
/// flight, so holding never allocates, and `n_held` counts its `Some` slots.
pub(crate) struct CcmClock {
    model: ComputeModel,
    /// When each virtual µthread is free, ns.
    free_at: KVec<u64>,
    /// Completions that are ahead of the model, in no particular order.
    held: KVec<Option<Done>>,
    n_held: usize,
}

impl CcmClock {
    /// A clock for `model`, able to hold `inflight` completions.
    pub(crate) fn new(model: ComputeModel, inflight: usize) -> Result<Self> {
        let free_at = KVec::from_elem(0u64, model.slots() as usize, GFP_KERNEL)?;
        let held = KVec::from_elem(None, inflight, GFP_KERNEL)?;
        // INVARIANT: one entry per virtual µthread; a slot per ticket in flight, all empty.
        Ok(Self {
            model,
            free_at,
            held,
            n_held: 0,
        })
    }

    /// When the modelled CCM would finish a chunk of `work` whose launch arrived at
    /// `arrived_ns`, booking a virtual µthread for it.
    pub(crate) fn schedule(&mut self, arrived_ns: u64, work: Work) -> u64 {
        let dur = self.model.chunk_ns(work);
        compute::place_in_heap(&mut self.free_at, arrived_ns, dur)
    }

    /// Takes a completion: returns it if its modelled time has come, else holds it. A
    /// completion that cannot be held (more than the device has in flight: a bookkeeping bug)
    /// is returned rather than lost.
    pub(crate) fn arrive(&mut self, done: Done) -> Option<Done> {
        if !done.ticket.ready_ns.is_some_and(|ready| ready > now_ns()) {
            return Some(done);
        }
        match self.held.iter_mut().find(|s| s.is_none()) {
            Some(slot) => {
                *slot = Some(done);
                self.n_held += 1;
                None
            }
            None => Some(done),
        }
    }

    /// A held completion whose modelled time has come, if any.
    pub(crate) fn due(&mut self) -> Option<Done> {
        if self.n_held == 0 {
            return None;
        }
        let now = now_ns();
        let slot = self
            .held
            .iter_mut()
            .find(|s| s.is_some_and(|d| !d.ticket.ready_ns.is_some_and(|r| r > now)))?;
        self.n_held -= 1;
        slot.take()
    }

    /// The earliest modelled time among the held completions.
    pub(crate) fn next_due(&self) -> Option<u64> {
        if self.n_held == 0 {
            return None;
        }
        self.held
            .iter()
            .flatten()
            .filter_map(|d| d.ticket.ready_ns)
            .min()
    }
}
