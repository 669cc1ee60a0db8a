//! # elect-net: the election algorithms over real sockets
//!
//! The network runtime drives the same sans-IO `Process` implementations the simulator and the model checker run,
//! with real time, UDP and a state file per member, so that applications can elect a leader among their own
//! processes and use its epoch as a fencing token.
//!
//! - **One task per member** ([`Node`]): a tokio task owns the process, its socket and its timers. `SetTimer`
//!   becomes a deadline drawn from the timer's span with a ChaCha8 generator seeded from a logged seed;
//!   `CancelTimer` removes it; `Persist` is written crash-safely ([`store`]) before any later send of the same
//!   step; one runtime tick is a microsecond.
//! - **A full mesh of members** ([`mesh`]): every member knows every other by id and address; ports are numbered
//!   as in the simulator's complete graph, so `bully`, `garcia-molina`, `invitation` and the ring algorithms (over
//!   the members' logical ring) run unchanged. Algorithms that elect one leader run inside the leader monitor
//!   (heartbeats, re-election when the leader fails); the Invitation algorithm finds failed coordinators itself.
//! - **The wire** ([`wire`]): a versioned postcard envelope (cluster id, version, from, to, incarnation, sequence
//!   number, fencing information, message). Malformed, foreign and misaddressed packets, packets from non-members
//!   and from a member's earlier incarnation are dropped and counted ([`Stats`]), never trusted, never a panic.
//! - **Fencing** ([`fencing`]): the runtime numbers every leadership grant with an epoch that never goes
//!   backwards for a member, even across restarts, and that no two grants share.
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
//!         LeaderEvent::StartedLeading { epoch } => println!("leading; fence writes with {epoch}"),
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
//! Not built yet: packet authentication with a cluster key, replay protection by sequence windows, the HTTP
//! status and metrics endpoints.

mod config;
pub mod fencing;
pub mod mesh;
mod node;
mod runner;
mod stats;
pub mod store;
pub mod wire;

pub use config::{ConfigError, DEFAULT_DELAY_BOUND, NodeConfig, parse_peer};
pub use fencing::{LeaderEvent, Leadership};
pub use node::{Node, NodeError, StartError};
pub use stats::Stats;
