//! A member's configuration, and its validation.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use elect_algos::{Elects, Info, Needs, Params, RegistryError};
use elect_core::{InT, NodeId};

use crate::auth::{ClusterKey, HttpToken};

/// The default delay bound `T`: generous on loopback, where a datagram takes tens of microseconds, because `T`
/// must also cover scheduling and the `fsync` of a state write that may precede a send.
pub const DEFAULT_DELAY_BOUND: Duration = Duration::from_millis(20);

/// A member's configuration that [`NodeConfig::validated`] accepted, with its algorithm's registry entry: the
/// one a member starts from, so that it is checked once, where it enters.
#[derive(Clone, Debug)]
pub struct ValidConfig {
    pub(crate) config: NodeConfig,
    pub(crate) info: &'static Info,
}

impl ValidConfig {
    /// The configuration.
    pub fn config(&self) -> &NodeConfig {
        &self.config
    }
}

/// Everything a member needs to run.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// This member's id.
    pub id: NodeId,
    /// The UDP address to listen on (ignored by [`crate::Node::start_on`], which is given a bound socket).
    pub listen: SocketAddr,
    /// Every other member given by its address. Every member must be given the same member set (here and in
    /// `names`).
    pub peers: BTreeMap<NodeId, SocketAddr>,
    /// Every other member given by a DNS name: resolved when the member starts, again while the name does not
    /// resolve (with a logged warning) and whenever the member stays silent, so that an address that changes (a
    /// restarted pod's) is followed.
    pub names: BTreeMap<NodeId, HostPort>,
    /// The algorithm's name (canonical or alias).
    pub algorithm: String,
    /// The algorithm's parameters.
    pub params: Params,
    /// Where the state file lives; one directory per member.
    pub data_dir: PathBuf,
    /// The cluster's name: packets of other clusters are dropped.
    pub cluster: String,
    /// The root seed of timer jitter; `None` draws one from the clock and the process id (it is logged).
    pub seed: Option<u64>,
    /// The bound `T` on one-way message delay: every timeout of the algorithms and of the leader monitor is a
    /// multiple of it.
    pub delay_bound: Duration,
    /// The leader monitor's heartbeat period, in multiples of `T`; a follower suspects its leader after
    /// `(heartbeat + 2)·T` without one.
    pub heartbeat: InT,
    /// How long a member that resigned sits out before it takes part in elections again.
    pub resign_hold: Duration,
    /// The cluster key: with one, every packet carries a tag made with it, and packets without the right tag are
    /// dropped ([`crate::auth`]). Every member must have the same key, or none. Without one, the cluster trusts its
    /// network.
    pub key: Option<ClusterKey>,
    /// Where to serve `GET /status` and `GET /metrics` over HTTP (port 0: one the OS chooses, see
    /// [`crate::Node::http_addr`]); `None` serves nothing.
    pub http: Option<SocketAddr>,
    /// The token `POST /resign` must carry (`Authorization: Bearer TOKEN`). Without one, requests that change
    /// something are taken only when [`Self::http`] is a loopback address, and refused otherwise.
    pub http_token: Option<HttpToken>,
    /// This member must never lead: it takes no part in elections (to the others it is a member that never
    /// answers in one) and follows the leader the others elect. With every member that may lead down, the cluster
    /// has no leader.
    pub no_lead: bool,
    /// After each start, this member sits out this long, following the others' leader, before it takes part in
    /// elections: a preferred member (Bully's strongest) takes leadership back only once it has run this long, so a
    /// member that crashes again and again does not make the leadership flap. Zero: it takes part at once.
    pub takeover_after: Duration,
    /// The lease mode: this member leads only while a majority of the members backs it, and stops saying it leads,
    /// on its own clock, before any of them could back another; so no two members say they lead at one instant,
    /// as long as no clock's rate is off by more than the drift bound. `None`: the classic mode, where a leader
    /// cut off from the others leads on in its old epoch beside the one they elect.
    pub lease: Option<elect_algos::member::Lease>,
    /// The voters the cluster starts with (`--voters`): `None`, every member. The other members start as learners:
    /// they follow the leader and vote once a change of the voters adds them (`POST /voters?add=ID`). Every member
    /// must start with the same; once the voters change, each member keeps the configuration it holds in its state
    /// file and this is no longer read.
    pub voters: Option<Vec<NodeId>>,
}

