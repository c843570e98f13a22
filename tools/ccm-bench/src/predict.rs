//! The analytical model of the `validate` sweep: what each mode's end-to-end time should be,
//! from the software device's model parameters alone, and the check of the measurement
//! against it.
//!
//! `ccm_bench --validate` runs a synthetic workload whose every cost is a fixed parameter:
//! `L` launches (`launches`), one at a time (`depth` 1: a launch starts once the host has
//! processed the previous launch's last record), each of `size` bytes of STREAM_XFORM in
//! `n = size / c` chunks of `c` bytes (`chunk`), one result record per chunk, and `h` ns of host
//! work per record (`host_ns`). Each JSON line of the sweep carries the device's **undilated**
//! module parameters; the measured `e2e_us` is **dilated**: the emulator multiplies every
//! modelled cost, and the bench its `h` and `q`, by `D = dilation_milli / 1000`. The prediction
//! is computed undilated and multiplied by `D` to compare.
//!
//! # The costs
//!
//! | symbol | field | paper cost (AXLE, Table III) |
//! | --- | --- | --- |
//! | `m` | `cxl_mem_rtt_ns` | CXL.mem round trip: a launch store, a result load |
//! | `io` | `cxl_io_rtt_ns` | CXL.io round trip; a posted write (doorbell, DMA flight) is `ceil(io / 2)` |
//! | `prep` | `dma_prep_ns` | DMA preparation, per request |
//! | `ps` | `dma_ps_per_byte` | the link's transfer time per byte, ps |
//! | `I` | `irq_ns` | interrupt handling, per DMA batch (on the host CPU) |
//! | `r` | `remote_poll_interval_ns` | RP: the device firmware's remote polling interval |
//! | `q` | `poll_ns` | AXLE: the host consumer's local polling interval (p1/p10/p100) |
//! | `T` | (compute model) | the CCM's time for one chunk (Table III's CCM, [`ComputeModel`]) |
//! | `P` | `ccm_units × ccm_uthreads_per_unit` | µthreads: chunks computed at once |
//!
//! `T` is [`ComputeModel::chunk_ns`] of [`Kernel::chunk_work`] of one STREAM_XFORM chunk of `c`
//! bytes, at dilation 1000: the same definition the device uses.
//!
//! # A launch
//!
//! All `n` chunks start when the launch arrives; with `W = ceil(n / P)` waves, wave `k`
//! (0-based) holds `min(P, n - kP)` records, all finished `(k + 1)·T` after the arrival. Then:
//!
//! - **BS** (bulk-synchronous): `m` (the launch store) `+ W·T + m` (the completion seen by a
//!   CXL.mem load) `+ ceil(n·c·ps / 1000)` (the driver loads every result by CXL.mem)
//!   `+ n·h`.
//! - **RP** (remote polling): `ceil(io / 2)` (the doorbell) `+ r / 2` (the device's next remote
//!   poll, on average) `+ W·T + r / 2 + io` (the host's remote poll that sees the completion)
//!   `+ m + ceil(n·c·ps / 1000)` (the result load) `+ n·h`.
//! - **AXLE** (a per-launch simulation, [`Synthetic::launch_ns`]): the launch arrives at `m`.
//!   When a wave finishes, its records go out in batches of `b = max(1, sf / c)` records (the
//!   last one partial), posted to the DMA engine, which overlaps them and shares only the
//!   link (`tools/testing/cxl_ccm/model/posted.rs`): a batch becomes visible at
//!   `max(wave end + lat + x(batch), previous batch visible + x(batch))`, with `lat = prep +
//!   ceil(io / 2)` (each of its four posted requests: payload, payload tail, metadata records,
//!   metadata tail) and `x(batch) = ceil((recs·c + 32·recs + 8)·ps / 1000)` its bytes on the
//!   link. The host processes the records in order,
//!   `h` each; a record visible at `v` starts at `v + q / 2` if the host was idle (it polls every
//!   `q`, so it notices half an interval late on average), else when the host is free. The
//!   launch ends when its last record is processed.
//! - **AXLE_IRQ**: as AXLE without the poll delay; instead each batch costs the host `I` when it
//!   becomes visible (`host_free = max(host_free, v) + I`), then its records take `h` each.
//!
//! The launches are identical and strictly sequential: `e2e = L × launch`.
//!
//! `h` is the host's own code per record **as measured** (the median of `(host_busy_us +
//! release_us) / records` over the mode's repetitions, undilated), not the nominal `host_ns`:
//! the task, the record's checksum check and the RELEASE calls that return credit are real code
//! whose cost under emulation no model predicts, and the check is on what the device, the link
//! and the flows add to it. A run without those fields is predicted with `host_ns`.
//!
//! # What is not modelled
//!
//! Deliberately left out: the real code's system calls (the launch ioctl, the waits), the
//! scheduling of the host and device threads (wake-ups, preemption, the device's sleeps
//! overshooting), cache misses and the driver's bookkeeping. The prediction is what the model
//! alone says; the measurement is what the emulator does with those overheads on top. Checking
//! one against the other ([`validate`], tolerance [`TOLERANCE`]) is how the emulator is shown to
//! spend its time where the model says, and not in overheads that would swamp the comparison of
//! the modes.

