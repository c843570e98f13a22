// SPDX-License-Identifier: GPL-2.0

//! Why the device refuses a tenant, a launch or a record: a `STATUS_*` code of the ABI.

/// Why a tenant cannot be served: the value for its `error` register.
pub(crate) type Status = u16;
