// SPDX-License-Identifier: GPL-2.0

//! The STREAM_XFORM kernel ([`KERNEL_STREAM_XFORM`](crate::abi::KERNEL_STREAM_XFORM)): an element-wise transform of a vector of
//! little-endian `u32` with a per-chunk checksum.
//!
//! Each output word is `op(input word, operand)` ([`XformOp`]); the output has the size of the
//! input. The output is cut into *chunks* of `chunk_size` bytes (the last one may be shorter);
//! each chunk becomes one result record, whose `result_offset` is the chunk's byte offset and
//! whose `checksum` is the CRC32C ([`crc32c`](crate::abi::crc32c)) of the chunk's output bytes. A chunk is also the
//! unit of work of the engine's scheduler (`scheduler`): µthread workers transform chunks
//! independently.
//!
//! # Input sizes
//!
//! The input must be a whole number of 4-byte words: an input size that is not a multiple of 4 is
//! **refused** ([`XformError::InputNotWordMultiple`], reported as [`STATUS_BAD_ARGS`]) rather than
//! having its trailing bytes copied unchanged, because the kernel is defined on a vector of `u32`
//! and a silently untransformed tail would pass for a result. An empty input has no chunk; the
//! device reports it with a single final record of no payload.
//!
//! # Arguments
//!
//! [`StreamXformArgs`]: `op` one of `XFORM_OP_*`; `chunk_size` a multiple of 4 and at most the
//! tenant's streaming factor, or 0 for the streaming factor itself; reserved fields zero. Anything
//! else is [`STATUS_BAD_ARGS`], as is an `arg_size` other than `size_of::<StreamXformArgs>()`.
//!
//! # Host-side verification
//!
//! [`verify_record`] recomputes a record's expected payload from the input the host owns, by a
//! separate word-at-a-time implementation ([`reference_word`]), and checks a received record
//! against it: place, length, every word and the checksum.

use core::fmt;
use core::mem::size_of;

use crate::abi::{
    crc32c_update, StreamXformArgs, MAX_ARG_SIZE, STATUS_BAD_ARGS, XFORM_OP_ADD, XFORM_OP_COPY,
    XFORM_OP_XOR,
};

/// Bytes per element.
pub const WORD: u32 = 4;

/// Errors of the STREAM_XFORM kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XformError {
    /// `op` is not one of `XFORM_OP_*`.
    UnknownOp,
    /// `chunk_size` is not a multiple of 4.
    ChunkNotWordMultiple,
    /// `chunk_size` exceeds the streaming factor.
    ChunkAboveStreamingFactor,
    /// The streaming factor is zero or not a multiple of 4 (so a 0 `chunk_size` cannot use it).
    BadStreamingFactor,
    /// A reserved argument field is not zero.
    ReservedNonZero,
    /// The launch's `arg_size` is not `size_of::<StreamXformArgs>()`.
    BadArgSize,
    /// The input size is not a multiple of 4.
    InputNotWordMultiple,
    /// The input is larger than a launch can describe (`u32::MAX` bytes).
    InputTooLarge,
    /// The output buffer is not exactly as large as the input (or the chunk).
    OutputSizeMismatch,
    /// A chunk larger than `chunk_size` was handed to [`Xform::apply_chunk`].
    ChunkTooLarge,
}

impl XformError {
    /// The `STATUS_*` code the device reports for this error.
    pub const fn status(self) -> u16 {
        STATUS_BAD_ARGS
    }
}

impl fmt::Display for XformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = match self {
            Self::UnknownOp => "unknown transform op",
            Self::ChunkNotWordMultiple => "chunk size is not a multiple of 4",
            Self::ChunkAboveStreamingFactor => "chunk size exceeds the streaming factor",
            Self::BadStreamingFactor => "streaming factor is zero or not a multiple of 4",
            Self::ReservedNonZero => "reserved argument field is not zero",
            Self::BadArgSize => "argument size is not that of StreamXformArgs",
            Self::InputNotWordMultiple => "input size is not a multiple of 4",
            Self::InputTooLarge => "input exceeds u32::MAX bytes",
            Self::OutputSizeMismatch => "output size differs from input size",
            Self::ChunkTooLarge => "chunk exceeds the chunk size",
        };
        f.write_str(msg)
    }
}

