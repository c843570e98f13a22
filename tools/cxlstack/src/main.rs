// SPDX-License-Identifier: GPL-2.0

//! `cxlstack`: list, watch and steer the stack's devices (cxl_ccm computational memory,
//! reflux computational storage) from one command, with stable JSON (`--json`).

#[path = "../../reflux-bench/src/json.rs"]
#[allow(dead_code)]
mod json;
mod model;
mod report;
mod sys;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use sys::System;

#[derive(Parser)]
#[command(
    name = "cxlstack",
    version,
    about = "List, watch and steer the cxl_ccm and reflux devices"
)]
struct Cli {
    /// Read the system under this directory instead of / (for tests)
    #[arg(long, default_value = "/", hide = true)]
    root: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The devices: CCM identity and tenants, reflux actors and where they run, attachments
    List {
        /// JSON (schema version 1) instead of a table
        #[arg(long)]
        json: bool,
    },
    /// The counters now, or every SECONDS with --monitor
    Stat {
        #[arg(long)]
        json: bool,
        /// Print again every SECONDS
        #[arg(long, value_name = "SECONDS")]
        monitor: Option<u64>,
        /// With --monitor: stop after this many prints (default: until interrupted)
        #[arg(long)]
        count: Option<u64>,
    },
    /// Move a reflux actor: cxlstack migrate reflux0 2 host
    Migrate {
        device: String,
        actor: u32,
        #[arg(value_parser = ["host", "device"])]
        to: String,
    },
    /// Attach a pipeline to a byte range of a reflux device (configfs)
    Attach {
        name: String,
        #[arg(long)]
        device: String,
        /// Bytes, with K, M, G suffixes; multiples of 128 KiB
        #[arg(long)]
        start: String,
        #[arg(long)]
        length: String,
        #[arg(long, value_parser = ["passthrough", "checksum", "compress", "encrypt"])]
        pipeline: String,
        /// Add the crc32c stage
        #[arg(long)]
        checksum: bool,
    },
    /// Remove an attachment
    Detach { name: String },
}

fn show(sys: &System, json: bool) -> Result<(), String> {
    let s = sys.snapshot()?;
    if json {
        println!("{}", report::json(&s).render());
    } else {
        print!("{}", report::table(&s));
    }
    Ok(())
}

fn attach(sys: &System, name: &str, attrs: &[(&str, &str)]) -> Result<(), String> {
    let dir = format!("sys/kernel/config/reflux/{name}");
    sys.mkdir(&dir, true)?;
    let result = attrs
        .iter()
        .try_for_each(|(a, v)| sys.write(&format!("{dir}/{a}"), v));
    if result.is_err() {
        // Leave nothing half made.
        let _ = sys.mkdir(&dir, false);
    }
    result
}

fn run(cli: Cli) -> Result<(), String> {
    let sys = System::new(&cli.root);
    match cli.cmd {
        Cmd::List { json } => show(&sys, json),
        Cmd::Stat {
            json,
            monitor,
            count,
        } => {
            let mut printed = 0u64;
            loop {
                show(&sys, json)?;
                printed += 1;
                match monitor {
                    Some(secs) if count.map_or(true, |c| printed < c) => {
                        std::thread::sleep(Duration::from_secs(secs));
                    }
                    _ => return Ok(()),
                }
            }
        }
        Cmd::Migrate { device, actor, to } => sys.write(
            &format!("sys/kernel/debug/{device}/migrate"),
            &format!("{actor} {to}\n"),
        ),
        Cmd::Attach {
            name,
            device,
            start,
            length,
            pipeline,
            checksum,
        } => attach(
            &sys,
            &name,
            &[
                ("device", device.as_str()),
                ("start", start.as_str()),
                ("length", length.as_str()),
                ("pipeline", pipeline.as_str()),
                ("checksum", if checksum { "1" } else { "0" }),
                ("enable", "1"),
            ],
        ),
        Cmd::Detach { name } => {
            let dir = format!("sys/kernel/config/reflux/{name}");
            sys.write(&format!("{dir}/enable"), "0")?;
            sys.mkdir(&dir, false)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cxlstack: {e}");
            ExitCode::from(1)
        }
    }
}
