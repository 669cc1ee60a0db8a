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

use elect_core::{Cx, Epoch, NodeId, Port, Span};
use serde::{Deserialize, Serialize};

use super::away::Away;
use super::config::Bug;
use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::rule;
use crate::algorithm::Algorithm;
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
    fn next(self, grant: Epoch) -> Option<Self> {
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
    fn with(&self, change: VoterChange, id: ConfigId) -> Self {
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
struct Changing {
    change: VoterChange,
    /// While confirming, the configuration it holds; while committing, the new one.
    target: Voters,
    committing: bool,
    /// The members that hold `target`, itself included.
    holders: BTreeSet<NodeId>,
    /// Round trips waited in this step.
    tries: u8,
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
    changing: Option<Changing>,
    report: Option<ChangeReport>,
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

impl<A: Algorithm> Member<A> {
    /// The voting configuration this member holds: the newest it knows.
    pub fn voters(&self) -> &Voters {
        &self.membership.voters
    }

    /// The latest change of the voters asked of this member, and how it stands.
    pub fn change_report(&self) -> Option<ChangeReport> {
        self.membership.report
    }

    /// The change of the voters this member, a leader, is making, if any.
    pub fn changing(&self) -> Option<VoterChange> {
        self.membership.changing.as_ref().map(|c| c.change)
    }

    /// Whether this member votes in the configuration it holds.
    pub(super) fn votes(&self) -> bool {
        self.membership.voters.contains(self.fixed.setup.id)
    }

    /// Whether this member, with the members it heard from, is a majority of the voters.
    pub(super) fn heard_majority(&self) -> bool {
        let me = self.fixed.setup.id;
        self.membership.voters.is_majority(self.heard.keys().chain(std::iter::once(&me)))
    }

    /// Asked to change the voters: a leader starts the change (see the module documentation); anything else is
    /// refused, and the reason reported.
    pub(super) fn change_voters(&mut self, cx: &mut Cx<'_, Self>, change: VoterChange) {
        if let Err(reason) = self.may_change(change) {
            self.membership.report = Some(ChangeReport { change, state: ChangeState::Refused(reason) });
            return;
        }
        cx.rule(rule::CHANGE);
        let me = self.fixed.setup.id;
        let target = Voters::clone(&self.membership.voters);
        self.membership.changing =
            Some(Changing { change, target, committing: false, holders: BTreeSet::from([me]), tries: 0 });
        self.membership.report = Some(ChangeReport { change, state: ChangeState::Running });
        self.send_change(cx);
        self.progress(cx);
    }

    /// Why this member may not start `change` now, if it may not.
    fn may_change(&self, change: VoterChange) -> Result<(), &'static str> {
        let voters = &self.membership.voters;
        if self.grant.is_none() || self.away != Away::Present {
            return Err("only the leader changes the voters: ask it (GET /leader names it)");
        }
        if self.membership.changing.is_some() {
            return Err("a change of the voters is in progress: one member at a time");
        }
        match change {
            VoterChange::Add(id) if self.rank_of(id).is_none() => {
                Err("not in the roster: every member must list it among its peers")
            }
            VoterChange::Add(id) if voters.contains(id) => Err("already a voter"),
            VoterChange::Add(id) if !self.heard.contains_key(&id) => {
                Err("never heard from: start it (as a learner) before adding it")
            }
            VoterChange::Remove(id) if !voters.contains(id) => Err("not a voter"),
            VoterChange::Remove(id) if id == self.fixed.setup.id => {
                Err("the leader cannot remove itself: hand leadership over first (POST /transfer)")
            }
            _ => Ok(()),
        }
    }

    /// Sends the change's configuration to every member that does not hold it yet, and waits a round trip.
    fn send_change(&self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &self.membership.changing else { return };
        for n in &self.fixed.setup.neighbors {
            if !changing.holders.contains(&n.id) {
                cx.send(n.port, self.packet(Body::Config { voters: changing.target.clone() }));
            }
        }
        cx.set_timer(MemberTimer::Change, Span::exactly(self.fixed.ask));
    }

    /// A step of the change has its majority: confirmed, it commits the new configuration; committed, it is done.
    fn progress(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &self.membership.changing else { return };
        let added = match changing.change {
            VoterChange::Add(id) => changing.holders.contains(&id),
            VoterChange::Remove(_) => true,
        };
        // Confirming, the holders must also be a majority of the voters the change makes: a change that would
        // leave no majority that answers (one voter of two removed while the other is down) is given up before it
        // takes effect.
        let new_voters_answer = changing.committing
            || changing.target.with(changing.change, changing.target.id).is_majority(&changing.holders);
        let hasty = self.fixed.bug == Some(Bug::HastyChange);
        if !hasty && (!added || !new_voters_answer || !changing.target.is_majority(&changing.holders)) {
            return;
        }
        if changing.committing {
            let id = changing.target.id;
            return self.end_change(cx, ChangeState::Done(id));
        }
        let next = self.grant.and_then(|grant| changing.target.id.next(grant));
        let Some(id) = next else {
            return self.end_change(cx, ChangeState::Failed("no configuration number is left under this grant"));
        };
        let target = changing.target.with(changing.change, id);
        let me = self.fixed.setup.id;
        let change = changing.change;
        self.membership.voters = Arc::new(target.clone());
        self.membership.newest_heard = self.membership.newest_heard.max(id);
        self.membership.changing =
            Some(Changing { change, target, committing: true, holders: BTreeSet::from([me]), tries: 0 });
        self.persist(cx);
        self.send_change(cx);
        self.progress(cx);
    }

    /// The change is over, as `state` says.
    fn end_change(&mut self, cx: &mut Cx<'_, Self>, state: ChangeState) {
        if let Some(changing) = self.membership.changing.take() {
            cx.cancel_timer(MemberTimer::Change);
            self.membership.report = Some(ChangeReport { change: changing.change, state });
        }
    }

    /// A round trip of the change went by short of a majority: the configuration goes again to those that do not
    /// hold it, up to [`CHANGE_TRIES`] round trips a step.
    pub(super) fn on_change_due(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(changing) = &mut self.membership.changing else { return };
        cx.rule(rule::CHANGE_AGAIN);
        changing.tries += 1;
        if changing.tries >= CHANGE_TRIES {
            self.end_change(cx, ChangeState::Failed("no majority of the voters answered within five round trips"));
        } else {
            self.send_change(cx);
        }
    }

    /// A leader whose grant ended before it could commit gives its change up. Once committing, it goes on counting
    /// the holders of the new configuration, which it already made: a member added may well take leadership over
    /// (Bully's strongest does) before its answer comes.
    pub(super) fn change_needs_a_leader(&mut self, cx: &mut Cx<'_, Self>) {
        if self.grant.is_none() && self.membership.changing.as_ref().is_some_and(|c| !c.committing) {
            self.end_change(cx, ChangeState::Failed("leadership ended before the change was committed"));
        }
    }

    /// The member at `from`, which leads under `lead`, holds `voters`: taken if newer and sent by the leader of the
    /// newest epoch this member knows (or to a leader, by anybody); answered with a `config-ack` when that leader
    /// sent it and this member now holds it, with this member's own configuration when it is older.
    pub(super) fn on_config(&mut self, cx: &mut Cx<'_, Self>, from: Port, lead: Option<Epoch>, voters: Voters) {
        let newest = lead.is_some_and(|lead| lead >= self.seen);
        let mine = self.membership.voters.id;
        self.membership.newest_heard = self.membership.newest_heard.max(voters.id);
        if voters.id < mine {
            cx.send(from, self.packet(Body::Config { voters: Voters::clone(&self.membership.voters) }));
            return;
        }
        let adopted = voters.id > mine && (newest || self.grant.is_some());
        if adopted {
            self.adopt(cx, voters);
        }
        let id = self.membership.voters.id;
        if newest && self.membership.newest_heard <= id {
            cx.send(from, self.packet(Body::ConfigAck { id }));
        }
        // Answered first: a member added starts an election it may win at once.
        if adopted {
            self.place(cx);
        }
    }

    /// The member at `from` holds configuration `id`: one more holder, if it is the one the change waits for.
    pub(super) fn on_config_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: ConfigId) {
        let peer = self.peer(from);
        if let Some(changing) = &mut self.membership.changing
            && changing.target.id == id
        {
            changing.holders.insert(peer);
            self.progress(cx);
        }
    }

    /// A packet from the member at `from` said it holds configuration `theirs`: noted; if it is older than this
    /// member's and either end leads the newest epoch this member knows (`newest`: the sender does), the sender is
    /// sent this member's configuration. Whether it was.
    pub(super) fn compare_configs(&mut self, cx: &mut Cx<'_, Self>, from: Port, theirs: ConfigId, newest: bool) {
        self.membership.newest_heard = self.membership.newest_heard.max(theirs);
        if theirs < self.membership.voters.id && (newest || self.grant.is_some()) {
            cx.send(from, self.packet(Body::Config { voters: Voters::clone(&self.membership.voters) }));
        }
    }

    /// Takes `voters`, newer than the configuration it held: durable at once; a leader changing the voters gives
    /// its change up. (Then [`Member::place`].)
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, voters: Voters) {
        self.membership.voters = Arc::new(voters);
        self.end_change(cx, ChangeState::Failed("a newer configuration of the voters was found: ask again"));
        self.persist(cx);
    }

    /// Sits out while this member does not vote, and takes part again once it does.
    pub(super) fn place(&mut self, cx: &mut Cx<'_, Self>) {
        match (self.votes(), self.away) {
            (false, Away::Present | Away::Resigned | Away::Waiting | Away::Aside { .. }) => self.step_out(cx),
            (true, Away::Outside) => self.rejoin(cx),
            _ => {}
        }
    }
}
