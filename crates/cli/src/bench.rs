//! `elect bench`: the simulator's and the model checker's speed and memory on fixed scenarios.
//!
//! Each scenario runs `--repeat` times and the fastest run is reported (the others only absorb noise from the
//! machine). Single runs use one core; the sweep scenarios compare one thread with every core; the checker's
//! scenarios use every core, and count its transitions as deliveries (each is one delivery). Each scenario runs
//! in a child process of its own, so its peak memory (the resident high-water mark, `VmHWM`) is its own.
//!
//! Beside each single run (and the one-thread sweep), the bench runs the bare event loop
//! ([`elect_sim::bare_event_loop`]): as many deliveries through the simulator's queue, of events of the same
//! shape, with a handler that only forwards. Its rate is what this machine does with the queue alone, and the
//! scenario's rate is printed as a fraction of it.

use std::fs;
use std::io::{self, Write};
use std::time::Instant;

use clap::Args;
use elect_check::{CheckConfig, Network};
use elect_core::NodeId;
use elect_scenario::{Ids, InitiatorSpec, Monitor, NodeAt, SimConfig};
use elect_sim::{SimError, Sweep};
use serde::Serialize;

use crate::outcome::{BadInput, Outcome};
use crate::table::Table;

/// What a benchmark scenario runs.
enum Work {
    /// One simulation, on one core.
    Single(fn() -> SimConfig),
    /// A sweep (Chang-Roberts, Hirschberg-Sinclair, Franklin, Peterson; n = 8..131072; 4 seeds) on this many
    /// threads (`None`: every core).
    Sweep(Option<usize>),
    /// One model check, on every core.
    Check(fn() -> CheckConfig),
    /// A check that must find a counterexample (a planted flaw).
    Finds(fn() -> CheckConfig),
}

/// A named benchmark scenario.
struct Scenario {
    name: &'static str,
    describe: &'static str,
    work: Work,
}

fn ring(algorithm: &str, n: usize, ids: Ids) -> SimConfig {
    let mut cfg = SimConfig::new(algorithm, n);
    cfg.ids = ids;
    cfg
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "cr-worst",
        describe: "chang-roberts, n=10000, descending ids, all initiate (50,005,000 tokens)",
        work: Work::Single(|| ring("chang-roberts", 10_000, Ids::Descending)),
    },
    Scenario {
        name: "hs-2^20",
        describe: "hirschberg-sinclair, n=2^20, random ids",
        work: Work::Single(|| ring("hirschberg-sinclair", 1 << 20, Ids::Random)),
    },
    Scenario {
        name: "franklin-2^20",
        describe: "franklin, n=2^20, random ids",
        work: Work::Single(|| ring("franklin", 1 << 20, Ids::Random)),
    },
    Scenario {
        name: "peterson-2^20",
        describe: "peterson, n=2^20, random ids",
        work: Work::Single(|| ring("peterson", 1 << 20, Ids::Random)),
    },
    Scenario {
        name: "bully-w2",
        describe: "bully, n=1000, the strongest crashed, the weakest detects it",
        work: Work::Single(|| {
            let mut cfg = SimConfig::new("bully", 1000);
            cfg.crashes.push(NodeAt { id: NodeId(1000), at: 0 });
            cfg.initiators = InitiatorSpec::Weakest;
            cfg
        }),
    },
    Scenario {
        name: "sweep-1-thread",
        describe: "sweep of 4 rings, n=8..131072, 4 seeds, one thread",
        work: Work::Sweep(Some(1)),
    },
    Scenario { name: "sweep-all-cores", describe: "the same sweep on every core", work: Work::Sweep(None) },
    Scenario {
        name: "check-cr-10",
        describe: "elect check: chang-roberts, n=10, descending ids, all initiate, unordered links",
        work: Work::Check(|| reordering_chang_roberts(10, true)),
    },
    Scenario {
        name: "check-cr-8-full",
        describe: "the same check with n=8 and no reduction (685,440 states)",
        work: Work::Check(|| reordering_chang_roberts(8, false)),
    },
    Scenario {
        name: "check-bully-monitor-4",
        describe: "the deployed member around bully, n=4, timed, one crash anywhere (elect check --monitor)",
        work: Work::Check(|| deployed_member("bully", 4)),
    },
    Scenario {
        name: "check-bully-monitor-5",
        describe: "the same with n=5",
        work: Work::Check(|| deployed_member("bully", 5)),
    },
    Scenario {
        name: "check-bully-same-epoch-5",
        describe: "the same with the planted flaw monitor-bug=same-epoch, until it is found",
        work: Work::Finds(|| planted_flaw("bully")),
    },
    Scenario {
        name: "check-gm-monitor-4",
        describe: "the same around garcia-molina",
        work: Work::Check(|| deployed_member("garcia-molina", 4)),
    },
    Scenario {
        name: "check-gm-monitor-5",
        describe: "the same with n=5",
        work: Work::Check(|| deployed_member("garcia-molina", 5)),
    },
    Scenario {
        name: "check-gm-same-epoch-5",
        describe: "the same with the planted flaw monitor-bug=same-epoch, until it is found",
        work: Work::Finds(|| planted_flaw("garcia-molina")),
    },
];