use ccm_devmodel::abi::{StreamXformArgs, XFORM_OP_XOR};
use ccm_devmodel::compute::{CcmConfig, ComputeModel, NO_DILATION_MILLI};
use ccm_devmodel::kernel::Kernel;
use ccm_devmodel::xform::Xform;

use crate::record::{Run, Value};

/// The sweep this module predicts.
pub const SWEEP: &str = "validate";

/// The modes of the sweep, in the order of the report.
pub const MODES: [&str; 4] = ["RP", "BS", "AXLE", "AXLE_IRQ"];

/// Largest relative difference between measured and predicted that passes: 15 %.
pub const TOLERANCE: f64 = 0.15;

/// Most records per launch: the AXLE prediction steps through every DMA batch.
pub const MAX_RECORDS: u64 = 1 << 20;

/// Bytes of one metadata record (the ABI's `MetadataRecord`), per DMA'd record.
const RECORD_BYTES: u64 = 32;

/// Bytes of a ring tail update, once per DMA batch.
const TAIL_BYTES: u64 = 8;

/// The fields the prediction needs, each a whole number.
const FIELDS: [&str; 18] = [
    "launches",
    "size",
    "chunk",
    "depth",
    "host_ns",
    "poll_ns",
    "sf",
    "dilation_milli",
    "ccm_units",
    "ccm_uthreads_per_unit",
    "ccm_clock_mhz",
    "ccm_mem_mb_per_s",
    "cxl_mem_rtt_ns",
    "cxl_io_rtt_ns",
    "dma_prep_ns",
    "dma_ps_per_byte",
    "irq_ns",
    "remote_poll_interval_ns",
];

/// The link's costs, undilated ns (ps for the transfer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// `m`: CXL.mem round trip.
    pub mem_rtt_ns: u64,
    /// `io`: CXL.io round trip.
    pub io_rtt_ns: u64,
    /// `prep`: DMA preparation per request.
    pub dma_prep_ns: u64,
    /// `ps`: transfer time per byte, picoseconds.
    pub dma_ps_per_byte: u64,
    /// `I`: interrupt handling.
    pub irq_ns: u64,
    /// `r`: RP remote polling interval.
    pub remote_poll_ns: u64,
}

