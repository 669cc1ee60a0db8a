//! Handing leadership over: the named member takes over while the members ranked above it stand aside.

use super::*;
use crate::member::state::Away;

/// A transfer from C, the leader of epoch 1.C, to `to`.
fn transfer_from_c(to: NodeId) -> Packet<Script> {
    packet(ballot(1, C), Some(ballot(1, C)), Body::Transfer { to })
}

fn role(m: &Node) -> String {
    m.view(&elect_core::Peers(&m.fixed.setup.neighbors)).role.to_string()
}

#[test]
fn a_leader_hands_over_tells_everybody_resigns_and_stands_aside() {
    let mut c = start(C, None);
    settle_as_leader(&mut c, A);
    // Naming itself, or no member, does nothing.
    for to in [C, NodeId(9)] {
        assert_eq!(step(&mut c, Event::Command(Command::Transfer { to })), [], "{to}");
    }
    let effects = step(&mut c, Event::Command(Command::Transfer { to: A }));
    assert!(c.inner().resigned, "the algorithm is told to resign");
    // The transfer leaves under its grant, then the leaving notice without it.
    let mut sent = to_everybody(1, ballot(1, C), Some(ballot(1, C)), Body::Transfer { to: A });
    sent.extend(to_everybody(1, ballot(1, C), None, Body::Leaving));
    assert_eq!(sends(&effects), sent);
    assert_eq!(timers_set(&effects), [(MemberTimer::Wake, Span::exactly(HOLD))]);
    assert_eq!(notices(&effects)[0], Notice::Ended { epoch: ballot(1, C) });
    assert_eq!((c.grant(), role(&c)), (None, "standing aside (transfer)".to_owned()));
    // A member that does not lead has nothing to hand over.
    let mut b = start(B, None);
    hear(&mut b, C, says(Script::Follow(C)));
    let before = b.clone();
    assert_eq!(step(&mut b, Event::Command(Command::Transfer { to: A })), []);
    assert_eq!(b, before);
}

#[test]
fn the_named_member_elects_a_member_ranked_above_it_stands_aside_and_one_below_follows() {
    // A, named, starts an election.
    let mut a = start(A, None);
    hear(&mut a, C, says(Script::Follow(C)));
    hear(&mut a, C, transfer_from_c(A));
    assert_eq!(a.inner().initiated, 1);
    // B, ranked above A, stands aside until the deadline: its algorithm hears nothing.
    let mut b = start(B, None);
    hear(&mut b, C, says(Script::Follow(C)));
    let effects = hear(&mut b, C, transfer_from_c(A));
    assert!(timers_set(&effects).contains(&(MemberTimer::Wake, Span::exactly(HOLD))));
    assert_eq!(role(&b), "standing aside (transfer)");
    assert_eq!(hear(&mut b, A, says(Script::Lead)), []);
    assert_eq!(b.inner().status().leader, Some(C));
    // A, ranked below B, neither stands aside nor starts an election when B is named.
    let mut a = start(A, None);
    hear(&mut a, C, says(Script::Follow(C)));
    hear(&mut a, C, transfer_from_c(B));
    assert_eq!((a.inner().initiated, role(&a) == "standing aside (transfer)"), (0, false));
}

#[test]
fn a_transfer_from_a_leader_of_an_older_epoch_is_not_heard() {
    let mut b = start(B, None);
    let newer = ballot(2, A);
    hear(&mut b, A, packet(newer, Some(newer), Body::Announce));
    let before = b.clone();
    hear(&mut b, C, transfer_from_c(A));
    assert_eq!((b.away, b.inner().initiated), (before.away, 0));
}

#[test]
fn a_member_standing_aside_rejoins_at_the_deadline_unless_the_named_member_took_over() {
    // A never took over: at the deadline B takes part again, with a fresh instance that initiates.
    let mut b = start(B, None);
    hear(&mut b, C, transfer_from_c(A));
    step(&mut b, Event::Timer(MemberTimer::Wake));
    assert_eq!((b.away, b.inner().initiated), (Away::Present, 1));
    // A took over: B goes on standing aside and shows A, until A's claim lapses.
    let mut b = start(B, None);
    hear(&mut b, C, transfer_from_c(A));
    let taken = ballot(2, A);
    hear(&mut b, A, packet(taken, Some(taken), Body::Announce));
    step(&mut b, Event::Timer(MemberTimer::Wake));
    assert_eq!((role(&b), b.inner().initiated), ("standing aside (transfer)".to_owned(), 0));
    assert_eq!(b.leadership(), Leadership { leader: Some(A), epoch: taken });
    step(&mut b, Event::Timer(MemberTimer::Claim(port(B, A))));
    assert_eq!((b.away, b.inner().initiated), (Away::Present, 1));
    // So does a member that hears the named member say it no longer leads.
    let mut b = start(B, None);
    hear(&mut b, C, transfer_from_c(A));
    hear(&mut b, A, packet(taken, Some(taken), Body::Announce));
    step(&mut b, Event::Timer(MemberTimer::Wake));
    hear(&mut b, A, packet(taken, None, Body::Leaving));
    assert_eq!((b.away, b.inner().initiated), (Away::Present, 1));
}

#[test]
fn a_transfer_is_valid_only_from_a_leader_and_naming_another_member() {
    let c = start(C, None);
    let valid = |from: NodeId, p: &Packet<Script>| c.validate(port(C, from), p).map_err(|e| e.0);
    let lead = |to| packet(ballot(1, A), Some(ballot(1, A)), Body::Transfer { to });
    assert_eq!(valid(A, &lead(B)), Ok(()));
    assert_eq!(valid(A, &lead(C)), Ok(()));
    let unled = packet(ballot(1, A), None, Body::Transfer { to: B });
    assert_eq!(valid(A, &unled), Err("only a leader hands leadership over"));
    for to in [A, NodeId(4), NodeId(0)] {
        assert_eq!(valid(A, &lead(to)), Err("a transfer names a member other than its sender"), "{to}");
    }
}

#[test]
fn a_member_standing_aside_hears_the_next_transfer_of_the_member_it_stood_aside_for() {
    // C handed over to A; B stands aside, and A took over under 2.A. Then A hands over to B: B takes part again
    // (with a fresh instance, which initiates); C, still standing aside for A, now stands aside for B.
    let taken = ballot(2, A);
    let from_a = |to| packet(taken, Some(taken), Body::Transfer { to });
    let mut b = start(B, None);
    hear(&mut b, C, transfer_from_c(A));
    hear(&mut b, A, from_a(B));
    assert_eq!((b.away, b.inner().initiated), (Away::Present, 1));
    let mut c = start(C, None);
    settle_as_leader(&mut c, A);
    step(&mut c, Event::Command(Command::Transfer { to: A }));
    hear(&mut c, A, from_a(B));
    assert_eq!(c.away, Away::Aside { to: B, from: taken, due: false });
}
