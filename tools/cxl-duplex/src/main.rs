// SPDX-License-Identifier: GPL-2.0

//! cxl-duplex: mixed read/write bandwidth and latency of one NUMA node's memory.

use std::process::ExitCode;
use std::time::Duration;

use cxl_duplex::latency;
use cxl_duplex::numa::NodeBuffer;
use cxl_duplex::plan::{self, parse_list, parse_size, PlanError};
use cxl_duplex::report::{self, Row};
use cxl_duplex::workers::{self, Job};

const USAGE: &str = "\
usage: cxl-duplex [bw|sweep|scaling|latency] [options]

  bw        one run: --read PERCENT --threads N
  sweep     every --read ratio at every --threads count (the Figure 2/4 curve)
  scaling   load (100 % reads) and store (0 %) bandwidth at every --threads count
  latency   pointer-chasing load latency, idle, then under --load-threads workers
            doing --read PERCENT reads

options:
  --node N            NUMA node of the buffers (default 0); refused unless every page is there
  --size BYTES        buffer size, K/M/G suffixes (default 256M)
  --block BYTES       bytes per operation, a power of two from 64 to 1M (default 4K)
  --pattern seq|rand  access order (default rand)
  --read LIST         reads in percent: 50, 0,50,100 or 0-100:10 (default 50; sweep 0-100:10)
  --threads LIST      worker threads, 1 to 512 (default 1; sweep and scaling 1,2)
  --rate BYTES        cap the total bandwidth at BYTES per second (token bucket)
  --duration-ms MS    per measurement (default 1000)
  --load-threads N    latency: load threads (default 1)
  --json              JSON instead of the table
  --svg FILE          also write bandwidth against read ratio as SVG

The table's op_ns is the time per operation per thread and acct the share of it the tool's
own bookkeeping takes (mix, block choice, clock), measured separately.";

struct Opts {
    cmd: String,
    node: u32,
    size: u64,
    block: u64,
    random: bool,
    reads: Option<Vec<u32>>,
    threads: Option<Vec<u32>>,
    rate: Option<u64>,
    duration: Duration,
    load_threads: u32,
    json: bool,
    svg: Option<String>,
}

/// The commands of the synopsis; anything else in first place is a usage error.
const COMMANDS: [&str; 4] = ["bw", "sweep", "scaling", "latency"];

/// What the command line asks for: a run, or the help (exit 0, on stdout).
enum Request {
    Run(Opts),
    Help,
}

/// Parses the command line; `Err` is a usage error (exit 2): a malformed or out-of-range value is
/// the user's to fix before anything is allocated, unlike a node or buffer the run refuses.
fn parse(args: &[String]) -> Result<Request, String> {
    let mut o = Opts {
        cmd: "bw".into(),
        node: 0,
        size: 256 << 20,
        block: 4096,
        random: true,
        reads: None,
        threads: None,
        rate: None,
        duration: Duration::from_millis(1000),
        load_threads: 1,
        json: false,
        svg: None,
    };
    let mut it = args.iter().peekable();
    if let Some(c) = it.next_if(|c| !c.starts_with("--")) {
        if !COMMANDS.contains(&c.as_str()) {
            return Err(format!("unknown command {c}"));
        }
        o.cmd = c.clone();
    }
    while let Some(a) = it.next() {
        if a == "--help" {
            return Ok(Request::Help);
        }
        set_option(&mut o, a, &mut it)?;
    }
    check_ranges(&o)?;
    Ok(Request::Run(o))
}

/// Applies option `a`, taking its value from `rest` if it has one.
fn set_option<'a>(
    o: &mut Opts,
    a: &str,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<(), String> {
    let mut val = || rest.next().cloned().ok_or(format!("{a} needs a value"));
    let bad = |v: &str| format!("{a}: cannot use {v:?}");
    match a {
        "--node" => {
            let v = val()?;
            o.node = v.parse().map_err(|_| bad(&v))?;
        }
        "--size" => {
            let v = val()?;
            o.size = parse_size(&v).filter(|s| *s > 0).ok_or_else(|| bad(&v))?;
        }
        "--block" => {
            let v = val()?;
            o.block = parse_size(&v).ok_or_else(|| bad(&v))?;
        }
        "--pattern" => {
            let v = val()?;
            o.random = match v.as_str() {
                "rand" => true,
                "seq" => false,
                _ => return Err(bad(&v)),
            };
        }
        "--read" => {
            let v = val()?;
            o.reads = Some(parse_list(&v).ok_or_else(|| bad(&v))?);
        }
        "--threads" => {
            let v = val()?;
            o.threads = Some(parse_list(&v).ok_or_else(|| bad(&v))?);
        }
        "--rate" => {
            let v = val()?;
            o.rate = Some(parse_size(&v).filter(|r| *r > 0).ok_or_else(|| bad(&v))?);
        }
        "--duration-ms" => {
            let v = val()?;
            let ms: u64 = v.parse().ok().filter(|m| *m > 0).ok_or_else(|| bad(&v))?;
            o.duration = Duration::from_millis(ms);
        }
        "--load-threads" => {
            let v = val()?;
            o.load_threads = v
                .parse()
                .ok()
                .filter(|t| (1..=plan::MAX_THREADS).contains(t))
                .ok_or_else(|| bad(&v))?;
        }
        "--json" => o.json = true,
        "--svg" => o.svg = Some(val()?),
        _ => return Err(format!("unknown option {a}")),
    }
    Ok(())
}