/// One configuration of the synthetic workload, undilated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Synthetic {
    /// `L`: launches, one after the other.
    pub launches: u64,
    /// `n`: records (chunks) per launch.
    pub records: u64,
    /// `c`: bytes per chunk (per record).
    pub chunk: u64,
    /// `h`: host work per record, ns.
    pub host_ns: u64,
    /// `q`: the AXLE consumer's polling interval, ns (0 in other modes).
    pub poll_ns: u64,
    /// The streaming factor, bytes: a DMA batch carries `max(1, sf / c)` records.
    pub sf: u64,
    /// `D × 1000`: the dilation of the measured run.
    pub dilation_milli: u64,
    /// `T`: the compute model's time of one chunk, undilated ns.
    pub chunk_ns: u64,
    /// `P`: µthreads, chunks computed at once.
    pub slots: u64,
    /// The link's costs.
    pub link: Link,
}

impl Synthetic {
    /// The configuration of a run of the `validate` sweep; `Err` names every missing field, or
    /// the first invalid one.
    pub fn from_run(run: &Run) -> Result<Self, String> {
        let missing: Vec<&str> = FIELDS
            .iter()
            .copied()
            .filter(|k| !run.0.contains_key(*k))
            .collect();
        if !missing.is_empty() {
            return Err(format!("missing field {}", missing.join(", ")));
        }
        let get = |k: &str| -> Result<u64, String> {
            match run.0.get(k) {
                Some(Value::Num(v)) if *v >= 0.0 && v.fract() == 0.0 && *v < 2f64.powi(53) => {
                    Ok(*v as u64)
                }
                _ => Err(format!("{k} is not a whole number")),
            }
        };
        let u32_of = |k: &str| -> Result<u32, String> {
            u32::try_from(get(k)?).map_err(|_| format!("{k} exceeds {}", u32::MAX))
        };
        // A device without its compute model computes chunks in no modelled time.
        if let Some(Value::Num(v)) = run.0.get("compute_model") {
            if *v == 0.0 {
                return Err("compute_model is off: the device does not model the CCM".into());
            }
        }
        let (launches, size, chunk) = (get("launches")?, u32_of("size")?, u32_of("chunk")?);
        if launches == 0 {
            return Err("launches is 0".into());
        }
        if get("depth")? != 1 {
            return Err(format!(
                "depth is {}: the model assumes one launch at a time",
                get("depth")?
            ));
        }
        if chunk == 0 || size == 0 || size % chunk != 0 {
            return Err(format!(
                "size {size} is not a positive multiple of chunk {chunk}"
            ));
        }
        let records = u64::from(size / chunk);
        if records > MAX_RECORDS {
            return Err(format!("{records} records per launch exceed {MAX_RECORDS}"));
        }
        let cfg = CcmConfig {
            units: u32_of("ccm_units")?,
            uthreads_per_unit: u32_of("ccm_uthreads_per_unit")?,
            clock_mhz: u32_of("ccm_clock_mhz")?,
            mem_mb_per_s: get("ccm_mem_mb_per_s")?,
        };
        let dilation_milli = u32_of("dilation_milli")?;
        // The dilation must be one the device accepts; the prediction itself is undilated.
        ComputeModel::new(cfg, dilation_milli).map_err(|e| e.to_string())?;
        let model = ComputeModel::new(cfg, NO_DILATION_MILLI).map_err(|e| e.to_string())?;
        let args = StreamXformArgs {
            op: XFORM_OP_XOR,
            chunk_size: chunk,
            ..Default::default()
        };
        // The chunk is its own streaming factor: `sf` only sets the DMA batches here.
        let xform = Xform::from_args(&args, chunk).map_err(|e| format!("chunk {chunk}: {e}"))?;
        let work = Kernel::Xform(xform)
            .chunk_work(chunk, 0)
            .ok_or_else(|| format!("chunk {chunk}: no chunk"))?;
        Ok(Self {
            launches,
            records,
            chunk: u64::from(chunk),
            host_ns: get("host_ns")?,
            poll_ns: get("poll_ns")?,
            sf: get("sf")?,
            dilation_milli: u64::from(dilation_milli),
            chunk_ns: model.chunk_ns(work),
            slots: u64::from(model.slots()),
            link: Link {
                mem_rtt_ns: get("cxl_mem_rtt_ns")?,
                io_rtt_ns: get("cxl_io_rtt_ns")?,
                dma_prep_ns: get("dma_prep_ns")?,
                dma_ps_per_byte: get("dma_ps_per_byte")?,
                irq_ns: get("irq_ns")?,
                remote_poll_ns: get("remote_poll_interval_ns")?,
            },
        })
    }

