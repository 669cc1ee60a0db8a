//! A member whose state file is deleted, truncated or edited while the cluster runs: it trusts nothing in it,
//! comes back as an incarnation its peers accept, grants nothing below what they know, and is back within a
//! second; alone, it grants nothing at all until a majority of the members (with itself) is back.

mod common;

use std::time::Duration;

use common::{Cluster, ids, until};
use elect_core::NodeId;
use elect_net::store::{Store, Stored};
use elect_net::wire::Drop;
use tokio::time::Instant;

/// How the state file is damaged while its member is down.
#[derive(Clone, Copy, Debug)]
enum Damage {
    Delete,
    Truncate,
    /// Its fencing epoch edited down to 1, the file otherwise well-formed, its checksum left as it was.
    EditEpoch,
}

fn damage(store: &Store, how: Damage) {
    let path = store.path();
    match how {
        Damage::Delete => std::fs::remove_file(&path).unwrap(),
        Damage::Truncate => {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        }
        Damage::EditEpoch => {
            let bytes = std::fs::read(&path).unwrap();
            let (stored, rest) = postcard::take_from_bytes::<Stored>(&bytes).unwrap();
            assert!(stored.seen > 1, "the member had seen an epoch: {stored:?}");
            let mut edited = postcard::to_allocvec(&Stored { seen: 1, ..stored }).unwrap();
            // The checksum as it was, and the padding that keeps the file's length.
            edited.extend_from_slice(&rest[..4]);
            edited.resize(bytes.len(), 0);
            std::fs::write(&path, edited).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_whose_state_file_is_lost_or_damaged_rejoins_within_a_second_and_no_epoch_goes_backwards() {
    for algorithm in ["bully", "garcia-molina"] {
        let mut cluster = Cluster::start(algorithm, &ids(&[1, 2, 3])).await;
        let mut agreed = cluster.agreed().await;
        for (member, how) in
            [(NodeId(1), Damage::Delete), (NodeId(2), Damage::Truncate), (NodeId(1), Damage::EditEpoch)]
        {
            let what = format!("{algorithm}, {how:?} the file of {member}");
            let leader = agreed.leader.unwrap();
            let incarnation = cluster.nodes[&member].incarnation();
            let dropped_before = cluster.nodes[&leader].stats().dropped(Drop::StaleIncarnation);
            let received_before = cluster.nodes[&leader].stats().received;
            cluster.kill(member).await;
            damage(&Store::open(&cluster.dir.path().join(member.0.to_string())).unwrap(), how);
            let start = Instant::now();
            cluster.restart(member).await;
            assert!(cluster.nodes[&member].incarnation() > incarnation, "{what}: a newer incarnation");
            // Back: it follows the leader under the epoch the others know, and the leader accepts its packets.
            until(&what, || cluster.leadership(member) == agreed).await;
            let took = start.elapsed();
            eprintln!("{what}: back in {took:?}");
            assert!(took < Duration::from_secs(1), "{what}: back in {took:?}");
            until(&what, || cluster.nodes[&leader].stats().received > received_before).await;
            let after = cluster.agreed().await;
            // The healthy leader stays; it may have made itself a newer grant (Garcia-Molina's leader sometimes
            // does when the member comes back), never an older one.
            assert!(after.leader == agreed.leader && after.epoch >= agreed.epoch, "{what}: {after:?} after {agreed:?}");
            assert_eq!(cluster.nodes[&leader].stats().dropped(Drop::StaleIncarnation), dropped_before, "{what}");
            if !matches!(how, Damage::Delete) {
                let aside = cluster.dir.path().join(member.0.to_string()).join("state.damaged");
                assert!(aside.exists(), "{what}: the damaged file is kept");
            }
            agreed = after;
        }
        // The leader's file is lost too: the member that takes over grants above every epoch before, and the old
        // leader, back, follows it.
        let leader = agreed.leader.unwrap();
        cluster.kill(leader).await;
        damage(&Store::open(&cluster.dir.path().join(leader.0.to_string())).unwrap(), Damage::Delete);
        let during = cluster.agreed_where(|l| l.leader != Some(leader)).await;
        assert!(during.epoch > agreed.epoch, "{algorithm}: {during:?} after {agreed:?}");
        cluster.restart(leader).await;
        let after = cluster.agreed().await;
        assert!(after.epoch >= during.epoch, "{algorithm}: {after:?} after {during:?}");
        cluster.check_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_lost_its_state_and_hears_nobody_does_not_lead_under_a_low_epoch() {
    let mut cluster = Cluster::start("bully", &ids(&[1, 2, 3])).await;
    let agreed = cluster.agreed().await;
    assert_eq!(agreed.leader, Some(NodeId(3)));
    // Everybody stops; the strongest member's file is lost, and it comes back alone.
    for id in ids(&[1, 2, 3]) {
        cluster.kill(id).await;
    }
    let strongest = NodeId(3);
    damage(&Store::open(&cluster.dir.path().join("3")).unwrap(), Damage::Delete);
    cluster.restart(strongest).await;
    let incarnation = cluster.nodes[&strongest].incarnation();
    // Its algorithm, alone, makes it leader at once; knowing no epoch, it would grant itself 1.3, far below the
    // cluster's. It grants nothing while it hears nobody: many round trips (2T = 40 ms) later, it still leads no one.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(600) {
        assert_eq!(cluster.leadership(strongest).leader, None, "alone, after {:?}", start.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let grants = |cluster: &Cluster| {
        cluster.logs[&strongest]
            .lock()
            .unwrap()
            .iter()
            .filter(|&&(inc, e)| inc == incarnation && matches!(e, elect_net::LeaderEvent::StartedLeading { .. }))
            .count()
    };
    assert_eq!(grants(&cluster), 0);
    // A member that kept its state comes back: with it, 3 is a majority, and it grants above every epoch before.
    cluster.restart(NodeId(2)).await;
    let after = cluster.agreed().await;
    assert_eq!(after.leader, Some(strongest));
    assert!(after.epoch > agreed.epoch, "{after:?} after {agreed:?}");
    assert_eq!(grants(&cluster), 1);
    cluster.check_logs();
}
