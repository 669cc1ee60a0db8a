#![doc = include_str!("../../../docs/reference/algorithms/invitation.md")]

use std::collections::BTreeSet;

use elect_core::{
    Check, Command, Cx, Duration, GroupId, NodeId, Notice, Port, Process, Property, Rank, Setup, Span, State, Status,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Needs, Showcase, Timing};
use crate::params::{ParamError, ParamInfo, Params};

const CHECK: ParamInfo = ParamInfo {
    name: "check",
    values: "a number of T",
    default: "10",
    help: "a coordinator looks for other coordinators every check·T",
};

const TIMEOUT: ParamInfo = ParamInfo {
    name: "timeout",
    values: "a number of T",
    default: "10",
    help: "a member checks that its coordinator still has it every timeout·T",
};

const MERGE: ParamInfo = ParamInfo {
    name: "merge",
    values: "a number of T",
    default: "6",
    help: "a coordinator waits merge·T per stronger coordinator it found before merging",
};

const RETRIES: ParamInfo = ParamInfo {
    name: "retries",
    values: "a number (0 to 8)",
    default: "4",
    help: "on a lossy network, an exchange whose answer does not come within 2T+ε is tried again this many times \
           before it counts as failed: a member's are-you-there, its accept (the coordinator answers a late accept \
           with ready), and the coordinator's ready to members that did not ack; 0 is the algorithm as published",
};

/// The algorithm's configuration: its periods, in multiples of the delay bound `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invitation {
    /// Coordinators look for others every `check·T`.
    pub check: u64,
    /// Members check on their coordinator every `timeout·T`.
    pub timeout: u64,
    /// The merge delay per stronger coordinator, in `T`.
    pub merge: u64,
    /// How many times an exchange that got no answer is tried again before it counts as failed.
    pub retries: u32,
}

impl Default for Invitation {
    fn default() -> Self {
        Self { check: 10, timeout: 10, merge: 6, retries: 4 }
    }
}

/// Invitation messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// "Are you a coordinator?" (one round of a check).
    AreYouCoordinator {
        /// The check round, to match the replies.
        round: u32,
    },
    /// The answer.
    AreYouCoordinatorReply {
        /// The check round.
        round: u32,
        /// NORMAL and coordinator.
        yes: bool,
    },
    /// "Am I still a member of your group `group`?"
    AreYouThere {
        /// The asker's group.
        group: GroupId,
    },
    /// The answer.
    AreYouThereReply {
        /// The group asked about.
        group: GroupId,
        /// The receiver coordinates it and the asker is a member.
        yes: bool,
    },
    /// "Join group `group`, coordinated by `coordinator`."
    Invitation {
        /// The inviting coordinator.
        coordinator: Rank,
        /// The new group.
        group: GroupId,
    },
    /// To the inviting coordinator: the sender joins.
    Accept {
        /// The group joined.
        group: GroupId,
    },
    /// From the coordinator: the group is formed.
    Ready {
        /// The group.
        group: GroupId,
    },
    /// To the coordinator: `ready` arrived.
    Ack {
        /// The group.
        group: GroupId,
    },
}

elect_core::message_kinds!(Msg {
    AreYouCoordinator => "are-you-coordinator",
    AreYouCoordinatorReply => "are-you-coordinator-reply",
    AreYouThere => "are-you-there",
    AreYouThereReply => "are-you-there-reply",
    Invitation => "invitation",
    Accept => "accept",
    Ready => "ready",
    Ack => "ack",
});

/// Every group was created by a member, and an invitation names a member as the coordinator.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match *self {
            Self::Invitation { coordinator, group } => {
                roster.rank(coordinator, "the coordinator is not a member")?;
                roster.member(group.creator, "the group's creator is not a member")
            }
            Self::AreYouThere { group }
            | Self::AreYouThereReply { group, .. }
            | Self::Accept { group }
            | Self::Ready { group }
            | Self::Ack { group } => roster.member(group.creator, "the group's creator is not a member"),
            Self::AreYouCoordinator { .. } | Self::AreYouCoordinatorReply { .. } => Ok(()),
        }
    }
}