impl NodeConfig {
    /// Member `id` listening on `listen`, running `algorithm` with its state in `data_dir`, with no peers yet and
    /// the defaults: cluster `elect`, `T` = 20 ms, heartbeats every `2T`, a resigned member sits out 2 s, no cluster
    /// key, no HTTP.
    pub fn new(id: NodeId, listen: SocketAddr, algorithm: &str, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            id,
            listen,
            peers: BTreeMap::new(),
            names: BTreeMap::new(),
            algorithm: algorithm.to_owned(),
            params: Params::new(),
            data_dir: data_dir.into(),
            cluster: "elect".to_owned(),
            seed: None,
            delay_bound: DEFAULT_DELAY_BOUND,
            heartbeat: InT(2),
            resign_hold: Duration::from_secs(2),
            key: None,
            http: None,
            http_token: None,
            no_lead: false,
            takeover_after: Duration::ZERO,
            lease: None,
            voters: None,
        }
    }

    /// Every member's id, ascending.
    pub fn members(&self) -> Vec<NodeId> {
        let ids: BTreeSet<NodeId> = self.peers.keys().chain(self.names.keys()).copied().chain([self.id]).collect();
        ids.into_iter().collect()
    }

    /// Adds member `id` at `peer`; an id given twice is an error.
    pub fn add_peer(&mut self, id: NodeId, peer: Peer) -> Result<(), ConfigError> {
        if self.peers.contains_key(&id) || self.names.contains_key(&id) {
            return Err(ConfigError::DuplicatePeer(id));
        }
        match peer {
            Peer::Addr(addr) => {
                self.peers.insert(id, addr);
            }
            Peer::Name(name) => {
                self.names.insert(id, name);
            }
        }
        Ok(())
    }

    /// Checks what can be checked before binding or reading anything, once: a member starts from what it returns
    /// ([`crate::Node::start_valid`]).
    pub fn validated(self) -> Result<ValidConfig, ConfigError> {
        let info = self.validate()?;
        Ok(ValidConfig { config: self, info })
    }

    /// Checks what can be checked before binding or reading anything; returns the algorithm's registry entry.
    pub fn validate(&self) -> Result<&'static Info, ConfigError> {
        if self.peers.contains_key(&self.id) || self.names.contains_key(&self.id) {
            return Err(ConfigError::SelfPeer(self.id));
        }
        let mut addrs: Vec<SocketAddr> = self.peers.values().copied().collect();
        addrs.sort_unstable();
        if let Some(w) = addrs.windows(2).find(|w| w[0] == w[1]) {
            return Err(ConfigError::SharedAddress(w[0]));
        }
        if self.delay_bound < Duration::from_millis(1) || self.delay_bound > Duration::from_secs(60) {
            return Err(ConfigError::DelayBound(self.delay_bound));
        }
        if !(1..=1000).contains(&self.heartbeat.count()) {
            return Err(ConfigError::Heartbeat(self.heartbeat));
        }
        if self.cluster.is_empty() {
            return Err(ConfigError::Cluster);
        }
        let info = elect_algos::lookup(&self.algorithm)?;
        if self.params.get(elect_algos::member::BUG_PARAM.name).is_some() {
            return Err(ConfigError::PlantedFlaw);
        }
        let lease_params = [
            elect_algos::member::LEASE_PARAM.name,
            elect_algos::member::DRIFT_PARAM.name,
            elect_algos::member::CLOCKS_PARAM.name,
        ];
        if let Some(key) = lease_params.into_iter().find(|key| self.params.get(key).is_some()) {
            return Err(ConfigError::LeaseParam(key));
        }
        if self.params.get(elect_algos::member::VOTERS_PARAM.name).is_some() {
            return Err(ConfigError::VotersParam);
        }
        if let Some(lease) = &self.lease {
            lease.validate(self.heartbeat)?;
        }
        if let Some(voters) = &self.voters {
            let members = self.members();
            if let Some(&stranger) = voters.iter().find(|id| !members.contains(id)) {
                return Err(ConfigError::Voter(stranger));
            }
            if voters.is_empty() {
                return Err(ConfigError::NoVoters);
            }
        }
        if info.needs == Needs::Connected || info.lockstep || info.elects == Elects::PerComponent {
            return Err(ConfigError::NotOnMesh(info.name));
        }
        Ok(info)
    }
}

