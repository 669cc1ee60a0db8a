//! An algorithm written as a program in any language, which speaks elect's process protocol (version
//! [`PROTOCOL`]): a pure step function over JSON lines. elect owns each process's state; every request carries one
//! process's state, its setup and one event, and the answer carries the new state and the effects (sends to ports,
//! timers in units of `T`, durable state, the status, the rule that fired). One program serves every process of
//! a run, and the checker branches and compares states as it does a built-in algorithm's.
//!
//! This module is the pure side: the protocol's types, the process that stands for the program in a driver
//! ([`ProgramProcess`]), and the algorithm ([`Program`]). It does no I/O: a [`Stepper`] carries a request to the
//! program and brings its answer back, and the crate that starts programs provides one.

pub mod example;
mod names;
mod process;
mod protocol;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::{Arc, Mutex};

use elect_core::{Check, Duration, NodeId, Setup, When, Winner};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Needs, Showcase, Timing};
use crate::election_checks;
use crate::params::{ParamError, Params};

pub use names::NameError;
pub use process::{MAX_BODY_BYTES, MAX_STATE_BYTES, MAX_TIMER_T, ProgramMsg, ProgramProcess, ProgramTimer};
pub use protocol::{Described, PROTOCOL};

/// Carries one request line to the program and brings back its answer line: elect's side of the protocol's
/// transport. A failure (the program exited, hung past its limit, answered a line too long) is said in words.
pub trait Stepper: Send + Sync {
    /// The answer to `request` (one line of JSON, without its newline).
    fn call(&self, request: &str) -> Result<String, String>;
}

/// What went wrong with a program, where: the process, the event it was given, and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The process whose step failed.
    pub node: NodeId,
    /// The event, as it was sent.
    pub event: String,
    /// What was wrong.
    pub problem: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "process {}, given {}: {}", self.node, self.event, self.problem)
    }
}

/// What every process of a run shares: the stepper, what the program said of itself, and the first failure.
pub(crate) struct Shared {
    pub(crate) stepper: Box<dyn Stepper>,
    pub(crate) described: Described,
    /// The run's parameters, as a JSON object, for the setup of each process.
    pub(crate) params: serde_json::Value,
    failure: Mutex<Option<Failure>>,
}

impl Shared {
    pub(crate) fn failed(&self) -> bool {
        self.failure.lock().map_or(true, |f| f.is_some())
    }

    /// Keeps the first failure: after it, every process does nothing.
    pub(crate) fn fail(&self, failure: Failure) {
        if let Ok(mut slot) = self.failure.lock() {
            slot.get_or_insert(failure);
        }
    }
}

/// An algorithm that a program runs (see the module documentation).
#[derive(Clone)]
pub struct Program {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program").field("name", &self.shared.described.name).finish_non_exhaustive()
    }
}

impl Program {
    /// Asks the program through `stepper` what it is (the protocol's `init`), and registers the names it gives. The
    /// parameters are handed to every process in its setup.
    pub fn load(stepper: Box<dyn Stepper>, params: &Params) -> Result<Self, String> {
        let answer = stepper.call(&protocol::init_request())?;
        let described = protocol::parse_init(&answer)?;
        names::register(&described).map_err(|e| e.to_string())?;
        let params = protocol::params_json(params);
        Ok(Self { shared: Arc::new(Shared { stepper, described, params, failure: Mutex::new(None) }) })
    }

    /// What the program said of itself.
    pub fn described(&self) -> &Described {
        &self.shared.described
    }

    /// The first failure of the program in this run, if any.
    pub fn failure(&self) -> Option<Failure> {
        self.shared.failure.lock().ok().and_then(|f| f.clone())
    }
}

static INFO: Info = Info {
    name: "program",
    aliases: &[],
    title: "an algorithm written as a program (the process protocol)",
    model: "the program's own",
    seed: "",
    needs: Needs::Connected,
    timing: Timing::Asynchronous,
    links: LinkOrder::Fifo,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
    showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "the program's election" },
};

impl Algorithm for Program {
    type Process = ProgramProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Err(ParamError::Invalid {
            key: "algorithm",
            value: "program".to_owned(),
            reason: "a program is loaded from its path, not from parameters".to_owned(),
        })
    }

    fn validate(&self, _: &[NodeId]) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(&self, setup: &Setup<'_>) -> ProgramProcess {
        ProgramProcess::new(self.shared.clone(), setup)
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn winner(&self) -> Winner {
        Winner::StrongestLiveInitiator
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // A token round and an announcement round on a ring; ample elsewhere.
        t * (3 * facts.nodes)
    }

    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}
