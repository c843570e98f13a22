// SPDX-License-Identifier: GPL-2.0

//! Unit tests of `compute`: the PAPER machine's numbers worked by hand, the per-kernel work of
//! a chunk, the dilation, the µthreads' timeline, the ranges, and extreme inputs.

use ccm_devmodel::abi::{StreamXformArgs, XFORM_OP_XOR};
use ccm_devmodel::attention::Attention;
use ccm_devmodel::compute::{
    place, place_in_heap, CcmConfig, ComputeError, ComputeModel, ComputeParam, Work, CHUNK_OPS,
    MAX_DILATION_MILLI, MAX_UTHREADS, NO_DILATION_MILLI,
};
use ccm_devmodel::graph::{Graph, Pass};
use ccm_devmodel::kernel::Kernel;
use ccm_devmodel::knn::Knn;
use ccm_devmodel::sls::Sls;
use ccm_devmodel::ssb::Ssb;
use ccm_devmodel::xform::Xform;
use proptest::prelude::*;

const PAPER: ComputeModel = ComputeModel::PAPER;

fn args(words: &[u32]) -> [u8; 32] {
    let mut b = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    b
}

fn xform(chunk_size: u32) -> Kernel {
    let a = StreamXformArgs {
        op: XFORM_OP_XOR,
        chunk_size,
        operand: 0x5a5a_5a5a,
        ..Default::default()
    };
    Kernel::Xform(Xform::from_args(&a, chunk_size).unwrap())
}

/// `{dim, rows, chunk_rows}`, the exact input size, a streaming factor that fits the chunk.
fn knn(dim: u32, rows: u32, chunk_rows: u32) -> (Kernel, u32) {
    let input = (rows + 1) * dim * 4;
    let k = Knn::from_packet(&args(&[dim, rows, chunk_rows]), 32, chunk_rows * 8, input).unwrap();
    (Kernel::Knn(k), input)
}

fn ssb(rows: u32, chunk_rows: u32) -> (Kernel, u32) {
    let input = rows * 16;
    let q = Ssb::from_packet(&args(&[rows, chunk_rows]), 32, 256, input).unwrap();
    (Kernel::Ssb(q), input)
}

/// `{dim, rows, samples, pooling, chunk_samples}`.
fn sls(dim: u32, rows: u32, samples: u32, pooling: u32, chunk: u32) -> (Kernel, u32) {
    let input = (rows * dim + samples * pooling) * 4;
    let a = args(&[dim, rows, samples, pooling, chunk]);
    let l = Sls::from_packet(&a, 32, chunk * dim * 4, input).unwrap();
    (Kernel::Sls(l), input)
}

/// `{vertices, edges, chunk_vertices}`.
fn graph(pass: Pass, vertices: u32, edges: u32, chunk: u32) -> (Kernel, u32) {
    let lists = if pass == Pass::Sum { 1 } else { 2 };
    let input = (vertices + 1 + lists * edges) * 4 + vertices * 8;
    let a = args(&[vertices, edges, chunk]);
    let g = Graph::from_packet(pass, &a, 32, chunk * 8, input).unwrap();
    (Kernel::Graph(g), input)
}

/// `{tokens, q_first, q_rows, heads, head_dim, chunk_rows, shift}`.
fn attention(
    tokens: u32,
    q_first: u32,
    q_rows: u32,
    heads: u32,
    dim: u32,
    chunk: u32,
) -> (Kernel, u32) {
    let input = heads * (q_rows + 2 * tokens) * dim * 2;
    let a = args(&[tokens, q_first, q_rows, heads, dim, chunk, 4]);
    let k = Attention::from_packet(&a, 32, chunk * dim * 4, input).unwrap();
    (Kernel::Attention(k), input)
}

