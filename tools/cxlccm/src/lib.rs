// SPDX-License-Identifier: LGPL-2.1 OR MIT

//! Offload kernels to a CXL computational memory device (`/dev/cxl_ccmN`) and consume their
//! back-streamed results: the Rust side of libcxlccm (`tools/lib/cxlccm`, documented in
//! `Documentation/libcxlccm.rst`), over the same UAPI (`include/uapi/linux/cxl_ccm.h`, whose
//! structures come from `ccm-abi`).
//!
//! A [`Device`] is an open file; [`Device::configure`] turns it into a [`Tenant`], which owns
//! its mappings (unmapped on drop). [`Tenant::next`] takes a [`Record`] that borrows the tenant:
//! its payload is a view into the payload ring, valid until the record is given back with
//! [`Tenant::release`], which consumes it, so a released slot cannot be read any more.
//! Records may be released in any order.
//!
//! The memory ordering of the ring protocol is here and nowhere else: a tail is loaded with
//! acquire semantics followed by the read barrier write-combining memory needs (`LFENCE` on
//! x86), and each record is copied once and checked against its sequence number before its
//! payload is looked at.

use ccm_abi::{abi, uapi};
use std::cell::Cell;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

pub use uapi::{Configure, Info, Launch, Stats};

/// An open `/dev/cxl_ccmN`.
pub struct Device {
    fd: OwnedFd,
    info: Info,
}

fn ioctl<T>(fd: &OwnedFd, cmd: u32, arg: &mut T) -> io::Result<()> {
    // SAFETY: `cmd` is one of the UAPI's commands, whose encoded size is `size_of::<T>()`, and
    // `arg` is a valid, exclusive `T` for the duration of the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), cmd as _, arg as *mut T) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Device {
    /// Opens `node` and reads its identity (`CXL_CCM_IOC_INFO`).
    pub fn open(node: &str) -> io::Result<Device> {
        let path = CString::new(node).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: `path` is NUL-terminated; the result is checked.
        let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a file descriptor this function just opened and owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut info = Info::default();
        ioctl(&fd, uapi::IOC_INFO, &mut info)?;
        Ok(Device { fd, info })
    }

    /// The device's identity.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// Becomes a tenant with `cfg` (`CXL_CCM_IOC_CONFIGURE`; its out fields are filled in) and
    /// maps the ring headers, both rings and the input buffer.
    pub fn configure(self, cfg: &mut Configure) -> io::Result<Tenant> {
        ioctl(&self.fd, uapi::IOC_CONFIGURE, cfg)?;
        let hdr = Mapping::new(&self.fd, cfg.headers_size, false, uapi::MMAP_HEADERS)?;
        let md = Mapping::new(&self.fd, cfg.metadata_ring_size, false, uapi::MMAP_METADATA)?;
        let pl = Mapping::new(&self.fd, cfg.payload_ring_size, false, uapi::MMAP_PAYLOAD)?;
        let input = Mapping::new(&self.fd, cfg.input_size, true, uapi::MMAP_INPUT)?;
        let headers = hdr.ptr.cast::<abi::RingHeaders>();
        // SAFETY: the headers mapping holds a `RingHeaders` (the UAPI's layout); the geometry
        // fields are written by the driver before CONFIGURE returns and never change.
        let (md_slots, pl_slots, slot_size) = unsafe {
            (
                (*headers).metadata.capacity,
                (*headers).payload.capacity,
                (*headers).payload.slot_size,
            )
        };
        if !md_slots.is_power_of_two() || !pl_slots.is_power_of_two() || slot_size == 0 {
            return Err(io::Error::from_raw_os_error(libc::EPROTO));
        }
        Ok(Tenant {
            dev: self,
            cfg: *cfg,
            hdr,
            md,
            pl,
            input,
            md_slots,
            pl_slots,
            slot_size,
            head: Cell::new(cfg.index_base),
            broken: Cell::new(false),
        })
    }
}

/// One `mmap()` of the tenant's file; unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: u64, writable: bool, off: u64) -> io::Result<Mapping> {
        let len = usize::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        if len == 0 {
            return Ok(Mapping {
                ptr: std::ptr::null_mut(),
                len,
            });
        }
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a new shared mapping of the file; the kernel checks offset and length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p.cast(), len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: mapped by `Mapping::new` with this length; unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

