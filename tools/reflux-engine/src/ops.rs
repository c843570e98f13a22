//! What the engine does to one block: the write steps of the crc32c and lz4 stages, with the
//! semantics of `drivers/reflux/actor/exec.rs` (`apply`), so that a block the engine processed
//! reads back through either side's actors.

use crate::abi::{BLOCK_SIZE, META_CHECKSUMMED, META_COMPRESSED};
use crate::engine_abi::{BlockOut, BLOCK, MAX_OPS, OP_CRC32C, OP_LZ4_COMPRESS, OP_NONE};

const _: () = assert!(BLOCK == BLOCK_SIZE as usize);

/// Why a block could not be processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// LZ4 of a block that is not raw (the actors' `BadState`).
    BadState,
    /// An operation this engine does not know.
    UnknownOp(u8),
}

/// The standard CRC32C (initial value and final XOR all ones) of `data`: `crc.rs`'s
/// `crc32c(0, data)`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Compresses a raw block into `out`: `Some(n)` if it shrinks to `n < BLOCK` bytes, as
/// `lz4.rs` stores it; `None` to store it raw (as the kernel's compressor, given `BLOCK - 1`
/// bytes of room, reports).
pub fn lz4_compress(src: &[u8; BLOCK], out: &mut [u8; BLOCK]) -> Option<u16> {
    // lz4_flex wants room for the worst case, which is more than a block.
    let mut room = [0u8; LZ4_ROOM];
    let n = lz4_flex::block::compress_into(src, &mut room).ok()?;
    if n == 0 || n >= BLOCK {
        return None;
    }
    out.get_mut(..n)?.copy_from_slice(room.get(..n)?);
    u16::try_from(n).ok()
}

/// Output room lz4_flex needs for one block (`get_maximum_output_size(BLOCK)`, rounded up).
const LZ4_ROOM: usize = BLOCK + BLOCK / 8 + 64;

/// Runs `ops` on a block whose live bytes are `data[..len]`, with `flags` and `crc` so far.
/// The live bytes after the run are `data`'s or, if `BlockOut::in_output` is set, `out`'s.
pub fn run_block(
    ops: &[u8],
    data: &[u8; BLOCK],
    len: u16,
    flags: u16,
    crc: u32,
    out: &mut [u8; BLOCK],
) -> Result<BlockOut, BlockError> {
    let mut r = BlockOut {
        crc,
        len,
        flags,
        ..BlockOut::default()
    };
    for (k, &op) in ops.iter().enumerate().take(MAX_OPS) {
        match op {
            OP_NONE => break,
            OP_CRC32C => {
                let live = if r.in_output != 0 {
                    &out[..]
                } else {
                    &data[..]
                };
                r.crc = crc32c(live.get(..usize::from(r.len)).unwrap_or(&[]));
                r.flags |= META_CHECKSUMMED;
            }
            OP_LZ4_COMPRESS => {
                let raw = r.flags == 0 && usize::from(r.len) == BLOCK && r.in_output == 0;
                if !raw {
                    return Err(BlockError::BadState);
                }
                if let Some(n) = lz4_compress(data, out) {
                    r.len = n;
                    r.in_output = 1;
                    r.flags |= META_COMPRESSED;
                }
            }
            other => return Err(BlockError::UnknownOp(other)),
        }
        if let Some(l) = r.len_after.get_mut(k) {
            *l = r.len;
        }
    }
    Ok(r)
}
