// SPDX-License-Identifier: GPL-2.0

#include <linux/cpufreq.h>

/* Functions with CONFIG_CPU_FREQ, inline stubs returning 0 without it. */
unsigned int rust_helper_cpufreq_cur_khz(unsigned int cpu)
{
	return cpufreq_quick_get(cpu);
}

unsigned int rust_helper_cpufreq_hw_max_khz(unsigned int cpu)
{
	return cpufreq_get_hw_max_freq(cpu);
}
