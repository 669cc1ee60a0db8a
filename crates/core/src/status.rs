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

/// What a process reports about itself: `S(i).s`, `S(i).c` and its election epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Status {
    /// `S(i).s`.
    pub state: State,
    /// `L(i)` / `S(i).c`: the leader this process believes in, if any.
    pub leader: Option<NodeId>,
    /// The election epoch this process is in; 0 before any epoch-numbered election.
    pub epoch: u64,
}

impl Status {
    /// The status drivers report for a crashed process.
    pub const DOWN: Self = Self { state: State::Down, leader: None, epoch: 0 };

    /// Normal operation under `leader`.
    pub const fn normal(leader: Option<NodeId>, epoch: u64) -> Self {
        Self { state: State::Normal, leader, epoch }
    }

    /// Taking part in an election, with no leader yet.
    pub const fn election(epoch: u64) -> Self {
        Self { state: State::Election, leader: None, epoch }
    }

    /// Whether the process is up.
    pub fn is_up(&self) -> bool {
        self.state != State::Down
    }
}