/// Refuses blocks, thread counts and read ratios out of range, naming the option: they are
/// command-line errors like malformed values, found before any memory is placed.
fn check_ranges(o: &Opts) -> Result<(), String> {
    let reads = o.reads.as_deref().unwrap_or_default();
    let threads = o.threads.as_deref().unwrap_or_default();
    plan::check_values(reads, threads, o.block).map_err(|e| {
        let opt = match e {
            PlanError::BadRatio(_) => "--read",
            PlanError::BadThreads(_) => "--threads",
            _ => "--block",
        };
        format!("{opt}: {e}")
    })
}
fn bandwidth_row(o: &Opts, buf: &NodeBuffer, read_percent: u32, threads: u32) -> Row {
    let job = Job {
        block: o.block,
        random: o.random,
        read_percent,
        threads,
        duration: o.duration,
        rate: o.rate,
    };
    let out = workers::run(buf, &job, None);
    let secs = out.elapsed_ns.max(1) as f64 / 1e9;
    let acct = workers::accounting_cost(&job, Duration::from_millis(20));
    Row {
        kind: "bandwidth",
        node: buf.node(),
        pattern: if o.random { "rand" } else { "seq" },
        block: o.block,
        threads,
        read_percent,
        gbps: out.bandwidth() / 1e9,
        read_gbps: out.read_bytes as f64 / secs / 1e9,
        write_gbps: out.write_bytes as f64 / secs / 1e9,
        latency_ns: None,
        ops: out.ops,
        elapsed_ms: secs * 1e3,
        checksum: out.checksum,
        accounting_ns: acct,
        op_ns: out.elapsed_ns as f64 * f64::from(threads) / out.ops.max(1) as f64,
    }
}

fn run(o: &Opts) -> Result<Vec<Row>, String> {
    let (reads, threads) = match o.cmd.as_str() {
        "bw" => (
            o.reads.clone().unwrap_or(vec![50]),
            o.threads.clone().unwrap_or(vec![1]),
        ),
        "sweep" => (
            o.reads.clone().unwrap_or((0..=100).step_by(10).collect()),
            o.threads.clone().unwrap_or(vec![1, 2]),
        ),
        "scaling" => (vec![100, 0], o.threads.clone().unwrap_or(vec![1, 2])),
        "latency" => (o.reads.clone().unwrap_or(vec![50]), vec![o.load_threads]),
        c => return Err(format!("unknown command {c}")),
    };
    if o.cmd == "bw" && (reads.len() != 1 || threads.len() != 1) {
        return Err("bw measures one ratio and one thread count: use sweep for lists".into());
    }
    let points = plan::sweep(&reads, &threads, o.block, o.size).map_err(|e| e.to_string())?;
    let size = usize::try_from(o.size).map_err(|_| "--size too large".to_string())?;
    let buf = NodeBuffer::new(o.node, size)?;
    eprintln!(
        "cxl-duplex: {} MiB on node {}: {} of {} pages verified there (move_pages)",
        buf.len() >> 20,
        buf.node(),
        buf.placement().on_node,
        buf.placement().on_node + buf.placement().elsewhere
    );
    if o.cmd != "latency" {
        return Ok(points
            .iter()
            .map(|p| bandwidth_row(o, &buf, p.read_percent, p.threads))
            .collect());
    }
    latency_rows(o, &buf, &points, size)
}

/// The idle chase of `buf`, then one chase per point under load on a second buffer of the node.
fn latency_rows(
    o: &Opts,
    buf: &NodeBuffer,
    points: &[plan::Point],
    size: usize,
) -> Result<Vec<Row>, String> {
    latency::build_chain(buf, 0x5eed);
    let idle = latency::chase(buf, o.duration);
    let base = Row {
        node: buf.node(),
        pattern: "rand",
        block: latency::LINE as u64,
        ..Row::default()
    };
    let mut rows = vec![Row {
        kind: "latency-idle",
        threads: 0,
        latency_ns: Some(idle.ns_per_load),
        ops: idle.loads,
        elapsed_ms: idle.elapsed_ns as f64 / 1e6,
        ..base.clone()
    }];
    let load = NodeBuffer::new(o.node, size)?;
    for p in points {
        let job = Job {
            block: o.block,
            random: o.random,
            read_percent: p.read_percent,
            threads: p.threads,
            duration: o.duration,
            rate: o.rate,
        };
        let (chase, out) = latency::loaded(buf, &load, &job);
        let secs = out.elapsed_ns.max(1) as f64 / 1e9;
        rows.push(Row {
            kind: "latency-loaded",
            threads: p.threads,
            read_percent: p.read_percent,
            gbps: out.bandwidth() / 1e9,
            read_gbps: out.read_bytes as f64 / secs / 1e9,
            write_gbps: out.write_bytes as f64 / secs / 1e9,
            latency_ns: Some(chase.ns_per_load),
            ops: out.ops,
            elapsed_ms: secs * 1e3,
            checksum: out.checksum,
            ..base.clone()
        });
    }
    Ok(rows)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(Request::Run(o)) => o,
        Ok(Request::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("cxl-duplex: {e}");
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let rows = match run(&o) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cxl-duplex: {e}");
            return ExitCode::from(1);
        }
    };
    if o.json {
        print!("{}", report::json(&rows));
    } else {
        print!("{}", report::table(&rows));
    }
    if let Some(path) = &o.svg {
        let title = format!("node {}: bandwidth against read ratio", o.node);
        match report::svg(&rows, &title) {
            Some(s) => {
                if let Err(e) = std::fs::write(path, s) {
                    eprintln!("cxl-duplex: {path}: {e}");
                    return ExitCode::from(1);
                }
            }
            None => eprintln!("cxl-duplex: no bandwidth rows to plot"),
        }
    }
    ExitCode::SUCCESS
}