#[test]
fn paper_is_table_iii() {
    let c = CcmConfig::PAPER;
    assert_eq!(
        (c.units, c.uthreads_per_unit, c.clock_mhz, c.mem_mb_per_s),
        (16, 16, 2_000, 614_400)
    );
    assert_eq!(c.uthreads(), 256);
    assert_eq!(CcmConfig::default(), c);
    assert_eq!(ComputeModel::default(), PAPER);
    assert_eq!(PAPER, ComputeModel::new(c, 1000).unwrap());
    assert_eq!(PAPER.slots(), 256);
    assert_eq!(PAPER.config(), c);
    assert_eq!(PAPER.dilation_milli(), NO_DILATION_MILLI);
    for p in ComputeParam::ALL {
        assert_eq!(ComputeParam::from_name(p.name()), Some(p));
        let (min, max) = p.range();
        assert!(min <= p.default_value() && p.default_value() <= max, "{p}");
    }
    assert_eq!(ComputeParam::from_name("units"), None);
    // A µthread issues every 16th cycle of 0.5 ns: 8 ns per instruction. It has 1/256 of
    // 614.4 GB/s, 2.4 GB/s: 2.4 bytes per ns.
    assert_eq!(PAPER.compute_ns(1), 8);
    assert_eq!(PAPER.compute_ns(1000), 8000);
    assert_eq!(PAPER.memory_ns(12), 5);
    assert_eq!(PAPER.memory_ns(2400), 1000);
    assert_eq!(PAPER.memory_ns(1), 1); // 5/12 ns, rounded up
    assert_eq!(PAPER.chunk_ns(Work::default()), 0);
}

#[test]
fn xform_chunks_by_hand() {
    let k = xform(256);
    // A 256-byte chunk: 64 words.
    //   ops   = CHUNK_OPS 16 + 64 words * 4 (load, xor, store, loop) + 256 / 8 CRC32C = 304
    //   bytes = 256 read + 256 written = 512
    //   compute = 304 ops * 16 uthreads_per_unit * 1000 / 2000 MHz = 2432 ns
    //   memory  = 512 bytes * 256 uthreads * 1000 / 614400 MB/s = 213.3 -> 214 ns
    //   chunk   = max(2432, 214) = 2432 ns
    let w = k.chunk_work(1024, 0).unwrap();
    assert_eq!(
        w,
        Work {
            ops: 304,
            bytes: 512
        }
    );
    assert_eq!(PAPER.compute_ns(w.ops), 2432);
    assert_eq!(PAPER.memory_ns(w.bytes), 214);
    assert_eq!(PAPER.chunk_ns(w), 2432);
    assert_eq!(PAPER.kernel_chunk_ns(&k, 1024, 3), Some(2432));
    // The last, shorter chunk of 1000 bytes: 232 bytes, 58 words.
    //   ops = 16 + 58 * 4 + 29 = 277; bytes = 464.
    assert_eq!(
        k.chunk_work(1000, 3),
        Some(Work {
            ops: 277,
            bytes: 464
        })
    );
    assert_eq!(k.chunk_work(1000, 4), None);

    // A 4096-byte chunk: 1024 words.
    //   ops   = 16 + 1024 * 4 + 512 = 4624 -> 4624 * 8 = 36992 ns
    //   bytes = 8192 -> 8192 / 2.4 = 3413.3 -> 3414 ns
    let k = xform(4096);
    let w = k.chunk_work(8192, 1).unwrap();
    assert_eq!(
        w,
        Work {
            ops: 4624,
            bytes: 8192
        }
    );
    assert_eq!(PAPER.memory_ns(w.bytes), 3414);
    assert_eq!(PAPER.chunk_ns(w), 36992);
}

#[test]
fn knn_chunk_by_hand() {
    // 32 rows of 128 elements per chunk.
    //   ops   = 16 + 32 rows * (128 * 6 (load q, load r, sub, mul, add, loop) + 4) + 32 * 8 / 8
    //         = 16 + 32 * 772 + 32 = 24752 -> 24752 * 8 = 198016 ns
    //   bytes = 512 (the query, once) + 32 * 512 (rows) + 32 * 8 (distances) = 17152
    //         -> 17152 / 2.4 = 7146.7 -> 7147 ns
    let (k, input) = knn(128, 70, 32);
    let w = k.chunk_work(input, 0).unwrap();
    assert_eq!(
        w,
        Work {
            ops: 24752,
            bytes: 17152
        }
    );
    assert_eq!(PAPER.memory_ns(w.bytes), 7147);
    assert_eq!(PAPER.chunk_ns(w), 198_016);
    // The last chunk has 70 - 64 = 6 rows: 16 + 6 * 772 + 6 = 4654; 512 + 3072 + 48 = 3632.
    assert_eq!(
        k.chunk_work(input, 2),
        Some(Work {
            ops: 4654,
            bytes: 3632
        })
    );
}

