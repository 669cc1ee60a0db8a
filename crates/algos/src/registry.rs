//! The algorithms by name, and how a driver gets a concrete, statically dispatched algorithm from a name.
//!
//! A driver (the simulator, the model checker, the runtime) implements [`Driver`]; [`dispatch`] looks the name up,
//! validates the parameters, and calls [`Driver::drive`] with the algorithm's configuration type, so the driver's
//! hot loop is monomorphized for each algorithm: no boxing, no dynamic calls per message.

use std::fmt::Debug;

use elect_core::{Check, Duration, NodeId, Process, Setup, Winner};

use crate::params::{ParamError, ParamInfo, Params};
use crate::synchronizers::Choice;

/// The topology an algorithm's model needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// A ring; the process is given its [`elect_core::RingPorts`].
    Ring,
    /// A complete graph: every process can send to every other.
    Complete,
    /// Any connected graph; the process knows only its neighbours.
    Connected,
}

impl Needs {
    /// The topology name the algorithm runs on by default.
    pub fn natural_topology(self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Complete => "complete",
            Self::Connected => "any connected graph (default random-regular:4)",
        }
    }
}

/// Whether the algorithm relies on a known bound on message delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Correct under any finite delays.
    Asynchronous,
    /// Uses timeouts derived from a known delay bound `T` (a perfect failure detector when delays respect it).
    Synchronous,
}

/// What an algorithm elects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elects {
    /// One leader for every process.
    OneLeader,
    /// One coordinator per group, several groups side by side (the Invitation algorithm): it finds failures
    /// and merges groups by itself, so the leader monitor does not apply.
    PerGroup,
    /// One leader per connected component of the network (mobile ad hoc election).
    PerComponent,
}

/// Who initiates in the algorithm's showcase scenario (the `tour`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initiators {
    /// Every process.
    All,
    /// One process, chosen by the run's seed.
    OneRandom,
    /// The weakest live process.
    Weakest,
    /// The neighbours of the crashed old leader (the strongest process, crashed from the start): the processes
    /// that notice its failure (Chow, Luo and Newman-Wolfe's failure-driven re-election).
    NeighborsOfCrashed,
}

/// The scenario that shows an algorithm at its most characteristic.
#[derive(Clone, Copy, Debug)]
pub struct Showcase {
    /// Who initiates.
    pub initiators: Initiators,
    /// Whether the strongest process is crashed from the start (the old coordinator failed).
    pub crash_strongest: bool,
    /// One line describing the scenario.
    pub describe: &'static str,
}

/// What `elect list` and the drivers know about an algorithm.
#[derive(Debug)]
pub struct Info {
    /// The canonical name (CLI, JSON, registry).
    pub name: &'static str,
    /// Accepted short names.
    pub aliases: &'static [&'static str],
    /// The name people know it by.
    pub title: &'static str,
    /// Network and failure model, in a phrase.
    pub model: &'static str,
    /// The seed document(s) it comes from.
    pub seed: &'static str,
    /// The topology it needs.
    pub needs: Needs,
    /// Whether it relies on a delay bound.
    pub timing: Timing,
    /// One leader, or one coordinator per group.
    pub elects: Elects,
    /// Whether it runs in lock-step rounds that every process starts together at time 0 (synchronous
    /// algorithms: every process initiates, no leader monitor restarts it).
    pub lockstep: bool,
    /// Parameters it takes.
    pub params: &'static [ParamInfo],
    /// Its showcase scenario.
    pub showcase: Showcase,
}

/// Facts about a run that closed-form bounds are functions of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// `n`: processes.
    pub nodes: u64,
    /// `m`: undirected links.
    pub edges: u64,
    /// `k`: initiators.
    pub initiators: u64,
    /// Processes alive at the end.
    pub live: u64,
    /// Crashes after time 0 (each can start another election).
    pub crashes_during_run: u64,
    /// `D`, the diameter, when the driver knows it.
    pub diameter: Option<u64>,
    /// The largest eccentricity among the initiators, when the driver knows it.
    pub initiator_eccentricity: Option<u64>,
}

