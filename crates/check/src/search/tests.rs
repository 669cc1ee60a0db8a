//! The reduction of timed runs against the full state graph.

use std::collections::HashSet;

use elect_algos::{Algorithm, Driver};
use elect_scenario::{Scenario, ScenarioFile, SimConfig};

use super::*;
use crate::member_sim as member;
use crate::{CheckConfig, CheckError};

/// Bully's process, whose states the frontier's tests store.
type Bully = <elect_algos::bully::Bully as Algorithm>::Process;

/// What a full search of a timed run finds, and what the reduced search leaves out of it.
#[derive(Debug)]
struct Compared {
    full: usize,
    reduced: u64,
    /// States of the reduced search that keeps status changes visible everywhere.
    strict: u64,
    /// States of the full graph where nothing must happen now, before the run settles: the ends of instants.
    ends: usize,
    /// Those the reduced search did not reach.
    missed: usize,
    /// The sets of live processes that say they lead (what one-leader reads) in some state of the full graph...
    leading: usize,
    /// ... and those in no state the reduced search reached.
    leading_missed: usize,
}

struct Compare {
    scenario: Scenario,
    config: CheckConfig,
    /// Whether the reduction may take one delivery for all its orders.
    one_delivery: bool,
}

impl Driver for Compare {
    type Output = Result<Compared, CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        let mut strict = Model::new(algorithm.clone(), self.scenario.clone(), self.config.clone())?;
        strict.keep_statuses_visible();
        strict.one_delivery = self.one_delivery;
        let strict = search(&strict, Some(None), false, true, Clock::now()).states;
        let mut model = Model::new(algorithm, self.scenario, self.config)?;
        model.one_delivery = self.one_delivery;
        let reduced = search(&model, Some(None), false, true, Clock::now());
        assert!(reduced.complete && reduced.violations.is_empty(), "the run holds");
        assert!(reduced.graph.is_some(), "a timed run keeps its edges");
        let seen: HashSet<u64> = reduced.fps.into_iter().collect();
        // The full graph, from the same roots (the same choices of the process that may crash).
        let mut full = HashSet::new();
        let (mut ends, mut missed) = (0, 0);
        let (mut leading, mut leading_reached) = (HashSet::new(), HashSet::new());
        let mut stack: Vec<_> = reduced.designations.iter().map(|&doomed| model.root(doomed)).collect();
        let mut actions = Vec::new();
        while let Some(state) = stack.pop() {
            let fp = state.fingerprint();
            if !full.insert(fp) {
                continue;
            }
            if model.settling(&state) && !model.due_now(&state) {
                ends += 1;
                missed += usize::from(!seen.contains(&fp));
            }
            let leaders = (0..state.len() as u32).filter(|&i| model.leads(&state, i)).fold(0u64, |m, i| m | 1 << i);
            leading.insert(leaders);
            if seen.contains(&fp) {
                leading_reached.insert(leaders);
            }
            model.actions(&state, &mut actions);
            stack.extend(actions.iter().map(|&a| model.step(&state, a)));
        }
        let leading_missed = leading.difference(&leading_reached).count();
        let leading = leading.len();
        Ok(Compared { full: full.len(), reduced: reduced.states, strict, ends, missed, leading, leading_missed })
    }
}

fn compare(sim: SimConfig, crashes: u8, recoveries: u8) -> Compared {
    compare_with(sim, crashes, recoveries, true)
}

fn compare_with(sim: SimConfig, crashes: u8, recoveries: u8, one_delivery: bool) -> Compared {
    let mut config = CheckConfig::new(sim);
    config.timed = true;
    config.crashes = crashes;
    config.recoveries = recoveries;
    let scenario = Scenario::build(&config.sim).expect("a valid scenario");
    crate::dispatch(&config, &scenario.clone(), Compare { scenario, config: config.clone(), one_delivery })
        .expect("a model")
}

#[test]
fn a_timed_reduction_reaches_the_end_of_every_instant_the_full_graph_does() {
    let partition = {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/member-partition.toml");
        let text = std::fs::read_to_string(path).expect("the scenario ships");
        ScenarioFile::parse(path, &text).expect("a valid scenario").config
    };
    // The lease mode judges one leader at every instant: the reduction keeps visible who says it leads.
    let mut lease = member("bully", 3);
    lease.params.insert("lease", "on").expect("a known parameter");
    let cases = [
        ("bully", member("bully", 3), 1),
        ("bully, lease mode", lease, 1),
        ("garcia-molina", member("garcia-molina", 3), 1),
        ("member-partition", partition, 0),
    ];
    for (name, sim, crashes) in cases {
        let c = compare(sim, crashes, 0);
        // Enough ends of instants for the comparison to say something (83 for the partition's scenario).
        assert!(c.ends > 50, "{name}: {c:?}");
        assert_eq!(c.missed, 0, "{name}: {c:?}");
        assert!(c.reduced < c.full as u64, "{name}: {c:?}");
        // Hiding status changes until the run settles cuts states, in the lease mode too, where it hides only
        // those that change nobody's saying it leads: every set of members that say they lead at once is reached.
        assert!(c.reduced < c.strict, "{name}: {c:?}");
        if name.contains("lease") {
            assert!(c.leading > 2 && c.leading_missed == 0, "{name}: {c:?}");
        }
    }
}