#[test]
fn ssb_chunk_by_hand() {
    // 100 rows in chunks of 40: the last has 20 rows.
    //   ops = 16 + 20 * 17 + 2 (the partial's stores) + 16 / 8 = 360; bytes = 320 + 16 = 336
    let (k, input) = ssb(100, 40);
    assert_eq!(
        k.chunk_work(input, 2),
        Some(Work {
            ops: 360,
            bytes: 336
        })
    );
    assert_eq!(
        k.chunk_work(input, 0),
        Some(Work {
            ops: 16 + 680 + 2 + 2,
            bytes: 656
        })
    );
    assert_eq!(PAPER.kernel_chunk_ns(&k, input, 2), Some(2880));
}

#[test]
fn sls_chunk_by_hand() {
    // dim 8, pooling 3, 2 samples per chunk.
    //   per sample = 2 + 3 * 5 (indices) + 3 * 8 * 5 (gathered elements) + 8 * 5 (output) = 177
    //   ops   = 16 + 2 * 177 + 64 / 8 = 378
    //   bytes = 6 indices * 4 + 6 rows * 32 + 2 vectors * 32 = 24 + 192 + 64 = 280
    let (k, input) = sls(8, 10, 5, 3, 2);
    assert_eq!(
        k.chunk_work(input, 0),
        Some(Work {
            ops: 378,
            bytes: 280
        })
    );
    // The last chunk has one sample: 16 + 177 + 4 = 197; 12 + 96 + 32 = 140.
    assert_eq!(
        k.chunk_work(input, 2),
        Some(Work {
            ops: 197,
            bytes: 140
        })
    );
}

#[test]
fn graph_chunks_by_hand() {
    // 4 vertices, 6 edges, 2 vertices per chunk: a chunk's share is ceil(6 * 2 / 4) = 3 edges.
    //   PageRank: ops = 16 + 2 * 6 + 3 * 7 + 16 / 8 = 51; bytes = 3 * 4 + 3 * 12 + 16 = 64
    //   SSSP:     ops = 16 + 2 * 6 + 3 * 10 + 2 = 60;     bytes = 12 + 3 * 16 + 16 = 76
    let (k, input) = graph(Pass::Sum, 4, 6, 2);
    assert_eq!(k.chunk_work(input, 1), Some(Work { ops: 51, bytes: 64 }));
    let (k, input) = graph(Pass::MinPlusWeight, 4, 6, 2);
    assert_eq!(k.chunk_work(input, 0), Some(Work { ops: 60, bytes: 76 }));
    // 3 vertices in chunks of 2: the last has 1 vertex and ceil(6 / 3) = 2 edges.
    //   ops = 16 + 6 + 14 + 1 = 37; bytes = 8 + 24 + 8 = 40
    let (k, input) = graph(Pass::Sum, 3, 6, 2);
    assert_eq!(k.chunk_work(input, 1), Some(Work { ops: 37, bytes: 40 }));
}

