//! Keyed clusters on loopback: they elect; forged, corrupted, replayed and random packets are dropped, counted,
//! and change nothing.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Cluster, ids, sockets, until};
use elect_algos::bully::Msg;
use elect_algos::member::{self, Body, ConfigId};
use elect_algos::monitor::MonitorMsg;
use elect_core::{Epoch, NodeId};
use elect_net::wire::{self, Drop, Envelope};
use elect_net::{ClusterKey, Leadership, Node, NodeConfig, Stats};
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::watch;
use tokio::time::sleep;

/// The packets of Bully inside the leader monitor.
type Packet = Envelope<member::Packet<MonitorMsg<Msg>>>;

fn key() -> ClusterKey {
    ClusterKey::from_secret(b"the cluster's secret").unwrap()
}

/// Every member has the cluster key; a generous delay bound, so that nothing but the test's packets could change
/// leadership, even on a loaded machine. The Invitation algorithm checks and merges faster than by default.
fn keyed(config: &mut NodeConfig) {
    config.key = Some(key());
    config.delay_bound = Duration::from_millis(50);
    if config.algorithm == "invitation" {
        config.params = elect_algos::Params::parse(["check=4", "timeout=4", "merge=2"]).unwrap();
    }
}

/// Sends `packets` to `to` in small bursts, each time waiting until `node` counted them all in `count`, so that no
/// burst overflows the socket's receive buffer. Returns how many it sent.
async fn send_counted(to: SocketAddr, packets: &[Vec<u8>], node: &Node, count: impl Fn(&Stats) -> u64) -> u64 {
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let start = count(&node.stats());
    let mut sent = 0;
    for burst in packets.chunks(50) {
        for packet in burst {
            sender.send_to(packet, to).unwrap();
        }
        sent += burst.len() as u64;
        until("every packet sent is counted", || count(&node.stats()) >= start + sent).await;
    }
    sent
}

/// Watches on every member's leadership, marked seen.
fn watches(cluster: &Cluster) -> Vec<(NodeId, watch::Receiver<Leadership>)> {
    cluster
        .nodes
        .iter()
        .map(|(&id, node)| {
            let mut w = node.leadership();
            w.mark_unchanged();
            (id, w)
        })
        .collect()
}

