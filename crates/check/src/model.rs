//! The system as a transition system: its states, the actions enabled in each, and the step each takes. The
//! search ([`crate::search`]) knows nothing of processes; it asks this module for actions and successors.

use std::hash::{Hash, Hasher};

use elect_algos::Algorithm;
use std::borrow::Cow;

use elect_core::driver::{self, Host, Restart};
use elect_core::{
    Check, Command, EffectOf, Epoch, Event, EventOf, Instant, Monitor, NodeId, Notice, Port, Process, Property, Rank,
    Span, Status, Violation, When, Winner, World,
};
use elect_scenario::{Delay, Scenario, Scheduled};

use crate::intern::Interned;
use crate::{CheckConfig, CheckError, Network, Step};

mod action;
mod describe;
mod faults;
mod fingerprints;
mod host;
mod packed;
mod view;

pub use action::Action;
pub(crate) use fingerprints::fingerprint;
pub(crate) use packed::Packed;

use view::Reads;
pub(crate) use view::View;

use host::{InState, Recovering};

/// When an item in flight (a message or a timer) may happen, relative to the present: at `first` (while it has
/// not passed) or at `last`. Untimed runs leave it at [`Due::ANY`] and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct Due {
    first: Option<u64>,
    last: u64,
}

impl Due {
    const ANY: Self = Self { first: Some(0), last: 0 };

    fn after(min: u64, max: u64) -> Self {
        Self { first: Some(min), last: max }
    }

    /// Whether it may happen now.
    fn now(self) -> bool {
        self.first == Some(0) || self.last == 0
    }

    /// The next instant it may happen, strictly after now.
    fn next(self) -> Option<u64> {
        match self.first {
            Some(f) if f > 0 => Some(f),
            _ => (self.last > 0).then_some(self.last),
        }
    }

    /// `dt` later (no more than [`Self::next`]).
    fn pass(&mut self, dt: u64) {
        self.first = self.first.and_then(|f| f.checked_sub(dt).filter(|_| f > 0));
        self.last -= dt;
    }
}

/// A message in flight: its number in the search's table of messages ([`Interned`]), its fingerprint (what a
/// state's fingerprint hashes, and what the canonical order of unordered links sorts by) and when it is due.
/// Numbers depend on the order in which threads met the messages, so they are never hashed: equal messages have
/// one number, and so one fingerprint.
#[derive(Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct InFlight {
    id: u32,
    fp: u64,
    due: Due,
}

impl InFlight {
    /// Where it goes among a link's messages when their order carries no meaning.
    fn key(&self) -> (u64, Option<u64>, u64) {
        (self.fp, self.due.first, self.due.last)
    }
}

/// The number [`State::procs`] holds for a process that is down.
const DOWN: u32 = u32::MAX;

/// A state of the whole system: its vectors, and the rest of it ([`Rest`]).
pub(crate) struct State<P: Process> {
    /// Each process, as its number in the model's table of processes ([`Model::process`]), or [`DOWN`] while
    /// crashed: a step copies the numbers and looks up, changes and numbers the one process it steps.
    procs: Vec<u32>,
    /// Messages in flight, by directed link (the sender's link slot), in one vector: oldest first on FIFO
    /// links, in a canonical order otherwise (the order carries no meaning there, so it must not tell states
    /// apart).
    msgs: Vec<(u32, InFlight)>,
    /// Armed timers, by position and timer.
    timers: Vec<(u32, P::Timer, Due)>,
    /// What each process last made durable (kept only when a process may recover; empty otherwise).
    durable: Vec<Option<P::Durable>>,
    /// Who declared itself leader in which epoch (kept only when the algorithm promises P-Unique).
    declared: Vec<(Epoch, u32)>,
    pub(crate) rest: Rest,
}

