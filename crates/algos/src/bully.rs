#![doc = include_str!("../../../docs/reference/algorithms/bully.md")]

use std::collections::BTreeSet;
use std::str::FromStr;

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Invalid, Neighbor, NodeId, Notice, Peers, Port, Process, Property, Rank,
    Roster, Setup, Span, Status, Validate, View, When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::election_checks;
use crate::params::{ParamError, ParamInfo, Params};

const VARIANT: ParamInfo = ParamInfo {
    name: "variant",
    values: "s001|s000",
    default: "s001",
    help: "s000: the strongest id answers an election by announcing itself instead of with ok",
};

const KNOWN_DEAD: ParamInfo = ParamInfo {
    name: "known-dead",
    values: "comma-separated ids",
    default: "",
    help: "ids every process knows to be down: they get no election, and a process whose stronger ids are all \
           known dead announces itself at once (S001's best case)",
};

/// Whose reply rule the stronger processes follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Every stronger live process answers `ok` and starts its own election (S001, S003).
    #[default]
    S001,
    /// The strongest id answers by announcing itself coordinator, without `ok` (S000).
    S000,
}

/// A `variant=` that names no variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant '{0}'")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, UnknownVariant> {
        match s {
            "s001" => Ok(Self::S001),
            "s000" => Ok(Self::S000),
            _ => Err(UnknownVariant(s.to_owned())),
        }
    }
}

/// The algorithm's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bully {
    /// The reply rule.
    pub variant: Variant,
    /// Ids known to be down.
    pub known_dead: BTreeSet<NodeId>,
}

/// Bully messages. Each carries the sender's election epoch.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// "I am running; are stronger processes alive?"
    Election {
        /// The sender's epoch.
        epoch: Epoch,
    },
    /// "I am alive and stronger; I take over."
    Ok {
        /// The sender's epoch.
        epoch: Epoch,
    },
    /// "I am the coordinator."
    Coordinator {
        /// The epoch the leader was elected in.
        epoch: Epoch,
        /// The new coordinator (the sender).
        leader: Rank,
    },
}

elect_core::message_kinds!(Msg { Election => "election", Ok => "ok", Coordinator => "coordinator" }, describe = Msg::text);

