// SPDX-License-Identifier: GPL-2.0

//! LZ4 block compression, from lib/lz4: the compressor with its working memory, and the
//! bounds-checked decompressor.
//!
//! C header: [`include/linux/lz4.h`](srctree/include/linux/lz4.h)

use crate::{bindings, ffi::c_int, prelude::*};

/// `u64`s of the compressor's working memory: `LZ4_MEM_COMPRESS` (= `LZ4_STREAMSIZE`) bytes,
/// which lz4.h defines as this many `unsigned long long`s (so the alignment is right too).
const WORKSPACE_WORDS: usize = bindings::LZ4_STREAMSIZE_U64 as usize;

/// The compressor's working memory (its hash table, 16 KiB): allocate it once and reuse it,
/// for one compression at a time.
///
/// # Invariants
///
/// Holds `WORKSPACE_WORDS` words.
pub struct Workspace(KVec<u64>);

impl Workspace {
    /// Allocates the working memory.
    pub fn new() -> Result<Self> {
        // INVARIANT: allocated with `WORKSPACE_WORDS` words.
        Ok(Self(KVec::from_elem(0u64, WORKSPACE_WORDS, GFP_KERNEL)?))
    }
}

/// Compresses `src` into `dst`; the compressed length, or `None` if it does not fit `dst`
/// (or either length exceeds what the library takes).
///
/// # Examples
///
/// ```
/// use kernel::lz4::{compress, decompress, Workspace};
/// let mut ws = Workspace::new()?;
/// let src = [7u8; 4096];
/// let mut packed = [0u8; 4095];
/// let n = compress(&mut ws, &src, &mut packed).ok_or(EINVAL)?;
/// assert!(n < 100);
/// let mut back = [0u8; 4096];
/// assert_eq!(decompress(&packed[..n], &mut back), Some(4096));
/// assert_eq!(back, src);
/// // Random-looking data does not fit in less than its size.
/// let noise: [u8; 64] = core::array::from_fn(|i| (i * 151 % 256) as u8 ^ (i as u8).rotate_left(3));
/// assert_eq!(compress(&mut ws, &noise, &mut [0u8; 16]), None);
/// # Ok::<(), Error>(())
/// ```
pub fn compress(ws: &mut Workspace, src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let (slen, dlen) = (
        c_int::try_from(src.len()).ok()?,
        c_int::try_from(dst.len()).ok()?,
    );
    // SAFETY: `src` is `slen` readable bytes and `dst` `dlen` writable ones, of which the
    // compressor writes at most `dlen`; they do not overlap (distinct Rust references); the
    // workspace is `LZ4_MEM_COMPRESS` writable, 8-byte aligned bytes (type invariant) used by
    // this call only (`&mut`).
    let n = unsafe {
        bindings::LZ4_compress_default(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            slen,
            dlen,
            ws.0.as_mut_ptr().cast(),
        )
    };
    // 0: does not fit.
    usize::try_from(n).ok().filter(|&n| n > 0 && n <= dst.len())
}

/// Decompresses the LZ4 block `src` into `dst`; the decompressed length, or `None` if `src` is
/// not a valid block that fits `dst`.
///
/// `LZ4_decompress_safe` never reads past `src` nor writes past `dst`, whatever `src` holds, so
/// corrupt input is an error here rather than a memory-safety problem.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let (slen, dlen) = (
        c_int::try_from(src.len()).ok()?,
        c_int::try_from(dst.len()).ok()?,
    );
    // SAFETY: `src` is `slen` readable bytes, `dst` is `dlen` writable bytes, they do not
    // overlap (distinct Rust references), and the safe decompressor stays inside both.
    let n = unsafe {
        bindings::LZ4_decompress_safe(src.as_ptr().cast(), dst.as_mut_ptr().cast(), slen, dlen)
    };
    usize::try_from(n).ok().filter(|&n| n <= dst.len())
}