#[test]
fn attention_chunks_by_hand() {
    // 20 tokens, queries 10..20, 3 heads of 4 elements, blocks of 4 rows.
    // Chunk 0 (block 0, head 0): rows 10..14 see 11 + 12 + 13 + 14 = 50 keys.
    //   ops   = 16 + 4 * (4 * 6 + 4) + 50 * (4 * 16 + 13) + 4 * 16 / 8 = 16 + 112 + 3850 + 8
    //         = 3986
    //   bytes = 4 rows * 4 * (2 + 4) + 50 keys * 4 * 6 = 96 + 1200 = 1296
    let (k, input) = attention(20, 10, 10, 3, 4, 4);
    assert_eq!(
        k.chunk_work(input, 0),
        Some(Work {
            ops: 3986,
            bytes: 1296
        })
    );
    // Head 2 of block 0 is the same work.
    assert_eq!(k.chunk_work(input, 2), k.chunk_work(input, 0));
    // Chunk 8 (block 2, head 2): rows 18, 19 see 19 + 20 = 39 keys.
    //   ops = 16 + 2 * 28 + 39 * 77 + 4 = 3079; bytes = 48 + 936 = 984
    assert_eq!(
        k.chunk_work(input, 8),
        Some(Work {
            ops: 3079,
            bytes: 984
        })
    );
    assert_eq!(k.chunk_work(input, 9), None);
    // A whole prefill (queries 0..tokens) is exact too: rows 0..4 see 1 + 2 + 3 + 4 keys.
    let (k, input) = attention(8, 0, 8, 1, 4, 4);
    assert_eq!(
        k.chunk_work(input, 0),
        Some(Work {
            ops: 16 + 112 + 10 * 77 + 8,
            bytes: 96 + 240
        })
    );
    // `q_first` is not visible: queries 0..10 of 20 tokens are modelled as queries 10..20 (the
    // documented estimate).
    let (suffix, input) = attention(20, 10, 10, 3, 4, 4);
    let (prefix, _) = attention(20, 0, 10, 3, 4, 4);
    assert_eq!(prefix.chunk_work(input, 0), suffix.chunk_work(input, 0));
}

#[test]
fn chunk_work_stops_after_the_last_chunk() {
    let kernels = [
        (xform(256), 1000),
        (xform(256), 1024),
        (xform(4096), 4),
        knn(128, 70, 32),
        knn(3, 1, 1),
        ssb(100, 40),
        ssb(1, 0),
        sls(8, 10, 5, 3, 2),
        graph(Pass::Sum, 4, 6, 2),
        graph(Pass::MinPlusWeight, 5, 0, 3),
        attention(20, 10, 10, 3, 4, 4),
        attention(8, 0, 8, 1, 4, 3),
    ];
    for (k, input) in kernels {
        let n = k.chunk_count(input);
        assert!(n > 0, "{k:?}");
        for i in 0..n {
            let w = k.chunk_work(input, i).unwrap();
            assert!(w.ops > CHUNK_OPS && w.bytes > 0, "{k:?} chunk {i}: {w:?}");
        }
        for i in [n, n + 1, u32::MAX] {
            assert_eq!(k.chunk_work(input, i), None, "{k:?} chunk {i}");
            assert_eq!(PAPER.kernel_chunk_ns(&k, input, i), None);
        }
    }
    // An empty STREAM_XFORM input has no chunk; nor has an input the device would refuse.
    assert_eq!(xform(256).chunk_work(0, 0), None);
    assert_eq!(xform(256).chunk_work(1023, 0), None);
}

#[test]
fn dilation_scales_linearly() {
    let works = [
        Work {
            ops: 304,
            bytes: 512,
        },
        Work {
            ops: 24752,
            bytes: 17152,
        },
        Work {
            ops: 1,
            bytes: 1_200_000,
        }, // memory-bound: 500 000 ns
        Work { ops: 0, bytes: 0 },
    ];
    for w in works {
        let base = PAPER.chunk_ns(w);
        for factor in [1u64, 2, 3, 10, 1000] {
            let m = ComputeModel::new(CcmConfig::PAPER, 1000 * factor as u32).unwrap();
            // Exact: every base time of these works is a whole number of ns.
            assert_eq!(m.chunk_ns(w), base * factor, "{w:?} x{factor}");
        }
        // 1.5x: 304 ops take 2432 * 1.5 = 3648 ns.
        let m = ComputeModel::new(CcmConfig::PAPER, 1500).unwrap();
        assert_eq!(m.chunk_ns(w), (base * 3).div_ceil(2), "{w:?} x1.5");
    }
    // Rounding happens once, after the dilation: 1 byte is 5/12 ns, so 1000 x is 416.67.
    let m = ComputeModel::new(CcmConfig::PAPER, MAX_DILATION_MILLI).unwrap();
    assert_eq!(m.memory_ns(1), 417);
    assert_eq!(m.memory_ns(12), 5000);
}

