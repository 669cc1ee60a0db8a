//! Well-formed packets with values no member sends, over real UDP: a keyless cluster of three whose member 3 is
//! down gets them from member 3's own address, so they pass every check that comes before the member's
//! ([`elect_algos::member::Member::validate`]). Each is dropped as `invalid`, counted by kind, and changes nothing.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use common::{Cluster, ids, until};
use elect_algos::member::{Body, ConfigId, Packet};
use elect_algos::monitor::MonitorMsg;
use elect_algos::{bully, garcia_molina, lelann};
use elect_core::{Epoch, NodeId, Rank, Ranking};
use elect_net::wire::{self, Drop, Envelope};
use elect_net::{NodeConfig, Stats};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::sleep;

const TOP: Epoch = Epoch::from_bits(u64::MAX);

fn rank(id: u32) -> Rank {
    Ranking::default().rank(NodeId(id))
}

/// A delay bound long enough that nothing but the test's packets could change leadership on a loaded machine.
fn slow(config: &mut NodeConfig) {
    config.delay_bound = Duration::from_millis(50);
}

/// Members 1, 2 and 3 of `algorithm`; member 3 is killed once they agree, and the two others agree again. Returns
/// them, with a socket on member 3's address.
async fn two_of_three(algorithm: &str) -> (Cluster, UdpSocket) {
    let mut cluster = Cluster::start_with(algorithm, &ids(&[1, 2, 3]), slow).await;
    cluster.agreed().await;
    cluster.kill(NodeId(3)).await;
    cluster.agreed_where(|l| l.leader.is_some_and(|l| l != NodeId(3))).await;
    let socket = UdpSocket::bind(cluster.addrs[&NodeId(3)]).unwrap();
    (cluster, socket)
}

/// Sends each of `bodies`, as member 3 in an incarnation above any it had, to members 1 and 2; waits until both
/// counted every one as invalid, then a few heartbeats more; and checks that nobody's leadership moved.
async fn send_invalid<M: Serialize + DeserializeOwned + elect_core::Message>(
    cluster: &Cluster,
    socket: &UdpSocket,
    packets: &[Packet<M>],
) -> Vec<Stats> {
    let before: Vec<_> = cluster.nodes.keys().map(|&id| cluster.leadership(id)).collect();
    let mut buf = Vec::new();
    let mut seq = 0;
    for to in [NodeId(1), NodeId(2)] {
        for packet in packets {
            seq += 1;
            let envelope = Envelope {
                version: wire::PROTOCOL_VERSION,
                cluster: wire::cluster_id("test"),
                from: NodeId(3),
                to,
                seq,
                msg: packet.clone(),
            };
            wire::encode(&envelope, None, &mut buf).unwrap();
            socket.send_to(&buf, cluster.addrs[&to]).unwrap();
        }
    }
    let count = packets.len() as u64;
    until("every packet counted as invalid", || {
        cluster.nodes.values().all(|n| n.stats().dropped(Drop::Invalid) >= count)
    })
    .await;
    sleep(Duration::from_millis(300)).await; // Several heartbeat periods.
    let after: Vec<_> = cluster.nodes.keys().map(|&id| cluster.leadership(id)).collect();
    assert_eq!(after, before, "a member's leadership moved");
    cluster.nodes.values().map(|n| n.stats()).collect()
}

fn packet<M>(seen: Epoch, lead: Option<Epoch>, body: Body<M>) -> Packet<M> {
    Packet { incarnation: u64::MAX / 2, seen, lead, config: ConfigId::INITIAL, body }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lelann_election_with_no_ids_is_dropped_as_invalid() {
    let (cluster, socket) = two_of_three("lelann").await;
    let election = lelann::Msg::Election { initiator: rank(1), ids: vec![] };
    let newer = Epoch::of(1000, NodeId(3));
    let packets = [
        packet(
            Epoch::ZERO,
            None,
            Body::Algorithm(MonitorMsg::Ring { epoch: newer, down: None, forward: true, msg: election.clone() }),
        ),
        packet(Epoch::ZERO, None, Body::Algorithm(MonitorMsg::Inner { epoch: newer, down: None, msg: election })),
    ];
    for stats in send_invalid(&cluster, &socket, &packets).await {
        assert_eq!((stats.dropped(Drop::Invalid), stats.invalid("election")), (2, 2), "{stats:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bully_coordinators_of_non_members_and_epochs_at_the_top_are_dropped_as_invalid() {
    let (cluster, socket) = two_of_three("bully").await;
    let low = Epoch::of(1000, NodeId(3));
    let inner = |msg| Body::Algorithm(MonitorMsg::Inner { epoch: low, down: None, msg });
    let packets = [
        // A coordinator that is not a member.
        packet(Epoch::ZERO, None, inner(bully::Msg::Coordinator { epoch: low, leader: rank(99) })),
        // Epochs at the top, in the algorithm's message, in the monitor's and in the header.
        packet(Epoch::ZERO, None, inner(bully::Msg::Election { epoch: TOP })),
        packet(Epoch::ZERO, None, inner(bully::Msg::Coordinator { epoch: TOP, leader: rank(3) })),
        packet(
            Epoch::ZERO,
            None,
            Body::Algorithm(MonitorMsg::Inner { epoch: TOP, down: None, msg: bully::Msg::Election { epoch: low } }),
        ),
        packet(TOP, Some(TOP), Body::Announce),
    ];
    for stats in send_invalid(&cluster, &socket, &packets).await {
        assert_eq!(stats.dropped(Drop::Invalid), 5, "{stats:?}");
        assert_eq!((stats.invalid("coordinator"), stats.invalid("election"), stats.invalid("announce")), (2, 2, 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garcia_molina_calls_at_the_top_are_dropped_as_invalid() {
    let (cluster, socket) = two_of_three("garcia-molina").await;
    let inner = |msg| Body::Algorithm(MonitorMsg::Inner { epoch: Epoch::of(1000, NodeId(3)), down: None, msg });
    let packets = [
        packet(Epoch::ZERO, None, inner(garcia_molina::Msg::Halt { call: 1, epoch: TOP })),
        packet(Epoch::ZERO, None, inner(garcia_molina::Msg::NewCoordinator { call: 2, epoch: TOP })),
        packet(Epoch::ZERO, None, inner(garcia_molina::Msg::Ready { call: 3, epoch: TOP })),
        packet(TOP, None, Body::Leaving),
    ];
    for stats in send_invalid(&cluster, &socket, &packets).await {
        assert_eq!(stats.dropped(Drop::Invalid), 4, "{stats:?}");
        assert_eq!((stats.invalid("halt"), stats.invalid("new-coordinator"), stats.invalid("leaving")), (1, 1, 1));
    }
}
