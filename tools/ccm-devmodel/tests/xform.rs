//! Unit tests of `xform`: argument validation, chunking, the transform and its checksums against
//! known CRC32C vectors, and the host's record check.

use ccm_devmodel::abi::{
    crc32c, StreamXformArgs, STATUS_BAD_ARGS, XFORM_OP_ADD, XFORM_OP_COPY, XFORM_OP_XOR,
};
use ccm_devmodel::xform::{
    reference_word, verify_record, ChunkResult, ChunkSpan, VerifyError, Xform, XformError, XformOp,
};

fn args(op: u32, chunk_size: u32, operand: u32) -> StreamXformArgs {
    StreamXformArgs {
        op,
        chunk_size,
        operand,
        ..Default::default()
    }
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn ops_decode_and_apply() {
    assert_eq!(XformOp::from_abi(XFORM_OP_COPY), Ok(XformOp::Copy));
    assert_eq!(XformOp::from_abi(XFORM_OP_XOR), Ok(XformOp::Xor));
    assert_eq!(XformOp::from_abi(XFORM_OP_ADD), Ok(XformOp::Add));
    assert_eq!(XformOp::from_abi(3), Err(XformError::UnknownOp));
    assert_eq!(XformOp::Copy.apply(0x1234_5678, 0xFFFF_FFFF), 0x1234_5678);
    assert_eq!(XformOp::Xor.apply(0x1234_5678, 0xFFFF_0000), 0xEDCB_5678);
    assert_eq!(XformOp::Add.apply(0xFFFF_FFFF, 2), 1);
    assert_eq!(reference_word(XFORM_OP_ADD, 2, 0xFFFF_FFFF), Some(1));
    assert_eq!(reference_word(XFORM_OP_XOR, 1, 1), Some(0));
    assert_eq!(reference_word(7, 1, 1), None);
}

#[test]
fn argument_validation() {
    let x = Xform::from_args(&args(XFORM_OP_XOR, 0, 9), 64).unwrap();
    assert_eq!((x.op(), x.operand(), x.chunk_size()), (XformOp::Xor, 9, 64));
    assert_eq!(
        Xform::from_args(&args(0, 16, 0), 64).unwrap().chunk_size(),
        16
    );
    assert_eq!(
        Xform::from_args(&args(0, 64, 0), 64).unwrap().chunk_size(),
        64
    );
    assert_eq!(
        Xform::from_args(&args(0, 6, 0), 64),
        Err(XformError::ChunkNotWordMultiple)
    );
    assert_eq!(
        Xform::from_args(&args(0, 68, 0), 64),
        Err(XformError::ChunkAboveStreamingFactor)
    );
    assert_eq!(
        Xform::from_args(&args(3, 16, 0), 64),
        Err(XformError::UnknownOp)
    );
    assert_eq!(
        Xform::from_args(&args(0, 0, 0), 0),
        Err(XformError::BadStreamingFactor)
    );
    assert_eq!(
        Xform::from_args(&args(0, 0, 0), 6),
        Err(XformError::BadStreamingFactor)
    );
    let mut a = args(0, 16, 0);
    a.reserved0 = 1;
    assert_eq!(Xform::from_args(&a, 64), Err(XformError::ReservedNonZero));
    let mut a = args(0, 16, 0);
    a.reserved[1] = 1;
    assert_eq!(Xform::from_args(&a, 64), Err(XformError::ReservedNonZero));
    assert_eq!(XformError::ReservedNonZero.status(), STATUS_BAD_ARGS);
}

#[test]
fn packet_arguments() {
    let a = args(XFORM_OP_ADD, 32, 5);
    let bytes = a.to_bytes();
    let x = Xform::from_packet(&bytes, 32, 64).unwrap();
    assert_eq!((x.op(), x.operand(), x.chunk_size()), (XformOp::Add, 5, 32));
    assert_eq!(
        Xform::from_packet(&bytes, 16, 64),
        Err(XformError::BadArgSize)
    );
    assert_eq!(
        Xform::from_packet(&bytes, 0, 64),
        Err(XformError::BadArgSize)
    );
}

#[test]
fn chunking() {
    let x = Xform::from_args(&args(0, 32, 0), 32).unwrap();
    assert_eq!(x.chunk_count(0), Ok(0));
    assert_eq!(x.chunk_count(32), Ok(1));
    assert_eq!(x.chunk_count(100), Ok(4));
    assert_eq!(x.chunk_count(10), Err(XformError::InputNotWordMultiple));
    assert_eq!(x.chunk_count(101), Err(XformError::InputNotWordMultiple));
    assert_eq!(
        x.chunk(100, 0),
        Some(ChunkSpan {
            offset: 0,
            length: 32
        })
    );
    assert_eq!(
        x.chunk(100, 3),
        Some(ChunkSpan {
            offset: 96,
            length: 4
        })
    );
    assert_eq!(x.chunk(100, 4), None);
    assert_eq!(x.chunk(0, 0), None);
    assert_eq!(x.chunk(u32::MAX - 3, u32::MAX), None, "no overflow");
    assert_eq!(
        Xform::check_input(u32::MAX as usize + 1),
        Err(XformError::InputTooLarge)
    );
}

/// RFC 3720 (iSCSI) CRC32C vectors: 32 bytes of 0x00, of 0xFF, and 0x00..0x1F.
#[test]
fn checksums_match_known_vectors() {
    assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    let zeros = [0u8; 32];
    let mut out = [0u8; 32];
    let copy = Xform::from_args(&args(XFORM_OP_COPY, 32, 0), 32).unwrap();
    assert_eq!(copy.apply_chunk(&zeros, &mut out), Ok(0x8A91_36AA));
    let xor = Xform::from_args(&args(XFORM_OP_XOR, 32, 0xFFFF_FFFF), 32).unwrap();
    assert_eq!(xor.apply_chunk(&zeros, &mut out), Ok(0x62A8_AB43));
    assert_eq!(out, [0xFF; 32]);
    // 0x00..0x1F as ADD 0x04040404 of 0xFC..: the bytes 0..31 minus 4 in each byte lane.
    let inc: Vec<u8> = (0u8..32).collect();
    let input: Vec<u8> = words(
        &inc.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]).wrapping_sub(0x0404_0404))
            .collect::<Vec<_>>(),
    );
    let add = Xform::from_args(&args(XFORM_OP_ADD, 32, 0x0404_0404), 32).unwrap();
    assert_eq!(add.apply_chunk(&input, &mut out), Ok(0x46DD_794E));
    assert_eq!(out.to_vec(), inc);
}

