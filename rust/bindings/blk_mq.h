/* SPDX-License-Identifier: GPL-2.0 */
/* Bindings for rust/kernel/block/mq (included from bindings_helper.h): the
 * feature flags are __force-cast macros, which bindgen skips. */
#include <linux/blkdev.h>

const blk_features_t RUST_CONST_HELPER_BLK_FEAT_WRITE_CACHE = BLK_FEAT_WRITE_CACHE;
const blk_features_t RUST_CONST_HELPER_BLK_FEAT_FUA = BLK_FEAT_FUA;
