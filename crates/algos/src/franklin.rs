#![doc = include_str!("../../../docs/reference/algorithms/franklin.md")]

use elect_core::{
    Check, Command, Cx, Duration, Notice, Port, Process, Rank, RingPorts, Setup, Status, StatusKey, When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
use crate::params::{ParamError, Params};
use crate::{Learned, election_checks, floor_lg, ring_ports};

/// The algorithm's configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Franklin {
    /// Run the deliberately broken variant that drops buffered next-round probes when becoming a relay.
    pub forget_buffered: bool,
}

const BUG: crate::ParamInfo = crate::ParamInfo {
    name: "bug",
    values: "none|forget-buffered",
    default: "none",
    help: "forget-buffered: a deliberately broken variant that drops buffered next-round probes when it becomes a \
           relay (ids 1,3,2,4 then elect nobody)",
};

/// Franklin messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// An active process's id in a round.
    Probe {
        /// The active process.
        id: Rank,
        /// Its round.
        round: u32,
    },
    /// The winner, announced once around the ring.
    Leader {
        /// The winner.
        id: Rank,
    },
}

elect_core::message_kinds!(Msg { Probe => "probe", Leader => "leader" });

/// Every message names a member by its rank; each round at least halves the active processes, so no round goes
/// past `⌊lg n⌋ + 1`.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        match *self {
            Self::Probe { id, round } => {
                roster.rank(id, "the id is not a member's")?;
                roster.ensure(round <= usize::BITS - roster.nodes().leading_zeros(), "the round is beyond the last one")
            }
            Self::Leader { id } => roster.rank(id, "the id is not a member's"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    Asleep,
    Active,
    Relay,
    Winner,
}

/// The two sides of a process: probes arriving from `prev` travel clockwise, those from `next` counter-clockwise.
const SIDES: usize = 2;

/// One process of Franklin's algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FranklinProcess {
    me: Rank,
    ports: RingPorts,
    role: Role,
    round: u32,
    /// The round-`round` probe received from each side.
    got: [Option<Rank>; SIDES],
    /// A round-`round + 1` probe received early from each side.
    early: [Option<Rank>; SIDES],
    leader: Option<Rank>,
    forget_buffered: bool,
}

impl FranklinProcess {
    fn side(&self, from: Port) -> usize {
        usize::from(from == self.ports.next)
    }

    /// The port a probe that arrived from `side` leaves by.
    fn onward(&self, side: usize) -> Port {
        if side == 0 { self.ports.next } else { self.ports.prev }
    }

    fn send_probes(&mut self, cx: &mut Cx<'_, Self>) {
        for port in [self.ports.next, self.ports.prev] {
            cx.send(port, Msg::Probe { id: self.me, round: self.round });
        }
    }

    #[inline]
    fn on_probe(&mut self, cx: &mut Cx<'_, Self>, side: usize, id: Rank, round: u32) {
        match self.role {
            Role::Asleep | Role::Winner => {}
            Role::Relay => cx.send(self.onward(side), Msg::Probe { id, round }),
            Role::Active if round == self.round => self.got[side] = Some(id),
            Role::Active if Some(round) == self.round.checked_add(1) => self.early[side] = Some(id),
            Role::Active => {} // Impossible on FIFO links.
        }
        while self.role == Role::Active && self.decide(cx) {}
    }

    /// Decides the current round if both probes are in; returns whether a new round started.
    fn decide(&mut self, cx: &mut Cx<'_, Self>) -> bool {
        let [Some(left), Some(right)] = self.got else { return false };
        if left == self.me || right == self.me {
            self.role = Role::Winner;
            self.leader = Some(self.me);
            cx.notify(Notice::Elected { epoch: 0 });
            cx.send(self.ports.next, Msg::Leader { id: self.me });
            return false;
        }
        if self.me > left && self.me > right {
            self.round += 1;
            self.got = std::mem::take(&mut self.early);
            self.send_probes(cx);
            return true;
        }
        self.role = Role::Relay;
        let early = std::mem::take(&mut self.early);
        if !self.forget_buffered {
            for (side, id) in early.into_iter().enumerate() {
                if let Some(id) = id {
                    cx.send(self.onward(side), Msg::Probe { id, round: self.round.saturating_add(1) });
                }
            }
        }
        false
    }

    fn wake(&mut self, cx: &mut Cx<'_, Self>) {
        if self.role == Role::Asleep {
            self.role = Role::Active;
            self.send_probes(cx);
        }
    }
}

impl Process for FranklinProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop: a ring algorithm's every step is a message.
    #[inline]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        self.wake(cx);
        match msg {
            Msg::Probe { id, round } => self.on_probe(cx, self.side(from), id, round),
            Msg::Leader { id } if id == self.me => {} // It has gone round once.
            Msg::Leader { id } => {
                self.leader = Some(id);
                cx.send(self.onward(self.side(from)), Msg::Leader { id });
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            self.wake(cx);
        }
    }

    fn status(&self) -> Status {
        self.status_key().status()
    }

    /// The leader learned, or whether this process takes part in an election: all its status depends on.
    #[inline(always)]
    fn status_key(&self) -> impl StatusKey + use<> {
        Learned { leader: self.leader, electing: self.role != Role::Asleep }
    }
}

static INFO: Info = Info {
    name: "franklin",
    aliases: &[],
    title: "Franklin",
    model: "bidirectional ring, FIFO links, n unknown",
    seed: "S003",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[BUG],
    rules: &[],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "random ids, every process initiates",
    },
};

impl Algorithm for Franklin {
    type Process = FranklinProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        let bug: String = params.value(&BUG)?;
        match bug.as_str() {
            "none" => Ok(Self { forget_buffered: false }),
            "forget-buffered" => Ok(Self { forget_buffered: true }),
            other => Err(ParamError::Invalid {
                key: BUG.name,
                value: other.to_owned(),
                reason: format!("unknown bug '{other}' (expected {})", BUG.values),
            }),
        }
    }

    fn build(&self, setup: &Setup<'_>) -> FranklinProcess {
        FranklinProcess {
            me: setup.rank,
            ports: ring_ports(setup),
            role: Role::Asleep,
            round: 0,
            got: [None; SIDES],
            early: [None; SIDES],
            leader: None,
            forget_buffered: self.forget_buffered,
        }
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The leader declares by n(floor(lg n) + 1); the announcement takes n more.
        t * (facts.nodes * (floor_lg(facts.nodes) + 2))
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let n = f.nodes;
        vec![
            Bound {
                name: "2n floor(lg n) + 2n probes".into(),
                measure: Measure::Kinds(&["probe"]),
                value: 2 * n * floor_lg(n) + 2 * n,
            },
            Bound { name: "announcement n leader".into(), measure: Measure::Kinds(&["leader"]), value: n },
        ]
    }
}
