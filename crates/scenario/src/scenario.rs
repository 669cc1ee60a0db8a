//! A validated run: the user's [`SimConfig`] resolved into ids, ranks, initiators and faults by position.
//!
//! Everything random about the set-up (random ids, random initiators, random attributes) is drawn here, each from
//! its own stream of the root seed, so changing one choice does not shift the others.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use elect_algos::{Algorithm, Info, Needs, Timing, lookup};
use elect_core::{Duration, Neighbor, NodeId, Port, Rank, Ranking, Setup};
use rand::RngExt;
use rand::seq::{SliceRandom, index};

use crate::config::{Attrs, Ids, InitiatorSpec, MAX_DELAY_BOUND, MAX_MOBILITY_PAIRS, SimConfig};
use crate::error::ConfigError;
use crate::faults::{Link, LinkFault, Losses, NodeAt, PartitionFault, Transfer};
use crate::graph::{End, Graph};
use crate::rng::{Stream, rng};
use crate::time::Time;
use crate::topology::TopologyKind;
use elect_algos::member::VoterChange;
#[cfg(doc)]
use elect_algos::monitor::MonitorConfig;
use elect_algos::monitor::MonitorNetwork;

/// A run ready to simulate.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// What the user asked for.
    pub config: SimConfig,
    /// The algorithm.
    pub info: &'static Info,
    /// The topology.
    pub graph: Graph,
    /// The id at each position.
    pub ids: Vec<NodeId>,
    /// The rank at each position.
    pub ranks: Vec<Rank>,
    /// Whether each position initiates at time 0.
    pub initiators: Vec<bool>,
    /// Crashes as (position, tick).
    pub crashes: Vec<(u32, u64)>,
    /// Recoveries as (position, tick).
    pub recoveries: Vec<(u32, u64)>,
    /// Resignations as (position, tick).
    pub resigns: Vec<(u32, u64)>,
    /// Transfers as (position of the process told, id of the one named, tick).
    pub transfers: Vec<(u32, NodeId, u64)>,
    /// Changes of the voters, each asked of every live process, with their ticks.
    pub voter_changes: Vec<(VoterChange, u64)>,
    /// Link faults, each on one or two directed links.
    pub link_faults: Vec<LinkFault>,
    /// Partitions.
    pub partitions: Vec<PartitionFault>,
    /// Loss probabilities.
    pub losses: Losses,
    /// The delay bound processes are told.
    pub delay_bound: Option<Duration>,
    /// The topology's diameter `D`, when it is connected and small enough to measure.
    pub diameter: Option<u64>,
    /// Its connected components.
    pub components: usize,
    /// The largest eccentricity among the initiators, when the diameter is measured.
    pub initiator_eccentricity: Option<u64>,
    /// The synchronizer a round algorithm runs on, with its defaults resolved (`None`: lock-step, or not a round
    /// algorithm).
    pub synchronizer: Option<elect_algos::synchronizers::Choice>,
}

/// A fault a scenario schedules at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduled {
    /// The process at this position crashes.
    Crash(u32),
    /// The process at this position restarts from what it persisted.
    Recover(u32),
    /// Whoever leads then crashes.
    CrashLeader,
    /// The process at this position is told to resign.
    Resign(u32),
    /// The process at this position is told to hand leadership over to the process of this id.
    Transfer(u32, NodeId),
    /// Every live process is asked for this change of the voters (the leader makes it; the others refuse it).
    Voters(VoterChange),
    /// Link fault `index` starts (`true`) or ends.
    Link(usize, bool),
    /// Partition `index` starts (`true`) or heals.
    Partition(usize, bool),
}

