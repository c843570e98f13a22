//! Tests of the device ABI: sizes, wire images, the PMR layout and the superblock.

use std::mem::size_of;

use proptest::prelude::*;
use reflux_proto::abi::*;

fn descriptor() -> SubmissionDescriptor {
    SubmissionDescriptor {
        tag: 0x1234,
        opcode: opcode(PIPELINE_COMPRESS, DIR_WRITE),
        stage_start: 1,
        placement: 0b10,
        nr_blocks: 7,
        flags: PIPE_FLAG_CHECKSUM,
        actors: [3, 250],
        state: 0xBEEF,
        buf_index: 0x0102_0304,
        lba: 0x1122_3344_5566_7788,
        epochs: [0xA0A1_A2A3, 0xB0B1_B2B3],
    }
}

fn params() -> LayoutParams {
    LayoutParams {
        pmr_size: 64 << 20,
        ring_entries: 256,
        nr_buffers: 1024,
        nr_actors: 16,
        nr_blocks: 8192,
    }
}

#[test]
fn sizes_match_the_documented_abi() {
    assert_eq!(size_of::<SubmissionDescriptor>(), 32);
    assert_eq!(size_of::<CompletionEntry>(), 32);
    assert_eq!(size_of::<RingHeader>(), 128);
    assert_eq!(size_of::<BlockMeta>(), 16);
    assert_eq!(size_of::<EpochSlot>(), 64);
    assert_eq!(size_of::<ReqState>() as u64, REQ_STATE_SIZE);
    assert_eq!(size_of::<ActorShared>(), 320);
    assert_eq!(size_of::<Superblock>(), 256);
    assert_eq!(size_of::<Regs>(), 0x180);
    assert_eq!(RING_ENTRIES_OFFSET, 128);
    assert_eq!(
        ACTOR_SHARED_DATA_SIZE,
        ACTOR_SLOT_SIZE - ACTOR_CONTROL_SIZE - 320
    );
}

#[test]
fn register_lines_separate_writers() {
    // Identification, host control, device status and telemetry each own a 64-byte line.
    for reg in [
        REG_MAGIC,
        REG_VERSION,
        REG_CAPS,
        REG_PMR_SIZE,
        REG_CAPACITY_BLOCKS,
        REG_NR_CORES,
    ] {
        assert!(reg < 0x40, "identification register {reg:#x}");
    }
    for reg in [
        REG_DEV_CTRL,
        REG_IRQ_CTRL,
        REG_IRQ_ACK,
        REG_SQ_DOORBELL,
        REG_FAULT_INJECT,
    ] {
        assert!((0x40..0x80).contains(&reg), "host register {reg:#x}");
    }
    for reg in [REG_DEV_STATUS, REG_HEARTBEAT, REG_IRQ_SEQ, REG_DEV_ERROR] {
        assert!((0x80..0xC0).contains(&reg), "status register {reg:#x}");
    }
    for reg in [
        REG_TEMP_MILLI_C,
        REG_THROTTLED,
        REG_CORE_UTIL_PERMILLE,
        REG_QUEUE_DEPTH,
        REG_SPEED_PERMILLE,
        REG_DRAIN_BACKLOG,
        REG_THROTTLE_EVENTS,
    ] {
        assert!((0xC0..0x100).contains(&reg), "telemetry register {reg:#x}");
    }
    for reg in [REG_MIG_ARM, REG_MIG_CMD, REG_MIG_EPOCH, REG_MIG_SEQ] {
        assert!(
            (0x100..0x140).contains(&reg),
            "host mailbox register {reg:#x}"
        );
    }
    for reg in [
        REG_MIG_DONE_SEQ,
        REG_MIG_STATUS,
        REG_MIG_DEV_NS,
        REG_MIG_ARM_SEEN,
    ] {
        assert!(
            (0x140..0x180).contains(&reg),
            "device mailbox register {reg:#x}"
        );
    }
    assert!(size_of::<Regs>() <= REGISTER_BLOCK_SIZE);
    assert_eq!(u32::from_le_bytes(*b"RFXR"), REGISTER_MAGIC);
    assert_eq!(version_major(ABI_VERSION), ABI_VERSION_MAJOR);
    assert_eq!(version_minor(ABI_VERSION), ABI_VERSION_MINOR);
}

