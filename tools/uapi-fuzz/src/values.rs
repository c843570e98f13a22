//! Drawing integer values for a domain: mostly "interesting" values (limits
//! from the header, powers of two and their neighbours), sometimes random.

use crate::desc::Dom;
use crate::rng::Rng;

/// Values that tend to sit on boundaries, the header's limits among them.
pub const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    15,
    16,
    31,
    32,
    33,
    63,
    64,
    65,
    127,
    128,
    255,
    256,
    511,
    512,
    1023,
    1024,
    4095,
    4096,
    4097,
    8192,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x1f_c000,
    0x20_0000,
    0x0fff_ffff,
    0x1000_0000,
    0x1000_1000,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fff0,
    0xffff_fffe,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX - 1,
    u64::MAX,
];

/// Byte sizes and offsets: pages, the default and largest input buffers.
pub const SIZES: &[u64] = &[
    0,
    4,
    8,
    32,
    64,
    512,
    4096,
    8192,
    16384,
    65536,
    0x10_0000,
    0x1f_c000,
    0x20_0000,
    0x1000_0000,
    0xfff,
    0x1001,
    0xffff_ffff,
    0x1_0000_0000,
    u64::MAX,
];

fn random_int(rng: &mut Rng, bits: u8) -> u64 {
    let v = match rng.below(4) {
        0 => rng.next_u64(),
        1 => 1u64 << rng.below(64),
        2 => (1u64 << rng.below(64)).wrapping_sub(1),
        _ => *rng.pick(INTERESTING),
    };
    mask(v, bits)
}

fn mask(v: u64, bits: u8) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

fn pow2(rng: &mut Rng) -> u64 {
    let p = 1u64 << rng.below(32);
    match rng.below(8) {
        0 => p.wrapping_sub(1),
        1 => p + 1,
        2 => 0,
        _ => p,
    }
}

fn flags(rng: &mut Rng, bits: &[u64]) -> u64 {
    if rng.one_in(20) {
        return 1u64 << rng.below(32);
    }
    let mut v = 0;
    for b in bits {
        if rng.one_in(3) {
            v |= b;
        }
    }
    v
}

/// A value for `dom`; `kernel` is the kernel_id of the call (for KArg).
pub fn draw(rng: &mut Rng, dom: Dom, kernel: u64) -> u64 {
    match dom {
        Dom::Int(bits) => random_int(rng, bits),
        Dom::Set(_) if rng.one_in(16) => random_int(rng, 32),
        Dom::Set(set) => *rng.pick(set),
        Dom::Flags(bits) => flags(rng, bits),
        Dom::Pow2 => pow2(rng),
        Dom::Size if rng.one_in(8) => random_int(rng, 64),
        Dom::Size => *rng.pick(SIZES),
        Dom::Zero if rng.one_in(24) => random_int(rng, 64),
        Dom::Zero => 0,
        Dom::KArg(i) => karg(rng, kernel, i),
    }
}

/// Word `i` of the argument block of `kernel` (structures of the header).
fn karg(rng: &mut Rng, kernel: u64, i: u8) -> u64 {
    if rng.one_in(10) {
        return random_int(rng, 32);
    }
    let set: &[u64] = match (kernel, i) {
        // stream_xform: op, chunk_size, operand, reserved
        (1, 0) => &[0, 1, 2, 3],
        (1, 1) => &[0, 4, 32, 64, 3, 4096],
        (1, 2) => &[0, 0x5a5a_5a5a, 1, 0xffff_ffff],
        // knn: dim, rows, chunk_rows
        (2, 0) => &[1, 2, 16, 4096, 4097, 0],
        (2, 1) | (2, 2) => &[0, 1, 4, 64, 0xffff_ffff],
        // sssp, pagerank: vertices, edges, chunk_vertices
        (3 | 4, 0..=2) => &[0, 1, 4, 16, 1000, 0xffff_ffff],
        // ssb: rows, chunk_rows, date, discount and quantity ranges
        (5 | 6, 0 | 1) => &[0, 1, 16, 4096, 0xffff_ffff],
        (5 | 6, 2 | 3) => &[19930101, 19931231, 19940101, 0, 0xffff_ffff],
        (5 | 6, 4..=7) => &[0, 1, 3, 4, 6, 24, 25, 35, 0xffff_ffff],
        // attention: tokens, q_first, q_rows, heads, head_dim, chunk_rows, shift
        (7, 0..=2) => &[0, 1, 2, 8, 64, 0xffff_ffff],
        (7, 3) => &[1, 2, 64, 65, 0],
        (7, 4) => &[1, 8, 256, 257, 0],
        (7, 5) => &[0, 1, 4],
        (7, 6) => &[0, 4, 63, 64],
        // sls: dim, rows, samples, pooling, chunk_samples
        (8, 0) => &[1, 4, 512, 513, 0],
        (8, 1..=4) => &[0, 1, 4, 64, 0xffff_ffff],
        _ => &[0],
    };
    *rng.pick(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_mostly_zero() {
        let mut rng = Rng::new(1);
        let zeros = (0..1000)
            .filter(|_| draw(&mut rng, Dom::Zero, 0) == 0)
            .count();
        assert!(zeros > 900);
    }
}