impl Scenario {
    /// Validates `config` and resolves it.
    pub fn build(config: &SimConfig) -> Result<Self, ConfigError> {
        let info = lookup(&config.algorithm)?;
        let n = config.nodes;
        if n == 0 {
            return Err(ConfigError::NoNodes);
        }
        if config.max_events == 0 {
            return Err(ConfigError::NoEvents);
        }
        let graph = graph(config, info)?;
        let components = graph.components();
        if components > 1 && info.elects != elect_algos::Elects::PerComponent {
            return Err(ConfigError::Disconnected {
                kind: graph.kind().clone(),
                seed: config.seed,
                components,
                algorithm: info.name,
            });
        }
        let diameter = graph.diameter();
        let ids = arrange(config, n)?;
        let positions = Positions::new(&ids);
        let ranking = ranking(config, &positions)?;
        let ranks: Vec<Rank> = ids.iter().map(|&id| ranking.rank(id)).collect();
        let crashes = at_positions(&config.crashes, "crashed node", &positions)?;
        crate::faults::check_recoveries(&config.crashes, &config.recoveries, &config.crash_leader_at)
            .map_err(ConfigError::Recovery)?;
        let recoveries = at_positions(&config.recoveries, "recovering node", &positions)?;
        let resigns = at_positions(&config.resigns, "resigning node", &positions)?;
        let transfers = transfers_at_positions(&config.transfers, &positions)?;
        let voter_changes = voter_changes(config, &positions)?;
        let down_at_start: BTreeSet<u32> = crashes.iter().filter(|&&(_, at)| at == 0).map(|&(p, _)| p).collect();
        let initiators = initiators(config, &graph, &ranks, &down_at_start, &positions)?;
        let link_faults = link_faults(config, &graph, &positions)?;
        let partitions = partitions(config, &positions)?;
        let losses = losses(config, &graph, &positions)?;
        let delay_bound = config.delay_bound.or(config.delay.bound().map(Duration::from_ticks));
        let synchronizer = match config.synchronizer {
            None => None,
            Some(spec) => Some(synchronizer(spec, config, info, delay_bound, &initiators, &positions)?),
        };
        check_timing(config, info, delay_bound)?;
        check_monitor(config, info, &graph, delay_bound)?;
        if info.lockstep && synchronizer.is_none() {
            check_lockstep(config, info, &initiators, &down_at_start)?;
        }
        let needs_diameter = info.params.iter().any(|p| p.name == "diameter");
        if needs_diameter && diameter.is_none() && config.params.get("diameter").is_none() {
            return Err(ConfigError::NoDiameter { algorithm: info.name, kind: graph.kind().clone(), n });
        }
        match config.monitor.map(|m| m.heartbeat.count()) {
            Some(0) => return Err(ConfigError::ZeroHeartbeat),
            Some(k) if k > elect_algos::params::MAX_MULTIPLE => return Err(ConfigError::LongHeartbeat(k)),
            _ => {}
        }
        let initiator_eccentricity = diameter
            .and_then(|_| (0..n as u32).filter(|&i| initiators[i as usize]).map(|i| graph.eccentricity(i)).max());
        Ok(Self {
            config: config.clone(),
            info,
            graph,
            ids,
            ranks,
            initiators,
            crashes,
            recoveries,
            resigns,
            transfers,
            voter_changes,
            link_faults,
            partitions,
            losses,
            delay_bound,
            initiator_eccentricity,
            diameter,
            components,
            synchronizer,
        })
    }

    /// The diameter processes are told.
    pub fn known_diameter(&self) -> Option<u32> {
        self.diameter.and_then(|d| u32::try_from(d).ok())
    }

    /// Every fault the scenario schedules, with its time (ticks), unsorted: crashes, recoveries, leader crashes,
    /// then each link fault's and partition's start and end.
    pub fn scheduled_faults(&self) -> Vec<(u64, Scheduled)> {
        let mut faults: Vec<(u64, Scheduled)> = Vec::new();
        faults.extend(self.crashes.iter().map(|&(node, at)| (at, Scheduled::Crash(node))));
        faults.extend(self.recoveries.iter().map(|&(node, at)| (at, Scheduled::Recover(node))));
        faults.extend(self.config.crash_leader_at.iter().map(|&at| (at, Scheduled::CrashLeader)));
        faults.extend(self.resigns.iter().map(|&(node, at)| (at, Scheduled::Resign(node))));
        faults.extend(self.transfers.iter().map(|&(node, to, at)| (at, Scheduled::Transfer(node, to))));
        faults.extend(self.voter_changes.iter().map(|&(change, at)| (at, Scheduled::Voters(change))));
        for (k, f) in self.link_faults.iter().enumerate() {
            faults.push((f.window.from, Scheduled::Link(k, true)));
            faults.extend(f.window.until.map(|u| (u, Scheduled::Link(k, false))));
        }
        for (k, p) in self.partitions.iter().enumerate() {
            faults.push((p.window.from, Scheduled::Partition(k, true)));
            faults.extend(p.window.until.map(|u| (u, Scheduled::Partition(k, false))));
        }
        faults
    }

