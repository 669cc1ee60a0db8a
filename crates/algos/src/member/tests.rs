//! The member's unit tests, with a scripted algorithm whose view of the leader each test sets.

use std::hash::{DefaultHasher, Hash, Hasher};

use elect_core::driver;
use elect_core::{
    Check, Command, Cx, Duration, Effect, EffectOf, Epoch, Event, EventOf, Instant, Message, NodeId, Notice, Port,
    Process, Setup, Span, Status,
};
use serde::{Deserialize, Serialize};

use super::packet::MEMBER_KINDS;
use super::*;
use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, Needs, Showcase};
use crate::params::{ParamError, Params};

/// A test algorithm whose view of the leader the tests set: each message it gets, and each timer, is a
/// [`Script`] it obeys.
#[derive(Clone, Debug)]
struct Scripted;

/// What the test algorithm is told to believe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Script {
    /// You are the leader: on becoming it, say so and tell everybody, as a coordinator would.
    Lead,
    /// Follow this member.
    Follow(NodeId),
    /// There is no leader: an election is on.
    Elect,
}
elect_core::message_kinds!(Script { Lead => "lead", Follow => "follow", Elect => "elect" });
impl elect_core::Validate for Script {
    fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ScriptedProcess {
    me: NodeId,
    others: Vec<Port>,
    status: Status,
    /// How many times it was told to initiate, over all its instances (it is its durable state).
    initiated: u32,
    /// Whether this instance was told to resign.
    resigned: bool,
}

impl ScriptedProcess {
    fn obey(&mut self, cx: &mut Cx<'_, Self>, script: Script) {
        let was_leader = self.status.leader == Some(self.me);
        self.status = match script {
            Script::Lead => Status::normal(Some(self.me), Epoch::ZERO),
            Script::Follow(leader) => Status::normal(Some(leader), Epoch::ZERO),
            Script::Elect => Status::election(Epoch::ZERO),
        };
        if script == Script::Lead && !was_leader {
            cx.notify(Notice::Elected { epoch: Epoch::ZERO });
            for &port in &self.others {
                cx.send(port, Script::Follow(self.me));
            }
        }
    }
}

impl Process for ScriptedProcess {
    type Msg = Script;
    type Timer = Script;
    type Durable = u32;

    fn on_start(&mut self, _: &mut Cx<'_, Self>, restored: Option<u32>) {
        self.initiated = restored.unwrap_or(0);
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, _: Port, script: Script) {
        self.obey(cx, script);
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, script: Script) {
        self.obey(cx, script);
    }

    /// Resigning is only recorded: the member, not the algorithm, must stop showing its leadership.
    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        match cmd {
            Command::Initiate => {
                self.initiated += 1;
                cx.persist(self.initiated);
            }
            Command::Resign => self.resigned = true,
            Command::Leave | Command::Transfer { .. } | Command::AddVoter { .. } | Command::RemoveVoter { .. } => {}
        }
    }

    fn status(&self) -> Status {
        self.status
    }
}

static INFO: Info = Info {
    name: "scripted",
    aliases: &[],
    title: "a test algorithm",
    model: "any",
    seed: "none",
    needs: Needs::Complete,
    timing: crate::algorithm::Timing::Synchronous,
    links: crate::algorithm::LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: false,
    params: &[],
    rules: &[],
    showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "" },
};

impl Algorithm for Scripted {
    type Process = ScriptedProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> ScriptedProcess {
        ScriptedProcess {
            me: setup.id,
            others: setup.neighbors.iter().map(|n| n.port).collect(),
            status: Status::election(Epoch::ZERO),
            initiated: 0,
            resigned: false,
        }
    }

    fn checks(&self) -> Vec<Check> {
        Vec::new()
    }

    fn election_time(&self, _: &Facts, t: Duration) -> Duration {
        t
    }

    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}

type Node = Member<Scripted>;
type Effects = Vec<EffectOf<Node>>;

const A: NodeId = NodeId(1);
const B: NodeId = NodeId(2);
const C: NodeId = NodeId(3);
/// The delay bound: the settling wait is `T`, a claim lives `(2 + 2)·T`.
const T: Duration = Duration::from_ticks(1000);
const HOLD: Duration = Duration::from_ticks(10_000);

