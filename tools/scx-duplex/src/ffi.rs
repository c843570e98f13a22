// SPDX-License-Identifier: GPL-2.0

//! The C policy's declarations (`bpf/scx_duplex.h`, `bpf/duplex_policy.h`,
//! `bpf/duplex_series.h`). The structures are mirrored field for field; `abi_sizes_match` in
//! the tests compares their sizes with the C compiler's.

use core::ffi::{c_char, c_int};

/// `struct duplex_knobs`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Knobs {
    pub slice_ns: u64,
    pub oversubscribed: u32,
    pub phase_change: u32,
    pub sys_vol: u32,
    pub use_measured: u32,
    pub hysteresis: u32,
    pub load_weight: u32,
    pub oversub_slice: u32,
    pub vol_shrink: u32,
    pub phase_slice: u32,
    pub slice_min: u32,
    pub slice_max: u32,
    pub lag_slices: u32,
    pub share: [u32; 4],
    pub task_alpha: u32,
    pub task_min_samples: u32,
    pub task_min_events: u64,
}

/// `struct duplex_cluster`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    pub reads: i64,
    pub writes: i64,
    pub tasks: i64,
}

/// `struct duplex_signal`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signal {
    pub acc_reads: u64,
    pub acc_writes: u64,
    pub share: u32,
    pub vol: u32,
    pub samples: u32,
    pub pad: u32,
}

/// `struct duplex_sample`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    pub running: f64,
    pub cpus: f64,
    pub util: f64,
    pub reads: f64,
    pub writes: f64,
    pub traffic: c_int,
    pub pad: c_int,
}

/// `struct duplex_hint`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Hint {
    pub oversubscribed: c_int,
    pub phase_change: c_int,
    pub trend_on: c_int,
    pub pad: c_int,
    pub load: f64,
    pub util: f64,
    pub read_share: f64,
    pub trend: f64,
    pub volatility: f64,
}

/// `struct duplex_feedback`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Feedback {
    pub placed: f64,
    pub moved: f64,
    pub stayed: f64,
    pub tasks: f64,
    pub imbalance: f64,
    pub clusters: f64,
}

/// `struct duplex_params` and `struct duplex_state`: only the C side looks inside.
#[repr(C)]
pub struct Opaque {
    _private: [u8; 0],
}

/// `duplex_abi_size()`'s indices.
pub const ABI_KNOBS: c_int = 0;
pub const ABI_CLUSTER: c_int = 1;
pub const ABI_SIGNAL: c_int = 2;
pub const ABI_SAMPLE: c_int = 3;
pub const ABI_HINT: c_int = 4;
pub const ABI_FEEDBACK: c_int = 5;
pub const ABI_STATE: c_int = 6;
pub const ABI_PARAMS: c_int = 7;

extern "C" {
    // duplex_policy.h, the BPF program's half.
    pub fn duplex_trusted(k: *const Knobs, s: *const Signal) -> bool;
    pub fn duplex_task_share(k: *const Knobs, cls: u32, s: *const Signal) -> u32;
    pub fn duplex_observe(s: *mut Signal, reads: u64, writes: u64, k: *const Knobs) -> bool;
    pub fn duplex_account(c: *mut Cluster, share: u32, sign: i64);
    pub fn duplex_cost(c: *const Cluster, share: u32, own: bool, k: *const Knobs) -> i64;
    pub fn duplex_choose(
        c: *const Cluster,
        nr: u32,
        share: u32,
        here: i32,
        own: bool,
        k: *const Knobs,
        verdict: *mut u32,
    ) -> i32;
    pub fn duplex_task_slice(k: *const Knobs, cls: u32, s: *const Signal) -> u64;
    pub fn duplex_vruntime(vruntime: u64, mvruntime: u64, lag: u64) -> u64;
    pub fn duplex_deadline(vruntime: u64, slice: u64, weight: u32) -> u64;
    pub fn duplex_charge(used: u64, weight: u32) -> u64;
    pub fn duplex_first(has_a: bool, da: u64, has_b: bool, db: u64) -> bool;

    // duplex_series.h, the loader's half.
    pub fn duplex_parse_class(s: *const c_char) -> c_int;
    pub fn duplex_params_default(p: *mut Opaque);
    pub fn duplex_param_set(
        p: *mut Opaque,
        arg: *const c_char,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    pub fn duplex_params_check(p: *const Opaque, err: *mut c_char, len: usize) -> c_int;
    pub fn duplex_params_format(p: *const Opaque, buf: *mut c_char, len: usize) -> c_int;
    pub fn duplex_state_init(
        s: *mut Opaque,
        p: *const Opaque,
        counters: c_int,
        policy: c_int,
    ) -> c_int;
    pub fn duplex_tick(s: *mut Opaque, x: *const Sample, k: *mut Knobs);
    pub fn duplex_feedback(s: *mut Opaque, f: *const Feedback);
    pub fn duplex_policy_find(name: *const c_char) -> c_int;
    pub fn duplex_switch(s: *mut Opaque, to: c_int);
    pub fn duplex_format(s: *const Opaque, k: *const Knobs, buf: *mut c_char, len: usize) -> c_int;
    pub fn duplex_state_hint(s: *const Opaque) -> *const Hint;
    pub fn duplex_state_hysteresis(s: *const Opaque) -> f64;
    pub fn duplex_state_window_len(s: *const Opaque) -> c_int;
    pub fn duplex_state_policy(s: *const Opaque) -> c_int;
    pub fn duplex_state_switches(s: *const Opaque) -> c_int;
    pub fn duplex_abi_size(which: c_int) -> usize;
}
