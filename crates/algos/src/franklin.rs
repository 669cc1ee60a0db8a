#![doc = include_str!("../../../docs/reference/algorithms/franklin.md")]

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Notice, Peers, Port, Process, Rank, RingPorts, Setup, Status, StatusKey, View,
    When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
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

elect_core::message_kinds!(
    Msg { Probe => "probe", Leader => "leader" },
    describe = Msg::text,
    wire_size = Msg::wire_size,
);

impl Msg {
    /// The variant's index (one byte), then the fields in order.
    fn wire_size(&self) -> u64 {
        1 + match *self {
            Self::Probe { id, round } => id.wire_size() + elect_core::varint_len(round.into()),
            Self::Leader { id } => id.wire_size(),
        }
    }

    /// `probe(id 5, round 1)`, `leader 8`.
    fn text(&self) -> String {
        match self {
            Self::Probe { id, round } => format!("probe(id {id}, round {round})"),
            Self::Leader { id } => format!("leader {id}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const WAKE: &str = "wake up, send id both ways";
const NOTE: &str = "note this round's probe";
const BUFFER: &str = "buffer a next-round probe";
const NEXT_ROUND: &str = "beat both, next round";
const BEATEN: &str = "beaten, become a relay";
const FORGET: &str = "become a relay, drop buffered (bug)";
const RELAY: &str = "relay a probe";
const ELECTED: &str = "own probe returned, elected";
const AFTER_WIN: &str = "ignore a probe after winning";
const OUT_OF_ROUND: &str = "ignore an out-of-round probe";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const AGAIN: &str = "ignore a second initiate";

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

    #[inline(always)]
    fn on_probe(&mut self, cx: &mut Cx<'_, Self>, side: usize, id: Rank, round: u32) {
        match self.role {
            Role::Asleep | Role::Winner => cx.rule(AFTER_WIN),
            Role::Relay => {
                cx.rule(RELAY);
                cx.send(self.onward(side), Msg::Probe { id, round });
            }
            Role::Active if round == self.round => {
                cx.rule(NOTE);
                self.got[side] = Some(id);
            }
            Role::Active if Some(round) == self.round.checked_add(1) => {
                cx.rule(BUFFER);
                self.early[side] = Some(id);
            }
            Role::Active => cx.rule(OUT_OF_ROUND), // Impossible on FIFO links.
        }
        while self.role == Role::Active && self.decide(cx) {}
    }

    /// Decides the current round if both probes are in; returns whether a new round started.
    fn decide(&mut self, cx: &mut Cx<'_, Self>) -> bool {
        let [Some(left), Some(right)] = self.got else { return false };
        if left == self.me || right == self.me {
            cx.rule(ELECTED);
            self.role = Role::Winner;
            self.leader = Some(self.me);
            cx.notify(Notice::Elected { epoch: Epoch::ZERO });
            cx.send(self.ports.next, Msg::Leader { id: self.me });
            return false;
        }
        if self.me > left && self.me > right {
            cx.rule(NEXT_ROUND);
            self.round += 1;
            self.got = std::mem::take(&mut self.early);
            self.send_probes(cx);
            return true;
        }
        self.role = Role::Relay;
        let early = std::mem::take(&mut self.early);
        cx.rule(if self.forget_buffered && early.iter().any(Option::is_some) { FORGET } else { BEATEN });
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
            cx.rule(WAKE);
            self.role = Role::Active;
            self.send_probes(cx);
        }
    }
}

impl Process for FranklinProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop, by force: a ring algorithm's every step is a message, and inlined, its
    // sends reach the simulator's queue without a call through a pointer (left to the compiler, it stayed a call).
    #[inline(always)]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        self.wake(cx);
        match msg {
            Msg::Probe { id, round } => self.on_probe(cx, self.side(from), id, round),
            Msg::Leader { id } if id == self.me => cx.rule(CAME_HOME), // It has gone round once.
            Msg::Leader { id } => {
                cx.rule(PASS_ON);
                self.leader = Some(id);
                cx.send(self.onward(self.side(from)), Msg::Leader { id });
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            cx.rule(AGAIN);
            self.wake(cx);
        }
    }

    /// `active: id 5, round 1, waiting for 3, 6`, `relay: id 5, leader 9`: active or relay, its id, and while
    /// active its round and the neighbours whose probe of that round it waits for.
    fn view(&self, peers: &Peers<'_>) -> View {
        match self.role {
            Role::Asleep => View::new("asleep"),
            Role::Active => {
                let from = [self.ports.prev, self.ports.next];
                let waiting = (0..SIDES).filter(|&side| self.got[side].is_none()).map(|side| from[side]);
                let waiting = peers.list(waiting);
                let view = View::new("active").with("id", self.me).with("round", self.round);
                let view = if waiting.is_empty() { view } else { view.with("waiting for", waiting) };
                view.with_some("leader", self.leader)
            }
            Role::Relay => View::new("relay").with("id", self.me).with_some("leader", self.leader),
            Role::Winner => View::new("leader").with("id", self.me).with("round", self.round),
        }
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for probes)".to_owned()
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
    links: LinkOrder::Fifo,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[BUG],
    rules: &[
        WAKE,
        NOTE,
        BUFFER,
        NEXT_ROUND,
        BEATEN,
        FORGET,
        RELAY,
        ELECTED,
        AFTER_WIN,
        OUT_OF_ROUND,
        PASS_ON,
        CAME_HOME,
        AGAIN,
    ],
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

#[cfg(test)]
mod tests {
    use elect_core::{EffectOf, Event, Instant, Message, Neighbor, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    const NEXT: Port = Port(0);
    const PREV: Port = Port(1);

    /// A process with id `me` whose clockwise neighbour is at port 0.
    fn process(me: u32, forget_buffered: bool) -> FranklinProcess {
        FranklinProcess {
            me: rank(me),
            ports: RingPorts { next: NEXT, prev: PREV },
            role: Role::Asleep,
            round: 0,
            got: [None; SIDES],
            early: [None; SIDES],
            leader: None,
            forget_buffered,
        }
    }

    fn probe(from: Port, id: u32, round: u32) -> Event<Msg, (), ()> {
        Event::Message { from, msg: Msg::Probe { id: rank(id), round } }
    }

    /// Handles `event` at time 0, and returns the rule it named.
    fn handle(
        p: &mut FranklinProcess,
        event: Event<Msg, (), ()>,
        effects: &mut Vec<EffectOf<FranklinProcess>>,
    ) -> Option<&'static str> {
        driver::handle(p, Instant::ZERO, event, effects)
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        // Process 5 between 3 (counter-clockwise, port 1) and 6 (clockwise, port 0).
        let neighbors = [
            Neighbor { port: NEXT, id: NodeId(6), rank: rank(6) },
            Neighbor { port: PREV, id: NodeId(3), rank: rank(3) },
        ];
        let peers = Peers(&neighbors);
        let mut p = process(5, false);
        let mut effects = Vec::new();
        assert_eq!(p.view(&peers).to_string(), "asleep");
        assert_eq!(handle(&mut p, Event::Command(Command::Initiate), &mut effects), Some(WAKE));
        assert_eq!(p.view(&peers).to_string(), "active: id 5, round 0, waiting for 3, 6");
        assert_eq!(handle(&mut p, Event::Command(Command::Initiate), &mut effects), Some(AGAIN));
        assert_eq!(handle(&mut p, probe(PREV, 3, 0), &mut effects), Some(NOTE));
        assert_eq!(p.view(&peers).to_string(), "active: id 5, round 0, waiting for 6");
        assert_eq!(handle(&mut p, probe(NEXT, 4, 0), &mut effects), Some(NEXT_ROUND));
        assert_eq!(p.view(&peers).to_string(), "active: id 5, round 1, waiting for 3, 6");
        assert_eq!(handle(&mut p, probe(PREV, 2, 2), &mut effects), Some(BUFFER));
        assert_eq!(handle(&mut p, probe(PREV, 1, 9), &mut effects), Some(OUT_OF_ROUND));
        assert_eq!(handle(&mut p, probe(PREV, 3, 1), &mut effects), Some(NOTE));
        assert_eq!(handle(&mut p, probe(NEXT, 9, 1), &mut effects), Some(BEATEN));
        assert_eq!(effects.len(), 5, "probes of rounds 0 and 1 both ways, and the buffered probe passed on");
        assert_eq!(p.view(&peers).to_string(), "relay: id 5");
        let stronger = Msg::Probe { id: rank(9), round: 2 };
        assert_eq!(stronger.describe(), "probe(id 9, round 2)");
        assert_eq!(handle(&mut p, Event::Message { from: PREV, msg: stronger }, &mut effects), Some(RELAY));
        let leader = Msg::Leader { id: rank(9) };
        assert_eq!(leader.describe(), "leader 9");
        assert_eq!(handle(&mut p, Event::Message { from: PREV, msg: leader }, &mut effects), Some(PASS_ON));
        assert_eq!(p.view(&peers).to_string(), "relay: id 5, leader 9");
    }

    #[test]
    fn the_winner_sees_its_own_probe_and_the_planted_bug_names_itself() {
        let mut effects = Vec::new();
        let mut handle = |p: &mut FranklinProcess, event| driver::handle(p, Instant::ZERO, event, &mut effects);
        let mut p = process(9, false);
        assert_eq!(handle(&mut p, probe(PREV, 9, 0)), Some(NOTE));
        assert_eq!(handle(&mut p, probe(NEXT, 9, 0)), Some(ELECTED));
        assert_eq!(p.view(&Peers(&[])).to_string(), "leader: id 9, round 0");
        assert_eq!(handle(&mut p, probe(NEXT, 9, 0)), Some(AFTER_WIN));
        assert_eq!(handle(&mut p, Event::Message { from: PREV, msg: Msg::Leader { id: rank(9) } }), Some(CAME_HOME));
        let mut p = process(5, true);
        assert_eq!(handle(&mut p, probe(PREV, 3, 0)), Some(NOTE));
        assert_eq!(handle(&mut p, probe(PREV, 2, 1)), Some(BUFFER));
        assert_eq!(handle(&mut p, probe(NEXT, 6, 0)), Some(FORGET));
    }
}
