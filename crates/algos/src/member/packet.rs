//! What members say to each other. Every packet carries a header (the sender's incarnation, `seen`, the highest fencing
//! epoch it knows, and `lead`, its own grant if it leads) and a body: a message of the algorithm, or one of the
//! member's own (`announce`, `leaving`, `ask`, `transfer`, `config` and `config-ack`, and in the lease mode `lease` and
//! `lease-ack`), counted as kinds of their own after the algorithm's (and the leader monitor's). A packet from outside
//! is valid only if its header holds epochs a member may accept (a grant its sender started itself, in a round it has
//! seen) and its algorithm message is valid for the algorithm; a driver checks it
//! ([`Member::validate`](super::process::Member::validate)) before the member reads it.

use std::borrow::Cow;

use elect_core::{Epoch, Invalid, Message, NodeId, Port, Roster, Validate};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::voters::{ConfigId, Voters};

/// A member's packet: its header, and an algorithm message or one of the member's own.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "M: Serialize + DeserializeOwned")]
pub struct Packet<M> {
    /// The sender's incarnation.
    pub incarnation: u64,
    /// The highest fencing epoch the sender knows.
    pub seen: Epoch,
    /// The fencing epoch of the sender's current grant, if it leads.
    pub lead: Option<Epoch>,
    /// The id of the voting configuration the sender holds.
    pub config: ConfigId,
    /// The payload.
    pub body: Body<M>,
}

/// What a packet carries besides its header.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", bound = "M: Serialize + DeserializeOwned")]
pub enum Body<M> {
    /// A message of the election algorithm.
    Algorithm(M),
    /// Only the header matters: a new grant (`lead`), or a correction (`seen`).
    Announce,
    /// The sender is leaving (it resigned or shuts down): if it was your leader, elect another now.
    Leaving,
    /// The sender started knowing no epoch and asks for the highest each member knows: it is answered with an
    /// `announce` (see the module documentation).
    Ask,
    /// The sender, a leader, hands leadership over to member `to`: `to` takes over, the members that would
    /// outrank it stand aside, and the sender resigns.
    Transfer {
        /// The member that should lead next.
        to: NodeId,
    },
    /// Lease mode: the sender, which its algorithm names leader, asks to be backed in this round.
    Lease {
        /// The round, numbered from 1 by its sender.
        round: u64,
    },
    /// Lease mode: the sender backs this round of the receiver's.
    LeaseAck {
        /// The round.
        round: u64,
    },
    /// The sender holds this voting configuration: a leader changing the voters sends it, and a member tells one
    /// that holds an older one.
    Config {
        /// The configuration.
        voters: Voters,
    },
    /// The sender holds the configuration with this id (the answer to a leader's `config`).
    ConfigAck {
        /// The configuration's id.
        id: ConfigId,
    },
}

impl<M: Message> Message for Packet<M> {
    fn kinds() -> Cow<'static, [&'static str]> {
        let mut kinds = M::kinds().into_owned();
        kinds.extend_from_slice(MEMBER_KINDS);
        Cow::Owned(kinds)
    }

    fn kind_index(&self) -> usize {
        match &self.body {
            Body::Algorithm(msg) => msg.kind_index(),
            Body::Announce => M::kinds().len(),
            Body::Leaving => M::kinds().len() + 1,
            Body::Ask => M::kinds().len() + 2,
            Body::Transfer { .. } => M::kinds().len() + 3,
            Body::Lease { .. } => M::kinds().len() + 4,
            Body::LeaseAck { .. } => M::kinds().len() + 5,
            Body::Config { .. } => M::kinds().len() + 6,
            Body::ConfigAck { .. } => M::kinds().len() + 7,
        }
    }

    fn kind(&self) -> &'static str {
        match &self.body {
            Body::Algorithm(msg) => msg.kind(),
            Body::Announce => "announce",
            Body::Leaving => "leaving",
            Body::Ask => "ask",
            Body::Transfer { .. } => "transfer",
            Body::Lease { .. } => "lease",
            Body::LeaseAck { .. } => "lease-ack",
            Body::Config { .. } => "config",
            Body::ConfigAck { .. } => "config-ack",
        }
    }

    fn describe(&self) -> String {
        match (&self.body, self.lead) {
            (Body::Algorithm(msg), _) => msg.describe(),
            (Body::Announce, Some(lead)) => format!("announce: I lead under grant {lead}"),
            (Body::Announce, None) => format!("announce: I have seen epoch {}", self.seen),
            (Body::Leaving, _) => "leaving".to_owned(),
            (Body::Ask, _) => "ask: which epochs do you know?".to_owned(),
            (Body::Transfer { to }, _) => format!("transfer: {to} leads next"),
            (Body::Lease { round }, _) => format!("lease: back me, round {round}"),
            (Body::LeaseAck { round }, _) => format!("lease-ack: I back your round {round}"),
            (Body::Config { voters }, _) => format!("config: the voters are {voters}"),
            (Body::ConfigAck { id }, _) => format!("config-ack: I hold configuration {id}"),
        }
    }
}