#[test]
fn apply_chunk_errors() {
    let x = Xform::from_args(&args(0, 8, 0), 32).unwrap();
    let mut out = [0u8; 12];
    assert_eq!(
        x.apply_chunk(&[0; 8], &mut out),
        Err(XformError::OutputSizeMismatch)
    );
    assert_eq!(
        x.apply_chunk(&[0; 12], &mut out),
        Err(XformError::ChunkTooLarge)
    );
    assert_eq!(
        x.apply_chunk(&[0; 6], &mut out[..6]),
        Err(XformError::InputNotWordMultiple)
    );
    assert_eq!(x.apply_chunk(&[], &mut []), Ok(0), "CRC32C of nothing is 0");
}

#[test]
fn stream_in_chunks_with_partial_last_chunk() {
    let x = Xform::from_args(&args(XFORM_OP_XOR, 8, 0xFF), 32).unwrap();
    let input = words(&[1, 2, 3, 4, 5]);
    let mut out = vec![0u8; input.len()];
    let results: Vec<ChunkResult> = x.stream(&input, &mut out).unwrap().collect();
    let expected = words(&[0xFE, 0xFD, 0xFC, 0xFB, 0xFA]);
    assert_eq!(out, expected);
    assert_eq!(
        results,
        vec![
            ChunkResult {
                offset: 0,
                length: 8,
                checksum: crc32c(&expected[0..8])
            },
            ChunkResult {
                offset: 8,
                length: 8,
                checksum: crc32c(&expected[8..16])
            },
            ChunkResult {
                offset: 16,
                length: 4,
                checksum: crc32c(&expected[16..20])
            },
        ]
    );
    let mut none = [];
    assert_eq!(x.stream(&[], &mut none).unwrap().count(), 0);
    let mut small = vec![0u8; 4];
    assert!(matches!(
        x.stream(&input, &mut small),
        Err(XformError::OutputSizeMismatch)
    ));
    let mut odd = vec![0u8; 6];
    assert!(matches!(
        x.stream(&[0u8; 6], &mut odd),
        Err(XformError::InputNotWordMultiple)
    ));
}

