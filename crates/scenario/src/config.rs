//! What a simulation run is made of, as users write it on the command line.
//!
//! Every type here parses from the command-line syntax of DESIGN.md (`FromStr`) and prints back to it
//! (`Display`), so a run can always be turned into the command that reproduces it
//! ([`SimConfig::command_line`]).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use elect_algos::Params;
use elect_core::{Duration, InT, NodeId, Prefer};

use crate::faults::{LinkDown, Loss, NodeAt, Partition, Probability, Transfer};
use crate::spec::{MAX_DELAY_UNITS, SpecError};
use crate::time::{TICKS_PER_UNIT, format_time, parse_time};
use crate::topology::TopologyKind;

fn parse_id_list(s: &str, what: &'static str) -> Result<Vec<NodeId>, SpecError> {
    s.split(',')
        .map(str::trim)
        .map(|part| {
            part.parse()
                .map(NodeId)
                .map_err(|_| SpecError::malformed(what, s, SpecError::NotAnId(crate::shorten(part).into_owned())))
        })
        .collect()
}

fn show_ids(ids: &[NodeId]) -> String {
    ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// Which id sits at each position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Ids {
    /// Position `i` gets id `i + 1`.
    #[default]
    Ascending,
    /// Position `i` gets id `n − i`.
    Descending,
    /// A permutation of `1..=n` drawn from the seed.
    Random,
    /// Exactly these ids, by position.
    List(Vec<NodeId>),
}

impl FromStr for Ids {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s.trim() {
            "ascending" | "asc" => Ok(Self::Ascending),
            "descending" | "desc" => Ok(Self::Descending),
            "random" => Ok(Self::Random),
            list => parse_id_list(list, "id list ")
                .map(Self::List)
                .map_err(|e| e.expected("ascending, descending, random or a comma-separated list of ids")),
        }
    }
}

impl fmt::Display for Ids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ascending => f.write_str("ascending"),
            Self::Descending => f.write_str("descending"),
            Self::Random => f.write_str("random"),
            Self::List(ids) => f.write_str(&show_ids(ids)),
        }
    }
}

/// Which processes receive the `Initiate` command at time 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum InitiatorSpec {
    /// Every process.
    #[default]
    All,
    /// `k` processes drawn from the seed.
    Random(usize),
    /// The weakest process alive at time 0.
    Weakest,
    /// The strongest process alive at time 0.
    Strongest,
    /// These ids.
    List(Vec<NodeId>),
    /// The live neighbours of this process (the ones that notice when it, the old leader, has crashed).
    Neighbors(NodeId),
}

impl FromStr for InitiatorSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let s = s.trim();
        if let Some(id) = s.strip_prefix("neighbors:") {
            return id
                .trim()
                .parse()
                .map(|id| Self::Neighbors(NodeId(id)))
                .map_err(|_| SpecError::malformed("initiators ", s, SpecError::NeighborsId));
        }
        if let Some(k) = s.strip_prefix("random:") {
            return k
                .trim()
                .parse()
                .map(Self::Random)
                .map_err(|_| SpecError::malformed("initiators ", s, SpecError::RandomCount));
        }
        match s {
            "all" => Ok(Self::All),
            "weakest" => Ok(Self::Weakest),
            "strongest" => Ok(Self::Strongest),
            list => parse_id_list(list, "initiator list ").map(Self::List).map_err(|e| {
                e.expected("all, random:K, weakest, strongest, neighbors:ID or a comma-separated list of ids")
            }),
        }
    }
}

impl fmt::Display for InitiatorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::All => f.write_str("all"),
            Self::Random(k) => write!(f, "random:{k}"),
            Self::Weakest => f.write_str("weakest"),
            Self::Strongest => f.write_str("strongest"),
            Self::List(ids) => f.write_str(&show_ids(ids)),
            Self::Neighbors(id) => write!(f, "neighbors:{id}"),
        }
    }
}

/// The message delay model, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delay {
    /// Every message takes exactly this long (`1` by default).
    Constant(u64),
    /// Uniform in `a..=b`.
    Uniform(u64, u64),
    /// Exponential with this mean (at least one tick); unbounded.
    Exp(u64),
}

impl Default for Delay {
    fn default() -> Self {
        Self::Constant(TICKS_PER_UNIT)
    }
}

impl Delay {
    /// The bound `T` on one-way delay, if the model has one.
    pub fn bound(self) -> Option<u64> {
        match self {
            Self::Constant(d) => Some(d),
            Self::Uniform(_, b) => Some(b),
            Self::Exp(_) => None,
        }
    }

