// SPDX-License-Identifier: GPL-2.0

//! The latency model of the software CCM device: one parameter per cost, defaults from the AXLE
//! paper's Table III.
//!
//! The software device performs every mechanism as a real memory operation (a ring write, a
//! fence, a tail store, a head load); this model says how long the same operation would take on
//! a CXL link, so that the device can add that delay to it. The remote-polling (RP),
//! bulk-synchronous (BS) and AXLE flows then differ in *how many* of which operations they need,
//! not in luck.
//!
//! | parameter | default | source |
//! | --- | --- | --- |
//! | `cxl_mem_rtt_ns` | 70 | Table III: CXL.mem round-trip protocol latency |
//! | `cxl_io_rtt_ns` | 350 | Table III: CXL.io round-trip protocol latency |
//! | `dma_prep_ns` | 500 | Table III: DMA preparation latency, per request |
//! | `dma_segment_ns` | 0 | extra per scatter-gather segment; Table III has none (see below) |
//! | `dma_ps_per_byte` | 16 | a 62.5 GB/s link: PCIe 5.0 / CXL 2.0 x16, 64 GB/s raw per direction |
//! | `irq_ns` | 50 000 | Table III: interrupt handling latency, per DMA request |
//! | `remote_poll_interval_ns` | 1 000 | Table III: (RP) remote polling interval |
//!
//! # What a delay means
//!
//! Each function returns the time from issuing an operation to its effect:
//!
//! - a **read** ([`Access::Read`]) is non-posted: its effect is the data coming back, one full
//!   round trip;
//! - a **write** ([`Access::Write`]) is charged until it is visible at its target: one way, half
//!   a round trip (rounded up). The writer itself need not wait;
//! - a **DMA request** ([`LatencyModel::dma`]) is a device-initiated CXL.io posted write of `n`
//!   bytes in `k` scatter-gather segments: the per-request preparation (the paper's one-way
//!   control-plane latency, e.g. descriptor stores), `k` times the per-segment cost, the transfer
//!   time of `n` bytes at the link rate, and the one-way CXL.io flight of the last byte. The paper
//!   excludes the data transfer from the preparation latency and models it as memory operations;
//!   the per-byte cost is that part. The descriptors are shadowed in device memory (§IV-D), so a
//!   segment costs no extra fetch: `dma_segment_ns` defaults to 0 and exists to study engines
//!   that pay per segment;
//! - an **interrupt** ([`LatencyModel::interrupt`]) is the host's handling latency, per request;
//! - a **remote poll** ([`LatencyModel::remote_poll_interval`]) is the period at which the RP
//!   firmware looks at its mailbox: a command becomes visible at the next poll, at most one
//!   interval after it was rung.
//!
//! # Ranges
//!
//! Every parameter has an inclusive range ([`Param::range`]); [`LatencyModel`] only holds values
//! inside them. Delays are at most [`MAX_DELAY_NS`] (100 ms: a device thread that sleeps or spins
//! longer per operation is surely misconfigured), the per-byte cost at most [`MAX_PS_PER_BYTE`]
//! (1 MB/s), and the remote-polling interval at least 1 ns (a zero interval would make the RP
//! firmware spin without pause). With these bounds no computed delay can overflow a `u64`, which
//! the `const` assertions at the bottom of this file check.

use core::fmt;

/// The largest delay parameter, in nanoseconds (100 ms).
pub const MAX_DELAY_NS: u64 = 100_000_000;

/// The largest per-byte DMA cost, in picoseconds per byte (1 µs per byte: a 1 MB/s link).
pub const MAX_PS_PER_BYTE: u64 = 1_000_000;

