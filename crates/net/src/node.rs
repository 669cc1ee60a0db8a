//! The application's handle on a running member: start, leadership, events, resign, shutdown, and its HTTP
//! endpoints.

use std::net::SocketAddr;
use std::sync::Arc;

use elect_algos::member::{self, ChangeReport, Deployed, MemberDriver, VoterChange, Voters};
use elect_algos::monitor::MonitorNetwork;
use elect_algos::{Algorithm, Elects, Facts, Info, Needs};
use elect_core::{Epoch, NodeId, Ranking};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{Instrument, info, info_span};

use crate::config::{ConfigError, NodeConfig, ValidConfig};
use crate::error::{NodeError, StartError};
use crate::fencing::{LeaderEvent, Leadership};
use crate::hosted::{Hosted, HostedMember, Restored};
use crate::http;
use crate::mesh::Mesh;
use crate::resolve;
use crate::runner::{Outlets, Request, Runner, Transport};
use crate::socket::Socket;
use crate::stats::{Counters, Stats};
use crate::status::Board;
use crate::store::{Loaded, Store, StoreError, Stored};
use crate::wire;

/// A running member.
///
/// Dropping it stops the member at once, like a crash (no goodbye to the others), and its HTTP server;
/// [`Node::shutdown`] stops it gracefully.
#[derive(Debug)]
pub struct Node {
    id: NodeId,
    local_addr: SocketAddr,
    http_addr: Option<SocketAddr>,
    incarnation: u64,
    seed: u64,
    leadership: watch::Receiver<Leadership>,
    events: Option<mpsc::UnboundedReceiver<LeaderEvent>>,
    requests: mpsc::UnboundedSender<Request>,
    counters: Arc<Counters>,
    lease: LeaseClock,
    task: Option<JoinHandle<Result<(), NodeError>>>,
    http: Option<JoinHandle<()>>,
    /// The task that resolves peers' names, if any were given.
    resolver: Option<JoinHandle<()>>,
}

/// A member's lease, as its application reads it in the lease mode ([`NodeConfig::lease`]): how long it has left,
/// on this machine's monotonic clock. Cheap to clone, and to read as often as the application acts.
#[derive(Clone)]
pub struct LeaseClock(Arc<Board>);

impl std::fmt::Debug for LeaseClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LeaseClock").field(&self.left()).finish()
    }
}

impl LeaseClock {
    /// How long the member's lease has left (zero when it holds none); `None` outside the lease mode.
    pub fn left(&self) -> Option<std::time::Duration> {
        self.0.lease_left()
    }

