//! A cluster of members in one tokio runtime, on 127.0.0.1 with ports the OS chose.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elect_core::{Epoch, NodeId};
use elect_net::{LeaderEvent, Leadership, Node, NodeConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep, timeout};

/// Every wait in the tests gives up after this long.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The events one member handed out, across its incarnations.
pub type Log = Arc<Mutex<Vec<(u64, LeaderEvent)>>>;

pub struct Cluster {
    pub algorithm: String,
    pub nodes: BTreeMap<NodeId, Node>,
    pub addrs: BTreeMap<NodeId, SocketAddr>,
    /// Where the other members send to each member: its own address, unless a test put something in between.
    pub routes: BTreeMap<NodeId, SocketAddr>,
    pub logs: BTreeMap<NodeId, Log>,
    pub dir: tempfile::TempDir,
    configure: fn(&mut NodeConfig),
}

pub fn ids(ids: &[u32]) -> Vec<NodeId> {
    ids.iter().map(|&i| NodeId(i)).collect()
}

/// A socket on 127.0.0.1 for each member, on a port the OS chose.
pub fn sockets(ids: &[NodeId]) -> Vec<(NodeId, UdpSocket)> {
    ids.iter().map(|&id| (id, UdpSocket::bind("127.0.0.1:0").unwrap())).collect()
}

/// Waits until `done` holds, polling; panics with `what` after [`PATIENCE`].
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let wait = async {
        while !done() {
            sleep(Duration::from_millis(2)).await;
        }
    };
    if timeout(PATIENCE, wait).await.is_err() {
        panic!("{what}: not within {PATIENCE:?}");
    }
}

impl Cluster {
    /// Members `ids` running `algorithm`, each started once every member's address is known.
    pub async fn start(algorithm: &str, ids: &[NodeId]) -> Self {
        Self::start_with(algorithm, ids, |_| {}).await
    }

    pub async fn start_with(algorithm: &str, ids: &[NodeId], configure: fn(&mut NodeConfig)) -> Self {
        Self::start_routed(algorithm, sockets(ids), BTreeMap::new(), configure).await
    }

    /// Members on `sockets`; the others reach member `id` at `routes[id]` if there is one, at its socket if not.
    pub async fn start_routed(
        algorithm: &str,
        sockets: Vec<(NodeId, UdpSocket)>,
        routes: BTreeMap<NodeId, SocketAddr>,
        configure: fn(&mut NodeConfig),
    ) -> Self {
        let addrs: BTreeMap<NodeId, SocketAddr> =
            sockets.iter().map(|(id, s)| (*id, s.local_addr().unwrap())).collect();
        let routes = addrs.iter().map(|(&id, &addr)| (id, routes.get(&id).copied().unwrap_or(addr))).collect();
        let mut cluster = Self {
            algorithm: algorithm.to_owned(),
            nodes: BTreeMap::new(),
            addrs,
            routes,
            logs: BTreeMap::new(),
            dir: tempfile::tempdir().unwrap(),
            configure,
        };
        for (id, socket) in sockets {
            cluster.launch(id, socket).await;
        }
        cluster
    }

    fn config(&self, id: NodeId) -> NodeConfig {
        let addr = self.addrs[&id];
        let mut config = NodeConfig::new(id, addr, &self.algorithm, self.dir.path().join(id.0.to_string()));
        config.peers = self.routes.iter().filter(|&(&p, _)| p != id).map(|(&p, &a)| (p, a)).collect();
        config.cluster = "test".into();
        config.seed = Some(u64::from(id.0));
        (self.configure)(&mut config);
        config
    }

