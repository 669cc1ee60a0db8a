#![doc = include_str!("../../../docs/internals/member.md")]

mod asking;
mod away;
mod changing;
mod config;
mod deployed;
mod fencing;
mod incarnation;
pub mod lease;
mod leasing;
mod packet;
mod process;
mod replies;
pub mod rule;
mod state;
#[cfg(test)]
mod tests;
mod voters;

use std::sync::Arc;

use elect_core::{Duration, InT, NodeId};

pub use self::config::{BUG_PARAM, Bug, MemberConfig};
pub use self::deployed::Deployed;
pub use self::lease::{CLOCKS_PARAM, DRIFT_PARAM, LEASE_PARAM, Lease, LeaseError};
pub use self::packet::{Body, MEMBER_AND_MONITOR_KINDS, MemberTimer, Packet, Saved};
pub use self::process::Member;
pub use self::state::Leadership;
pub use self::voters::{CHANGE_TRIES, ChangeReport, ChangeState, ConfigId, VOTERS_PARAM, VoterChange, Voters};
use crate::algorithm::{Algorithm, Driver, Elects, Info, Needs};
use crate::monitor::{LeaderMonitor, MonitorConfig, MonitorNetwork};
use crate::params::Params;

/// How members are deployed besides the network they form: the leader's heartbeat period (what the leader
/// monitor's timing depends on besides the algorithm and the network), how long a member that resigned sits out,
/// and a planted flaw, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeployTiming {
    /// The leader's heartbeat period, in multiples of `T`.
    pub heartbeat: InT,
    /// How long a member that resigned sits out.
    pub resign_hold: Duration,
    /// A planted flaw, if any.
    pub bug: Option<Bug>,
    /// The member must never lead (`elect node --no-lead`): it takes no part in elections and follows the others'
    /// leader.
    pub no_lead: bool,
    /// After each start, the member sits out this long before it takes part in elections
    /// (`elect node --takeover-after`): a preferred member takes leadership back only once it has run that long.
    pub takeover_after: Duration,
    /// The lease mode, if it is on (`elect node --lease`, `--param lease=on`).
    pub lease: Option<Lease>,
    /// The voters members start with (`elect node --voters`): `None`, every member.
    pub voters: Option<Arc<[NodeId]>>,
}

impl DeployTiming {
    /// Heartbeats every `heartbeat·T`, a resign hold of `resign_hold`, no planted flaw, a member that may lead.
    pub fn new(heartbeat: InT, resign_hold: Duration) -> Self {
        Self {
            heartbeat,
            resign_hold,
            bug: None,
            no_lead: false,
            takeover_after: Duration::ZERO,
            lease: None,
            voters: None,
        }
    }
}

/// A consumer of the process a member runs, which needs to know it is one (the network runtime reads the member's
/// incarnation and leadership). Any [`Driver`] is one through [`dispatch`].
pub trait MemberDriver {
    /// What driving produces.
    type Output;
    /// Runs `member`.
    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> Self::Output;
}

/// A [`Driver`] as a [`MemberDriver`].
struct AsDriver<D>(D);

impl<D: Driver> MemberDriver for AsDriver<D> {
    type Output = D::Output;
    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> D::Output {
        self.0.drive(member)
    }
}

/// A driver of the process a member runs: hands [`MemberDriver::drive_member`] the algorithm wrapped as a member,
/// in the leader monitor if it elects one leader (the Invitation algorithm keeps groups and finds failed
/// coordinators itself). The runtime, the simulator's and the checker's `--monitor` all go through it
/// ([`dispatch_member`], which refuses the algorithms no member can run), so all three run one process.
struct Deploy<D> {
    driver: D,
    timing: DeployTiming,
    /// The network the members form, for the leader monitor's timing.
    network: MonitorNetwork,
}

impl<D: MemberDriver> Driver for Deploy<D> {
    type Output = D::Output;

    fn drive<A: Algorithm>(self, algorithm: A) -> D::Output {
        let config = MemberConfig {
            bug: self.timing.bug,
            no_lead: self.timing.no_lead,
            takeover_after: self.timing.takeover_after,
            lease: self.timing.lease,
            voters: self.timing.voters.clone(),
            ..MemberConfig::new(self.timing.heartbeat, self.timing.resign_hold)
        };
        // One member type per algorithm, not two, and none for an algorithm no member runs: whether it runs
        // inside the leader monitor, or at all, is known when it is compiled (the arms not taken are not built),
        // but for a loaded program, which says what it is when it runs.
        if const { !A::INFO_AT_RUN_TIME && not_deployable(A::INFO).is_some() } {
            unreachable!("dispatch_member refuses {}: no member runs it", A::INFO.name)
        } else if const { A::INFO_AT_RUN_TIME } {
            if algorithm.info().elects == Elects::OneLeader {
                self.monitored(algorithm, config)
            } else {
                self.driver.drive_member(Deployed::new(algorithm, config))
            }
        } else if const { matches!(A::INFO.elects, Elects::OneLeader) } {
            self.monitored(algorithm, config)
        } else {
            self.driver.drive_member(Deployed::new(algorithm, config))
        }
    }
}