#[test]
fn capabilities_do_not_collide() {
    let pipelines = (0..PIPELINE_COUNT).fold(0, |m, p| m | cap_pipeline(p));
    assert_eq!(pipelines, 0b1111);
    for cap in [
        CAP_POLL,
        CAP_IRQ,
        CAP_FAULT_INJECT,
        CAP_MIGRATE,
        CAP_MIGRATE_MAILBOX,
    ] {
        assert_eq!(cap.count_ones(), 1);
        assert_eq!(cap & pipelines, 0);
    }
    assert_eq!(CAP_POLL & CAP_IRQ, 0);
    assert_eq!((CAP_POLL | CAP_IRQ) & CAP_FAULT_INJECT, 0);
    assert_eq!(
        (CAP_POLL | CAP_IRQ | CAP_FAULT_INJECT | CAP_MIGRATE) & CAP_MIGRATE_MAILBOX,
        0
    );
    assert_eq!(MIG_CMD_TO_DEVICE & MIG_CMD_ACTOR_MASK, 0);
}

#[test]
fn opcode_packs_pipeline_and_direction() {
    for p in 0..16u8 {
        for d in 0..16u8 {
            let op = opcode(p, d);
            assert_eq!(opcode_pipeline(op), p);
            assert_eq!(opcode_direction(op), d);
        }
    }
    assert_eq!(opcode(PIPELINE_ENCRYPT, DIR_FLUSH), 0x23);
    let d = descriptor();
    assert_eq!(d.pipeline(), PIPELINE_COMPRESS);
    assert_eq!(d.direction(), DIR_WRITE);
}

