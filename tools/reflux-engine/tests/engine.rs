//! The engine against a window laid out as the device lays it out, in ordinary memory.

use std::mem::{offset_of, size_of};

use reflux_engine::abi::{META_CHECKSUMMED, META_COMPRESSED, META_ENCRYPTED};
use reflux_engine::engine_abi::*;
use reflux_engine::ops;
use reflux_engine::window::Engine;

/// A fake shared file: a PMR of `PMR` bytes, then the window.
const PMR: usize = 64 * BLOCK;

struct File(Vec<u64>);

impl File {
    fn new() -> Self {
        let mut f = Self(vec![0u64; (PMR + WINDOW_BYTES) / 8]);
        f.put(PMR + offset_of!(Header, version), &VERSION.to_le_bytes());
        f.put(PMR + offset_of!(Header, nr_slots), &SLOTS.to_le_bytes());
        f.put(
            PMR + offset_of!(Header, slot_stride),
            &(SLOT_STRIDE as u32).to_le_bytes(),
        );
        f.put(
            PMR + offset_of!(Header, pmr_size),
            &(PMR as u64).to_le_bytes(),
        );
        f.put(PMR + offset_of!(Header, magic), &MAGIC.to_le_bytes());
        f
    }
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the vector's storage reinterpreted as bytes, same length in bytes.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len() * 8) }
    }
    fn put(&mut self, off: usize, v: &[u8]) {
        self.bytes()[off..off + v.len()].copy_from_slice(v);
    }
    fn get(&mut self, off: usize, n: usize) -> Vec<u8> {
        self.bytes()[off..off + n].to_vec()
    }
    fn u32(&mut self, off: usize) -> u32 {
        u32::from_le_bytes(self.get(off, 4).try_into().unwrap())
    }
    fn engine(&mut self) -> Engine {
        let len = self.0.len() * 8;
        // SAFETY: the vector outlives every engine of a test (the engine is dropped first).
        unsafe { Engine::new(self.0.as_mut_ptr().cast(), len, PMR) }.unwrap()
    }
    /// Posts job `seq` in slot `i`.
    fn post(&mut self, i: u32, seq: u32, ops: &[u8], blocks: &[BlockIn]) {
        self.post_xts(i, seq, ops, blocks, 0, &[0; KEY_BYTES]);
    }
    /// Posts job `seq` in slot `i`, starting at `lba`, with `key`.
    fn post_xts(
        &mut self,
        i: u32,
        seq: u32,
        ops: &[u8],
        blocks: &[BlockIn],
        lba: u64,
        key: &[u8; KEY_BYTES],
    ) {
        let s = PMR + slot_offset(i);
        self.put(s + offset_of!(Slot, lba), &lba.to_le_bytes());
        self.put(s + offset_of!(Slot, key), key);
        self.put(
            s + offset_of!(Slot, nr_blocks),
            &(blocks.len() as u32).to_le_bytes(),
        );
        let mut o = [0u8; 8];
        o[..ops.len()].copy_from_slice(ops);
        self.put(s + offset_of!(Slot, ops), &o);
        for (b, blk) in blocks.iter().enumerate() {
            let at = s + offset_of!(Slot, blocks_in) + b * size_of::<BlockIn>();
            self.put(at, &blk.offset.to_le_bytes());
            self.put(at + 8, &blk.len.to_le_bytes());
            self.put(at + 10, &blk.flags.to_le_bytes());
            self.put(at + 12, &blk.crc.to_le_bytes());
        }
        self.put(s + offset_of!(Slot, seq), &seq.to_le_bytes());
    }
    fn out(&mut self, i: u32, b: usize) -> BlockOut {
        let at = PMR + slot_offset(i) + offset_of!(Slot, blocks_out) + b * size_of::<BlockOut>();
        let v = self.get(at, 16);
        let u16_at = |k: usize| u16::from_le_bytes([v[k], v[k + 1]]);
        BlockOut {
            crc: u32::from_le_bytes(v[0..4].try_into().unwrap()),
            len: u16_at(4),
            flags: u16_at(6),
            len_after: [u16_at(8), u16_at(10)],
            in_output: u16_at(12),
            reserved: 0,
        }
    }
    fn status(&mut self, i: u32) -> (u32, u32, u32) {
        let s = PMR + slot_offset(i);
        (
            self.u32(s + offset_of!(Slot, done)),
            self.u32(s + offset_of!(Slot, status)),
            self.u32(s + offset_of!(Slot, bad_block)),
        )
    }
}

