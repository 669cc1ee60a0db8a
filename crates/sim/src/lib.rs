//! The deterministic discrete-event simulator of elect.
//!
//! A run is a [`SimConfig`] (what the user typed) resolved into a [`Scenario`] (ids, ranks, initiators and faults
//! by position) and driven by a [`Sim`], monomorphized for the algorithm. Events are ordered by (time, class,
//! insertion order), where faults come before commands, commands before messages and messages before timers at
//! equal times; links are FIFO; every random choice comes from one root seed, split into independent ChaCha8
//! streams. The same configuration gives the same trace, bit for bit.
//!
//! The scenario itself (configuration, topologies, faults, scenario files, the trace schema) is `elect_scenario`'s.
//!
//! ```
//! use elect_scenario::{Ids, SimConfig};
//! use elect_sim::simulate;
//!
//! let mut cfg = SimConfig::new("chang-roberts", 8);
//! cfg.ids = Ids::Descending;
//! let report = simulate(&cfg, None).unwrap();
//! assert_eq!(report.messages.kind("token"), 36);
//! assert_eq!(report.leader.map(|l| l.0), Some(8));
//! assert!(report.ok());
//! ```

#[cfg(test)]
mod any_tests;
mod engine;
mod event;
mod expect;
mod finish;
mod judge;
mod mobility;
mod network;
mod queue;
mod report;
pub mod shard;
mod sweep;
mod timers;
mod trace;

use std::io::Write;

use elect_algos::member;
use elect_algos::monitor::Bare;
use elect_algos::{Algorithm, Driver, dispatch, dispatch_synchronized};
use elect_scenario::{ConfigError, Scenario, SimConfig, Time};

pub use engine::bare::bare_event_loop;
pub use engine::{Progress, ProgressFn, RunError, Sim};
pub use expect::{JudgeError, Judgement, judge};
pub use report::{
    BoundReport, FinalStatus, Messages, MobilityReport, Properties, Report, SyncReport, Verdict, ViolationReport,
};
pub use shard::Shard;
pub use sweep::{
    COLUMNS_FIRST, COLUMNS_LAST, CsvWriter, Row, SizeError, Sizes, Streamed, Sweep, SweepProgress, kind_column,
    write_csv,
};

/// Why a run could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The configuration is invalid (exit status 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The trace could not be written.
    #[error("cannot write the trace")]
    Trace(#[from] std::io::Error),
    /// Virtual time would pass the largest representable instant.
    #[error("virtual time overflowed at {0}: use shorter delays or fewer events")]
    TimeOverflow(Time),
}

/// What watches a run besides its report.
#[derive(Default)]
pub struct Observers {
    /// Where to write the JSON-lines trace.
    pub trace: Option<Box<dyn Write + Send>>,
    /// What to call every few million events.
    pub progress: Option<ProgressFn>,
}

struct Run {
    scenario: Scenario,
    observers: Observers,
}

impl From<RunError> for SimError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Trace(e) => Self::Trace(e),
            RunError::TimeOverflow(t) => Self::TimeOverflow(t),
        }
    }
}

impl Driver for Run {
    type Output = Result<Report, SimError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.scenario.ids).map_err(ConfigError::from)?;
        self.simulate(algorithm)
    }
}

impl Run {
    fn simulate<A: Algorithm>(mut self, algorithm: A) -> Result<Report, SimError> {
        // An algorithm that never falls silent (periodic checks, heartbeats) runs, unless told otherwise, until it
        // must have settled after the last fault, so that its "at end" properties are judged.
        if self.scenario.config.until.is_none() {
            // Judged with as few processes live as the faults allow, the most it can take.
            let facts = self.scenario.facts();
            let crashes = (self.scenario.crashes.len() + self.scenario.config.crash_leader_at.len()) as u64;
            let facts = elect_algos::Facts { live: facts.nodes.saturating_sub(crashes).max(1), ..facts };
            let settle = algorithm.settle_time(&facts, self.scenario.delay_bound);
            let last_fault = self.scenario.fault_times().max().unwrap_or(0);
            self.scenario.config.until = settle.map(|tau| last_fault.saturating_add(tau.ticks()));
        }
        let mut sim = Sim::new(algorithm, self.scenario);
        if let Some(out) = self.observers.trace {
            sim.trace_to(out);
        }
        if let Some(progress) = self.observers.progress {
            sim.on_progress(progress);
        }
        sim.run()?;
        Ok(sim.report())
    }
}

/// Validates `config`, runs it, and reports; with `trace`, writes the JSON-lines trace there.
pub fn simulate(config: &SimConfig, trace: Option<Box<dyn Write + Send>>) -> Result<Report, SimError> {
    simulate_with(config, Observers { trace, progress: None })
}

/// [`simulate`] with every observer.
pub fn simulate_with(config: &SimConfig, observers: Observers) -> Result<Report, SimError> {
    let scenario = Scenario::build(config)?;
    let run = Run { scenario, observers };
    match (run.scenario.synchronizer, config.monitor.map(|m| (m.heartbeat, m.bare))) {
        (Some(choice), _) => {
            dispatch_synchronized(&config.algorithm, &config.params, choice, run).map_err(ConfigError::from)?
        }
        (None, Some((heartbeat, true))) => {
            let network = run.scenario.monitor_network();
            dispatch(&config.algorithm, &config.params, Bare { driver: run, network, heartbeat })
                .map_err(ConfigError::from)?
                .map_err(ConfigError::BareMonitor)?
        }
        (None, Some((heartbeat, false))) => {
            let network = run.scenario.monitor_network();
            let hold = network.delay_bound * member::RESIGN_HOLD;
            member::dispatch(
                &config.algorithm,
                &config.params,
                member::DeployTiming::new(heartbeat, hold),
                network,
                run,
            )
            .map_err(ConfigError::from)?
        }
        (None, None) => dispatch(&config.algorithm, &config.params, run).map_err(ConfigError::from)?,
    }
}
