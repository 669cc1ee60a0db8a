#![doc = include_str!("../../../docs/reference/algorithms/floodmax.md")]

use elect_core::{Check, Duration, Epoch, Notice, Peers, Port, Rank, Setup, Status, View, When};
use serde::{Deserialize, Serialize};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::election_checks;
use crate::params::{ParamError, ParamInfo, Params};
use crate::rounds::{self, RoundAlgorithm, RoundCx, Rounds, Synchronous};

const DIAMETER: ParamInfo = ParamInfo {
    name: "diameter",
    values: "D' (rounds, at least 1)",
    default: "D",
    help: "run D' rounds, an upper bound on the network's diameter D (by default D itself, as the simulator \
           measures it)",
};

/// FloodMax or, with `OPT`, OptFloodMax: the configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flood<const OPT: bool> {
    /// `D'`, when given; otherwise the diameter the driver knows.
    pub diameter: Option<u32>,
}

/// FloodMax: every process sends its maximum on every link in every round.
pub type FloodMax = Flood<false>;
/// OptFloodMax: a process sends only after its maximum changed, and not back where it came from.
pub type OptFloodMax = Flood<true>;

/// FloodMax messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Msg {
    /// The strongest id the sender has seen.
    Max {
        /// That id.
        uid: Rank,
    },
}

elect_core::message_kinds!(Msg { Max => "max" }, describe = Msg::text);

impl Msg {
    /// `max 9`.
    fn text(&self) -> String {
        let Self::Max { uid } = self;
        format!("max {uid}")
    }
}

// The rules a round names, in the words of the chapter ("Rules, step by step").
const SEND_OWN: &str = "send own id on every link";
const RAISE: &str = "raise max to a stronger id, send it";
const SEND_AGAIN: &str = "send max again on every link";
const RAISE_OPT: &str = "raise max, send it on the other links";
const QUIET: &str = "max unchanged, send nothing";
const ELECTED: &str = "own id is the max, elected";
const DECIDE: &str = "decide, the max is the leader";

/// A message names a process by its rank.
impl elect_core::Validate for Msg {
    fn validate(&self, roster: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        let Self::Max { uid } = self;
        roster.rank(*uid, "the uid is not a process's")
    }
}

/// One process of FloodMax or OptFloodMax, taking rounds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Flooder {
    me: Rank,
    /// The strongest id seen.
    max: Rank,
    /// The port `max` arrived on, in the round it last changed (OptFloodMax does not send it back).
    came_from: Option<Port>,
    /// `D'`: rounds that send.
    rounds: u32,
    /// The last round taken (0 before the first); the process decides in round `D' + 1`.
    round: u32,
    /// Links.
    degree: u32,
    /// OptFloodMax.
    opt: bool,
    /// `max` changed in the last round (round 1 counts as a change).
    changed: bool,
}

impl Rounds for Flooder {
    type Msg = Msg;

    fn round(&mut self, cx: &mut RoundCx<'_, Msg>, inbox: &[(Port, Msg)]) {
        self.round = cx.round();
        // The strongest id received, on the lowest port that delivered it.
        let best = inbox
            .iter()
            .map(|&(port, Msg::Max { uid })| (uid, port))
            .reduce(|a, b| if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a });
        self.changed = self.round == 1;
        if let Some((uid, port)) = best.filter(|&(uid, _)| uid > self.max) {
            (self.max, self.came_from, self.changed) = (uid, Some(port), true);
        }
        if self.round > self.rounds {
            if self.max == self.me {
                cx.rule(ELECTED);
                cx.notify(Notice::Elected { epoch: Epoch::ZERO });
            } else {
                cx.rule(DECIDE);
            }
            return;
        }
        if self.opt && !self.changed {
            return cx.rule(QUIET);
        }
        cx.rule(match (self.round, self.opt, self.came_from.is_some() && self.changed) {
            (1, ..) => SEND_OWN,
            (_, false, false) => SEND_AGAIN,
            (_, false, true) => RAISE,
            (_, true, _) => RAISE_OPT,
        });
        let skip = if self.opt { self.came_from } else { None };
        for port in (0..self.degree).map(Port).filter(|&p| Some(p) != skip) {
            cx.send(port, Msg::Max { uid: self.max });
        }
    }

    fn status(&self) -> Status {
        match self.round {
            0 => Status::normal(None, Epoch::ZERO),
            r if r > self.rounds => Status::normal(Some(self.max.id()), Epoch::ZERO),
            _ => Status::election(Epoch::ZERO),
        }
    }

    fn halted(&self) -> bool {
        self.round > self.rounds
    }

    /// `flooding: max 9` (OptFloodMax adds the neighbour the max came from), then `leader` or
    /// `non-leader: leader 9` once round `D' + 1` decided.
    fn view(&self, peers: &Peers<'_>) -> View {
        match self.round {
            0 => View::new("asleep"),
            r if r > self.rounds && self.max == self.me => View::new("leader"),
            r if r > self.rounds => View::new("non-leader").with("leader", self.max),
            _ => View::new("flooding")
                .with("max", self.max)
                .with_some("from", self.came_from.filter(|_| self.opt).and_then(|p| peers.id(p))),
        }
    }

    fn final_round(&self) -> Option<u32> {
        Some(self.rounds.saturating_add(1))
    }
}