    /// Whether delays vary from message to message.
    pub fn is_random(self) -> bool {
        !matches!(self, Self::Constant(_))
    }
}

impl FromStr for Delay {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let s = s.trim();
        let positive = |v: &str| match parse_time(v) {
            Ok(0) => Err(SpecError::ShortDelay(crate::shorten(s).into_owned())),
            Ok(d) if d > MAX_DELAY_UNITS * TICKS_PER_UNIT => Err(SpecError::LongDelay(crate::shorten(s).into_owned())),
            other => other.map_err(|e| SpecError::malformed("delay ", s, e)),
        };
        if let Some(range) = s.strip_prefix("uniform:") {
            let (a, b) =
                range.split_once("..").ok_or_else(|| SpecError::malformed("delay ", s, SpecError::UniformRange))?;
            let (a, b) = (positive(a)?, positive(b)?);
            if a > b {
                return Err(SpecError::malformed("delay ", s, SpecError::EmptyRange));
            }
            return Ok(Self::Uniform(a, b));
        }
        if let Some(mean) = s.strip_prefix("exp:") {
            return positive(mean).map(Self::Exp);
        }
        positive(s).map(Self::Constant).map_err(|e| e.expected("a number, uniform:A..B or exp:MEAN"))
    }
}

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Constant(d) => f.write_str(&format_time(d)),
            Self::Uniform(a, b) => write!(f, "uniform:{}..{}", format_time(a), format_time(b)),
            Self::Exp(m) => write!(f, "exp:{}", format_time(m)),
        }
    }
}

/// Attributes for `(attr, id)` ranking.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Attrs {
    /// No attributes: processes are ranked by id.
    #[default]
    None,
    /// `ID=VALUE` pairs; unlisted ids get 0.
    List(BTreeMap<NodeId, u32>),
    /// Attributes drawn uniformly from `0..=MAX` by the seed.
    Random(u32),
}

impl FromStr for Attrs {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        let s = s.trim();
        if let Some(max) = s.strip_prefix("random:") {
            return max
                .trim()
                .parse()
                .map(Self::Random)
                .map_err(|_| SpecError::malformed("attributes ", s, SpecError::RandomMax));
        }
        let mut attrs = BTreeMap::new();
        for pair in s.split(',') {
            let parsed =
                pair.split_once('=').and_then(|(id, v)| Some((id.trim().parse().ok()?, v.trim().parse().ok()?)));
            let (id, value) = parsed.ok_or_else(|| SpecError::malformed("attributes ", s, SpecError::AttrPairs))?;
            if attrs.insert(NodeId(id), value).is_some() {
                return Err(SpecError::malformed("attributes ", s, SpecError::TwoAttrs(id)));
            }
        }
        Ok(Self::List(attrs))
    }
}

impl fmt::Display for Attrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => Ok(()),
            Self::Random(max) => write!(f, "random:{max}"),
            Self::List(attrs) => {
                let pairs: Vec<String> = attrs.iter().map(|(id, v)| format!("{id}={v}")).collect();
                f.write_str(&pairs.join(","))
            }
        }
    }
}

/// The leader monitor a run puts its processes under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Monitor {
    /// The leader's heartbeat period, in multiples of the delay bound `T`.
    pub heartbeat: InT,
    /// The leader monitor alone (`--bare-monitor`), without the member around it (heartbeats, epochs and
    /// re-election, but no fencing epochs, claims or incarnations), on any topology. Otherwise (`--monitor`), the
    /// process a member of `elect node` runs: the deployed member, with the leader monitor around a single-leader
    /// algorithm.
    pub bare: bool,
}

impl Monitor {
    /// The heartbeat period unless a flag or a scenario file says: `2T`.
    pub const DEFAULT_HEARTBEAT: InT = InT(2);

    /// The deployed member, with a heartbeat every `heartbeat` T.
    pub const fn member(heartbeat: InT) -> Self {
        Self { heartbeat, bare: false }
    }

    /// The leader monitor alone, with a heartbeat every `heartbeat` T.
    pub const fn bare(heartbeat: InT) -> Self {
        Self { heartbeat, bare: true }
    }
}

