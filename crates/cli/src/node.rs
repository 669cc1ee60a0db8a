//! `elect node`: run one member of a cluster over UDP until interrupted.
//!
//! Logs (tracing) go to stderr, filtered by `RUST_LOG` (default `info`); every change of leadership is one JSON
//! line on stdout: `{"id":1,"leader":3,"epoch":4294967299,"epoch_round":1,"incarnation":2}` (`leader` is `null`
//! while there is none).
//!
//! `--key-file FILE` authenticates every packet with the cluster key derived from the file (its bytes less one
//! trailing line ending; see `elect_net::auth`); every member must be given the same secret. `--http ADDR` serves
//! `GET /status` (JSON), `GET /metrics` (OpenMetrics text, for Prometheus), `GET /leader` and its watch,
//! `POST /resign`, `POST /transfer?to=ID`, and `GET /voters` with `POST /voters?add=ID` and `?remove=ID` on that TCP
//! address; `--http-token-file FILE` holds the token the
//! `POST`s must carry. A key
//! or token file that cannot be read or is empty, and an HTTP address that cannot be bound, exit with status 2 and
//! one line naming the problem, before the state file is touched.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use elect_core::{InT, NodeId};
use elect_net::{ClusterKey, HttpToken, Node, NodeConfig, Peer, StartError, ValidConfig};

use crate::outcome::{BadInput, Outcome};

#[derive(Args)]
pub(crate) struct NodeArgs {
    /// This member's id.
    #[arg(long)]
    id: u32,
    /// The UDP address to listen on.
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// Another member: its id and UDP address, `IP:PORT` or `HOST:PORT` with a DNS name (repeat for each; every
    /// member must list the same cluster). A name is resolved at the start, retried while it does not resolve,
    /// and resolved again whenever its member stays silent.
    #[arg(long = "peer", value_name = "ID=HOST:PORT", value_parser = parse_peer)]
    peers: Vec<(NodeId, Peer)>,
    /// The election algorithm: bully, garcia-molina, invitation, or a ring algorithm.
    #[arg(long, short)]
    algorithm: String,
    /// An algorithm parameter (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Where this member keeps its state file (incarnation, highest epoch, the algorithm's durable state).
    #[arg(long, value_name = "DIR")]
    data_dir: PathBuf,
    /// The cluster's name: packets from members of other clusters are dropped.
    #[arg(long, default_value = "elect")]
    cluster: String,
    /// The seed of timer jitter (default: drawn from the clock, and logged).
    #[arg(long)]
    seed: Option<u64>,
    /// The bound T on one-way message delay, in milliseconds: every timeout is a multiple of it. It must cover
    /// the network's delay, scheduling, and a state write (fsync) before a send.
    #[arg(long, value_name = "MS", default_value_t = 20)]
    delay_bound_ms: u64,
    /// The leader's heartbeat period, in multiples of T; followers suspect it after (heartbeat + 2)·T.
    #[arg(long, value_name = "N", default_value = "2")]
    heartbeat: InT,
    /// Authenticate every packet with the cluster key derived from this file: its bytes (less one trailing line
    /// ending) are a secret every member shares, e.g. `head -c 32 /dev/urandom > FILE`. Packets without the right
    /// tag, and replayed packets, are dropped. Without it the cluster trusts its network.
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Serve HTTP on this TCP address, e.g. 127.0.0.1:9101 (port 0: one the OS chooses, logged): GET /status
    /// (JSON), GET /metrics (Prometheus), GET /leader (JSON: leader, epoch, is_leader, version; with
    /// ?after=VERSION it waits for the next change, so an application in any language can follow every change in
    /// order), POST /resign (a leader steps down and sits out for a while), POST /transfer?to=ID (a leader hands
    /// leadership over to member ID; the members ranked above ID stand aside while ID leads), GET /voters and POST
    /// /voters?add=ID or ?remove=ID (the leader changes the voters, one member at a time). The POSTs are taken
    /// only with the token of --http-token-file, or, without a token file, only when ADDR is a loopback address.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The token the POSTs (/resign, /transfer, /voters) must carry, as `Authorization: Bearer TOKEN`: the file's text
    /// (less one trailing line ending), visible ASCII characters only, e.g. `head -c 24 /dev/urandom | base64 >
    /// FILE`. Without it, they are refused unless --http is a loopback address.
    #[arg(long, value_name = "FILE", requires = "http")]
    http_token_file: Option<PathBuf>,
    /// This member must never lead: it takes no part in elections (to the others it is a member that never answers
    /// in one) and follows the leader the others elect. With every member that may lead down, there is no leader.
    #[arg(long)]
    no_lead: bool,
    /// After each start, sit out this long, following the others' leader, before taking part in elections: a
    /// preferred member (Bully's strongest) takes leadership back only once it has run this long, so one that
    /// crashes again and again does not make the leadership flap.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    takeover_after_ms: u64,
    /// The lease mode: lead only while a majority of the members backs this member, and stop saying so, on this
    /// member's own clock, before any of them could back another. No two members then say they lead at one
    /// instant, even across a partition or a pause, as long as no member's clock runs faster or slower than real
    /// time by more than --max-drift-ppm. Every member of a cluster must use it, with the same timing. A failover
    /// then also waits for the old leader's lease to run out.
    #[arg(long)]
    lease: bool,
    /// With --lease: the lease length, in multiples of T [default: heartbeat + 3].
    #[arg(long, value_name = "N")]
    lease_length: Option<InT>,
    /// With --lease: how far any member's clock may run faster or slower than real time, in parts per million
    /// [default: 1000].
    #[arg(long, value_name = "PPM")]
    max_drift_ppm: Option<u32>,
    /// The voters the cluster starts with, e.g. `--voters 1,2,3` (default: every member). The others start as
    /// learners: they follow the leader and take no part in elections until `elect voters --add ID` (POST
    /// /voters?add=ID on the leader) makes them voters. Every member must start with the same list; once the
    /// voters change, each member keeps the configuration it holds in its state file and this flag is not read.
    #[arg(long, value_name = "ID,ID,...", value_delimiter = ',')]
    voters: Vec<u32>,
    /// Shut down gracefully (resigning first) when standard input reaches its end: a supervisor that holds the
    /// other end of a pipe takes its members down with it, even when it is killed (`elect cluster` does this).
    #[arg(long)]
    stop_on_stdin_close: bool,
    /// While this member leads, write to the fencing store listening on this Unix socket under its epoch, once
    /// per heartbeat (`WRITE <epoch> <id> <seq>`, the protocol of examples/fencing-store); `elect cluster` serves
    /// one and judges what it accepted.
    #[arg(long, value_name = "PATH")]
    fencing_store: Option<PathBuf>,
}