/// Fencing epoch `round.member`.
fn ballot(round: u32, member: NodeId) -> Epoch {
    Epoch::of(round, member)
}

/// Member `me` of the complete graph on A, B and C (its ports lead to the other two in the order of their ids),
/// not started yet.
fn build(me: NodeId, config: MemberConfig) -> Node {
    build_among(me, &[A, B, C], config)
}

/// Member `me` of the complete graph on `members` (ids from 1 up, in order; its ports lead to the others in
/// the order of their ids), not started yet.
fn build_among(me: NodeId, members: &[NodeId], config: MemberConfig) -> Node {
    crate::testing::on_complete_graph(me, members, T, |setup| Deployed::new(Scripted, config).build(setup))
}

/// Member `me`, started from `restored`, past the question a member that knows no epoch asks at its start.
fn start(me: NodeId, restored: Option<Saved<u32>>) -> Node {
    let mut m = build(me, MemberConfig::new(InT(2), HOLD));
    step(&mut m, Event::Start { restored });
    step(&mut m, Event::Timer(MemberTimer::Asked));
    m
}

fn step_at(m: &mut Node, now: u64, event: EventOf<Node>) -> Effects {
    let mut effects = Vec::new();
    driver::handle(m, Instant::from_ticks(now), event, &mut effects);
    effects
}

fn step(m: &mut Node, event: EventOf<Node>) -> Effects {
    step_at(m, 0, event)
}

/// The port at which `me` hears `peer`.
fn port(me: NodeId, peer: NodeId) -> Port {
    Port(if peer < me { peer.0 - 1 } else { peer.0 - 2 })
}

/// `m` gets `packet` from `peer`, the only packet of its instant: the answers it owes then go out, as the instant
/// ends.
fn hear(m: &mut Node, peer: NodeId, packet: Packet<Script>) -> Effects {
    let from = port(m.fixed.setup.id, peer);
    let mut effects = step(m, Event::Message { from, msg: packet });
    let answer = Effect::SetTimer { timer: MemberTimer::Answer, after: Span::exactly(Duration::ZERO) };
    if let Some(k) = effects.iter().position(|e| *e == answer) {
        effects.remove(k);
        effects.extend(step(m, Event::Timer(MemberTimer::Answer)));
    }
    effects
}

/// A packet of incarnation 1 of a sender that has seen `seen` and leads under `lead`.
fn packet(seen: Epoch, lead: Option<Epoch>, body: Body<Script>) -> Packet<Script> {
    stamped(1, seen, lead, body)
}

/// A packet of incarnation `incarnation` of a sender holding the configuration it started with.
fn stamped(incarnation: u64, seen: Epoch, lead: Option<Epoch>, body: Body<Script>) -> Packet<Script> {
    Packet { incarnation, seen, lead, config: ConfigId::INITIAL, body }
}

/// What a member that holds the configuration it started with saves.
fn saved(incarnation: u64, seen: Epoch, inner: Option<u32>) -> Saved<u32> {
    Saved { incarnation, seen, inner, voters: None }
}

/// An algorithm message from a sender that has seen no epoch and does not lead.
fn says(script: Script) -> Packet<Script> {
    packet(Epoch::ZERO, None, Body::Algorithm(script))
}

/// `m`'s algorithm makes it leader (on a message from `by`) and keeps it so for the settling wait: the
/// effects of the wait's end.
fn settle_as_leader(m: &mut Node, by: NodeId) -> Effects {
    hear(m, by, says(Script::Lead));
    step(m, Event::Timer(MemberTimer::Settle))
}

fn notices(effects: &Effects) -> Vec<Notice> {
    effects.iter().filter_map(|e| if let Effect::Notify(n) = e { Some(*n) } else { None }).collect()
}

fn elected(effects: &Effects) -> Vec<Epoch> {
    notices(effects)
        .into_iter()
        .filter_map(|n| if let Notice::Elected { epoch } = n { Some(epoch) } else { None })
        .collect()
}

fn sends(effects: &Effects) -> Vec<(Port, Packet<Script>)> {
    effects
        .iter()
        .filter_map(|e| if let Effect::Send { to, msg } = e { Some((*to, msg.clone())) } else { None })
        .collect()
}

