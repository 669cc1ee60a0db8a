//! Exhaustive model checking of elect's algorithms: every interleaving of the same [`Process`] implementations
//! the simulator runs, with no re-modelling.
//!
//! **States.** A state is every process's value (or its crash), the messages in flight on every directed link,
//! the timers each process has armed and the crashes and duplications left in their budgets. States
//! are compared by a 64-bit fingerprint (SipHash of the whole state); two distinct states sharing one is possible
//! in principle and would hide one of them, with odds of about `s² / 2⁶⁵` for `s` states.
//!
//! **Actions.** The initial state is the one after every process started and the initiators initiated, in
//! position order, as the simulator does at time 0. From a state, each of these is one step: a message is delivered
//! (the first of its link on [`Network::Fifo`] links, any of them otherwise), lost ([`Network::Lossy`]) or
//! delivered while a copy stays in flight ([`Network::Duplicating`], within a budget of duplications); an armed timer
//! fires (any of them: time is not modelled, so a timeout may expire before the message it waits for arrives, as
//! in stateright); a live process crashes, while the crash budget lasts (crash-stop: the process never returns).
//! Processes see time 0 throughout.
//!
//! **Search.** Breadth-first, so the first violation found has a shortest path; batches of the frontier are
//! expanded in parallel on every core (rayon) and merged in order, so results do not depend on the threads. Every state is judged with the
//! algorithm's own promised properties ([`elect_core::Monitor::check_state`]): "always" properties in every
//! state, "at end" properties (liveness, agreement) in every terminal state, where no action is enabled. The
//! search also records whether a state where every live process agrees on a leader is reachable at all
//! (non-vacuity).

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use elect_algos::{Algorithm, Driver};
use elect_core::{
    Check, Command, Cx, Effect, EffectOf, Instant, Monitor, NodeId, Port, Process, Rank, Status, Violation, Winner,
    World,
};
use elect_sim::{Scenario, SimConfig};
use rayon::prelude::*;
use serde::Serialize;

/// What the network may do with a message in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// Each directed link delivers in sending order.
    #[default]
    Fifo,
    /// Any message in flight on a link may arrive next; none is lost or duplicated.
    Unordered,
    /// As unordered, and any message in flight may be lost.
    Lossy,
    /// As unordered, and a message may arrive twice: as often as the duplication budget allows in a run.
    Duplicating,
}

impl std::str::FromStr for Network {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fifo" => Ok(Self::Fifo),
            "unordered" => Ok(Self::Unordered),
            "lossy" => Ok(Self::Lossy),
            "duplicating" => Ok(Self::Duplicating),
            other => Err(format!("unknown network '{other}' (fifo, unordered, lossy or duplicating)")),
        }
    }
}

/// A model-checking problem: a scenario as `elect sim` takes it (algorithm, nodes, topology, ids, initiators),
/// the network's semantics, a crash budget and bounds on the search.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The scenario; its delays and faults do not apply (the checker explores every order instead).
    pub sim: SimConfig,
    /// What links do.
    pub network: Network,
    /// How many processes may crash (crash-stop).
    pub crashes: u8,
    /// On a duplicating network: how many messages may arrive twice in a run.
    pub duplicates: u8,
    /// Stop after this many unique states (the verdict is then partial).
    pub max_states: usize,
    /// Do not explore beyond this many steps.
    pub max_depth: u32,
    /// Threads (all cores when `None`).
    pub threads: Option<usize>,
}