/// One process of FloodMax or OptFloodMax.
pub type FloodMaxProcess = Synchronous<Flooder>;

const FLOODMAX: Info = Info {
    name: "floodmax",
    aliases: &[],
    title: "FloodMax",
    model: "any connected network, synchronous rounds (delay bound T), diameter or an upper bound known",
    seed: "S003 (Lynch ch. 4)",
    needs: Needs::Connected,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: true,
    params: &[DIAMETER],
    rules: &[
        rounds::rule::INITIATE,
        SEND_OWN,
        rounds::rule::KEEP,
        SEND_AGAIN,
        RAISE,
        ELECTED,
        DECIDE,
        rounds::rule::JOIN,
        rounds::rule::HALTED,
        rounds::rule::AGAIN,
    ],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "random ids, all start in round 1, D rounds",
    },
};

const OPT_FLOODMAX: Info = Info {
    name: "opt-floodmax",
    title: "OptFloodMax",
    rules: &[
        rounds::rule::INITIATE,
        SEND_OWN,
        rounds::rule::KEEP,
        RAISE_OPT,
        QUIET,
        ELECTED,
        DECIDE,
        rounds::rule::JOIN,
        rounds::rule::HALTED,
        rounds::rule::AGAIN,
    ],
    showcase: Showcase { describe: "random ids, all start in round 1, send only after a change", ..FLOODMAX.showcase },
    ..FLOODMAX
};

impl<const OPT: bool> Flood<OPT> {
    /// `D'` for a run whose diameter is `known`, if either is known.
    fn rounds(&self, known: Option<u64>) -> Option<u64> {
        self.diameter.map(u64::from).or(known)
    }
}

impl<const OPT: bool> Algorithm for Flood<OPT> {
    type Process = FloodMaxProcess;
    const INFO: &'static Info = if OPT { &OPT_FLOODMAX } else { &FLOODMAX };

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        let diameter = params
            .get(DIAMETER.name)
            .map(|raw| {
                raw.parse::<u32>().ok().filter(|&d| d >= 1).ok_or_else(|| ParamError::Invalid {
                    key: DIAMETER.name,
                    value: raw.to_owned(),
                    reason: "expected a whole number of rounds, at least 1 (an upper bound on the diameter)".into(),
                })
            })
            .transpose()?;
        Ok(Self { diameter })
    }

    fn build(&self, setup: &Setup<'_>) -> FloodMaxProcess {
        Synchronous::new(self.build_rounds(setup), setup)
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // D' rounds of T after the first multiple of T, plus one round of slack.
        t * (self.rounds(facts.diameter).unwrap_or(facts.nodes) + 2)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        let Some(rounds) = self.rounds(f.diameter) else { return Vec::new() };
        let value = rounds * 2 * f.edges;
        let name = if OPT { "at most D'*2m max messages" } else { "exactly D'*2m max messages" };
        vec![Bound { name: name.into(), measure: Measure::Kinds(&["max"]), value }]
    }
}

impl<const OPT: bool> RoundAlgorithm for Flood<OPT> {
    type Rounds = Flooder;