    /// The times at which something in the network or a process changes, after time 0.
    pub fn fault_times(&self) -> impl Iterator<Item = u64> {
        let moves = self.config.mobility.and(self.config.mobility_until);
        self.scheduled_faults().into_iter().map(|(at, _)| at).chain(moves).filter(|&t| t > 0)
    }

    /// What the leader monitor's timing depends on in this scenario ([`MonitorConfig::for_network`]): the longest
    /// path a heartbeat takes, and whether a ring algorithm runs on a logical ring over a complete graph.
    pub fn monitor_network(&self) -> MonitorNetwork {
        let n = self.len() as u64;
        let hops = match self.graph.kind() {
            TopologyKind::Complete => 1,
            TopologyKind::Ring => n,
            _ => self.diameter.unwrap_or(n).max(1),
        };
        MonitorNetwork {
            facts: self.facts(),
            hops,
            logical_ring: self.info.needs == elect_algos::Needs::Ring && *self.graph.kind() == TopologyKind::Complete,
            delay_bound: self.delay_bound.expect("the monitor's delay bound is checked when the scenario is built"),
        }
    }

    /// The facts about this run known before it starts (nobody has crashed yet).
    pub fn facts(&self) -> elect_algos::Facts {
        elect_algos::Facts {
            nodes: self.len() as u64,
            edges: self.graph.edges(),
            initiators: self.initiators.iter().filter(|&&b| b).count() as u64,
            live: self.len() as u64,
            crashes_during_run: self.fault_times().count() as u64,
            diameter: self.diameter,
            initiator_eccentricity: self.initiator_eccentricity,
        }
    }

    /// Validates `config` without keeping the result.
    pub fn check(config: &SimConfig) -> Result<(), ConfigError> {
        Self::build(config).map(drop)
    }

    /// `n`.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the run has no processes (never: [`Scenario::build`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

fn topology(info: &Info, asked: Option<TopologyKind>, n: usize) -> Result<TopologyKind, ConfigError> {
    let natural = match info.needs {
        Needs::Ring => TopologyKind::Ring,
        Needs::Complete => TopologyKind::Complete,
        Needs::Connected if n >= 6 => TopologyKind::RandomRegular { k: 4 },
        Needs::Connected => TopologyKind::Complete,
    };
    match asked {
        None => Ok(natural),
        Some(kind) if kind == natural => Ok(kind),
        Some(kind) if info.needs == Needs::Connected => Ok(kind),
        // A logical ring over a complete network (van Steen's model): a process can skip a dead successor.
        Some(TopologyKind::Complete) if info.needs == Needs::Ring && n >= 3 => Ok(TopologyKind::Complete),
        Some(TopologyKind::Complete) if info.needs == Needs::Ring => Err(ConfigError::SmallLogicalRing(n)),
        Some(kind) => Err(ConfigError::WrongTopology { algorithm: info.name, natural, kind }),
    }
}

/// The graph of the run: the topology `config` asks for (or the algorithm's own), made mobile if the nodes move.
fn graph(config: &SimConfig, info: &Info) -> Result<Graph, ConfigError> {
    let n = config.nodes;
    let graph = Graph::new(topology(info, config.topology.clone(), n)?, n, &mut rng(config.seed, Stream::Topology))
        .map_err(ConfigError::Topology)?;
    match config.mobility {
        None if config.mobility_until.is_some() => Err(ConfigError::MobilityUntilAlone),
        None => Ok(graph),
        Some(_) if config.mobility_until.is_none() && config.until.is_none() => Err(ConfigError::EndlessMobility),
        Some(_) => {
            // Each move (one per time unit while the nodes move) checks every pair of nodes.
            let moving = config.mobility_until.unwrap_or(u64::MAX).min(config.until.unwrap_or(u64::MAX));
            let moves = moving / crate::TICKS_PER_UNIT;
            if moves.saturating_mul((n as u64).saturating_mul(n as u64)) > MAX_MOBILITY_PAIRS {
                return Err(ConfigError::LongMobility { moves, n });
            }
            graph.into_mobile().map_err(ConfigError::Topology)
        }
    }
}

/// The position of each id of a run, to resolve the ids a configuration names.
struct Positions<'a> {
    ids: &'a [NodeId],
    /// Built at the first lookup: most runs name no process, and a ring of a million processes with random ids
    /// spent over a quarter of its setup sorting them into this map.
    of: OnceCell<BTreeMap<NodeId, u32>>,
}

