//! The plan of a run: the request, every check that can be made before a process is spawned, and what each
//! member is started with.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use elect_core::{InT, NodeId};
use elect_net::NodeConfig;
use serde::Serialize;

use crate::BadRequest;

/// Every member's heartbeat period: `2T`, with `T` half the heartbeat `elect cluster --heartbeat` asks for.
const BEATS: InT = InT(2);

/// The most members a loopback cluster may have.
const MAX_NODES: u32 = 64;
/// The most busy threads `--cpu-load` starts.
const MAX_CPU_LOAD: usize = 256;

/// What `elect cluster` is asked to run, one field per flag, unchecked: [`super::run`] checks it before a process
/// is spawned. Each field is the flag of its name; `elect cluster --help` says what each does.
#[derive(Clone, Debug)]
pub struct Request {
    /// `--nodes`: how many members, with ids 1 to N.
    pub nodes: u32,
    /// `--algorithm`: the members' election algorithm.
    pub algorithm: String,
    /// `--param KEY=VALUE`: algorithm parameters, given to every member.
    pub params: Vec<String>,
    /// `--heartbeat`: the leader's heartbeat period, in milliseconds (`T` is half of it).
    pub heartbeat_ms: u64,
    /// `--kill-leader`: rounds of SIGKILL and restart (the default, with 10 rounds, when no other fault is asked).
    pub kill_leader: Option<u32>,
    /// `--pause-leader`: rounds of SIGSTOP and SIGCONT.
    pub pause_leader: Option<u32>,
    /// `--nemesis`: the kinds of fault that take turns, in network namespaces.
    pub nemesis: Vec<String>,
    /// `--nemesis-rounds`: how many faults the nemesis injects (default 10).
    pub nemesis_rounds: Option<u32>,
    /// `--nemesis-hold`: how long each fault holds before it is healed, in milliseconds.
    pub nemesis_hold: u64,
    /// `--cpu-load`: busy threads while measuring.
    pub cpu_load: usize,
    /// `--round-timeout`: a round that does not end within this many milliseconds fails.
    pub round_timeout: u64,
    /// `--seed`: every member's seed.
    pub seed: u64,
    /// `--keep-data`: where to keep the members' data directories and logs instead of a temporary directory.
    pub keep_data: Option<PathBuf>,
    /// `--key-file`: the file every member derives the cluster key from.
    pub key_file: Option<PathBuf>,
    /// `--lease`: every member in the lease mode.
    pub lease: bool,
    /// `--voters`: the members 1 to K start as voters, the others as learners (default: every member votes).
    pub voters: Option<u32>,
    /// `--change-voters`: in every round, while the fault holds, grow the voters by one member (up to every
    /// member) or shrink them by one (down to `--voters`), taking turns, through `elect voters`.
    pub change_voters: bool,
}

/// What is done to the leader in each round.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    /// SIGKILL, then a restart with the same data directory.
    Kill,
    /// SIGSTOP, then SIGCONT.
    Pause,
    /// The nemesis's faults, on a network of namespaces.
    Nemesis,
}

/// One kind of fault the nemesis injects.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Nemesis {
    PartitionLeader,
    Split,
    OneWay,
    /// The leader hears nobody (its input is dropped) while everybody hears it.
    DeafLeader,
    /// One follower cannot hear the leader (its input from the leader is dropped), while everybody else, the leader
    /// included, hears everybody.
    Deaf,
    /// Each packet between members dropped with this probability, in thousandths.
    Loss(u32),
    Pause,
    Kill,
    /// One of the others, drawn from the run's seed.
    Mixed,
}

impl Nemesis {
    /// The kinds `mixed` draws from.
    pub(super) const MIXED: [Self; 8] = [
        Self::PartitionLeader,
        Self::Split,
        Self::OneWay,
        Self::DeafLeader,
        Self::Deaf,
        Self::Loss(200),
        Self::Pause,
        Self::Kill,
    ];

    fn parse(s: &str) -> Result<Self, BadRequest> {
        Ok(match s.trim() {
            "partition-leader" => Self::PartitionLeader,
            "split" => Self::Split,
            "one-way" => Self::OneWay,
            "deaf-leader" => Self::DeafLeader,
            "deaf" => Self::Deaf,
            "pause" => Self::Pause,
            "kill" => Self::Kill,
            "mixed" => Self::Mixed,
            other => match other.strip_prefix("loss:") {
                Some(p) => {
                    let p: f64 = p.parse().map_err(|_| BadRequest(format!("--nemesis {other}: P must be a number")))?;
                    if !(p > 0.0 && p <= 1.0) {
                        return Err(BadRequest(format!("--nemesis {other}: P must be above 0 and at most 1")));
                    }
                    Self::Loss((p * 1000.0).round().max(1.0) as u32)
                }
                None => {
                    return Err(BadRequest(format!(
                        "unknown --nemesis kind `{other}` (partition-leader, split, one-way, deaf-leader, deaf, loss:P, pause, kill, mixed)"
                    )));
                }
            },
        })
    }

