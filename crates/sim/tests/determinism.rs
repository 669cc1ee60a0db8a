//! The same seed and flags give the same trace, bit for bit; different seeds give different runs.

mod common;

use common::{SharedBuf, config, units};
use elect_core::NodeId;
use elect_scenario::{Delay, Ids, InitiatorSpec, Monitor, NodeAt, SimConfig};
use elect_sim::simulate;

fn digest(cfg: &SimConfig) -> [u8; 32] {
    let bytes = trace(cfg);
    assert!(bytes.len() > 100, "the trace is written");
    *blake3::hash(&bytes).as_bytes()
}

fn randomized(algorithm: &str, seed: u64) -> SimConfig {
    config(algorithm, 12, |c| {
        c.seed = seed;
        c.ids = Ids::Random;
        c.initiators = InitiatorSpec::Random(3);
        c.delay = if seed % 2 == 0 { Delay::Uniform(units(1), units(9)) } else { Delay::Exp(units(2)) };
        if elect_algos::lookup(algorithm).unwrap().timing == elect_algos::Timing::Synchronous {
            // Timeouts need a delay bound.
            c.delay = Delay::Uniform(units(1) / (seed + 1), units(1));
        }
        if elect_algos::lookup(algorithm).unwrap().lockstep {
            c.initiators = InitiatorSpec::All;
        }
        if algorithm == "bully" {
            c.delay = Delay::Uniform(units(1) / 2, units(3));
            c.crashes.push(NodeAt { id: NodeId(12), at: 0 });
            c.crashes.push(NodeAt { id: NodeId(11), at: units(2) });
        }
    })
}

#[test]
fn same_seed_same_trace_for_every_algorithm() {
    for info in elect_algos::registry::all() {
        let mut digests = Vec::new();
        for seed in 1..=6 {
            let cfg = randomized(info.name, seed);
            let first = digest(&cfg);
            assert_eq!(first, digest(&cfg), "{} is not deterministic", cfg.command_line());
            digests.push(first);
        }
        digests.sort();
        digests.dedup();
        assert_eq!(digests.len(), 6, "{}: different seeds should give different runs", info.name);
    }
}

#[test]
fn the_trace_names_every_event_in_order() {
    let buf = SharedBuf::default();
    let cfg = config("chang-roberts", 3, |c| c.ids = Ids::Descending);
    let report = simulate(&cfg, Some(Box::new(buf.clone()))).unwrap();
    let lines: Vec<serde_json::Value> =
        String::from_utf8(buf.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["ev"], "run");
    assert_eq!(lines[0]["ids"], serde_json::json!([3, 2, 1]));
    let count = |ev: &str| lines.iter().filter(|l| l["ev"] == ev).count() as u64;
    assert_eq!(count("send"), report.messages.total);
    assert_eq!(count("deliver"), report.messages.total);
    assert_eq!(count("command"), 3);
    assert_eq!(count("start"), 3);
    let first_send = lines.iter().find(|l| l["ev"] == "send").unwrap();
    assert_eq!(first_send["kind"], "token");
    assert_eq!(first_send["msg"], serde_json::json!({"token": {"id": 3}}));
    assert_eq!(first_send["at"], 1);
    let times: Vec<f64> = lines.iter().filter_map(|l| l["t"].as_f64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "time never goes backwards");
    assert_eq!(lines.last().unwrap()["ev"], "end");
}

#[test]
fn links_are_fifo_by_default_and_unordered_on_request() {
    // A trace shows, per directed link, the order of sends and of deliveries.
    let order = |fifo: bool, seed: u64| {
        let buf = SharedBuf::default();
        let cfg = config("lelann", 12, |c| {
            c.delay = Delay::Uniform(units(1), units(9));
            c.fifo = fifo;
            c.seed = seed;
        });
        simulate(&cfg, Some(Box::new(buf.clone()))).unwrap();
        let lines: Vec<serde_json::Value> =
            String::from_utf8(buf.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let delivered: Vec<(u64, u64, u64)> = lines
            .iter()
            .filter(|l| l["ev"] == "deliver")
            .map(|l| (l["from"].as_u64().unwrap(), l["node"].as_u64().unwrap(), l["id"].as_u64().unwrap()))
            .collect();
        // Reordered if some link delivers a later-sent message (higher id) before an earlier one.
        delivered
            .iter()
            .enumerate()
            .any(|(i, a)| delivered[i + 1..].iter().any(|b| (b.0, b.1) == (a.0, a.1) && b.2 < a.2))
    };
    assert!((1..=5).all(|seed| !order(true, seed)), "FIFO links never reorder");
    let reordered = (1..=5).any(|seed| order(false, seed));
    assert!(reordered, "unordered links with random delays reorder some messages");
}

/// The trace's lines whose time is before `t` (in time units), the run's header and end aside.
fn before(trace: &[u8], t: f64) -> Vec<String> {
    String::from_utf8(trace.to_vec())
        .unwrap()
        .lines()
        .filter(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            r["ev"] != "end" && r["t"].as_f64().is_some_and(|x| x < t)
        })
        .map(str::to_owned)
        .collect()
}