/// [`deployed_member`] on five processes, with the planted flaw `monitor-bug=same-epoch`.
fn planted_flaw(algorithm: &str) -> CheckConfig {
    let mut config = deployed_member(algorithm, 5);
    config.sim.params = elect_algos::Params::parse(["monitor-bug=same-epoch"]).expect("a valid parameter");
    config
}

/// The checker on the process `elect node` runs: `algorithm` in the member, `n` of them, timed, one crash at any
/// moment, within 4 GiB.
fn deployed_member(algorithm: &str, n: usize) -> CheckConfig {
    let mut sim = SimConfig::new(algorithm, n);
    sim.monitor = Some(Monitor::member(elect_core::InT(2)));
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    config.crashes = 1;
    config.max_states = usize::MAX;
    config.max_memory = Some(4 << 30);
    config
}

/// The model checker's benchmark: Chang-Roberts on a descending ring of `n` with reordering links.
fn reordering_chang_roberts(n: usize, reduce: bool) -> CheckConfig {
    let mut config = CheckConfig::new(ring("chang-roberts", n, Ids::Descending));
    config.network = Network::Unordered;
    config.reduce = reduce;
    config
}

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Run only these scenarios (repeatable): cr-worst, hs-2^20, franklin-2^20, peterson-2^20, bully-w2,
    /// sweep-1-thread, sweep-all-cores, check-cr-10, check-cr-8-full, check-bully-monitor-4,
    /// check-bully-monitor-5, check-bully-same-epoch-5, check-gm-monitor-4, check-gm-monitor-5,
    /// check-gm-same-epoch-5.
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// Runs per scenario; the fastest is reported.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Print a JSON array instead of a table.
    #[arg(long)]
    json: bool,
    /// Run the scenarios in this process (what each child process does).
    #[arg(long, hide = true)]
    in_process: bool,
    /// Load `elect serve` instead: start one on a free port (or use the one at ADDR, host:port) and run
    /// --clients clients at once, each asking --requests small simulations in turn; prints the answers by status
    /// and the latency percentiles.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    serve: Option<String>,
    /// With --serve: clients at once (1 to 1024, a thread each).
    #[arg(long, default_value_t = 100, requires = "serve")]
    clients: usize,
    /// With --serve: requests per client (1 to 100000).
    #[arg(long, default_value_t = 20, requires = "serve")]
    requests: usize,
}

#[derive(Serialize, serde::Deserialize)]
struct Measurement {
    scenario: String,
    describe: String,
    threads: usize,
    messages: u64,
    delivered: u64,
    /// Model-checking scenarios: the unique states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    states: Option<u64>,
    /// Model-checking scenarios: the bytes the visited set takes per state (fingerprint, table slot, and how the
    /// state was reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    visited_bytes_per_state: Option<f64>,
    seconds: f64,
    deliveries_per_second: f64,
    /// The bare event loop's rate on this machine: as many deliveries through the simulator's queue with a
    /// handler that only forwards ([`elect_sim::bare_event_loop`]). Single runs and the one-thread sweep only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bare_loop_per_second: Option<f64>,
    peak_rss_mib: Option<f64>,
}

/// The resident-set high-water mark in MiB, from `/proc/self/status`.
fn peak_rss_mib() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// What one run counted.
struct Counts {
    messages: u64,
    delivered: u64,
    states: Option<u64>,
    visited_bytes_per_state: Option<f64>,
    threads: usize,
}

/// Runs `work` once.
fn run_once(work: &Work) -> anyhow::Result<Counts> {
    let config_error = |e: SimError| -> anyhow::Error {
        match e {
            SimError::Config(e) => BadInput(e.to_string()).into(),
            e => e.into(),
        }
    };
    match work {
        Work::Single(config) => {
            let report = elect_sim::simulate(&config(), None).map_err(config_error)?;
            anyhow::ensure!(report.ok(), "a property was violated: {:?}", report.properties.violations);
            Ok(Counts {
                messages: report.messages.total,
                delivered: report.delivered,
                states: None,
                visited_bytes_per_state: None,
                threads: 1,
            })
        }
        Work::Sweep(threads) => {
            let sweep = Sweep {
                algorithms: ["chang-roberts", "hirschberg-sinclair", "franklin", "peterson"].map(String::from).to_vec(),
                sizes: "8..131072".parse().expect("a valid size range"),
                seeds: 4,
                synchronizers: Vec::new(),
                template: ring("", 1, Ids::Random),
            };
            let rows = sweep.run(*threads, &|_| {}).map_err(config_error)?;
            anyhow::ensure!(rows.iter().all(|r| r.ok), "a property was violated in the sweep");
            let sum = |f: fn(&elect_sim::Row) -> u64| rows.iter().map(f).sum();
            let threads = threads.unwrap_or_else(cores);
            let (messages, delivered) = (sum(|r| r.messages), sum(|r| r.delivered));
            Ok(Counts { messages, delivered, states: None, visited_bytes_per_state: None, threads })
        }
        Work::Check(config) | Work::Finds(config) => {
            let outcome = elect_check::check(&config()).map_err(|e| BadInput(e.to_string()))?;
            if let Work::Finds(_) = work {
                anyhow::ensure!(outcome.counterexample.is_some(), "the planted flaw was not found");
            } else {
                anyhow::ensure!(
                    outcome.ok() && outcome.complete,
                    "the check did not hold: {:?}",
                    outcome.counterexample
                );
            }
            let steps = outcome.transitions;
            Ok(Counts {
                messages: steps,
                delivered: steps,
                states: Some(outcome.states),
                visited_bytes_per_state: Some(outcome.memory.visited_bytes_per_state),
                threads: cores(),
            })
        }
    }
}

