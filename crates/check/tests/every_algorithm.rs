//! Every algorithm of elect, checked exhaustively on three and four processes under its own model: synchronous
//! algorithms (timeouts from a delay bound, lock-step rounds) timed, asynchronous ones untimed on the links they
//! assume. Safety holds on every interleaving and a leader is elected on some.

use elect_algos::{Info, LinkOrder, Timing, registry};
use elect_check::{CheckConfig, Network, check};
use elect_scenario::{Ids, SimConfig, TopologyKind};

/// The links an asynchronous algorithm assumes, as its metadata says: FIFO when its model needs it, reordering
/// otherwise.
fn network(info: &Info) -> Network {
    match info.links {
        LinkOrder::Fifo => Network::Fifo,
        LinkOrder::Any => Network::Unordered,
    }
}

#[test]
fn every_algorithm_holds_on_three_and_four_processes() {
    let mut checked = Vec::new();
    for info in registry::all() {
        for n in [3, 4] {
            let mut sim = SimConfig::new(info.name, n);
            sim.ids = Ids::Random;
            // Flooding on four processes: a ring keeps the interleavings in the thousands.
            if info.name == "timestamp-flooding" && n == 4 {
                sim.topology = Some(TopologyKind::Ring);
            }
            let mut config = CheckConfig::new(sim);
            config.timed = info.timing == Timing::Synchronous || info.lockstep;
            if !config.timed {
                config.network = network(info);
            }
            config.keep_going = true;
            let o = check(&config).unwrap_or_else(|e| panic!("{} n={n}: {e}", info.name));
            assert!(
                o.ok(),
                "{} n={n} ({:?}, timed {}): {:?}",
                info.name,
                config.network,
                config.timed,
                o.counterexample
            );
            assert!(o.verdicts.iter().all(|v| v.result == "held"), "{}: {:?}", info.name, o.verdicts);
            checked.push(info.name);
        }
    }
    assert!(checked.len() >= 2 * 14, "{checked:?}");
}
