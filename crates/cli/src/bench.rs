//! `elect bench`: the simulator's speed and memory on fixed scenarios, one core.
//!
//! Each scenario runs `--repeat` times and the fastest run is reported (the others only absorb noise from the
//! machine). Peak memory is the process's resident high-water mark (`VmHWM`), reset before each scenario where
//! the kernel allows it.

use std::fs;
use std::io::{self, Write};
use std::time::Instant;

use clap::Args;
use elect_sim::{Ids, Report, SimConfig, SimError};
use serde::Serialize;

use crate::table::Table;
use crate::{BadInput, Outcome};

/// A named benchmark scenario.
struct Scenario {
    name: &'static str,
    describe: &'static str,
    config: fn() -> SimConfig,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "cr-worst",
        describe: "chang-roberts, n=10000, descending ids, all initiate (50,005,000 tokens)",
        config: || {
            let mut cfg = SimConfig::new("chang-roberts", 10_000);
            cfg.ids = Ids::Descending;
            cfg
        },
    },
    Scenario {
        name: "bully-w2",
        describe: "bully, n=1000, the strongest crashed, the weakest detects it",
        config: || {
            let mut cfg = SimConfig::new("bully", 1000);
            cfg.crashes.push(elect_sim::Crash { id: elect_core::NodeId(1000), at: 0 });
            cfg.initiators = elect_sim::InitiatorSpec::Weakest;
            cfg
        },
    },
    Scenario {
        name: "cr-random-1m",
        describe: "chang-roberts, n=1000000, random ids, all initiate",
        config: || {
            let mut cfg = SimConfig::new("chang-roberts", 1_000_000);
            cfg.ids = Ids::Random;
            cfg
        },
    },
];

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Run only these scenarios (repeatable): cr-worst, bully-w2, cr-random-1m.
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// Runs per scenario; the fastest is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Measurement {
    scenario: &'static str,
    describe: &'static str,
    messages: u64,
    delivered: u64,
    events: u64,
    seconds: f64,
    deliveries_per_second: f64,
    peak_rss_mib: Option<f64>,
}

/// The resident-set high-water mark in MiB, from `/proc/self/status`.
fn peak_rss_mib() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Resets the high-water mark to the current resident set, so each scenario's peak is its own.
fn reset_peak_rss() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

fn measure(s: &Scenario, repeat: u32) -> anyhow::Result<Measurement> {
    let mut best: Option<(f64, Report)> = None;
    reset_peak_rss();
    for _ in 0..repeat.max(1) {
        let cfg = (s.config)();
        let start = Instant::now();
        let report = match elect_sim::simulate(&cfg, None) {
            Ok(r) => r,
            Err(SimError::Config(e)) => return Err(BadInput(e.0).into()),
            Err(e) => return Err(e.into()),
        };
        let seconds = start.elapsed().as_secs_f64();
        if !report.ok() {
            anyhow::bail!("benchmark {} violated a property: {:?}", s.name, report.properties.violations);
        }
        if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
            best = Some((seconds, report));
        }
    }
    let (seconds, report) = best.expect("at least one run");
    Ok(Measurement {
        scenario: s.name,
        describe: s.describe,
        messages: report.messages.total,
        delivered: report.delivered,
        events: report.events,
        seconds,
        deliveries_per_second: report.delivered as f64 / seconds,
        peak_rss_mib: peak_rss_mib(),
    })
}

pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<Outcome> {
    let chosen: Vec<&Scenario> = if args.scenarios.is_empty() {
        SCENARIOS.iter().collect()
    } else {
        args.scenarios
            .iter()
            .map(|name| {
                SCENARIOS.iter().find(|s| s.name == name).ok_or_else(|| {
                    let known: Vec<_> = SCENARIOS.iter().map(|s| s.name).collect();
                    BadInput(format!("unknown benchmark scenario '{name}' (known: {})", known.join(", ")))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let mut results = Vec::new();
    for s in chosen {
        if !args.json {
            eprintln!("running {} ({} runs): {}", s.name, args.repeat.max(1), s.describe);
        }
        results.push(measure(s, args.repeat)?);
    }
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &results)?;
        writeln!(out)?;
    } else {
        let mut table = Table::new(vec!["SCENARIO", "DELIVERED", "SECONDS", "DELIVERIES/S", "PEAK RSS"]);
        for m in &results {
            table.row(vec![
                m.scenario.to_owned(),
                m.delivered.to_string(),
                format!("{:.3}", m.seconds),
                format!("{:.1} M", m.deliveries_per_second / 1e6),
                m.peak_rss_mib.map_or_else(|| "n/a".to_owned(), |mib| format!("{mib:.1} MiB")),
            ]);
        }
        table.write(&mut out)?;
    }
    Ok(Outcome::Held)
}
