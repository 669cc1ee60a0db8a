//! Leases (`--param lease=on`, `elect node --lease`): leadership held only while a majority backs it, so that no two
//! members say they lead at one instant, even across a partition. A member the algorithm has kept leader for the
//! settling wait asks every member to back it, in numbered rounds (`lease`), every heartbeat period while it holds a
//! lease and every `T` while it seeks one. A member backs (`lease-ack`) only the member it last backed, or anyone once
//! that promise has run out: it promises, on its own clock, not to back anyone else for `L(1+ρ)` after it received the
//! round. The leader counts itself as any member does. Once a majority backed a round, the leader holds the lease until
//! `L/(1+ρ)` after it *sent* that round, on its own clock: before any promise of that majority runs out, as long as no
//! clock runs faster or slower than real time by more than the factor `1+ρ` (`max-drift-ppm`). Two majorities share a
//! member, which backs one leader at a time: no two leases overlap. In the simulator and the checker, `clocks=drifting`
//! lets the hold and the promise run for any real duration a clock within the bound may make of them
//! (`LeaseTiming::span`), so that a run checks that arithmetic too.
//!
//! A member grants itself a fencing epoch only while it holds a lease, and its grant (and the leadership it shows)
//! ends when the lease runs out, before anything else it does on waking: a leader cut off from the majority, or
//! paused, stops saying it leads by itself. A member that starts backs nobody for `L(1+ρ)`: it may have promised
//! before it stopped. Rounds are numbered so that a late answer to an old round is never taken for an answer to a
//! new one, whatever the network's delays.
//!
//! A leader that holds no lease does not pass for a live one. Once its lease has lapsed it sends its algorithm
//! nothing (no heartbeat vouches for a lease it does not hold), so that the others' leader monitor suspects it and
//! its pre-vote finds nobody who still hears it; it asks for the lease again every `T` for a short grace (`2T`),
//! and then goes quiet: it asks for nothing more for a promise time, or until the algorithm names it leader anew
//! (in another epoch), and then asks again as a new leader. A new leader asks for as long as the others' promises to
//! a leader before it may take to run out, and a round trip more, and goes quiet too if no majority backed it by
//! then. So while a majority can talk, a leader that hears
//! none of it (a one-way fault, a half-broken link) gives way to one of the majority within a lease, a grace, and
//! one failover of the leader monitor.

use std::collections::BTreeSet;

use elect_core::{Duration, Epoch, InT, NodeId, Span};

use crate::params::{ParamError, ParamInfo, Params};

/// The lease mode's settings: the lease length `L`, in multiples of `T`, and the bound on clock-rate drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The lease length `L`, in multiples of the delay bound `T`.
    pub length: InT,
    /// How far any member's clock may run faster or slower than real time, in parts per million (`ρ·10⁶`).
    pub drift_ppm: u32,
    /// Whether the driver's clocks drift (`clocks=drifting`, in the simulator and the checker): each lease timer
    /// then asks the driver for any real duration its length may take on a clock within the drift bound, so that
    /// a run explores the drift the bound allows. A real member's clock drifts on its own: the runtime never sets
    /// it.
    pub drifting: bool,
}

/// The parameter that turns leases on (`--param lease=on`, or a length in `T`).
pub const LEASE_PARAM: ParamInfo = ParamInfo {
    name: "lease",
    values: "off, on, or a lease length in multiples of T",
    default: "off",
    help: "hold leadership only while a majority backs it, so that no two members say they lead at one instant \
           (only with --monitor); on: a lease of heartbeat + 3 T",
};

/// The parameter that bounds clock-rate drift in the lease mode.
pub const DRIFT_PARAM: ParamInfo = ParamInfo {
    name: "max-drift-ppm",
    values: "0 to 100000",
    default: "1000",
    help: "with lease: how far a member's clock may run faster or slower than real time, in parts per million",
};

/// The parameter that lets the simulated clocks drift in the lease mode.
pub const CLOCKS_PARAM: ParamInfo = ParamInfo {
    name: "clocks",
    values: "exact or drifting",
    default: "exact",
    help: "with lease, in elect sim and elect check: drifting lets every lease timer (a leader's hold, a backer's \
           promise) run for any real duration a clock within max-drift-ppm may make of its length, so that a run \
           checks the drift margin too",
};