/// The element-wise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XformOp {
    /// [`XFORM_OP_COPY`]: `out = in`.
    Copy,
    /// [`XFORM_OP_XOR`]: `out = in ^ operand`.
    Xor,
    /// [`XFORM_OP_ADD`]: `out = in + operand`, wrapping.
    Add,
}

impl XformOp {
    /// Decodes [`StreamXformArgs::op`].
    pub const fn from_abi(op: u32) -> Result<Self, XformError> {
        match op {
            XFORM_OP_COPY => Ok(Self::Copy),
            XFORM_OP_XOR => Ok(Self::Xor),
            XFORM_OP_ADD => Ok(Self::Add),
            _ => Err(XformError::UnknownOp),
        }
    }

    /// Applies the operation to one element.
    pub const fn apply(self, word: u32, operand: u32) -> u32 {
        match self {
            Self::Copy => word,
            Self::Xor => word ^ operand,
            Self::Add => word.wrapping_add(operand),
        }
    }
}

/// The CRC32C state a chunk's checksum starts from (see [`Xform::apply_piece`]).
pub const CRC_START: u32 = !0;

/// One chunk of a launch's output: `length` bytes at byte `offset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChunkSpan {
    /// Byte offset in the input and output (the record's `result_offset`).
    pub offset: u32,
    /// Bytes, a multiple of 4 in `1..=chunk_size`.
    pub length: u32,
}

/// The result of transforming one chunk: what the chunk's metadata record carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChunkResult {
    /// Byte offset of the chunk in the output ([`MetadataRecord::result_offset`]).
    ///
    /// [`MetadataRecord::result_offset`]: crate::abi::MetadataRecord::result_offset
    pub offset: u32,
    /// Bytes of the chunk ([`MetadataRecord::length`](crate::abi::MetadataRecord::length)).
    pub length: u32,
    /// CRC32C of the chunk's output bytes.
    pub checksum: u32,
}

/// A validated STREAM_XFORM launch configuration.
///
/// # Invariants
///
/// `chunk_size` is a non-zero multiple of [`WORD`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Xform {
    op: XformOp,
    operand: u32,
    chunk_size: u32,
}

impl Xform {
    /// Validates `args` for a tenant whose streaming factor is `streaming_factor` bytes.
    pub const fn from_args(
        args: &StreamXformArgs,
        streaming_factor: u32,
    ) -> Result<Self, XformError> {
        let op = match XformOp::from_abi(args.op) {
            Ok(op) => op,
            Err(e) => return Err(e),
        };
        if args.reserved0 != 0 || args.reserved[0] != 0 || args.reserved[1] != 0 {
            return Err(XformError::ReservedNonZero);
        }
        let chunk_size = if args.chunk_size == 0 {
            if streaming_factor == 0 || streaming_factor % WORD != 0 {
                return Err(XformError::BadStreamingFactor);
            }
            streaming_factor
        } else {
            if args.chunk_size % WORD != 0 {
                return Err(XformError::ChunkNotWordMultiple);
            }
            if args.chunk_size > streaming_factor {
                return Err(XformError::ChunkAboveStreamingFactor);
            }
            args.chunk_size
        };
        // INVARIANT: `chunk_size` is non-zero and a multiple of `WORD`, checked above.
        Ok(Self {
            op,
            operand: args.operand,
            chunk_size,
        })
    }

    /// Decodes and validates the argument block of a launch packet.
    pub const fn from_packet(
        args: &[u8; MAX_ARG_SIZE as usize],
        arg_size: u16,
        streaming_factor: u32,
    ) -> Result<Self, XformError> {
        if arg_size as usize != size_of::<StreamXformArgs>() {
            return Err(XformError::BadArgSize);
        }
        Self::from_args(&StreamXformArgs::from_bytes(args), streaming_factor)
    }

    /// The operation.
    pub const fn op(&self) -> XformOp {
        self.op
    }

