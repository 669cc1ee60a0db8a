#![doc = include_str!("../../../docs/reference/algorithms/hirschberg-sinclair.md")]

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Notice, Peers, Port, Process, Rank, RingPorts, Setup, Status, StatusKey, View,
    When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::params::{ParamError, Params};
use crate::{Learned, ceil_lg, election_checks, ring_ports};

/// The algorithm's configuration (it has no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HirschbergSinclair;

/// Hirschberg–Sinclair messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// A candidate's token travelling away from it.
    Probe {
        /// The candidate.
        id: Rank,
        /// Its phase.
        phase: u32,
        /// Hops travelled, this one included.
        hop: u32,
    },
    /// The echo of a probe that reached distance `2^phase`, travelling back.
    Reply {
        /// The candidate.
        id: Rank,
        /// Its phase.
        phase: u32,
    },
    /// The winner, announced once around the ring.
    Leader {
        /// The winner.
        id: Rank,
    },
}

elect_core::message_kinds!(
    Msg { Probe => "probe", Reply => "reply", Leader => "leader" },
    describe = Msg::text,
    wire_size = Msg::wire_size,
);

impl Msg {
    /// The variant's index (one byte), then the fields in order.
    #[inline]
    fn wire_size(&self) -> u64 {
        use elect_core::varint_len;
        1 + match *self {
            Self::Probe { id, phase, hop } => id.wire_size() + varint_len(phase.into()) + varint_len(hop.into()),
            Self::Reply { id, phase } => id.wire_size() + varint_len(phase.into()),
            Self::Leader { id } => id.wire_size(),
        }
    }

