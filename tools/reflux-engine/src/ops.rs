//! What the engine does to one block: the write and read steps of the crc32c, lz4 and aes-xts
//! stages,
//! with the semantics of `drivers/reflux/actor/exec.rs` (`apply`), so that a block the engine
//! processed reads back through either side's actors.

use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use aes::Aes256;
use reflux_proto::xts::{self, Xts};

use crate::abi::{BLOCK_SIZE, META_CHECKSUMMED, META_COMPRESSED, META_ENCRYPTED};
use crate::engine_abi::{
    BlockOut, BLOCK, KEY_BYTES, MAX_OPS, OP_CRC32C, OP_CRC32C_VERIFY, OP_LZ4_COMPRESS,
    OP_LZ4_DECOMPRESS, OP_NONE, OP_XTS_DECRYPT, OP_XTS_ENCRYPT,
};

/// AES-256 as the block cipher under [`Xts`], as `actor/aes.rs` is in the kernel.
pub struct Aes(Aes256);

impl xts::BlockCipher for Aes {
    fn encrypt_block(&self, block: &mut [u8; xts::BLOCK]) {
        self.0.encrypt_block(GenericArray::from_mut_slice(block));
    }
    fn decrypt_block(&self, block: &mut [u8; xts::BLOCK]) {
        self.0.decrypt_block(GenericArray::from_mut_slice(block));
    }
}

/// The XTS context of a key pair (data key, then tweak key).
pub fn xts_context(key: &[u8; KEY_BYTES]) -> Xts<Aes> {
    let (data, tweak) = key.split_at(KEY_BYTES / 2);
    let k = |b: &[u8]| Aes(Aes256::new(GenericArray::from_slice(b)));
    Xts::new(k(data), k(tweak))
}

const _: () = assert!(BLOCK == BLOCK_SIZE as usize);

/// Why a block could not be processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// A write transform of a block that is not raw (the actors' `BadState`).
    BadState,
    /// The block's bytes do not have its recorded crc32c (`Checksum`).
    Checksum,
    /// The block does not decompress to exactly one block, or does not decrypt (`Decode`).
    Decode,
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

/// Runs `ops` on a block (at `lba`) whose live bytes are `data[..len]`, with `flags` and `crc`
/// so far, with `xts` as the cipher; `spare` is room for a transform's output. A transform
/// leaves its output in `data` (the buffers are swapped), so the live bytes after the run are
/// always `data[..len]`; `BlockOut::in_output` says whether they differ from the buffer's.
#[allow(clippy::too_many_arguments)]
pub fn run_block(
    ops: &[u8],
    data: &mut [u8; BLOCK],
    len: u16,
    flags: u16,
    crc: u32,
    lba: u64,
    xts: Option<&Xts<Aes>>,
    spare: &mut [u8; BLOCK],
) -> Result<BlockOut, BlockError> {
    let mut r = BlockOut {
        crc,
        len,
        flags,
        ..BlockOut::default()
    };
    for (k, &op) in ops.iter().enumerate().take(MAX_OPS) {
        let raw = r.flags == 0 && usize::from(r.len) == BLOCK;
        let live = usize::from(r.len);
        match op {
            OP_NONE => break,
            OP_CRC32C => {
                r.crc = crc32c(data.get(..live).unwrap_or(&[]));
                r.flags |= META_CHECKSUMMED;
            }
            OP_LZ4_COMPRESS => {
                if !raw {
                    return Err(BlockError::BadState);
                }
                if let Some(n) = lz4_compress(data, spare) {
                    std::mem::swap(data, spare);
                    r.len = n;
                    r.in_output = 1;
                    r.flags |= META_COMPRESSED;
                }
            }
            OP_XTS_ENCRYPT => {
                let xts = xts.ok_or(BlockError::UnknownOp(op))?;
                if !raw {
                    return Err(BlockError::BadState);
                }
                xts.encrypt(lba, data).map_err(|_| BlockError::BadState)?;
                r.in_output = 1;
                r.flags |= META_ENCRYPTED;
            }
            OP_CRC32C_VERIFY => {
                if r.flags & META_CHECKSUMMED != 0 {
                    if crc32c(data.get(..live).unwrap_or(&[])) != r.crc {
                        return Err(BlockError::Checksum);
                    }
                    r.flags &= !META_CHECKSUMMED;
                }
            }
            OP_LZ4_DECOMPRESS => {
                if r.flags & META_COMPRESSED != 0 {
                    // Ciphertext does not decompress.
                    if r.flags & META_ENCRYPTED != 0 || live == 0 || live >= BLOCK {
                        return Err(BlockError::Decode);
                    }
                    let src = data.get(..live).ok_or(BlockError::Decode)?;
                    match lz4_flex::block::decompress_into(src, spare) {
                        Ok(BLOCK) => {}
                        _ => return Err(BlockError::Decode),
                    }
                    std::mem::swap(data, spare);
                    r.len = BLOCK as u16;
                    r.in_output = 1;
                    r.flags &= !META_COMPRESSED;
                }
            }
            OP_XTS_DECRYPT => {
                if r.flags & META_ENCRYPTED != 0 {
                    let xts = xts.ok_or(BlockError::UnknownOp(op))?;
                    let bytes = data.get_mut(..live).ok_or(BlockError::Decode)?;
                    xts.decrypt(lba, bytes).map_err(|_| BlockError::Decode)?;
                    r.in_output = 1;
                    r.flags &= !META_ENCRYPTED;
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
