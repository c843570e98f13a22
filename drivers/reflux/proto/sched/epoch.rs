// SPDX-License-Identifier: GPL-2.0

//! One epoch of the scheduler: every actor scored, at most one migration chosen, the throttle
//! updated.

use super::super::pipeline::Side;
use super::lookahead::lookahead_cap_ns;
use super::score::{clamp_permille, combine};
use super::{
    project_milli_c, q_dev_permille, queue_depth, t_dev_permille, u_host_permille, ActorScore,
    ActorView, Decision, Move, Sample, SchedParams, Scheduler, MAX_LOGGED, NS_PER_MS,
};

/// Whether `actor` may migrate at `now_ns`: it is not pinned and its last migration is at least
/// `dwell_ns` old.
const fn movable(actor: &ActorView, now_ns: u64, dwell_ns: u64) -> bool {
    if actor.pinned {
        return false;
    }
    match actor.last_move_ns {
        None => true,
        // A last move after `now_ns` is "just now", too recent even for a zero dwell.
        Some(last) => match now_ns.checked_sub(last) {
            Some(age) => age >= dwell_ns,
            None => false,
        },
    }
}

/// What one epoch scores every actor against, computed once from its sample.
struct Epoch {
    /// The normalised device temperature `T_dev`, in permille.
    t_dev: u32,
    /// The longest a device-placed actor's temperature is projected ahead, in nanoseconds.
    cap_ns: u64,
    /// The shortest it is projected ahead, in nanoseconds.
    horizon_ns: u64,
    /// The host CPU utilisation `U_host`, in permille.
    u_host: u32,
    /// The device engine utilisation, in permille (clamped).
    dev_util: u32,
    /// The host can take an upload: `U_host` is below the saturation threshold.
    host_free: bool,
    /// The device can take an offload: cool and idle enough.
    headroom: bool,
    /// The time an actor stays put after a migration, in nanoseconds.
    dwell_ns: u64,
}

/// The epoch's choice so far: the best upload and offload, and whether a device-placed actor
/// wanted an upload the saturated host could not take.
#[derive(Default)]
struct Choice {
    upload: Option<Move>,
    offload: Option<Move>,
    saturated: bool,
}

impl Scheduler {
    /// Runs one epoch: scores every actor in `actors`, decides at most one migration and updates
    /// the throttle (see the module documentation).
    ///
    /// `params` should be valid ([`SchedParams::validate`]); invalid ones give meaningless but
    /// safe decisions (no panic, no overflow, an in-flight fraction in `1..=1000`). The caller
    /// performs the migration and records its time in the actor's [`ActorView::last_move_ns`].
    pub fn step(
        &mut self,
        params: &SchedParams,
        sample: &Sample,
        actors: &[ActorView],
    ) -> Decision {
        self.observe(sample);
        let t_dev = t_dev_permille(params, sample.temp_milli_c);
        self.pace(sample);
        let epoch = self.epoch(params, sample, t_dev);
        // The highest projection a device-placed actor was scored at (a host-placed actor's
        // temperature is `t_dev` itself, which this starts at).
        let mut t_proj = t_dev;
        let mut scores = [ActorScore::NONE; MAX_LOGGED];
        let mut choice = Choice::default();
        for (i, a) in actors.iter().enumerate() {
            let t = self.actor_temp(params, sample, &epoch, a);
            t_proj = t_proj.max(t);
            let s = combine(
                params,
                t,
                epoch.u_host,
                q_dev_permille(params, queue_depth(params, a)),
            );
            if let Some(slot) = scores.get_mut(i) {
                *slot = ActorScore {
                    id: a.id,
                    side: a.side,
                    score: s,
                };
            }
            self.consider(params, sample, &epoch, a, s, &mut choice);
        }
        let hold_ms = choice.upload.and_then(|m| {
            let a = actors.iter().find(|a| a.id == m.actor)?;
            self.note_upload(params, a, sample.now_ns)
        });
        let migrate = match choice.upload {
            Some(m) => Some(m),
            None => choice.offload,
        };
        self.count_epoch(params, choice.saturated, migrate.is_some());

        Decision {
            migrate,
            hold_ms,
            throttle: choice.saturated,
            inflight_permille: self.inflight_permille,
            t_dev_permille: t_dev,
            t_proj_permille: t_proj,
            u_host_permille: epoch.u_host,
            host_freq_permille: sample.host_freq_permille,
            dev_util_permille: epoch.dev_util,
            actors: actors.len(),
            scores,
            logged: actors.len().min(MAX_LOGGED),
        }
    }

