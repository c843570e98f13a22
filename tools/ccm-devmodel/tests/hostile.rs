//! Every workload kernel's argument parser on extreme arguments: a refusal or a launch whose
//! chunks, output size and rows can all be computed, never an arithmetic overflow (the software
//! device runs this code in the kernel, where an overflow is a panic).

use ccm_devmodel::attention::Attention;
use ccm_devmodel::graph::{Graph, Pass};
use ccm_devmodel::kernel::Kernel;
use ccm_devmodel::knn::Knn;
use ccm_devmodel::sls::{Sls, SlsError};
use ccm_devmodel::ssb::Ssb;
use ccm_devmodel::xform::Xform;

/// Values that reach the corners: 0, 1, small, a power of two, the sign bit, the largest.
const EXTREMES: [u32; 6] = [0, 1, 3, 0x8000, 1 << 31, u32::MAX];
/// Streaming factors: the smallest sensible, a common one, the largest.
const SFS: [u32; 3] = [16, 256, u32::MAX - 3];
/// Input sizes, besides the exact one of a small launch.
const INPUTS: [u32; 4] = [0, 16, 1 << 31, u32::MAX];

fn args(words: &[u32]) -> [u8; 32] {
    let mut b = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// Calls `f` on every combination of [`EXTREMES`] in the first `n` argument words.
fn sweep(n: u32, mut f: impl FnMut([u8; 32])) {
    let mut idx = vec![0usize; n as usize];
    loop {
        let words: Vec<u32> = idx.iter().map(|&i| EXTREMES[i]).collect();
        f(args(&words));
        let mut k = 0;
        loop {
            if k == idx.len() {
                return;
            }
            idx[k] += 1;
            if idx[k] < EXTREMES.len() {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
    }
}

/// What the device computes of an accepted launch: its output size and the spans of its
/// first, second and last chunks.
fn exercise(k: Kernel, input_size: u32) {
    let n = k.chunk_count(input_size);
    let _ = k.output_bytes(input_size);
    for i in [0, 1, n.saturating_sub(1), n, u32::MAX] {
        let _ = k.chunk(input_size, i);
    }
    if let Kernel::Attention(a) = k {
        for i in [0, n.saturating_sub(1), n, u32::MAX] {
            let _ = a.rows_of(i);
        }
    }
}

#[test]
fn attention_refuses_the_overflowing_shapes() {
    // `{tokens, q_first, q_rows, heads, head_dim, chunk_rows}`: a head dimension whose record
    // row overflows a `u32`, and a last block whose bytes do.
    for (a, input) in [
        (args(&[4, 0, 2, 1, 0x2000_0000, 3]), u32::MAX),
        (args(&[8_400_000, 0, 8_400_000, 8, 0x80, 8_400_001]), 0),
    ] {
        assert!(Attention::from_packet(&a, 32, 256, input).is_err());
    }
}

#[test]
fn sls_refuses_index_lists_beyond_u64() {
    // `samples * pooling * 4` is 2^66.
    let a = args(&[1, 1, u32::MAX, u32::MAX, 0]);
    assert_eq!(
        Sls::from_packet(&a, 32, 256, 8),
        Err(SlsError::InputSizeMismatch)
    );
}

#[test]
fn every_parser_survives_extreme_arguments() {
    for sf in SFS {
        for input in INPUTS {
            sweep(6, |a| {
                if let Ok(k) = Attention::from_packet(&a, 32, sf, input) {
                    exercise(Kernel::Attention(k), input);
                }
            });
            sweep(5, |a| {
                if let Ok(k) = Sls::from_packet(&a, 32, sf, input) {
                    exercise(Kernel::Sls(k), input);
                }
            });
            sweep(3, |a| {
                if let Ok(k) = Knn::from_packet(&a, 32, sf, input) {
                    exercise(Kernel::Knn(k), input);
                }
                for pass in [Pass::Sum, Pass::MinPlusWeight] {
                    if let Ok(k) = Graph::from_packet(pass, &a, 32, sf, input) {
                        exercise(Kernel::Graph(k), input);
                    }
                }
                if let Ok(k) = Xform::from_packet(&a, 32, sf) {
                    exercise(Kernel::Xform(k), input);
                }
            });
            // The other words are predicates, compared but never computed with.
            sweep(2, |a| {
                if let Ok(k) = Ssb::from_packet(&a, 32, sf, input) {
                    exercise(Kernel::Ssb(k), input);
                }
            });
        }
    }
}

#[test]
fn exact_inputs_of_extreme_chunks_are_served() {
    // Small shapes with the exact input size and extreme chunk sizes: accepted or refused, the
    // chunks always computable.
    for sf in SFS {
        for chunk in EXTREMES {
            let knn = args(&[4, 10, chunk]);
            if let Ok(k) = Knn::from_packet(&knn, 32, sf, 11 * 4 * 4) {
                exercise(Kernel::Knn(k), 11 * 16);
            }
            let sls = args(&[8, 10, 5, 3, chunk]);
            if let Ok(k) = Sls::from_packet(&sls, 32, sf, (80 + 15) * 4) {
                exercise(Kernel::Sls(k), (80 + 15) * 4);
            }
            let ssb = args(&[100, chunk]);
            if let Ok(k) = Ssb::from_packet(&ssb, 32, sf, 1600) {
                exercise(Kernel::Ssb(k), 1600);
            }
            let attn = args(&[16, 0, 8, 2, 16, chunk]);
            let input = 2 * (8 + 32) * 16 * 2;
            if let Ok(k) = Attention::from_packet(&attn, 32, sf, input) {
                exercise(Kernel::Attention(k), input);
            }
        }
    }
}
