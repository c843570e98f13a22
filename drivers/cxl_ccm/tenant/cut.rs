// SPDX-License-Identifier: GPL-2.0

//! How a launch's results are cut into records (RP, BS), as the device cuts them.

use crate::abi;
use crate::host_copy::Cut;
use crate::uapi;

/// The attention kernel's records: a block of `chunk_rows` query rows per head, the last block
/// shorter when the rows do not divide evenly.
///
/// The arguments come from user space unchecked (the device validates them): arguments whose
/// cut overflows are outside the documented limits (`head_dim` at most
/// `ATTENTION_MAX_HEAD_DIM`, `heads` at most `ATTENTION_MAX_HEADS`, a block within the
/// streaming factor), so the device ends such a launch in one error record without payload and
/// any cut serves.
fn attention_cut(a: &abi::AttentionArgs, sf: u32) -> Cut {
    checked_attention_cut(a, sf).unwrap_or(Cut::uniform(sf))
}

/// [`attention_cut`] in checked arithmetic; `None` on an overflow.
fn checked_attention_cut(a: &abi::AttentionArgs, sf: u32) -> Option<Cut> {
    // An output row is `head_dim` little-endian `i32`.
    let row = a.head_dim.checked_mul(4)?;
    let rows = match a.chunk_rows {
        0 => sf.checked_div(row)?,
        r => r,
    }
    .max(1);
    let chunk = rows.checked_mul(row)?;
    let last = a.q_rows % rows;
    if last == 0 {
        return Some(Cut::uniform(chunk));
    }
    Some(Cut {
        chunk,
        tail_from: u64::from(a.q_rows / rows)
            .checked_mul(u64::from(a.heads))?
            .checked_mul(u64::from(chunk))?,
        tail_chunk: last.checked_mul(row)?,
    })
}

/// How a launch's results are cut into records in the rings (RP, BS), as the device cuts them.
/// Total on any arguments: invalid ones end in an error record, whose cut is unused.
pub(super) fn launch_cut(arg: &uapi::Launch, sf: u32) -> Cut {
    let ssb = [abi::KERNEL_SSB_Q1_1, abi::KERNEL_SSB_Q1_2].map(u32::from);
    if ssb.contains(&arg.kernel_id) {
        // One 16-byte partial per chunk of rows.
        Cut::uniform(16)
    } else if arg.kernel_id == u32::from(abi::KERNEL_LLM_ATTENTION) {
        attention_cut(&abi::AttentionArgs::from_bytes(&arg.args), sf)
    } else if arg.kernel_id == u32::from(abi::KERNEL_DLRM_SLS) {
        let la = abi::SlsArgs::from_bytes(&arg.args);
        let vector = la.dim.saturating_mul(4).max(1);
        let samples = if la.chunk_samples == 0 {
            sf / vector
        } else {
            la.chunk_samples
        };
        Cut::uniform(samples.saturating_mul(vector))
    } else if arg.kernel_id == u32::from(abi::KERNEL_PAGERANK)
        || arg.kernel_id == u32::from(abi::KERNEL_SSSP)
    {
        let pa = abi::PageRankArgs::from_bytes(&arg.args);
        let vertices = if pa.chunk_vertices == 0 {
            sf / 8
        } else {
            pa.chunk_vertices
        };
        Cut::uniform(vertices.saturating_mul(8))
    } else if arg.kernel_id == u32::from(abi::KERNEL_KNN) {
        let ka = abi::KnnArgs::from_bytes(&arg.args);
        let rows = if ka.chunk_rows == 0 {
            sf / 8
        } else {
            ka.chunk_rows
        };
        Cut::uniform(rows.saturating_mul(8))
    } else {
        Cut::uniform(
            match abi::StreamXformArgs::from_bytes(&arg.args).chunk_size {
                0 => sf,
                c => c,
            },
        )
    }
}
