// SPDX-License-Identifier: GPL-2.0

//! The ABI as a table of lines, from Rust and (by a generated C program) from the C header.
//!
//! Each line is `kind key value...`:
//!
//! ```text
//! sizeof cxl_ccm_metadata_record 32
//! alignof cxl_ccm_metadata_record 8
//! offsetof cxl_ccm_metadata_record.result_offset 16 8      (offset, then field size)
//! const CXL_CCM_IOC_LAUNCH 3226521474
//! crc32c digits 3808858755
//! ```
//!
//! [`rust_table`] renders the Rust side from `size_of`, `align_of`, `offset_of!` and the constants
//! of [`crate::uapi`]; [`c_program`] generates a C program that prints the same lines from the
//! header with `sizeof`, `_Alignof`, `offsetof` and the macros. [`compare`] matches the two by key.
//! [`check_tiling`] proves a structure has no implicit padding and no field missing from its
//! description: its fields, sorted by offset, cover `0..size` exactly once.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write;
use core::mem::{align_of, offset_of, size_of};

use crate::{abi, uapi};

/// One field of a structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    /// Field name, the same in C and Rust.
    pub name: &'static str,
    /// Byte offset.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// One structure: its C name and its Rust layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    /// The C name, without `struct` (for device-only types, the Rust name).
    pub name: &'static str,
    /// `size_of`.
    pub size: usize,
    /// `align_of`.
    pub align: usize,
    /// Every field, in declaration order.
    pub fields: Vec<FieldLayout>,
}

/// One constant: its C macro name and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    /// The C macro name.
    pub name: &'static str,
    /// Its value, as `unsigned long long`.
    pub value: u64,
}

/// One checksum test vector, hashed on both sides with the ABI's CRC32C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrcVector {
    /// A label without spaces.
    pub label: &'static str,
    /// The bytes.
    pub data: Vec<u8>,
}

/// The size of a field, from an accessor (works without a value of the structure).
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// Describes a `#[repr(C)]` type: `describe!("c_name", Type: [field, ...])`.
macro_rules! describe {
    ($name:literal, $ty:ty: [$($field:ident),* $(,)?]) => {
        StructLayout {
            name: $name,
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: vec![$(
                FieldLayout {
                    name: stringify!($field),
                    offset: offset_of!($ty, $field),
                    size: field_size(|s: &$ty| &s.$field),
                },
            )*],
        }
    };
}