#[test]
fn one_delivery_stands_for_every_order_of_deliveries_that_commute() {
    // A member that restarts is answered by its peers at one instant: the orders of their answers are one.
    let c = compare(member("bully", 3), 1, 1);
    assert!(c.ends > 1000, "{c:?}");
    assert_eq!(c.missed, 0, "{c:?}");
    // The structural reduction alone keeps every order in which a process hears its links.
    let structural = compare_with(member("bully", 3), 1, 1, false);
    assert_eq!(structural.missed, 0, "{structural:?}");
    assert!(c.reduced < structural.reduced, "{c:?} against {structural:?}");
}

/// A few distinct states of Bully at four, the model they are of, and a state of them for each number.
fn a_few_states() -> Vec<State<Bully>> {
    let config = CheckConfig::new(SimConfig::new("bully", 4));
    let scenario = Scenario::build(&config.sim).expect("a valid scenario");
    let model = Model::new(elect_algos::bully::Bully::default(), scenario, config).expect("a model");
    let mut states = vec![model.initial()];
    let mut actions = Vec::new();
    while states.len() < 5 {
        model.actions(states.last().unwrap(), &mut actions);
        states.push(model.step(states.last().unwrap(), actions[0]));
    }
    states
}

/// Pushes `count` states into `frontier`, 700 at a time, while taking them back 300 at a time, and checks each
/// one taken against the state it was given as; the numbers, in the order they were taken.
fn push_and_take(frontier: &mut Frontier<Bully>, count: u32) -> Vec<u32> {
    let states = a_few_states();
    let state = |j: u32| &states[j as usize % states.len()];
    let mut into = None;
    let (mut pushed, mut taken) = (0u32, Vec::new());
    while pushed < count || !frontier.is_empty() {
        for _ in 0..if pushed < count { 700 } else { 0 } {
            frontier.push((pushed, pushed % 3 == 0), state(pushed));
            pushed += 1;
        }
        assert_eq!(frontier.failed(), None);
        let batch = frontier.batch(300);
        assert!(batch.len() > 0 && batch.len() <= 300);
        let mut this = Vec::new();
        for k in 0..batch.len() {
            let (j, judged) = batch.read(k, &mut into);
            assert_eq!(judged, j % 3 == 0);
            assert_eq!(into.as_ref().unwrap().fingerprint(), state(j).fingerprint(), "state {j}");
            this.push(j);
        }
        let len = this.len();
        frontier.taken(len);
        assert_eq!(frontier.len(), pushed as usize - taken.len() - len);
        taken.extend(this);
    }
    let mut sorted = taken.clone();
    sorted.sort_unstable();
    assert!(sorted.into_iter().eq(0..pushed), "every state taken once");
    taken
}

#[test]
fn the_frontier_gives_states_back_first_in_first_out_or_last_in_first_out() {
    // Far more states than a block holds (10,500 of them), added while others are taken; breadth-first, batches
    // end where blocks do.
    let taken = push_and_take(&mut Frontier::new(false, None), 10_000);
    let wrong = taken.iter().enumerate().find(|&(k, &j)| j != k as u32);
    assert_eq!(wrong, None, "first in, first out");
    // Depth-first, last in, first out: each batch takes the newest states, newest first.
    let taken = push_and_take(&mut Frontier::new(true, None), 10_000);
    assert!(taken[..300].iter().copied().eq((400..700).rev()), "{:?}", &taken[..10]);
}

#[test]
fn a_frontier_on_disk_gives_its_states_back_in_the_same_order() {
    // No memory to spare: every block behind the front one goes to disk, and comes back in its turn.
    let spill = crate::Spill { memory: 0, disk: u64::MAX, dir: None };
    let mut frontier = Frontier::new(false, Some(&spill));
    let taken = push_and_take(&mut frontier, 40_000);
    let wrong = taken.iter().enumerate().find(|&(k, &j)| j != k as u32);
    assert_eq!(wrong, None, "first in, first out");
    assert!(frontier.disk_peak() > 0, "blocks went to disk");
    // A depth-first search's stack stays in memory.
    let mut frontier = Frontier::new(true, Some(&spill));
    push_and_take(&mut frontier, 10_000);
    assert_eq!(frontier.disk_peak(), 0);
}

