//! The simulation loop, monomorphized per algorithm.
//!
//! Per delivered message the loop pops the queue, calls the handler, applies its effects (a send is a counter
//! increment, a delay draw and a push), and compares the process's status before and after; properties are
//! re-evaluated only when a status changes. Messages travel by value: no allocation, boxing or hashing per
//! message.

use std::collections::BTreeMap;
use std::io::Write;

use elect_algos::{Algorithm, Facts, Measure};
use elect_core::{
    Command, Cx, Effect, EffectOf, Instant, Message, Monitor, NodeId, Notice, Port, Process, Property, Rank, Setup,
    Status, Violation, World,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::config::Delay;
use crate::queue::EventQueue;
use crate::report::{BoundReport, Messages, Properties, Report, Time, Verdict, ViolationReport};
use crate::scenario::{Scenario, Stream, rng};
use crate::topology::End;
use crate::trace::{Record, Trace};

/// Event classes, in the order they run at equal times: a fault at `T` takes effect before anything else at `T`,
/// commands come next, then messages, and timers last (a reply arriving exactly at a deadline beats it).
const CRASH: usize = 0;
const COMMAND: usize = 1;
const MESSAGE: usize = 2;
const TIMER: usize = 3;

enum Ev<M, T> {
    Deliver { to: u32, port: u32, id: u64, msg: M },
    Timer { node: u32, timer: T, seq: u64 },
    Command { node: u32, cmd: Command },
    Crash { node: u32 },
}

type Msg<A> = <<A as Algorithm>::Process as Process>::Msg;
type TimerOf<A> = <<A as Algorithm>::Process as Process>::Timer;
type DurableOf<A> = <<A as Algorithm>::Process as Process>::Durable;

/// How far ahead the event queue's wheel should reach: twice the longest likely delay.
fn horizon(delay: Delay) -> u64 {
    2 * match delay {
        Delay::Constant(d) | Delay::Uniform(_, d) => d,
        Delay::Exp(mean) => 4 * mean,
    }
}

/// Why a run stopped short of a report.
#[derive(Debug)]
pub enum RunError {
    /// The trace could not be written.
    Trace(std::io::Error),
    /// Virtual time would pass the largest representable instant.
    TimeOverflow(Time),
}

/// How far a run has got, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Events processed so far.
    pub events: u64,
    /// Messages sent so far.
    pub messages: u64,
    /// The current virtual time.
    pub time: Time,
    /// Events still queued.
    pub queued: usize,
}

/// A progress callback.
pub type ProgressFn = Box<dyn FnMut(&Progress) + Send>;

/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 22;

/// The read-only view of all processes that properties evaluate.
struct View<'a, P> {
    ids: &'a [NodeId],
    ranks: &'a [Rank],
    initiators: &'a [bool],
    procs: &'a [P],
    up: &'a [bool],
}

impl<P: Process> World for View<'_, P> {
    fn len(&self) -> usize {
        self.ids.len()
    }
    fn id(&self, i: usize) -> NodeId {
        self.ids[i]
    }
    fn rank(&self, i: usize) -> Rank {
        self.ranks[i]
    }
    fn status(&self, i: usize) -> Status {
        if self.up[i] { self.procs[i].status() } else { Status::DOWN }
    }
    fn is_initiator(&self, i: usize) -> bool {
        self.initiators[i]
    }
}

macro_rules! view {
    ($sim:expr) => {
        View {
            ids: &$sim.scenario.ids,
            ranks: &$sim.scenario.ranks,
            initiators: &$sim.scenario.initiators,
            procs: &$sim.procs,
            up: &$sim.up,
        }
    };
}

