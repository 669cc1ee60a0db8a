//! Scenario files: a run and its expected ending, written down in TOML.
//!
//! A scenario file holds what `elect sim` takes as flags (same names, `kebab-case`), a timed list of faults, and
//! optionally an `[expect]` table saying how the run must end. `elect sim --scenario FILE` runs it and, when the
//! file has expectations, exits 0 if the run ended as documented and 1 if not. Every problem in a file is reported
//! as `FILE:LINE: problem`.
//!
//! ```toml
//! description = "Bully, S000's figure: 7 has crashed and 4 notices first"
//! algorithm = "bully"
//! nodes = 7
//! initiators = [4]
//!
//! [[fault]]
//! at = 0
//! crash = 7
//!
//! [expect]
//! leader = 6
//! ok = true
//! ```
//!
//! Top-level keys: `description`, `algorithm` (required), `nodes`, `topology`, `ids` (a name or a list of ids),
//! `initiators` (a name or a list), `seed`, `delay` (a number of time units or `uniform:A..B`/`exp:M`),
//! `delay-bound`, `prefer`, `attr`, `params` (a table), `links`, `synchronizer`, `loss` (a probability, or a list of `P`, `A-B:P`,
//! `A>B:P`), `duplicate`, `until`, `monitor` (the process `elect node` runs), `bare-monitor` (the leader monitor alone), `heartbeat`,
//! `max-events`, and `connectivity`: a link matrix, one
//! string per process in increasing id order, `1` where the row's process can send to the column's and `0` where
//! it cannot, for connectivity that is not transitive (complete topology only).
//!
//! A `[[fault]]` has a time `at` and one of `crash = ID`, `recover = ID`, `resign = ID`, `transfer = ID` with
//! `to = ID` (the leader told to hand leadership over, and the member it names), `add-voter = ID` or
//! `remove-voter = ID` (a change of the voters asked of every live member), `crash-leader = true`, `link-down
//! = "A-B"` (or `"A>B"`, one way) or `partition = "1,2|3"` (or `"1,2>3"`); the last two may `heal` at a later
//! time.
//!
//! `[expect]` may say `leader` (an id, or `"none"`), `agreed`, `ok` (every checked property held), `held` and
//! `violated` (lists of property names), `messages`, `by-kind` (a table), `elected-at` and `terminated`.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use elect_algos::Params;
use elect_core::{Duration, InT, NodeId, Prefer, Property};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use toml::Spanned;

use crate::config::{Attrs, Delay, Ids, InitiatorSpec, Monitor, SimConfig};
use crate::faults::{Link, LinkDown, Loss, NodeAt, Partition, Probability, Transfer, Window};
use crate::scenario::Scenario;
use crate::spec::SpecError;
use crate::time::{TimeError, format_time, parse_time};
use crate::topology::TopologyKind;

/// A problem with a scenario file, located in it when possible.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct FileError {
    /// The file, as the user named it.
    pub file: String,
    /// The line (1-based), when the problem has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

/// A parsed scenario file: the run, and how it must end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioFile {
    /// What the scenario shows, in a sentence or two.
    pub description: Option<String>,
    /// The run.
    pub config: SimConfig,
    /// How it must end; `None` when the file does not say.
    pub expect: Option<Expect>,
}

/// What a scenario's run must end with. Each field that is `Some` (or non-empty) is checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// The agreed leader (`Some(None)`: nobody agreed).
    pub leader: Option<Option<NodeId>>,
    /// Whether every live process has the same leader.
    pub agreed: Option<bool>,
    /// Whether every checked property held.
    pub ok: Option<bool>,
    /// Properties that must have been checked and held.
    pub held: Vec<Property>,
    /// Properties that must have been violated.
    pub violated: Vec<Property>,
    /// The total message count.
    pub messages: Option<u64>,
    /// Message counts per kind.
    pub by_kind: BTreeMap<String, u64>,
    /// When the last live process learned the leader, in ticks.
    pub elected_at: Option<u64>,
    /// Whether the run became quiescent.
    pub terminated: Option<bool>,
}

