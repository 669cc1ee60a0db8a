//! # elect-net: the election algorithms over real sockets
//!
//! The network runtime is the I/O shell of the process a member runs, [`elect_algos::member::Member`]: the same
//! sans-IO process the simulator and the model checker run with `--monitor`. Everything a member decides (the leader
//! monitor, fencing epochs, claims, announcements, incarnations, resigning and leaving) is in that process; this
//! crate gives it real time, UDP, a state file, keys and HTTP, so that applications can elect a leader among their
//! own processes and use its epoch as a fencing token.
//!
//! - **One task per member** ([`Node`]): a tokio task owns the process, its socket and its timers, and runs each
//!   input as one step of the driver contract ([`elect_core::driver`]). `SetTimer` becomes a deadline drawn from
//!   the timer's span with a ChaCha8 generator seeded from a logged seed; `CancelTimer` removes it; `Persist` is
//!   written crash-safely ([`store`]) before any later send of the same step; one runtime tick is a microsecond.
//! - **A full mesh of members** ([`mesh`]): every member knows every other by id and address (given, or resolved
//!   from a DNS name at the start and again while that member is silent: [`NodeConfig::names`]); ports are numbered
//!   as in the simulator's complete graph, so `bully`, `garcia-molina`, `invitation` and the ring algorithms (over
//!   the members' logical ring) run unchanged. Algorithms that elect one leader run inside the leader monitor
//!   (heartbeats, re-election when the leader fails); the Invitation algorithm finds failed coordinators itself
//!   ([`elect_algos::member::dispatch_member`] chooses, for the runtime and for `--monitor` alike).
//! - **The wire** ([`wire`]): a versioned postcard envelope (cluster id, version, from, to, sequence number) around
//!   the member's packet (incarnation, fencing information, message). Malformed, foreign and misaddressed packets,
//!   packets from non-members and from a member's earlier incarnation, and in a keyless cluster packets that do not
//!   come from the address of the member they claim to be from, are dropped and counted ([`Stats`]), never
//!   trusted, never a panic.
//! - **Authentication and replays** ([`auth`], [`replay`]): with a cluster key ([`NodeConfig::key`], read from a key file by
//!   [`ClusterKey::from_file`]), every packet carries a keyed BLAKE3 tag, and a packet without the right one is
//!   dropped; a packet whose sequence number was already accepted in its sender's incarnation, or is older than a
//!   window of 64, is dropped as a replay. Without a key the cluster trusts its network.
//! - **Fencing** ([`fencing`]): the member's process numbers every leadership grant with an epoch that never goes
//!   backwards for a member, even across restarts, and that no two grants share; the runtime hands its grants and
//!   leadership to the application as [`LeaderEvent`]s and a [`Leadership`] watch.
//! - **Leases** ([`NodeConfig::lease`]): in the lease mode a member leads only while a majority of the members backs
//!   it, and stops saying so, on its own monotonic clock, before any of them could back another: no two members
//!   say they lead at one instant, as long as no clock's rate is off by more than the drift bound. The runtime
//!   counts a lease's hold from before the round it guards was sent, handles a lease that ran out before anything
//!   else when it wakes from a pause, and tells the application how long the lease has left ([`LeaseClock`],
//!   `lease_ms_left` over HTTP).
//! - **Scripted** ([`scripted`]): the same runner stepped by a script on an in-memory network, with the script's
//!   clock; tests hold it to the simulator and the model checker with one history.
//! - **Operations**: with [`NodeConfig::http`], a member serves `GET /status` and `GET /metrics` over HTTP
//!   ([`Node::http_addr`]; below); it logs with `tracing`, in a span per member, and never logs its key.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use elect_core::NodeId;
//! use elect_net::{LeaderEvent, Node, NodeConfig};
//!
//! let mut config = NodeConfig::new(NodeId(1), "127.0.0.1:7001".parse()?, "bully", "/var/lib/app/elect");
//! config.peers.insert(NodeId(2), "127.0.0.1:7002".parse()?);
//! config.peers.insert(NodeId(3), "127.0.0.1:7003".parse()?);
//! let mut node = Node::start(config).await?;
//! let mut events = node.events().expect("the first call gets the stream");
//! while let Some(event) = events.recv().await {
//!     match event {
//!         // An `Epoch` shows as `round.member`; its bits are the fencing token a store compares.
//!         LeaderEvent::StartedLeading { epoch } => println!("leading in {epoch}; fence writes with {}", epoch.bits()),
//!         LeaderEvent::StoppedLeading { epoch } => println!("epoch {epoch} is over"),
//!         _ => {}
//!     }
//! #   break;
//! }
//! node.shutdown().await?;
//! # Ok(())
//! # }
//! ```
//!
//! ## HTTP status, metrics and leadership
//!
//! - `GET /leader`: JSON, `{"id", "incarnation", "version", "latest", "leader", "epoch", "epoch_round",
//!   "is_leader"}`: the latest change of the leadership the member shows, numbered `version` (0 is the leadership it
//!   started with; each change adds one, and each incarnation counts from 0 again). `GET /leader?after=V&wait=S`
//!   is the watch: change `V + 1` as soon as it exists (never a later one, so a client that asks again with each
//!   answer's version sees every change in order), or the latest change again after `S` seconds (30 by default, at
//!   most 300) if none came; `410 Gone` if change `V + 1` is no longer kept (the last 1024 are), the latest change at
//!   once if `V` is beyond it (a number from an earlier incarnation), `400 Bad Request` for any other parameter.
//! - `POST /resign`: a leader steps down and sits out for the resign hold ([`Node::resign`]); `202 Accepted` with
//!   `{"resigning": true, "epoch", "sits_out_ms"}`, or `409 Conflict` when the member does not lead. With
//!   [`NodeConfig::http_token`] the request must carry `Authorization: Bearer TOKEN` (`401` otherwise); without
//!   one it is taken only on a loopback address (`403` otherwise).
//! - `POST /transfer?to=ID`: a leader hands leadership over to member `ID` ([`Node::transfer`]): it stops leading,
//!   and it and the members ranked above `ID` stand aside while `ID` elects itself, until `ID` stops leading, or
//!   until the resign hold is over if `ID` has not taken over by then (an ordinary election follows). `202 Accepted`
//!   with `{"transferring": true, "to", "epoch", "deadline_ms"}`; `400 Bad Request` when `to` is missing or names no
//!   other member; `409 Conflict` when the member does not lead; the same token rule as `POST /resign`. Watch
//!   `GET /leader` to see `ID` take over.
//! - `GET /status`: JSON, `{"id", "algorithm", "state", "leader", "is_leader", "epoch", "epoch_round",
//!   "incarnation", "dropped": {REASON: COUNT}, "members": [{"id", "addr", "self", "last_contact_ms_ago"}]}`.
//!   `state` is the process's state (`election`, `reorganization`, `normal`); `leader` and `epoch` are the
//!   leadership the member shows, as its [`Node::leadership`] watch does (`leader` is `null` while there is none);
//!   `dropped` counts the packets dropped by reason; `last_contact_ms_ago` is how long ago a packet of that member
//!   was last accepted (`null` if never, and for the member itself). A member given by name also has `"name"`
//!   (`HOST:PORT`) and `"resolved"`, and its `addr` is `null` while the name does not resolve.
//!   `GET /status?ready` is the same, with status 503 while the member shows no leader (a readiness probe).
//! - `GET /metrics`: the OpenMetrics text format, which Prometheus scrapes:
//!
//! | metric | type | what |
//! | --- | --- | --- |
//! | `elect_is_leader` | gauge | 1 while this member leads under a fencing epoch it granted itself, else 0 |
//! | `elect_epoch` | gauge | the fencing epoch of the leadership this member shows (`round << 32 \| leader id`) |
//! | `elect_incarnation` | gauge | this member's incarnation |
//! | `elect_leader_changes_total` | counter | times this member came to show a new leadership grant (a leader and its epoch) |
//! | `elect_election_duration_seconds` | histogram | how long this member showed no leader: from its start, or from the moment it lost its leader, to the moment it shows one again |
//! | `elect_messages_sent_total{kind}` | counter | packets put on the wire, by kind |
//! | `elect_messages_received_total{kind}` | counter | packets accepted, by kind |
//! | `elect_packets_dropped_total{reason}` | counter | packets dropped, by reason ([`wire::Drop::name`]) |
//! | `elect_send_errors_total`, `elect_receive_errors_total` | counter | errors the socket reported |
//! | `elect_state_writes_total` | counter | state file writes |
//!
//! The kinds are the algorithm's message kinds, the names the simulator counts by (with the leader monitor's
//! `heartbeat`, `join` and `hop-ack` when it wraps the algorithm), then the runtime's own `announce`, `leaving` and
//! `ask` ([`elect_algos::member::Packet`]'s kinds). Every kind and reason is there from the start, at 0. [`Node::stats`] reads the same
//! counters.
//! - Any other path is `404 Not Found`; another method on these paths is `405 Method Not Allowed`.
//!
//! Every `GET` reads what the member's task last published: a request never waits for the task (a watch waits for
//! the next change, not for the task).

pub mod auth;
mod config;
mod error;
pub mod fencing;
mod hosted;
mod http;
pub mod mesh;
mod node;
pub mod replay;
mod resolve;
mod runner;
pub mod scripted;
mod socket;
mod stats;
mod status;
pub mod store;
pub mod voters;
pub mod wire;

pub use auth::{ClusterKey, HttpToken, KeyError, TokenError};
pub use config::{
    ConfigError, DEFAULT_DELAY_BOUND, HostPort, NodeConfig, Peer, PeerError, ValidConfig, parse_peer, parse_peer_spec,
};
pub use error::{NodeError, StartError};
pub use fencing::{LeaderEvent, Leadership};
pub use http::{Limits as HttpLimits, serve_bounded as serve_http};
pub use node::{LeaseClock, Node};
pub use stats::Stats;

/// What a member waits for to shut down gracefully: Ctrl-C, or SIGTERM on Unix.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
