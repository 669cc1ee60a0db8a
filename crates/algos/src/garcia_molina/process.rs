//! One process of Garcia-Molina's Bully algorithm: its state (`S(i)` of the paper) and its rules, Election,
//! Check, Timeout and Recovery, with the RPCs that carry them.

use elect_core::{
    Command, Cx, Duration, Epoch, NodeId, Notice, Peers, Port, Process, Rank, Setup, Span, State, Status, View,
};

use super::config::GarciaMolina;
use super::messages::*;

/// `S(i).s` of a running process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mode {
    Election,
    Reorganization,
    Normal,
}

/// What the process itself is doing: at most one batch of calls is outstanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Doing {
    Idle,
    /// Election's first phase: `are-you-there` to the stronger processes.
    Probing,
    /// Backed off after a stronger process answered.
    Waiting,
    /// `halt` to the weaker processes, in `ballot`.
    Halting {
        ballot: Epoch,
    },
    /// `new-coordinator` to `Up`.
    Appointing,
    /// `ready` to `Up`.
    Releasing,
    /// The coordinator's `are-you-normal` round.
    Checking,
    /// Timeout's `are-you-there` to the coordinator.
    Pinging,
}

/// A set of ports, as bits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PortSet {
    words: Vec<u64>,
    len: u32,
}

impl PortSet {
    fn new(ports: usize) -> Self {
        Self { words: vec![0; ports.div_ceil(64)], len: 0 }
    }

    fn contains(&self, p: Port) -> bool {
        self.words[p.index() / 64] & (1 << (p.index() % 64)) != 0
    }

    fn insert(&mut self, p: Port) {
        if !self.contains(p) {
            self.words[p.index() / 64] |= 1 << (p.index() % 64);
            self.len += 1;
        }
    }

    fn remove(&mut self, p: Port) -> bool {
        let present = self.contains(p);
        if present {
            self.words[p.index() / 64] &= !(1 << (p.index() % 64));
            self.len -= 1;
        }
        present
    }