/// The user-visible structures: every `struct cxl_ccm_*` of the header.
pub fn uapi_structs() -> Vec<StructLayout> {
    use uapi::*;
    vec![
        describe!("cxl_ccm_metadata_record", MetadataRecord: [
            seq, tag, payload_index, length, result_offset, checksum, flags, status,
        ]),
        describe!("cxl_ccm_ring_header", RingHeader: [
            tail, capacity, slot_size, reserved0, reserved,
        ]),
        describe!("cxl_ccm_launch_header", LaunchHeader: [ head, slots, reserved ]),
        describe!("cxl_ccm_ring_headers", RingHeaders: [ metadata, payload, launch, reserved ]),
        describe!("cxl_ccm_knn_args", KnnArgs: [ dim, rows, chunk_rows, reserved0, reserved ]),
        describe!("cxl_ccm_sssp_args", SsspArgs: [
            vertices, edges, chunk_vertices, reserved0, reserved,
        ]),
        describe!("cxl_ccm_pagerank_args", PageRankArgs: [
            vertices, edges, chunk_vertices, reserved0, reserved,
        ]),
        describe!("cxl_ccm_sls_args", SlsArgs: [
            dim, rows, samples, pooling, chunk_samples, reserved0, reserved,
        ]),
        describe!("cxl_ccm_attention_args", AttentionArgs: [
            tokens, q_first, q_rows, heads, head_dim, chunk_rows, shift, reserved,
        ]),
        describe!("cxl_ccm_ssb_args", SsbArgs: [
            rows, chunk_rows, date_lo, date_hi, discount_lo, discount_hi, quantity_lo, quantity_hi,
        ]),
        describe!("cxl_ccm_stream_xform_args", StreamXformArgs: [
            op, chunk_size, operand, reserved0, reserved,
        ]),
        describe!("cxl_ccm_info", Info: [
            flags, abi_version, device_version, max_tenants, caps, kernels, mem_size,
            min_slot_size, max_slot_size, max_ring_slots, launch_slots, max_release, reserved0,
            reserved,
        ]),
        describe!("cxl_ccm_configure", Configure: [
            flags, mode, slot_size, metadata_slots, payload_slots, streaming_factor,
            streaming_order, index_base, poll_interval_ns, input_size, tenant, reserved0,
            headers_size, metadata_ring_size, payload_ring_size, reserved,
        ]),
        describe!("cxl_ccm_launch", Launch: [
            kernel_id, flags, input_offset, input_size, arg_size, tag, args, reserved,
        ]),
        describe!("cxl_ccm_release_entry", ReleaseEntry: [ payload_index, length ]),
        describe!("cxl_ccm_release", Release: [
            entries, count, flags, metadata_head, processed, metadata_head_published,
            payload_head_published, reserved,
        ]),
        describe!("cxl_ccm_stats", Stats: [
            flags, tenant, launched, launches_completed, records, payload_bytes,
            backpressure_waits, backpressure_ns, credit_stalls, dma_batches, polls, empty_polls,
            credits_published, interrupts, errors, ccm_busy_ns, credit_wait_ns, host_stall_ns, unpublished, model_deficit_ns, model_late_chunks,
        ]),
        describe!("cxl_ccm_wait", Wait: [
            min_records, metadata_head, timeout_ns, flags, ready, metadata_tail, reserved0,
            reserved,
        ]),
    ]
}

/// The device-only structures (not in the C header); checked for tiling only.
pub fn device_structs() -> Vec<StructLayout> {
    use abi::*;
    vec![
        describe!("GlobalRegs", GlobalRegs: [
            magic, version, caps, kernels, mem_size, tenant_windows, max_tenants, launch_slots,
            max_segments, min_slot_size, max_slot_size, max_ring_slots, dev_ctrl, dev_status,
            heartbeat, reserved0, link_cxl_mem_rtt_ns, link_cxl_io_rtt_ns, link_ps_per_byte,
            link_remote_poll_ns, link_irq_ns, model_dilation_milli, reserved,
        ]),
        describe!("TenantRegs", TenantRegs: [
            ctrl, mode, slot_size, streaming_factor, metadata_slots, payload_slots,
            streaming_order, index_base, mem_base, mem_size, desc_table, desc_count,
            schedule, status, error, launches, records, payload_bytes, credit_stalls,
            dma_batches, busy_ns, credit_wait_ns, mbox_cmd, mbox_arg, mbox_doorbell, mbox_reserved0,
            mbox_done, mbox_status, mbox_ret, credit_blocked, unpublished, model_deficit_ns,
            model_late, irq_ctrl, irq_ack, irq_vector, irq_reserved0, irq_seq, irq_cause,
            checksum_table, checksum_entries, checksum_reserved0, checksum_base, reserved,
        ]),
        describe!("LaunchPacket", LaunchPacket: [
            tag, kernel_id, flags, tenant, arg_size, input_size, input_base, output_base, args,
        ]),
        describe!("CreditLine", CreditLine: [ metadata_head, payload_head, reserved ]),
        describe!("SyncCompletion", SyncCompletion: [ done_tag, status, result_bytes, reserved ]),
        describe!("TenantWindow", TenantWindow: [ launch, credit, completion, reserved ]),
        describe!("DmaSegment", DmaSegment: [ bus_addr, len, flags ]),
        describe!("DescriptorTable", DescriptorTable: [
            magic, segment_count, region_size, headers_offset, metadata_offset, payload_offset,
            reserved,
        ]),
    ]
}