    /// # Panics
    /// If neither `diameter=` nor [`Setup::diameter`] gives the number of rounds: drivers that cannot measure
    /// the diameter refuse the run first unless the parameter is given.
    fn build_rounds(&self, setup: &Setup<'_>) -> Flooder {
        let rounds = self.diameter.or(setup.diameter).unwrap_or_else(|| {
            panic!("{} needs the network's diameter or an upper bound (--param diameter=D)", Self::INFO.name)
        });
        Flooder {
            me: setup.rank,
            max: setup.rank,
            came_from: None,
            rounds,
            round: 0,
            degree: setup.neighbors.len() as u32,
            opt: OPT,
            changed: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{Command, Event, Instant, Message, Neighbor, NodeId, Prefer, Process, Shape, driver};

    use super::*;
    use crate::rounds::{RoundMsg, RoundTimer};

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let neighbors = [
            Neighbor { port: Port(0), id: NodeId(7), rank: rank(7) },
            Neighbor { port: Port(1), id: NodeId(9), rank: rank(9) },
        ];
        let setup = Setup {
            id: NodeId(5),
            rank: rank(5),
            neighbors: &neighbors,
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: Some(Duration::from_ticks(10)),
            diameter: Some(3),
            suspected: &[],
        };
        let peers = Peers(&neighbors);
        for opt in [false, true] {
            let mut p = if opt { OptFloodMax::default().build(&setup) } else { FloodMax::default().build(&setup) };
            let mut effects = Vec::new();
            let mut step = |p: &mut FloodMaxProcess, at: u64, event| {
                effects.clear();
                driver::handle(p, Instant::from_ticks(at), event, &mut effects)
            };
            let tick = || Event::Timer(RoundTimer::NextRound);
            assert_eq!(p.view(&peers).to_string(), "asleep");
            assert_eq!(
                step(&mut p, 0, Event::Command(Command::Initiate)),
                Some("initiate, wait for the round to begin")
            );
            assert_eq!(step(&mut p, 0, tick()), Some("send own id on every link"));
            assert_eq!(p.view(&peers).to_string(), "flooding: max 5, round 1");
            let max = RoundMsg { round: 1, msg: Msg::Max { uid: rank(9) } };
            assert_eq!(max.describe(), "round 1: max 9");
            let arrives = Event::Message { from: Port(1), msg: max };
            assert_eq!(step(&mut p, 4, arrives), Some("keep the message for the next round"));
            let raise =
                if opt { "raise max, send it on the other links" } else { "raise max to a stronger id, send it" };
            assert_eq!(step(&mut p, 10, tick()), Some(raise));
            let flooding = if opt { "flooding: max 9, from 9, round 2" } else { "flooding: max 9, round 2" };
            assert_eq!(p.view(&peers).to_string(), flooding);
            let again = if opt { "max unchanged, send nothing" } else { "send max again on every link" };
            assert_eq!(step(&mut p, 20, tick()), Some(again));
            assert_eq!(step(&mut p, 30, tick()), Some("decide, the max is the leader"));
            assert_eq!(p.view(&peers).to_string(), "non-leader: leader 9, round 4");
            assert_eq!(
                step(&mut p, 31, Event::Command(Command::Initiate)),
                Some("already awake, ignore the initiation")
            );
        }
        assert_eq!(FloodMaxProcess::describe_timer(&RoundTimer::NextRound), "next round");
    }

    #[test]
    fn the_strongest_process_names_its_own_win() {
        let setup = Setup {
            id: NodeId(5),
            rank: rank(5),
            neighbors: &[],
            ring: None,
            ring_order: &[],
            shape: Shape::Other,
            delay_bound: Some(Duration::from_ticks(10)),
            diameter: Some(1),
            suspected: &[],
        };
        let mut p = FloodMax::default().build(&setup);
        let mut effects = Vec::new();
        driver::handle(&mut p, Instant::ZERO, Event::Command(Command::Initiate), &mut effects);
        driver::handle(&mut p, Instant::ZERO, Event::Timer(RoundTimer::NextRound), &mut effects);
        effects.clear();
        let rule = driver::handle(&mut p, Instant::from_ticks(10), Event::Timer(RoundTimer::NextRound), &mut effects);
        assert_eq!(rule, Some("own id is the max, elected"));
        assert_eq!(p.view(&Peers(&[])).to_string(), "leader: round 2");
        let late = Event::Message { from: Port(0), msg: RoundMsg { round: 2, msg: Msg::Max { uid: rank(3) } } };
        assert_eq!(
            driver::handle(&mut p, Instant::from_ticks(11), late, &mut effects),
            Some("halted, ignore the message")
        );
    }
}
