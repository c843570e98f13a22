/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dilation of the software device's model: how much slower this CPU runs
 * the benchmark's own kind of work than the machine the model describes.
 *
 * `make bench` runs `ccm_bench --calibrate` twice: on the build machine
 * (native) and in the VM (emulated), and loads the software device with
 * dilation_milli = 1000 * emulated / native. The device multiplies every
 * modelled cost by it (link, DMA, interrupt, remote polling, the CCM's
 * compute), and ccm_bench multiplies the costs it models itself (the host
 * task per record, the polling intervals): modelled time and the real time
 * of the code that runs then stand in the proportions of the hardware.
 *
 * The reference work is what the host side of a run does per record: the
 * record's CRC32C (cxl_ccm_crc32c_update, bitwise, as every record is
 * checked) and a copy of it. Its time is the fastest of several tries (the least
 * disturbed).
 */
#ifndef CCM_BENCH_CALIB_H
#define CCM_BENCH_CALIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../selftests/cxl_ccm/dev_params.h"

#define CALIB_BYTES (64u << 10)
#define CALIB_ROUNDS 4
#define CALIB_TRIES 5

/* Nanoseconds of the reference work, the fastest of CALIB_TRIES; 0 without memory. */
static inline __u64 calib_reference_ns(void)
{
	unsigned char *a = malloc(CALIB_BYTES), *b = malloc(CALIB_BYTES);
	__u64 best = 0;
	unsigned int i, t, r;
	__u32 crc = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	for (i = 0; i < CALIB_BYTES; i++)
		a[i] = (unsigned char)(i * 2654435761u >> 24);
	for (t = 0; t < CALIB_TRIES; t++) {
		__u64 t0 = now_ns(), dt;

		for (r = 0; r < CALIB_ROUNDS; r++) {
			crc = cxl_ccm_crc32c_update(crc, a, CALIB_BYTES);
			memcpy(b, a, CALIB_BYTES);
			/* Keep the copy: the next round reads what this one wrote. */
			a[r] ^= b[CALIB_BYTES - 1 - r];
		}
		dt = now_ns() - t0;
		if (!best || dt < best)
			best = dt;
	}
	free(a);
	free(b);
	/* The checksum is printed nowhere; this keeps the compiler from dropping the work. */
	if (crc == 0x12345678u)
		best++;
	return best;
}

/* The dilation the software device was loaded with, in thousandths (1000: none). */
static inline unsigned int calib_device_dilation(void)
{
	long long d = dev_param("dilation_milli");

	return d >= 1000 && d <= UINT32_MAX ? (unsigned int)d : 1000;
}

#endif /* CCM_BENCH_CALIB_H */
