//! The fencing store on its own: `fencing-store --listen 127.0.0.1:7100` prints every write and its verdict.

use std::net::{SocketAddr, TcpListener};

use clap::Parser;
use elect_example_fencing::{Verdict, serve};

/// A store that refuses writes fenced with an epoch lower than the highest it has accepted.
#[derive(Parser)]
struct Args {
    /// The TCP address to listen on.
    #[arg(long, default_value = "127.0.0.1:7100")]
    listen: SocketAddr,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let listener = TcpListener::bind(args.listen)?;
    eprintln!("fencing store on {}", listener.local_addr()?);
    serve(listener, |w, v| {
        let verdict = match v {
            Verdict::Accepted => "accepted".to_owned(),
            Verdict::Rejected { highest } => format!("rejected (highest accepted epoch: {highest})"),
        };
        println!("member {} write {} under epoch {}: {verdict}", w.writer, w.seq, w.epoch);
    })?;
    Ok(())
}
