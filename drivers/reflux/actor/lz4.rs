// SPDX-License-Identifier: GPL-2.0

//! The LZ4 engine: lib/lz4's block compressor and its bounds-checked decompressor, one
//! [`BLOCK_SIZE`](crate::abi::BLOCK_SIZE) block at a time.
//!
//! A block is stored compressed only if it shrinks: [`compress`] gives the compressor at most
//! `BLOCK_SIZE - 1` bytes of output, so an incompressible block (or one that would only break
//! even) is reported as such and stored raw, as
//! [`BlockInfo`](crate::proto::block_meta::BlockInfo) requires of compressed data. [`decompress`]
//! accepts only input that decodes to exactly one block: anything else is `EIO`, never a
//! partial or overlong block.

use kernel::prelude::*;

use crate::abi::BLOCK_SIZE;

pub use kernel::lz4::Workspace;

/// Bytes of one block.
const BLOCK: usize = BLOCK_SIZE as usize;

/// The outcome of compressing one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressed {
    /// The block compressed to this many bytes, `1..BLOCK_SIZE`, at the start of the output.
    Stored(u16),
    /// The block does not shrink: store it raw.
    Incompressible,
}

/// Compresses `src` into `dst`, with at most `BLOCK_SIZE - 1` bytes of output.
pub fn compress(ws: &mut Workspace, src: &[u8; BLOCK], dst: &mut [u8; BLOCK]) -> Compressed {
    // The stored length must be in `1..BLOCK` whatever the library returns.
    match kernel::lz4::compress(ws, src, &mut dst[..BLOCK - 1]).map(u16::try_from) {
        Some(Ok(len)) if len > 0 && usize::from(len) < BLOCK => Compressed::Stored(len),
        _ => Compressed::Incompressible,
    }
}

/// Decompresses the LZ4 block `src` into `dst`; `EIO` unless it decodes to exactly
/// `BLOCK_SIZE` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8; BLOCK]) -> Result {
    if src.is_empty() || src.len() >= BLOCK {
        return Err(EIO);
    }
    match kernel::lz4::decompress(src, dst) {
        Some(BLOCK) => Ok(()),
        _ => Err(EIO),
    }
}
