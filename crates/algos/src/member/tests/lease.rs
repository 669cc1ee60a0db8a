//! The lease mode: a member leads only while a majority backs it, and backs one leader at a time.

use super::*;
use crate::member::lease::{LeaseError, MAX_DRIFT_PPM};

/// A lease of `5·T` with a drift bound of 0.1%: a leader holds a round for `5T/1.001`, rounded down; a backer
/// promises `5T·1.001`, rounded up, and a tick.
const LEASE: Lease = Lease { length: InT(5), drift_ppm: 1000, drifting: false };
const HOLD_TICKS: u64 = 4995;
const PROMISE_TICKS: u64 = 5006;

fn config() -> MemberConfig {
    MemberConfig { lease: Some(LEASE), ..MemberConfig::new(InT(2), HOLD) }
}

/// Member `me` in the lease mode, started knowing an epoch (so it asks nobody), with its starting promise run out.
fn start_leasing(me: NodeId) -> Node {
    let mut m = build(me, config());
    let effects = step(&mut m, Event::Start { restored: Some(super::saved(1, ballot(1, A), None)) });
    assert_eq!(timers_set(&effects), [(MemberTimer::Promise, Span::exactly(Duration::from_ticks(PROMISE_TICKS)))]);
    step(&mut m, Event::Timer(MemberTimer::Promise));
    m
}

fn lease_sends(effects: &Effects) -> Vec<(Port, Body<Script>)> {
    sends(effects)
        .into_iter()
        .filter(|(_, p)| matches!(p.body, Body::Lease { .. } | Body::LeaseAck { .. }))
        .map(|(to, p)| (to, p.body))
        .collect()
}

#[test]
fn a_leader_grants_itself_an_epoch_only_once_a_majority_backed_it() {
    let mut c = start_leasing(C);
    // Named leader, it asks for nothing until the algorithm has kept it leader for the settling wait...
    assert_eq!(lease_sends(&hear(&mut c, A, says(Script::Lead))), []);
    // ... then everybody, at once, and again every T while it holds no lease. Backed by itself alone: no grant.
    let effects = step(&mut c, Event::Timer(MemberTimer::Settle));
    assert_eq!(lease_sends(&effects), [(port(C, A), Body::Lease { round: 1 }), (port(C, B), Body::Lease { round: 1 })]);
    let timers = timers_set(&effects);
    assert!(timers.contains(&(MemberTimer::Hold(1), Span::exactly(Duration::from_ticks(HOLD_TICKS)))), "{timers:?}");
    assert!(timers.contains(&(MemberTimer::Renew, Span::exactly(T))), "{timers:?}");
    assert_eq!(elected(&effects), []);
    assert_eq!(c.leadership().leader, None);
    assert_eq!(c.lease_timer(), None);
    // A second backer makes a majority of three.
    let effects = hear(&mut c, B, packet(ballot(1, A), None, Body::LeaseAck { round: 1 }));
    assert_eq!(elected(&effects), [ballot(2, C)]);
    assert_eq!(c.leadership().leader, Some(C));
    assert_eq!(c.lease_timer(), Some(MemberTimer::Hold(1)));
    // Holding a lease, it renews every heartbeat period.
    let effects = step(&mut c, Event::Timer(MemberTimer::Renew));
    assert_eq!(lease_sends(&effects).len(), 2);
    assert!(timers_set(&effects).contains(&(MemberTimer::Renew, Span::exactly(T * 2))));
}

#[test]
fn the_lease_and_the_grant_end_when_the_last_backed_round_runs_out() {
    let mut c = start_leasing(C);
    hear(&mut c, A, says(Script::Lead));
    step(&mut c, Event::Timer(MemberTimer::Settle));
    hear(&mut c, A, packet(ballot(1, A), None, Body::LeaseAck { round: 1 }));
    assert_eq!(c.grant(), Some(ballot(2, C)));
    // Round 2 goes unanswered (C is cut off): when round 1's hold runs out, C stops leading at once.
    step(&mut c, Event::Timer(MemberTimer::Renew));
    let effects = step(&mut c, Event::Timer(MemberTimer::Hold(1)));
    let ended = [Notice::Ended { epoch: ballot(2, C) }, Notice::Shows { leader: None, epoch: ballot(2, C) }];
    assert_eq!(notices(&effects), ended);
    assert_eq!(c.grant(), None);
    // An answer to round 1, late, counts for nothing: its hold is over.
    assert_eq!(elected(&hear(&mut c, B, packet(ballot(1, A), None, Body::LeaseAck { round: 1 }))), []);
    // Round 2, backed, leads again under a new epoch.
    assert_eq!(elected(&hear(&mut c, B, packet(ballot(1, A), None, Body::LeaseAck { round: 2 }))), [ballot(3, C)]);
}

