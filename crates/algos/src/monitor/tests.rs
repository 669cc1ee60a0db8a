//! The monitor's unit tests: reserved rounds, the pre-vote, and the rules for a suspect that is alive.

use elect_core::driver;
use elect_core::{Command, Duration, Effect, EffectOf, Epoch, Event, EventOf, Instant, NodeId, Process, Span};

use super::*;
use crate::algorithm::Algorithm;
use crate::bully::Bully;
use crate::params::Params;

type Node = Monitored<Bully>;
type Effects = Vec<EffectOf<Node>>;

const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const C: NodeId = NodeId(3);

/// Process `me` of Bully under the monitor on the complete graph on A, B and C, not started yet.
fn build(me: NodeId) -> Node {
    let monitor =
        LeaderMonitor::new(Bully::from_params(&Params::default()).unwrap(), MonitorConfig::new(InT(2), 1, InT(5)));
    crate::testing::on_complete_graph(me, &[A, B, C], Duration::from_ticks(1000), |setup| monitor.build(setup))
}

fn step(p: &mut Node, event: EventOf<Node>) -> Effects {
    let mut effects = Vec::new();
    driver::handle(p, Instant::ZERO, event, &mut effects);
    effects
}

/// What the step made durable, in order.
fn persisted(effects: &Effects) -> Vec<Epoch> {
    effects.iter().filter_map(|e| if let Effect::Persist((r, _)) = e { Some(*r) } else { None }).collect()
}

/// Whether the step's first effect that leaves the process (a send) comes after its last write.
fn written_before_sent(effects: &Effects) -> bool {
    let last_write = effects.iter().rposition(|e| matches!(e, Effect::Persist(_)));
    let first_send = effects.iter().position(|e| matches!(e, Effect::Send { .. }));
    matches!((last_write, first_send), (Some(w), Some(s)) if w < s)
}

fn join(p: &mut Node, from: NodeId, epoch: Epoch) -> Effects {
    let from = p.fixed.setup.neighbors.iter().find(|n| n.id == from).unwrap().port;
    step(p, Event::Message { from, msg: MonitorMsg::Join { epoch, down: None } })
}

#[test]
fn one_write_reserves_the_rounds_ahead_and_a_process_writes_again_only_beyond_them() {
    let mut b = build(B);
    assert_eq!(persisted(&step(&mut b, Event::Start { restored: None })), [Epoch::of(RESERVED_ROUNDS + 1, B)]);
    let started = step(&mut b, Event::Command(Command::Initiate));
    assert_eq!((b.epoch(), persisted(&started)), (Epoch::of(1, B), vec![]), "round 1 is reserved");
    assert!(started.iter().any(|e| matches!(e, Effect::Send { .. })), "its election starts at once");
    // Joining epochs of other processes, up to the last reserved round, writes nothing.
    assert!(persisted(&join(&mut b, C, Epoch::of(5, C))).is_empty());
    assert!(persisted(&join(&mut b, A, Epoch::of(RESERVED_ROUNDS + 1, A))).is_empty());
    // Beyond it, the next reservation is durable before anything of the new epoch leaves.
    let beyond = join(&mut b, C, Epoch::of(RESERVED_ROUNDS + 2, C));
    assert_eq!(persisted(&beyond), [Epoch::of(2 * RESERVED_ROUNDS + 2, B)]);
    assert!(written_before_sent(&beyond), "{beyond:?}");
    assert_eq!(b.epoch(), Epoch::of(RESERVED_ROUNDS + 2, C));
}

#[test]
fn a_recovered_process_starts_above_every_epoch_it_was_in_and_reserves_before_it_tells_anyone() {
    let mut b = build(B);
    step(&mut b, Event::Start { restored: None });
    step(&mut b, Event::Command(Command::Initiate));
    join(&mut b, C, Epoch::of(9, C));
    let reserved = Epoch::of(RESERVED_ROUNDS + 1, B);
    // It crashes; its durable state is its reservation.
    let mut again = build(B);
    assert!(persisted(&step(&mut again, Event::Start { restored: Some((reserved, None)) })).is_empty());
    assert!(again.epoch() >= Epoch::of(9, C), "the epoch it shows does not go backwards");
    let started = step(&mut again, Event::Command(Command::Initiate));
    assert_eq!(again.epoch(), Epoch::of(RESERVED_ROUNDS + 2, B), "above every round it reserved");
    assert_eq!(persisted(&started), [Epoch::of(2 * RESERVED_ROUNDS + 2, B)]);
    assert!(written_before_sent(&started), "{started:?}");
    // An epoch it may have been in before the crash is stale now.
    assert!(persisted(&join(&mut again, C, Epoch::of(RESERVED_ROUNDS + 1, C))).is_empty());
    assert_eq!(again.epoch(), Epoch::of(RESERVED_ROUNDS + 2, B));
}

