// SPDX-License-Identifier: GPL-2.0

//! Caching modes for mappings of ordinary RAM.
//!
//! C header: [`arch/x86/include/asm/set_memory.h`](srctree/arch/x86/include/asm/set_memory.h)
//!
//! Memory shared with a device that writes it without snooping the CPU caches (or that the CPU
//! must see in program order without cache effects) is mapped write-combining or uncached. On
//! x86 every mapping of a physical page must agree on the memory type, so the page's type is
//! changed in the kernel's direct map first (`set_pages_array_*`) and every later mapping —
//! a `vmap()` range or a user mapping — uses the same type.

use crate::{bindings, error::to_result, prelude::*};

/// How the CPU caches accesses to a range of RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Write-back caching: ordinary memory.
    Cached,
    /// Write-combining: uncached, but writes may be merged and buffered (x86 `WC`).
    WriteCombining,
    /// Uncached (x86 `UC-`): every access goes to memory in program order.
    Uncached,
}

impl CacheMode {
    /// Parses the numeric form used in user ABIs: 0 cached, 1 write-combining, 2 uncached.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::cache_mode::CacheMode;
    /// assert_eq!(CacheMode::from_raw(1), Some(CacheMode::WriteCombining));
    /// assert_eq!(CacheMode::from_raw(3), None);
    /// assert_eq!(CacheMode::Uncached.as_raw(), 2);
    /// ```
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Cached),
            1 => Some(Self::WriteCombining),
            2 => Some(Self::Uncached),
            _ => None,
        }
    }

    /// Returns the numeric form (see [`CacheMode::from_raw`]).
    pub fn as_raw(self) -> u32 {
        match self {
            Self::Cached => 0,
            Self::WriteCombining => 1,
            Self::Uncached => 2,
        }
    }

    /// Returns `base` with its caching bits replaced by this mode.
    pub fn pgprot(self, base: bindings::pgprot_t) -> bindings::pgprot_t {
        match self {
            Self::Cached => base,
            // SAFETY: pure computation on a value type.
            Self::WriteCombining => unsafe { bindings::pgprot_writecombine(base) },
            // SAFETY: pure computation on a value type.
            Self::Uncached => unsafe { bindings::pgprot_noncached(base) },
        }
    }

    /// Sets the memory type of `pages` in the kernel direct map to this mode.
    ///
    /// # Safety
    ///
    /// The pages must be owned by the caller, not mapped anywhere else with another type, and
    /// must be returned to [`CacheMode::Cached`] with this function before they are freed.
    pub(crate) unsafe fn set_pages(self, pages: &mut [*mut bindings::page]) -> Result {
        let n = i32::try_from(pages.len()).map_err(|_| EINVAL)?;
        if n == 0 {
            return Ok(());
        }
        let ptr = pages.as_mut_ptr();
        // SAFETY: `ptr` points to `n` valid page pointers owned by the caller (function safety
        // requirements); the C functions only change page attributes.
        let ret = unsafe {
            match self {
                Self::Cached => bindings::set_pages_array_wb(ptr, n),
                Self::WriteCombining => bindings::set_pages_array_wc(ptr, n),
                Self::Uncached => bindings::set_pages_array_uc(ptr, n),
            }
        };
        to_result(ret)
    }
}