/// One simulation run, as the user describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// The algorithm's name (canonical or alias).
    pub algorithm: String,
    /// Its parameters.
    pub params: Params,
    /// `n`.
    pub nodes: usize,
    /// The topology; `None` means the algorithm's natural one.
    pub topology: Option<TopologyKind>,
    /// The id arrangement.
    pub ids: Ids,
    /// Who initiates.
    pub initiators: InitiatorSpec,
    /// The root seed every random choice derives from.
    pub seed: u64,
    /// Message delays.
    pub delay: Delay,
    /// Crashes (`ID@T`).
    pub crashes: Vec<NodeAt>,
    /// Recoveries (`ID@T`): the process restarts from its persisted state.
    pub recoveries: Vec<NodeAt>,
    /// Crash whoever leads at each of these times.
    pub crash_leader_at: Vec<u64>,
    /// Tell a process to give up leadership (`ID@T`): `Command::Resign`, which a member acts on if it leads.
    pub resigns: Vec<NodeAt>,
    /// Tell a process to hand leadership over to another (`FROM>TO@T`): `Command::Transfer`, which a member acts on
    /// if it leads.
    pub transfers: Vec<Transfer>,
    /// Ask for member ID to be made a voter at time T (`ID@T`): `Command::AddVoter`, told to every live process, on
    /// which the leader acts (the others refuse it, as a member that does not lead refuses `POST /voters`).
    pub add_voters: Vec<NodeAt>,
    /// Ask for member ID to stop voting at time T (`ID@T`): `Command::RemoveVoter`, told as [`Self::add_voters`].
    pub remove_voters: Vec<NodeAt>,
    /// Message loss, everywhere or per link.
    pub losses: Vec<Loss>,
    /// The probability that a message is delivered twice.
    pub duplicate: Probability,
    /// Links that go down for a while.
    pub link_downs: Vec<LinkDown>,
    /// Partitions.
    pub partitions: Vec<Partition>,
    /// Stop at this time (ticks) even if events remain; "at end" properties are judged then.
    pub until: Option<u64>,
    /// The delay bound `T` processes are told, when it differs from the delay model's (an inaccurate failure
    /// detector when smaller than the real delays).
    pub delay_bound: Option<Duration>,
    /// Run every process under the leader monitor (`--monitor` or `--bare-monitor`), or not.
    pub monitor: Option<Monitor>,
    /// The direction of the priority order.
    pub prefer: Prefer,
    /// `(attr, id)` attributes.
    pub attrs: Attrs,
    /// Stop after this many events (the run is then reported as not terminating).
    pub max_events: u64,
    /// Whether each directed link delivers in sending order (the default). Without it, random delays reorder.
    pub fifo: bool,
    /// Move the nodes of a geometric graph.
    pub mobility: Option<crate::mobility::MobilitySpec>,
    /// Stop moving at this time (ticks); nodes move until the end of the run otherwise.
    pub mobility_until: Option<u64>,
    /// Run an algorithm written in rounds on this synchronizer instead of in lock-step.
    pub synchronizer: Option<elect_algos::synchronizers::Spec>,
    /// Properties to judge besides those the algorithm promises (`--judge`), to show where it breaks them.
    pub judge: Vec<elect_core::Property>,
    /// If not empty, judge these properties and no others (`--only`): under a fault that never heals, properties
    /// over every live process (agreement, say) cannot hold, while those over what can talk (`majority-leader`)
    /// can.
    pub only: Vec<elect_core::Property>,
}

impl SimConfig {
    /// The default run of `algorithm` on `nodes` processes.
    pub fn new(algorithm: &str, nodes: usize) -> Self {
        Self {
            algorithm: algorithm.to_owned(),
            params: Params::new(),
            nodes,
            topology: None,
            ids: Ids::default(),
            initiators: InitiatorSpec::default(),
            seed: 1,
            delay: Delay::default(),
            crashes: Vec::new(),
            recoveries: Vec::new(),
            crash_leader_at: Vec::new(),
            resigns: Vec::new(),
            transfers: Vec::new(),
            add_voters: Vec::new(),
            remove_voters: Vec::new(),
            losses: Vec::new(),
            duplicate: Probability::NEVER,
            link_downs: Vec::new(),
            partitions: Vec::new(),
            until: None,
            delay_bound: None,
            monitor: None,
            prefer: Prefer::Highest,
            attrs: Attrs::None,
            max_events: DEFAULT_MAX_EVENTS,
            fifo: true,
            mobility: None,
            mobility_until: None,
            synchronizer: None,
            judge: Vec::new(),
            only: Vec::new(),
        }
    }