fn timers_set(effects: &Effects) -> Vec<(MemberTimer<Script>, Span)> {
    effects
        .iter()
        .filter_map(|e| if let Effect::SetTimer { timer, after } = e { Some((*timer, *after)) } else { None })
        .collect()
}

/// What a member sends to each other member, by port: one packet with this header and body.
fn to_everybody(incarnation: u64, seen: Epoch, lead: Option<Epoch>, body: Body<Script>) -> Vec<(Port, Packet<Script>)> {
    [Port(0), Port(1)]
        .map(|p| (p, Packet { incarnation, seen, lead, config: ConfigId::INITIAL, body: body.clone() }))
        .to_vec()
}

fn hash(m: &Node) -> u64 {
    let mut h = DefaultHasher::new();
    m.hash(&mut h);
    h.finish()
}

#[test]
fn a_new_incarnation_is_one_more_than_the_restored_one_and_durable_at_start() {
    let mut a = build(A, MemberConfig::new(InT(2), HOLD));
    let effects = step(&mut a, Event::Start { restored: None });
    // It knows no epoch: it asks (see below).
    let question = stamped(1, Epoch::ZERO, None, Body::Ask);
    assert_eq!(
        effects,
        [
            Effect::Persist(saved(1, Epoch::ZERO, None)),
            Effect::SetTimer { timer: MemberTimer::Asked, after: Span::exactly(T * 2 + Duration::TICK) },
            Effect::Send { to: port(A, B), msg: question.clone() },
            Effect::Send { to: port(A, C), msg: question },
        ]
    );
    assert_eq!(
        (a.incarnation(), a.seen(), a.leadership()),
        (1, Epoch::ZERO, Leadership { leader: None, epoch: Epoch::ZERO })
    );

    let mut b = build(B, MemberConfig::new(InT(2), HOLD));
    let restored = saved(4, ballot(2, C), Some(7));
    let effects = step(&mut b, Event::Start { restored: Some(restored) });
    assert_eq!(effects, [Effect::Persist(saved(5, ballot(2, C), Some(7)))]);
    assert_eq!((b.incarnation(), b.seen()), (5, ballot(2, C)));
    assert_eq!(b.leadership(), Leadership { leader: None, epoch: ballot(2, C) }, "the last epoch it had seen");
    assert_eq!(b.inner().initiated, 7, "the algorithm restarts from its durable state");
}

#[test]
fn a_leader_grants_itself_an_epoch_above_all_it_has_seen() {
    let mut c = start(C, Some(saved(1, ballot(4, A), None)));
    // The algorithm's own "I am the leader" gives way to the member's grant: only the settling wait starts,
    // and the algorithm's coordinator messages leave with the member's header.
    let effects = hear(&mut c, A, says(Script::Lead));
    assert_eq!(notices(&effects), []);
    assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
    // A, which has seen no epoch, is told of the one C knows.
    let mut expected = to_everybody(2, ballot(4, A), None, Body::Algorithm(Script::Follow(C)));
    expected.push((port(C, A), stamped(2, ballot(4, A), None, Body::Announce)));
    assert_eq!(sends(&effects), expected);

    let effects = step(&mut c, Event::Timer(MemberTimer::Settle));
    let granted = ballot(5, C);
    assert_eq!(elected(&effects), [granted]);
    assert_eq!(sends(&effects), to_everybody(2, granted, Some(granted), Body::Announce));
    assert_eq!((c.grant(), c.seen()), (Some(granted), granted));
    assert_eq!(c.leadership(), Leadership { leader: Some(C), epoch: granted });
    // Still leading: nothing new (but A, whose packet shows no epoch, is told the grant).
    let correction = stamped(2, granted, Some(granted), Body::Announce);
    assert_eq!(hear(&mut c, A, says(Script::Lead)), [Effect::Send { to: port(C, A), msg: correction }]);

    let effects = hear(&mut c, A, says(Script::Elect));
    let ended = [Notice::Ended { epoch: granted }, Notice::Shows { leader: None, epoch: granted }];
    assert_eq!(notices(&effects), ended);
    assert_eq!(c.grant(), None);
}

