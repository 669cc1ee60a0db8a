//! One Invitation process: its state, and the rules of the chapter applied to each event.

use std::collections::BTreeSet;

use elect_core::{
    Command, Cx, Duration, Epoch, GroupId, NodeId, Notice, Peers, Port, Process, Rank, Setup, Span, State, Status, View,
};

use super::config::Invitation;
use super::messages::*;

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
    /// A member: its coordinator answered its last exchange (the latest are-you-there, or ready). What it says when
    /// another member's pre-vote asks whether it hears the coordinator.
    hears: bool,
    /// A member holding a pre-vote (its coordinator did not answer): the others that said they do not hear it.
    /// `None` when it holds none.
    poll: Option<BTreeSet<Port>>,
}

/// The epoch a group stands for: its creator's counter as the round, the creator as the starter.
fn epoch_of(group: GroupId) -> Epoch {
    Epoch::of(group.counter, group.creator)
}

impl InvitationProcess {
    /// A process of `config`'s algorithm, set up by `setup`.
    pub(super) fn new(config: Invitation, setup: &Setup<'_>) -> Self {
        let t = setup.delay_bound.expect("invitation needs a delay bound; drivers check Timing::Synchronous");
        Self {
            me: setup.rank,
            peers: setup.neighbors.iter().map(|n| (n.port, n.rank)).collect(),
            t,
            config,
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
            hears: false,
            poll: None,
        }
    }

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
        self.hears = false;
        self.poll = None;
        self.state = State::Normal;
        for timer in [
            Timer::CheckReplies,
            Timer::Merge,
            Timer::TimeoutReply,
            Timer::AcceptWait,
            Timer::ReadyWait,
            Timer::PreVoteWait,
        ] {
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
        self.hears = false;
        self.poll = None;
        for timer in [
            Timer::CheckReplies,
            Timer::Merge,
            Timer::TimeoutReply,
            Timer::AcceptWait,
            Timer::AckWait,
            Timer::PreVoteWait,
        ] {
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

    /// Its coordinator did not answer, even after retries. As published, it forms a group of its own. With the
    /// pre-vote, it first asks the others whether they hear its coordinator: one member that cannot hear a
    /// coordinator the others hear (a bad link, a one-way fault) stays in its group instead of forming groups the
    /// others must merge again and again.
    fn no_answer(&mut self, cx: &mut Cx<'_, Self>) {
        self.hears = false;
        let (coordinator, group) = (self.coordinator, self.group);
        let asked: Vec<Port> = self.peers.iter().filter(|&&(_, r)| r != coordinator).map(|&(p, _)| p).collect();
        if !self.config.pre_vote || asked.is_empty() {
            cx.rule(NO_ANSWER);
            return self.recover(cx);
        }
        cx.rule(ASK_OTHERS);
        self.poll = Some(BTreeSet::new());
        for port in asked {
            cx.send(port, Msg::DoYouHear { group });
        }
        cx.set_timer(Timer::PreVoteWait, self.rpc_wait());
    }

    /// Whether it hears the coordinator of `group`: it is NORMAL in that group, and coordinates it or got an answer
    /// to its last exchange with its coordinator. (A member of another group says no: the coordinator it hears no
    /// longer has the asker, which was left out of a merge.)
    fn hears_coordinator_of(&self, group: GroupId) -> bool {
        self.state == State::Normal && self.group == group && (self.coordinator == self.me || self.hears)
    }

    /// An answer to its pre-vote: one yes keeps it in its group (it asks its coordinator again next period); a no
    /// from everybody asked puts it in a group of its own at once.
    fn on_pre_vote_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, group: GroupId, yes: bool) {
        let coordinator = self.coordinator;
        let asked = self.peers.iter().filter(|&&(_, r)| r != coordinator).count();
        let from_asked = self.rank_of(from) != coordinator;
        let Some(noes) = self.poll.as_mut().filter(|_| group == self.group && from_asked) else {
            return cx.rule(STALE);
        };
        if yes {
            cx.rule(KEPT);
            self.poll = None;
            self.awaiting_coordinator = false;
            cx.cancel_timer(Timer::PreVoteWait);
        } else {
            noes.insert(from);
            if noes.len() < asked {
                return cx.rule(NOT_HEARD);
            }
            cx.rule(NOBODY_HEARS);
            self.recover(cx);
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
                    self.hears = yes;
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
                    self.hears = true;
                    cx.cancel_timer(Timer::ReadyWait);
                    cx.send(from, Msg::Ack { group });
                } else if self.config.retries > 0
                    && self.state == State::Normal
                    && self.group == group
                    && from_coordinator
                {
                    cx.rule(ACK_AGAIN);
                    self.hears = true;
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
            Msg::DoYouHear { group } => {
                cx.rule(ANSWER_HEAR);
                cx.send(from, Msg::DoYouHearReply { group, yes: self.hears_coordinator_of(group) });
            }
            Msg::DoYouHearReply { group, yes } => self.on_pre_vote_reply(cx, from, group, yes),
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
            Timer::TimeoutReply if self.awaiting_coordinator => self.no_answer(cx),
            Timer::PreVoteWait if self.poll.is_some() => {
                cx.rule(NOBODY_HEARS);
                self.recover(cx);
            }
            Timer::AcceptWait => self.on_accept_wait(cx),
            Timer::ReadyWait if self.state == State::Reorganization => self.on_ready_wait(cx),
            Timer::AckWait if self.coordinates() => self.on_ack_wait(cx),
            Timer::TimeoutReply | Timer::ReadyWait | Timer::AckWait | Timer::PreVoteWait => cx.rule(OLD_TIMER),
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
            State::Normal if self.poll.is_some() => "member, asking the others whether they hear its coordinator",
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
            Timer::PreVoteWait => "waiting for the others' answers: do they hear the coordinator",
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
    use crate::algorithm::Algorithm;
    use elect_core::{Event, Ranking};

    #[test]
    fn group_epochs_are_ballots_of_the_creator() {
        let g = GroupId { counter: 3, creator: NodeId(7) };
        assert_eq!((epoch_of(g).round(), epoch_of(g).starter()), (3, NodeId(7)));
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        use elect_core::{Message, Neighbor};
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

    /// Process 2 of 1 to 4 (ports 0, 1, 2 lead to 1, 3, 4), a NORMAL member of group (2, 4) under 4, its
    /// coordinator, with the pre-vote on or off.
    fn member_of_4(pre_vote: bool) -> InvitationProcess {
        let members = [1, 2, 3, 4].map(NodeId);
        let config = Invitation { pre_vote, ..Invitation::default() };
        let mut p = crate::testing::on_complete_graph(NodeId(2), &members, Duration::from_ticks(10), |s| {
            InvitationProcess::new(config, s)
        });
        let step = crate::testing::step_in_words;
        step(&mut p, Event::Start { restored: None });
        let group = GroupId { counter: 2, creator: NodeId(4) };
        let coordinator = Ranking::default().rank(NodeId(4));
        step(&mut p, Event::Message { from: Port(2), msg: Msg::Invitation { coordinator, group } });
        assert_eq!(step(&mut p, Event::Message { from: Port(2), msg: Msg::Ready { group } }).0, Some(JOIN));
        p
    }

    /// Its are-you-there goes unanswered, through every retry: the rule it then applies and what it sends.
    fn unanswered(p: &mut InvitationProcess) -> (Option<&'static str>, Vec<String>) {
        let step = crate::testing::step_in_words;
        assert_eq!(step(p, Event::Timer(Timer::Timeout)).0, Some(ASK));
        for _ in 0..p.config.retries {
            assert_eq!(step(p, Event::Timer(Timer::TimeoutReply)).0, Some(ASK_AGAIN));
        }
        step(p, Event::Timer(Timer::TimeoutReply))
    }

    /// Group (2, 4).
    fn ours() -> GroupId {
        GroupId { counter: 2, creator: NodeId(4) }
    }

    #[test]
    fn a_member_its_coordinator_does_not_answer_stays_in_its_group_while_another_hears_the_coordinator() {
        let mut p = member_of_4(true);
        let step = crate::testing::step_in_words;
        let (rule, sent) = unanswered(&mut p);
        assert_eq!((rule, sent), (Some(ASK_OTHERS), vec!["do-you-hear the coordinator of group (2, 4)".to_owned(); 2]));
        assert_eq!(p.view(&Peers(&[])).role, "member, asking the others whether they hear its coordinator");
        // 1 does not hear 4; 3 does: 2 stays in 4's group, asks nobody else, and forms no group of its own.
        let no = Msg::DoYouHearReply { group: ours(), yes: false };
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: no }), (Some(NOT_HEARD), vec![]));
        let yes = Msg::DoYouHearReply { group: ours(), yes: true };
        assert_eq!(step(&mut p, Event::Message { from: Port(1), msg: yes }), (Some(KEPT), vec![]));
        assert_eq!(
            (p.status().state, p.coordinator(), p.group()),
            (State::Normal, NodeId(4), GroupId { counter: 2, creator: NodeId(4) })
        );
        assert_eq!(step(&mut p, Event::Timer(Timer::PreVoteWait)).0, Some(OLD_TIMER));
        // It asks its coordinator again the next period; meanwhile it does not vouch for it.
        let asked = Msg::DoYouHear { group: ours() };
        let (_, said) = step(&mut p, Event::Message { from: Port(1), msg: asked });
        assert_eq!(said, ["do-you-hear-reply no for group (2, 4)"]);
        assert_eq!(unanswered(&mut p).0, Some(ASK_OTHERS));
    }

    #[test]
    fn a_member_forms_a_group_of_its_own_when_nobody_hears_its_coordinator() {
        let step = crate::testing::step_in_words;
        // Nobody answers in time.
        let mut p = member_of_4(true);
        unanswered(&mut p);
        assert_eq!(step(&mut p, Event::Timer(Timer::PreVoteWait)).0, Some(NOBODY_HEARS));
        assert_eq!((p.coordinator(), p.group()), (NodeId(2), GroupId { counter: 2, creator: NodeId(2) }));
        // Both asked say no: at once. (An answer from the coordinator, which was not asked, counts for nothing.)
        let mut p = member_of_4(true);
        unanswered(&mut p);
        let no = Msg::DoYouHearReply { group: ours(), yes: false };
        assert_eq!(step(&mut p, Event::Message { from: Port(2), msg: no.clone() }).0, Some(STALE));
        assert_eq!(step(&mut p, Event::Message { from: Port(0), msg: no.clone() }).0, Some(NOT_HEARD));
        assert_eq!(step(&mut p, Event::Message { from: Port(1), msg: no }).0, Some(NOBODY_HEARS));
        assert_eq!(p.coordinator(), NodeId(2));
        // As published (`pre-vote=false`), it asks nobody.
        let mut p = member_of_4(false);
        assert_eq!(unanswered(&mut p), (Some(NO_ANSWER), vec![]));
        assert_eq!(p.coordinator(), NodeId(2));
    }

    #[test]
    fn a_process_vouches_for_the_coordinator_of_its_own_group_if_it_is_it_or_got_its_last_answer() {
        let step = crate::testing::step_in_words;
        let ask = |p: &mut InvitationProcess, group: GroupId| {
            let (rule, said) = step(p, Event::Message { from: Port(0), msg: Msg::DoYouHear { group } });
            assert_eq!(rule, Some(ANSWER_HEAR));
            said
        };
        let mut p = member_of_4(true);
        assert_eq!(ask(&mut p, ours()), ["do-you-hear-reply yes for group (2, 4)"], "ready came from 4");
        let older = GroupId { counter: 1, creator: NodeId(4) };
        assert_eq!(ask(&mut p, older), ["do-you-hear-reply no for group (1, 4)"], "not its group");
        step(&mut p, Event::Timer(Timer::Timeout));
        let there = Msg::AreYouThereReply { group: p.group(), yes: true };
        assert_eq!(step(&mut p, Event::Message { from: Port(2), msg: there }).0, Some(STILL));
        assert_eq!(ask(&mut p, ours()), ["do-you-hear-reply yes for group (2, 4)"]);
        // A coordinator vouches for itself.
        let mut q =
            crate::testing::on_complete_graph(NodeId(4), &[1, 2, 3, 4].map(NodeId), Duration::from_ticks(10), |s| {
                InvitationProcess::new(Invitation::default(), s)
            });
        step(&mut q, Event::Start { restored: None });
        let own = q.group();
        assert_eq!(ask(&mut q, own), ["do-you-hear-reply yes for group (1, 4)"]);
    }
}
