// SPDX-License-Identifier: GPL-2.0

//! harness_warn: a negative control for `make check-harness`.
//!
//! Loading it prints a kernel `WARNING:` on purpose. The harness must turn that into a failed
//! run even though every test passes; if it does not, reports of real bugs would be missed.
//! Never loaded by `make check`.

use kernel::prelude::*;

module! {
    type: HarnessWarn,
    name: "harness_warn",
    author: "cxlstack developers",
    description: "Negative control: emits a WARN_ON on load",
    license: "GPL",
}

struct HarnessWarn;

impl kernel::Module for HarnessWarn {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("emitting a deliberate warning\n");
        kernel::warn_on!(true);
        Ok(HarnessWarn)
    }
}
