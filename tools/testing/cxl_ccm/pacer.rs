// SPDX-License-Identifier: GPL-2.0

//! The latency model applied: every modelled operation of the device owes its calibrated delay,
//! and the pacer pays it by spinning on the clock.
//!
//! A delay of 35 ns cannot be paid by itself: reading the clock costs about as much (and far
//! more under emulation). The pacer therefore accumulates what is owed and spins once the debt
//! reaches [`SPIN_QUANTUM_NS`], so the total added time matches the model while the spin count
//! stays low. The mechanisms themselves are real memory operations; only their extra cost is
//! modelled.

use kernel::time::Ktime;

use crate::model::latency::{Charge, Cost, DelayBudget, LatencyModel, Operation};

/// The debt at which the pacer spins.
pub(crate) const SPIN_QUANTUM_NS: u64 = 2_000;

/// Monotonic time in nanoseconds.
pub(crate) fn now_ns() -> u64 {
    Ktime::ktime_get().to_ns().max(0) as u64
}

/// Pays the modelled delays of one engine thread.
pub(crate) struct Pacer {
    model: LatencyModel,
    owed_ns: u64,
    budget: DelayBudget,
}

impl Pacer {
    /// A pacer charging `model`'s costs.
    pub(crate) fn new(model: LatencyModel) -> Self {
        Self {
            model,
            owed_ns: 0,
            budget: DelayBudget::new(),
        }
    }

    /// The delays charged so far, per category.
    pub(crate) fn budget(&self) -> &DelayBudget {
        &self.budget
    }

    /// Charges `op` and pays the debt if it reached the quantum. An operation the model refuses
    /// (an empty DMA) costs nothing.
    pub(crate) fn charge(&mut self, op: Operation) {
        if let Ok(c) = self.model.charge(op) {
            self.charge_raw(&c);
        }
    }

    /// Accounts a posted DMA request without paying it: the DMA engine works beside the
    /// engine thread ([`crate::model::posted`]). Returns its latency (everything but the
    /// transfer) and its transfer time, ns; a request the model refuses costs nothing.
    pub(crate) fn post(&mut self, op: Operation) -> (u64, u64) {
        let Ok(c) = self.model.charge(op) else {
            return (0, 0);
        };
        self.budget.add(&c);
        let transfer = c.get(Cost::DmaTransfer);
        (c.total().saturating_sub(transfer), transfer)
    }

    fn charge_raw(&mut self, c: &Charge) {
        self.budget.add(c);
        self.owed_ns = self.owed_ns.saturating_add(c.total());
        if self.owed_ns >= SPIN_QUANTUM_NS {
            self.pay();
        }
    }

    /// Spins until the debt is paid.
    pub(crate) fn pay(&mut self) {
        let owed = core::mem::take(&mut self.owed_ns);
        if owed == 0 {
            return;
        }
        let until = now_ns().saturating_add(owed);
        while now_ns() < until {
            core::hint::spin_loop();
        }
    }
}