impl NodeConfig {
    /// `k·T` in real time (saturating: `T` and `k` are bounded where they enter).
    pub fn real(&self, k: InT) -> Duration {
        self.delay_bound.saturating_mul(u32::try_from(k.count()).unwrap_or(u32::MAX))
    }

    /// The delay bound `T` in runtime ticks (microseconds).
    pub fn delay_bound_ticks(&self) -> elect_core::Duration {
        elect_core::Duration::from_ticks(u64::try_from(self.delay_bound.as_micros()).unwrap_or(u64::MAX))
    }
}

/// A DNS name and a port: where a peer given by name is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPort {
    /// The host name.
    pub host: String,
    /// The UDP port.
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Where a peer is: an address, or a name to resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peer {
    /// An IP address and port.
    Addr(SocketAddr),
    /// A DNS name and port.
    Name(HostPort),
}

/// Why a peer's address does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// No `:PORT`.
    #[error("'{0}' has no port")]
    NoPort(String),
    /// A port that is not a number.
    #[error("port '{0}' is not a number from 0 to 65535")]
    Port(String),
    /// An IP address that does not parse with its port.
    #[error("'{0}' is not an address with a port (IPv6 addresses go in brackets)")]
    Address(String),
    /// A host that is neither a name nor an address.
    #[error("'{0}' is not a host name or an IP address")]
    Host(String),
}

impl std::str::FromStr for Peer {
    type Err = PeerError;

    /// `IP:PORT`, `[IPv6]:PORT` or `HOST:PORT`, with a host name of letters, digits, hyphens and dots (RFC 1123);
    /// `Err` says what is wrong.
    fn from_str(s: &str) -> Result<Self, PeerError> {
        if let Ok(addr) = s.parse::<SocketAddr>() {
            return Ok(Self::Addr(addr));
        }
        let (host, port) = s.rsplit_once(':').ok_or_else(|| PeerError::NoPort(s.to_owned()))?;
        let port = port.parse::<u16>().map_err(|_| PeerError::Port(port.to_owned()))?;
        if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
            return Err(PeerError::Address(host.to_owned()));
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        let name = host.strip_suffix('.').unwrap_or(host);
        if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
            return Err(PeerError::Host(host.to_owned()));
        }
        Ok(Self::Name(HostPort { host: host.to_owned(), port }))
    }
}

/// Parses `ID=HOST:PORT` (a `--peer` value): the address, or the DNS name, of member `ID`.
pub fn parse_peer_spec(s: &str) -> Result<(NodeId, Peer), ConfigError> {
    let bad = |reason: String| ConfigError::PeerSpec { peer: s.to_owned(), reason };
    let (id, at) = s.split_once('=').ok_or_else(|| bad("no '='".to_owned()))?;
    let id = id.trim().parse::<u32>().map_err(|_| bad(format!("'{}' is not a member id", id.trim())))?;
    let peer = at.trim().parse::<Peer>().map_err(|e| bad(e.to_string()))?;
    Ok((NodeId(id), peer))
}

