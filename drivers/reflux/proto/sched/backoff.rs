// SPDX-License-Identifier: GPL-2.0

//! The flap back-off: an upload soon after the actor's offload lengthens its offload hold.

use super::{ActorView, SchedParams, Scheduler, MAX_BACKOFF_MS, NS_PER_MS};

/// How long ago `actor` last migrated, at `now_ns`: `None` if never, 0 if "after now".
const fn move_age(actor: &ActorView, now_ns: u64) -> Option<u64> {
    match actor.last_move_ns {
        None => None,
        Some(last) => match now_ns.checked_sub(last) {
            Some(age) => Some(age),
            None => Some(0),
        },
    }
}

impl Scheduler {
    /// The offload hold of actor `id` with `params`, in nanoseconds (0: none beyond the dwell,
    /// as always without [`SchedParams::flap_backoff`]).
    pub(super) fn hold_ns(&self, params: &SchedParams, id: u8) -> u64 {
        if !params.flap_backoff {
            return 0;
        }
        self.hold_ms
            .get(usize::from(id))
            .map_or(0, |h| u64::from(*h) * NS_PER_MS)
    }

    /// Updates the offload hold of `a`, which is being uploaded at `now_ns`; returns the new hold
    /// if the upload is a flap (never without [`SchedParams::flap_backoff`]).
    pub(super) fn note_upload(
        &mut self,
        params: &SchedParams,
        a: &ActorView,
        now_ns: u64,
    ) -> Option<u32> {
        if !params.flap_backoff {
            return None;
        }
        let hold = self.hold_ms.get_mut(usize::from(a.id))?;
        let window = u64::from(params.flap_window_ms) * NS_PER_MS;
        let flap = match move_age(a, now_ns) {
            Some(age) => age < window,
            None => false,
        };
        if !flap {
            *hold = 0;
            return None;
        }
        let doubled = (*hold).max(params.dwell_ms).saturating_mul(2);
        *hold = doubled.min(params.max_backoff_ms.min(MAX_BACKOFF_MS));
        self.flaps = self.flaps.saturating_add(1);
        Some(*hold)
    }

    /// The offload hold of actor `id` the flap back-off set, in milliseconds (0: the dwell).
    pub fn hold_ms(&self, id: u8) -> u32 {
        self.hold_ms.get(usize::from(id)).copied().unwrap_or(0)
    }

    /// Uploads that were flaps, so far.
    pub const fn flaps(&self) -> u64 {
        self.flaps
    }
}
