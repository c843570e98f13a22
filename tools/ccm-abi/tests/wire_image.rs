//! The wire images (`to_bytes`/`from_bytes`) of the structs copied through shared memory as
//! bytes agree with their `repr(C)` memory image on this (little-endian) host, and round-trip.

use ccm_abi::abi::{DescriptorTable, DmaSegment, LaunchPacket, MetadataRecord};

/// The bytes of a `repr(C)` value without padding (checked by the layout tests).
fn memory_image<T: Copy, const N: usize>(v: &T) -> [u8; N] {
    assert_eq!(core::mem::size_of::<T>(), N);
    let mut out = [0u8; N];
    // SAFETY: `T` is a padding-free `repr(C)` struct of `N` bytes; reading its bytes is defined.
    unsafe { core::ptr::copy_nonoverlapping(v as *const T as *const u8, out.as_mut_ptr(), N) };
    out
}

fn pattern(seed: u8) -> impl FnMut() -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(seed);
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[test]
fn launch_packet() {
    let mut r = pattern(1);
    let mut args = [0u8; 32];
    args.iter_mut().for_each(|b| *b = r() as u8);
    let p = LaunchPacket {
        tag: r() as u32,
        kernel_id: r() as u16,
        flags: r() as u16,
        tenant: r() as u16,
        arg_size: r() as u16,
        input_size: r() as u32,
        input_base: r(),
        output_base: r(),
        args,
    };
    assert_eq!(p.to_bytes(), memory_image::<_, 64>(&p));
    assert_eq!(LaunchPacket::from_bytes(&p.to_bytes()), p);
}

#[test]
fn descriptor_table_drops_reserved() {
    let mut r = pattern(2);
    let t = DescriptorTable {
        magic: r() as u32,
        segment_count: r() as u32,
        region_size: r(),
        headers_offset: r(),
        metadata_offset: r(),
        payload_offset: r(),
        reserved: [0; 3],
    };
    assert_eq!(t.to_bytes(), memory_image::<_, 64>(&t));
    assert_eq!(DescriptorTable::from_bytes(&t.to_bytes()), t);
    // Reserved bytes are written as zero and ignored on read.
    let dirty = DescriptorTable {
        reserved: [1, 2, 3],
        ..t
    };
    assert_eq!(dirty.to_bytes(), t.to_bytes());
    let mut bytes = t.to_bytes();
    bytes[0x30] = 0xff;
    assert_eq!(DescriptorTable::from_bytes(&bytes), t);
}

#[test]
fn segment_and_record() {
    let mut r = pattern(3);
    let s = DmaSegment {
        bus_addr: r(),
        len: r() as u32,
        flags: r() as u32,
    };
    assert_eq!(s.to_bytes(), memory_image::<_, 16>(&s));
    assert_eq!(DmaSegment::from_bytes(&s.to_bytes()), s);
    let m = MetadataRecord {
        seq: r() as u32,
        tag: r() as u32,
        payload_index: r() as u32,
        length: r() as u32,
        result_offset: r(),
        checksum: r() as u32,
        flags: r() as u16,
        status: r() as u16,
    };
    assert_eq!(m.to_bytes(), memory_image::<_, 32>(&m));
    assert_eq!(MetadataRecord::from_bytes(&m.to_bytes()), m);
}
