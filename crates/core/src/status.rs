//! The algorithm-agnostic view of a process that properties, metrics, the CLI and the runtime read.

use serde::{Deserialize, Serialize};

use crate::NodeId;
use epoch::Epoch;

/// A process's state in Garcia-Molina's vocabulary (S004), used for every algorithm.
///
/// Ring and flooding algorithms use `Election` while they take part in a run and `Normal` otherwise;
/// `Reorganization` only appears in Garcia-Molina's algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Crashed. Only drivers report it; a running process never does.
    Down,
    /// Taking part in an election.
    Election,
    /// Elected, or told who is, but not yet released into normal operation (Garcia-Molina).
    Reorganization,
    /// Operating normally, with the leader it knows (possibly none yet).
    Normal,
}

impl State {
    /// The lower-case name used in traces and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Down => "down",
            Self::Election => "election",
            Self::Reorganization => "reorganization",
            Self::Normal => "normal",
        }
    }
}

/// Epoch numbers, unique per process that starts one: an election round counter in the high 32 bits and the id of
/// the process that started the epoch in the low 32, compared as one number (like a Paxos ballot). Two processes
/// that start "the next" epoch at once, or a recovering process that missed some, never pick the same epoch, so
/// an epoch names at most one leadership grant and can serve as a fencing token.
///
/// Epochs are held as [`Epoch`], whose arithmetic cannot wrap: there is no `+` on it, [`Epoch::next`] is `None`
/// past the last round, and a round is a `u32`, so no shift loses bits. An epoch that only grows is the promise
/// every fencing token rests on, and a wrapped one would go back to round 0.
///
/// **The bound on rounds received.** An epoch from another process is valid only if its round is at most
/// [`MAX_ROUND`], 2³¹ − 1 (half the rounds there are). A cluster that elects once a second takes 68 years to get
/// there; an epoch above it can only come from a bug, a damaged disk or a hostile sender, and accepting it would
/// leave the cluster no room to move above it (every process adopts the highest epoch it hears of, so one packet
/// at round 2³² − 1 would stop every later election for good). Whatever pushes a cluster to the bound leaves it
/// 2³¹ more rounds of its own.
pub mod epoch {
    use std::fmt;

    use serde::{Deserialize, Serialize};

    use crate::NodeId;

    /// The highest round an epoch from another process may carry (see the module documentation).
    pub const MAX_ROUND: u32 = (1 << 31) - 1;

    /// A fencing epoch: `round << 32 | starter`. Its arithmetic is checked (see the module documentation).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(transparent)]
    pub struct Epoch(u64);

    impl Epoch {
        /// No epoch yet: below every epoch any process starts.
        pub const ZERO: Self = Self(0);

        /// The epoch of `round` started by `starter`.
        pub const fn of(round: u32, starter: NodeId) -> Self {
            Self(((round as u64) << 32) | starter.0 as u64)
        }

        /// An epoch as its 64 bits (read from the wire or a state file, or published): checked by
        /// [`Epoch::is_valid`] before anything depends on it.
        pub const fn from_bits(bits: u64) -> Self {
            Self(bits)
        }

        /// Its 64 bits: the number applications use as a fencing token.
        pub const fn bits(self) -> u64 {
            self.0
        }

        /// The epoch after this one, started by `starter`; `None` past the last round (2³² − 1), which a process
        /// never reaches from valid epochs (see the module documentation).
        pub fn next(self, starter: NodeId) -> Option<Self> {
            Some(Self::of(self.round().checked_add(1)?, starter))
        }

        /// The epoch `rounds` rounds after this one, started by `starter`, or of the last round if that is
        /// beyond it: a reservation, which must be at or beyond every round entered, stays so at the top.
        pub fn saturating_ahead(self, rounds: u32, starter: NodeId) -> Self {
            Self::of(self.round().saturating_add(rounds), starter)
        }

        /// Its election round: epochs of one round belong to the same election.
        pub const fn round(self) -> u32 {
            (self.0 >> 32) as u32
        }

