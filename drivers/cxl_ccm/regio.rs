// SPDX-License-Identifier: GPL-2.0

//! Register accessors that take the typed registers of abi.rs (`GlobalRegs::REG_*`,
//! `TenantRegs::TREG_*`): the width of a load or store is the register's, and a store to a
//! register the host may only read does not compile.

use kernel::{io_mem::IoMem, prelude::*};

use crate::abi::{Readable, Reg, RegWidth, Writable};

/// A register width the register block's MMIO accessors load and store (`readl`/`readq`...).
pub(crate) trait IoWidth: RegWidth {
    /// Loads the register at `offset`; `Err` if it is outside the block.
    fn load(io: &IoMem, offset: usize) -> Result<Self>;
    /// Stores `value` to the register at `offset`; `Err` if it is outside the block.
    fn store(io: &IoMem, offset: usize, value: Self) -> Result;
}

impl IoWidth for u32 {
    fn load(io: &IoMem, offset: usize) -> Result<Self> {
        io.try_read32(offset)
    }
    fn store(io: &IoMem, offset: usize, value: Self) -> Result {
        io.try_write32(value, offset)
    }
}

impl IoWidth for u64 {
    fn load(io: &IoMem, offset: usize) -> Result<Self> {
        io.try_read64(offset)
    }
    fn store(io: &IoMem, offset: usize, value: Self) -> Result {
        io.try_write64(value, offset)
    }
}

/// Typed register access to the register block.
pub(crate) trait RegIo {
    /// Reads `reg` (`readl()`/`readq()`: ordered before the accesses after it).
    fn read_reg<T: IoWidth, A: Readable>(&self, reg: Reg<T, A>) -> Result<T>;
    /// Writes `value` to `reg` (`writel()`/`writeq()`: ordered after the accesses before it).
    fn write_reg<T: IoWidth, A: Writable>(&self, reg: Reg<T, A>, value: T) -> Result;
}

impl RegIo for IoMem {
    fn read_reg<T: IoWidth, A: Readable>(&self, reg: Reg<T, A>) -> Result<T> {
        T::load(self, reg.offset())
    }
    fn write_reg<T: IoWidth, A: Writable>(&self, reg: Reg<T, A>, value: T) -> Result {
        T::store(self, reg.offset(), value)
    }
}
