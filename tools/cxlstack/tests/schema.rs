// SPDX-License-Identifier: GPL-2.0

//! `cxlstack` on a fixture tree laid out as the drivers lay out /dev, debugfs and configfs:
//! every documented JSON field is there (a field that disappears fails this test), the table
//! names what it shows, the steering commands write what the documentation says, and a system
//! without the stack is an error that names the cause.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The JSON fields of schema version 1 (Documentation/tools.rst, "cxlstack").
const TOP: [&str; 4] = ["version", "ccm", "reflux", "attachments"];
const CCM: [&str; 9] = [
    "name",
    "abi",
    "modes",
    "kernels",
    "mem_bytes",
    "max_tenants",
    "dev_status",
    "heartbeat",
    "tenants",
];
const TENANT: [&str; 15] = [
    "mode",
    "streaming_factor",
    "slot_size",
    "metadata_slots",
    "payload_slots",
    "tenant",
    "status",
    "error",
    "launches",
    "records",
    "payload_bytes",
    "credit_stalls",
    "dma_batches",
    "unpublished",
    "owner",
];
const REFLUX: [&str; 4] = ["name", "stats", "actors", "policy"];
const ACTOR: [&str; 8] = [
    "actor",
    "kind",
    "owner",
    "epoch",
    "generation",
    "ctl_runs",
    "invocations",
    "pinned",
];
const ATTACHMENT: [&str; 7] = [
    "name", "device", "start", "length", "pipeline", "checksum", "enabled",
];