/// The most drift the lease mode takes: 10%.
pub const MAX_DRIFT_PPM: u32 = 100_000;
/// The longest lease, in heartbeat periods: a leader keeps the rounds sent within one lease apart.
pub const MAX_LEASE_BEATS: u64 = 30;
/// The default bound on clock-rate drift: 0.1%, ten times what a quartz oscillator drifts and twice the most an
/// NTP daemon slews a clock.
pub const DEFAULT_DRIFT_PPM: u32 = 1000;

impl Lease {
    /// The default lease for heartbeats every `heartbeat·T`: `heartbeat + 3` T, so that a round answered within a
    /// round trip renews the lease before the last one ran out.
    pub fn for_heartbeat(heartbeat: InT) -> Self {
        Self { length: heartbeat + 3, drift_ppm: DEFAULT_DRIFT_PPM, drifting: false }
    }

    /// Takes `lease`, `max-drift-ppm` and `clocks` out of `params`: the lease mode's settings, if it is on, and
    /// the rest.
    pub fn take(params: &Params, heartbeat: InT) -> Result<(Option<Self>, Params), ParamError> {
        let (value, rest) = params.without(LEASE_PARAM.name);
        let (drift, rest) = rest.without(DRIFT_PARAM.name);
        let (clocks, rest) = rest.without(CLOCKS_PARAM.name);
        let invalid = |info: &ParamInfo, value: &str, reason: String| ParamError::Invalid {
            key: info.name,
            value: value.to_owned(),
            reason,
        };
        let default = Self::for_heartbeat(heartbeat);
        let length = match value.as_deref() {
            None | Some("off") => None,
            Some("on") => Some(default.length),
            Some(raw) => Some(
                raw.parse::<InT>()
                    .map_err(|_| invalid(&LEASE_PARAM, raw, format!("expected {}", LEASE_PARAM.values)))?,
            ),
        };
        let drift_ppm = match drift.as_deref() {
            None => default.drift_ppm,
            Some(raw) => match raw.parse::<u32>() {
                Ok(ppm) if ppm <= MAX_DRIFT_PPM => ppm,
                _ => return Err(invalid(&DRIFT_PARAM, raw, format!("expected {}", DRIFT_PARAM.values))),
            },
        };
        let drifting = match clocks.as_deref() {
            None | Some("exact") => false,
            Some("drifting") => true,
            Some(raw) => return Err(invalid(&CLOCKS_PARAM, raw, format!("expected {}", CLOCKS_PARAM.values))),
        };
        let Some(length) = length else {
            if let Some(raw) = drift {
                return Err(invalid(&DRIFT_PARAM, &raw, "it bounds the clocks of the lease mode: add lease=on".into()));
            }
            if let Some(raw) = clocks {
                let reason = "only the lease mode's timers drift: add lease=on".into();
                return Err(invalid(&CLOCKS_PARAM, &raw, reason));
            }
            return Ok((None, rest));
        };
        let lease = Self { length, drift_ppm, drifting };
        lease.validate(heartbeat).map_err(|e| invalid(&LEASE_PARAM, &length.count().to_string(), e.to_string()))?;
        Ok((Some(lease), rest))
    }

    /// Whether the lease is long enough to be renewed before it runs out, with heartbeats every `heartbeat·T`: a
    /// leader must still hold the last round's lease when the answers to the next come back, a heartbeat period and
    /// a round trip later. `Err` says why not.
    pub fn validate(&self, heartbeat: InT) -> Result<(), LeaseError> {
        if self.length > InT(heartbeat.count().max(1)) * MAX_LEASE_BEATS {
            return Err(LeaseError::TooLong);
        }
        if self.drift_ppm > MAX_DRIFT_PPM {
            return Err(LeaseError::Drift);
        }
        let t = Duration::from_ticks(1_000_000);
        let timing = LeaseTiming::new(self, heartbeat, t);
        let renewed = t * (heartbeat + 2) + Duration::TICK;
        if timing.hold <= renewed {
            let least = heartbeat + 3;
            return Err(LeaseError::TooShort { heartbeat, drift_ppm: self.drift_ppm, least });
        }
        Ok(())
    }
}

