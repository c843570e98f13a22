// SPDX-License-Identifier: GPL-2.0

//! Compiles the scheduler's policy, the C the BPF program and its loader are built from, into a
//! static library for this crate: the host tests run the shipped code, not a copy of it.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shipped policy sources (`bpf/`) and the file that turns the BPF side's inline functions
/// into symbols (`host/`).
const SOURCES: [&str; 2] = ["bpf/duplex_series.c", "host/duplex_export.c"];
const HEADERS: [&str; 3] = [
    "bpf/duplex_policy.h",
    "bpf/duplex_series.h",
    "bpf/scx_duplex.h",
];

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
}

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let ar = env::var("AR").unwrap_or_else(|_| "ar".into());
    let mut objects = Vec::new();
    for src in SOURCES {
        let obj = out.join(Path::new(src).with_extension("o").file_name().unwrap());
        // The loader's flags in the tree's sched_ext Makefile: a warning is an error there too.
        run(Command::new(&cc)
            .args([
                "-std=gnu11",
                "-O2",
                "-fPIC",
                "-Wall",
                "-Werror",
                "-Ibpf",
                "-c",
                src,
                "-o",
            ])
            .arg(&obj));
        objects.push(obj);
        println!("cargo:rerun-if-changed={src}");
    }
    for h in HEADERS {
        println!("cargo:rerun-if-changed={h}");
    }
    let lib = out.join("libduplex_policy.a");
    let _ = std::fs::remove_file(&lib);
    run(Command::new(&ar).arg("crs").arg(&lib).args(&objects));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=duplex_policy");
    println!("cargo:rustc-link-lib=m");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=AR");
}