/// One simulation of algorithm `A`.
pub struct Sim<A: Algorithm> {
    algorithm: A,
    scenario: Scenario,
    procs: Vec<A::Process>,
    up: Vec<bool>,
    learned_at: Vec<u64>,
    queue: EventQueue<Ev<Msg<A>, TimerOf<A>>>,
    timers: BTreeMap<(u32, TimerOf<A>), u64>,
    timer_seq: u64,
    durable: Vec<Option<DurableOf<A>>>,
    effects: Vec<EffectOf<A::Process>>,
    delays: ChaCha8Rng,
    jitter: ChaCha8Rng,
    /// Per directed link, the latest delivery time scheduled, to keep links FIFO under random delays.
    link_clock: Vec<u64>,
    by_kind: Vec<u64>,
    bits: u64,
    events: u64,
    sent: u64,
    delivered: u64,
    monitor: Monitor,
    /// When a process last performed the "I am the leader" action.
    declared: Option<u64>,
    found: Vec<Violation>,
    violations: Vec<ViolationReport>,
    trace: Option<Trace>,
    progress: Option<ProgressFn>,
    next_progress: u64,
    now: u64,
    /// The time of the last event processed (stale timers and drops are not events).
    last_event: u64,
    terminated: bool,
    /// Set when a deadline would pass the largest instant; the run stops.
    overflowed: bool,
    ran: bool,
}

impl<A: Algorithm> Sim<A> {
    /// Builds every process of `scenario` (none has started yet).
    pub fn new(algorithm: A, scenario: Scenario) -> Self {
        let n = scenario.len();
        let mut neighbors = Vec::new();
        let procs: Vec<A::Process> = (0..n as u32)
            .map(|i| {
                neighbors.clear();
                neighbors.extend((0..scenario.graph.degree(i)).map(|p| {
                    let End { node, .. } = scenario.graph.far_end(i, p);
                    elect_core::Neighbor {
                        port: Port(p),
                        id: scenario.ids[node as usize],
                        rank: scenario.ranks[node as usize],
                    }
                }));
                algorithm.build(&Setup {
                    id: scenario.ids[i as usize],
                    rank: scenario.ranks[i as usize],
                    neighbors: &neighbors,
                    ring: scenario.graph.ring_ports(i),
                    delay_bound: scenario.delay_bound,
                })
            })
            .collect();
        let link_clock = if scenario.config.fifo && scenario.config.delay.is_random() {
            vec![0; scenario.graph.link_slots()]
        } else {
            Vec::new()
        };
        let seed = scenario.config.seed;
        Self {
            monitor: Monitor::new(algorithm.checks(), algorithm.winner()),
            algorithm,
            procs,
            up: vec![true; n],
            learned_at: vec![0; n],
            queue: EventQueue::new(horizon(scenario.config.delay)),
            timers: BTreeMap::new(),
            timer_seq: 0,
            durable: vec![None; n],
            effects: Vec::new(),
            delays: rng(seed, Stream::Delays),
            jitter: rng(seed, Stream::Timers),
            link_clock,
            by_kind: vec![0; Msg::<A>::KINDS.len()],
            bits: 0,
            events: 0,
            sent: 0,
            delivered: 0,
            declared: None,
            found: Vec::new(),
            violations: Vec::new(),
            trace: None,
            progress: None,
            next_progress: PROGRESS_EVERY,
            now: 0,
            last_event: 0,
            terminated: false,
            overflowed: false,
            ran: false,
            scenario,
        }
    }

    /// Writes a JSON-lines trace of the run to `out`.
    pub fn trace_to(&mut self, out: Box<dyn Write + Send>) {
        self.trace = Some(Trace::new(out));
    }

    /// Calls `f` every few million events while the run goes on.
    pub fn on_progress(&mut self, f: ProgressFn) {
        self.progress = Some(f);
    }