/// Invitation timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// Periodic: a coordinator looks for other coordinators.
    Check,
    /// The answers of a check are in.
    CheckReplies,
    /// The merge delay is over.
    Merge,
    /// Periodic: a member checks on its coordinator.
    Timeout,
    /// The coordinator did not answer `are-you-there` in time.
    TimeoutReply,
    /// The accepts of an invitation are in.
    AcceptWait,
    /// `ready` did not come in time.
    ReadyWait,
    /// The acks of `ready` are in.
    AckWait,
}

/// One process of the Invitation algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InvitationProcess {
    me: Rank,
    /// Every other process.
    peers: Vec<(Port, Rank)>,
    t: Duration,
    config: Invitation,
    state: State,
    coordinator: Rank,
    group: GroupId,
    /// On stable storage.
    counter: u32,
    /// The members of this coordinator's group (ports).
    up: BTreeSet<Port>,
    /// Coordinators found by the current check.
    others: BTreeSet<Port>,
    round: u32,
    acked: BTreeSet<Port>,
    awaiting_coordinator: bool,
    /// How many times the current exchange (are-you-there, accept, or ready) has been tried again.
    tried: u32,
}

fn epoch_of(group: GroupId) -> u64 {
    (u64::from(group.counter) << 32) | u64::from(group.creator.0)
}

impl InvitationProcess {
    fn rpc_wait(&self) -> Span {
        Span::exactly(self.t * 2 + Duration::TICK)
    }

    fn port_of(&self, rank: Rank) -> Option<Port> {
        self.peers.iter().find(|&&(_, r)| r == rank).map(|&(p, _)| p)
    }

    fn rank_of(&self, port: Port) -> Rank {
        self.peers.iter().find(|&&(p, _)| p == port).map_or(self.me, |&(_, r)| r)
    }

    fn coordinates(&self) -> bool {
        self.state == State::Normal && self.coordinator == self.me
    }

    /// Opens a new group: the counter goes up on stable storage.
    fn new_group(&mut self, cx: &mut Cx<'_, Self>) -> GroupId {
        self.counter = self.counter.saturating_add(1);
        cx.persist(self.counter);
        self.group = GroupId { counter: self.counter, creator: self.me.id() };
        self.group
    }

    /// Recovery(): a singleton group under itself, without messages.
    fn recover(&mut self, cx: &mut Cx<'_, Self>) {
        self.new_group(cx);
        self.coordinator = self.me;
        self.up.clear();
        self.others.clear();
        self.awaiting_coordinator = false;
        self.state = State::Normal;
        for timer in [Timer::CheckReplies, Timer::Merge, Timer::TimeoutReply, Timer::AcceptWait, Timer::ReadyWait] {
            cx.cancel_timer(timer);
        }
        cx.notify(Notice::Elected { epoch: epoch_of(self.group) });
    }

    fn on_check(&mut self, cx: &mut Cx<'_, Self>) {
        cx.set_timer(Timer::Check, Span::exactly(self.t * self.config.check));
        if !self.coordinates() {
            return;
        }
        self.round = self.round.saturating_add(1);
        self.others.clear();
        for k in 0..self.peers.len() {
            cx.send(self.peers[k].0, Msg::AreYouCoordinator { round: self.round });
        }
        cx.set_timer(Timer::CheckReplies, self.rpc_wait());
    }

    /// The answers of a check are in: merge after a delay that lets stronger coordinators go first.
    fn on_check_replies(&mut self, cx: &mut Cx<'_, Self>) {
        if self.others.is_empty() || !self.coordinates() {
            return;
        }
        let stronger = self.others.iter().filter(|&&p| self.rank_of(p) > self.me).count() as u64;
        match stronger {
            0 => self.merge(cx),
            k => cx.set_timer(Timer::Merge, Span::exactly(self.t * (self.config.merge * k))),
        }
    }