impl<'a> Positions<'a> {
    fn new(ids: &'a [NodeId]) -> Self {
        Self { ids, of: OnceCell::new() }
    }

    /// The position of `id`, which the configuration names as `what` (for the error if no process has it).
    fn find(&self, id: NodeId, what: &'static str) -> Result<u32, ConfigError> {
        let of = self.of.get_or_init(|| self.ids.iter().enumerate().map(|(i, &id)| (id, i as u32)).collect());
        of.get(&id).copied().ok_or_else(|| ConfigError::NotANode { what, id, ids: describe(self.ids) })
    }
}

/// Events at processes (crashes, recoveries, resignations) as (position, tick).
fn at_positions(
    events: &[NodeAt],
    what: &'static str,
    positions: &Positions<'_>,
) -> Result<Vec<(u32, u64)>, ConfigError> {
    events.iter().map(|e| Ok((positions.find(e.id, what)?, e.at))).collect()
}

/// The changes of the voters a run asks for, with their ticks, and the voters it starts with (`--param voters`):
/// every id must be a process of the run.
fn voter_changes(config: &SimConfig, positions: &Positions<'_>) -> Result<Vec<(VoterChange, u64)>, ConfigError> {
    let (voters, _) = elect_algos::member::Voters::take(&config.params)?;
    for &id in voters.as_deref().unwrap_or_default() {
        positions.find(id, "voter")?;
    }
    let adds = config.add_voters.iter().map(|v| (VoterChange::Add(v.id), v));
    let removes = config.remove_voters.iter().map(|v| (VoterChange::Remove(v.id), v));
    let mut changes = Vec::new();
    for (change, v) in adds.chain(removes) {
        positions.find(v.id, "member whose vote changes")?;
        changes.push((change, v.at));
    }
    Ok(changes)
}

/// Transfers as (position of the process told, id of the one named, tick); both must be processes of the run.
fn transfers_at_positions(
    transfers: &[Transfer],
    positions: &Positions<'_>,
) -> Result<Vec<(u32, NodeId, u64)>, ConfigError> {
    let at = |t: &Transfer| {
        positions.find(t.to, "node a transfer names")?;
        Ok((positions.find(t.from, "transferring node")?, t.to, t.at))
    };
    transfers.iter().map(at).collect()
}

/// The directed links between positions that `l` names: one, or both directions; the link must exist.
fn directed(l: Link, graph: &Graph, positions: &Positions<'_>) -> Result<Vec<(u32, u32)>, ConfigError> {
    let (a, b) = (positions.find(l.a, "linked node")?, positions.find(l.b, "linked node")?);
    if !graph.adjacent(a, b) {
        return Err(ConfigError::NoLink { a: l.a, b: l.b, kind: graph.kind().clone() });
    }
    Ok(if l.one_way { vec![(a, b)] } else { vec![(a, b), (b, a)] })
}

fn link_faults(config: &SimConfig, graph: &Graph, positions: &Positions<'_>) -> Result<Vec<LinkFault>, ConfigError> {
    config
        .link_downs
        .iter()
        .map(|f| Ok(LinkFault { directed: directed(f.link, graph, positions)?, window: f.window }))
        .collect()
}

