//! The leadership API for applications in any language, on members on loopback: `GET /leader`, its watch
//! (`?after=VERSION`), `POST /resign`, `POST /transfer` and who may call them.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{Cluster, Response, ids, request};
use elect_core::{Epoch, NodeId};
use elect_net::{HttpToken, LeaderEvent, Leadership, NodeConfig};
use serde_json::Value;

fn with_http(config: &mut NodeConfig) {
    config.http = Some("127.0.0.1:0".parse().unwrap());
}

/// HTTP, and a resign hold (a transfer's deadline) of 300 ms, so that a test waits well past it.
fn with_short_hold(config: &mut NodeConfig) {
    with_http(config);
    config.resign_hold = Duration::from_millis(300);
}

fn json(r: &Response) -> Value {
    assert_eq!(r.header("content-type"), Some("application/json"), "{} {}", r.status, r.body);
    serde_json::from_str(&r.body).unwrap()
}

fn leadership(v: &Value) -> Leadership {
    Leadership {
        leader: v["leader"].as_u64().map(|l| NodeId(l as u32)),
        epoch: Epoch::from_bits(v["epoch"].as_u64().unwrap()),
    }
}

fn http(cluster: &Cluster, id: u32) -> SocketAddr {
    cluster.nodes[&NodeId(id)].http_addr().unwrap()
}