    /// Merge(Others): a new group under this process, inviting the coordinators found and the old members.
    fn merge(&mut self, cx: &mut Cx<'_, Self>) {
        if !self.coordinates() {
            return; // An invitation got here first.
        }
        self.state = State::Election;
        let group = self.new_group(cx);
        let invited: BTreeSet<Port> = self.others.iter().chain(&self.up).copied().collect();
        self.up.clear();
        self.others.clear();
        for port in invited {
            cx.send(port, Msg::Invitation { coordinator: self.me, group });
        }
        // Invitation, forwarding by an invited coordinator, accept: three hops.
        cx.set_timer(Timer::AcceptWait, Span::exactly(self.t * 4 + Duration::TICK));
    }

    fn on_accept_wait(&mut self, cx: &mut Cx<'_, Self>) {
        if self.state != State::Election || self.coordinator != self.me {
            return;
        }
        self.state = State::Reorganization;
        for &port in &self.up {
            cx.send(port, Msg::Ready { group: self.group });
        }
        self.state = State::Normal;
        self.acked.clear();
        self.tried = 0;
        cx.notify(Notice::Elected { epoch: epoch_of(self.group) });
        cx.set_timer(Timer::AckWait, self.rpc_wait());
    }

    fn on_invitation(&mut self, cx: &mut Cx<'_, Self>, from: Port, coordinator: Rank, group: GroupId) {
        if self.state != State::Normal {
            return; // One election at a time.
        }
        let was_coordinator = self.coordinator == self.me;
        let old = std::mem::take(&mut self.up);
        self.state = State::Election;
        self.coordinator = coordinator;
        self.group = group;
        if was_coordinator {
            for port in old.into_iter().filter(|&p| p != from) {
                cx.send(port, Msg::Invitation { coordinator, group });
            }
        }
        let to = self.port_of(coordinator).unwrap_or(from);
        cx.send(to, Msg::Accept { group });
        self.state = State::Reorganization;
        self.awaiting_coordinator = false;
        for timer in [Timer::CheckReplies, Timer::Merge, Timer::TimeoutReply, Timer::AcceptWait, Timer::AckWait] {
            cx.cancel_timer(timer);
        }
        // The coordinator sends ready 4T + ε after its invitation, which took up to 2T to come (forwarded).
        self.tried = 0;
        cx.set_timer(Timer::ReadyWait, Span::exactly(self.t * 7 + Duration::TICK));
    }

    fn on_timeout(&mut self, cx: &mut Cx<'_, Self>) {
        cx.set_timer(Timer::Timeout, Span::exactly(self.t * self.config.timeout));
        if self.state != State::Normal || self.coordinator == self.me || self.awaiting_coordinator {
            return; // Not a member, or still asking (its tries take longer than a period when `retries` is high).
        }
        self.awaiting_coordinator = true;
        self.tried = 0;
        self.ask_coordinator(cx);
    }

    /// `are-you-there` to the coordinator, answered within `2T + ε` or tried again.
    fn ask_coordinator(&mut self, cx: &mut Cx<'_, Self>) {
        let Some(port) = self.port_of(self.coordinator) else { return self.recover(cx) };
        cx.send(port, Msg::AreYouThere { group: self.group });
        cx.set_timer(Timer::TimeoutReply, self.rpc_wait());
    }

    /// An exchange got no answer in time: whether to try it again (and count the try).
    fn try_again(&mut self) -> bool {
        let again = self.tried < self.config.retries;
        self.tried += u32::from(again);
        again
    }

    /// `ready` did not come: `accept` again (a lost accept, or a lost ready, which the coordinator sends again on a
    /// late accept), or give up the group.
    fn on_ready_wait(&mut self, cx: &mut Cx<'_, Self>) {
        match self.port_of(self.coordinator) {
            Some(port) if self.try_again() => {
                cx.send(port, Msg::Accept { group: self.group });
                cx.set_timer(Timer::ReadyWait, self.rpc_wait());
            }
            _ => self.recover(cx),
        }
    }

