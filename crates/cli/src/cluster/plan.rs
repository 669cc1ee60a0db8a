//! The plan of a run: the arguments, every check that can be made before a process is spawned, and what each
//! member is started with.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clap::Args;
use elect_core::NodeId;
use elect_net::NodeConfig;
use serde::Serialize;

use crate::BadInput;

/// The most members a loopback cluster may have.
const MAX_NODES: u32 = 64;

#[derive(Args)]
pub(crate) struct ClusterArgs {
    /// How many members (2 to 64), with ids 1 to N.
    #[arg(long, short)]
    nodes: u32,
    /// The election algorithm: bully, garcia-molina, invitation, or a ring algorithm.
    #[arg(long, short)]
    algorithm: String,
    /// An algorithm parameter, given to every member (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// The leader's heartbeat period, in milliseconds. Members run with `--delay-bound-ms T --heartbeat 2`, where
    /// T = MS/2 (an odd MS is rounded up to the next even number): the leader sends a heartbeat every 2·T and a
    /// follower suspects it after 4·T (two periods) without one. The default, 10 ms, gives T = 5 ms.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    heartbeat: u64,
    /// Kill the leader with SIGKILL this many times, restarting it each time with its data directory (the
    /// default, with 10 rounds, when neither this nor --pause-leader is given).
    #[arg(long, value_name = "ROUNDS", conflicts_with = "pause_leader")]
    kill_leader: Option<u32>,
    /// Pause the leader with SIGSTOP this many times, continuing it (SIGCONT) once the others agree on another.
    #[arg(long, value_name = "ROUNDS")]
    pause_leader: Option<u32>,
    /// A round that does not end within this many milliseconds fails (the run goes on, and exits with 1).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    round_timeout: u64,
    /// The seed of every member's timer jitter (`elect node --seed`), so runs repeat as far as real time allows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the members' data directories and logs in DIR (DIR/ID and DIR/ID.log) instead of a temporary
    /// directory removed at the end. Existing state files there are reused.
    #[arg(long, value_name = "DIR")]
    pub(super) keep_data: Option<PathBuf>,
    /// Authenticate the members' packets with the cluster key derived from this file (`elect node --key-file`).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Print one JSON object (the figures and the raw samples) instead of the table.
    #[arg(long)]
    pub(super) json: bool,
}

/// What is done to the leader in each round.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Fault {
    /// SIGKILL, then a restart with the same data directory.
    Kill,
    /// SIGSTOP, then SIGCONT.
    Pause,
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
    cluster: String,
    /// Every member's `--key-file`.
    key_file: Option<PathBuf>,
}

/// Every check that can be made before a process is spawned.
pub(super) fn plan(args: &ClusterArgs) -> Result<Plan, BadInput> {
    if !(2..=MAX_NODES).contains(&args.nodes) {
        return Err(BadInput(format!("--nodes must be between 2 and {MAX_NODES}, not {}", args.nodes)));
    }
    if args.heartbeat == 0 {
        return Err(BadInput("--heartbeat must be at least 1 ms".into()));
    }
    if args.round_timeout == 0 {
        return Err(BadInput("--round-timeout must be at least 1 ms".into()));
    }
    #[cfg(not(unix))]
    if args.pause_leader.is_some() {
        return Err(BadInput("--pause-leader needs SIGSTOP and SIGCONT, which this platform does not have".into()));
    }
    let delay_bound_ms = args.heartbeat.div_ceil(2);
    // The configuration of member 1, with the others at placeholder addresses: the runtime's own checks.
    let mut config = NodeConfig::new(NodeId(1), loopback(1), &args.algorithm, "unused");
    for id in 2..=args.nodes {
        config.peers.insert(NodeId(id), loopback(id as u16));
    }
    config.params =
        elect_algos::Params::parse(args.params.iter().map(String::as_str)).map_err(|e| BadInput(e.to_string()))?;
    config.delay_bound = Duration::from_millis(delay_bound_ms);
    config.heartbeat = 2;
    let info = config.validate().map_err(|e| match e {
        elect_net::ConfigError::DelayBound(_) => {
            BadInput(format!("--heartbeat {} ms is out of range (2 ms to 120 s)", args.heartbeat))
        }
        e => BadInput(e.to_string()),
    })?;
    elect_algos::dispatch(info.name, &config.params, CheckMembers(config.members()))
        .map_err(|e| BadInput(e.to_string()))?
        .map_err(|e| BadInput(e.to_string()))?;
    if let Some(path) = &args.key_file {
        elect_net::ClusterKey::from_file(path).map_err(|e| BadInput(e.to_string()))?;
    }
    let (fault, rounds) = match (args.kill_leader, args.pause_leader) {
        (_, Some(rounds)) => (Fault::Pause, rounds),
        (Some(rounds), None) => (Fault::Kill, rounds),
        (None, None) => (Fault::Kill, 10),
    };
    Ok(Plan {
        nodes: args.nodes,
        algorithm: info.name,
        params: args.params.clone(),
        heartbeat_ms: 2 * delay_bound_ms,
        delay_bound_ms,
        fault,
        rounds,
        round_timeout: Duration::from_millis(args.round_timeout),
        quiet: Duration::from_millis((20 * delay_bound_ms).max(100)),
        seed: args.seed,
        cluster: format!("elect-cluster-{}", std::process::id()),
        key_file: args.key_file.clone(),
    })
}

impl Plan {
    /// The `elect node` command that runs member `id` at `addr` with its state in `dir`, beside `peers` (`ID=ADDR`).
    pub(super) fn member_command(
        &self,
        exe: &Path,
        id: u32,
        addr: SocketAddr,
        peers: &[String],
        dir: &Path,
    ) -> Command {
        let mut cmd = Command::new(exe);
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
        cmd.args(["--delay-bound-ms", &self.delay_bound_ms.to_string(), "--heartbeat", "2"]);
        if let Some(key) = &self.key_file {
            cmd.arg("--key-file").arg(key);
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