    /// Whether the member leads at this instant: it shows itself as the leader and, in the lease mode, its lease
    /// has time left. An application in the lease mode asks right before it acts, and keeps what it does shorter
    /// than [`Self::left`]: a member woken from a pause may not yet have told its leadership watch that its lease
    /// ran out meanwhile.
    pub fn leads(&self, shown: Leadership) -> bool {
        self.0.leads(shown)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        for task in [self.http.as_ref(), self.resolver.as_ref()].into_iter().flatten() {
            task.abort();
        }
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl Node {
    /// Binds `config.listen` (and `config.http`, if set) and starts the member. Must be called within a tokio
    /// runtime.
    pub async fn start(config: NodeConfig) -> Result<Self, StartError> {
        Self::start_valid(config.validated()?).await
    }

    /// As [`Self::start`], for a configuration already validated.
    pub async fn start_valid(valid: ValidConfig) -> Result<Self, StartError> {
        let listen = valid.config.listen;
        let socket = std::net::UdpSocket::bind(listen).map_err(|source| StartError::Bind { addr: listen, source })?;
        Self::launch(valid, socket).await
    }

    /// Starts the member on an already bound socket (`config.listen` is ignored): tests bind port 0 first, then
    /// tell every member the others' real addresses. The HTTP address, if any, is bound here, before the state
    /// file is touched. Peers given by name are resolved here (those that do not resolve yet are retried in the
    /// background).
    pub async fn start_on(config: NodeConfig, socket: std::net::UdpSocket) -> Result<Self, StartError> {
        Self::launch(config.validated()?, socket).await
    }

    async fn launch(mut valid: ValidConfig, socket: std::net::UdpSocket) -> Result<Self, StartError> {
        let config = &mut valid.config;
        let local_addr = socket.local_addr().map_err(|source| StartError::Bind { addr: config.listen, source })?;
        let resolved = resolve::resolve_all(&config.names, local_addr).await;
        config.peers.extend(&resolved);
        socket.set_nonblocking(true).map_err(|source| StartError::Bind { addr: local_addr, source })?;
        let socket = UdpSocket::from_std(socket).map_err(|source| StartError::Bind { addr: local_addr, source })?;
        let http = match config.http {
            Some(addr) => Some(bind_http(addr)?),
            None => None,
        };
        spawned(valid, socket, local_addr, http).await
    }

    /// This member's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The address its HTTP endpoints are served on (with the port the OS chose for port 0), if any.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
    }

    /// Its incarnation: one more than the last one in a trusted state file; without one (a first start, a lost or
    /// damaged file), one more than the wall-clock time in milliseconds.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The root seed of its timer jitter.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The current `(leader, epoch)`, as a watch value that changes whenever it does.
    pub fn leadership(&self) -> watch::Receiver<Leadership> {
        self.leadership.clone()
    }

    /// The leadership it shows, and since when on the system-wide monotonic clock (`CLOCK_MONOTONIC`, the same
    /// for every process of one machine; `None` where there is none): the changes of members on one machine can be
    /// put in order by when they happened. `elect cluster` orders its history so.
    pub fn shown_since(&self) -> (Leadership, Option<std::time::Duration>) {
        self.lease.0.shown_since()
    }

    /// Its lease, in the lease mode: see [`LeaseClock`].
    pub fn lease(&self) -> LeaseClock {
        self.lease.clone()
    }

    /// The ordered stream of leadership events; `None` after the first call (there is one stream). It ends when
    /// the member stops.
    pub fn events(&mut self) -> Option<mpsc::UnboundedReceiver<LeaderEvent>> {
        self.events.take()
    }

    /// Its counters now.
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// Gives leadership up, if this member leads: it stops leading at once, tells the others (who elect another
    /// leader without waiting for a timeout), and sits out elections for the configured resign hold. Algorithms
    /// without a hand-over of their own (Bully: the strongest live member always wins) make it leader again after
    /// that.
    pub fn resign(&self) {
        let _ = self.requests.send(Request::Resign);
    }

    /// Hands leadership over to member `to`, if this member leads: it tells the others, stops leading at once and
    /// stands aside, as do the members the algorithm ranks above `to`, while `to` elects itself. They take part
    /// again once `to`, having taken over, stops leading, or after the resign hold if `to` has not taken over by
    /// then (an ordinary election follows). Naming itself or no member does nothing; watch the leadership
    /// ([`Node::events`]) to see whether `to` took over.
    pub fn transfer(&self, to: NodeId) {
        let _ = self.requests.send(Request::Transfer(to));
    }

    /// Changes the voters, if this member leads: one member added or removed (see `elect_algos::member`'s voting
    /// configurations). The answer comes once the change is done (a majority of the new voters holds it), refused
    /// (nothing changed: the reason says why), or given up (it may or may not take effect); `None` if the member
    /// stopped first.
    pub async fn change_voters(&self, change: VoterChange) -> Option<ChangeReport> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.requests.send(Request::Voters(change, reply)).ok()?;
        answer.await.ok()
    }

    /// The voting configuration this member holds, the change it is making and the last one's outcome, as
    /// `GET /voters` gives them.
    pub fn voters(&self) -> serde_json::Value {
        self.lease.0.voters_json()
    }