    /// The showcase scenario of `info` (see [`elect_algos::Showcase`]) on `nodes` processes with random ids.
    pub fn showcase(info: &elect_algos::Info, nodes: usize, seed: u64) -> Self {
        let mut cfg = Self::new(info.name, nodes);
        cfg.ids = Ids::Random;
        cfg.seed = seed;
        cfg.initiators = match info.showcase.initiators {
            elect_algos::Initiators::All => InitiatorSpec::All,
            elect_algos::Initiators::OneRandom => InitiatorSpec::Random(1),
            elect_algos::Initiators::Weakest => InitiatorSpec::Weakest,
            elect_algos::Initiators::NeighborsOfCrashed => InitiatorSpec::Neighbors(NodeId(nodes as u32)),
        };
        if info.showcase.crash_strongest {
            cfg.crashes.push(NodeAt { id: NodeId(nodes as u32), at: 0 });
        }
        cfg
    }

    /// The `elect sim` arguments that reproduce this run, seed included.
    pub fn command_line(&self) -> String {
        let mut line = "elect sim".to_owned();
        for (flag, value) in self.flags() {
            line.push_str(" --");
            line.push_str(&flag);
            if !value.is_empty() {
                line.push(' ');
                line.push_str(&shell_quote(&value));
            }
        }
        line
    }

    /// The flags of `elect sim` that reproduce this run, seed included, as `(flag, value)` without the dashes (the
    /// value empty for a flag that takes none): the command line's words, and the page's form fields.
    pub fn flags(&self) -> Vec<(String, String)> {
        let mut args: Vec<(String, String)> = Vec::new();
        let mut push = |flag: &str, value: String| args.push((flag.to_owned(), value));
        push("algorithm", self.algorithm.clone());
        push("nodes", self.nodes.to_string());
        if let Some(t) = &self.topology {
            push("topology", t.to_string());
        }
        push("ids", self.ids.to_string());
        push("initiators", self.initiators.to_string());
        push("seed", self.seed.to_string());
        if self.delay != Delay::default() {
            push("delay", self.delay.to_string());
        }
        self.crashes.iter().for_each(|c| push("crash", c.to_string()));
        self.recoveries.iter().for_each(|c| push("recover", c.to_string()));
        self.crash_leader_at.iter().for_each(|&t| push("crash-leader-at", format_time(t)));
        self.resigns.iter().for_each(|r| push("resign", r.to_string()));
        self.transfers.iter().for_each(|t| push("transfer", t.to_string()));
        self.add_voters.iter().for_each(|v| push("add-voter", v.to_string()));
        self.remove_voters.iter().for_each(|v| push("remove-voter", v.to_string()));
        self.losses.iter().for_each(|l| push("loss", l.to_string()));
        if !self.duplicate.is_never() {
            push("duplicate", self.duplicate.to_string());
        }
        self.link_downs.iter().for_each(|l| push("link-down", l.to_string()));
        self.partitions.iter().for_each(|p| push("partition", p.to_string()));
        if let Some(t) = self.until {
            push("until", format_time(t));
        }
        if let Some(t) = self.delay_bound {
            push("delay-bound", format_time(t.ticks()));
        }
        if let Some(m) = self.monitor {
            push(if m.bare { "bare-monitor" } else { "monitor" }, String::new());
            push("heartbeat", m.heartbeat.count().to_string());
        }
        if self.prefer == Prefer::Lowest {
            push("prefer", "lowest".to_owned());
        }
        if self.attrs != Attrs::None {
            push("attr", self.attrs.to_string());
        }
        self.params.iter().for_each(|(k, v)| push("param", format!("{k}={v}")));
        if let Some(s) = self.synchronizer {
            push("synchronizer", s.to_string());
        }
        if !self.fifo {
            push("links", "unordered".to_owned());
        }
        if self.max_events != DEFAULT_MAX_EVENTS {
            push("max-events", self.max_events.to_string());
        }
        if let Some(m) = self.mobility {
            push("mobility", m.to_string());
        }
        if let Some(t) = self.mobility_until {
            push("mobility-until", format_time(t));
        }
        self.judge.iter().for_each(|p| push("judge", p.name().to_owned()));
        self.only.iter().for_each(|p| push("only", p.name().to_owned()));
        args
    }

    /// Whether the run names the voters (`--param voters`) or changes them (`--add-voter`, `--remove-voter`).
    pub fn names_voters(&self) -> bool {
        self.params.get(elect_algos::member::VOTERS_PARAM.name).is_some()
            || !self.add_voters.is_empty()
            || !self.remove_voters.is_empty()
    }

