//! A pre-vote's state: whom it asks about, which try it is on, and the answers so far, with what they add up to.
//! The monitor's steps that ask and answer are in `pre_vote.rs`.

use std::collections::BTreeSet;

use elect_core::{NodeId, Port};

/// How many times a pre-vote asks, a round trip apart, while answers are missing (see the module documentation).
pub const PRE_VOTE_TRIES: u8 = 3;

/// After this many pre-votes in a row found that a majority hears the leader, a follower confirms a contrary one
/// before it deposes the leader.
///
/// From then on the follower cannot hear a leader the others hear, and a stall of the whole machine (a virtual
/// machine descheduled, a leader paused for a moment) makes every process miss a heartbeat at once: one such moment
/// in the seconds of a bad link must not depose a leader the others hear. After a crash a follower may be kept once
/// (another one heard the last heartbeat a little later), and pays no more for this.
pub const KEPT: u8 = 2;

/// A pre-vote: a follower that no longer hears `suspect` asks the others whether they do (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Poll {
    pub(super) suspect: NodeId,
    /// The try, from 1 to [`PRE_VOTE_TRIES`].
    pub(super) tries: u8,
    /// Who answered, at its latest answer in any try of this pre-vote, that it hears the suspect, and who that it
    /// does not: an answer stays counted when the follower asks again, so that on a lossy network the tries add up
    /// instead of each starting from nothing.
    pub(super) yes: BTreeSet<Port>,
    pub(super) no: BTreeSet<Port>,
}

/// What the answers of a pre-vote add up to so far.
pub(super) enum Count {
    /// A majority hears the leader.
    Kept,
    /// Too few are left who could answer yes: no majority hears it.
    Deposed(NodeId),
    /// Neither yet.
    Open,
}

impl Poll {
    /// Counts `hears`, the latest answer of the process at `from`, among `voters` other processes.
    pub(super) fn count(&mut self, from: Port, hears: bool, voters: usize, suspect_port: Option<Port>) -> Count {
        if hears {
            self.no.remove(&from);
            self.yes.insert(from);
        } else {
            self.yes.remove(&from);
            self.no.insert(from);
        }
        // A majority of the processes: the `voters` others and this one.
        let processes = voters + 1;
        let majority = processes / 2 + 1;
        // A process that heard the leader within the quiet time vouches that it is alive, and a live leader hears
        // itself: it counts among those who hear it even if its own answer cannot reach this follower.
        let vouched = !self.yes.is_empty() && suspect_port.is_some_and(|s| !self.yes.contains(&s));
        if self.yes.len() + usize::from(vouched) >= majority {
            Count::Kept
        } else if voters - self.no.len() < majority {
            Count::Deposed(self.suspect)
        } else {
            Count::Open
        }
    }
}
