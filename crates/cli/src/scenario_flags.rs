//! The flags that describe a scenario, declared once for `elect sim`, `elect check` and the requests of `elect
//! serve` (which parse with those commands' own definitions): the algorithm and its parameters, the processes,
//! their ids and initiators, delays, faults at given times, the leader monitor and a synchronizer. What only one
//! command has (the simulator's losses and mobility, the checker's nondeterministic crashes) stays with it.

use clap::Args;
use elect_algos::Params;
use elect_core::{Duration, InT, Prefer};
use elect_scenario::{
    Delay, Ids, InitiatorSpec, LinkDown, Monitor, NodeAt, Partition, SimConfig, TopologyKind, Transfer, parse_time,
};

use crate::flag_text;
use crate::outcome::BadInput;

#[derive(Args, Clone, Debug, serde::Deserialize)]
pub(crate) struct ScenarioArgs {
    /// The algorithm (see `elect list`).
    #[arg(long, short, required_unless_present = "scenario")]
    pub(crate) algorithm: Option<String>,
    /// The number of processes (optional when --ids lists them or the topology fixes it). The checker's states
    /// grow exponentially with it: keep it small there.
    #[arg(long, short, allow_negative_numbers = true)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) nodes: Option<usize>,
    /// ring, complete, line, star, grid:WxH, torus:WxH, random-regular:K, chordal:K, tree, geometric:R or
    /// file:PATH (an edge list, one 'U V' per line, vertices from 0) [default: the algorithm's own].
    #[arg(long, short)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) topology: Option<TopologyKind>,
    /// ascending (position i gets id i+1), descending, random (drawn from --seed), or a list like 3,1,2.
    #[arg(long, default_value = "ascending")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) ids: Ids,
    /// Who starts: all, random:K, weakest, strongest, neighbors:ID (the neighbours of ID), or ids like 1,5
    /// [default: all; for timestamp-flooding, the neighbours of a process crashed at time 0].
    #[arg(long)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) initiators: Option<InitiatorSpec>,
    /// The root seed of every random choice (random ids and initiators, delays, losses) [default: 1, or the
    /// scenario's].
    #[arg(long, allow_negative_numbers = true)]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) seed: Option<u64>,
    /// Message delay: a constant (time units), uniform:A..B, or exp:MEAN. `elect check --timed` lets each message
    /// take the shortest or the longest delay of a constant or uniform one.
    #[arg(long, default_value = "1")]
    #[serde(deserialize_with = "flag_text::text")]
    pub(crate) delay: Delay,
    /// The delay bound T timeout-based algorithms are told (default: the delay model's); smaller than the real
    /// delays, it makes their failure detector inaccurate.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    #[serde(deserialize_with = "flag_text::maybe_time")]
    pub(crate) delay_bound: Option<u64>,
    /// Crash process ID at time T (repeatable): 8@0 means down from the start. `elect check` needs --timed.
    #[arg(long, value_name = "ID@T", allow_hyphen_values = true)]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) crash: Vec<NodeAt>,
    /// Restart process ID at time T from what it persisted (repeatable). `elect check` needs --timed.
    #[arg(long, value_name = "ID@T", allow_hyphen_values = true)]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) recover: Vec<NodeAt>,
    /// Tell process ID to give up leadership at time T (repeatable): with --monitor, a leading member resigns,
    /// tells the others and sits out while another is elected. `elect check` needs --timed.
    #[arg(long, value_name = "ID@T")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) resign: Vec<NodeAt>,
    /// Tell process FROM to hand leadership over to process TO at time T (repeatable): with --monitor, a leading
    /// member tells the others, resigns, and stands aside with the members ranked above TO while TO takes over.
    /// Such a run does not judge safety (the strongest live process leads). `elect check` needs --timed.
    #[arg(long, value_name = "FROM>TO@T")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) transfer: Vec<Transfer>,
    /// With --monitor: ask every live member at time T to make member ID a voter (repeatable); the leader makes the
    /// change, one at a time, as `elect voters --add` asks a cluster's. Start with fewer voters than members with
    /// --param voters=1,2,3. Such a run does not judge safety (the strongest live process leads). `elect check`
    /// needs --timed.
    #[arg(long, value_name = "ID@T")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) add_voter: Vec<NodeAt>,
    /// With --monitor: ask every live member at time T to stop member ID voting (repeatable), as `elect voters
    /// --remove` does. `elect check` needs --timed.
    #[arg(long, value_name = "ID@T")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) remove_voter: Vec<NodeAt>,
    /// Take a link down: A-B@T (both ways) or A>B@T (one way), healing at U with @T..U (repeatable). `elect
    /// check` needs --timed.
    #[arg(long, value_name = "A-B@T..U")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) link_down: Vec<LinkDown>,
    /// Partition: 1,2|3,4@T..U (groups cannot talk) or 1,2>3,4@T..U (the first cannot reach the second)
    /// (repeatable). `elect check` needs --timed.
    #[arg(long, value_name = "GROUPS@T..U")]
    #[serde(deserialize_with = "flag_text::each")]
    pub(crate) partition: Vec<Partition>,
    /// Which end of the order wins: highest or lowest.
    #[arg(long, value_parser = parse_prefer, default_value = "highest")]
    #[serde(deserialize_with = "prefer")]
    pub(crate) prefer: Prefer,
    /// An algorithm parameter KEY=VALUE (repeatable; see `elect list`). With --monitor, `monitor-bug=same-epoch`
    /// plants a flaw in the member (a new leadership grant reuses the epoch it replaces), for the checker to find.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// Run the process a member of `elect node` runs: the leader monitor around a single-leader algorithm (the
    /// leader sends heartbeats; a process that stops hearing them starts a new election in a new epoch), and the
    /// member around it (fencing epochs, claims, announcements, incarnations). Members form a full mesh: use a
    /// complete graph (ring algorithms run on its logical ring).
    #[arg(long, conflicts_with = "bare_monitor")]
    pub(crate) monitor: bool,
    /// The leader monitor alone, without the member around it, on any topology: re-election after a leader
    /// failure, for any single-leader algorithm.
    #[arg(long)]
    pub(crate) bare_monitor: bool,
    /// With --monitor: the lease mode, the same as --param lease=on. A member leads only while a majority of the
    /// members backs it, so no two members ever say they lead at one instant (the one-leader property, which the
    /// run then judges); see the lease guide of the book.
    #[arg(long)]
    pub(crate) lease: bool,
    /// With --monitor or --bare-monitor: a heartbeat every K times the delay bound T [default: 2, or the scenario
    /// file's].
    #[arg(long, value_name = "K")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) heartbeat: Option<InT>,
    /// Run an algorithm written in rounds (floodmax, opt-floodmax, sync-lcr) on a synchronizer instead of in
    /// lock-step: abd (pulses 2d apart, d the delay bound), alpha (acks and safe on every link), beta[@ROOT] (a
    /// spanning tree from ROOT, by default the smallest initiator), gamma[:K][@ROOT] (clusters of at least K
    /// processes, by default K = ceil(sqrt n); beta inside, alpha between them).
    #[arg(long, value_name = "NAME")]
    #[serde(deserialize_with = "flag_text::maybe")]
    pub(crate) synchronizer: Option<elect_algos::synchronizers::Spec>,
    /// Also judge PROPERTY, which the algorithm does not promise, to see where it breaks it (repeatable; see
    /// docs/reference/properties.md). For example, one-leader with --monitor: a member outside the lease mode
    /// leads on beside the majority's new leader while it is cut off.
    #[arg(long, value_name = "PROPERTY", value_parser = parse_property)]
    #[serde(deserialize_with = "properties")]
    pub(crate) judge: Vec<elect_core::Property>,
    /// Judge these properties and no others (comma-separated or repeated), whether the algorithm promises them or
    /// not: under a fault that never heals, agreement among every live process cannot hold, while majority-leader
    /// (a majority that can talk follows one leader among it) can.
    #[arg(long, value_name = "PROPERTY", value_parser = parse_property, value_delimiter = ',')]
    #[serde(deserialize_with = "properties")]
    pub(crate) only: Vec<elect_core::Property>,
}

