// SPDX-License-Identifier: GPL-2.0

//! What `cxlstack` reads, parsed from the drivers' files: the cxl_ccm `stats` file in
//! debugfs, reflux's `stats` and `actors` files, and the configfs attachments. Parsing is pure,
//! so the host tests feed it the files' documented formats.

/// One tenant line of `/sys/kernel/debug/cxl_ccmN/stats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcmTenant {
    pub index: u32,
    pub status: u32,
    pub error: u32,
    pub launches: u64,
    pub records: u64,
    pub payload_bytes: u64,
    pub credit_stalls: u64,
    pub dma_batches: u64,
    pub unpublished: u64,
    /// The tenant's configuration (0 from a driver that does not show it).
    pub mode: u32,
    pub streaming_factor: u32,
    pub slot_size: u32,
    pub metadata_slots: u32,
    pub payload_slots: u32,
    /// The pid of the process that configured the tenant (0: none, or an older driver).
    pub owner: u32,
}

/// `/sys/kernel/debug/cxl_ccmN/stats`: the device line, then one line per tenant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcmStats {
    pub dev_status: u32,
    pub heartbeat: u64,
    pub tenants_in_use: u32,
    pub tenants: Vec<CcmTenant>,
}

fn num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The value after `key` in a line of `key value` pairs.
fn field(words: &[&str], key: &str) -> Option<u64> {
    let i = words.iter().position(|w| *w == key)?;
    num(words.get(i + 1)?)
}

/// Parses the cxl_ccm `stats` file; `None` if its first line is not the device line (or the
/// device is unbound: "unbound").
pub fn parse_ccm_stats(text: &str) -> Option<CcmStats> {
    let mut lines = text.lines();
    let first: Vec<&str> = lines.next()?.split_whitespace().collect();
    let mut s = CcmStats {
        dev_status: field(&first, "dev_status")? as u32,
        heartbeat: field(&first, "heartbeat")?,
        tenants_in_use: field(&first, "tenants_in_use")? as u32,
        tenants: Vec::new(),
    };
    for line in lines.filter(|l| !l.starts_with("tenant")) {
        // Positional: a register the driver could not read is a `?` that keeps its column.
        let v: Vec<Option<u64>> = line.split_whitespace().map(num).collect();
        if v.len() < 8 || v[..8].iter().any(Option::is_none) {
            continue;
        }
        let at = |i: usize| v.get(i).copied().flatten().unwrap_or(0);
        s.tenants.push(CcmTenant {
            index: at(0) as u32,
            status: at(1) as u32,
            error: at(2) as u32,
            launches: at(3),
            records: at(4),
            payload_bytes: at(5),
            credit_stalls: at(6),
            dma_batches: at(7),
            unpublished: at(8),
            mode: at(9) as u32,
            streaming_factor: at(10) as u32,
            slot_size: at(11) as u32,
            metadata_slots: at(12) as u32,
            payload_slots: at(13) as u32,
            owner: at(14) as u32,
        });
    }
    Some(s)
}

/// One line of reflux's `actors` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Actor {
    pub id: u32,
    pub kind: String,
    pub owner: String,
    pub epoch: u64,
    pub generation: u64,
    pub ctl_runs: u64,
    pub invocations: u64,
    pub pinned: bool,
}

/// Parses reflux's `actors` file (`actor ID kind K owner O epoch E generation G ctl_runs R
/// invocations I pinned P`); lines of another shape are skipped.
pub fn parse_actors(text: &str) -> Vec<Actor> {
    text.lines()
        .filter_map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            let s = |k: &str| -> Option<String> {
                let i = w.iter().position(|x| *x == k)?;
                w.get(i + 1).map(|v| v.to_string())
            };
            Some(Actor {
                id: field(&w, "actor")? as u32,
                kind: s("kind")?,
                owner: s("owner")?,
                epoch: field(&w, "epoch")?,
                generation: field(&w, "generation")?,
                ctl_runs: field(&w, "ctl_runs").unwrap_or(0),
                invocations: field(&w, "invocations").unwrap_or(0),
                pinned: field(&w, "pinned").unwrap_or(0) != 0,
            })
        })
        .collect()
}

