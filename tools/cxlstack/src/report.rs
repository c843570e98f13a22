// SPDX-License-Identifier: GPL-2.0

//! `cxlstack`'s output: a readable table, or JSON whose names are stable (schema version
//! [`VERSION`], documented in `Documentation/tools.rst`, "cxlstack"; a test fails if a field
//! disappears).

use crate::json::{obj, Json};
use crate::model::{mode_names, Actor, Attachment, CcmTenant};
use crate::sys::{CcmDevice, RefluxDevice, Snapshot};
use std::fmt::Write;

/// The JSON schema version; a field is only ever added within one version.
pub const VERSION: f64 = 1.0;

fn n(v: u64) -> Json {
    Json::Num(v as f64)
}

fn tenant(t: &CcmTenant) -> Json {
    obj([
        ("tenant", n(u64::from(t.index))),
        ("status", n(u64::from(t.status))),
        ("error", n(u64::from(t.error))),
        ("launches", n(t.launches)),
        ("records", n(t.records)),
        ("payload_bytes", n(t.payload_bytes)),
        ("credit_stalls", n(t.credit_stalls)),
        ("dma_batches", n(t.dma_batches)),
        ("unpublished", n(t.unpublished)),
        ("mode", mode_name(t.mode).into()),
        ("streaming_factor", n(u64::from(t.streaming_factor))),
        ("slot_size", n(u64::from(t.slot_size))),
        ("metadata_slots", n(u64::from(t.metadata_slots))),
        ("payload_slots", n(u64::from(t.payload_slots))),
        ("owner", n(u64::from(t.owner))),
    ])
}

fn mode_name(m: u32) -> &'static str {
    match m {
        0 => "AXLE",
        1 => "RP",
        2 => "BS",
        3 => "AXLE_IRQ",
        _ => "unknown",
    }
}

fn ccm(d: &CcmDevice) -> Json {
    let info = d.info.as_ref();
    let stats = d.stats.as_ref();
    obj([
        ("name", d.name.as_str().into()),
        ("abi", info.map(|i| Json::from(i.abi.as_str())).into()),
        (
            "modes",
            info.map(|i| Json::Arr(mode_names(i.caps).into_iter().map(Json::from).collect()))
                .into(),
        ),
        ("kernels", info.map(|i| n(i.kernels)).into()),
        ("mem_bytes", info.map(|i| n(i.mem_bytes)).into()),
        (
            "max_tenants",
            info.map(|i| n(u64::from(i.max_tenants))).into(),
        ),
        (
            "dev_status",
            stats.map(|s| n(u64::from(s.dev_status))).into(),
        ),
        ("heartbeat", stats.map(|s| n(s.heartbeat)).into()),
        (
            "tenants",
            Json::Arr(stats.map_or(Vec::new(), |s| s.tenants.iter().map(tenant).collect())),
        ),
    ])
}

fn actor(a: &Actor) -> Json {
    obj([
        ("actor", n(u64::from(a.id))),
        ("kind", a.kind.as_str().into()),
        ("owner", a.owner.as_str().into()),
        ("epoch", n(a.epoch)),
        ("generation", n(a.generation)),
        ("ctl_runs", n(a.ctl_runs)),
        ("invocations", n(a.invocations)),
        ("pinned", a.pinned.into()),
    ])
}

fn reflux(d: &RefluxDevice) -> Json {
    obj([
        ("name", d.name.as_str().into()),
        ("stats", pairs(&d.stats)),
        ("actors", Json::Arr(d.actors.iter().map(actor).collect())),
        ("policy", pairs(&d.policy)),
    ])
}

/// `key value` pairs as an object, values that are numbers as numbers.
fn pairs(kv: &[(String, String)]) -> Json {
    Json::Obj(
        kv.iter()
            .map(|(k, v)| {
                let val = v.parse::<f64>().map_or(Json::from(v.as_str()), Json::Num);
                (k.clone(), val)
            })
            .collect(),
    )
}

fn attachment(a: &Attachment) -> Json {
    obj([
        ("name", a.name.as_str().into()),
        ("device", a.device.as_str().into()),
        ("start", n(a.start)),
        ("length", n(a.length)),
        ("pipeline", a.pipeline.as_str().into()),
        ("checksum", a.checksum.into()),
        ("enabled", a.enabled.into()),
    ])
}

/// The whole snapshot as JSON.
pub fn json(s: &Snapshot) -> Json {
    obj([
        ("version", Json::Num(VERSION)),
        ("ccm", Json::Arr(s.ccm.iter().map(ccm).collect())),
        ("reflux", Json::Arr(s.reflux.iter().map(reflux).collect())),
        (
            "attachments",
            Json::Arr(s.attachments.iter().map(attachment).collect()),
        ),
    ])
}

/// The snapshot as a readable table.
pub fn table(s: &Snapshot) -> String {
    let mut out = String::new();
    for d in &s.ccm {
        let id = d
            .info
            .as_ref()
            .map_or("identity unreadable (not root?)".to_string(), |i| {
                format!(
                    "ABI {}, {} MiB, {} tenants, modes {}",
                    i.abi,
                    i.mem_bytes >> 20,
                    i.max_tenants,
                    mode_names(i.caps).join(",")
                )
            });
        let _ = writeln!(out, "{}: {id}", d.name);
        for t in d.stats.iter().flat_map(|s| s.tenants.iter()) {
            let _ = writeln!(
                out,
                "  tenant {}: {} SF {} slots {}x{} B, md {}; status {:#x} error {} launches {} records {} bytes {} credit stalls {} unpublished {} owner {}",
                t.index, mode_name(t.mode), t.streaming_factor, t.payload_slots, t.slot_size, t.metadata_slots,
                t.status, t.error, t.launches, t.records, t.payload_bytes, t.credit_stalls, t.unpublished, t.owner
            );
        }
    }
    for d in &s.reflux {
        let temp = d.stats.iter().find(|(k, _)| k.contains("temp"));
        let _ = writeln!(
            out,
            "{}: {} actors{}",
            d.name,
            d.actors.len(),
            temp.map_or(String::new(), |(k, v)| format!(", {k} {v}"))
        );
        let policy = |k: &str| {
            d.policy
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        if let (Some(p), Some(pl), Some(sched)) =
            (policy("pipeline"), policy("placement"), policy("sched"))
        {
            let _ = writeln!(
                out,
                "  default pipeline {p}{}, placement {pl}, scheduler {}",
                if policy("checksum") == Some("1") {
                    "+checksum"
                } else {
                    ""
                },
                if sched == "1" { "on" } else { "off" }
            );
        }
        for a in &d.actors {
            let _ = writeln!(
                out,
                "  actor {} {:<8} on the {:<6} epoch {} generation {}{}",
                a.id,
                a.kind,
                a.owner,
                a.epoch,
                a.generation,
                if a.pinned { " (pinned)" } else { "" }
            );
        }
    }
    for a in &s.attachments {
        let _ = writeln!(
            out,
            "attachment {}: {} [{}, +{}) {}{} {}",
            a.name,
            a.device,
            a.start,
            a.length,
            a.pipeline,
            if a.checksum { "+checksum" } else { "" },
            if a.enabled { "enabled" } else { "disabled" }
        );
    }
    out
}