    /// Stops gracefully: resigns first if leading, tells the others it is leaving, and waits for the task to end;
    /// then stops the HTTP server.
    pub async fn shutdown(mut self) -> Result<(), NodeError> {
        let _ = self.requests.send(Request::Shutdown);
        let result = self.wait().await;
        self.stop_http().await;
        result
    }

    /// Waits until the member stops: after [`Node::shutdown`], or on its own when a state write fails. Its HTTP
    /// endpoints go on serving (the last status, and the counters) until the handle is dropped.
    pub async fn wait(&mut self) -> Result<(), NodeError> {
        match self.task.take() {
            Some(task) => task.await.map_err(|e| NodeError::Task(e.to_string()))?,
            None => Ok(()),
        }
    }

    /// Stops the member at once, like a crash: no resignation, no goodbye; returns once its socket and its HTTP
    /// listener are closed.
    pub async fn abort(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
        self.stop_http().await;
    }

    /// Stops the HTTP server, and returns once its listener is closed.
    async fn stop_http(&mut self) {
        if let Some(http) = self.http.take() {
            http.abort();
            let _ = http.await;
        }
    }
}

/// Binds the HTTP address (before anything is written, so that a bad one leaves the state file alone).
fn bind_http(addr: SocketAddr) -> Result<std::net::TcpListener, StartError> {
    let bind = |source| StartError::Http { addr, source };
    let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    Ok(listener)
}

/// What a state file's durable bytes are: the algorithm, and whether the leader monitor wraps it.
fn layout(info: &Info) -> String {
    if info.elects == Elects::OneLeader { format!("{}+monitor", info.name) } else { info.name.to_owned() }
}

/// A seed when none is configured: the clock and the process id, mixed. It is logged, so a run can be repeated.
fn fresh_seed(id: NodeId) -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    splitmix(nanos as u64 ^ u64::from(std::process::id()) << 32 ^ u64::from(id.0))
}

/// The wall-clock time in milliseconds since the Unix epoch (0 for a clock before it): the floor of the
/// incarnation of a member that lost its state.
fn wall_clock_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// SplitMix64's finalizer: derives well-spread streams from related seeds.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How a member's leader monitor and member are timed: heartbeats every `heartbeat·T`, and the resign hold.
fn timing(config: &NodeConfig) -> member::DeployTiming {
    let hold = elect_core::Duration::from_ticks(micros(config.resign_hold));
    let takeover_after = elect_core::Duration::from_ticks(micros(config.takeover_after));
    member::DeployTiming {
        no_lead: config.no_lead,
        takeover_after,
        lease: config.lease,
        voters: config.voters.as_deref().map(Arc::from),
        ..member::DeployTiming::new(config.heartbeat, hold)
    }
}

/// What is wrong with the voting configuration of a state file whose checksum holds, if anything: no member writes
/// one that names no voter, a voter twice or out of order, a member this one does not know, or a configuration newer
/// than the epochs it has seen.
fn odd_voters(stored: &Stored, members: &[NodeId]) -> Option<String> {
    let voters = stored.voters.as_ref()?;
    let ordered = voters.members.windows(2).all(|w| w[0] < w[1]);
    if voters.members.is_empty() || !ordered || voters.members.iter().any(|id| !members.contains(id)) {
        return Some(format!("its voters ({voters}) are not distinct members of this cluster, in order"));
    }
    (voters.id.epoch > Epoch::from_bits(stored.seen))
        .then(|| format!("its voting configuration {} is newer than the epochs it has seen", voters.id))
}

/// The mesh the members form, for the leader monitor's timing: a complete graph, one hop for a heartbeat, and a
/// logical ring for ring algorithms.
fn network(config: &NodeConfig, info: &Info) -> MonitorNetwork {
    let n = config.members().len() as u64;
    MonitorNetwork {
        facts: Facts::new(n, n * n.saturating_sub(1) / 2, n),
        hops: 1,
        logical_ring: info.needs == Needs::Ring,
        delay_bound: config.delay_bound_ticks(),
    }
}

