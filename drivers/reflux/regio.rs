// SPDX-License-Identifier: GPL-2.0

//! Register handles that take the typed registers of abi.rs (`Regs::REG_*`): the width of a
//! load or store is the register's, and a store to a register the host may only read does not
//! compile.
//!
//! The register block is MMIO (the paper's BAR2: configuration registers, queue state,
//! doorbells), mapped uncached ([`IoMem`]): every access reaches the device, none is combined,
//! reordered or served from a cache. A load is `readl()`/`readq()` and a store
//! `writel()`/`writeq()`, so each is ordered as those are: a store after the memory writes
//! before it (a doorbell after the ring entries it announces), a load before the memory reads
//! after it (a completion's status before the data it covers). That is at least as strong as any
//! ordering the ABI asks of a register access, so the accessors take none.

use core::marker::PhantomData;
use kernel::{io_mem::IoMem, prelude::*};

use crate::abi::{Access, Readable, Reg, RegWidth, Writable};

/// A register width the register block's MMIO accessors load and store.
pub(crate) trait IoWidth: RegWidth {
    /// Loads the register at `offset`; `Err` if it is outside the block.
    fn load(io: &IoMem, offset: usize) -> Result<Self>;
    /// Stores `value` to the register at `offset`; `Err` if it is outside the block.
    fn store(io: &IoMem, offset: usize, value: Self) -> Result;
    /// What a load that cannot be done reads: all ones, as a read from a device that is gone.
    const ALL_ONES: Self;
}

impl IoWidth for u32 {
    const ALL_ONES: u32 = u32::MAX;
    fn load(io: &IoMem, offset: usize) -> Result<Self> {
        io.try_read32(offset)
    }
    fn store(io: &IoMem, offset: usize, value: Self) -> Result {
        io.try_write32(value, offset)
    }
}

impl IoWidth for u64 {
    const ALL_ONES: u64 = u64::MAX;
    fn load(io: &IoMem, offset: usize) -> Result<Self> {
        io.try_read64(offset)
    }
    fn store(io: &IoMem, offset: usize, value: Self) -> Result {
        io.try_write64(value, offset)
    }
}

/// A register of the mapped register block: loads if the host may read it, stores if it may
/// write it.
///
/// # Invariants
///
/// `offset` is aligned to `T` and the register lies inside `io`.
pub(crate) struct RegRef<'a, T: IoWidth, A> {
    io: &'a IoMem,
    offset: usize,
    _reg: PhantomData<(T, A)>,
}

impl<T: IoWidth, A: Readable> RegRef<'_, T, A> {
    /// Loads the register (`readl()`/`readq()`).
    pub(crate) fn load(&self) -> T {
        // Cannot fail: the register is inside the block (type invariant).
        T::load(self.io, self.offset).unwrap_or(T::ALL_ONES)
    }
}

impl<T: IoWidth, A: Writable> RegRef<'_, T, A> {
    /// Stores `value` to the register (`writel()`/`writeq()`).
    pub(crate) fn store(&self, value: T) {
        // Cannot fail: the register is inside the block (type invariant).
        let _ = T::store(self.io, self.offset, value);
    }
}

/// Register `reg` of the register block mapped at `regs`; `EINVAL` if it lies outside the block
/// or is misaligned (a block smaller than the ABI's).
pub(crate) fn reg<T: IoWidth, A: Access>(regs: &IoMem, reg: Reg<T, A>) -> Result<RegRef<'_, T, A>> {
    let (offset, bytes) = (reg.offset(), core::mem::size_of::<T>());
    let end = offset.checked_add(bytes).ok_or(EINVAL)?;
    if offset % bytes != 0 || end > regs.size() {
        return Err(EINVAL);
    }
    // INVARIANT: checked above.
    Ok(RegRef {
        io: regs,
        offset,
        _reg: PhantomData,
    })
}

/// Loads `reg` (`readl()`/`readq()`).
pub(crate) fn read<T: IoWidth, A: Readable>(regs: &IoMem, r: Reg<T, A>) -> Result<T> {
    Ok(reg(regs, r)?.load())
}
