// SPDX-License-Identifier: GPL-2.0

//! `KERNEL_LLM_ATTENTION`: argument checks, the block-major record layout, and the integer
//! attention against a direct transcription of its definition.

use ccm_devmodel::abi::{attention_weight, ATTENTION_MAX_HEADS, ATTENTION_MAX_HEAD_DIM};
use ccm_devmodel::attention::{Attention, AttentionError, RowBuffers};
use ccm_devmodel::kernel::Kernel;

#[derive(Clone, Copy)]
struct Shape {
    tokens: u32,
    q_first: u32,
    q_rows: u32,
    heads: u32,
    dim: u32,
    chunk: u32,
    shift: u32,
}

const S: Shape = Shape {
    tokens: 20,
    q_first: 10,
    q_rows: 10,
    heads: 3,
    dim: 4,
    chunk: 4,
    shift: 2,
};

fn args(s: Shape, reserved: u32) -> [u8; 32] {
    let mut b = [0u8; 32];
    let w = [
        s.tokens, s.q_first, s.q_rows, s.heads, s.dim, s.chunk, s.shift, reserved,
    ];
    for (i, v) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

fn input(s: Shape) -> u32 {
    s.heads * (s.q_rows + 2 * s.tokens) * s.dim * 2
}

fn make(s: Shape) -> Result<Attention, AttentionError> {
    Attention::from_packet(&args(s, 0), 32, 64, input(s))
}

#[test]
fn weights() {
    assert_eq!(attention_weight(0), 1 << 16);
    assert_eq!(attention_weight(8), 3 << 14); // 2^-0.5 ~ 0.75 by the line
    assert_eq!(attention_weight(16), 1 << 15);
    // Q16: 2^-16 is the smallest weight, 2^-17 rounds to 0.
    assert_eq!(attention_weight(16 * 16), 1);
    assert_eq!(attention_weight(16 * 17), 0);
    assert_eq!(attention_weight(16 * 32), 0);
    assert_eq!(attention_weight(u64::MAX), 0);
    for d in 0..600u64 {
        assert!(
            attention_weight(d + 1) <= attention_weight(d),
            "not monotonic at {d}"
        );
    }
}

#[test]
fn validates_arguments() {
    assert!(make(S).is_ok());
    let bad = |s: Shape| make(s).unwrap_err();
    assert_eq!(bad(Shape { heads: 0, ..S }), AttentionError::BadShape);
    assert_eq!(
        bad(Shape {
            heads: ATTENTION_MAX_HEADS + 1,
            ..S
        }),
        AttentionError::BadShape
    );
    assert_eq!(
        bad(Shape {
            dim: ATTENTION_MAX_HEAD_DIM + 1,
            ..S
        }),
        AttentionError::BadShape
    );
    assert_eq!(bad(Shape { q_rows: 0, ..S }), AttentionError::BadShape);
    assert_eq!(bad(Shape { q_first: 11, ..S }), AttentionError::BadShape);
    assert_eq!(bad(Shape { shift: 64, ..S }), AttentionError::BadShape);
    // 5 rows of 16 bytes exceed the SF of 64.
    assert_eq!(
        bad(Shape { chunk: 5, ..S }),
        AttentionError::ChunkAboveStreamingFactor
    );
    assert_eq!(
        Attention::from_packet(&args(S, 0), 32, 64, input(S) + 2),
        Err(AttentionError::InputSizeMismatch)
    );
    assert_eq!(
        Attention::from_packet(&args(S, 1), 32, 64, input(S)),
        Err(AttentionError::ReservedNonZero)
    );
    assert_eq!(
        Attention::from_packet(&args(S, 0), 28, 64, input(S)),
        Err(AttentionError::BadArgSize)
    );
    // chunk_rows 0: as many rows as the SF holds.
    let a = make(Shape { chunk: 0, ..S }).unwrap();
    assert_eq!(a.chunk_count(), 3 * 3);
}

#[test]
fn records_tile_the_output_block_by_block() {
    let a = make(S).unwrap();
    // 10 rows in blocks of 4, 4, 2; three heads each.
    assert_eq!(a.chunk_count(), 9);
    let k = Kernel::Attention(a);
    let mut next = 0;
    for c in 0..a.chunk_count() {
        let span = k.chunk(input(S), c).unwrap();
        let (head, first, n) = a.rows_of(c).unwrap();
        assert_eq!((head, first / 4), (c % 3, c / 3));
        assert_eq!(n, if c < 6 { 4 } else { 2 });
        assert_eq!(span.offset, next, "chunk {c}");
        assert_eq!(span.length, n * 4 * 4);
        next += span.length;
    }
    assert_eq!(next, a.output_bytes());
    assert_eq!(k.chunk(input(S), 9), None);
}

/// The attention of one row, straight from the definition.
fn reference(s: Shape, v: &[i16], head: u32, row: u32) -> Vec<i32> {
    let d = s.dim as usize;
    let at = |i: u32| i as usize * d;
    let q = &v[at(head * s.q_rows + row)..][..d];
    let k0 = s.heads * s.q_rows + head * s.tokens;
    let v0 = k0 + s.heads * s.tokens;
    let keys = s.q_first + row + 1;
    let score = |j: u32| -> i64 {
        let k = &v[at(k0 + j)..][..d];
        q.iter()
            .zip(k)
            .map(|(a, b)| i64::from(*a) * i64::from(*b))
            .sum()
    };
    let max = (0..keys).map(score).max().unwrap();
    let w: Vec<i64> = (0..keys)
        .map(|j| attention_weight(((max - score(j)) as u64) >> s.shift) as i64)
        .collect();
    let total: i64 = w.iter().sum();
    (0..d)
        .map(|e| {
            let sum: i64 = (0..keys)
                .map(|j| w[j as usize] * i64::from(v[at(v0 + j) + e]))
                .sum();
            (sum / total) as i32
        })
        .collect()
}

#[test]
fn rows_match_the_definition() {
    let s = Shape {
        tokens: 40,
        q_first: 30,
        q_rows: 10,
        heads: 2,
        dim: 8,
        chunk: 2,
        shift: 4,
    };
    let n = (input(s) / 2) as usize;
    let mut x = 5u32;
    let mut v: Vec<i16> = (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((x >> 16) % 512) as i16 - 256
        })
        .collect();
    // Extremes in head 1's first keys and values.
    let k1 = ((s.heads * s.q_rows + s.tokens) * s.dim) as usize;
    let v1 = k1 + (s.heads * s.tokens * s.dim) as usize;
    for i in 0..16 {
        v[k1 + i] = if i % 2 == 0 { i16::MAX } else { i16::MIN };
        v[v1 + i] = if i % 3 == 0 { i16::MIN } else { i16::MAX };
    }
    let bytes: Vec<u8> = v.iter().flat_map(|e| e.to_le_bytes()).collect();
    let a = Attention::from_packet(&args(s, 0), 32, 64, input(s)).unwrap();
    let mut buf = RowBuffers::new();
    let mut reads = 0;
    let mut read = |at: u64, out: &mut [u8]| -> Result<(), ()> {
        reads += 1;
        let at = at as usize;
        out.copy_from_slice(bytes.get(at..at + out.len()).ok_or(())?);
        Ok(())
    };
    for head in 0..s.heads {
        for row in 0..s.q_rows {
            a.attend_row(head, row, &mut read, &mut buf).unwrap();
            assert_eq!(
                buf.out[..s.dim as usize],
                reference(s, &v, head, row)[..],
                "head {head} row {row}"
            );
        }
    }
    assert!(reads > 0);
}

#[test]
fn read_errors_propagate() {
    let a = make(S).unwrap();
    let mut buf = RowBuffers::new();
    let mut read = |_: u64, _: &mut [u8]| -> Result<(), u8> { Err(7) };
    assert_eq!(a.attend_row(0, 0, &mut read, &mut buf), Err(7));
}
