// SPDX-License-Identifier: GPL-2.0

//! A bound device's policy in configfs: `/sys/kernel/config/reflux/<device>/`, made at bind and
//! removed at unbind, next to the administrator's attachments.
//!
//! ```text
//! cd /sys/kernel/config/reflux/reflux0
//! echo 0x1 > placement        # stage 0 of the default pipeline on the device, the rest on the host
//! echo 1 > sched              # the thermal-aware scheduler takes over the placement
//! echo 700 > sched_theta      # ... and uploads a stage above a score of 700
//! echo "400 400 200" > sched_weights
//! echo 10 > irq_poll_below_us # the interrupt path polls below 10 µs between completions
//! ```
//!
//! Every write takes effect at once on the running device; the scheduler reads its parameters
//! at each epoch. A write that is malformed or out of range fails with `EINVAL` and changes
//! nothing; one the device's state forbids fails with `EBUSY` (a placement while the scheduler
//! owns it, the scheduler while request-level dispatch is on), one it cannot do with
//! `EOPNOTSUPP` (the scheduler or a placement on a device that cannot migrate, polling
//! thresholds without the sleep/poll switch). The module parameters of the same names are the
//! values a device starts with. `pipeline`, `checksum` and `dispatch` are read-only: the actors
//! of the default pipeline are registered in the PMR when the device is mounted.

use kernel::{
    c_str,
    configfs::{Attribute, Group, Page},
    prelude::*,
    sync::Arc,
};

use crate::actor::pipeline_actors;
use crate::proto::attach::{parse_bool, trim};
use crate::proto::pipeline::Side;
use crate::proto::sched::SchedParams;
use crate::queue::RefluxDev;

/// A scheduler parameter as an attribute: how to read it and to change it.
struct SchedAttr {
    get: fn(&SchedParams) -> u32,
    set: fn(&mut SchedParams, u32),
    boolean: bool,
}

/// Declares the attributes: the fixed ones, then one per scheduler parameter (file name, field,
/// `u32` or `bool`), in one list so that the names and the accessors cannot drift apart.
macro_rules! policy_attrs {
    ($($name:literal $field:ident $ty:ident),* $(,)?) => {
        /// The files, in the order of [`Attr`] then [`SCHED_ATTRS`].
        const ATTRS: &[Attribute] = &[
            Attribute::ro(c_str!("pipeline")),
            Attribute::ro(c_str!("checksum")),
            Attribute::ro(c_str!("dispatch")),
            Attribute::rw(c_str!("placement")),
            Attribute::rw(c_str!("sched")),
            Attribute::rw(c_str!("sched_weights")),
            Attribute::rw(c_str!("irq_poll_below_us")),
            Attribute::rw(c_str!("irq_sleep_above_us")),
            $(Attribute::rw(c_str!($name)),)*
        ];
        /// The scheduler parameters after the fixed attributes.
        const SCHED_ATTRS: &[SchedAttr] = &[$(policy_attrs!(@attr $field $ty),)*];
    };
    (@attr $field:ident u32) => {
        SchedAttr { get: |p| p.$field, set: |p, v| p.$field = v, boolean: false }
    };
    (@attr $field:ident bool) => {
        SchedAttr { get: |p| u32::from(p.$field), set: |p, v| p.$field = v != 0, boolean: true }
    };
}

policy_attrs!(
    "sched_epoch_ms" epoch_ms u32,
    "sched_theta" theta_permille u32,
    "sched_theta_low" theta_low_permille u32,
    "sched_dwell_ms" dwell_ms u32,
    "sched_q_full" q_full u32,
    "sched_host_saturated" host_saturated_permille u32,
    "sched_headroom_temp" headroom_temp_permille u32,
    "sched_headroom_util" headroom_util_permille u32,
    "sched_min_inflight" min_inflight_permille u32,
    "sched_flap_backoff" flap_backoff bool,
    "sched_flap_window_ms" flap_window_ms u32,
    "sched_max_backoff_ms" max_backoff_ms u32,
    "sched_lookahead" lookahead bool,
    "sched_lookahead_max_ms" lookahead_max_ms u32,
    "sched_engine_share" engine_share bool,
    "sched_u_reflux_only" u_reflux_only bool,
);

