// SPDX-License-Identifier: GPL-2.0

//! The crc32c engine: the kernel's CRC32C ([`kernel::crc32c`]), as the standard CRC32C that
//! [`BlockMeta::crc`](crate::abi::BlockMeta::crc) records, chaining from a seed.

pub use kernel::crc32c::crc32c;