/// Everything in a state but its vectors: a few dozen bytes, copied as they are. Times are kept relative to the
/// present, which is kept apart ([`Rest::now`]) and left out of the fingerprint: two states that differ only in the
/// clock behave alike.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rest {
    /// The processes' and the messages' share of the fingerprint, kept up to date as they change
    /// ([`fingerprints`]).
    parts: u64,
    /// The first two processes found declaring themselves leader in one epoch.
    clash: Option<(Epoch, u32, u32)>,
    crashes_left: u8,
    /// The positions that may still crash, by bit: all of them, unless the search designated some up front
    /// ([`Model::designations`]); none once no crash is left, so that states after the last crash do not tell apart the
    /// designations they came from.
    doomed: u64,
    recoveries_left: u8,
    duplicates_left: u8,
    /// The next scheduled fault, and how long until it happens.
    next_fault: u16,
    fault_in: u64,
    /// Scheduled link faults and partitions in force, by index (bit sets).
    links_down: u64,
    partitions_on: u64,
    /// Timed runs of algorithms that never fall silent: how long until the run ends (it ends settled, its
    /// settling time after the last fault, or at the scenario's `until`).
    ends_in: Option<u64>,
    /// Once the settling time after the last fault has passed: how much longer time runs on, without faults, so
    /// that periodic behaviour comes round to a state seen before (a cycle, judged as a lasso). Left out of the
    /// fingerprint, as the clock is: a state seen again in this window is the same state.
    steady: u64,
    /// The present, in ticks (timed runs; 0 otherwise).
    pub(crate) now: u64,
}

impl<P: Process> Clone for State<P> {
    fn clone(&self) -> Self {
        Self::from_vectors(self.rest, self.vectors())
    }

    /// Copies `source` into the vectors this state already has: a search steps one scratch state per successor
    /// ([`Model::step_into`]) and allocates only for those it keeps.
    fn clone_from(&mut self, source: &Self) {
        self.refill(source.rest, source.vectors());
    }
}

/// A state's vectors, borrowed.
type Vectors<'a, P> = (
    &'a [u32],
    &'a [(u32, InFlight)],
    &'a [(u32, <P as Process>::Timer, Due)],
    &'a [Option<<P as Process>::Durable>],
    &'a [(Epoch, u32)],
);

impl<P: Process> State<P> {
    /// Its vectors, borrowed.
    fn vectors(&self) -> Vectors<'_, P> {
        (&self.procs, &self.msgs, &self.timers, &self.durable, &self.declared)
    }

    /// The state made of `rest` and copies of `vectors`.
    fn from_vectors(rest: Rest, vectors: Vectors<'_, P>) -> Self {
        let (procs, msgs, timers, durable, declared) = vectors;
        Self {
            procs: procs.to_vec(),
            msgs: msgs.to_vec(),
            timers: timers.to_vec(),
            durable: durable.to_vec(),
            declared: declared.to_vec(),
            rest,
        }
    }

    /// Becomes the state made of `rest` and copies of `vectors`, in the vectors it already has.
    fn refill(&mut self, rest: Rest, vectors: Vectors<'_, P>) {
        fn refill<T: Clone>(mine: &mut Vec<T>, theirs: &[T]) {
            mine.clear();
            mine.extend_from_slice(theirs);
        }
        let (procs, msgs, timers, durable, declared) = vectors;
        refill(&mut self.procs, procs);
        refill(&mut self.msgs, msgs);
        refill(&mut self.timers, timers);
        refill(&mut self.durable, durable);
        refill(&mut self.declared, declared);
        self.rest = rest;
    }
}

impl<P: Process> State<P> {
    /// The positions that may still crash, by bit.
    pub(crate) fn doomed(&self) -> u64 {
        self.rest.doomed
    }

    /// How many processes the system has.
    pub(crate) fn len(&self) -> usize {
        self.procs.len()
    }

    /// Whether the process at `node` is up.
    pub(crate) fn live(&self, node: usize) -> bool {
        self.procs[node] != DOWN
    }

    /// Whether a process that is down may still recover (the budget of recoveries is not spent).
    pub(crate) fn recoveries_left(&self) -> bool {
        self.rest.recoveries_left > 0
    }