    async fn launch(&mut self, id: NodeId, socket: UdpSocket) {
        let mut node = Node::start_on(self.config(id), socket).await.unwrap();
        let log = self.logs.entry(id).or_default().clone();
        let mut events = node.events().unwrap();
        let incarnation = node.incarnation();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                log.lock().unwrap().push((incarnation, event));
            }
        });
        self.nodes.insert(id, node);
    }

    /// Stops member `id` at once, like a crash.
    pub async fn kill(&mut self, id: NodeId) {
        let node = self.nodes.remove(&id).expect("a live member");
        node.abort().await;
    }

    /// Starts member `id` again, on its old address and data directory.
    pub async fn restart(&mut self, id: NodeId) {
        let socket = UdpSocket::bind(self.addrs[&id]).unwrap();
        self.launch(id, socket).await;
    }

    pub fn leadership(&self, id: NodeId) -> Leadership {
        *self.nodes[&id].leadership().borrow()
    }

    /// Waits until every live member shows the same leader with the same epoch, and returns it.
    pub async fn agreed(&self) -> Leadership {
        self.agreed_where(|_| true).await
    }

    /// Waits until every live member shows the same leadership, one `ok` accepts.
    pub async fn agreed_where(&self, ok: impl Fn(&Leadership) -> bool) -> Leadership {
        let all: Vec<NodeId> = self.nodes.keys().copied().collect();
        self.agreed_by(&all, ok).await
    }

    /// Waits until members `who` show the same leadership, one `ok` accepts.
    pub async fn agreed_by(&self, who: &[NodeId], ok: impl Fn(&Leadership) -> bool) -> Leadership {
        let wait = async {
            loop {
                let views: Vec<Leadership> = who.iter().map(|&id| self.leadership(id)).collect();
                if views[0].leader.is_some() && views.iter().all(|v| *v == views[0]) && ok(&views[0]) {
                    return views[0];
                }
                sleep(Duration::from_millis(2)).await;
            }
        };
        match timeout(PATIENCE, wait).await {
            Ok(l) => l,
            Err(_) => {
                let views: Vec<_> = self.nodes.keys().map(|&id| (id, self.leadership(id))).collect();
                panic!("no agreement within {PATIENCE:?}: {views:?}")
            }
        }
    }

    /// Kills the agreed leader and measures the time until every survivor agrees on a new one.
    pub async fn fail_over(&mut self) -> (Leadership, Leadership, Duration) {
        let before = self.agreed().await;
        self.kill(before.leader.unwrap()).await;
        let start = Instant::now();
        let after = self.agreed_where(|l| l.leader != before.leader).await;
        (before, after, start.elapsed())
    }

    pub fn log(&self, id: NodeId) -> Vec<LeaderEvent> {
        self.logs[&id].lock().unwrap().iter().map(|&(_, e)| e).collect()
    }

    /// Checks every member's event log: within an incarnation StartedLeading and StoppedLeading alternate, a
    /// stop names the epoch its start did (a crash ends an incarnation's log wherever it is), and grants are few;
    /// grants grow and published epochs never go backwards, across incarnations too.
    ///
    /// An Invitation coordinator grants a new epoch for every group it forms: its own singleton after losing a
    /// coordinator, and one more for each merge it leads. On a loaded machine, where answers come late and more
    /// members recover on their own, a survivor of two failovers can lead a dozen groups in one incarnation
    /// without any two leaders outbidding each other, so it gets a larger allowance than the other algorithms.
    pub fn check_logs(&self) {
        self.check_logs_allowing(if self.algorithm == "invitation" { 16 } else { 5 });
    }

    /// [`Cluster::check_logs`], with up to `most` grants per incarnation.
    pub fn check_logs_allowing(&self, most: usize) {
        for (id, log) in &self.logs {
            let log = log.lock().unwrap();
            let (mut incarnation, mut leading, mut grants) = (0, None, 0);
            let (mut last_epoch, mut last_grant) = (Epoch::ZERO, Epoch::ZERO);
            for &(inc, event) in log.iter() {
                assert!(inc >= incarnation, "{id}: incarnations grow");
                if inc != incarnation {
                    (incarnation, leading, grants) = (inc, None, 0);
                }
                match event {
                    LeaderEvent::StartedLeading { epoch } => {
                        assert!(leading.is_none(), "{id}: two starts in a row: {log:?}");
                        assert!(epoch > last_grant, "{id}: grants grow: {log:?}");
                        grants += 1;
                        // A handful per incarnation in these tests; leaders outbidding each other would make dozens.
                        assert!(grants <= most, "{id}: {grants} grants in one incarnation: {log:?}");
                        (last_grant, leading) = (epoch, Some(epoch));
                    }
                    LeaderEvent::StoppedLeading { epoch } => {
                        assert_eq!(leading, Some(epoch), "{id}: a stop without its start: {log:?}");
                        leading = None;
                    }
                    LeaderEvent::LeaderChanged(l) => {
                        assert!(l.epoch >= last_epoch, "{id}: epochs went backwards: {log:?}");
                        last_epoch = l.epoch;
                    }
                    _ => {}
                }
            }
        }
    }
}

/// An HTTP response: status code, headers (names lower-cased), body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request on a fresh connection, with `headers`, read until the server closes it.
pub async fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let extra: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n{extra}\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        String::from_utf8(raw).unwrap()
    };
    let raw = timeout(PATIENCE, exchange).await.expect("the server answers");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Response { status, headers, body: body.to_owned() }
}