/// A configured tenant: its rings and input buffer, mapped. Not `Sync`: one thread consumes.
pub struct Tenant {
    // Mappings before the file, so that they are unmapped first.
    hdr: Mapping,
    md: Mapping,
    pl: Mapping,
    input: Mapping,
    dev: Device,
    cfg: Configure,
    md_slots: u32,
    pl_slots: u32,
    slot_size: u32,
    /// The next metadata index to take.
    head: Cell<u32>,
    /// A stale or torn record was seen.
    broken: Cell<bool>,
}

/// One result: which launch, where its bytes go, and the bytes, borrowed from the payload ring
/// until the record is released.
#[derive(Debug)]
pub struct Record<'t> {
    pub index: u32,
    pub tag: u32,
    pub result_offset: u64,
    pub flags: u16,
    pub status: u16,
    pub checksum: u32,
    pub payload_index: u32,
    /// The payload, in two pieces where it wraps at the ring end.
    pub payload: [&'t [u8]; 2],
}

impl Record<'_> {
    /// Payload bytes.
    pub fn len(&self) -> usize {
        self.payload[0].len() + self.payload[1].len()
    }

    /// Whether the record carries no payload.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last record of its launch.
    pub fn is_final(&self) -> bool {
        self.flags & abi::MD_FLAG_FINAL != 0
    }

    /// The launch failed (see `status`).
    pub fn is_error(&self) -> bool {
        self.flags & abi::MD_FLAG_ERROR != 0
    }

    /// Whether the payload has the record's CRC32C.
    pub fn checksum_ok(&self) -> bool {
        let crc = abi::crc32c_update(!0, self.payload[0]);
        !abi::crc32c_update(crc, self.payload[1]) == self.checksum
    }
}

/// Where a payload of `len` bytes starting at slot `index` lies in a ring of `slots` slots of
/// `slot_size` bytes: (offset, bytes before the ring end, bytes after the wrap).
pub fn payload_pieces(index: u32, len: u32, slots: u32, slot_size: u32) -> (usize, usize, usize) {
    let ring = slots as usize * slot_size as usize;
    let off = (index & (slots - 1)) as usize * slot_size as usize;
    let first = (len as usize).min(ring - off);
    (off, first, len as usize - first)
}