    /// The processes, by position (their final states after [`Sim::run`]).
    pub fn processes(&self) -> &[A::Process] {
        &self.procs
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The last durable state each process persisted, by position.
    pub fn durable(&self) -> &[Option<DurableOf<A>>] {
        &self.durable
    }

    fn record(&mut self, record: Record<'_, Msg<A>, TimerOf<A>>) {
        if let Some(trace) = &mut self.trace {
            trace.record(&record);
        }
    }

    fn id(&self, position: u32) -> NodeId {
        self.scenario.ids[position as usize]
    }

    fn t(&self) -> Time {
        Time(self.now)
    }

    /// Runs to quiescence or until the event budget is spent.
    pub fn run(&mut self) -> Result<(), RunError> {
        assert!(!self.ran, "a simulation runs once");
        self.ran = true;
        self.begin();
        let budget = self.scenario.config.max_events;
        self.terminated = loop {
            if self.overflowed {
                return Err(RunError::TimeOverflow(Time(self.now)));
            }
            if self.events >= budget {
                break self.pending_work() == 0;
            }
            let Some((time, event)) = self.queue.pop() else { break true };
            self.now = time;
            self.dispatch(event);
            if self.events >= self.next_progress {
                self.report_progress();
            }
        };
        self.end();
        self.trace.take().map_or(Ok(()), Trace::finish).map_err(RunError::Trace)
    }

    /// Empties the queue and counts the events that would still have done something (cancelled timers and
    /// messages to crashed processes do not count).
    fn pending_work(&mut self) -> usize {
        let mut live = 0;
        while let Some((_, event)) = self.queue.pop() {
            live += usize::from(match event {
                Ev::Deliver { to, .. } | Ev::Command { node: to, .. } | Ev::Crash { node: to } => self.up[to as usize],
                Ev::Timer { node, timer, seq } => self.timers.get(&(node, timer)) == Some(&seq),
            });
        }
        live
    }

    /// `self.now + after`, or the end of the run if that would overflow.
    fn later(&mut self, after: u64) -> u64 {
        self.now.checked_add(after).unwrap_or_else(|| {
            self.overflowed = true;
            self.now
        })
    }

    fn report_progress(&mut self) {
        self.next_progress = self.events + PROGRESS_EVERY;
        let progress =
            Progress { events: self.events, messages: self.sent, time: Time(self.now), queued: self.queue.len() };
        if let Some(f) = &mut self.progress {
            f(&progress);
        }
    }

    fn begin(&mut self) {
        let sc = &self.scenario;
        let initiators: Vec<NodeId> = (0..sc.len()).filter(|&i| sc.initiators[i]).map(|i| sc.ids[i]).collect();
        let header = Record::Run {
            algorithm: sc.info.name,
            topology: sc.graph.kind().name(),
            nodes: sc.len(),
            seed: sc.config.seed,
            delay: sc.config.delay.to_string(),
            ids: &sc.ids,
            initiators,
        };
        if let Some(trace) = &mut self.trace {
            trace.record::<Msg<A>, TimerOf<A>>(&header);
        }
        let mut found = std::mem::take(&mut self.found);
        self.monitor.reset(&view!(self), &mut found);
        self.found = found;
        self.flush_found();
        let crashes = self.scenario.crashes.clone();
        for &(node, at) in crashes.iter().filter(|&&(_, at)| at == 0) {
            debug_assert_eq!(at, 0);
            self.crash(node);
        }
        for node in 0..self.scenario.len() as u32 {
            if self.up[node as usize] {
                let node_id = self.id(node);
                self.record(Record::Start { t: self.t(), node: node_id });
                self.handle(node, |p, cx| p.on_start(cx, None));
            }
        }
        for node in 0..self.scenario.len() as u32 {
            if self.scenario.initiators[node as usize] {
                self.queue.push(0, COMMAND, Ev::Command { node, cmd: Command::Initiate });
            }
        }
        for &(node, at) in crashes.iter().filter(|&&(_, at)| at > 0) {
            self.queue.push(at, CRASH, Ev::Crash { node });
        }
    }

    fn dispatch(&mut self, event: Ev<Msg<A>, TimerOf<A>>) {
        match event {
            Ev::Deliver { to, port, id, msg } => {
                let sender = |sim: &Self| sim.id(sim.scenario.graph.far_end(to, port).node);
                if !self.up[to as usize] {
                    let from = sender(self);
                    self.record(Record::Drop { t: self.t(), node: self.id(to), from, id, reason: "down" });
                    return;
                }
                self.count_event();
                self.delivered += 1;
                if self.trace.is_some() {
                    let from = sender(self);
                    self.record(Record::Deliver {
                        t: self.t(),
                        node: self.id(to),
                        from,
                        id,
                        kind: msg.kind(),
                        msg: &msg,
                    });
                }
                self.handle(to, |p, cx| p.on_message(cx, Port(port), msg));
            }
            Ev::Timer { node, timer, seq } => {
                if self.timers.get(&(node, timer)) != Some(&seq) {
                    return; // Cancelled or re-armed since.
                }
                self.timers.remove(&(node, timer));
                self.count_event();
                self.record(Record::Timer { t: self.t(), node: self.id(node), timer: &timer });
                self.handle(node, |p, cx| p.on_timer(cx, timer));
            }
            Ev::Command { node, cmd } => {
                if !self.up[node as usize] {
                    return;
                }
                self.count_event();
                self.record(Record::Command { t: self.t(), node: self.id(node), cmd });
                self.handle(node, |p, cx| p.on_command(cx, cmd));
            }
            Ev::Crash { node } => self.crash(node),
        }
    }

    fn count_event(&mut self) {
        self.events += 1;
        self.last_event = self.now;
    }

    fn crash(&mut self, node: u32) {
        if !self.up[node as usize] {
            return;
        }
        self.count_event();
        self.up[node as usize] = false;
        self.timers.retain(|&(n, _), _| n != node);
        self.record(Record::Crash { t: self.t(), node: self.id(node) });
        let mut found = std::mem::take(&mut self.found);
        self.monitor.reset(&view!(self), &mut found);
        self.found = found;
        self.flush_found();
    }

    /// Calls one handler of process `node`, carries out its effects, and checks the properties if its status
    /// changed.
    fn handle(&mut self, node: u32, f: impl FnOnce(&mut A::Process, &mut Cx<'_, A::Process>)) {
        let before = self.procs[node as usize].status();
        let mut effects = std::mem::take(&mut self.effects);
        f(&mut self.procs[node as usize], &mut Cx::new(Instant::from_ticks(self.now), &mut effects));
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => self.send(node, to, msg),
                Effect::SetTimer { timer, after } => {
                    let (min, max) = (after.min.ticks(), after.max.ticks());
                    let after = if min == max { min } else { self.jitter.random_range(min..=max) };
                    self.timer_seq += 1;
                    self.timers.insert((node, timer), self.timer_seq);
                    let at = self.later(after);
                    self.queue.push(at, TIMER, Ev::Timer { node, timer, seq: self.timer_seq });
                }
                Effect::CancelTimer { timer } => {
                    self.timers.remove(&(node, timer));
                }
                Effect::Persist(durable) => self.durable[node as usize] = Some(durable),
                Effect::Notify(notice) => self.notice(node, notice),
            }
        }
        self.effects = effects;
        let after = self.procs[node as usize].status();
        if after != before {
            self.changed(node, before, after);
        }
    }