    /// Where link slot `slot`'s messages are in [`Self::msgs`].
    fn link(&self, slot: u32) -> std::ops::Range<usize> {
        let lo = self.msgs.partition_point(|(s, _)| *s < slot);
        lo..lo + self.msgs[lo..].partition_point(|(s, _)| *s == slot)
    }

    /// Whether no message is in flight on link slot `slot`.
    pub(crate) fn link_empty(&self, slot: u32) -> bool {
        self.link(slot).is_empty()
    }

    /// Whether some timer is armed.
    pub(crate) fn any_timer(&self) -> bool {
        !self.timers.is_empty()
    }

    /// Where position `node`'s timers are in [`Self::timers`].
    fn node_timers(&self, node: u32) -> std::ops::Range<usize> {
        let lo = self.timers.partition_point(|(n, ..)| *n < node);
        lo..lo + self.timers[lo..].partition_point(|(n, ..)| *n == node)
    }

    /// The `index`-th message on link slot `slot`.
    fn msg(&self, slot: u32, index: u32) -> InFlight {
        self.msgs[self.link(slot).start + index as usize].1
    }
}

/// The most processes a search designates crashes among ([`Model::designations`]): one search root per choice.
const DESIGNATED_MAX: usize = 16;

/// The system: the algorithm, its scenario and the network's semantics.
pub(crate) struct Model<A: Algorithm> {
    pub(crate) algorithm: A,
    pub(crate) scenario: Scenario,
    pub(crate) config: CheckConfig,
    pub(crate) checks: Vec<Check>,
    winner: Winner,
    /// By link slot: the sending position and its port.
    link_ends: Vec<(u32, u32)>,
    /// By link slot: the receiving position and its port.
    link_far: Vec<(u32, u32)>,
    /// By position: the link slots that end there and may carry messages (for one-way ring algorithms, those
    /// from a `next` port).
    pub(crate) in_links: Vec<Vec<u32>>,
    /// One-way ring algorithms: each position's `next` port, the only one it may send on.
    next_port: Option<Vec<u32>>,
    /// Timed runs: the shortest and longest message delay, in ticks.
    delays: (u64, u64),
    /// Timed runs: the scenario's faults in time order.
    schedule: Vec<(u64, Scheduled)>,
    /// Timed runs of algorithms that never fall silent: how long a run lasts, and whether that is counted from
    /// the last fault (the settling time) rather than from the start (the scenario's `until`).
    end: Option<(u64, bool)>,
    /// Whether the algorithm promises P-Unique, and fresh-epoch (so declarations are kept, and marked as a past
    /// life's when their process restarts).
    unique: bool,
    fresh: bool,
    /// What the "always" properties read of the statuses (P-Unique and fresh-epoch read the declarations): what a
    /// timed run's reduction keeps visible before the run settles ([`Self::visible_to_reduction`]).
    always_reads: Reads,
    /// Whether a timed run's reduction may take one delivery for all its orders ([`crate::reduce`]; off only in
    /// tests, to compare).
    pub(crate) one_delivery: bool,
    /// Whether a crashed process may come back (so its durable state and the messages it misses matter).
    may_recover: bool,
    /// Whether a reduced search may designate the processes that may crash up front ([`Self::designations`]),
    /// and, once a search has weighed it, whether it does.
    may_designate: bool,
    designating: std::sync::OnceLock<bool>,
    /// Every message met so far, which the states' messages in flight number.
    messages: Interned<<A::Process as Process>::Msg>,
    /// Every process state met so far, which the states number.
    processes: Interned<A::Process>,
    /// The fingerprint of a position whose process is down.
    down_fp: u64,
    /// Each thread's buffer for the effects of a step, kept from one step to the next.
    effects: thread_local::ThreadLocal<std::cell::RefCell<Vec<EffectOf<A::Process>>>>,
}

