//! The simulation loop, monomorphized per algorithm.
//!
//! Per delivered message the loop pops the queue, calls the handler, applies its effects (a send is a counter
//! increment, a delay draw and a push), and compares the process's status before and after; properties are
//! re-evaluated only when a status changes. Messages travel by value: no allocation, boxing or hashing per
//! message.

use std::borrow::Cow;
use std::io::Write;

use elect_algos::{Algorithm, Facts};
use elect_core::driver::{self, Host, Restart};
use elect_core::{
    Command, EffectOf, Event, EventOf, Instant, Message, Monitor, NodeId, Notice, Outbox, Peers, Port, Process,
    Property, Span, Status, StatusKey, Violation,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use elect_scenario::rng::{Stream, rng};
use elect_scenario::{Delay, End, Graph, MobilitySpec, Probability, Record, Scenario, Scheduled, Time, build_process};

use crate::event::{COMMAND, Ev, Express, FAULT, Fault, MESSAGE, TIMER, count_send, horizon};
use crate::finish::{Counters, Finished, PulseLog};
use crate::judge::{Judge, View};
use crate::mobility::Mobile;
use crate::network::{Fate, Network};
use crate::queue::EventQueue;
use crate::report::Report;
use crate::timers::Timers;
use crate::trace::Trace;

pub(crate) mod bare;
mod deliver;
mod end;
mod faults;

type Msg<A> = <<A as Algorithm>::Process as Process>::Msg;
type TimerOf<A> = <<A as Algorithm>::Process as Process>::Timer;
type DurableOf<A> = <<A as Algorithm>::Process as Process>::Durable;
/// A trace line of a run of `A`, which borrows its message, timer and view.
type Line<'a, A> = Record<'a, &'a Msg<A>, &'a TimerOf<A>, &'a elect_core::View>;

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
/// Deliveries between two read-aheads of the queue ([`Sim::warm`]).
const WARM_BATCH: u64 = 16;
/// Processes' states smaller than this (in bytes) stay in a core's own cache, its second level (1 MiB on the
/// machines measured): reading ahead would only cost time. Above it, each step that finds its process's state in
/// the shared cache waits for it: with the bound at 4 MiB, Hirschberg-Sinclair on 2^17 processes (4 MiB of state)
/// spent half its loop on that first read.
const READ_AHEAD_ABOVE: usize = 1 << 20;

/// The size of a cache line on the machines the simulator runs on (x86-64 and most ARM cores).
const CACHE_LINE: usize = 64;

/// Asks for the cache line holding `p`, without waiting for it.
#[inline(always)]
fn prefetch<T: Clone>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(p);
    #[cfg(not(target_arch = "x86_64"))]
    std::hint::black_box(p.clone());
}

/// One simulation of algorithm `A`.
pub struct Sim<A: Algorithm> {
    algorithm: A,
    scenario: Scenario,
    procs: Vec<A::Process>,
    up: Vec<bool>,
    /// How many processes are down: while none is, a delivery need not read [`Self::up`], nor the read-ahead ask
    /// for it.
    down: usize,
    /// When each process last learned its leader.
    learned_at: Vec<u64>,
    /// The last durable state each process persisted.
    durable: Vec<Option<DurableOf<A>>>,
    /// The effects of the step being carried out (kept to reuse its memory).
    effects: Vec<EffectOf<A::Process>>,
    queue: EventQueue<Ev<Msg<A>, TimerOf<A>>>,
    /// The delay is constant: deliveries go to the queue's FIFO ([`Self::queue_message`]).
    steady: bool,
    /// The run is plain: a constant delay (this one), links that need no clock of their own, no moving nodes and
    /// no trace. Set when the run begins.
    plain: Option<u64>,
    /// The run is plain ([`Self::plain`], this delay), the network is perfect now and time has not overflowed: a
    /// send is counted and queued to the FIFO, and nothing else ([`Self::send`]). Kept up to date where any of
    /// the three changes ([`Self::refresh_express`]), so that a send asks once.
    express: Option<u64>,
    /// Whether the processes' states are too large for the cache, so that the loop reads ahead ([`Self::warm`]).
    read_ahead: bool,
    timers: Timers<TimerOf<A>>,
    delays: ChaCha8Rng,
    /// Per directed link, the latest delivery time scheduled, to keep links FIFO under random delays.
    link_clock: Vec<u64>,
    network: Network,
    /// Moving nodes, on a mobile network.
    mobile: Option<Mobile>,
    counters: Counters,
    judge: Judge,
    /// When pulses of a synchronous algorithm began.
    pulses: PulseLog,
    trace: Option<Trace>,
    progress: Option<ProgressFn>,
    next_progress: u64,
    /// The event count at which the loop next looks up from its work ([`Self::checkpoint`]): the budget, the next
    /// progress report, the next read-ahead, or at once after a time overflow. One comparison per event instead of
    /// one per concern.
    check_at: u64,
    now: u64,
    /// The time of the last fault after time 0 (for the settling rule).
    last_fault: Option<u64>,
    /// Whether the run was stopped at `--until`.
    stopped: bool,
    terminated: bool,
    /// Set when a deadline would pass the largest instant; the run stops.
    overflowed: bool,
    ran: bool,
}

