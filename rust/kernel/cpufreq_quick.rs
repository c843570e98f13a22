// SPDX-License-Identifier: GPL-2.0

//! A CPU's current and hardware-maximum frequency, where cpufreq knows them.
//!
//! For a control loop that weighs how busy the CPUs are: the same work at a lower frequency
//! uses a larger share of what the CPUs can do. Without `CONFIG_CPU_FREQ`, or on a CPU no
//! cpufreq driver manages (a virtual machine's, as a rule), nothing is known.
//!
//! C header: [`include/linux/cpufreq.h`](srctree/include/linux/cpufreq.h)

use crate::bindings;

/// The current frequency of `cpu` in kHz (`cpufreq_quick_get`), if cpufreq manages it.
pub fn cur_khz(cpu: u32) -> Option<u32> {
    // SAFETY: any CPU number is accepted; one without a policy gives 0.
    let f = unsafe { bindings::cpufreq_cur_khz(cpu) };
    (f != 0).then_some(f)
}

/// The hardware maximum frequency of `cpu` in kHz (`cpufreq_get_hw_max_freq`), if known.
pub fn hw_max_khz(cpu: u32) -> Option<u32> {
    // SAFETY: any CPU number is accepted; one without a policy gives 0.
    let f = unsafe { bindings::cpufreq_hw_max_khz(cpu) };
    (f != 0).then_some(f)
}

/// The mean over CPUs `0..nr_cpus` (at most `nr_cpu_ids`) that cpufreq manages of their current
/// frequency in permille of their hardware maximum (at most 1000); `None` if it manages none of
/// them.
///
/// # Examples
///
/// ```
/// use kernel::cpufreq_quick;
///
/// // More CPUs than there are ask for no more than there are.
/// match cpufreq_quick::permille_of_max(u32::MAX) {
///     Some(p) => assert!(p <= 1000),
///     // No cpufreq driver (a virtual machine): nothing to scale by.
///     None => assert_eq!(cpufreq_quick::cur_khz(0), None),
/// }
/// ```
pub fn permille_of_max(nr_cpus: u32) -> Option<u32> {
    // SAFETY: `nr_cpu_ids` is set once at boot, before modules load, and only read after.
    let ids = unsafe { bindings::nr_cpu_ids };
    let (mut sum, mut n) = (0u64, 0u64);
    // cpufreq warns about a CPU number past `nr_cpu_ids`.
    for cpu in 0..nr_cpus.min(ids) {
        if let (Some(cur), Some(max)) = (cur_khz(cpu), hw_max_khz(cpu)) {
            sum += (u64::from(cur) * 1000 / u64::from(max)).min(1000);
            n += 1;
        }
    }
    // At most 1000.
    sum.checked_div(n).map(|p| p as u32)
}