#[test]
fn a_member_backs_one_leader_until_its_promise_runs_out() {
    let mut a = start_leasing(A);
    let effects = hear(&mut a, B, packet(ballot(1, A), None, Body::Lease { round: 4 }));
    assert_eq!(lease_sends(&effects), [(port(A, B), Body::LeaseAck { round: 4 })]);
    assert_eq!(timers_set(&effects), [(MemberTimer::Promise, Span::exactly(Duration::from_ticks(PROMISE_TICKS)))]);
    // C asks too: A promised B, so it does not answer; B again, it does.
    assert_eq!(lease_sends(&hear(&mut a, C, packet(ballot(1, A), None, Body::Lease { round: 1 }))), []);
    assert_eq!(lease_sends(&hear(&mut a, B, packet(ballot(1, A), None, Body::Lease { round: 5 }))).len(), 1);
    // Nor does A back itself while it backs B.
    hear(&mut a, C, says(Script::Lead));
    let effects = step(&mut a, Event::Timer(MemberTimer::Settle));
    assert_eq!(lease_sends(&effects).len(), 2, "it asks the others");
    assert_eq!(elected(&effects), []);
    assert_eq!(elected(&hear(&mut a, C, packet(ballot(1, A), None, Body::LeaseAck { round: 1 }))), [], "one backer");
    // Once the promise ran out, A still does not back C, which asks again: its algorithm names A, not C.
    step(&mut a, Event::Timer(MemberTimer::Promise));
    let effects = hear(&mut a, C, packet(ballot(1, A), None, Body::Lease { round: 2 }));
    assert_eq!(lease_sends(&effects), []);
}

#[test]
fn a_member_standing_aside_for_a_transfer_backs_the_member_named_though_its_algorithm_names_the_old_leader() {
    let mut b = start_leasing(B);
    hear(&mut b, C, says(Script::Follow(C)));
    // C asks for its lease: B backs it, its algorithm names C.
    assert_eq!(lease_sends(&hear(&mut b, C, packet(ballot(1, C), None, Body::Lease { round: 1 }))).len(), 1);
    step(&mut b, Event::Timer(MemberTimer::Promise));
    // C hands over to A; B, ranked above A, stands aside, and its algorithm hears nothing more: it names C still.
    hear(&mut b, C, packet(ballot(1, C), Some(ballot(1, C)), Body::Transfer { to: A }));
    assert_eq!(b.inner().status().leader, Some(C));
    // A, elected, asks for its lease: B backs it.
    let effects = hear(&mut b, A, packet(ballot(1, C), None, Body::Lease { round: 1 }));
    assert_eq!(lease_sends(&effects), [(port(B, A), Body::LeaseAck { round: 1 })]);
}

#[test]
fn a_member_that_starts_backs_nobody_until_a_promise_it_may_have_made_ran_out() {
    let mut a = build(A, config());
    step(&mut a, Event::Start { restored: Some(super::saved(1, ballot(1, A), None)) });
    assert_eq!(lease_sends(&hear(&mut a, B, packet(ballot(1, A), None, Body::Lease { round: 1 }))), []);
    step(&mut a, Event::Timer(MemberTimer::Promise));
    assert_eq!(lease_sends(&hear(&mut a, B, packet(ballot(1, A), None, Body::Lease { round: 2 }))).len(), 1);
}

