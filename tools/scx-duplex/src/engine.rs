// SPDX-License-Identifier: GPL-2.0

//! The periodic half of the policy (Algorithm 1, phases 1 and 2) and the policy engine:
//! `bpf/duplex_series.c`, the file the loader includes.

use core::ffi::{c_char, c_int};
use std::ffi::{CStr, CString};

use crate::ffi::{self, Opaque};

pub use crate::ffi::{Feedback, Hint, Knobs, Sample};

/// A C structure this side does not look into, 8-byte aligned.
struct Blob(Box<[u64]>);

impl Blob {
    fn new(which: c_int) -> Self {
        // SAFETY: no pointers.
        let size = unsafe { ffi::duplex_abi_size(which) };
        assert!(size > 0, "no C structure {which}");
        Self(vec![0u64; size.div_ceil(8)].into_boxed_slice())
    }

    fn ptr(&self) -> *const Opaque {
        self.0.as_ptr().cast()
    }

    fn mut_ptr(&mut self) -> *mut Opaque {
        self.0.as_mut_ptr().cast()
    }
}

fn message(buf: &[c_char]) -> String {
    // SAFETY: the C side wrote a NUL-terminated string into the buffer (snprintf).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A hint word's class number (`enum duplex_class`), or `None`.
pub fn parse_class(s: &str) -> Option<u32> {
    let s = CString::new(s).ok()?;
    // SAFETY: a NUL-terminated string.
    let c = unsafe { ffi::duplex_parse_class(s.as_ptr()) };
    u32::try_from(c).ok()
}

/// The index of a policy in the table, or `None`.
pub fn policy_index(name: &str) -> Option<i32> {
    let name = CString::new(name).ok()?;
    // SAFETY: a NUL-terminated string.
    let i = unsafe { ffi::duplex_policy_find(name.as_ptr()) };
    (i >= 0).then_some(i)
}

/// `struct duplex_params`, from the defaults and `NAME=VALUE` settings (the loader's `--param`).
pub struct Params(Blob);

impl Params {
    /// The defaults with `settings` applied in order; the first refusal's message otherwise.
    pub fn new(settings: &[&str]) -> Result<Self, String> {
        let mut p = Blob::new(ffi::ABI_PARAMS);
        // SAFETY: a buffer of the structure's size.
        unsafe { ffi::duplex_params_default(p.mut_ptr()) };
        let mut err = [0 as c_char; 256];
        for s in settings {
            let arg = CString::new(*s).map_err(|e| e.to_string())?;
            // SAFETY: the structure, a NUL-terminated string and the error buffer's length.
            if unsafe { ffi::duplex_param_set(p.mut_ptr(), arg.as_ptr(), err.as_mut_ptr(), 256) }
                != 0
            {
                return Err(message(&err));
            }
        }
        // SAFETY: as above.
        if unsafe { ffi::duplex_params_check(p.ptr(), err.as_mut_ptr(), 256) } != 0 {
            return Err(message(&err));
        }
        Ok(Self(p))
    }

    /// The `--params` listing.
    pub fn listing(&self) -> String {
        let mut buf = vec![0 as c_char; 16384];
        // SAFETY: the structure and the buffer's length.
        let n = unsafe { ffi::duplex_params_format(self.0.ptr(), buf.as_mut_ptr(), buf.len()) };
        assert!((n as usize) < buf.len(), "listing truncated");
        message(&buf)
    }
}

/// `struct duplex_state` under a policy: what the loader runs every period.
pub struct Engine(Blob);

impl Engine {
    /// A fresh state; `counters`: the machine has memory event counters.
    pub fn new(params: &Params, counters: bool, policy: &str) -> Option<Self> {
        let i = policy_index(policy)?;
        let mut s = Blob::new(ffi::ABI_STATE);
        // SAFETY: buffers of the structures' sizes.
        let rc = unsafe { ffi::duplex_state_init(s.mut_ptr(), params.0.ptr(), counters.into(), i) };
        (rc == 0).then_some(Self(s))
    }

    /// One period: phase 1 with the sample, phase 2, the policy's schedule().
    pub fn tick(&mut self, x: &Sample) -> Knobs {
        let mut k = Knobs::default();
        // SAFETY: the state and two structures from references.
        unsafe { ffi::duplex_tick(self.0.mut_ptr(), x, &mut k) };
        k
    }

    /// The policy's update().
    pub fn feedback(&mut self, f: &Feedback) {
        // SAFETY: as in `tick`.
        unsafe { ffi::duplex_feedback(self.0.mut_ptr(), f) };
    }

    /// Switches to the named policy; false if there is none.
    pub fn switch_to(&mut self, policy: &str) -> bool {
        let Some(i) = policy_index(policy) else {
            return false;
        };
        // SAFETY: the state.
        unsafe { ffi::duplex_switch(self.0.mut_ptr(), i) };
        true
    }

    /// Phase 2's last hint.
    pub fn hint(&self) -> Hint {
        // SAFETY: a pointer into the state, copied before the state can change.
        unsafe { *ffi::duplex_state_hint(self.0.ptr()) }
    }

    /// The adaptive hysteresis.
    pub fn hysteresis(&self) -> f64 {
        // SAFETY: the state.
        unsafe { ffi::duplex_state_hysteresis(self.0.ptr()) }
    }

    /// Samples in the window.
    pub fn window_len(&self) -> usize {
        // SAFETY: the state.
        unsafe { ffi::duplex_state_window_len(self.0.ptr()) as usize }
    }

    /// The current policy's index.
    pub fn policy(&self) -> i32 {
        // SAFETY: the state.
        unsafe { ffi::duplex_state_policy(self.0.ptr()) }
    }

    /// Policy switches so far.
    pub fn switches(&self) -> i32 {
        // SAFETY: the state.
        unsafe { ffi::duplex_state_switches(self.0.ptr()) }
    }

    /// The loader's report line for the period.
    pub fn report(&self, k: &Knobs) -> String {
        let mut buf = vec![0 as c_char; 512];
        // SAFETY: the state, the knobs and the buffer's length.
        unsafe { ffi::duplex_format(self.0.ptr(), k, buf.as_mut_ptr(), buf.len()) };
        message(&buf)
    }
}

/// The sizes of the C structures this crate mirrors, and of its mirrors.
pub fn abi_sizes() -> [(usize, usize); 6] {
    use core::mem::size_of;
    // SAFETY: no pointers.
    let c = |i| unsafe { ffi::duplex_abi_size(i) };
    [
        (c(ffi::ABI_KNOBS), size_of::<Knobs>()),
        (c(ffi::ABI_CLUSTER), size_of::<ffi::Cluster>()),
        (c(ffi::ABI_SIGNAL), size_of::<ffi::Signal>()),
        (c(ffi::ABI_SAMPLE), size_of::<Sample>()),
        (c(ffi::ABI_HINT), size_of::<Hint>()),
        (c(ffi::ABI_FEEDBACK), size_of::<Feedback>()),
    ]
}
