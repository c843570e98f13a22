// SPDX-License-Identifier: GPL-2.0

//! The software device's trace events, defined in C by `cxl_ccm_dev_events.h` (whose comments
//! say what each field means). The prototypes must match the header's `TP_PROTO()`s.

kernel::declare_trace! {
    /// A batch of `records` (`bytes` of payload) from metadata index `seq` was back-streamed;
    /// it lands after `land_ns`.
    pub(crate) fn cxl_ccm_dev_dma_batch(
        dev: u32,
        tenant: u32,
        seq: u32,
        records: u32,
        bytes: u32,
        land_ns: u64,
    );
    /// Streaming stopped for credit (`stalled` 1) or resumed after `ns` (`stalled` 0).
    pub(crate) fn cxl_ccm_dev_credit_stall(
        dev: u32,
        tenant: u32,
        stalled: u32,
        md_head: u32,
        pl_head: u32,
        ns: u64,
    );
}
