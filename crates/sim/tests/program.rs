//! An algorithm written as a program: Chang-Roberts, written against the process protocol (in Rust, speaking JSON
//! through an in-process stepper), gives exactly what the built-in Chang-Roberts gives.

mod common;

use common::config;
use elect_algos::program::Program;
use elect_algos::program::example::ChangRobertsInJson;
use elect_algos::{Algorithm, Params};
use elect_scenario::{Ids, Scenario, SimConfig, TopologyKind};
use elect_sim::{Report, Sim};

fn program(forward_smaller: bool) -> Program {
    let name = if forward_smaller { "in-json-forwarding-smaller" } else { "in-json" };
    Program::load(name, Box::new(ChangRobertsInJson { forward_smaller }), &Params::new()).unwrap()
}

fn ring(n: usize, seed: u64) -> SimConfig {
    config("chang-roberts", n, |c| {
        c.topology = Some(TopologyKind::Ring);
        c.ids = Ids::Random;
        c.seed = seed;
    })
}

fn run<A: Algorithm>(algorithm: A, cfg: &SimConfig) -> Report {
    let mut sim = Sim::new(algorithm, Scenario::build(cfg).unwrap());
    sim.run().unwrap();
    sim.report()
}

#[test]
fn chang_roberts_written_as_a_program_counts_as_the_built_in_one_on_twenty_arrangements() {
    for seed in 1..=20 {
        let cfg = ring(8, seed);
        let built_in = common::run_ok(&cfg);
        let program = program(false);
        let mine = run(program.clone(), &cfg);
        assert_eq!(program.failure(), None);
        assert_eq!(mine.leader, built_in.leader, "seed {seed}");
        for kind in ["token", "elected"] {
            assert_eq!(mine.messages.kind(kind), built_in.messages.kind(kind), "seed {seed}: {kind}");
        }
        assert_eq!(mine.messages.total, built_in.messages.total, "seed {seed}");
        assert!(mine.ok(), "seed {seed}: {:?}", mine.properties.violations);
    }
}

#[test]
fn a_program_with_a_planted_flaw_breaks_uniqueness_as_the_built_in_flaw_does() {
    let mut cfg = ring(8, 3);
    let mine = run(program(true), &cfg);
    cfg.params = Params::parse(["bug=forward-smaller"]).unwrap();
    let built_in = common::run(&cfg);
    assert!(!mine.ok());
    let violated = |r: &Report| r.properties.violations.iter().map(|v| v.property).collect::<Vec<_>>();
    assert_eq!(violated(&mine), violated(&built_in));
}

#[test]
fn a_program_run_repeats_bit_for_bit_with_its_seed() {
    let cfg = config("chang-roberts", 8, |c| {
        c.topology = Some(TopologyKind::Ring);
        c.ids = Ids::Random;
        c.seed = 7;
        c.delay = elect_scenario::Delay::Uniform(common::units(1) / 10, common::units(1));
    });
    let traced = || {
        let buf = common::SharedBuf::default();
        let mut sim = Sim::new(program(false), Scenario::build(&cfg).unwrap());
        sim.trace_to(Box::new(buf.clone()));
        sim.run().unwrap();
        drop(sim);
        String::from_utf8(buf.bytes()).unwrap()
    };
    let first = traced();
    assert!(first.lines().count() > 50, "{first}");
    assert_eq!(first, traced());
}