/// Parses `ID=ADDR` (a `--peer` value given as an address).
pub fn parse_peer(s: &str) -> Result<(NodeId, SocketAddr), ConfigError> {
    let bad = || ConfigError::Peer(s.to_owned());
    let (id, addr) = s.split_once('=').ok_or_else(bad)?;
    let id = id.trim().parse::<u32>().map_err(|_| bad())?;
    let addr = addr.trim().parse::<SocketAddr>().map_err(|_| bad())?;
    Ok((NodeId(id), addr))
}

/// A configuration the runtime cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A `--peer` value that is not `ID=ADDR`.
    #[error("bad peer '{0}': expected ID=ADDR, e.g. 2=127.0.0.1:7002")]
    Peer(String),
    /// A `--peer` value that is not `ID=HOST:PORT`, and why.
    #[error("bad peer '{peer}': {reason} (expected ID=HOST:PORT, e.g. 2=127.0.0.1:7002 or 2=node-2.elect:7002)")]
    PeerSpec {
        /// The value.
        peer: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The same peer id given twice.
    #[error("peer {0} is given twice")]
    DuplicatePeer(NodeId),
    /// This member listed among its peers.
    #[error("member {0} is listed as its own peer")]
    SelfPeer(NodeId),
    /// Two peers at one address.
    #[error("two peers share the address {0}")]
    SharedAddress(SocketAddr),
    /// A delay bound out of range.
    #[error("delay bound {0:?} is out of range (1 ms to 60 s)")]
    DelayBound(Duration),
    /// A flaw planted on purpose, which only the simulator and the checker run.
    #[error("--param monitor-bug plants a flaw for elect sim and elect check to find; a member never runs it")]
    PlantedFlaw,
    /// The lease mode asked for as an algorithm parameter.
    #[error("--param {0} belongs to elect sim and elect check; a member takes --lease and --max-drift-ppm")]
    LeaseParam(&'static str),
    /// The voters named as an algorithm parameter.
    #[error("--param voters belongs to elect sim and elect check; a member takes --voters")]
    VotersParam,
    /// A lease that cannot work.
    #[error("bad lease: {0}")]
    Lease(#[from] elect_algos::member::LeaseError),
    /// A heartbeat period out of range.
    #[error("heartbeat period {0} is out of range (1T to 1000T)")]
    Heartbeat(InT),
    /// An empty cluster name.
    #[error("the cluster name is empty")]
    Cluster,
    /// An unknown algorithm or bad parameters.
    #[error(transparent)]
    Algorithm(#[from] RegistryError),
    /// An algorithm that does not run over a full mesh of members.
    #[error(
        "{0} does not run over a full mesh of members (the runtime runs complete-graph and ring algorithms that \
         do not move in lock-step rounds: bully, garcia-molina, invitation, and the ring algorithms)"
    )]
    NotOnMesh(&'static str),
    /// The algorithm refuses the member ids.
    #[error("{0}")]
    Members(String),
    /// A voter that is not a member.
    #[error("voter {0} is not a member: list it with --peer (or as --id)")]
    Voter(NodeId),
    /// `--voters` names nobody.
    #[error("--voters names no member: name at least one")]
    NoVoters,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!(parse_peer("2=127.0.0.1:7002").unwrap(), (NodeId(2), "127.0.0.1:7002".parse().unwrap()));
        for bad in ["2", "x=127.0.0.1:1", "2=localhost", "2=127.0.0.1"] {
            assert!(parse_peer(bad).unwrap_err().to_string().contains("expected ID=ADDR"), "{bad}");
        }
    }

    #[test]
    fn peers_may_be_given_by_name_and_malformed_ones_are_named() {
        let name = |host: &str, port| Peer::Name(HostPort { host: host.to_owned(), port });
        assert_eq!(parse_peer_spec("2=localhost:7002").unwrap(), (NodeId(2), name("localhost", 7002)));
        let fqdn = "elect-2.elect.default.svc.cluster.local";
        assert_eq!(parse_peer_spec(&format!("3={fqdn}.:7000")).unwrap().1, name(&format!("{fqdn}."), 7000));
        assert_eq!(parse_peer_spec("2=[::1]:7").unwrap().1, Peer::Addr("[::1]:7".parse().unwrap()));
        for (bad, reason) in [
            ("2=bad host:7", "'bad host' is not a host name"),
            ("2=h:99999", "port '99999' is not a number from 0 to 65535"),
            ("2=localhost", "'localhost' has no port"),
            ("x=h:1", "'x' is not a member id"),
            ("2=-h:1", "'-h' is not a host name"),
            ("2=a..b:1", "'a..b' is not a host name"),
            ("2=::1:7", "'::1' is not an address with a port (IPv6 addresses go in brackets)"),
        ] {
            let err = parse_peer_spec(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("bad peer '{bad}': {reason}")), "{bad}: {err}");
        }
        let mut c = NodeConfig::new(NodeId(1), "127.0.0.1:1".parse().unwrap(), "bully", "/nonexistent");
        c.add_peer(NodeId(2), name("localhost", 2)).unwrap();
        c.add_peer(NodeId(3), Peer::Addr("127.0.0.1:3".parse().unwrap())).unwrap();
        assert!(matches!(c.add_peer(NodeId(2), name("h", 2)), Err(ConfigError::DuplicatePeer(_))));
        assert_eq!(c.members(), [NodeId(1), NodeId(2), NodeId(3)]);
        c.names.insert(NodeId(1), HostPort { host: "me".into(), port: 1 });
        assert!(matches!(c.validate(), Err(ConfigError::SelfPeer(_))));
    }

    #[test]
    fn configurations_the_runtime_cannot_run_are_refused() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut c = NodeConfig::new(NodeId(1), addr, "bully", "/nonexistent");
        assert_eq!(c.validate().unwrap().name, "bully");
        c.algorithm = "floodmax".into();
        assert!(c.validate().unwrap_err().to_string().contains("does not run over a full mesh"));
        c.algorithm = "paxos".into();
        assert!(c.validate().unwrap_err().to_string().contains("unknown algorithm"));
        c.algorithm = "bully".into();
        c.peers.insert(NodeId(1), addr);
        assert!(matches!(c.validate(), Err(ConfigError::SelfPeer(_))));
        c.peers.clear();
        c.peers.insert(NodeId(2), "127.0.0.1:2".parse().unwrap());
        c.peers.insert(NodeId(3), "127.0.0.1:2".parse().unwrap());
        assert!(matches!(c.validate(), Err(ConfigError::SharedAddress(_))));
        c.peers.remove(&NodeId(3));
        // A real clock drifts on its own: the simulated drift of the lease mode is no member's parameter.
        c.params = elect_algos::Params::parse(["clocks=drifting"]).unwrap();
        assert!(matches!(c.validate(), Err(ConfigError::LeaseParam("clocks"))));
        c.params = elect_algos::Params::parse(["voters=1,2"]).unwrap();
        assert!(matches!(c.validate(), Err(ConfigError::VotersParam)));
        c.params = elect_algos::Params::new();
        c.delay_bound = Duration::ZERO;
        assert!(matches!(c.validate(), Err(ConfigError::DelayBound(_))));
    }

    #[test]
    fn a_configuration_never_shows_its_key() {
        let mut c = NodeConfig::new(NodeId(1), "127.0.0.1:1".parse().unwrap(), "bully", "/nonexistent");
        c.key = Some(ClusterKey::from_secret(b"hunter2").unwrap());
        let shown = format!("{c:?}");
        assert!(shown.contains("key: Some(ClusterKey(<redacted>))"), "{shown}");
    }
}
