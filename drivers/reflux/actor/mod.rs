// SPDX-License-Identifier: GPL-2.0

//! The storage actors' engines: the same code on the host and on the device (paper §4.2).
//!
//! The paper's point is that one actor runs on either side and can move between them; here the
//! "binary" is this module, compiled into both the host driver (`drivers/reflux`) and the
//! software CXL SSD (`tools/testing/reflux`), and the shared state it works on (request state
//! blobs, data buffers, actor statistics, epochs, keys) lives in the PMR, which both sides map.
//! A stage run on the host and the same stage run on the device produce the same bytes.
//!
//! - [`crc`]: crc32c (lib/crc32.c);
//! - [`lz4`]: LZ4 block compression and bounds-checked decompression (lib/lz4);
//! - [`aes`]: AES (lib/crypto) as the block cipher under `proto::xts`, with a key cache;
//! - [`exec`]: [`exec::Plan`] checks a run against the actor table and the epoch table, and
//!   [`exec::run_stages`] executes it over a request's blocks, with an [`exec::Scratch`] that
//!   each engine context (a device core, a host context) allocates once; [`error`] says why a
//!   run failed.
//!
//! # The default actors
//!
//! When the device formats its PMR it registers one actor per stage kind, with the actor id
//! equal to the kind ([`ACTOR_ID_CRC32C`], [`ACTOR_ID_LZ4`], [`ACTOR_ID_AES_XTS`]; see
//! [`default_actor`]); slot 0 and the slots above them stay free (`ACTOR_KIND_NONE`), so that a
//! descriptor with a zeroed actor id is refused rather than run by some actor. The AES-XTS
//! actor gets [`default_xts_key`]: a key derived deterministically from the device id, so that
//! the encrypt pipeline works out of the box and its ciphertext survives a reboot. **It is not a
//! secret**: anyone who knows the derivation and the device id has it. A real deployment
//! registers its own key in the actor's [`ActorShared::params`]; key management (provisioning,
//! rotation, wrapping) is out of scope.
//!
//! # How to include these files
//!
//! Like `proto`, this module refers to the ABI and the pure logic by crate-root paths:
//! `crate::abi` must be `drivers/reflux/abi.rs` and `crate::proto` `drivers/reflux/proto/`. The
//! including crate declares all three at its root (with `#[path]` from outside
//! `drivers/reflux`).

pub mod aes;
pub mod control;
pub mod crc;
pub mod error;
pub mod exec;
pub mod external;
pub mod lz4;

use crate::abi::{self, ActorShared, SIDE_DEVICE, XTS_KEY_SIZE};
use crate::proto::pipeline::{Pipeline, Stage, Stages};

/// Id of the default crc32c actor.
pub const ACTOR_ID_CRC32C: u8 = abi::ACTOR_KIND_CRC32C as u8;
/// Id of the default LZ4 actor.
pub const ACTOR_ID_LZ4: u8 = abi::ACTOR_KIND_LZ4 as u8;
/// Id of the default AES-XTS actor.
pub const ACTOR_ID_AES_XTS: u8 = abi::ACTOR_KIND_AES_XTS as u8;
/// Actor slots the default table uses (ids `0..DEFAULT_ACTOR_SLOTS`; 0 is free).
pub const DEFAULT_ACTOR_SLOTS: u32 = ACTOR_ID_AES_XTS as u32 + 1;

// The ids are the kinds, and fit in a `u8`.
const _: () = assert!(abi::ACTOR_KIND_AES_XTS < 256 && abi::ACTOR_KIND_CRC32C != 0);

/// Every stage kind, in actor-id order.
pub const STAGES: [Stage; 3] = [Stage::Crc32c, Stage::Lz4, Stage::AesXts];

/// The id of the default actor of `stage`.
pub const fn default_actor(stage: Stage) -> u8 {
    match stage {
        Stage::Crc32c => ACTOR_ID_CRC32C,
        Stage::Lz4 => ACTOR_ID_LZ4,
        Stage::AesXts => ACTOR_ID_AES_XTS,
    }
}

/// The default actors of the stages of `pipeline` with `flags`, in stage order (none if the
/// pipeline or its flags are refused).
pub fn pipeline_actors(pipeline: u8, flags: u16) -> impl Iterator<Item = u8> {
    let stages = Pipeline::from_id(pipeline)
        .and_then(|p| p.stages(flags))
        .unwrap_or(Stages::EMPTY);
    (0..stages.len()).filter_map(move |i| stages.get(i).map(default_actor))
}

/// What the derivation of [`default_xts_key`] hashes before the device id and the word index.
const DEFAULT_KEY_LABEL: &[u8] = b"ReFlux default XTS key, not a secret";

/// The default XTS key of device `device_id`: word `i` (of 16 little-endian `u32`s) is the
/// crc32c of [`DEFAULT_KEY_LABEL`], the device id and `i` (both little-endian `u32`s).
///
/// Deterministic, so that data encrypted before a reboot decrypts after it, and different for
/// the data key and the tweak key, as IEEE 1619 requires. Not a secret (see the module
/// documentation).
pub fn default_xts_key(device_id: u32) -> [u8; XTS_KEY_SIZE] {
    let mut key = [0u8; XTS_KEY_SIZE];
    let label = crc::crc32c(0, DEFAULT_KEY_LABEL);
    let label = crc::crc32c(label, &device_id.to_le_bytes());
    for (i, word) in key.chunks_exact_mut(4).enumerate() {
        // At most 16 words: the index fits.
        let w = crc::crc32c(label, &(i as u32).to_le_bytes());
        word.copy_from_slice(&w.to_le_bytes());
    }
    key
}

/// The shared-state header of the default actor of `stage` on device `device_id`: its kind, its
/// parameters (the default key of the AES-XTS actor), owned by the device (the paper's default
/// placement: offloaded), never migrated (epoch 0, no checkpoint).
pub fn default_actor_shared(stage: Stage, device_id: u32) -> ActorShared {
    let mut actor = ActorShared {
        kind: stage.actor_kind(),
        owner: SIDE_DEVICE,
        ..Default::default()
    };
    if matches!(stage, Stage::AesXts) {
        let key = default_xts_key(device_id);
        actor.params[..XTS_KEY_SIZE].copy_from_slice(&key);
    }
    actor
}