/// `constants!["NAME" => value, ...]`: a list of [`Constant`]s, values widened to `u64`.
macro_rules! constants {
    ($($name:literal => $value:expr),* $(,)?) => {
        vec![$(Constant { name: $name, value: $value as u64 },)*]
    };
}

/// Every user-visible constant: every object-like `CXL_CCM_*` macro of the header.
pub fn uapi_constants() -> Vec<Constant> {
    use uapi::*;
    constants![
        "CXL_CCM_ABI_VERSION" => UAPI_VERSION,
        "CXL_CCM_LAUNCH_SLOTS" => LAUNCH_SLOTS,
        "CXL_CCM_MAX_ARG_SIZE" => MAX_ARG_SIZE,
        "CXL_CCM_METADATA_RECORD_SIZE" => METADATA_RECORD_SIZE,
        "CXL_CCM_MIN_SLOT_SIZE" => MIN_SLOT_SIZE,
        "CXL_CCM_MAX_SLOT_SIZE" => MAX_SLOT_SIZE,
        "CXL_CCM_DEFAULT_SLOT_SIZE" => DEFAULT_SLOT_SIZE,
        "CXL_CCM_DEFAULT_STREAMING_FACTOR" => DEFAULT_STREAMING_FACTOR,
        "CXL_CCM_MAX_RING_SLOTS" => MAX_RING_SLOTS,
        "CXL_CCM_MODE_AXLE" => MODE_AXLE,
        "CXL_CCM_MODE_RP" => MODE_RP,
        "CXL_CCM_MODE_BS" => MODE_BS,
        "CXL_CCM_MODE_AXLE_IRQ" => MODE_AXLE_IRQ,
        "CXL_CCM_ORDER_OUT_OF_ORDER" => ORDER_OUT_OF_ORDER,
        "CXL_CCM_ORDER_IN_ORDER" => ORDER_IN_ORDER,
        "CXL_CCM_CAP_MODE_AXLE" => CAP_MODE_AXLE,
        "CXL_CCM_CAP_MODE_RP" => CAP_MODE_RP,
        "CXL_CCM_CAP_MODE_BS" => CAP_MODE_BS,
        "CXL_CCM_CAP_MODE_AXLE_IRQ" => CAP_MODE_AXLE_IRQ,
        "CXL_CCM_CAP_IN_ORDER" => CAP_IN_ORDER,
        "CXL_CCM_KERNEL_NOP" => KERNEL_NOP,
        "CXL_CCM_KERNEL_STREAM_XFORM" => KERNEL_STREAM_XFORM,
        "CXL_CCM_KERNEL_KNN" => KERNEL_KNN,
        "CXL_CCM_KERNEL_SSSP" => KERNEL_SSSP,
        "CXL_CCM_KERNEL_PAGERANK" => KERNEL_PAGERANK,
        "CXL_CCM_KERNEL_SSB_Q1_1" => KERNEL_SSB_Q1_1,
        "CXL_CCM_KERNEL_SSB_Q1_2" => KERNEL_SSB_Q1_2,
        "CXL_CCM_KERNEL_LLM_ATTENTION" => KERNEL_LLM_ATTENTION,
        "CXL_CCM_KERNEL_DLRM_SLS" => KERNEL_DLRM_SLS,
        "CXL_CCM_KERNEL_ID_LIMIT" => KERNEL_ID_LIMIT,
        "CXL_CCM_KNN_MAX_DIM" => KNN_MAX_DIM,
        "CXL_CCM_SLS_MAX_DIM" => SLS_MAX_DIM,
        "CXL_CCM_ATTENTION_MAX_HEAD_DIM" => ATTENTION_MAX_HEAD_DIM,
        "CXL_CCM_ATTENTION_MAX_HEADS" => ATTENTION_MAX_HEADS,
        "CXL_CCM_XFORM_OP_COPY" => XFORM_OP_COPY,
        "CXL_CCM_XFORM_OP_XOR" => XFORM_OP_XOR,
        "CXL_CCM_XFORM_OP_ADD" => XFORM_OP_ADD,
        "CXL_CCM_STATUS_OK" => STATUS_OK,
        "CXL_CCM_STATUS_BAD_KERNEL" => STATUS_BAD_KERNEL,
        "CXL_CCM_STATUS_BAD_ARGS" => STATUS_BAD_ARGS,
        "CXL_CCM_STATUS_BAD_RANGE" => STATUS_BAD_RANGE,
        "CXL_CCM_STATUS_BAD_PACKET" => STATUS_BAD_PACKET,
        "CXL_CCM_STATUS_DMA_FAULT" => STATUS_DMA_FAULT,
        "CXL_CCM_STATUS_BAD_CONFIG" => STATUS_BAD_CONFIG,
        "CXL_CCM_STATUS_BAD_DESCRIPTOR" => STATUS_BAD_DESCRIPTOR,
        "CXL_CCM_STATUS_ABORTED" => STATUS_ABORTED,
        "CXL_CCM_STATUS_BAD_COMMAND" => STATUS_BAD_COMMAND,
        "CXL_CCM_MD_FLAG_FINAL" => MD_FLAG_FINAL,
        "CXL_CCM_MD_FLAG_ERROR" => MD_FLAG_ERROR,
        "CXL_CCM_LAUNCH_SYNC" => LAUNCH_SYNC,
        "CXL_CCM_RELEASE_METADATA" => RELEASE_METADATA,
        "CXL_CCM_RELEASE_PUBLISH" => RELEASE_PUBLISH,
        "CXL_CCM_RELEASE_MAX" => RELEASE_MAX,
        "CXL_CCM_STATS_RESET" => STATS_RESET,
        "CXL_CCM_WAIT_FOREVER" => WAIT_FOREVER,
        "CXL_CCM_WAIT_FLAG_DEADLOCK" => WAIT_FLAG_DEADLOCK,
        "CXL_CCM_CONFIGURE_FIFO" => CONFIGURE_FIFO,
        "CXL_CCM_MMAP_HEADERS" => MMAP_HEADERS,
        "CXL_CCM_MMAP_METADATA" => MMAP_METADATA,
        "CXL_CCM_MMAP_PAYLOAD" => MMAP_PAYLOAD,
        "CXL_CCM_MMAP_INPUT" => MMAP_INPUT,
        "CXL_CCM_MMAP_REGION_SIZE" => MMAP_REGION_SIZE,
        "CXL_CCM_IOC_MAGIC" => IOC_MAGIC,
        "CXL_CCM_IOC_INFO" => IOC_INFO,
        "CXL_CCM_IOC_CONFIGURE" => IOC_CONFIGURE,
        "CXL_CCM_IOC_LAUNCH" => IOC_LAUNCH,
        "CXL_CCM_IOC_RELEASE" => IOC_RELEASE,
        "CXL_CCM_IOC_STATS" => IOC_STATS,
        "CXL_CCM_IOC_WAIT" => IOC_WAIT,
        "CXL_CCM_CRC32C_POLY" => CRC32C_POLY,
    ]
}

