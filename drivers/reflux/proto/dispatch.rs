// SPDX-License-Identifier: GPL-2.0

//! Request-level dispatch, the baseline ReFlux is compared with (paradigm B, in the manner of
//! λ-IO): each whole request runs on the host or on the device, chosen when it arrives from a
//! cost profile, and is never recalled.
//!
//! The first `profile` requests alternate between the sides, and their service times (arrival to
//! completion) give each side's mean cost. From then on the profile is fixed: a side's slowdown
//! after profiling (a device that throttles) is not seen, the profile is what the decision
//! believes. There is no per-stage placement and no migration: the actors run on both sides at
//! once. Two rules choose a side:
//!
//! - [`Rule::Faster`], λ-IO's: every request goes to the side the profile says is faster.
//! - [`Rule::ExpectedWait`], a stronger baseline than the paper's: the side with the smaller
//!   expected completion time, `(outstanding + 1) · cost`, so that the queue on each side is
//!   taken into account and both sides share the load in the ratio of their profiled costs. A
//!   side that slows down keeps more requests outstanding and so gets fewer new ones: queueing
//!   makes up for part of what the fixed profile misses.

use super::pipeline::Side;

/// How a profiled dispatcher picks the side of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The side with the smaller profiled cost, whatever is queued there (λ-IO's).
    Faster,
    /// The side with the smaller `(outstanding + 1) · cost`.
    ExpectedWait,
}

/// The dispatcher of one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// How the side is chosen once the profile is fixed.
    rule: Rule,
    /// Requests each side must have served before the profile is fixed.
    profile: u32,
    /// Profiled requests, per side (host, device).
    samples: [u32; 2],
    /// Their summed service time, per side.
    total_ns: [u64; 2],
    /// Requests dispatched and not finished, per side.
    outstanding: [u32; 2],
    /// The side the next profiling request goes to.
    next: Side,
}

const fn ix(s: Side) -> usize {
    match s {
        Side::Host => 0,
        Side::Device => 1,
    }
}

impl Dispatch {
    /// A dispatcher that profiles `profile` requests per side (at least 1), then follows
    /// `rule`.
    pub const fn new(profile: u32, rule: Rule) -> Self {
        Self {
            rule,
            profile: if profile == 0 { 1 } else { profile },
            samples: [0; 2],
            total_ns: [0; 2],
            outstanding: [0; 2],
            next: Side::Device,
        }
    }

    /// Whether the profile is fixed.
    pub const fn profiled(&self) -> bool {
        self.samples[0] >= self.profile && self.samples[1] >= self.profile
    }

    /// The profiled mean cost of a request on `side`, once the profile is fixed.
    pub const fn cost_ns(&self, side: Side) -> Option<u64> {
        if !self.profiled() {
            return None;
        }
        let i = ix(side);
        // No division by zero even if a profile of no request were allowed.
        self.total_ns[i].checked_div(self.samples[i] as u64)
    }

    /// Chooses the side of a new request and counts it there.
    pub fn choose(&mut self) -> Side {
        let side = match (self.cost_ns(Side::Host), self.cost_ns(Side::Device)) {
            (Some(h), Some(d)) => {
                let wait = |cost: u64, s: Side| match self.rule {
                    Rule::Faster => cost,
                    Rule::ExpectedWait => {
                        cost.saturating_mul(u64::from(self.outstanding[ix(s)]) + 1)
                    }
                };
                if wait(h, Side::Host) < wait(d, Side::Device) {
                    Side::Host
                } else {
                    Side::Device
                }
            }
            _ => {
                // Profiling: alternate, skipping a side that has its samples (in flight
                // requests count, so that a slow side is not flooded while it is profiled).
                let s = self.next;
                self.next = s.other();
                if self.samples[ix(s)] + self.outstanding[ix(s)] >= self.profile {
                    s.other()
                } else {
                    s
                }
            }
        };
        self.outstanding[ix(side)] = self.outstanding[ix(side)].saturating_add(1);
        side
    }

    /// A request dispatched to `side` finished after `ns`.
    pub fn finished(&mut self, side: Side, ns: u64) {
        let i = ix(side);
        self.outstanding[i] = self.outstanding[i].saturating_sub(1);
        if self.samples[i] < self.profile {
            self.samples[i] += 1;
            self.total_ns[i] = self.total_ns[i].saturating_add(ns);
        }
    }

    /// The rule.
    pub const fn rule(&self) -> Rule {
        self.rule
    }

    /// Requests outstanding on `side`.
    pub const fn outstanding(&self, side: Side) -> u32 {
        self.outstanding[ix(side)]
    }
}
