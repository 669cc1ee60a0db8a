#![doc = include_str!("../../../docs/reference/algorithms/invitation.md")]

use std::collections::BTreeSet;

use elect_core::{
    Check, Command, Cx, Duration, GroupId, NodeId, Notice, Peers, Port, Process, Property, Rank, Setup, Span, State,
    Status, View,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Needs, Showcase, Timing};
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
}, describe = Msg::text);

impl Msg {
    /// `are-you-coordinator (round 2)`, `invitation to group (4, 6) under 6`, `accept group (4, 6)`.
    fn text(&self) -> String {
        let yes = |yes: bool| if yes { "yes" } else { "no" };
        match *self {
            Self::AreYouCoordinator { round } => format!("are-you-coordinator (round {round})"),
            Self::AreYouCoordinatorReply { round, yes: y } => {
                format!("are-you-coordinator-reply {} (round {round})", yes(y))
            }
            Self::AreYouThere { group } => format!("are-you-there in group {group}"),
            Self::AreYouThereReply { group, yes: y } => format!("are-you-there-reply {} for group {group}", yes(y)),
            Self::Invitation { coordinator, group } => format!("invitation to group {group} under {coordinator}"),
            Self::Accept { group } => format!("accept group {group}"),
            Self::Ready { group } => format!("ready for group {group}"),
            Self::Ack { group } => format!("ack for group {group}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const RECOVER: &str = "form a singleton group";
const LOOK: &str = "look for other coordinators";
const SKIP_CHECK: &str = "not a coordinator, skip the check";
const ANSWER_COORDINATOR: &str = "answer are-you-coordinator";
const NOTE: &str = "note another coordinator";
const NOT_ONE: &str = "ignore a no or a late reply";
const ALONE: &str = "no other coordinator, stay";
const MERGE_DELAY: &str = "wait the merge delay";
const MERGE_NOW: &str = "merge and invite the others";
const SKIP_MERGE: &str = "invited meanwhile, skip the merge";
const FORWARD: &str = "forward the invitation and accept";
const ACCEPT: &str = "accept the invitation";
const BUSY: &str = "busy, ignore an invitation";
const ADD: &str = "add the member";
const SEND_READY: &str = "send ready to who accepted";
const JOIN: &str = "join the group and ack";
const NOTE_ACK: &str = "note an ack";
const ALL_ACKED: &str = "every member acked";
const READY_AGAIN: &str = "ready again to who did not ack";
const DROP: &str = "drop the members that did not ack";
const ASK: &str = "ask the coordinator are-you-there";
const SKIP_TIMEOUT: &str = "nothing to ask, skip the timeout";
const ANSWER_THERE: &str = "answer are-you-there";
const STILL: &str = "the coordinator still has it";
const LEFT_OUT: &str = "left out, form a singleton group";
const NO_ANSWER: &str = "no answer, form a singleton group";
const ASK_AGAIN: &str = "no answer, ask again";
const INVITE_LEFT: &str = "invite a member left behind";
const MERGING_SILENT: &str = "merging, let the invitation answer";
const LATE_ACCEPT: &str = "answer a late accept with ready";
const ACK_AGAIN: &str = "ack a ready again";
const ACCEPT_AGAIN: &str = "no ready, accept again";
const NO_READY: &str = "no ready, form a singleton group";
const STALE: &str = "ignore a stale message";
const OLD_TIMER: &str = "ignore a timer of a past role";
const NO_HAND_OVER: &str = "ignore a resign (no hand-over)";

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
            return cx.rule(SKIP_CHECK);
        }
        cx.rule(LOOK);
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
            return cx.rule(ALONE);
        }
        let stronger = self.others.iter().filter(|&&p| self.rank_of(p) > self.me).count() as u64;
        match stronger {
            0 => self.merge(cx),
            k => {
                cx.rule(MERGE_DELAY);
                cx.set_timer(Timer::Merge, Span::exactly(self.t * (self.config.merge * k)));
            }
        }
    }