    /// The acks are in: `ready` again to members that did not ack, or drop them.
    fn on_ack_wait(&mut self, cx: &mut Cx<'_, Self>) {
        let missing: Vec<Port> = self.up.iter().filter(|p| !self.acked.contains(p)).copied().collect();
        if missing.is_empty() {
            return;
        }
        if self.try_again() {
            for port in missing {
                cx.send(port, Msg::Ready { group: self.group });
            }
            cx.set_timer(Timer::AckWait, self.rpc_wait());
        } else {
            // A member that did not ack is dropped; its own timeout will put it in a group of its own.
            let acked = std::mem::take(&mut self.acked);
            self.up.retain(|p| acked.contains(p));
        }
    }
}

impl Process for InvitationProcess {
    type Msg = Msg;
    type Timer = Timer;
    /// The group counter.
    type Durable = u32;

    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<u32>) {
        self.counter = restored.unwrap_or(0);
        self.recover(cx);
        cx.set_timer(Timer::Check, Span::exactly(self.t * self.config.check));
        cx.set_timer(Timer::Timeout, Span::exactly(self.t * self.config.timeout));
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        match msg {
            Msg::AreYouCoordinator { round } => {
                cx.send(from, Msg::AreYouCoordinatorReply { round, yes: self.coordinates() });
            }
            Msg::AreYouCoordinatorReply { round, yes } => {
                if yes && round == self.round && self.coordinates() {
                    self.others.insert(from);
                }
            }
            Msg::AreYouThere { group } => {
                let yes = self.coordinator == self.me && self.group == group && self.up.contains(&from);
                if !yes && self.config.retries > 0 && self.coordinates() {
                    // A member left behind (its invitation, or its ack, was lost) still takes this process as its
                    // coordinator: invite it into the group as it stands, rather than send it off to a group of its
                    // own that the next check would merge again.
                    cx.send(from, Msg::Invitation { coordinator: self.me, group: self.group });
                } else if !yes && self.config.retries > 0 && self.coordinator == self.me {
                    // Merging: the asker's invitation is on its way (or its next try finds the group formed).
                } else {
                    cx.send(from, Msg::AreYouThereReply { group, yes });
                }
            }
            Msg::AreYouThereReply { group, yes } => {
                if self.awaiting_coordinator && group == self.group {
                    self.awaiting_coordinator = false;
                    cx.cancel_timer(Timer::TimeoutReply);
                    if !yes {
                        self.recover(cx);
                    }
                }
            }
            Msg::Invitation { coordinator, group } => self.on_invitation(cx, from, coordinator, group),
            Msg::Accept { group } => {
                if self.state == State::Election && self.coordinator == self.me && self.group == group {
                    self.up.insert(from);
                } else if self.config.retries > 0 && self.coordinates() && self.group == group {
                    // A late accept (its first was lost, or the ready that answered it): the group is formed.
                    self.up.insert(from);
                    cx.send(from, Msg::Ready { group });
                }
            }
            Msg::Ready { group } => {
                let from_coordinator = self.rank_of(from) == self.coordinator;
                if self.state == State::Reorganization && self.group == group && from_coordinator {
                    self.state = State::Normal;
                    cx.cancel_timer(Timer::ReadyWait);
                    cx.send(from, Msg::Ack { group });
                } else if self.config.retries > 0
                    && self.state == State::Normal
                    && self.group == group
                    && from_coordinator
                {
                    cx.send(from, Msg::Ack { group }); // The first ack was lost.
                }
            }
            Msg::Ack { group } => {
                if self.coordinator == self.me && self.group == group {
                    self.acked.insert(from);
                }
            }
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Timer) {
        match timer {
            Timer::Check => self.on_check(cx),
            Timer::CheckReplies => self.on_check_replies(cx),
            Timer::Merge => self.merge(cx),
            Timer::Timeout => self.on_timeout(cx),
            Timer::TimeoutReply if self.awaiting_coordinator && self.try_again() => self.ask_coordinator(cx),
            Timer::TimeoutReply if self.awaiting_coordinator => self.recover(cx),
            Timer::AcceptWait => self.on_accept_wait(cx),
            Timer::ReadyWait if self.state == State::Reorganization => self.on_ready_wait(cx),
            Timer::AckWait if self.coordinates() => self.on_ack_wait(cx),
            Timer::TimeoutReply | Timer::ReadyWait | Timer::AckWait => {}
        }
    }

    /// `Initiate` (at start-up, or after a recovery) is Recovery(): a singleton group; merges follow from checks.
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            self.recover(cx);
        }
    }

    fn status(&self) -> Status {
        Status {
            state: self.state,
            leader: Some(self.coordinator.id()),
            epoch: epoch_of(self.group),
            group: Some(self.group),
        }
    }
}

