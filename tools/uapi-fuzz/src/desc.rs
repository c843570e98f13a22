//! Typed descriptions of the calls the fuzzer makes, written from
//! include/uapi/linux/cxl_ccm.h, Documentation/cxl_ccm.rst and
//! Documentation/reflux.rst only (not from the drivers).
//!
//! A call is a name and a list of typed arguments; an ioctl argument that is
//! a field of the command's structure carries its offset and width, so that
//! the executor and the C reproducer fill the structure generically.

/// What a call's result is, and what an argument may refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Res {
    CcmFd,
    RfxFd,
    /// Either kind of file descriptor (close, poll).
    AnyFd,
    /// The address of a mapping of a cxl_ccm file.
    Map,
    /// A free-running __u32 counter: index_base, a tag, a metadata tail.
    Counter,
}

impl Res {
    /// Whether a result of kind `produced` can be used where `self` is wanted.
    pub fn accepts(self, produced: Res) -> bool {
        self == produced || (self == Res::AnyFd && matches!(produced, Res::CcmFd | Res::RfxFd))
    }
}

/// The domain of an integer argument: what the generator draws from.
#[derive(Clone, Copy, Debug)]
pub enum Dom {
    /// Any 32- or 64-bit value, drawn from the interesting values or random.
    Int(u8),
    /// One of these values (an enum), rarely something else.
    Set(&'static [u64]),
    /// An OR of these bits, rarely an undocumented bit.
    Flags(&'static [u64]),
    /// A power of two up to 2^31 (ring capacities, slot sizes), or nearby.
    Pow2,
    /// A byte size or offset: page multiples and the header's limits.
    Size,
    /// A reserved field: 0, rarely not.
    Zero,
    /// Word `n` of LAUNCH's argument block: depends on the call's kernel_id.
    KArg(u8),
}

#[derive(Clone, Copy, Debug)]
pub enum Ty {
    Res(Res),
    Int(Dom),
    /// A string written to a configfs or debugfs file.
    Str(&'static [&'static str]),
}

/// Where an ioctl argument goes in the command's structure.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub off: u16,
    pub width: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct ArgDesc {
    pub name: &'static str,
    pub ty: Ty,
    pub field: Option<Field>,
}

/// The structure of a cxl_ccm ioctl.
#[derive(Clone, Copy, Debug)]
pub struct Ioctl {
    pub nr: u8,
    pub size: u16,
    /// The output field that is this call's result (a Res::Counter).
    pub ret: Option<Field>,
}

#[derive(Clone, Copy, Debug)]
pub struct CallDesc {
    pub name: &'static str,
    pub args: &'static [ArgDesc],
    pub ret: Option<Res>,
    pub ioctl: Option<Ioctl>,
    /// Calls on the reflux device, configfs or debugfs (--no-reflux drops them).
    pub reflux: bool,
    /// Relative weight for random choice.
    pub weight: u32,
}

const fn a(name: &'static str, ty: Ty) -> ArgDesc {
    ArgDesc {
        name,
        ty,
        field: None,
    }
}
const fn f(name: &'static str, dom: Dom, off: u16, width: u8) -> ArgDesc {
    ArgDesc {
        name,
        ty: Ty::Int(dom),
        field: Some(Field { off, width }),
    }
}
/// A counter-valued structure field: a result of an earlier call or a number.
const fn fr(name: &'static str, off: u16) -> ArgDesc {
    ArgDesc {
        name,
        ty: Ty::Res(Res::Counter),
        field: Some(Field { off, width: 4 }),
    }
}
const fn int(name: &'static str, dom: Dom) -> ArgDesc {
    a(name, Ty::Int(dom))
}
const fn res(name: &'static str, r: Res) -> ArgDesc {
    a(name, Ty::Res(r))
}

/// How the ioctl's argument pointer is made (calls.rs, repro prelude).
pub const PTR_GOOD: u64 = 0;
pub const PTR_KINDS: &[u64] = &[
    PTR_GOOD, 1, /* NULL */
    2, /* unmapped page */
    3, /* read-only page */
    4, /* good + 1: misaligned */
    5, /* a kernel address */
];
/// How the command number is encoded: 0 exact, 1 size 0, 2 size - 8,
/// 3 size + 8, 4 the largest size, 5 _IOR, 6 _IOW, 7 another number.
pub const CMD_EXACT: u64 = 0;
pub const CMD_VARIANTS: &[u64] = &[CMD_EXACT, 1, 2, 3, 4, 5, 6, 7];

pub const MODES: &[u64] = &[0, 1, 2, 3];
pub const KERNELS: &[u64] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 63, 64];
pub const ORDERS: &[u64] = &[0, 1];
pub const CONFIGURE_FLAGS: &[u64] = &[1];
pub const LAUNCH_FLAGS: &[u64] = &[1];
pub const RELEASE_FLAGS: &[u64] = &[1, 2];
pub const STATS_FLAGS: &[u64] = &[1];
pub const WAIT_FLAGS: &[u64] = &[1];
pub const WAIT_TIMEOUTS: &[u64] = &[0, 1, 1000, 1_000_000, 20_000_000, 200_000_000, u64::MAX];
pub const OPEN_FLAGS: &[u64] = &[
    libc::O_RDWR as u64,
    libc::O_WRONLY as u64,
    libc::O_NONBLOCK as u64,
    libc::O_CLOEXEC as u64,
];
pub const RFX_OPEN_FLAGS: &[u64] = &[
    libc::O_RDWR as u64,
    libc::O_DIRECT as u64,
    libc::O_SYNC as u64,
    libc::O_NONBLOCK as u64,
];
/// 0 is the configured device (--ccm-dev); n is /dev/cxl_ccm(n - 1).
pub const CCM_DEVS: &[u64] = &[0, 0, 0, 1, 8, 9];
/// The 256 MiB windows of the mmap offsets.
pub const REGIONS: &[u64] = &[0, 1, 2, 3, 4];
/// Added to the region's offset: exact, a page either way, a byte.
pub const REGION_DELTAS: &[u64] = &[0, 4096, 4096u64.wrapping_neg(), 1, 0x0fff_f000];
pub const PROTS: &[u64] = &[
    libc::PROT_READ as u64,
    libc::PROT_WRITE as u64,
    libc::PROT_EXEC as u64,
];
pub const MAP_FLAGS: &[u64] = &[
    libc::MAP_SHARED as u64,
    libc::MAP_PRIVATE as u64,
    libc::MAP_POPULATE as u64,
    libc::MAP_LOCKED as u64,
];
pub const POLL_EVENTS: &[u64] = &[
    libc::POLLIN as u64,
    libc::POLLOUT as u64,
    libc::POLLPRI as u64,
];
pub const POLL_TIMEOUTS: &[u64] = &[0, 1, 10, 100];
/// 0 BLKGETSIZE64, 1 BLKSSZGET, 2 BLKFLSBUF, 3 BLKDISCARD, 4 BLKZEROOUT,
/// 5 BLKPBSZGET, 6 BLKSECDISCARD, 7 an unknown block ioctl.
pub const BLK_OPS: &[u64] = &[0, 1, 2, 3, 4, 5, 6, 7];
pub const CFS_DIRS: &[u64] = &[0, 1, 2];
/// The configfs attributes of an attachment (Documentation/reflux.rst).
pub const CFS_ATTRS: &[&str] = &[
    "device", "start", "length", "pipeline", "checksum", "enable",
];
/// The debugfs files of /sys/kernel/debug/refluxN (Documentation/reflux.rst).
pub const DBG_FILES: &[&str] = &[
    "actors",
    "migrate",
    "migrations",
    "migrate_stop",
    "sched",
    "stats",
    "corrupt_lba",
    "peek_lba",
    "peek",
];
pub const CFS_VALUES: &[&str] = &[
    "reflux0",
    "reflux1",
    "reflux",
    "0",
    "1",
    "2",
    "-1",
    "128K",
    "64M",
    "32M",
    "127K",
    "1G",
    "4G",
    "131072",
    "0x20000",
    "18446744073709551615",
    "passthrough",
    "checksum",
    "compress",
    "encrypt",
    "bogus",
    "",
    "1 1",
    "y",
    "n",
];
pub const DBG_VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "-1",
    "0 host",
    "0 device",
    "1 host",
    "1 device",
    "2 host",
    "2 device",
    "3 host",
    "9 device",
    "99 host",
    "x",
    "",
    "0 sideways",
    "18446744073709551615",
    "4294967296",
];