#[test]
fn lease_settings_are_checked() {
    let params = |pairs: &[&str]| crate::params::Params::parse(pairs.iter().copied()).unwrap();
    let (lease, rest) = Lease::take(&params(&["lease=on", "max-drift-ppm=200", "x=1"]), InT(2)).unwrap();
    assert_eq!(lease, Some(Lease { length: InT(5), drift_ppm: 200, drifting: false }));
    assert_eq!(rest, params(&["x=1"]));
    assert_eq!(
        Lease::take(&params(&["lease=7"]), InT(2)).unwrap().0,
        Some(Lease { length: InT(7), drift_ppm: 1000, drifting: false })
    );
    assert_eq!(Lease::take(&params(&[]), InT(2)).unwrap().0, None);
    let drifting = Lease::take(&params(&["lease=on", "clocks=drifting"]), InT(2)).unwrap().0;
    assert_eq!(drifting, Some(Lease { length: InT(5), drift_ppm: 1000, drifting: true }));
    for (bad, why) in [
        (&["lease=on", "clocks=fast"][..], "expected exact or drifting"),
        (&["clocks=drifting"][..], "add lease=on"),
        (&["lease=4"][..], "at least 5T"),
        (&["lease=61"][..], "at most 30 heartbeat periods"),
        (&["lease=soon"][..], "expected off, on"),
        (&["lease=on", "max-drift-ppm=200000"][..], "expected 0 to 100000"),
        (&["max-drift-ppm=5"][..], "add lease=on"),
    ] {
        let err = Lease::take(&params(bad), InT(2)).unwrap_err().to_string();
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}

/// Drifting clocks: a lease timer asks the driver for any real duration a clock within the drift bound may make of
/// its length, rounded outwards; the slots and the fresh grace follow the longest. The planted flaw no-drift holds
/// and promises `L` (and a tick).
#[test]
fn with_drifting_clocks_lease_timers_span_the_drift_bound() {
    use crate::member::lease::LeaseTiming;
    let t = Duration::from_ticks(1000);
    let ticks = |a, b| Span::between(Duration::from_ticks(a), Duration::from_ticks(b));
    let lease = Lease { length: InT(30), drift_ppm: 100_000, drifting: true };
    let timing = LeaseTiming::new(&lease, InT(2), t);
    // L = 30000 ticks: a hold of L/1.1 = 27272, a promise of L·1.1 = 33000 and a tick.
    assert_eq!((timing.hold.ticks(), timing.promise.ticks()), (27272, 33001));
    assert_eq!(timing.span(timing.hold), ticks(24792, 30000), "never longer than L in real time");
    assert_eq!(timing.span(timing.promise), ticks(30000, 36302), "never shorter than L in real time");
    assert_eq!(timing.slots, 16, "the rounds of the longest hold, 30000/2000, and one");
    assert_eq!(timing.fresh_grace.ticks(), 36302 + 3000);
    let exact = LeaseTiming::new(&Lease { drifting: false, ..lease }, InT(2), t);
    assert_eq!(exact.span(exact.hold), Span::exactly(exact.hold));
    assert_eq!(exact.slots, 15);

    let flawed = timing.without_margin(&lease, InT(2), t);
    assert_eq!((flawed.hold.ticks(), flawed.promise.ticks()), (30000, 30001));
    assert_eq!(flawed.span(flawed.hold).max.ticks(), 33000, "a slow clock holds past L");
    assert_eq!(flawed.span(flawed.promise).min.ticks(), 27273, "a fast one promises less than L");
}

#[test]
fn a_lease_that_cannot_work_is_refused_with_the_reason() {
    let lease = |length, drift_ppm| Lease { length: InT(length), drift_ppm, drifting: false };
    assert_eq!(Lease::for_heartbeat(InT(2)).validate(InT(2)), Ok(()));
    assert_eq!(lease(61, 0).validate(InT(2)), Err(LeaseError::TooLong));
    assert_eq!(lease(60, 0).validate(InT(2)), Ok(()));
    assert_eq!(lease(10, MAX_DRIFT_PPM + 1).validate(InT(2)), Err(LeaseError::Drift));
    let short = lease(4, 1000).validate(InT(2));
    assert_eq!(short, Err(LeaseError::TooShort { heartbeat: InT(2), drift_ppm: 1000, least: InT(5) }));
    let said = short.unwrap_err().to_string();
    assert!(said.contains("heartbeats every 2T") && said.contains("at least 5T"), "{said}");
}
