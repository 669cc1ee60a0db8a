//! Runs as the pictures see them: a JSON-lines trace of [`Record`]s (the simulator's, or the model checker's
//! counterexample), read line by line into a compact [`Run`].
//!
//! Pictures depend on these records only, never on the simulator's internals, so any driver that writes the same
//! records (the model checker's counterexamples, for one) can be drawn. A [`Collector`] is a [`Write`] sink:
//! give it to the simulator as the trace, or write a trace file into it. It keeps the first [`Limits::events`]
//! events in detail and the raw lines of the first [`Limits::lines`] for the HTML viewer; past that it only
//! counts (messages by kind per time unit, processes by state), which is what the summary pictures of large runs
//! show.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

use elect_core::{Command, Epoch, Notice};
use elect_scenario::Record;

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A line is not a trace record.
    #[error("trace line {line}: {message}")]
    Line {
        /// The line number, from 1.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// The trace has no `run` record first.
    #[error("the trace does not start with a run record")]
    NoRun,
}

/// How much of a run a [`Collector`] keeps in detail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Events kept one by one (sends, deliveries, state changes...); later ones are only counted.
    pub events: usize,
    /// Raw trace lines kept for the HTML viewer.
    pub lines: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { events: 200_000, lines: 20_000 }
    }
}

pub use elect_core::State;

/// Every state, in the order the pictures stack, colour and list them (see [`state_index`]).
pub const STATES: [State; 4] = [State::Normal, State::Election, State::Reorganization, State::Down];

/// A state's place in [`STATES`].
pub fn state_index(state: State) -> usize {
    STATES.iter().position(|&s| s == state).expect("STATES lists every state")
}

/// What happened, at a time, at a node (a position: see [`Run::ids`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// When, in time units.
    pub t: f64,
    /// Where (a position).
    pub node: u32,
    /// What.
    pub what: What,
}

/// The kinds of [`Event`]s pictures draw.
#[derive(Clone, Debug, PartialEq)]
pub enum What {
    /// The process crashed.
    Crash,
    /// The process restarted.
    Recover,
    /// The process started.
    Start,
    /// A command arrived (`initiate`, `resign`).
    Command(String),
    /// Message `id` of kind `kind` (an index into [`Run::kinds`]) left for `to`, due at `at`.
    Send {
        /// The receiver (a position).
        to: u32,
        /// The message number.
        id: u64,
        /// The delivery time the sender's link promised.
        at: f64,
        /// An index into [`Run::kinds`].
        kind: u16,
    },
    /// Message `id` from `from` arrived.
    Deliver {
        /// The sender (a position).
        from: u32,
        /// The message number.
        id: u64,
        /// An index into [`Run::kinds`].
        kind: u16,
    },
    /// Message `id` from `from` was lost, or reached a crashed process.
    Drop {
        /// The sender (a position).
        from: u32,
        /// The message number.
        id: u64,
        /// Why (`down`, `loss`, `link-down`, `partition`, `out of range`).
        reason: String,
    },
    /// A timer fired.
    Timer,
    /// The process's status changed.
    Status {
        /// Its state.
        state: State,
        /// The leader it follows (a position), if any.
        leader: Option<u32>,
        /// Its epoch.
        epoch: Epoch,
    },
    /// The process declared itself leader.
    Elected,
    /// The process's parent in its algorithm's tree changed (a position, or none).
    Parent(Option<u32>),
    /// A property was violated (at this node, or at no node in particular when `node` is `u32::MAX`).
    Violation(String),
}

/// A run, read from its trace.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// The algorithm's name.
    pub algorithm: String,
    /// The topology, as the command line writes it.
    pub topology: String,
    /// The root seed.
    pub seed: u64,
    /// The id at each position.
    pub ids: Vec<u32>,
    /// Message kinds, in the order they first appear.
    pub kinds: Vec<String>,
    /// The events kept in detail, in trace order.
    pub events: Vec<Event>,
    /// Whether events were left out past [`Limits::events`].
    pub truncated: bool,
    /// The raw JSON lines kept for the HTML viewer.
    pub lines: Vec<String>,
    /// Whether lines were left out past [`Limits::lines`].
    pub lines_truncated: bool,
    /// Messages sent per whole time unit, by kind index.
    pub sent_per_unit: BTreeMap<u64, Vec<u64>>,
    /// Processes in each state (by [`state_index`]) at the end of each whole time unit where one changed.
    pub states_per_unit: BTreeMap<u64, [u32; 4]>,
    /// Messages sent in all.
    pub messages: u64,
    /// The time of the last record.
    pub end: f64,
    /// Each position's last status.
    pub last: Vec<(State, Option<u32>)>,
    /// Each position's last parent.
    pub parents: Vec<Option<u32>>,
    /// Times at which some process declared itself leader, with its position.
    pub elections: Vec<(f64, u32)>,
    /// Violations: time and text.
    pub violations: Vec<(f64, String)>,
    /// A lecture's names for message kinds and roles, used wherever a picture names one (empty: elect's own).
    pub labels: crate::Labels,
    /// Whether the trace is a checker's path, whose times are its steps' numbers.
    pub steps: bool,
}