/// The flags of [`ScenarioArgs`] a scenario file describes instead (all but --seed), by id.
pub(crate) const DESCRIBED_BY_A_FILE: [&str; 22] = [
    "algorithm",
    "nodes",
    "topology",
    "ids",
    "initiators",
    "delay",
    "delay_bound",
    "crash",
    "recover",
    "resign",
    "transfer",
    "add_voter",
    "remove_voter",
    "link_down",
    "partition",
    "prefer",
    "params",
    "lease",
    "monitor",
    "bare_monitor",
    "heartbeat",
    "synchronizer",
];

fn prefer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Prefer, D::Error> {
    flag_text::one_by(d, parse_prefer)
}

fn properties<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<elect_core::Property>, D::Error> {
    flag_text::each_by(d, parse_property)
}

fn parse_property(s: &str) -> Result<elect_core::Property, String> {
    elect_core::Property::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = elect_core::Property::all().iter().map(|p| p.name()).collect();
        format!("'{s}' is no property; the properties are {}", names.join(", "))
    })
}

fn parse_prefer(s: &str) -> Result<Prefer, String> {
    match s {
        "highest" => Ok(Prefer::Highest),
        "lowest" => Ok(Prefer::Lowest),
        _ => Err(format!("'{s}' is neither highest nor lowest")),
    }
}

impl ScenarioArgs {
    /// The algorithm parameters given, `KEY=VALUE` each: --param's, then `lease=on` for --lease.
    pub(crate) fn param_pairs(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(String::as_str).chain(self.lease.then_some("lease=on"))
    }

