#![doc = include_str!("../../../docs/internals/monitor.md")]

mod carry_over;
mod config;
mod epochs;
mod messages;
mod poll;
mod pre_vote;
mod process;
mod repair;
mod ring;
pub mod rule;
mod suspicion;
#[cfg(test)]
mod tests;
mod watch;

use elect_core::{Check, Duration, InT, NodeId, Property, Setup, Winner};

use self::config::Fixed;
pub use self::config::{MonitorConfig, MonitorNetwork};
pub use self::epochs::RESERVED_ROUNDS;
pub(crate) use self::messages::MONITOR_KINDS;
pub use self::messages::{MonitorMsg, MonitorTimer};
pub use self::poll::{KEPT, PRE_VOTE_TRIES};
pub use self::process::Monitored;
use crate::algorithm::{Algorithm, Bound, Driver, Facts, Info, Measure};
use crate::params::{ParamError, Params};

/// An algorithm wrapped in the leader monitor.
#[derive(Clone, Debug)]
pub struct LeaderMonitor<A> {
    /// The election algorithm.
    pub inner: A,
    /// The monitor's timing.
    pub config: MonitorConfig,
}

/// A driver of an algorithm inside the leader monitor alone (`--bare-monitor`), timed for `network`. An algorithm
/// that elects the earliest initiator cannot run in it: `Err` says why.
pub struct Bare<D> {
    /// The driver.
    pub driver: D,
    /// What the monitor's timing depends on.
    pub network: MonitorNetwork,
    /// The heartbeat period, in multiples of `T`.
    pub heartbeat: InT,
}

impl<D: Driver> Driver for Bare<D> {
    type Output = Result<D::Output, crate::algorithm::ElectsEarliest>;

    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        if algorithm.winner() == Winner::EarliestInitiator {
            return Err(crate::algorithm::ElectsEarliest(algorithm.info().name));
        }
        let config = MonitorConfig::for_network(&algorithm, &self.network, self.heartbeat);
        Ok(self.driver.drive(LeaderMonitor::new(algorithm, config)))
    }
}

impl<A: Algorithm> LeaderMonitor<A> {
    /// `inner`, re-elected when its leader fails, with `config`'s timing.
    pub fn new(inner: A, config: MonitorConfig) -> Self {
        Self { inner: inner.monitored(), config }
    }
}

impl<A: Algorithm> Algorithm for LeaderMonitor<A> {
    type Process = Monitored<A>;
    const INFO: &'static Info = A::INFO;
    const INFO_AT_RUN_TIME: bool = A::INFO_AT_RUN_TIME;

    fn info(&self) -> &'static Info {
        self.inner.info()
    }

    /// The algorithm's own parameters, with heartbeats every `2T` and a one-hop timeout.
    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(A::from_params(params)?, MonitorConfig::new(InT(2), 1, InT(5))))
    }

    fn validate(&self, ids: &[NodeId]) -> Result<(), ParamError> {
        self.inner.validate(ids)
    }

    fn build(&self, setup: &Setup<'_>) -> Monitored<A> {
        Monitored::new(self.inner.clone(), Fixed::new(self.inner.info().needs, &self.config, setup))
    }

    /// The algorithm's properties, except that its safety is judged once the run has settled: between a
    /// leader's crash and its detection, followers still name the dead leader. P-Unique holds per epoch.
    fn checks(&self) -> Vec<Check> {
        let mut checks: Vec<Check> = self
            .inner
            .checks()
            .into_iter()
            .map(|c| if c.property == Property::Safety { Check::at_end(Property::Safety) } else { c })
            .collect();
        if !checks.contains(&Check::always(Property::Uniqueness)) {
            checks.push(Check::always(Property::Uniqueness));
        }
        checks
    }

    /// Every live process takes part in a re-election (but one named as failed, which opens the next), so the
    /// strongest live process wins.
    fn winner(&self) -> Winner {
        Winner::StrongestLive
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        self.inner.election_time(facts, t)
    }

    /// A leader's crash is noticed within a heartbeat period plus the timeout; then one election, and its first
    /// heartbeat.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        // The weakest follower waits a stagger per stronger process before it suspects.
        let stagger = self.config.stagger * facts.nodes.saturating_sub(1);
        let detect = self.config.heartbeat + self.config.timeout + stagger + self.config.grace + 1;
        // On a logical ring, a message may wait 2T + ε at each dead process, once in each direction.
        let skips = (t * 2 + Duration::TICK) * (2 * facts.nodes.saturating_sub(facts.live));
        Some(t * detect + self.inner.election_time(facts, t) + skips)
    }

    /// A re-election has no closed form; the bounds of one election apply to runs without faults, not counting
    /// heartbeats.
    fn bounds(&self, facts: &Facts) -> Vec<Bound> {
        if facts.crashes_during_run > 0 {
            return Vec::new();
        }
        // Every process that hears of the election takes part in it.
        let mut bounds = self.inner.bounds(&Facts { initiators: facts.nodes, ..*facts });
        for bound in &mut bounds {
            if bound.measure == Measure::Messages {
                bound.measure = Measure::AllBut(MONITOR_KINDS);
            }
        }
        bounds
    }
}