impl Run {
    /// The number of processes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the run has no process (a trace without its `run` record).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The leader every live process follows at the end, if they agree.
    pub fn leader(&self) -> Option<u32> {
        let mut live = self.last.iter().filter(|(s, _)| *s != State::Down);
        let first = live.next()?.1?;
        live.all(|&(_, l)| l == Some(first)).then_some(first)
    }

    /// Reads a whole trace.
    pub fn parse(text: &str, limits: Limits) -> Result<Self, TraceError> {
        let mut c = Collector::new(limits);
        for line in text.lines() {
            c.line(line.as_bytes());
        }
        c.finish()
    }
}

/// Reads trace lines as they are written, into a [`Run`].
pub struct Collector {
    limits: Limits,
    run: Run,
    /// Position of each id.
    position: BTreeMap<u32, u32>,
    kind_index: BTreeMap<String, u16>,
    /// Processes in each state now.
    states: [u32; 4],
    partial: Vec<u8>,
    line: u64,
    error: Option<TraceError>,
}

impl Collector {
    /// An empty collector.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            run: Run::default(),
            position: BTreeMap::new(),
            kind_index: BTreeMap::new(),
            states: [0; 4],
            partial: Vec::new(),
            line: 0,
            error: None,
        }
    }

    /// The run read so far, or the first problem met.
    pub fn finish(mut self) -> Result<Run, TraceError> {
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            self.line(&rest);
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.run.ids.is_empty() {
            return Err(TraceError::NoRun);
        }
        Ok(self.run)
    }

    fn line(&mut self, bytes: &[u8]) {
        self.line += 1;
        if self.error.is_some() || bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let parsed: Record<'_> = match serde_json::from_slice(bytes) {
            Ok(line) => line,
            Err(e) => {
                self.error = Some(TraceError::Line { line: self.line, message: e.to_string() });
                return;
            }
        };
        if let Err(message) = self.record(parsed) {
            self.error = Some(TraceError::Line { line: self.line, message });
            return;
        }
        if self.run.lines.len() < self.limits.lines {
            self.run.lines.push(String::from_utf8_lossy(bytes).trim().to_owned());
        } else {
            self.run.lines_truncated = true;
        }
    }

    fn pos(&self, id: u32) -> Result<u32, String> {
        if self.run.ids.is_empty() {
            return Err("a record before the run record".to_owned());
        }
        self.position.get(&id).copied().ok_or_else(|| format!("no process has id {id}"))
    }

    fn kind(&mut self, kind: String) -> u16 {
        if let Some(&k) = self.kind_index.get(&kind) {
            return k;
        }
        let k = self.run.kinds.len() as u16;
        self.run.kinds.push(kind.clone());
        self.kind_index.insert(kind, k);
        for counts in self.run.sent_per_unit.values_mut() {
            counts.push(0);
        }
        k
    }

    fn record(&mut self, line: Record<'_>) -> Result<(), String> {
        let Some((t, node, what)) = self.event(line)? else { return Ok(()) };
        if !t.is_finite() || t < 0.0 {
            return Err(format!("time {t} is not a time"));
        }
        self.run.end = self.run.end.max(t);
        self.apply(t, node, &what);
        if self.run.events.len() < self.limits.events {
            self.run.events.push(Event { t, node, what });
        } else {
            self.run.truncated = true;
        }
        Ok(())
    }

    /// Starts the run the run record describes.
    fn start(
        &mut self,
        algorithm: String,
        topology: String,
        seed: u64,
        ids: Vec<u32>,
        steps: bool,
    ) -> Result<(), String> {
        if !self.run.ids.is_empty() {
            return Err("a second run record".to_owned());
        }
        if ids.is_empty() {
            return Err("a run of no process".to_owned());
        }
        for (i, &id) in ids.iter().enumerate() {
            if self.position.insert(id, i as u32).is_some() {
                return Err(format!("id {id} appears twice"));
            }
        }
        let n = ids.len();
        self.states = [n as u32, 0, 0, 0];
        self.run = Run {
            algorithm,
            topology,
            seed,
            ids,
            last: vec![(State::Normal, None); n],
            parents: vec![None; n],
            steps,
            ..Run::default()
        };
        Ok(())
    }

    /// The event `line` records, at a time and a position, or `None` for a record that is not one (the run record,
    /// a notice other than `elected`, the end, and records pictures do not draw), once what it says is taken in. A
    /// send is counted here.
    fn event(&mut self, line: Record<'_>) -> Result<Option<(f64, u32, What)>, String> {
        Ok(Some(match line {
            Record::Run { algorithm, topology, seed, ids, steps, .. } => {
                let ids = ids.iter().map(|id| id.0).collect();
                self.start(algorithm.into_owned(), topology.into_owned(), seed, ids, steps)?;
                return Ok(None);
            }
            Record::Crash { t, node } => (t.units(), self.pos(node.0)?, What::Crash),
            Record::Recover { t, node } => (t.units(), self.pos(node.0)?, What::Recover),
            Record::Start { t, node } => (t.units(), self.pos(node.0)?, What::Start),
            Record::Command { t, node, cmd } => (t.units(), self.pos(node.0)?, What::Command(command(cmd).to_owned())),
            Record::Send { t, node, to, id, at, kind, .. } => {
                let (node, to, kind) = (self.pos(node.0)?, self.pos(to.0)?, self.kind(kind.into_owned()));
                let t = t.units();
                let counts = self.run.sent_per_unit.entry(t as u64).or_insert_with(|| vec![0; self.run.kinds.len()]);
                counts[kind as usize] += 1;
                self.run.messages += 1;
                (t, node, What::Send { to, id, at: at.units(), kind })
            }
            Record::Deliver { t, node, from, id, kind, .. } => {
                let what = What::Deliver { from: self.pos(from.0)?, id, kind: self.kind(kind.into_owned()) };
                (t.units(), self.pos(node.0)?, what)
            }
            Record::Drop { t, node, from, id, reason } => {
                (t.units(), self.pos(node.0)?, What::Drop { from: self.pos(from.0)?, id, reason: reason.into_owned() })
            }
            Record::Timer { t, node, .. } => (t.units(), self.pos(node.0)?, What::Timer),
            Record::Status { t, node, state, leader, epoch, .. } => {
                let leader = match leader {
                    Some(l) => Some(self.pos(l.0)?),
                    None => None,
                };
                (t.units(), self.pos(node.0)?, What::Status { state, leader, epoch })
            }
            Record::Notice { t, node, notice: Notice::Elected { .. } } => (t.units(), self.pos(node.0)?, What::Elected),
            Record::Notice { t, .. } | Record::End { t, .. } => {
                self.run.end = self.run.end.max(t.units());
                return Ok(None);
            }
            Record::Parent { t, node, parent } => {
                let parent = match parent {
                    Some(p) => Some(self.pos(p.0)?),
                    None => None,
                };
                (t.units(), self.pos(node.0)?, What::Parent(parent))
            }
            Record::Violation { t, property, node, detail } => {
                let node = match node {
                    Some(id) => self.pos(id.0)?,
                    None => u32::MAX,
                };
                (t.units(), node, What::Violation(format!("{property}: {detail}")))
            }
            Record::Link { .. }
            | Record::Partition { .. }
            | Record::Note { .. }
            | Record::Rule { .. }
            | Record::View { .. }
            | Record::Arm { .. }
            | Record::Disarm { .. }
            | Record::Other => return Ok(None),
        }))
    }

    /// Updates the running tallies with one event.
    fn apply(&mut self, t: f64, node: u32, what: &What) {
        let i = node as usize;
        let set_state = |run: &mut Run, states: &mut [u32; 4], state: State, leader: Option<u32>| {
            states[state_index(run.last[i].0)] -= 1;
            states[state_index(state)] += 1;
            run.last[i] = (state, leader);
            run.states_per_unit.insert(t as u64, *states);
        };
        match *what {
            What::Crash => {
                set_state(&mut self.run, &mut self.states, State::Down, None);
                self.run.parents[i] = None;
            }
            What::Recover => set_state(&mut self.run, &mut self.states, State::Normal, None),
            What::Status { state, leader, .. } => set_state(&mut self.run, &mut self.states, state, leader),
            What::Parent(p) => self.run.parents[i] = p,
            What::Elected => self.run.elections.push((t, node)),
            What::Violation(ref v) => self.run.violations.push((t, v.clone())),
            _ => {}
        }
    }
}

