//! The interpreter: makes one call of a program with its arguments resolved
//! against the results of the earlier calls.

use crate::access;
use crate::desc::{self, CallDesc, Ioctl, Res, CALLS};
use crate::gen::literal_for;
use crate::prog::{Arg, Call};
use crate::sys::{self, cstr, errno, Mem};
use crate::target::Target;
use std::io;

/// What one call returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub ret: i64,
    pub errno: i32,
    /// The result later calls refer to (an fd, an address, a counter).
    pub value: u64,
}

const PAGE: usize = 4096;
/// The ioctl argument area: room for the largest encodable size (0x3fff)
/// from a misaligned start.
const ARG_AREA: usize = 5 * PAGE;
const MAX_ENTRIES: usize = 8192;
const KERNEL_ADDR: u64 = 0xffff_8880_0000_0000;

pub struct Interp<'a> {
    pub target: &'a Target,
    pub results: Vec<Outcome>,
    arg: Mem,
    ro: Mem,
    none: Mem,
    entries: Mem,
    io: Mem,
    /// Children of `fork` calls not waited for yet.
    pub children: Vec<i32>,
    /// True in a child of a `fork` call.
    pub forked: bool,
}

impl<'a> Interp<'a> {
    pub fn new(target: &'a Target) -> io::Result<Self> {
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        Ok(Interp {
            target,
            results: Vec::new(),
            arg: Mem::new(ARG_AREA, rw, false)?,
            ro: Mem::new(PAGE, rw, false)?,
            none: Mem::new(PAGE, libc::PROT_NONE, false)?,
            entries: Mem::new(MAX_ENTRIES * 8, rw, false)?,
            // Aligned for O_DIRECT; 4 MiB plus the misalignment.
            io: Mem::new((4 << 20) + PAGE, rw, false)?,
            children: Vec::new(),
            forked: false,
        })
    }

    /// The argument's value: a literal, or an earlier result plus `add`.
    fn val(&self, call: &Call, name: &str) -> u64 {
        match desc::arg_index(call.id, name).and_then(|i| call.args.get(i)) {
            Some(Arg::Int(v)) => *v,
            Some(Arg::Res { call: c, add }) => self
                .results
                .get(*c)
                .map_or(0, |o| o.value)
                .wrapping_add(*add),
            _ => 0,
        }
    }

    fn str_arg(&self, call: &Call, name: &str) -> String {
        match desc::arg_index(call.id, name).and_then(|i| call.args.get(i)) {
            Some(Arg::Str(s)) => s.clone(),
            _ => String::new(),
        }
    }

    /// Makes the call; `value` defaults to the "failed" literal of its kind.
    pub fn run(&mut self, call: &Call) -> Outcome {
        let d = &CALLS[call.id];
        let mut out = match d.ioctl {
            Some(io) => self.ioctl(call, d, io),
            None => self.plain(call),
        };
        if out.ret < 0 {
            if let Some(kind) = d.ret {
                if !matches!(kind, Res::Counter) {
                    out.value = literal_for(kind);
                }
            }
        }
        out
    }