    /// The predicted end-to-end time of `mode` (one of [`MODES`]), undilated ns:
    /// `L ×` [`Synthetic::launch_ns`]. `None` for another mode.
    pub fn predict_ns(&self, mode: &str) -> Option<f64> {
        self.launch_ns(mode).map(|t| t * self.launches as f64)
    }

    /// The predicted time of one launch of `mode`, undilated ns (see the module documentation).
    pub fn launch_ns(&self, mode: &str) -> Option<f64> {
        let l = &self.link;
        let (m, io, r) = (
            l.mem_rtt_ns as f64,
            l.io_rtt_ns as f64,
            l.remote_poll_ns as f64,
        );
        let compute = self.waves() as f64 * self.chunk_ns as f64;
        let host = self.records as f64 * self.host_ns as f64;
        let load = self.result_load_ns() as f64;
        match mode {
            "BS" => Some(m + compute + m + load + host),
            "RP" => Some(
                l.io_rtt_ns.div_ceil(2) as f64 + r / 2.0 + compute + r / 2.0 + io + m + load + host,
            ),
            "AXLE" => Some(self.axle_launch_ns(false)),
            "AXLE_IRQ" => Some(self.axle_launch_ns(true)),
            _ => None,
        }
    }

    /// `W = ceil(n / P)`: the waves of chunks of a launch.
    pub fn waves(&self) -> u64 {
        self.records.div_ceil(self.slots.max(1))
    }

    /// `b = max(1, sf / c)`: records per DMA batch.
    pub fn batch_records(&self) -> u64 {
        (self.sf / self.chunk.max(1)).max(1)
    }

    /// `ceil(n·c·ps / 1000)`: BS and RP load every result by CXL.mem.
    pub fn result_load_ns(&self) -> u64 {
        let bytes = self.records.saturating_mul(self.chunk);
        bytes
            .saturating_mul(self.link.dma_ps_per_byte)
            .div_ceil(1000)
    }

    /// `lat = prep + ceil(io / 2)`: one posted DMA request, from its issue to its write
    /// landing, the transfer aside.
    pub fn dma_latency_ns(&self) -> u64 {
        let l = &self.link;
        l.dma_prep_ns.saturating_add(l.io_rtt_ns.div_ceil(2))
    }

    /// `x(recs) = ceil((recs·c + 32·recs + 8)·ps / 1000)`: one AXLE batch of `recs` records on
    /// the link.
    pub fn dma_transfer_ns(&self, recs: u64) -> u64 {
        let bytes = recs
            .saturating_mul(self.chunk + RECORD_BYTES)
            .saturating_add(TAIL_BYTES);
        bytes
            .saturating_mul(self.link.dma_ps_per_byte)
            .div_ceil(1000)
    }

    /// One AXLE (or AXLE_IRQ, `irq`) launch, simulated batch by batch from its start at 0.
    fn axle_launch_ns(&self, irq: bool) -> f64 {
        let (t, p, b) = (
            self.chunk_ns as f64,
            self.slots.max(1),
            self.batch_records(),
        );
        let (h, half_q, i) = (
            self.host_ns as f64,
            self.poll_ns as f64 / 2.0,
            self.link.irq_ns as f64,
        );
        let arrival = self.link.mem_rtt_ns as f64;
        // When the engine's previous batch became visible; when the host is next free.
        let (mut engine, mut host_free) = (0.0f64, 0.0f64);
        let mut left = self.records;
        let mut wave = 0u64;
        while left > 0 {
            let in_wave = left.min(p);
            let wave_end = arrival + (wave + 1) as f64 * t;
            let mut rest = in_wave;
            while rest > 0 {
                let recs = rest.min(b);
                let x = self.dma_transfer_ns(recs) as f64;
                let visible = (wave_end + self.dma_latency_ns() as f64 + x).max(engine + x);
                engine = visible;
                let start = if irq {
                    host_free.max(visible) + i
                } else if host_free < visible {
                    // Idle: the next local poll sees the batch, q / 2 later on average.
                    visible + half_q
                } else {
                    host_free
                };
                host_free = start + recs as f64 * h;
                rest -= recs;
            }
            left -= in_wave;
            wave += 1;
        }
        host_free
    }
}

