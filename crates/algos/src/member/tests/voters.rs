//! Changing the voters: one member at a time, confirmed by a majority of the old voters, committed by a majority of
//! the new ones; taken only from the newest leader, durable before it is answered.

use std::sync::Arc;

use super::*;
use crate::member::state::{Asking, Away};

const D: NodeId = NodeId(4);
/// The leader's grant in these tests: C's first.
fn grant() -> Epoch {
    ballot(2, C)
}

/// Member `me` of the complete graph on A, B, C and D, with A, B and C the voters it starts with, started knowing
/// epoch 1.A (so it asks nobody).
fn start_of_four(me: NodeId) -> Node {
    let config = MemberConfig { voters: Some(Arc::from([A, B, C])), ..MemberConfig::new(InT(2), HOLD) };
    let mut m = build_among(me, &[A, B, C, D], config);
    let saved = Saved { incarnation: 1, seen: ballot(1, A), inner: None, voters: None };
    step(&mut m, Event::Start { restored: Some(saved) });
    m
}

/// C, leader under 2.C among A, B, C and D, having heard from D.
fn leader_c() -> Node {
    let mut c = start_of_four(C);
    hear(&mut c, D, packet(ballot(1, A), None, Body::Announce));
    settle_as_leader(&mut c, A);
    assert_eq!(c.grant(), Some(grant()));
    c
}

/// A packet with a header naming configuration `config`.
fn under(config: ConfigId, seen: Epoch, lead: Option<Epoch>, body: Body<Script>) -> Packet<Script> {
    Packet { config, ..packet(seen, lead, body) }
}

fn configs_sent(effects: &Effects) -> Vec<(Port, Voters)> {
    sends(effects)
        .into_iter()
        .filter_map(|(to, p)| if let Body::Config { voters } = p.body { Some((to, voters)) } else { None })
        .collect()
}

fn ack(id: ConfigId) -> Packet<Script> {
    under(id, grant(), None, Body::ConfigAck { id })
}

fn state(m: &Node) -> Option<ChangeState> {
    m.change_report().map(|r| r.state)
}

fn role(m: &Node) -> String {
    m.view(&elect_core::Peers(&m.fixed.setup.neighbors)).role.to_string()
}

#[test]
fn a_leader_adds_a_member_once_a_majority_of_the_old_voters_confirmed_and_of_the_new_ones_committed() {
    let mut c = leader_c();
    let old = c.voters().clone();
    assert_eq!((old.members.as_slice(), old.id), ([A, B, C].as_slice(), ConfigId::INITIAL));
    // Confirm: its configuration goes to every member, the learner D too.
    let effects = step(&mut c, Event::Command(Command::AddVoter { id: D }));
    let everybody = [port(C, A), port(C, B), port(C, D)];
    assert_eq!(configs_sent(&effects), everybody.map(|p| (p, old.clone())));
    assert!(timers_set(&effects).contains(&(MemberTimer::Change, Span::exactly(T * 2 + Duration::TICK))));
    assert_eq!(state(&c), Some(ChangeState::Running));
    // D's answer does not count: it does not vote in the old configuration.
    assert_eq!(configs_sent(&hear(&mut c, D, ack(ConfigId::INITIAL))), []);
    // A's makes a majority of A, B and C with C: the new configuration, numbered under C's grant, is durable
    // before it is sent to those that do not hold it yet.
    let effects = hear(&mut c, A, ack(ConfigId::INITIAL));
    let new = Voters { id: ConfigId { epoch: grant(), seq: 1 }, members: vec![A, B, C, D] };
    let persisted = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.voters.as_ref() == Some(&new)));
    let first_send = effects.iter().position(|e| matches!(e, Effect::Send { .. }));
    assert!(persisted.is_some() && persisted < first_send, "{effects:?}");
    assert_eq!(configs_sent(&effects), everybody.map(|p| (p, new.clone())));
    assert_eq!(c.voters(), &new);
    // Three of the four new voters hold it, but the member added must hold it too.
    hear(&mut c, A, ack(new.id));
    hear(&mut c, B, ack(new.id));
    assert_eq!(state(&c), Some(ChangeState::Running));
    // An answer about another configuration is not counted.
    hear(&mut c, D, ack(ConfigId::INITIAL));
    assert_eq!(state(&c), Some(ChangeState::Running));
    let effects = hear(&mut c, D, ack(new.id));
    assert_eq!(state(&c), Some(ChangeState::Done(new.id)));
    assert!(effects.contains(&Effect::CancelTimer { timer: MemberTimer::Change }));
    // Its packets now carry the new configuration's id.
    let renewed = step(&mut c, Event::Command(Command::RemoveVoter { id: D }));
    assert!(sends(&renewed).iter().all(|(_, p)| p.config == new.id));
}