    /// The checks of a run: what the algorithm promises (`promised`), and the properties of [`Self::judge`] it does
    /// not; only those of [`Self::only`], if it names any. A run with a transfer does not judge safety (the
    /// strongest live process leads): a transfer makes another process leader on purpose; nor does a run whose
    /// voters are not every member (`--param voters`), or change (a learner does not lead, however strong).
    pub fn checks(&self, mut promised: Vec<elect_core::Check>) -> Vec<elect_core::Check> {
        if !self.transfers.is_empty() || self.names_voters() {
            promised.retain(|c| c.property != elect_core::Property::Safety);
        }
        for property in self.judge.iter().chain(&self.only) {
            if !promised.iter().any(|c| c.property == *property) {
                promised.push(property.check());
            }
        }
        if !self.only.is_empty() {
            promised.retain(|c| self.only.contains(&c.property));
        }
        promised
    }
}

/// The most pairs of nodes the moves of a mobile run may check (a move checks every pair, and the nodes move once
/// per time unit): a few seconds of moving (the README's 300 nodes moving for 4000 units check 3.6·10^8).
pub(crate) const MAX_MOBILITY_PAIRS: u64 = 4_000_000_000;

/// The longest delay bound `T`, in ticks: 4 million time units (below 2^32 ticks), so that a period of up to
/// [`elect_algos::params::MAX_MULTIPLE`] `T` (and the monitor's and the algorithms' sums of such periods, by the
/// processes and hops they count) stays far inside virtual time.
pub(crate) const MAX_DELAY_BOUND: u64 = 4_000_000 * crate::TICKS_PER_UNIT;

/// `s` as one shell word: unchanged when it is plain, single-quoted otherwise.
fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_.,:=@/+-".contains(c);
    if !s.is_empty() && s.chars().all(plain) { s.to_owned() } else { format!("'{}'", s.replace('\'', "'\\''")) }
}

/// The default event budget of a run.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_prints_back_to_what_it_parses_from() {
        for s in ["ascending", "descending", "random", "3,1,2"] {
            assert_eq!(s.parse::<Ids>().unwrap().to_string(), s);
        }
        for s in ["all", "random:3", "weakest", "strongest", "1,5"] {
            assert_eq!(s.parse::<InitiatorSpec>().unwrap().to_string(), s);
        }
        for s in ["1", "2.5", "uniform:1..9", "exp:1"] {
            assert_eq!(s.parse::<Delay>().unwrap().to_string(), s);
        }
        for s in ["1=5,2=7", "random:9"] {
            assert_eq!(s.parse::<Attrs>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn malformed_specs_name_the_problem() {
        let err = |e: SpecError| e.to_string();
        assert!(err("1,x,3".parse::<Ids>().unwrap_err()).contains("'x' is not a node id"));
        assert!(err("random:".parse::<InitiatorSpec>().unwrap_err()).contains("random:K needs a count"));
        assert!(err("uniform:9..1".parse::<Delay>().unwrap_err()).contains("empty"));
        assert!(err("0".parse::<Delay>().unwrap_err()).contains("at least 0.001"));
        assert!(err("0.0001".parse::<Delay>().unwrap_err()).contains("at least 0.001"));
        assert!(err("1e7".parse::<Delay>().unwrap_err()).contains("at most 1000000"));
        assert!(err("8".parse::<NodeAt>().unwrap_err()).contains("expected ID@TIME"));
        assert!(err("8@later".parse::<NodeAt>().unwrap_err()).contains("'later' is not a time"));
        assert!(err("1=2,1=3".parse::<Attrs>().unwrap_err()).contains("two attributes"));
    }

    #[test]
    fn the_command_line_names_everything_that_shapes_the_run() {
        let mut cfg = SimConfig::new("bully", 8);
        cfg.crashes.push(NodeAt { id: NodeId(8), at: 0 });
        cfg.initiators = InitiatorSpec::List(vec![NodeId(1)]);
        cfg.seed = 42;
        assert_eq!(
            cfg.command_line(),
            "elect sim --algorithm bully --nodes 8 --ids ascending --initiators 1 --seed 42 --crash 8@0"
        );
        cfg.params = Params::parse(["known-dead=1, 2"]).unwrap();
        assert!(cfg.command_line().ends_with("--param 'known-dead=1, 2'"), "{}", cfg.command_line());
    }
}