/// Half random, half zeros in every 512 bytes (fio's `buffer_compress_percentage=50`).
fn half_compressible(seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = vec![0u8; BLOCK];
    for (k, byte) in v.iter_mut().enumerate() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if k % 512 < 256 {
            *byte = x as u8;
        }
    }
    v
}

fn random(seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..BLOCK)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn raw(offset: u64) -> BlockIn {
    BlockIn {
        offset,
        len: BLOCK as u16,
        flags: 0,
        crc: 0,
    }
}

#[test]
fn crc32c_is_the_standard_one() {
    assert_eq!(ops::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn an_unattached_window_is_not_served() {
    let mut f = File::new();
    f.put(PMR + offset_of!(Header, magic), &0u32.to_le_bytes());
    assert!(!f.engine().attached());
    let mut f = File::new();
    assert!(f.engine().attached());
}

#[test]
fn the_compress_pipeline_compresses_then_checksums_the_stored_bytes() {
    let mut f = File::new();
    let blocks = [half_compressible(1), random(2)];
    f.put(3 * BLOCK, &blocks[0]);
    f.put(7 * BLOCK, &blocks[1]);
    f.post(
        2,
        1,
        &[OP_LZ4_COMPRESS, OP_CRC32C],
        &[raw(3 * BLOCK as u64), raw(7 * BLOCK as u64)],
    );
    let mut e = f.engine();
    assert_eq!(e.serve(), 1);
    assert_eq!(e.serve(), 0, "a finished job is not run again");
    assert_eq!(f.status(2), (1, STATUS_OK, 0));

    let o = f.out(2, 0);
    assert_eq!(o.flags, META_COMPRESSED | META_CHECKSUMMED);
    assert_eq!(o.in_output, 1);
    assert!(
        o.len > 0 && usize::from(o.len) < BLOCK / 2 + 200,
        "len {}",
        o.len
    );
    assert_eq!(o.len_after, [o.len, o.len]);
    let stored = f.get(PMR + output_offset(2, 0), usize::from(o.len));
    assert_eq!(o.crc, ops::crc32c(&stored));
    let back = lz4_flex::block::decompress(&stored, BLOCK).unwrap();
    assert_eq!(back, blocks[0]);

    // Incompressible: stored raw, the checksum over the raw bytes.
    let o = f.out(2, 1);
    assert_eq!(o.flags, META_CHECKSUMMED);
    assert_eq!(o.in_output, 0);
    assert_eq!(usize::from(o.len), BLOCK);
    assert_eq!(o.crc, ops::crc32c(&blocks[1]));
    // The engine never writes the PMR.
    assert_eq!(f.get(3 * BLOCK, BLOCK), blocks[0]);
}

#[test]
fn a_checksum_step_after_a_host_compression_uses_the_inherited_length() {
    let mut f = File::new();
    let b = half_compressible(5);
    f.put(0, &b);
    let blk = BlockIn {
        offset: 0,
        len: 1000,
        flags: META_COMPRESSED,
        crc: 0,
    };
    f.post(0, 7, &[OP_CRC32C], &[blk]);
    f.engine().serve();
    assert_eq!(f.status(0), (7, STATUS_OK, 0));
    let o = f.out(0, 0);
    assert_eq!(
        (o.len, o.flags, o.in_output),
        (1000, META_COMPRESSED | META_CHECKSUMMED, 0)
    );
    assert_eq!(o.crc, ops::crc32c(&b[..1000]));
}

#[test]
fn lz4_of_a_block_that_is_not_raw_is_a_bad_state() {
    let mut f = File::new();
    let ok = raw(0);
    let bad = BlockIn {
        flags: META_CHECKSUMMED,
        ..raw(BLOCK as u64)
    };
    f.post(1, 1, &[OP_LZ4_COMPRESS], &[ok, bad]);
    f.engine().serve();
    assert_eq!(f.status(1), (1, STATUS_BAD_STATE, 1));
}

#[test]
fn malformed_jobs_are_refused_whole() {
    let mut f = File::new();
    // A buffer reaching past the PMR.
    f.post(0, 1, &[OP_CRC32C], &[raw(PMR as u64 - 100)]);
    // No blocks.
    f.post(1, 1, &[OP_CRC32C], &[]);
    // An unknown operation.
    f.post(3, 1, &[9], &[raw(0)]);
    // A zero length.
    f.post(4, 1, &[OP_CRC32C], &[BlockIn { len: 0, ..raw(0) }]);
    let mut e = f.engine();
    assert_eq!(e.serve(), 4);
    assert_eq!(e.jobs, [0, 0, 4, 0]);
    for i in [0, 1, 3, 4] {
        assert_eq!(f.status(i).1, STATUS_INVALID, "slot {i}");
    }
}

#[test]
fn a_window_outside_the_mapping_is_refused() {
    let mut v = vec![0u64; 1024];
    // SAFETY: the vector outlives the (failed) construction.
    let r = unsafe { Engine::new(v.as_mut_ptr().cast(), 8192, 0) };
    assert!(r.is_err());
}

#[test]
fn the_heartbeat_moves() {
    let mut f = File::new();
    let e = f.engine();
    e.beat();
    e.beat();
    let hb = f.get(PMR + offset_of!(Header, heartbeat), 8);
    assert_eq!(u64::from_le_bytes(hb.try_into().unwrap()), 2);
    assert_eq!(f.u32(PMR + offset_of!(Header, engine_version)), VERSION);
}

#[test]
fn the_encrypt_pipeline_encrypts_with_the_lba_as_data_unit_then_checksums() {
    let mut f = File::new();
    let plain = half_compressible(9);
    f.put(0, &plain);
    f.put(BLOCK, &plain);
    let mut key = [0u8; KEY_BYTES];
    for (k, b) in key.iter_mut().enumerate() {
        *b = k as u8 ^ 0x5a;
    }
    f.post_xts(
        5,
        1,
        &[OP_XTS_ENCRYPT, OP_CRC32C],
        &[raw(0), raw(BLOCK as u64)],
        1000,
        &key,
    );
    f.engine().serve();
    assert_eq!(f.status(5), (1, STATUS_OK, 0));
    let xts = ops::xts_context(&key);
    let mut seen = Vec::new();
    for b in 0..2 {
        let o = f.out(5, b);
        assert_eq!(o.flags, META_ENCRYPTED | META_CHECKSUMMED);
        assert_eq!((usize::from(o.len), o.in_output), (BLOCK, 1));
        let mut c = f.get(PMR + output_offset(5, b), BLOCK);
        assert_ne!(c, plain);
        assert_eq!(o.crc, ops::crc32c(&c));
        seen.push(c.clone());
        xts.decrypt(1000 + b as u64, &mut c).unwrap();
        assert_eq!(c, plain, "block {b}");
    }
    // The same bytes at another LBA encrypt differently.
    assert_ne!(seen[0], seen[1]);
}

#[test]
fn encryption_of_a_block_that_is_not_raw_is_a_bad_state() {
    let mut f = File::new();
    let blk = BlockIn {
        len: 100,
        flags: META_COMPRESSED,
        ..raw(0)
    };
    f.post_xts(0, 1, &[OP_XTS_ENCRYPT], &[blk], 0, &[1; KEY_BYTES]);
    f.engine().serve();
    assert_eq!(f.status(0), (1, STATUS_BAD_STATE, 0));
}

#[test]
fn xts_matches_ieee_1619_vector_10() {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let key = hex(concat!(
        "2718281828459045235360287471352662497757247093699959574966967627",
        "3141592653589793238462643383279502884197169399375105820974944592"
    ));
    let xts = ops::xts_context(&key.try_into().unwrap());
    let mut unit: Vec<u8> = (0..512).map(|i| i as u8).collect();
    xts.encrypt(0xff, &mut unit).unwrap();
    assert_eq!(
        unit[..32],
        hex("1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b")[..]
    );
}

/// A block written by the engine's write ops, at `lba`, read back by its read ops.
fn write_then_read(write: &[u8], read: &[u8], plain: &[u8], lba: u64, key: &[u8; KEY_BYTES]) {
    let mut f = File::new();
    f.put(0, plain);
    f.post_xts(0, 1, write, &[raw(0)], lba, key);
    f.engine().serve();
    assert_eq!(f.status(0).1, STATUS_OK);
    let w = f.out(0, 0);
    let stored = if w.in_output != 0 {
        f.get(PMR + output_offset(0, 0), usize::from(w.len))
    } else {
        plain.to_vec()
    };
    // The stored form in the PMR, as a load leaves it.
    f.put(8 * BLOCK, &stored);
    let blk = BlockIn {
        offset: 8 * BLOCK as u64,
        len: w.len,
        flags: w.flags,
        crc: w.crc,
    };
    f.post_xts(1, 1, read, &[blk], lba, key);
    f.engine().serve();
    assert_eq!(f.status(1).1, STATUS_OK);
    let r = f.out(1, 0);
    assert_eq!(
        (usize::from(r.len), r.flags),
        (BLOCK, 0),
        "nothing left undone"
    );
    let back = if r.in_output != 0 {
        f.get(PMR + output_offset(1, 0), BLOCK)
    } else {
        stored
    };
    assert_eq!(back, plain);
}

#[test]
fn reads_undo_what_writes_did() {
    let key = [7u8; KEY_BYTES];
    let plain = half_compressible(11);
    write_then_read(
        &[OP_LZ4_COMPRESS, OP_CRC32C],
        &[OP_CRC32C_VERIFY, OP_LZ4_DECOMPRESS],
        &plain,
        3,
        &key,
    );
    write_then_read(
        &[OP_XTS_ENCRYPT, OP_CRC32C],
        &[OP_CRC32C_VERIFY, OP_XTS_DECRYPT],
        &plain,
        77,
        &key,
    );
    write_then_read(&[OP_CRC32C], &[OP_CRC32C_VERIFY], &random(3), 0, &key);
    // An incompressible block is stored raw and read as it is.
    write_then_read(
        &[OP_LZ4_COMPRESS, OP_CRC32C],
        &[OP_CRC32C_VERIFY, OP_LZ4_DECOMPRESS],
        &random(4),
        0,
        &key,
    );
}

#[test]
fn a_corrupt_block_is_a_data_error() {
    let mut f = File::new();
    let plain = half_compressible(12);
    f.put(0, &plain);
    // A checksum that does not match.
    let bad_crc = BlockIn {
        flags: META_CHECKSUMMED,
        crc: ops::crc32c(&plain) ^ 1,
        ..raw(0)
    };
    f.post(0, 1, &[OP_CRC32C_VERIFY], &[raw(BLOCK as u64), bad_crc]);
    // Bytes that are not LZ4.
    let not_lz4 = BlockIn {
        len: 100,
        flags: META_COMPRESSED,
        ..raw(BLOCK as u64)
    };
    f.put(BLOCK, &[0xffu8; 100]);
    f.post(1, 1, &[OP_LZ4_DECOMPRESS], &[not_lz4]);
    let mut e = f.engine();
    e.serve();
    assert_eq!(e.jobs, [0, 0, 0, 2]);
    assert_eq!(f.status(0), (1, STATUS_DATA, 1));
    assert_eq!(f.status(1), (1, STATUS_DATA, 0));
}

#[test]
fn the_device_can_ask_the_engine_to_play_hung() {
    let mut f = File::new();
    assert!(!f.engine().paused());
    f.put(PMR + offset_of!(Header, pause), &1u32.to_le_bytes());
    assert!(f.engine().paused());
}