impl<D: MemberDriver> Deploy<D> {
    /// `algorithm` inside the leader monitor, as the member `config` says.
    fn monitored<A: Algorithm>(self, algorithm: A, config: MemberConfig) -> D::Output {
        let monitor = MonitorConfig {
            deaf_leaders: self.timing.bug == Some(Bug::DeafLeaders),
            ..MonitorConfig::for_network(&algorithm, &self.network, self.timing.heartbeat)
        };
        self.driver.drive_member(Deployed::new(LeaderMonitor::new(algorithm, monitor), config))
    }
}

/// Looks `name` up and hands `driver` the process a member runs it as ([`dispatch_member`]): the member's own
/// parameters (`monitor-bug`, `lease`, `max-drift-ppm`, `clocks`, `voters`) are taken out of `params`, the rest go
/// to the algorithm.
pub fn dispatch<D: Driver>(
    name: &str,
    params: &Params,
    timing: DeployTiming,
    network: MonitorNetwork,
    driver: D,
) -> Result<D::Output, crate::RegistryError> {
    dispatch_member(name, params, timing, network, AsDriver(driver))
}

/// [`dispatch`] for a [`MemberDriver`]. An algorithm no member runs ([`deployable`]) is refused before anything is
/// built.
pub fn dispatch_member<D: MemberDriver>(
    name: &str,
    params: &Params,
    timing: DeployTiming,
    network: MonitorNetwork,
    driver: D,
) -> Result<D::Output, crate::RegistryError> {
    let (found, params, deploy) = deploy(name, params, timing, network, driver)?;
    found.dispatch(&params, deploy)
}

/// As [`dispatch`], but the member runs the algorithm as an [`crate::AnyAlgorithm`]: `driver` is compiled twice
/// (in the leader monitor and not), not twice per algorithm, for a driver the algorithm's own type buys no speed.
pub fn dispatch_any<D: Driver>(
    name: &str,
    params: &Params,
    timing: DeployTiming,
    network: MonitorNetwork,
    driver: D,
) -> Result<D::Output, crate::RegistryError> {
    let (found, params, deploy) = deploy(name, params, timing, network, AsDriver(driver))?;
    found.dispatch_any(&params, deploy)
}

/// What both dispatches do first: the member's own parameters taken out of `params`, and the algorithm found and
/// refused if no member runs it.
fn deploy<D: MemberDriver>(
    name: &str,
    params: &Params,
    timing: DeployTiming,
    network: MonitorNetwork,
    driver: D,
) -> Result<(crate::registry::Found, Params, Deploy<D>), crate::RegistryError> {
    let (bug, params) = Bug::take(params)?;
    let (lease, params) = Lease::take(&params, timing.heartbeat)?;
    let (voters, params) = Voters::take(&params)?;
    let timing = DeployTiming { bug, lease: lease.or(timing.lease), voters: voters.or(timing.voters), ..timing };
    let found = crate::registry::find(name)?;
    deployable(found.info())?;
    Ok((found, params, Deploy { driver, timing, network }))
}

/// How long a member of a simulated or model-checked cluster sits out after it resigns, in multiples of `T`.
pub const RESIGN_HOLD: u64 = 10;

/// The algorithms a member can run ([`deployable`]), in presentation order.
pub fn deployable_algorithms() -> impl Iterator<Item = &'static Info> {
    crate::registry::all().iter().copied().filter(|info| deployable(info).is_ok())
}

/// Why a member cannot run an algorithm ([`deployable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotDeployable {
    /// It elects a leader per connected component of a mobile network.
    #[error("{0} elects a leader per connected component of a mobile network; members form a full mesh")]
    PerComponent(&'static str),
    /// It floods a general graph.
    #[error("{0} floods a general graph; members form a full mesh, where the complete-graph and ring algorithms run")]
    GeneralGraph(&'static str),
    /// It runs in lock-step rounds from time 0.
    #[error("{0} runs in lock-step rounds from time 0; members start and restart apart")]
    Lockstep(&'static str),
}

/// Whether a member can run `info`'s algorithm: on a full mesh, an algorithm for a complete graph or a ring (over
/// the members' logical ring), electing one leader or one per group. `Err` says why not.
pub fn deployable(info: &Info) -> Result<(), NotDeployable> {
    match not_deployable(info) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// [`deployable`] as a constant function: [`Deploy`] reads it when it is compiled, so that no member is built for
/// an algorithm no member can run.
const fn not_deployable(info: &Info) -> Option<NotDeployable> {
    if matches!(info.elects, Elects::PerComponent) {
        Some(NotDeployable::PerComponent(info.name))
    } else if matches!(info.needs, Needs::Connected) {
        Some(NotDeployable::GeneralGraph(info.name))
    } else if info.lockstep {
        Some(NotDeployable::Lockstep(info.name))
    } else {
        None
    }
}