    fn send(&mut self, node: u32, port: Port, msg: Msg<A>) {
        let graph = self.scenario.graph;
        let end = graph.far_end(node, port.0);
        self.by_kind[msg.kind_index()] += 1;
        self.bits += 8 * postcard::experimental::serialized_size(&msg).expect("messages serialize") as u64;
        let delay = self.draw_delay();
        let mut at = self.later(delay);
        if !self.link_clock.is_empty() {
            let link = graph.link_index(node, port.0);
            at = at.max(self.link_clock[link]);
            self.link_clock[link] = at;
        }
        self.sent += 1;
        let id = self.sent;
        if self.trace.is_some() {
            let (t, from, to, at) = (self.t(), self.id(node), self.id(end.node), Time(at));
            self.record(Record::Send { t, node: from, to, id, at, kind: msg.kind(), msg: &msg });
        }
        self.queue.push(at, MESSAGE, Ev::Deliver { to: end.node, port: end.port, id, msg });
    }

    fn draw_delay(&mut self) -> u64 {
        match self.scenario.config.delay {
            Delay::Constant(d) => d,
            Delay::Uniform(a, b) => self.delays.random_range(a..=b),
            Delay::Exp(mean) => {
                let u: f64 = self.delays.random();
                ((-(1.0 - u).ln() * mean as f64).round() as u64).max(1)
            }
        }
    }

    fn notice(&mut self, node: u32, notice: Notice) {
        let Notice::Elected { .. } = notice;
        self.declared = Some(self.now);
        self.record(Record::Notice { t: self.t(), node: self.id(node), notice });
        let mut found = std::mem::take(&mut self.found);
        self.monitor.on_notice(&view!(self), node as usize, notice, &mut found);
        self.found = found;
        self.flush_found();
    }

