//! Tests of `xts`: the IEEE 1619 vectors (XTS-AES-128 and XTS-AES-256), round trips of 4 KiB
//! blocks, and refused lengths.

mod support;

use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use aes::{Aes128, Aes256};
use proptest::prelude::*;
use reflux_proto::abi::BLOCK_SIZE;
use reflux_proto::xts::{BlockCipher, Xts, XtsError, BLOCK, MAX_DATA_UNIT};
use support::{hex, xts_vectors::VECTORS};

/// The `aes` crate as a [`BlockCipher`], as lib/crypto's AES is in the kernel.
struct Aes<C>(C);

impl<C: BlockEncrypt + BlockDecrypt> BlockCipher for Aes<C> {
    fn encrypt_block(&self, block: &mut [u8; BLOCK]) {
        self.0.encrypt_block(GenericArray::from_mut_slice(block));
    }
    fn decrypt_block(&self, block: &mut [u8; BLOCK]) {
        self.0.decrypt_block(GenericArray::from_mut_slice(block));
    }
}

/// XTS-AES-128 (32-byte key) or XTS-AES-256 (64-byte key), data key first.
// Test-only; boxing the larger key schedule would buy nothing.
#[allow(clippy::large_enum_variant)]
enum AnyXts {
    Aes128(Xts<Aes<Aes128>>),
    Aes256(Xts<Aes<Aes256>>),
}

impl AnyXts {
    fn new(key: &[u8]) -> Self {
        let (k1, k2) = key.split_at(key.len() / 2);
        match key.len() {
            32 => Self::Aes128(Xts::new(
                Aes(Aes128::new_from_slice(k1).unwrap()),
                Aes(Aes128::new_from_slice(k2).unwrap()),
            )),
            64 => Self::Aes256(Xts::new(
                Aes(Aes256::new_from_slice(k1).unwrap()),
                Aes(Aes256::new_from_slice(k2).unwrap()),
            )),
            n => panic!("no XTS key of {n} bytes"),
        }
    }

    fn encrypt(&self, dun: u64, data: &mut [u8]) -> Result<(), XtsError> {
        match self {
            Self::Aes128(x) => x.encrypt(dun, data),
            Self::Aes256(x) => x.encrypt(dun, data),
        }
    }

    fn decrypt(&self, dun: u64, data: &mut [u8]) -> Result<(), XtsError> {
        match self {
            Self::Aes128(x) => x.decrypt(dun, data),
            Self::Aes256(x) => x.decrypt(dun, data),
        }
    }
}

#[test]
fn ieee_1619_vectors() {
    assert_eq!(VECTORS.len(), 5);
    for &(name, key, dun, ptext, ctext) in VECTORS {
        let xts = AnyXts::new(&hex(key));
        let (p, c) = (hex(ptext), hex(ctext));
        let mut data = p.clone();
        xts.encrypt(dun, &mut data).unwrap();
        assert_eq!(data, c, "{name}: encryption");
        xts.decrypt(dun, &mut data).unwrap();
        assert_eq!(data, p, "{name}: decryption");
    }
}

#[test]
fn a_block_is_one_data_unit_numbered_by_its_lba() {
    let key: Vec<u8> = (0..64u8).collect();
    let xts = AnyXts::new(&key);
    let plain: Vec<u8> = (0..BLOCK_SIZE).map(|i| (i * 7 % 251) as u8).collect();
    let mut a = plain.clone();
    let mut b = plain.clone();
    xts.encrypt(1000, &mut a).unwrap();
    xts.encrypt(1001, &mut b).unwrap();
    assert_ne!(a, plain);
    assert_ne!(a, b, "the same data at another LBA encrypts differently");
    // Equal plaintext blocks inside a unit encrypt differently too (the tweak advances).
    let mut zeros = vec![0u8; BLOCK_SIZE as usize];
    xts.encrypt(7, &mut zeros).unwrap();
    assert_ne!(zeros[0..16], zeros[16..32]);
    // Decrypting with the wrong LBA does not give the data back.
    let mut wrong = a.clone();
    xts.decrypt(1001, &mut wrong).unwrap();
    assert_ne!(wrong, plain);
    xts.decrypt(1000, &mut a).unwrap();
    assert_eq!(a, plain);
}

#[test]
fn lengths_that_are_not_whole_blocks_are_refused() {
    let xts = AnyXts::new(&[1u8; 32]);
    for len in [0usize, 1, 15, 17, 31, 4095, 4097] {
        let mut data = vec![0u8; len];
        assert_eq!(xts.encrypt(0, &mut data), Err(XtsError::Length(len)));
        assert_eq!(xts.decrypt(0, &mut data), Err(XtsError::Length(len)));
        assert!(
            data.iter().all(|&b| b == 0),
            "a refused unit is left untouched"
        );
    }
    let mut data = vec![0u8; MAX_DATA_UNIT + BLOCK];
    assert_eq!(
        xts.encrypt(0, &mut data),
        Err(XtsError::Length(MAX_DATA_UNIT + BLOCK))
    );
    let mut data = vec![0u8; 16];
    assert!(xts.encrypt(u64::MAX, &mut data).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any 4 KiB block at any LBA with any key decrypts to itself.
    #[test]
    fn round_trip_4k(key in proptest::collection::vec(any::<u8>(), 64), lba in any::<u64>(), seed in any::<u64>()) {
        let xts = AnyXts::new(&key);
        let plain: Vec<u8> = (0..BLOCK_SIZE as u64).map(|i| (seed.wrapping_mul(i + 1) >> 56) as u8).collect();
        let mut data = plain.clone();
        xts.encrypt(lba, &mut data).unwrap();
        prop_assert_ne!(&data, &plain);
        xts.decrypt(lba, &mut data).unwrap();
        prop_assert_eq!(data, plain);
    }

    /// Encrypting a unit equals encrypting its prefix: the tweak sequence depends only on the
    /// position (so a 512-byte vector also checks the first 512 bytes of a 4 KiB unit).
    #[test]
    fn prefix_consistency(key in proptest::collection::vec(any::<u8>(), 32), dun in any::<u64>(), blocks in 1usize..256) {
        let xts = AnyXts::new(&key);
        let mut long = vec![0x3Cu8; BLOCK_SIZE as usize];
        let mut short = long[..blocks * BLOCK].to_vec();
        xts.encrypt(dun, &mut long).unwrap();
        xts.encrypt(dun, &mut short).unwrap();
        prop_assert_eq!(&long[..blocks * BLOCK], &short[..]);
    }
}
