//! Helpers shared by the simulator's integration tests.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::sync::{Arc, Mutex};

use elect_core::NodeId;
use elect_scenario::{Ids, InitiatorSpec, Scenario, SimConfig};
use elect_sim::{Report, simulate};

/// A config for `algorithm` on `n` nodes, adjusted by `f`.
pub fn config(algorithm: &str, n: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    let mut cfg = SimConfig::new(algorithm, n);
    f(&mut cfg);
    cfg
}

/// Runs `cfg` and checks that the run became quiescent, or reached its `--until`.
pub fn run(cfg: &SimConfig) -> Report {
    let report = simulate(cfg, None).unwrap_or_else(|e| panic!("{}: {e}", cfg.command_line()));
    let reached = report.until == Some(report.end_time);
    assert!(report.terminated || reached, "{} did not terminate", cfg.command_line());
    report
}

/// Runs `cfg` and checks that every property held, naming the reproducing command otherwise.
pub fn run_ok(cfg: &SimConfig) -> Report {
    let report = run(cfg);
    assert!(report.ok(), "violations {:?}\nreproduce: {}", report.properties.violations, report.reproduce);
    report
}

/// The ids by position that `cfg` resolves to.
pub fn ids_of(cfg: &SimConfig) -> Vec<NodeId> {
    Scenario::build(cfg).unwrap().ids
}

/// Explicit ids.
pub fn ids(list: &[u32]) -> Ids {
    Ids::List(list.iter().copied().map(NodeId).collect())
}

/// Explicit initiators.
pub fn initiators(list: &[u32]) -> InitiatorSpec {
    InitiatorSpec::List(list.iter().copied().map(NodeId).collect())
}

/// Time units as ticks.
pub fn units(u: u64) -> u64 {
    u * elect_scenario::TICKS_PER_UNIT
}

/// Every permutation of `items`, in lexicographic order of positions (Heap's algorithm would do; this is clearer).
pub fn permutations(items: &[u32]) -> Vec<Vec<u32>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

/// A writer whose bytes can be read after the simulator consumed the boxed writer.
#[derive(Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl SharedBuf {
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().clone()
    }
}

/// Proptest cases: `default`, or `PROPTEST_CASES` when set (for longer hunts).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A property test's configuration: `default` cases (or `PROPTEST_CASES`), drawn from a fixed seed, so that every
/// run of the suite checks the same cases and a failure in one is a failure in all. `PROPTEST_RNG_SEED=N` draws
/// other cases (for longer hunts, with `PROPTEST_CASES`); a failure prints the smallest case it found.
#[allow(dead_code)] // Not every test file has property tests.
pub fn proptest_config(default: u32) -> proptest::test_runner::Config {
    let mut config = proptest::test_runner::Config::with_cases(cases(default));
    // Some tests reject a share of their draws (a schedule that crashes everybody at once): allow as many
    // rejections as cases, so a longer hunt is not cut short.
    config.max_global_rejects = config.max_global_rejects.max(config.cases);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(0);
    }
    config
}

/// Keeps only the recoveries that follow a crash of their process (each crash recovered at most once) or a crash
/// of the leader, as the simulator requires: random fault schedules draw crashes and recoveries independently.
pub fn keep_recoveries_after_crashes(cfg: &mut SimConfig) {
    let mut used = vec![false; cfg.crashes.len()];
    let mut recoveries = std::mem::take(&mut cfg.recoveries);
    recoveries.sort_by_key(|r| (r.id, r.at));
    for r in recoveries {
        let crash = (0..cfg.crashes.len())
            .filter(|&c| !used[c] && cfg.crashes[c].id == r.id && cfg.crashes[c].at < r.at)
            .max_by_key(|&c| cfg.crashes[c].at);
        if let Some(c) = crash {
            used[c] = true;
            cfg.recoveries.push(r);
        } else if cfg.crash_leader_at.iter().any(|&t| t < r.at) {
            cfg.recoveries.push(r);
        }
    }
}