#[test]
fn a_follower_that_suspects_its_leader_reserves_before_its_join_leaves() {
    let mut a = build(A);
    step(&mut a, Event::Start { restored: Some((Epoch::of(RESERVED_ROUNDS, A), None)) });
    step(&mut a, Event::Command(Command::Initiate));
    let reserved = 2 * RESERVED_ROUNDS + 1;
    assert_eq!(a.reserved, Epoch::of(reserved, A));
    // C, stronger, beats in the last reserved round: A follows it without an election, and without a write.
    let from = a.fixed.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
    let heartbeat = MonitorMsg::Heartbeat { epoch: Epoch::of(reserved, C), seq: 1, down: None };
    assert!(persisted(&step(&mut a, Event::Message { from, msg: heartbeat })).is_empty());
    assert_eq!(a.status().leader, Some(C));
    // C falls silent, and B does not hear it either: A starts the next round, beyond its reservation, and tells
    // everybody.
    let suspected = suspect(&mut a, C, B);
    assert_eq!(a.epoch(), Epoch::of(reserved + 1, A));
    assert_eq!(persisted(&suspected), [Epoch::of(reserved + 1 + RESERVED_ROUNDS, A)]);
    let first_send = suspected.iter().find(|e| matches!(e, Effect::Send { .. }));
    assert!(matches!(first_send, Some(Effect::Send { msg: MonitorMsg::Join { .. }, .. })), "{suspected:?}");
    assert!(written_before_sent(&suspected), "{suspected:?}");
}

/// `p`'s watch on its leader `leader` runs out: it asks the others whether they hear it, and nothing else.
/// Then `other` answers that it does not: the returned step.
fn suspect(p: &mut Node, leader: NodeId, other: NodeId) -> Effects {
    let asked = step(p, Event::Timer(MonitorTimer::Watch));
    let epoch = p.epoch();
    let questions: Vec<NodeId> = asked
        .iter()
        .filter_map(|e| match e {
            Effect::Send { to, msg: MonitorMsg::PreVote { epoch: e, leader: l } } if *e == epoch && *l == leader => {
                Some(p.neighbor(*to))
            }
            _ => None,
        })
        .collect();
    assert_eq!(questions.len(), 2, "a question to each other process: {asked:?}");
    assert!(persisted(&asked).is_empty() && p.status().leader == Some(leader), "{asked:?}");
    let from = p.fixed.setup.neighbors.iter().find(|n| n.id == other).unwrap().port;
    step(p, Event::Message { from, msg: MonitorMsg::PreVoteReply { epoch, hears: false } })
}

/// B, having followed C, stops hearing it (its watch runs out) or hears that A did.
fn follower_of_c() -> Node {
    let mut b = build(B);
    step(&mut b, Event::Start { restored: None });
    step(&mut b, Event::Command(Command::Initiate));
    let from = b.fixed.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
    step(&mut b, Event::Message { from, msg: MonitorMsg::Heartbeat { epoch: Epoch::of(1, C), seq: 1, down: None } });
    assert_eq!(b.status().leader, Some(C));
    b
}

/// Whether the step sends the algorithm's `coordinator` (B bullies A).
fn claims(effects: &Effects) -> bool {
    effects.iter().any(|e| {
        matches!(e, Effect::Send { msg: MonitorMsg::Inner { msg: crate::bully::Msg::Coordinator { .. }, .. }, .. })
    })
}

