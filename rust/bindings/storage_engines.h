/* SPDX-License-Identifier: GPL-2.0 */
/* The libraries behind reflux's actor engines, on either side: crc32c_le
 * (lib/crc32.c), LZ4 (lib/lz4) and AES (lib/crypto/aes.c). */
#include <linux/crc32.h>
#include <linux/lz4.h>
#include <crypto/aes.h>
