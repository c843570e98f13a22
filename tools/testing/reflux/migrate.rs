// SPDX-License-Identifier: GPL-2.0

//! The device's part of a drain-and-switch migration, asked for through the migration mailbox
//! (`abi::REG_MIG_ARM`, served by the controller) or with a `abi::DIR_MIGRATE` descriptor
//! (served by a core).
//!
//! The host drives the protocol (it owns the epoch and the drain); the device acts when told:
//! as the source it checkpoints and raises "ready", as the destination it rebuilds from the
//! host's checkpoint and raises "active". Every check is against the PMR and the device's own
//! control table, never against what the descriptor merely claims.

use kernel::{pr_warn_ratelimited, prelude::*};

use crate::abi::{self, SIDE_DEVICE, SIDE_HOST};
use crate::actor::control;
use crate::dev::Dev;
use crate::proto::request::{epoch_tag, Request};

/// Serves a validated migration descriptor; returns the completion status.
pub(crate) fn serve(dev: &Dev, req: &Request) -> i32 {
    let Some(id) = req.migrating_actor() else {
        return abi::STATUS_EINVAL;
    };
    let to_device = req.route().placement() == 1;
    answer(dev, id, req.descriptor().epochs[0], to_device)
}

/// Serves the mailbox command `cmd` (`abi::REG_MIG_CMD`) at epoch tag `epoch`; returns the
/// answer's status.
pub(crate) fn serve_mailbox(dev: &Dev, cmd: u32, epoch: u32) -> i32 {
    // Bits above the actor and the direction are reserved: a command using them is refused.
    if cmd & !(abi::MIG_CMD_ACTOR_MASK | abi::MIG_CMD_TO_DEVICE) != 0 {
        return abi::STATUS_EINVAL;
    }
    // Masked to 8 bits: fits.
    let id = (cmd & abi::MIG_CMD_ACTOR_MASK) as u8;
    // As a descriptor's: an existing actor other than 0.
    if id == 0 || u32::from(id) >= dev.layout.params().nr_actors {
        return abi::STATUS_EINVAL;
    }
    answer(dev, id, epoch, cmd & abi::MIG_CMD_TO_DEVICE != 0)
}

/// The device's part for actor `id` at epoch tag `epoch`, however it was asked for: the status.
fn answer(dev: &Dev, id: u8, epoch: u32, to_device: bool) -> i32 {
    match step(dev, id, epoch, to_device) {
        Ok(()) => abi::STATUS_OK,
        Err(status) => {
            pr_warn_ratelimited!(
                "reflux.{}: migration of actor {id} to the {}: status {status}\n",
                dev.id,
                if to_device { "device" } else { "host" }
            );
            status
        }
    }
}

fn step(dev: &Dev, id: u8, routed: u32, to_device: bool) -> Result<(), i32> {
    let (pmr, layout) = (&dev.pmr, &dev.layout);
    let epoch = control::epoch(pmr, layout, id).map_err(|_| abi::STATUS_EINVAL)?;
    // Only the host's current migration of this actor: odd, and the epoch it routed.
    if epoch & 1 == 0 || epoch_tag(epoch) != routed {
        return Err(abi::STATUS_EINVAL);
    }
    let sh = control::header(pmr, layout, id).map_err(|_| abi::STATUS_EINVAL)?;
    if sh.class != abi::ACTOR_CLASS_IO {
        return Err(abi::STATUS_EINVAL);
    }
    let mut controls = dev.controls.lock();
    if to_device {
        if controls.holds(id) {
            return Err(abi::STATUS_EINVAL);
        }
        // "Ready" for this epoch, written by the host.
        let ckpt = control::load(pmr, layout, id, Some(epoch)).map_err(|_| abi::STATUS_EIO)?;
        if ckpt.side != SIDE_HOST {
            return Err(abi::STATUS_EINVAL);
        }
        controls
            .put(id, ckpt.rebuild(SIDE_DEVICE))
            .map_err(|_| abi::STATUS_EINVAL)?;
        if control::activate(pmr, layout, id, SIDE_DEVICE, epoch).is_err() {
            controls.take(id);
            return Err(abi::STATUS_EIO);
        }
        Ok(())
    } else {
        let Some(c) = controls.get(id) else {
            return Err(abi::STATUS_EINVAL);
        };
        control::checkpoint(pmr, layout, id, SIDE_DEVICE, epoch, &c)
            .map_err(|_| abi::STATUS_EIO)?;
        // "Ready" is out: the host rebuilds from it; the device no longer runs the actor.
        controls.take(id);
        Ok(())
    }
}
