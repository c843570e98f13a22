// SPDX-License-Identifier: GPL-2.0

//! The AES engine: lib/crypto's AES (`aes_expandkey`, `aes_encrypt`, `aes_decrypt`) as the
//! [`BlockCipher`] under [`Xts`], and a per-context cache of the expanded XTS key.
//!
//! lib/crypto's AES is the generic, table-based implementation: not constant-time on every CPU,
//! and without the AES-NI speed of the crypto API's `xts(aes)`. It is what both sides can call
//! without allocating a transform per request, which is what an actor that may run on either
//! side needs; the engine's speed is modelled anyway (`proto::pacing`).

use core::ptr;
use core::sync::atomic::{compiler_fence, Ordering};

use kernel::prelude::*;

use crate::abi::XTS_KEY_SIZE;
use crate::proto::xts::{BlockCipher, Xts, BLOCK};

/// Bytes of one AES-256 key, half of an XTS key.
const AES256_KEY: usize = XTS_KEY_SIZE / 2;

/// One AES key, expanded for encryption and decryption ([`kernel::aes`], which wipes the key
/// schedule on drop).
pub type AesCtx = kernel::aes::Aes;

const _: () = assert!(BLOCK == kernel::aes::BLOCK);

impl BlockCipher for AesCtx {
    fn encrypt_block(&self, block: &mut [u8; BLOCK]) {
        self.encrypt(block);
    }

    fn decrypt_block(&self, block: &mut [u8; BLOCK]) {
        self.decrypt(block);
    }
}

/// An XTS-AES-256 context and the key it was expanded from, so that an engine expands a key
/// once and not for every request.
pub struct XtsCache {
    key: [u8; XTS_KEY_SIZE],
    xts: Option<Xts<AesCtx>>,
}

impl XtsCache {
    /// A cache holding no key. Allocate it once per engine context (it is about 1 KiB).
    pub fn new() -> Result<KBox<Self>> {
        Ok(KBox::new(
            Self {
                key: [0; XTS_KEY_SIZE],
                xts: None,
            },
            GFP_KERNEL,
        )?)
    }

    /// The XTS context of `key` (data key, then tweak key, AES-256 each), expanding it if the
    /// cache holds another.
    pub fn get(&mut self, key: &[u8; XTS_KEY_SIZE]) -> Result<&Xts<AesCtx>> {
        if self.xts.is_none() || self.key != *key {
            // Drop the old context (wiping it) before expanding the new one.
            self.xts = None;
            let (data, tweak) = key.split_at(AES256_KEY);
            self.xts = Some(Xts::new(AesCtx::new(data)?, AesCtx::new(tweak)?));
            self.key = *key;
        }
        self.xts.as_ref().ok_or(EINVAL)
    }
}

impl Drop for XtsCache {
    fn drop(&mut self) {
        for b in self.key.iter_mut() {
            // SAFETY: `b` is a valid, exclusive reference to a byte.
            unsafe { ptr::write_volatile(b, 0) };
        }
        compiler_fence(Ordering::SeqCst);
    }
}

/// The known-answer test of the AES-XTS engine: IEEE 1619 XTS-AES-256 vector 10 (a 512-byte
/// data unit numbered 0xff), whose first 32 bytes of ciphertext are checked, then decrypted
/// back. Run at load, as the crypto API's self-tests are: an engine whose ciphertext another
/// implementation (the device's, or the next kernel's) could not read is refused.
pub fn self_test() -> Result {
    const KEY: [u8; XTS_KEY_SIZE] = *b"\x27\x18\x28\x18\x28\x45\x90\x45\x23\x53\x60\x28\x74\x71\x35\x26\x62\x49\x77\x57\x24\x70\x93\x69\x99\x59\x57\x49\x66\x96\x76\x27\x31\x41\x59\x26\x53\x58\x97\x93\x23\x84\x62\x64\x33\x83\x27\x95\x02\x88\x41\x97\x16\x93\x99\x37\x51\x05\x82\x09\x74\x94\x45\x92";
    const CIPHER: [u8; 32] = *b"\x1c\x3b\x3a\x10\x2f\x77\x03\x86\xe4\x83\x6c\x99\xe3\x70\xcf\x9b\xea\x00\x80\x3f\x5e\x48\x23\x57\xa4\xae\x12\xd4\x14\xa3\xe6\x3b";
    let (data, tweak) = KEY.split_at(AES256_KEY);
    let xts = Xts::new(AesCtx::new(data)?, AesCtx::new(tweak)?);
    let mut unit = [0u8; 512];
    for (i, b) in unit.iter_mut().enumerate() {
        *b = i as u8;
    }
    xts.encrypt(0xff, &mut unit).map_err(|_| EINVAL)?;
    if unit.get(..CIPHER.len()) != Some(&CIPHER[..]) {
        pr_err!("reflux: AES-XTS fails its known-answer test (IEEE 1619 vector 10)\n");
        return Err(EINVAL);
    }
    xts.decrypt(0xff, &mut unit).map_err(|_| EINVAL)?;
    if unit.iter().enumerate().any(|(i, b)| *b != i as u8) {
        pr_err!("reflux: AES-XTS does not decrypt its known answer back\n");
        return Err(EINVAL);
    }
    Ok(())
}