    fn clear(&mut self) {
        if self.len > 0 {
            self.words.fill(0);
            self.len = 0;
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One process of Garcia-Molina's Bully algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GarciaMolinaProcess {
    me: Rank,
    /// The rank at the other end of each port.
    peers: Vec<Rank>,
    /// The processes it was built suspecting ([`Setup::suspected`]): Election asks them but does not wait for them.
    suspected: PortSet,
    rpc: Duration,
    wait: Duration,
    check: Duration,
    timeout: Duration,
    ready: bool,
    /// How many times an unanswered call to `Up` is sent again.
    retries: u32,
    /// How many times the current batch's unanswered calls have been sent again.
    resent: u32,
    /// `rejoin=appoint`.
    rejoin: bool,
    /// Run inside the leader monitor, which watches the coordinator of a NORMAL member.
    monitored: bool,
    /// `S(i).s`.
    mode: Mode,
    /// `S(i).c`, and the epoch it was appointed in.
    coordinator: Option<(Rank, Epoch)>,
    /// `S(i).h` while halted, and the ballot of the halt it obeyed.
    halted_by: Option<(Rank, Epoch)>,
    /// The newest epoch seen (on stable storage).
    epoch: Epoch,
    doing: Doing,
    /// The number of the current batch of calls.
    call: u32,
    /// Callees whose answer the current batch still waits for.
    pending: PortSet,
    /// `S(i).Up`: the weaker processes that obeyed this candidate's halt.
    up: PortSet,
    /// The call number of this candidate's halts, which a `halt-ack` that comes after the halt round (from a slow
    /// process, not a crashed one) still answers: see [`Self::appoint_late`].
    halts: Option<u32>,
    /// Processes that obeyed this candidate's halt too late for `Up` and accepted it as their coordinator while it
    /// was still appointing `Up`: they get their `ready` when `Up` gets its own.
    late: PortSet,
}

impl GarciaMolinaProcess {
    /// The process `config` builds from `setup`.
    pub(super) fn new(config: &GarciaMolina, setup: &Setup<'_>) -> Self {
        let t = setup.delay_bound.expect("garcia-molina needs a delay bound; drivers check Timing::Synchronous");
        let ports = setup.neighbors.len();
        Self {
            me: setup.rank,
            peers: setup.neighbors.iter().map(|n| n.rank).collect(),
            suspected: {
                let mut set = PortSet::new(ports);
                setup.neighbors.iter().filter(|n| setup.suspected.contains(&n.id)).for_each(|n| set.insert(n.port));
                set
            },
            rpc: GarciaMolina::rpc(t),
            wait: GarciaMolina::wait(t),
            check: t * config.check,
            timeout: t * config.timeout,
            ready: config.ready,
            retries: config.retries,
            resent: 0,
            rejoin: config.rejoin,
            monitored: config.monitored,
            mode: Mode::Election,
            coordinator: None,
            halted_by: None,
            epoch: Epoch::ZERO,
            doing: Doing::Idle,
            call: 0,
            pending: PortSet::new(ports),
            up: PortSet::new(ports),
            halts: None,
            late: PortSet::new(ports),
        }
    }

    /// The coordinator this process believes in (`S(i).c`), whatever its state.
    pub fn coordinator(&self) -> Option<NodeId> {
        self.coordinator.map(|(c, _)| c.id())
    }

    /// The process that halted this one (`S(i).h`), while it is halted.
    pub fn halted_by(&self) -> Option<NodeId> {
        self.halted_by.map(|(h, _)| h.id())
    }

    fn rank(&self, port: Port) -> Rank {
        self.peers[port.index()]
    }

    fn port_of(&self, rank: Rank) -> Option<Port> {
        self.peers.iter().position(|&r| r == rank).map(|p| Port(p as u32))
    }

    fn leads(&self) -> bool {
        self.mode != Mode::Election && self.coordinator.is_some_and(|(c, _)| c == self.me)
    }

    /// Moves to `epoch` if it is newer, on stable storage before anything this step sends.
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if epoch > self.epoch {
            self.epoch = epoch;
            cx.persist(epoch);
        }
    }

    /// (Re)arms Timeout: nothing heard from the coordinator for `timeout·T`.
    fn watch(&mut self, cx: &mut Cx<'_, Self>) {
        cx.set_timer(Timer::Timeout, Span::exactly(self.timeout));
    }

    /// Stops whatever this process was doing itself; answers to its calls are ignored from now on.
    fn abandon(&mut self, cx: &mut Cx<'_, Self>) {
        match self.doing {
            Doing::Idle => {}
            Doing::Waiting => cx.cancel_timer(Timer::Wait),
            _ => cx.cancel_timer(Timer::Rpc),
        }
        self.doing = Doing::Idle;
        self.pending.clear();
    }

    /// Starts a batch of calls; each `ask` adds a callee.
    fn begin(&mut self, cx: &mut Cx<'_, Self>, doing: Doing) {
        self.abandon(cx);
        self.call = self.call.wrapping_add(1);
        self.doing = doing;
        self.resent = 0;
        cx.set_timer(Timer::Rpc, Span::exactly(self.rpc));
    }

    fn ask(&mut self, cx: &mut Cx<'_, Self>, to: Port, msg: Msg) {
        self.pending.insert(to);
        cx.send(to, msg);
    }

    /// Whether a reply to `call` from `from` is one the current batch `doing` waits for; if so it is counted.
    fn answered(&mut self, from: Port, call: u32, doing: fn(Doing) -> bool) -> bool {
        call == self.call && doing(self.doing) && self.pending.remove(from)
    }

    /// The batch is complete: no answers are pending.
    fn finished(&self) -> bool {
        self.pending.is_empty()
    }

    /// Recovery(): `s := ELECTION, h := ⊥`, Election(i).
    fn recover(&mut self, cx: &mut Cx<'_, Self>) {
        self.mode = Mode::Election;
        self.coordinator = None;
        self.halted_by = None;
        cx.cancel_timer(Timer::Check);
        self.watch(cx);
        self.election(cx);
    }

    /// Election(i), first phase: are stronger processes alive?
    fn election(&mut self, cx: &mut Cx<'_, Self>) {
        self.begin(cx, Doing::Probing);
        for p in 0..self.peers.len() {
            let port = Port(p as u32);
            if self.rank(port) < self.me {
                continue;
            }
            // A suspect is asked, but its answer is not waited for.
            let msg = Msg::AreYouThere { call: self.call };
            if self.suspected.contains(port) { cx.send(port, msg) } else { self.ask(cx, port, msg) }
        }
        if self.finished() {
            self.halt_weaker(cx); // Nobody is stronger.
        }
    }

    /// A stronger process answered: wait for it to halt this one.
    fn back_off(&mut self, cx: &mut Cx<'_, Self>) {
        self.abandon(cx);
        self.doing = Doing::Waiting;
        cx.set_timer(Timer::Wait, Span::exactly(self.wait));
    }

    /// Election(i), second phase: `s := ELECTION, h := i`, and halt every weaker process.
    fn halt_weaker(&mut self, cx: &mut Cx<'_, Self>) {
        // Past the last round there is no ballot to take: this process stays where it is (valid epochs leave 2³¹
        // rounds above them; see `elect_core::epoch`).
        let Some(ballot) = self.epoch.next(self.me.id()) else { return };
        self.adopt(cx, ballot);
        self.mode = Mode::Election;
        self.coordinator = None;
        self.halted_by = Some((self.me, ballot));
        self.up.clear();
        self.late.clear();
        self.begin(cx, Doing::Halting { ballot });
        self.halts = Some(self.call);
        for p in 0..self.peers.len() {
            let port = Port(p as u32);
            if self.rank(port) < self.me {
                self.ask(cx, port, Msg::Halt { call: self.call, epoch: ballot });
            }
        }
        if self.finished() {
            self.appoint(cx); // Nobody is weaker.
        }
    }

    /// `c := i, s := REORGANIZATION`, and `new-coordinator` to `Up`, in a grant newer than anything `Up` has seen.
    fn appoint(&mut self, cx: &mut Cx<'_, Self>) {
        let Doing::Halting { ballot } = self.doing else { return };
        let grant = if self.epoch > ballot { self.epoch.next(self.me.id()) } else { Some(ballot) };
        let Some(grant) = grant else { return self.give_up(cx) };
        self.adopt(cx, grant);
        self.mode = Mode::Reorganization;
        self.coordinator = Some((self.me, grant));
        self.halted_by = None;
        self.begin(cx, Doing::Appointing);
        for p in 0..self.peers.len() {
            let port = Port(p as u32);
            if self.up.contains(port) {
                self.ask(cx, port, Msg::NewCoordinator { call: self.call, epoch: grant });
            }
        }
        if self.finished() {
            self.appointed(cx);
        }
    }

    /// Everybody in `Up` accepted: release them with `ready`, or become NORMAL without it.
    fn appointed(&mut self, cx: &mut Cx<'_, Self>) {
        if !self.ready {
            return self.lead(cx);
        }
        let grant = self.coordinator.map_or(self.epoch, |(_, e)| e);
        self.begin(cx, Doing::Releasing);
        for p in 0..self.peers.len() {
            let port = Port(p as u32);
            if self.up.contains(port) {
                self.ask(cx, port, Msg::Ready { call: self.call, epoch: grant });
            } else if self.late.contains(port)
                && let Some(call) = self.halts
            {
                // Appointed late, outside the batch: its answer is not waited for.
                cx.send(port, Msg::Ready { call, epoch: grant });
            }
        }
        self.late.clear();
        if self.finished() {
            self.lead(cx);
        }
    }

    /// `s := NORMAL` as the coordinator.
    fn lead(&mut self, cx: &mut Cx<'_, Self>) {
        self.abandon(cx);
        self.mode = Mode::Normal;
        let grant = self.coordinator.map_or(self.epoch, |(_, e)| e);
        cx.notify(Notice::Elected { epoch: grant });
        cx.cancel_timer(Timer::Timeout);
        cx.set_timer(Timer::Check, Span::exactly(self.check));
    }

    /// A call of the second phase failed or was refused: give up the claim and run Election again.
    fn give_up(&mut self, cx: &mut Cx<'_, Self>) {
        self.abandon(cx);
        self.recover(cx);
    }

    /// Timeout(): check on the coordinator, or elect if there is none.
    fn suspect(&mut self, cx: &mut Cx<'_, Self>) {
        match (self.mode, self.coordinator) {
            (Mode::Normal | Mode::Reorganization, Some((c, _))) if c == self.me => {} // Coordinating.
            // The leader monitor watches this coordinator, and deposes it only if a majority no longer hears it.
            (Mode::Normal, Some(_)) if self.monitored => {}
            (Mode::Normal | Mode::Reorganization, Some((c, _))) => match self.port_of(c) {
                Some(port) => {
                    self.begin(cx, Doing::Pinging);
                    self.ask(cx, port, Msg::AreYouThere { call: self.call });
                }
                None => self.election(cx),
            },
            _ => self.election(cx),
        }
    }

    /// Check(): is everybody NORMAL?
    fn check_all(&mut self, cx: &mut Cx<'_, Self>) {
        self.begin(cx, Doing::Checking);
        for p in 0..self.peers.len() {
            self.ask(cx, Port(p as u32), Msg::AreYouNormal { call: self.call });
        }
        if self.finished() {
            self.abandon(cx);
        }
    }

    /// A batch's `2T + ε` ran out with answers missing: those callees are crashed.
    fn calls_timed_out(&mut self, cx: &mut Cx<'_, Self>) {
        match self.doing {
            // Under the leader monitor a stronger process it does not suspect is alive but for a lost packet,
            // likelier than not: ask it again before taking its place (the one the monitor suspects is not waited
            // for, so a failover pays nothing for this).
            Doing::Probing if self.monitored && self.resent < self.retries => {
                cx.rule(RESEND);
                self.resend(cx);
            }
            Doing::Probing => {
                cx.rule(HALT_WEAKER);
                self.halt_weaker(cx);
            }
            Doing::Halting { .. } => {
                cx.rule(APPOINT);
                self.appoint(cx);
            }
            Doing::Appointing | Doing::Releasing if self.resent < self.retries => {
                cx.rule(RESEND);
                self.resend(cx);
            }
            Doing::Appointing | Doing::Releasing => {
                cx.rule(GIVE_UP);
                self.give_up(cx);
            }
            Doing::Checking => {
                cx.rule(CHECK_OVER);
                self.abandon(cx);
            }
            Doing::Pinging => {
                cx.rule(SILENT);
                self.abandon(cx);
                self.election(cx);
            }
            Doing::Idle | Doing::Waiting => cx.rule(OLD_TIMER),
        }
    }

    /// Sends the calls to `Up` that got no answer again: their callees obeyed this candidate's halt a moment
    /// before, so a lost message is likelier than a crash.
    fn resend(&mut self, cx: &mut Cx<'_, Self>) {
        let grant = self.coordinator.map_or(self.epoch, |(_, e)| e);
        let call = self.call;
        self.resent += 1;
        cx.set_timer(Timer::Rpc, Span::exactly(self.rpc));
        for p in 0..self.peers.len() {
            let port = Port(p as u32);
            if self.pending.contains(port) {
                let msg = match self.doing {
                    Doing::Probing => Msg::AreYouThere { call },
                    Doing::Appointing => Msg::NewCoordinator { call, epoch: grant },
                    _ => Msg::Ready { call, epoch: grant },
                };
                cx.send(port, msg);
            }
        }
    }

    fn on_halt(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, epoch: Epoch) {
        cx.rule(OBEY);
        self.adopt(cx, epoch);
        self.abandon(cx);
        cx.cancel_timer(Timer::Check);
        self.mode = Mode::Election;
        self.coordinator = None;
        self.halted_by = Some((self.rank(from), epoch));
        self.watch(cx);
        cx.send(from, Msg::HaltAck { call, epoch: self.epoch });
    }

    fn on_new_coordinator(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, epoch: Epoch) {
        let candidate = self.rank(from);
        let accepted =
            self.mode == Mode::Election && self.halted_by.is_some_and(|(h, ballot)| h == candidate && epoch >= ballot);
        // A call sent again, whose first answer was lost: accepted already.
        let again = self.mode != Mode::Election && self.coordinator == Some((candidate, epoch));
        cx.rule(if accepted {
            ACCEPT
        } else if again {
            AGAIN
        } else {
            REFUSE
        });
        if accepted {
            self.adopt(cx, epoch);
            self.abandon(cx);
            self.mode = if self.ready { Mode::Reorganization } else { Mode::Normal };
            self.coordinator = Some((candidate, epoch));
            self.halted_by = None;
            self.watch(cx);
        }
        cx.send(from, Msg::NewCoordinatorAck { call, accepted: accepted || again });
    }

    fn on_ready(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, epoch: Epoch) {
        let appointed = self.coordinator == Some((self.rank(from), epoch));
        let accepted = self.mode == Mode::Reorganization && appointed;
        // A call sent again, whose first answer was lost: accepted already.
        let again = self.mode == Mode::Normal && appointed;
        cx.rule(if accepted {
            BECOME_NORMAL
        } else if again {
            AGAIN
        } else {
            REFUSE
        });
        if accepted {
            self.mode = Mode::Normal;
            self.watch(cx);
        }
        cx.send(from, Msg::ReadyAck { call, accepted: accepted || again });
    }

    fn on_are_you_normal(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32) {
        cx.rule(ANSWER_NORMAL);
        let from_coordinator = self.coordinator.is_some_and(|(c, _)| c == self.rank(from));
        if from_coordinator && self.mode != Mode::Election {
            self.watch(cx);
        }
        cx.send(from, Msg::AreYouNormalReply { call, normal: self.mode == Mode::Normal });
    }

    fn on_are_you_there_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32) {
        if self.answered(from, call, |d| d == Doing::Probing) {
            cx.rule(BACK_OFF);
            self.back_off(cx);
        } else if self.answered(from, call, |d| d == Doing::Pinging) {
            cx.rule(ALIVE);
            self.abandon(cx);
        } else {
            cx.rule(STALE);
        }
    }

