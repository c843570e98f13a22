//! The kernel log (/dev/kmsg), read after every program: a report there
//! (a WARN, a BUG, KASAN, a lockup...) makes the program a finding.

use crate::sys::cstr;

pub const PATTERNS: &[&str] = &[
    "BUG:",
    "WARNING:",
    "Oops",
    "KASAN",
    "kernel BUG",
    "UBSAN",
    "general protection",
    "hung task",
    "soft lockup",
    "refcount_t",
    "list_add corruption",
    "Call Trace",
    "rcu_sched self-detected",
    "Kernel panic",
    "panicked at",
];

pub struct Kmsg {
    fd: i32,
}

impl Kmsg {
    /// Opens /dev/kmsg at its end: only messages from now on are read.
    pub fn open() -> Option<Kmsg> {
        let p = cstr("/dev/kmsg");
        // SAFETY: plain system calls on our descriptor.
        let fd = unsafe {
            libc::open(
                p.as_ptr(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: as above.
        unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
        Some(Kmsg { fd })
    }

    /// The messages logged since the last call.
    pub fn read_new(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        loop {
            // SAFETY: reading into our buffer; each read is one record.
            let n =
                unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n < 0 {
                if crate::sys::errno() == libc::EPIPE {
                    continue; // records were overwritten: go on with the next
                }
                break; // EAGAIN: nothing more
            }
            if n == 0 {
                break;
            }
            let rec = String::from_utf8_lossy(&buf[..n as usize]);
            // "prio,seq,ts,flags;message\n continuation"
            let msg = rec.split_once(';').map_or(&*rec, |(_, m)| m);
            out.push(msg.trim_end().to_string());
        }
        out
    }
}

impl Drop for Kmsg {
    fn drop(&mut self) {
        // SAFETY: closing our descriptor.
        unsafe { libc::close(self.fd) };
    }
}

/// The first message that is a kernel report.
pub fn find_report(lines: &[String]) -> Option<&String> {
    lines
        .iter()
        .find(|l| PATTERNS.iter().any(|p| l.contains(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_found() {
        let lines = vec![
            "cxl_ccm: refused".to_string(),
            "WARNING: CPU: 1 PID: 9 at x".to_string(),
        ];
        assert_eq!(
            find_report(&lines).map(String::as_str),
            Some("WARNING: CPU: 1 PID: 9 at x")
        );
        assert_eq!(find_report(&lines[..1]), None);
    }
}
