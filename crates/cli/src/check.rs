//! `elect check`: every interleaving of a small scenario, with the algorithm's own properties.

use std::io::{self, Write};

use clap::Args;
use elect_check::{CheckConfig, CheckError, Network, Outcome as Checked};
use elect_sim::{Ids, InitiatorSpec, SimConfig, TopologyKind};

use crate::{BadInput, Outcome};

#[derive(Args)]
pub(crate) struct CheckArgs {
    /// The algorithm (see `elect list`).
    #[arg(long, short)]
    algorithm: String,
    /// Processes (keep it small: the states grow exponentially with n).
    #[arg(long, short)]
    nodes: usize,
    /// The topology, as for `elect sim` [default: the algorithm's own].
    #[arg(long, short)]
    topology: Option<TopologyKind>,
    /// ascending, descending, random (drawn from --seed), or a list of ids.
    #[arg(long, default_value = "ascending")]
    ids: Ids,
    /// Who initiates: all, random:K, weakest, strongest, or a list of ids.
    #[arg(long, default_value = "all")]
    initiators: InitiatorSpec,
    /// The seed random ids and initiators are drawn from.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// fifo: each link delivers in sending order; unordered: any message in flight may arrive next; lossy: as
    /// unordered, and any message may be lost; duplicating: as unordered, and messages may arrive twice
    /// (--duplicates times in a run).
    #[arg(long, default_value = "fifo")]
    network: Network,
    /// How many processes may crash (crash-stop), at any point.
    #[arg(long, default_value_t = 0)]
    crashes: u8,
    /// With --network duplicating: how many messages may arrive twice in a run.
    #[arg(long, default_value_t = 1)]
    duplicates: u8,
    /// An algorithm parameter KEY=VALUE (repeatable; see `elect list`).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// Stop after this many unique states (the verdict is then partial); each takes a few dozen bytes, but the
    /// frontier holds whole states.
    #[arg(long, default_value_t = 2_000_000)]
    max_states: usize,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<Outcome> {
    let mut sim = SimConfig::new(&args.algorithm, args.nodes);
    sim.topology = args.topology.clone();
    sim.ids = args.ids.clone();
    sim.initiators = args.initiators.clone();
    sim.seed = args.seed;
    sim.params =
        elect_algos::Params::parse(args.params.iter().map(String::as_str)).map_err(|e| BadInput(e.to_string()))?;
    if args.threads == Some(0) {
        return Err(BadInput("--threads must be at least 1".into()).into());
    }
    let config = CheckConfig {
        threads: args.threads,
        network: args.network,
        crashes: args.crashes,
        duplicates: args.duplicates,
        max_states: args.max_states,
        ..CheckConfig::new(sim)
    };
    let started = std::time::Instant::now();
    let outcome = elect_check::check(&config).map_err(|CheckError::Config(e)| BadInput(e))?;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    } else {
        text(&mut out, &outcome, seconds)?;
    }
    Ok(if outcome.ok() { Outcome::Held } else { Outcome::Violated })
}

fn text(out: &mut impl Write, o: &Checked, seconds: f64) -> io::Result<()> {
    writeln!(
        out,
        "checked     {} on {} processes, {:?} links, {} crash{} allowed",
        o.algorithm,
        o.nodes,
        o.network,
        o.crashes,
        if o.crashes == 1 { "" } else { "es" }
    )?;
    writeln!(
        out,
        "states      {} unique, {} transitions, {} terminal, depth {}, {:.2} s{}",
        o.states,
        o.transitions,
        o.terminal,
        o.depth,
        seconds,
        if o.complete { "" } else { " (cut short by --max-states: the verdict is partial)" }
    )?;
    writeln!(out, "properties  {} (always: every state; at end: every terminal state)", o.properties.join(", "))?;
    writeln!(out, "leader      {}", if o.leader_reachable { "reachable" } else { "NEVER reached" })?;
    match &o.counterexample {
        None => writeln!(out, "verdict     {}", if o.ok() { "held" } else { "not proven" })?,
        Some(c) => {
            writeln!(out, "verdict     {} VIOLATED: {}", c.property, c.detail)?;
            writeln!(out, "shortest path ({} steps):", c.path.len())?;
            for (i, step) in c.path.iter().enumerate() {
                writeln!(out, "  {:>3}. {step}", i + 1)?;
            }
        }
    }
    Ok(())
}