#[test]
fn a_frontier_that_would_pass_its_disk_bound_says_so() {
    let states = a_few_states();
    let spill = crate::Spill { memory: 0, disk: 100_000, dir: None };
    let mut frontier = Frontier::new(false, Some(&spill));
    let mut pushed = 0;
    while frontier.failed().is_none() && pushed < 1_000_000 {
        frontier.push((pushed, false), &states[pushed as usize % states.len()]);
        pushed += 1;
    }
    let (bound, why) = frontier.failed().expect("the bound stopped it");
    assert_eq!(bound, "--max-disk");
    assert!(why.contains("--max-disk"), "{why}");
    assert!(frontier.disk_peak() <= 100_000);
    // Nothing was lost: what could not be written stayed in memory.
    assert_eq!(frontier.len(), pushed as usize);
}

#[test]
fn the_exact_mode_tells_apart_two_states_that_share_a_fingerprint() {
    let config = CheckConfig::new(SimConfig::new("bully", 4));
    let scenario = Scenario::build(&config.sim).expect("a valid scenario");
    let model = Model::new(elect_algos::bully::Bully::default(), scenario, config).expect("a model");
    let a = model.initial();
    let mut actions = Vec::new();
    model.actions(&a, &mut actions);
    let b = model.step(&a, actions[0]);
    let mut packed = Packed::default();
    packed.push(&b);
    // One fingerprint for two distinct states, as a collision would give.
    let fp = 42;
    for exact in [false, true] {
        let mut seen = Seen::new(exact);
        let first = seen.insert(fp, &a);
        assert_eq!(seen.get(fp, &a), Some(first));
        if exact {
            assert_eq!(seen.get(fp, &b), None);
            assert_eq!(seen.get_packed(fp, &packed, 0), None);
            let second = seen.insert_packed(fp, &packed, 0);
            assert_ne!(first, second);
            assert_eq!(seen.get(fp, &b), Some(second));
            assert_eq!(seen.get(fp, &a), Some(first));
        } else {
            assert_eq!(seen.get(fp, &b), Some(first), "by its fingerprint alone, the second is taken for the first");
        }
    }
}

#[test]
fn a_search_with_its_frontier_on_disk_finds_what_one_in_memory_finds() {
    // Garcia-Molina's member at four with a crash and a restart: thousands of states, many blocks waiting at once.
    let mut config = CheckConfig::new(member("garcia-molina", 4));
    config.timed = true;
    config.crashes = 1;
    config.recoveries = 1;
    config.max_states = usize::MAX;
    let memory = crate::check(&config).expect("a check");
    config.spill = Some(crate::Spill { memory: 0, disk: u64::MAX, dir: None });
    let disk = crate::check(&config).expect("a check");
    assert!(memory.complete && disk.complete);
    assert!(memory.memory.frontier_peak > 4 * super::frontier::BLOCK as u64, "{:?}", memory.memory);
    assert_eq!((memory.memory.disk_peak, disk.memory.disk_error.as_deref()), (0, None));
    assert!(disk.memory.disk_peak > 0, "blocks went to disk");
    let figures = |o: &crate::Outcome| (o.states, o.transitions, o.depth, o.terminal, o.verdicts.clone());
    assert_eq!(figures(&memory), figures(&disk));
    // With a bound too small for a block, the search stops, not proven, and says why.
    config.spill = Some(crate::Spill { memory: 0, disk: 1000, dir: None });
    let bounded = crate::check(&config).expect("a check");
    assert!(!bounded.complete);
    assert_eq!(bounded.stopped, Some("--max-disk"));
    assert!(bounded.memory.disk_error.as_deref().is_some_and(|e| e.contains("--max-disk")), "{:?}", bounded.memory);
    // What "sometimes" needs may have been seen; nothing else is proven.
    let unproven = |v: &crate::Verdict| v.modality == "sometimes" || v.result == "unknown";
    assert!(bounded.verdicts.iter().all(unproven), "{:?}", bounded.verdicts);
}

/// The designations of a search under `config`, and whether it stopped on a bound.
struct Designations {
    config: CheckConfig,
    scenario: Scenario,
}

impl Driver for Designations {
    type Output = Result<(usize, Option<&'static str>), CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        let model = Model::new(algorithm, self.scenario, self.config)?;
        let pass = search(&model, Some(None), false, true, Clock::now());
        Ok((pass.designations.len(), pass.stopped))
    }
}

#[test]
fn a_search_out_of_time_stops_before_it_weighs_designating() {
    let run = |max_time| {
        let mut config = CheckConfig::new(member("bully", 4));
        (config.timed, config.crashes, config.max_time) = (true, 1, max_time);
        let scenario = Scenario::build(&config.sim).expect("a valid scenario");
        crate::dispatch(&config, &scenario, Designations { config: config.clone(), scenario: scenario.clone() })
            .expect("a model")
    };
    // With time, the look ahead finds that designating pays: one root per member that may crash.
    assert_eq!(run(None), (4, None));
    // Out of time from the start, the look ahead ends at once (it is not worth it), and so does the search.
    assert_eq!(run(Some(std::time::Duration::ZERO)), (1, Some("--max-time")));
}
