//! Helpers shared by the integration tests: a reference CRC32C and hex decoding.

// Each test crate uses a different subset.
#![allow(dead_code)]

pub mod xts_vectors;

/// The standard CRC32C (Castagnoli; initial value and final XOR `0xFFFF_FFFF`, reflected), bit by
/// bit: the reference the kernel's `crc32c_le` is checked against in the block metadata tests.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Decodes a hex string.
pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}
