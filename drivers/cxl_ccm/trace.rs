// SPDX-License-Identifier: GPL-2.0

//! The driver's trace events, defined in C by `cxl_ccm_events.h` (whose comments say what
//! each field means) and fired from here. Documentation/cxl_ccm.rst shows how to read them.
//!
//! The prototypes must match the header's `TP_PROTO()`s, argument for argument.

kernel::declare_trace! {
    /// A launch was accepted (`tag`), and the ioctl took `ns`.
    pub(crate) fn cxl_ccm_launch(
        dev: u32,
        tenant: u32,
        mode: u32,
        tag: u32,
        kernel: u32,
        bytes: u32,
        ns: u64,
    );
    /// A `RELEASE` of `entries`, leaving the published heads.
    pub(crate) fn cxl_ccm_release(
        dev: u32,
        tenant: u32,
        entries: u32,
        md_head: u32,
        pl_head: u32,
        ret: i32,
    );
    /// A `WAIT` returned `ret` after `ns`, with `ready` records past the caller's head.
    pub(crate) fn cxl_ccm_wait(dev: u32, tenant: u32, min: u32, ready: u32, ns: u64, ret: i32);
    /// `WAIT_FLAG_DEADLOCK` found the tenant stuck.
    pub(crate) fn cxl_ccm_deadlock(dev: u32, tenant: u32, min: u32, ready: u32);
    /// A scan of the metadata ring found `records` new records carrying `bytes` of payload.
    pub(crate) fn cxl_ccm_records(dev: u32, tenant: u32, records: u32, bytes: u64);
}