impl<A: Algorithm> Sim<A> {
    /// Builds every process of `scenario` (none has started yet).
    pub fn new(algorithm: A, scenario: Scenario) -> Self {
        let n = scenario.len();
        let procs: Vec<A::Process> = (0..n as u32).map(|i| build_process(&algorithm, &scenario, i)).collect();
        let link_clock = if scenario.config.fifo && scenario.config.delay.is_random() {
            vec![0; scenario.graph.link_slots()]
        } else {
            Vec::new()
        };
        let seed = scenario.config.seed;
        Self {
            judge: Judge::new(Monitor::new(scenario.config.checks(algorithm.checks()), algorithm.winner())),
            algorithm,
            procs,
            up: vec![true; n],
            down: 0,
            learned_at: vec![0; n],
            durable: vec![None; n],
            effects: Vec::new(),
            queue: EventQueue::new(horizon(scenario.config.delay)).with_steady(MESSAGE),
            steady: matches!(scenario.config.delay, Delay::Constant(_)),
            plain: None,
            express: None,
            read_ahead: !std::mem::needs_drop::<A::Process>()
                && n.saturating_mul(std::mem::size_of::<A::Process>()) > READ_AHEAD_ABOVE,
            timers: Timers::new(rng(seed, Stream::Timers)),
            delays: rng(seed, Stream::Delays),
            link_clock,
            network: Network::new(scenario.losses.clone(), scenario.config.duplicate, seed),
            mobile: None,
            counters: Counters::new(Msg::<A>::kinds().len()),
            pulses: PulseLog::default(),
            trace: None,
            progress: None,
            next_progress: PROGRESS_EVERY,
            check_at: 0,
            now: 0,
            last_fault: None,
            stopped: false,
            terminated: false,
            overflowed: false,
            ran: false,
            scenario,
        }
    }

    /// Writes a JSON-lines trace of the run to `out`.
    pub fn trace_to(&mut self, out: Box<dyn Write + Send>) {
        // Each process's view as built: a step traces the view only when it changes it.
        let views = (0..self.scenario.ids.len() as u32)
            .map(|i| {
                let peers = elect_scenario::neighbors(&self.scenario, i);
                (self.procs[i as usize].view(&Peers(&peers)), peers)
            })
            .collect();
        self.trace = Some(Trace::new(out, views));
    }

    /// Calls `f` every few million events while the run goes on.
    pub fn on_progress(&mut self, f: ProgressFn) {
        self.progress = Some(f);
    }

    /// The processes, by position (their final states after [`Sim::run`]). A crashed process keeps the state it
    /// crashed in; [`Sim::is_up`] tells which are live.
    pub fn processes(&self) -> &[A::Process] {
        &self.procs
    }

