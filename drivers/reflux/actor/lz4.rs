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

use kernel::{bindings, ffi::c_int, prelude::*};

use crate::abi::BLOCK_SIZE;

/// Bytes of one block.
const BLOCK: usize = BLOCK_SIZE as usize;

/// `u64`s of the compressor's working memory: `LZ4_MEM_COMPRESS` (= `LZ4_STREAMSIZE`) bytes,
/// which lz4.h defines as this many `unsigned long long`s (so the alignment is right too).
const WORKSPACE_WORDS: usize = bindings::LZ4_STREAMSIZE_U64 as usize;

/// The compressor's working memory (its hash table), 16 KiB: allocated once per engine
/// context, not per block, and used by one compression at a time.
pub struct Workspace(KVec<u64>);

impl Workspace {
    /// Allocates the working memory.
    pub fn new() -> Result<Self> {
        Ok(Self(KVec::from_elem(0u64, WORKSPACE_WORDS, GFP_KERNEL)?))
    }
}

/// The outcome of compressing one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressed {
    /// The block compressed to this many bytes, `1..BLOCK_SIZE`, at the start of the output.
    Stored(u16),
    /// The block does not shrink: store it raw.
    Incompressible,
}

/// Compresses `src` into `dst`.
pub fn compress(ws: &mut Workspace, src: &[u8; BLOCK], dst: &mut [u8; BLOCK]) -> Compressed {
    // The workspace must hold `LZ4_MEM_COMPRESS` bytes; `Workspace::new` sized it so.
    if ws.0.len() < WORKSPACE_WORDS {
        return Compressed::Incompressible;
    }
    // SAFETY: `src` is `BLOCK` readable bytes and `dst` `BLOCK` writable ones, of which the
    // compressor writes at most `maxOutputSize = BLOCK - 1`; the two do not overlap (distinct
    // Rust references); the workspace is `LZ4_MEM_COMPRESS` writable, 8-byte aligned bytes used
    // by this call only (`&mut`).
    let n = unsafe {
        bindings::LZ4_compress_default(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            BLOCK as c_int,
            (BLOCK - 1) as c_int,
            ws.0.as_mut_ptr().cast(),
        )
    };
    // 0 means "does not fit in BLOCK - 1 bytes"; the compressor never returns more than it was
    // given room for, but the stored length must be in `1..BLOCK` whatever it returns.
    match u16::try_from(n) {
        Ok(len) if len > 0 && usize::from(len) < BLOCK => Compressed::Stored(len),
        _ => Compressed::Incompressible,
    }
}

/// Decompresses the LZ4 block `src` into `dst`; `EIO` unless it decodes to exactly
/// `BLOCK_SIZE` bytes.
///
/// `LZ4_decompress_safe` never reads past `src` nor writes past `dst`, whatever `src` holds, so
/// corrupt stored data is an error here rather than a memory-safety problem.
pub fn decompress(src: &[u8], dst: &mut [u8; BLOCK]) -> Result {
    if src.is_empty() || src.len() >= BLOCK {
        return Err(EIO);
    }
    // SAFETY: `src` is `src.len()` readable bytes (fewer than `BLOCK`, so the length fits a
    // `c_int`), `dst` is `BLOCK` writable bytes, they do not overlap (distinct Rust
    // references), and the safe decompressor stays inside both.
    let n = unsafe {
        bindings::LZ4_decompress_safe(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            src.len() as c_int,
            BLOCK as c_int,
        )
    };
    if n == BLOCK as c_int {
        Ok(())
    } else {
        Err(EIO)
    }
}