/// The fixed attributes, by index into [`ATTRS`].
#[derive(Clone, Copy)]
enum Attr {
    Pipeline,
    Checksum,
    Dispatch,
    Placement,
    Sched,
    Weights,
    PollBelow,
    SleepAbove,
}

impl Attr {
    const ALL: [Attr; 8] = [
        Attr::Pipeline,
        Attr::Checksum,
        Attr::Dispatch,
        Attr::Placement,
        Attr::Sched,
        Attr::Weights,
        Attr::PollBelow,
        Attr::SleepAbove,
    ];
}

/// What an attribute index names.
enum Named<'a> {
    Fixed(Attr),
    Sched(&'a SchedAttr),
}

fn named(attr: usize) -> Result<Named<'static>> {
    match Attr::ALL.get(attr) {
        Some(a) => Ok(Named::Fixed(*a)),
        None => attr
            .checked_sub(Attr::ALL.len())
            .and_then(|i| SCHED_ATTRS.get(i))
            .map(Named::Sched)
            .ok_or(EINVAL),
    }
}

/// A `u32` written in decimal, or in hex with `0x`.
fn parse_u32(input: &[u8]) -> Result<u32> {
    let text = core::str::from_utf8(trim(input)).map_err(|_| EINVAL)?;
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => text.parse(),
    }
    .map_err(|_| EINVAL)
}

/// The directory of one bound device.
pub(crate) struct DevPolicy {
    pub(crate) dev: Arc<RefluxDev>,
}

impl DevPolicy {
    /// Bit `i`: stage `i` of the default pipeline runs on the device now.
    fn placement(&self) -> u32 {
        let routing = self.dev.routing.lock();
        pipeline_actors(self.dev.cfg.pipeline, self.dev.cfg.flags)
            .enumerate()
            .filter(|(_, id)| routing.actor(*id).is_some_and(|a| a.side == Side::Device))
            .fold(0, |mask, (i, _)| mask | 1 << i)
    }

    /// The default pipeline's actors that `mask` (bit `i`: stage `i` on the device) moves, with
    /// where each goes: `EPERM` if one of them is pinned, so that nothing moves.
    fn moves(&self, mask: u32) -> Result<KVec<(u8, Side)>> {
        let dev = &self.dev;
        let stages = pipeline_actors(dev.cfg.pipeline, dev.cfg.flags).count();
        // Allocated before the routing table's spinlock: the pushes below never allocate.
        let mut moves = KVec::with_capacity(stages, GFP_KERNEL)?;
        let routing = dev.routing.lock();
        for (i, id) in pipeline_actors(dev.cfg.pipeline, dev.cfg.flags).enumerate() {
            let to = if mask & 1 << i != 0 {
                Side::Device
            } else {
                Side::Host
            };
            match routing.actor(id) {
                Some(a) if a.side == to => continue,
                Some(a) if a.pinned => return Err(EPERM),
                _ => moves.push((id, to), GFP_ATOMIC)?,
            }
        }
        Ok(moves)
    }