/// Why a lease cannot work ([`Lease::validate`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// Longer than [`MAX_LEASE_BEATS`] heartbeat periods.
    #[error("a lease is at most {MAX_LEASE_BEATS} heartbeat periods")]
    TooLong,
    /// A drift bound above [`MAX_DRIFT_PPM`].
    #[error("the drift bound is at most {MAX_DRIFT_PPM} ppm")]
    Drift,
    /// Too short for a leader to renew it in time.
    #[error(
        "a leader could not renew it in time: with heartbeats every {heartbeat} and a drift bound of {drift_ppm} \
         ppm, a lease must be at least {least}"
    )]
    TooShort {
        /// The heartbeat period.
        heartbeat: InT,
        /// The drift bound, in parts per million.
        drift_ppm: u32,
        /// The shortest lease that works with them.
        least: InT,
    },
}

/// The lease mode's timing in ticks, fixed for a member's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LeaseTiming {
    /// How long after it sent a round a leader holds the lease a majority backed it with: `L/(1+ρ)`, rounded down.
    pub(super) hold: Duration,
    /// How long a member backs nobody else after it backed a round: `L(1+ρ)`, rounded up, and a tick.
    pub(super) promise: Duration,
    /// A leader that holds a lease renews it every heartbeat period...
    pub(super) renew: Duration,
    /// ... and one that seeks one asks every `T`.
    pub(super) retry: Duration,
    /// How many rounds may be unanswered at once: those sent within one hold, `⌈hold/renew⌉` (the longest real
    /// hold, with drifting clocks), and one more.
    pub(super) slots: u64,
    /// How long a new leader asks for a lease before it goes quiet: a promise to the leader before it, and `3T`.
    pub(super) fresh_grace: Duration,
    /// How long a leader whose lease lapsed asks again before it goes quiet: `2T`.
    pub(super) lapsed_grace: Duration,
    /// With drifting clocks ([`Lease::drifting`]), the drift bound in parts per million.
    drifting: Option<u32>,
}

impl LeaseTiming {
    pub(super) fn new(lease: &Lease, heartbeat: InT, t: Duration) -> Self {
        let l = u128::from(t.ticks()) * u128::from(lease.length.count());
        let (hold, promise) = (over_rate(l, lease.drift_ppm), times_rate(l, lease.drift_ppm) + Duration::TICK);
        let renew = t * heartbeat.count().max(1);
        let drifting = lease.drifting.then_some(lease.drift_ppm);
        let lapsed_grace = t * 2;
        Self { hold, promise, renew, retry: t, slots: 0, fresh_grace: t * 3, lapsed_grace, drifting }.derive()
    }

    /// The planted flaw `no-drift`: a hold and a promise of `L` (and a tick), as if clocks kept real time.
    pub(super) fn without_margin(self, lease: &Lease, heartbeat: InT, t: Duration) -> Self {
        let exact = Self::new(&Lease { drift_ppm: 0, ..*lease }, heartbeat, t);
        Self { hold: exact.hold, promise: exact.promise, ..self }.derive()
    }

    /// What follows from the hold and the promise, in the longest real time a clock may make of them: as many
    /// slots as rounds are sent within a hold, and one more (a round replaces one whose hold has run out); and the
    /// fresh grace, a promise and `3T`.
    fn derive(self) -> Self {
        let longest = |d| self.span(d).max;
        let slots = longest(self.hold).ticks().div_ceil(self.renew.ticks().max(1)).saturating_add(1);
        let fresh_grace = longest(self.promise) + self.retry * 3;
        Self { slots, fresh_grace, ..self }
    }

    /// What a lease timer of length `d`, on the member's own clock, asks of the driver: `d` exactly, or, with
    /// drifting clocks, any real duration a clock whose rate is within `1+ρ` of real time may make of it,
    /// `d/(1+ρ)` to `d(1+ρ)`, rounded outwards to whole ticks.
    pub(super) fn span(&self, d: Duration) -> Span {
        let Some(ppm) = self.drifting else { return Span::exactly(d) };
        let ticks = u128::from(d.ticks());
        Span::between(over_rate(ticks, ppm), times_rate(ticks, ppm))
    }
}