impl CheckConfig {
    /// Checks `sim`'s algorithm and scenario with FIFO links, no crash, and generous bounds.
    pub fn new(sim: SimConfig) -> Self {
        Self {
            sim,
            network: Network::Fifo,
            crashes: 0,
            duplicates: 1,
            max_states: 2_000_000,
            max_depth: u32::MAX,
            threads: None,
        }
    }
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "action")]
pub enum Step {
    /// A message arrived.
    Deliver {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message, as its `Debug` form shows it.
        msg: String,
    },
    /// A message was lost.
    Lose {
        /// The sender.
        from: NodeId,
        /// The receiver it was for.
        to: NodeId,
        /// The message, as its `Debug` form shows it.
        msg: String,
    },
    /// A timer fired.
    Timer {
        /// Its process.
        node: NodeId,
        /// The timer, as its `Debug` form shows it.
        timer: String,
    },
    /// A process crashed.
    Crash {
        /// Its id.
        node: NodeId,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deliver { from, to, msg } => write!(f, "{to} receives {msg} from {from}"),
            Self::Lose { from, to, msg } => write!(f, "{msg} from {from} to {to} is lost"),
            Self::Timer { node, timer } => write!(f, "{node}'s timer {timer} fires"),
            Self::Crash { node } => write!(f, "{node} crashes"),
        }
    }
}

/// A property that failed, and the shortest path to a state that shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    /// The property.
    pub property: &'static str,
    /// What is wrong in the last state.
    pub detail: String,
    /// The steps from the initial state.
    pub path: Vec<Step>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The algorithm.
    pub algorithm: &'static str,
    /// `n`.
    pub nodes: usize,
    /// The network's semantics.
    pub network: Network,
    /// The crash budget.
    pub crashes: u8,
    /// Unique states visited.
    pub states: u64,
    /// Steps taken (edges of the state graph explored).
    pub transitions: u64,
    /// Terminal states: no action enabled.
    pub terminal: u64,
    /// The longest shortest path to a state.
    pub depth: u32,
    /// Whether every reachable state was visited (no bound cut the search short).
    pub complete: bool,
    /// The properties judged: "always" ones in every state, "at end" ones in terminal states.
    pub properties: Vec<&'static str>,
    /// Whether some reachable state has every live process agreeing on a leader.
    pub leader_reachable: bool,
    /// The first violation found, if any.
    pub counterexample: Option<Counterexample>,
}

impl Outcome {
    /// Whether the search was complete, found no violation, and a leader is reachable.
    pub fn ok(&self) -> bool {
        self.complete && self.counterexample.is_none() && self.leader_reachable
    }
}

/// Why a check could not run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A bad scenario (exit status 2).
    #[error("{0}")]
    Config(String),
}

/// Explores every interleaving of `config`'s scenario.
pub fn check(config: &CheckConfig) -> Result<Outcome, CheckError> {
    let scenario = Scenario::build(&config.sim).map_err(|e| CheckError::Config(e.0))?;
    if config.sim.monitor.is_some() || config.sim.synchronizer.is_some() || config.sim.mobility.is_some() {
        return Err(CheckError::Config(
            "the checker runs an algorithm as it is: --monitor, --synchronizer and --mobility are not supported yet"
                .into(),
        ));
    }
    let run = Run { scenario, config: config.clone() };
    elect_algos::dispatch(&config.sim.algorithm, &config.sim.params, run)
        .map_err(|e| CheckError::Config(e.to_string()))?
}

struct Run {
    scenario: Scenario,
    config: CheckConfig,
}

impl Driver for Run {
    type Output = Result<Outcome, CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.scenario.ids).map_err(|e| CheckError::Config(e.to_string()))?;
        Ok(Explorer::new(algorithm, self.scenario, self.config).run())
    }
}

/// A state of the whole system.
#[derive(Clone, PartialEq, Eq, Hash)]
struct State<P: Process> {
    /// Each process, `None` once crashed.
    procs: Vec<Option<P>>,
    /// Messages in flight by directed link (the sender's link slot), oldest first.
    links: Vec<Vec<P::Msg>>,
    /// Armed timers by process, sorted.
    timers: Vec<Vec<P::Timer>>,
    crashes_left: u8,
    duplicates_left: u8,
}

/// An action enabled in a state.
#[derive(Clone, Copy, Debug)]
enum Action {
    Deliver {
        link: u32,
        index: u32,
    },
    /// Delivers a copy and leaves the message in flight (duplicating networks).
    DeliverCopy {
        link: u32,
        index: u32,
    },
    Lose {
        link: u32,
        index: u32,
    },
    Fire {
        node: u32,
        timer: u32,
    },
    Crash(u32),
}