/// One mode of the `validate` sweep: the median measurement against the prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeCheck {
    /// One of [`MODES`].
    pub mode: String,
    /// Repetitions measured.
    pub reps: usize,
    /// The median `e2e_us` over the repetitions (dilated).
    pub measured_us: f64,
    /// The prediction times the dilation, µs.
    pub predicted_us: f64,
    /// `measured / predicted`.
    pub ratio: f64,
    /// `|ratio - 1| <= TOLERANCE`.
    pub pass: bool,
    /// The host's work per record the prediction used, undilated ns: the median measured
    /// `(host_busy_us + release_us) / records`, or the nominal `host_ns` where no run reported
    /// it.
    pub host_ns: f64,
}

/// The check of the `validate` sweep against the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Validation {
    /// The modes that could be checked, in the order of [`MODES`].
    pub modes: Vec<ModeCheck>,
    /// The modes of [`MODES`] without a usable run.
    pub missing: Vec<String>,
    /// Runs or modes that cannot be predicted (missing fields, an unknown mode, repetitions
    /// that disagree on the parameters): each fails the validation.
    pub problems: Vec<String>,
    /// Runs of the sweep.
    pub runs: usize,
}

/// The median of `v` (not empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Checks the runs of the `validate` sweep (other runs are ignored): per mode, the median
/// `e2e_us` over the repetitions against the prediction × `D`.
pub fn validate(runs: &[Run]) -> Validation {
    let mut v = Validation::default();
    // Per mode: the configuration and the measured times.
    let mut groups: Vec<(&str, Synthetic, Vec<f64>, Vec<f64>)> = Vec::new();
    for run in runs.iter().filter(|r| r.str("sweep") == SWEEP) {
        v.runs += 1;
        let mode = run.str("mode");
        let rep = run.num("rep");
        let which = if rep.is_finite() {
            format!("mode {mode:?} rep {rep}")
        } else {
            format!("mode {mode:?}")
        };
        let Some(mode) = MODES.iter().copied().find(|m| *m == mode) else {
            v.problems
                .push(format!("{which}: no prediction for this mode"));
            continue;
        };
        let synth = match Synthetic::from_run(run) {
            Ok(s) => s,
            Err(e) => {
                v.problems.push(format!("{which}: {e}"));
                continue;
            }
        };
        let e2e = run.num("e2e_us");
        if !(e2e.is_finite() && e2e > 0.0) {
            v.problems
                .push(format!("{which}: e2e_us is not a positive time"));
            continue;
        }
        // The host's own code per record, undilated ns (NaN if the run did not report it): its
        // work and its RELEASE calls (none reported: none counted).
        let release = match run.0.get("release_us") {
            Some(Value::Num(v)) => *v,
            _ => 0.0,
        };
        let host = (run.num("host_busy_us") + release) / run.num("records") * 1e6
            / synth.dilation_milli as f64;
        match groups.iter_mut().find(|g| g.0 == mode) {
            Some(g) if g.1 != synth => v.problems.push(format!(
                "{which}: parameters differ from the mode's first repetition"
            )),
            Some(g) => {
                g.2.push(e2e);
                g.3.push(host);
            }
            None => groups.push((mode, synth, vec![e2e], vec![host])),
        }
    }
    for mode in MODES {
        let Some((_, synth, times, hosts)) = groups.iter().find(|g| g.0 == mode) else {
            v.missing.push(mode.to_string());
            continue;
        };
        // The host's own code (the task, the record's checksum check, the RELEASE calls) is
        // taken as measured: the prediction is of what the device, the link and the flow add.
        let mut synth = *synth;
        let measured: Vec<f64> = hosts
            .iter()
            .copied()
            .filter(|h| h.is_finite() && *h > 0.0)
            .collect();
        if !measured.is_empty() {
            synth.host_ns = median(measured).round() as u64;
        }
        // Every mode of MODES has a prediction.
        let undilated = synth.predict_ns(mode).unwrap_or(f64::NAN);
        let predicted_us = undilated * synth.dilation_milli as f64 / 1000.0 / 1000.0;
        let measured_us = median(times.clone());
        let ratio = measured_us / predicted_us;
        v.modes.push(ModeCheck {
            mode: mode.to_string(),
            reps: times.len(),
            measured_us,
            predicted_us,
            ratio,
            pass: (ratio - 1.0).abs() <= TOLERANCE,
            host_ns: synth.host_ns as f64,
        });
    }
    v
}

