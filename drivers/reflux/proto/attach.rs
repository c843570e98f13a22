// SPDX-License-Identifier: GPL-2.0

//! Pipelines attached to byte ranges of a device by the administrator (paper §4.1: "pipelines
//! are attached to a device or a byte range of it, never by the application").
//!
//! A device has a default pipeline (the driver's load-time choice) and up to
//! [`MAX_ATTACHMENTS`] attachments, each a pipeline and flags word for a range of blocks. The
//! ranges of one device never overlap, and start and end on [`ALIGN_BYTES`] boundaries: the
//! driver makes the block layer split requests there (`chunk_sectors`), so a request lies in one
//! attachment or in none, and gets exactly one pipeline. [`Table::lookup`] still reports a
//! request that straddles a boundary, which the driver fails rather than half-process.
//!
//! Changing a range's pipeline never loses data: stored blocks describe the transforms applied to
//! them (their metadata flags), and a read undoes what its own pipeline has no stage for.
//!
//! This module also parses what the administrator writes (sizes, booleans).

use crate::abi;
use crate::proto::pipeline::{Pipeline, PipelineError};

/// The most attachments one device has.
pub const MAX_ATTACHMENTS: usize = 8;

/// Attachments start and end on multiples of this many blocks: the largest request.
pub const ALIGN_BLOCKS: u64 = abi::MAX_REQ_BLOCKS as u64;

/// [`ALIGN_BLOCKS`] in bytes (128 KiB).
pub const ALIGN_BYTES: u64 = ALIGN_BLOCKS * abi::BLOCK_SIZE as u64;

/// Why an attachment is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachError {
    /// Start or length is not a multiple of [`ALIGN_BYTES`] (`EINVAL`).
    Unaligned,
    /// The length is zero (`EINVAL`).
    Empty,
    /// The range ends past the device's capacity (`ERANGE`).
    BeyondDevice,
    /// The range overlaps attachment `id` of the same device (`EBUSY`).
    Overlap(u32),
    /// The device has [`MAX_ATTACHMENTS`] already (`ENOSPC`).
    Full,
    /// The pipeline or its flags are refused (`EINVAL`).
    Pipeline(PipelineError),
}

impl core::fmt::Display for AttachError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Unaligned => write!(f, "start and length must be multiples of {ALIGN_BYTES}"),
            Self::Empty => f.write_str("the length is zero"),
            Self::BeyondDevice => f.write_str("the range ends past the device"),
            Self::Overlap(id) => write!(f, "the range overlaps attachment {id}"),
            Self::Full => write!(f, "the device has {MAX_ATTACHMENTS} attachments already"),
            Self::Pipeline(e) => write!(f, "{e}"),
        }
    }
}

/// A pipeline attached to blocks `start..end` of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// Names the attachment (unique per driver instance).
    pub id: u32,
    /// First block.
    pub start: u64,
    /// One past the last block.
    pub end: u64,
    /// The pipeline (`PIPELINE_*`).
    pub pipeline: u8,
    /// Its flags (`PIPE_FLAG_*`).
    pub flags: u16,
}

impl Attachment {
    /// The attachment of `pipeline` with `flags` to `len` bytes from byte `start` of a device of
    /// `capacity` blocks, checked.
    pub fn new(
        id: u32,
        start: u64,
        len: u64,
        pipeline: u8,
        flags: u16,
        capacity: u64,
    ) -> Result<Self, AttachError> {
        if len == 0 {
            return Err(AttachError::Empty);
        }
        if start % ALIGN_BYTES != 0 || len % ALIGN_BYTES != 0 {
            return Err(AttachError::Unaligned);
        }
        let block = u64::from(abi::BLOCK_SIZE);
        let end = start
            .checked_add(len)
            .filter(|e| *e / block <= capacity)
            .ok_or(AttachError::BeyondDevice)?;
        Pipeline::from_id(pipeline)
            .and_then(|p| p.stages(flags))
            .map_err(AttachError::Pipeline)?;
        Ok(Self {
            id,
            start: start / block,
            end: end / block,
            pipeline,
            flags,
        })
    }