#[test]
fn descriptor_bytes_are_where_the_abi_says() {
    let b = descriptor().to_bytes();
    assert_eq!(&b[0..2], &0x1234u16.to_le_bytes());
    assert_eq!(
        b[2], 0x12,
        "opcode: pipeline 2 in the low nibble, write in the high"
    );
    assert_eq!(b[3], 1, "stage_start");
    assert_eq!(b[4], 0b10, "placement");
    assert_eq!(b[5], 7, "nr_blocks");
    assert_eq!(&b[6..8], &PIPE_FLAG_CHECKSUM.to_le_bytes());
    assert_eq!(&b[8..10], &[3, 250], "actors");
    assert_eq!(&b[10..12], &0xBEEFu16.to_le_bytes());
    assert_eq!(&b[12..16], &0x0102_0304u32.to_le_bytes());
    assert_eq!(&b[16..24], &0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(&b[24..28], &0xA0A1_A2A3u32.to_le_bytes());
    assert_eq!(&b[28..32], &0xB0B1_B2B3u32.to_le_bytes());
}

#[test]
fn completion_bytes_are_where_the_abi_says() {
    let c = CompletionEntry {
        tag: 0x0A0B,
        next_stage: NEXT_STAGE_DONE,
        flags: 0,
        status: STATUS_EIO,
        stored_bytes: 12345,
        seq: u32::MAX,
        epochs: [6, 8],
        reserved: 0xDEAD, // not part of the wire image: written as zero
    };
    let b = c.to_bytes();
    assert_eq!(&b[0..2], &0x0A0Bu16.to_le_bytes());
    assert_eq!(b[2], 0xFF);
    assert_eq!(&b[4..8], &(-5i32).to_le_bytes());
    assert_eq!(&b[8..12], &12345u32.to_le_bytes());
    assert_eq!(&b[12..16], &u32::MAX.to_le_bytes());
    assert_eq!(&b[16..24], &[6, 0, 0, 0, 8, 0, 0, 0]);
    assert_eq!(&b[24..32], &[0; 8], "reserved bytes are written as zero");
    let back = CompletionEntry::from_bytes(&b);
    assert_eq!(back, CompletionEntry { reserved: 0, ..c });
}

#[test]
fn status_values_are_negative_errnos() {
    assert_eq!(STATUS_OK, 0);
    assert_eq!(STATUS_EIO, -5);
    assert_eq!(STATUS_EAGAIN, -11);
    assert_eq!(STATUS_EINVAL, -22);
    assert_eq!(STATUS_ECANCELED, -125);
}

fn any_descriptor() -> impl Strategy<Value = SubmissionDescriptor> {
    (
        (
            any::<u16>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
        ),
        (any::<u16>(), any::<[u8; 2]>(), any::<u16>(), any::<u32>()),
        (any::<u64>(), any::<[u32; 2]>()),
    )
        .prop_map(
            |(
                (tag, opcode, stage_start, placement, nr_blocks),
                (flags, actors, state, buf_index),
                (lba, epochs),
            )| SubmissionDescriptor {
                tag,
                opcode,
                stage_start,
                placement,
                nr_blocks,
                flags,
                actors,
                state,
                buf_index,
                lba,
                epochs,
            },
        )
}

proptest! {
    #[test]
    fn descriptor_round_trips(d in any_descriptor()) {
        prop_assert_eq!(SubmissionDescriptor::from_bytes(&d.to_bytes()), d);
    }

    /// Every byte of the descriptor is a field: no bytes are lost either way.
    #[test]
    fn descriptor_bytes_round_trip(b in any::<[u8; 32]>()) {
        prop_assert_eq!(SubmissionDescriptor::from_bytes(&b).to_bytes(), b);
    }

    #[test]
    fn completion_round_trips(
        tag in any::<u16>(), next in any::<u8>(), flags in any::<u8>(), status in any::<i32>(),
        stored in any::<u32>(), seq in any::<u32>(), epochs in any::<[u32; 2]>(),
    ) {
        let c = CompletionEntry {
            tag, next_stage: next, flags, status, stored_bytes: stored, seq, epochs, reserved: 0,
        };
        prop_assert_eq!(CompletionEntry::from_bytes(&c.to_bytes()), c);
    }

    #[test]
    fn block_meta_round_trips(len in any::<u16>(), flags in any::<u16>(), crc in any::<u32>(), gen in any::<u64>()) {
        let m = BlockMeta { stored_len: len, flags, crc, generation: gen };
        prop_assert_eq!(BlockMeta::from_bytes(&m.to_bytes()), m);
        prop_assert_eq!(m.to_bytes()[0..2].to_vec(), len.to_le_bytes().to_vec());
    }

    #[test]
    fn req_state_round_trips(len in any::<[u16; 32]>(), crc in any::<[u32; 32]>(), flags in any::<[u8; 32]>()) {
        let s = ReqState { len, crc, flags, reserved: [0; 4] };
        prop_assert_eq!(ReqState::from_bytes(&s.to_bytes()), s);
    }
}

#[test]
fn other_pmr_structs_round_trip() {
    let p = RingProducer {
        tail: u32::MAX,
        entries: 256,
        entry_size: SQ_ENTRY_SIZE,
        ..Default::default()
    };
    assert_eq!(RingProducer::from_bytes(&p.to_bytes()), p);
    let c = RingConsumer {
        head: 7,
        ..Default::default()
    };
    assert_eq!(RingConsumer::from_bytes(&c.to_bytes()), c);
    let e = EpochSlot {
        epoch: u64::MAX - 1,
        ..Default::default()
    };
    assert_eq!(EpochSlot::from_bytes(&e.to_bytes()), e);
    let mut a = ActorShared {
        kind: ACTOR_KIND_AES_XTS,
        ckpt_epoch: 4,
        ckpt_len: 4096,
        ckpt_side: SIDE_DEVICE,
        active_epoch: 4,
        owner: SIDE_DEVICE,
        invocations: 1,
        bytes_in: 2,
        bytes_out: 3,
        errors: 4,
        ..Default::default()
    };
    for (i, b) in a.params.iter_mut().enumerate() {
        *b = i as u8;
    }
    let bytes = a.to_bytes();
    assert_eq!(ActorShared::from_bytes(&bytes), a);
    assert_eq!(bytes[0x40..0x80].to_vec(), (0..64u8).collect::<Vec<_>>());
    assert_eq!(&bytes[0x80..0x88], &4u64.to_le_bytes(), "ready flag line");
    assert_eq!(&bytes[0xC0..0xC8], &4u64.to_le_bytes(), "active flag line");
}

/// Checks the layout invariants: areas in order, aligned, back to back, big enough, inside the PMR.
fn check_layout(l: &PmrLayout) {
    let p = l.params();
    let areas = l.areas();
    let need = |i: usize| -> u64 {
        let e = u64::from(p.ring_entries);
        match i {
            AREA_SUPERBLOCK => size_of::<Superblock>() as u64,
            AREA_SQ => RING_ENTRIES_OFFSET + e * u64::from(SQ_ENTRY_SIZE),
            AREA_CQ => RING_ENTRIES_OFFSET + e * u64::from(CQ_ENTRY_SIZE),
            AREA_REQ_STATE => e * REQ_STATE_SIZE,
            AREA_BUFFERS => u64::from(p.nr_buffers) * u64::from(BLOCK_SIZE),
            AREA_ACTORS => u64::from(p.nr_actors) * ACTOR_SLOT_SIZE,
            AREA_EPOCHS => u64::from(p.nr_actors) * 64,
            AREA_BLOCK_META => p.nr_blocks * 16,
            AREA_DATA => p.nr_blocks * u64::from(BLOCK_SIZE),
            _ => unreachable!(),
        }
    };
    assert_eq!(areas[AREA_SUPERBLOCK].offset, 0);
    for (i, a) in areas.iter().enumerate() {
        assert_eq!(a.offset % PMR_AREA_ALIGN, 0, "area {i} aligned");
        assert_eq!(a.size % PMR_AREA_ALIGN, 0, "area {i} size aligned");
        assert!(a.size >= need(i), "area {i} holds its objects");
        assert!(
            a.size < need(i) + PMR_AREA_ALIGN,
            "area {i} wastes less than a page"
        );
        if i > 0 {
            assert!(
                areas[i - 1].end() <= a.offset,
                "areas {} and {i} overlap",
                i - 1
            );
        }
        assert_eq!(l.area(i), Some(*a));
    }
    assert_eq!(l.area(AREA_COUNT), None);
    assert!(l.used() <= p.pmr_size);
    assert_eq!(l.used(), areas[AREA_DATA].end());
}

#[test]
fn layout_of_the_default_device() {
    let l = PmrLayout::compute(params()).expect("fits");
    check_layout(&l);
    // Object accessors: first and last objects inside their area, one past the end refused.
    let a = l.areas();
    assert_eq!(l.sq_header(), a[AREA_SQ].offset);
    assert_eq!(l.cq_header(), a[AREA_CQ].offset);
    assert_eq!(l.sq_entry(0), Some(a[AREA_SQ].offset + 128));
    assert_eq!(l.sq_entry(255), Some(a[AREA_SQ].offset + 128 + 255 * 32));
    assert_eq!(l.sq_entry(256), None);
    assert_eq!(l.cq_entry(255), Some(a[AREA_CQ].offset + 128 + 255 * 32));
    assert_eq!(l.cq_entry(256), None);
    assert_eq!(l.req_state(255), Some(a[AREA_REQ_STATE].offset + 255 * 256));
    assert_eq!(l.req_state(256), None);
    assert_eq!(l.buffer(1023), Some(a[AREA_BUFFERS].offset + 1023 * 4096));
    assert_eq!(l.buffer(1024), None);
    assert_eq!(l.actor_control(15), Some(a[AREA_ACTORS].offset + 15 * 8192));
    assert_eq!(
        l.actor_shared(15),
        Some(a[AREA_ACTORS].offset + 15 * 8192 + 4096)
    );
    assert_eq!(l.actor_control(16), None);
    assert_eq!(l.epoch(15), Some(a[AREA_EPOCHS].offset + 15 * 64));
    assert_eq!(l.epoch(16), None);
    assert_eq!(
        l.block_meta(8191),
        Some(a[AREA_BLOCK_META].offset + 8191 * 16)
    );
    assert_eq!(l.block_meta(8192), None);
    assert_eq!(l.block_data(8191), Some(a[AREA_DATA].offset + 8191 * 4096));
    assert_eq!(l.block_data(8192), None);
    assert_eq!(l.block_data(u64::MAX), None);
    assert!(l.block_data(8191).unwrap() + 4096 <= a[AREA_DATA].end());
}

#[test]
fn layout_rejects_bad_parameters() {
    let p = params();
    for entries in [0, 3, 100, MAX_RING_ENTRIES * 2] {
        let q = LayoutParams {
            ring_entries: entries,
            ..p
        };
        assert_eq!(
            PmrLayout::compute(q),
            Err(LayoutError::RingEntries),
            "{entries}"
        );
    }
    let q = LayoutParams {
        nr_buffers: MAX_REQ_BLOCKS - 1,
        ..p
    };
    assert_eq!(PmrLayout::compute(q), Err(LayoutError::Buffers));
    for actors in [0, MAX_ACTORS + 1] {
        let q = LayoutParams {
            nr_actors: actors,
            ..p
        };
        assert_eq!(PmrLayout::compute(q), Err(LayoutError::Actors));
    }
    let q = LayoutParams { nr_blocks: 0, ..p };
    assert_eq!(PmrLayout::compute(q), Err(LayoutError::Blocks));
    let q = LayoutParams {
        nr_blocks: u64::MAX / 2,
        pmr_size: u64::MAX,
        ..p
    };
    assert_eq!(PmrLayout::compute(q), Err(LayoutError::Overflow));
    // Accepted extremes.
    let q = LayoutParams {
        ring_entries: 1,
        nr_buffers: MAX_REQ_BLOCKS,
        nr_actors: 1,
        nr_blocks: 1,
        ..p
    };
    check_layout(&PmrLayout::compute(q).expect("smallest device"));
    let q = LayoutParams {
        ring_entries: MAX_RING_ENTRIES,
        nr_actors: MAX_ACTORS,
        pmr_size: 1 << 30,
        ..p
    };
    check_layout(&PmrLayout::compute(q).expect("largest tables"));
}

#[test]
fn too_small_pmr_is_rejected_with_the_size_needed() {
    let big = LayoutParams {
        pmr_size: u64::MAX,
        ..params()
    };
    let needed = PmrLayout::compute(big).expect("fits anything").used();
    let exact = LayoutParams {
        pmr_size: needed,
        ..params()
    };
    assert!(PmrLayout::compute(exact).is_ok());
    let short = LayoutParams {
        pmr_size: needed - 1,
        ..params()
    };
    assert_eq!(
        PmrLayout::compute(short),
        Err(LayoutError::TooSmall { needed })
    );
    let empty = LayoutParams {
        pmr_size: 0,
        ..params()
    };
    assert_eq!(
        PmrLayout::compute(empty),
        Err(LayoutError::TooSmall { needed })
    );
}

#[test]
fn max_blocks_fills_the_pmr() {
    for pmr in [
        4_431_872u64,
        5 << 20,
        8 << 20,
        64 << 20,
        (64 << 20) + 12345,
        1 << 34,
    ] {
        let n = PmrLayout::max_blocks(params(), pmr).expect("room for blocks");
        let fits = LayoutParams {
            pmr_size: pmr,
            nr_blocks: n,
            ..params()
        };
        check_layout(&PmrLayout::compute(fits).expect("max_blocks fits"));
        let over = LayoutParams {
            nr_blocks: n + 1,
            ..fits
        };
        assert!(
            matches!(PmrLayout::compute(over), Err(LayoutError::TooSmall { .. })),
            "{pmr}: one more block must not fit"
        );
    }
    let tiny = PmrLayout::max_blocks(params(), 4096);
    assert!(matches!(tiny, Err(LayoutError::TooSmall { .. })));
    // The largest PMR: the estimate's layout would overflow 64 bits; one block fewer fits.
    let n = PmrLayout::max_blocks(params(), u64::MAX).expect("room");
    let p = LayoutParams {
        pmr_size: u64::MAX,
        nr_blocks: n,
        ..params()
    };
    check_layout(&PmrLayout::compute(p).expect("fits"));
}

proptest! {
    #[test]
    fn layouts_never_overlap(
        entries_log in 0u32..=12, buffers in 32u32..5000, actors in 1u32..=256,
        blocks in 1u64..100_000, slack in 0u64..100_000,
    ) {
        let p = LayoutParams {
            pmr_size: u64::MAX,
            ring_entries: 1 << entries_log,
            nr_buffers: buffers,
            nr_actors: actors,
            nr_blocks: blocks,
        };
        let used = PmrLayout::compute(p).unwrap().used();
        let p = LayoutParams { pmr_size: used + slack, ..p };
        check_layout(&PmrLayout::compute(p).unwrap());
        let max = PmrLayout::max_blocks(p, p.pmr_size).unwrap();
        prop_assert!(max >= blocks);
    }
}

#[test]
fn superblock_formats_and_validates() {
    let layout = PmrLayout::compute(params()).unwrap();
    let sb = Superblock::format(&layout);
    assert_eq!(sb.magic, SUPERBLOCK_MAGIC);
    assert_eq!(sb.clean, 1);
    assert_eq!(sb.generation, 0);
    assert_eq!(sb.validate(params().pmr_size), Ok(layout));
    // Through the wire image, as the host reads it from the PMR.
    let bytes = sb.to_bytes();
    assert_eq!(&bytes[0..4], b"RFXS");
    let back = Superblock::from_bytes(&bytes);
    assert_eq!(back, sb);
    assert_eq!(back.validate(params().pmr_size), Ok(layout));
    // A larger PMR than formatted is fine (the device grew); a smaller one is not.
    assert_eq!(sb.validate(params().pmr_size * 2), Ok(layout));
    assert_eq!(
        sb.validate(params().pmr_size - 1),
        Err(SuperblockError::PmrTooSmall)
    );
    // Mounted: generation and clean flag are the host's, and do not matter to validity.
    let mounted = Superblock {
        generation: 41,
        clean: 0,
        ..sb
    };
    assert_eq!(mounted.validate(params().pmr_size), Ok(layout));
    // A newer minor version is accepted.
    let minor = Superblock {
        version: version(ABI_VERSION_MAJOR, ABI_VERSION_MINOR + 1),
        ..sb
    };
    assert!(minor.validate(params().pmr_size).is_ok());
}

#[test]
fn superblock_corruption_is_named() {
    let layout = PmrLayout::compute(params()).unwrap();
    let sb = Superblock::format(&layout);
    let size = params().pmr_size;
    let check = |bad: Superblock, err: SuperblockError| assert_eq!(bad.validate(size), Err(err));
    check(Superblock::default(), SuperblockError::BadMagic);
    check(
        Superblock {
            version: version(ABI_VERSION_MAJOR + 1, 0),
            ..sb
        },
        SuperblockError::BadVersion {
            major: ABI_VERSION_MAJOR + 1,
        },
    );
    check(
        Superblock {
            block_size: 512,
            ..sb
        },
        SuperblockError::BadBlockSize,
    );
    check(Superblock { clean: 2, ..sb }, SuperblockError::BadCleanFlag);
    check(
        Superblock {
            ring_entries: 3,
            ..sb
        },
        SuperblockError::Layout(LayoutError::RingEntries),
    );
    for area in 0..AREA_COUNT {
        let mut bad = sb;
        bad.areas[area].offset += PMR_AREA_ALIGN;
        check(bad, SuperblockError::AreaMismatch { area });
        let mut bad = sb;
        bad.areas[area].size = 0;
        check(bad, SuperblockError::AreaMismatch { area });
    }
    // Parameters that would aim past the PMR: the recomputed layout does not fit.
    check(
        Superblock {
            nr_blocks: sb.nr_blocks * 100,
            ..sb
        },
        SuperblockError::Layout(LayoutError::TooSmall {
            needed: PmrLayout::compute(LayoutParams {
                pmr_size: u64::MAX,
                nr_blocks: sb.nr_blocks * 100,
                ..params()
            })
            .unwrap()
            .used(),
        }),
    );
}