    fn on_halt_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, epoch: Epoch) {
        self.adopt(cx, epoch);
        if !self.answered(from, call, |d| matches!(d, Doing::Halting { .. })) {
            if self.halts == Some(call) && !self.up.contains(from) {
                cx.rule(if self.claim().is_some() { LATE_APPOINT } else { STALE });
                self.appoint_late(cx, from, call);
            } else {
                cx.rule(STALE);
            }
            return;
        }
        self.up.insert(from);
        if self.finished() {
            cx.rule(APPOINT);
            self.appoint(cx);
        } else {
            cx.rule(ADD);
        }
    }

    /// The grant this process holds as the coordinator it appointed itself (`c = i`, reorganizing or NORMAL).
    fn claim(&self) -> Option<Epoch> {
        self.coordinator.filter(|&(c, _)| c == self.me && self.mode != Mode::Election).map(|(_, grant)| grant)
    }

    /// The process at `from` obeyed this candidate's halt (call `call`), but its answer came after the halt round
    /// closed: it was slow, not crashed, and waits, halted, for a coordinator. Leaving it out of the group would
    /// leave it halted until its Timeout, or until the coordinator's Check finds it not NORMAL, and both elect
    /// again from scratch; so the coordinator appoints it on its own (`new-coordinator`, then `ready` once `Up`
    /// has been released), outside the batches of `Up`, whose answers alone decide the election.
    fn appoint_late(&self, cx: &mut Cx<'_, Self>, from: Port, call: u32) {
        if let Some(grant) = self.claim() {
            cx.send(from, Msg::NewCoordinator { call, epoch: grant });
        }
    }

    /// A process appointed late (call `call`) accepted this coordinator: it is released with `ready` at once, or,
    /// while `Up` is still being appointed, with `Up`.
    fn appointed_late(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32) {
        let Some(grant) = self.claim() else { return };
        if !self.ready || self.up.contains(from) {
            return;
        }
        if self.doing == Doing::Appointing {
            self.late.insert(from);
        } else {
            cx.send(from, Msg::Ready { call, epoch: grant });
        }
    }

    /// The coordinator's Check found the weaker process at `from` out of the group (it recovered, or what would
    /// have appointed it was lost). With `rejoin=appoint` the coordinator halts it alone and appoints it as it
    /// appoints a slow answer (see [`Self::appoint_late`]); the others stay NORMAL. Returns whether it did.
    fn rejoin(&mut self, cx: &mut Cx<'_, Self>, from: Port) -> bool {
        let (Some(grant), Some(call), true) = (self.claim(), self.halts, self.rejoin) else { return false };
        self.up.remove(from);
        cx.send(from, Msg::Halt { call, epoch: grant });
        true
    }

    fn on_new_coordinator_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, accepted: bool) {
        if !self.answered(from, call, |d| d == Doing::Appointing) {
            if accepted && self.halts == Some(call) {
                let releases = self.claim().is_some() && self.ready && !self.up.contains(from);
                cx.rule(if releases { LATE_ACCEPTED } else { STALE });
                self.appointed_late(cx, from, call);
            } else {
                cx.rule(STALE);
            }
            return;
        }
        if !accepted {
            cx.rule(GIVE_UP);
            self.give_up(cx);
        } else if self.finished() {
            cx.rule(if self.ready { RELEASE } else { LEAD });
            self.appointed(cx);
        } else {
            cx.rule(COUNT);
        }
    }

    fn on_ready_ack(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, accepted: bool) {
        if !self.answered(from, call, |d| d == Doing::Releasing) {
            return cx.rule(STALE);
        }
        if !accepted {
            cx.rule(GIVE_UP);
            self.give_up(cx);
        } else if self.finished() {
            cx.rule(LEAD);
            self.lead(cx);
        } else {
            cx.rule(COUNT);
        }
    }

    fn on_are_you_normal_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, call: u32, normal: bool) {
        if !self.answered(from, call, |d| d == Doing::Checking) {
            return cx.rule(STALE);
        }
        if !normal && self.rank(from) > self.me {
            cx.rule(STRONGER_BACK);
            self.election(cx); // A stronger process is back: it takes over.
        } else if !normal && !self.rejoin(cx, from) {
            cx.rule(OUT_OF_GROUP);
            self.election(cx); // Somebody is out of the group: gather everybody again.
        } else {
            cx.rule(if normal { COUNT } else { REJOIN_ONE });
            if self.finished() {
                self.abandon(cx);
            }
        }
    }
}