    fn plain(&mut self, c: &Call) -> Outcome {
        match c.name() {
            "ccm_open" => self.open(
                &self.target.ccm_path(self.val(c, "dev")),
                self.val(c, "flags"),
            ),
            "rfx_open" => self.open(&self.target.reflux_dev.clone(), self.val(c, "flags")),
            "close" => sysret(unsafe { libc::close(self.val(c, "fd") as i32) } as i64),
            "ccm_dup" => fdret(unsafe { libc::dup(self.val(c, "fd") as i32) } as i64),
            "ccm_ioctl_raw" => {
                let ptr = self.ptr(self.val(c, "ptr"), self.arg.addr());
                let cmd = (self.val(c, "cmd") & !0xff00) | 0xcf00;
                sysret(unsafe { libc::ioctl(self.val(c, "fd") as i32, cmd as _, ptr) } as i64)
            }
            "ccm_drain" => self.drain(c),
            "ccm_mmap" => self.mmap(c),
            "munmap" => {
                let (a, l) = (self.val(c, "map"), self.val(c, "len"));
                sysret(unsafe { libc::munmap(a as *mut libc::c_void, l as usize) } as i64)
            }
            "mprotect" => {
                let (a, l, p) = (self.val(c, "map"), self.val(c, "len"), self.val(c, "prot"));
                sysret(
                    unsafe { libc::mprotect(a as *mut libc::c_void, l as usize, p as i32) } as i64,
                )
            }
            "map_read" => fault_ret(access::read_u8(self.val(c, "addr")).map(u64::from)),
            "map_write" => {
                let len = self.val(c, "len").min(4 << 20);
                fault_ret(
                    access::fill(self.val(c, "addr"), len, self.val(c, "byte") as u8).map(|_| len),
                )
            }
            "poll" => self.poll(c),
            "fork" => self.fork(self.val(c, "wait") != 0),
            "rfx_pread" | "rfx_pwrite" => self.rw(c),
            "rfx_fsync" => sysret(unsafe { libc::fsync(self.val(c, "fd") as i32) } as i64),
            "rfx_blkioctl" => self.blk(c),
            "cfs_mkdir" => {
                let p = cstr(&self.target.cfs_dir(self.val(c, "dir")));
                sysret(unsafe { libc::mkdir(p.as_ptr(), 0o755) } as i64)
            }
            "cfs_rmdir" => {
                let p = cstr(&self.target.cfs_dir(self.val(c, "dir")));
                sysret(unsafe { libc::rmdir(p.as_ptr()) } as i64)
            }
            "cfs_write" | "cfs_read" => {
                let attr = desc::CFS_ATTRS
                    .get(self.val(c, "attr") as usize)
                    .copied()
                    .unwrap_or("nosuch");
                let path = format!("{}/{attr}", self.target.cfs_dir(self.val(c, "dir")));
                file_op(&path, c.name() == "cfs_write", &self.str_arg(c, "value"))
            }
            "dbg_write" | "dbg_read" => {
                let path = self.target.dbg_path(self.val(c, "file"));
                file_op(&path, c.name() == "dbg_write", &self.str_arg(c, "value"))
            }
            _ => Outcome {
                ret: -1,
                errno: libc::ENOSYS,
                value: 0,
            },
        }
    }

    fn open(&self, path: &str, flags: u64) -> Outcome {
        let p = cstr(path);
        // SAFETY (for this and every raw call in this file): system calls
        // take integers and pointers into our own buffers; the kernel
        // validates everything else, which is what is being tested.
        // Never create or truncate: a device node that is missing (unbound) must not come
        // back as a regular file that later programs and tests would open instead.
        let flags = flags as i32 & !(libc::O_CREAT | libc::O_TMPFILE | libc::O_TRUNC);
        fdret(unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC) } as i64)
    }

    /// The pointer of kind `kind` (desc::PTR_KINDS) to the buffer at `good`.
    fn ptr(&self, kind: u64, good: u64) -> u64 {
        match kind {
            0 => good,
            1 => 0,
            2 => self.none.addr(),
            3 => self.ro.addr(),
            4 => good + 1,
            5 => KERNEL_ADDR,
            k => k,
        }
    }
}

fn sysret(r: i64) -> Outcome {
    Outcome {
        ret: r,
        errno: if r < 0 { errno() } else { 0 },
        value: r.max(0) as u64,
    }
}

fn fdret(r: i64) -> Outcome {
    sysret(r)
}

/// A faulting access returns -1 with the signal number as its errno.
fn fault_ret(r: Result<u64, i32>) -> Outcome {
    match r {
        Ok(v) => Outcome {
            ret: v as i64,
            errno: 0,
            value: 0,
        },
        Err(sig) => Outcome {
            ret: -1,
            errno: sig,
            value: 0,
        },
    }
}

fn file_op(path: &str, write: bool, value: &str) -> Outcome {
    let (r, e) = if write {
        sys::write_file(path, value.as_bytes())
    } else {
        sys::read_file(path)
    };
    Outcome {
        ret: r,
        errno: e,
        value: 0,
    }
}

/// The command number of variant `v` (desc::CMD_VARIANTS).
pub fn ioctl_cmd(io: &Ioctl, v: u64) -> u64 {
    let enc = |dir: u64, nr: u64, size: u64| dir << 30 | (size & 0x3fff) << 16 | 0xcf << 8 | nr;
    let (nr, size) = (io.nr as u64, io.size as u64);
    match v {
        1 => enc(3, nr, 0),
        2 => enc(3, nr, size - 8),
        3 => enc(3, nr, size + 8),
        4 => enc(3, nr, 0x3fff),
        5 => enc(2, nr, size),
        6 => enc(1, nr, size),
        7 => enc(3, 0x86, size),
        _ => enc(3, nr, size),
    }
}