/// Follows member `addr`'s leadership from change `from`, as an application would, until `done` holds for a
/// change; returns every document it got.
async fn watch(addr: SocketAddr, from: Value, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = vec![from];
    while !done(seen.last().unwrap()) {
        let after = seen.last().unwrap()["version"].as_u64().unwrap();
        let next = json(&request(addr, "GET", &format!("/leader?after={after}&wait=5"), &[]).await);
        if next["version"] != after {
            seen.push(next);
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_gets_every_change_in_order_through_a_leader_kill() {
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), with_http).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));
    let now = json(&request(http(&cluster, 1), "GET", "/leader", &[]).await);
    let watcher = tokio::spawn(watch(http(&cluster, 1), now, |v| v["leader"] == 2));
    let (_, second, _) = cluster.fail_over().await;
    assert_eq!(second.leader, Some(NodeId(2)));
    let seen = tokio::time::timeout(common::PATIENCE, watcher).await.expect("the watch ends").unwrap();

    let versions: Vec<u64> = seen.iter().map(|v| v["version"].as_u64().unwrap()).collect();
    let start = versions[0];
    assert_eq!(versions, (start..start + seen.len() as u64).collect::<Vec<_>>(), "no change is skipped: {seen:?}");
    assert_eq!(leadership(&seen[0]), first);
    assert_eq!(leadership(seen.last().unwrap()), second);
    assert!(seen.iter().all(|v| v["id"] == 1 && v["is_leader"] == false));
    // What the watch got is what the member told its own application, change for change.
    let told: Vec<Leadership> = cluster
        .log(NodeId(1))
        .into_iter()
        .filter_map(|e| match e {
            LeaderEvent::LeaderChanged(l) => Some(l),
            _ => None,
        })
        .collect();
    let from = told.iter().rposition(|&l| l == first).expect("the first leadership was told");
    let watched: Vec<Leadership> = seen.iter().map(leadership).collect();
    assert_eq!(watched, told[from..from + watched.len()], "{seen:?}");
    assert!(watched.windows(2).all(|w| w[0] != w[1] && w[0].epoch <= w[1].epoch), "{watched:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_asked_over_http_resigns_and_sits_out() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), with_http).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));

    let r = request(http(&cluster, 1), "POST", "/resign", &[]).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("does not lead (the leader: 3)"), "{}", r.body);

    let leading = json(&request(http(&cluster, 3), "GET", "/leader", &[]).await);
    assert_eq!((leading["is_leader"].as_bool(), leadership(&leading)), (Some(true), first));
    let r = request(http(&cluster, 3), "POST", "/resign", &[]).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let v = json(&r);
    assert_eq!((v["resigning"].as_bool(), v["epoch"].as_u64()), (Some(true), Some(first.epoch.bits())));
    assert_eq!(v["sits_out_ms"].as_u64(), Some(2000));

    let after = leading["version"].as_u64().unwrap();
    let next = json(&request(http(&cluster, 3), "GET", &format!("/leader?after={after}&wait=5"), &[]).await);
    assert_eq!(next["version"].as_u64(), Some(after + 1));
    assert_eq!(next["is_leader"], false, "{next}");
    // The others elect a leader among themselves while the resigned member sits out.
    let second = cluster.agreed_by(&ids(&[1, 2]), |l| l.leader == Some(NodeId(2))).await;
    assert!(second.epoch > first.epoch);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_hands_over_to_a_weaker_member_which_keeps_leading_until_it_fails() {
    hand_over(with_short_hold).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_lease_mode_too_a_leader_hands_over() {
    hand_over(|c| {
        with_short_hold(c);
        c.lease = Some(elect_algos::member::Lease::for_heartbeat(c.heartbeat));
    })
    .await;
}

/// Four members hand leadership from 4 to 2, then from 2 to 1; each keeps it past the deadline, and 4 takes it
/// back once 1 fails.
async fn hand_over(configure: fn(&mut NodeConfig)) {
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3, 4]), configure).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(4)));
    let bad = [
        ("/transfer", "name the member to hand leadership to"),
        ("/transfer?to=x", "to=\"x\": not a member id"),
        ("/transfer?to=4", "this member already leads"),
        ("/transfer?to=9", "no such member (the others are 1, 2, 3)"),
        ("/transfer?to=2&now=1", "the one parameter of /transfer is to=ID"),
    ];
    for (path, problem) in bad {
        let r = request(http(&cluster, 4), "POST", path, &[]).await;
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert!(r.body.contains(problem), "{path}: {}", r.body);
    }
    let r = request(http(&cluster, 1), "POST", "/transfer?to=2", &[]).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(cluster.leadership(NodeId(4)), first, "a refused request changes nothing");

    let r = request(http(&cluster, 4), "POST", "/transfer?to=2", &[]).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let v = json(&r);
    assert_eq!((v["transferring"].as_bool(), v["to"].as_u64()), (Some(true), Some(2)));
    assert_eq!((v["epoch"].as_u64(), v["deadline_ms"].as_u64()), (Some(first.epoch.bits()), Some(300)));
    // Member 2 takes over, though 3 and 4 outrank it...
    let second = cluster.agreed_where(|l| l.leader == Some(NodeId(2))).await;
    assert!(second.epoch > first.epoch);
    // ... and keeps leading well past the deadline: those that stood aside do not take leadership back.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    for id in ids(&[1, 2, 3, 4]) {
        assert_eq!(cluster.leadership(id), second, "member {id}");
    }
    // It hands over in turn, to 1: 2, 3 and 4 stand aside.
    let r = request(http(&cluster, 2), "POST", "/transfer?to=1", &[]).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let third = cluster.agreed_where(|l| l.leader == Some(NodeId(1))).await;
    assert!(third.epoch > second.epoch);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    for id in ids(&[1, 2, 3, 4]) {
        assert_eq!(cluster.leadership(id), third, "member {id}");
    }
    // When it fails, they take part again, and the strongest leads.
    cluster.kill(NodeId(1)).await;
    let fourth = cluster.agreed_where(|l| l.leader == Some(NodeId(4))).await;
    assert!(fourth.epoch > third.epoch);
    cluster.check_logs();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_to_a_member_that_cannot_lead_falls_back_to_an_election_at_the_deadline() {
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), with_short_hold).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));
    // Member 2 is gone: nobody takes over, and at the deadline the others elect as usual.
    cluster.kill(NodeId(2)).await;
    let r = request(http(&cluster, 3), "POST", "/transfer?to=2", &[]).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let next = cluster.agreed_where(|l| l.leader == Some(NodeId(3)) && l.epoch > first.epoch).await;
    assert!(next.epoch > first.epoch);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_a_resignation_must_carry_it() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), |c| {
        with_http(c);
        c.http_token = Some(HttpToken::new(b"s3cret-token").unwrap());
    })
    .await;
    assert_eq!(cluster.agreed().await.leader, Some(NodeId(2)));
    let addr = http(&cluster, 2);
    let wrong = [
        &[][..],
        &[("Authorization", "Bearer wrong")],
        &[("Authorization", "s3cret-token")],
        &[("Authorization", "Bearer  s3cret-token")],
    ];
    for headers in wrong {
        let r = request(addr, "POST", "/resign", headers).await;
        assert_eq!((r.status, r.header("www-authenticate")), (401, Some("Bearer")), "{headers:?}: {}", r.body);
        assert!(r.body.contains("Authorization: Bearer TOKEN"), "{}", r.body);
    }
    // So must a transfer.
    let r = request(addr, "POST", "/transfer?to=1", &[("Authorization", "Bearer wrong")]).await;
    assert_eq!(r.status, 401, "{}", r.body);
    // Reading needs no token.
    assert_eq!(json(&request(addr, "GET", "/leader", &[]).await)["is_leader"], true);
    let r = request(addr, "POST", "/resign", &[("Authorization", "bearer s3cret-token")]).await;
    assert_eq!(r.status, 202, "{}", r.body);
    cluster.agreed_by(&ids(&[1]), |l| l.leader == Some(NodeId(1))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_only_a_loopback_endpoint_takes_a_resignation() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), |c| c.http = Some("0.0.0.0:0".parse().unwrap())).await;
    assert_eq!(cluster.agreed().await.leader, Some(NodeId(2)));
    let port = http(&cluster, 2).port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let r = request(addr, "POST", "/resign", &[("Authorization", "Bearer anything")]).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("--http-token-file"), "{}", r.body);
    let r = request(addr, "POST", "/transfer?to=1", &[]).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(json(&request(addr, "GET", "/leader", &[]).await)["is_leader"], true, "still leading");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_refuses_bad_parameters_and_answers_at_once_when_it_cannot_wait() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), with_http).await;
    cluster.agreed().await;
    let addr = http(&cluster, 1);
    for (query, problem) in [
        ("after=x", "not a whole number"),
        ("after=-1", "not a whole number"),
        ("wait=301", "at most 300 seconds"),
        ("since=3", "the parameters of /leader are after=VERSION and wait=SECONDS"),
    ] {
        let r = request(addr, "GET", &format!("/leader?{query}"), &[]).await;
        assert_eq!(r.status, 400, "{query}");
        assert!(r.body.contains(problem), "{query}: {}", r.body);
    }
    let latest = json(&request(addr, "GET", "/leader", &[]).await);
    let version = latest["version"].as_u64().unwrap();
    assert_eq!(latest["latest"].as_u64(), Some(version));
    // Nothing changes in a cluster at rest: wait=0 answers at once with the latest change, and so does a version
    // beyond it (from an earlier incarnation of the member).
    for after in [version, version + 1000] {
        let started = std::time::Instant::now();
        let v = json(&request(addr, "GET", &format!("/leader?after={after}&wait=0"), &[]).await);
        assert_eq!(v, latest);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    if version > 0 {
        let v = json(&request(addr, "GET", &format!("/leader?after={}", version - 1), &[]).await);
        assert_eq!(v, latest, "the change after the one before the latest is the latest");
    }
    for (method, path, allow) in [("POST", "/leader", "GET"), ("GET", "/resign", "POST"), ("PUT", "/resign", "POST")] {
        let r = request(addr, method, path, &[]).await;
        assert_eq!((r.status, r.header("allow")), (405, Some(allow)), "{method} {path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_lease_mode_the_leader_says_how_long_its_lease_has_left() {
    fn leasing(config: &mut NodeConfig) {
        with_http(config);
        config.lease = Some(elect_algos::member::Lease::for_heartbeat(config.heartbeat));
    }
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), leasing).await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));
    // The lease is heartbeat + 3 T long, and renewed every heartbeat period: it never has more than that left.
    let lease_ms = (elect_net::DEFAULT_DELAY_BOUND * 5).as_secs_f64() * 1000.0;
    let leader = json(&request(http(&cluster, 3), "GET", "/leader", &[]).await);
    let left = leader["lease_ms_left"].as_f64().unwrap();
    assert!(leader["is_leader"] == true && 0.0 < left && left <= lease_ms, "{leader}");
    let status = json(&request(http(&cluster, 3), "GET", "/status", &[]).await);
    assert!(status["lease_ms_left"].as_f64().is_some_and(|l| l > 0.0), "{status}");
    for follower in [1, 2] {
        let v = json(&request(http(&cluster, follower), "GET", "/leader", &[]).await);
        let seen = (v["leader"].as_u64(), v["is_leader"].as_bool(), v["lease_ms_left"].as_f64());
        assert_eq!(seen, (Some(3), Some(false), Some(0.0)), "{v}");
    }
    // After a failover, the new leader holds a lease of its own.
    let (_, second, _) = cluster.fail_over().await;
    assert_eq!(second.leader, Some(NodeId(2)));
    let v = json(&request(http(&cluster, 2), "GET", "/leader", &[]).await);
    assert!(v["is_leader"] == true && v["lease_ms_left"].as_f64().is_some_and(|l| l > 0.0), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_the_lease_mode_there_is_no_lease_to_tell() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), with_http).await;
    cluster.agreed().await;
    let v = json(&request(http(&cluster, 2), "GET", "/leader", &[]).await);
    assert!(v["is_leader"] == true && v.get("lease_ms_left").is_none(), "{v}");
    let status = json(&request(http(&cluster, 2), "GET", "/status", &[]).await);
    assert!(status["lease_ms_left"].is_null(), "{status}");
}
