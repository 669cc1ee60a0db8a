use super::state::InFlight;
use super::*;

/// Timed Bully on three processes with one crash, and `recoveries` recoveries.
fn bully(recoveries: u8) -> Model<elect_algos::bully::Bully> {
    let mut config = CheckConfig::new(elect_scenario::SimConfig::new("bully", 3));
    config.timed = true;
    config.crashes = 1;
    config.recoveries = recoveries;
    let scenario = Scenario::build(&config.sim).expect("a valid scenario");
    Model::new(elect_algos::bully::Bully::default(), scenario, config).expect("a model")
}

/// How many messages in flight are for position `node`.
fn for_node<A: Algorithm>(model: &Model<A>, state: &State<A::Process>, node: u32) -> usize {
    model.in_flight(state).filter(|&(slot, _)| model.receiver(slot).0 == node).count()
}

#[test]
fn a_message_in_flight_is_kept_once_and_numbered() {
    assert!(std::mem::size_of::<(u32, InFlight)>() <= 48, "a message in flight costs a few bytes");
    let model = bully(0);
    let state = model.initial();
    let sent: Vec<_> = model.in_flight(&state).collect();
    assert!(sent.len() >= 2, "the election's first messages are on their way");
    // Equal messages share a number; every number gives back its message.
    for (k, (slot, msg)) in sent.iter().enumerate() {
        let index = state.msgs[..k].iter().filter(|(s, _)| s == slot).count() as u32;
        assert_eq!(&model.message(&state, *slot, index), msg);
    }
    let first = state.msgs[0].1;
    assert_eq!(first.fp, fingerprint(&sent[0].1));
    assert_eq!(model.messages.intern(sent[0].1.clone(), first.fp), first.id);
    let (table, processes) = model.interned();
    assert!(table <= sent.len(), "{table} messages numbered for {} in flight", sent.len());
    assert!(processes >= state.len(), "each process numbered as it started and as it initiated");
}

#[test]
fn equal_processes_share_a_number() {
    let model = bully(0);
    let (a, b) = (model.initial(), model.initial());
    assert_eq!(a.procs, b.procs, "the same processes, numbered once");
    let crashed = model.step(&a, Action::Crash { node: 0 });
    assert!(!crashed.live(0) && crashed.live(1));
    assert_eq!(model.process(&crashed, 0), None);
    assert_eq!(model.process(&crashed, 1), model.process(&a, 1), "the others are as they were");
}

#[test]
fn messages_for_a_process_that_cannot_come_back_are_not_kept() {
    // At the start every process asks the stronger ones: the strongest (position 2) has messages coming.
    let (keeps, drops) = (bully(1), bully(0));
    assert!(for_node(&drops, &drops.initial(), 2) > 0, "the election's first messages are on their way");
    // With a recovery left, a crashed process may come back: what is on its way to it is kept, to be lost
    // when it is due (or delivered, if it is back by then).
    let crashed = keeps.step(&keeps.initial(), Action::Crash { node: 2 });
    assert!(for_node(&keeps, &crashed, 2) > 0);
    // Without one it is dropped at the crash, and nothing sent to it afterwards is kept.
    let mut state = drops.step(&drops.initial(), Action::Crash { node: 2 });
    let mut actions = Vec::new();
    for _ in 0..200 {
        assert_eq!(for_node(&drops, &state, 2), 0, "a message for the crashed process was kept");
        drops.actions(&state, &mut actions);
        let Some(&action) = actions.first() else { break };
        state = drops.step(&state, action);
    }
}

#[test]
fn a_fingerprint_does_not_depend_on_the_order_the_state_was_reached_in() {
    let mut config = CheckConfig::new(elect_scenario::SimConfig::new("bully", 4));
    config.network = Network::Unordered;
    let scenario = Scenario::build(&config.sim).expect("a valid scenario");
    let model = Model::new(elect_algos::bully::Bully::default(), scenario, config).expect("a model");
    let start = model.initial();
    let mut actions = Vec::new();
    model.actions(&start, &mut actions);
    // Two deliveries to two processes, on two links: they commute.
    let receiver = |a: &Action| match *a {
        Action::Deliver { link, .. } => Some((link, model.receiver(link).0)),
        _ => None,
    };
    let (a, b) = actions
        .iter()
        .flat_map(|a| actions.iter().map(move |b| (*a, *b)))
        .find(|(a, b)| matches!((receiver(a), receiver(b)), (Some(x), Some(y)) if x.0 != y.0 && x.1 != y.1))
        .expect("two deliveries to two processes");
    let ab = model.step(&model.step(&start, a), b);
    let ba = model.step(&model.step(&start, b), a);
    assert_eq!(ab.fingerprint(), ba.fingerprint());
    assert_ne!(model.step(&start, a).fingerprint(), model.step(&start, b).fingerprint());
    // Along a run, the share kept up to date is the one counted from scratch.
    let mut state = ab;
    for k in 0..200 {
        assert_eq!(state.rest.parts, model.parts(&state), "after {k} steps");
        model.actions(&state, &mut actions);
        let Some(&action) = actions.get(k % actions.len().max(1)) else { break };
        state = model.step(&state, action);
    }
}

/// Whether two states are the same, clock included.
fn same<P: Process>(a: &State<P>, b: &State<P>) -> bool {
    a.fingerprint() == b.fingerprint()
        && (a.rest.now, a.rest.steady, a.rest.parts) == (b.rest.now, b.rest.steady, b.rest.parts)
        && a.procs == b.procs
        && a.msgs == b.msgs
        && (a.timers.len(), a.durable.len(), a.declared.len()) == (b.timers.len(), b.durable.len(), b.declared.len())
}

#[test]
fn packed_states_read_back_as_they_were_stored() {
    // Timed, with a crash and a recovery: states with timers and durable state, messages coming and going.
    let model = bully(1);
    let mut states = vec![model.initial()];
    let mut actions = Vec::new();
    for k in 0..120 {
        let state = states.last().unwrap();
        model.actions(state, &mut actions);
        let Some(&action) = actions.get(k % actions.len().max(1)) else { break };
        states.push(model.step(state, action));
    }
    assert!(states.iter().any(|s| !s.timers.is_empty()) && states.iter().any(|s| !s.durable.is_empty()));
    assert!(states.iter().any(|s| s.msgs.len() > 1) && states.iter().any(|s| s.msgs.is_empty()));
    let mut packed = Packed::default();
    for state in &states {
        packed.push(state);
    }
    assert_eq!(packed.len(), states.len());
    // Read into one state again and again, whose vectors are sometimes longer than the next state's.
    let mut into = states[0].clone();
    for i in (0..states.len()).rev().chain(0..states.len()) {
        packed.read(i, &mut into);
        assert!(same(&into, &states[i]), "state {i} read back");
        assert!(same(&packed.get(i), &states[i]));
    }
    // Every other state copied into another, then the first half kept: the rest is forgotten.
    let mut copied = Packed::default();
    for i in (0..states.len()).step_by(2) {
        copied.push_from(&packed, i);
    }
    for (k, i) in (0..states.len()).step_by(2).enumerate() {
        assert!(same(&copied.get(k), &states[i]), "state {i} copied");
    }
    let half = states.len() / 2;
    packed.truncate(half);
    packed.push(&states[half + 1]);
    assert_eq!(packed.len(), half + 1);
    assert!(same(&packed.get(half - 1), &states[half - 1]));
    assert!(same(&packed.get(half), &states[half + 1]), "a state stored after a truncation");
    packed.clear();
    assert_eq!(packed.len(), 0);
}