impl Write for Collector {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            if self.partial.is_empty() {
                self.line(&rest[..end]);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&rest[..end]);
                self.line(&line);
            }
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A command as traces name it.
fn command(cmd: Command) -> &'static str {
    match cmd {
        Command::Initiate => "initiate",
        Command::Resign => "resign",
        Command::Leave => "leave",
        Command::Transfer { .. } => "transfer",
        Command::AddVoter { .. } => "add-voter",
        Command::RemoveVoter { .. } => "remove-voter",
    }
}

/// A [`Collector`] behind a shared handle: give one clone to the simulator as its trace (which takes ownership of
/// its sink), keep another, and [`SharedCollector::finish`] it after the run.
#[derive(Clone)]
pub struct SharedCollector(Arc<Mutex<Option<Collector>>>);

impl SharedCollector {
    /// An empty collector.
    pub fn new(limits: Limits) -> Self {
        Self(Arc::new(Mutex::new(Some(Collector::new(limits)))))
    }

    /// The run written so far (later writes are ignored).
    pub fn finish(&self) -> Result<Run, TraceError> {
        let collector = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        collector.map_or(Err(TraceError::NoRun), Collector::finish)
    }
}

impl Write for SharedCollector {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
            Some(c) => c.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_records_and_counts() {
        let text = r#"{"ev":"run","algorithm":"x","topology":"ring","nodes":2,"seed":3,"delay":"1","ids":[5,6],"initiators":[5]}
{"ev":"start","t":0,"node":5}
{"ev":"send","t":0,"node":5,"to":6,"id":1,"at":1,"kind":"token","text":"token 5","msg":{"Token":5}}
{"ev":"deliver","t":1,"node":6,"from":5,"id":1,"kind":"token","text":"token 5","msg":{"Token":5}}
{"ev":"status","t":1,"node":6,"state":"election","leader":null,"epoch":0}
{"ev":"status","t":1.5,"node":6,"state":"normal","leader":5,"epoch":0}
{"ev":"status","t":1.5,"node":5,"state":"normal","leader":5,"epoch":0}
{"ev":"future-record","t":2}
{"ev":"end","t":2,"events":3,"messages":1,"terminated":true}
"#;
        let run = Run::parse(text, Limits::default()).unwrap();
        assert_eq!((run.len(), run.seed, run.messages, run.kinds.len()), (2, 3, 1, 1));
        assert_eq!(run.leader(), Some(0));
        assert_eq!(run.events.len(), 6);
        assert_eq!(run.lines.len(), 9);
        assert_eq!(run.end, 2.0);
        assert!(matches!(run.events[1].what, What::Send { to: 1, id: 1, kind: 0, .. }));
    }