    /// The operand.
    pub const fn operand(&self) -> u32 {
        self.operand
    }

    /// Output bytes per record (the resolved `chunk_size`).
    pub const fn chunk_size(&self) -> u32 {
        self.chunk_size
    }

    /// Checks an input size and returns it as `u32`.
    pub const fn check_input(input_len: usize) -> Result<u32, XformError> {
        if input_len > u32::MAX as usize {
            return Err(XformError::InputTooLarge);
        }
        let len = input_len as u32;
        if len % WORD != 0 {
            return Err(XformError::InputNotWordMultiple);
        }
        Ok(len)
    }

    /// Number of chunks (records) of an input of `input_len` bytes; 0 for an empty input.
    pub const fn chunk_count(&self, input_len: usize) -> Result<u32, XformError> {
        match Self::check_input(input_len) {
            Ok(len) => Ok(len.div_ceil(self.chunk_size)),
            Err(e) => Err(e),
        }
    }

    /// Chunk `index` of an input of `input_len` bytes, if there is such a chunk.
    pub const fn chunk(&self, input_len: u32, index: u32) -> Option<ChunkSpan> {
        // Cannot overflow in u64: both factors are below 2^32.
        let offset = index as u64 * self.chunk_size as u64;
        if offset >= input_len as u64 {
            return None;
        }
        let rest = input_len - offset as u32;
        let length = if rest < self.chunk_size {
            rest
        } else {
            self.chunk_size
        };
        Some(ChunkSpan {
            offset: offset as u32,
            length,
        })
    }

    /// Transforms one chunk: `input` into `output` (of the same length, a multiple of 4, at most
    /// `chunk_size`); returns the CRC32C of the output bytes.
    pub fn apply_chunk(&self, input: &[u8], output: &mut [u8]) -> Result<u32, XformError> {
        let len = Self::check_input(input.len())?;
        if len > self.chunk_size {
            return Err(XformError::ChunkTooLarge);
        }
        Ok(!self.apply_piece(input, output, CRC_START)?)
    }

    /// Transforms one piece of a chunk (a multiple of 4 bytes) and continues the chunk's CRC32C
    /// state `crc` (start with [`CRC_START`]; the checksum is the final state inverted). Lets an
    /// engine stream a chunk through a small buffer.
    pub fn apply_piece(
        &self,
        input: &[u8],
        output: &mut [u8],
        crc: u32,
    ) -> Result<u32, XformError> {
        if input.len() != output.len() {
            return Err(XformError::OutputSizeMismatch);
        }
        Self::check_input(input.len())?;
        let mut crc = crc;
        for (src, dst) in input
            .chunks_exact(WORD as usize)
            .zip(output.chunks_exact_mut(WORD as usize))
        {
            let word = u32::from_le_bytes([src[0], src[1], src[2], src[3]]);
            let out = self.op.apply(word, self.operand).to_le_bytes();
            dst.copy_from_slice(&out);
            crc = crc32c_update(crc, &out);
        }
        Ok(crc)
    }

    /// Transforms a whole input into `output` (of the same length) chunk by chunk, lazily: each
    /// call of the returned iterator's `next` transforms the next chunk and returns its
    /// [`ChunkResult`].
    pub fn stream<'a>(
        &self,
        input: &'a [u8],
        output: &'a mut [u8],
    ) -> Result<XformStream<'a>, XformError> {
        if input.len() != output.len() {
            return Err(XformError::OutputSizeMismatch);
        }
        let len = Self::check_input(input.len())?;
        Ok(XformStream {
            xform: *self,
            input,
            output,
            len,
            next: 0,
        })
    }
}

/// The chunks of one STREAM_XFORM launch, transformed as they are iterated ([`Xform::stream`]).
///
/// # Invariants
///
/// `input.len() == output.len() == len`, a multiple of [`WORD`].
pub struct XformStream<'a> {
    xform: Xform,
    input: &'a [u8],
    output: &'a mut [u8],
    len: u32,
    next: u32,
}

