// SPDX-License-Identifier: GPL-2.0

//! The tag each page-cache page of a ReFlux device carries (paper §4.3: pages "carry the actor
//! id, placement hint and an epoch counter").
//!
//! A page's tag is taken when the page enters the page cache: the actors of the pipeline of its
//! block, which of them ran on the device, and the sum of their epochs. A migration advances an
//! actor's epoch (by one when it starts, again when it ends), so the tag of every page the actor
//! covers no longer matches the one computed now: a reader that finds such a page drops it and
//! reads it again — after the migration, since requests that need a migrating actor wait for it.
//!
//! Layout of the `u32`: bit 31 set (a tag; 0 is "never tagged", which is never stale), bits
//! 24..31 the actor ids (bit per id 0..7), bits 17..24 those of them on the device, bits 0..17
//! the epoch sum modulo 2^17. A page unread across exactly a multiple of 2^16 migrations would
//! look fresh; the data it holds is still right (every side produces the same bytes), only the
//! retry is skipped.

/// Set in every tag.
pub const TAGGED: u32 = 1 << 31;
const ACTORS_SHIFT: u32 = 24;
const DEVICE_SHIFT: u32 = 17;
const EPOCH_MASK: u32 = (1 << DEVICE_SHIFT) - 1;

/// A page's tag, unpacked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageTag {
    /// Bit `i`: actor `i` (ids 0..7) runs a stage of the page's pipeline.
    pub actors: u8,
    /// Bit `i`: actor `i` was on the device.
    pub on_device: u8,
    /// The sum of the actors' epochs (modulo 2^17).
    pub epochs: u32,
}

impl PageTag {
    /// Adds actor `id` at `epoch`, on the device or not. Ids past 6 are not representable and
    /// count in the epoch sum only.
    pub fn add(&mut self, id: u8, epoch: u64, on_device: bool) {
        if id < 7 {
            self.actors |= 1 << id;
            if on_device {
                self.on_device |= 1 << id;
            }
        }
        self.epochs = self.epochs.wrapping_add(epoch as u32) & EPOCH_MASK;
    }

    /// The packed tag.
    pub const fn encode(&self) -> u32 {
        TAGGED
            | ((self.actors as u32 & 0x7f) << ACTORS_SHIFT)
            | ((self.on_device as u32 & 0x7f) << DEVICE_SHIFT)
            | (self.epochs & EPOCH_MASK)
    }

    /// The tag `raw` unpacked, or `None` for "never tagged".
    pub const fn decode(raw: u32) -> Option<Self> {
        if raw & TAGGED == 0 {
            return None;
        }
        Some(Self {
            actors: ((raw >> ACTORS_SHIFT) & 0x7f) as u8,
            on_device: ((raw >> DEVICE_SHIFT) & 0x7f) as u8,
            epochs: raw & EPOCH_MASK,
        })
    }
}

/// Whether a page tagged `recorded` is stale now that its block's tag would be `now`.
pub const fn is_stale(recorded: u32, now: u32) -> bool {
    recorded & TAGGED != 0 && recorded != now
}