/// A fixture tree of its own for each test (they run in parallel).
fn fixture(test: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("cxlstack-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let put = |rel: &str, text: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    put("dev/cxl_ccm0", "");
    put(
        "sys/kernel/debug/cxl_ccm0/stats",
        "dev_status 0x1 heartbeat 77 tenants_in_use 0x1\n\
         tenant status error launches records payload_bytes credit_stalls dma_batches unpublished\n\
         0 0x1 0 4 40 1280 2 9 0 1 64 32 16 128\n",
    );
    put(
        "sys/kernel/debug/reflux0/stats",
        "requests 12\ntemperature_mc 41000\n",
    );
    put(
        "sys/kernel/debug/reflux0/actors",
        "actor 1 kind crc32c owner device epoch 2 generation 1 ctl_runs 5 invocations 9 pinned 0\n",
    );
    put("sys/kernel/debug/reflux0/migrate", "");
    for (a, v) in [
        ("device", "reflux0"),
        ("start", "0"),
        ("length", "131072"),
        ("pipeline", "compress"),
        ("checksum", "1"),
        ("enable", "1"),
    ] {
        put(&format!("sys/kernel/config/reflux/logs/{a}"), v);
    }
    // The device's policy directory, next to the attachments: not one of them.
    put("sys/kernel/config/reflux/reflux0/placement", "0x3");
    put("sys/kernel/config/reflux/reflux0/pipeline", "2");
    put("sys/kernel/config/reflux/reflux0/sched", "0");
    root
}

fn cxlstack(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cxlstack"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn has_keys(json: &str, keys: &[&str]) {
    for k in keys {
        assert!(
            json.contains(&format!("\"{k}\":")),
            "field {k} is missing: {json}"
        );
    }
}

#[test]
fn every_documented_field_is_there() {
    let root = fixture("every_documented_field_is_there");
    let (rc, out, err) = cxlstack(&root, &["list", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(
        out.trim_start().starts_with('{') && out.contains("\"version\": 1,"),
        "{out}"
    );
    for keys in [&TOP[..], &CCM, &TENANT, &REFLUX, &ACTOR, &ATTACHMENT] {
        has_keys(&out, keys);
    }
    // The fixture's device node is no device: its identity is null, not invented.
    assert!(out.contains("\"abi\": null"), "{out}");
    // One attachment: the device's policy directory is not listed as one, but as its policy.
    assert_eq!(out.matches("\"enabled\":").count(), 1, "{out}");
    assert!(out.contains("\"placement\": \"0x3\""), "{out}");
    assert!(
        out.contains("\"records\": 40") && out.contains("\"temperature_mc\": 41000"),
        "{out}"
    );
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_table_names_what_it_shows() {
    let root = fixture("the_table_names_what_it_shows");
    let (rc, out, _) = cxlstack(&root, &["list"]);
    assert_eq!(rc, 0);
    assert!(out.contains("cxl_ccm0: identity unreadable"), "{out}");
    assert!(
        out.contains("tenant 0: RP SF 64 slots 128x32 B, md 16; status 0x1"),
        "{out}"
    );
    assert!(out.contains("actor 1 crc32c   on the device"), "{out}");
    assert!(out.contains("attachment logs: reflux0 [0, +131072) compress+checksum enabled"));
    let (rc, out, _) = cxlstack(&root, &["stat", "--json", "--monitor", "0", "--count", "2"]);
    assert_eq!(rc, 0);
    assert_eq!(out.matches("\"version\": 1").count(), 2, "{out}");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn steering_writes_what_the_drivers_read() {
    let root = fixture("steering_writes_what_the_drivers_read");
    let (rc, _, err) = cxlstack(&root, &["migrate", "reflux0", "1", "host"]);
    assert_eq!(rc, 0, "{err}");
    let m = fs::read_to_string(root.join("sys/kernel/debug/reflux0/migrate")).unwrap();
    assert_eq!(m, "1 host\n");
    let (rc, _, _) = cxlstack(&root, &["migrate", "reflux0", "1", "moon"]);
    assert_eq!(
        rc, 2,
        "a side that is neither host nor device is a usage error"
    );
    let args = [
        "attach",
        "data",
        "--device",
        "reflux0",
        "--start",
        "128K",
        "--length",
        "1M",
        "--pipeline",
        "encrypt",
        "--checksum",
    ];
    let (rc, _, err) = cxlstack(&root, &args);
    assert_eq!(rc, 0, "{err}");
    let a =
        |f: &str| fs::read_to_string(root.join("sys/kernel/config/reflux/data").join(f)).unwrap();
    assert_eq!(
        (a("start"), a("pipeline"), a("checksum"), a("enable")),
        ("128K".into(), "encrypt".into(), "1".into(), "1".into())
    );
    // configfs would remove the attributes with the directory; here they are plain files.
    for f in ["device", "start", "length", "pipeline", "checksum"] {
        fs::remove_file(root.join("sys/kernel/config/reflux/data").join(f)).unwrap();
    }
    fs::write(root.join("sys/kernel/config/reflux/data/enable"), "1").unwrap();
    let (rc, _, _) = cxlstack(&root, &["detach", "data"]);
    assert_eq!(rc, 1, "rmdir of a directory with files fails on a plain fs");
    assert_eq!(a("enable"), "0");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn no_stack_is_an_error_that_names_the_cause() {
    let root = std::env::temp_dir().join(format!("cxlstack-empty-{}", std::process::id()));
    fs::create_dir_all(&root).unwrap();
    let (rc, out, err) = cxlstack(&root, &["list"]);
    assert_eq!((rc, out.as_str()), (1, ""));
    assert!(
        err.contains("no cxl_ccm or reflux device") && err.contains("debugfs"),
        "{err}"
    );
    let (rc, _, err) = cxlstack(&root, &["migrate", "reflux0", "1", "host"]);
    assert_eq!(rc, 1);
    assert!(
        err.contains("reflux0/migrate") && err.contains("module loaded"),
        "{err}"
    );
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn an_attachment_named_in_bytes_json_cannot_carry_is_listed() {
    use std::os::unix::ffi::OsStrExt;
    let root = fixture("an_attachment_named_in_bytes_json_cannot_carry_is_listed");
    let dir = root
        .join("sys/kernel/config/reflux")
        .join(std::ffi::OsStr::from_bytes(b"raw\xff\xfename"));
    fs::create_dir_all(&dir).unwrap();
    for (a, v) in [
        ("device", "reflux0"),
        ("start", "131072"),
        ("length", "4096"),
    ] {
        fs::write(dir.join(a), v).unwrap();
    }
    let (rc, out, err) = cxlstack(&root, &["list", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(out.matches("\"enabled\":").count(), 2, "{out}");
    assert!(out.contains("\"raw\u{fffd}\u{fffd}name\""), "{out}");
    fs::remove_dir_all(root).unwrap();
}
