//! Members that find each other by name: `localhost:PORT` is a name that resolves here, with no network but
//! loopback.

mod common;

use std::collections::BTreeMap;

use common::{PATIENCE, ids, sockets};
use elect_core::NodeId;
use elect_net::{HostPort, Leadership, Node, NodeConfig, Peer};
use tokio::time::{sleep, timeout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_given_by_name_elect_and_show_the_names_in_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let members = sockets(&ids(&[1, 2, 3]));
    let ports: BTreeMap<NodeId, u16> = members.iter().map(|(id, s)| (*id, s.local_addr().unwrap().port())).collect();
    let mut nodes = BTreeMap::new();
    for (id, socket) in members {
        let mut config = NodeConfig::new(id, socket.local_addr().unwrap(), "bully", dir.path().join(id.0.to_string()));
        for (&peer, &port) in ports.iter().filter(|&(&p, _)| p != id) {
            config.add_peer(peer, Peer::Name(HostPort { host: "localhost".into(), port })).unwrap();
        }
        // A member whose name does not resolve (yet): the others run without it, and say so.
        config.add_peer(NodeId(4), Peer::Name(HostPort { host: "elect-4.invalid".into(), port: 9 })).unwrap();
        config.cluster = "names".into();
        config.http = Some("127.0.0.1:0".parse().unwrap());
        nodes.insert(id, Node::start_on(config, socket).await.unwrap());
    }
    let agreed = async {
        loop {
            let views: Vec<Leadership> = nodes.values().map(|n| *n.leadership().borrow()).collect();
            if views[0].leader.is_some() && views.iter().all(|v| *v == views[0]) {
                return views[0];
            }
            sleep(std::time::Duration::from_millis(2)).await;
        }
    };
    let l = timeout(PATIENCE, agreed).await.expect("the members agree");
    assert_eq!(l.leader, Some(NodeId(3)), "the strongest member that runs leads");

    let http = nodes[&NodeId(1)].http_addr().unwrap();
    let status = fetch_status(http).await;
    let members = status["members"].as_array().unwrap();
    assert_eq!(members.len(), 4, "{status}");
    let peer = |id: u64| members.iter().find(|m| m["id"] == id).unwrap();
    assert_eq!(peer(2)["name"], format!("localhost:{}", ports[&NodeId(2)]));
    assert_eq!(peer(2)["resolved"], true);
    assert_eq!(peer(2)["addr"], format!("127.0.0.1:{}", ports[&NodeId(2)]));
    assert!(peer(3)["last_contact_ms_ago"].is_u64(), "its packets are accepted from the address its name has");
    assert_eq!((peer(4)["name"].as_str(), peer(4)["resolved"].as_bool()), (Some("elect-4.invalid:9"), Some(false)));
    assert!(peer(4)["addr"].is_null());
    assert_eq!(status["dropped"]["wrong-address"], 0);
    // The readiness probe of deploy/kubernetes: ready, since it follows a leader.
    assert!(fetch(http, "/status?ready").await.starts_with("HTTP/1.1 200"));
}

/// The response to `GET path`, head and body.
async fn fetch(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = String::new();
    timeout(PATIENCE, stream.read_to_string(&mut raw)).await.unwrap().unwrap();
    raw
}

/// `GET /status`, as JSON.
async fn fetch_status(addr: std::net::SocketAddr) -> serde_json::Value {
    serde_json::from_str(fetch(addr, "/status").await.split_once("\r\n\r\n").unwrap().1).unwrap()
}