#[test]
fn a_grown_seen_is_durable_before_the_notices_and_the_announcement_that_depend_on_it() {
    // A follower hears its leader's grant.
    let mut a = start(A, None);
    hear(&mut a, B, says(Script::Follow(B)));
    let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
    let shows = Notice::Shows { leader: Some(B), epoch: ballot(1, B) };
    let persist = effects.iter().position(|e| matches!(e, Effect::Persist(s) if s.seen == ballot(1, B)));
    let notify = effects.iter().position(|e| *e == Effect::Notify(shows));
    assert!(persist.is_some() && persist < notify, "{effects:?}");

    // A leader hears of a newer epoch and grants itself one above it.
    let mut b = start(B, None);
    settle_as_leader(&mut b, A);
    let effects = hear(&mut b, A, packet(ballot(7, C), None, Body::Announce));
    let granted = ballot(8, B);
    let mut expected = vec![
        Effect::Persist(saved(1, granted, None)),
        Effect::Notify(Notice::Ended { epoch: ballot(1, B) }),
        Effect::Notify(Notice::Elected { epoch: granted }),
        Effect::Notify(Notice::Shows { leader: Some(B), epoch: granted }),
    ];
    let announce = to_everybody(1, granted, Some(granted), Body::Announce);
    expected.extend(announce.into_iter().map(|(to, msg)| Effect::Send { to, msg }));
    assert_eq!(effects, expected);
}

#[test]
fn a_follower_vouches_only_for_the_newest_grant_and_corrects_older_ones() {
    let mut a = start(A, None);
    // The algorithm names B before B's grant arrived: no leader yet.
    assert_eq!(hear(&mut a, B, says(Script::Follow(B))), []);
    assert_eq!(a.leadership(), Leadership { leader: None, epoch: Epoch::ZERO });
    let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
    assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(1, B) });
    assert_eq!(sends(&effects), []);
    // C has seen a newer epoch: B's grant is stale, and B must hear of it.
    hear(&mut a, C, packet(ballot(3, C), None, Body::Announce));
    assert_eq!(a.leadership(), Leadership { leader: None, epoch: ballot(1, B) });
    let effects = hear(&mut a, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
    let correction = stamped(1, ballot(3, C), None, Body::Announce);
    assert_eq!(sends(&effects), [(port(A, B), correction)]);
    assert_eq!(a.leadership(), Leadership { leader: None, epoch: ballot(1, B) });
    // B's newer grant.
    let effects = hear(&mut a, B, packet(ballot(4, B), Some(ballot(4, B)), Body::Announce));
    assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(4, B) });
    assert_eq!(sends(&effects), []);
}

#[test]
fn a_superseded_leader_stops_and_grants_itself_a_newer_epoch() {
    let mut b = start(B, None);
    assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(1, B)]);
    // A still claims an older grant: a lower claim, live or not, does not hold B back.
    hear(&mut b, A, packet(ballot(1, A), Some(ballot(1, A)), Body::Announce));
    assert_eq!(b.grant(), Some(ballot(1, B)));
    let effects = hear(&mut b, C, packet(ballot(7, C), None, Body::Announce));
    let replaced = [Notice::Ended { epoch: ballot(1, B) }, Notice::Elected { epoch: ballot(8, B) }];
    assert_eq!(notices(&effects)[..2], replaced);
    assert_eq!(b.grant(), Some(ballot(8, B)));
}

#[test]
fn two_leaders_do_not_outbid_each_other_and_a_live_rival_keeps_its_grant() {
    // C leads under 6.3; B comes back from a crash, the algorithm makes it leader before it heard of C.
    let mut b = start(B, Some(saved(1, ballot(1, B), None)));
    assert_eq!(elected(&settle_as_leader(&mut b, A)), [ballot(2, B)]);
    // B hears C claim a higher grant: B stops and grants nothing while C's claim is live.
    let claim = packet(ballot(6, C), Some(ballot(6, C)), Body::Announce);
    let effects = hear(&mut b, C, claim.clone());
    let stopped = [Notice::Ended { epoch: ballot(2, B) }, Notice::Shows { leader: None, epoch: ballot(2, B) }];
    assert_eq!(notices(&effects), stopped);
    assert_eq!(b.grant(), None);
    assert_eq!(notices(&hear(&mut b, C, claim)), [], "C's claim is still live");
    // C stops claiming (it follows B now): B grants itself an epoch above C's.
    assert_eq!(elected(&hear(&mut b, C, packet(ballot(6, C), None, Body::Announce))), [ballot(7, B)]);

    // C, meanwhile, hears B's old, lower claim: it keeps its grant, and tells B of its epoch.
    let mut c = start(C, None);
    settle_as_leader(&mut c, A);
    let effects = hear(&mut c, B, packet(ballot(1, B), Some(ballot(1, B)), Body::Announce));
    assert_eq!(notices(&effects), []);
    assert_eq!(c.grant(), Some(ballot(1, C)));
    let correction = stamped(1, ballot(1, C), Some(ballot(1, C)), Body::Announce);
    assert_eq!(sends(&effects), [(port(C, B), correction)]);
}