/// A real duration in runtime ticks (microseconds).
fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A member's start as a task, boxed and never inlined: the code that knows the member's algorithm's types (a copy
/// per algorithm: [`Building`], [`HostedMember`]) is built in this crate alone. A crate that starts a node polls the
/// start through its box; unboxed, the start's futures, generic within, were built again in every crate that awaits
/// them.
#[inline(never)]
fn spawned(
    valid: ValidConfig,
    socket: UdpSocket,
    local_addr: SocketAddr,
    http: Option<std::net::TcpListener>,
) -> Starting<Node> {
    Box::pin(Launch::start(valid, Socket::Udp(socket), local_addr, http, wall_clock_ms(), Spawn))
}

/// A member ready to be built: its configuration, its socket and its state file as it was read.
pub(crate) struct Launch {
    config: NodeConfig,
    socket: Socket,
    local_addr: SocketAddr,
    http: Option<std::net::TcpListener>,
    store: Store,
    stored: Stored,
    /// The incarnation the member's new one must exceed: the one in a trusted state file, or, without one, the
    /// wall-clock floor (see [`Launch::start`]).
    floor: u64,
    seed: u64,
}

/// A built member's runner, and the handles the application keeps on it.
pub(crate) struct Built {
    pub(crate) runner: Runner,
    config: NodeConfig,
    local_addr: SocketAddr,
    http: Option<(SocketAddr, tokio::net::TcpListener)>,
    seed: u64,
    incarnation: u64,
    leadership: watch::Receiver<Leadership>,
    pub(crate) events: mpsc::UnboundedReceiver<LeaderEvent>,
    requests: mpsc::UnboundedSender<Request>,
    counters: Arc<Counters>,
    board: Arc<Board>,
}

/// What becomes of a built member: a task ([`Spawn`]), or a runner driven by a script ([`crate::scripted`]).
pub(crate) trait Then {
    type Output;

    /// Starts the built runner's member from `restored`: the whole recovery of every driver ([`Runner::recover`]),
    /// unless what drives the runner runs its steps itself.
    fn start(&self, runner: &mut Runner, restored: Restored) {
        runner.recover(restored);
    }

    fn then(self, built: Built) -> Result<Self::Output, StartError>;
}