    fn overlaps(&self, other: &Self) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// Which pipeline a request gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// No attachment covers it: the device's default pipeline.
    Default,
    /// The attachment that covers it whole.
    Attached(Attachment),
    /// Part of it is in an attachment and part is not (or in another one).
    Straddles,
}

/// The attachments of one device.
#[derive(Clone, Debug)]
pub struct Table {
    slots: [Option<Attachment>; MAX_ATTACHMENTS],
}

impl Table {
    /// No attachment.
    pub const EMPTY: Self = Self {
        slots: [None; MAX_ATTACHMENTS],
    };

    /// Adds `a` unless it overlaps one already there or the table is full.
    pub fn insert(&mut self, a: Attachment) -> Result<(), AttachError> {
        if let Some(o) = self.iter().find(|o| o.overlaps(&a)) {
            return Err(AttachError::Overlap(o.id));
        }
        let slot = self
            .slots
            .iter_mut()
            .find(|s| s.is_none())
            .ok_or(AttachError::Full)?;
        *slot = Some(a);
        Ok(())
    }

    /// Removes attachment `id`, returning it.
    pub fn remove(&mut self, id: u32) -> Option<Attachment> {
        self.slots
            .iter_mut()
            .find(|s| s.is_some_and(|a| a.id == id))
            .and_then(Option::take)
    }

    /// Removes every attachment; returns how many there were.
    pub fn clear(&mut self) -> usize {
        let n = self.len();
        self.slots = [None; MAX_ATTACHMENTS];
        n
    }

    /// The attachments, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Attachment> {
        self.slots.iter().flatten()
    }

    /// How many attachments there are.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pipeline of a request of `nr` blocks (at least one) from block `lba`.
    pub fn lookup(&self, lba: u64, nr: u64) -> Lookup {
        let last = lba.saturating_add(nr.max(1) - 1);
        let covering = |b: u64| self.iter().find(|a| a.start <= b && b < a.end).copied();
        match (covering(lba), covering(last)) {
            (None, None) if !self.iter().any(|a| lba < a.start && a.start <= last) => {
                Lookup::Default
            }
            (Some(a), Some(b)) if a.id == b.id => Lookup::Attached(a),
            _ => Lookup::Straddles,
        }
    }
}

/// A byte count written by the administrator: decimal, with an optional `K`, `M` or `G` suffix
/// (powers of 1024); surrounding whitespace ignored. `None` if malformed or over `u64::MAX`.
pub fn parse_size(text: &[u8]) -> Option<u64> {
    let text = trim(text);
    let (digits, shift) = match text.split_last() {
        Some((b'K' | b'k', rest)) => (rest, 10),
        Some((b'M' | b'm', rest)) => (rest, 20),
        Some((b'G' | b'g', rest)) => (rest, 30),
        _ => (text, 0),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    v.checked_mul(1u64 << shift)
}

/// A boolean written by the administrator: `0`/`1`, `n`/`y`, `off`/`on` (whitespace ignored).
pub fn parse_bool(text: &[u8]) -> Option<bool> {
    match trim(text) {
        b"1" | b"y" | b"Y" | b"on" => Some(true),
        b"0" | b"n" | b"N" | b"off" => Some(false),
        _ => None,
    }
}

/// `text` without leading and trailing ASCII whitespace (a written value's newline).
pub fn trim(mut text: &[u8]) -> &[u8] {
    while let Some((first, rest)) = text.split_first() {
        if !first.is_ascii_whitespace() {
            break;
        }
        text = rest;
    }
    while let Some((last, rest)) = text.split_last() {
        if !last.is_ascii_whitespace() {
            break;
        }
        text = rest;
    }
    text
}