/// A parameter of the latency model (each one is a module parameter of the software device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// CXL.mem round trip, ns.
    CxlMemRtt,
    /// CXL.io round trip, ns.
    CxlIoRtt,
    /// DMA preparation per request, ns.
    DmaPrep,
    /// Extra DMA cost per scatter-gather segment, ns.
    DmaSegment,
    /// DMA transfer cost per byte, ps.
    DmaPsPerByte,
    /// Interrupt handling per request, ns.
    Irq,
    /// Remote-polling interval, ns.
    RemotePollInterval,
}

impl Param {
    /// Number of parameters.
    pub const COUNT: usize = 7;

    /// Every parameter, in the order of the table in the module documentation.
    pub const ALL: [Param; Param::COUNT] = [
        Param::CxlMemRtt,
        Param::CxlIoRtt,
        Param::DmaPrep,
        Param::DmaSegment,
        Param::DmaPsPerByte,
        Param::Irq,
        Param::RemotePollInterval,
    ];

    /// The parameter's name, as a module parameter and in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            Param::CxlMemRtt => "cxl_mem_rtt_ns",
            Param::CxlIoRtt => "cxl_io_rtt_ns",
            Param::DmaPrep => "dma_prep_ns",
            Param::DmaSegment => "dma_segment_ns",
            Param::DmaPsPerByte => "dma_ps_per_byte",
            Param::Irq => "irq_ns",
            Param::RemotePollInterval => "remote_poll_interval_ns",
        }
    }

    /// The parameter named `name`, if any.
    pub fn from_name(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The default value (Table III where the paper has one).
    pub const fn default_value(self) -> u64 {
        match self {
            Param::CxlMemRtt => 70,
            Param::CxlIoRtt => 350,
            Param::DmaPrep => 500,
            Param::DmaSegment => 0,
            Param::DmaPsPerByte => 16,
            Param::Irq => 50_000,
            Param::RemotePollInterval => 1_000,
        }
    }

    /// The inclusive range `(min, max)` of valid values.
    pub const fn range(self) -> (u64, u64) {
        match self {
            Param::DmaPsPerByte => (0, MAX_PS_PER_BYTE),
            Param::RemotePollInterval => (1, MAX_DELAY_NS),
            _ => (0, MAX_DELAY_NS),
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors of the latency model. Every error leaves the model unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LatencyError {
    /// A parameter value outside [`Param::range`].
    OutOfRange {
        /// The parameter.
        param: Param,
        /// The rejected value.
        value: u64,
    },
    /// A DMA request of zero bytes: there is nothing to transfer.
    EmptyDma,
    /// A DMA request of zero segments, or of more segments than bytes.
    BadSegmentCount,
}

impl fmt::Display for LatencyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { param, value } => {
                let (min, max) = param.range();
                write!(f, "{param} = {value} is outside {min}..={max}")
            }
            Self::EmptyDma => f.write_str("DMA request of zero bytes"),
            Self::BadSegmentCount => f.write_str("DMA segment count is zero or exceeds the bytes"),
        }
    }
}

/// The direction of a CXL.mem or CXL.io access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load: charged a full round trip.
    Read,
    /// A store: charged until visible at the target, half a round trip (rounded up).
    Write,
}

/// The categories in which delays are charged and reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cost {
    /// CXL.mem accesses (launch packets, credit heads, sync completions).
    CxlMem,
    /// CXL.io accesses (registers, mailbox) and the flight of DMA writes.
    CxlIo,
    /// DMA preparation (per request) and per-segment costs.
    DmaPrep,
    /// DMA data transfer (per byte).
    DmaTransfer,
    /// Interrupt handling.
    Interrupt,
    /// Remote-polling intervals (RP).
    RemotePoll,
    /// Time the DMA executor waited for credit (measured, not modelled: back-pressure).
    CreditWait,
}

impl Cost {
    /// Number of categories.
    pub const COUNT: usize = 7;

    /// Every category.
    pub const ALL: [Cost; Cost::COUNT] = [
        Cost::CxlMem,
        Cost::CxlIo,
        Cost::DmaPrep,
        Cost::DmaTransfer,
        Cost::Interrupt,
        Cost::RemotePoll,
        Cost::CreditWait,
    ];