    /// Merge(Others): a new group under this process, inviting the coordinators found and the old members.
    fn merge(&mut self, cx: &mut Cx<'_, Self>) {
        if !self.coordinates() {
            return cx.rule(SKIP_MERGE); // An invitation got here first.
        }
        cx.rule(MERGE_NOW);
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
            return cx.rule(OLD_TIMER);
        }
        cx.rule(SEND_READY);
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
            return cx.rule(BUSY); // One election at a time.
        }
        let was_coordinator = self.coordinator == self.me;
        cx.rule(if was_coordinator && self.up.iter().any(|&p| p != from) { FORWARD } else { ACCEPT });
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
            // Not a member, or still asking (its tries take longer than a period when `retries` is high).
            return cx.rule(SKIP_TIMEOUT);
        }
        cx.rule(ASK);
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
                cx.rule(ACCEPT_AGAIN);
                cx.send(port, Msg::Accept { group: self.group });
                cx.set_timer(Timer::ReadyWait, self.rpc_wait());
            }
            _ => {
                cx.rule(NO_READY);
                self.recover(cx);
            }
        }
    }

    /// The acks are in: `ready` again to members that did not ack, or drop them.
    fn on_ack_wait(&mut self, cx: &mut Cx<'_, Self>) {
        let missing: Vec<Port> = self.up.iter().filter(|p| !self.acked.contains(p)).copied().collect();
        if missing.is_empty() {
            return cx.rule(ALL_ACKED);
        }
        if self.try_again() {
            cx.rule(READY_AGAIN);
            for port in missing {
                cx.send(port, Msg::Ready { group: self.group });
            }
            cx.set_timer(Timer::AckWait, self.rpc_wait());
        } else {
            // A member that did not ack is dropped; its own timeout will put it in a group of its own.
            cx.rule(DROP);
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
        cx.rule(RECOVER);
        self.recover(cx);
        cx.set_timer(Timer::Check, Span::exactly(self.t * self.config.check));
        cx.set_timer(Timer::Timeout, Span::exactly(self.t * self.config.timeout));
    }

    // Long: one arm per message, in the order the algorithm's chapter lists them, so that the rules read side by side.
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        match msg {
            Msg::AreYouCoordinator { round } => {
                cx.rule(ANSWER_COORDINATOR);
                cx.send(from, Msg::AreYouCoordinatorReply { round, yes: self.coordinates() });
            }
            Msg::AreYouCoordinatorReply { round, yes } => {
                if yes && round == self.round && self.coordinates() {
                    cx.rule(NOTE);
                    self.others.insert(from);
                } else {
                    cx.rule(NOT_ONE);
                }
            }
            Msg::AreYouThere { group } => {
                let yes = self.coordinator == self.me && self.group == group && self.up.contains(&from);
                if !yes && self.config.retries > 0 && self.coordinates() {
                    // A member left behind (its invitation, or its ack, was lost) still takes this process as its
                    // coordinator: invite it into the group as it stands, rather than send it off to a group of its
                    // own that the next check would merge again.
                    cx.rule(INVITE_LEFT);
                    cx.send(from, Msg::Invitation { coordinator: self.me, group: self.group });
                } else if !yes && self.config.retries > 0 && self.coordinator == self.me {
                    // Merging: the asker's invitation is on its way (or its next try finds the group formed).
                    cx.rule(MERGING_SILENT);
                } else {
                    cx.rule(ANSWER_THERE);
                    cx.send(from, Msg::AreYouThereReply { group, yes });
                }
            }
            Msg::AreYouThereReply { group, yes } => {
                if self.awaiting_coordinator && group == self.group {
                    cx.rule(if yes { STILL } else { LEFT_OUT });
                    self.awaiting_coordinator = false;
                    cx.cancel_timer(Timer::TimeoutReply);
                    if !yes {
                        self.recover(cx);
                    }
                } else {
                    cx.rule(STALE);
                }
            }
            Msg::Invitation { coordinator, group } => self.on_invitation(cx, from, coordinator, group),
            Msg::Accept { group } => {
                if self.state == State::Election && self.coordinator == self.me && self.group == group {
                    cx.rule(ADD);
                    self.up.insert(from);
                } else if self.config.retries > 0 && self.coordinates() && self.group == group {
                    // A late accept (its first was lost, or the ready that answered it): the group is formed.
                    cx.rule(LATE_ACCEPT);
                    self.up.insert(from);
                    cx.send(from, Msg::Ready { group });
                } else {
                    cx.rule(STALE);
                }
            }
            Msg::Ready { group } => {
                let from_coordinator = self.rank_of(from) == self.coordinator;
                if self.state == State::Reorganization && self.group == group && from_coordinator {
                    cx.rule(JOIN);
                    self.state = State::Normal;
                    cx.cancel_timer(Timer::ReadyWait);
                    cx.send(from, Msg::Ack { group });
                } else if self.config.retries > 0
                    && self.state == State::Normal
                    && self.group == group
                    && from_coordinator
                {
                    cx.rule(ACK_AGAIN);
                    cx.send(from, Msg::Ack { group }); // The first ack was lost.
                } else {
                    cx.rule(STALE);
                }
            }
            Msg::Ack { group } => {
                if self.coordinator == self.me && self.group == group {
                    cx.rule(NOTE_ACK);
                    self.acked.insert(from);
                } else {
                    cx.rule(STALE);
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
            Timer::TimeoutReply if self.awaiting_coordinator && self.try_again() => {
                cx.rule(ASK_AGAIN);
                self.ask_coordinator(cx);
            }
            Timer::TimeoutReply if self.awaiting_coordinator => {
                cx.rule(NO_ANSWER);
                self.recover(cx);
            }
            Timer::AcceptWait => self.on_accept_wait(cx),
            Timer::ReadyWait if self.state == State::Reorganization => self.on_ready_wait(cx),
            Timer::AckWait if self.coordinates() => self.on_ack_wait(cx),
            Timer::TimeoutReply | Timer::ReadyWait | Timer::AckWait => cx.rule(OLD_TIMER),
        }
    }

    /// `Initiate` (at start-up, or after a recovery) is Recovery(): a singleton group; merges follow from checks.
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            cx.rule(RECOVER);
            self.recover(cx);
        } else {
            cx.rule(NO_HAND_OVER);
        }
    }

    /// `coordinator: group (2, 6), members 4, 5`, `member: group (2, 6), coordinator 6`: whether it coordinates,
    /// merges or awaits a coordinator, its group, its coordinator, and the members and coordinators it knows.
    fn view(&self, peers: &Peers<'_>) -> View {
        let mine = self.coordinator == self.me;
        let role = match self.state {
            State::Normal if mine => "coordinator",
            State::Election if mine => "merging",
            State::Reorganization => "invited, awaiting ready",
            State::Normal if self.awaiting_coordinator => "member, awaiting its coordinator",
            State::Normal => "member",
            state => state.name(),
        };
        let mut view = View::new(role).with("group", self.group);
        if !mine {
            view = view.with("coordinator", self.coordinator);
        }
        if mine && !self.up.is_empty() {
            view = view.with("members", peers.list(self.up.iter().copied()));
        }
        if self.coordinates() && !self.others.is_empty() {
            view = view.with("coordinators found", peers.list(self.others.iter().copied()));
        }
        view
    }

    fn describe_timer(timer: &Timer) -> String {
        match timer {
            Timer::Check => "next check",
            Timer::CheckReplies => "waiting for are-you-coordinator replies",
            Timer::Merge => "merge delay",
            Timer::Timeout => "next are-you-there",
            Timer::TimeoutReply => "waiting for the coordinator's answer",
            Timer::AcceptWait => "waiting for accepts",
            Timer::ReadyWait => "waiting for ready",
            Timer::AckWait => "waiting for acks",
        }
        .to_owned()
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
    links: LinkOrder::Any,
    elects: Elects::PerGroup,
    lockstep: false,
    params: &[CHECK, TIMEOUT, MERGE, RETRIES],
    rules: &[
        RECOVER,
        LOOK,
        SKIP_CHECK,
        ANSWER_COORDINATOR,
        NOTE,
        NOT_ONE,
        ALONE,
        MERGE_DELAY,
        MERGE_NOW,
        SKIP_MERGE,
        FORWARD,
        ACCEPT,
        BUSY,
        ADD,
        SEND_READY,
        JOIN,
        NOTE_ACK,
        ALL_ACKED,
        READY_AGAIN,
        DROP,
        ASK,
        SKIP_TIMEOUT,
        ANSWER_THERE,
        STILL,
        LEFT_OUT,
        ASK_AGAIN,
        NO_ANSWER,
        INVITE_LEFT,
        MERGING_SILENT,
        LATE_ACCEPT,
        ACK_AGAIN,
        ACCEPT_AGAIN,
        NO_READY,
        STALE,
        OLD_TIMER,
        NO_HAND_OVER,
    ],
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

    #[test]
    fn it_describes_itself_in_its_own_words() {
        use elect_core::{Event, Message, Neighbor, Ranking};
        // Process 2 of 1 to 3: port 0 leads to 1, port 1 to 3.
        let members = [NodeId(1), NodeId(2), NodeId(3)];
        let t = Duration::from_ticks(10);
        let mut p = crate::testing::on_complete_graph(NodeId(2), &members, t, |s| Invitation::default().build(s));
        let ranking = Ranking::default();
        let neighbors = [1, 3].map(NodeId).map(|id| (id, ranking.rank(id)));
        let neighbors: Vec<Neighbor> =
            neighbors.iter().enumerate().map(|(k, &(id, rank))| Neighbor { port: Port(k as u32), id, rank }).collect();
        let view = |p: &InvitationProcess| p.view(&Peers(&neighbors)).to_string();
        let step = crate::testing::step_in_words;

        assert_eq!(step(&mut p, Event::Start { restored: None }).0, Some(RECOVER));
        assert_eq!(view(&p), "coordinator: group (1, 2)");
        let (rule, sent) = step(&mut p, Event::Timer(Timer::Check));
        assert_eq!(rule, Some(LOOK));
        assert_eq!(sent, ["are-you-coordinator (round 1)", "are-you-coordinator (round 1)"]);
        let yes = Msg::AreYouCoordinatorReply { round: 1, yes: true };
        assert_eq!(step(&mut p, Event::Message { from: Port(1), msg: yes }).0, Some(NOTE));
        assert_eq!(view(&p), "coordinator: group (1, 2), coordinators found 3");
        assert_eq!(step(&mut p, Event::Timer(Timer::CheckReplies)).0, Some(MERGE_DELAY));

        // 3 merges first: 2 accepts, waits for ready, and joins.
        let group = GroupId { counter: 2, creator: NodeId(3) };
        let invitation = Msg::Invitation { coordinator: ranking.rank(NodeId(3)), group };
        assert_eq!(invitation.describe(), "invitation to group (2, 3) under 3");
        let (rule, sent) = step(&mut p, Event::Message { from: Port(1), msg: invitation });
        assert_eq!((rule, sent), (Some(ACCEPT), vec!["accept group (2, 3)".to_owned()]));
        assert_eq!(view(&p), "invited, awaiting ready: group (2, 3), coordinator 3");
        let (rule, sent) = step(&mut p, Event::Message { from: Port(1), msg: Msg::Ready { group } });
        assert_eq!((rule, sent), (Some(JOIN), vec!["ack for group (2, 3)".to_owned()]));
        assert_eq!(view(&p), "member: group (2, 3), coordinator 3");
        assert_eq!(step(&mut p, Event::Timer(Timer::Merge)).0, Some(SKIP_MERGE));
        assert_eq!(InvitationProcess::describe_timer(&Timer::ReadyWait), "waiting for ready");
    }
}