    /// The run these flags describe, with the simulator's defaults for everything they do not.
    pub(crate) fn config(&self) -> Result<SimConfig, BadInput> {
        let algorithm = self.algorithm.as_deref().unwrap_or_default();
        // An unknown name is the first thing to say, before what else the flags lack (a program is started later,
        // by the driver that runs it).
        if self.algorithm.is_some() && !elect_algos::program::is_program(algorithm) {
            elect_algos::registry::lookup(algorithm).map_err(|e| BadInput(e.to_string()))?;
        }
        let fixed = self.topology.as_ref().and_then(TopologyKind::fixed_size);
        let nodes = match (self.nodes, &self.ids, fixed) {
            (Some(n), _, _) => n,
            (None, Ids::List(ids), _) => ids.len(),
            (None, _, Some(n)) => n,
            (None, _, None) => {
                return Err(BadInput(
                    "--nodes is required unless --ids lists the ids or the topology fixes the size".into(),
                ));
            }
        };
        let mut cfg = SimConfig::new(algorithm, nodes);
        cfg.params = Params::parse(self.param_pairs()).map_err(|e| BadInput(e.to_string()))?;
        cfg.topology = self.topology.clone();
        cfg.ids = self.ids.clone();
        cfg.initiators = match &self.initiators {
            Some(spec) => spec.clone(),
            None => default_initiators(algorithm, &self.crash),
        };
        cfg.seed = self.seed.unwrap_or(1);
        cfg.delay = self.delay;
        cfg.delay_bound = self.delay_bound.map(Duration::from_ticks);
        cfg.crashes = self.crash.clone();
        cfg.recoveries = self.recover.clone();
        cfg.resigns = self.resign.clone();
        cfg.transfers = self.transfer.clone();
        cfg.add_voters = self.add_voter.clone();
        cfg.remove_voters = self.remove_voter.clone();
        cfg.link_downs = self.link_down.clone();
        cfg.partitions = self.partition.clone();
        cfg.prefer = self.prefer;
        cfg.monitor = monitor(self.monitor, self.bare_monitor, self.heartbeat)?;
        cfg.synchronizer = self.synchronizer;
        cfg.judge.clone_from(&self.judge);
        cfg.only.clone_from(&self.only);
        Ok(cfg)
    }
}

/// Who initiates when --initiators is not given: everybody, except for failure-driven re-election
/// (timestamp-flooding), where the neighbours of a process crashed from the start notice it and initiate.
fn default_initiators(algorithm: &str, crashes: &[NodeAt]) -> InitiatorSpec {
    let natural = elect_algos::lookup(algorithm).map(|info| info.showcase.initiators);
    match crashes.iter().find(|c| c.at == 0) {
        Some(old) if natural == Ok(elect_algos::Initiators::NeighborsOfCrashed) => InitiatorSpec::Neighbors(old.id),
        _ => InitiatorSpec::All,
    }
}

/// The leader monitor (`SimConfig::monitor`) that --monitor, --bare-monitor and --heartbeat ask for: a heartbeat
/// every 2 T unless --heartbeat says, and none without the monitor, which --heartbeat needs.
fn monitor(monitor: bool, bare: bool, heartbeat: Option<InT>) -> Result<Option<Monitor>, BadInput> {
    if heartbeat.is_some() && !(monitor || bare) {
        return Err(BadInput("--heartbeat times the leader monitor: it needs --monitor or --bare-monitor".into()));
    }
    Ok((monitor || bare).then_some(Monitor { heartbeat: heartbeat.unwrap_or(Monitor::DEFAULT_HEARTBEAT), bare }))
}

#[cfg(test)]
mod tests {
    use clap::{Args, Command, FromArgMatches};

    use crate::check::CheckArgs;
    use crate::sim::SimArgs;

    fn parse<T: Args + FromArgMatches>(argv: &[&str]) -> T {
        let command = T::augment_args(Command::new("elect").no_binary_name(true));
        T::from_arg_matches(&command.try_get_matches_from(argv).unwrap()).unwrap()
    }

    #[test]
    fn sim_and_check_make_one_run_of_the_same_scenario_flags() {
        let argv = [
            "-a",
            "bully",
            "--ids",
            "4,2,3,1",
            "--initiators",
            "1",
            "--seed",
            "9",
            "--delay",
            "uniform:1..2",
            "--delay-bound",
            "3",
            "--crash",
            "4@2",
            "--recover",
            "4@5",
            "--resign",
            "3@7",
            "--transfer",
            "3>1@8",
            "--link-down",
            "1-2@1..3",
            "--partition",
            "1,2|3,4@4..6",
            "--prefer",
            "lowest",
            "--monitor",
            "--heartbeat",
            "3",
        ];
        let (sim, _) = parse::<SimArgs>(&argv).config().unwrap();
        let check = parse::<CheckArgs>(&argv).config().unwrap().sim;
        assert_eq!(sim, check);
        assert_eq!(
            (sim.nodes, sim.seed, sim.monitor, sim.crashes.len()),
            (4, 9, Some(elect_scenario::Monitor::member(elect_core::InT(3))), 1),
            "{sim:?}"
        );
        assert_eq!(sim.transfers.len(), 1, "{sim:?}");
    }
}