    /// Moves the default pipeline's stages to `mask`, one migration per stage that is elsewhere;
    /// stops at the first that fails (the stages moved before stay where they went).
    ///
    /// One writer at a time, from the check that the scheduler is off to the last move, with
    /// the scheduler kept off meanwhile: two writers would otherwise each compute their moves
    /// from the placement before the other's, and end on a placement neither wrote.
    fn set_placement(&self, mask: u32) -> Result {
        let dev = &self.dev;
        let stages = pipeline_actors(dev.cfg.pipeline, dev.cfg.flags).count();
        if mask >> stages != 0 {
            return Err(EINVAL);
        }
        crate::scheduler::unless_running(dev, || {
            for (id, to) in self.moves(mask)? {
                match dev.migrate(id, to) {
                    Ok(_) => {}
                    // Moved meanwhile through debugfs `migrate`: where it was asked to be.
                    Err(e) if e == EALREADY => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
    }

    fn show_fixed(&self, a: Attr, out: &mut Page<'_>) -> Result {
        let dev = &self.dev;
        let switch = dev.poll_switch_params();
        match a {
            Attr::Pipeline => out.text(format_args!("{}\n", dev.cfg.pipeline)),
            Attr::Checksum => out.text(format_args!(
                "{}\n",
                u8::from(dev.cfg.flags & crate::abi::PIPE_FLAG_CHECKSUM != 0)
            )),
            Attr::Dispatch => out.text(format_args!("{}\n", crate::DISPATCH.get())),
            Attr::Placement => out.text(format_args!("{:#x}\n", self.placement())),
            Attr::Sched => out.text(format_args!(
                "{}\n",
                u8::from(crate::scheduler::running(dev))
            )),
            Attr::Weights => {
                let p = dev.sched.params();
                out.text(format_args!(
                    "{} {} {}\n",
                    p.alpha_permille, p.beta_permille, p.gamma_permille
                ))
            }
            Attr::PollBelow => match switch {
                Some(s) => out.text(format_args!("{}\n", s.poll_below_ns / 1000)),
                None => out.text(format_args!("off\n")),
            },
            Attr::SleepAbove => match switch {
                Some(s) => out.text(format_args!("{}\n", s.sleep_above_ns / 1000)),
                None => out.text(format_args!("off\n")),
            },
        }
    }

    fn store_fixed(&self, a: Attr, input: &[u8]) -> Result {
        let dev = &self.dev;
        match a {
            Attr::Pipeline | Attr::Checksum | Attr::Dispatch => Err(EPERM),
            Attr::Placement => self.set_placement(parse_u32(input)?),
            Attr::Sched => {
                let on = parse_bool(input).ok_or(EINVAL)?;
                if on && crate::DISPATCH.get() != 0 {
                    return Err(EBUSY);
                }
                crate::scheduler::set_running(dev, on)
            }
            Attr::Weights => {
                let text = core::str::from_utf8(trim(input)).map_err(|_| EINVAL)?;
                let mut w = text.split_ascii_whitespace().map(|t| t.parse::<u32>());
                let (Some(Ok(a)), Some(Ok(b)), Some(Ok(g)), None) =
                    (w.next(), w.next(), w.next(), w.next())
                else {
                    return Err(EINVAL);
                };
                dev.sched.update(|p| {
                    p.alpha_permille = a;
                    p.beta_permille = b;
                    p.gamma_permille = g;
                })
            }
            Attr::PollBelow | Attr::SleepAbove => {
                let us = u64::from(parse_u32(input)?);
                // Read, changed and stored under the switch's lock: the other threshold, written
                // meanwhile, is kept.
                dev.update_poll_switch_params(|p| {
                    if matches!(a, Attr::PollBelow) {
                        p.poll_below_ns = us * 1000;
                    } else {
                        p.sleep_above_ns = us * 1000;
                        // The gap clamp follows the sleep threshold, as at load.
                        p.max_gap_ns = p.sleep_above_ns.saturating_mul(4);
                    }
                })
            }
        }
    }
}

impl Group for DevPolicy {
    const ATTRS: &'static [Attribute] = ATTRS;

    fn show(&self, attr: usize, out: &mut Page<'_>) -> Result {
        match named(attr)? {
            Named::Fixed(a) => self.show_fixed(a, out),
            Named::Sched(s) => out.text(format_args!("{}\n", (s.get)(&self.dev.sched.params()))),
        }
    }

    fn store(&self, attr: usize, input: &[u8]) -> Result {
        match named(attr)? {
            Named::Fixed(a) => self.store_fixed(a, input),
            Named::Sched(s) => {
                let v = if s.boolean {
                    u32::from(parse_bool(input).ok_or(EINVAL)?)
                } else {
                    parse_u32(input)?
                };
                self.dev.sched.update(|p| (s.set)(p, v))
            }
        }
    }
}
