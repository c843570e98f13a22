// SPDX-License-Identifier: GPL-2.0

//! AES-XTS (IEEE 1619-2007, XTS-AES) over any 128-bit block cipher.
//!
//! The encrypt stage stores each 4 KiB block as one XTS data unit whose data-unit sequence number
//! is the block's LBA, as `blk-crypto` and dm-crypt with 4 KiB sectors do. Data units here are
//! always whole 16-byte blocks, so ciphertext stealing is not needed and other lengths are
//! refused.
//!
//! The cipher is a [`BlockCipher`]: the kernel implements it with lib/crypto's `aes_encrypt` and
//! `aes_decrypt` over two expanded keys (data key and tweak key); the host tests with the `aes`
//! crate. Nothing here allocates or branches on secret data.

use core::fmt;

/// Bytes of a cipher block.
pub const BLOCK: usize = 16;

/// The largest data unit IEEE 1619 allows: 2^20 cipher blocks.
pub const MAX_DATA_UNIT: usize = BLOCK << 20;

/// A 128-bit block cipher with a key already expanded.
pub trait BlockCipher {
    /// Encrypts one block in place.
    fn encrypt_block(&self, block: &mut [u8; BLOCK]);
    /// Decrypts one block in place.
    fn decrypt_block(&self, block: &mut [u8; BLOCK]);
}

/// Why a data unit is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XtsError {
    /// The length is zero, not a multiple of [`BLOCK`], or above [`MAX_DATA_UNIT`].
    Length(usize),
}

impl fmt::Display for XtsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length(len) => write!(f, "XTS data unit of {len} bytes is not whole blocks"),
        }
    }
}

/// XTS-AES with a data key and a tweak key (IEEE 1619 "Key1" and "Key2").
#[derive(Clone, Debug)]
pub struct Xts<C> {
    data_key: C,
    tweak_key: C,
}

/// Multiplies the tweak by the primitive element α of GF(2^128) (IEEE 1619 §5.2): a one-bit
/// left shift of the little-endian 128-bit value, reduced by x^128 + x^7 + x^2 + x + 1.
fn mul_alpha(t: &mut [u8; BLOCK]) {
    let mut carry = 0u8;
    for b in t.iter_mut() {
        let out = *b >> 7;
        *b = (*b << 1) | carry;
        carry = out;
    }
    // `0x87` is the reduction polynomial's low byte; multiplying by `carry` (0 or 1) instead of
    // branching keeps the time independent of the tweak.
    t[0] ^= 0x87 * carry;
}

fn xor(block: &mut [u8; BLOCK], t: &[u8; BLOCK]) {
    for (b, k) in block.iter_mut().zip(t.iter()) {
        *b ^= k;
    }
}

impl<C: BlockCipher> Xts<C> {
    /// XTS with `data_key` encrypting the data and `tweak_key` encrypting the tweak.
    pub const fn new(data_key: C, tweak_key: C) -> Self {
        Self {
            data_key,
            tweak_key,
        }
    }

    /// Encrypts data unit `dun` (for a block: its LBA) in place.
    pub fn encrypt(&self, dun: u64, data: &mut [u8]) -> Result<(), XtsError> {
        self.apply(dun, data, true)
    }

    /// Decrypts data unit `dun` in place.
    pub fn decrypt(&self, dun: u64, data: &mut [u8]) -> Result<(), XtsError> {
        self.apply(dun, data, false)
    }

    fn apply(&self, dun: u64, data: &mut [u8], encrypt: bool) -> Result<(), XtsError> {
        let len = data.len();
        if len == 0 || len % BLOCK != 0 || len > MAX_DATA_UNIT {
            return Err(XtsError::Length(len));
        }
        // The tweak: the data-unit number as a 128-bit little-endian value, encrypted with Key2.
        let mut tweak = [0u8; BLOCK];
        tweak[..8].copy_from_slice(&dun.to_le_bytes());
        self.tweak_key.encrypt_block(&mut tweak);
        for chunk in data.chunks_exact_mut(BLOCK) {
            let mut block = [0u8; BLOCK];
            block.copy_from_slice(chunk);
            xor(&mut block, &tweak);
            if encrypt {
                self.data_key.encrypt_block(&mut block);
            } else {
                self.data_key.decrypt_block(&mut block);
            }
            xor(&mut block, &tweak);
            chunk.copy_from_slice(&block);
            mul_alpha(&mut tweak);
        }
        Ok(())
    }
}