impl<A: Algorithm> Model<A> {
    pub(crate) fn new(algorithm: A, scenario: Scenario, config: CheckConfig) -> Result<Self, CheckError> {
        let graph = &scenario.graph;
        let next_port: Option<Vec<u32>> = algorithm
            .one_way()
            .then(|| (0..scenario.len() as u32).map(|i| graph.ring_ports(i).map_or(u32::MAX, |r| r.next.0)).collect());
        let (link_ends, link_far, in_links) = link_tables(&scenario, next_port.as_deref());
        let sim = &config.sim;
        let delays = match sim.delay {
            Delay::Constant(d) => (d, d),
            Delay::Uniform(a, b) => (a, b),
            Delay::Exp(_) => return Err(CheckError::UnboundedDelay),
        };
        if config.timed && delays.0 == 0 {
            return Err(CheckError::ZeroDelay);
        }
        if scenario.losses.any() || !sim.duplicate.is_never() || !sim.crash_leader_at.is_empty() {
            return Err(CheckError::SimulatorFaults);
        }
        let mut schedule = scenario.scheduled_faults();
        schedule.sort_by_key(|&(at, _)| at);
        if !schedule.is_empty() && !config.timed {
            return Err(CheckError::ScheduledUntimed);
        }
        if scenario.link_faults.len() > 64 || scenario.partitions.len() > 64 {
            return Err(CheckError::TooManyFaults);
        }
        let may_recover = config.recoveries > 0 || !scenario.recoveries.is_empty();
        // With recoveries, only a single crash: then the one process that may crash is the only one that may
        // recover (no scheduled crash leaves another down), so the recovery budget is its own too.
        let may_designate = config.reduce
            && config.crashes > 0
            && (!may_recover || (config.crashes == 1 && scenario.crashes.is_empty()))
            && !A::Process::HEARS_LINKS
            && scenario.len() <= DESIGNATED_MAX;
        let (checks, winner) = (sim.checks(algorithm.checks()), algorithm.winner());
        let promises = |property| checks.iter().any(|c| c.property == property);
        let (unique, fresh) = (promises(Property::Uniqueness), promises(Property::FreshEpoch));
        let always_reads = Reads::of(&checks);
        let end = match (config.timed, sim.until) {
            (false, _) => None,
            (true, Some(until)) => Some((until, false)),
            (true, None) => {
                // As in the simulator: judged with as few processes live as the faults allow.
                let facts = scenario.facts();
                let crashes = (scenario.crashes.len() + usize::from(config.crashes)) as u64;
                let facts = elect_algos::Facts { live: facts.nodes.saturating_sub(crashes).max(1), ..facts };
                algorithm.settle_time(&facts, scenario.delay_bound).map(|tau| (tau.ticks(), true))
            }
        };
        Ok(Self {
            algorithm,
            scenario,
            config,
            checks,
            winner,
            link_ends,
            link_far,
            in_links,
            next_port,
            delays,
            schedule,
            end,
            unique,
            fresh,
            always_reads,
            one_delivery: true,
            may_recover,
            may_designate,
            designating: std::sync::OnceLock::new(),
            messages: Interned::new(),
            processes: Interned::new(),
            down_fp: fingerprint(&None::<A::Process>),
            effects: thread_local::ThreadLocal::new(),
        })
    }

    fn fifo(&self) -> bool {
        self.config.network == Network::Fifo
    }

