// SPDX-License-Identifier: GPL-2.0
/*
 * reflux_sampler: the timeline of the reflux paradigm benchmark.
 *
 *   reflux_sampler PERIOD_MS STOPFILE
 *
 * Every PERIOD_MS until STOPFILE exists, prints one line
 *
 *   ##reflux-bench sample t_ms=.. mbps=.. temp_mc=.. throttled=0|1 \
 *       <kind>=host|device ... inflight_permille=..
 *
 * from /sys/kernel/debug/reflux0/{stats,actors,sched}: MB/s (10^6 bytes)
 * written by the application since the previous sample, over the time that
 * really passed (a sleep overshoots under load), the device's temperature
 * and throttling (its telemetry registers), where each actor runs, and the
 * scheduler's throttle level. A shell loop cannot keep the period in the
 * emulated VM: each of its commands forks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DIR "/sys/kernel/debug/reflux0/"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The value of KEY in a "key value" per line file, or -1. */
static long long stat_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ' ')
			return atoll(p + n + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static int slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return 0;
}

/* " kind=owner" for every line of the actors file. */
static void placements(const char *actors, char *out, size_t len)
{
	const char *line = actors;

	out[0] = 0;
	while (line && *line) {
		char kind[32], owner[16];
		const char *k = strstr(line, " kind "), *o = strstr(line, " owner ");
		const char *end = strchr(line, '\n');

		if (k && o && (!end || (k < end && o < end)) &&
		    sscanf(k, " kind %31s", kind) == 1 && sscanf(o, " owner %15s", owner) == 1) {
			size_t used = strlen(out);

			snprintf(out + used, len - used, " %s=%s", kind, owner);
		}
		line = end ? end + 1 : NULL;
	}
}

int main(int argc, char **argv)
{
	static char stats[8192], actors[4096], sched[16384], place[512];
	long long bytes0, t_start, t_prev;
	int period;

	if (argc != 3 || (period = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: %s PERIOD_MS STOPFILE\n", argv[0]);
		return 2;
	}
	if (slurp(DIR "stats", stats, sizeof(stats))) {
		perror(DIR "stats");
		return 1;
	}
	bytes0 = stat_value(stats, "written_bytes");
	t_start = t_prev = now_ms();
	/* The origin of t_ms, for events stamped with the same clock (migrations). */
	printf("##reflux-bench info t0_monotonic_ms=%lld\n", t_start);
	while (access(argv[2], F_OK)) {
		long long bytes, t, ip = 1000;
		const char *e;

		usleep(period * 1000);
		if (slurp(DIR "stats", stats, sizeof(stats)) || slurp(DIR "actors", actors, sizeof(actors)))
			return 1;
		if (!slurp(DIR "sched", sched, sizeof(sched)) && (e = strstr(sched, "inflight_permille ")))
			ip = atoll(e + strlen("inflight_permille "));
		t = now_ms();
		bytes = stat_value(stats, "written_bytes");
		placements(actors, place, sizeof(place));
		printf("##reflux-bench sample t_ms=%lld mbps=%.2f temp_mc=%lld throttled=%d%s "
		       "inflight_permille=%lld\n",
		       t - t_start, t > t_prev ? (bytes - bytes0) / 1e3 / (double)(t - t_prev) : 0.0,
		       stat_value(stats, "temp_milli_c"), stat_value(stats, "throttled") > 0, place, ip);
		fflush(stdout);
		bytes0 = bytes;
		t_prev = t;
	}
	return 0;
}