        /// Who started it.
        pub const fn starter(self) -> NodeId {
            NodeId(self.0 as u32)
        }

        /// Whether a process may accept it from another: its round is at most [`MAX_ROUND`].
        pub const fn is_valid(self) -> bool {
            self.round() <= MAX_ROUND
        }

        /// " in epoch round.starter", for a message about something that happened in this epoch, or nothing for
        /// [`Epoch::ZERO`] (algorithms that run one election have no epochs).
        pub fn within(self) -> String {
            match self {
                Self::ZERO => String::new(),
                e => format!(" in epoch {e}"),
            }
        }
    }

    /// `round.starter`, for people.
    impl fmt::Display for Epoch {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}.{}", self.round(), self.starter())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn epochs_order_by_round_then_starter_and_never_collide() {
            let a = Epoch::ZERO.next(NodeId(7)).unwrap();
            let b = Epoch::ZERO.next(NodeId(9)).unwrap();
            assert!(a < b && a.round() == 1 && b.round() == 1 && b.starter() == NodeId(9));
            assert!(a.next(NodeId(1)).unwrap() > b, "a later round beats any starter of an earlier one");
            assert_eq!(b.next(NodeId(3)).unwrap().to_string(), "2.3");
            assert_eq!(Epoch::of(2, NodeId(3)).within(), " in epoch 2.3");
            assert_eq!(Epoch::ZERO.within(), "");
            assert_eq!(Epoch::of(2, NodeId(3)), b.next(NodeId(3)).unwrap());
        }

        #[test]
        fn arithmetic_never_wraps() {
            let top = Epoch::from_bits(u64::MAX);
            assert_eq!(top.next(NodeId(1)), None, "no epoch after the last round");
            assert_eq!(top.saturating_ahead(16, NodeId(1)), Epoch::of(u32::MAX, NodeId(1)));
            let last = Epoch::of(MAX_ROUND, NodeId(u32::MAX));
            assert!(last.is_valid() && !Epoch::of(MAX_ROUND + 1, NodeId(0)).is_valid() && !top.is_valid());
            assert!(last.next(NodeId(1)).unwrap() > last, "above the bound, a process still moves on");
        }
    }
}

/// A group of the Invitation algorithm: `(counter, creator)`, unique because the creator's counter is on stable
/// storage (S004's `S(i).g`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupId {
    /// The creator's counter when it created the group.
    pub counter: u32,
    /// The process that created it.
    pub creator: NodeId,
}

impl std::fmt::Display for GroupId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.counter, self.creator)
    }
}

/// What a process reports about itself: `S(i).s`, `S(i).c`, its group and its election epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Status {
    /// `S(i).s`.
    pub state: State,
    /// `L(i)` / `S(i).c`: the leader this process believes in, if any.
    pub leader: Option<NodeId>,
    /// The election epoch this process is in; [`Epoch::ZERO`] before any epoch-numbered election.
    pub epoch: Epoch,
    /// `S(i).g`, for algorithms that form groups (Invitation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupId>,
}

impl Status {
    /// The status drivers report for a crashed process.
    pub const DOWN: Self = Self { state: State::Down, leader: None, epoch: Epoch::ZERO, group: None };

    /// Normal operation under `leader`.
    pub const fn normal(leader: Option<NodeId>, epoch: Epoch) -> Self {
        Self { state: State::Normal, leader, epoch, group: None }
    }

    /// Taking part in an election, with no leader yet.
    pub const fn election(epoch: Epoch) -> Self {
        Self { state: State::Election, leader: None, epoch, group: None }
    }

    /// Whether the process is up.
    pub fn is_up(&self) -> bool {
        self.state != State::Down
    }
}

/// A stand-in for a [`Status`] that is cheaper to compare ([`crate::Process::status_key`]): equal keys stand for
/// equal statuses (unequal keys may stand for equal ones: a driver compares the statuses then).
pub trait StatusKey: Copy + Eq {
    /// The status this key stands for.
    fn status(self) -> Status;
}

impl StatusKey for Status {
    #[inline(always)]
    fn status(self) -> Status {
        self
    }
}