    /// A short name, for statistics files.
    pub const fn name(self) -> &'static str {
        match self {
            Cost::CxlMem => "cxl_mem",
            Cost::CxlIo => "cxl_io",
            Cost::DmaPrep => "dma_prep",
            Cost::DmaTransfer => "dma_transfer",
            Cost::Interrupt => "interrupt",
            Cost::RemotePoll => "remote_poll",
            Cost::CreditWait => "credit_wait",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// An operation the device charges a delay for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// A CXL.mem access.
    CxlMem(Access),
    /// A CXL.io access.
    CxlIo(Access),
    /// A DMA request (CXL.io posted write) of `bytes` bytes in `segments` segments.
    Dma {
        /// Bytes transferred, at least 1.
        bytes: u32,
        /// Scatter-gather segments, in `1..=bytes`.
        segments: u32,
    },
    /// An interrupt delivered to the host.
    Interrupt,
    /// One remote-polling interval.
    RemotePoll,
}

/// The delay of one operation, split by category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Charge {
    ns: [u64; Cost::COUNT],
    touched: u8,
}

impl Charge {
    /// A charge of `ns` nanoseconds in one category.
    pub const fn of(cost: Cost, ns: u64) -> Self {
        let mut c = Self {
            ns: [0; Cost::COUNT],
            touched: 0,
        };
        c.ns[cost.index()] = ns;
        c.touched = 1 << cost.index();
        c
    }

    const fn plus(mut self, cost: Cost, ns: u64) -> Self {
        // Cannot overflow: every part is bounded by the ranges (see the assertions below).
        self.ns[cost.index()] += ns;
        self.touched |= 1 << cost.index();
        self
    }

    /// The nanoseconds charged in `cost`.
    pub const fn get(&self, cost: Cost) -> u64 {
        self.ns[cost.index()]
    }

    /// Whether the operation involves `cost` (even at a delay of 0 ns).
    pub const fn involves(&self, cost: Cost) -> bool {
        self.touched & (1 << cost.index()) != 0
    }

    /// The whole delay to add to the operation.
    pub fn total(&self) -> u64 {
        self.ns.iter().fold(0u64, |acc, &ns| acc.saturating_add(ns))
    }
}

/// The latency model: one validated parameter per cost.
///
/// # Invariants
///
/// Every parameter lies in its [`Param::range`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LatencyModel {
    values: [u64; Param::COUNT],
}

impl Default for LatencyModel {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl LatencyModel {
    /// The defaults of the module documentation's table.
    pub const DEFAULT: Self = {
        let mut values = [0u64; Param::COUNT];
        let mut i = 0;
        while i < Param::COUNT {
            values[i] = Param::ALL[i].default_value();
            i += 1;
        }
        // INVARIANT: every default lies in its range (checked by an assertion below).
        Self { values }
    };

    /// A model without any delay (for functional tests). The remote-polling interval is its
    /// minimum, 1 ns.
    pub const ZERO: Self = {
        let mut values = [0u64; Param::COUNT];
        values[Param::RemotePollInterval.index()] = 1;
        // INVARIANT: 0 is in every range but the polling interval's, which is 1.
        Self { values }
    };

    /// Checks `value` against the range of `param`.
    pub const fn validate(param: Param, value: u64) -> Result<u64, LatencyError> {
        let (min, max) = param.range();
        if value < min || value > max {
            return Err(LatencyError::OutOfRange { param, value });
        }
        Ok(value)
    }

    /// Sets `param` to `value` if it is in range; otherwise leaves the model unchanged.
    pub fn set(&mut self, param: Param, value: u64) -> Result<(), LatencyError> {
        // INVARIANT: only a value that passed the range check is stored.
        self.values[param.index()] = Self::validate(param, value)?;
        Ok(())
    }

