//! KCOV (Documentation/dev-tools/kcov.rst): the parent opens the device,
//! sizes and maps the buffer once; each executor child enables it for
//! itself (coverage is per task and off again when the task exits), resets
//! the count before a call and turns the PCs it collected into edges.

use crate::sys::{cstr, Mem};
use std::io;

const KCOV_PATH: &str = "/sys/kernel/debug/kcov";
/// _IOR('c', 1, unsigned long)
const KCOV_INIT_TRACE: u64 = 0x8008_6301;
/// _IO('c', 100), _IO('c', 101)
const KCOV_ENABLE: u64 = 0x6364;
const KCOV_DISABLE: u64 = 0x6365;
const KCOV_TRACE_PC: u64 = 0;
/// Words of the buffer: PCs of one call (the first word is the count).
pub const WORDS: usize = 1 << 18;

pub struct Kcov {
    fd: i32,
    area: Mem,
}

impl Kcov {
    pub fn open() -> io::Result<Kcov> {
        let p = cstr(KCOV_PATH);
        // SAFETY: system calls on our own descriptor.
        let fd = unsafe { libc::open(p.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::ioctl(fd, KCOV_INIT_TRACE as _, WORDS as libc::c_ulong) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // SAFETY: mapping the kcov buffer of WORDS words, as kcov.rst does.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                WORDS * 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: closing our descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(Kcov {
            fd,
            area: Mem {
                ptr: ptr as *mut u8,
                len: WORDS * 8,
            },
        })
    }

    /// Starts collecting for the calling task (in the executor child).
    pub fn enable(&self) -> io::Result<()> {
        // SAFETY: an ioctl on our descriptor.
        if unsafe { libc::ioctl(self.fd, KCOV_ENABLE as _, KCOV_TRACE_PC as libc::c_ulong) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn disable(&self) {
        // SAFETY: an ioctl on our descriptor.
        unsafe { libc::ioctl(self.fd, KCOV_DISABLE as _, 0 as libc::c_ulong) };
    }

    pub fn reset(&self) {
        self.area.store(0, 0);
    }

    /// Feeds the edges of the PCs collected since reset() to `edge`.
    pub fn edges(&self, mut edge: impl FnMut(u64)) {
        let n = (self.area.load(0) as usize).min(WORDS - 1);
        let mut prev = 0u64;
        for i in 1..=n {
            let pc = self.area.load(i);
            edge(edge_hash(prev, pc));
            prev = pc;
        }
    }
}

impl Drop for Kcov {
    fn drop(&mut self) {
        // SAFETY: closing our descriptor (the mapping is dropped after).
        unsafe { libc::close(self.fd) };
    }
}

/// An edge between two consecutive PCs (AFL's prev >> 1 ^ cur, mixed).
pub fn edge_hash(prev: u64, pc: u64) -> u64 {
    ((prev >> 1) ^ pc).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}
