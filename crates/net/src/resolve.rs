//! Peers by name: a member given `--peer ID=HOST:PORT` with a DNS name resolves it when it starts, retries (with a
//! logged warning) while it does not resolve (in Kubernetes a pod's name appears only once the pod runs), and
//! resolves it again whenever that member stays silent, so that a changed address (a restarted pod's) is followed.
//!
//! Resolution runs in a task of its own, [`Resolver`], beside the member's: a slow or failing lookup never holds
//! the member back. It hands each new address to the member's task, which sends there from then on (and, in a
//! keyless cluster, accepts that member's packets only from there), and shows it in `/status`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use elect_core::NodeId;
use tokio::sync::mpsc;
use tokio::time::{Instant as Clock, MissedTickBehavior};
use tracing::{info, warn};

use crate::config::HostPort;
use crate::status::Board;

/// How often a name that does not resolve is tried again.
const RETRY: Duration = Duration::from_millis(500);

/// How often, at most, the name of a silent member is resolved again.
const AGAIN: Duration = Duration::from_secs(2);

/// How long one lookup may take.
const LOOKUP: Duration = Duration::from_secs(2);

/// Where names are looked up: the system's resolver, or, in tests, a table the test changes as it goes.
#[derive(Clone)]
pub(crate) enum Lookup {
    System,
    #[cfg(test)]
    Table(Arc<std::sync::Mutex<BTreeMap<String, Vec<SocketAddr>>>>),
}

impl Lookup {
    async fn addrs(&self, name: &HostPort) -> Result<Vec<SocketAddr>, String> {
        match self {
            Self::System => {
                let lookup = tokio::net::lookup_host((name.host.as_str(), name.port));
                match tokio::time::timeout(LOOKUP, lookup).await {
                    Err(_) => Err(format!("no answer within {LOOKUP:?}")),
                    Ok(Err(e)) => Err(e.to_string()),
                    Ok(Ok(addrs)) => Ok(addrs.collect()),
                }
            }
            #[cfg(test)]
            Self::Table(table) => Ok(table.lock().unwrap().get(&name.host).cloned().unwrap_or_default()),
        }
    }
}

/// The address `name` resolves to now, of the family of `local` (a socket bound to an IPv4 address reaches no
/// IPv6 one, nor the other way round); `Err` says why there is none.
pub(crate) async fn resolve(name: &HostPort, local: SocketAddr) -> Result<SocketAddr, String> {
    resolve_with(&Lookup::System, name, local).await
}

async fn resolve_with(lookup: &Lookup, name: &HostPort, local: SocketAddr) -> Result<SocketAddr, String> {
    let addrs = lookup.addrs(name).await?;
    match addrs.iter().find(|a| a.is_ipv4() == local.is_ipv4()) {
        Some(&addr) => Ok(addr),
        None if addrs.is_empty() => Err("no address".to_owned()),
        None => Err(format!("no {} address (it has {addrs:?})", if local.is_ipv4() { "IPv4" } else { "IPv6" })),
    }
}

/// Resolves every name at once; the ones that do not resolve yet are logged and left out.
pub(crate) async fn resolve_all(names: &BTreeMap<NodeId, HostPort>, local: SocketAddr) -> BTreeMap<NodeId, SocketAddr> {
    let mut lookups = tokio::task::JoinSet::new();
    for (&id, name) in names {
        let name = name.clone();
        lookups.spawn(async move { (id, resolve(&name, local).await, name) });
    }
    let mut resolved = BTreeMap::new();
    while let Some(Ok((id, result, name))) = lookups.join_next().await {
        match result {
            Ok(addr) => {
                info!(peer = id.0, %name, %addr, "peer name resolved");
                resolved.insert(id, addr);
            }
            Err(reason) => warn!(peer = id.0, %name, %reason, "peer name does not resolve yet: retrying"),
        }
    }
    resolved
}

/// One named peer, as the resolver knows it.
struct Named {
    id: NodeId,
    name: HostPort,
    addr: Option<SocketAddr>,
    /// When its name was last looked up.
    tried: Option<Clock>,
    /// Lookups that failed in a row.
    failures: u32,
}

/// The task that keeps named peers' addresses current.
pub(crate) struct Resolver {
    named: Vec<Named>,
    local: SocketAddr,
    /// A member not heard from for this long is silent: the leader monitor's suspicion time.
    silence: Duration,
    board: Arc<Board>,
    updates: mpsc::UnboundedSender<(NodeId, SocketAddr)>,
    lookup: Lookup,
    /// How often a name that does not resolve is tried again, and how often at most a silent member's is.
    retry: Duration,
    again: Duration,
}

impl Resolver {
    /// A resolver for `names`, of which `resolved` already resolved (at the start).
    pub(crate) fn new(
        names: &BTreeMap<NodeId, HostPort>,
        resolved: &BTreeMap<NodeId, SocketAddr>,
        local: SocketAddr,
        silence: Duration,
        board: Arc<Board>,
        updates: mpsc::UnboundedSender<(NodeId, SocketAddr)>,
    ) -> Self {
        let now = Clock::now();
        let named = names
            .iter()
            .map(|(&id, name)| {
                let addr = resolved.get(&id).copied();
                Named { id, name: name.clone(), addr, tried: Some(now), failures: u32::from(addr.is_none()) }
            })
            .collect();
        Self { named, local, silence, board, updates, lookup: Lookup::System, retry: RETRY, again: AGAIN }
    }