    /// This model with `param` set to `value`, if it is in range.
    pub fn with(mut self, param: Param, value: u64) -> Result<Self, LatencyError> {
        self.set(param, value)?;
        Ok(self)
    }

    /// This model with every cost multiplied by `milli / 1000` (the dilation: the emulator's CPU
    /// runs the real code that much slower than the modelled hardware, so the modelled costs
    /// stretch as much to stay in proportion to it), rounded to the nearest nanosecond (or
    /// picosecond per byte); or the first parameter the product puts out of range.
    pub fn dilated(&self, milli: u32) -> Result<Self, LatencyError> {
        let mut out = *self;
        for param in Param::ALL {
            // Cannot overflow: `MAX_DELAY_NS * u32::MAX < 2^64`, see the assertions below.
            let value = (self.get(param) * u64::from(milli) + 500) / 1000;
            out.set(param, value)?;
        }
        Ok(out)
    }

    /// The value of `param`.
    pub const fn get(&self, param: Param) -> u64 {
        self.values[param.index()]
    }

    /// CXL.mem round trip, ns.
    pub const fn cxl_mem_rtt_ns(&self) -> u64 {
        self.get(Param::CxlMemRtt)
    }

    /// CXL.io round trip, ns.
    pub const fn cxl_io_rtt_ns(&self) -> u64 {
        self.get(Param::CxlIoRtt)
    }

    /// DMA preparation per request, ns.
    pub const fn dma_prep_ns(&self) -> u64 {
        self.get(Param::DmaPrep)
    }

    /// Extra DMA cost per segment, ns.
    pub const fn dma_segment_ns(&self) -> u64 {
        self.get(Param::DmaSegment)
    }

    /// DMA transfer cost per byte, ps.
    pub const fn dma_ps_per_byte(&self) -> u64 {
        self.get(Param::DmaPsPerByte)
    }

    /// Interrupt handling per request, ns.
    pub const fn irq_ns(&self) -> u64 {
        self.get(Param::Irq)
    }

    /// Remote-polling interval, ns.
    pub const fn remote_poll_interval_ns(&self) -> u64 {
        self.get(Param::RemotePollInterval)
    }

    /// The delay of a CXL.mem access: a round trip to read, one way to write.
    pub const fn cxl_mem(&self, access: Access) -> u64 {
        Self::protocol(self.cxl_mem_rtt_ns(), access)
    }

    /// The delay of a CXL.io access: a round trip to read, one way to write.
    pub const fn cxl_io(&self, access: Access) -> u64 {
        Self::protocol(self.cxl_io_rtt_ns(), access)
    }

    const fn protocol(rtt: u64, access: Access) -> u64 {
        match access {
            Access::Read => rtt,
            Access::Write => rtt.div_ceil(2),
        }
    }

    /// The transfer time of `bytes` bytes at the link rate, rounded up to a whole nanosecond.
    pub const fn dma_transfer(&self, bytes: u32) -> u64 {
        // Cannot overflow: `u32::MAX * MAX_PS_PER_BYTE < 2^53`.
        (bytes as u64 * self.dma_ps_per_byte()).div_ceil(1000)
    }

    /// The delay of a DMA request of `bytes` bytes in `segments` segments, split by category:
    /// preparation and segments ([`Cost::DmaPrep`]), transfer ([`Cost::DmaTransfer`]) and the
    /// one-way CXL.io flight ([`Cost::CxlIo`]).
    pub const fn dma(&self, bytes: u32, segments: u32) -> Result<Charge, LatencyError> {
        if bytes == 0 {
            return Err(LatencyError::EmptyDma);
        }
        if segments == 0 || segments > bytes {
            return Err(LatencyError::BadSegmentCount);
        }
        // Cannot overflow: `MAX_DELAY_NS * (1 + u32::MAX)` is below `2^63` (asserted below).
        let prep = self.dma_prep_ns() + segments as u64 * self.dma_segment_ns();
        Ok(Charge::of(Cost::DmaPrep, prep)
            .plus(Cost::DmaTransfer, self.dma_transfer(bytes))
            .plus(Cost::CxlIo, self.cxl_io(Access::Write)))
    }