fn partitions(config: &SimConfig, positions: &Positions<'_>) -> Result<Vec<PartitionFault>, ConfigError> {
    config
        .partitions
        .iter()
        .map(|p| {
            let mut group_of = vec![0u16; config.nodes];
            for (g, members) in p.groups.iter().enumerate() {
                for &id in members {
                    group_of[positions.find(id, "partitioned node")? as usize] = g as u16 + 1;
                }
            }
            Ok(PartitionFault { group_of, one_way: p.one_way, window: p.window })
        })
        .collect()
}

fn losses(config: &SimConfig, graph: &Graph, positions: &Positions<'_>) -> Result<Losses, ConfigError> {
    let mut losses = Losses::default();
    for loss in &config.losses {
        match loss.link {
            None => losses.everywhere = loss.p,
            Some(l) => {
                for pair in directed(l, graph, positions)? {
                    losses.links.insert(pair, loss.p);
                }
            }
        }
    }
    Ok(losses)
}

/// The synchronizer `spec` resolved for this run, which must be a failure-free run of a round algorithm.
fn synchronizer(
    spec: elect_algos::synchronizers::Spec,
    config: &SimConfig,
    info: &Info,
    delay_bound: Option<Duration>,
    initiators: &[bool],
    positions: &Positions<'_>,
) -> Result<elect_algos::synchronizers::Choice, ConfigError> {
    if !elect_algos::runs_on_synchronizers(info.name) {
        let known = elect_algos::registry::all()
            .iter()
            .filter(|i| elect_algos::runs_on_synchronizers(i.name))
            .map(|i| i.name)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ConfigError::NotInRounds { algorithm: info.name, known });
    }
    if config.monitor.is_some() {
        return Err(ConfigError::SynchronizedMonitor);
    }
    if config.mobility.is_some() {
        return Err(ConfigError::SynchronizedMobility);
    }
    if let Some(flag) = first_fault_flag(config) {
        return Err(ConfigError::SynchronizedFault(flag));
    }
    if spec.timing() == Timing::Synchronous && delay_bound.is_none() {
        return Err(ConfigError::AbdUnbounded(config.delay));
    }
    if let Some(root) = spec.root() {
        positions.find(root, "the synchronizer's root")?;
    }
    let starting: Vec<NodeId> = (0..config.nodes).filter(|&i| initiators[i]).map(|i| positions.ids[i]).collect();
    spec.resolve(config.nodes, &starting).map_err(ConfigError::Synchronizer)
}

/// The flag of the first fault `config` schedules, if any.
fn first_fault_flag(config: &SimConfig) -> Option<&'static str> {
    let faults = [
        (!config.crashes.is_empty(), "--crash"),
        (!config.recoveries.is_empty(), "--recover"),
        (!config.resigns.is_empty(), "--resign"),
        (!config.transfers.is_empty(), "--transfer"),
        (!config.add_voters.is_empty(), "--add-voter"),
        (!config.remove_voters.is_empty(), "--remove-voter"),
        (!config.crash_leader_at.is_empty(), "--crash-leader-at"),
        (!config.losses.is_empty(), "--loss"),
        (!config.duplicate.is_never(), "--duplicate"),
        (!config.link_downs.is_empty(), "--link-down"),
        (!config.partitions.is_empty(), "--partition"),
    ];
    faults.iter().find(|(given, _)| *given).map(|&(_, flag)| flag)
}

/// A synchronous algorithm (or synchronizer) needs a delay bound, and a given bound must be positive and at most
/// [`MAX_DELAY_BOUND`].
fn check_timing(config: &SimConfig, info: &Info, delay_bound: Option<Duration>) -> Result<(), ConfigError> {
    let timing = config.synchronizer.map_or(info.timing, |s| s.timing());
    if timing == Timing::Synchronous && delay_bound.is_none() {
        return Err(ConfigError::Unbounded { algorithm: info.name, delay: config.delay });
    }
    if config.delay_bound == Some(Duration::ZERO) {
        return Err(ConfigError::ZeroDelayBound);
    }
    if let Some(t) = delay_bound.filter(|t| t.ticks() > MAX_DELAY_BOUND) {
        return Err(ConfigError::LongDelayBound(Time(t.ticks())));
    }
    Ok(())
}

