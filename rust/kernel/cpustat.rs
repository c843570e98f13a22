// SPDX-License-Identifier: GPL-2.0

//! The time each CPU spent busy and idle, as `/proc/stat` counts it.
//!
//! For a control loop that weighs how busy the machine's CPUs are: the busy fraction of an
//! interval is the difference of two readings. Unless the kernel accounts CPU time precisely
//! (`CONFIG_VIRT_CPU_ACCOUNTING_GEN`; idle time also with `CONFIG_NO_HZ_COMMON`), the counters
//! advance with the scheduler tick, a whole tick going to what the CPU was doing when it came:
//! an interval of a few ticks then reads coarsely (at `HZ=250`, 10 ms hold two or three ticks
//! per CPU), right only on average.
//!
//! C headers: [`include/linux/kernel_stat.h`](srctree/include/linux/kernel_stat.h),
//! [`include/linux/tick.h`](srctree/include/linux/tick.h),
//! [`include/linux/sched/isolation.h`](srctree/include/linux/sched/isolation.h)

use crate::bindings;

/// The time a CPU, or several, spent since boot, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// Not idle: user, nice, system, irq, softirq and steal time (guest time is counted in
    /// user and nice already).
    pub busy_ns: u64,
    /// Idle, waiting for I/O included (`/proc/stat`'s idle and iowait).
    pub idle_ns: u64,
}

impl CpuTime {
    /// The sum of `self` and `other`, saturating.
    pub fn saturating_add(self, other: Self) -> Self {
        Self {
            busy_ns: self.busy_ns.saturating_add(other.busy_ns),
            idle_ns: self.idle_ns.saturating_add(other.idle_ns),
        }
    }
}

/// The counters `/proc/stat` counts as busy.
const BUSY: [bindings::cpu_usage_stat; 6] = [
    bindings::cpu_usage_stat_CPUTIME_USER,
    bindings::cpu_usage_stat_CPUTIME_NICE,
    bindings::cpu_usage_stat_CPUTIME_SYSTEM,
    bindings::cpu_usage_stat_CPUTIME_IRQ,
    bindings::cpu_usage_stat_CPUTIME_SOFTIRQ,
    bindings::cpu_usage_stat_CPUTIME_STEAL,
];

/// The time `cpu` spent since boot; `None` if `cpu` is not a possible CPU number (at least
/// [`crate::cpu::nr_cpu_ids`]).
///
/// # Examples
///
/// ```
/// use kernel::cpustat;
///
/// // The boot CPU has run; a CPU number past the possible ones has no time.
/// let t = cpustat::cpu_time(0).unwrap();
/// assert!(t.busy_ns > 0);
/// assert_eq!(cpustat::cpu_time(kernel::cpu::nr_cpu_ids()), None);
/// ```
pub fn cpu_time(cpu: u32) -> Option<CpuTime> {
    if cpu >= crate::cpu::nr_cpu_ids() {
        return None;
    }
    let id = i32::try_from(cpu).ok()?;
    let mut kcs = bindings::kernel_cpustat::default();
    // SAFETY: `id` is a possible CPU number (checked above), so its per-CPU counters exist;
    // `kcs` is a valid `kernel_cpustat` to write them to.
    unsafe { bindings::kcpustat_cpu_fetch(&mut kcs, id) };
    let stat = |i: bindings::cpu_usage_stat| {
        usize::try_from(i)
            .ok()
            .and_then(|i| kcs.cpustat.get(i))
            .copied()
            .unwrap_or(0)
    };
    let busy_ns = BUSY
        .iter()
        .fold(0u64, |sum, &i| sum.saturating_add(stat(i)));
    // As `/proc/stat` does: a tickless CPU keeps its idle and iowait time apart from the
    // counters, which then lag; `u64::MAX` (-1 in C) when it does not, or is offline.
    let (idle_us, iowait_us) = if online(cpu) {
        // SAFETY: `id` is a possible CPU number; a null `last_update_time` asks for no update.
        let idle = unsafe { bindings::get_cpu_idle_time_us(id, core::ptr::null_mut()) };
        // SAFETY: as above.
        let iowait = unsafe { bindings::get_cpu_iowait_time_us(id, core::ptr::null_mut()) };
        (idle, iowait)
    } else {
        (u64::MAX, u64::MAX)
    };
    let or_stat = |us: u64, i| {
        if us == u64::MAX {
            stat(i)
        } else {
            us.saturating_mul(1000)
        }
    };
    let idle_ns = or_stat(idle_us, bindings::cpu_usage_stat_CPUTIME_IDLE)
        .saturating_add(or_stat(iowait_us, bindings::cpu_usage_stat_CPUTIME_IOWAIT));
    Some(CpuTime { busy_ns, idle_ns })
}

/// Whether `cpu` is online (false if it is not a possible CPU number).
pub fn online(cpu: u32) -> bool {
    if cpu >= crate::cpu::nr_cpu_ids() {
        return false;
    }
    // SAFETY: `cpu` is a possible CPU number, inside the online mask.
    unsafe { bindings::cpu_online(cpu) }
}

/// Whether `cpu` is isolated from general scheduling (`isolcpus=`, `nohz_full=`, an isolated
/// cpuset partition): work not pinned to it does not run there. False if it is not a possible
/// CPU number.
pub fn isolated(cpu: u32) -> bool {
    if cpu >= crate::cpu::nr_cpu_ids() {
        return false;
    }
    let Ok(id) = i32::try_from(cpu) else {
        return false;
    };
    // SAFETY: `id` is a possible CPU number, inside the housekeeping and cpuset masks.
    unsafe { bindings::cpu_is_isolated(id) }
}

/// The summed time of the CPUs general work runs on: those online and not [`isolated`].
///
/// # Examples
///
/// ```
/// use kernel::cpustat;
///
/// // Some CPU runs general work, and it has run since boot.
/// let all = cpustat::housekeeping_time();
/// assert!(all.busy_ns > 0);
/// ```
pub fn housekeeping_time() -> CpuTime {
    (0..crate::cpu::nr_cpu_ids())
        .filter(|&cpu| online(cpu) && !isolated(cpu))
        .filter_map(cpu_time)
        .fold(CpuTime::default(), CpuTime::saturating_add)
}