impl Facts {
    /// The facts of a failure-free run on `nodes` processes and `edges` links with `initiators` initiators.
    pub fn new(nodes: u64, edges: u64, initiators: u64) -> Self {
        Self {
            nodes,
            edges,
            initiators,
            live: nodes,
            crashes_during_run: 0,
            diameter: None,
            initiator_eccentricity: None,
        }
    }
}

/// What a bound constrains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// All messages.
    Messages,
    /// Messages of the listed kinds.
    Kinds(&'static [&'static str]),
    /// Messages of every kind but the listed ones.
    AllBut(&'static [&'static str]),
}

/// A closed-form bound from ALGORITHMS.md, evaluated for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The formula and its meaning, e.g. "worst case n(n+1)/2 tokens".
    pub name: String,
    /// What is counted.
    pub measure: Measure,
    /// The bound's value for this run: the count must not exceed it.
    pub value: u64,
}

/// An election algorithm: its configuration (parsed parameters) and how to build its processes.
pub trait Algorithm: Clone + Debug + Send + Sync + 'static {
    /// The per-process state machine.
    type Process: Process;

    /// What the registry knows about it.
    const INFO: &'static Info;

    /// Builds the configuration from validated parameters.
    fn from_params(params: &Params) -> Result<Self, ParamError>;

    /// Checks the parameters against the run's ids (a parameter naming a process that does not exist).
    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        let _ = ids;
        Ok(())
    }

    /// Builds one process.
    fn build(&self, setup: &Setup<'_>) -> Self::Process;

    /// The properties it promises, and when.
    fn checks(&self) -> Vec<Check>;

    /// An upper bound on how long one election takes, from its first initiation until every process knows the
    /// leader, when no process fails and every message takes at most `t`. Used to size what waits for an
    /// election (the leader monitor's settling time).
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration;

    /// How long after the last fault the algorithm is guaranteed to have settled, given the delay bound `T`
    /// processes are told (the `τ` of Stoller's A4′): "at end" properties of a run stopped at `--until` are
    /// judged only if it was stable that long. `None` for algorithms that settle by falling silent.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let _ = (facts, delay_bound);
        None
    }

    /// Whether its processes send only on their ring's `next` port (unidirectional ring algorithms). The model
    /// checker's partial-order reduction relies on it, and stops with an error if a process sends elsewhere.
    fn one_way(&self) -> bool {
        false
    }

    /// Whom it elects.
    fn winner(&self) -> Winner {
        Winner::StrongestLive
    }

    /// Its closed-form message bounds for a run; the first is the headline bound.
    fn bounds(&self, facts: &Facts) -> Vec<Bound>;

    /// When it runs on a synchronizer: what the synchronizer's set-up built, from the processes at the end of a
    /// run (`None` for every other algorithm).
    fn synchronizer(&self, processes: &[Self::Process]) -> Option<crate::synchronizers::SyncSummary> {
        let _ = processes;
        None
    }
}

/// A consumer of algorithms: the simulator, the model checker, the runtime.
pub trait Driver {
    /// What driving produces.
    type Output;
    /// Runs algorithm `algorithm`.
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output;
}

/// A name that is not an algorithm, or parameters it does not accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// No algorithm by that name.
    #[error("unknown algorithm '{name}' (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The canonical names.
        known: String,
    },
    /// Bad parameters.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A synchronizer was asked to run an algorithm that is not written in rounds.
    #[error("{name} is not written in rounds, so no synchronizer can run it (those that are: {known})")]
    NotInRounds {
        /// The algorithm's name.
        name: &'static str,
        /// The algorithms written in rounds.
        known: String,
    },
}

macro_rules! registry {
    ($($algorithm:ty),* $(,)?) => {
        /// Every algorithm, in presentation order.
        pub fn all() -> &'static [&'static Info] {
            &[$(<$algorithm as Algorithm>::INFO),*]
        }

        fn drive_named<D: Driver>(info: &Info, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
            $(
                if info.name == <$algorithm as Algorithm>::INFO.name {
                    return Ok(driver.drive(<$algorithm>::from_params(params)?));
                }
            )*
            unreachable!("algorithm {} is listed but not dispatched", info.name)
        }
    };
}