fn assert_unchanged(watches: &[(NodeId, watch::Receiver<Leadership>)], before: Leadership) {
    for (id, w) in watches {
        assert!(!w.has_changed().unwrap(), "member {id}'s leadership changed: {:?}", *w.borrow());
        assert_eq!(*w.borrow(), before, "member {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_cluster_elects_and_fails_over_without_a_packet_dropped() {
    for algorithm in ["bully", "invitation", "chang-roberts"] {
        let mut cluster = Cluster::start_with(algorithm, &ids(&[1, 2, 3]), keyed).await;
        let (before, after, _) = cluster.fail_over().await;
        assert!(after.epoch > before.epoch, "{algorithm}");
        for (id, node) in &cluster.nodes {
            let stats = node.stats();
            assert!(stats.received > 0, "{algorithm}: member {id} heard nothing");
            assert_eq!(stats.dropped_total(), 0, "{algorithm}: member {id}: {stats:?}");
        }
        cluster.check_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_packets_are_dropped_counted_and_change_nothing() {
    // Member 2's traffic passes a relay that records it: the others send to the relay, which forwards every
    // packet to member 2 and then keeps a copy.
    let relay = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let members = sockets(&ids(&[1, 2, 3]));
    let target = NodeId(2);
    let target_addr = members[1].1.local_addr().unwrap();
    let recorded: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let recording = recorded.clone();
    let routes = BTreeMap::from([(target, relay.local_addr().unwrap())]);
    let relaying = tokio::spawn(async move {
        let mut buf = vec![0; wire::MAX_PACKET];
        while let Ok((len, _)) = relay.recv_from(&mut buf).await {
            let _ = relay.send_to(&buf[..len], target_addr).await;
            recording.lock().unwrap().push(buf[..len].to_vec());
        }
    });
    let mut cluster = Cluster::start_routed("bully", members, routes, keyed).await;
    let before = cluster.agreed().await;
    sleep(Duration::from_millis(300)).await; // A few heartbeats of the leader.

    // Every packet member 2 accepted, sent again: each is a replay, already accepted or older than the window.
    let packets = recorded.lock().unwrap().clone();
    assert!(packets.len() >= 5, "{} packets recorded", packets.len());
    let watching = watches(&cluster);
    let node = &cluster.nodes[&target];
    let dropped = node.stats().dropped_total();
    let replays = send_counted(target_addr, &packets, node, |s| s.dropped(Drop::Replayed)).await;
    sleep(Duration::from_millis(200)).await;
    assert_unchanged(&watching, before);
    let stats = node.stats();
    assert_eq!(stats.dropped(Drop::Replayed), replays, "{stats:?}");
    assert_eq!(stats.dropped_total() - dropped, replays, "only replays were dropped: {stats:?}");

    // Member 1 restarts: its packets of the earlier incarnation are now stale.
    let from_1: Vec<Vec<u8>> = packets
        .iter()
        .filter(|p| {
            let e = wire::decode::<member::Packet<MonitorMsg<Msg>>>(p, wire::cluster_id("test"), target, Some(&key()))
                .unwrap();
            e.from == NodeId(1)
        })
        .cloned()
        .collect();
    assert!(!from_1.is_empty());
    cluster.kill(NodeId(1)).await;
    cluster.restart(NodeId(1)).await;
    let l = cluster.agreed().await;
    assert_eq!(l.leader, before.leader);
    let watching = watches(&cluster);
    let node = &cluster.nodes[&target];
    let stale = send_counted(target_addr, &from_1, node, |s| s.dropped(Drop::StaleIncarnation)).await;
    sleep(Duration::from_millis(200)).await;
    assert_unchanged(&watching, l);
    assert_eq!(node.stats().dropped(Drop::StaleIncarnation), stale);
    relaying.abort();
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_and_corrupted_packets_are_dropped_counted_and_cannot_poison_the_replay_window() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), keyed).await;
    let before = cluster.agreed().await;
    assert_eq!(before.leader, Some(NodeId(3)));
    let target = NodeId(2);
    // "From" the leader, in its current incarnation, far ahead in sequence numbers, claiming the highest epoch: if
    // any of these were believed, member 2's window would jump past the leader's real packets and the claim would
    // take the leader away.
    let forged = Packet {
        version: wire::PROTOCOL_VERSION,
        cluster: wire::cluster_id("test"),
        from: NodeId(3),
        to: target,
        seq: u64::MAX - 1,
        msg: member::Packet {
            incarnation: cluster.nodes[&NodeId(3)].incarnation(),
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
    let encode = |key: Option<&ClusterKey>| {
        let mut buf = Vec::new();
        wire::encode(&forged, key, &mut buf).unwrap();
        buf
    };
    let right = encode(Some(&key()));
    let mut packets = vec![
        encode(Some(&ClusterKey::from_secret(b"a guess").unwrap())),
        encode(None),
        right[..right.len() - 1].to_vec(),
        right[..right.len() - 5].to_vec(),
    ];
    // One bit flipped, anywhere past the version: in the header, the body or the tag.
    for bit in (8..right.len() * 8).step_by(7) {
        let mut flipped = right.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        packets.push(flipped);
    }
    let watching = watches(&cluster);
    let node = &cluster.nodes[&target];
    let received = node.stats().received;
    let forgeries = send_counted(cluster.addrs[&target], &packets, node, |s| s.dropped(Drop::Unauthenticated)).await;
    // Several heartbeat periods: the leader's real packets go on being accepted.
    sleep(Duration::from_millis(500)).await;
    assert_unchanged(&watching, before);
    let stats = node.stats();
    assert_eq!(stats.dropped(Drop::Unauthenticated), forgeries, "{stats:?}");
    assert_eq!(stats.dropped_total(), forgeries, "{stats:?}");
    assert!(stats.received >= received + 3, "the leader's heartbeats still arrive: {stats:?}");
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_with_different_keys_do_not_talk() {
    // 1 and 2 share a key; 3 has another one.
    let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| {
        keyed(c);
        if c.id == NodeId(3) {
            c.key = Some(ClusterKey::from_secret(b"another secret").unwrap());
        }
    })
    .await;
    // 1 and 2 elect 2, never hearing 3; 3 is alone and knows no epoch: its algorithm makes it leader, but it grants
    // itself nothing while it hears no majority (with itself) of the members, so it leads nobody.
    let l = cluster.agreed_by(&ids(&[1, 2]), |l| l.leader == Some(NodeId(2))).await;
    assert_eq!(l.epoch.starter(), NodeId(2));
    sleep(Duration::from_millis(500)).await; // Five round trips of T = 50 ms.
    assert_eq!(cluster.leadership(NodeId(3)), Leadership { leader: None, epoch: Epoch::ZERO });
    let lone = cluster.nodes[&NodeId(3)].stats();
    assert_eq!(lone.received, 0, "{lone:?}");
    assert!(lone.dropped(Drop::Unauthenticated) > 0 && lone.dropped_total() == lone.dropped(Drop::Unauthenticated));
    for id in ids(&[1, 2]) {
        let stats = cluster.nodes[&id].stats();
        assert!(stats.received > 0 && stats.dropped(Drop::Unauthenticated) > 0, "member {id}: {stats:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_sprayed_at_a_member_change_nothing_and_are_all_counted() {
    for keyed_cluster in [true, false] {
        let configure: fn(&mut NodeConfig) =
            if keyed_cluster { keyed } else { |c| c.delay_bound = Duration::from_millis(50) };
        let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), configure).await;
        let before = cluster.agreed().await;
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let packets: Vec<Vec<u8>> = (0..1000)
            .map(|i| {
                let mut bytes = vec![0u8; rng.random_range(0..300)];
                rng.fill_bytes(&mut bytes);
                if i % 2 == 0 && !bytes.is_empty() {
                    bytes[0] = wire::PROTOCOL_VERSION as u8; // Past the version check.
                }
                bytes
            })
            .collect();
        let past_version = packets.iter().filter(|p| p.first() == Some(&(wire::PROTOCOL_VERSION as u8))).count();
        let watching = watches(&cluster);
        for target in ids(&[2, 3]) {
            let node = &cluster.nodes[&target];
            let dropped = node.stats().dropped_total();
            let sprayed = send_counted(cluster.addrs[&target], &packets, node, Stats::dropped_total).await;
            let stats = node.stats();
            assert_eq!(stats.dropped_total() - dropped, sprayed, "keyed: {keyed_cluster}: {stats:?}");
            let garbage = [Drop::Malformed, Drop::Version, Drop::Unauthenticated].map(|r| stats.dropped(r));
            assert_eq!(garbage.iter().sum::<u64>(), stats.dropped_total(), "{stats:?}");
            if keyed_cluster {
                // None of the packets that got past the version check got past the tag.
                assert!(stats.dropped(Drop::Unauthenticated) >= past_version as u64, "{stats:?}");
            }
        }
        sleep(Duration::from_millis(200)).await;
        assert_unchanged(&watching, before);
        cluster.check_logs();
    }
}