    /// The delay of an interrupt.
    pub const fn interrupt(&self) -> u64 {
        self.irq_ns()
    }

    /// The delay of one remote-polling interval.
    pub const fn remote_poll_interval(&self) -> u64 {
        self.remote_poll_interval_ns()
    }

    /// The delay of `op`, split by category.
    pub const fn charge(&self, op: Operation) -> Result<Charge, LatencyError> {
        Ok(match op {
            Operation::CxlMem(a) => Charge::of(Cost::CxlMem, self.cxl_mem(a)),
            Operation::CxlIo(a) => Charge::of(Cost::CxlIo, self.cxl_io(a)),
            Operation::Dma { bytes, segments } => match self.dma(bytes, segments) {
                Ok(c) => c,
                Err(e) => return Err(e),
            },
            Operation::Interrupt => Charge::of(Cost::Interrupt, self.interrupt()),
            Operation::RemotePoll => Charge::of(Cost::RemotePoll, self.remote_poll_interval()),
        })
    }
}

/// Delays charged so far, per category, for the device's statistics.
///
/// Sums saturate at `u64::MAX` (584 years of nanoseconds) instead of wrapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DelayBudget {
    ns: [u64; Cost::COUNT],
    events: [u64; Cost::COUNT],
}

impl DelayBudget {
    /// An empty budget.
    pub const fn new() -> Self {
        Self {
            ns: [0; Cost::COUNT],
            events: [0; Cost::COUNT],
        }
    }

    /// Adds one operation's charge: its delay in each category it involves, and one event in each.
    pub fn add(&mut self, charge: &Charge) {
        for cost in Cost::ALL {
            if charge.involves(cost) {
                self.record(cost, charge.get(cost));
            }
        }
    }

    /// Adds one event of `ns` nanoseconds in `cost`, e.g. a measured [`Cost::CreditWait`].
    pub fn record(&mut self, cost: Cost, ns: u64) {
        let i = cost.index();
        self.ns[i] = self.ns[i].saturating_add(ns);
        self.events[i] = self.events[i].saturating_add(1);
    }

    /// Nanoseconds charged in `cost`.
    pub const fn ns(&self, cost: Cost) -> u64 {
        self.ns[cost.index()]
    }

    /// Events charged in `cost`.
    pub const fn events(&self, cost: Cost) -> u64 {
        self.events[cost.index()]
    }

    /// Nanoseconds charged in all categories.
    pub fn total_ns(&self) -> u64 {
        self.ns.iter().fold(0u64, |acc, &ns| acc.saturating_add(ns))
    }
}

// The defaults are valid.
const _: () = {
    let mut i = 0;
    while i < Param::COUNT {
        let p = Param::ALL[i];
        let (min, max) = p.range();
        assert!(p.index() == i);
        assert!(min <= p.default_value() && p.default_value() <= max);
        i += 1;
    }
};
const _: () = assert!(Cost::ALL[Cost::COUNT - 1].index() == Cost::COUNT - 1);
// No computed delay can overflow: the largest DMA charge, summed over its categories.
const _: () = assert!(
    (MAX_DELAY_NS as u128) * (1 + u32::MAX as u128)
        + (u32::MAX as u128) * (MAX_PS_PER_BYTE as u128)
        + (MAX_DELAY_NS as u128)
        < (1u128 << 63)
);
// `dilated` cannot overflow: the largest parameter times the largest factor, plus the rounding.
const _: () = assert!(
    (if MAX_DELAY_NS > MAX_PS_PER_BYTE {
        MAX_DELAY_NS
    } else {
        MAX_PS_PER_BYTE
    } as u128)
        * (u32::MAX as u128)
        + 500
        < (1u128 << 64)
);
