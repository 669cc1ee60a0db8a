//! Asking after a lost state: a member that knows no epoch asks, and grants nothing until a majority answered and a
//! round trip is over.

use super::*;

#[test]
fn a_member_that_knows_no_epoch_asks_and_grants_nothing_until_the_answers_are_in() {
    // Its state was lost: the driver restores only an incarnation floor.
    let mut c = build(C, MemberConfig::new(InT(2), HOLD));
    let effects = step(&mut c, Event::Start { restored: Some(saved(90_000, Epoch::ZERO, None)) });
    assert_eq!(c.incarnation(), 90_001, "newer than every incarnation it had");
    let persist = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.incarnation == 90_001));
    let first_send = effects.iter().position(|e| matches!(e, Effect::Send { .. }));
    assert!(persist.is_some() && persist < first_send, "the incarnation is durable first: {effects:?}");
    let question = stamped(90_001, Epoch::ZERO, None, Body::Ask);
    assert_eq!(sends(&effects), [(port(C, A), question.clone()), (port(C, B), question)]);
    assert_eq!(timers_set(&effects), [(MemberTimer::Asked, Span::exactly(T * 2 + Duration::TICK))]);
    // The algorithm makes it leader at once; it grants nothing while the question is out.
    assert_eq!(elected(&settle_as_leader(&mut c, A)), []);
    // A's answer: it has seen 6.B.
    assert_eq!(elected(&hear(&mut c, A, packet(ballot(6, B), None, Body::Announce))), []);
    // The round trip is over: its grant is above what its peers know.
    assert_eq!(elected(&step(&mut c, Event::Timer(MemberTimer::Asked))), [ballot(7, C)]);
    // A member that knows an epoch asks nothing.
    let mut b = build(B, MemberConfig::new(InT(2), HOLD));
    let effects = step(&mut b, Event::Start { restored: Some(saved(3, ballot(2, A), None)) });
    assert_eq!(sends(&effects), []);
    assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(3, B)]);
}

#[test]
fn a_question_is_answered_even_by_a_member_that_knows_no_epoch_unless_it_is_asking_too() {
    let question = |incarnation| stamped(incarnation, Epoch::ZERO, None, Body::Ask);
    let answer = |incarnation| stamped(incarnation, Epoch::ZERO, None, Body::Announce);
    // A and B started together, knowing no epoch: their questions cross, and neither answers the other's.
    let mut a = build(A, MemberConfig::new(InT(2), HOLD));
    step(&mut a, Event::Start { restored: None });
    assert_eq!(sends(&hear(&mut a, B, question(1))), []);
    // B restarts (still before any grant) once A's round trip is over: A answers, though it knows no epoch,
    // for the answer tells B that one more member knows none.
    step(&mut a, Event::Timer(MemberTimer::Asked));
    assert_eq!(sends(&hear(&mut a, B, question(2))), [(port(A, B), answer(1))]);
    // The answer is no question: B, past its own round trip, does not answer it.
    let mut b = build(B, MemberConfig::new(InT(2), HOLD));
    step(&mut b, Event::Start { restored: Some(saved(1, Epoch::ZERO, None)) });
    assert_eq!(sends(&hear(&mut b, A, answer(1))), []);
    // With A, B is a majority of the three: its round trip over, it asks nobody again.
    assert_eq!(sends(&step(&mut b, Event::Timer(MemberTimer::Asked))), []);
    assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(1, B)]);
}

#[test]
fn a_member_short_of_answers_asks_again_and_answers_the_questions_of_others() {
    let question = |incarnation| stamped(incarnation, Epoch::ZERO, None, Body::Ask);
    let members = [A, B, C, NodeId(4), NodeId(5)];
    // A, among five, knows no epoch: it needs two others. While it waits, B's question goes unanswered.
    let mut a = build_among(A, &members, MemberConfig::new(InT(2), HOLD));
    step(&mut a, Event::Start { restored: None });
    assert_eq!(sends(&hear(&mut a, B, question(1))), []);
    // Its round trip is over with one answer (B's question): it asks everybody again.
    let effects = step(&mut a, Event::Timer(MemberTimer::Asked));
    assert_eq!(sends(&effects).len(), 4);
    assert!(sends(&effects).iter().all(|(_, p)| p.body == Body::Ask));
    // Short of answers itself, it answers C's question now; a question of an older incarnation of B's, none.
    let answer = stamped(1, Epoch::ZERO, None, Body::Announce);
    assert_eq!(sends(&hear(&mut a, C, question(1))), [(port(A, C), answer)]);
    hear(&mut a, B, question(3));
    assert_eq!(sends(&hear(&mut a, B, question(2))), [], "sent before B restarted");
    // With B and C it has its majority: it asks nobody again, and may grant.
    assert_eq!(sends(&step(&mut a, Event::Timer(MemberTimer::Asked))), []);
    assert_eq!(elected(&settle_as_leader(&mut a, C)), [ballot(1, A)]);
}