fn measure(s: &Scenario, repeat: u32) -> anyhow::Result<Measurement> {
    let mut best: Option<(f64, Counts)> = None;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        let counts = run_once(&s.work)?;
        let seconds = start.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
            best = Some((seconds, counts));
        }
    }
    let (seconds, Counts { messages, delivered, states, visited_bytes_per_state, threads }) =
        best.expect("at least one run");
    // Read before the bare loop runs, whose queue is not the scenario's memory.
    let peak_rss_mib = peak_rss_mib();
    let bare_loop_per_second = bare_loop_processes(&s.work).map(|processes| {
        let fastest = (0..repeat.max(1))
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(elect_sim::bare_event_loop(processes, delivered));
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        delivered as f64 / fastest
    });
    Ok(Measurement {
        scenario: s.name.to_owned(),
        describe: s.describe.to_owned(),
        threads,
        messages,
        delivered,
        states,
        visited_bytes_per_state,
        seconds,
        deliveries_per_second: delivered as f64 / seconds,
        bare_loop_per_second,
        peak_rss_mib,
    })
}

/// How many processes the bare event loop of `work` forwards among: a single run's; for the one-thread sweep, a
/// ring of 4,096 (its runs range from 8 to 131,072 processes). `None` where a bare loop says nothing: a sweep on
/// several threads, or the model checker, whose steps are not queue events.
fn bare_loop_processes(work: &Work) -> Option<u32> {
    match work {
        Work::Single(config) => u32::try_from(config().nodes).ok(),
        Work::Sweep(Some(1)) => Some(4096),
        Work::Sweep(_) | Work::Check(_) | Work::Finds(_) => None,
    }
}

/// Runs scenario `name` in a child process and reads its measurement.
fn in_child(name: &str, repeat: u32) -> anyhow::Result<Vec<Measurement>> {
    let exe = std::env::current_exe()?;
    let repeat = repeat.to_string();
    let args = ["bench", "--in-process", "--json", "--scenario", name, "--repeat", &repeat];
    let output = std::process::Command::new(exe).args(args).stderr(std::process::Stdio::inherit()).output()?;
    anyhow::ensure!(output.status.success(), "benchmark {name} failed ({})", output.status);
    Ok(serde_json::from_slice(&output.stdout)?)
}

pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<Outcome> {
    if let Some(addr) = &args.serve {
        return crate::serve::load::run(addr, args.clients, args.requests, args.json);
    }
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
        if args.in_process {
            results.push(measure(s, args.repeat)?);
            continue;
        }
        if !args.json {
            eprintln!("running {} ({} runs): {}", s.name, args.repeat.max(1), s.describe);
        }
        results.extend(in_child(s.name, args.repeat)?);
    }
    let mut out = io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &results)?;
        writeln!(out)?;
    } else {
        let mut table = Table::new(vec![
            "SCENARIO",
            "THREADS",
            "DELIVERED",
            "STATES",
            "B/STATE",
            "SECONDS",
            "DELIVERIES/S",
            "BARE LOOP/S",
            "OF BARE",
            "PEAK RSS",
        ]);
        for m in &results {
            let bare = m.bare_loop_per_second;
            table.row(vec![
                m.scenario.clone(),
                m.threads.to_string(),
                m.delivered.to_string(),
                m.states.map_or_else(|| "-".to_owned(), |s| s.to_string()),
                m.visited_bytes_per_state.map_or_else(|| "-".to_owned(), |b| format!("{b:.0}")),
                format!("{:.3}", m.seconds),
                format!("{:.1} M", m.deliveries_per_second / 1e6),
                bare.map_or_else(|| "-".to_owned(), |b| format!("{:.1} M", b / 1e6)),
                bare.map_or_else(|| "-".to_owned(), |b| format!("{:.0}%", 100.0 * m.deliveries_per_second / b)),
                m.peak_rss_mib.map_or_else(|| "n/a".to_owned(), |mib| format!("{mib:.1} MiB")),
            ]);
        }
        table.write(&mut out)?;
    }
    Ok(Outcome::Held)
}
