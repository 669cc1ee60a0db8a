//! Voting configurations: which members elect, and whose majorities count. Every member knows the roster (the
//! members it can reach, fixed at its start); the *voters* are the part of it that takes part in elections and
//! whose majorities back leases and answer a member that lost its state. A member that is not a voter (a learner
//! that has not been added yet, or a member that was removed) takes no part, as a member that must never lead, and
//! follows the leader the voters elect.
//!
//! The voters change one member at a time, at the leader's hand, in two round trips:
//!
//! 1. *confirm*: the leader sends its configuration to every member and waits until a majority of its voters, and a
//!    majority of the voters the change makes (the member added among them), holds it: a change that would leave no
//!    majority that answers is given up before it takes effect. A member holding a newer one says so, and the leader
//!    takes that one instead and gives the change up (it is asked again). Once a majority has answered, every newer
//!    configuration any member holds was never held by a majority of its own voters, and those that answered (their
//!    `seen` has reached the leader's grant) take no configuration from an older leader again.
//! 2. *commit*: the leader makes the new configuration, numbered after every one before it (its grant, then a
//!    count), makes it durable, sends it, and waits until a majority of the *new* voters (and the member added, if
//!    any) holds it. Then the change is done, and only then may the next begin.
//!
//! Two configurations that differ by one member have overlapping majorities, and once a majority of the new voters
//! holds the new configuration, fewer than a majority of the old ones still hold the old: so majorities of two
//! configurations in use never miss each other. A member takes a configuration only from the leader of the newest
//! epoch it knows (a leader takes a newer one from anybody), makes it durable before it answers, and never goes
//! back to an older one. It backs no lease round of a member whose configuration is older than its own.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use elect_core::{Epoch, NodeId};
use serde::{Deserialize, Serialize};

use crate::params::{ParamError, ParamInfo, Params};

/// The parameter that names the voters a simulated or checked cluster starts with (`elect node --voters` for a
/// real one).
pub const VOTERS_PARAM: ParamInfo = ParamInfo {
    name: "voters",
    values: "ids of the run, separated by commas",
    default: "every member",
    help: "the voters members start with (only with --monitor, in elect sim and elect check; elect node takes \
           --voters): the others start as learners, which --add-voter makes voters",
};

/// How many round trips a leader waits for a majority in each step of a change before it gives the change up.
pub const CHANGE_TRIES: u8 = 5;

/// A configuration's place in the order of configurations: the grant of the leader that made it, then its number
/// among that leader's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConfigId {
    /// The grant of the leader that made it (zero for the configuration a cluster starts with).
    pub epoch: Epoch,
    /// Its number among that leader's configurations, from 1 (0 for the first configuration).
    pub seq: u32,
}

impl ConfigId {
    /// The configuration a cluster starts with.
    pub const INITIAL: Self = Self { epoch: Epoch::ZERO, seq: 0 };

    /// The id of the configuration a leader under `grant` makes after this one, if its count is not exhausted.
    pub(super) fn next(self, grant: Epoch) -> Option<Self> {
        if self.epoch == grant {
            Some(Self { epoch: grant, seq: self.seq.checked_add(1)? })
        } else {
            Some(Self { epoch: grant, seq: 1 })
        }
    }
}

impl fmt::Display for ConfigId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.epoch, self.seq)
    }
}

/// A voting configuration: its id, and the voters, in the order of their ids, none twice, never none.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Voters {
    /// Its place in the order of configurations.
    pub id: ConfigId,
    /// The voters.
    pub members: Vec<NodeId>,
}

impl Voters {
    /// The configuration `members` start with (sorted here).
    pub fn initial(mut members: Vec<NodeId>) -> Self {
        members.sort_unstable();
        members.dedup();
        Self { id: ConfigId::INITIAL, members }
    }

    /// Takes [`VOTERS_PARAM`] out of `params`: the voters it names, if it is given, and the other parameters. The
    /// ids must be distinct; whether they are members of the run is for the driver to check.
    #[allow(clippy::type_complexity)]
    pub fn take(params: &Params) -> Result<(Option<Arc<[NodeId]>>, Params), ParamError> {
        let (value, rest) = params.without(VOTERS_PARAM.name);
        let Some(raw) = value else { return Ok((None, rest)) };
        let invalid = |reason: String| ParamError::Invalid { key: VOTERS_PARAM.name, value: raw.clone(), reason };
        let mut ids = BTreeSet::new();
        for part in raw.split(',') {
            let id = part.trim().parse::<u32>().map_err(|_| invalid(format!("expected {}", VOTERS_PARAM.values)))?;
            if !ids.insert(NodeId(id)) {
                return Err(invalid(format!("{id} is named twice")));
            }
        }
        Ok((Some(ids.into_iter().collect()), rest))
    }

