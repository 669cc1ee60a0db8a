#![doc = include_str!("../../../docs/reference/algorithms/peterson.md")]

use elect_core::{Check, Command, Cx, Duration, Notice, Port, Process, Rank, Setup, Status, StatusKey, When};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
use crate::params::{ParamError, Params};
use crate::{Learned, election_checks, floor_lg, ring_ports};

/// The algorithm's configuration (it has no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peterson;

/// Peterson messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// Opens a phase with the sender's alias.
    One {
        /// The alias.
        alias: Rank,
    },
    /// Relays the alias the sender received in `one`.
    Two {
        /// That alias.
        alias: Rank,
    },
    /// The winner, announced once around the ring by the alias holder.
    Leader {
        /// The winner.
        id: Rank,
    },
}

elect_core::message_kinds!(Msg { One => "one", Two => "two", Leader => "leader" });

/// Every message names a member by its rank.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let (Self::One { alias: rank } | Self::Two { alias: rank } | Self::Leader { id: rank }) = self;
        roster.rank(*rank, "the id is not a member's")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    Asleep,
    Active,
    Relay,
    /// Announced the leader.
    Announcer,
}

/// One process of Peterson's algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PetersonProcess {
    next: Port,
    role: Role,
    alias: Rank,
    /// The alias received in this phase's `one`.
    upstream: Option<Rank>,
    leader: Option<Rank>,
}

impl PetersonProcess {
    fn wake(&mut self, cx: &mut Cx<'_, Self>) {
        if self.role == Role::Asleep {
            self.role = Role::Active;
            cx.send(self.next, Msg::One { alias: self.alias });
        }
    }

    #[inline]
    fn on_one(&mut self, cx: &mut Cx<'_, Self>, alias: Rank) {
        if alias == self.alias {
            self.role = Role::Announcer;
            self.leader = Some(alias);
            cx.notify(Notice::Elected { epoch: 0 });
            cx.send(self.next, Msg::Leader { id: alias });
        } else {
            self.upstream = Some(alias);
            cx.send(self.next, Msg::Two { alias });
        }
    }

    #[inline]
    fn on_two(&mut self, cx: &mut Cx<'_, Self>, two: Rank) {
        // On FIFO links `two` always follows this phase's `one`.
        let Some(upstream) = self.upstream.take() else { return };
        if upstream > self.alias && upstream > two {
            self.alias = upstream;
            cx.send(self.next, Msg::One { alias: self.alias });
        } else {
            self.role = Role::Relay;
        }
    }
}

impl Process for PetersonProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop: a ring algorithm's every step is a message.
    #[inline]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        self.wake(cx);
        match (self.role, msg) {
            (Role::Announcer, Msg::Leader { .. }) => {} // It has gone round once.
            (_, Msg::Leader { id }) => {
                self.leader = Some(id);
                cx.send(self.next, Msg::Leader { id });
            }
            (Role::Relay, msg) => cx.send(self.next, msg),
            (Role::Active, Msg::One { alias }) => self.on_one(cx, alias),
            (Role::Active, Msg::Two { alias }) => self.on_two(cx, alias),
            (Role::Asleep | Role::Announcer, _) => {}
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
    name: "peterson",
    aliases: &["dkr"],
    title: "Peterson / Dolev-Klawe-Rodeh",
    model: "unidirectional ring, FIFO links, n unknown",
    seed: "S003",
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

impl Algorithm for Peterson {
    type Process = PetersonProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> PetersonProcess {
        PetersonProcess {
            next: ring_ports(setup).next,
            role: Role::Asleep,
            alias: setup.rank,
            upstream: None,
            leader: None,
        }
    }

    fn one_way(&self) -> bool {
        true
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // The alias holder declares by n(floor(lg n) + 1); the announcement takes n more.
        t * (facts.nodes * (floor_lg(facts.nodes) + 2))
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let n = f.nodes;
        vec![
            Bound {
                name: "2n floor(lg n) + n one and two".into(),
                measure: Measure::Kinds(&["one", "two"]),
                value: 2 * n * floor_lg(n) + n,
            },
            Bound { name: "announcement n leader".into(), measure: Measure::Kinds(&["leader"]), value: n },
        ]
    }
}
