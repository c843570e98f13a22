//! Thin wrappers over the system calls the executor needs.

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

pub fn cstr(s: &str) -> CString {
    // Paths and values never contain NUL: escape() keeps it out of programs.
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

/// An anonymous mapping; MAP_SHARED ones are seen by forked children.
pub struct Mem {
    pub ptr: *mut u8,
    pub len: usize,
}

impl Mem {
    pub fn new(len: usize, prot: i32, shared: bool) -> io::Result<Mem> {
        let flags = libc::MAP_ANONYMOUS
            | if shared {
                libc::MAP_SHARED
            } else {
                libc::MAP_PRIVATE
            };
        // SAFETY: a fresh anonymous mapping, no existing memory is touched.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mem {
            ptr: ptr as *mut u8,
            len,
        })
    }

    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    pub fn protect(&self, prot: i32) {
        // SAFETY: the range is this mapping's own.
        unsafe { libc::mprotect(self.ptr as *mut libc::c_void, self.len, prot) };
    }

    /// Word `i` as an atomic: the area is shared with a child process.
    pub fn word(&self, i: usize) -> &AtomicU64 {
        assert!((i + 1) * 8 <= self.len, "word {i} outside the area");
        // SAFETY: in bounds (checked), 8-aligned (page-aligned base), and the
        // mapping lives as long as self.
        unsafe { &*(self.ptr.add(i * 8) as *const AtomicU64) }
    }

    pub fn load(&self, i: usize) -> u64 {
        self.word(i).load(Ordering::Acquire)
    }

    pub fn store(&self, i: usize, v: u64) {
        self.word(i).store(v, Ordering::Release)
    }

    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is len bytes, readable and writable while the
        // caller has not protected it otherwise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

pub fn write_file(path: &str, data: &[u8]) -> (i64, i32) {
    let p = cstr(path);
    // SAFETY: plain system calls on a NUL-terminated path and our buffer.
    unsafe {
        let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return (-1, errno());
        }
        let r = libc::write(fd, data.as_ptr() as *const libc::c_void, data.len());
        let e = if r < 0 { errno() } else { 0 };
        libc::close(fd);
        (r as i64, e)
    }
}

pub fn read_file(path: &str) -> (i64, i32) {
    let p = cstr(path);
    let mut buf = [0u8; 4096];
    // SAFETY: as above.
    unsafe {
        let fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return (-1, errno());
        }
        let r = libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
        let e = if r < 0 { errno() } else { 0 };
        libc::close(fd);
        (r as i64, e)
    }
}

pub fn sleep_ms(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms));
}