/// A packet's header holds epochs a member may accept: what the sender has seen, and its grant, which it started
/// itself, in a round it has seen; an algorithm message is valid for the algorithm.
impl<M: Message> Validate for Packet<M> {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        roster.epoch(self.seen, "seen is beyond the last round")?;
        roster
            .ensure(self.config.epoch <= self.seen, "the configuration is newer than the epochs its sender has seen")?;
        if let Some(lead) = self.lead {
            roster.ensure(lead <= self.seen, "the grant is above the epochs its sender has seen")?;
            roster.ensure(lead.round() >= 1 && lead.starter() == roster.from, "the grant is not its sender's own")?;
        }
        match &self.body {
            Body::Algorithm(msg) => msg.validate(roster),
            Body::Lease { round } | Body::LeaseAck { round } => roster.ensure(*round >= 1, "lease rounds start at 1"),
            Body::Transfer { to } => {
                roster.ensure(self.lead.is_some(), "only a leader hands leadership over")?;
                let member = *to == roster.me || roster.neighbors.iter().any(|n| n.id == *to);
                roster.ensure(member && *to != roster.from, "a transfer names a member other than its sender")
            }
            Body::Config { voters } => {
                roster.ensure(voters.id.epoch <= self.seen, "the configuration is newer than its sender has seen")?;
                let known = |id: &NodeId| *id == roster.me || roster.neighbors.iter().any(|n| n.id == *id);
                roster.ensure(
                    !voters.members.is_empty() && voters.members.len() <= roster.neighbors.len() + 1,
                    "a configuration has between one voter and every member",
                )?;
                roster.ensure(
                    voters.members.windows(2).all(|w| w[0] < w[1]) && voters.members.iter().all(known),
                    "a configuration lists members, in the order of their ids, none twice",
                )
            }
            Body::ConfigAck { id } => {
                roster.ensure(id.epoch <= self.seen, "the configuration is newer than its sender has seen")
            }
            Body::Announce | Body::Leaving | Body::Ask => Ok(()),
        }
    }
}

/// A member's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemberTimer<T> {
    /// The algorithm's timer, armed by its instance `life` (a resignation restarts the algorithm; the timers of
    /// its earlier instance are then ignored).
    Inner {
        /// The instance that armed it.
        life: u32,
        /// The algorithm's timer.
        timer: T,
    },
    /// The claim of the member at this port has expired: it was silent for the claim's life.
    Claim(Port),
    /// The algorithm has kept this member leader for the settling wait.
    Settle,
    /// The resign hold is over, or a transfer's deadline has come.
    Wake,
    /// A member that started knowing no epoch has waited a round trip for the answers to its question.
    Asked,
    /// Lease mode: time to ask for the lease again.
    Renew,
    /// Lease mode: the hold of the round in this slot ran out.
    Hold(u8),
    /// Lease mode: this member's promise to back one leader ran out.
    Promise,
    /// Lease mode: the grace of a leader that seeks a lease ran out.
    Grace,
    /// A leader changing the voters has waited a round trip for the members to hold the configuration it sent.
    Change,
    /// The packets of this instant have all arrived: the answers owed go out (see [`super::replies`]).
    Answer,
}

/// What a member keeps on stable storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "D: Serialize + DeserializeOwned")]
pub struct Saved<D> {
    /// Its incarnation.
    pub incarnation: u64,
    /// The highest fencing epoch it has heard of or granted.
    pub seen: Epoch,
    /// The algorithm's durable state.
    pub inner: Option<D>,
    /// The voting configuration, once it is not the one the member was started with.
    pub voters: Option<Voters>,
}

/// The member's own message kinds, after the algorithm's (in the order of [`Packet::kind_index`]), which
/// closed-form bounds of one election leave out.
pub(super) const MEMBER_KINDS: &[&str] =
    &["announce", "leaving", "ask", "transfer", "lease", "lease-ack", "config", "config-ack"];
/// The kinds of the messages the leader monitor and the member add around an algorithm's: the monitor's
/// (`heartbeat`, `join`, `hop-ack`, `pre-vote`, `pre-vote-reply`) then the member's own (spelled out, as a bound's
/// measure is a static list; a test checks that it is their concatenation).
pub const MEMBER_AND_MONITOR_KINDS: &[&str] = &[
    "heartbeat",
    "join",
    "hop-ack",
    "pre-vote",
    "pre-vote-reply",
    "announce",
    "leaving",
    "ask",
    "transfer",
    "lease",
    "lease-ack",
    "config",
    "config-ack",
];