    pub(crate) fn initial(&self) -> State<A::Process> {
        let n = self.scenario.len();
        let mut state = State {
            procs: Vec::with_capacity(n),
            msgs: Vec::new(),
            timers: Vec::new(),
            durable: if self.may_recover { vec![None; n] } else { Vec::new() },
            declared: Vec::new(),
            rest: Rest {
                parts: 0,
                clash: None,
                crashes_left: self.config.crashes,
                doomed: if self.config.crashes > 0 { u64::MAX } else { 0 },
                recoveries_left: self.config.recoveries,
                duplicates_left: if self.config.network == Network::Duplicating { self.config.duplicates } else { 0 },
                next_fault: 0,
                fault_in: 0,
                links_down: 0,
                partitions_on: 0,
                ends_in: self.end.map(|(after, _)| after),
                steady: 0,
                now: 0,
            },
        };
        for i in 0..n as u32 {
            state.procs.push(DOWN);
            state.rest.parts = state.rest.parts.wrapping_add(fingerprints::process_term(i, self.down_fp));
            self.put(&mut state, i, Some(elect_scenario::build_process(&self.algorithm, &self.scenario, i)));
            self.handle(&mut state, i, Event::Start { restored: None });
        }
        // As in the simulator, the initiators initiate at time 0, before anything is delivered.
        for i in (0..n as u32).filter(|&i| self.scenario.initiators[i as usize]) {
            self.handle(&mut state, i, Event::Command(Command::Initiate));
        }
        self.run_faults(&mut state);
        debug_assert_eq!(state.rest.parts, self.parts(&state), "the fingerprint's parts are kept up to date");
        state
    }

    /// Runs one event at the live process at `node` and carries out its effects (the driver contract,
    /// [`driver`]).
    fn handle(&self, state: &mut State<A::Process>, node: u32, event: EventOf<A::Process>) {
        let buffer = self.effects.get_or_default();
        let mut effects = buffer.take();
        let mut p = self.process(state, node).expect("only live processes handle events").clone();
        driver::handle(&mut p, Instant::from_ticks(state.rest.now), event, &mut effects);
        self.put(state, node, Some(p));
        driver::carry_out(&mut InState { model: self, state, node }, &mut effects);
        buffer.replace(effects);
    }

    /// The process at `node` in `state`, if it is up.
    pub(crate) fn process(&self, state: &State<A::Process>, node: u32) -> Option<&A::Process> {
        let id = state.procs[node as usize];
        (id != DOWN).then(|| self.processes.get(id))
    }

    /// Sets the process at `node` (`None`: down), numbered in the table of processes.
    fn put(&self, state: &mut State<A::Process>, node: u32, p: Option<A::Process>) {
        let fp = fingerprint(&p);
        self.retally(state, node, fp);
        state.procs[node as usize] = p.map_or(DOWN, |p| self.processes.intern(p, fp));
    }

    /// How many distinct messages and process states the search has met.
    pub(crate) fn interned(&self) -> (usize, usize) {
        (self.messages.len(), self.processes.len())
    }

    /// Whether a scheduled link fault or partition stops messages on link slot `slot` now.
    pub(crate) fn blocked(&self, state: &State<A::Process>, slot: usize) -> bool {
        if state.rest.links_down == 0 && state.rest.partitions_on == 0 {
            return false;
        }
        let (from, to) = (self.link_ends[slot].0, self.link_far[slot].0);
        let down = self
            .scenario
            .link_faults
            .iter()
            .enumerate()
            .any(|(k, f)| state.rest.links_down & (1 << k) != 0 && f.directed.contains(&(from, to)));
        down || self
            .scenario
            .partitions
            .iter()
            .enumerate()
            .any(|(k, p)| state.rest.partitions_on & (1 << k) != 0 && p.cuts(from, to))
    }