    /// The name users give it.
    pub(super) fn name(self) -> String {
        match self {
            Self::PartitionLeader => "partition-leader".into(),
            Self::Split => "split".into(),
            Self::OneWay => "one-way".into(),
            Self::DeafLeader => "deaf-leader".into(),
            Self::Deaf => "deaf".into(),
            Self::Loss(permille) => format!("loss:{}", f64::from(permille) / 1000.0),
            Self::Pause => "pause".into(),
            Self::Kill => "kill".into(),
            Self::Mixed => "mixed".into(),
        }
    }
}

/// The validated run.
pub(super) struct Plan {
    pub(super) nodes: u32,
    pub(super) algorithm: &'static str,
    params: Vec<String>,
    pub(super) heartbeat_ms: u64,
    /// `T`, in milliseconds.
    pub(super) delay_bound_ms: u64,
    pub(super) fault: Fault,
    pub(super) rounds: u32,
    pub(super) round_timeout: Duration,
    /// How long nothing may change before the cluster counts as stable.
    pub(super) quiet: Duration,
    pub(super) seed: u64,
    /// The nemesis's kinds, taking turns, when it runs.
    pub(super) nemesis: Vec<Nemesis>,
    /// How long each of its faults holds.
    pub(super) hold: Duration,
    /// Busy threads while measuring.
    pub(super) cpu_load: usize,
    cluster: String,
    /// Every member's `--key-file`.
    key_file: Option<PathBuf>,
    /// In the lease mode: the lease length, in milliseconds.
    pub(super) lease_ms: Option<f64>,
    /// The members 1 to this start as voters; the others as learners.
    pub(super) voters: u32,
    /// Whether every round changes the voters too.
    pub(super) change_voters: bool,
}

/// Every check that can be made before a process is spawned.
pub(super) fn plan(args: &Request) -> Result<Plan, BadRequest> {
    check_sizes(args)?;
    #[cfg(not(unix))]
    if args.pause_leader.is_some() {
        return Err(BadRequest("--pause-leader needs SIGSTOP and SIGCONT, which this platform does not have".into()));
    }
    let delay_bound_ms = args.heartbeat_ms.div_ceil(2);
    // The configuration of member 1, with the others at placeholder addresses: the runtime's own checks.
    let mut config = NodeConfig::new(NodeId(1), loopback(1), &args.algorithm, "unused");
    for id in 2..=args.nodes {
        config.peers.insert(NodeId(id), loopback(id as u16));
    }
    config.params =
        elect_algos::Params::parse(args.params.iter().map(String::as_str)).map_err(|e| BadRequest(e.to_string()))?;
    config.delay_bound = Duration::from_millis(delay_bound_ms);
    config.heartbeat = BEATS;
    config.lease = args.lease.then(|| elect_algos::member::Lease::for_heartbeat(config.heartbeat));
    let voters = check_voters(args)?;
    if voters < args.nodes {
        config.voters = Some((1..=voters).map(NodeId).collect());
    }
    let info = config.validate().map_err(|e| match e {
        elect_net::ConfigError::DelayBound(_) => {
            BadRequest(format!("--heartbeat {} ms is out of range (2 ms to 120 s)", args.heartbeat_ms))
        }
        e => BadRequest(e.to_string()),
    })?;
    elect_algos::dispatch(info.name, &config.params, CheckMembers(config.members()))
        .map_err(|e| BadRequest(e.to_string()))?
        .map_err(|e| BadRequest(e.to_string()))?;
    if let Some(path) = &args.key_file {
        elect_net::ClusterKey::from_file(path).map_err(|e| BadRequest(e.to_string()))?;
    }
    let nemesis = args.nemesis.iter().map(|k| Nemesis::parse(k)).collect::<Result<Vec<_>, _>>()?;
    if args.nemesis_rounds == Some(0) || args.kill_leader == Some(0) || args.pause_leader == Some(0) {
        return Err(BadRequest("the number of rounds must be at least 1".into()));
    }
    if !nemesis.is_empty() && args.nemesis_hold == 0 {
        return Err(BadRequest("--nemesis-hold must be at least 1 ms".into()));
    }
    if args.cpu_load > MAX_CPU_LOAD {
        return Err(BadRequest(format!("--cpu-load must be at most {MAX_CPU_LOAD}, not {}", args.cpu_load)));
    }
    let (fault, rounds) = match (args.kill_leader, args.pause_leader) {
        _ if !nemesis.is_empty() => (Fault::Nemesis, args.nemesis_rounds.unwrap_or(10)),
        (_, Some(rounds)) => (Fault::Pause, rounds),
        (Some(rounds), None) => (Fault::Kill, rounds),
        (None, None) => (Fault::Kill, 10),
    };
    #[cfg(not(target_os = "linux"))]
    if !nemesis.is_empty() {
        return Err(BadRequest("--nemesis needs Linux network namespaces".into()));
    }
    if !nemesis.is_empty() {
        super::netns::check_rights()?;
    }
    Ok(Plan {
        nodes: args.nodes,
        algorithm: info.name,
        params: args.params.clone(),
        heartbeat_ms: BEATS.count() * delay_bound_ms,
        delay_bound_ms,
        fault,
        rounds,
        round_timeout: Duration::from_millis(args.round_timeout),
        quiet: Duration::from_millis((20 * delay_bound_ms).max(100)),
        seed: args.seed,
        nemesis,
        hold: Duration::from_millis(args.nemesis_hold),
        cpu_load: args.cpu_load,
        cluster: format!("elect-cluster-{}", std::process::id()),
        key_file: args.key_file.clone(),
        lease_ms: config.lease.map(|lease| (lease.length.count() * delay_bound_ms) as f64),
        voters,
        change_voters: args.change_voters,
    })
}

