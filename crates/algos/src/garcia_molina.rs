#![doc = include_str!("../../../docs/reference/algorithms/garcia-molina.md")]

mod config;
mod messages;
mod process;

use std::str::FromStr;

use elect_core::{Check, Duration, Property, Setup, When};

use crate::algorithm::{
    Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase, Timing,
};
use crate::election_checks;
use crate::params::{ParamError, ParamInfo, Params};

pub use config::GarciaMolina;
use messages::*;
pub use messages::{Msg, Timer};
pub use process::GarciaMolinaProcess;

const READY: ParamInfo = ParamInfo {
    name: "ready",
    values: "true|false",
    default: "true",
    help: "false: S004's simplified second phase, without REORGANIZATION and ready (members become NORMAL on \
           new-coordinator; Assertion 1 then needs no failure or recovery during an election)",
};

const CHECK: ParamInfo = ParamInfo {
    name: "check",
    values: "a number of T (at least 1)",
    default: "10",
    help: "a NORMAL coordinator asks everybody are-you-normal every check·T",
};

const RETRIES: ParamInfo = ParamInfo {
    name: "retries",
    values: "a number (0 to 8)",
    default: "2",
    help: "a new-coordinator or ready call that gets no answer within 2T+ε is sent again this many times before \
           the candidate gives up its claim (they go to processes that answered its halt a moment before, so only a \
           lost message or a crash during the election makes them retry)",
};

const REJOIN: ParamInfo = ParamInfo {
    name: "rejoin",
    values: "appoint|elect",
    default: "appoint",
    help: "what the coordinator's Check does about a weaker process that is not NORMAL: appoint: halt and appoint \
           it alone (the others stay NORMAL); elect: GM's rule, run Election, which halts and appoints everybody",
};

/// What a coordinator's Check does about a weaker process that is not NORMAL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Rejoin(bool);

impl FromStr for Rejoin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        either(s, "appoint", "elect").map(Self)
    }
}

const TIMEOUT: ParamInfo = ParamInfo {
    name: "timeout",
    values: "a number of T (at least 1)",
    default: "20",
    help: "a process that has not heard from its coordinator for timeout·T checks on it (and elects if it is gone)",
};

/// The kinds of the election's own RPCs (everything but the coordinator's Check).
pub const ELECTION_KINDS: &[&str] = &[
    "are-you-there",
    "are-you-there-reply",
    "halt",
    "halt-ack",
    "new-coordinator",
    "new-coordinator-ack",
    "ready",
    "ready-ack",
];

/// Whether a `true|false` parameter is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Flag(bool);

impl FromStr for Flag {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        either(s, "true", "false").map(Self)
    }
}

/// `on` as true, `off` as false.
fn either(s: &str, on: &str, off: &str) -> Result<bool, String> {
    match s {
        _ if s == on => Ok(true),
        _ if s == off => Ok(false),
        _ => Err(format!("'{s}' is neither {on} nor {off}")),
    }
}

static INFO: Info = Info {
    name: "garcia-molina",
    aliases: &["gm"],
    title: "Garcia-Molina's Bully",
    model: "complete graph, synchronous (delay bound T), RPCs, crash-recovery with stable storage, reliable links",
    seed: "S004 (Garcia-Molina 1982)",
    needs: Needs::Complete,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[READY, CHECK, TIMEOUT, RETRIES, REJOIN],
    rules: &[
        RECOVER,
        ANSWER_THERE,
        BACK_OFF,
        WAITED,
        HALT_WEAKER,
        OBEY,
        ADD,
        APPOINT,
        ACCEPT,
        COUNT,
        RELEASE,
        BECOME_NORMAL,
        LEAD,
        LATE_APPOINT,
        LATE_ACCEPTED,
        AGAIN,
        REFUSE,
        RESEND,
        GIVE_UP,
        CHECK_ALL,
        ANSWER_NORMAL,
        CHECK_OVER,
        STRONGER_BACK,
        REJOIN_ONE,
        OUT_OF_GROUP,
        TIMEOUT_RUN,
        MONITORED,
        ALIVE,
        SILENT,
        STALE,
        OLD_TIMER,
        NO_HAND_OVER,
    ],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: true,
        describe: "the coordinator crashed, everybody elects",
    },
};

impl Algorithm for GarciaMolina {
    type Process = GarciaMolinaProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        let Flag(ready) = params.value(&READY)?;
        let retries = params.value(&RETRIES)?;
        let Rejoin(rejoin) = params.value(&REJOIN)?;
        // A period is at least one T, and at most `params::MAX_MULTIPLE` of them.
        let (check, timeout) = (params.multiple(&CHECK, 1)?, params.multiple(&TIMEOUT, 1)?);
        let config = Self { ready, check, timeout, retries, rejoin, monitored: false };
        if retries > 8 {
            let reason = "at most 8 (each one adds 2T + ε to an election with a crashed member)".to_owned();
            return Err(ParamError::Invalid { key: RETRIES.name, value: retries.to_string(), reason });
        }
        Ok(config)
    }

    fn build(&self, setup: &Setup<'_>) -> GarciaMolinaProcess {
        GarciaMolinaProcess::new(self, setup)
    }

    fn monitored(self) -> Self {
        Self { monitored: true, ..self }
    }

    fn checks(&self) -> Vec<Check> {
        let mut checks = election_checks(When::AtEnd, true);
        checks.push(Check::always(Property::A1));
        checks.push(Check::at_end(Property::A2));
        checks
    }

    /// Four RPC rounds when every process starts; when some do not, the strongest live process may start only at
    /// its first Timeout.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        let election = Self::one_election(t);
        if facts.initiators >= facts.live { election } else { t * self.timeout + election }
    }

    /// `τ = max(check·T, timeout·T, T_wait) + (2T + ε) + 2·4(2T + ε) + retries·(2T + ε) + T` (see the module
    /// documentation).
    fn settle_time(&self, _: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        let period = (t * self.check).max(t * self.timeout).max(Self::wait(t));
        Some(period + Self::rpc(t) + Self::one_election(t) * 2 + Self::rpc(t) * u64::from(self.retries) + t)
    }

    /// When every process starts, each probes every stronger id at most once before the strongest live process
    /// halts it (S004's cascade); otherwise the processes that started probe again until the strongest live one
    /// reaches its first Timeout, and no closed form applies.
    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        // Only processes up at time 0 initiate, and without later crashes they are the live ones.
        if f.crashes_during_run > 0 || f.initiators < f.live {
            return Vec::new();
        }
        // Probes and answers, then the winner's halts to every weaker id and its RPCs to the L - 1 others.
        let (n, l) = (f.nodes, f.live.max(1));
        let (per_member, formula) = if self.ready { (5, "N+5L-6") } else { (3, "N+3L-4") };
        let value = n * (n - 1) / 2 + l * (l - 1) / 2 + (n - 1) + per_member * (l - 1);
        vec![Bound {
            name: format!("election RPCs when all start: at most N(N-1)/2+L(L-1)/2+{formula}"),
            measure: Measure::Kinds(ELECTION_KINDS),
            value,
        }]
    }
}