#[test]
fn host_verification() {
    let a = args(XFORM_OP_ADD, 8, 1);
    let input = words(&[1, 2, 3, 4, 5]);
    let chunk0 = words(&[2, 3]);
    let last = words(&[6]);
    let ok = |off: u64, p: &[u8]| verify_record(&a, 32, &input, off, p, crc32c(p));
    assert_eq!(ok(0, &chunk0), Ok(()));
    assert_eq!(ok(16, &last), Ok(()));
    assert_eq!(ok(4, &chunk0), Err(VerifyError::Misplaced));
    assert_eq!(ok(24, &last), Err(VerifyError::Misplaced));
    assert_eq!(
        ok(16, &chunk0),
        Err(VerifyError::WrongLength { expected: 4 })
    );
    assert_eq!(ok(0, &last), Err(VerifyError::WrongLength { expected: 8 }));
    let mut bad = chunk0.clone();
    bad[5] ^= 1;
    assert_eq!(ok(0, &bad), Err(VerifyError::WrongData { offset: 4 }));
    assert_eq!(
        verify_record(&a, 32, &input, 0, &chunk0, 0),
        Err(VerifyError::WrongChecksum {
            expected: crc32c(&chunk0)
        })
    );
    assert_eq!(
        verify_record(&args(9, 8, 1), 32, &input, 0, &chunk0, 0),
        Err(VerifyError::Args(XformError::UnknownOp))
    );
    assert_eq!(
        verify_record(&a, 32, &input[..19], 0, &chunk0, 0),
        Err(VerifyError::Args(XformError::InputNotWordMultiple))
    );
}

mod knn {
    use ccm_devmodel::abi::{KnnArgs, KNN_MAX_DIM};
    use ccm_devmodel::kernel::Kernel;
    use ccm_devmodel::knn::{distance_piece, Knn, KnnError};

    fn args(dim: u32, rows: u32, chunk_rows: u32) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0..4].copy_from_slice(&dim.to_le_bytes());
        b[4..8].copy_from_slice(&rows.to_le_bytes());
        b[8..12].copy_from_slice(&chunk_rows.to_le_bytes());
        assert_eq!(KnnArgs::from_bytes(&b).rows, rows);
        b
    }

    fn input(dim: u32, rows: u32) -> u32 {
        (rows + 1) * dim * 4
    }

    #[test]
    fn validates_arguments() {
        let ok = Knn::from_packet(&args(4, 10, 3), 32, 64, input(4, 10)).unwrap();
        assert_eq!((ok.chunk_count(), ok.output_bytes()), (4, 80));
        assert_eq!(
            Knn::from_packet(&args(4, 10, 0), 32, 64, input(4, 10))
                .unwrap()
                .chunk_count(),
            2
        );
        let bad = |a: [u8; 32], size: u16, sf: u32, inp: u32| Knn::from_packet(&a, size, sf, inp);
        assert_eq!(
            bad(args(4, 10, 3), 16, 64, input(4, 10)),
            Err(KnnError::BadArgSize)
        );
        assert_eq!(bad(args(0, 10, 3), 32, 64, 44), Err(KnnError::BadDim));
        assert_eq!(
            bad(args(KNN_MAX_DIM + 1, 1, 1), 32, 64, 0),
            Err(KnnError::BadDim)
        );
        assert_eq!(bad(args(4, 0, 1), 32, 64, 16), Err(KnnError::NoRows));
        assert_eq!(
            bad(args(4, 10, 3), 32, 64, input(4, 10) - 4),
            Err(KnnError::InputSizeMismatch)
        );
        assert_eq!(
            bad(args(4, 10, 9), 32, 64, input(4, 10)),
            Err(KnnError::ChunkAboveStreamingFactor)
        );
        assert_eq!(
            bad(args(4, 10, 0), 32, 4, input(4, 10)),
            Err(KnnError::ChunkAboveStreamingFactor)
        );
        let mut r = args(4, 10, 3);
        r[20] = 1;
        assert_eq!(bad(r, 32, 64, input(4, 10)), Err(KnnError::ReservedNonZero));
    }

    #[test]
    fn chunks_cover_every_row_once() {
        let k = Knn::from_packet(&args(2, 10, 4), 32, 64, input(2, 10)).unwrap();
        let spans: Vec<_> = (0..5).map(|i| k.chunk(i)).collect();
        assert_eq!(spans[0].unwrap().offset, 0);
        assert_eq!(spans[2].unwrap().length, 16);
        assert_eq!(
            spans[1].unwrap().offset + spans[1].unwrap().length,
            spans[2].unwrap().offset
        );
        assert!(spans[3].is_none() && spans[4].is_none());
        let kern = Kernel::Knn(k);
        assert_eq!((kern.chunk_count(0), kern.output_bytes(0)), (3, 80));
        assert_eq!(k.row_offset(0), 8);
    }

    #[test]
    fn distance_matches_a_reference_and_splits() {
        let q: Vec<i32> = vec![1, -2, i32::MAX, i32::MIN, 7];
        let r: Vec<i32> = vec![-3, 5, i32::MIN, i32::MAX, 7];
        let le = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let reference = q.iter().zip(&r).fold(0u64, |acc, (&a, &b)| {
            let d = (i128::from(a) - i128::from(b)).unsigned_abs();
            acc.wrapping_add((d * d) as u64)
        });
        let (qb, rb) = (le(&q), le(&r));
        assert_eq!(distance_piece(&qb, &rb, 0), reference);
        let split = distance_piece(&qb[8..], &rb[8..], distance_piece(&qb[..8], &rb[..8], 0));
        assert_eq!(split, reference);
    }
}

