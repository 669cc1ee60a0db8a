#![doc = include_str!("../../../docs/reference/algorithms/floodmax.md")]

use elect_core::{Check, Duration, Notice, Port, Rank, Setup, Status, When};
use serde::{Deserialize, Serialize};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Measure, Needs, Showcase, Timing};
use crate::election_checks;
use crate::params::{ParamError, ParamInfo, Params};
use crate::rounds::{RoundAlgorithm, RoundCx, Rounds, Synchronous};

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

elect_core::message_kinds!(Msg { Max => "max" });

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
                cx.notify(Notice::Elected { epoch: 0 });
            }
            return;
        }
        if self.opt && !self.changed {
            return;
        }
        let skip = if self.opt { self.came_from } else { None };
        for port in (0..self.degree).map(Port).filter(|&p| Some(p) != skip) {
            cx.send(port, Msg::Max { uid: self.max });
        }
    }

    fn status(&self) -> Status {
        match self.round {
            0 => Status::normal(None, 0),
            r if r > self.rounds => Status::normal(Some(self.max.id()), 0),
            _ => Status::election(0),
        }
    }

    fn halted(&self) -> bool {
        self.round > self.rounds
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
    elects: Elects::OneLeader,
    lockstep: true,
    params: &[DIAMETER],
    rules: &[],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "random ids, all start in round 1, D rounds",
    },
};

const OPT_FLOODMAX: Info = Info {
    name: "opt-floodmax",
    title: "OptFloodMax",
    rules: &[],
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
