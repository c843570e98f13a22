// SPDX-License-Identifier: GPL-2.0

//! CPU and NUMA node limits of the running kernel.
//!
//! C header: [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h)

/// The number of possible CPU ids (`nr_cpu_ids`): every CPU number is below it.
///
/// # Examples
///
/// ```
/// assert!(kernel::cpu::nr_cpu_ids() >= 1);
/// ```
pub fn nr_cpu_ids() -> u32 {
    // SAFETY: `nr_cpu_ids` is set once during boot, before any module runs, and only read after.
    unsafe { crate::bindings::nr_cpu_ids }
}

/// One more than the highest NUMA node number the kernel supports (`MAX_NUMNODES`).
pub const MAX_NUMNODES: u32 = crate::bindings::MAX_NUMNODES;