#[test]
fn place_fills_every_slot_before_queueing() {
    let p = PAPER.slots() as usize;
    let dur = PAPER.chunk_ns(Work {
        ops: 304,
        bytes: 512,
    });
    let mut free_at = vec![0u64; p];
    for _ in 0..p {
        assert_eq!(place(&mut free_at, 0, dur), dur);
    }
    assert!(free_at.iter().all(|&t| t == dur));
    // The P+1st waits for the first µthread to free up.
    assert_eq!(place(&mut free_at, 0, dur), 2 * dur);
    assert_eq!(free_at[0], 2 * dur);
    // A chunk ready after a µthread is free starts when it is ready.
    assert_eq!(place(&mut free_at, 10 * dur, dur), 11 * dur);
    // The earliest-free µthread is used: a late one does not delay the next chunk.
    let mut free_at = [500, 100, 300];
    assert_eq!(place(&mut free_at, 0, 10), 110);
    assert_eq!(free_at, [500, 110, 300]);
    assert_eq!(place(&mut free_at, 200, 10), 210);
    assert_eq!(free_at, [500, 210, 300]);
    // No µthread at all: unbounded parallelism.
    assert_eq!(place(&mut [], 7, 5), 12);
    // Saturates.
    assert_eq!(place(&mut [u64::MAX - 1], 0, 5), u64::MAX);
    assert_eq!(place(&mut [], u64::MAX, u64::MAX), u64::MAX);
}

#[test]
fn parameters_out_of_range_are_refused() {
    let c = CcmConfig::PAPER;
    let bad = [
        (CcmConfig { units: 0, ..c }, 1000, ComputeParam::Units, 0),
        (
            CcmConfig { units: 1025, ..c },
            1000,
            ComputeParam::Units,
            1025,
        ),
        (
            CcmConfig {
                uthreads_per_unit: 0,
                ..c
            },
            1000,
            ComputeParam::UthreadsPerUnit,
            0,
        ),
        (
            CcmConfig { clock_mhz: 0, ..c },
            1000,
            ComputeParam::ClockMhz,
            0,
        ),
        (
            CcmConfig {
                clock_mhz: 100_001,
                ..c
            },
            1000,
            ComputeParam::ClockMhz,
            100_001,
        ),
        (
            CcmConfig {
                mem_mb_per_s: 0,
                ..c
            },
            1000,
            ComputeParam::MemMbPerS,
            0,
        ),
        (
            CcmConfig {
                mem_mb_per_s: u64::MAX,
                ..c
            },
            1000,
            ComputeParam::MemMbPerS,
            u64::MAX,
        ),
        (c, 999, ComputeParam::DilationMilli, 999),
        (c, 0, ComputeParam::DilationMilli, 0),
        (
            c,
            MAX_DILATION_MILLI + 1,
            ComputeParam::DilationMilli,
            1_000_001,
        ),
    ];
    for (cfg, dil, param, value) in bad {
        let e = ComputeModel::new(cfg, dil).unwrap_err();
        assert_eq!(e, ComputeError::OutOfRange { param, value });
        assert!(e.to_string().contains(param.name()), "{e}");
    }
    let many = CcmConfig {
        units: 1024,
        uthreads_per_unit: 65,
        ..c
    };
    assert_eq!(
        ComputeModel::new(many, 1000),
        Err(ComputeError::TooManyUthreads { uthreads: 66_560 })
    );
    let most = CcmConfig {
        units: 1024,
        uthreads_per_unit: 64,
        ..c
    };
    assert_eq!(ComputeModel::new(most, 1000).unwrap().slots(), MAX_UTHREADS);
    // An unvalidated configuration's product saturates rather than wraps.
    let huge = CcmConfig {
        units: u32::MAX,
        uthreads_per_unit: u32::MAX,
        ..c
    };
    assert_eq!(huge.uthreads(), u32::MAX);
}

