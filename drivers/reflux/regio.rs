// SPDX-License-Identifier: GPL-2.0

//! Register handles that take the typed registers of abi.rs (`Regs::REG_*`): the width of a
//! load or store is the register's, and a store to a register the host may only read does not
//! compile. The caller still chooses each access's ordering, as the ABI's comments ask.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{memremap::MemRemap, prelude::*, shared_mem::SharedMem};

use crate::abi::{Access, Readable, Reg, RegWidth, Writable};

/// A register width the register block holds as an atomic word.
pub(crate) trait AtomicWidth: RegWidth {
    /// The atomic type of the width.
    type Atomic;
    /// The word at `offset` of `regs`; `Err` if it is outside the block or misaligned.
    fn cell(regs: &MemRemap, offset: usize) -> Result<&Self::Atomic>;
    /// Loads the word.
    fn load(cell: &Self::Atomic, order: Ordering) -> Self;
    /// Stores `value` to the word.
    fn store(cell: &Self::Atomic, value: Self, order: Ordering);
}

impl AtomicWidth for u32 {
    type Atomic = AtomicU32;
    fn cell(regs: &MemRemap, offset: usize) -> Result<&AtomicU32> {
        regs.atomic_u32(offset)
    }
    fn load(cell: &AtomicU32, order: Ordering) -> Self {
        cell.load(order)
    }
    fn store(cell: &AtomicU32, value: Self, order: Ordering) {
        cell.store(value, order)
    }
}

impl AtomicWidth for u64 {
    type Atomic = AtomicU64;
    fn cell(regs: &MemRemap, offset: usize) -> Result<&AtomicU64> {
        regs.atomic_u64(offset)
    }
    fn load(cell: &AtomicU64, order: Ordering) -> Self {
        cell.load(order)
    }
    fn store(cell: &AtomicU64, value: Self, order: Ordering) {
        cell.store(value, order)
    }
}

/// A register of a mapped register block: loads if the host may read it, stores if it may
/// write it.
pub(crate) struct RegRef<'a, T: AtomicWidth, A> {
    cell: &'a T::Atomic,
    _access: PhantomData<A>,
}

impl<T: AtomicWidth, A: Readable> RegRef<'_, T, A> {
    /// Loads the register.
    pub(crate) fn load(&self, order: Ordering) -> T {
        T::load(self.cell, order)
    }
}

impl<T: AtomicWidth, A: Writable> RegRef<'_, T, A> {
    /// Stores `value` to the register.
    pub(crate) fn store(&self, value: T, order: Ordering) {
        T::store(self.cell, value, order)
    }
}

/// Register `reg` of the register block mapped at `regs`.
pub(crate) fn reg<T: AtomicWidth, A: Access>(
    regs: &MemRemap,
    reg: Reg<T, A>,
) -> Result<RegRef<'_, T, A>> {
    Ok(RegRef {
        cell: T::cell(regs, reg.offset())?,
        _access: PhantomData,
    })
}

/// Loads `reg` with acquire: pairs with the device's release store of it.
pub(crate) fn read<T: AtomicWidth, A: Readable>(regs: &MemRemap, r: Reg<T, A>) -> Result<T> {
    Ok(reg(regs, r)?.load(Ordering::Acquire))
}
