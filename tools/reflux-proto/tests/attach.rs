// SPDX-License-Identifier: GPL-2.0

//! Attachments of pipelines to byte ranges: validation, overlap, lookup, and the parsing of what
//! the administrator writes.

use reflux_proto::abi::{
    PIPELINE_COMPRESS, PIPELINE_ENCRYPT, PIPELINE_PASSTHROUGH, PIPE_FLAG_CHECKSUM,
};
use reflux_proto::attach::{
    parse_bool, parse_size, trim, AttachError, Attachment, Lookup, Table, ALIGN_BLOCKS,
    ALIGN_BYTES, MAX_ATTACHMENTS,
};
use reflux_proto::pipeline::{Pipeline, PipelineError};

const CAP: u64 = 16384; // blocks: 64 MiB

fn att(id: u32, start_mib: u64, len_mib: u64) -> Attachment {
    Attachment::new(
        id,
        start_mib << 20,
        len_mib << 20,
        PIPELINE_COMPRESS,
        0,
        CAP,
    )
    .unwrap()
}

#[test]
fn a_valid_range_is_converted_to_blocks() {
    let a = Attachment::new(
        1,
        1 << 20,
        2 << 20,
        PIPELINE_ENCRYPT,
        PIPE_FLAG_CHECKSUM,
        CAP,
    )
    .unwrap();
    assert_eq!((a.start, a.end), (256, 768));
    assert_eq!(
        (a.pipeline, a.flags),
        (PIPELINE_ENCRYPT, PIPE_FLAG_CHECKSUM)
    );
    // The whole device.
    let a = Attachment::new(2, 0, CAP * 4096, PIPELINE_COMPRESS, 0, CAP).unwrap();
    assert_eq!((a.start, a.end), (0, CAP));
}

#[test]
fn bad_ranges_and_pipelines_are_refused() {
    let new = |start, len, p, f| Attachment::new(1, start, len, p, f, CAP);
    assert_eq!(new(0, 0, PIPELINE_COMPRESS, 0), Err(AttachError::Empty));
    assert_eq!(
        new(4096, ALIGN_BYTES, PIPELINE_COMPRESS, 0),
        Err(AttachError::Unaligned)
    );
    assert_eq!(
        new(0, ALIGN_BYTES + 512, PIPELINE_COMPRESS, 0),
        Err(AttachError::Unaligned)
    );
    assert_eq!(
        new(CAP * 4096, ALIGN_BYTES, PIPELINE_COMPRESS, 0),
        Err(AttachError::BeyondDevice)
    );
    assert_eq!(
        new(
            CAP * 4096 - ALIGN_BYTES,
            2 * ALIGN_BYTES,
            PIPELINE_COMPRESS,
            0
        ),
        Err(AttachError::BeyondDevice)
    );
    // start + len overflows u64 (2^64 - 128 KiB is aligned).
    assert_eq!(
        new(
            u64::MAX - ALIGN_BYTES + 1,
            ALIGN_BYTES,
            PIPELINE_COMPRESS,
            0
        ),
        Err(AttachError::BeyondDevice)
    );
    assert_eq!(
        new(
            ALIGN_BYTES * (u64::MAX / ALIGN_BYTES),
            ALIGN_BYTES * 2,
            PIPELINE_COMPRESS,
            0
        ),
        Err(AttachError::BeyondDevice)
    );
    assert_eq!(
        new(0, ALIGN_BYTES, 9, 0),
        Err(AttachError::Pipeline(PipelineError::UnknownPipeline(9)))
    );
    assert_eq!(
        new(0, ALIGN_BYTES, PIPELINE_PASSTHROUGH, PIPE_FLAG_CHECKSUM),
        Err(AttachError::Pipeline(PipelineError::FlagNotApplicable(
            PIPE_FLAG_CHECKSUM
        )))
    );
}