/// What the leader monitor (`--bare-monitor`) and the member (`--monitor`) need, and the flaw only a member has.
fn check_monitor(
    config: &SimConfig,
    info: &Info,
    graph: &Graph,
    delay_bound: Option<Duration>,
) -> Result<(), ConfigError> {
    if config.monitor.is_some() && delay_bound.is_none() {
        return Err(ConfigError::MonitorUnbounded(config.delay));
    }
    if config.monitor.is_some_and(|m| m.bare) && info.elects != elect_algos::Elects::OneLeader {
        return Err(ConfigError::BareMonitorPerGroup(info.name));
    }
    if config.monitor.is_some_and(|m| !m.bare) {
        elect_algos::member::deployable(info).map_err(ConfigError::NotDeployable)?;
        if *graph.kind() != TopologyKind::Complete {
            return Err(ConfigError::MonitorNeedsMesh(graph.kind().clone()));
        }
    }
    if config.params.get(elect_algos::member::BUG_PARAM.name).is_some() && config.monitor.is_none_or(|m| m.bare) {
        return Err(ConfigError::BugNeedsMonitor(elect_algos::member::BUG_PARAM.name));
    }
    let lease_params = [
        elect_algos::member::LEASE_PARAM.name,
        elect_algos::member::DRIFT_PARAM.name,
        elect_algos::member::CLOCKS_PARAM.name,
    ];
    if let Some(key) = lease_params.into_iter().find(|key| config.params.get(key).is_some())
        && config.monitor.is_none_or(|m| m.bare)
    {
        return Err(ConfigError::LeaseNeedsMonitor(key));
    }
    if config.names_voters() && config.monitor.is_none_or(|m| m.bare) {
        return Err(ConfigError::VotersNeedMonitor);
    }
    Ok(())
}

/// A lock-step algorithm, run without a synchronizer: every live process starts at 0, and no monitor restarts one.
fn check_lockstep(
    config: &SimConfig,
    info: &Info,
    initiators: &[bool],
    down_at_start: &BTreeSet<u32>,
) -> Result<(), ConfigError> {
    if initiators.iter().enumerate().any(|(p, &i)| !i && !down_at_start.contains(&(p as u32))) {
        return Err(ConfigError::LockstepInitiators(info.name));
    }
    if config.monitor.is_some() {
        return Err(ConfigError::LockstepMonitor(info.name));
    }
    Ok(())
}

fn arrange(config: &SimConfig, n: usize) -> Result<Vec<NodeId>, ConfigError> {
    let upto = |n: usize| (1..=n as u32).map(NodeId);
    Ok(match &config.ids {
        Ids::Ascending => upto(n).collect(),
        Ids::Descending => upto(n).rev().collect(),
        Ids::Random => {
            let mut ids: Vec<NodeId> = upto(n).collect();
            ids.shuffle(&mut rng(config.seed, Stream::Ids));
            ids
        }
        Ids::List(list) => {
            if list.len() != n {
                return Err(ConfigError::IdCount { listed: list.len(), n });
            }
            let mut seen = BTreeSet::new();
            if let Some(dup) = list.iter().find(|&&id| !seen.insert(id)) {
                return Err(ConfigError::DuplicateId(*dup));
            }
            list.clone()
        }
    })
}

fn ranking(config: &SimConfig, positions: &Positions<'_>) -> Result<Ranking, ConfigError> {
    let attrs = match &config.attrs {
        Attrs::None => BTreeMap::new(),
        Attrs::List(attrs) => {
            for &id in attrs.keys() {
                positions.find(id, "--attr names node")?;
            }
            attrs.clone()
        }
        Attrs::Random(max) => {
            if *max > Rank::MAX_ATTR {
                return Err(ConfigError::RandomAttrTooLarge(*max));
            }
            let mut rng = rng(config.seed, Stream::Attrs);
            positions.ids.iter().map(|&id| (id, rng.random_range(0..=*max))).collect()
        }
    };
    Ok(Ranking::new(config.prefer).with_attrs(attrs)?)
}