impl Launch {
    /// Starts the member `valid` describes, handing it to `then`: its algorithm is looked up and its process built
    /// once, and checked against the member ids before anything is written; then the state file is read (and written
    /// back as it is, so that a directory the member cannot write to stops it here), and the member is started from
    /// it ([`Self::open`], [`Self::build`]).
    ///
    /// A state file that is missing or damaged (it fails its checksum: truncated, torn, edited) is not trusted: a
    /// damaged one is set aside as `state.damaged`, and the member starts as one that lost its state: knowing no
    /// epoch (so it asks its peers, and grants nothing until it has heard from a majority of the members with
    /// itself, `elect_algos::member`), in an incarnation above
    /// `clock_ms`, the wall-clock time in milliseconds. Incarnations must outlive the file, and the clock is the
    /// one thing that does: every earlier incarnation of the member was numbered from an earlier start's clock
    /// (plus one per restart since, and restarts are more than a millisecond apart), so the new one is higher
    /// unless the clock was set back. Peers' memories were the other choice, but a member shut out as
    /// `stale-incarnation` cannot hear from them what they remember.
    pub(crate) async fn start<T: Then + Send + 'static>(
        valid: ValidConfig,
        socket: Socket,
        local_addr: SocketAddr,
        http: Option<std::net::TcpListener>,
        clock_ms: u64,
        then: T,
    ) -> Result<T::Output, StartError> {
        let ValidConfig { config, info } = valid;
        let (network, layout) = (network(&config, info), layout(info));
        let (name, params, timing) = (config.algorithm.clone(), config.params.clone(), timing(&config));
        let opening = Opening { place: Place { config, layout, socket, local_addr, http, clock_ms }, then };
        member::dispatch_member(&name, &params, timing, network, opening).map_err(ConfigError::from)?.await
    }

    /// Reads the state file of a member whose process is built and checked (see [`Self::start`]).
    async fn open(place: Place, seed: u64) -> Result<Self, StartError> {
        let Place { config, layout, socket, local_addr, http, clock_ms } = place;
        let dir = config.data_dir.clone();
        let members = config.members();
        let stored = tokio::task::spawn_blocking(move || -> Result<(Store, Stored, u64), StoreError> {
            let store = Store::open(&dir)?;
            let loaded = match store.inspect()? {
                // Its checksum holds, but no member could have written it: an epoch no member accepts from another
                // (see `elect_core::epoch`) would stop every later election of this one.
                Loaded::Trusted(stored) if !Epoch::from_bits(stored.seen).is_valid() => Loaded::Damaged(format!(
                    "it holds epoch {}, beyond the last round a member accepts ({})",
                    Epoch::from_bits(stored.seen),
                    elect_core::epoch::MAX_ROUND
                )),
                Loaded::Trusted(stored) if let Some(reason) = odd_voters(&stored, &members) => Loaded::Damaged(reason),
                loaded => loaded,
            };
            let (mut stored, floor) = match loaded {
                Loaded::Trusted(stored) => {
                    let floor = stored.incarnation;
                    (stored, floor)
                }
                Loaded::Missing => (Stored::default(), clock_ms),
                Loaded::Damaged(reason) => {
                    let aside = store.set_aside()?;
                    tracing::warn!(
                        %reason,
                        kept = %aside.display(),
                        "the state file is damaged and not trusted: starting as a member that lost its state"
                    );
                    (Stored::default(), clock_ms)
                }
            };
            stored.incarnation = floor;
            if stored.layout != layout {
                if !stored.layout.is_empty() {
                    tracing::warn!(
                        was = stored.layout,
                        now = layout,
                        "another algorithm: its durable state is dropped"
                    );
                }
                stored.layout = layout;
                stored.durable.clear();
            }
            // The process's new incarnation is written before its first packet.
            store.save(&stored)?;
            Ok((store, stored, floor))
        })
        .await
        .expect("the state file task does not panic");
        let (store, stored, floor) = stored?;
        Ok(Self { config, socket, local_addr, http, store, stored, floor, seed })
    }

    /// What the state file held, with the incarnation the new one must exceed.
    fn restored(&self) -> Restored {
        let stored = &self.stored;
        let (durable, voters) = (stored.durable.clone(), stored.voters.clone());
        Restored { incarnation: self.floor, seen: Epoch::from_bits(stored.seen), durable, voters }
    }

    /// Builds the runner of the member `building` holds (its process as the registry built it, its algorithm's name
    /// and message kinds), and starts it as `then` asks.
    fn build<T: Then>(self, building: Building, then: &T) -> Result<Built, StartError> {
        let Building { hosted, mesh, name, kinds } = building;
        let restored = self.restored();
        let Self { config, socket, local_addr, http, store, stored, seed, .. } = self;
        let id = config.id;
        let members = config.members();
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let published = Leadership { leader: None, epoch: Epoch::from_bits(stored.seen) };
        let (leadership_tx, leadership) = watch::channel(published);
        let counters = Arc::new(Counters::new(kinds));
        counters.shows(id, published);
        let addrs = members
            .iter()
            .map(|&m| {
                let addr = if m == id { Some(local_addr) } else { config.peers.get(&m).copied() };
                (m, addr, config.names.get(&m).map(ToString::to_string))
            })
            .collect();
        let board = Arc::new(Board::new(id, name, addrs, published));
        // The voters it starts with, shown before its first step: those it saved, or those it is started with.
        let voters = restored
            .voters
            .clone()
            .unwrap_or_else(|| Voters::initial(config.voters.clone().unwrap_or_else(|| members.clone())));
        board.set_voters(&voters, None, None);
        if config.lease.is_some() {
            board.set_lease_mode();
        }
        let http = match http {
            Some(listener) => {
                let requested = config.http.unwrap_or(local_addr);
                let addr = listener.local_addr().map_err(|source| StartError::Http { addr: requested, source })?;
                let listener =
                    tokio::net::TcpListener::from_std(listener).map_err(|source| StartError::Http { addr, source })?;
                Some((addr, listener))
            }
            None => None,
        };
        let transport = Transport {
            socket,
            addrs: config.peers.clone(),
            cluster: wire::cluster_id(&config.cluster),
            key: config.key.clone(),
            windows: Default::default(),
            seq: 0,
            told_unauthenticated: false,
            told_invalid: None,
            updates: None,
            buf: vec![0; wire::MAX_PACKET],
            out: Vec::new(),
        };
        let outlets = Outlets {
            requests: requests_rx,
            events: events_tx,
            leadership: leadership_tx,
            counters: counters.clone(),
            board: board.clone(),
        };
        let mut runner = Runner::new(hosted, mesh, transport, (store, stored), outlets);
        // The process starts here, so that the handle knows its incarnation; the task writes it before anything
        // else.
        then.start(&mut runner, restored);
        let incarnation = runner.hosted.incarnation();
        counters.set_incarnation(incarnation);
        board.set_incarnation(incarnation);
        Ok(Built { runner, config, local_addr, http, seed, incarnation, leadership, events, requests, counters, board })
    }
}