#[test]
fn a_member_takes_a_configuration_only_from_the_newest_leader_durably_before_it_answers() {
    let mut d = start_of_four(D);
    assert_eq!(d.away, Away::Outside, "D is not a voter of the configuration it starts with");
    assert_eq!(role(&d), "not a voter (learner)");
    let new = Voters { id: ConfigId { epoch: grant(), seq: 1 }, members: vec![A, B, C, D] };
    // Not from a member that does not lead, nor from a leader of an older epoch than one it knows.
    hear(&mut d, B, packet(ballot(3, B), None, Body::Announce));
    assert_eq!(hear(&mut d, A, under(ConfigId::INITIAL, grant(), None, Body::Config { voters: new.clone() })), []);
    let stale = hear(&mut d, C, under(ConfigId::INITIAL, grant(), Some(grant()), Body::Config { voters: new.clone() }));
    assert!(configs_sent(&stale).is_empty() && d.voters().id == ConfigId::INITIAL, "{stale:?}");
    // From the leader of the newest epoch it knows: durable, then answered, and D now takes part.
    let mut d = start_of_four(D);
    let lead = Some(grant());
    let effects = hear(&mut d, C, under(ConfigId::INITIAL, grant(), lead, Body::Config { voters: new.clone() }));
    let persisted = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.voters.as_ref() == Some(&new)));
    let answered = sends(&effects).into_iter().find(|(_, p)| p.body == Body::ConfigAck { id: new.id });
    let answer_at = effects
        .iter()
        .position(|e| matches!(e, Effect::Send { msg, .. } if msg.body == Body::ConfigAck { id: new.id }));
    assert!(persisted.is_some() && persisted < answer_at, "{effects:?}");
    assert_eq!(answered.map(|(to, p)| (to, p.config)), Some((port(D, C), new.id)));
    assert_eq!((d.away, d.votes()), (Away::Present, true));
    // An older configuration is answered with the newer one, whoever sends it.
    let effects = hear(
        &mut d,
        A,
        under(ConfigId::INITIAL, grant(), None, Body::Config { voters: Voters::initial(vec![A, B, C]) }),
    );
    assert_eq!(configs_sent(&effects), [(port(D, A), new.clone())]);
    // So is a leader whose packets carry an older configuration's id.
    let effects = hear(&mut d, C, under(ConfigId::INITIAL, grant(), lead, Body::Announce));
    assert_eq!(configs_sent(&effects), [(port(D, C), new)]);
}

#[test]
fn a_removed_member_sits_out_and_gives_its_leadership_up() {
    // B leads; C, the leader of a newer epoch, removes it.
    let mut b = start_of_four(B);
    settle_as_leader(&mut b, A);
    assert_eq!(b.grant(), Some(ballot(2, B)));
    let newer = ballot(3, C);
    let without_b = Voters { id: ConfigId { epoch: newer, seq: 1 }, members: vec![A, C] };
    let effects = hear(&mut b, C, under(ConfigId::INITIAL, newer, Some(newer), Body::Config { voters: without_b }));
    assert_eq!((b.away, b.grant()), (Away::Outside, None));
    assert!(notices(&effects).contains(&Notice::Ended { epoch: ballot(2, B) }));
    assert!(sends(&effects).iter().any(|(_, p)| p.body == Body::Leaving));
}

#[test]
fn a_change_that_cannot_be_made_is_refused_with_the_reason() {
    let mut c = leader_c();
    let refused = |m: &mut Node, cmd: Command| {
        assert_eq!(sends(&step(m, Event::Command(cmd))), []);
        match state(m) {
            Some(ChangeState::Refused(reason)) => reason,
            other => panic!("{cmd:?}: {other:?}"),
        }
    };
    assert!(refused(&mut c, Command::RemoveVoter { id: C }).contains("hand leadership over first"));
    assert!(refused(&mut c, Command::AddVoter { id: A }).contains("already a voter"));
    assert!(refused(&mut c, Command::RemoveVoter { id: D }).contains("not a voter"));
    assert!(refused(&mut c, Command::AddVoter { id: NodeId(9) }).contains("not in the roster"));
    let mut follower = start_of_four(B);
    assert!(refused(&mut follower, Command::AddVoter { id: D }).contains("only the leader"));
    // A learner never heard from cannot be added.
    let mut c = start_of_four(C);
    settle_as_leader(&mut c, A);
    assert!(refused(&mut c, Command::AddVoter { id: D }).contains("never heard from"));
    // One change at a time.
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::RemoveVoter { id: B }));
    assert!(refused(&mut c, Command::AddVoter { id: D }).contains("in progress"));
}