    /// Every action enabled in `state`, in a fixed order.
    pub(crate) fn actions(&self, state: &State<A::Process>, out: &mut Vec<Action>) {
        out.clear();
        // Once the settling time after the last fault has passed, no more faults happen (but scheduled ones); time
        // runs on for the steady window, then stops. At its end a run still carries out what is due at that instant
        // (as the simulator does at `until`), but time passes no further.
        let settled = state.rest.ends_in == Some(0);
        let over = settled && state.rest.steady == 0;
        let timed = self.config.timed;
        let mut k = 0;
        while k < state.msgs.len() {
            let slot = state.msgs[k].0;
            let end = k + state.msgs[k..].partition_point(|(s, _)| *s == slot);
            let msgs = &state.msgs[k..end];
            k = end;
            let to = self.link_far[slot as usize].0 as usize;
            let live = state.live(to);
            let link = slot;
            for (index, (_, m)) in msgs.iter().enumerate() {
                if index > 0 && self.fifo() {
                    break;
                }
                // At the end only what must happen then still happens; the rest would come after.
                let late = over && m.due.last != 0;
                if (timed && !m.due.now()) || late || msgs[..index].iter().any(|(_, o)| o == m) {
                    // Not yet; or an equal message stands for it.
                    continue;
                }
                let index = index as u32;
                if !live {
                    // A message for a process that is down is lost when it arrives. Such messages are kept only
                    // when the process may come back (otherwise they are dropped at the crash).
                    if timed || self.may_recover {
                        out.push(Action::Lose { link, index });
                    }
                    continue;
                }
                out.push(Action::Deliver { link, index });
                match self.config.network {
                    Network::Lossy => out.push(Action::Lose { link, index }),
                    Network::Duplicating if state.rest.duplicates_left > 0 => {
                        out.push(Action::DeliverCopy { link, index });
                    }
                    _ => {}
                }
            }
        }
        let mut previous = u32::MAX;
        let mut nth = 0;
        // As in the simulator, messages that arrive at an instant come before the timers due then: a timer fires
        // only once no message must arrive first.
        let arriving = timed && Self::arriving(state);
        for &(node, _, due) in &state.timers {
            nth = if node == previous { nth + 1 } else { 0 };
            previous = node;
            if !timed || (due.now() && !arriving && !(over && due.last != 0)) {
                out.push(Action::Fire { node, timer: nth });
            }
        }
        if timed && !over && !self.due_now(state) && self.next_instant(state).is_some() {
            out.push(Action::Wait);
        }
        if settled {
            return;
        }
        for i in 0..state.len() {
            let node = i as u32;
            match state.live(i) {
                true if state.rest.crashes_left > 0 && (i >= 64 || state.rest.doomed & (1 << i) != 0) => {
                    out.push(Action::Crash { node });
                }
                false if state.rest.recoveries_left > 0 => out.push(Action::Recover { node }),
                _ => {}
            }
        }
    }

    /// Timed runs: whether something must happen before time may pass.
    pub(crate) fn due_now(&self, state: &State<A::Process>) -> bool {
        state.msgs.iter().any(|(_, m)| m.due.last == 0) || state.timers.iter().any(|(.., d)| d.last == 0)
    }

    /// Timed runs: how long until something next may happen (no further than the end of the steady window).
    fn next_instant(&self, state: &State<A::Process>) -> Option<u64> {
        let msgs = state.msgs.iter().filter_map(|(_, m)| m.due.next());
        let timers = state.timers.iter().filter_map(|(.., d)| d.next());
        let fault = (state.rest.fault_in > 0).then_some(state.rest.fault_in);
        let next = msgs.chain(timers).chain(fault).chain(state.rest.ends_in.filter(|&e| e > 0)).min()?;
        let steady = (state.rest.ends_in == Some(0) && state.rest.steady > 0).then_some(state.rest.steady);
        Some(steady.map_or(next, |s| next.min(s)))
    }

    /// Whether `action` is one of the faults a run may or may not suffer (crashes, recoveries), which do not keep
    /// a state from being final.
    pub(crate) fn optional(action: Action) -> bool {
        matches!(action, Action::Crash { .. } | Action::Recover { .. })
    }

