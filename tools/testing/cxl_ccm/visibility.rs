// SPDX-License-Identifier: GPL-2.0

//! The device's view of its own memory as host-only coherent memory (HDM-H) gives it: a host
//! store reaches the device only once the host has published it (`MemRemap::publish`: the
//! write barrier that drains the write-combining buffers, then `kernel::coherence::published`).
//! QEMU's TCG models neither caches nor write-combining buffers, so without this a driver that
//! forgot a barrier would pass every test here and fail on hardware.
//!
//! On (module parameter `check_visibility`), the device keeps a shadow of every byte of its
//! memory that the host published or the device itself wrote: what the device can see. It
//! decides from the shadow whether a launch packet has arrived and which credit it has, and
//! when it consumes a launch packet, an input or a descriptor table it compares the shadow
//! with memory: a difference is a host store the device consumed before it was made visible.
//! Each is counted in the tenant's `unpublished` register (STATS and debugfs) and logged with
//! the prefix `HDM-H violation:`, which `make check`'s kernel-log check fails on.

use kernel::{
    coherence::Observer, memremap::MemRemap, prelude::*, shared_mem::SharedMem, sync::Arc,
    sync::Mutex,
};

const PAGE: usize = 4096;

/// One page of the shadow: its bytes, and which of them the device can see.
struct ShadowPage {
    data: [u8; PAGE],
    valid: [u64; PAGE / 64],
}

impl ShadowPage {
    /// The bits of `valid` word `w` that fall in `[from, to)`.
    fn mask(w: usize, from: usize, to: usize) -> u64 {
        let lo = from.max(w * 64) - w * 64;
        let hi = to.min(w * 64 + 64) - w * 64;
        if hi <= lo {
            return 0;
        }
        (u64::MAX >> (64 - (hi - lo))) << lo
    }

    fn mark(&mut self, from: usize, to: usize) {
        for w in from / 64..to.div_ceil(64) {
            self.valid[w] |= Self::mask(w, from, to);
        }
    }

    fn all_valid(&self, from: usize, to: usize) -> bool {
        (from / 64..to.div_ceil(64)).all(|w| {
            let m = Self::mask(w, from, to);
            self.valid[w] & m == m
        })
    }
}

/// What the device can see of its memory.
#[pin_data]
pub(crate) struct Visibility {
    /// The device memory, and where it is in the physical address space.
    mem: Arc<MemRemap>,
    phys: u64,
    /// The shadow, one optional page per page of device memory.
    #[pin]
    pages: Mutex<KVVec<Option<KBox<ShadowPage>>>>,
}

impl Visibility {
    pub(crate) fn new(mem: Arc<MemRemap>, phys: u64) -> Result<Arc<Self>> {
        let n = mem.size().div_ceil(PAGE);
        let mut pages = KVVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            pages.push(None, GFP_KERNEL)?;
        }
        Arc::pin_init(
            pin_init!(Self {
                mem,
                phys,
                pages <- kernel::new_mutex!(pages),
            }),
            GFP_KERNEL,
        )
    }

    /// Whether the physical range `[phys, phys + len)` is in this device's memory; its offset.
    fn offset_of(&self, phys: u64, len: usize) -> Option<usize> {
        let off = usize::try_from(phys.checked_sub(self.phys)?).ok()?;
        (off.checked_add(len)? <= self.mem.size()).then_some(off)
    }

    /// Makes `[off, off + len)` as it is now in memory visible to the device (the host
    /// published it, or the device wrote it). Out of memory: the range stays invisible, which
    /// shows up as a violation rather than passing silently.
    pub(crate) fn see(&self, off: usize, len: usize) {
        let mut pages = self.pages.lock();
        let mut buf = [0u8; 256];
        let mut pos = off;
        let end = off.saturating_add(len).min(self.mem.size());
        while pos < end {
            let (index, in_page) = (pos / PAGE, pos % PAGE);
            let n = (PAGE - in_page).min(end - pos).min(buf.len());
            let Some(slot) = pages.get_mut(index) else {
                return;
            };
            if slot.is_none() {
                let page = ShadowPage {
                    data: [0; PAGE],
                    valid: [0; PAGE / 64],
                };
                match KBox::new(page, GFP_KERNEL) {
                    Ok(p) => *slot = Some(p),
                    Err(_) => return,
                }
            }
            let Some(page) = slot.as_mut() else {
                return;
            };
            if self.mem.read_bytes(pos, &mut buf[..n]).is_err() {
                return;
            }
            page.data[in_page..in_page + n].copy_from_slice(&buf[..n]);
            page.mark(in_page, in_page + n);
            pos += n;
        }
    }

    /// The 32-bit word at `off` as the device sees it; `None` if any byte of it is not
    /// visible.
    pub(crate) fn read_u32(&self, off: usize) -> Option<u32> {
        let mut b = [0u8; 4];
        self.read(off, &mut b).then(|| u32::from_le_bytes(b))
    }

    /// Copies the visible bytes at `off` into `dst`; `false` if any is not visible.
    fn read(&self, off: usize, dst: &mut [u8]) -> bool {
        let pages = self.pages.lock();
        let mut done = 0;
        while done < dst.len() {
            let pos = off + done;
            let (index, in_page) = (pos / PAGE, pos % PAGE);
            let n = (PAGE - in_page).min(dst.len() - done);
            let Some(Some(page)) = pages.get(index) else {
                return false;
            };
            if !page.all_valid(in_page, in_page + n) {
                return false;
            }
            dst[done..done + n].copy_from_slice(&page.data[in_page..in_page + n]);
            done += n;
        }
        true
    }

    /// Whether every byte of `[off, off + len)` is visible and equal to memory: what the
    /// device consumes there is what the host stored.
    pub(crate) fn consistent(&self, off: usize, len: usize) -> bool {
        let mut live = [0u8; 256];
        let mut seen = [0u8; 256];
        let mut pos = off;
        let Some(end) = off.checked_add(len) else {
            return false;
        };
        while pos < end {
            let n = (end - pos).min(live.len());
            if self.mem.read_bytes(pos, &mut live[..n]).is_err()
                || !self.read(pos, &mut seen[..n])
                || live[..n] != seen[..n]
            {
                return false;
            }
            pos += n;
        }
        true
    }
}

/// The hook the driver's publishes reach: hands each range to the device that owns it.
/// Registered before the first device appears, so that no publish of a driver that binds at
/// once is missed; devices join as they are created.
#[pin_data]
pub(crate) struct Devices {
    #[pin]
    list: Mutex<KVec<Arc<Visibility>>>,
}

impl Devices {
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                list <- kernel::new_mutex!(KVec::new()),
            }),
            GFP_KERNEL,
        )
    }

    pub(crate) fn add(&self, v: Arc<Visibility>) -> Result {
        self.list.lock().push(v, GFP_KERNEL)?;
        Ok(())
    }
}

impl Observer for Devices {
    fn published(&self, phys: u64, len: usize) {
        let list = self.list.lock();
        if let Some((v, off)) = list
            .iter()
            .find_map(|v| v.offset_of(phys, len).map(|off| (v, off)))
        {
            v.see(off, len);
        }
    }
}