    /// Whether the process at `position` is live.
    pub fn is_up(&self, position: usize) -> bool {
        self.up[position]
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The last durable state each process persisted, by position.
    pub fn durable(&self) -> &[Option<DurableOf<A>>] {
        &self.durable
    }

    fn record(&mut self, record: Line<'_, A>) {
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

    /// Runs to quiescence, to `--until`, or until the event budget is spent.
    pub fn run(&mut self) -> Result<(), RunError> {
        assert!(!self.ran, "a simulation runs once");
        self.ran = true;
        self.begin();
        let budget = self.scenario.config.max_events;
        let until = self.scenario.config.until.unwrap_or(u64::MAX);
        // The loop's own effects buffer, handed to each step it runs; steps run from elsewhere (faults, recoveries)
        // use the field's.
        let mut effects = std::mem::take(&mut self.effects);
        self.check_at = 0;
        // Deliveries still to take from the FIFO's run at this instant, with no search for the next event: they
        // come before anything else queued, as a delivery queues nothing at its own time ahead of them (its sends
        // arrive later, its timers run after messages), and a checkpoint queues nothing.
        let mut burst = 0;
        self.terminated = loop {
            if self.counters.events >= self.check_at {
                match self.checkpoint(budget) {
                    Ok(None) => {}
                    Ok(Some(terminated)) => break terminated,
                    Err(e) => return Err(e),
                }
            }
            let event = if burst > 0 {
                burst -= 1;
                self.queue.take_steady()
            } else {
                let Some(time) = self.queue.next_time() else { break true };
                if time > until {
                    self.stopped = true;
                    self.now = until;
                    break false;
                }
                self.now = time;
                let event = self.queue.take();
                burst = self.queue.steady_now();
                event
            };
            self.dispatch(event, &mut effects);
        };
        self.effects = effects;
        self.end();
        self.trace.take().map_or(Ok(()), Trace::finish).map_err(RunError::Trace)
    }

    /// What the loop looks at between events only now and then ([`Self::check_at`]), in this order: the progress
    /// report due after the last event, a time overflow, the event budget (`Some(whether the run terminated)`),
    /// and the read-ahead.
    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self, budget: u64) -> Result<Option<bool>, RunError> {
        let events = self.counters.events;
        if events >= self.next_progress {
            self.report_progress();
        }
        if self.overflowed {
            return Err(RunError::TimeOverflow(Time(self.now)));
        }
        if events >= budget {
            return Ok(Some(self.pending_work() == 0));
        }
        let mut next = budget.min(self.next_progress);
        if self.read_ahead {
            self.warm();
            next = next.min((events / WARM_BATCH + 1) * WARM_BATCH);
        }
        self.check_at = next;
        Ok(None)
    }

    /// Asks for the state of the processes that receive the batch of messages after this one, so that their memory
    /// is on its way while this batch runs: on a large ring each delivery would otherwise wait for its process's
    /// cache line alone. On x86-64 the request is a prefetch instruction, which waits for nothing; elsewhere it is
    /// a copy, which is why only processes that own no heap memory are read ahead ([`Self::read_ahead`]).
    #[inline]
    fn warm(&self) {
        // No state straddles two cache lines when a state's size divides a line's and the buffer starts at a
        // multiple of it (32-byte states, say): then no delivery asks.
        let size = size_of::<A::Process>();
        let base = self.procs.as_ptr().addr();
        let straddles = size == 0 || CACHE_LINE % size != 0 || base % size != 0;
        let anyone_down = self.down > 0;
        let warm = |event: &Ev<Msg<A>, TimerOf<A>>| {
            let Ev::Deliver { to, .. } = event else { return };
            let to = *to as usize;
            let Some(state) = self.procs.get(to) else { return };
            prefetch(state);
            // Where a state may straddle two cache lines, the next state's start lies in the second. (Asking
            // for a line already asked for is not free: the requests queue for the same few fill buffers.)
            if straddles
                && std::ptr::from_ref(state).addr() % CACHE_LINE + size > CACHE_LINE
                && let Some(next) = self.procs.get(to + 1)
            {
                prefetch(next);
            }
            if anyone_down && let Some(up) = self.up.get(to) {
                prefetch(up);
            }
        };
        // The FIFO's events walked as plain slices, and the straddle asked about once a batch: the read-ahead
        // costs a delivery of Hirschberg-Sinclair on 2^16 processes 16 instructions, where a chain of iterators
        // and a test per state cost 41.
        let (lane, fifo) = self.queue.upcoming(WARM_BATCH as usize, WARM_BATCH as usize);
        lane.for_each(warm);
        for events in fifo {
            events.iter().for_each(warm);
        }
    }

    /// Empties the queue and counts the events that would still have done something (cancelled timers and
    /// messages to crashed processes do not count).
    fn pending_work(&mut self) -> usize {
        let mut live = 0;
        while let Some((_, event)) = self.queue.pop() {
            live += usize::from(match event {
                Ev::Deliver { to, .. } | Ev::Command { node: to, .. } => self.up[to as usize],
                Ev::Timer { node, timer, seq } => self.timers.is_armed(node, timer, seq),
                Ev::Fault(_) => true,
            });
        }
        live
    }

    /// `self.now + after`, or the end of the run if that would overflow.
    #[inline]
    fn later(&mut self, after: u64) -> u64 {
        self.now.checked_add(after).unwrap_or_else(|| {
            self.overflowed = true;
            self.express = None;
            self.check_at = 0;
            self.now
        })
    }

    fn report_progress(&mut self) {
        let (events, messages) = (self.counters.events, self.counters.sent);
        self.next_progress = events + PROGRESS_EVERY;
        let progress = Progress { events, messages, time: Time(self.now), queued: self.queue.len() };
        if let Some(f) = &mut self.progress {
            f(&progress);
        }
    }

    fn begin(&mut self) {
        self.plain = match self.scenario.config.delay {
            Delay::Constant(d)
                if self.link_clock.is_empty() && self.trace.is_none() && self.scenario.config.mobility.is_none() =>
            {
                Some(d)
            }
            _ => None,
        };
        self.refresh_express();
        if let Some(trace) = &mut self.trace {
            let sc = &self.scenario;
            let initiators: Vec<NodeId> = (0..sc.len()).filter(|&i| sc.initiators[i]).map(|i| sc.ids[i]).collect();
            let header: Line<'_, A> = Record::Run {
                algorithm: sc.info.name.into(),
                topology: sc.graph.kind().to_string().into(),
                nodes: sc.len(),
                seed: sc.config.seed,
                delay: Some(sc.config.delay.to_string().into()),
                ids: sc.ids.as_slice().into(),
                initiators: Some(initiators),
                steps: false,
            };
            trace.record(&header);
        }
        self.judge(|monitor, world, found| monitor.reset(world, found));
        // Faults at time 0 take effect before anything else, processes' start included.
        let faults = self.schedule();
        for fault in faults {
            self.fault(fault);
        }
        for node in 0..self.scenario.len() as u32 {
            if self.up[node as usize] {
                let node_id = self.id(node);
                self.record(Record::Start { t: self.t(), node: node_id });
                self.handle(node, Event::Start { restored: None });
            }
        }
        if let Some(spec) = self.scenario.config.mobility {
            self.start_mobility(spec);
        }
        let initiators = self.scenario.initiators.iter().filter(|&&i| i).count();
        self.queue.reserve(0, COMMAND, initiators);
        for node in 0..self.scenario.len() as u32 {
            if self.scenario.initiators[node as usize] {
                self.queue.push(0, COMMAND, Ev::Command { node, cmd: Command::Initiate });
            }
        }
    }

