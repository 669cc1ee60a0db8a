//! The monitor's timing. Every duration a monitored process waits is a multiple of the delay bound `T`, set once
//! per network for every driver ([`MonitorConfig::for_network`]): a follower's suspicion time covers a heartbeat
//! period and the longest path a heartbeat takes, the first heartbeat of an epoch also waits out one election, and
//! a ring hop or a pre-vote waits a round trip, `2T + ε`. A process turns them into ticks when it is built
//! ([`Fixed`]) and keeps them, with its setup, for its whole life.

use elect_core::{Duration, InT, NodeId, OwnedSetup, Port, Rank, RingPorts, Setup, Shape};

use crate::algorithm::{Algorithm, Facts, Needs};

/// The monitor's timing, in multiples of the delay bound `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonitorConfig {
    /// The leader sends a heartbeat every `heartbeat·T`.
    pub heartbeat: InT,
    /// A follower suspects its leader after `timeout·T` without a heartbeat (plus its stagger); it must exceed the
    /// heartbeat period plus the time a heartbeat takes to arrive.
    pub timeout: InT,
    /// A follower waits `stagger·T` longer per process stronger than it (other than the leader) before it
    /// suspects: the time the `join` of a stronger follower takes to reach it.
    pub stagger: InT,
    /// Extra time, for the first heartbeat of an epoch: a follower may learn the leader before the leader does
    /// (an announcement that passes it on its way round the ring), so this covers the rest of an election.
    pub grace: InT,
    /// A flaw planted on purpose: two leaders of one epoch ignore each other's heartbeats, so that the checker
    /// shows the run in which they never agree again.
    pub deaf_leaders: bool,
}

impl MonitorConfig {
    /// Heartbeats every `heartbeat·T`, a timeout that covers a heartbeat crossing `hops` links, suspicion
    /// staggered by the time a `join` takes to cross them, and a grace of one election of `election·T`.
    pub fn new(heartbeat: InT, hops: u64, election: InT) -> Self {
        Self { heartbeat, timeout: heartbeat + hops + 1, stagger: InT(hops), grace: election, deaf_leaders: false }
    }

    /// The timing of `algorithm`'s monitor on `network`, with heartbeats every `heartbeat·T`: a timeout that covers
    /// the longest path a heartbeat takes, and a grace of one election (on a logical ring, with the time a message
    /// may wait at each dead process, `2T + ε` in either direction). The simulator, the checker and the runtime
    /// all time the monitor here.
    pub fn for_network<A: Algorithm>(algorithm: &A, network: &MonitorNetwork, heartbeat: InT) -> Self {
        let t = network.delay_bound;
        let mut election = algorithm.election_time(&network.facts, t).ticks().div_ceil(t.ticks().max(1));
        if network.logical_ring {
            election += 5 * network.facts.nodes;
        }
        Self::new(heartbeat, network.hops, InT(election))
    }
}

/// What the leader monitor's timing depends on besides the algorithm: see [`MonitorConfig::for_network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MonitorNetwork {
    /// The facts of a failure-free run (nodes, edges, initiators).
    pub facts: Facts,
    /// The longest path a heartbeat takes, in hops.
    pub hops: u64,
    /// Whether a ring algorithm runs on a logical ring over a complete graph (its messages may wait at dead
    /// processes).
    pub logical_ring: bool,
    /// The delay bound `T`.
    pub delay_bound: Duration,
}

/// What a monitored process keeps for its whole life: its setup (to build each epoch's instance of the algorithm)
/// and its timing in ticks.
#[derive(Debug)]
pub(super) struct Fixed {
    pub(super) setup: OwnedSetup,
    pub(super) heartbeat: Duration,
    pub(super) timeout: Duration,
    /// The timeout before the first heartbeat of an epoch.
    pub(super) first_timeout: Duration,
    /// The extra suspicion time per stronger process.
    pub(super) stagger: Duration,
    /// Whether the algorithm runs on a ring (and the monitor may repair it: see `hops`).
    pub(super) ring_algorithm: bool,
    /// Whether the monitor finds dead ring neighbours (ring algorithms on a logical ring over a complete graph).
    pub(super) hops: bool,
    /// How long a ring message may go unacknowledged: `2T + ε`.
    pub(super) hop_timeout: Duration,
    /// The planted flaw of [`MonitorConfig::deaf_leaders`].
    pub(super) deaf_leaders: bool,
    /// Whether a follower that suspects its leader holds a pre-vote first: on a complete graph of three processes
    /// or more, where the others can vouch for the leader.
    pub(super) pre_vote: bool,
    /// A follower vouches that it hears its leader while its last heartbeat is this recent: `(heartbeat + 1)·T`.
    pub(super) quiet: Duration,
}

impl Fixed {
    /// The fixed part of a process of an algorithm that `needs` a topology, built from `setup` and timed by
    /// `config`.
    ///
    /// A ring algorithm alone on a complete graph (a cluster of one member) has a ring of itself: the monitor
    /// hands every message it sends round the ring back to it, as to a process whose every neighbour is dead. On a
    /// logical ring of two, both neighbours are the same process: the algorithm is given a port of its own for
    /// each direction (the monitor sends both round the ring), so that it tells its two sides apart.
    pub(super) fn new(needs: Needs, config: &MonitorConfig, setup: &Setup<'_>) -> Self {
        let t = setup.delay_bound.expect("the leader monitor needs a delay bound; drivers check it");
        let alone = needs == Needs::Ring && setup.shape == Shape::Complete && setup.neighbors.is_empty();
        let logical = needs == Needs::Ring && !setup.ring_order.is_empty();
        let ring = match setup.ring {
            _ if alone => Some(RingPorts { next: Port(0), prev: Port(1) }),
            Some(r) if logical && r.next == r.prev => {
                Some(RingPorts { next: r.next, prev: Port(setup.neighbors.len() as u32) })
            }
            ring => ring,
        };
        Self {
            setup: OwnedSetup { ring, ..setup.to_owned() },
            heartbeat: t * config.heartbeat,
            timeout: t * config.timeout + Duration::TICK,
            first_timeout: t * (config.timeout + config.grace) + Duration::TICK,
            stagger: t * config.stagger,
            ring_algorithm: needs == Needs::Ring,
            hops: alone || logical,
            hop_timeout: t * 2 + Duration::TICK,
            deaf_leaders: config.deaf_leaders,
            pre_vote: setup.shape == Shape::Complete && setup.neighbors.len() >= 2,
            quiet: t * (config.heartbeat + 1),
        }
    }

    /// The algorithm's setup. When the monitor repairs the ring, the algorithm does not see the ring order: it
    /// sends to its ring neighbours and the monitor finds the live ones.
    pub(super) fn algorithm_setup(&self) -> Setup<'_> {
        let setup = self.setup.setup();
        if self.hops { Setup { ring_order: &[], ..setup } } else { setup }
    }

    /// The process at the far end of `port`.
    pub(super) fn neighbor(&self, port: Port) -> NodeId {
        self.setup.neighbors[port.index()].id
    }

    /// The rank of process `id`, if it is a neighbour.
    pub(super) fn rank_of(&self, id: NodeId) -> Option<Rank> {
        self.setup.neighbors.iter().find(|n| n.id == id).map(|n| n.rank)
    }
}
