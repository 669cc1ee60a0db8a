//! What a message from outside must be before a handler sees it.
//!
//! A message that decodes is well-formed, not valid: its fields may name a process that is not a member, carry an
//! empty list where the algorithm's rules always put one id, or an epoch so high that nobody could move above it.
//! Every message type says what it must be, next to its definition ([`Validate`]), against the [`Roster`] of the
//! receiving process: who the members are, their ranks, and who sent the message. A driver that receives messages
//! from outside (the network runtime) checks each one before it hands it over, and drops and counts one that fails;
//! handlers may then rely on what the check holds. The simulator and the model checker, whose messages come from
//! the processes themselves, need not check.

use std::fmt;

use crate::{Epoch, Neighbor, NodeId, Rank};

/// Why a message is invalid: a short phrase naming the field and the problem (for logs and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invalid(pub &'static str);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Invalid {}

/// What a received message is checked against: the receiving process, its neighbours (every other member, on the
/// complete graph members form), and the sender.
#[derive(Clone, Copy, Debug)]
pub struct Roster<'a> {
    /// The receiving process.
    pub me: NodeId,
    /// Its rank.
    pub rank: Rank,
    /// Every other process it has a link to.
    pub neighbors: &'a [Neighbor],
    /// The process the message came from.
    pub from: NodeId,
}

impl Roster<'_> {
    /// How many processes there are, the receiver included: the longest list of distinct ids a message can hold.
    pub fn nodes(&self) -> usize {
        self.neighbors.len() + 1
    }

    /// Holds when `ok`, else `why`.
    pub fn ensure(&self, ok: bool, why: &'static str) -> Result<(), Invalid> {
        if ok { Ok(()) } else { Err(Invalid(why)) }
    }

    /// Whether `id` is a member (the receiver or one of its neighbours).
    pub fn is_member(&self, id: NodeId) -> bool {
        id == self.me || self.neighbors.iter().any(|n| n.id == id)
    }

    /// `id` is a member; `why` names the field otherwise.
    pub fn member(&self, id: NodeId, why: &'static str) -> Result<(), Invalid> {
        self.ensure(self.is_member(id), why)
    }

    /// The rank of member `id`, if it is one.
    pub fn rank_of(&self, id: NodeId) -> Option<Rank> {
        if id == self.me { Some(self.rank) } else { self.neighbors.iter().find(|n| n.id == id).map(|n| n.rank) }
    }

    /// `rank` is a member's rank, exactly as the receiver knows it.
    pub fn rank(&self, rank: Rank, why: &'static str) -> Result<(), Invalid> {
        self.ensure(self.rank_of(rank.id()) == Some(rank), why)
    }

    /// `epoch` is one a process may accept from another ([`Epoch::is_valid`]).
    pub fn epoch(&self, epoch: Epoch, why: &'static str) -> Result<(), Invalid> {
        self.ensure(epoch.is_valid(), why)
    }

    /// A list of ids holds between one and [`Roster::nodes`] members.
    pub fn ids(&self, ids: &[NodeId], why: &'static str) -> Result<(), Invalid> {
        self.ensure(!ids.is_empty() && ids.len() <= self.nodes() && ids.iter().all(|&id| self.is_member(id)), why)
    }
}

/// What a message of this type must be to be handed to a process (see the module documentation). Implemented next
/// to each message type's definition.
pub trait Validate {
    /// `Ok` if a process may be handed this message from `roster.from`; otherwise what is wrong with it.
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid>;
}