#[test]
fn a_silent_rivals_claim_expires() {
    let mut b = start(B, None);
    let effects = hear(&mut b, C, packet(ballot(6, C), Some(ballot(6, C)), Body::Announce));
    let life = Span::exactly(T * 4 + Duration::TICK);
    assert_eq!(timers_set(&effects), [(MemberTimer::Claim(port(B, C)), life)], "(heartbeat + 2)·T, then a tick");
    assert_eq!(elected(&settle_as_leader(&mut b, A)), []);
    assert_eq!(b.grant(), None);
    let effects = step(&mut b, Event::Timer(MemberTimer::Claim(port(B, C))));
    assert_eq!(elected(&effects), [ballot(7, B)]);
}

#[test]
fn a_member_grants_only_once_the_algorithm_kept_it_leader_for_the_settling_time() {
    let mut a = start(A, None);
    let effects = hear(&mut a, B, says(Script::Lead));
    assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
    assert_eq!(elected(&effects), []);
    // It led for a moment only (another epoch's coordinator arrived): nothing granted, the wait starts over.
    let effects = hear(&mut a, B, says(Script::Follow(B)));
    assert_eq!(effects, [Effect::CancelTimer { timer: MemberTimer::Settle }]);
    assert_eq!(step(&mut a, Event::Timer(MemberTimer::Settle)), [], "a wait that ended too late");
    let effects = hear(&mut a, B, says(Script::Lead));
    assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
    assert_eq!(elected(&effects), []);
    assert_eq!(elected(&step(&mut a, Event::Timer(MemberTimer::Settle))), [ballot(1, A)]);
}

#[test]
fn a_packet_of_an_older_incarnation_of_its_sender_changes_nothing() {
    let mut a = start(A, None);
    hear(&mut a, B, stamped(3, Epoch::ZERO, None, Body::Algorithm(Script::Follow(B))));
    let before = a.clone();
    let old = stamped(2, ballot(9, B), Some(ballot(9, B)), Body::Announce);
    assert_eq!(hear(&mut a, B, old.clone()), []);
    assert_eq!(a, before);
    assert_eq!(a.seen(), Epoch::ZERO);
    // The same packet from its newer incarnation is heard.
    hear(&mut a, B, Packet { incarnation: 4, ..old });
    assert_eq!(a.leadership(), Leadership { leader: Some(B), epoch: ballot(9, B) });
}

#[test]
fn a_resigning_leader_ends_its_grant_tells_everybody_and_sits_out() {
    let mut b = start(B, None);
    settle_as_leader(&mut b, A);
    let effects = step(&mut b, Event::Command(Command::Resign));
    assert!(b.inner().resigned, "the algorithm is told");
    let ended = [Notice::Ended { epoch: ballot(1, B) }, Notice::Shows { leader: None, epoch: ballot(1, B) }];
    assert_eq!(notices(&effects), ended);
    assert_eq!(sends(&effects), to_everybody(1, ballot(1, B), None, Body::Leaving));
    assert_eq!(timers_set(&effects), [(MemberTimer::Wake, Span::exactly(HOLD))]);
    assert_eq!(b.grant(), None);
    // While it sits out, the algorithm hears nothing: neither its timers nor the others' messages.
    let timer = MemberTimer::Inner { life: 0, timer: Script::Elect };
    assert_eq!(step(&mut b, Event::Timer(timer)), []);
    assert_eq!(hear(&mut b, C, says(Script::Follow(C))), []);
    assert_eq!(b.inner().status(), Status::normal(Some(B), Epoch::ZERO));
    assert_eq!(b.leadership(), Leadership { leader: None, epoch: ballot(1, B) });
}