#[test]
fn extremes_do_not_overflow() {
    let c = CcmConfig::PAPER;
    let corners = [
        CcmConfig {
            units: 1,
            uthreads_per_unit: 1,
            clock_mhz: 1,
            mem_mb_per_s: 1,
        },
        CcmConfig {
            units: 64,
            uthreads_per_unit: 1024,
            clock_mhz: 1,
            mem_mb_per_s: 1,
        },
        CcmConfig {
            units: 1024,
            uthreads_per_unit: 64,
            clock_mhz: 100_000,
            mem_mb_per_s: 100_000_000,
        },
        CcmConfig {
            units: 1,
            uthreads_per_unit: 1024,
            clock_mhz: 99_999,
            mem_mb_per_s: 99_999_999,
        },
        c,
    ];
    let works = [
        Work {
            ops: u64::MAX,
            bytes: u64::MAX,
        },
        Work {
            ops: u64::MAX,
            bytes: 0,
        },
        Work {
            ops: 0,
            bytes: u64::MAX,
        },
        Work {
            ops: u64::MAX / 3,
            bytes: u64::MAX / 7,
        },
        Work { ops: 1, bytes: 1 },
    ];
    for cfg in corners {
        for dil in [NO_DILATION_MILLI, 1001, MAX_DILATION_MILLI] {
            let m = ComputeModel::new(cfg, dil).unwrap();
            for w in works {
                let ns = m.chunk_ns(w);
                assert!(ns >= m.compute_ns(w.ops) && ns >= m.memory_ns(w.bytes));
            }
        }
    }
    let slowest = ComputeModel::new(c, MAX_DILATION_MILLI).unwrap();
    // The largest chunks the parsers accept, at the largest sizes, on the slowest model.
    let big = [
        (xform(u32::MAX - 3), u32::MAX - 3),
        (xform(4), u32::MAX - 3),
        (xform(u32::MAX - 3), u32::MAX), // refused input: no chunk
    ];
    for (k, input) in big {
        let n = k.chunk_count(input);
        for i in [0, 1, n.saturating_sub(1), n, u32::MAX] {
            if let Some(w) = k.chunk_work(input, i) {
                let _ = slowest.chunk_ns(w);
            }
        }
    }
    // A sweep of extreme arguments for every parser (as `hostile.rs`), then every accepted
    // launch's first, last and out-of-range chunks.
    const EXTREMES: [u32; 6] = [0, 1, 3, 0x8000, 1 << 31, u32::MAX];
    let inputs = [0, 16, 1 << 31, u32::MAX];
    let sf = u32::MAX - 3;
    let exercise = |k: Kernel, input: u32| {
        let n = k.chunk_count(input);
        for i in [0, 1, n.saturating_sub(1), n, u32::MAX] {
            if let Some(w) = k.chunk_work(input, i) {
                let _ = slowest.chunk_ns(w);
                let _ = PAPER.chunk_ns(w);
            }
        }
    };
    let mut accepted = 0;
    for &input in &inputs {
        for &a in &EXTREMES {
            for &b in &EXTREMES {
                for &c in &EXTREMES {
                    let w = args(&[a, b, c]);
                    if let Ok(k) = Knn::from_packet(&w, 32, sf, input) {
                        exercise(Kernel::Knn(k), input);
                        accepted += 1;
                    }
                    for pass in [Pass::Sum, Pass::MinPlusWeight] {
                        if let Ok(g) = Graph::from_packet(pass, &w, 32, sf, input) {
                            exercise(Kernel::Graph(g), input);
                            accepted += 1;
                        }
                    }
                    if let Ok(x) = Xform::from_packet(&w, 32, sf) {
                        exercise(Kernel::Xform(x), input);
                        accepted += 1;
                    }
                    for &d in &EXTREMES {
                        for &e in &EXTREMES {
                            let w = args(&[a, b, c, d, e]);
                            if let Ok(l) = Sls::from_packet(&w, 32, sf, input) {
                                exercise(Kernel::Sls(l), input);
                                accepted += 1;
                            }
                            for &f in &EXTREMES {
                                let w = args(&[a, b, c, d, e, f]);
                                if let Ok(t) = Attention::from_packet(&w, 32, sf, input) {
                                    exercise(Kernel::Attention(t), input);
                                    accepted += 1;
                                }
                            }
                        }
                    }
                }
                let w = args(&[a, b]);
                if let Ok(q) = Ssb::from_packet(&w, 32, sf, input) {
                    exercise(Kernel::Ssb(q), input);
                    accepted += 1;
                }
            }
        }
    }
    assert!(accepted > 0);
    // Large exact launches: the largest KNN dimension, a huge SSB, a dense attention.
    let (k, input) = knn(4096, 1000, 1000);
    exercise(k, input);
    let (k, input) = ssb(u32::MAX / 16, u32::MAX);
    exercise(k, input);
    let (k, input) = attention(60_000, 0, 60_000, 1, 16, 1000);
    exercise(k, input);
}