    /// What every actor of this epoch is scored against, from `sample` and the normalised
    /// temperature `t_dev`. Called after [`Self::pace`], whose window the horizon depends on.
    fn epoch(&self, params: &SchedParams, sample: &Sample, t_dev: u32) -> Epoch {
        let u_host = u_host_permille(params, sample);
        let dev_util = clamp_permille(sample.dev_util_permille);
        Epoch {
            t_dev,
            cap_ns: lookahead_cap_ns(params),
            horizon_ns: self.horizon_ns(params),
            u_host,
            dev_util,
            host_free: u_host < params.host_saturated_permille,
            headroom: t_dev < params.headroom_temp_permille
                && dev_util < params.headroom_util_permille,
            dwell_ns: u64::from(params.dwell_ms) * NS_PER_MS,
        }
    }

    /// The normalised temperature `a` is scored at: for a device-placed actor `T_dev` projected
    /// over the time its drain would take (at least the horizon, at most the cap) and never
    /// below `t_dev`; for a host-placed one `t_dev`.
    fn actor_temp(
        &self,
        params: &SchedParams,
        sample: &Sample,
        epoch: &Epoch,
        a: &ActorView,
    ) -> u32 {
        match a.side {
            Side::Device => {
                let h = match self.drain_ns(a.inflight) {
                    Some(d) => d.max(epoch.horizon_ns).min(epoch.cap_ns),
                    None => epoch.horizon_ns,
                };
                t_dev_permille(params, project_milli_c(sample.temp_milli_c, self.slope, h))
                    .max(epoch.t_dev)
            }
            Side::Host => epoch.t_dev,
        }
    }

    /// Weighs actor `a`, scored `s`, into `choice`: a device-placed actor above `θ` is the
    /// upload candidate if it scores highest (or marks the epoch saturated when the host is
    /// not free); a host-placed one below `θ_low` is the offload candidate if it scores lowest
    /// and the device has headroom. Only actors past their dwell (and flap hold) count.
    fn consider(
        &self,
        params: &SchedParams,
        sample: &Sample,
        epoch: &Epoch,
        a: &ActorView,
        s: u32,
        choice: &mut Choice,
    ) {
        let candidate = Move {
            actor: a.id,
            to: a.side.other(),
            score: s,
        };
        match a.side {
            Side::Device if s > params.theta_permille => {
                if !epoch.host_free {
                    choice.saturated = true;
                } else if movable(a, sample.now_ns, epoch.dwell_ns) {
                    choice.upload = match choice.upload {
                        Some(m) if m.score >= s => Some(m),
                        _ => Some(candidate),
                    };
                }
            }
            Side::Host
                if s < params.theta_low_permille
                    && epoch.headroom
                    && movable(
                        a,
                        sample.now_ns,
                        epoch.dwell_ns.max(self.hold_ns(params, a.id)),
                    ) =>
            {
                choice.offload = match choice.offload {
                    Some(m) if m.score <= s => Some(m),
                    _ => Some(candidate),
                };
            }
            _ => {}
        }
    }

    /// Ends an epoch: halves the in-flight fraction (down to the floor) if it was `saturated`,
    /// doubles it back towards 1000 otherwise, and counts the epoch, its migration and its
    /// throttling.
    fn count_epoch(&mut self, params: &SchedParams, saturated: bool, migrated: bool) {
        let floor = params.min_inflight_permille.clamp(1, 1000);
        self.inflight_permille = if saturated {
            (self.inflight_permille / 2).max(floor)
        } else {
            self.inflight_permille.saturating_mul(2).min(1000)
        };
        self.epochs = self.epochs.saturating_add(1);
        if migrated {
            self.moves = self.moves.saturating_add(1);
        }
        if saturated {
            self.throttled_epochs = self.throttled_epochs.saturating_add(1);
        }
    }
}