#[test]
fn after_the_resign_hold_the_algorithm_restarts_from_its_durable_state() {
    let mut b = start(B, None);
    step(&mut b, Event::Command(Command::Initiate));
    settle_as_leader(&mut b, A);
    step(&mut b, Event::Command(Command::Resign));
    let effects = step(&mut b, Event::Timer(MemberTimer::Wake));
    // A fresh instance, restarted from its durable state, which initiates.
    assert_eq!((b.inner().initiated, b.inner().resigned), (2, false));
    assert_eq!(b.inner().status(), Status::election(Epoch::ZERO));
    assert_eq!(effects, [Effect::Persist(saved(1, ballot(1, B), Some(2)))]);
    // The timers of its earlier instance are ignored; the new one's are not.
    assert_eq!(step(&mut b, Event::Timer(MemberTimer::Inner { life: 0, timer: Script::Lead })), []);
    let effects = step(&mut b, Event::Timer(MemberTimer::Inner { life: 1, timer: Script::Lead }));
    assert_eq!(timers_set(&effects), [(MemberTimer::Settle, Span::exactly(T))]);
    assert_eq!(elected(&step(&mut b, Event::Timer(MemberTimer::Settle))), [ballot(2, B)]);
}

#[test]
fn resigning_a_member_that_does_not_lead_does_nothing() {
    let mut a = start(A, None);
    hear(&mut a, B, says(Script::Follow(B)));
    let before = a.clone();
    assert_eq!(step(&mut a, Event::Command(Command::Resign)), []);
    assert_eq!(a, before);
    assert!(!a.inner().resigned);
}

#[test]
fn a_member_that_leaves_sits_out_for_good() {
    let mut b = start(B, None);
    settle_as_leader(&mut b, A);
    let effects = step(&mut b, Event::Command(Command::Leave));
    assert!(b.inner().resigned, "the algorithm is told to resign");
    assert_eq!(notices(&effects)[0], Notice::Ended { epoch: ballot(1, B) });
    assert_eq!(sends(&effects), to_everybody(1, ballot(1, B), None, Body::Leaving));
    assert_eq!(timers_set(&effects), [], "no end to the hold");
    let before = b.clone();
    for event in [
        Event::Timer(MemberTimer::Wake),
        Event::Command(Command::Initiate),
        Event::Command(Command::Leave),
        Event::Timer(MemberTimer::Inner { life: 0, timer: Script::Lead }),
    ] {
        assert_eq!(step(&mut b, event.clone()), [], "{event:?}");
    }
    assert_eq!(hear(&mut b, A, says(Script::Lead)), []);
    assert_eq!(b, before);
}

#[test]
fn a_leaving_leader_makes_the_algorithm_initiate() {
    let mut a = start(A, None);
    hear(&mut a, B, says(Script::Follow(B)));
    hear(&mut a, C, packet(Epoch::ZERO, None, Body::Leaving));
    assert_eq!(a.inner().initiated, 0, "C was not its leader");
    let effects = hear(&mut a, B, packet(Epoch::ZERO, None, Body::Leaving));
    assert_eq!(a.inner().initiated, 1);
    assert_eq!(effects, [Effect::Persist(saved(1, Epoch::ZERO, Some(1)))]);
}

#[test]
fn the_planted_same_epoch_flaw_makes_a_grant_reuse_the_epoch_it_replaces() {
    for (bug, granted) in [(None, ballot(5, B)), (Some(Bug::SameEpoch), ballot(4, A))] {
        let mut b = build(B, MemberConfig { bug, ..MemberConfig::new(InT(2), HOLD) });
        step(&mut b, Event::Start { restored: Some(saved(1, ballot(4, A), None)) });
        assert_eq!(elected(&settle_as_leader(&mut b, C)), [granted], "{bug:?}");
    }
}