impl Validation {
    /// Whether every mode of [`MODES`] was measured, predicted and within [`TOLERANCE`], and no
    /// run of the sweep was unusable.
    pub fn passed(&self) -> bool {
        self.runs > 0
            && self.missing.is_empty()
            && self.problems.is_empty()
            && self.modes.len() == MODES.len()
            && self.modes.iter().all(|m| m.pass)
    }

    /// The modes off the prediction by more than the tolerance, or missing.
    pub fn failed_modes(&self) -> Vec<&str> {
        let off = self
            .modes
            .iter()
            .filter(|m| !m.pass)
            .map(|m| m.mode.as_str());
        off.chain(self.missing.iter().map(String::as_str)).collect()
    }

    /// The report: a header, one line per mode, the problems, the verdict.
    pub fn text(&self) -> String {
        let mut s = format!(
            "validation: measured vs predicted per mode, tolerance {:.0} %\n",
            TOLERANCE * 100.0
        );
        s.push_str(&format!(
            "{:<10} {:>4} {:>13} {:>13} {:>7} {:>9}  verdict\n",
            "mode", "reps", "measured_us", "predicted_us", "ratio", "host_ns"
        ));
        for mode in MODES {
            let line = match self.modes.iter().find(|m| m.mode == mode) {
                Some(m) => {
                    let verdict = if m.pass {
                        "ok".to_string()
                    } else {
                        let off = (m.ratio - 1.0) * 100.0;
                        let how = if off < 0.0 { "faster" } else { "slower" };
                        format!("OFF BY {off:+.1} % (measured {how} than predicted)")
                    };
                    format!(
                        "{:<10} {:>4} {:>13.1} {:>13.1} {:>7.3} {:>9.0}  {verdict}\n",
                        m.mode, m.reps, m.measured_us, m.predicted_us, m.ratio, m.host_ns
                    )
                }
                None => format!("{mode:<10}    - MISSING: no usable run of this mode\n"),
            };
            s.push_str(&line);
        }
        for p in &self.problems {
            s.push_str(&format!("problem: {p}\n"));
        }
        if self.passed() {
            s.push_str("validation passed\n");
        } else {
            let failed = self.failed_modes();
            let mut why = Vec::new();
            if !failed.is_empty() {
                why.push(format!("modes {}", failed.join(", ")));
            }
            if !self.problems.is_empty() {
                why.push(format!("{} problem(s)", self.problems.len()));
            }
            if self.runs == 0 {
                why.push("no run of the validate sweep".to_string());
            }
            s.push_str(&format!("validation FAILED: {}\n", why.join("; ")));
        }
        s
    }
}
