//! The HTTP endpoints of members on loopback: `/status` and `/metrics` agree with the leadership watch.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{Cluster, Response, ids};
use elect_core::NodeId;
use elect_net::{Leadership, Node, NodeConfig, StartError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// One HTTP/1.1 request on a fresh connection, read until the server closes it.
async fn request(addr: SocketAddr, method: &str, path: &str) -> Response {
    common::request(addr, method, path, &[]).await
}

fn with_http(config: &mut NodeConfig) {
    config.http = Some("127.0.0.1:0".parse().unwrap());
}

/// The value of the sample named exactly `name` (with its labels) in an OpenMetrics text.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// Checks a member's `/status` and `/metrics` against the leadership it shows.
async fn check_member(cluster: &Cluster, id: NodeId, expected: Leadership) {
    let node = &cluster.nodes[&id];
    let addr = node.http_addr().expect("an HTTP address");
    assert_eq!(*node.leadership().borrow(), expected);

    let status = request(addr, "GET", "/status").await;
    assert_eq!(status.status, 200);
    assert_eq!(status.header("content-type"), Some("application/json"));
    let v: serde_json::Value = serde_json::from_str(&status.body).unwrap();
    assert_eq!(v["id"], id.0);
    assert_eq!(v["algorithm"], "bully");
    assert_eq!(v["state"], "normal");
    assert_eq!(v["leader"].as_u64(), expected.leader.map(|l| u64::from(l.0)));
    assert_eq!(v["is_leader"], expected.leader == Some(id));
    assert_eq!(v["epoch"].as_u64(), Some(expected.epoch.bits()));
    assert_eq!(v["epoch_round"].as_u64(), Some(u64::from(expected.epoch.round())));
    assert_eq!(v["incarnation"].as_u64(), Some(node.incarnation()));
    for reason in ["malformed", "stale-incarnation", "wrong-address"] {
        assert_eq!(v["dropped"][reason].as_u64(), Some(0), "{reason}: {v}");
    }
    let members = v["members"].as_array().unwrap();
    assert_eq!(members.len(), cluster.addrs.len());
    for m in members {
        let member = NodeId(m["id"].as_u64().unwrap() as u32);
        assert_eq!(m["addr"], cluster.addrs[&member].to_string());
        assert_eq!(m["self"], member == id);
        if member == id {
            assert!(m["last_contact_ms_ago"].is_null());
        } else {
            let ago = m["last_contact_ms_ago"].as_u64().unwrap_or_else(|| panic!("{id} heard {member}: {v}"));
            assert!(ago < 60_000);
        }
    }

    let metrics = request(addr, "GET", "/metrics").await;
    assert_eq!(metrics.status, 200);
    assert!(metrics.header("content-type").unwrap().starts_with("application/openmetrics-text"));
    let text = &metrics.body;
    let leads = if expected.leader == Some(id) { 1.0 } else { 0.0 };
    assert_eq!(sample(text, "elect_is_leader"), Some(leads), "{text}");
    assert_eq!(sample(text, "elect_epoch"), Some(expected.epoch.bits() as f64), "{text}");
    assert!(sample(text, "elect_leader_changes_total").is_some_and(|n| n >= 1.0), "{text}");
    assert!(sample(text, "elect_election_duration_seconds_count").is_some_and(|n| n >= 1.0), "{text}");
    assert!(sample(text, "elect_election_duration_seconds_bucket{le=\"+Inf\"}").is_some(), "{text}");
    assert!(sample(text, "elect_state_writes_total").is_some_and(|n| n >= 1.0), "{text}");
    for kind in ["election", "ok", "coordinator", "heartbeat", "announce", "leaving", "ask"] {
        assert!(sample(text, &format!("elect_messages_sent_total{{kind=\"{kind}\"}}")).is_some(), "{kind}: {text}");
        assert!(sample(text, &format!("elect_messages_received_total{{kind=\"{kind}\"}}")).is_some(), "{kind}");
    }
    for reason in ["malformed", "unauthenticated", "replayed", "stale-incarnation", "wrong-address"] {
        assert_eq!(sample(text, &format!("elect_packets_dropped_total{{reason=\"{reason}\"}}")), Some(0.0), "{text}");
    }
    // The leader sends heartbeats; every follower started an election.
    let sent = if expected.leader == Some(id) { "heartbeat" } else { "election" };
    assert!(sample(text, &format!("elect_messages_sent_total{{kind=\"{sent}\"}}")).unwrap() >= 1.0, "{id}: {text}");
    assert!(text.ends_with("# EOF\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_metrics_agree_with_the_leadership_watch_before_and_after_a_failover() {
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2, 3]), |c| {
        with_http(c);
        c.delay_bound = Duration::from_millis(50);
    })
    .await;
    let first = cluster.agreed().await;
    assert_eq!(first.leader, Some(NodeId(3)));
    for id in ids(&[1, 2, 3]) {
        check_member(&cluster, id, first).await;
    }
    let leader_http = cluster.nodes[&NodeId(3)].http_addr().unwrap();
    let (_, second, _) = cluster.fail_over().await;
    assert_eq!(second.leader, Some(NodeId(2)));
    for id in ids(&[1, 2]) {
        check_member(&cluster, id, second).await;
    }
    // The killed member's HTTP server is gone with it.
    assert!(TcpStream::connect(leader_http).await.is_err());
    let metrics = request(cluster.nodes[&NodeId(1)].http_addr().unwrap(), "GET", "/metrics").await;
    assert!(sample(&metrics.body, "elect_leader_changes_total").unwrap() >= 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_are_not_found_and_other_methods_not_allowed() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), with_http).await;
    let addr = cluster.nodes[&NodeId(1)].http_addr().unwrap();
    for path in ["/", "/status/", "/metrics?x", "/nope", "/../status"] {
        let r = request(addr, "GET", path).await;
        let expected = if path == "/metrics?x" { 200 } else { 404 };
        assert_eq!(r.status, expected, "{path}");
    }
    for method in ["POST", "PUT", "DELETE", "HEAD"] {
        for path in ["/status", "/metrics"] {
            let r = request(addr, method, path).await;
            assert_eq!(r.status, 405, "{method} {path}");
            assert_eq!(r.header("allow"), Some("GET"));
        }
    }
    // Garbage instead of a request: the server answers 400 or hangs up, and goes on serving.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"\x00\xff garbage\r\n\r\n").await.unwrap();
    let mut raw = Vec::new();
    let _ = timeout(common::PATIENCE, stream.read_to_end(&mut raw)).await.expect("the server hangs up");
    assert!(raw.is_empty() || raw.starts_with(b"HTTP/1.1 400"), "{}", String::from_utf8_lossy(&raw));
    assert_eq!(request(addr, "GET", "/status").await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_without_http_serves_nothing_and_an_unbindable_address_is_refused_before_the_state_file() {
    let cluster = Cluster::start("bully", &ids(&[1, 2])).await;
    assert_eq!(cluster.nodes[&NodeId(1)].http_addr(), None);

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut config = NodeConfig::new(NodeId(1), socket.local_addr().unwrap(), "bully", dir.path());
    config.peers.insert(NodeId(2), "127.0.0.1:9".parse().unwrap());
    config.http = Some(taken.local_addr().unwrap());
    let err = Node::start_on(config, socket).await.unwrap_err();
    assert!(matches!(err, StartError::Http { .. }), "{err}");
    assert!(err.to_string().starts_with("cannot serve HTTP on 127.0.0.1:"), "{err}");
    assert!(!dir.path().join("state").exists(), "no incarnation was used up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_connections_do_not_hold_the_status_back() {
    let cluster = Cluster::start_with("bully", &ids(&[1, 2]), with_http).await;
    let expected = cluster.agreed().await;
    let addr = cluster.nodes[&NodeId(1)].http_addr().unwrap();
    // 200 connections that send nothing, and a slow client that sends its request's head a byte at a time.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut slow = TcpStream::connect(addr).await.unwrap();
    let slowly = tokio::spawn(async move {
        for b in b"GET /status HTTP/1.1\r\nHost: x\r\n" {
            if slow.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        slow
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    for _ in 0..3 {
        let start = tokio::time::Instant::now();
        let status = request(addr, "GET", "/status").await;
        let took = start.elapsed();
        eprintln!("/status with 200 idle connections and a slow one open: {took:?}");
        assert_eq!(status.status, 200);
        // Generous, to stay clear of a loaded machine; before, such a request waited for the 5 s header timeout.
        assert!(took < Duration::from_secs(1), "/status took {took:?}");
        let v: serde_json::Value = serde_json::from_str(&status.body).unwrap();
        assert_eq!(v["epoch"].as_u64(), Some(expected.epoch.bits()));
        let metrics = request(addr, "GET", "/metrics").await;
        assert_eq!(metrics.status, 200);
    }
    drop(idle);
    slowly.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readiness_probe_fails_while_a_member_follows_no_leader() {
    let mut cluster = Cluster::start_with("bully", &ids(&[1, 2]), |c| {
        with_http(c);
        c.resign_hold = Duration::from_secs(60);
    })
    .await;
    cluster.agreed().await;
    let two = cluster.nodes[&NodeId(2)].http_addr().unwrap();
    assert_eq!(request(two, "GET", "/status?ready").await.status, 200, "it leads: ready");
    // Alone, and sitting out after resigning: it follows no one.
    cluster.kill(NodeId(1)).await;
    cluster.nodes[&NodeId(2)].resign();
    common::until("member 2 shows no leader", || cluster.leadership(NodeId(2)).leader.is_none()).await;
    let unready = request(two, "GET", "/status?ready").await;
    assert_eq!(unready.status, 503, "{}", unready.body);
    let status: serde_json::Value = serde_json::from_str(&unready.body).unwrap();
    assert!(status["leader"].is_null(), "the same document: {status}");
    assert_eq!(request(two, "GET", "/status").await.status, 200, "the status itself is served as always");
}