#[test]
fn a_follower_deaf_to_a_leader_the_others_hear_keeps_following_it() {
    let mut b = follower_of_c();
    let epoch = b.epoch();
    step(&mut b, Event::Timer(MonitorTimer::Watch));
    // A heard C lately: with C, a majority hears it. B keeps following C in its epoch, and looks again one
    // heartbeat period later.
    let a = b.fixed.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
    let kept = step(&mut b, Event::Message { from: a, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
    assert_eq!((b.epoch(), b.status().leader), (epoch, Some(C)), "{kept:?}");
    assert!(kept.iter().all(|e| !matches!(e, Effect::Send { .. })), "{kept:?}");
    let watch = Span::exactly(b.fixed.heartbeat);
    assert!(kept.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{kept:?}");
    // It still hears nothing; asked again, A still hears C: B has been kept twice in a row.
    step(&mut b, Event::Timer(MonitorTimer::Watch));
    let again = step(&mut b, Event::Message { from: a, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
    assert!(again.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{again:?}");
    // This time A does not hear C either. The pre-votes before found the contrary, so B confirms it once, a
    // heartbeat period later (the whole machine may have stalled).
    let confirming = suspect(&mut b, C, A);
    assert_eq!((b.epoch(), b.status().leader), (epoch, Some(C)), "{confirming:?}");
    assert!(confirming.contains(&Effect::SetTimer { timer: MonitorTimer::Watch, after: watch }), "{confirming:?}");
    // A still does not hear C: B opens a new epoch.
    let suspected = suspect(&mut b, C, A);
    assert_eq!((b.epoch(), b.status().leader), (Epoch::of(2, B), Some(B)), "{suspected:?}");
}

#[test]
fn a_follower_asks_again_while_answers_are_missing_then_moves_on() {
    let mut b = follower_of_c();
    step(&mut b, Event::Timer(MonitorTimer::Watch));
    for _ in 1..PRE_VOTE_TRIES {
        let again = step(&mut b, Event::Timer(MonitorTimer::Poll));
        let asked = again.iter().filter(|e| matches!(e, Effect::Send { msg: MonitorMsg::PreVote { .. }, .. }));
        assert_eq!((asked.count(), b.status().leader), (2, Some(C)), "{again:?}");
    }
    step(&mut b, Event::Timer(MonitorTimer::Poll));
    assert_eq!((b.epoch(), b.status().leader), (Epoch::of(2, B), Some(B)));
}

#[test]
fn the_answers_of_every_try_of_a_pre_vote_add_up() {
    // Five processes; 4 follows 5 and suspects it. A majority is three: 4's own word does not count, so two
    // others who hear 5 keep it (with 5 vouched for), whichever try their answers came in.
    let ids = [NodeId(1), NodeId(2), NodeId(3), NodeId(4), NodeId(5)];
    let monitor =
        LeaderMonitor::new(Bully::from_params(&Params::default()).unwrap(), MonitorConfig::new(InT(2), 1, InT(5)));
    let mut d: Node =
        crate::testing::on_complete_graph(ids[3], &ids, Duration::from_ticks(1000), |setup| monitor.build(setup));
    step(&mut d, Event::Start { restored: None });
    step(&mut d, Event::Command(Command::Initiate));
    let port = |d: &Node, id: NodeId| d.fixed.setup.neighbors.iter().find(|n| n.id == id).unwrap().port;
    let (one, two, five) = (port(&d, ids[0]), port(&d, ids[1]), port(&d, ids[4]));
    let beat = MonitorMsg::Heartbeat { epoch: Epoch::of(1, ids[4]), seq: 1, down: None };
    step(&mut d, Event::Message { from: five, msg: beat });
    let epoch = d.epoch();
    step(&mut d, Event::Timer(MonitorTimer::Watch));
    // 1 hears 5 on the first try; 2's answer to it is lost, and it answers the second.
    step(&mut d, Event::Message { from: one, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
    assert!(d.poll.is_some(), "one answer is no majority");
    step(&mut d, Event::Timer(MonitorTimer::Poll));
    step(&mut d, Event::Message { from: two, msg: MonitorMsg::PreVoteReply { epoch, hears: true } });
    assert!(d.poll.is_none(), "1's answer to the first try and 2's to the second make a majority");
    assert_eq!((d.epoch(), d.status().leader), (epoch, Some(ids[4])), "4 keeps following 5");
}

#[test]
fn only_the_leader_and_followers_that_heard_it_lately_vouch_for_it() {
    let mut b = follower_of_c();
    let epoch = b.epoch();
    let a = b.fixed.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
    let ask = |b: &mut Node| {
        let asked = MonitorMsg::PreVote { epoch, leader: C };
        step(b, Event::Message { from: a, msg: asked })
            .into_iter()
            .find_map(|e| match e {
                Effect::Send { msg: MonitorMsg::PreVoteReply { hears, .. }, .. } => Some(hears),
                _ => None,
            })
            .unwrap()
    };
    assert!(ask(&mut b), "B heard C's heartbeat");
    step(&mut b, Event::Timer(MonitorTimer::Quiet));
    assert!(!ask(&mut b), "B heard nothing for the quiet time");
}

#[test]
fn the_strongest_survivor_claims_at_once_without_waiting_for_the_leader_it_suspects() {
    let mut b = follower_of_c();
    let suspected = suspect(&mut b, C, A);
    assert_eq!(b.epoch(), Epoch::of(2, B));
    assert!(claims(&suspected), "B claims in the step that suspects C: {suspected:?}");
    assert_eq!(b.status().leader, Some(B));
    // C still hears of the election, in case it is alive (it then carries its leadership above the epoch).
    let told = suspected.iter().any(
        |e| matches!(e, Effect::Send { to, msg: MonitorMsg::Inner { down: Some(C), .. } } if b.neighbor(*to) == C),
    );
    assert!(told, "{suspected:?}");
}

#[test]
fn a_process_that_still_hears_the_suspect_waits_for_its_answer() {
    let mut b = follower_of_c();
    let from = b.fixed.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
    let epoch = Epoch::of(2, A);
    let joined = step(&mut b, Event::Message { from, msg: MonitorMsg::Join { epoch, down: Some(C) } });
    assert_eq!(b.epoch(), epoch);
    assert!(!claims(&joined), "B waits for C's answer: {joined:?}");
    assert_eq!(b.status().leader, None);
}

#[test]
fn a_process_taken_for_failed_takes_no_part_in_that_epoch_and_opens_the_next() {
    // B runs an election (it waits for C's answer), so it does not beat; A takes it for failed.
    let mut b = build(B);
    step(&mut b, Event::Start { restored: None });
    step(&mut b, Event::Command(Command::Initiate));
    assert_eq!(b.status().leader, None);
    let from = b.fixed.setup.neighbors.iter().find(|n| n.id == A).unwrap().port;
    let epoch = Epoch::of(3, A);
    let named = step(&mut b, Event::Message { from, msg: MonitorMsg::Join { epoch, down: Some(B) } });
    let next = epoch.next(B).unwrap();
    assert_eq!(b.epoch(), next, "B takes no part in an epoch whose election does not wait for it");
    // Its election in the next epoch tells the others (C first: B is weaker).
    let opens =
        named.iter().any(|e| matches!(e, Effect::Send { msg: MonitorMsg::Inner { epoch, .. }, .. } if *epoch == next));
    assert!(opens, "{named:?}");
}

#[test]
fn a_process_taken_for_failed_does_not_follow_the_leader_of_that_epoch() {
    let mut b = build(B);
    step(&mut b, Event::Start { restored: None });
    step(&mut b, Event::Command(Command::Initiate));
    let from = b.fixed.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
    let epoch = Epoch::of(3, C);
    step(&mut b, Event::Message { from, msg: MonitorMsg::Heartbeat { epoch, seq: 1, down: Some(B) } });
    assert_eq!(b.epoch(), epoch.next(B).unwrap(), "B opens the epoch after the one that named it");
    // A heartbeat of an epoch that names another process is followed as before.
    let mut a = build(A);
    step(&mut a, Event::Start { restored: None });
    step(&mut a, Event::Command(Command::Initiate));
    let from = a.fixed.setup.neighbors.iter().find(|n| n.id == C).unwrap().port;
    step(&mut a, Event::Message { from, msg: MonitorMsg::Heartbeat { epoch, seq: 1, down: Some(B) } });
    assert_eq!((a.epoch(), a.status().leader), (epoch, Some(C)));
}

#[test]
fn a_message_of_the_algorithm_says_which_epoch_is_the_monitor_s() {
    use elect_core::Message;
    let election = crate::bully::Msg::Election { epoch: Epoch::of(1, A) };
    let inner = MonitorMsg::Inner { epoch: Epoch::of(1, C), down: None, msg: election };
    assert_eq!(inner.describe(), "election (epoch 1.1), in the monitor's epoch 1.3");
}