    /// Process `node`'s status went from `old` to `new`.
    #[cold]
    fn changed(&mut self, node: u32, old: Status, new: Status) {
        let i = node as usize;
        if new.leader != old.leader {
            self.learned_at[i] = self.now;
        }
        self.record(Record::Status { t: self.t(), node: self.id(node), status: new });
        let mut found = std::mem::take(&mut self.found);
        self.monitor.on_change(&view!(self), i, old, new, &mut found);
        self.found = found;
        self.flush_found();
    }

    fn flush_found(&mut self) {
        let mut found = std::mem::take(&mut self.found);
        for v in found.drain(..) {
            let t = self.t();
            self.record(Record::Violation { t, property: v.property, node: v.node, detail: &v.detail });
            self.violations.push(ViolationReport::new(self.now, v));
        }
        self.found = found;
    }

    fn end(&mut self) {
        self.now = self.last_event;
        let mut found = std::mem::take(&mut self.found);
        if self.terminated {
            self.monitor.at_end(&view!(self), &mut found);
        } else if self.monitor.checks().iter().any(|c| c.property == Property::Liveness) {
            let detail = format!("the run did not terminate within {} events", self.scenario.config.max_events);
            found.push(Violation { property: Property::Liveness, node: None, detail });
        }
        self.found = found;
        self.flush_found();
        let record = Record::End { t: self.t(), events: self.events, messages: self.sent, terminated: self.terminated };
        self.record(record);
    }

    /// What the run measured and checked. Call after [`Sim::run`].
    pub fn report(&self) -> Report {
        let sc = &self.scenario;
        let live: Vec<usize> = (0..sc.len()).filter(|&i| self.up[i]).collect();
        let first = live.first().and_then(|&i| self.procs[i].status().leader);
        let agreed = first.is_some() && live.iter().all(|&i| self.procs[i].status().leader == first);
        let leader = if agreed { first } else { None };
        let elected_at = agreed.then(|| Time(live.iter().map(|&i| self.learned_at[i]).max().unwrap_or(0)));
        let declared_at = self.declared.map(Time);
        let kinds = Msg::<A>::KINDS;
        let by_kind: Vec<(&'static str, u64)> = kinds.iter().copied().zip(self.by_kind.iter().copied()).collect();
        let facts = Facts {
            nodes: sc.len() as u64,
            edges: sc.graph.edges(),
            initiators: sc.initiators.iter().filter(|&&b| b).count() as u64,
            live: live.len() as u64,
            crashes_during_run: sc.crashes.iter().filter(|&&(_, at)| at > 0).count() as u64,
        };
        let bounds = self
            .algorithm
            .bounds(&facts)
            .into_iter()
            .map(|b| {
                let measured = match b.measure {
                    Measure::Messages => self.sent,
                    Measure::Kinds(ks) => {
                        ks.iter().map(|k| by_kind.iter().find(|(n, _)| n == k).map_or(0, |p| p.1)).sum()
                    }
                };
                BoundReport { name: b.name, value: b.value, measured, held: measured <= b.value }
            })
            .collect();
        let verdict = |class| {
            if self.violations.iter().any(|v| v.property.class() == class) { Verdict::Violated } else { Verdict::Held }
        };
        Report {
            algorithm: sc.info.name,
            topology: sc.graph.kind().name(),
            nodes: sc.len(),
            edges: sc.graph.edges(),
            seed: sc.config.seed,
            leader,
            agreed,
            elected_at,
            declared_at,
            messages: Messages { total: self.sent, by_kind },
            bits: self.bits,
            delivered: self.delivered,
            events: self.events,
            properties: Properties {
                safety: verdict(elect_core::property::Class::Safety),
                liveness: verdict(elect_core::property::Class::Liveness),
                violations: self.violations.clone(),
                checked: self.monitor.checks().iter().map(|c| (c.property.name(), c.when)).collect(),
            },
            bounds,
            initiators: facts.initiators as usize,
            live: live.len(),
            delay: sc.config.delay.to_string(),
            links: if sc.config.fifo { "fifo" } else { "unordered" },
            end_time: Time(self.last_event),
            terminated: self.terminated,
            expected_leader: self.monitor.expected(),
            reproduce: sc.config.command_line(),
        }
    }
}