/// Test vectors for the record checksum: empty, the standard check string, every byte value, and
/// a longer pseudo-random buffer.
pub fn crc_vectors() -> Vec<CrcVector> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let random = (0..1031)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect();
    vec![
        CrcVector {
            label: "empty",
            data: Vec::new(),
        },
        CrcVector {
            label: "digits",
            data: b"123456789".to_vec(),
        },
        CrcVector {
            label: "bytes",
            data: (0..=255).collect(),
        },
        CrcVector {
            label: "random",
            data: random,
        },
    ]
}

/// The key of a line: its first two words (`kind name`).
fn key(line: &str) -> String {
    line.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value of a line: the words after the key.
fn value(line: &str) -> String {
    line.split_whitespace()
        .skip(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Renders the table lines of `structs`, `constants` and `crcs` from the Rust side.
pub fn render(structs: &[StructLayout], constants: &[Constant], crcs: &[CrcVector]) -> Vec<String> {
    let mut lines = Vec::new();
    for s in structs {
        lines.push(format!("sizeof {} {}", s.name, s.size));
        lines.push(format!("alignof {} {}", s.name, s.align));
        for f in &s.fields {
            lines.push(format!(
                "offsetof {}.{} {} {}",
                s.name, f.name, f.offset, f.size
            ));
        }
    }
    for c in constants {
        lines.push(format!("const {} {}", c.name, c.value));
    }
    for v in crcs {
        lines.push(format!("crc32c {} {}", v.label, uapi::crc32c(&v.data)));
    }
    for d in WEIGHT_DELTAS {
        lines.push(format!("weight {} {}", d, uapi::attention_weight(d)));
    }
    lines
}

/// Score differences at which both sides' attention weight is compared: each edge of the
/// fixed-point interpolation and the cut-off.
const WEIGHT_DELTAS: [u64; 12] = [0, 1, 15, 16, 17, 31, 100, 496, 511, 512, 513, u64::MAX];

/// The table of the user ABI as the Rust side sees it.
pub fn rust_table() -> Vec<String> {
    render(&uapi_structs(), &uapi_constants(), &crc_vectors())
}

/// A C program that includes `<linux/cxl_ccm.h>` and prints the table of the same `structs`,
/// `constants` and `crcs` as the C side sees it.
pub fn c_program(structs: &[StructLayout], constants: &[Constant], crcs: &[CrcVector]) -> String {
    let mut c = String::new();
    // `write!` into a `String` cannot fail.
    let _ = writeln!(
        c,
        "/* Generated by tools/ccm-abi: prints the ABI table of <linux/cxl_ccm.h>. */"
    );
    c.push_str("#include <stddef.h>\n#include <stdio.h>\n#include <linux/cxl_ccm.h>\n\n");
    for v in crcs {
        let bytes: Vec<String> = v.data.iter().map(|b| format!("{b}")).collect();
        // A zero-length array is not C; the length is passed separately.
        let _ = writeln!(
            c,
            "static const unsigned char crc_{}[] = {{ {} }};",
            v.label,
            if bytes.is_empty() {
                String::from("0")
            } else {
                bytes.join(", ")
            }
        );
    }
    c.push_str("\nint main(void)\n{\n");
    for s in structs {
        let ty = format!("struct {}", s.name);
        let _ = writeln!(c, "\tprintf(\"sizeof {} %zu\\n\", sizeof({ty}));", s.name);
        let _ = writeln!(
            c,
            "\tprintf(\"alignof {} %zu\\n\", (size_t)_Alignof({ty}));",
            s.name
        );
        for f in &s.fields {
            let _ = writeln!(
                c,
                "\tprintf(\"offsetof {}.{} %zu %zu\\n\", offsetof({ty}, {}), sizeof((({ty} *)0)->{}));",
                s.name, f.name, f.name, f.name
            );
        }
    }
    for k in constants {
        let _ = writeln!(
            c,
            "\tprintf(\"const {} %llu\\n\", (unsigned long long)({}));",
            k.name, k.name
        );
    }
    for v in crcs {
        let _ = writeln!(
            c,
            "\tprintf(\"crc32c {} %u\\n\", (unsigned int)cxl_ccm_crc32c(crc_{}, {}));",
            v.label,
            v.label,
            v.data.len()
        );
    }
    for d in WEIGHT_DELTAS {
        let _ = writeln!(
            c,
            "\tprintf(\"weight {d} %llu\\n\", (unsigned long long)cxl_ccm_attention_weight({d}ULL));"
        );
    }
    c.push_str("\treturn 0;\n}\n");
    c
}

/// Compares the Rust table with the C table line by line, by key.
///
/// Returns one message per difference: a key whose values differ, a key only one side has, or a
/// key that appears twice.
pub fn compare(rust: &[String], c: &[String]) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let index = |lines: &[String], side: &str, errors: &mut Vec<String>| {
        let mut map = BTreeMap::new();
        for line in lines {
            if map.insert(key(line), value(line)).is_some() {
                errors.push(format!("{side}: duplicate line for `{}`", key(line)));
            }
        }
        map
    };
    let rust_map = index(rust, "Rust", &mut errors);
    let c_map = index(c, "C", &mut errors);
    for (k, rv) in &rust_map {
        match c_map.get(k) {
            None => errors.push(format!("`{k}`: in Rust ({rv}) but not in C")),
            Some(cv) if cv != rv => errors.push(format!("`{k}`: Rust says {rv}, C says {cv}")),
            Some(_) => {}
        }
    }
    for (k, cv) in &c_map {
        if !rust_map.contains_key(k) {
            errors.push(format!("`{k}`: in C ({cv}) but not in Rust"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks that the fields of `s`, sorted by offset, cover `0..size` exactly: no implicit padding
/// (which would leak kernel memory to user space and make `AsBytes` unsound), no overlap, and no
/// field missing from the description.
///
/// A structure that tiles here has the same layout on every ABI whose alignments are no larger
/// than this target's (e.g. i386, where `__u64` is 4-aligned): each field already starts exactly
/// where the previous one ends, at a multiple of its alignment, and the size is a multiple of the
/// structure's alignment, so a smaller alignment inserts no padding anywhere.
pub fn check_tiling(s: &StructLayout) -> Result<(), String> {
    let mut fields: Vec<&FieldLayout> = s.fields.iter().collect();
    fields.sort_by_key(|f| f.offset);
    let mut end = 0;
    for f in fields {
        if f.offset != end {
            let what = if f.offset > end {
                "a gap"
            } else {
                "an overlap"
            };
            return Err(format!(
                "{}: {what} before `{}` (bytes {}..{} expected next, field at {})",
                s.name,
                f.name,
                end,
                f.offset.max(end),
                f.offset
            ));
        }
        end = f.offset + f.size;
    }
    if end != s.size {
        return Err(format!(
            "{}: fields end at {end}, size is {}",
            s.name, s.size
        ));
    }
    if s.size % s.align != 0 {
        return Err(format!(
            "{}: size {} is not a multiple of alignment {}",
            s.name, s.size, s.align
        ));
    }
    Ok(())
}

/// The names of the object-like `CXL_CCM_*` macros and of the `struct cxl_ccm_*` definitions in a
/// header's text, so that a test can require the tables to cover all of them.
pub fn header_names(header: &str) -> (Vec<String>, Vec<String>) {
    let mut macros = Vec::new();
    let mut structs = Vec::new();
    for line in header.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("#define ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let function_like = rest[name.len()..].starts_with('(');
            if name.starts_with("CXL_CCM_") && !function_like {
                macros.push(name);
            }
        } else if let Some(rest) = line.strip_prefix("struct ") {
            let mut words = rest.split_whitespace();
            if let (Some(name), Some("{")) = (words.next(), words.next()) {
                if name.starts_with("cxl_ccm_") {
                    structs.push(String::from(name));
                }
            }
        }
    }
    (macros, structs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic() -> (Vec<StructLayout>, Vec<Constant>) {
        let s = StructLayout {
            name: "demo",
            size: 16,
            align: 8,
            fields: vec![
                FieldLayout {
                    name: "a",
                    offset: 0,
                    size: 4,
                },
                FieldLayout {
                    name: "b",
                    offset: 4,
                    size: 4,
                },
                FieldLayout {
                    name: "c",
                    offset: 8,
                    size: 8,
                },
            ],
        };
        (
            vec![s],
            vec![Constant {
                name: "DEMO_X",
                value: 7,
            }],
        )
    }

    #[test]
    fn identical_tables_compare_equal() {
        let (s, k) = synthetic();
        let t = render(&s, &k, &[]);
        assert_eq!(compare(&t, &t), Ok(()));
    }

    #[test]
    fn a_changed_offset_is_detected() {
        let (s, k) = synthetic();
        let rust = render(&s, &k, &[]);
        let mut moved = s.clone();
        moved[0].fields[2].offset = 12;
        let c = render(&moved, &k, &[]);
        let errors = compare(&rust, &c).unwrap_err();
        assert_eq!(
            errors,
            vec![String::from(
                "`offsetof demo.c`: Rust says 8 8, C says 12 8"
            )]
        );
    }

    #[test]
    fn changed_sizes_and_constants_are_detected() {
        let (s, k) = synthetic();
        let rust = render(&s, &k, &[]);
        let mut grown = s.clone();
        grown[0].size = 24;
        let mut k2 = k.clone();
        k2[0].value = 8;
        let errors = compare(&rust, &render(&grown, &k2, &[])).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("DEMO_X") || errors[1].contains("DEMO_X"));
        assert!(errors.iter().any(|e| e.contains("sizeof demo")));
    }

    #[test]
    fn missing_extra_and_duplicate_lines_are_detected() {
        let (s, k) = synthetic();
        let rust = render(&s, &k, &[]);
        let mut c = rust.clone();
        let removed = c.remove(3);
        c.push(String::from("const DEMO_Y 1"));
        c.push(c[0].clone());
        let errors = compare(&rust, &c).unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors
            .iter()
            .any(|e| e.contains(&key(&removed)) && e.contains("not in C")));
        assert!(errors
            .iter()
            .any(|e| e.contains("DEMO_Y") && e.contains("not in Rust")));
        assert!(errors.iter().any(|e| e.contains("duplicate")));
    }

    #[test]
    fn tiling_detects_gaps_overlaps_and_missing_fields() {
        let (s, _) = synthetic();
        assert_eq!(check_tiling(&s[0]), Ok(()));

        let mut gap = s[0].clone();
        gap.fields[1].size = 2; // 2 bytes of implicit padding before `c`
        assert!(check_tiling(&gap).unwrap_err().contains("a gap before `c`"));

        let mut overlap = s[0].clone();
        overlap.fields[1].size = 6;
        assert!(check_tiling(&overlap)
            .unwrap_err()
            .contains("an overlap before `c`"));

        let mut missing = s[0].clone();
        missing.fields.pop(); // a field left out of the description
        assert!(check_tiling(&missing)
            .unwrap_err()
            .contains("fields end at 8"));
    }

    #[test]
    fn every_abi_struct_tiles() {
        for s in uapi_structs().iter().chain(device_structs().iter()) {
            assert_eq!(check_tiling(s), Ok(()), "{}", s.name);
        }
    }

    #[test]
    fn the_rust_table_has_unique_keys() {
        let t = rust_table();
        assert_eq!(compare(&t, &t), Ok(()));
    }

    #[test]
    fn header_names_finds_macros_and_structs() {
        let text = "#define CXL_CCM_A 1\n#define CXL_CCM_F(x) (x)\n#define OTHER 2\n\
                    struct cxl_ccm_s {\n\tstruct cxl_ccm_t inner;\n};\n";
        let (macros, structs) = header_names(text);
        assert_eq!(macros, vec![String::from("CXL_CCM_A")]);
        assert_eq!(structs, vec![String::from("cxl_ccm_s")]);
    }

    #[test]
    fn the_c_program_names_every_line() {
        let (s, k) = synthetic();
        let v = vec![CrcVector {
            label: "e",
            data: Vec::new(),
        }];
        let program = c_program(&s, &k, &v);
        assert!(program.contains("offsetof(struct demo, c)"));
        assert!(program.contains("(unsigned long long)(DEMO_X)"));
        assert!(program.contains("cxl_ccm_crc32c(crc_e, 0)"));
    }
}
