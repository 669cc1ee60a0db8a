#![doc = include_str!("../../../docs/reference/algorithms/peterson.md")]

use elect_core::{
    Check, Command, Cx, Duration, Epoch, Notice, Peers, Port, Process, Rank, Setup, Status, StatusKey, View, When,
};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
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

elect_core::message_kinds!(
    Msg { One => "one", Two => "two", Leader => "leader" },
    describe = Msg::text,
    wire_size = Msg::wire_size,
);

impl Msg {
    /// The variant's index (one byte) and the rank.
    fn wire_size(&self) -> u64 {
        match *self {
            Self::One { alias: rank } | Self::Two { alias: rank } | Self::Leader { id: rank } => 1 + rank.wire_size(),
        }
    }

    /// `one(alias 5)`, `two(alias 3)`, `leader 8`.
    fn text(&self) -> String {
        match self {
            Self::One { alias } => format!("one(alias {alias})"),
            Self::Two { alias } => format!("two(alias {alias})"),
            Self::Leader { id } => format!("leader {id}"),
        }
    }
}

// The rules a step names, in the words of the chapter ("Rules, step by step").
const WAKE: &str = "wake up, send one";
const REMEMBER: &str = "remember v, send two";
const ADOPT: &str = "adopt a local maximum, next phase";
const BECOME_RELAY: &str = "not a local maximum, become a relay";
const RELAY: &str = "relay one or two";
const ANNOUNCE: &str = "own alias returned, announce";
const PASS_ON: &str = "pass the announcement on";
const CAME_HOME: &str = "announcement came home";
const NO_ONE: &str = "ignore a two without its one";
const AFTER: &str = "ignore a message after announcing";
const AGAIN: &str = "ignore a second initiate";

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
            cx.rule(WAKE);
            self.role = Role::Active;
            cx.send(self.next, Msg::One { alias: self.alias });
        }
    }

    #[inline]
    fn on_one(&mut self, cx: &mut Cx<'_, Self>, alias: Rank) {
        if alias == self.alias {
            cx.rule(ANNOUNCE);
            self.role = Role::Announcer;
            self.leader = Some(alias);
            cx.notify(Notice::Elected { epoch: Epoch::ZERO });
            cx.send(self.next, Msg::Leader { id: alias });
        } else {
            cx.rule(REMEMBER);
            self.upstream = Some(alias);
            cx.send(self.next, Msg::Two { alias });
        }
    }

    #[inline]
    fn on_two(&mut self, cx: &mut Cx<'_, Self>, two: Rank) {
        // On FIFO links `two` always follows this phase's `one`.
        let Some(upstream) = self.upstream.take() else { return cx.rule(NO_ONE) };
        if upstream > self.alias && upstream > two {
            cx.rule(ADOPT);
            self.alias = upstream;
            cx.send(self.next, Msg::One { alias: self.alias });
        } else {
            cx.rule(BECOME_RELAY);
            self.role = Role::Relay;
        }
    }
}

impl Process for PetersonProcess {
    type Msg = Msg;
    type Timer = ();
    type Durable = ();