/// The JSON-lines trace of the run `cfg` describes.
fn trace(cfg: &SimConfig) -> Vec<u8> {
    let buf = SharedBuf::default();
    simulate(cfg, Some(Box::new(buf.clone()))).unwrap();
    buf.bytes()
}

/// A change to a run's configuration: the fault it adds.
type Fault = Box<dyn Fn(&mut SimConfig)>;

/// What `elect serve`'s live view relies on: a fault added at time T changes nothing before T, so a run replayed
/// with the fault picks up exactly where the class was watching.
#[test]
fn a_fault_added_at_t_leaves_everything_before_t_unchanged() {
    for algorithm in ["bully", "garcia-molina", "invitation", "chang-roberts"] {
        let base = config(algorithm, 5, |c| {
            c.seed = 7;
            c.delay = Delay::Uniform(units(1), units(3));
            // The monitor's heartbeats keep a mesh's run going after its election; a ring's has none.
            c.monitor = (algorithm != "chang-roberts").then_some(Monitor::member(elect_core::InT(2)));
            c.until = Some(units(120));
        });
        let whole = trace(&base);
        let with = |f: &dyn Fn(&mut SimConfig)| {
            let mut cfg = base.clone();
            f(&mut cfg);
            trace(&cfg)
        };
        let faults: [(&str, Fault); 4] = [
            ("--crash 5@40", Box::new(|c| c.crashes.push("5@40".parse().unwrap()))),
            ("--link-down 2-3@40", Box::new(|c| c.link_downs.push("2-3@40".parse().unwrap()))),
            ("--link-down 4>5@40..60", Box::new(|c| c.link_downs.push("4>5@40..60".parse().unwrap()))),
            (
                "--crash 2@30 --recover 2@40",
                Box::new(|c| {
                    c.crashes.push("2@30".parse().unwrap());
                    c.recoveries.push("2@40".parse().unwrap());
                }),
            ),
        ];
        for (flags, fault) in &faults {
            let changed = with(fault.as_ref());
            let cut = if flags.contains("2@30") { 30.0 } else { 40.0 };
            let (a, b) = (before(&whole, cut), before(&changed, cut));
            assert!(a.len() > 20, "{algorithm}: the run has a past before t = {cut}");
            assert_eq!(a, b, "{algorithm} {flags}: the trace before t = {cut} changed: {}", base.command_line());
            assert_ne!(whole, changed, "{algorithm} {flags}: the fault changed nothing after it");
        }
    }
}

#[test]
fn a_plain_run_counts_as_its_traced_twin_does() {
    // Untraced, on a perfect network under a constant delay, a step's sends go straight into the queue; traced,
    // every effect goes through the effects buffer and the network model. The two must not differ in anything
    // the report says, for any algorithm, with crashes and recoveries on Bully's run.
    for info in elect_algos::registry::all() {
        let cfg = config(info.name, 9, |c| {
            c.ids = Ids::Random;
            c.seed = 7;
            if info.lockstep {
                c.initiators = InitiatorSpec::All;
            }
            if info.name == "bully" {
                c.crashes.push(NodeAt { id: NodeId(9), at: units(3) });
            }
        });
        let plain = simulate(&cfg, None).unwrap();
        let traced = simulate(&cfg, Some(Box::new(SharedBuf::default()))).unwrap();
        assert!(plain.messages.total > 0, "{}: nothing was sent", cfg.command_line());
        assert_eq!(plain, traced, "{}", cfg.command_line());
    }
}
