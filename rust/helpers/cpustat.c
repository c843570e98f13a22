// SPDX-License-Identifier: GPL-2.0

#include <linux/cpumask.h>
#include <linux/kernel_stat.h>
#include <linux/sched/isolation.h>
#include <linux/tick.h>

/* A function with CONFIG_VIRT_CPU_ACCOUNTING_GEN, an inline copy without. */
void rust_helper_kcpustat_cpu_fetch(struct kernel_cpustat *dst, int cpu)
{
	kcpustat_cpu_fetch(dst, cpu);
}

/* Functions with CONFIG_NO_HZ_COMMON, inline stubs returning -1 without. */
u64 rust_helper_get_cpu_idle_time_us(int cpu, u64 *last_update_time)
{
	return get_cpu_idle_time_us(cpu, last_update_time);
}

u64 rust_helper_get_cpu_iowait_time_us(int cpu, u64 *last_update_time)
{
	return get_cpu_iowait_time_us(cpu, last_update_time);
}

bool rust_helper_cpu_online(unsigned int cpu)
{
	return cpu_online(cpu);
}

bool rust_helper_cpu_is_isolated(int cpu)
{
	return cpu_is_isolated(cpu);
}