    /// Runs until the member's task is gone.
    pub(crate) async fn run(mut self) {
        let mut tick = tokio::time::interval(self.retry);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            for k in 0..self.named.len() {
                if self.due(k) && !self.look_up(k).await {
                    return;
                }
            }
        }
    }

    /// Whether peer `k`'s name should be looked up now: it does not resolve yet, or its member is silent.
    fn due(&self, k: usize) -> bool {
        let peer = &self.named[k];
        let since = peer.tried.map_or(Duration::MAX, |t| t.elapsed());
        match peer.addr {
            None => since >= self.retry,
            Some(_) => since >= self.again && self.board.silent_for(peer.id) >= self.silence,
        }
    }

    /// Looks peer `k`'s name up; a new address goes to the member and its status. `false` once the member is gone.
    async fn look_up(&mut self, k: usize) -> bool {
        let result = resolve_with(&self.lookup, &self.named[k].name, self.local).await;
        let peer = &mut self.named[k];
        peer.tried = Some(Clock::now());
        match result {
            Ok(addr) if Some(addr) != peer.addr => {
                match peer.addr {
                    None => info!(peer = peer.id.0, name = %peer.name, %addr, "peer name resolved"),
                    Some(was) => info!(peer = peer.id.0, name = %peer.name, %was, now = %addr, "peer moved"),
                }
                peer.addr = Some(addr);
                peer.failures = 0;
                self.board.set_addr(peer.id, addr);
                self.updates.send((peer.id, addr)).is_ok()
            }
            Ok(_) => {
                peer.failures = 0;
                true
            }
            Err(reason) => {
                peer.failures += 1;
                // While it does not resolve: the first failure, then one in twenty (every ten seconds).
                if peer.addr.is_none() && peer.failures % 20 == 1 {
                    let failures = peer.failures;
                    warn!(peer = peer.id.0, name = %peer.name, %reason, failures, "peer name does not resolve yet: retrying");
                }
                !self.updates.is_closed()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::fencing::Leadership;
    use elect_core::Epoch;

    const ME: NodeId = NodeId(1);
    const PEER: NodeId = NodeId(2);

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    /// A resolver for one peer, `peer-2:7002`, that this test's table resolves to `first` (or to nothing), with
    /// short intervals; and the member's end of its channel.
    type Table = Arc<Mutex<BTreeMap<String, Vec<SocketAddr>>>>;

    fn resolver(
        first: Option<SocketAddr>,
    ) -> (Resolver, Arc<Board>, Table, mpsc::UnboundedReceiver<(NodeId, SocketAddr)>) {
        let local = addr("127.0.0.1:7001");
        let name = HostPort { host: "peer-2".into(), port: 7002 };
        let table = Arc::new(Mutex::new(BTreeMap::from([("peer-2".to_owned(), first.into_iter().collect())])));
        let members = vec![(ME, Some(local), None), (PEER, first, Some("peer-2:7002".to_owned()))];
        let board = Arc::new(Board::new(ME, "bully", members, Leadership { leader: None, epoch: Epoch::ZERO }));
        let (tx, rx) = mpsc::unbounded_channel();
        let names = BTreeMap::from([(PEER, name)]);
        let resolved: BTreeMap<NodeId, SocketAddr> = first.map(|a| (PEER, a)).into_iter().collect();
        let mut r = Resolver::new(&names, &resolved, local, Duration::from_millis(50), board.clone(), tx);
        r.lookup = Lookup::Table(table.clone());
        r.retry = Duration::from_millis(10);
        r.again = Duration::from_millis(20);
        (r, board, table, rx)
    }

    #[tokio::test]
    async fn a_silent_member_whose_name_moves_is_followed_to_its_new_address() {
        let (r, board, table, mut rx) = resolver(Some(addr("127.0.0.1:7002")));
        tokio::spawn(r.run());
        // The pod restarted elsewhere: the name now resolves to another address, and the member falls silent.
        table.lock().unwrap().insert("peer-2".into(), vec![addr("127.0.0.2:7002")]);
        let moved = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("the move is followed");
        assert_eq!(moved, Some((PEER, addr("127.0.0.2:7002"))));
        let status = board.to_json();
        assert_eq!(status["members"][1]["addr"], "127.0.0.2:7002", "the status shows it: {status}");
    }

    #[tokio::test]
    async fn a_member_that_is_heard_from_is_not_looked_up_again() {
        let (r, board, table, mut rx) = resolver(Some(addr("127.0.0.1:7002")));
        tokio::spawn(r.run());
        table.lock().unwrap().insert("peer-2".into(), vec![addr("127.0.0.2:7002")]);
        // Its packets keep coming from the old address: nothing is looked up, so nothing moves.
        for _ in 0..30 {
            board.contact(PEER);
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(rx.try_recv().is_err(), "a member that is heard from keeps its address");
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_late_is_taken_up_when_it_does() {
        let (r, _board, table, mut rx) = resolver(None);
        tokio::spawn(r.run());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(rx.try_recv().is_err(), "no address while the name does not resolve");
        table.lock().unwrap().insert("peer-2".into(), vec![addr("[::1]:7002"), addr("127.0.0.3:7002")]);
        let found = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("the name is taken up");
        assert_eq!(found, Some((PEER, addr("127.0.0.3:7002"))), "the address of the member's own family");
    }
}