/// A member whose configuration is valid, on its way to starting: what [`Launch::start`] hands the registry, which
/// builds the member's process and gives it back ([`MemberDriver::drive_member`]) to be checked, opened and built.
struct Opening<T> {
    place: Place,
    then: T,
}

/// What [`Launch::open`] opens a member from: its configuration, the layout of its algorithm's durable state, its
/// socket and HTTP listener, and the wall clock its incarnation must exceed without a state file.
struct Place {
    config: NodeConfig,
    layout: String,
    socket: Socket,
    local_addr: SocketAddr,
    http: Option<std::net::TcpListener>,
    clock_ms: u64,
}

/// What a member's start becomes, once its process is built.
type Starting<O> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<O, StartError>> + Send>>;

impl<T: Then + Send + 'static> MemberDriver for Opening<T> {
    type Output = Starting<T::Output>;

    /// The one part of a member's start that knows its algorithm's types: its process is checked against the
    /// members and built, with its timers' generator, behind [`Hosted`]; the rest is compiled once.
    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> Self::Output {
        let Self { place, then } = self;
        let config = &place.config;
        let members = config.members();
        if let Err(e) = member.validate(&members) {
            let error = StartError::from(ConfigError::Members(e.to_string()));
            return Box::pin(async move { Err(error) });
        }
        let seed = config.seed.unwrap_or_else(|| fresh_seed(config.id));
        let building = Building::new(member, config, seed);
        Box::pin(open_and_build(place, seed, building, then))
    }
}

/// A member's process, built, on its way to its runner: what [`Launch::build`] needs of the algorithm.
struct Building {
    hosted: Box<dyn Hosted>,
    mesh: Mesh,
    name: &'static str,
    kinds: Vec<&'static str>,
}

impl Building {
    /// Builds `member`'s process for the member `config` describes, with its timers' generator seeded from `seed`.
    fn new<A: Algorithm>(member: Deployed<A>, config: &NodeConfig, seed: u64) -> Self {
        let mesh = Mesh::new(config.id, &config.members(), Ranking::default());
        let process = member.build(&mesh.setup(config.delay_bound_ticks()));
        let rng = ChaCha8Rng::seed_from_u64(splitmix(seed ^ u64::from(config.id.0)));
        let hosted = Box::new(HostedMember::new(process, rng));
        Self { hosted, mesh, name: member.info().name, kinds: HostedMember::<A>::kinds() }
    }
}

