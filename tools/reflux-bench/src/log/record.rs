// SPDX-License-Identifier: GPL-2.0

//! The lines inside a paradigm's block: samples, migrations and fio's result.

use super::pairs::{Fields, Pairs, Value};

/// Where an actor runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Host,
    Device,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Device => "device",
        }
    }

    fn of(s: &str) -> Option<Place> {
        match s {
            "host" => Some(Place::Host),
            "device" => Some(Place::Device),
            _ => None,
        }
    }
}

/// One `sample` line: the interval that ended `t_ms` after the paradigm's start.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_ms: f64,
    /// MB/s (10^6 bytes per second) written over the interval.
    pub mbps: f64,
    /// Device temperature, milli-degrees Celsius.
    pub temp_mc: f64,
    pub throttled: bool,
    pub inflight_permille: Option<f64>,
    /// Each actor kind's placement, in line order.
    pub placements: Vec<(String, Place)>,
    pub extra: Fields,
}

/// One `migration` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Migration {
    pub actor: Option<Value>,
    pub from: Place,
    pub to: Place,
    pub drain_ns: f64,
    pub ckpt_ns: f64,
    pub handover_ns: f64,
    pub rebuild_ns: f64,
    pub total_ns: f64,
    pub t_ms: Option<f64>,
    pub extra: Fields,
}

impl Migration {
    /// The migration's cost without the drain: checkpoint, handover and rebuild.
    pub fn move_ns(&self) -> f64 {
        self.ckpt_ns + self.handover_ns + self.rebuild_ns
    }
}

/// The `fio` line of a paradigm.
#[derive(Clone, Debug, PartialEq)]
pub struct Fio {
    pub bw_mbps: f64,
    /// `verify=ok` (else `fail`).
    pub verify_ok: bool,
    pub errors: Option<f64>,
    pub extra: Fields,
}

pub(super) fn sample(mut p: Pairs) -> Result<Sample, String> {
    let t_ms = p.need("t_ms")?;
    let mbps = p.need("mbps")?;
    let temp_mc = p
        .num("temp_mc", true)?
        .ok_or_else(|| "temp_mc= missing".to_string())?;
    let throttled = match p.take("throttled").as_deref() {
        Some("0") => false,
        Some("1") => true,
        Some(v) => return Err(format!("throttled={v} is neither 0 nor 1")),
        None => return Err("throttled= missing".into()),
    };
    let inflight_permille = p.num("inflight_permille", false)?;
    let mut placements = Vec::new();
    let mut extra = Vec::new();
    for (k, v) in p.0 {
        match Place::of(&v) {
            Some(place) => placements.push((k, place)),
            None => extra.push((k, Value::of(&v))),
        }
    }
    Ok(Sample {
        t_ms,
        mbps,
        temp_mc,
        throttled,
        inflight_permille,
        placements,
        extra,
    })
}

fn place(p: &mut Pairs, k: &str) -> Result<Place, String> {
    let v = p.take(k).ok_or_else(|| format!("{k}= missing"))?;
    Place::of(&v).ok_or_else(|| format!("{k}={v} is neither host nor device"))
}

pub(super) fn migration(mut p: Pairs) -> Result<Migration, String> {
    Ok(Migration {
        actor: p.take("actor").map(|a| Value::of(&a)),
        from: place(&mut p, "from")?,
        to: place(&mut p, "to")?,
        drain_ns: p.need("drain_ns")?,
        ckpt_ns: p.need("ckpt_ns")?,
        handover_ns: p.need("handover_ns")?,
        rebuild_ns: p.need("rebuild_ns")?,
        total_ns: p.need("total_ns")?,
        // Relative to the paradigm's start: a migration just before it is negative.
        t_ms: p.num("t_ms", true)?,
        extra: p.rest(),
    })
}

pub(super) fn fio(mut p: Pairs) -> Result<Fio, String> {
    let bw_mbps = p.need("bw_mbps")?;
    let verify_ok = p.verify()?;
    Ok(Fio {
        bw_mbps,
        verify_ok,
        errors: p.num("errors", false)?,
        extra: p.rest(),
    })
}