const MILLION: u128 = 1_000_000;

/// `ticks/(1+ρ)` for a drift bound of `ppm` parts per million, rounded down.
fn over_rate(ticks: u128, ppm: u32) -> Duration {
    saturated(ticks * MILLION / (MILLION + u128::from(ppm)))
}

/// `ticks·(1+ρ)` for a drift bound of `ppm` parts per million, rounded up.
fn times_rate(ticks: u128, ppm: u32) -> Duration {
    saturated((ticks * (MILLION + u128::from(ppm))).div_ceil(MILLION))
}

fn saturated(ticks: u128) -> Duration {
    Duration::from_ticks(u64::try_from(ticks).unwrap_or(u64::MAX))
}

/// Whom a member has promised to back, and nobody else, until its promise runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Promise {
    /// Nobody: it may back anyone.
    Free,
    /// This member (perhaps itself).
    To(NodeId),
    /// It started, and backs nobody until a promise it may have made before it stopped has run out.
    Starting,
}

/// Where a member stands with its own lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Standing {
    /// It does not seek one: the algorithm does not name it leader (or not yet for the settling wait).
    Idle,
    /// A new leader: it asks every `T`, and its algorithm speaks as usual, for the fresh grace.
    Seeking,
    /// It holds a lease.
    Holding,
    /// Its lease lapsed: it asks every `T` for the lapsed grace, and its algorithm says nothing meanwhile.
    Lapsed,
    /// No majority backed it within its grace: it asks for nothing, and its algorithm says nothing, for a promise
    /// time, or until the algorithm names it leader in another epoch (or no longer names it).
    Quiet,
}

impl Standing {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Idle => "none",
            Self::Seeking => "asking",
            Self::Holding => "held",
            Self::Lapsed => "lapsed, asking again",
            Self::Quiet => "lapsed, quiet",
        }
    }
}

/// A leader's side of the lease: its rounds and who backed them, and which of them hold a lease; and the member's
/// promise, as anyone's backer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Leases {
    /// Where it stands with its own lease.
    pub(super) standing: Standing,
    /// The algorithm's epoch (its status's `epoch`) in which it last started to seek a lease.
    pub(super) sought_in: Epoch,
    /// The last round this member sent (0: none yet).
    pub(super) round: u64,
    /// Per slot (`round % slots`): the round in it, whether its hold still runs, and who backed it.
    pub(super) slots: Vec<Slot>,
    /// Whether it renews: the `Renew` timer is armed.
    pub(super) renewing: bool,
    pub(super) promise: Promise,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Slot {
    pub(super) round: u64,
    /// Its hold has not run out yet.
    pub(super) running: bool,
    /// A majority backed it while its hold ran: the leader holds the lease until the hold runs out.
    pub(super) held: bool,
    pub(super) backers: BTreeSet<NodeId>,
}

impl Leases {
    pub(super) fn new(timing: Option<&LeaseTiming>) -> Self {
        let slots = timing.map_or(0, |t| t.slots);
        let empty = Slot { round: 0, running: false, held: false, backers: BTreeSet::new() };
        Self {
            standing: Standing::Idle,
            sought_in: Epoch::ZERO,
            round: 0,
            slots: vec![empty; slots as usize],
            renewing: false,
            promise: Promise::Free,
        }
    }

    /// Whether its lease lapsed, and it holds none.
    pub(super) fn lapsed(&self) -> bool {
        matches!(self.standing, Standing::Lapsed | Standing::Quiet)
    }

    /// Whether a round a majority backed still holds.
    pub(super) fn held(&self) -> bool {
        self.slots.iter().any(|s| s.held)
    }

    /// The slot of the newest round that holds a lease, whose hold timer ends the lease (if no newer round is
    /// backed before it runs out).
    pub(super) fn last_held(&self) -> Option<u8> {
        let (i, _) = self.slots.iter().enumerate().filter(|(_, s)| s.held).max_by_key(|(_, s)| s.round)?;
        u8::try_from(i).ok()
    }
}