/// Reads the member's state file and builds its runner ([`Launch::open`], [`Launch::build`]).
async fn open_and_build<T: Then>(
    place: Place,
    seed: u64,
    building: Building,
    then: T,
) -> Result<T::Output, StartError> {
    let built = Launch::open(place, seed).await?.build(building, &then)?;
    then.then(built)
}

/// A member runs as a tokio task, with its HTTP server beside it.
struct Spawn;

impl Then for Spawn {
    type Output = Node;

    fn then(self, built: Built) -> Result<Node, StartError> {
        let Built {
            mut runner,
            config,
            local_addr,
            http,
            seed,
            incarnation,
            leadership,
            events,
            requests,
            counters,
            board,
        } = built;
        let id = config.id;
        let span = info_span!("member", id = id.0);
        span.in_scope(|| {
            info!(
                algorithm = config.algorithm.as_str(),
                incarnation,
                seed,
                members = ?config.members().iter().map(|m| m.0).collect::<Vec<_>>(),
                delay_bound = ?config.delay_bound,
                listen = %local_addr,
                http = ?http.as_ref().map(|(addr, _)| *addr),
                authenticated = config.key.is_some(),
                no_lead = config.no_lead,
                takeover_after = ?config.takeover_after,
                lease = ?config.lease,
                "member starting"
            );
            if let Some((addr, _)) = &http {
                let resign = match (&config.http_token, addr.ip().is_loopback()) {
                    (Some(_), _) => "with the token",
                    (None, true) => "from this machine",
                    (None, false) => "from no one (no --http-token-file)",
                };
                info!(http = %addr, resign, "serving GET /status, /metrics and /leader, and POST /resign and /transfer");
            }
            if config.key.is_none() {
                info!("no cluster key: packets are not authenticated, the cluster trusts its network");
            }
        });
        let http_addr = http.as_ref().map(|(addr, _)| *addr);
        // Peers given by name: a task of their own keeps their addresses current and hands them to the runner.
        let resolver = (!config.names.is_empty()).then(|| {
            let (updates, received) = mpsc::unbounded_channel();
            runner.transport.updates = Some(received);
            let resolved = config.peers.iter().map(|(&p, &a)| (p, a)).collect();
            let silence = config.real(config.heartbeat + 2);
            let resolver =
                resolve::Resolver::new(&config.names, &resolved, local_addr, silence, board.clone(), updates);
            tokio::spawn(resolver.run().instrument(span.clone()))
        });
        let http = http.map(|(addr, listener)| {
            let guard = Arc::new(http::Guard::new(addr, config.http_token.clone()));
            let (requests, counters) = (requests.clone(), counters.clone());
            let members = config.members().into();
            let (board, resign_hold) = (board.clone(), config.resign_hold);
            let shared = http::Shared { board, counters, requests, guard, resign_hold, members };
            tokio::spawn(http::serve(listener, shared).instrument(span.clone()))
        });
        let task = tokio::spawn(runner.run().instrument(span));
        Ok(Node {
            id,
            local_addr,
            http_addr,
            incarnation,
            seed,
            leadership,
            events: Some(events),
            requests,
            counters,
            lease: LeaseClock(board),
            task: Some(task),
            http,
            resolver,
        })
    }
}

#[cfg(test)]
mod tests {
    use elect_algos::{Bound, Initiators, Needs, ParamError, Params, Showcase, Timing};
    use elect_core::{Check, Command, Cx, Duration, Port, Process, Setup, Status};
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::wire::Envelope;
    use elect_algos::member::{Body, Packet};

    /// A process that, when it initiates, persists `n` and then sends `ping{n}`, for n = 1, 2, 3, in one step.
    #[derive(Clone, Debug)]
    struct Pinger;

    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct PingerProcess;

