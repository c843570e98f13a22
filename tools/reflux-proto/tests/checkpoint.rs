// SPDX-License-Identifier: GPL-2.0

//! The checkpoint encoding, the two-slot rule and crash recovery of a migration.

use reflux_proto::abi::{ActorShared, ACTOR_KIND_LZ4, SIDE_DEVICE, SIDE_HOST};
use reflux_proto::checkpoint::{
    find, recover, slot_for_write, ActorControl, Checkpoint, CkptError, Outcome, CKPT_BYTES,
};

fn ckpt(epoch: u64, side: u32, generation: u64, runs: u64) -> Checkpoint {
    Checkpoint {
        epoch,
        seq: epoch,
        side,
        control: ActorControl {
            kind: ACTOR_KIND_LZ4,
            generation,
            runs,
        },
    }
}

#[test]
fn round_trip() {
    let c = ckpt(7, SIDE_DEVICE, 3, 12345);
    assert_eq!(Checkpoint::decode(&c.encode()), Ok(c));
}

#[test]
fn every_flipped_byte_is_caught() {
    let img = ckpt(7, SIDE_DEVICE, 3, 12345).encode();
    for i in 0..CKPT_BYTES {
        let mut bad = img;
        bad[i] ^= 0x40;
        assert!(Checkpoint::decode(&bad).is_err(), "byte {i}");
    }
    assert_eq!(Checkpoint::decode(&[0; CKPT_BYTES]), Err(CkptError::Format));
}

#[test]
fn rebuild_counts_hand_overs_only() {
    let c = ckpt(5, SIDE_HOST, 2, 9);
    assert_eq!(c.rebuild(SIDE_DEVICE).generation, 3);
    assert_eq!(c.rebuild(SIDE_HOST).generation, 2);
    assert_eq!(c.rebuild(SIDE_DEVICE).runs, 9);
}

#[test]
fn two_slots_survive_a_torn_write() {
    let old = ckpt(4, SIDE_HOST, 1, 100).encode();
    let mut slots = [[0u8; CKPT_BYTES]; 2];
    // Fresh: slot 0 first.
    assert_eq!(slot_for_write(&slots, 0), (0, 0));
    slots[0] = old;
    // The published checkpoint (epoch 4) is in slot 0: the next write goes to slot 1.
    let (w, seq) = slot_for_write(&slots, 4);
    assert_eq!((w, seq), (1, 5));
    // A torn write of epoch 5 into slot 1, "ready" never stored: epoch 4 is still found.
    let mut torn = ckpt(5, SIDE_HOST, 1, 150).encode();
    torn[40] ^= 1;
    slots[w] = torn;
    assert_eq!(
        find(&slots, 4, ACTOR_KIND_LZ4).map(|c| c.control.runs),
        Ok(100)
    );
    assert_eq!(find(&slots, 5, ACTOR_KIND_LZ4), Err(CkptError::Checksum));
    // Written whole and published: found; the next write goes back to slot 0.
    slots[w] = ckpt(5, SIDE_HOST, 1, 150).encode();
    assert_eq!(find(&slots, 5, ACTOR_KIND_LZ4).map(|c| c.epoch), Ok(5));
    assert_eq!(slot_for_write(&slots, 5).0, 0);
    // Another kind is refused.
    assert!(matches!(find(&slots, 5, 1), Err(CkptError::Kind { .. })));
}

fn shared(owner: u32, ckpt_epoch: u64, ckpt_side: u32, active_epoch: u64) -> ActorShared {
    ActorShared {
        kind: ACTOR_KIND_LZ4,
        owner,
        ckpt_epoch,
        ckpt_side,
        active_epoch,
        ..Default::default()
    }
}

#[test]
fn recovery_at_each_phase() {
    // Placed on the device at epoch 4 (its last hand-over was epoch 3).
    let placed = shared(SIDE_DEVICE, 3, SIDE_HOST, 3);
    let r = recover(4, &placed);
    assert_eq!(
        (r.owner, r.epoch, r.outcome),
        (SIDE_DEVICE, 4, Outcome::Settled)
    );
    // Migrating to the host, crash before "ready": the device keeps it.
    let r = recover(5, &placed);
    assert_eq!(
        (r.owner, r.epoch, r.outcome),
        (SIDE_DEVICE, 6, Outcome::RolledBack)
    );
    // "Ready" stored by the device; the host wrote `owner` but not "active": back to the device.
    let ready = shared(SIDE_HOST, 5, SIDE_DEVICE, 3);
    let r = recover(5, &ready);
    assert_eq!(
        (r.owner, r.epoch, r.outcome),
        (SIDE_DEVICE, 6, Outcome::RolledBack)
    );
    // "Active": the host owns it.
    let active = shared(SIDE_HOST, 5, SIDE_DEVICE, 5);
    let r = recover(5, &active);
    assert_eq!(
        (r.owner, r.epoch, r.outcome),
        (SIDE_HOST, 6, Outcome::RolledForward)
    );
    // Finished and settled at 6: nothing to do.
    let r = recover(6, &active);
    assert_eq!((r.owner, r.outcome), (SIDE_HOST, Outcome::Settled));
}

#[test]
fn the_newer_of_two_snapshots_of_one_epoch_wins() {
    // Two unmounts without a migration between: both slots hold epoch 6.
    let mut slots = [[0u8; CKPT_BYTES]; 2];
    let mut first = ckpt(6, SIDE_DEVICE, 2, 100);
    first.seq = 8;
    slots[0] = first.encode();
    let (w, seq) = slot_for_write(&slots, 6);
    assert_eq!((w, seq), (1, 9));
    let mut second = ckpt(6, SIDE_DEVICE, 2, 101);
    second.seq = seq;
    slots[w] = second.encode();
    assert_eq!(
        find(&slots, 6, ACTOR_KIND_LZ4).map(|c| c.control.runs),
        Ok(101)
    );
    // And the third goes over the older one, slot 0.
    assert_eq!(slot_for_write(&slots, 6), (0, 10));
}