impl Expect {
    /// How many expectations there are.
    pub fn len(&self) -> usize {
        [self.leader.is_some(), self.agreed.is_some(), self.ok.is_some(), self.messages.is_some()]
            .into_iter()
            .filter(|&b| b)
            .count()
            + [self.elected_at.is_some(), self.terminated.is_some()].into_iter().filter(|&b| b).count()
            + self.held.len()
            + self.violated.len()
            + self.by_kind.len()
    }

    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A time in units as written in the file: an integer or a decimal number.
#[derive(Clone, Copy, Debug)]
struct Units(f64);

impl<'de> Deserialize<'de> for Units {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Units;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time (a number of time units, like 30 or 0.5)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Units, E> {
                Ok(Units(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Units, E> {
                Ok(Units(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Units, E> {
                Ok(Units(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Units {
    fn ticks(self) -> Result<u64, TimeError> {
        parse_time(&self.0.to_string())
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawFile {
    description: Option<String>,
    algorithm: Spanned<String>,
    nodes: Option<Spanned<usize>>,
    topology: Option<Spanned<String>>,
    ids: Option<Spanned<toml::Value>>,
    initiators: Option<Spanned<toml::Value>>,
    seed: Option<u64>,
    delay: Option<Spanned<toml::Value>>,
    delay_bound: Option<Spanned<Units>>,
    prefer: Option<Spanned<String>>,
    attr: Option<Spanned<String>>,
    params: Option<Spanned<BTreeMap<String, toml::Value>>>,
    links: Option<Spanned<String>>,
    synchronizer: Option<Spanned<String>>,
    loss: Option<Spanned<toml::Value>>,
    duplicate: Option<Spanned<toml::Value>>,
    until: Option<Spanned<Units>>,
    monitor: Option<Spanned<bool>>,
    bare_monitor: Option<Spanned<bool>>,
    heartbeat: Option<Spanned<u64>>,
    max_events: Option<Spanned<u64>>,
    connectivity: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    fault: Vec<Spanned<RawFault>>,
    expect: Option<RawExpect>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawFault {
    at: Spanned<Units>,
    crash: Option<u32>,
    recover: Option<u32>,
    resign: Option<u32>,
    transfer: Option<u32>,
    to: Option<u32>,
    add_voter: Option<u32>,
    remove_voter: Option<u32>,
    crash_leader: Option<bool>,
    link_down: Option<String>,
    partition: Option<String>,
    heal: Option<Spanned<Units>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawExpect {
    leader: Option<Spanned<toml::Value>>,
    agreed: Option<bool>,
    ok: Option<bool>,
    #[serde(default)]
    held: Vec<Spanned<String>>,
    #[serde(default)]
    violated: Vec<Spanned<String>>,
    messages: Option<u64>,
    #[serde(default)]
    by_kind: BTreeMap<String, u64>,
    elected_at: Option<Spanned<Units>>,
    terminated: Option<bool>,
}

/// A fault from the file, in the simulator's terms.
#[derive(Clone, Debug)]
enum Fault {
    Crash(NodeAt),
    Recover(NodeAt),
    Resign(NodeAt),
    Transfer(Transfer),
    AddVoter(NodeAt),
    RemoveVoter(NodeAt),
    CrashLeader(u64),
    LinkDown(LinkDown),
    Partition(Partition),
}

impl Fault {
    fn apply(&self, cfg: &mut SimConfig) {
        match self {
            Self::Crash(c) => cfg.crashes.push(*c),
            Self::Recover(r) => cfg.recoveries.push(*r),
            Self::Resign(r) => cfg.resigns.push(*r),
            Self::Transfer(t) => cfg.transfers.push(*t),
            Self::AddVoter(v) => cfg.add_voters.push(*v),
            Self::RemoveVoter(v) => cfg.remove_voters.push(*v),
            Self::CrashLeader(t) => cfg.crash_leader_at.push(*t),
            Self::LinkDown(l) => cfg.link_downs.push(*l),
            Self::Partition(p) => cfg.partitions.push(p.clone()),
        }
    }
}

/// A part of the file that changes the configuration, for locating a problem the simulator finds.
enum Piece {
    Field(fn(&SimConfig, &mut SimConfig)),
    Faults(Vec<Fault>),
}

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())].matches('\n').count() + 1
    }

    fn at(&self, span: &Range<usize>, problem: impl Into<String>) -> FileError {
        FileError { file: self.file.to_owned(), line: Some(self.line(span)), problem: problem.into() }
    }

    fn whole(&self, problem: impl Into<String>) -> FileError {
        FileError { file: self.file.to_owned(), line: None, problem: problem.into() }
    }

    /// Parses a spanned value with `parse`, blaming its line.
    fn parse<T, S, E: fmt::Display>(
        &self,
        v: &Spanned<S>,
        parse: impl FnOnce(&S) -> Result<T, E>,
    ) -> Result<T, FileError> {
        parse(v.get_ref()).map_err(|e| self.at(&v.span(), e.to_string()))
    }
}

/// The text a scalar TOML value stands for on the command line: `3`, `0.5`, `uniform:1..2`.
fn scalar(v: &toml::Value, what: &str) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(format!("{what} must be a number or a string, not {}", other.type_str())),
    }
}

/// A name or a list of ids: `"ascending"`, `[3, 1, 2]`.
fn name_or_ids(v: &toml::Value, what: &str) -> Result<String, String> {
    match v {
        toml::Value::Array(items) => {
            let ids = items
                .iter()
                .map(|i| match i {
                    toml::Value::Integer(id) if u32::try_from(*id).is_ok() => Ok(id.to_string()),
                    other => Err(format!(
                        "{what} lists '{other}', which is not a node id",
                        other = crate::shorten(&other.to_string())
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if ids.is_empty() {
                return Err(format!("{what} is an empty list"));
            }
            Ok(ids.join(","))
        }
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(id) if u32::try_from(*id).is_ok() => Ok(id.to_string()),
        other => Err(format!("{what} must be a name or a list of ids, not {}", other.type_str())),
    }
}

impl ScenarioFile {
    /// The algorithm a scenario file's text names, read without building anything (so without starting a program
    /// it names), or `None` if the text is not a scenario file.
    pub fn algorithm(text: &str) -> Option<String> {
        toml::from_str::<RawFile>(text).ok().map(|raw| raw.algorithm.into_inner())
    }

    /// Parses the scenario file `file` (its name, for messages) whose contents are `text`, and checks that the
    /// simulator accepts the run it describes.
    pub fn parse(file: &str, text: &str) -> Result<Self, FileError> {
        let r = Reader { file, text };
        let raw: RawFile = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => r.at(&span, e.message().trim_end()),
            None => r.whole(e.message().trim_end()),
        })?;
        let mut b = Building::new(&r, &raw)?;
        b.set_up(&raw)?;
        b.links(&raw)?;
        b.monitor_and_limits(&raw)?;
        b.faults(&raw)?;
        if let Err(e) = Scenario::build(&b.cfg) {
            return Err(locate(&r, &b.cfg, &b.pieces, e.to_string()));
        }
        let expect = raw.expect.map(|e| expect(&r, e)).transpose()?;
        Ok(Self { description: raw.description, config: b.cfg, expect })
    }
}

/// The configuration a file describes, with the pieces of the file that set it. Fields are read in the order
/// `RawFile` lists them, and the first problem met is the one reported.
struct Building<'a> {
    r: &'a Reader<'a>,
    cfg: SimConfig,
    pieces: Vec<(Range<usize>, Piece)>,
}

impl<'a> Building<'a> {
    /// The algorithm, the ids and the number of processes, which every other field is read against.
    fn new(r: &'a Reader<'a>, raw: &RawFile) -> Result<Self, FileError> {
        let algorithm = raw.algorithm.get_ref().clone();
        elect_algos::lookup(&algorithm).map_err(|e| r.at(&raw.algorithm.span(), e.to_string()))?;
        let ids = match &raw.ids {
            Some(v) => r.parse(v, |v| name_or_ids(v, "ids")?.parse::<Ids>().map_err(|e| e.to_string()))?,
            None => Ids::default(),
        };
        let nodes = match (&raw.nodes, &ids) {
            (Some(n), _) => *n.get_ref(),
            (None, Ids::List(list)) => list.len(),
            (None, _) => return Err(r.whole("the number of processes is missing: add nodes = N, or list the ids")),
        };
        let mut cfg = SimConfig::new(&algorithm, nodes);
        cfg.ids = ids;
        let mut b = Self { r, cfg, pieces: Vec::new() };
        if let Some(v) = &raw.ids {
            b.field(v.span(), |from, to| to.ids = from.ids.clone());
        }
        Ok(b)
    }

    /// Notes that the field at `span` sets what `copy` copies.
    fn field(&mut self, span: Range<usize>, copy: fn(&SimConfig, &mut SimConfig)) {
        self.pieces.push((span, Piece::Field(copy)));
    }

    /// Where the processes sit, who starts, the seed, the delays, the order of ids and the algorithm's parameters.
    fn set_up(&mut self, raw: &RawFile) -> Result<(), FileError> {
        let r = self.r;
        if let Some(v) = &raw.topology {
            self.cfg.topology = Some(r.parse(v, |s| s.parse::<TopologyKind>())?);
            self.field(v.span(), |from, to| to.topology = from.topology.clone());
        }
        if let Some(v) = &raw.initiators {
            self.cfg.initiators =
                r.parse(v, |v| name_or_ids(v, "initiators")?.parse::<InitiatorSpec>().map_err(|e| e.to_string()))?;
            self.field(v.span(), |from, to| to.initiators = from.initiators.clone());
        }
        if let Some(seed) = raw.seed {
            self.cfg.seed = seed;
        }
        if let Some(v) = &raw.delay {
            self.cfg.delay = r.parse(v, |v| scalar(v, "delay")?.parse::<Delay>().map_err(|e| e.to_string()))?;
            self.field(v.span(), |from, to| to.delay = from.delay);
        }
        if let Some(v) = &raw.delay_bound {
            self.cfg.delay_bound = Some(Duration::from_ticks(r.parse(v, |u| u.ticks())?));
            self.field(v.span(), |from, to| to.delay_bound = from.delay_bound);
        }
        if let Some(v) = &raw.prefer {
            self.cfg.prefer = r.parse(v, |s| match s.as_str() {
                "highest" => Ok(Prefer::Highest),
                "lowest" => Ok(Prefer::Lowest),
                other => Err(format!("prefer is '{other}', neither highest nor lowest", other = crate::shorten(other))),
            })?;
        }
        if let Some(v) = &raw.attr {
            self.cfg.attrs = r.parse(v, |s| s.parse::<Attrs>())?;
            self.field(v.span(), |from, to| to.attrs = from.attrs.clone());
        }
        if let Some(v) = &raw.params {
            self.cfg.params = r.parse(v, |table| {
                let pairs = table
                    .iter()
                    .map(|(k, v)| Ok(format!("{k}={}", scalar(v, &format!("parameter {k}"))?)))
                    .collect::<Result<Vec<_>, String>>()?;
                Params::parse(pairs.iter().map(String::as_str)).map_err(|e| e.to_string())
            })?;
            self.field(v.span(), |from, to| to.params = from.params.clone());
        }
        Ok(())
    }

    /// How messages travel: in order or not, on a synchronizer, lost or duplicated.
    fn links(&mut self, raw: &RawFile) -> Result<(), FileError> {
        let r = self.r;
        if let Some(v) = &raw.links {
            self.cfg.fifo = r.parse(v, |s| match s.as_str() {
                "fifo" => Ok(true),
                "unordered" => Ok(false),
                other => Err(format!("links is '{other}', neither fifo nor unordered", other = crate::shorten(other))),
            })?;
        }
        if let Some(v) = &raw.synchronizer {
            self.cfg.synchronizer = Some(r.parse(v, |s| s.parse::<elect_algos::synchronizers::Spec>())?);
            self.field(v.span(), |from, to| to.synchronizer = from.synchronizer);
        }
        if let Some(v) = &raw.loss {
            let loss = |v: &toml::Value, what: &str| scalar(v, what)?.parse::<Loss>().map_err(|e| e.to_string());
            self.cfg.losses = r.parse(v, |v| match v {
                toml::Value::Array(items) => items.iter().map(|i| loss(i, "a loss")).collect::<Result<Vec<_>, _>>(),
                one => Ok(vec![loss(one, "loss")?]),
            })?;
            self.field(v.span(), |from, to| to.losses = from.losses.clone());
        }
        if let Some(v) = &raw.duplicate {
            self.cfg.duplicate =
                r.parse(v, |v| scalar(v, "duplicate")?.parse::<Probability>().map_err(|e| e.to_string()))?;
        }
        Ok(())
    }

    /// How long the run lasts, whether its processes run in the leader monitor or as members, and the event cap.
    fn monitor_and_limits(&mut self, raw: &RawFile) -> Result<(), FileError> {
        let r = self.r;
        if let Some(v) = &raw.until {
            self.cfg.until = Some(r.parse(v, |u| u.ticks())?);
        }
        if let Some(v) = &raw.monitor {
            if *v.get_ref() {
                self.cfg.monitor = Some(Monitor::member(Monitor::DEFAULT_HEARTBEAT));
            }
            self.field(v.span(), |from, to| to.monitor = from.monitor);
        }
        if let Some(v) = &raw.bare_monitor {
            if *v.get_ref() {
                if self.cfg.monitor.is_some() {
                    return Err(r.at(&v.span(), "monitor and bare-monitor are two processes: choose one"));
                }
                self.cfg.monitor = Some(Monitor::bare(Monitor::DEFAULT_HEARTBEAT));
            }
            self.field(v.span(), |from, to| to.monitor = from.monitor);
        }
        if let Some(v) = &raw.heartbeat {
            let Some(monitor) = &mut self.cfg.monitor else {
                return Err(r.at(&v.span(), "heartbeat needs monitor = true or bare-monitor = true"));
            };
            monitor.heartbeat = InT(*v.get_ref());
            self.field(v.span(), |from, to| to.monitor = from.monitor);
        }
        if let Some(v) = &raw.max_events {
            self.cfg.max_events = *v.get_ref();
            self.field(v.span(), |from, to| to.max_events = from.max_events);
        }
        Ok(())
    }

    /// The connectivity matrix's link-downs, then the timed faults.
    fn faults(&mut self, raw: &RawFile) -> Result<(), FileError> {
        let r = self.r;
        if let Some(v) = &raw.connectivity {
            let downs = r.parse(v, |rows| matrix(rows, &self.cfg))?;
            self.pieces.push((v.span(), Piece::Faults(downs.iter().cloned().map(Fault::LinkDown).collect())));
            self.cfg.link_downs.extend(downs);
        }
        for entry in &raw.fault {
            let fault = fault(r, entry)?;
            fault.apply(&mut self.cfg);
            self.pieces.push((entry.span(), Piece::Faults(vec![fault])));
        }
        Ok(())
    }
}

/// Finds the first piece of the file after which the simulator rejects the run, and blames its line.
fn locate(r: &Reader<'_>, full: &SimConfig, pieces: &[(Range<usize>, Piece)], problem: String) -> FileError {
    let mut partial = SimConfig::new(&full.algorithm, full.nodes);
    partial.seed = full.seed;
    partial.prefer = full.prefer;
    partial.fifo = full.fifo;
    partial.until = full.until;
    partial.duplicate = full.duplicate;
    let mut order: Vec<&(Range<usize>, Piece)> = pieces.iter().collect();
    order.sort_by_key(|(span, _)| span.start);
    if Scenario::build(&partial).is_err() {
        return r.whole(problem);
    }
    for (span, piece) in order {
        match piece {
            Piece::Field(copy) => copy(full, &mut partial),
            Piece::Faults(faults) => faults.iter().for_each(|f| f.apply(&mut partial)),
        }
        if let Err(e) = Scenario::build(&partial) {
            return r.at(span, e.to_string());
        }
    }
    r.whole(problem)
}

fn fault(r: &Reader<'_>, entry: &Spanned<RawFault>) -> Result<Fault, FileError> {
    let f = entry.get_ref();
    let span = entry.span();
    let at = r.parse(&f.at, |u| u.ticks())?;
    let heal = f.heal.as_ref().map(|h| r.parse(h, |u| u.ticks())).transpose()?;
    let given = [f.crash.is_some(), f.recover.is_some(), f.crash_leader.is_some(), f.link_down.is_some()]
        .into_iter()
        .chain([f.partition.is_some(), f.resign.is_some(), f.transfer.is_some()])
        .chain([f.add_voter.is_some(), f.remove_voter.is_some()])
        .filter(|&b| b)
        .count();
    if given != 1 {
        return Err(r.at(
            &span,
            "a fault needs exactly one of crash, recover, resign, transfer, add-voter, remove-voter, crash-leader, \
             link-down or partition (with its time at)",
        ));
    }
    if f.transfer.is_some() != f.to.is_some() {
        return Err(
            r.at(&span, "a transfer names the leader told (transfer = ID) and the member it hands over to (to = ID)")
        );
    }
    if heal.is_some() && f.link_down.is_none() && f.partition.is_none() {
        return Err(r.at(&span, "only link-down and partition faults heal"));
    }
    let window = Window { from: at, until: heal };
    if heal.is_some_and(|h| h <= at) {
        return Err(r.at(
            &span,
            format!("the fault heals at {} but starts at {}", format_time(heal.unwrap_or(0)), format_time(at)),
        ));
    }
    Ok(if let Some(id) = f.crash {
        Fault::Crash(NodeAt { id: NodeId(id), at })
    } else if let Some(id) = f.recover {
        Fault::Recover(NodeAt { id: NodeId(id), at })
    } else if let Some(id) = f.resign {
        Fault::Resign(NodeAt { id: NodeId(id), at })
    } else if let (Some(from), Some(to)) = (f.transfer, f.to) {
        if from == to {
            return Err(r.at(&span, "a transfer hands leadership from one process to another"));
        }
        Fault::Transfer(Transfer { from: NodeId(from), to: NodeId(to), at })
    } else if let Some(id) = f.add_voter {
        Fault::AddVoter(NodeAt { id: NodeId(id), at })
    } else if let Some(id) = f.remove_voter {
        Fault::RemoveVoter(NodeAt { id: NodeId(id), at })
    } else if let Some(yes) = f.crash_leader {
        if !yes {
            return Err(r.at(&span, "crash-leader = false crashes nobody; remove the fault"));
        }
        Fault::CrashLeader(at)
    } else if let Some(link) = &f.link_down {
        let link: Link = link.parse().map_err(|e: SpecError| r.at(&span, e.to_string()))?;
        Fault::LinkDown(LinkDown { link, window })
    } else {
        let groups = f.partition.as_deref().unwrap_or_default();
        let text = format!("{groups}@{window}");
        Fault::Partition(text.parse().map_err(|e: SpecError| r.at(&span, e.to_string()))?)
    })
}

/// The link-downs a connectivity matrix stands for: every `0` off the diagonal cuts that direction for good.
fn matrix(rows: &[String], cfg: &SimConfig) -> Result<Vec<LinkDown>, String> {
    if cfg.topology.as_ref().is_some_and(|t| *t != TopologyKind::Complete) {
        return Err("connectivity describes links of a complete topology; remove topology or make it complete".into());
    }
    let mut ids: Vec<NodeId> = match &cfg.ids {
        Ids::List(list) => list.clone(),
        _ => (1..=cfg.nodes as u32).map(NodeId).collect(),
    };
    ids.sort();
    if rows.len() != ids.len() {
        return Err(format!("connectivity has {} rows for {} processes", rows.len(), ids.len()));
    }
    let cells: Vec<Vec<char>> = rows.iter().map(|row| row.chars().filter(|c| !c.is_whitespace()).collect()).collect();
    let mut downs = Vec::new();
    for (i, row) in cells.iter().enumerate() {
        if row.len() != ids.len() {
            return Err(format!(
                "connectivity row {} ('{}') has {} entries, not {}",
                i + 1,
                rows[i],
                row.len(),
                ids.len()
            ));
        }
        for (j, &c) in row.iter().enumerate() {
            let can = match c {
                '1' => true,
                '0' => false,
                '-' | '.' if i == j => true,
                other => {
                    return Err(format!("connectivity row {} has '{other}'; use 1 (can send) or 0 (cannot)", i + 1));
                }
            };
            if i == j || can {
                continue;
            }
            let both = cells[j][i] == '0';
            if both && j < i {
                continue; // already cut both ways from row j
            }
            let link = Link { a: ids[i], b: ids[j], one_way: !both };
            downs.push(LinkDown { link, window: Window { from: 0, until: None } });
        }
    }
    Ok(downs)
}

fn expect(r: &Reader<'_>, raw: RawExpect) -> Result<Expect, FileError> {
    let property = |name: &Spanned<String>| {
        r.parse(name, |s| {
            Property::all().iter().copied().find(|p| p.name() == s).ok_or_else(|| {
                let known: Vec<&str> = Property::all().iter().map(|p| p.name()).collect();
                format!("unknown property '{s}' (known: {})", known.join(", "), s = crate::shorten(s))
            })
        })
    };
    let leader = raw
        .leader
        .as_ref()
        .map(|v| {
            r.parse(v, |v| match v {
                toml::Value::String(s) if s == "none" => Ok(None),
                toml::Value::Integer(id) if u32::try_from(*id).is_ok() => Ok(Some(NodeId(*id as u32))),
                other => Err(format!(
                    "expected leader is '{other}'; give an id or \"none\"",
                    other = crate::shorten(&other.to_string())
                )),
            })
        })
        .transpose()?;
    Ok(Expect {
        leader,
        agreed: raw.agreed,
        ok: raw.ok,
        held: raw.held.iter().map(property).collect::<Result<_, _>>()?,
        violated: raw.violated.iter().map(property).collect::<Result<_, _>>()?,
        messages: raw.messages,
        by_kind: raw.by_kind,
        elected_at: raw.elected_at.as_ref().map(|v| r.parse(v, |u| u.ticks())).transpose()?,
        terminated: raw.terminated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        ScenarioFile::parse("s.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn a_file_becomes_the_config_its_flags_would_give() {
        let text = r#"
algorithm = "invitation"
nodes = 3
prefer = "lowest"
until = 200

[[fault]]
at = 30
crash = 1

[[fault]]
at = 30
link-down = "1-3"

[[fault]]
at = 33
recover = 1

[expect]
violated = ["a4"]
held = ["a3", "a4-prime"]
"#;
        let file = ScenarioFile::parse("stoller.toml", text).unwrap();
        let c = &file.config;
        assert_eq!(c.crashes, vec!["1@30".parse().unwrap()]);
        assert_eq!(c.recoveries, vec!["1@33".parse().unwrap()]);
        assert_eq!(c.link_downs, vec!["1-3@30".parse().unwrap()]);
        assert_eq!(c.prefer, Prefer::Lowest);
        assert_eq!(c.until, Some(200_000));
        let e = file.expect.unwrap();
        assert_eq!(e.violated, vec![Property::A4]);
        assert_eq!(e.held, vec![Property::A3, Property::A4Prime]);
        assert_eq!(e.len(), 3);
    }

    #[test]
    fn problems_are_reported_with_their_line() {
        assert_eq!(error("algorithm = \"bully\"\nnodes = 3\ncolour = 1\n").split(':').nth(1), Some("3"));
        assert!(error("algorithm = \"bully\"\nnodes = 3\ncolour = 1\n").contains("colour"));
        let missing = error("algorithm = \"bully\"\nnodes = 3\n\n[[fault]]\nat = 1\ncrash = 9\n");
        assert!(missing.starts_with("s.toml:4: "), "{missing}");
        assert!(missing.contains("crashed node 9 is not a node"), "{missing}");
        let time = error("algorithm = \"bully\"\nnodes = 3\n\n[[fault]]\nat = \"soon\"\ncrash = 1\n");
        assert!(time.starts_with("s.toml:5: "), "{time}");
        assert!(time.contains("a time"), "{time}");
        let algo = error("nodes = 3\nalgorithm = \"bullly\"\n");
        assert!(algo.starts_with("s.toml:2: "), "{algo}");
        let two = error("algorithm = \"bully\"\nnodes = 3\n[[fault]]\nat = 1\ncrash = 1\nrecover = 2\n");
        assert!(two.contains("exactly one of"), "{two}");
        let syntax = error("algorithm = \"bully\"\nnodes = = 3\n");
        assert!(syntax.starts_with("s.toml:2: "), "{syntax}");
        let prop = error("algorithm = \"bully\"\nnodes = 3\n[expect]\nheld = [\"a5\"]\n");
        assert!(prop.starts_with("s.toml:4: ") && prop.contains("unknown property 'a5'"), "{prop}");
        let initiator = error("algorithm = \"bully\"\nnodes = 3\ninitiators = [7]\n");
        assert!(initiator.starts_with("s.toml:3: "), "{initiator}");
    }

    #[test]
    fn a_transfer_names_the_leader_told_and_the_member_it_hands_over_to() {
        let text = "algorithm = \"bully\"\nnodes = 3\nmonitor = true\n[[fault]]\nat = 20\ntransfer = 3\nto = 1\n";
        let c = ScenarioFile::parse("t.toml", text).unwrap().config;
        assert_eq!(c.transfers, vec!["3>1@20".parse().unwrap()]);
        assert!(c.command_line().contains("--transfer '3>1@20'"), "{}", c.command_line());
        let alone = error("algorithm = \"bully\"\nnodes = 3\n[[fault]]\nat = 1\ntransfer = 3\n");
        assert!(alone.starts_with("s.toml:3: ") && alone.contains("(to = ID)"), "{alone}");
        let same = error("algorithm = \"bully\"\nnodes = 3\n[[fault]]\nat = 1\ntransfer = 3\nto = 3\n");
        assert!(same.contains("from one process to another"), "{same}");
    }

    #[test]
    fn a_file_names_its_synchronizer() {
        let text = "algorithm = \"floodmax\"\nnodes = 9\ntopology = \"grid:3x3\"\nsynchronizer = \"gamma:2@4\"\n";
        let c = ScenarioFile::parse("g.toml", text).unwrap().config;
        assert_eq!(c.synchronizer, Some("gamma:2@4".parse().unwrap()));
        assert!(c.command_line().ends_with("--synchronizer gamma:2@4"), "{}", c.command_line());
        let bad = error("algorithm = \"floodmax\"\nnodes = 9\nsynchronizer = \"delta\"\n");
        assert!(bad.starts_with("s.toml:3: invalid synchronizer 'delta'"), "{bad}");
    }

    #[test]
    fn a_connectivity_matrix_cuts_the_zero_links() {
        let text = "algorithm = \"invitation\"\nnodes = 3\nconnectivity = [\"-10\", \"1-1\", \"01-\"]\n";
        let c = ScenarioFile::parse("m.toml", text).unwrap().config;
        assert_eq!(c.link_downs, vec!["1-3@0".parse().unwrap()]);
        let one_way = "algorithm = \"invitation\"\nnodes = 3\nconnectivity = [\"-10\", \"1-1\", \"11-\"]\n";
        let c = ScenarioFile::parse("m.toml", one_way).unwrap().config;
        assert_eq!(c.link_downs, vec!["1>3@0".parse().unwrap()]);
        assert!(
            error("algorithm = \"invitation\"\nnodes = 3\nconnectivity = [\"-1\", \"1-1\", \"11-\"]\n")
                .starts_with("s.toml:3: connectivity row 1")
        );
    }
}
