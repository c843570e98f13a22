//! `reflux-engine FILE WINDOW_OFFSET [POLL_US]`: serves the compression-engine window of the
//! software CXL SSD whose PMR (and window) are in the shared file `FILE`, until killed.
//!
//! Started by `tools/vm/qemu.sh` next to QEMU when the benchmark asks for the engine
//! (`make bench-reflux REFLUX_ENGINE=1`). It waits for the device to lay the window out,
//! then polls the slots, sleeping `POLL_US` microseconds (default 200) between empty scans, and
//! beats its heartbeat about every millisecond. It prints what it served when it gets SIGTERM.
//!
//! Polling costs the machine the VM runs on: at 20 µs it took a quarter of a CPU from QEMU
//! while idle. A job's modelled time is a millisecond or more and the core's wait counts
//! towards it, so 200 µs hides in the model; after [`IDLE_NAP_AFTER`] without a job the engine
//! naps a millisecond at a time.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reflux_engine::window::Engine;

static STOP: AtomicBool = AtomicBool::new(false);

/// Without a job for this long the engine polls once a millisecond.
const IDLE_NAP_AFTER: Duration = Duration::from_millis(20);

extern "C" fn on_term(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

const USAGE: &str = "usage: reflux-engine FILE WINDOW_OFFSET [POLL_US]";

fn parse(s: &str) -> Option<usize> {
    match s.strip_prefix("0x") {
        Some(h) => usize::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The command line.
struct Args {
    path: String,
    window: usize,
    poll: Duration,
}

/// `Ok(None)` is a request for the usage; `Err(())` a usage error. A malformed POLL_US or an
/// extra argument is refused, not replaced by the default or dropped: the engine would
/// otherwise run with a setting nobody asked for.
fn parse_args(args: &[String]) -> Result<Option<Args>, ()> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(None);
    }
    let [path, window, rest @ ..] = args else {
        return Err(());
    };
    let poll_us = match rest {
        [] => 200,
        [p] => parse(p).ok_or(())?,
        _ => return Err(()),
    };
    Ok(Some(Args {
        path: path.clone(),
        window: parse(window).ok_or(())?,
        poll: Duration::from_micros(poll_us as u64),
    }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Args { path, window, poll } = match parse_args(&args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(()) => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let path = &path;
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("reflux-engine: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let len = match file.metadata() {
        Ok(m) => m.len() as usize,
        Err(e) => {
            eprintln!("reflux-engine: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: a fresh shared mapping of the whole file, read-write, checked below; nothing else
    // in this process uses the address range.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        eprintln!(
            "reflux-engine: mmap {path}: {}",
            std::io::Error::last_os_error()
        );
        return ExitCode::FAILURE;
    }
    // SAFETY: the mapping above is `len` bytes, read-write, and is never unmapped (the
    // process exits with it).
    let mut engine = match unsafe { Engine::new(base.cast(), len, window) } {
        Ok(e) => e,
        Err(e) => {
            eprintln!("reflux-engine: window {window:#x} in {len} bytes: {e:?}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: `on_term` only stores to an atomic, which is async-signal-safe; the timer slack
    // call only changes this thread's timer slack.
    unsafe {
        libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_term as *const () as libc::sighandler_t);
        // Sleeps of tens of microseconds, not the default 50 µs slack on top.
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
    let mut beat = Instant::now();
    let mut last_job = Instant::now();
    let mut was_attached = false;
    while !STOP.load(Ordering::Relaxed) {
        if !engine.attached() {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        if engine.paused() {
            // Neither serving nor beating: the device's test of a hung engine.
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if !was_attached {
            eprintln!("reflux-engine: attached to the window at {window:#x}");
            was_attached = true;
            engine.beat();
        }
        if beat.elapsed() >= Duration::from_millis(1) {
            engine.beat();
            beat = Instant::now();
        }
        if engine.serve() != 0 {
            last_job = Instant::now();
        } else if last_job.elapsed() < IDLE_NAP_AFTER {
            std::thread::sleep(poll);
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    eprintln!(
        "reflux-engine: {} jobs ok, {} bad state, {} invalid, {} data errors; {} blocks",
        engine.jobs[0], engine.jobs[1], engine.jobs[2], engine.jobs[3], engine.blocks
    );
    ExitCode::SUCCESS
}