    /// Runs `event`. A delivery, nearly every event of most runs, is told from the rest by one comparison and runs
    /// inlined into the loop; the rest go through a call ([`Self::dispatch_other`]). A `match` on all four kinds
    /// compiled to a jump through a table, whose target waits on the event's kind just copied out of the queue
    /// (docs/internals/simulator-speed.md has the figures).
    #[inline(always)]
    fn dispatch(&mut self, event: Ev<Msg<A>, TimerOf<A>>, effects: &mut Vec<EffectOf<A::Process>>) {
        if let Ev::Deliver { to, port, id, msg } = event {
            self.deliver(to, port, id, msg, effects);
        } else {
            self.dispatch_other(event, effects);
        }
    }

    /// Every event but a delivery ([`Self::dispatch`]).
    #[inline(never)]
    fn dispatch_other(&mut self, event: Ev<Msg<A>, TimerOf<A>>, effects: &mut Vec<EffectOf<A::Process>>) {
        match event {
            Ev::Deliver { .. } => unreachable!("dispatch delivers messages itself"),
            Ev::Timer { node, timer, seq } => {
                if !self.timers.fire(node, timer, seq) {
                    return; // Cancelled or re-armed since.
                }
                self.count_event();
                if self.trace.is_some() {
                    let text = A::Process::describe_timer(&timer);
                    self.record(Record::Timer { t: self.t(), node: self.id(node), text: text.into(), timer: &timer });
                }
                self.handle_with(node, Event::Timer(timer), effects);
            }
            Ev::Command { node, cmd } => {
                if !self.up[node as usize] {
                    return;
                }
                self.count_event();
                self.record(Record::Command { t: self.t(), node: self.id(node), cmd });
                self.handle_with(node, Event::Command(cmd), effects);
            }
            Ev::Fault(fault) => self.fault(fault),
        }
    }