#[test]
fn a_member_that_left_asks_nobody_again() {
    let mut c = build(C, MemberConfig::new(InT(2), HOLD));
    step(&mut c, Event::Start { restored: Some(saved(4, Epoch::ZERO, None)) });
    step(&mut c, Event::Command(Command::Leave));
    assert_eq!(sends(&step(&mut c, Event::Timer(MemberTimer::Asked))), []);
}

/// The algorithm's timer that makes it leader: a member's algorithm that hears from nobody elects itself.
const LEAD_ALONE: MemberTimer<Script> = MemberTimer::Inner { life: 0, timer: Script::Lead };

#[test]
fn a_member_that_lost_its_state_and_hears_nobody_grants_itself_nothing() {
    // C lost its state and can reach no peer: its question goes unanswered.
    let mut c = build(C, MemberConfig::new(InT(2), HOLD));
    step(&mut c, Event::Start { restored: Some(saved(90_000, Epoch::ZERO, None)) });
    // The round trip is over, with no answer: it asks again.
    let question = stamped(90_001, Epoch::ZERO, None, Body::Ask);
    let effects = step(&mut c, Event::Timer(MemberTimer::Asked));
    assert_eq!(sends(&effects), [(port(C, A), question.clone()), (port(C, B), question)]);
    assert_eq!(timers_set(&effects), [(MemberTimer::Asked, Span::exactly(T * 2 + Duration::TICK))]);
    // Its algorithm, alone, makes it leader and keeps it so: it would have granted itself 1.C, an epoch as low
    // as they come (perhaps one it granted before it lost its state). It grants nothing, and shows no leader.
    let effects = step(&mut c, Event::Timer(LEAD_ALONE));
    assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
    assert_eq!(elected(&step(&mut c, Event::Timer(MemberTimer::Settle))), []);
    assert_eq!((c.grant(), c.leadership()), (None, Leadership { leader: None, epoch: Epoch::ZERO }));
    assert_eq!(elected(&step(&mut c, Event::Timer(LEAD_ALONE))), [], "still nobody heard");
    // B is reachable again: it has seen 6.A. With B, C is a majority of the three: it grants above 6.A.
    assert_eq!(elected(&hear(&mut c, B, packet(ballot(6, A), None, Body::Announce))), [ballot(7, C)]);
    assert_eq!(c.leadership(), Leadership { leader: Some(C), epoch: ballot(7, C) });
}

#[test]
fn a_member_that_lost_its_state_grants_only_once_it_heard_from_a_majority_and_the_round_trip_is_over() {
    const D: NodeId = NodeId(4);
    const E: NodeId = NodeId(5);
    let five = [A, B, C, D, E];
    // E, among five, lost its state: with itself, two others make a majority.
    let mut e = build_among(E, &five, MemberConfig::new(InT(2), HOLD));
    let effects = step(&mut e, Event::Start { restored: Some(saved(90_000, Epoch::ZERO, None)) });
    assert_eq!(sends(&effects).len(), 4, "it asks all four others");
    step(&mut e, Event::Timer(LEAD_ALONE));
    step(&mut e, Event::Timer(MemberTimer::Settle));
    // One answer (A has seen 3.B) within the round trip, then the round trip is over: not enough.
    assert_eq!(elected(&hear(&mut e, A, packet(ballot(3, B), None, Body::Announce))), []);
    assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Asked))), []);
    assert_eq!(e.grant(), None);
    // A second answer (B has seen 5.D): E grants above the highest epoch the two know.
    assert_eq!(elected(&hear(&mut e, B, packet(ballot(5, D), None, Body::Announce))), [ballot(6, E)]);

    // Two answers within the round trip are not enough either: the round trip must be over, so that every
    // reachable member's answer is in.
    let mut e = build_among(E, &five, MemberConfig::new(InT(2), HOLD));
    step(&mut e, Event::Start { restored: Some(saved(90_000, Epoch::ZERO, None)) });
    step(&mut e, Event::Timer(LEAD_ALONE));
    step(&mut e, Event::Timer(MemberTimer::Settle));
    assert_eq!(elected(&hear(&mut e, A, packet(ballot(3, B), None, Body::Announce))), []);
    assert_eq!(elected(&hear(&mut e, B, packet(ballot(2, B), None, Body::Announce))), []);
    assert_eq!(elected(&hear(&mut e, C, packet(ballot(8, D), None, Body::Announce))), []);
    assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Asked))), [ballot(9, E)]);

    // A member that kept its state needs no answer at all, even alone.
    let mut e = build_among(E, &five, MemberConfig::new(InT(2), HOLD));
    step(&mut e, Event::Start { restored: Some(saved(4, ballot(2, A), None)) });
    step(&mut e, Event::Timer(LEAD_ALONE));
    assert_eq!(elected(&step(&mut e, Event::Timer(MemberTimer::Settle))), [ballot(3, E)]);
}