#[test]
fn members_that_differ_only_in_when_things_happened_are_equal() {
    let run = |times: [u64; 5], events: usize| {
        let mut b = build(B, MemberConfig::new(InT(2), HOLD));
        let claim = packet(ballot(6, C), Some(ballot(6, C)), Body::Announce);
        let script = [
            Event::Start { restored: Some(saved(1, ballot(1, A), None)) },
            Event::Message { from: port(B, C), msg: claim },
            Event::Message { from: port(B, A), msg: says(Script::Lead) },
            Event::Timer(MemberTimer::Settle),
            Event::Timer(MemberTimer::Claim(port(B, C))),
        ];
        for (at, event) in times.into_iter().zip(script).take(events) {
            step_at(&mut b, at, event);
        }
        b
    };
    let early = run([0, 1, 2, 3, 4], 5);
    let late = run([100, 2_000, 2_500, 3_500, 6_001], 5);
    assert_eq!(early.grant(), Some(ballot(7, B)));
    assert_eq!(early, late);
    assert_eq!(hash(&early), hash(&late));
    assert_ne!(early, run([0, 1, 2, 3, 4], 4), "the claim's expiry is in the state");
}

#[test]
fn a_packet_stamped_with_an_older_epoch_is_answered_with_the_newer_one() {
    let mut a = start(A, Some(saved(1, ballot(5, C), None)));
    // B asks (or straggles): it has seen nothing newer than 2.B.
    let effects = hear(&mut a, B, packet(ballot(2, B), None, Body::Algorithm(Script::Follow(C))));
    let correction = stamped(2, ballot(5, C), None, Body::Announce);
    assert_eq!(sends(&effects), [(port(A, B), correction)]);
    // A sender that knows as much is not answered.
    assert_eq!(sends(&hear(&mut a, C, packet(ballot(5, C), None, Body::Announce))), []);
}

#[test]
fn the_kinds_left_out_of_bounds_are_the_monitors_then_the_members() {
    use crate::monitor::MONITOR_KINDS;
    assert_eq!(MEMBER_AND_MONITOR_KINDS, [MONITOR_KINDS, MEMBER_KINDS].concat());
    let kinds = Packet::<crate::monitor::MonitorMsg<Script>>::kinds();
    assert!(kinds.ends_with(&[MONITOR_KINDS, MEMBER_KINDS].concat()), "{kinds:?}");
}

#[test]
fn a_stronger_leader_outbids_a_weaker_straggler_that_leads_under_a_newer_epoch() {
    // C leads under 1.C. A was cut off, elected itself on its side under 2.A, and comes back claiming it.
    let mut c = start(C, None);
    assert_eq!(elected(&settle_as_leader(&mut c, B)), [ballot(1, C)]);
    let effects = hear(&mut c, A, packet(ballot(2, A), Some(ballot(2, A)), Body::Announce));
    // C keeps leading, at once under an epoch above A's (no gap, no election), durable before it is told,
    // and tells everybody: A, hearing a stronger member's higher claim, stops.
    let granted = ballot(3, C);
    let mut expected = vec![
        Effect::Persist(saved(1, granted, None)),
        Effect::Notify(Notice::Ended { epoch: ballot(1, C) }),
        Effect::Notify(Notice::Elected { epoch: granted }),
        Effect::Notify(Notice::Shows { leader: Some(C), epoch: granted }),
    ];
    expected.extend(
        to_everybody(1, granted, Some(granted), Body::Announce).into_iter().map(|(to, msg)| Effect::Send { to, msg }),
    );
    let claim_life = Span::exactly(T * 4 + Duration::TICK);
    expected.insert(0, Effect::SetTimer { timer: MemberTimer::Claim(port(C, A)), after: claim_life });
    assert_eq!(effects, expected);
    // A's claim, live or not, does not hold C back: a weaker member's claim never does.
    let mut c = start(C, None);
    hear(&mut c, A, packet(ballot(2, A), Some(ballot(2, A)), Body::Announce));
    assert_eq!(elected(&settle_as_leader(&mut c, B)), [ballot(3, C)]);

    // A, meanwhile, hears C's claim above its own: it stops, and grants nothing while C's claim is live, though
    // its algorithm still names it leader.
    let mut a = start(A, None);
    assert_eq!(elected(&settle_as_leader(&mut a, B)), [ballot(1, A)]);
    let effects = hear(&mut a, C, packet(ballot(3, C), Some(ballot(3, C)), Body::Announce));
    let stopped = [Notice::Ended { epoch: ballot(1, A) }, Notice::Shows { leader: None, epoch: ballot(1, A) }];
    assert_eq!(notices(&effects), stopped);
    assert_eq!(a.grant(), None);
    assert_eq!(elected(&hear(&mut a, B, says(Script::Lead))), []);
    // Its algorithm follows C: so does A.
    hear(&mut a, C, packet(ballot(3, C), Some(ballot(3, C)), Body::Algorithm(Script::Follow(C))));
    assert_eq!(a.leadership(), Leadership { leader: Some(C), epoch: ballot(3, C) });
}