    /// Re-decides [`Self::express`].
    fn refresh_express(&mut self) {
        self.express = self.plain.filter(|_| self.network.is_perfect() && !self.overflowed);
    }

    fn count_event(&mut self) {
        self.counters.event(self.now);
    }

    /// The set of live processes or the connectivity changed: re-evaluate everything.
    fn recheck(&mut self) {
        self.judge(|monitor, world, found| monitor.reset(world, found));
    }

    /// Lets the property monitor judge the processes as they are now, as `judge` says; what it finds is traced and
    /// kept for the report.
    fn judge(&mut self, judge: impl FnOnce(&mut Monitor, &View<'_, A::Process>, &mut Vec<Violation>)) {
        let sc = &self.scenario;
        let world = View {
            ids: &sc.ids,
            ranks: &sc.ranks,
            initiators: &sc.initiators,
            procs: &self.procs,
            up: &self.up,
            network: &self.network,
            partitions: &sc.partitions,
            graph: &sc.graph,
            mobile: self.mobile.as_ref(),
        };
        self.judge.judge(&world, self.now, &mut self.trace, judge);
    }

    /// Runs one event at process `node` and carries out its effects (the driver contract, [`driver`]), then checks
    /// the properties if its status changed.
    fn handle(&mut self, node: u32, event: EventOf<A::Process>) {
        let mut effects = std::mem::take(&mut self.effects);
        self.handle_with(node, event, &mut effects);
        self.effects = effects;
    }

    /// [`Self::handle`] with the effects buffer `effects` (empty, and left empty).
    #[inline(always)]
    fn handle_with(&mut self, node: u32, event: EventOf<A::Process>, effects: &mut Vec<EffectOf<A::Process>>) {
        // In a plain run on a perfect network a send is counted and queued and nothing else, and there is no trace
        // to keep: the step is [`Self::handle_express`]'s.
        if let Some(at) = self.express_arrival() {
            self.handle_express(node, event, effects, at);
            return;
        }
        let before = self.procs[node as usize].status_key();
        let parent = self.trace.as_ref().map(|_| self.procs[node as usize].parent());
        let now = Instant::from_ticks(self.now);
        let rule = driver::handle(&mut self.procs[node as usize], now, event, effects);
        if self.trace.is_some() {
            self.trace_step(node, rule);
        }
        // Carrying out the effects leaves the process as it is, so its new status may be read first: the effects'
        // stores then have time to reach the cache before they are read back (a wider read than the handler's
        // writes waits for them otherwise).
        let after = self.procs[node as usize].status_key();
        debug_assert_eq!(after.status(), self.procs[node as usize].status(), "a status key stands for the status");
        driver::carry_out(&mut At { sim: self, node }, effects);
        if after != before && after.status() != before.status() {
            self.changed(node, before.status(), after.status());
        }
        if let Some(old) = parent {
            let new = self.procs[node as usize].parent();
            if new != old {
                let parent = new.map(|port| self.id(self.scenario.graph.far_end(node, port.0).node));
                self.record(Record::Parent { t: self.t(), node: self.id(node), parent });
            }
        }
    }

    /// Traces the rule the step at `node` applied, and the process's view if the step changed it.
    #[cold]
    fn trace_step(&mut self, node: u32, rule: Option<&'static str>) {
        let (t, id) = (self.t(), self.id(node));
        if let Some(rule) = rule {
            self.record(Record::Rule { t, node: id, rule: rule.into() });
        }
        let Some(trace) = &mut self.trace else { return };
        let (last, peers) = &trace.views[node as usize];
        let view = self.procs[node as usize].view(&Peers(peers));
        if view != *last {
            let line: Line<'_, A> = Record::View { t, node: id, view: &view };
            trace.record(&line);
            trace.views[node as usize].0 = view;
        }
    }

    /// Counts and queues a message sent now by `node` on `port`. In a plain run on a perfect network
    /// ([`Self::express`]) that is all there is to do; otherwise the network model decides its fate and the trace
    /// records it ([`Self::send_modelled`]), which also handles a time overflow.
    #[inline(always)]
    fn send(&mut self, node: u32, port: Port, outgoing: Cow<'_, Msg<A>>) {
        if let Some(at) = self.express_arrival() {
            let mut outbox =
                Express { queue: &mut self.queue, counters: &mut self.counters, graph: &self.scenario.graph, node, at };
            outbox.send(port, outgoing.into_owned());
            return;
        }
        let end = self.scenario.graph.far_end(node, port.0);
        let id = count_send(&mut self.counters, &*outgoing);
        self.send_modelled(node, port, end, id, outgoing);
    }

    /// When a message sent now arrives, if a send is only counted and queued ([`Self::express`]): the one delay
    /// later, unless that would pass the largest instant.
    #[inline(always)]
    fn express_arrival(&self) -> Option<u64> {
        self.express.and_then(|delay| self.now.checked_add(delay))
    }

    /// The rest of [`Self::send`] when the run is not plain: the message's fate, its arrival, its trace.
    #[inline(never)]
    fn send_modelled(&mut self, node: u32, port: Port, end: End, id: u64, outgoing: Cow<'_, Msg<A>>) {
        let msg = &*outgoing;
        let mut fate = self.network.fate(node, end.node, &self.scenario.partitions);
        if self.mobile.as_ref().is_some_and(|m| !m.in_range(node, end.node)) {
            fate = Fate::Lost("out of range");
        }
        let at = self.arrival(node, port);
        if self.trace.is_some() {
            let (t, from, to, at) = (self.t(), self.id(node), self.id(end.node), Time(at));
            let (kind, text) = (msg.kind().into(), msg.describe().into());
            self.record(Record::Send { t, node: from, to, id, at, kind, text, msg });
        }
        match fate {
            Fate::Deliver => {}
            Fate::Twice => {
                self.counters.duplicated += 1;
                let again = self.arrival(node, port);
                self.queue_message(again, || Ev::Deliver { to: end.node, port: end.port, id, msg: msg.clone() });
            }
            Fate::Lost(reason) => {
                self.counters.lost += 1;
                let (t, from, to) = (self.t(), self.id(node), self.id(end.node));
                self.record(Record::Drop { t, node: to, from, id, reason: reason.into() });
                return;
            }
        }
        self.queue_message(at, || Ev::Deliver { to: end.node, port: end.port, id, msg: outgoing.into_owned() });
    }

    /// Queues the delivery `make` builds: under a constant delay messages arrive in the order they are sent (time
    /// never goes back), so they go to the queue's FIFO, built once there is room for it
    /// ([`EventQueue::push_steady_with`]); otherwise to its wheel.
    #[inline(always)]
    fn queue_message(&mut self, at: u64, make: impl FnOnce() -> Ev<Msg<A>, TimerOf<A>>) {
        if self.steady && !self.overflowed {
            self.queue.push_steady_with(at, make);
        } else {
            self.queue.push(at, MESSAGE, make());
        }
    }

    /// When a message sent now on `(node, port)` arrives: a drawn delay, no earlier than the link's last arrival.
    #[inline(always)]
    fn arrival(&mut self, node: u32, port: Port) -> u64 {
        if let Delay::Constant(d) = self.scenario.config.delay
            && self.link_clock.is_empty()
        {
            return self.later(d);
        }
        self.drawn_arrival(node, port)
    }

    #[inline(never)]
    fn drawn_arrival(&mut self, node: u32, port: Port) -> u64 {
        let delay = self.draw_delay();
        let mut at = self.later(delay);
        if !self.link_clock.is_empty() {
            let link = self.scenario.graph.link_index(node, port.0);
            at = at.max(self.link_clock[link]);
            self.link_clock[link] = at;
        }
        at
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
        self.record(Record::Notice { t: self.t(), node: self.id(node), notice });
        match notice {
            Notice::Pulse { pulse } => self.pulses.record(pulse, self.now),
            Notice::Elected { .. } => {
                self.judge.declared = Some(self.now);
                self.counters.elections += 1;
                self.judge(|monitor, world, found| monitor.on_notice(world, node as usize, notice, found));
            }
            Notice::Ended { .. } | Notice::Shows { .. } => {}
        }
    }

    /// Process `node`'s status went from `old` to `new`.
    #[cold]
    fn changed(&mut self, node: u32, old: Status, new: Status) {
        let i = node as usize;
        if new.leader != old.leader {
            self.learned_at[i] = self.now;
            if let Some(m) = &mut self.mobile {
                m.follow(i, &self.procs, &self.up, &self.scenario.ids, self.now);
            }
        }
        let Status { state, leader, epoch, group } = new;
        self.record(Record::Status { t: self.t(), node: self.id(node), state, leader, epoch, group });
        if self.judge.on {
            self.judge(|monitor, world, found| monitor.on_change(world, i, old, new, found));
        }
    }
}

/// The simulator as the host of process `node`'s effects: a send is counted and queued under the network model,
/// a timer is drawn from its span with the run's timer stream and queued, durable state is kept in memory, a notice
/// is traced and judged.
struct At<'a, A: Algorithm> {
    sim: &'a mut Sim<A>,
    node: u32,
}