    #[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    enum Ping {
        Ping { n: u64 },
    }
    elect_core::message_kinds!(Ping { Ping => "ping" });
    impl elect_core::Validate for Ping {
        fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
            Ok(())
        }
    }

    impl Process for PingerProcess {
        type Msg = Ping;
        type Timer = u8;
        type Durable = u64;

        fn on_message(&mut self, _: &mut Cx<'_, Self>, _: Port, _: Ping) {}

        fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
            if cmd == Command::Initiate {
                for n in 1..=3 {
                    cx.persist(n);
                    cx.send(Port(0), Ping::Ping { n });
                }
            }
        }

        fn status(&self) -> Status {
            Status::election(elect_core::Epoch::ZERO)
        }
    }

    static INFO: Info = Info {
        name: "pinger",
        aliases: &[],
        title: "a test process",
        model: "any",
        seed: "none",
        needs: Needs::Complete,
        timing: Timing::Asynchronous,
        links: elect_algos::LinkOrder::Any,
        elects: Elects::PerGroup,
        lockstep: false,
        params: &[],
        rules: &[],
        showcase: Showcase { initiators: Initiators::All, crash_strongest: false, describe: "" },
    };

    impl Algorithm for Pinger {
        type Process = PingerProcess;
        const INFO: &'static Info = &INFO;

        fn from_params(_: &Params) -> Result<Self, ParamError> {
            Ok(Self)
        }

        fn build(&self, _: &Setup<'_>) -> PingerProcess {
            PingerProcess
        }

        fn checks(&self) -> Vec<Check> {
            Vec::new()
        }

        fn election_time(&self, _: &Facts, t: Duration) -> Duration {
            t
        }

        fn bounds(&self, _: &Facts) -> Vec<Bound> {
            Vec::new()
        }
    }

    #[tokio::test]
    async fn what_a_step_persists_is_on_disk_before_its_later_sends_leave() {
        let dir = tempfile::tempdir().unwrap();
        let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        peer.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let local_addr = socket.local_addr().unwrap();
        let mut config = NodeConfig::new(NodeId(1), local_addr, "pinger", dir.path());
        config.peers.insert(NodeId(2), peer.local_addr().unwrap());
        let store = Store::open(dir.path()).unwrap();
        let stored = Stored { incarnation: 1, ..Stored::default() };
        let socket = UdpSocket::from_std(socket).unwrap();
        let (socket, http) = (Socket::Udp(socket), None);
        let member = Deployed::new(Pinger, member::MemberConfig::new(elect_core::InT(2), elect_core::Duration::ZERO));
        let building = Building::new(member, &config, 1);
        let launch = Launch { config, socket, local_addr, http, store, stored, floor: 1, seed: 1 };
        let built = launch.build(building, &Spawn);
        let node = Spawn.then(built.unwrap()).unwrap();
        let state = dir.path().join("state");
        let got = tokio::task::spawn_blocking(move || {
            let mut buf = [0u8; 1024];
            let mut got = Vec::new();
            while got.len() < 3 {
                let (len, _) = peer.recv_from(&mut buf).unwrap();
                // Read the state file the moment the packet arrives: it already holds what was persisted before it.
                let bytes = std::fs::read(&state).unwrap();
                let envelope =
                    wire::decode::<Packet<Ping>>(&buf[..len], wire::cluster_id("elect"), NodeId(2), None).unwrap();
                // The member's question at its start (it knows no epoch) comes first; then the pings.
                let Envelope { msg: Packet { body: Body::Algorithm(Ping::Ping { n }), .. }, .. } = envelope else {
                    continue;
                };
                let (stored, _crc) = postcard::take_from_bytes::<Stored>(&bytes).unwrap();
                let durable: u64 = postcard::from_bytes(&stored.durable).unwrap();
                got.push((n, durable));
            }
            got
        })
        .await
        .unwrap();
        for (n, durable) in got {
            assert!(durable >= n, "ping {n} left before {n} was durable (the file held {durable})");
        }
        assert!(node.stats().writes >= 3);
        node.abort().await;
    }
}
