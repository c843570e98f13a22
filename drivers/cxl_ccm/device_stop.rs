// SPDX-License-Identifier: GPL-2.0

//! The DMA regions of tenants torn down while the device is being detached, freed once the
//! device is known to have stopped.
//!
//! A tenant's teardown disables the tenant in the device and frees its DMA region once the
//! device acknowledges. Once unbind has begun, the hardware is out of reach
//! ([`Revocable::try_access`](kernel::revocable::Revocable::try_access) fails), but the device
//! is not stopped yet: the unbind first waits for every user of the hardware to leave, and
//! only then disables the device. A region freed in that window is still written by the
//! device (the launch head of a launch it takes, the rings it streams into), which is a write
//! to freed memory. Such a teardown hands its region over here instead; the detach frees it
//! once the device acknowledged its disable, or leaks it if the device never did.

use kernel::{dma_sg::DmaSgTable, new_mutex, prelude::*, sync::Mutex};

/// Whether the device may still write tenant memory.
enum State {
    /// It may: the regions handed over wait here.
    Running(KVec<DmaSgTable>),
    /// It was disabled; `acked`: it acknowledged, and writes no tenant memory any more.
    Stopped { acked: bool },
}

/// See the [module documentation](self).
#[pin_data]
pub(crate) struct DeviceStop {
    #[pin]
    state: Mutex<State>,
}

impl DeviceStop {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            state <- new_mutex!(State::Running(KVec::new())),
        })
    }

    /// Takes the region of a tenant torn down once the hardware was out of reach: kept until
    /// the device is stopped, freed at once if it already is, leaked if it never acknowledged.
    pub(crate) fn hand_over(&self, region: DmaSgTable) {
        let mut state = self.state.lock();
        match &mut *state {
            State::Running(waiting) => {
                // Reserved first: a failed `push` would drop (free) the region.
                if waiting.reserve(1, GFP_KERNEL).is_ok() {
                    // Cannot fail: the room is reserved.
                    let _ = waiting.push(region, GFP_KERNEL);
                } else {
                    pr_err!("cxl_ccm: no memory to defer a tenant's DMA region; leaking it\n");
                    core::mem::forget(region);
                }
            }
            State::Stopped { acked: true } => {
                drop(state);
                drop(region);
            }
            State::Stopped { acked: false } => core::mem::forget(region),
        }
    }

    /// Records that the device was disabled (`acked`: it acknowledged) and frees the regions
    /// handed over meanwhile, or leaks them if it did not acknowledge.
    pub(crate) fn stopped(&self, acked: bool) {
        let previous = core::mem::replace(&mut *self.state.lock(), State::Stopped { acked });
        if let State::Running(waiting) = previous {
            if acked {
                drop(waiting);
            } else {
                if !waiting.is_empty() {
                    pr_err!(
                        "cxl_ccm: the device did not acknowledge its disable; leaking {} DMA regions\n",
                        waiting.len()
                    );
                }
                core::mem::forget(waiting);
            }
        }
    }
}
