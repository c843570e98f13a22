// SPDX-License-Identifier: GPL-2.0

#include <linux/bio.h>

/* bio_iter_iovec is a macro and bio_advance_iter_single an inline function:
 * together they are bio_for_each_segment, which Request::for_each_segment
 * spells out in Rust. */
struct bio_vec rust_helper_bio_iter_iovec(struct bio *bio, struct bvec_iter iter)
{
	return bio_iter_iovec(bio, iter);
}

void rust_helper_bio_advance_iter_single(const struct bio *bio, struct bvec_iter *iter,
					 unsigned int bytes)
{
	bio_advance_iter_single(bio, iter, bytes);
}