/// `ceil(n * num / den)` in 128 bits, saturated to `u64`.
fn reference(n: u64, num: u128, den: u128) -> u64 {
    let ns = (u128::from(n) * num).div_ceil(den);
    u64::try_from(ns).unwrap_or(u64::MAX)
}

fn config() -> impl Strategy<Value = (CcmConfig, u32)> {
    (
        1u32..=1024,
        1u32..=64,
        1u32..=100_000,
        1u64..=100_000_000,
        1000u32..=1_000_000,
    )
        .prop_map(|(units, upu, clock, mem, dil)| {
            (
                CcmConfig {
                    units,
                    uthreads_per_unit: upu,
                    clock_mhz: clock,
                    mem_mb_per_s: mem,
                },
                dil,
            )
        })
}

fn amount() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..100_000, 0u64..(1 << 40), any::<u64>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// The model's times are exactly `ceil(ops * uthreads_per_unit * dilation / clock)` and
    /// `ceil(bytes * uthreads * dilation / bandwidth)` ns, saturated, for any valid model.
    #[test]
    fn times_match_128_bit_reference((cfg, dil) in config(), ops in amount(), bytes in amount()) {
        let m = ComputeModel::new(cfg, dil).unwrap();
        let d = u128::from(dil);
        let c = reference(ops, u128::from(cfg.uthreads_per_unit) * d, u128::from(cfg.clock_mhz));
        let b = reference(bytes, u128::from(cfg.uthreads()) * d, u128::from(cfg.mem_mb_per_s));
        prop_assert_eq!(m.compute_ns(ops), c);
        prop_assert_eq!(m.memory_ns(bytes), b);
        prop_assert_eq!(m.chunk_ns(Work { ops, bytes }), c.max(b));
    }

    /// `place` against a direct model: the completion is the earliest free time (or now) plus
    /// the duration, and exactly that µthread's entry changes.
    #[test]
    fn place_matches_list_scheduling(
        free in proptest::collection::vec(0u64..1000, 0..8),
        now in 0u64..1000,
        dur in 0u64..1000,
    ) {
        let mut t = free.clone();
        let end = place(&mut t, now, dur);
        match free.iter().enumerate().min_by_key(|&(i, &f)| (f, i)) {
            None => prop_assert_eq!(end, now + dur),
            Some((i, &f)) => {
                prop_assert_eq!(end, f.max(now) + dur);
                let mut want = free.clone();
                want[i] = end;
                prop_assert_eq!(t, want);
            }
        }
    }
}

proptest! {
    /// The heap timeline books every chunk at the same completion time as the linear one
    /// (the multiset of free times is the same after each booking), and stays a heap.
    #[test]
    fn the_heap_timeline_matches_the_linear_one(
        slots in 0usize..40,
        chunks in proptest::collection::vec((0u64..500, 0u64..300), 0..200),
    ) {
        let mut heap = vec![0u64; slots];
        let mut linear = vec![0u64; slots];
        let mut now = 0u64;
        for (dt, dur) in chunks {
            now += dt;
            prop_assert_eq!(place_in_heap(&mut heap, now, dur), place(&mut linear, now, dur));
            for i in 1..heap.len() {
                prop_assert!(heap[(i - 1) / 2] <= heap[i], "not a heap at {}", i);
            }
            let (mut a, mut b) = (heap.clone(), linear.clone());
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
        }
    }
}
