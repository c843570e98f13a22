// SPDX-License-Identifier: LGPL-2.1 OR MIT

//! The Rust counterpart of libcxlccm's C example: STREAM_XFORM XOR over 8 launches of 32 KiB
//! kept in flight, results taken out of order, every record's checksum and bytes checked, every
//! 256-byte chunk exactly once.
//!
//!     xform [/dev/cxl_ccmN] [AXLE|RP|BS|AXLE_IRQ]

use cxlccm::{Configure, Device, Launch};
use std::process::ExitCode;

const LAUNCHES: usize = 8;
const LAUNCH_BYTES: usize = 32 * 1024;
const CHUNK: usize = 256;
const OPERAND: u32 = 0x5a5a_5a5a;

fn word(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761)
}

fn run(node: &str, mode: u32) -> Result<String, String> {
    let dev = Device::open(node).map_err(|e| format!("open {node}: {e}"))?;
    let mut cfg = Configure {
        mode,
        slot_size: 32,
        streaming_factor: 256,
        metadata_slots: 256,
        payload_slots: 1024,
        input_size: (LAUNCHES * LAUNCH_BYTES) as u64,
        ..Default::default()
    };
    let mut t = dev
        .configure(&mut cfg)
        .map_err(|e| format!("CONFIGURE: {e}"))?;
    for (i, w) in t.input().chunks_exact_mut(4).enumerate() {
        w.copy_from_slice(&word(i).to_le_bytes());
    }
    let mut tags = [0u32; LAUNCHES];
    for (l, tag) in tags.iter_mut().enumerate() {
        let xa = ccm_abi::abi::StreamXformArgs {
            op: 1, // XOR
            chunk_size: CHUNK as u32,
            operand: OPERAND,
            ..Default::default()
        };
        let mut launch = Launch {
            kernel_id: u32::from(ccm_abi::abi::KERNEL_STREAM_XFORM),
            input_offset: (l * LAUNCH_BYTES) as u64,
            input_size: LAUNCH_BYTES as u64,
            arg_size: std::mem::size_of::<ccm_abi::abi::StreamXformArgs>() as u32,
            args: xa.to_bytes(),
            ..Default::default()
        };
        *tag = t.launch(&mut launch).map_err(|e| format!("LAUNCH: {e}"))?;
    }
    let mut seen = vec![0u8; LAUNCHES * LAUNCH_BYTES / CHUNK];
    let (mut finals, mut records) = (0, 0);
    while finals < LAUNCHES {
        let mut taken = Vec::new();
        while let Some(r) = t.next().map_err(|e| format!("next: {e}"))? {
            check(&r, &tags, &mut seen)?;
            finals += usize::from(r.is_final());
            records += 1;
            taken.push(r);
        }
        t.release(taken).map_err(|e| format!("RELEASE: {e}"))?;
        if finals < LAUNCHES {
            t.wait(1, 10_000_000_000, true)
                .map_err(|e| format!("WAIT: {e}"))?;
        }
    }
    if let Some(c) = seen.iter().position(|&n| n != 1) {
        return Err(format!("chunk {c} arrived {} times", seen[c]));
    }
    let s = t.stats(false).map_err(|e| format!("STATS: {e}"))?;
    Ok(format!(
        "xform: {LAUNCHES} launches, {records} records, {} credit stalls, all {} chunks exact",
        s.credit_stalls,
        seen.len()
    ))
}

/// Checks one record against the input it was computed from.
fn check(r: &cxlccm::Record<'_>, tags: &[u32], seen: &mut [u8]) -> Result<(), String> {
    if r.is_error() {
        return Err(format!("launch {} failed: status {}", r.tag, r.status));
    }
    if r.is_empty() {
        return Ok(());
    }
    let l = tags
        .iter()
        .position(|&t| t == r.tag)
        .ok_or(format!("record of an unknown tag {}", r.tag))?;
    let off = r.result_offset as usize;
    if !r.checksum_ok() || r.len() > CHUNK || off % CHUNK != 0 || off + r.len() > LAUNCH_BYTES {
        return Err(format!(
            "record {} (tag {}, offset {off}) is wrong",
            r.index, r.tag
        ));
    }
    let bytes: Vec<u8> = r.payload.concat();
    for (i, w) in bytes.chunks_exact(4).enumerate() {
        let expect = word((l * LAUNCH_BYTES + off) / 4 + i) ^ OPERAND;
        if w != expect.to_le_bytes() {
            return Err(format!("record {}: word {i} is wrong", r.index));
        }
    }
    seen[(l * LAUNCH_BYTES + off) / CHUNK] += 1;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let node = args.get(1).map_or("/dev/cxl_ccm0", String::as_str);
    let mode = match args.get(2).map_or("AXLE", String::as_str) {
        "AXLE" => 0,
        "RP" => 1,
        "BS" => 2,
        "AXLE_IRQ" => 3,
        m => {
            eprintln!("xform: unknown mode {m}");
            return ExitCode::from(2);
        }
    };
    match run(node, mode) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("xform: {e}");
            ExitCode::from(1)
        }
    }
}