static INFO: Info = Info {
    name: "invitation",
    aliases: &["gm-invitation"],
    title: "Invitation (Garcia-Molina, with Stoller's correction)",
    model: "complete graph, asynchronous: lossy links, partitions, non-transitive connectivity; stable storage",
    seed: "S004",
    needs: Needs::Complete,
    timing: Timing::Synchronous,
    elects: Elects::PerGroup,
    lockstep: false,
    params: &[CHECK, TIMEOUT, MERGE, RETRIES],
    rules: &[],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "singletons merge into one group",
    },
};

impl Algorithm for Invitation {
    type Process = InvitationProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        // Periods shorter than 4T do not leave an exchange time to finish; none is longer than
        // `params::MAX_MULTIPLE` T.
        let period = |info: &ParamInfo| {
            params.multiple(info, 0).and_then(|k| match k {
                0..4 => Err(ParamError::Invalid {
                    key: info.name,
                    value: k.to_string(),
                    reason: "periods shorter than 4T do not leave an exchange time to finish".to_owned(),
                }),
                _ => Ok(k),
            })
        };
        let retries: u32 = params.value(&RETRIES)?;
        if retries > 8 {
            let reason = "at most 8 (each one adds 2T + ε before a failed exchange counts as failed)".to_owned();
            return Err(ParamError::Invalid { key: RETRIES.name, value: retries.to_string(), reason });
        }
        Ok(Self { check: period(&CHECK)?, timeout: period(&TIMEOUT)?, merge: params.multiple(&MERGE, 0)?, retries })
    }

    fn build(&self, setup: &Setup<'_>) -> InvitationProcess {
        let t = setup.delay_bound.expect("invitation needs a delay bound; drivers check Timing::Synchronous");
        InvitationProcess {
            me: setup.rank,
            peers: setup.neighbors.iter().map(|n| (n.port, n.rank)).collect(),
            t,
            config: *self,
            state: State::Normal,
            coordinator: setup.rank,
            group: GroupId { counter: 0, creator: setup.id },
            counter: 0,
            up: BTreeSet::new(),
            others: BTreeSet::new(),
            round: 0,
            acked: BTreeSet::new(),
            awaiting_coordinator: false,
            tried: 0,
        }
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::always(Property::A3), Check::at_end(Property::A4), Check::at_end(Property::A4Prime)]
    }

    /// From singletons to one group: a check period, its answers, the merge delays, the invitation round.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        t * (self.check + facts.nodes * self.merge + 8)
    }

    /// `τ = 2·(check + timeout + n·merge + 16 + 6·retries)·T`: a member notices a lost coordinator within a timeout
    /// period and its reply time (`3T` more per retry); coordinators find each other within a check period; the
    /// merge delays and an invitation round follow (a member waits `3T` more per retry of its accept); twice that
    /// covers a merge disturbed by another.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        Some(t * (2 * (self.check + self.timeout + facts.nodes * self.merge + 16 + 6 * u64::from(self.retries))))
    }

    /// Periodic checks make totals grow with the length of the run: no closed form applies.
    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}

impl InvitationProcess {
    /// This process's group.
    pub fn group(&self) -> GroupId {
        self.group
    }

    /// Its coordinator.
    pub fn coordinator(&self) -> NodeId {
        self.coordinator.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_core::epoch;

    #[test]
    fn group_epochs_are_ballots_of_the_creator() {
        let g = GroupId { counter: 3, creator: NodeId(7) };
        assert_eq!((epoch::round(epoch_of(g)), epoch::starter(epoch_of(g))), (3, NodeId(7)));
    }
}
