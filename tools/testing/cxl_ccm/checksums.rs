// SPDX-License-Identifier: GPL-2.0

//! RP and BS: the tenant's checksum table (ABI 1.6, `TREG_CHECKSUM_TABLE`), where the device
//! leaves each record's CRC32C next to the results the host will load.
//!
//! In AXLE the checksum travels in the metadata record the device streams. In RP and BS the host
//! loads the results from device memory and writes the records itself; without this table it
//! had to compute every checksum on its own cores, host work the offload modes do not pay. The
//! µthreads compute the checksum with the result in every mode; here it is only stored, in the
//! entry of the record's position ([`abi::checksum_entry`]), so that it lives as long as the
//! result does.

use kernel::{memremap::MemRemap, shared_mem::SharedMem};

use crate::abi;
use crate::status::Status;

/// Where the checksums of the tenant's records go.
///
/// # Invariants
///
/// `[table, table + 4 * entries)` lies inside the tenant's partition, and `table` is 4-byte
/// aligned.
#[derive(Clone, Copy, Default)]
pub(crate) struct ChecksumTable {
    table: u64,
    entries: u32,
    base: u64,
}

impl ChecksumTable {
    /// The table the host configured (`table`, `entries`, describing the memory from `base`),
    /// checked against the partition `[part_base, part_end)`; `entries == 0` is none.
    pub(crate) fn new(
        table: u64,
        entries: u32,
        base: u64,
        part_base: u64,
        part_end: u64,
    ) -> core::result::Result<Self, Status> {
        if entries == 0 {
            return Ok(Self::default());
        }
        let end = table.checked_add(4 * u64::from(entries));
        if table % 4 != 0 || table < part_base || !end.is_some_and(|e| e <= part_end) {
            return Err(abi::STATUS_BAD_RANGE);
        }
        // INVARIANT: checked above.
        Ok(Self {
            table,
            entries,
            base,
        })
    }

    /// Stores the checksum of the record of `len` bytes at device-memory offset `at`, if the
    /// table has an entry for it. The caller orders it before the launch's answer.
    pub(crate) fn store(
        &self,
        mem: &MemRemap,
        at: u64,
        len: u32,
        crc: u32,
    ) -> core::result::Result<(), Status> {
        let Some(k) = abi::checksum_entry(self.base, self.entries, at, u64::from(len)) else {
            return Ok(());
        };
        // Cannot overflow: inside the partition (the invariant).
        let entry = self.table + 4 * u64::from(k);
        let crc = if crate::checksum_fault() { !crc } else { crc };
        mem.write_bytes(entry as usize, &crc.to_le_bytes())
            .map_err(|_| abi::STATUS_BAD_RANGE)
    }
}