    /// Timed runs: whether `action`, a delivery, loss or timer, must happen before time may pass (it is at the
    /// end of its window).
    pub(crate) fn must_happen_now(&self, state: &State<A::Process>, action: Action) -> bool {
        match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } | Action::Lose { link, index } => {
                state.msgs[state.link(link).start + index as usize].1.due.last == 0
            }
            Action::Fire { node, timer } => state.timers[state.node_timers(node).start + timer as usize].2.last == 0,
            Action::Crash { .. } | Action::Recover { .. } | Action::Wait => false,
        }
    }

    /// Timed runs: whether some message must arrive now, so that no timer may fire yet.
    pub(crate) fn arriving(state: &State<A::Process>) -> bool {
        state.msgs.iter().any(|(_, m)| m.due.last == 0)
    }

    /// The position whose state `action` changes, if it is a local step (a delivery, loss or timer at one process).
    pub(crate) fn owner(&self, action: Action) -> Option<u32> {
        match action {
            Action::Deliver { link, .. } | Action::Lose { link, .. } => Some(self.link_far[link as usize].0),
            Action::Fire { node, .. } => Some(node),
            // With the crashing processes designated up front, a crash is a step of its process like any other,
            // and so is the recovery of the one process that may crash.
            Action::Crash { node } | Action::Recover { node } if self.designating() => Some(node),
            Action::DeliverCopy { .. } | Action::Crash { .. } | Action::Recover { .. } | Action::Wait => None,
        }
    }

    /// The receiving position and its port of link slot `slot`.
    pub(crate) fn receiver(&self, slot: u32) -> (u32, u32) {
        self.link_far[slot as usize]
    }

    /// The link slot leaving position `node` at `port`.
    pub(crate) fn slot(&self, node: u32, port: Port) -> u32 {
        self.scenario.graph.link_index(node, port.0) as u32
    }

    /// What process `p` does with `msg` arriving on `port`, taken on its own (untimed runs): `p` changes and
    /// its effects are returned.
    pub(crate) fn receive(
        &self,
        p: &mut A::Process,
        port: u32,
        msg: <A::Process as Process>::Msg,
    ) -> Vec<EffectOf<A::Process>> {
        let mut effects = Vec::new();
        driver::handle(p, Instant::ZERO, Event::Message { from: Port(port), msg }, &mut effects);
        effects
    }

    /// The messages in flight in `state`, with the link slot each is on.
    pub(crate) fn in_flight<'a>(
        &'a self,
        state: &'a State<A::Process>,
    ) -> impl Iterator<Item = (u32, <A::Process as Process>::Msg)> + 'a {
        state.msgs.iter().map(|(slot, m)| (*slot, self.messages.get(m.id).clone()))
    }

    /// The `index`-th message on link slot `slot` in `state`.
    pub(crate) fn message(&self, state: &State<A::Process>, slot: u32, index: u32) -> <A::Process as Process>::Msg {
        self.messages.get(state.msg(slot, index).id).clone()
    }

    /// How many directed link slots the topology has.
    pub(crate) fn slots(&self) -> usize {
        self.link_ends.len()
    }

    /// The sender of link slot `slot`.
    pub(crate) fn sender(&self, slot: u32) -> u32 {
        self.link_ends[slot as usize].0
    }

    /// The state after `action`.
    pub(crate) fn step(&self, state: &State<A::Process>, action: Action) -> State<A::Process> {
        let mut next = state.clone();
        self.take_step(state, action, &mut next);
        debug_assert_eq!(next.rest.parts, self.parts(&next), "the fingerprint's parts are kept up to date");
        next
    }

    /// The state after `action`, in `next`, whose vectors are reused.
    pub(crate) fn step_into(&self, state: &State<A::Process>, action: Action, next: &mut State<A::Process>) {
        next.clone_from(state);
        self.take_step(state, action, next);
        debug_assert_eq!(next.rest.parts, self.parts(next), "the fingerprint's parts are kept up to date");
    }

    /// Takes `action` from `state` in `next`, a copy of it.
    fn take_step(&self, state: &State<A::Process>, action: Action, next: &mut State<A::Process>) {
        match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } => {
                let (to, port) = self.link_far[link as usize];
                let m = if let Action::DeliverCopy { .. } = action {
                    next.rest.duplicates_left -= 1;
                    next.msg(link, index)
                } else {
                    let at = next.link(link).start + index as usize;
                    next.change_link(link, |msgs| msgs.remove(at).1)
                };
                let msg = self.messages.get(m.id).clone();
                self.handle(next, to, Event::Message { from: Port(port), msg });
            }
            Action::Lose { link, index } => {
                let at = next.link(link).start + index as usize;
                next.change_link(link, |msgs| msgs.remove(at));
            }
            Action::Fire { node, timer } => {
                let at = next.node_timers(node).start + timer as usize;
                let (_, timer, _) = next.timers.remove(at);
                self.handle(next, node, Event::Timer(timer));
            }
            Action::Crash { node } => {
                next.rest.crashes_left -= 1;
                if next.rest.crashes_left == 0 {
                    next.rest.doomed = 0;
                }
                self.restart_settling(next);
                self.crash(next, node);
            }
            Action::Recover { node } => {
                next.rest.recoveries_left -= 1;
                self.restart_settling(next);
                self.recover(next, node);
            }
            Action::Wait => {
                let dt = self.next_instant(state).expect("time passes only when something is to come");
                next.rest.now += dt;
                for (_, m) in &mut next.msgs {
                    m.due.pass(dt);
                }
                for (.., due) in &mut next.timers {
                    due.pass(dt);
                }
                next.rest.parts = self.parts(next);
                match &mut next.rest.ends_in {
                    Some(0) => next.rest.steady -= dt,
                    Some(left) => {
                        *left -= dt;
                        if *left == 0 {
                            next.rest.steady = self.steady_window();
                        }
                    }
                    None => {}
                }
                self.run_faults(next);
            }
        }
    }

    /// Whether `action` is enabled in `state` (replayed files are checked step by step).
    pub(crate) fn enabled(&self, state: &State<A::Process>, action: Action) -> bool {
        let mut all = Vec::new();
        self.actions(state, &mut all);
        all.contains(&action)
    }

    /// The first promised property `state` breaks: "always" ones, and "at end" ones too if `settled`.
    pub(crate) fn judge(&self, state: &State<A::Process>, settled: bool) -> Option<Violation> {
        self.judge_all(state, settled).into_iter().next()
    }

    /// Every promised property `state` breaks.
    pub(crate) fn judge_all(&self, state: &State<A::Process>, settled: bool) -> Vec<Violation> {
        let mut out = Vec::new();
        out.extend(state.rest.clash.map(|clash| self.clash(clash)));
        out.extend(Monitor::check_state(&self.checks, self.winner, &self.view(state), settled));
        out
    }

    /// Whether nothing is left to happen in `state` but faults a run need not suffer.
    pub(crate) fn quiescent(&self, state: &State<A::Process>) -> bool {
        let mut all = Vec::new();
        self.actions(state, &mut all);
        all.iter().all(|&a| Self::optional(a))
    }

    pub(crate) fn view<'a>(&'a self, state: &'a State<A::Process>) -> View<'a, A> {
        View { state, model: self }
    }
}