    /// What a member saves of it: nothing while it is the configuration the member was started with.
    pub(super) fn to_save(&self) -> Option<Self> {
        (self.id != ConfigId::INITIAL).then(|| self.clone())
    }

    /// Whether `id` votes.
    pub fn contains(&self, id: NodeId) -> bool {
        self.members.binary_search(&id).is_ok()
    }

    /// How many voters make a majority.
    pub fn majority(&self) -> usize {
        self.members.len() / 2 + 1
    }

    /// Whether the voters among `ids` are a majority.
    pub fn is_majority<'a>(&self, ids: impl IntoIterator<Item = &'a NodeId>) -> bool {
        ids.into_iter().filter(|&&id| self.contains(id)).count() >= self.majority()
    }

    /// The configuration `id` after `change`.
    pub(super) fn with(&self, change: VoterChange, id: ConfigId) -> Self {
        let mut members = self.members.clone();
        match change {
            VoterChange::Add(member) => members.push(member),
            VoterChange::Remove(member) => members.retain(|&m| m != member),
        }
        members.sort_unstable();
        members.dedup();
        Self { id, members }
    }
}

impl fmt::Display for Voters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self.members.iter().map(ToString::to_string).collect();
        write!(f, "{} ({})", ids.join(","), self.id)
    }
}

/// A change of the voters: one member added or removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VoterChange {
    /// Make this member a voter.
    Add(NodeId),
    /// Make this member a voter no more.
    Remove(NodeId),
}

impl VoterChange {
    /// The command that asks a member for this change.
    pub fn command(self) -> elect_core::Command {
        match self {
            Self::Add(id) => elect_core::Command::AddVoter { id },
            Self::Remove(id) => elect_core::Command::RemoveVoter { id },
        }
    }
}

impl fmt::Display for VoterChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Add(id) => write!(f, "add {id}"),
            Self::Remove(id) => write!(f, "remove {id}"),
        }
    }
}

/// How the latest change of the voters asked of this member stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state", content = "detail")]
pub enum ChangeState {
    /// It is being made.
    Running,
    /// It was made: a majority of the new voters holds the configuration with this id.
    Done(ConfigId),
    /// It was not started, for this reason: nothing changed.
    Refused(&'static str),
    /// It was given up before a majority of the new voters held it, for this reason: it may take effect or not
    /// (a later leader completes it if a majority of the old voters had it); read the voters again.
    Failed(&'static str),
}

/// The latest change of the voters asked of this member, and how it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ChangeReport {
    /// The change asked.
    pub change: VoterChange,
    /// How it stands.
    #[serde(flatten)]
    pub state: ChangeState,
}

/// A leader's change in progress.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Changing {
    pub(super) change: VoterChange,
    /// While confirming, the configuration it holds; while committing, the new one.
    pub(super) target: Voters,
    pub(super) committing: bool,
    /// The members that hold `target`, itself included.
    pub(super) holders: BTreeSet<NodeId>,
    /// Round trips waited in this step.
    pub(super) tries: u8,
}

/// A member's part in voting configurations: the configuration it holds, and, on a leader, the change it makes.
/// Compared and hashed by the configuration's id, not its voters: one id names one configuration (it is made once,
/// by the leader of its grant), and a search compares members at every step.
#[derive(Clone, Debug)]
pub(super) struct Membership {
    /// The newest configuration it knows (shared: members are cloned at every step of a search).
    pub(super) voters: Arc<Voters>,
    /// The newest configuration id any packet said its sender holds (a member that lost its state counts its
    /// answers only once it holds that one too).
    pub(super) newest_heard: ConfigId,
    pub(super) changing: Option<Changing>,
    pub(super) report: Option<ChangeReport>,
}

impl Membership {
    #[allow(clippy::type_complexity)]
    fn key(&self) -> (ConfigId, ConfigId, Option<&Changing>, Option<&ChangeReport>) {
        (self.voters.id, self.newest_heard, self.changing.as_ref(), self.report.as_ref())
    }
}

impl PartialEq for Membership {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Membership {}

impl std::hash::Hash for Membership {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl Membership {
    /// A member's part, holding `voters`.
    pub(super) fn new(voters: Arc<Voters>) -> Self {
        Self { newest_heard: voters.id, voters, changing: None, report: None }
    }

    /// Whether it holds the newest configuration it heard of.
    pub(super) fn current(&self) -> bool {
        self.newest_heard <= self.voters.id
    }
}
