//! Tests of `block_meta`: encoding, decoding, the distinct errors, checksum verification.

mod support;

use proptest::prelude::*;
use reflux_proto::abi::{
    BlockMeta, BLOCK_SIZE, META_CHECKSUMMED, META_COMPRESSED, META_ENCRYPTED, META_VALID,
};
use reflux_proto::block_meta::{decode, next_generation, BlockInfo, BlockMetaError, BlockState};
use support::crc32c;

#[test]
fn reference_crc32c_check_value() {
    // The catalogue check value of CRC-32C, so the reference itself is right.
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c(b""), 0);
}

#[test]
fn a_checksummed_compressed_block_round_trips() {
    let stored = b"pretend this is an LZ4 block".to_vec();
    let crc = crc32c(&stored);
    let info = BlockInfo::new(stored.len() as u16, true, false, Some(crc), 3).unwrap();
    let raw = info.encode();
    assert_eq!(raw.stored_len as usize, stored.len());
    assert_eq!(raw.flags, META_VALID | META_CHECKSUMMED | META_COMPRESSED);
    assert_eq!(raw.crc, crc);
    assert_eq!(raw.generation, 3);
    // Through the PMR bytes.
    let back = BlockMeta::from_bytes(&raw.to_bytes());
    let BlockState::Written(decoded) = decode(&back).unwrap() else {
        panic!("written block decoded as unwritten");
    };
    assert_eq!(decoded, info);
    assert_eq!(decoded.verify(crc32c(&stored)), Ok(()));
    assert!(decoded.compressed() && !decoded.encrypted());
    assert_eq!(decoded.crc(), Some(crc));
    assert_eq!(decoded.stored_len() as usize, stored.len());
}

#[test]
fn a_corrupted_block_fails_its_checksum() {
    let mut data = vec![0x5Au8; BLOCK_SIZE as usize];
    let info = BlockInfo::new(BLOCK_SIZE as u16, false, false, Some(crc32c(&data)), 1).unwrap();
    // What FAULT_INJECT does: flip one byte.
    data[1000] ^= 0xFF;
    let computed = crc32c(&data);
    assert_eq!(
        info.verify(computed),
        Err(BlockMetaError::ChecksumMismatch {
            stored: info.crc().unwrap(),
            computed
        })
    );
    // Without a checksum there is nothing to verify.
    let plain = BlockInfo::new(BLOCK_SIZE as u16, false, false, None, 1).unwrap();
    assert_eq!(plain.verify(computed), Ok(()));
    assert_eq!(plain.encode().crc, 0);
    assert_eq!(plain.flags(), META_VALID);
}

#[test]
fn distinct_errors() {
    let valid = |len, flags| BlockMeta {
        stored_len: len,
        flags,
        crc: 0,
        generation: 9,
    };
    assert_eq!(
        decode(&valid(4097, META_VALID)),
        Err(BlockMetaError::LengthTooLarge(4097))
    );
    assert_eq!(
        decode(&valid(u16::MAX, META_VALID | META_COMPRESSED)),
        Err(BlockMetaError::LengthTooLarge(u16::MAX))
    );
    for bit in 4..16 {
        let flags = META_VALID | 1 << bit;
        assert_eq!(
            decode(&valid(4096, flags)),
            Err(BlockMetaError::UnknownFlags(flags))
        );
    }
    // Raw data must be a whole block.
    assert_eq!(
        decode(&valid(100, META_VALID)),
        Err(BlockMetaError::BadLength {
            len: 100,
            flags: META_VALID
        })
    );
    // Compressed data must be non-empty and smaller than a block.
    for len in [0, 4096] {
        let flags = META_VALID | META_COMPRESSED;
        assert_eq!(
            decode(&valid(len, flags)),
            Err(BlockMetaError::BadLength { len, flags })
        );
    }
    // Ciphertext comes in whole cipher blocks.
    let flags = META_VALID | META_COMPRESSED | META_ENCRYPTED;
    assert_eq!(
        decode(&valid(100, flags)),
        Err(BlockMetaError::BadLength { len: 100, flags })
    );
    assert!(decode(&valid(112, flags)).is_ok());
    // An unwritten entry carries nothing but its generation.
    assert_eq!(
        decode(&valid(0, 0)),
        Ok(BlockState::Unwritten { generation: 9 })
    );
    assert_eq!(
        decode(&valid(4096, 0)),
        Err(BlockMetaError::NotValid {
            len: 4096,
            flags: 0
        })
    );
    assert_eq!(
        decode(&valid(0, META_CHECKSUMMED)),
        Err(BlockMetaError::NotValid {
            len: 0,
            flags: META_CHECKSUMMED
        })
    );
    // The same rules when the device builds an entry.
    assert_eq!(
        BlockInfo::new(5000, false, false, None, 1),
        Err(BlockMetaError::LengthTooLarge(5000))
    );
    assert_eq!(
        BlockInfo::new(4000, false, true, None, 1),
        Err(BlockMetaError::BadLength {
            len: 4000,
            flags: META_VALID | META_ENCRYPTED
        })
    );
    assert!(BlockInfo::new(4096, false, true, Some(1), 1).is_ok());
}

#[test]
fn generations() {
    assert_eq!(next_generation(0), 1);
    assert_eq!(next_generation(41), 42);
    assert_eq!(next_generation(u64::MAX), 1, "0 means never written");
}

proptest! {
    /// Decoding never panics; whatever decodes re-encodes to the same entry (up to the crc of an
    /// unchecksummed block, which is not part of its meaning).
    #[test]
    fn decode_is_total_and_encode_inverts_it(len in any::<u16>(), flags in any::<u16>(), crc in any::<u32>(), gen in any::<u64>()) {
        let raw = BlockMeta { stored_len: len, flags, crc, generation: gen };
        match decode(&raw) {
            Ok(BlockState::Written(info)) => {
                let again = info.encode();
                prop_assert_eq!(again.stored_len, len);
                prop_assert_eq!(again.flags, flags);
                prop_assert_eq!(again.generation, gen);
                if flags & META_CHECKSUMMED != 0 {
                    prop_assert_eq!(again.crc, crc);
                }
                prop_assert!(u32::from(len) <= BLOCK_SIZE);
            }
            Ok(BlockState::Unwritten { generation }) => {
                prop_assert_eq!((len, flags, generation), (0, 0, gen));
            }
            Err(_) => {}
        }
    }

    /// A checksummed block verifies against its own bytes and fails after any single-byte flip.
    #[test]
    fn any_flip_is_caught(data in proptest::collection::vec(any::<u8>(), 1..4096usize), at in any::<prop::sample::Index>(), x in 1u8..=255) {
        let info = BlockInfo::new(data.len() as u16, true, false, Some(crc32c(&data)), 1).unwrap();
        prop_assert_eq!(info.verify(crc32c(&data)), Ok(()));
        let mut bad = data.clone();
        bad[at.index(data.len())] ^= x;
        let is_mismatch = matches!(info.verify(crc32c(&bad)), Err(BlockMetaError::ChecksumMismatch { .. }));
        prop_assert!(is_mismatch);
    }
}
