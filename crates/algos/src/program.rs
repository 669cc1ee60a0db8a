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
pub(crate) mod loaded;
mod names;
mod native;
mod process;
mod protocol;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use elect_core::{Check, Duration, NodeId, Setup, When, Winner};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Needs, Showcase, Timing};
use crate::election_checks;
use crate::params::{ParamError, Params};

pub use loaded::{
    Loader, PREFIX, ProgramError, first_failure, install, is_program, loaded_names, seal, set_loader, shutdown_all,
};
pub use names::NameError;
pub use native::Native;
pub use process::{MAX_BODY_BYTES, MAX_STATE_BYTES, MAX_TIMER_T, ProgramMsg, ProgramProcess, ProgramTimer};
pub use protocol::{Described, PROTOCOL};

/// Carries one request line to the program and brings back its answer line: elect's side of the protocol's
/// transport. A failure (the program exited, hung past its limit, answered a line too long) is said in words.
pub trait Stepper: Send + Sync {
    /// The answer to `request` (one line of JSON, without its newline).
    fn call(&self, request: &str) -> Result<String, String>;

    /// Ends the program (a child process is killed, if it still runs, and reaped). Nothing is asked after it.
    fn shutdown(&self) {}

    /// The bounds a run is held to, when the program states them (an algorithm written in Rust does; a program
    /// in another language has them stated by the user, as `elect grade` and `elect sweep --bound` do).
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        let _ = facts;
        Vec::new()
    }

    /// The properties it promises, when it says (by default, those of every election).
    fn checks(&self) -> Option<Vec<Check>> {
        None
    }
}

/// How many of the steps before a failure it keeps, to show what led to it.
const RECENT: usize = 8;

/// elect asks each of the first `RECHECK_FIRST` steps twice, and every `RECHECK_EVERY`th after, and compares the
/// answers: a program whose answer is not a function of its request is stopped before a run can mislead anyone.
const RECHECK_FIRST: u64 = 64;
const RECHECK_EVERY: u64 = 64;

/// What went wrong with a program, where: the process, the event it was given, the step (the how-manieth request
/// of elect's process), the problem, and the steps just before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The program, as it was named (`exec:./ring.py`).
    pub program: String,
    /// The process whose step failed.
    pub node: NodeId,
    /// The event, as it was sent.
    pub event: String,
    /// The request's `seq`.
    pub step: u64,
    /// What was wrong.
    pub problem: String,
    /// The steps before it, oldest first: `step 12: process 3, given {...}`.
    pub recent: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed at step {}: process {}, given {}: {}",
            self.program, self.step, self.node, self.event, self.problem
        )?;
        if !self.recent.is_empty() {
            write!(f, "\nthe steps before it:")?;
            for line in &self.recent {
                write!(f, "\n  {line}")?;
            }
        }
        Ok(())
    }
}

/// What every run of one loaded program shares: the stepper, what the program said of itself, the steps asked so
/// far, and the first failure.
pub(crate) struct Loaded {
    pub(crate) stepper: Box<dyn Stepper>,
    pub(crate) described: Described,
    /// What the drivers know of it: its name as given, its needs, its rules.
    pub(crate) info: &'static Info,
    steps: AtomicU64,
    recent: Mutex<VecDeque<String>>,
    failure: Mutex<Option<Failure>>,
}

impl Loaded {
    pub(crate) fn failed(&self) -> bool {
        self.failure.lock().map_or(true, |f| f.is_some())
    }

    /// The next request's `seq` (from 1: `init` is 0), and whether to ask it twice.
    pub(crate) fn next_step(&self) -> (u64, bool) {
        let seq = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        (seq, seq <= RECHECK_FIRST || seq % RECHECK_EVERY == 0)
    }

    /// Notes a step that went well, for the account of a later failure.
    pub(crate) fn done(&self, seq: u64, node: NodeId, event: &str) {
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(format!("step {seq}: process {node}, given {}", shorten(event)));
        }
    }

    /// Keeps the first failure: after it, every process does nothing.
    pub(crate) fn fail(&self, node: NodeId, seq: u64, event: String, problem: String) {
        let recent = self.recent.lock().map(|r| r.iter().cloned().collect()).unwrap_or_default();
        if let Ok(mut slot) = self.failure.lock() {
            slot.get_or_insert(Failure { program: self.info.name.to_owned(), node, event, step: seq, problem, recent });
        }
    }

    pub(crate) fn failure(&self) -> Option<Failure> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }
}

/// At most 200 bytes of `text`, cut at a character boundary.
fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let cut = (0..=MAX).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    format!("{}…", &text[..cut])
}

/// What every process of one run shares: the loaded program and the run's parameters.
pub(crate) struct Shared {
    pub(crate) loaded: Arc<Loaded>,
    /// The run's parameters, as a JSON object, for the setup of each process.
    pub(crate) params: serde_json::Value,
}

/// An algorithm that a program runs (see the module documentation).
#[derive(Clone)]
pub struct Program {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program").field("name", &self.shared.loaded.described.name).finish_non_exhaustive()
    }
}

impl Program {
    /// Asks the program through `stepper` what it is (the protocol's `init`), and registers the names it gives;
    /// `name` is how runs name it (`exec:./ring.py`). The parameters are handed to every process in its setup.
    pub fn load(name: &str, stepper: Box<dyn Stepper>, params: &Params) -> Result<Self, ProgramError> {
        Ok(Self::with_params(loaded::load(name, stepper)?, params))
    }

    pub(crate) fn with_params(loaded: Arc<Loaded>, params: &Params) -> Self {
        Self { shared: Arc::new(Shared { loaded, params: protocol::params_json(params) }) }
    }

    /// What the program said of itself.
    pub fn described(&self) -> &Described {
        &self.shared.loaded.described
    }

    /// The first failure of the program, in this run or an earlier one, if any.
    pub fn failure(&self) -> Option<Failure> {
        self.shared.loaded.failure()
    }
}

/// What a program is before it says more of itself.
pub(crate) static INFO: Info = Info {
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
    const INFO_AT_RUN_TIME: bool = true;

    fn info(&self) -> &'static Info {
        self.shared.loaded.info
    }

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
        self.shared.loaded.stepper.checks().unwrap_or_else(|| election_checks(When::Always, true))
    }

    fn winner(&self) -> Winner {
        Winner::StrongestLiveInitiator
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // A token round and an announcement round on a ring; ample elsewhere.
        t * (3 * facts.nodes)
    }

    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        self.shared.loaded.stepper.bounds(facts)
    }
}