/// Who receives `Initiate` at time 0: only processes that are up then.
fn initiators(
    config: &SimConfig,
    graph: &Graph,
    ranks: &[Rank],
    down_at_start: &BTreeSet<u32>,
    positions: &Positions<'_>,
) -> Result<Vec<bool>, ConfigError> {
    let n = ranks.len();
    let live: Vec<u32> = (0..n as u32).filter(|p| !down_at_start.contains(p)).collect();
    if live.is_empty() {
        return Err(ConfigError::AllCrashed);
    }
    let mut chosen = vec![false; n];
    let strength = |p: &&u32| ranks[**p as usize];
    match &config.initiators {
        InitiatorSpec::All => live.iter().for_each(|&p| chosen[p as usize] = true),
        InitiatorSpec::Weakest => chosen[*live.iter().min_by_key(strength).expect("some node is up") as usize] = true,
        InitiatorSpec::Strongest => chosen[*live.iter().max_by_key(strength).expect("some node is up") as usize] = true,
        InitiatorSpec::Random(k) => {
            if *k == 0 || *k > live.len() {
                return Err(ConfigError::RandomInitiators { k: *k, live: live.len(), all_up: live.len() == n });
            }
            for i in index::sample(&mut rng(config.seed, Stream::Initiators), live.len(), *k) {
                chosen[live[i] as usize] = true;
            }
        }
        InitiatorSpec::Neighbors(id) => {
            let p = positions.find(*id, "the node whose neighbours initiate,")?;
            for port in 0..graph.degree(p) {
                let q = graph.far_end(p, port).node;
                if q != p && !down_at_start.contains(&q) {
                    chosen[q as usize] = true;
                }
            }
            if !chosen.contains(&true) {
                return Err(ConfigError::NoLiveNeighbor(*id));
            }
        }
        InitiatorSpec::List(list) => {
            for &id in list {
                let p = positions.find(id, "initiator")?;
                if down_at_start.contains(&p) {
                    return Err(ConfigError::InitiatorCrashed(id));
                }
                if std::mem::replace(&mut chosen[p as usize], true) {
                    return Err(ConfigError::InitiatorTwice(id));
                }
            }
        }
    }
    Ok(chosen)
}

/// Builds the process at position `i` of `scenario`: what a driver does for everyone at the start, and for one
/// process at its recovery. The simulator and the model checker both build their processes with it, so both hand
/// processes the same [`Setup`].
pub fn build_process<A: Algorithm>(algorithm: &A, scenario: &Scenario, i: u32) -> A::Process {
    let graph = &scenario.graph;
    let neighbors = neighbors(scenario, i);
    let ring_order = graph.ring_order(i);
    algorithm.build(&Setup {
        id: scenario.ids[i as usize],
        rank: scenario.ranks[i as usize],
        neighbors: &neighbors,
        ring: graph.ring_ports(i),
        ring_order: &ring_order,
        shape: graph.shape(),
        delay_bound: scenario.delay_bound,
        diameter: scenario.known_diameter(),
        suspected: &[],
    })
}

/// The links of the process at position `i` of `scenario`, port by port: who is at the far end of each (what a
/// process is built with, and what its [view](elect_core::Process::view) names ports by).
pub fn neighbors(scenario: &Scenario, i: u32) -> Vec<Neighbor> {
    let graph = &scenario.graph;
    (0..graph.degree(i))
        .map(|p| {
            let End { node, .. } = graph.far_end(i, p);
            Neighbor { port: Port(p), id: scenario.ids[node as usize], rank: scenario.ranks[node as usize] }
        })
        .collect()
}

