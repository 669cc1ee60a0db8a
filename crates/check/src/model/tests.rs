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
        assert_eq!(state.parts, model.parts(&state), "after {k} steps");
        model.actions(&state, &mut actions);
        let Some(&action) = actions.get(k % actions.len().max(1)) else { break };
        state = model.step(&state, action);
    }
}
