//! Changing the voters of a running cluster: a learner is added, a voter removed, one at a time, by the leader,
//! in the classic and the lease mode; the configuration survives a restart; what cannot be done is refused.

mod common;

use common::{Cluster, ids, request, until};
use elect_algos::member::{ChangeState, VoterChange};
use elect_core::NodeId;
use elect_net::NodeConfig;
use serde_json::Value;

fn classic(c: &mut NodeConfig) {
    c.voters = Some(ids(&[1, 2, 3]));
    c.http = Some("127.0.0.1:0".parse().unwrap());
}

fn leased(c: &mut NodeConfig) {
    classic(c);
    c.lease = Some(elect_algos::member::Lease::for_heartbeat(c.heartbeat));
}

fn voters_of(cluster: &Cluster, id: NodeId) -> Vec<u64> {
    let doc = cluster.nodes[&id].voters();
    doc["voters"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learner_is_added_and_a_voter_removed_while_the_cluster_runs() {
    for configure in [classic as fn(&mut NodeConfig), leased] {
        let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3, 4]), configure).await;
        // 4, the strongest, is a learner: 3 leads, and everybody follows it.
        let first = cluster.agreed().await;
        assert_eq!(first.leader, Some(NodeId(3)));
        assert_eq!(voters_of(&cluster, NodeId(4)), [1, 2, 3]);
        assert_eq!(cluster.nodes[&NodeId(4)].voters()["learners"], serde_json::json!([4]));
        // A member that does not lead refuses, naming why.
        let refused = cluster.nodes[&NodeId(1)].change_voters(VoterChange::Add(NodeId(4))).await.unwrap();
        assert!(matches!(refused.state, ChangeState::Refused(r) if r.contains("only the leader")), "{refused:?}");
        // The leader adds 4: every member holds the new configuration, and 4, now a voter and the strongest,
        // takes over.
        let added = cluster.nodes[&NodeId(3)].change_voters(VoterChange::Add(NodeId(4))).await.unwrap();
        let ChangeState::Done(config) = added.state else { panic!("{added:?}") };
        until("every member holds 1, 2, 3, 4", || {
            cluster.nodes.keys().all(|&id| voters_of(&cluster, id) == [1, 2, 3, 4])
        })
        .await;
        let second = cluster.agreed_where(|l| l.leader == Some(NodeId(4))).await;
        assert!(second.epoch > first.epoch);
        // The configuration is durable: 2 restarts holding it.
        cluster.kill(NodeId(2)).await;
        cluster.restart(NodeId(2)).await;
        assert_eq!(voters_of(&cluster, NodeId(2)), [1, 2, 3, 4]);
        assert_eq!(cluster.nodes[&NodeId(2)].voters()["config"], config.to_string());
        // The leader cannot remove itself; it removes 1, which then sits out and follows.
        let own = cluster.nodes[&NodeId(4)].change_voters(VoterChange::Remove(NodeId(4))).await.unwrap();
        assert!(matches!(own.state, ChangeState::Refused(r) if r.contains("hand leadership over")), "{own:?}");
        let removed = cluster.nodes[&NodeId(4)].change_voters(VoterChange::Remove(NodeId(1))).await.unwrap();
        assert!(matches!(removed.state, ChangeState::Done(_)), "{removed:?}");
        until("every member holds 2, 3, 4", || cluster.nodes.keys().all(|&id| voters_of(&cluster, id) == [2, 3, 4]))
            .await;
        let third = cluster.agreed().await;
        assert_eq!(third.leader, Some(NodeId(4)));
        cluster.check_logs();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_voters_are_read_and_changed_over_http() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3, 4]), classic).await;
    cluster.agreed().await;
    let http = |id: u32| cluster.nodes[&NodeId(id)].http_addr().unwrap();
    let got = request(http(1), "GET", "/voters", &[]).await;
    let doc: Value = serde_json::from_str(&got.body).unwrap();
    assert_eq!(
        (got.status, &doc["voters"], &doc["learners"]),
        (200, &serde_json::json!([1, 2, 3]), &serde_json::json!([4]))
    );
    // A follower refuses with 409 and names the leader.
    let refused = request(http(1), "POST", "/voters?add=4", &[]).await;
    let doc: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!((refused.status, &doc["leader"]), (409, &serde_json::json!(3)), "{}", refused.body);
    assert_eq!(doc["outcome"]["state"], "refused");
    for (bad, status) in [("/voters?add=9", 400), ("/voters", 400), ("/voters?add=1&remove=2", 400)] {
        assert_eq!(request(http(3), "POST", bad, &[]).await.status, status, "{bad}");
    }
    assert_eq!(request(http(3), "PUT", "/voters", &[]).await.header("allow"), Some("GET, POST"));
    let done = request(http(3), "POST", "/voters?add=4", &[]).await;
    let doc: Value = serde_json::from_str(&done.body).unwrap();
    assert_eq!(
        (done.status, &doc["outcome"]["state"], &doc["voters"]),
        (200, &serde_json::json!("done"), &serde_json::json!([1, 2, 3, 4])),
        "{}",
        done.body
    );
    until("2 holds the new voters", || voters_of(&cluster, NodeId(2)) == [1, 2, 3, 4]).await;
    let status: Value = serde_json::from_str(&request(http(2), "GET", "/status", &[]).await.body).unwrap();
    assert_eq!(status["voters"]["voters"], serde_json::json!([1, 2, 3, 4]));
    assert_eq!(status["voters"]["last"], Value::Null, "2 was asked nothing");
}