mod ssb {
    use ccm_devmodel::ssb::{Ssb, SsbError, ROW_BYTES};

    fn args(rows: u32, chunk_rows: u32) -> [u8; 32] {
        // Q1.1: year 1993, discount 1-3, quantity below 25.
        let w = [rows, chunk_rows, 19930101, 19931231, 1, 3, 0, 24];
        let mut b = [0u8; 32];
        for (i, v) in w.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn row(date: u32, quantity: u32, discount: u32, price: u32) -> Vec<u8> {
        [date, quantity, discount, price]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    #[test]
    fn validates_and_chunks() {
        let q = Ssb::from_packet(&args(10, 4), 32, 32, 10 * ROW_BYTES).unwrap();
        assert_eq!((q.chunk_count(), q.output_bytes()), (3, 48));
        assert_eq!(q.rows_of(2), (8, 2));
        assert_eq!(q.chunk(2).unwrap().offset, 32);
        assert!(q.chunk(3).is_none());
        let bad = |a, size, sf, inp| Ssb::from_packet(&a, size, sf, inp);
        assert_eq!(bad(args(10, 4), 16, 32, 160), Err(SsbError::BadArgSize));
        assert_eq!(bad(args(0, 4), 32, 32, 0), Err(SsbError::InputSizeMismatch));
        assert_eq!(
            bad(args(10, 4), 32, 32, 161),
            Err(SsbError::InputSizeMismatch)
        );
        assert_eq!(
            bad(args(10, 4), 32, 8, 160),
            Err(SsbError::StreamingFactorTooSmall)
        );
    }

    #[test]
    fn filters_like_query_1_1() {
        let q = Ssb::from_packet(&args(1, 0), 32, 32, ROW_BYTES).unwrap();
        let hit = row(19930615, 24, 3, u32::MAX);
        let p = q.accumulate(&hit, (0, 0));
        assert_eq!(p, (u64::from(u32::MAX) * 3, 1));
        for miss in [
            row(19921231, 10, 2, 5),
            row(19940101, 10, 2, 5),
            row(19930615, 25, 2, 5),
            row(19930615, 10, 0, 5),
            row(19930615, 10, 4, 5),
        ] {
            assert_eq!(q.accumulate(&miss, p), p);
        }
    }
}

mod sls {
    use ccm_devmodel::sls::{add_piece, Sls, SlsError};

    fn args(dim: u32, rows: u32, samples: u32, pooling: u32, chunk: u32) -> [u8; 32] {
        let mut b = [0u8; 32];
        for (i, v) in [dim, rows, samples, pooling, chunk].iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn input(dim: u32, rows: u32, samples: u32, pooling: u32) -> u32 {
        (rows * dim + samples * pooling) * 4
    }

    #[test]
    fn validates_and_lays_out() {
        let l = Sls::from_packet(&args(8, 10, 5, 3, 2), 32, 64, input(8, 10, 5, 3)).unwrap();
        assert_eq!((l.chunk_count(), l.output_bytes()), (3, 160));
        assert_eq!(l.chunk(2).unwrap().length, 32);
        assert_eq!(l.row_offset(12), 2 * 32);
        assert_eq!(l.index_offset(1, 2), 10 * 32 + 5 * 4);
        let bad = |a, sf, inp| Sls::from_packet(&a, 32, sf, inp);
        assert_eq!(bad(args(0, 10, 5, 3, 2), 64, 60), Err(SlsError::BadShape));
        assert_eq!(bad(args(8, 10, 5, 0, 2), 64, 320), Err(SlsError::BadShape));
        assert_eq!(
            bad(args(8, 10, 5, 3, 2), 64, 4),
            Err(SlsError::InputSizeMismatch)
        );
        assert_eq!(
            bad(args(8, 10, 5, 3, 3), 64, input(8, 10, 5, 3)),
            Err(SlsError::ChunkAboveStreamingFactor)
        );
        assert_eq!(
            bad(args(8, 10, 5, 3, 0), 16, input(8, 10, 5, 3)),
            Err(SlsError::ChunkAboveStreamingFactor)
        );
        let mut r = args(8, 10, 5, 3, 2);
        r[24] = 1;
        assert_eq!(
            bad(r, 64, input(8, 10, 5, 3)),
            Err(SlsError::ReservedNonZero)
        );
    }

    #[test]
    fn sums_wrap() {
        let mut acc = [i32::MAX, -1];
        let row: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_le_bytes()).collect();
        add_piece(&mut acc, &row);
        assert_eq!(acc, [i32::MIN, -3]);
    }
}

mod graph {
    use ccm_devmodel::graph::{Graph, GraphError, Pass};

    fn args(vertices: u32, edges: u32, chunk: u32) -> [u8; 32] {
        let mut b = [0u8; 32];
        for (i, v) in [vertices, edges, chunk].iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn input(v: u32, e: u32) -> u32 {
        (v + 1 + e) * 4 + v * 8
    }

    #[test]
    fn validates_and_lays_out() {
        let p = Graph::from_packet(Pass::Sum, &args(10, 30, 4), 32, 64, input(10, 30)).unwrap();
        assert_eq!((p.chunk_count(), p.output_bytes()), (3, 80));
        assert_eq!(p.chunk(2).unwrap().length, 16);
        assert_eq!((p.offset_at(10), p.source_at(0)), (40, 44));
        assert_eq!(p.value_at(13), 164 + 3 * 8);
        assert_eq!(p.edge_range(5, 40), 5..30);
        assert_eq!(p.edge_range(7, 3), 3..3);
        let bad = |a, sf, inp| Graph::from_packet(Pass::Sum, &a, 32, sf, inp);
        assert_eq!(bad(args(0, 0, 1), 64, 4), Err(GraphError::NoVertices));
        assert_eq!(
            bad(args(10, 30, 4), 64, 8),
            Err(GraphError::InputSizeMismatch)
        );
        assert_eq!(
            bad(args(10, 30, 9), 64, input(10, 30)),
            Err(GraphError::ChunkAboveStreamingFactor)
        );
    }

    #[test]
    fn sssp_relaxes_with_weights() {
        let inp = input(10, 30) + 30 * 4;
        let g = Graph::from_packet(Pass::MinPlusWeight, &args(10, 30, 4), 32, 64, inp).unwrap();
        assert_eq!(g.weight_at(0), 164);
        assert_eq!(g.value_at(0), 284);
        assert_eq!(g.identity(), u64::MAX);
        assert_eq!(g.fold(u64::MAX, 5, 3), 8);
        assert_eq!(g.fold(8, 7, 3), 8);
        assert_eq!(g.fold(8, u64::MAX, 3), 8, "unreached stays unreached");
        let p = Graph::from_packet(Pass::Sum, &args(10, 30, 4), 32, 64, input(10, 30)).unwrap();
        assert_eq!(p.fold(u64::MAX, 2, 9), 1, "sums wrap, weights unused");
        assert_eq!(
            Graph::from_packet(Pass::MinPlusWeight, &args(10, 30, 4), 32, 64, input(10, 30)),
            Err(GraphError::InputSizeMismatch)
        );
    }
}