/// A position and one of its ports.
type PortAt = (u32, u32);

/// By link slot, the sending position and port, and the receiving ones; by position, the link slots that end there
/// and may carry messages (for one-way ring algorithms, whose `next_port`s are given, those from a `next` port).
fn link_tables(scenario: &Scenario, next_port: Option<&[u32]>) -> (Vec<PortAt>, Vec<PortAt>, Vec<Vec<u32>>) {
    let graph = &scenario.graph;
    let slots = graph.link_slots();
    let (mut link_ends, mut link_far) = (vec![(0, 0); slots], vec![(0, 0); slots]);
    let mut in_links = vec![Vec::new(); scenario.len()];
    for node in 0..scenario.len() as u32 {
        for port in 0..graph.degree(node) {
            let slot = graph.link_index(node, port);
            let end = graph.far_end(node, port);
            link_ends[slot] = (node, port);
            link_far[slot] = (end.node, end.port);
            if next_port.is_none_or(|next| next[node as usize] == port) {
                in_links[end.node as usize].push(slot as u32);
            }
        }
    }
    (link_ends, link_far, in_links)
}

fn set_bit(bits: &mut u64, k: usize, on: bool) {
    if on {
        *bits |= 1 << k;
    } else {
        *bits &= !(1 << k);
    }
}

#[cfg(test)]
mod tests;