fn parse_peer(s: &str) -> Result<(NodeId, Peer), String> {
    elect_net::parse_peer_spec(s).map_err(|e| e.to_string())
}

pub(crate) fn run(args: &NodeArgs) -> anyhow::Result<Outcome> {
    let config = config(args)?;
    let stdin_closed = args.stop_on_stdin_close.then(watch_stdin);
    init_logs();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(config, stdin_closed, args.fencing_store.clone()))
}

/// A receiver that completes when standard input reaches its end (or fails), read by a thread of its own.
fn watch_stdin() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = tx.send(());
    });
    rx
}

fn config(args: &NodeArgs) -> Result<ValidConfig, BadInput> {
    let id = NodeId(args.id);
    let mut config = NodeConfig::new(id, args.listen, &args.algorithm, &args.data_dir);
    for (id, peer) in &args.peers {
        if let elect_net::Peer::Addr(addr) = peer {
            check_peer(args.listen, *id, *addr)?;
        }
        config.add_peer(*id, peer.clone()).map_err(|e| BadInput(e.to_string()))?;
    }
    if args.data_dir.exists() && !args.data_dir.is_dir() {
        return Err(BadInput(format!("--data-dir: not a directory: {}", args.data_dir.display())));
    }
    config.params =
        elect_algos::Params::parse(args.params.iter().map(String::as_str)).map_err(|e| BadInput(e.to_string()))?;
    config.cluster.clone_from(&args.cluster);
    config.seed = args.seed;
    config.delay_bound = Duration::from_millis(args.delay_bound_ms);
    config.heartbeat = args.heartbeat;
    if let Some(path) = &args.key_file {
        config.key = Some(ClusterKey::from_file(path).map_err(|e| BadInput(e.to_string()))?);
    }
    config.http = args.http;
    config.no_lead = args.no_lead;
    config.takeover_after = Duration::from_millis(args.takeover_after_ms);
    if args.lease {
        let default = elect_algos::member::Lease::for_heartbeat(args.heartbeat);
        let length = args.lease_length.unwrap_or(default.length);
        let drift_ppm = args.max_drift_ppm.unwrap_or(default.drift_ppm);
        // A real clock drifts on its own: the runtime never widens a timer for it.
        config.lease = Some(elect_algos::member::Lease { length, drift_ppm, drifting: false });
    } else if args.lease_length.is_some() || args.max_drift_ppm.is_some() {
        return Err(BadInput("--lease-length and --max-drift-ppm time the lease mode: add --lease".into()));
    }
    if !args.voters.is_empty() {
        config.voters = Some(args.voters.iter().map(|&id| NodeId(id)).collect());
    }
    if let Some(path) = &args.http_token_file {
        config.http_token = Some(HttpToken::from_file(path).map_err(|e| BadInput(e.to_string()))?);
    }
    config.validated().map_err(|e| BadInput(e.to_string()))
}