struct Explorer<A: Algorithm> {
    algorithm: A,
    scenario: Scenario,
    config: CheckConfig,
    checks: Vec<Check>,
    winner: Winner,
    /// By link slot: the sending process and its port.
    link_ends: Vec<(u32, u32)>,
}

impl<A: Algorithm> Explorer<A> {
    fn new(algorithm: A, scenario: Scenario, config: CheckConfig) -> Self {
        let graph = &scenario.graph;
        let mut link_ends = vec![(0, 0); graph.link_slots()];
        for node in 0..scenario.len() as u32 {
            for port in 0..graph.degree(node) {
                link_ends[graph.link_index(node, port)] = (node, port);
            }
        }
        let (checks, winner) = (algorithm.checks(), algorithm.winner());
        Self { algorithm, scenario, config, checks, winner, link_ends }
    }

    fn initial(&self) -> State<A::Process> {
        let n = self.scenario.len();
        let mut state = State {
            procs: Vec::with_capacity(n),
            links: vec![Vec::new(); self.link_ends.len()],
            timers: vec![Vec::new(); n],
            crashes_left: self.config.crashes,
            duplicates_left: if self.config.network == Network::Duplicating { self.config.duplicates } else { 0 },
        };
        for i in 0..n as u32 {
            let mut p = elect_sim::build_process(&self.algorithm, &self.scenario, i);
            let mut effects = Vec::new();
            p.on_start(&mut Cx::new(Instant::from_ticks(0), &mut effects), None);
            state.procs.push(Some(p));
            self.apply(&mut state, i, &mut effects);
        }
        // As in the simulator, the initiators initiate at time 0, before anything is delivered.
        for i in (0..n as u32).filter(|&i| self.scenario.initiators[i as usize]) {
            let mut effects = Vec::new();
            let p = state.procs[i as usize].as_mut().expect("every process is live at the start");
            p.on_command(&mut Cx::new(Instant::from_ticks(0), &mut effects), Command::Initiate);
            self.apply(&mut state, i, &mut effects);
        }
        state
    }