/// The read barrier between a tail load and the loads of the slots it covers, for
/// write-combining memory (`Documentation/cxl_ccm.rst`, "On real hardware").
fn ring_rmb() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: LFENCE has no operands and no effect but ordering.
    unsafe {
        std::arch::asm!("lfence", options(nostack, preserves_flags))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: a load barrier; no effect but ordering.
    unsafe {
        std::arch::asm!("dmb oshld", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

impl Tenant {
    /// The input buffer (device memory): write a launch's input here before launching it.
    pub fn input(&mut self) -> &mut [u8] {
        if self.input.ptr.is_null() {
            return &mut [];
        }
        // SAFETY: a read-write mapping of `len` bytes, owned by `self`; the device only reads it.
        unsafe { std::slice::from_raw_parts_mut(self.input.ptr, self.input.len) }
    }

    /// The configuration as the driver accepted it.
    pub fn config(&self) -> &Configure {
        &self.cfg
    }

    /// Launches `l` (`CXL_CCM_IOC_LAUNCH`); returns its tag.
    pub fn launch(&self, l: &mut Launch) -> io::Result<u32> {
        ioctl(&self.dev.fd, uapi::IOC_LAUNCH, l)?;
        Ok(l.tag)
    }

    fn metadata_tail(&self) -> u32 {
        // SAFETY: the headers mapping holds a `RingHeaders`; `tail` is an aligned `u32` the device
        // writes, read atomically.
        let tail = unsafe {
            AtomicU32::from_ptr(std::ptr::addr_of_mut!(
                (*self.hdr.ptr.cast::<abi::RingHeaders>()).metadata.tail
            ))
        };
        let t = tail.load(Ordering::Acquire);
        ring_rmb();
        t
    }

    /// Records ready to take now.
    pub fn ready(&self) -> u32 {
        self.metadata_tail().wrapping_sub(self.head.get())
    }

    /// Takes the next record: `Ok(None)` if none is ready, `EIO` if it is stale or torn (a device
    /// or driver bug; the tenant is of no further use).
    pub fn next(&self) -> io::Result<Option<Record<'_>>> {
        if self.broken.get() {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        if self.ready() == 0 {
            return Ok(None);
        }
        let head = self.head.get();
        let slot = (head & (self.md_slots - 1)) as usize;
        // SAFETY: slot < md_slots records fit the metadata mapping; the slot is the device's
        // until the tail passed it, which it has; read once, by value.
        let rec: abi::MetadataRecord =
            unsafe { std::ptr::read_volatile(self.md.ptr.cast::<abi::MetadataRecord>().add(slot)) };
        let ring = self.pl_slots as u64 * u64::from(self.slot_size);
        if rec.seq != head || u64::from(rec.length) > ring {
            self.broken.set(true);
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let (off, a, b) =
            payload_pieces(rec.payload_index, rec.length, self.pl_slots, self.slot_size);
        // SAFETY: both pieces lie inside the payload mapping (`payload_pieces`); the protocol
        // gives these slots to the consumer until they are released, which consumes the record
        // and so ends the borrow.
        let payload = unsafe {
            [
                std::slice::from_raw_parts(self.pl.ptr.add(off), a),
                std::slice::from_raw_parts(self.pl.ptr, b),
            ]
        };
        self.head.set(head.wrapping_add(1));
        Ok(Some(Record {
            index: rec.seq,
            tag: rec.tag,
            result_offset: rec.result_offset,
            flags: rec.flags,
            status: rec.status,
            checksum: rec.checksum,
            payload_index: rec.payload_index,
            payload,
        }))
    }

    /// Gives back the payload of `records` (any order) and every metadata slot taken so far.
    pub fn release<'t>(&'t self, records: impl IntoIterator<Item = Record<'t>>) -> io::Result<()> {
        let entries: Vec<uapi::ReleaseEntry> = records
            .into_iter()
            .map(|r| uapi::ReleaseEntry {
                payload_index: r.payload_index,
                length: r.len() as u32,
            })
            .collect();
        let chunks: Vec<&[uapi::ReleaseEntry]> = if entries.is_empty() {
            vec![&[]]
        } else {
            entries.chunks(uapi::RELEASE_MAX as usize).collect()
        };
        for chunk in chunks {
            let mut rel = uapi::Release {
                entries: chunk.as_ptr() as u64,
                count: chunk.len() as u32,
                flags: uapi::RELEASE_METADATA,
                metadata_head: self.head.get(),
                ..Default::default()
            };
            ioctl(&self.dev.fd, uapi::IOC_RELEASE, &mut rel)?;
        }
        Ok(())
    }

    /// Waits until `min` records are ready or `timeout_ns` passes ([`uapi::WAIT_FOREVER`]); with
    /// `deadlock_check`, fails with `EDEADLK` when nothing can arrive before the caller releases.
    pub fn wait(&self, min: u32, timeout_ns: u64, deadlock_check: bool) -> io::Result<()> {
        let mut w = uapi::Wait {
            min_records: min,
            metadata_head: self.head.get(),
            timeout_ns,
            flags: if deadlock_check {
                uapi::WAIT_FLAG_DEADLOCK
            } else {
                0
            },
            ..Default::default()
        };
        ioctl(&self.dev.fd, uapi::IOC_WAIT, &mut w)
    }

    /// The tenant's counters, reset afterwards if `reset`.
    pub fn stats(&self, reset: bool) -> io::Result<Stats> {
        let mut s = Stats {
            flags: if reset { uapi::STATS_RESET } else { 0 },
            ..Default::default()
        };
        ioctl(&self.dev.fd, uapi::IOC_STATS, &mut s)?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_wraps_at_the_ring_end() {
        // 8 slots of 32 bytes: index 7 starts 32 bytes before the end.
        assert_eq!(payload_pieces(7, 100, 8, 32), (224, 32, 68));
        assert_eq!(payload_pieces(8 + 2, 64, 8, 32), (64, 64, 0));
        assert_eq!(payload_pieces(0, 256, 8, 32), (0, 256, 0));
        assert_eq!(payload_pieces(u32::MAX, 0, 8, 32), (224, 0, 0));
    }

    #[test]
    fn record_checksum_spans_both_pieces() {
        let (a, b) = (b"hello, ".as_slice(), b"world".as_slice());
        let whole = abi::crc32c_update(!0, b"hello, world");
        let rec = Record {
            index: 0,
            tag: 0,
            result_offset: 0,
            flags: 0,
            status: 0,
            checksum: !whole,
            payload_index: 0,
            payload: [a, b],
        };
        assert!(rec.checksum_ok());
        assert_eq!(rec.len(), 12);
        let bad = Record {
            checksum: whole,
            ..rec
        };
        assert!(!bad.checksum_ok());
    }

    #[test]
    fn a_missing_device_is_an_error_not_a_panic() {
        assert!(Device::open("/nonexistent/cxl_ccm0").is_err());
        assert!(Device::open("bad\0name").is_err());
        // Not a cxl_ccm device: INFO fails.
        assert!(Device::open("/dev/null").is_err());
    }
}