/// Refuses a peer this member could not reach as another member: on port 0, at this member's own address, or in
/// another address family than the one it listens in.
fn check_peer(listen: SocketAddr, peer: NodeId, addr: SocketAddr) -> Result<(), BadInput> {
    if addr.port() == 0 {
        return Err(BadInput(format!("peer {peer} at {addr}: port 0 is no member's port")));
    }
    if addr.is_ipv4() != listen.is_ipv4() {
        return Err(BadInput(format!(
            "peer {peer} at {addr}: an IPv{} address, but --listen {listen} is IPv{}",
            if addr.is_ipv4() { 4 } else { 6 },
            if listen.is_ipv4() { 4 } else { 6 }
        )));
    }
    let mine =
        addr == listen || (listen.ip().is_unspecified() && addr.ip().is_loopback() && addr.port() == listen.port());
    if mine {
        return Err(BadInput(format!("peer {peer} at {addr}: that is this member's own --listen address")));
    }
    Ok(())
}

/// Structured logs on stderr; `RUST_LOG` filters them by target and level (`debug`, `elect_net=debug,info`), as
/// `env_logger` reads it. A value that does not parse is reported and the default, `info`, taken.
fn init_logs() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let asked = std::env::var("RUST_LOG").ok().filter(|s| !s.trim().is_empty());
    let parsed = asked.as_deref().map(str::parse::<tracing_subscriber::filter::Targets>);
    let filter = match &parsed {
        Some(Ok(filter)) => filter.clone(),
        _ => tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO),
    };
    let ansi = std::io::stderr().is_terminal();
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(ansi);
    let _ = tracing_subscriber::registry().with(filter).with(logs).try_init();
    if let (Some(asked), Some(Err(e))) = (asked, parsed) {
        tracing::warn!(rust_log = asked, error = %e, "RUST_LOG does not parse (it takes `level` or `target=level`, comma-separated): logging at info");
    }
}

async fn serve(
    valid: ValidConfig,
    stdin_closed: Option<tokio::sync::oneshot::Receiver<()>>,
    fencing_store: Option<PathBuf>,
) -> anyhow::Result<Outcome> {
    let config = valid.config();
    let heartbeat = config.real(config.heartbeat);
    let mut node = Node::start_valid(valid).await.map_err(|e| match e {
        StartError::Config(_) | StartError::Bind { .. } | StartError::Http { .. } => {
            anyhow::Error::new(BadInput(e.to_string()))
        }
        e => anyhow::Error::new(e),
    })?;
    let mut leadership = node.leadership();
    let (id, incarnation) = (node.id(), node.incarnation());
    // The writes go on until the runtime ends, with this command.
    if let Some(path) = fencing_store {
        tokio::spawn(crate::fence::write_while_leading(path, id, node.leadership(), node.lease(), heartbeat));
    }
    let stdin_closed = async move {
        match stdin_closed {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stdin_closed);
    loop {
        tokio::select! {
            changed = leadership.changed() => {
                if changed.is_err() {
                    break; // The member stopped: `wait` below says why.
                }
                leadership.borrow_and_update();
                // The latest leadership, with when the member began to show it (the watch may have skipped one).
                let (l, since) = node.shown_since();
                let line = serde_json::json!({
                    "id": id.0,
                    "leader": l.leader.map(|l| l.0),
                    "epoch": l.epoch,
                    "epoch_round": l.epoch.round(),
                    "incarnation": incarnation,
                    "since_monotonic_us": since.map(|s| u64::try_from(s.as_micros()).unwrap_or(u64::MAX)),
                });
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            _ = elect_net::shutdown_signal() => {
                tracing::info!("shutting down");
                node.shutdown().await?;
                return Ok(Outcome::Held);
            }
            () = &mut stdin_closed => {
                tracing::info!("standard input closed: shutting down");
                node.shutdown().await?;
                return Ok(Outcome::Held);
            }
        }
    }
    node.wait().await?;
    Ok(Outcome::Held)
}
