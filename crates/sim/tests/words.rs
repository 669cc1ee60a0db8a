//! Every algorithm speaks in its own words: each step of a traced run names a rule its chapter of the book states,
//! every message and timer reads as a line of the notes, and every process's view is its role and values, never
//! Rust's `Debug` form.

mod common;

use common::{SharedBuf, config, units};
use elect_algos::book;
use elect_scenario::{Delay, Ids, Monitor, SimConfig, TopologyKind};
use elect_sim::simulate;
use serde_json::Value;

/// The trace of a run, one JSON object per line.
fn traced(cfg: &SimConfig) -> Vec<Value> {
    let buf = SharedBuf::default();
    simulate(cfg, Some(Box::new(buf.clone()))).unwrap_or_else(|e| panic!("{}: {e}", cfg.command_line()));
    String::from_utf8(buf.bytes()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// What text shown to a person must not look like: Rust's `Debug` form of a struct, a port or a rank.
fn reads_as_debug(text: &str) -> bool {
    ["{", "}", "Port(", "Rank(", "Some(", "None", "NodeId("].iter().any(|smell| text.contains(smell))
}

/// Checks the run of `cfg`: every delivery is followed by the rule its receiver applied, a rule its chapters
/// state; texts and views read as words. Returns the rules named.
fn speaks_its_own_words(algorithm: &str, cfg: &SimConfig) -> Vec<String> {
    let listed: Vec<String> = book::rules(algorithm).into_iter().map(|r| r.rule).collect();
    let lines = traced(cfg);
    let command = cfg.command_line();
    let mut named = Vec::new();
    let mut views = 0;
    for (k, line) in lines.iter().enumerate() {
        match line["ev"].as_str().unwrap() {
            "deliver" => {
                let text = line["text"].as_str().unwrap();
                assert!(!text.is_empty() && !reads_as_debug(text), "{command}: message text {text:?}");
                let next = &lines[k + 1];
                assert_eq!(next["ev"], "rule", "{command}: no rule named after {line}");
                assert_eq!(next["node"], line["node"], "{command}: the rule after {line} is another process's");
            }
            "send" => {
                let text = line["text"].as_str().unwrap();
                assert!(!text.is_empty() && !reads_as_debug(text), "{command}: message text {text:?}");
            }
            "timer" => {
                let text = line["text"].as_str().unwrap();
                assert!(!text.is_empty() && !reads_as_debug(text), "{command}: timer text {text:?}");
            }
            "rule" => {
                let rule = line["rule"].as_str().unwrap().to_owned();
                assert!(listed.contains(&rule), "{command}: the rule {rule:?} is in no chapter of the book");
                if !named.contains(&rule) {
                    named.push(rule);
                }
            }
            "view" => {
                views += 1;
                let view = &line["view"];
                let role = view["role"].as_str().unwrap();
                assert!(!role.is_empty() && !reads_as_debug(role), "{command}: role {role:?}");
                for v in view["values"].as_array().unwrap() {
                    let value = v["value"].as_str().unwrap();
                    assert!(!reads_as_debug(value), "{command}: {} {value:?}", v["name"]);
                }
            }
            _ => {}
        }
    }
    assert!(views > 0, "{command}: no process ever showed a view");
    assert!(!named.is_empty(), "{command}: no rule named");
    named
}

#[test]
fn every_algorithm_lists_the_rules_its_chapter_states_in_the_same_order() {
    for info in elect_algos::registry::all() {
        let (chapter, stated) =
            book::own_rules(info.name).unwrap_or_else(|| panic!("{}: no chapter in the book", info.name));
        let labels: Vec<&str> = stated.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, info.rules, "{}: its rules and those docs/{chapter} states", info.name);
        for (label, text) in &stated {
            assert!(!text.is_empty(), "{}: the rule {label:?} has no sentence in docs/{chapter}", info.name);
        }
    }
}

#[test]
fn every_algorithm_names_its_rules_and_shows_words_in_its_showcase() {
    for info in elect_algos::registry::all() {
        let cfg = SimConfig::showcase(info, 6, 1);
        let named = speaks_its_own_words(info.name, &cfg);
        for rule in &named {
            assert!(info.rules.contains(&rule.as_str()), "{}: {rule:?} is not in its Info::rules", info.name);
        }
    }
}

#[test]
fn the_deployed_process_names_the_monitor_s_and_the_member_s_rules_through_a_crash() {
    for algorithm in ["bully", "garcia-molina", "chang-roberts"] {
        let cfg = config(algorithm, 5, |c| {
            c.ids = Ids::Random;
            c.seed = 2;
            c.delay = Delay::Uniform(units(1) / 5, units(1));
            c.monitor = Some(Monitor::member(elect_core::InT(2)));
            if algorithm == "chang-roberts" {
                c.topology = Some(TopologyKind::Complete);
            }
            c.crash_leader_at = vec![units(40)];
            c.until = Some(units(120));
        });
        let named = speaks_its_own_words(algorithm, &cfg);
        for rule in [elect_algos::monitor::rule::BEAT, elect_algos::monitor::rule::ALIVE] {
            assert!(named.iter().any(|r| r == rule), "{algorithm}: {rule:?} never named; named {named:?}");
        }
        assert!(
            named.iter().any(|r| r == elect_algos::monitor::rule::ASK || r == elect_algos::monitor::rule::DEPOSE),
            "{algorithm}: the leader's crash was never suspected; named {named:?}"
        );
    }
}

#[test]
fn algorithms_written_in_rounds_name_the_synchronizers_rules_too() {
    for sync in ["abd", "alpha", "beta", "gamma"] {
        let cfg = config("floodmax", 6, |c| {
            c.topology = Some(TopologyKind::Ring);
            c.ids = Ids::Random;
            c.seed = 3;
            c.synchronizer = Some(sync.parse().unwrap());
        });
        let named = speaks_its_own_words("floodmax", &cfg);
        assert!(
            named.iter().any(|r| elect_algos::synchronizers::RULES.contains(&r.as_str())),
            "{sync}: no rule of the synchronizer named; named {named:?}"
        );
    }
}
