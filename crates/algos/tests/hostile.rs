//! Packets no member sends, at a deployed member: each is invalid ([`Member::validate`], which the runtime applies
//! to every packet before the member sees it), and even handed over unchecked it crashes nothing and moves no epoch
//! backwards. Then the adversary's generator of the fuzz target `member`, as a proptest over every algorithm a
//! member runs.

use elect_algos::bully::{self, Bully};
use elect_algos::garcia_molina::{self, GarciaMolina};
use elect_algos::hostile;
use elect_algos::lelann::{self, LeLann};
use elect_algos::member::{self, Body, ConfigId, Deployed, Member, MemberConfig, Packet};
use elect_algos::monitor::{LeaderMonitor, MonitorConfig, MonitorMsg};
use elect_algos::{Algorithm, Params};
use elect_core::driver;
use elect_core::{
    Command, Duration, Epoch, Event, EventOf, InT, Instant, Neighbor, NodeId, Port, Process, Rank, Ranking, RingPorts,
    Setup, Shape,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const T: Duration = Duration::from_ticks(1000);
const TOP: Epoch = Epoch::from_bits(u64::MAX);

/// Member `me` (1, 2 or 3) of a cluster of three running `algorithm` in the leader monitor, on the runtime's mesh
/// (ports in id order, the logical ring through the ids), started and elected among itself and member 2: member 3
/// is not running, as in a cluster one of whose members is down.
fn member<A: Algorithm>(algorithm: A, me: u32) -> Member<LeaderMonitor<A>> {
    let ranking = Ranking::default();
    let (n, i) = (3, me as usize - 1);
    let port = |j: usize| Port(if j < i { j } else { j - 1 } as u32);
    let neighbors: Vec<Neighbor> = (0..n)
        .filter(|&j| j != i)
        .map(|j| Neighbor { port: port(j), id: NodeId(j as u32 + 1), rank: ranking.rank(NodeId(j as u32 + 1)) })
        .collect();
    let ring_order: Vec<Port> = (1..n).map(|k| port((i + k) % n)).collect();
    let setup = Setup {
        id: NodeId(me),
        rank: ranking.rank(NodeId(me)),
        neighbors: &neighbors,
        ring: Some(RingPorts { next: port((i + 1) % n), prev: port((i + n - 1) % n) }),
        ring_order: &ring_order,
        shape: Shape::Complete,
        delay_bound: Some(T),
        diameter: Some(1),
        suspected: &[],
    };
    let monitor = LeaderMonitor::new(algorithm, MonitorConfig::new(InT(2), 1, InT(5)));
    let mut m = Deployed::new(monitor, MemberConfig::new(InT(2), T * 10)).build(&setup);
    step(&mut m, Event::Start { restored: None });
    step(&mut m, Event::Command(Command::Initiate));
    m
}

fn step<P: Process>(p: &mut P, event: EventOf<P>) {
    let mut effects = Vec::new();
    driver::handle(p, Instant::ZERO, event, &mut effects);
}

fn rank(id: u32) -> Rank {
    Ranking::default().rank(NodeId(id))
}

/// Hands `packet` from member 3 to member 1 unchecked (as a runtime that skipped validation would), and checks
/// that nothing went backwards.
fn hand_over<A: Algorithm>(m: &mut Member<A>, packet: Packet<<A::Process as Process>::Msg>) {
    let (seen, shown) = (m.seen(), m.leadership().epoch);
    let from = Port(1); // Member 1's port to member 3.
    step(m, Event::Message { from, msg: packet });
    assert!(m.seen() >= seen, "seen went back from {seen} to {}", m.seen());
    assert!(m.leadership().epoch >= shown, "the shown epoch went back");
}

fn packet<M>(seen: Epoch, lead: Option<Epoch>, body: Body<M>) -> Packet<M> {
    Packet { incarnation: 1, seen, lead, config: ConfigId::INITIAL, body }
}

#[test]
fn a_lelann_election_naming_its_receiver_with_no_ids_is_invalid_and_harmless() {
    let mut m = member(LeLann::from_params(&Params::default()).unwrap(), 1);
    let election = lelann::Msg::Election { initiator: rank(1), ids: vec![] };
    let newer = Epoch::of(9, NodeId(3));
    for msg in [
        MonitorMsg::Ring { epoch: newer, down: None, forward: true, msg: election.clone() },
        MonitorMsg::Inner { epoch: newer, down: None, msg: election },
    ] {
        let p = packet(Epoch::ZERO, None, Body::Algorithm(msg));
        assert!(m.validate(Port(1), &p).is_err(), "{p:?}");
        hand_over(&mut m, p);
    }
}

#[test]
fn a_lelann_election_that_lists_a_member_twice_or_too_many_is_invalid() {
    let m = member(LeLann::from_params(&Params::default()).unwrap(), 1);
    for ids in [vec![rank(3), rank(3)], vec![rank(3), rank(1), rank(2), rank(3)], vec![rank(99)], vec![rank(2)]] {
        let election = lelann::Msg::Election { initiator: rank(3), ids: ids.clone() };
        let msg = MonitorMsg::Ring { epoch: Epoch::of(1, NodeId(3)), down: None, forward: true, msg: election };
        assert!(m.validate(Port(1), &packet(Epoch::ZERO, None, Body::Algorithm(msg))).is_err(), "{ids:?}");
    }
    let fine = lelann::Msg::Election { initiator: rank(3), ids: vec![rank(3)] };
    let msg = MonitorMsg::Ring { epoch: Epoch::of(1, NodeId(3)), down: None, forward: true, msg: fine };
    assert_eq!(m.validate(Port(1), &packet(Epoch::ZERO, None, Body::Algorithm(msg))), Ok(()));
}

#[test]
fn a_bully_coordinator_naming_a_non_member_or_another_member_is_invalid() {
    let m = member(Bully::default(), 1);
    let epoch = Epoch::of(1, NodeId(3));
    for leader in [rank(99), rank(2)] {
        let msg = MonitorMsg::Inner { epoch, down: None, msg: bully::Msg::Coordinator { epoch, leader } };
        assert!(m.validate(Port(1), &packet(Epoch::ZERO, None, Body::Algorithm(msg))).is_err(), "{leader:?}");
    }
    let msg = MonitorMsg::Inner { epoch, down: None, msg: bully::Msg::Coordinator { epoch, leader: rank(3) } };
    assert_eq!(m.validate(Port(1), &packet(Epoch::ZERO, None, Body::Algorithm(msg))), Ok(()));
}

#[test]
fn bully_and_garcia_molina_epochs_at_the_top_are_invalid_and_never_wrap() {
    let low = Epoch::of(1, NodeId(3));
    let bully_bodies = [
        bully::Msg::Election { epoch: TOP },
        bully::Msg::Coordinator { epoch: TOP, leader: rank(3) },
        bully::Msg::Coordinator { epoch: TOP, leader: rank(2) }, // Naming the absent member's neighbour.
    ];
    let mut m = member(Bully::default(), 1);
    for msg in bully_bodies {
        for wrapped in [
            MonitorMsg::Inner { epoch: low, down: None, msg: msg.clone() },
            MonitorMsg::Inner { epoch: TOP, down: None, msg: msg.clone() },
        ] {
            let p = packet(Epoch::ZERO, None, Body::Algorithm(wrapped));
            assert!(m.validate(Port(1), &p).is_err(), "{p:?}");
            hand_over(&mut m, p);
        }
    }
    // The header: `seen` and `lead` at the top, and a grant that is not the sender's own.
    for (seen, lead) in [(TOP, None), (TOP, Some(TOP)), (low, Some(Epoch::of(1, NodeId(2))))] {
        let p: Packet<MonitorMsg<bully::Msg>> = packet(seen, lead, Body::Announce);
        assert!(m.validate(Port(1), &p).is_err(), "{p:?}");
        hand_over(&mut m, p);
    }
    let mut g = member(GarciaMolina::from_params(&Params::default()).unwrap(), 1);
    for msg in [
        garcia_molina::Msg::Halt { call: 1, epoch: TOP },
        garcia_molina::Msg::HaltAck { call: 1, epoch: TOP },
        garcia_molina::Msg::NewCoordinator { call: 1, epoch: TOP },
        garcia_molina::Msg::Ready { call: 1, epoch: TOP },
        garcia_molina::Msg::Halt { call: 1, epoch: Epoch::of(1, NodeId(2)) }, // Not the caller's own ballot.
    ] {
        let p = packet(Epoch::ZERO, None, Body::Algorithm(MonitorMsg::Inner { epoch: low, down: None, msg }));
        assert!(g.validate(Port(1), &p).is_err(), "{p:?}");
        hand_over(&mut g, p);
    }
}

#[test]
fn a_monitor_message_naming_a_non_member_as_failed_is_invalid() {
    let m = member(Bully::default(), 1);
    let p: Packet<MonitorMsg<bully::Msg>> = packet(
        Epoch::ZERO,
        None,
        Body::Algorithm(MonitorMsg::Join { epoch: Epoch::of(2, NodeId(3)), down: Some(NodeId(99)) }),
    );
    assert!(m.validate(Port(1), &p).is_err());
}

#[test]
fn what_members_send_is_valid() {
    // Members elect on a perfect network: every packet one sends passes the others' checks.
    for algorithm in member::deployable_algorithms() {
        for n in 1..=5 {
            let outcome = hostile::run_fair(algorithm.name, n, 3000).unwrap();
            assert_eq!(outcome.invalid, 0, "{} on {n}: {outcome:?}", algorithm.name);
            assert!(outcome.grants >= 1 && outcome.delivered >= n - 1, "{} on {n}: {outcome:?}", algorithm.name);
        }
    }
}

/// The fuzz target's generator, a few thousand scripts over every algorithm a member runs, from a fixed seed.
#[test]
fn no_script_of_an_adversary_breaks_a_member() {
    let algorithms: Vec<&str> = member::deployable_algorithms().map(|i| i.name).collect();
    assert!(algorithms.len() >= 9, "{algorithms:?}");
    let config = Config { cases: 2000, failure_persistence: None, ..Config::default() };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (0..algorithms.len(), 1..=5usize, proptest::collection::vec(any::<u8>(), 0..4096));
    runner
        .run(&strategy, |(a, n, bytes)| {
            let mut u = arbitrary::Unstructured::new(&bytes);
            let outcome = hostile::run(algorithms[a], n, &mut u);
            prop_assert!(outcome.is_ok(), "{}: {}", algorithms[a], outcome.unwrap_err());
            Ok(())
        })
        .unwrap();
}

/// The inputs of the fuzz target `member` that once made a member hand a message to itself for ever (every other
/// process taken for dead, a ring message that would never end its round: a forged token of a stronger process),
/// so that one handler call never returned. Each runs as the fuzz target runs it, with the algorithm fixed.
#[test]
fn a_member_alone_on_its_ring_does_not_hand_itself_a_message_for_ever() {
    for (algorithm, file) in [
        ("ring-participant", "tests/fuzzed/ring-participant-alone-forever"),
        ("hirschberg-sinclair", "tests/fuzzed/hirschberg-sinclair-alone-forever"),
    ] {
        let bytes = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let run = std::thread::spawn(move || {
            let mut u = arbitrary::Unstructured::new(&bytes);
            // As fuzz/fuzz_targets/member.rs draws them, with one algorithm to choose from.
            let _ = u.choose_index(1).unwrap();
            let n = u.int_in_range(1..=5usize).unwrap();
            let outcome = hostile::run(algorithm, n, &mut u).map(|_| ()).map_err(|e| e.to_string());
            let _ = done.send(());
            outcome
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{algorithm}: {file} still runs after a minute"));
        run.join().unwrap().unwrap_or_else(|e| panic!("{algorithm}: {file}: {e}"));
    }
}