impl<A: Algorithm> Host<A::Process> for At<'_, A> {
    #[inline(always)]
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        self.sim.send(self.node, to, msg);
    }

    fn set_timer(&mut self, timer: TimerOf<A>, after: Span) {
        let sim = &mut *self.sim;
        let (after, seq) = sim.timers.arm(self.node, timer, after);
        let at = sim.later(after);
        sim.queue.push(at, TIMER, Ev::Timer { node: self.node, timer, seq });
        // A traced run says when each timer will fire, so that its pictures can show it running down.
        if sim.trace.is_some() {
            let text = A::Process::describe_timer(&timer);
            sim.record(Record::Arm { t: sim.t(), node: sim.id(self.node), text: text.into(), at: Time(at) });
        }
    }

    fn cancel_timer(&mut self, timer: TimerOf<A>) {
        let sim = &mut *self.sim;
        if sim.timers.cancel(self.node, timer) && sim.trace.is_some() {
            let text = A::Process::describe_timer(&timer);
            sim.record(Record::Disarm { t: sim.t(), node: sim.id(self.node), text: text.into() });
        }
    }

    fn persist(&mut self, durable: DurableOf<A>) {
        self.sim.durable[self.node as usize] = Some(durable);
    }

    fn notify(&mut self, notice: Notice) {
        self.sim.notice(self.node, notice);
    }
}
