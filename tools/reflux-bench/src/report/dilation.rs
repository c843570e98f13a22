// SPDX-License-Identifier: GPL-2.0

//! How much slower the VM runs than the host: the same calibration loop timed on both
//! (`info calib_host_ns= calib_guest_ns=`). A time measured in the VM divided by the factor is
//! what it would take natively, to set against the paper's figures.

use crate::log::{field, Fields, Value};

pub const HOST_KEY: &str = "calib_host_ns";
pub const GUEST_KEY: &str = "calib_guest_ns";

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dilation {
    pub host_ns: f64,
    pub guest_ns: f64,
}

impl Dilation {
    /// `Ok(None)` unless both keys are there; an error if they are but are not times > 0.
    pub fn of(info: &Fields) -> Result<Option<Dilation>, String> {
        let (Some(host), Some(guest)) = (field(info, HOST_KEY), field(info, GUEST_KEY)) else {
            return Ok(None);
        };
        let positive = |k: &str, v: &Value| match v.num() {
            Some(n) if n > 0.0 => Ok(n),
            _ => Err(format!(
                "info {k}={v:?} is not a time > 0: no dilation factor"
            )),
        };
        Ok(Some(Dilation {
            host_ns: positive(HOST_KEY, host)?,
            guest_ns: positive(GUEST_KEY, guest)?,
        }))
    }

    /// D = guest / host.
    pub fn factor(&self) -> f64 {
        self.guest_ns / self.host_ns
    }

    /// A time measured in the VM, as it would be natively.
    pub fn native(&self, guest_time: f64) -> f64 {
        guest_time / self.factor()
    }
}