#[test]
fn a_change_short_of_a_majority_is_given_up_after_five_round_trips_or_when_leadership_ends() {
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::AddVoter { id: D }));
    for _ in 1..CHANGE_TRIES {
        let effects = step(&mut c, Event::Timer(MemberTimer::Change));
        assert_eq!(configs_sent(&effects).len(), 3, "sent again to all that do not hold it");
        assert_eq!(state(&c), Some(ChangeState::Running));
    }
    step(&mut c, Event::Timer(MemberTimer::Change));
    assert!(matches!(state(&c), Some(ChangeState::Failed(reason)) if reason.contains("five round trips")));
    assert_eq!(c.voters().id, ConfigId::INITIAL, "it never got past confirming");
    // A leader that stops leading gives its change up.
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::AddVoter { id: D }));
    hear(&mut c, A, says(Script::Follow(A)));
    assert!(matches!(state(&c), Some(ChangeState::Failed(reason)) if reason.contains("leadership ended")));
}

#[test]
fn a_change_that_would_leave_no_majority_that_answers_is_given_up_before_it_takes_effect() {
    // A is down. B answers: B and C are a majority of A, B and C, but not of A and C, the voters left once B is
    // removed, where only C answers. Committed, the change would leave two voters, one of them down.
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::RemoveVoter { id: B }));
    assert_eq!(configs_sent(&hear(&mut c, B, ack(ConfigId::INITIAL))), []);
    assert_eq!(c.voters().id, ConfigId::INITIAL, "not committed");
    // The member added must answer too, and with it a majority of the four: D and C alone are not.
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::AddVoter { id: D }));
    assert_eq!(configs_sent(&hear(&mut c, D, ack(ConfigId::INITIAL))), []);
    assert_eq!(c.voters().id, ConfigId::INITIAL, "not committed");
    assert_eq!(configs_sent(&hear(&mut c, B, ack(ConfigId::INITIAL))).len(), 3, "committed, sent to A, B and D");
}

#[test]
fn a_leader_that_hears_of_a_newer_configuration_takes_it_and_gives_its_change_up() {
    let mut c = leader_c();
    step(&mut c, Event::Command(Command::AddVoter { id: D }));
    // B holds a configuration an earlier leader made (B had not seen C's grant then): C takes it from B.
    let earlier = Voters { id: ConfigId { epoch: ballot(1, A), seq: 1 }, members: vec![A, B, C, D] };
    hear(&mut c, B, under(earlier.id, grant(), None, Body::Config { voters: earlier.clone() }));
    assert_eq!(c.voters(), &earlier);
    assert!(matches!(state(&c), Some(ChangeState::Failed(reason)) if reason.contains("newer configuration")));
}

#[test]
fn a_member_that_lost_its_state_counts_answers_of_voters_under_the_newest_configuration() {
    let config = MemberConfig { voters: Some(Arc::from([A, B, C])), ..MemberConfig::new(InT(2), HOLD) };
    let start = || {
        let mut d = build_among(D, &[A, B, C, D], config.clone());
        step(&mut d, Event::Start { restored: None });
        d
    };
    // D, a learner, counts only the voters: A alone is short of a majority of A, B and C; A and B make one.
    let mut d = start();
    hear(&mut d, A, packet(ballot(1, A), None, Body::Announce));
    step(&mut d, Event::Timer(MemberTimer::Asked));
    assert_eq!(d.asking, Asking::Short);
    hear(&mut d, B, packet(ballot(1, A), None, Body::Announce));
    assert_eq!((d.asking, d.away, d.grant()), (Asking::Answered, Away::Outside, None));
    // An answer from a member holding a newer configuration holds it back until it holds that one too.
    let mut d = start();
    let newer = Voters { id: ConfigId { epoch: grant(), seq: 1 }, members: vec![A, B, D] };
    hear(&mut d, A, packet(ballot(1, A), None, Body::Announce));
    step(&mut d, Event::Timer(MemberTimer::Asked));
    hear(&mut d, B, under(newer.id, grant(), None, Body::Announce));
    assert_eq!(d.asking, Asking::Short);
    hear(&mut d, C, under(newer.id, grant(), Some(grant()), Body::Config { voters: newer }));
    assert_eq!((d.asking, d.away), (Asking::Answered, Away::Present));
}