    /// Carries out the effects `node` recorded.
    fn apply(&self, state: &mut State<A::Process>, node: u32, effects: &mut Vec<EffectOf<A::Process>>) {
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => {
                    state.links[self.scenario.graph.link_index(node, to.0)].push(msg);
                }
                Effect::SetTimer { timer, .. } => {
                    let timers = &mut state.timers[node as usize];
                    if let Err(at) = timers.binary_search(&timer) {
                        timers.insert(at, timer);
                    }
                }
                Effect::CancelTimer { timer } => state.timers[node as usize].retain(|t| *t != timer),
                // Crash-stop: nothing is restored, so nothing needs keeping.
                Effect::Persist(_) | Effect::Notify(_) => {}
            }
        }
    }

    fn actions(&self, state: &State<A::Process>) -> Vec<Action> {
        let mut out = Vec::new();
        for (link, msgs) in state.links.iter().enumerate() {
            let to = self.scenario.graph.far_end(self.link_ends[link].0, self.link_ends[link].1).node;
            if msgs.is_empty() || state.procs[to as usize].is_none() {
                continue;
            }
            let link = link as u32;
            if self.config.network == Network::Fifo {
                out.push(Action::Deliver { link, index: 0 });
                continue;
            }
            for (index, m) in msgs.iter().enumerate() {
                // Equal messages lead to equal states: one of them stands for all.
                if msgs[..index].contains(m) {
                    continue;
                }
                let index = index as u32;
                out.push(Action::Deliver { link, index });
                match self.config.network {
                    Network::Lossy => out.push(Action::Lose { link, index }),
                    Network::Duplicating if state.duplicates_left > 0 => out.push(Action::DeliverCopy { link, index }),
                    _ => {}
                }
            }
        }
        for (node, timers) in state.timers.iter().enumerate() {
            if state.procs[node].is_some() {
                out.extend((0..timers.len()).map(|t| Action::Fire { node: node as u32, timer: t as u32 }));
            }
        }
        if state.crashes_left > 0 {
            out.extend((0..state.procs.len()).filter(|&i| state.procs[i].is_some()).map(|i| Action::Crash(i as u32)));
        }
        out
    }

    /// Everything the search needs from one state: its verdict, and its successors with their fingerprints.
    fn expand(&self, state: &State<A::Process>, depth: u32, seen: &HashSet<u64>) -> Expanded<A::Process> {
        let actions = self.actions(state);
        // A run may end here: nothing is left to happen but crashes it need not suffer.
        let quiescent = actions.iter().all(|a| matches!(a, Action::Crash(_)));
        let violation = self.judge(state, quiescent);
        let next = if violation.is_some() || depth >= self.config.max_depth {
            Vec::new()
        } else {
            // States seen in earlier batches are dropped here, while still in cache; the merge catches the rest.
            actions
                .iter()
                .filter_map(|&action| {
                    let next = self.step(state, action);
                    let fp = fingerprint(&next);
                    (!seen.contains(&fp)).then_some((action, fp, next))
                })
                .collect()
        };
        let cut = depth >= self.config.max_depth && !actions.is_empty();
        let transitions = if violation.is_some() || cut { 0 } else { actions.len() as u64 };
        Expanded { quiescent, agreed: agreed(state), violation, cut, transitions, next }
    }

    /// The state after `action`, and the step as a path shows it.
    fn step(&self, state: &State<A::Process>, action: Action) -> State<A::Process> {
        let mut next = state.clone();
        let mut effects = Vec::new();
        let node = match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } => {
                let (from, port) = self.link_ends[link as usize];
                let end = self.scenario.graph.far_end(from, port);
                let msg = if let Action::DeliverCopy { .. } = action {
                    next.duplicates_left -= 1;
                    next.links[link as usize][index as usize].clone()
                } else {
                    next.links[link as usize].remove(index as usize)
                };
                let p = next.procs[end.node as usize].as_mut().expect("only live processes receive");
                p.on_message(&mut Cx::new(Instant::from_ticks(0), &mut effects), Port(end.port), msg);
                end.node
            }
            Action::Lose { link, index } => {
                next.links[link as usize].remove(index as usize);
                self.link_ends[link as usize].0
            }
            Action::Fire { node, timer } => {
                let timer = next.timers[node as usize].remove(timer as usize);
                let p = next.procs[node as usize].as_mut().expect("only live processes' timers fire");
                p.on_timer(&mut Cx::new(Instant::from_ticks(0), &mut effects), timer);
                node
            }
            Action::Crash(i) => {
                next.procs[i as usize] = None;
                next.timers[i as usize].clear();
                next.crashes_left -= 1;
                i
            }
        };
        self.apply(&mut next, node, &mut effects);
        next
    }

    fn describe(&self, state: &State<A::Process>, action: Action) -> Step {
        let id = |i: u32| self.scenario.ids[i as usize];
        match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } | Action::Lose { link, index } => {
                let (from, port) = self.link_ends[link as usize];
                let to = self.scenario.graph.far_end(from, port).node;
                let msg = format!("{:?}", state.links[link as usize][index as usize]);
                let (from, to) = (id(from), id(to));
                if let Action::Lose { .. } = action {
                    Step::Lose { from, to, msg }
                } else {
                    Step::Deliver { from, to, msg }
                }
            }
            Action::Fire { node, timer } => {
                Step::Timer { node: id(node), timer: format!("{:?}", state.timers[node as usize][timer as usize]) }
            }
            Action::Crash(i) => Step::Crash { node: id(i) },
        }
    }

    fn judge(&self, state: &State<A::Process>, terminal: bool) -> Option<Violation> {
        let world = View { state, scenario: &self.scenario };
        Monitor::check_state(&self.checks, self.winner, &world, terminal).into_iter().next()
    }

    fn run(self) -> Outcome {
        let initial = self.initial();
        let mut seen: HashSet<u64> = HashSet::new();
        seen.insert(fingerprint(&initial));
        // Every state found, by number: how it was reached. States themselves live only in the frontier; a path
        // is rebuilt by replaying its actions from the initial state.
        let mut found: Vec<(u32, Option<Action>)> = vec![(0, None)];
        let mut queue: VecDeque<(u32, u32, State<A::Process>)> = VecDeque::from([(0, 0, initial)]);
        let mut outcome = Outcome {
            algorithm: A::INFO.name,
            nodes: self.scenario.len(),
            network: self.config.network,
            crashes: self.config.crashes,
            states: 1,
            transitions: 0,
            terminal: 0,
            depth: 0,
            complete: true,
            properties: self.checks.iter().map(|c| c.property.name()).collect(),
            leader_reachable: false,
            counterexample: None,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.config.threads.unwrap_or(0))
            .build()
            .expect("the checker's threads start");
        while !queue.is_empty() {
            // A batch of the frontier is expanded in parallel, then merged in frontier order, so that numbering,
            // verdicts and paths do not depend on the number of threads.
            let batch: Vec<(u32, u32, State<A::Process>)> = queue.drain(..queue.len().min(BATCH)).collect();
            let expanded: Vec<Expanded<A::Process>> =
                pool.install(|| batch.par_iter().map(|(_, depth, state)| self.expand(state, *depth, &seen)).collect());
            for ((at, depth, _), e) in batch.iter().zip(expanded) {
                outcome.depth = outcome.depth.max(*depth);
                outcome.leader_reachable |= e.agreed;
                outcome.terminal += u64::from(e.quiescent);
                if let Some(v) = e.violation {
                    outcome.counterexample = Some(self.counterexample(&found, *at, v));
                    return outcome;
                }
                outcome.complete &= !e.cut;
                outcome.transitions += e.transitions;
                for (action, fp, next) in e.next {
                    if !seen.insert(fp) {
                        continue;
                    }
                    if found.len() >= self.config.max_states {
                        outcome.complete = false;
                        continue;
                    }
                    found.push((*at, Some(action)));
                    queue.push_back((found.len() as u32 - 1, depth + 1, next));
                    outcome.states += 1;
                }
            }
        }
        outcome
    }

    fn counterexample(&self, found: &[(u32, Option<Action>)], at: u32, v: Violation) -> Counterexample {
        let mut actions = Vec::new();
        let mut i = at;
        while let (parent, Some(action)) = found[i as usize] {
            actions.push(action);
            i = parent;
        }
        actions.reverse();
        let mut state = self.initial();
        let mut path = Vec::with_capacity(actions.len());
        for action in actions {
            path.push(self.describe(&state, action));
            state = self.step(&state, action);
        }
        Counterexample { property: v.property.name(), detail: v.detail, path }
    }
}

