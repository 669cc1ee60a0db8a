//! The algorithm-agnostic view of a process that properties, metrics, the CLI and the runtime read.

use serde::{Deserialize, Serialize};

use crate::NodeId;

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
pub mod epoch {
    use crate::NodeId;

    /// The epoch after `current`, started by `starter`.
    pub fn next(current: u64, starter: NodeId) -> u64 {
        of(round(current) + 1, starter)
    }

    /// The epoch of `round` started by `starter`.
    pub fn of(round: u64, starter: NodeId) -> u64 {
        (round << 32) | u64::from(starter.0)
    }

    /// The election round of epoch `e`: epochs of one round belong to the same election.
    pub fn round(e: u64) -> u64 {
        e >> 32
    }

    /// Who started epoch `e`.
    pub fn starter(e: u64) -> NodeId {
        NodeId(e as u32)
    }

    /// `e` as `round.starter`, for people.
    pub fn show(e: u64) -> String {
        format!("{}.{}", round(e), starter(e))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn epochs_order_by_round_then_starter_and_never_collide() {
            let a = next(0, NodeId(7));
            let b = next(0, NodeId(9));
            assert!(a < b && round(a) == 1 && round(b) == 1 && starter(b) == NodeId(9));
            assert!(next(a, NodeId(1)) > b, "a later round beats any starter of an earlier one");
            assert_eq!(show(next(b, NodeId(3))), "2.3");
            assert_eq!(of(2, NodeId(3)), next(b, NodeId(3)));
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
    /// The election epoch this process is in; 0 before any epoch-numbered election.
    pub epoch: u64,
    /// `S(i).g`, for algorithms that form groups (Invitation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<GroupId>,
}

impl Status {
    /// The status drivers report for a crashed process.
    pub const DOWN: Self = Self { state: State::Down, leader: None, epoch: 0, group: None };

    /// Normal operation under `leader`.
    pub const fn normal(leader: Option<NodeId>, epoch: u64) -> Self {
        Self { state: State::Normal, leader, epoch, group: None }
    }

    /// Taking part in an election, with no leader yet.
    pub const fn election(epoch: u64) -> Self {
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