    /// `probe(id 5, phase 1, hop 2)`, `reply(id 5, phase 1)`, `leader 8`.
    fn text(&self) -> String {
        match self {
            Self::Probe { id, phase, hop } => format!("probe(id {id}, phase {phase}, hop {hop})"),
            Self::Reply { id, phase } => format!("reply(id {id}, phase {phase})"),
            Self::Leader { id } => format!("leader {id}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const WAKE: &str = "wake up, probe both ways";
const RELAY_PROBE: &str = "relay a stronger probe";
const SWALLOW: &str = "swallow a weaker probe";
const REPLY: &str = "reply at a stronger probe's last hop";
const RELAY_REPLY: &str = "relay a reply";
const ONE_REPLY: &str = "one reply in, wait for the other";
const NEXT_PHASE: &str = "both replies in, next phase";
const STALE_REPLY: &str = "ignore a stale reply";
const ELECTED: &str = "own probe returned, elected";
const SECOND: &str = "ignore the second own probe";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const AGAIN: &str = "ignore a second initiate";

/// Every message names a member by its rank; a probe of phase `k` travels at most `2^k` hops, and no phase goes
/// past the one whose probes reach round the ring (`2^k ≥ n`).
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let phases = usize::BITS - roster.nodes().leading_zeros();
        match *self {
            Self::Probe { id, phase, hop } => {
                roster.rank(id, "the id is not a member's")?;
                roster.ensure(phase <= phases, "the phase is beyond the last one")?;
                let reach = 1u64.checked_shl(phase).unwrap_or(u64::MAX);
                roster.ensure(hop >= 1 && u64::from(hop) <= reach, "the hop count is beyond the phase's reach")
            }
            Self::Reply { id, phase } => {
                roster.rank(id, "the id is not a member's")?;
                roster.ensure(phase <= phases, "the phase is beyond the last one")
            }
            Self::Leader { id } => roster.rank(id, "the id is not a member's"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    /// Not started yet.
    Asleep,
    /// Competing in `phase`.
    Candidate,
    /// Declared itself leader.
    Winner,
}

/// One process of Hirschberg–Sinclair.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HirschbergSinclairProcess {
    me: Rank,
    ports: RingPorts,
    role: Role,
    phase: u32,
    replies: u8,
    leader: Option<Rank>,
}

impl HirschbergSinclairProcess {
    fn other(&self, port: Port) -> Port {
        if port == self.ports.next { self.ports.prev } else { self.ports.next }
    }

    fn wake(&mut self, cx: &mut Cx<'_, Self>) {
        if self.role == Role::Asleep {
            cx.rule(WAKE);
            self.role = Role::Candidate;
            self.start_phase(cx);
        }
    }

    fn start_phase(&mut self, cx: &mut Cx<'_, Self>) {
        self.replies = 0;
        for port in [self.ports.next, self.ports.prev] {
            cx.send(port, Msg::Probe { id: self.me, phase: self.phase, hop: 1 });
        }
    }

    // Inlined by force, with `on_reply`: a call here would hand the simulator's outbox each send through a
    // pointer, the message passed in memory and copied again (docs/internals/simulator-speed.md).
    #[inline(always)]
    fn on_probe(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: Rank, phase: u32, hop: u32) {
        if id == self.me {
            if self.role != Role::Winner {
                cx.rule(ELECTED);
                self.role = Role::Winner;
                self.leader = Some(self.me);
                cx.notify(Notice::Elected { epoch: Epoch::ZERO });
                cx.send(self.ports.next, Msg::Leader { id: self.me });
            } else {
                cx.rule(SECOND);
            }
        } else if id > self.me {
            match 1u64.checked_shl(phase).is_some_and(|reach| u64::from(hop) < reach) {
                true => {
                    cx.rule(RELAY_PROBE);
                    cx.send(self.other(from), Msg::Probe { id, phase, hop: hop.saturating_add(1) });
                }
                false => {
                    cx.rule(REPLY);
                    cx.send(from, Msg::Reply { id, phase });
                }
            }
        } else {
            // A weaker candidate's probe is swallowed.
            cx.rule(SWALLOW);
        }
    }

    #[inline(always)]
    fn on_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: Rank, phase: u32) {
        if id != self.me {
            cx.rule(RELAY_REPLY);
            cx.send(self.other(from), Msg::Reply { id, phase });
        } else if self.role == Role::Candidate && phase == self.phase {
            self.replies += 1;
            cx.rule(ONE_REPLY);
            if self.replies == 2 {
                cx.rule(NEXT_PHASE);
                self.phase += 1;
                self.start_phase(cx);
            }
        } else {
            cx.rule(STALE_REPLY);
        }
    }
}

impl Process for HirschbergSinclairProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop, by force: a ring algorithm's every step is a message, and inlined, its
    // sends reach the simulator's queue without a call through a pointer (left to the compiler, it stayed a call).
    #[inline(always)]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        self.wake(cx);
        match msg {
            Msg::Probe { id, phase, hop } => self.on_probe(cx, from, id, phase, hop),
            Msg::Reply { id, phase } => self.on_reply(cx, from, id, phase),
            Msg::Leader { id } if id == self.me => cx.rule(CAME_HOME), // It has gone round once.
            Msg::Leader { id } => {
                cx.rule(PASS_ON);
                self.leader = Some(id);
                cx.send(self.other(from), Msg::Leader { id });
            }
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            cx.rule(AGAIN);
            self.wake(cx);
        }
    }

    /// `candidate: phase 1, probes out, replies 1`, `leader: phase 3`: its role, the phase it is in, and as a
    /// candidate its probes out both ways, the replies they brought back so far and the leader it learned.
    fn view(&self, _: &Peers<'_>) -> View {
        match self.role {
            Role::Asleep => View::new("asleep"),
            Role::Candidate => View::new("candidate")
                .with("phase", self.phase)
                .with("probes", "out")
                .with("replies", self.replies)
                .with_some("leader", self.leader),
            Role::Winner => View::new("leader").with("phase", self.phase),
        }
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for probes and replies)".to_owned()
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
    name: "hirschberg-sinclair",
    aliases: &["hs"],
    title: "Hirschberg-Sinclair",
    model: "bidirectional ring, asynchronous reliable links, n unknown",
    seed: "S000 (Lynch's HS)",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[
        WAKE,
        RELAY_PROBE,
        SWALLOW,
        REPLY,
        RELAY_REPLY,
        ONE_REPLY,
        NEXT_PHASE,
        STALE_REPLY,
        ELECTED,
        SECOND,
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

impl Algorithm for HirschbergSinclair {
    type Process = HirschbergSinclairProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> HirschbergSinclairProcess {
        HirschbergSinclairProcess {
            me: setup.rank,
            ports: ring_ports(setup),
            role: Role::Asleep,
            phase: 0,
            replies: 0,
            leader: None,
        }
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The leader declares by n + 2^(ceil(lg n)+1) - 2 < 5n; the announcement takes n more.
        t * (6 * facts.nodes)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let n = f.nodes;
        vec![
            Bound {
                name: "8n(1+ceil(lg n)) probes and replies".into(),
                measure: Measure::Kinds(&["probe", "reply"]),
                value: 8 * n * (1 + ceil_lg(n)),
            },
            Bound { name: "announcement n leader".into(), measure: Measure::Kinds(&["leader"]), value: n },
        ]
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Event, Instant, Message, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    const NEXT: Port = Port(0);
    const PREV: Port = Port(1);

    /// A process with id `me` whose clockwise neighbour is at port 0.
    fn process(me: u32) -> HirschbergSinclairProcess {
        HirschbergSinclairProcess {
            me: rank(me),
            ports: RingPorts { next: NEXT, prev: PREV },
            role: Role::Asleep,
            phase: 0,
            replies: 0,
            leader: None,
        }
    }

    fn on(from: Port, msg: Msg) -> Event<Msg, (), ()> {
        Event::Message { from, msg }
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let mut p = process(5);
        let peers = Peers(&[]);
        let mut effects = Vec::new();
        let mut handle =
            |p: &mut HirschbergSinclairProcess, event| driver::handle(p, Instant::ZERO, event, &mut effects);
        assert_eq!(p.view(&peers).to_string(), "asleep");
        assert_eq!(handle(&mut p, Event::Command(Command::Initiate)), Some(WAKE));
        assert_eq!(p.view(&peers).to_string(), "candidate: phase 0, probes out, replies 0");
        assert_eq!(handle(&mut p, Event::Command(Command::Initiate)), Some(AGAIN));
        assert_eq!(handle(&mut p, on(NEXT, Msg::Probe { id: rank(3), phase: 0, hop: 1 })), Some(SWALLOW));
        let stronger = Msg::Probe { id: rank(9), phase: 1, hop: 1 };
        assert_eq!(stronger.describe(), "probe(id 9, phase 1, hop 1)");
        assert_eq!(handle(&mut p, on(NEXT, stronger)), Some(RELAY_PROBE));
        assert_eq!(handle(&mut p, on(NEXT, Msg::Probe { id: rank(9), phase: 1, hop: 2 })), Some(REPLY));
        let mine = Msg::Reply { id: rank(5), phase: 0 };
        assert_eq!(mine.describe(), "reply(id 5, phase 0)");
        assert_eq!(handle(&mut p, on(NEXT, mine.clone())), Some(ONE_REPLY));
        assert_eq!(p.view(&peers).to_string(), "candidate: phase 0, probes out, replies 1");
        assert_eq!(handle(&mut p, on(PREV, mine.clone())), Some(NEXT_PHASE));
        assert_eq!(p.view(&peers).to_string(), "candidate: phase 1, probes out, replies 0");
        assert_eq!(handle(&mut p, on(PREV, mine)), Some(STALE_REPLY));
        assert_eq!(handle(&mut p, on(PREV, Msg::Reply { id: rank(9), phase: 1 })), Some(RELAY_REPLY));
        let leader = Msg::Leader { id: rank(9) };
        assert_eq!(leader.describe(), "leader 9");
        assert_eq!(handle(&mut p, on(PREV, leader)), Some(PASS_ON));
        assert_eq!(p.view(&peers).to_string(), "candidate: phase 1, probes out, replies 0, leader 9");
    }

    #[test]
    fn its_own_probe_elects_it_once_and_its_announcement_comes_home() {
        let mut p = process(9);
        let mut effects = Vec::new();
        let mut handle =
            |p: &mut HirschbergSinclairProcess, event| driver::handle(p, Instant::ZERO, event, &mut effects);
        let own = Msg::Probe { id: rank(9), phase: 2, hop: 4 };
        assert_eq!(handle(&mut p, on(PREV, own.clone())), Some(ELECTED), "woken by its own probe, it wins");
        assert_eq!(p.view(&Peers(&[])).to_string(), "leader: phase 0");
        assert_eq!(handle(&mut p, on(NEXT, own)), Some(SECOND));
        assert_eq!(handle(&mut p, on(PREV, Msg::Leader { id: rank(9) })), Some(CAME_HOME));
    }
}