#[test]
fn a_member_that_must_never_lead_takes_no_part_and_follows_the_newest_claim() {
    let mut c = build(C, MemberConfig { no_lead: true, ..MemberConfig::new(InT(2), HOLD) });
    let restored = saved(1, ballot(3, B), Some(4));
    let effects = step(&mut c, Event::Start { restored: Some(restored) });
    // Its algorithm does not even start: it sends nothing, arms no timer of its algorithm.
    assert_eq!(effects, [Effect::Persist(saved(2, ballot(3, B), Some(4)))]);
    assert_eq!(c.inner().initiated, 0);
    // Neither an election message nor a command to initiate reaches its algorithm, though it is the strongest.
    assert_eq!(sends(&hear(&mut c, A, says(Script::Lead))), []);
    assert_eq!(c.inner().status().leader, None);
    assert_eq!(sends(&step(&mut c, Event::Command(Command::Initiate))), []);
    assert_eq!(elected(&step(&mut c, Event::Timer(MemberTimer::Settle))), []);
    // It shows the leader the others' claims name, and never itself; a resignation has nothing to give up.
    let claim = ballot(4, B);
    hear(&mut c, B, packet(claim, Some(claim), Body::Announce));
    assert_eq!(c.leadership(), Leadership { leader: Some(B), epoch: claim });
    assert_eq!(notices(&step(&mut c, Event::Command(Command::Resign))), []);
    let peers = elect_core::Peers(&c.fixed.setup.neighbors);
    assert_eq!((c.grant(), c.view(&peers).role), (None, "never leads (no-lead)".into()));
}

#[test]
fn a_member_with_a_takeover_delay_follows_the_others_until_it_is_over() {
    let config = MemberConfig { takeover_after: T * 5, ..MemberConfig::new(InT(2), HOLD) };
    let mut c = build(C, config);
    let restored = saved(1, ballot(3, B), Some(4));
    let effects = step(&mut c, Event::Start { restored: Some(restored) });
    assert_eq!(timers_set(&effects), [(MemberTimer::Wake, Span::exactly(T * 5))]);
    assert_eq!((sends(&effects), c.inner().initiated), (vec![], 0), "its algorithm waits");
    // Meanwhile it follows B's claim and takes no part, though it is the strongest.
    let claim = ballot(4, B);
    hear(&mut c, B, packet(claim, Some(claim), Body::Announce));
    assert_eq!(sends(&hear(&mut c, A, says(Script::Lead))), []);
    assert_eq!(c.leadership(), Leadership { leader: Some(B), epoch: claim });
    // At the end of the delay its algorithm starts from its durable state and initiates; it may then lead.
    step(&mut c, Event::Timer(MemberTimer::Wake));
    assert_eq!(c.inner().initiated, 5);
    let effects = settle_as_leader(&mut c, A);
    assert_eq!(elected(&effects), [ballot(5, C)]);
}

mod asking;
mod lease;
mod transfer;
mod voters;

/// Two packets at one instant, one of which tells the member of a newer epoch: the sender of the other, behind it,
/// is told once the instant's packets are all in, whichever of the two the member read first.
#[test]
fn the_packets_of_an_instant_are_answered_alike_in_either_order() {
    let newer = (C, packet(ballot(5, C), None, Body::Announce));
    let older = (B, packet(ballot(1, B), None, Body::Announce));
    let answers = |packets: [(NodeId, Packet<Script>); 2]| {
        let mut a = start(A, None);
        let mut effects = Vec::new();
        for (peer, msg) in packets {
            effects.extend(step(&mut a, Event::Message { from: port(A, peer), msg }));
        }
        effects.extend(step(&mut a, Event::Timer(MemberTimer::Answer)));
        sends(&effects)
    };
    let forward = answers([newer.clone(), older.clone()]);
    assert_eq!(forward, [(port(A, B), stamped(1, ballot(5, C), None, Body::Announce))]);
    assert_eq!(answers([older, newer]), forward);
}
