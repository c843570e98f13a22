// SPDX-License-Identifier: GPL-2.0

//! Validation of a tenant's configuration request against the device's limits.
//!
//! The driver turns `CXL_CCM_IOC_CONFIGURE`'s argument into a [`TenantRequest`] and the device's
//! identification registers into [`DeviceLimits`]; [`TenantConfig::validate`] either returns the
//! configuration the driver will program (defaults filled in, ring geometries and the streaming
//! factor checked with the same types the data plane uses, mmap sizes computed) or says which
//! rule the request breaks. Every error maps to one errno, so user space gets `EINVAL` for a
//! malformed request and `EOPNOTSUPP` for a well-formed one the device cannot serve.

use super::batcher::StreamingFactor;
use super::ring::RingGeometry;

/// Bytes of one metadata record in the metadata ring.
pub const METADATA_RECORD_BYTES: u32 = 32;
/// The page size the mmap lengths are rounded to.
pub const PAGE_BYTES: u64 = 4096;
/// The longest polling interval a tenant may ask for (one second).
pub const MAX_POLL_INTERVAL_NS: u64 = 1_000_000_000;

/// What the device can do, from its identification registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Offload modes the device serves: bit `m` for mode `m`.
    pub modes: u32,
    /// Number of modes the ABI defines (modes at or above it are malformed).
    pub mode_count: u32,
    /// Whether in-order streaming is supported.
    pub in_order: bool,
    /// Smallest and largest payload slot size (powers of two).
    pub min_slot_size: u32,
    /// See `min_slot_size`.
    pub max_slot_size: u32,
    /// Slot size used when the request says 0.
    pub default_slot_size: u32,
    /// Largest capacity of either ring, in slots.
    pub max_ring_slots: u32,
    /// Largest mmap window of one ring or of the input buffer, in bytes.
    pub max_window_bytes: u64,
    /// Device-memory bytes available to one tenant's input buffer.
    pub max_input_bytes: u64,
}

/// A tenant's request, as user space gave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TenantRequest {
    /// Offload mode.
    pub mode: u32,
    /// Payload slot size; 0 for the default.
    pub slot_size: u32,
    /// Metadata ring capacity in records.
    pub metadata_slots: u32,
    /// Payload ring capacity in slots.
    pub payload_slots: u32,
    /// Streaming factor in bytes; 0 for one slot.
    pub streaming_factor: u32,
    /// `true` for in-order streaming.
    pub in_order: bool,
    /// Polling interval in nanoseconds.
    pub poll_interval_ns: u64,
    /// Input buffer bytes.
    pub input_size: u64,
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The mode number is not defined by the ABI.
    UnknownMode,
    /// The device does not serve this mode (or in-order streaming): `EOPNOTSUPP`.
    Unsupported,
    /// The slot size is not a power of two within the device's range.
    BadSlotSize,
    /// A ring capacity is zero, not a power of two, or above the device's limit.
    BadRingCapacity,
    /// A ring does not fit its mmap window.
    RingTooLarge,
    /// The streaming factor is not a whole number of slots, or exceeds the payload ring.
    BadStreamingFactor,
    /// The polling interval is above [`MAX_POLL_INTERVAL_NS`].
    BadPollInterval,
    /// The input size is not a page multiple or is larger than the tenant may have.
    BadInputSize,
}

impl ConfigError {
    /// Whether the request was well-formed but asks for something the device lacks.
    pub const fn is_unsupported(self) -> bool {
        matches!(self, Self::Unsupported)
    }
}

/// A validated tenant configuration.
///
/// # Invariants
///
/// The geometries are valid rings within the device's limits, the streaming factor is a whole
/// number of slots no larger than the payload ring, and the mmap sizes are page multiples that
/// fit their windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TenantConfig {
    /// Offload mode.
    pub mode: u32,
    /// Metadata ring.
    pub metadata: RingGeometry,
    /// Payload ring.
    pub payload: RingGeometry,
    /// Streaming factor.
    pub streaming_factor: StreamingFactor,
    /// `true` for in-order streaming.
    pub in_order: bool,
    /// Polling interval in nanoseconds.
    pub poll_interval_ns: u64,
    /// mmap length of the metadata ring.
    pub metadata_ring_bytes: u64,
    /// mmap length of the payload ring.
    pub payload_ring_bytes: u64,
    /// Input buffer bytes.
    pub input_bytes: u64,
}

fn ring(capacity: u32, limits: &DeviceLimits) -> Result<RingGeometry, ConfigError> {
    if capacity > limits.max_ring_slots {
        return Err(ConfigError::BadRingCapacity);
    }
    RingGeometry::new(capacity).map_err(|_| ConfigError::BadRingCapacity)
}

/// `slots * slot_bytes` rounded up to a page, if it fits the window.
fn window_bytes(slots: u32, slot_bytes: u32, limits: &DeviceLimits) -> Result<u64, ConfigError> {
    let bytes = u64::from(slots) * u64::from(slot_bytes);
    let rounded = bytes.div_ceil(PAGE_BYTES) * PAGE_BYTES;
    if rounded > limits.max_window_bytes {
        return Err(ConfigError::RingTooLarge);
    }
    Ok(rounded)
}

impl TenantConfig {
    /// Checks `req` against `limits`. Malformed requests are refused before unsupported ones,
    /// so the errno does not depend on what the device happens to support.
    pub fn validate(req: &TenantRequest, limits: &DeviceLimits) -> Result<Self, ConfigError> {
        if req.mode >= limits.mode_count {
            return Err(ConfigError::UnknownMode);
        }
        let slot = if req.slot_size == 0 {
            limits.default_slot_size
        } else {
            req.slot_size
        };
        if !slot.is_power_of_two() || slot < limits.min_slot_size || slot > limits.max_slot_size {
            return Err(ConfigError::BadSlotSize);
        }
        let metadata = ring(req.metadata_slots, limits)?;
        let payload = ring(req.payload_slots, limits)?;
        let metadata_ring_bytes = window_bytes(req.metadata_slots, METADATA_RECORD_BYTES, limits)?;
        let payload_ring_bytes = window_bytes(req.payload_slots, slot, limits)?;
        let sf_bytes = if req.streaming_factor == 0 {
            slot
        } else {
            req.streaming_factor
        };
        let streaming_factor =
            StreamingFactor::new(sf_bytes, slot).map_err(|_| ConfigError::BadStreamingFactor)?;
        if streaming_factor.slots() > req.payload_slots {
            return Err(ConfigError::BadStreamingFactor);
        }
        if req.poll_interval_ns > MAX_POLL_INTERVAL_NS {
            return Err(ConfigError::BadPollInterval);
        }
        if req.input_size % PAGE_BYTES != 0
            || req.input_size > limits.max_window_bytes
            || req.input_size > limits.max_input_bytes
        {
            return Err(ConfigError::BadInputSize);
        }
        if limits.modes & (1 << req.mode) == 0 || (req.in_order && !limits.in_order) {
            return Err(ConfigError::Unsupported);
        }
        // INVARIANT: every field was checked above.
        Ok(Self {
            mode: req.mode,
            metadata,
            payload,
            streaming_factor,
            in_order: req.in_order,
            poll_interval_ns: req.poll_interval_ns,
            metadata_ring_bytes,
            payload_ring_bytes,
            input_bytes: req.input_size,
        })
    }
}
