#![doc = include_str!("../../../docs/reference/algorithms/hirschberg-sinclair.md")]

use elect_core::{
    Check, Command, Cx, Duration, Notice, Port, Process, Rank, RingPorts, Setup, Status, StatusKey, When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
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

elect_core::message_kinds!(Msg { Probe => "probe", Reply => "reply", Leader => "leader" });

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

    #[inline]
    fn on_probe(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: Rank, phase: u32, hop: u32) {
        if id == self.me {
            if self.role != Role::Winner {
                self.role = Role::Winner;
                self.leader = Some(self.me);
                cx.notify(Notice::Elected { epoch: 0 });
                cx.send(self.ports.next, Msg::Leader { id: self.me });
            }
        } else if id > self.me {
            match 1u64.checked_shl(phase).is_some_and(|reach| u64::from(hop) < reach) {
                true => cx.send(self.other(from), Msg::Probe { id, phase, hop: hop.saturating_add(1) }),
                false => cx.send(from, Msg::Reply { id, phase }),
            }
        }
        // A weaker candidate's probe is swallowed.
    }

    #[inline]
    fn on_reply(&mut self, cx: &mut Cx<'_, Self>, from: Port, id: Rank, phase: u32) {
        if id != self.me {
            cx.send(self.other(from), Msg::Reply { id, phase });
        } else if self.role == Role::Candidate && phase == self.phase {
            self.replies += 1;
            if self.replies == 2 {
                self.phase += 1;
                self.start_phase(cx);
            }
        }
    }
}

impl Process for HirschbergSinclairProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop: a ring algorithm's every step is a message.
    #[inline]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: Msg) {
        self.wake(cx);
        match msg {
            Msg::Probe { id, phase, hop } => self.on_probe(cx, from, id, phase, hop),
            Msg::Reply { id, phase } => self.on_reply(cx, from, id, phase),
            Msg::Leader { id } if id == self.me => {} // It has gone round once.
            Msg::Leader { id } => {
                self.leader = Some(id);
                cx.send(self.other(from), Msg::Leader { id });
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
    name: "hirschberg-sinclair",
    aliases: &["hs"],
    title: "Hirschberg-Sinclair",
    model: "bidirectional ring, asynchronous reliable links, n unknown",
    seed: "S000 (Lynch's HS)",
    needs: Needs::Ring,
    timing: Timing::Asynchronous,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
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