    // Inlined into the simulator's loop, by force: a ring algorithm's every step is a message, and inlined, its
    // sends reach the simulator's queue without a call through a pointer (left to the compiler, it stayed a call).
    #[inline(always)]
    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _from: Port, msg: Msg) {
        self.wake(cx);
        match (self.role, msg) {
            (Role::Announcer, Msg::Leader { .. }) => cx.rule(CAME_HOME), // It has gone round once.
            (_, Msg::Leader { id }) => {
                cx.rule(PASS_ON);
                self.leader = Some(id);
                cx.send(self.next, Msg::Leader { id });
            }
            (Role::Relay, msg) => {
                cx.rule(RELAY);
                cx.send(self.next, msg);
            }
            (Role::Active, Msg::One { alias }) => self.on_one(cx, alias),
            (Role::Active, Msg::Two { alias }) => self.on_two(cx, alias),
            (Role::Asleep | Role::Announcer, _) => cx.rule(AFTER),
        }
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        if cmd == Command::Initiate {
            cx.rule(AGAIN);
            self.wake(cx);
        }
    }

    /// `active: alias 7, upstream alias 5`, `relay: leader 9`, `announcer: alias 9`: active or relay, the alias it
    /// carries while active and the upstream alias `v` of this phase's `one`, and the leader it learned.
    fn view(&self, _: &Peers<'_>) -> View {
        match self.role {
            Role::Asleep => View::new("asleep"),
            Role::Active => View::new("active")
                .with("alias", self.alias)
                .with_some("upstream alias", self.upstream)
                .with_some("leader", self.leader),
            Role::Relay => View::new("relay").with_some("leader", self.leader),
            Role::Announcer => View::new("announcer").with("alias", self.alias),
        }
    }

    fn describe_timer((): &()) -> String {
        "no timer (it only waits for one, two and leader)".to_owned()
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
    links: LinkOrder::Fifo,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[WAKE, REMEMBER, ADOPT, BECOME_RELAY, RELAY, ANNOUNCE, PASS_ON, CAME_HOME, NO_ONE, AFTER, AGAIN],
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

#[cfg(test)]
mod tests {
    use elect_core::{EffectOf, Event, Instant, Message, NodeId, Prefer, driver};

    use super::*;

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    fn process(me: u32) -> PetersonProcess {
        PetersonProcess { next: Port(0), role: Role::Asleep, alias: rank(me), upstream: None, leader: None }
    }

    /// Handles `msg` from upstream (port 1) at time 0, and returns the rule it named.
    fn on(p: &mut PetersonProcess, msg: Msg, effects: &mut Vec<EffectOf<PetersonProcess>>) -> Option<&'static str> {
        driver::handle(p, Instant::ZERO, Event::Message { from: Port(1), msg }, effects)
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let mut p = process(5);
        let peers = Peers(&[]);
        let mut effects = Vec::new();
        assert_eq!(p.view(&peers).to_string(), "asleep");
        let initiate = Event::Command(Command::Initiate);
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate.clone(), &mut effects), Some(WAKE));
        assert_eq!(driver::handle(&mut p, Instant::ZERO, initiate, &mut effects), Some(AGAIN));
        assert_eq!(p.view(&peers).to_string(), "active: alias 5");
        let one = Msg::One { alias: rank(7) };
        assert_eq!(one.describe(), "one(alias 7)");
        assert_eq!(on(&mut p, one, &mut effects), Some(REMEMBER));
        assert_eq!(p.view(&peers).to_string(), "active: alias 5, upstream alias 7");
        let two = Msg::Two { alias: rank(3) };
        assert_eq!(two.describe(), "two(alias 3)");
        assert_eq!(on(&mut p, two, &mut effects), Some(ADOPT));
        assert_eq!(p.view(&peers).to_string(), "active: alias 7");
        assert_eq!(on(&mut p, Msg::Two { alias: rank(3) }, &mut effects), Some(NO_ONE));
        assert_eq!(on(&mut p, Msg::One { alias: rank(6) }, &mut effects), Some(REMEMBER));
        assert_eq!(on(&mut p, Msg::Two { alias: rank(8) }, &mut effects), Some(BECOME_RELAY));
        assert_eq!(p.view(&peers).to_string(), "relay");
        assert_eq!(on(&mut p, Msg::One { alias: rank(8) }, &mut effects), Some(RELAY));
        let leader = Msg::Leader { id: rank(8) };
        assert_eq!(leader.describe(), "leader 8");
        assert_eq!(on(&mut p, leader, &mut effects), Some(PASS_ON));
        assert_eq!(p.view(&peers).to_string(), "relay: leader 8");
    }

    #[test]
    fn the_alias_holder_announces_and_its_announcement_comes_home() {
        let mut p = process(8);
        let mut effects = Vec::new();
        assert_eq!(on(&mut p, Msg::One { alias: rank(8) }, &mut effects), Some(ANNOUNCE), "woken by its own alias");
        assert_eq!(p.view(&Peers(&[])).to_string(), "announcer: alias 8");
        assert_eq!(on(&mut p, Msg::Two { alias: rank(8) }, &mut effects), Some(AFTER));
        assert_eq!(on(&mut p, Msg::Leader { id: rank(8) }, &mut effects), Some(CAME_HOME));
    }
}
