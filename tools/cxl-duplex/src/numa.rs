// SPDX-License-Identifier: GPL-2.0

//! A buffer bound to one NUMA node, and the proof that it is there.
//!
//! The buffer is an anonymous mapping bound with `mbind(MPOL_BIND, MPOL_MF_STRICT)` to the node,
//! then faulted in page by page (a write to each page). `move_pages` with no target nodes then
//! reports where every page is; a buffer with any page elsewhere (or not present) is refused, so
//! no figure is ever reported for memory that is not where it was asked to be.

use std::io;
use std::ptr::NonNull;

const MPOL_BIND: libc::c_int = 2;
const MPOL_MF_STRICT: libc::c_uint = 1 << 0;
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;
/// Bits in our node mask (the kernel's MAX_NUMNODES is at most 1024).
const MASK_BITS: usize = 1024;

/// Where a buffer's pages are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Pages on the requested node.
    pub on_node: u64,
    /// Pages elsewhere or not present.
    pub elsewhere: u64,
}

/// An anonymous mapping whose every page is on `node`.
///
/// # Invariants
///
/// `ptr` is the start of a private anonymous mapping of `len` bytes, page-aligned, readable and
/// writable, alive until drop.
pub struct NodeBuffer {
    ptr: NonNull<u8>,
    len: usize,
    node: u32,
    placement: Placement,
}

// SAFETY: the mapping is plain memory owned by this value; sharing it between threads is safe as
// long as they do not race, which `workers` ensures by giving each thread its own part.
unsafe impl Send for NodeBuffer {}
// SAFETY: as above; `&NodeBuffer` only hands out raw pointers.
unsafe impl Sync for NodeBuffer {}

/// Whether the kernel knows NUMA node `node` and it has memory.
pub fn node_has_memory(node: u32) -> bool {
    std::fs::read_to_string("/sys/devices/system/node/has_memory")
        .ok()
        .and_then(|s| crate::plan::parse_node_list(s.trim()))
        .is_some_and(|nodes| nodes.contains(&node))
}

/// The size of a page.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096).max(4096)
}

impl NodeBuffer {
    /// Maps `len` bytes (rounded up to pages) on `node`, faults them in and checks where they are.
    pub fn new(node: u32, len: usize) -> Result<Self, String> {
        if node as usize >= MASK_BITS || !node_has_memory(node) {
            return Err(format!("NUMA node {node} does not exist or has no memory"));
        }
        let page = page_size();
        let len = len.div_ceil(page) * page;
        // SAFETY: an anonymous private mapping; the arguments are valid.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap of {len} bytes: {}",
                io::Error::last_os_error()
            ));
        }
        let Some(ptr) = NonNull::new(p.cast::<u8>()) else {
            return Err("mmap returned NULL".into());
        };
        // INVARIANT: the mapping was just created with these properties.
        let mut buf = Self {
            ptr,
            len,
            node,
            placement: Placement::default(),
        };
        let mut mask = [0u64; MASK_BITS / 64];
        mask[node as usize / 64] |= 1 << (node % 64);
        // SAFETY: the range is our mapping; the mask holds MASK_BITS bits.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mbind,
                buf.ptr.as_ptr(),
                len,
                MPOL_BIND,
                mask.as_ptr(),
                MASK_BITS as libc::c_ulong,
                MPOL_MF_STRICT | MPOL_MF_MOVE,
            )
        };
        if r != 0 {
            return Err(format!(
                "mbind to node {node}: {}",
                io::Error::last_os_error()
            ));
        }
        // Huge pages where the kernel has them, so that latencies measure memory rather than
        // page walks; a refusal only costs TLB misses.
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(buf.ptr.as_ptr().cast(), len, libc::MADV_HUGEPAGE) };
        // Fault every page in under the policy, with a write (reads could map the zero page).
        for off in (0..len).step_by(page) {
            // SAFETY: `off < len`, inside the mapping.
            unsafe { buf.ptr.as_ptr().add(off).write_volatile(1) };
        }
        buf.placement = buf.locate()?;
        if buf.placement.elsewhere > 0 {
            return Err(format!(
                "{} of {} pages are not on node {node}: refusing to measure",
                buf.placement.elsewhere,
                buf.placement.elsewhere + buf.placement.on_node
            ));
        }
        Ok(buf)
    }

    /// Asks the kernel where every page is (`move_pages` without target nodes).
    pub fn locate(&self) -> Result<Placement, String> {
        let page = page_size();
        let mut out = Placement::default();
        const BATCH: usize = 4096;
        let pages: Vec<usize> = (0..self.len).step_by(page).collect();
        for chunk in pages.chunks(BATCH) {
            let addrs: Vec<*mut libc::c_void> = chunk
                .iter()
                .map(|off| self.ptr.as_ptr().wrapping_add(*off).cast())
                .collect();
            let mut status = vec![0 as libc::c_int; addrs.len()];
            // SAFETY: `addrs` and `status` hold `addrs.len()` entries; pid 0 is this process;
            // no nodes array: only query.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_move_pages,
                    0,
                    addrs.len() as libc::c_ulong,
                    addrs.as_ptr(),
                    std::ptr::null::<libc::c_int>(),
                    status.as_mut_ptr(),
                    0,
                )
            };
            if r != 0 {
                return Err(format!("move_pages: {}", io::Error::last_os_error()));
            }
            for s in status {
                if s == self.node as libc::c_int {
                    out.on_node += 1;
                } else {
                    out.elsewhere += 1;
                }
            }
        }
        Ok(out)
    }

    /// The node the buffer is on.
    pub fn node(&self) -> u32 {
        self.node
    }

    /// Where the pages were found at creation.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// Bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: a buffer has at least one page.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The start of the buffer.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for NodeBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping (type invariant); nothing refers to it after drop.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
