//! The system as a transition system: its states, the actions enabled in each, and the step each takes. The
//! search ([`crate::search`]) knows nothing of processes; it asks this module for actions and successors.

use elect_algos::Algorithm;
use elect_core::driver;
use elect_core::{Check, Command, EffectOf, Event, Instant, Monitor, Port, Process, Property, Violation, Winner};
use elect_scenario::{Delay, Scenario, Scheduled};

use crate::intern::Interned;
use crate::{CheckConfig, CheckError, Network};

mod action;
mod describe;
mod faults;
mod fingerprints;
mod host;
mod packed;
mod reads;
mod state;
mod view;

pub use action::Action;
pub(crate) use fingerprints::fingerprint;
pub(crate) use packed::Packed;

use fingerprints::{link_terms, process_term};
use reads::Reads;
pub(crate) use state::State;
use state::{DOWN, InFlight, Rest};

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
    /// Each thread's answers of the walks of [`crate::reduce`], by what they depend on ([`Self::around`]).
    walks: thread_local::ThreadLocal<std::cell::RefCell<std::collections::HashMap<u64, bool>>>,
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
            walks: thread_local::ThreadLocal::new(),
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
        let over = Self::over(state);
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
                if !self.may_arrive_now(m, over) || msgs[..index].iter().any(|(_, o)| o == m) {
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

    /// Whether message `m` may arrive at this instant ([`Self::actions`]): in timed runs, once its delay allows;
    /// and at the end of a run (`over`) only if it must arrive then, since the rest would come after.
    pub(crate) fn may_arrive_now(&self, m: &InFlight, over: bool) -> bool {
        (!self.config.timed || m.due.now()) && !(over && m.due.last != 0)
    }

    /// The number of ways to take a prefix of the messages that may arrive now at the head of each link into
    /// process `to` but `except`: the product of one more than each link's count (saturating).
    pub(crate) fn prefixes_now(&self, state: &State<A::Process>, to: u32, except: u32) -> usize {
        let over = Self::over(state);
        let mut product = 1usize;
        let mut k = 0;
        while k < state.msgs.len() {
            let slot = state.msgs[k].0;
            let end = k + state.msgs[k..].partition_point(|(s, _)| *s == slot);
            if slot != except && self.link_far[slot as usize].0 == to {
                let waiting = state.msgs[k..end].iter().take_while(|(_, m)| self.may_arrive_now(m, over)).count();
                product = product.saturating_mul(waiting + 1);
            }
            k = end;
        }
        product
    }

    /// What the walk of [`crate::reduce`] for delivery `a` to process `i` reads of `state`, hashed: `i`'s process,
    /// the messages on its links (what it receives, and which deliveries and orders there are), its timers and
    /// durable state, which processes are up (a send to one that is down may be dropped), whether a message
    /// elsewhere must arrive now (a timer of `i` waits for it), the declarations, and the rest but the
    /// fingerprint's parts: the clock, the fault budgets, the faults in force. A walk steps only `i`, which sends
    /// at the ends of its links: nothing else of the state can change its answer. `None` in the exact mode, which
    /// does not take one hash for what it stands for.
    pub(crate) fn around(&self, state: &State<A::Process>, a: Action, i: u32) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        if self.config.exact {
            return None;
        }
        let mut h = std::hash::DefaultHasher::new();
        (a, i, state.procs[i as usize]).hash(&mut h);
        for (k, p) in state.procs.iter().enumerate() {
            if *p == DOWN {
                k.hash(&mut h);
            }
        }
        usize::MAX.hash(&mut h);
        let mut elsewhere_arriving = false;
        for (slot, m) in &state.msgs {
            if self.link_far[*slot as usize].0 == i {
                (slot, m.id, m.due).hash(&mut h);
            } else {
                elsewhere_arriving |= m.due.last == 0;
            }
        }
        elsewhere_arriving.hash(&mut h);
        state.timers[state.node_timers(i)].hash(&mut h);
        state.durable.get(i as usize).hash(&mut h);
        state.declared.hash(&mut h);
        let r = &state.rest;
        (r.clash, r.crashes_left, r.doomed, r.recoveries_left, r.duplicates_left, r.next_fault, r.fault_in)
            .hash(&mut h);
        (r.links_down, r.partitions_on, r.ends_in, r.steady, r.now).hash(&mut h);
        Some(h.finish())
    }

    /// The answer of a walk this thread took before with the same [`Self::around`], if any.
    pub(crate) fn walked(&self, around: u64) -> Option<bool> {
        self.walks.get_or_default().borrow().get(&around).copied()
    }

    /// Keeps the answer of a walk for [`Self::walked`] (at most a million a thread: past that they are forgotten).
    pub(crate) fn remember_walk(&self, around: u64, commutes: bool) {
        let mut walks = self.walks.get_or_default().borrow_mut();
        if walks.len() >= 1 << 20 {
            walks.clear();
        }
        walks.insert(around, commutes);
    }

    /// Whether no more faults happen and time passes no further: the run is at its end ([`Self::actions`]).
    pub(crate) fn over(state: &State<A::Process>) -> bool {
        state.rest.ends_in == Some(0) && state.rest.steady == 0
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
}

impl<A: Algorithm> Model<A> {
    /// The fingerprint of process number `id` in the table of processes, or of "down".
    pub(super) fn process_fp(&self, id: u32) -> u64 {
        if id == DOWN { self.down_fp } else { self.processes.fingerprint(id) }
    }

    /// Sets position `node`'s term for a process whose fingerprint is `fp`, in place of the one it had.
    pub(super) fn retally(&self, state: &mut State<A::Process>, node: u32, fp: u64) {
        let old = process_term(node, self.process_fp(state.procs[node as usize]));
        state.rest.parts = state.rest.parts.wrapping_sub(old).wrapping_add(process_term(node, fp));
    }

    /// `state`'s parts, counted from scratch: after a step that changes every message (time passing), and to
    /// check the parts kept up to date.
    pub(super) fn parts(&self, state: &State<A::Process>) -> u64 {
        let procs = (0..state.len() as u32)
            .fold(0u64, |sum, i| sum.wrapping_add(process_term(i, self.process_fp(state.procs[i as usize]))));
        let mut msgs = 0u64;
        let mut k = 0;
        while k < state.msgs.len() {
            let slot = state.msgs[k].0;
            let end = k + state.msgs[k..].partition_point(|(s, _)| *s == slot);
            msgs = msgs.wrapping_add(link_terms(slot, &state.msgs[k..end]));
            k = end;
        }
        procs.wrapping_add(msgs)
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
