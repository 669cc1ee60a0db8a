//! A member of an application that elects a leader with `elect_net` and, while it leads, writes to the fencing
//! store under its epoch.
//!
//! Each write is decided under the epoch current at that moment, prepared for `--work-ms`, then sent: the gap
//! between the decision and the write is where a leader can pause and be replaced, and the epoch is what lets the
//! store refuse the late write. Every step is one JSON line on stdout:
//!
//! ```text
//! {"id":3,"event":"writing","epoch":4294967299,"seq":1}
//! {"id":3,"event":"accepted","epoch":4294967299,"seq":1}
//! {"id":3,"event":"rejected","epoch":4294967299,"seq":2,"highest":8589934594}
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use elect_core::NodeId;
use elect_example_fencing::{Verdict, Write, send};
use elect_net::{Node, NodeConfig};

/// One member of the example application.
#[derive(Parser)]
struct Args {
    /// This member's id.
    #[arg(long)]
    id: u32,
    /// The UDP address to listen on.
    #[arg(long)]
    listen: SocketAddr,
    /// Another member, as ID=ADDR (repeat for each).
    #[arg(long = "peer", value_parser = parse_peer)]
    peers: Vec<(NodeId, SocketAddr)>,
    /// Where this member keeps its state file.
    #[arg(long)]
    data_dir: PathBuf,
    /// The fencing store's TCP address.
    #[arg(long)]
    store: SocketAddr,
    /// The election algorithm.
    #[arg(long, default_value = "bully")]
    algorithm: String,
    /// The cluster's name.
    #[arg(long, default_value = "fencing-example")]
    cluster: String,
    /// The delay bound T, in milliseconds.
    #[arg(long, default_value_t = 5)]
    delay_bound_ms: u64,
    /// How long a write takes to prepare, between taking the epoch and sending the write, in milliseconds.
    #[arg(long, default_value_t = 50)]
    work_ms: u64,
    /// The pause between two writes, in milliseconds.
    #[arg(long, default_value_t = 100)]
    period_ms: u64,
}

fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), String> {
    elect_net::parse_peer(s).map_err(|e| e.to_string())
}

/// One JSON line on stdout.
fn emit(value: &serde_json::Value) {
    println!("{value}");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let me = NodeId(args.id);
    let mut config = NodeConfig::new(me, args.listen, &args.algorithm, &args.data_dir);
    config.peers.extend(args.peers.iter().copied());
    config.cluster.clone_from(&args.cluster);
    config.delay_bound = Duration::from_millis(args.delay_bound_ms);
    let node = Node::start(config).await?;
    let mut leadership = node.leadership();
    let mut seq = 0;
    loop {
        // Wait until this member leads, and take its epoch.
        let epoch = loop {
            let l = *leadership.borrow_and_update();
            if l.leader == Some(me) {
                break l.epoch;
            }
            tokio::select! {
                changed = leadership.changed() => changed?,
                _ = tokio::signal::ctrl_c() => return Ok(node.shutdown().await?),
            }
        };
        seq += 1;
        emit(&serde_json::json!({"id": me.0, "event": "writing", "epoch": epoch, "seq": seq}));
        // Preparing the write. The leader may pause here, and be replaced, for any length of time; it does not
        // look at its leadership again before writing, as no check could close that gap: the store's does.
        tokio::time::sleep(Duration::from_millis(args.work_ms)).await;
        let write = Write { epoch: epoch.bits(), writer: me.0, seq };
        match send(args.store, &write).await {
            Ok(Verdict::Accepted) => {
                emit(&serde_json::json!({"id": me.0, "event": "accepted", "epoch": epoch, "seq": seq}));
            }
            Ok(Verdict::Rejected { highest }) => emit(&serde_json::json!({
                "id": me.0, "event": "rejected", "epoch": epoch, "seq": seq, "highest": highest
            })),
            Err(e) => emit(&serde_json::json!({
                "id": me.0, "event": "error", "epoch": epoch, "seq": seq, "error": e.to_string()
            })),
        }
        tokio::time::sleep(Duration::from_millis(args.period_ms)).await;
    }
}
