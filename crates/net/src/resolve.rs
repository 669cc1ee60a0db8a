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

/// The address `name` resolves to now, of the family of `local` (a socket bound to an IPv4 address reaches no
/// IPv6 one, nor the other way round); `Err` says why there is none.
pub(crate) async fn resolve(name: &HostPort, local: SocketAddr) -> Result<SocketAddr, String> {
    let lookup = tokio::net::lookup_host((name.host.as_str(), name.port));
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(LOOKUP, lookup).await {
        Err(_) => return Err(format!("no answer within {LOOKUP:?}")),
        Ok(Err(e)) => return Err(e.to_string()),
        Ok(Ok(addrs)) => addrs.collect(),
    };
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
        Self { named, local, silence, board, updates }
    }

    /// Runs until the member's task is gone.
    pub(crate) async fn run(mut self) {
        let mut tick = tokio::time::interval(RETRY);
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
            None => since >= RETRY,
            Some(_) => since >= AGAIN && self.board.silent_for(peer.id) >= self.silence,
        }
    }

    /// Looks peer `k`'s name up; a new address goes to the member and its status. `false` once the member is gone.
    async fn look_up(&mut self, k: usize) -> bool {
        let result = resolve(&self.named[k].name, self.local).await;
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
