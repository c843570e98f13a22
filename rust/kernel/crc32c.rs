// SPDX-License-Identifier: GPL-2.0

//! CRC32C (Castagnoli), from lib/crc32.c.
//!
//! C header: [`include/linux/crc32.h`](srctree/include/linux/crc32.h)

/// The standard CRC32C (initial value and final XOR `0xFFFF_FFFF`) of the bytes before `data`,
/// whose CRC32C is `seed` (0 for none), followed by `data`.
///
/// The library function works on the register without the final XOR, so undoing the XOR on the
/// way in and redoing it on the way out chains: `crc32c(crc32c(0, a), b)` is the CRC32C of `a`
/// followed by `b`.
///
/// # Examples
///
/// ```
/// use kernel::crc32c::crc32c;
/// assert_eq!(crc32c(0, b"123456789"), 0xE306_9283);
/// assert_eq!(crc32c(crc32c(0, b"1234"), b"56789"), 0xE306_9283);
/// assert_eq!(crc32c(0, b""), 0);
/// ```
pub fn crc32c(seed: u32, data: &[u8]) -> u32 {
    // SAFETY: `__crc32c_le` reads exactly `len` bytes at `p`, here a valid slice, and has no
    // other effect.
    !unsafe { crate::bindings::__crc32c_le(!seed, data.as_ptr(), data.len()) }
}