/// The number of voters the members start with, in its range.
fn check_voters(args: &Request) -> Result<u32, BadRequest> {
    let voters = args.voters.unwrap_or(args.nodes);
    if !(1..=args.nodes).contains(&voters) {
        return Err(BadRequest(format!("--voters must be between 1 and --nodes ({}), not {voters}", args.nodes)));
    }
    if args.lease && voters < 3 {
        return Err(BadRequest(format!(
            "--lease needs at least 3 voters, not {voters}: a leader needs a majority of them, and of 2 the one \
             left after a fault is no majority"
        )));
    }
    if args.change_voters {
        if voters == args.nodes {
            return Err(BadRequest(format!(
                "--change-voters grows the voters from --voters K up to every member and back: give --voters \
                 below --nodes ({})",
                args.nodes
            )));
        }
        if voters < 3 {
            return Err(BadRequest(format!(
                "--change-voters needs --voters of at least 3, not {voters}: a change made while a member is down \
                 needs a majority of the new voters that answers"
            )));
        }
    }
    Ok(voters)
}

/// The members' number and the times, each in its range.
fn check_sizes(args: &Request) -> Result<(), BadRequest> {
    if !(2..=MAX_NODES).contains(&args.nodes) {
        return Err(BadRequest(format!("--nodes must be between 2 and {MAX_NODES}, not {}", args.nodes)));
    }
    if args.lease && args.nodes < 3 {
        return Err(BadRequest(
            "--lease needs at least 3 members: a leader needs a majority, and of 2 members the one left after a \
             fault is no majority"
                .into(),
        ));
    }
    if args.heartbeat_ms == 0 {
        return Err(BadRequest("--heartbeat must be at least 1 ms".into()));
    }
    if args.round_timeout == 0 {
        return Err(BadRequest("--round-timeout must be at least 1 ms".into()));
    }
    Ok(())
}

impl Plan {
    /// The `elect node` command (`cmd`: the executable, or a command that runs it) that runs member `id` at
    /// `addr` with its state in `dir`, beside `peers` (`ID=ADDR`), serving HTTP at `http` with the token in the
    /// file given, if asked.
    pub(super) fn member_command(
        &self,
        mut cmd: Command,
        id: u32,
        addr: SocketAddr,
        peers: &[String],
        dir: &Path,
        http: Option<(SocketAddr, &Path)>,
    ) -> Command {
        cmd.arg("node").args(["--id", &id.to_string(), "--listen", &addr.to_string()]);
        for peer in peers {
            cmd.args(["--peer", peer]);
        }
        cmd.args(["--algorithm", self.algorithm]);
        for param in &self.params {
            cmd.args(["--param", param]);
        }
        cmd.arg("--data-dir").arg(dir);
        cmd.args(["--cluster", &self.cluster, "--seed", &self.seed.to_string()]);
        cmd.args(["--delay-bound-ms", &self.delay_bound_ms.to_string(), "--heartbeat", &BEATS.count().to_string()]);
        if let Some(key) = &self.key_file {
            cmd.arg("--key-file").arg(key);
        }
        if self.lease_ms.is_some() {
            cmd.arg("--lease");
        }
        if self.voters < self.nodes {
            let voters: Vec<String> = (1..=self.voters).map(|v| v.to_string()).collect();
            cmd.args(["--voters", &voters.join(",")]);
        }
        if let Some((addr, token)) = http {
            cmd.args(["--http", &addr.to_string()]).arg("--http-token-file").arg(token);
        }
        cmd
    }
}

pub(super) fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Checks an algorithm's parameters against the member ids.
struct CheckMembers(Vec<NodeId>);

impl elect_algos::Driver for CheckMembers {
    type Output = Result<(), elect_algos::ParamError>;

    fn drive<A: elect_algos::Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.0)
    }
}