/// States expanded in parallel at a time.
const BATCH: usize = 256;

/// One state's verdict and successors.
struct Expanded<P: Process> {
    quiescent: bool,
    agreed: bool,
    violation: Option<Violation>,
    /// Actions were left unexplored at the depth bound.
    cut: bool,
    /// Successors computed.
    transitions: u64,
    next: Vec<(Action, u64, State<P>)>,
}

fn fingerprint<T: Hash>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// Whether every live process follows the same leader.
fn agreed<P: Process>(state: &State<P>) -> bool {
    let mut leaders = state.procs.iter().flatten().map(|p| p.status().leader);
    match leaders.next() {
        Some(Some(first)) => leaders.all(|l| l == Some(first)),
        _ => false,
    }
}

/// A state as the property predicates see it.
struct View<'a, P: Process> {
    state: &'a State<P>,
    scenario: &'a Scenario,
}

impl<P: Process> World for View<'_, P> {
    fn len(&self) -> usize {
        self.state.procs.len()
    }
    fn id(&self, i: usize) -> NodeId {
        self.scenario.ids[i]
    }
    fn rank(&self, i: usize) -> Rank {
        self.scenario.ranks[i]
    }
    fn status(&self, i: usize) -> Status {
        self.state.procs[i].as_ref().map_or(Status::DOWN, Process::status)
    }
    fn is_initiator(&self, i: usize) -> bool {
        self.scenario.initiators[i]
    }
}