pub static CALLS: &[CallDesc] = &[
    CallDesc {
        name: "ccm_open",
        args: &[
            int("dev", Dom::Set(CCM_DEVS)),
            int("flags", Dom::Flags(OPEN_FLAGS)),
        ],
        ret: Some(Res::CcmFd),
        ioctl: None,
        reflux: false,
        weight: 6,
    },
    CallDesc {
        name: "close",
        args: &[res("fd", Res::AnyFd)],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 2,
    },
    CallDesc {
        name: "ccm_dup",
        args: &[res("fd", Res::CcmFd)],
        ret: Some(Res::CcmFd),
        ioctl: None,
        reflux: false,
        weight: 1,
    },
    CallDesc {
        name: "ccm_info",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            f("flags", Dom::Zero, 0, 4),
            f("reserved0", Dom::Zero, 60, 4),
            f("reserved", Dom::Zero, 64, 8),
        ],
        ret: None,
        ioctl: Some(Ioctl {
            nr: 0x80,
            size: 0x60,
            ret: None,
        }),
        reflux: false,
        weight: 2,
    },
    CallDesc {
        name: "ccm_configure",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            f("flags", Dom::Flags(CONFIGURE_FLAGS), 0, 4),
            f("mode", Dom::Set(MODES), 4, 4),
            f("slot_size", Dom::Pow2, 8, 4),
            f("metadata_slots", Dom::Pow2, 12, 4),
            f("payload_slots", Dom::Pow2, 16, 4),
            f("streaming_factor", Dom::Size, 20, 4),
            f("streaming_order", Dom::Set(ORDERS), 24, 4),
            f("index_base", Dom::Int(32), 28, 4),
            f("poll_interval_ns", Dom::Int(64), 32, 8),
            f("input_size", Dom::Size, 40, 8),
            f("tenant", Dom::Zero, 48, 4),
            f("reserved0", Dom::Zero, 52, 4),
            f("headers_size", Dom::Zero, 56, 8),
            f("reserved", Dom::Zero, 80, 8),
        ],
        ret: Some(Res::Counter),
        ioctl: Some(Ioctl {
            nr: 0x81,
            size: 0x70,
            ret: Some(Field { off: 28, width: 4 }),
        }),
        reflux: false,
        weight: 6,
    },
    CallDesc {
        name: "ccm_launch",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            f("kernel_id", Dom::Set(KERNELS), 0, 4),
            f("flags", Dom::Flags(LAUNCH_FLAGS), 4, 4),
            f("input_offset", Dom::Size, 8, 8),
            f("input_size", Dom::Size, 16, 8),
            f(
                "arg_size",
                Dom::Set(&[32, 0, 16, 24, 31, 33, 64, 0xffff_ffff]),
                24,
                4,
            ),
            f("tag", Dom::Zero, 28, 4),
            f("a0", Dom::KArg(0), 32, 4),
            f("a1", Dom::KArg(1), 36, 4),
            f("a2", Dom::KArg(2), 40, 4),
            f("a3", Dom::KArg(3), 44, 4),
            f("a4", Dom::KArg(4), 48, 4),
            f("a5", Dom::KArg(5), 52, 4),
            f("a6", Dom::KArg(6), 56, 4),
            f("a7", Dom::KArg(7), 60, 4),
            f("reserved", Dom::Zero, 64, 8),
        ],
        ret: Some(Res::Counter),
        ioctl: Some(Ioctl {
            nr: 0x82,
            size: 0x50,
            ret: Some(Field { off: 28, width: 4 }),
        }),
        reflux: false,
        weight: 8,
    },
    CallDesc {
        name: "ccm_release",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            // The entries pointer: a PTR_KINDS value applied to the
            // program-owned array of max(count, 4) entries (e0..e3 first).
            int("entries", Dom::Set(PTR_KINDS)),
            f(
                "count",
                Dom::Set(&[0, 1, 2, 3, 4, 64, 4096, 4097, 0xffff_ffff]),
                8,
                4,
            ),
            f("flags", Dom::Flags(RELEASE_FLAGS), 12, 4),
            fr("metadata_head", 16),
            f("processed", Dom::Zero, 20, 4),
            f("reserved", Dom::Zero, 32, 8),
            res("e0_index", Res::Counter),
            int("e0_len", Dom::Size),
            res("e1_index", Res::Counter),
            int("e1_len", Dom::Size),
            res("e2_index", Res::Counter),
            int("e2_len", Dom::Size),
            res("e3_index", Res::Counter),
            int("e3_len", Dom::Size),
        ],
        ret: None,
        ioctl: Some(Ioctl {
            nr: 0x83,
            size: 0x30,
            ret: None,
        }),
        reflux: false,
        weight: 5,
    },
    CallDesc {
        name: "ccm_stats",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            f("flags", Dom::Flags(STATS_FLAGS), 0, 4),
            f("tenant", Dom::Zero, 4, 4),
            f("reserved", Dom::Zero, 136, 8),
        ],
        ret: None,
        ioctl: Some(Ioctl {
            nr: 0x84,
            size: 0xa0,
            ret: None,
        }),
        reflux: false,
        weight: 2,
    },
    CallDesc {
        name: "ccm_wait",
        args: &[
            res("fd", Res::CcmFd),
            int("ptr", Dom::Set(PTR_KINDS)),
            int("cmd", Dom::Set(CMD_VARIANTS)),
            f(
                "min_records",
                Dom::Set(&[1, 0, 2, 8, 64, 0xffff_ffff]),
                0,
                4,
            ),
            fr("metadata_head", 4),
            f("timeout_ns", Dom::Set(WAIT_TIMEOUTS), 8, 8),
            f("flags", Dom::Flags(WAIT_FLAGS), 16, 4),
            f("ready", Dom::Zero, 20, 4),
            f("reserved0", Dom::Zero, 28, 4),
            f("reserved", Dom::Zero, 32, 8),
        ],
        ret: Some(Res::Counter),
        ioctl: Some(Ioctl {
            nr: 0x85,
            size: 0x30,
            ret: Some(Field { off: 24, width: 4 }),
        }),
        reflux: false,
        weight: 4,
    },
    CallDesc {
        // Any command number of cxl_ccm's type, any size: the ENOTTY paths.
        name: "ccm_ioctl_raw",
        args: &[
            res("fd", Res::CcmFd),
            int("cmd", Dom::Int(32)),
            int("ptr", Dom::Set(PTR_KINDS)),
        ],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 1,
    },
    CallDesc {
        // Consume every record below the header's metadata tail and release
        // them (a pseudo-call: the documented consumer loop, once).
        name: "ccm_drain",
        args: &[
            res("fd", Res::CcmFd),
            res("headers", Res::Map),
            res("metadata", Res::Map),
            res("head", Res::Counter),
            int("flags", Dom::Flags(RELEASE_FLAGS)),
        ],
        ret: Some(Res::Counter),
        ioctl: None,
        reflux: false,
        weight: 4,
    },
    CallDesc {
        name: "ccm_mmap",
        args: &[
            res("fd", Res::CcmFd),
            int("region", Dom::Set(REGIONS)),
            int("delta", Dom::Set(REGION_DELTAS)),
            int("len", Dom::Size),
            int("prot", Dom::Flags(PROTS)),
            int("flags", Dom::Flags(MAP_FLAGS)),
        ],
        ret: Some(Res::Map),
        ioctl: None,
        reflux: false,
        weight: 6,
    },
    CallDesc {
        name: "munmap",
        args: &[res("map", Res::Map), int("len", Dom::Size)],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 1,
    },
    CallDesc {
        name: "mprotect",
        args: &[
            res("map", Res::Map),
            int("len", Dom::Size),
            int("prot", Dom::Flags(PROTS)),
        ],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 1,
    },
    CallDesc {
        // A one-byte load; SIGSEGV/SIGBUS is a result, not a crash.
        name: "map_read",
        args: &[res("addr", Res::Map)],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 3,
    },
    CallDesc {
        name: "map_write",
        args: &[
            res("addr", Res::Map),
            int("len", Dom::Size),
            int("byte", Dom::Int(8)),
        ],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 3,
    },
    CallDesc {
        name: "poll",
        args: &[
            res("fd", Res::AnyFd),
            int("events", Dom::Flags(POLL_EVENTS)),
            int("timeout_ms", Dom::Set(POLL_TIMEOUTS)),
        ],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 2,
    },
    CallDesc {
        // The child runs the rest of the program; wait=1: the parent waits
        // for it first, else the two run concurrently (reaped at the end).
        name: "fork",
        args: &[int("wait", Dom::Set(&[1, 0]))],
        ret: None,
        ioctl: None,
        reflux: false,
        weight: 1,
    },
    CallDesc {
        name: "rfx_open",
        args: &[int("flags", Dom::Flags(RFX_OPEN_FLAGS))],
        ret: Some(Res::RfxFd),
        ioctl: None,
        reflux: true,
        weight: 3,
    },
    CallDesc {
        name: "rfx_pread",
        args: &[
            res("fd", Res::RfxFd),
            int("off", Dom::Size),
            int("len", Dom::Size),
            int("misalign", Dom::Set(&[0, 1, 512])),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 3,
    },
    CallDesc {
        name: "rfx_pwrite",
        args: &[
            res("fd", Res::RfxFd),
            int("off", Dom::Size),
            int("len", Dom::Size),
            int("misalign", Dom::Set(&[0, 1, 512])),
            int("byte", Dom::Int(8)),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 3,
    },
    CallDesc {
        name: "rfx_fsync",
        args: &[res("fd", Res::RfxFd)],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 1,
    },
    CallDesc {
        name: "rfx_blkioctl",
        args: &[
            res("fd", Res::RfxFd),
            int("op", Dom::Set(BLK_OPS)),
            int("start", Dom::Size),
            int("len", Dom::Size),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 2,
    },
    CallDesc {
        name: "cfs_mkdir",
        args: &[int("dir", Dom::Set(CFS_DIRS))],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 1,
    },
    CallDesc {
        name: "cfs_rmdir",
        args: &[int("dir", Dom::Set(CFS_DIRS))],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 1,
    },
    CallDesc {
        name: "cfs_write",
        args: &[
            int("dir", Dom::Set(CFS_DIRS)),
            int("attr", Dom::Set(&[0, 1, 2, 3, 4, 5])),
            a("value", Ty::Str(CFS_VALUES)),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 3,
    },
    CallDesc {
        name: "cfs_read",
        args: &[
            int("dir", Dom::Set(CFS_DIRS)),
            int("attr", Dom::Set(&[0, 1, 2, 3, 4, 5])),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 1,
    },
    CallDesc {
        name: "dbg_write",
        args: &[
            int("file", Dom::Set(&[0, 1, 2, 3, 4, 5, 6, 7, 8])),
            a("value", Ty::Str(DBG_VALUES)),
        ],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 2,
    },
    CallDesc {
        name: "dbg_read",
        args: &[int("file", Dom::Set(&[0, 1, 2, 3, 4, 5, 6, 7, 8]))],
        ret: None,
        ioctl: None,
        reflux: true,
        weight: 1,
    },
];

pub fn lookup(name: &str) -> Option<usize> {
    CALLS.iter().position(|c| c.name == name)
}

/// The position of the argument `name` of call `id`.
pub fn arg_index(id: usize, name: &str) -> Option<usize> {
    CALLS.get(id)?.args.iter().position(|a| a.name == name)
}