pub fn put(buf: &mut [u8], off: usize, width: usize, v: u64) {
    if let Some(dst) = buf.get_mut(off..off + width) {
        dst.copy_from_slice(&v.to_le_bytes()[..width]);
    }
}

pub fn get(buf: &[u8], off: usize, width: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(src) = buf.get(off..off + width) {
        b[..width].copy_from_slice(src);
    }
    u64::from_le_bytes(b)
}

impl Interp<'_> {
    /// A cxl_ccm ioctl: the structure built from the call's field arguments.
    fn ioctl(&mut self, c: &Call, d: &CallDesc, io: Ioctl) -> Outcome {
        let mut st = vec![0u8; io.size as usize];
        for ad in d.args {
            if let Some(f) = ad.field {
                put(
                    &mut st,
                    f.off as usize,
                    f.width as usize,
                    self.val(c, ad.name),
                );
            }
        }
        if d.name == "ccm_release" {
            let ents = self.release_entries(c);
            put(&mut st, 0, 8, ents);
        }
        let kind = self.val(c, "ptr");
        self.arg.bytes().fill(0);
        self.arg.bytes()[..st.len()].copy_from_slice(&st);
        self.ro.protect(libc::PROT_READ | libc::PROT_WRITE);
        self.ro.bytes()[..st.len()].copy_from_slice(&st);
        self.ro.protect(libc::PROT_READ);
        let ptr = self.ptr(kind, self.arg.addr());
        let cmd = ioctl_cmd(&io, self.val(c, "cmd"));
        let r = unsafe { libc::ioctl(self.val(c, "fd") as i32, cmd as _, ptr) } as i64;
        let mut out = sysret(r);
        out.value = 0;
        if let (Some(f), 0) = (io.ret, kind) {
            out.value = get(self.arg.bytes(), f.off as usize, f.width as usize);
        }
        out
    }

    /// The entries array of a RELEASE: e0..e3, then zeros up to `count`.
    fn release_entries(&mut self, c: &Call) -> u64 {
        let mut e = [0u8; 32];
        for k in 0..4 {
            put(&mut e, k * 8, 4, self.val(c, &format!("e{k}_index")));
            put(&mut e, k * 8 + 4, 4, self.val(c, &format!("e{k}_len")));
        }
        // The array ends at the end of the area: a count beyond it faults.
        let count = (self.val(c, "count") as usize).clamp(4, MAX_ENTRIES);
        let first = (MAX_ENTRIES - count) * 8;
        let start = self.entries.addr() + first as u64;
        let buf = self.entries.bytes();
        buf.fill(0);
        buf[first..first + 32].copy_from_slice(&e);
        self.ptr(self.val(c, "entries"), start)
    }

    fn mmap(&mut self, c: &Call) -> Outcome {
        let off = (self.val(c, "region") << 28).wrapping_add(self.val(c, "delta"));
        let (len, prot, flags) = (
            self.val(c, "len"),
            self.val(c, "prot"),
            self.val(c, "flags"),
        );
        let fd = self.val(c, "fd") as i32;
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                prot as i32,
                flags as i32,
                fd,
                off as i64,
            )
        };
        if p == libc::MAP_FAILED {
            return Outcome {
                ret: -1,
                errno: errno(),
                value: 0,
            };
        }
        Outcome {
            ret: 0,
            errno: 0,
            value: p as u64,
        }
    }

    fn poll(&mut self, c: &Call) -> Outcome {
        let mut pfd = libc::pollfd {
            fd: self.val(c, "fd") as i32,
            events: self.val(c, "events") as i16,
            revents: 0,
        };
        let r =
            unsafe { libc::poll(&mut pfd, 1, self.val(c, "timeout_ms").min(1000) as i32) } as i64;
        let mut out = sysret(r);
        out.value = pfd.revents as u16 as u64;
        out
    }

    fn fork(&mut self, wait: bool) -> Outcome {
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            self.forked = true;
            self.children.clear();
        } else if pid > 0 {
            if wait {
                let mut st = 0;
                unsafe { libc::waitpid(pid, &mut st, 0) };
            } else {
                self.children.push(pid);
            }
        }
        sysret(pid as i64)
    }

    /// Waits for the children of `fork` calls (at the end of the program).
    pub fn reap(&mut self) {
        for pid in self.children.drain(..) {
            let mut st = 0;
            unsafe { libc::waitpid(pid, &mut st, 0) };
        }
    }

    fn rw(&mut self, c: &Call) -> Outcome {
        let len = self.val(c, "len").min(4 << 20) as usize;
        let mis = self.val(c, "misalign").min(PAGE as u64) as usize;
        let (fd, off) = (self.val(c, "fd") as i32, self.val(c, "off") as i64);
        let byte = self.val(c, "byte") as u8;
        let buf = &mut self.io.bytes()[mis..mis + len];
        let r = if c.name() == "rfx_pwrite" {
            buf.fill(byte);
            unsafe { libc::pwrite(fd, buf.as_ptr() as *const libc::c_void, len, off) }
        } else {
            unsafe { libc::pread(fd, buf.as_mut_ptr() as *mut libc::c_void, len, off) }
        };
        sysret(r as i64)
    }

    fn blk(&mut self, c: &Call) -> Outcome {
        const BLKGETSIZE64: u64 = 0x8008_1272;
        const BLKSSZGET: u64 = 0x1268;
        const BLKFLSBUF: u64 = 0x1261;
        const BLKDISCARD: u64 = 0x1277;
        const BLKZEROOUT: u64 = 0x127f;
        const BLKPBSZGET: u64 = 0x127b;
        const BLKSECDISCARD: u64 = 0x127d;
        let cmd = [
            BLKGETSIZE64,
            BLKSSZGET,
            BLKFLSBUF,
            BLKDISCARD,
            BLKZEROOUT,
            BLKPBSZGET,
            BLKSECDISCARD,
            0x12ff,
        ];
        let op = cmd
            .get(self.val(c, "op") as usize)
            .copied()
            .unwrap_or(0x12ff);
        let mut range = [self.val(c, "start"), self.val(c, "len")];
        let arg = if op == BLKFLSBUF {
            0
        } else {
            range.as_mut_ptr() as u64
        };
        let r = unsafe { libc::ioctl(self.val(c, "fd") as i32, op as _, arg) } as i64;
        let mut out = sysret(r);
        out.value = range[0];
        out
    }

    /// The consumer loop once: every record below the headers' metadata
    /// tail from `head` on, released with the new metadata head.
    fn drain(&mut self, c: &Call) -> Outcome {
        let (hdr, md, head) = (
            self.val(c, "headers"),
            self.val(c, "metadata"),
            self.val(c, "head") as u32,
        );
        let (tail, cap) = match (access::read_u32(hdr), access::read_u32(hdr + 4)) {
            (Ok(t), Ok(cap)) => (t, cap),
            (Err(s), _) | (_, Err(s)) => return fault_ret(Err(s)),
        };
        if cap == 0 || !cap.is_power_of_two() {
            return Outcome {
                ret: -1,
                errno: libc::EPROTO,
                value: head as u64,
            };
        }
        let n = tail.wrapping_sub(head).min(cap).min(desc_release_max());
        let mut ents = Vec::with_capacity(n as usize * 8);
        for k in 0..n {
            let rec = md + ((head.wrapping_add(k) & (cap - 1)) as u64) * 32;
            match (access::read_u32(rec + 8), access::read_u32(rec + 12)) {
                (Ok(pi), Ok(len)) => {
                    ents.extend_from_slice(&pi.to_le_bytes());
                    ents.extend_from_slice(&len.to_le_bytes());
                }
                (Err(s), _) | (_, Err(s)) => return fault_ret(Err(s)),
            }
        }
        let new_head = head.wrapping_add(n);
        let mut st = [0u8; 0x30];
        put(&mut st, 0, 8, ents.as_ptr() as u64);
        put(&mut st, 8, 4, n as u64);
        put(&mut st, 12, 4, self.val(c, "flags") | 1);
        put(&mut st, 16, 4, new_head as u64);
        let io = CALLS[desc::lookup("ccm_release").unwrap_or(0)].ioctl;
        let cmd = io.map_or(0, |io| ioctl_cmd(&io, 0));
        let r = unsafe { libc::ioctl(self.val(c, "fd") as i32, cmd as _, st.as_mut_ptr()) } as i64;
        let mut out = sysret(r);
        out.value = new_head as u64;
        out
    }
}

fn desc_release_max() -> u32 {
    4096
}
