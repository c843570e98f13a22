// SPDX-License-Identifier: GPL-2.0

//! The crc32c engine: lib/crc32.c's `__crc32c_le` (the kernel's `crc32c_le`), as the standard
//! CRC32C that [`BlockMeta::crc`](crate::abi::BlockMeta::crc) records.

use kernel::bindings;

/// The standard CRC32C (Castagnoli; initial value and final XOR `0xFFFF_FFFF`) of the bytes
/// before `data`, whose CRC32C is `seed` (0 for none), followed by `data`.
///
/// `crc32c(0, b"123456789") == 0xE306_9283`, and `crc32c(crc32c(0, a), b)` is the CRC32C of `a`
/// followed by `b`: the raw library function works on the register without the final XOR, so
/// undoing the XOR on the way in and redoing it on the way out chains.
pub fn crc32c(seed: u32, data: &[u8]) -> u32 {
    // SAFETY: `__crc32c_le` reads exactly `len` bytes at `p`, here a valid slice, and has no
    // other effect.
    !unsafe { bindings::__crc32c_le(!seed, data.as_ptr(), data.len()) }
}
