// SPDX-License-Identifier: GPL-2.0

//! AES block encryption, from lib/crypto: the generic, table-based implementation, callable
//! without allocating a crypto API transform (not constant-time on every CPU, and without
//! AES-NI's speed).
//!
//! C header: [`include/crypto/aes.h`](srctree/include/crypto/aes.h)

use crate::{bindings, prelude::*};
use core::ptr;
use core::sync::atomic::{compiler_fence, Ordering};

/// Bytes of one AES block.
pub const BLOCK: usize = 16;

/// One AES key, expanded for encryption and decryption; the key schedule is wiped on drop.
///
/// # Invariants
///
/// `ctx` was filled by a successful `aes_expandkey`.
///
/// # Examples
///
/// ```
/// use kernel::aes::Aes;
/// // FIPS-197 appendix C.1, AES-128.
/// let key: [u8; 16] = core::array::from_fn(|i| i as u8);
/// let plain: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
/// let aes = Aes::new(&key)?;
/// let mut block = plain;
/// aes.encrypt(&mut block);
/// assert_eq!(block[..4], [0x69, 0xc4, 0xe0, 0xd8]);
/// aes.decrypt(&mut block);
/// assert_eq!(block, plain);
/// assert_eq!(Aes::new(&[0u8; 15]).err(), Some(EINVAL));
/// # Ok::<(), Error>(())
/// ```
pub struct Aes {
    ctx: bindings::crypto_aes_ctx,
}

impl Aes {
    /// Expands `key` (16, 24 or 32 bytes: AES-128, -192 or -256); `EINVAL` for another length.
    pub fn new(key: &[u8]) -> Result<Self> {
        let len = u32::try_from(key.len()).map_err(|_| EINVAL)?;
        let mut ctx = bindings::crypto_aes_ctx::default();
        // SAFETY: `ctx` is a writable `crypto_aes_ctx`; `key` is `len` readable bytes. The
        // function checks the length and writes nothing else.
        let ret = unsafe { bindings::aes_expandkey(&mut ctx, key.as_ptr(), len) };
        if ret != 0 {
            return Err(EINVAL);
        }
        // INVARIANT: expanded successfully above.
        Ok(Self { ctx })
    }

    /// Encrypts one block in place.
    pub fn encrypt(&self, block: &mut [u8; BLOCK]) {
        // lib/crypto reads the whole input before it writes the output, but its documentation
        // does not promise that in-place works: encrypt from a copy.
        let input = *block;
        // SAFETY: `ctx` is an expanded key (type invariant); `input` and `block` are 16 bytes
        // each and do not overlap.
        unsafe { bindings::aes_encrypt(&self.ctx, block.as_mut_ptr(), input.as_ptr()) };
    }

    /// Decrypts one block in place.
    pub fn decrypt(&self, block: &mut [u8; BLOCK]) {
        let input = *block;
        // SAFETY: as in `encrypt`.
        unsafe { bindings::aes_decrypt(&self.ctx, block.as_mut_ptr(), input.as_ptr()) };
    }
}

impl Drop for Aes {
    fn drop(&mut self) {
        // Wipe the key schedule (the kernel's `memzero_explicit`): volatile stores, then a
        // compiler barrier, so that the stores to memory about to be freed are not dropped.
        for w in self.ctx.key_enc.iter_mut() {
            // SAFETY: `w` is a valid, exclusive reference to a `u32`.
            unsafe { ptr::write_volatile(w, 0) };
        }
        for w in self.ctx.key_dec.iter_mut() {
            // SAFETY: as above.
            unsafe { ptr::write_volatile(w, 0) };
        }
        compiler_fence(Ordering::SeqCst);
    }
}