impl Process for GarciaMolinaProcess {
    type Msg = Msg;
    type Timer = Timer;
    /// The newest epoch seen.
    type Durable = Epoch;

    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Epoch>) {
        match restored {
            Some(epoch) => self.epoch = epoch,
            None => cx.persist(self.epoch),
        }
        self.watch(cx);
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        match msg {
            Msg::AreYouThere { call } => {
                cx.rule(ANSWER_THERE);
                cx.send(from, Msg::AreYouThereReply { call });
            }
            Msg::AreYouThereReply { call } => self.on_are_you_there_reply(cx, from, call),
            Msg::AreYouNormal { call } => self.on_are_you_normal(cx, from, call),
            Msg::AreYouNormalReply { call, normal } => self.on_are_you_normal_reply(cx, from, call, normal),
            Msg::Halt { call, epoch } => self.on_halt(cx, from, call, epoch),
            Msg::HaltAck { call, epoch } => self.on_halt_ack(cx, from, call, epoch),
            Msg::NewCoordinator { call, epoch } => self.on_new_coordinator(cx, from, call, epoch),
            Msg::NewCoordinatorAck { call, accepted } => self.on_new_coordinator_ack(cx, from, call, accepted),
            Msg::Ready { call, epoch } => self.on_ready(cx, from, call, epoch),
            Msg::ReadyAck { call, accepted } => self.on_ready_ack(cx, from, call, accepted),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Timer) {
        match timer {
            Timer::Rpc => self.calls_timed_out(cx),
            Timer::Wait if self.doing == Doing::Waiting => {
                cx.rule(WAITED);
                self.doing = Doing::Idle;
                self.suspect(cx);
            }
            Timer::Check if self.mode == Mode::Normal && self.leads() => {
                cx.rule(CHECK_ALL);
                cx.set_timer(Timer::Check, Span::exactly(self.check));
                if self.doing == Doing::Idle {
                    self.check_all(cx);
                }
            }
            // Inside the leader monitor a NORMAL member leaves its coordinator to the monitor's watch.
            Timer::Timeout if self.monitored && self.mode == Mode::Normal && self.coordinator.is_some() => {
                cx.rule(MONITORED);
            }
            Timer::Timeout if !self.leads() => {
                cx.rule(TIMEOUT_RUN);
                self.watch(cx);
                if self.doing == Doing::Idle {
                    self.suspect(cx);
                }
            }
            // Busy with its own election, or no longer in the role the timer served.
            Timer::Wait | Timer::Check | Timer::Timeout => cx.rule(OLD_TIMER),
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        match cmd {
            Command::Initiate => {
                cx.rule(RECOVER);
                self.recover(cx);
            }
            // No hand-over: the strongest live process is always elected again.
            Command::Resign | Command::Leave | Command::Transfer { .. } => cx.rule(NO_HAND_OVER),
            // The deployed member changes its voters; the algorithm is not told.
            Command::AddVoter { .. } | Command::RemoveVoter { .. } => {}
        }
    }

    /// `election: halted by 3`, `election: halted by 3, Up 1, waiting for 2`, `normal: coordinator 3`: the state
    /// `S(i).s`, the coordinator `S(i).c`, the halter `S(i).h`, a candidate's `S(i).Up`, and whom it waits for.
    fn view(&self, peers: &Peers<'_>) -> View {
        let role = match self.mode {
            Mode::Election => "election",
            Mode::Reorganization => "reorganization",
            Mode::Normal => "normal",
        };
        let ports =
            |set: &PortSet| peers.list((0..self.peers.len()).map(|p| Port(p as u32)).filter(|&p| set.contains(p)));
        let mut view =
            View::new(role).with_some("coordinator", self.coordinator()).with_some("halted by", self.halted_by());
        let candidate = self.halted_by.is_some_and(|(h, _)| h == self.me) || self.claim().is_some();
        if candidate && !self.up.is_empty() {
            view = view.with("Up", ports(&self.up));
        }
        if !self.pending.is_empty() {
            view = view.with("waiting for", ports(&self.pending));
        }
        view
    }

    fn describe_timer(timer: &Timer) -> String {
        match timer {
            Timer::Rpc => "waiting for answers",
            Timer::Wait => "waiting to be halted",
            Timer::Check => "next check",
            Timer::Timeout => "waiting to hear from the coordinator",
        }
        .to_owned()
    }

    fn status(&self) -> Status {
        let state = match self.mode {
            Mode::Election => return Status::election(self.epoch),
            Mode::Reorganization => State::Reorganization,
            Mode::Normal => State::Normal,
        };
        Status { state, leader: self.coordinator(), epoch: self.epoch, group: None }
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Effect, EffectOf, Instant, NodeId};

    use super::*;
    use crate::algorithm::Algorithm;
    use crate::params::Params;
    use crate::testing::on_complete_graph;

    type Effects = Vec<EffectOf<GarciaMolinaProcess>>;

    /// Process `me` of three (ids 1 to 3; its ports lead to the others in id order), with `T` = 10 ticks.
    fn process(me: u32, config: GarciaMolina) -> GarciaMolinaProcess {
        let members = [NodeId(1), NodeId(2), NodeId(3)];
        on_complete_graph(NodeId(me), &members, Duration::from_ticks(10), |s| config.build(s))
    }

    fn step(
        p: &mut GarciaMolinaProcess,
        f: impl FnOnce(&mut GarciaMolinaProcess, &mut Cx<'_, GarciaMolinaProcess>),
    ) -> Effects {
        let mut effects = Vec::new();
        f(p, &mut Cx::new(Instant::ZERO, &mut effects));
        effects
    }

    fn sent(effects: &Effects) -> Vec<(Port, Msg)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    /// Process 3 (the strongest) elects itself; both others obey its halt. Returns it, appointing them, with the
    /// call number and grant of its `new-coordinator` calls.
    fn appointing(config: GarciaMolina) -> (GarciaMolinaProcess, u32, Epoch) {
        let mut p = process(3, config);
        step(&mut p, |p, cx| p.on_start(cx, None));
        let halts = sent(&step(&mut p, |p, cx| p.on_command(cx, Command::Initiate)));
        assert_eq!(halts.len(), 2, "nobody is stronger: halts to both: {halts:?}");
        let mut out = Vec::new();
        for (port, msg) in halts {
            let Msg::Halt { call, epoch } = msg else { panic!("{msg:?}") };
            out = sent(&step(&mut p, |p, cx| p.on_message(cx, port, Msg::HaltAck { call, epoch })));
        }
        let [(_, Msg::NewCoordinator { call, epoch }), _] = out.as_slice() else { panic!("{out:?}") };
        (p, *call, *epoch)
    }

    #[test]
    fn an_unanswered_appointment_is_sent_again_to_the_silent_callee_only_then_given_up() {
        let (mut p, call, grant) = appointing(GarciaMolina::default());
        step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::NewCoordinatorAck { call, accepted: true }));
        for _ in 0..2 {
            let again = sent(&step(&mut p, |p, cx| p.on_timer(cx, Timer::Rpc)));
            assert_eq!(again, vec![(Port(1), Msg::NewCoordinator { call, epoch: grant })]);
            assert_eq!(p.status().state, State::Reorganization, "still appointing");
        }
        let gave_up = sent(&step(&mut p, |p, cx| p.on_timer(cx, Timer::Rpc)));
        assert_eq!(p.status().state, State::Election, "two retries, then the claim is given up");
        assert!(gave_up.iter().all(|(_, m)| matches!(m, Msg::AreYouThere { .. } | Msg::Halt { .. })), "{gave_up:?}");
    }

    #[test]
    fn a_late_answer_to_a_resent_call_completes_the_phase() {
        let (mut p, call, grant) = appointing(GarciaMolina::default());
        step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::NewCoordinatorAck { call, accepted: true }));
        step(&mut p, |p, cx| p.on_timer(cx, Timer::Rpc));
        let ready =
            sent(&step(&mut p, |p, cx| p.on_message(cx, Port(1), Msg::NewCoordinatorAck { call, accepted: true })));
        let [(Port(0), Msg::Ready { call: c, epoch }), (Port(1), Msg::Ready { .. })] = ready.as_slice() else {
            panic!("{ready:?}")
        };
        assert_eq!((*c, *epoch), (call + 1, grant));
    }

    #[test]
    fn without_retries_an_unanswered_appointment_gives_up_at_once() {
        let (mut p, call, _) = appointing(GarciaMolina { retries: 0, ..GarciaMolina::default() });
        step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::NewCoordinatorAck { call, accepted: true }));
        step(&mut p, |p, cx| p.on_timer(cx, Timer::Rpc));
        assert_eq!(p.status().state, State::Election);
    }

    #[test]
    fn a_call_sent_again_after_its_answer_was_lost_is_accepted_again() {
        let mut p = process(1, GarciaMolina::default());
        step(&mut p, |p, cx| p.on_start(cx, None));
        let coordinator = Port(1); // Process 3.
        let grant = Epoch::of(1, NodeId(3));
        step(&mut p, |p, cx| p.on_message(cx, coordinator, Msg::Halt { call: 7, epoch: grant }));
        for _ in 0..2 {
            let answer = sent(&step(&mut p, |p, cx| {
                p.on_message(cx, coordinator, Msg::NewCoordinator { call: 8, epoch: grant })
            }));
            assert_eq!(answer, vec![(coordinator, Msg::NewCoordinatorAck { call: 8, accepted: true })]);
            assert_eq!(p.status().state, State::Reorganization);
        }
        for _ in 0..2 {
            let answer =
                sent(&step(&mut p, |p, cx| p.on_message(cx, coordinator, Msg::Ready { call: 9, epoch: grant })));
            assert_eq!(answer, vec![(coordinator, Msg::ReadyAck { call: 9, accepted: true })]);
            assert_eq!(p.status(), Status { state: State::Normal, leader: Some(NodeId(3)), epoch: grant, group: None });
        }
        // Another candidate's call is still refused.
        let other = sent(&step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::Ready { call: 3, epoch: grant })));
        assert_eq!(other, vec![(Port(0), Msg::ReadyAck { call: 3, accepted: false })]);
    }

    /// Process 3, NORMAL coordinator of 1 and 2, runs Check; 1 answers that it is not NORMAL.
    fn check_finds_1_out(config: GarciaMolina) -> (GarciaMolinaProcess, Vec<(Port, Msg)>) {
        let (mut p, call, _) = appointing(config);
        for port in [Port(0), Port(1)] {
            step(&mut p, |p, cx| p.on_message(cx, port, Msg::NewCoordinatorAck { call, accepted: true }));
        }
        for port in [Port(0), Port(1)] {
            step(&mut p, |p, cx| p.on_message(cx, port, Msg::ReadyAck { call: call + 1, accepted: true }));
        }
        assert_eq!(p.status().state, State::Normal);
        let asked = sent(&step(&mut p, |p, cx| p.on_timer(cx, Timer::Check)));
        let Some((_, Msg::AreYouNormal { call })) = asked.first() else { panic!("{asked:?}") };
        let call = *call;
        let out =
            sent(&step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::AreYouNormalReply { call, normal: false })));
        (p, out)
    }

    #[test]
    fn check_halts_and_appoints_a_weaker_process_out_of_the_group_alone() {
        let (mut p, out) = check_finds_1_out(GarciaMolina::default());
        let grant = p.status().epoch;
        let [(Port(0), Msg::Halt { call, epoch })] = out.as_slice() else { panic!("{out:?}") };
        assert_eq!(*epoch, grant, "halted in the grant it is appointed in");
        assert_eq!(p.status().state, State::Normal, "the coordinator stays NORMAL");
        let call = *call;
        let appoint = sent(&step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::HaltAck { call, epoch: grant })));
        assert_eq!(appoint, vec![(Port(0), Msg::NewCoordinator { call, epoch: grant })]);
        let ready =
            sent(&step(&mut p, |p, cx| p.on_message(cx, Port(0), Msg::NewCoordinatorAck { call, accepted: true })));
        assert_eq!(ready, vec![(Port(0), Msg::Ready { call, epoch: grant })]);
        assert_eq!(p.status().state, State::Normal);
    }

    #[test]
    fn with_rejoin_elect_check_runs_election_as_gm_wrote_it() {
        let (p, out) = check_finds_1_out(GarciaMolina { rejoin: false, ..GarciaMolina::default() });
        assert_eq!(p.status().state, State::Election);
        assert_eq!(out.iter().filter(|(_, m)| matches!(m, Msg::Halt { .. })).count(), 2, "halts everybody: {out:?}");
    }

    #[test]
    fn retries_and_rejoin_are_validated() {
        let parse = |kv: &str| GarciaMolina::from_params(&Params::parse([kv]).unwrap());
        assert_eq!(parse("retries=0").unwrap().retries, 0);
        assert!(!parse("rejoin=elect").unwrap().rejoin);
        assert!(parse("retries=9").unwrap_err().to_string().contains("at most 8"));
        assert!(parse("rejoin=maybe").is_err());
    }

    /// The rule `p` names for `event`, and what it sent, as the chapter words it.
    fn handled(
        p: &mut GarciaMolinaProcess,
        event: elect_core::EventOf<GarciaMolinaProcess>,
    ) -> (Option<&'static str>, Vec<String>) {
        let mut effects = Vec::new();
        let rule = elect_core::driver::handle(p, Instant::ZERO, event, &mut effects);
        (rule, sent(&effects).iter().map(|(_, m)| elect_core::Message::describe(m)).collect())
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        use elect_core::{Event, Neighbor, Peers, Ranking};
        let ranking = Ranking::default();
        let neighbors = |me: u32| -> Vec<Neighbor> {
            (1..=3)
                .filter(|&i| i != me)
                .enumerate()
                .map(|(port, i)| Neighbor { port: Port(port as u32), id: NodeId(i), rank: ranking.rank(NodeId(i)) })
                .collect()
        };
        // Process 3, the strongest, elects itself: port 0 leads to 1, port 1 to 2.
        let (n3, mut p) = (neighbors(3), process(3, GarciaMolina::default()));
        let view = |p: &GarciaMolinaProcess| p.view(&Peers(&n3)).to_string();
        handled(&mut p, Event::Start { restored: None });
        assert_eq!(view(&p), "election");
        let (rule, sent) = handled(&mut p, Event::Command(Command::Initiate));
        assert_eq!(rule, Some(RECOVER));
        assert_eq!(sent, ["halt (epoch 1.3, call 2)", "halt (epoch 1.3, call 2)"]);
        assert_eq!(view(&p), "election: halted by 3, waiting for 1, 2");
        let epoch = Epoch::of(1, NodeId(3));
        let ack = |call| Msg::HaltAck { call, epoch };
        assert_eq!(handled(&mut p, Event::Message { from: Port(0), msg: ack(2) }).0, Some(ADD));
        assert_eq!(view(&p), "election: halted by 3, Up 1, waiting for 2");
        let (rule, sent) = handled(&mut p, Event::Message { from: Port(1), msg: ack(2) });
        assert_eq!(rule, Some(APPOINT));
        assert_eq!(sent, ["new-coordinator (epoch 1.3, call 3)", "new-coordinator (epoch 1.3, call 3)"]);
        assert_eq!(view(&p), "reorganization: coordinator 3, Up 1, 2, waiting for 1, 2");
        let stale = Msg::ReadyAck { call: 1, accepted: true };
        assert_eq!(handled(&mut p, Event::Message { from: Port(0), msg: stale }).0, Some(STALE));
        let refused = Msg::NewCoordinatorAck { call: 3, accepted: false };
        assert_eq!(elect_core::Message::describe(&refused), "new-coordinator-ack refused (call 3)");
        assert_eq!(handled(&mut p, Event::Message { from: Port(0), msg: refused }).0, Some(GIVE_UP));

        // Process 1 obeys 3's halt and accepts it: port 1 leads to 3.
        let (n1, mut q) = (neighbors(1), process(1, GarciaMolina::default()));
        handled(&mut q, Event::Start { restored: None });
        let (rule, sent) = handled(&mut q, Event::Message { from: Port(1), msg: Msg::Halt { call: 2, epoch } });
        assert_eq!((rule, sent), (Some(OBEY), vec!["halt-ack (epoch 1.3, call 2)".to_owned()]));
        assert_eq!(q.view(&Peers(&n1)).to_string(), "election: halted by 3");
        let appoint = Msg::NewCoordinator { call: 3, epoch };
        assert_eq!(handled(&mut q, Event::Message { from: Port(1), msg: appoint }).0, Some(ACCEPT));
        assert_eq!(q.view(&Peers(&n1)).to_string(), "reorganization: coordinator 3");
        assert_eq!(GarciaMolinaProcess::describe_timer(&Timer::Wait), "waiting to be halted");
    }

    #[test]
    fn inside_the_monitor_a_silent_stronger_process_is_asked_again_before_its_place_is_taken() {
        for monitored in [false, true] {
            let config = if monitored { GarciaMolina::default().monitored() } else { GarciaMolina::default() };
            let mut p = process(2, config);
            step(&mut p, |p, cx| p.on_start(cx, None));
            step(&mut p, |p, cx| p.on_command(cx, Command::Initiate));
            // 3 (port 1) does not answer the are-you-there within 2T + ε.
            let out = sent(&step(&mut p, |p, cx| p.on_timer(cx, Timer::Rpc)));
            if monitored {
                assert!(matches!(out.as_slice(), [(Port(1), Msg::AreYouThere { .. })]), "{out:?}");
            } else {
                // GM's links are reliable: no answer means a crash, and 2 halts the weaker 1 at once.
                assert!(matches!(out.as_slice(), [(Port(0), Msg::Halt { .. })]), "{out:?}");
            }
        }
    }

    #[test]
    fn a_suspect_is_asked_but_not_waited_for() {
        let members = [NodeId(1), NodeId(2), NodeId(3)];
        let t = Duration::from_ticks(10);
        let suspecting = |s: &Setup<'_>| GarciaMolina::default().build(&Setup { suspected: &[NodeId(3)], ..*s });
        let mut p = on_complete_graph(NodeId(2), &members, t, suspecting);
        step(&mut p, |p, cx| p.on_start(cx, None));
        // Port 0 leads to 1, port 1 to 3: 3 is asked, and 1 halted in the same step.
        let out = sent(&step(&mut p, |p, cx| p.on_command(cx, Command::Initiate)));
        assert!(matches!(out.as_slice(), [(Port(1), Msg::AreYouThere { .. }), (Port(0), Msg::Halt { .. })]), "{out:?}");
        // Unsuspected, 3 is waited for.
        let mut q = process(2, GarciaMolina::default());
        step(&mut q, |p, cx| p.on_start(cx, None));
        let out = sent(&step(&mut q, |p, cx| p.on_command(cx, Command::Initiate)));
        assert!(matches!(out.as_slice(), [(Port(1), Msg::AreYouThere { .. })]), "{out:?}");
    }
}