/// The ids of a run in a few words, for error messages.
fn describe(ids: &[NodeId]) -> String {
    let contiguous = ids.iter().map(|id| id.0 as usize).collect::<BTreeSet<_>>() == (1..=ids.len()).collect();
    match ids.len() {
        _ if contiguous => format!("ids are 1..={}", ids.len()),
        0..=16 => format!("ids are {}", ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")),
        n => format!("{n} ids"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Delay;
    use crate::faults::NodeAt;

    fn build(f: impl FnOnce(&mut SimConfig)) -> Result<Scenario, String> {
        let mut cfg = SimConfig::new("chang-roberts", 8);
        f(&mut cfg);
        Scenario::build(&cfg).map_err(|e| e.to_string())
    }

    #[test]
    fn ids_are_arranged_by_position() {
        assert_eq!(build(|_| {}).unwrap().ids[0], NodeId(1));
        assert_eq!(build(|c| c.ids = Ids::Descending).unwrap().ids[0], NodeId(8));
        let random = build(|c| c.ids = Ids::Random).unwrap().ids;
        let mut sorted = random.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=8).map(NodeId).collect::<Vec<_>>());
        assert_eq!(random, build(|c| c.ids = Ids::Random).unwrap().ids, "same seed, same arrangement");
    }

    #[test]
    fn initiators_are_named_by_id() {
        let s = build(|c| {
            c.ids = Ids::List(vec![NodeId(10), NodeId(20), NodeId(30)]);
            c.nodes = 3;
            c.initiators = InitiatorSpec::List(vec![NodeId(30)]);
        })
        .unwrap();
        assert_eq!(s.initiators, [false, false, true]);
        let weakest = build(|c| {
            c.algorithm = "bully".into();
            c.crashes.push(NodeAt { id: NodeId(1), at: 0 });
            c.initiators = InitiatorSpec::Weakest;
        })
        .unwrap();
        assert_eq!(
            weakest.initiators.iter().position(|&b| b),
            Some(1),
            "node 1 is down at 0, so node 2 is the weakest"
        );
        assert_eq!(
            build(|c| c.initiators = InitiatorSpec::Random(3)).unwrap().initiators.iter().filter(|&&b| b).count(),
            3
        );
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        type Edit = Box<dyn FnOnce(&mut SimConfig)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|c| c.nodes = 0), "--nodes must be at least 1"),
            (Box::new(|c| c.algorithm = "paxos".into()), "unknown algorithm 'paxos'"),
            (
                Box::new(|c| c.topology = Some(TopologyKind::Star)),
                "chang-roberts runs on a ring topology, not on a star",
            ),
            (Box::new(|c| c.ids = Ids::List(vec![NodeId(1), NodeId(2)])), "--ids lists 2 ids but --nodes is 8"),
            (
                Box::new(|c| {
                    c.nodes = 3;
                    c.ids = Ids::List(vec![NodeId(1), NodeId(2), NodeId(1)]);
                }),
                "duplicate id 1 in --ids",
            ),
            (
                Box::new(|c| c.initiators = InitiatorSpec::List(vec![NodeId(9)])),
                "initiator 9 is not a node (ids are 1..=8)",
            ),
            (
                Box::new(|c| c.initiators = InitiatorSpec::List(vec![NodeId(2), NodeId(2)])),
                "initiator 2 is listed twice",
            ),
            (Box::new(|c| c.initiators = InitiatorSpec::Random(9)), "random:9 needs 1 <= K <= 8"),
            (
                Box::new(|c| {
                    c.crashes.push(NodeAt { id: NodeId(1), at: 0 });
                    c.initiators = InitiatorSpec::Random(8);
                }),
                "random:8 needs 1 <= K <= 7 nodes up at time 0",
            ),
            (
                Box::new(|c| {
                    c.crashes.push(NodeAt { id: NodeId(2), at: 0 });
                    c.initiators = InitiatorSpec::List(vec![NodeId(2)]);
                }),
                "initiator 2 is crashed at time 0",
            ),
            (
                Box::new(|c| c.crashes = (1..=8).map(|id| NodeAt { id: NodeId(id), at: 0 }).collect()),
                "every node is crashed at time 0",
            ),
            (Box::new(|c| c.crashes.push(NodeAt { id: NodeId(0), at: 5 })), "crashed node 0 is not a node"),
            (
                Box::new(|c| {
                    c.algorithm = "bully".into();
                    c.delay = Delay::Exp(1000);
                }),
                "bully relies on a delay bound T",
            ),
            (
                Box::new(|c| {
                    c.algorithm = "bully".into();
                    c.nodes = 5000;
                }),
                "complete graphs of up to 4096 nodes",
            ),
        ];
        for (f, expected) in cases {
            let e = build(f).unwrap_err();
            assert!(e.contains(expected), "{e:?} does not contain {expected:?}");
        }
    }
}
