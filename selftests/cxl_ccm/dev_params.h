/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The software device's module parameters in sysfs: one value, or the
 * modprobe command line that loads cxl_ccm_dev again as it is now; and the
 * reload with such a line.
 */
#ifndef CXL_CCM_DEV_PARAMS_H
#define CXL_CCM_DEV_PARAMS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEV_PARAMS "/sys/module/cxl_ccm_dev/parameters/"

/* The value of parameter @name (a bool reads as 1 or 0), or -1 if it cannot be read. */
static inline long long dev_param(const char *name)
{
	char path[256], text[32];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), DEV_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(text, sizeof(text), f)) {
		if (text[0] == 'Y' || text[0] == 'N')
			v = text[0] == 'Y';
		else if (sscanf(text, "%lld", &v) != 1)
			v = -1;
	}
	fclose(f);
	return v;
}

/* "modprobe cxl_ccm_dev name=value ..." with every current parameter value; 0 or -1. */
static inline int dev_params_command(char *cmd, size_t len)
{
	DIR *d = opendir(DEV_PARAMS);
	struct dirent *e;
	size_t used;

	if (!d)
		return -1;
	used = snprintf(cmd, len, "modprobe cxl_ccm_dev");
	while ((e = readdir(d)) && used < len) {
		char path[320], value[64];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), DEV_PARAMS "%s", e->d_name);
		f = fopen(path, "r");
		if (!f || !fgets(value, sizeof(value), f)) {
			if (f)
				fclose(f);
			closedir(d);
			return -1;
		}
		fclose(f);
		value[strcspn(value, "\n")] = 0;
		used += snprintf(cmd + used, len - used, " %s=%s", e->d_name, value);
	}
	closedir(d);
	return used < len ? 0 : -1;
}

/*
 * Runs @cmd (a modprobe line that loads cxl_ccm_dev), then waits up to 5 s
 * for the bound driver's @node; 0 or -1.
 */
static inline int dev_load(const char *cmd, const char *node)
{
	int ms;

	if (system(cmd))
		return -1;
	for (ms = 0; access(node, F_OK) && ms < 5000; ms++)
		usleep(1000);
	return access(node, F_OK);
}

/* Unloads cxl_ccm_dev, then dev_load(@cmd, @node); 0 or -1. */
static inline int dev_reload(const char *cmd, const char *node)
{
	if (system("modprobe -r cxl_ccm_dev"))
		return -1;
	return dev_load(cmd, node);
}

#endif /* CXL_CCM_DEV_PARAMS_H */