#[test]
fn overlapping_attachments_are_refused_and_adjacent_ones_accepted() {
    let mut t = Table::EMPTY;
    t.insert(att(1, 1, 2)).unwrap();
    assert_eq!(t.insert(att(2, 2, 2)), Err(AttachError::Overlap(1)));
    assert_eq!(t.insert(att(3, 0, 8)), Err(AttachError::Overlap(1)));
    t.insert(att(4, 3, 1)).unwrap();
    t.insert(att(5, 0, 1)).unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(t.remove(1).map(|a| a.id), Some(1));
    assert_eq!(t.remove(1), None);
    t.insert(att(2, 2, 1)).unwrap();
    assert_eq!(t.clear(), 3);
    assert!(t.is_empty());
}

#[test]
fn the_table_holds_a_bounded_number() {
    let mut t = Table::EMPTY;
    for i in 0..MAX_ATTACHMENTS as u32 {
        t.insert(att(i, u64::from(i), 1)).unwrap();
    }
    assert_eq!(t.insert(att(99, 60, 1)), Err(AttachError::Full));
    t.remove(3).unwrap();
    t.insert(att(99, 60, 1)).unwrap();
}

#[test]
fn lookup_gives_one_pipeline_per_request() {
    let mut t = Table::EMPTY;
    t.insert(att(1, 1, 1)).unwrap(); // blocks 256..512
    t.insert(att(2, 2, 1)).unwrap(); // blocks 512..768
    assert_eq!(t.lookup(0, 32), Lookup::Default);
    assert_eq!(t.lookup(224, 32), Lookup::Default);
    assert!(matches!(t.lookup(256, 32), Lookup::Attached(a) if a.id == 1));
    assert!(matches!(t.lookup(511, 1), Lookup::Attached(a) if a.id == 1));
    assert!(matches!(t.lookup(512, 32), Lookup::Attached(a) if a.id == 2));
    assert_eq!(t.lookup(768, 32), Lookup::Default);
    // Across the boundary of an attachment, or of two.
    assert_eq!(t.lookup(255, 2), Lookup::Straddles);
    assert_eq!(t.lookup(510, 4), Lookup::Straddles);
    assert_eq!(t.lookup(767, 2), Lookup::Straddles);
    // Over a whole attachment, both ends outside it.
    let mut t = Table::EMPTY;
    t.insert(Attachment::new(7, ALIGN_BYTES, ALIGN_BYTES, PIPELINE_COMPRESS, 0, CAP).unwrap())
        .unwrap();
    assert_eq!(t.lookup(0, 3 * ALIGN_BLOCKS), Lookup::Straddles);
    assert_eq!(t.lookup(0, ALIGN_BLOCKS), Lookup::Default);
    // Zero blocks (a flush) is looked up as its first block.
    assert_eq!(t.lookup(0, 0), Lookup::Default);
}

#[test]
fn sizes_parse_with_binary_suffixes() {
    assert_eq!(parse_size(b"131072\n"), Some(131072));
    assert_eq!(parse_size(b" 128K"), Some(131072));
    assert_eq!(parse_size(b"4m"), Some(4 << 20));
    assert_eq!(parse_size(b"1G\n"), Some(1 << 30));
    assert_eq!(parse_size(b"0"), Some(0));
    for bad in [
        &b""[..],
        b"K",
        b"-1",
        b"1.5M",
        b"0x100",
        b"12 34",
        b"18446744073709551616",
        b"17179869184G",
    ] {
        assert_eq!(parse_size(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
    assert_eq!(parse_size(b"18446744073709551615"), Some(u64::MAX));
}

#[test]
fn booleans_and_pipeline_names_parse() {
    assert_eq!(parse_bool(b"1\n"), Some(true));
    assert_eq!(parse_bool(b"off"), Some(false));
    assert_eq!(parse_bool(b"2"), None);
    assert_eq!(parse_bool(b""), None);
    for p in Pipeline::ALL {
        assert_eq!(
            Pipeline::from_name(trim(format!(" {}\n", p.name()).as_bytes())),
            Some(p)
        );
    }
    assert_eq!(Pipeline::from_name(b"gzip"), None);
    assert_eq!(Pipeline::from_name(b"Compress"), None);
    assert_eq!(Pipeline::from_name(b""), None);
}

#[test]
fn trimming_takes_whitespace_off_both_ends_only() {
    assert_eq!(trim(b" \tab c\n\n"), b"ab c");
    assert_eq!(trim(b"\n"), b"");
    assert_eq!(trim(b""), b"");
}