impl Msg {
    /// `election (epoch 1.2)`, `ok (epoch 1.2)`, `coordinator 7 (epoch 1.7)`.
    fn text(&self) -> String {
        match self {
            Self::Election { epoch } => format!("election (epoch {epoch})"),
            Self::Ok { epoch } => format!("ok (epoch {epoch})"),
            Self::Coordinator { epoch, leader } => format!("coordinator {leader} (epoch {epoch})"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const START: &str = "start an election";
const CLAIM: &str = "nobody stronger, announce itself";
const ANSWER: &str = "answer ok and hold own election";
const ANSWER_AGAIN: &str = "answer ok";
const ANNOUNCE_AT_ONCE: &str = "strongest, announce instead of ok";
const ANNOUNCED: &str = "strongest, ignore a later election";
const AWAIT: &str = "ok received, wait for the coordinator";
const EXTRA_OK: &str = "ignore a further ok";
const NO_OK: &str = "no ok in time, announce itself";
const FOLLOW: &str = "follow the coordinator";
const BULLY: &str = "bully a weaker coordinator";
const NO_COORDINATOR: &str = "no coordinator in time, start over";
const STALE: &str = "ignore a message of an older round";
const OLD_DEADLINE: &str = "ignore a deadline that guards nothing";
const NO_HAND_OVER: &str = "ignore a resign (no hand-over)";

/// Every message carries an epoch a process may accept; a coordinator announces itself, a member, under its
/// rank.
impl Validate for Msg {
    fn validate(&self, roster: &Roster<'_>) -> Result<(), Invalid> {
        match *self {
            Self::Election { epoch } | Self::Ok { epoch } => roster.epoch(epoch, "the epoch is beyond the last round"),
            Self::Coordinator { epoch, leader } => {
                roster.epoch(epoch, "the epoch is beyond the last round")?;
                roster.rank(leader, "the leader is not a member")?;
                roster.ensure(leader.id() == roster.from, "the leader is not the sender")
            }
        }
    }
}

/// Bully timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// `2T + ε` after sending `election`: no `ok` means no stronger process is alive.
    OkDeadline,
    /// `4T + ε` after an `ok`: no `coordinator` means the stronger candidate died.
    CoordinatorDeadline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Idle,
    Electing,
    AwaitingCoordinator,
}

/// One process of the Bully algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BullyProcess {
    me: Rank,
    /// Ports of stronger processes neither known dead nor suspected.
    stronger: Vec<Port>,
    /// Ports of stronger processes suspected: told of the election, not waited for.
    suspects: Vec<Port>,
    /// Ports of every weaker process.
    weaker: Vec<Port>,
    /// No id at all is stronger (S000's "process with the highest ID").
    strongest_id: bool,
    ok_wait: Duration,
    coordinator_wait: Duration,
    variant: Variant,
    epoch: Epoch,
    /// Whether this process has run its election in `epoch`.
    participated: bool,
    phase: Phase,
    coordinator: Option<Rank>,
}

impl BullyProcess {
    /// The coordinator this process believes in.
    pub fn coordinator(&self) -> Option<NodeId> {
        self.coordinator.map(Rank::id)
    }

    /// Moves to `epoch` if it is newer. A newer round abandons this process's part in the previous election; a
    /// newer epoch of the same round (another initiator of the same election) keeps it.
    fn adopt(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if epoch > self.epoch {
            let new_round = epoch.round() > self.epoch.round();
            self.epoch = epoch;
            if new_round {
                self.participated = false;
                self.set_phase(cx, Phase::Idle);
            }
            cx.persist(epoch);
        }
    }

    /// Whether `epoch` belongs to an election round older than this process's.
    fn stale(&self, epoch: Epoch) -> bool {
        epoch.round() < self.epoch.round()
    }

    /// Opens a new election round, in an epoch of this process's own, and runs its election in it.
    fn new_epoch(&mut self, cx: &mut Cx<'_, Self>) {
        // Past the last round there is no epoch to open: this process stays where it is (valid epochs leave 2³¹
        // rounds above them; see `elect_core::epoch`).
        let Some(epoch) = self.epoch.next(self.me.id()) else { return };
        self.adopt(cx, epoch);
        self.coordinator = None;
        self.start_election(cx);
    }

    fn start_election(&mut self, cx: &mut Cx<'_, Self>) {
        if self.participated {
            return;
        }
        self.participated = true;
        for i in 0..self.suspects.len() {
            cx.send(self.suspects[i], Msg::Election { epoch: self.epoch });
        }
        if self.stronger.is_empty() {
            return self.become_coordinator(cx);
        }
        for i in 0..self.stronger.len() {
            cx.send(self.stronger[i], Msg::Election { epoch: self.epoch });
        }
        self.set_phase(cx, Phase::Electing);
    }

    fn become_coordinator(&mut self, cx: &mut Cx<'_, Self>) {
        self.coordinator = Some(self.me);
        self.set_phase(cx, Phase::Idle);
        cx.notify(Notice::Elected { epoch: self.epoch });
        for i in 0..self.weaker.len() {
            cx.send(self.weaker[i], Msg::Coordinator { epoch: self.epoch, leader: self.me });
        }
    }

    /// Enters `phase`, arming the timer that guards it and disarming the one that guarded the last.
    fn set_phase(&mut self, cx: &mut Cx<'_, Self>, phase: Phase) {
        match self.phase {
            Phase::Idle => {}
            Phase::Electing => cx.cancel_timer(Timer::OkDeadline),
            Phase::AwaitingCoordinator => cx.cancel_timer(Timer::CoordinatorDeadline),
        }
        match phase {
            Phase::Idle => {}
            Phase::Electing => cx.set_timer(Timer::OkDeadline, Span::exactly(self.ok_wait)),
            Phase::AwaitingCoordinator => {
                cx.set_timer(Timer::CoordinatorDeadline, Span::exactly(self.coordinator_wait))
            }
        }
        self.phase = phase;
    }

    fn on_election(&mut self, cx: &mut Cx<'_, Self>, from: Port, epoch: Epoch) {
        self.adopt(cx, epoch);
        let answers = !(self.variant == Variant::S000 && self.strongest_id);
        cx.rule(match (answers, self.participated) {
            (true, false) => ANSWER,
            (true, true) => ANSWER_AGAIN,
            (false, false) => ANNOUNCE_AT_ONCE,
            (false, true) => ANNOUNCED,
        });
        if answers {
            cx.send(from, Msg::Ok { epoch: self.epoch });
        }
        self.start_election(cx);
    }

    fn on_ok(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch) {
        if self.stale(epoch) {
            return cx.rule(STALE);
        }
        if epoch.round() > self.epoch.round() {
            cx.rule(AWAIT);
            self.adopt(cx, epoch);
            self.participated = true;
            self.coordinator = None;
            self.set_phase(cx, Phase::AwaitingCoordinator);
        } else {
            self.adopt(cx, epoch);
            if self.phase == Phase::Electing {
                cx.rule(AWAIT);
                self.set_phase(cx, Phase::AwaitingCoordinator);
            } else {
                cx.rule(EXTRA_OK);
            }
        }
    }

    fn on_coordinator(&mut self, cx: &mut Cx<'_, Self>, epoch: Epoch, leader: Rank) {
        if self.stale(epoch) {
            return cx.rule(STALE); // An announcement of an older election.
        }
        self.adopt(cx, epoch);
        self.participated = true;
        self.coordinator = Some(leader);
        self.set_phase(cx, Phase::Idle);
        if leader < self.me {
            cx.rule(BULLY);
            self.new_epoch(cx); // A weaker coordinator: bully it.
        } else {
            cx.rule(FOLLOW);
        }
    }
}

impl Process for BullyProcess {
    type Msg = Msg;
    type Timer = Timer;
    /// The epoch.
    type Durable = Epoch;

    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<Epoch>) {
        match restored {
            Some(epoch) => self.epoch = epoch,
            None => cx.persist(self.epoch),
        }
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        match msg {
            Msg::Election { epoch } => self.on_election(cx, from, epoch),
            Msg::Ok { epoch } => self.on_ok(cx, epoch),
            Msg::Coordinator { epoch, leader } => self.on_coordinator(cx, epoch, leader),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: Timer) {
        match (timer, self.phase) {
            (Timer::OkDeadline, Phase::Electing) => {
                cx.rule(NO_OK);
                self.phase = Phase::Idle;
                self.become_coordinator(cx);
            }
            (Timer::CoordinatorDeadline, Phase::AwaitingCoordinator) => {
                cx.rule(NO_COORDINATOR);
                self.phase = Phase::Idle;
                self.new_epoch(cx);
            }
            _ => cx.rule(OLD_DEADLINE), // A deadline that no longer guards anything.
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        match cmd {
            Command::Initiate => {
                cx.rule(if self.stronger.is_empty() { CLAIM } else { START });
                self.new_epoch(cx);
            }
            // The textbook Bully has no hand-over: the strongest live process always wins again.
            Command::Resign | Command::Leave | Command::Transfer { .. } => cx.rule(NO_HAND_OVER),
            // The deployed member changes its voters; the algorithm is not told.
            Command::AddVoter { .. } | Command::RemoveVoter { .. } => {}
        }
    }

    /// `candidate: waiting for an ok from 6, 7`, `waiting for the coordinator`, `coordinator: epoch 1.7`,
    /// `follower: leader 7, epoch 1.7`: the chapter's roles, who a candidate waits for, and the coordinator.
    fn view(&self, peers: &Peers<'_>) -> View {
        match (self.phase, self.coordinator) {
            (Phase::Electing, _) => {
                View::new("candidate").with("waiting for an ok from", peers.list(self.stronger.iter().copied()))
            }
            (Phase::AwaitingCoordinator, _) => View::new("waiting for the coordinator"),
            (Phase::Idle, Some(c)) if c == self.me => View::new("coordinator").with("epoch", self.epoch),
            (Phase::Idle, Some(c)) => View::new("follower").with("leader", c).with("epoch", self.epoch),
            (Phase::Idle, None) => View::new("idle"),
        }
    }

    fn describe_timer(timer: &Timer) -> String {
        match timer {
            Timer::OkDeadline => "waiting for an ok",
            Timer::CoordinatorDeadline => "waiting for the coordinator",
        }
        .to_owned()
    }

    fn status(&self) -> Status {
        match self.phase {
            Phase::Idle => Status::normal(self.coordinator(), self.epoch),
            Phase::Electing | Phase::AwaitingCoordinator => Status::election(self.epoch),
        }
    }
}

static INFO: Info = Info {
    name: "bully",
    aliases: &[],
    title: "Bully (textbook)",
    model: "complete graph, synchronous (delay bound T), crash-recovery, reliable links",
    seed: "S000, S001, S003",
    needs: Needs::Complete,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[VARIANT, KNOWN_DEAD],
    rules: &[
        START,
        CLAIM,
        ANSWER,
        ANSWER_AGAIN,
        ANNOUNCE_AT_ONCE,
        ANNOUNCED,
        AWAIT,
        EXTRA_OK,
        NO_OK,
        FOLLOW,
        BULLY,
        NO_COORDINATOR,
        STALE,
        OLD_DEADLINE,
        NO_HAND_OVER,
    ],
    showcase: Showcase {
        initiators: Initiators::Weakest,
        crash_strongest: true,
        describe: "the strongest crashed, the weakest detects it",
    },
};

impl Algorithm for Bully {
    type Process = BullyProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self { variant: params.value(&VARIANT)?, known_dead: params.ids(&KNOWN_DEAD)?.into_iter().collect() })
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        match self.known_dead.iter().find(|id| !ids.contains(id)) {
            Some(id) => Err(ParamError::Invalid {
                key: KNOWN_DEAD.name,
                value: self.known_dead.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
                reason: format!("{id} is not a node"),
            }),
            None => Ok(()),
        }
    }

    fn build(&self, setup: &Setup<'_>) -> BullyProcess {
        let t = setup.delay_bound.expect("bully needs a delay bound; drivers check Timing::Synchronous");
        let stronger = setup.neighbors.iter().filter(|n| n.rank > setup.rank);
        let strongest_id = stronger.clone().next().is_none();
        // Known dead: sent nothing. Suspected: sent `election`, not waited for.
        let (suspects, stronger): (Vec<&Neighbor>, Vec<&Neighbor>) =
            stronger.filter(|n| !self.known_dead.contains(&n.id)).partition(|n| setup.suspected.contains(&n.id));
        let ports = |ns: Vec<&Neighbor>| ns.into_iter().map(|n| n.port).collect();
        BullyProcess {
            me: setup.rank,
            strongest_id,
            stronger: ports(stronger),
            suspects: ports(suspects),
            weaker: setup.neighbors.iter().filter(|n| n.rank < setup.rank).map(|n| n.port).collect(),
            ok_wait: t * 2 + Duration::TICK,
            coordinator_wait: t * 4 + Duration::TICK,
            variant: self.variant,
            epoch: Epoch::ZERO,
            participated: false,
            phase: Phase::Idle,
            coordinator: None,
        }
    }

    fn checks(&self) -> Vec<Check> {
        let mut checks = election_checks(When::AtEnd, true);
        checks.push(Check::at_end(Property::A2));
        checks
    }

    fn election_time(&self, _: &Facts, t: Duration) -> Duration {
        // One election: 4T + ε from the weakest initiator; one more T of slack for concurrent starts.
        t * 5 + Duration::TICK
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        if f.crashes_during_run > 0 {
            return Vec::new(); // Each crash can start another election: no closed form for the run.
        }
        let n = f.nodes;
        let (name, value) = match self.variant {
            Variant::S001 => ("one election: at most N^2-1", n * n - 1),
            Variant::S000 => ("one election: at most N(N-1)", n * (n - 1)),
        };
        vec![Bound { name: name.into(), measure: Measure::Messages, value }]
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Event, Message, Ranking};

    use super::*;
    use crate::testing::on_complete_graph;

    #[test]
    fn it_describes_itself_in_its_own_words() {
        // Process 5 of 1 to 7: its ports lead to the others in id order, so 6 is at port 4 and 7 at port 5.
        let members: Vec<NodeId> = (1..=7).map(NodeId).collect();
        let mut p = on_complete_graph(NodeId(5), &members, Duration::from_ticks(10), |s| Bully::default().build(s));
        let ranking = Ranking::default();
        let neighbors: Vec<Neighbor> = (1..=7)
            .filter(|&i| i != 5)
            .enumerate()
            .map(|(port, i)| Neighbor { port: Port(port as u32), id: NodeId(i), rank: ranking.rank(NodeId(i)) })
            .collect();
        let peers = Peers(&neighbors);
        let step = crate::testing::step_in_words;

        step(&mut p, Event::Start { restored: None });
        assert_eq!(p.view(&peers).to_string(), "idle");
        let (rule, sent) = step(&mut p, Event::Command(Command::Initiate));
        assert_eq!(rule, Some(START));
        assert_eq!(sent, ["election (epoch 1.5)", "election (epoch 1.5)"]);
        assert_eq!(p.view(&peers).to_string(), "candidate: waiting for an ok from 6, 7");

        let epoch = Epoch::of(1, NodeId(5));
        let (rule, _) = step(&mut p, Event::Message { from: Port(5), msg: Msg::Ok { epoch } });
        assert_eq!(rule, Some(AWAIT));
        assert_eq!(p.view(&peers).to_string(), "waiting for the coordinator");

        let coordinator = Msg::Coordinator { epoch, leader: ranking.rank(NodeId(7)) };
        assert_eq!(coordinator.describe(), "coordinator 7 (epoch 1.5)");
        let (rule, _) = step(&mut p, Event::Message { from: Port(5), msg: coordinator });
        assert_eq!(rule, Some(FOLLOW));
        assert_eq!(p.view(&peers).to_string(), "follower: leader 7, epoch 1.5");

        // A weaker process's election of the same round: 5 has held its own already.
        let (rule, sent) = step(&mut p, Event::Message { from: Port(1), msg: Msg::Election { epoch } });
        assert_eq!((rule, sent), (Some(ANSWER_AGAIN), vec!["ok (epoch 1.5)".to_owned()]));
        assert_eq!(step(&mut p, Event::Timer(Timer::OkDeadline)).0, Some(OLD_DEADLINE));
        assert_eq!(BullyProcess::describe_timer(&Timer::CoordinatorDeadline), "waiting for the coordinator");
    }
}
