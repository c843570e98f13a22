// SPDX-License-Identifier: GPL-2.0

//! The outcome of an epoch: the scores, the migration and the throttle, and its log line.

use core::fmt;

use super::super::pipeline::Side;
use super::MAX_LOGGED;

/// One actor's score, recorded for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActorScore {
    /// The actor's id.
    pub id: u8,
    /// Where the actor ran when scored.
    pub side: Side,
    /// Its score `S`, in permille.
    pub score: u32,
}

impl ActorScore {
    pub(super) const NONE: Self = Self {
        id: 0,
        side: Side::Host,
        score: 0,
    };
}

/// A migration the scheduler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The actor to migrate.
    pub actor: u8,
    /// The side to migrate it to: [`Side::Host`] for an upload, [`Side::Device`] for an offload.
    pub to: Side,
    /// The actor's score, in permille.
    pub score: u32,
}

/// The outcome of one epoch. Its [`Display`](fmt::Display) form is one log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    /// The migration to perform, if any (at most one per epoch).
    pub migrate: Option<Move>,
    /// The upload in `migrate` is a flap: the actor may not be offloaded again for this many
    /// milliseconds.
    pub hold_ms: Option<u32>,
    /// Both sides were saturated this epoch: the in-flight fraction was halved.
    pub throttle: bool,
    /// The permitted in-flight fraction from now on, in permille (1000: unthrottled).
    pub inflight_permille: u32,
    /// The normalised device temperature `T_dev`, in permille.
    pub t_dev_permille: u32,
    /// The highest `T_dev` a device-placed actor was scored at, projected (see the thermal
    /// lookahead), in permille; `t_dev_permille` without a lookahead.
    pub t_proj_permille: u32,
    /// The host CPU utilisation `U_host`, in permille (scaled by the frequency, clamped).
    pub u_host_permille: u32,
    /// The host frequency the sample gave, in permille of the maximum.
    pub host_freq_permille: Option<u32>,
    /// The device engine utilisation, in permille (clamped).
    pub dev_util_permille: u32,
    /// The number of actors considered.
    pub actors: usize,
    pub(super) scores: [ActorScore; MAX_LOGGED],
    pub(super) logged: usize,
}

impl Decision {
    /// The scores of the first [`MAX_LOGGED`] actors, in the order they were given.
    pub fn scores(&self) -> &[ActorScore] {
        self.scores.get(..self.logged).unwrap_or(&[])
    }
}

const fn side_name(side: Side) -> &'static str {
    match side {
        Side::Host => "host",
        Side::Device => "dev",
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}->{}(s={})",
            self.actor,
            side_name(self.to.other()),
            side_name(self.to),
            self.score
        )
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t_dev={} u_host={}",
            self.t_dev_permille, self.u_host_permille
        )?;
        if self.t_proj_permille != self.t_dev_permille {
            write!(f, " t_proj={}", self.t_proj_permille)?;
        }
        if let Some(freq) = self.host_freq_permille {
            write!(f, " host_freq={freq}")?;
        }
        write!(
            f,
            " dev_util={} inflight={} throttle={} move=",
            self.dev_util_permille,
            self.inflight_permille,
            if self.throttle { "yes" } else { "no" },
        )?;
        match &self.migrate {
            Some(m) => write!(f, "{m}")?,
            None => f.write_str("none")?,
        }
        if let Some(hold) = self.hold_ms {
            write!(f, " flap hold={hold}ms")?;
        }
        f.write_str(" scores=[")?;
        for (i, s) in self.scores().iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{}@{}:{}", s.id, side_name(s.side), s.score)?;
        }
        f.write_str("]")?;
        let more = self.actors.saturating_sub(self.logged);
        if more > 0 {
            write!(f, " +{more}")?;
        }
        Ok(())
    }
}