impl Iterator for XformStream<'_> {
    type Item = ChunkResult;

    fn next(&mut self) -> Option<ChunkResult> {
        let span = self.xform.chunk(self.len, self.next)?;
        let start = span.offset as usize;
        let end = start + span.length as usize;
        let input = self.input.get(start..end)?;
        let output = self.output.get_mut(start..end)?;
        // Cannot fail: equal lengths, a multiple of 4, at most `chunk_size` (type invariants).
        let checksum = self.xform.apply_chunk(input, output).ok()?;
        self.next += 1;
        Some(ChunkResult {
            offset: span.offset,
            length: span.length,
            checksum,
        })
    }
}

/// The host's reference for one element, written independently of [`XformOp`]; `None` for an
/// unknown `op`.
pub const fn reference_word(op: u32, operand: u32, word: u32) -> Option<u32> {
    if op == XFORM_OP_COPY {
        Some(word)
    } else if op == XFORM_OP_XOR {
        Some(word ^ operand)
    } else if op == XFORM_OP_ADD {
        Some(word.wrapping_add(operand))
    } else {
        None
    }
}

/// Why a received record does not match the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VerifyError {
    /// The arguments or the input are invalid.
    Args(XformError),
    /// `result_offset` is not the start of a chunk of the input.
    Misplaced,
    /// The length is not the chunk's.
    WrongLength {
        /// The chunk's length.
        expected: u32,
    },
    /// A payload word differs from the reference.
    WrongData {
        /// Byte offset of the first wrong word in the output.
        offset: u64,
    },
    /// The record's checksum is not the CRC32C of the reference chunk.
    WrongChecksum {
        /// The reference chunk's CRC32C.
        expected: u32,
    },
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Args(e) => write!(f, "invalid launch: {e}"),
            Self::Misplaced => f.write_str("result offset is not the start of a chunk"),
            Self::WrongLength { expected } => write!(f, "wrong length, expected {expected}"),
            Self::WrongData { offset } => write!(f, "wrong data at output offset {offset}"),
            Self::WrongChecksum { expected } => write!(f, "wrong checksum, expected {expected:#x}"),
        }
    }
}

/// The host's check of one received record of a STREAM_XFORM launch.
///
/// `input` is the launch's input, `result_offset`, `payload` (`length` bytes, the two pieces of a
/// wrapped payload concatenated) and `checksum` are the record's. Succeeds iff the record is
/// exactly the chunk at `result_offset` of the reference output.
pub fn verify_record(
    args: &StreamXformArgs,
    streaming_factor: u32,
    input: &[u8],
    result_offset: u64,
    payload: &[u8],
    checksum: u32,
) -> Result<(), VerifyError> {
    let xform = Xform::from_args(args, streaming_factor).map_err(VerifyError::Args)?;
    let len = Xform::check_input(input.len()).map_err(VerifyError::Args)?;
    let chunk = u64::from(xform.chunk_size());
    // `chunk` is non-zero (type invariant of `Xform`).
    if result_offset % chunk != 0 || result_offset >= u64::from(len) {
        return Err(VerifyError::Misplaced);
    }
    // Cannot truncate: `result_offset < len <= u32::MAX`.
    let start = result_offset as usize;
    let expected = (u64::from(len) - result_offset).min(chunk) as usize;
    if payload.len() != expected {
        return Err(VerifyError::WrongLength {
            expected: expected as u32,
        });
    }
    let mut crc = !0u32;
    for (i, got) in payload.chunks_exact(WORD as usize).enumerate() {
        let at = start + i * WORD as usize;
        let src = input
            .get(at..at + WORD as usize)
            .ok_or(VerifyError::Misplaced)?;
        let word = u32::from_le_bytes([src[0], src[1], src[2], src[3]]);
        let want = reference_word(args.op, args.operand, word)
            .ok_or(VerifyError::Args(XformError::UnknownOp))?
            .to_le_bytes();
        if got != want {
            return Err(VerifyError::WrongData { offset: at as u64 });
        }
        crc = crc32c_update(crc, &want);
    }
    if !crc != checksum {
        return Err(VerifyError::WrongChecksum { expected: !crc });
    }
    Ok(())
}