/// Parses a `key value` file (reflux's `stats`): the pairs in order.
pub fn parse_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let k = w.next()?;
            let v: Vec<&str> = w.collect();
            (!v.is_empty()).then(|| (k.to_string(), v.join(" ")))
        })
        .collect()
}

/// One configfs attachment of reflux.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attachment {
    pub name: String,
    pub device: String,
    pub start: u64,
    pub length: u64,
    pub pipeline: String,
    pub checksum: bool,
    pub enabled: bool,
}

/// The names of the modes in `caps`.
pub fn mode_names(caps: u64) -> Vec<&'static str> {
    ["AXLE", "RP", "BS", "AXLE_IRQ"]
        .into_iter()
        .enumerate()
        .filter(|(i, _)| caps & (1 << i) != 0)
        .map(|(_, n)| n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ccm_stats_as_the_driver_writes_them() {
        let text = "dev_status 0x1 heartbeat 3412 tenants_in_use 0x5\n\
                    tenant status error launches records payload_bytes credit_stalls dma_batches unpublished\n\
                    0 0x1 0 40 1738 442368 153 160 0 0 256 32 16 64\n\
                    2 0x1 0 3 12 96 0 3 2\n";
        let s = parse_ccm_stats(text).unwrap();
        assert_eq!((s.dev_status, s.heartbeat, s.tenants_in_use), (1, 3412, 5));
        assert_eq!(s.tenants.len(), 2);
        assert_eq!(s.tenants[0].records, 1738);
        assert_eq!(
            (s.tenants[0].streaming_factor, s.tenants[0].payload_slots),
            (256, 64)
        );
        // An older driver's line, without the configuration: zeros.
        assert_eq!(s.tenants[1].slot_size, 0);
        assert_eq!(s.tenants[1].index, 2);
        assert_eq!(s.tenants[1].unpublished, 2);
        assert_eq!(parse_ccm_stats("unbound\n"), None);
        // A register the driver could not read keeps its column; a line missing a counter
        // is left out rather than shifted.
        let text = "dev_status 0x1 heartbeat 1 tenants_in_use 0x1\n\
                    0 0x1 0 40 1738 442368 153 160 ? 1 256 32 16 64\n\
                    1 0x1 ? 40 1738 442368 153 160 0 1 256 32 16 64\n";
        let s = parse_ccm_stats(text).unwrap();
        assert_eq!(s.tenants.len(), 1);
        assert_eq!((s.tenants[0].unpublished, s.tenants[0].mode), (0, 1));
        assert_eq!(s.tenants[0].payload_slots, 64);
        assert_eq!(s.tenants[0].owner, 0);
        let s = parse_ccm_stats(
            "dev_status 0x1 heartbeat 1 tenants_in_use 0x1\n0 0x1 0 1 2 3 4 5 6 0 256 32 16 64 4242\n",
        )
        .unwrap();
        assert_eq!(s.tenants[0].owner, 4242);
    }

    #[test]
    fn actors_as_the_driver_writes_them() {
        let text = "actor 1 kind crc32c owner device epoch 4 generation 2 ctl_runs 17 invocations 90 pinned 0\n\
                    actor 2 kind lz4 owner host epoch 0 generation 0 ctl_runs 3 invocations 3 pinned 1\n\
                    garbage\n";
        let a = parse_actors(text);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].owner, "device");
        assert_eq!(a[0].generation, 2);
        assert!(a[1].pinned && a[1].kind == "lz4");
    }

    #[test]
    fn modes_from_caps() {
        assert_eq!(mode_names(0b1011), vec!["AXLE", "RP", "AXLE_IRQ"]);
    }
}
