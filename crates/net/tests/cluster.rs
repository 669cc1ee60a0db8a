//! Members on loopback electing, failing over, restarting, and ignoring garbage.

mod common;

use std::time::Duration;

use common::{Cluster, ids};
use elect_core::{Epoch, NodeId};
use elect_net::{LeaderEvent, Leadership};
use tokio::time::{Instant, sleep};

const MESH_ALGORITHMS: [&str; 3] = ["bully", "garcia-molina", "invitation"];

/// Whether the algorithm always ends with the strongest live member leading. The Invitation algorithm merges
/// groups under whichever coordinator invites first: one leader, not necessarily the strongest.
fn strongest_wins(algorithm: &str) -> bool {
    algorithm != "invitation"
}

/// The Invitation algorithm's own failure detection and merges, faster than its defaults (every 10·T), so that the
/// tests stay short.
fn quick(config: &mut elect_net::NodeConfig) {
    if config.algorithm == "invitation" {
        config.params = elect_algos::Params::parse(["check=4", "timeout=4", "merge=2"]).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_and_five_members_elect_the_strongest_and_agree_on_it() {
    for algorithm in MESH_ALGORITHMS {
        for members in [&[1, 2, 3][..], &[4, 9, 2, 7, 5]] {
            let start = Instant::now();
            let cluster = Cluster::start_with(algorithm, &ids(members), quick).await;
            let l = cluster.agreed().await;
            let strongest = NodeId(*members.iter().max().unwrap());
            if strongest_wins(algorithm) {
                assert_eq!(l.leader, Some(strongest), "{algorithm}: the strongest member leads");
            }
            assert_eq!(Some(l.epoch.starter()), l.leader, "{algorithm}: the leader granted its own epoch");
            eprintln!("{algorithm}, {} members: elected in {:?}", members.len(), start.elapsed());
            cluster.check_logs();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_leader_elects_another_with_a_higher_epoch_on_every_survivor() {
    for algorithm in MESH_ALGORITHMS {
        let mut cluster = Cluster::start_with(algorithm, &ids(&[1, 2, 3, 4, 5]), quick).await;
        for round in 0..2 {
            let (before, after, took) = cluster.fail_over().await;
            assert!(after.epoch > before.epoch, "{algorithm}: {after:?} after {before:?}");
            if strongest_wins(algorithm) {
                assert_eq!(after.leader, Some(NodeId(4 - round)), "{algorithm}: the strongest survivor leads");
            }
            eprintln!("{algorithm}: failover in {took:?}");
        }
        cluster.check_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_member_rejoins_with_a_higher_incarnation_and_epochs_never_go_backwards() {
    for algorithm in MESH_ALGORITHMS {
        let mut cluster = Cluster::start_with(algorithm, &ids(&[1, 2, 3]), quick).await;
        let first = cluster.agreed().await;
        let follower = if first.leader == Some(NodeId(1)) { NodeId(2) } else { NodeId(1) };
        // A follower restarts: it comes back as a new incarnation and does not depose the healthy leader.
        let incarnation = cluster.nodes[&follower].incarnation();
        cluster.kill(follower).await;
        cluster.restart(follower).await;
        assert_eq!(cluster.nodes[&follower].incarnation(), incarnation + 1, "{algorithm}");
        let l = cluster.agreed().await;
        assert_eq!(l.leader, first.leader, "{algorithm}: the leader stays");
        assert!(l.epoch >= first.epoch, "{algorithm}");
        cluster.check_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bully_the_strongest_member_takes_over_when_it_comes_back() {
    let mut cluster = Cluster::start("bully", &ids(&[1, 2, 3])).await;
    let incarnation = cluster.nodes[&NodeId(3)].incarnation();
    let (before, during, _) = cluster.fail_over().await;
    assert_eq!((before.leader, during.leader), (Some(NodeId(3)), Some(NodeId(2))));
    cluster.restart(NodeId(3)).await;
    assert_eq!(cluster.nodes[&NodeId(3)].incarnation(), incarnation + 1);
    // Bully: the strongest live member always wins, so the returning member deposes the healthy leader, in an
    // epoch above every earlier one.
    let after = cluster.agreed_where(|l| l.leader == Some(NodeId(3))).await;
    assert!(after.epoch > during.epoch && during.epoch > before.epoch);
    cluster.check_logs();
    let log = cluster.log(NodeId(2));
    let grants: Vec<Epoch> = log
        .iter()
        .filter_map(|e| match e {
            LeaderEvent::StartedLeading { epoch } => Some(*epoch),
            _ => None,
        })
        .collect();
    assert_eq!(grants, [during.epoch], "2 led once, under the epoch everybody agreed on");
    assert_eq!(log.iter().filter(|e| matches!(e, LeaderEvent::StoppedLeading { .. })).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resign_hands_over_and_shutdown_resigns_first() {
    let mut cluster =
        Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| c.resign_hold = Duration::from_millis(500)).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));
    let start = Instant::now();
    cluster.nodes[&NodeId(3)].resign();
    // The resigned member sits out, following the newest claim; the others elect the next strongest.
    let handed = cluster.agreed_by(&ids(&[1, 2, 3]), |l| l.leader == Some(NodeId(2))).await;
    eprintln!("resign: handed over in {:?}", start.elapsed());
    assert!(handed.epoch > first.epoch);
    assert_eq!(
        grants_and_ends(&cluster.log(NodeId(3)))[..2],
        [LeaderEvent::StartedLeading { epoch: first.epoch }, LeaderEvent::StoppedLeading { epoch: first.epoch }]
    );
    // Bully has no hand-over of its own: after the resign hold, the strongest member leads again.
    let back = cluster.agreed_where(|l| l.leader == Some(NodeId(3))).await;
    assert!(back.epoch > handed.epoch);

    let leader = cluster.nodes.remove(&NodeId(3)).unwrap();
    let watch = leader.leadership();
    let start = Instant::now();
    leader.shutdown().await.unwrap();
    assert_eq!(watch.borrow().leader, None, "a member that left leads nobody");
    let after = cluster.agreed_where(|l| l.leader != Some(NodeId(3))).await;
    eprintln!("graceful shutdown: new leader in {:?}", start.elapsed());
    assert_eq!(after.leader, Some(NodeId(2)));
    assert!(after.epoch > back.epoch);
    assert!(matches!(
        cluster.log(NodeId(3)).iter().rev().find(|e| !matches!(e, LeaderEvent::LeaderChanged(_))),
        Some(LeaderEvent::StoppedLeading { .. })
    ));
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// Long: one cluster, fed each kind of bad packet in turn and then checked once: the packets share the cluster's setup
// and its counters.
async fn garbage_and_foreign_packets_change_nothing_and_are_counted() {
    use elect_algos::bully::Msg as Bully;
    use elect_algos::member::{Body, ConfigId, Packet};
    use elect_algos::monitor::MonitorMsg;
    use elect_net::wire::{self, Drop, Envelope};
    type Msg = Packet<MonitorMsg<Bully>>;

    // A generous delay bound: nothing but the garbage may change leadership, even on a loaded machine.
    let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| c.delay_bound = Duration::from_millis(50)).await;
    let before = cluster.agreed().await;
    let target = NodeId(2);
    let addr = cluster.addrs[&target];
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let good = Envelope::<Msg> {
        version: wire::PROTOCOL_VERSION,
        cluster: wire::cluster_id("test"),
        from: NodeId(3),
        to: target,
        seq: 1,
        msg: Packet {
            incarnation: 1,
            seen: Epoch::from_bits(u64::MAX),
            lead: Some(Epoch::from_bits(u64::MAX)),
            config: ConfigId::INITIAL,
            body: Body::Algorithm(MonitorMsg::Heartbeat {
                epoch: Epoch::from_bits(u64::MAX),
                seq: u64::MAX,
                down: None,
            }),
        },
    };
    let mut buf = Vec::new();
    let mut send = |e: &Envelope<Msg>| {
        wire::encode(e, None, &mut buf).unwrap();
        sender.send_to(&buf, addr).unwrap();
    };
    send(&Envelope { cluster: wire::cluster_id("other"), ..good.clone() });
    send(&Envelope { version: wire::PROTOCOL_VERSION + 1, ..good.clone() });
    send(&Envelope { to: NodeId(1), ..good.clone() });
    send(&Envelope { from: NodeId(99), ..good.clone() });
    send(&Envelope { from: target, ..good.clone() });
    // From member 3, but not from its address (a keyless cluster checks it): a forged packet claiming a newer
    // incarnation and the highest epochs, and one of an older incarnation.
    send(&Envelope { msg: Packet { incarnation: u64::MAX, ..good.msg.clone() }, ..good.clone() });
    send(&Envelope { msg: Packet { incarnation: 0, ..good.msg.clone() }, ..good.clone() });
    // Random bytes, some past the version check.
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..200 {
        let len = 1 + i % 60;
        let mut bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        if i % 2 == 0 {
            bytes[0] = wire::PROTOCOL_VERSION as u8;
        }
        sender.send_to(&bytes, addr).unwrap();
    }
    wire::encode(&good, None, &mut buf).unwrap();
    buf.push(0);
    sender.send_to(&buf, addr).unwrap();
    sleep(Duration::from_millis(300)).await; // Several heartbeat periods.

    for (&id, node) in &cluster.nodes {
        assert_eq!(*node.leadership().borrow(), before, "member {id} saw a change");
    }
    let stats = cluster.nodes[&target].stats();
    assert_eq!(
        stats.dropped(Drop::Cluster) + stats.dropped(Drop::Malformed) + stats.dropped(Drop::Version),
        203,
        "{stats:?}"
    );
    assert_eq!(stats.dropped(Drop::Misaddressed), 1, "{stats:?}");
    assert_eq!(stats.dropped(Drop::UnknownSender), 2, "{stats:?}");
    assert_eq!(stats.dropped(Drop::WrongAddress), 2, "{stats:?}");
    assert!(stats.dropped(Drop::Version) >= 1 && stats.dropped(Drop::Cluster) >= 1);
    assert_eq!(stats.dropped_total(), 208);
    assert!(cluster.nodes.values().all(|n| n.stats().send_errors == 0));
    let _: Leadership = before;
    cluster.check_logs();
}

/// The StartedLeading and StoppedLeading events of a log.
fn grants_and_ends(log: &[LeaderEvent]) -> Vec<LeaderEvent> {
    log.iter().filter(|e| !matches!(e, LeaderEvent::LeaderChanged(_))).copied().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ring_algorithms_elect_over_the_members_logical_ring_and_fail_over() {
    let ring = elect_algos::registry::all().iter().filter(|i| i.needs == elect_algos::Needs::Ring && !i.lockstep);
    let names: Vec<&str> = ring.map(|i| i.name).collect();
    assert!(names.len() >= 5, "{names:?}");
    for algorithm in names {
        let mut cluster = Cluster::start(algorithm, &ids(&[1, 2, 3, 4])).await;
        let (before, after, took) = cluster.fail_over().await;
        assert_eq!((before.leader, after.leader), (Some(NodeId(4)), Some(NodeId(3))), "{algorithm}");
        assert!(after.epoch > before.epoch, "{algorithm}");
        eprintln!("{algorithm}: failover in {took:?}");
        cluster.check_logs();
    }
}

/// Failover times over many kills, printed (not a timed assertion: run it with `--ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test"]
async fn failover_distribution() {
    let kills = 30;
    for (algorithm, t) in [("bully", 20), ("bully", 5), ("garcia-molina", 5), ("chang-roberts", 5)] {
        let configure: fn(&mut elect_net::NodeConfig) =
            if t == 5 { |c| c.delay_bound = Duration::from_millis(5) } else { |_| {} };
        let mut cluster = Cluster::start_with(algorithm, &ids(&[1, 2, 3, 4, 5]), configure).await;
        let mut times = Vec::new();
        for _ in 0..kills {
            let (before, _, took) = cluster.fail_over().await;
            times.push(took);
            let back = before.leader.unwrap();
            cluster.restart(back).await;
            cluster.agreed_where(|l| l.leader == Some(back)).await;
        }
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        eprintln!(
            "{algorithm}, T = {t} ms, heartbeat 2T, 5 members, {kills} kills: p50 {:?}, p90 {:?}, max {:?}",
            at(0.5),
            at(0.9),
            times[times.len() - 1]
        );
        cluster.check_logs_allowing(kills + 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_back_from_a_long_absence_is_fenced_above_every_epoch_granted_meanwhile() {
    let mut cluster =
        Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| c.resign_hold = Duration::from_millis(200)).await;
    let (first, _, _) = cluster.fail_over().await;
    // While 3 is away, leadership moves on for several rounds: 2 resigns, 1 leads, 2 comes back.
    let mut latest = cluster.agreed().await;
    for _ in 0..2 {
        cluster.nodes[&NodeId(2)].resign();
        let l = cluster.agreed_by(&ids(&[1]), |l| l.leader == Some(NodeId(1))).await;
        latest = cluster.agreed_where(|l| l.leader == Some(NodeId(2))).await;
        assert!(latest.epoch > l.epoch);
    }
    assert!(latest.epoch.round() >= first.epoch.round() + 3);
    // 3 restarts with a state file that knows only its own old grant: whatever it grants first, every member ends
    // up following it under an epoch above everything granted while it was away.
    cluster.restart(NodeId(3)).await;
    let back = cluster.agreed_where(|l| l.leader == Some(NodeId(3))).await;
    assert!(back.epoch > latest.epoch, "{back:?} after {latest:?}");
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_must_never_lead_follows_the_others_through_a_failover() {
    // Member 3, the strongest, must never lead: the others elect 2, then 1 when 2 dies; 3 follows each.
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| c.no_lead = c.id == NodeId(3)).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(2)));
    let (_, second, _) = cluster.fail_over().await;
    assert_eq!(second.leader, Some(NodeId(1)));
    assert!(second.epoch > first.epoch);
    let log = cluster.log(NodeId(3));
    assert!(!log.iter().any(|e| matches!(e, LeaderEvent::StartedLeading { .. })), "member 3 never led: {log:?}");
    assert!(log.contains(&LeaderEvent::LeaderChanged(second)), "{log:?}");
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preferred_member_takes_leadership_back_only_once_it_has_run_for_its_takeover_delay() {
    // Member 3, Bully's strongest, waits 600 ms after each start before it takes part.
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| {
        if c.id == NodeId(3) {
            c.takeover_after = Duration::from_millis(600);
        }
    })
    .await;
    // The others elect 2 at once; 3 follows it, then takes over once its delay is over.
    let first = cluster.agreed_where(|l| l.leader == Some(NodeId(2))).await;
    let taken = cluster.agreed_where(|l| l.leader == Some(NodeId(3))).await;
    assert!(taken.epoch > first.epoch);
    let (_, second, _) = cluster.fail_over().await;
    assert_eq!(second.leader, Some(NodeId(2)));
    // Member 3 comes back twice and dies again within its delay: the leadership does not move.
    for _ in 0..2 {
        cluster.restart(NodeId(3)).await;
        sleep(Duration::from_millis(250)).await;
        for id in ids(&[1, 2, 3]) {
            assert_eq!(cluster.leadership(id), second, "{id} while 3 waits");
        }
        cluster.kill(NodeId(3)).await;
    }
    cluster.restart(NodeId(3)).await;
    let back = cluster.agreed_where(|l| l.leader == Some(NodeId(3))).await;
    assert!(back.epoch > second.epoch);
    let log = cluster.log(NodeId(1));
    let leaders: Vec<u32> = log
        .iter()
        .filter_map(|e| match e {
            LeaderEvent::LeaderChanged(Leadership { leader: Some(l), .. }) => Some(l.0),
            _ => None,
        })
        .collect();
    let mut changes = leaders.clone();
    changes.dedup();
    assert_eq!(changes, [2, 3, 2, 3], "no flapping: {log:?}");
    cluster.check_logs();
}