registry!(
    crate::bully::Bully,
    crate::garcia_molina::GarciaMolina,
    crate::lelann::LeLann,
    crate::chang_roberts::ChangRoberts,
    crate::ring_participant::RingParticipant,
    crate::hirschberg_sinclair::HirschbergSinclair,
    crate::franklin::Franklin,
    crate::peterson::Peterson,
    crate::invitation::Invitation,
    crate::floodmax::FloodMax,
    crate::floodmax::OptFloodMax,
    crate::sync_lcr::SyncLcr,
    crate::ad_hoc::AdHoc,
    crate::timestamp_flooding::TimestampFlooding,
);

/// The algorithms written in rounds, which the synchronizers run.
macro_rules! round_registry {
    ($($algorithm:ty),* $(,)?) => {
        /// Whether the algorithm called `name` (canonical) is written in rounds, so that a synchronizer can run it.
        pub fn runs_on_synchronizers(name: &str) -> bool {
            [$(<$algorithm as Algorithm>::INFO.name),*].contains(&name)
        }

        fn drive_synchronized<D: Driver>(
            info: &Info,
            params: &Params,
            choice: Choice,
            driver: D,
        ) -> Result<D::Output, RegistryError> {
            $(
                if info.name == <$algorithm as Algorithm>::INFO.name {
                    return Ok(crate::synchronizers::drive(<$algorithm>::from_params(params)?, choice, driver));
                }
            )*
            Err(RegistryError::NotInRounds {
                name: info.name,
                known: [$(<$algorithm as Algorithm>::INFO.name),*].join(", "),
            })
        }
    };
}

round_registry!(crate::floodmax::FloodMax, crate::floodmax::OptFloodMax, crate::sync_lcr::SyncLcr);

/// Looks `name` up, validates `params`, and hands the algorithm, run on synchronizer `choice`, to `driver`.
pub fn dispatch_synchronized<D: Driver>(
    name: &str,
    params: &Params,
    choice: Choice,
    driver: D,
) -> Result<D::Output, RegistryError> {
    let info = lookup(name)?;
    params.check_known(info.name, info.params)?;
    drive_synchronized(info, params, choice, driver)
}

/// The algorithm called `name` (canonical or alias).
pub fn lookup(name: &str) -> Result<&'static Info, RegistryError> {
    let name = name.trim().to_ascii_lowercase();
    all().iter().copied().find(|info| info.name == name || info.aliases.contains(&name.as_str())).ok_or_else(|| {
        RegistryError::Unknown { name, known: all().iter().map(|i| i.name).collect::<Vec<_>>().join(", ") }
    })
}

/// Looks `name` up, validates `params`, and hands the algorithm to `driver`.
pub fn dispatch<D: Driver>(name: &str, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
    let info = lookup(name)?;
    params.check_known(info.name, info.params)?;
    drive_named(info, params, driver)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Name;
    impl Driver for Name {
        type Output = &'static str;
        fn drive<A: Algorithm>(self, _: A) -> &'static str {
            A::INFO.name
        }
    }

    #[test]
    fn every_listed_algorithm_dispatches_to_itself_by_name_and_alias() {
        for info in all() {
            assert_eq!(dispatch(info.name, &Params::new(), Name).unwrap(), info.name);
            for alias in info.aliases {
                assert_eq!(dispatch(alias, &Params::new(), Name).unwrap(), info.name);
            }
        }
    }

    #[test]
    fn unknown_names_and_parameters_are_refused() {
        let err = dispatch("paxos", &Params::new(), Name).unwrap_err();
        assert!(err.to_string().starts_with("unknown algorithm 'paxos' (known: bully,"), "{err}");
        let params = Params::parse(["nope=1"]).unwrap();
        let err = dispatch("chang-roberts", &params, Name).unwrap_err();
        assert!(err.to_string().contains("chang-roberts has no parameter 'nope'"), "{err}");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> =
            all().iter().flat_map(|i| std::iter::once(i.name).chain(i.aliases.iter().copied())).collect();
        let len = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), len);
    }
}
