// SPDX-License-Identifier: GPL-2.0

//! The per-block metadata entry: the "per-range metadata" shared state of the paper (§4.2).
//!
//! One [`BlockMeta`] per logical block says how the block is stored: how many bytes of its
//! data-store slot are used, whether they are compressed, encrypted and checksummed, the
//! checksum, and how often the block was written. The device writes an entry when it commits a
//! write and reads it when it loads a block; because the entry lives in the PMR, a checksum stage
//! can verify a block on either side.
//!
//! [`decode`] turns a raw entry into a [`BlockState`] or says which rule it breaks, so that a
//! corrupt entry is reported as such (`EIO`) rather than followed: a length past the slot, an
//! unknown flag, an impossible length for the flags. [`BlockInfo::verify`] then checks the stored
//! bytes' checksum, which the caller computes (`crc32c_le` in the kernel).

use core::fmt;

use crate::abi::{
    BlockMeta, BLOCK_SIZE, META_CHECKSUMMED, META_COMPRESSED, META_ENCRYPTED, META_FLAGS_KNOWN,
    META_VALID,
};

/// Why a metadata entry, or the block it describes, is refused. A device reading a block maps
/// every one to `EIO` ([`crate::abi::STATUS_EIO`]); they are distinct so that the log says which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockMetaError {
    /// The stored length exceeds the block size.
    LengthTooLarge(u16),
    /// Flags outside [`META_FLAGS_KNOWN`].
    UnknownFlags(u16),
    /// A length the flags make impossible: raw data that is not one whole block, compressed data
    /// that is empty or no smaller than a block, ciphertext that is not whole cipher blocks.
    BadLength {
        /// The stored length.
        len: u16,
        /// The flags.
        flags: u16,
    },
    /// An entry without [`META_VALID`] that still has a length or flags.
    NotValid {
        /// The stored length.
        len: u16,
        /// The flags.
        flags: u16,
    },
    /// The stored bytes do not have the recorded checksum.
    ChecksumMismatch {
        /// The checksum in the entry.
        stored: u32,
        /// The checksum of the bytes.
        computed: u32,
    },
}

impl fmt::Display for BlockMetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthTooLarge(len) => write!(f, "stored length {len} exceeds the block"),
            Self::UnknownFlags(flags) => write!(f, "unknown block flags {flags:#x}"),
            Self::BadLength { len, flags } => {
                write!(f, "stored length {len} impossible with flags {flags:#x}")
            }
            Self::NotValid { len, flags } => {
                write!(f, "unwritten block with length {len} and flags {flags:#x}")
            }
            Self::ChecksumMismatch { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
                )
            }
        }
    }
}

/// A written block's metadata, validated.
///
/// # Invariants
///
/// `len <= BLOCK_SIZE`; uncompressed data is exactly `BLOCK_SIZE` bytes; compressed data is
/// `1..BLOCK_SIZE` bytes; encrypted data is a multiple of 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockInfo {
    len: u16,
    compressed: bool,
    encrypted: bool,
    crc: Option<u32>,
    generation: u64,
}

/// What a metadata entry says about its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Never written: reads as zeros. `generation` survives so that a later write continues it.
    Unwritten {
        /// The entry's generation.
        generation: u64,
    },
    /// Written and described by the entry.
    Written(BlockInfo),
}

/// The AES block size: ciphertext comes in whole blocks of it.
const CIPHER_BLOCK: u16 = 16;

impl BlockInfo {
    /// Describes a block about to be committed, or says why the description is impossible.
    pub const fn new(
        len: u16,
        compressed: bool,
        encrypted: bool,
        crc: Option<u32>,
        generation: u64,
    ) -> Result<Self, BlockMetaError> {
        let info = Self {
            len,
            compressed,
            encrypted,
            crc,
            generation,
        };
        if len as u32 > BLOCK_SIZE {
            return Err(BlockMetaError::LengthTooLarge(len));
        }
        let ok = if compressed {
            len > 0 && (len as u32) < BLOCK_SIZE
        } else {
            len as u32 == BLOCK_SIZE
        };
        if !ok || (encrypted && len % CIPHER_BLOCK != 0) {
            return Err(BlockMetaError::BadLength {
                len,
                flags: info.flags(),
            });
        }
        // INVARIANT: the length rules, checked above.
        Ok(info)
    }

    /// Bytes stored in the block's data-store slot.
    pub const fn stored_len(&self) -> u16 {
        self.len
    }

    /// Whether the stored bytes are LZ4-compressed.
    pub const fn compressed(&self) -> bool {
        self.compressed
    }

    /// Whether the stored bytes are AES-XTS ciphertext.
    pub const fn encrypted(&self) -> bool {
        self.encrypted
    }

    /// The stored bytes' crc32c, if the block is checksummed.
    pub const fn crc(&self) -> Option<u32> {
        self.crc
    }

    /// Times the block has been written.
    pub const fn generation(&self) -> u64 {
        self.generation
    }

    /// The `META_*` flags of the block.
    pub const fn flags(&self) -> u16 {
        let mut flags = META_VALID;
        if self.crc.is_some() {
            flags |= META_CHECKSUMMED;
        }
        if self.compressed {
            flags |= META_COMPRESSED;
        }
        if self.encrypted {
            flags |= META_ENCRYPTED;
        }
        flags
    }

    /// The entry the device writes when it commits the block.
    pub const fn encode(&self) -> BlockMeta {
        BlockMeta {
            stored_len: self.len,
            flags: self.flags(),
            crc: match self.crc {
                Some(crc) => crc,
                None => 0,
            },
            generation: self.generation,
        }
    }

    /// Checks the stored bytes' checksum `computed` against the entry's; a block that is not
    /// checksummed passes.
    pub const fn verify(&self, computed: u32) -> Result<(), BlockMetaError> {
        match self.crc {
            Some(stored) if stored != computed => {
                Err(BlockMetaError::ChecksumMismatch { stored, computed })
            }
            _ => Ok(()),
        }
    }
}

/// Decodes and validates a metadata entry read from the PMR.
pub const fn decode(raw: &BlockMeta) -> Result<BlockState, BlockMetaError> {
    let (len, flags) = (raw.stored_len, raw.flags);
    // Unknown flags first: they mean a newer format or garbage, and make every other rule moot.
    if flags & !META_FLAGS_KNOWN != 0 {
        return Err(BlockMetaError::UnknownFlags(flags));
    }
    if len as u32 > BLOCK_SIZE {
        return Err(BlockMetaError::LengthTooLarge(len));
    }
    if flags & META_VALID == 0 {
        if len != 0 || flags != 0 {
            return Err(BlockMetaError::NotValid { len, flags });
        }
        return Ok(BlockState::Unwritten {
            generation: raw.generation,
        });
    }
    let crc = if flags & META_CHECKSUMMED != 0 {
        Some(raw.crc)
    } else {
        None
    };
    match BlockInfo::new(
        len,
        flags & META_COMPRESSED != 0,
        flags & META_ENCRYPTED != 0,
        crc,
        raw.generation,
    ) {
        Ok(info) => Ok(BlockState::Written(info)),
        Err(e) => Err(e),
    }
}

/// The generation of the next write of a block whose entry has `previous`: one more, skipping 0
/// (which means "never written") when it wraps.
pub const fn next_generation(previous: u64) -> u64 {
    match previous.checked_add(1) {
        Some(g) => g,
        None => 1,
    }
}