    #[test]
    fn split_writes_and_limits() {
        let text = "{\"ev\":\"run\",\"algorithm\":\"x\",\"topology\":\"ring\",\"ids\":[1]}\n{\"ev\":\"start\",\"t\":0,\"node\":1}\n{\"ev\":\"timer\",\"t\":1,\"node\":1,\"timer\":\"x\"}\n";
        let mut c = Collector::new(Limits { events: 1, lines: 2 });
        for chunk in text.as_bytes().chunks(7) {
            c.write_all(chunk).unwrap();
        }
        let run = c.finish().unwrap();
        assert_eq!((run.events.len(), run.truncated, run.lines.len(), run.lines_truncated), (1, true, 2, true));
    }

    #[test]
    fn bad_traces_are_errors() {
        let bad = |text: &str| Run::parse(text, Limits::default()).unwrap_err().to_string();
        assert_eq!(bad(""), "the trace does not start with a run record");
        assert!(bad("not json").starts_with("trace line 1:"));
        assert_eq!(bad("{\"ev\":\"start\",\"t\":0,\"node\":1}"), "trace line 1: a record before the run record");
        let run = "{\"ev\":\"run\",\"algorithm\":\"x\",\"topology\":\"ring\",\"ids\":[1]}\n";
        assert_eq!(bad(&format!("{run}{{\"ev\":\"start\",\"t\":0,\"node\":9}}")), "trace line 2: no process has id 9");
        assert_eq!(
            bad(&format!("{run}{{\"ev\":\"status\",\"t\":0,\"node\":1,\"state\":\"odd\",\"leader\":null}}")),
            "trace line 2: unknown state 'odd'"
        );
    }
}
