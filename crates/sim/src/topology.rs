//! Topologies: who is linked to whom, port by port.
//!
//! The regular topologies are computed, not stored: the far end of a port is arithmetic on positions, so a ring
//! of a million processes costs no memory for its links.

use elect_core::{Port, RingPorts, Shape};

use crate::config::TopologyKind;

/// The largest complete graph simulated: its directed links must stay addressable in memory.
pub const MAX_COMPLETE_NODES: usize = 4096;

/// The largest number of processes of any run: a run costs a few hundred bytes per process.
pub const MAX_NODES: usize = 1 << 25;

/// A link end: a process position and its local port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct End {
    /// The position of the process.
    pub node: u32,
    /// Its port.
    pub port: u32,
}

/// A topology instantiated on `n` positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Graph {
    kind: TopologyKind,
    n: u32,
}

impl Graph {
    /// `kind` on `n` positions.
    pub fn new(kind: TopologyKind, n: usize) -> Result<Self, String> {
        if n == 0 {
            return Err("a topology needs at least one node".to_owned());
        }
        if n > MAX_NODES {
            return Err(format!("{n} nodes is more than the {MAX_NODES} the simulator runs"));
        }
        if kind == TopologyKind::Complete && n > MAX_COMPLETE_NODES {
            return Err(format!(
                "a complete graph on {n} nodes has {} links; elect simulates complete graphs of up to {MAX_COMPLETE_NODES} nodes",
                n as u64 * (n as u64 - 1) / 2
            ));
        }
        Ok(Self { kind, n: n as u32 })
    }

    /// The kind of topology.
    pub fn kind(&self) -> TopologyKind {
        self.kind
    }

    /// The number of positions.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are no positions (never: [`Graph::new`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `m`: the number of undirected links.
    pub fn edges(&self) -> u64 {
        let n = u64::from(self.n);
        match self.kind {
            TopologyKind::Ring => n,
            TopologyKind::Complete => n * (n - 1) / 2,
            TopologyKind::Line | TopologyKind::Star => n - 1,
        }
    }

    /// The number of ports of position `i`.
    #[inline]
    pub fn degree(&self, i: u32) -> u32 {
        let n = self.n;
        match self.kind {
            TopologyKind::Ring => 2,
            TopologyKind::Complete => n - 1,
            TopologyKind::Line => u32::from(i > 0) + u32::from(i + 1 < n),
            TopologyKind::Star if i == 0 => n - 1,
            TopologyKind::Star => 1,
        }
    }

    /// The other end of the link at `(i, port)`.
    ///
    /// # Panics
    /// If `port` is not a port of `i` (an algorithm sent on a port it was not given).
    #[inline]
    pub fn far_end(&self, i: u32, port: u32) -> End {
        let degree = self.degree(i);
        assert!(port < degree, "node at position {i} sent on port {port} but has {degree} ports");
        let n = self.n;
        match self.kind {
            TopologyKind::Ring if port == 0 => End { node: if i + 1 == n { 0 } else { i + 1 }, port: 1 },
            TopologyKind::Ring => End { node: if i == 0 { n - 1 } else { i - 1 }, port: 0 },
            TopologyKind::Complete => {
                let j = if port < i { port } else { port + 1 };
                End { node: j, port: if i < j { i } else { i - 1 } }
            }
            TopologyKind::Line if port == 0 && i > 0 => End { node: i - 1, port: u32::from(i - 1 > 0) },
            TopologyKind::Line => End { node: i + 1, port: 0 },
            TopologyKind::Star if i == 0 => End { node: port + 1, port: 0 },
            TopologyKind::Star => End { node: 0, port: i - 1 },
        }
    }

    /// A dense index of the directed link leaving `(i, port)`, below [`Graph::link_slots`].
    #[inline]
    pub fn link_index(&self, i: u32, port: u32) -> usize {
        let (i, port, n) = (i as usize, port as usize, self.n as usize);
        match self.kind {
            TopologyKind::Ring | TopologyKind::Line => 2 * i + port,
            TopologyKind::Complete => i * (n - 1) + port,
            TopologyKind::Star if i == 0 => port,
            TopologyKind::Star => n - 1 + (i - 1),
        }
    }

    /// The size of the [`Graph::link_index`] space.
    pub fn link_slots(&self) -> usize {
        let n = self.n as usize;
        match self.kind {
            TopologyKind::Ring | TopologyKind::Line => 2 * n,
            TopologyKind::Complete => n * (n - 1),
            TopologyKind::Star => 2 * (n - 1),
        }
    }

    /// Whether positions `a` and `b` are linked.
    pub fn adjacent(&self, a: u32, b: u32) -> bool {
        (0..self.degree(a)).any(|p| self.far_end(a, p).node == b)
    }

    /// The port of position `i` that leads to position `j`, on a complete graph.
    fn complete_port(i: u32, j: u32) -> Port {
        Port(if j < i { j } else { j - 1 })
    }

    /// The ring orientation of position `i`: on rings, and on complete graphs as the logical ring of positions.
    pub fn ring_ports(&self, i: u32) -> Option<RingPorts> {
        let n = self.n;
        match self.kind {
            TopologyKind::Ring => Some(RingPorts { next: Port(0), prev: Port(1) }),
            TopologyKind::Complete if n >= 2 => Some(RingPorts {
                next: Self::complete_port(i, (i + 1) % n),
                prev: Self::complete_port(i, (i + n - 1) % n),
            }),
            _ => None,
        }
    }

    /// On a complete graph, the ports of every other position in ring order from `i`'s successor; empty
    /// otherwise.
    pub fn ring_order(&self, i: u32) -> Vec<Port> {
        let n = self.n;
        match self.kind {
            TopologyKind::Complete => (1..n).map(|k| Self::complete_port(i, (i + k) % n)).collect(),
            _ => Vec::new(),
        }
    }

    /// The shape processes are told.
    pub fn shape(&self) -> Shape {
        match self.kind {
            TopologyKind::Ring => Shape::Ring,
            TopologyKind::Complete => Shape::Complete,
            TopologyKind::Line | TopologyKind::Star => Shape::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every link is traversable both ways and lands on the port it came from.
    fn check_symmetric(g: &Graph) {
        let mut seen = std::collections::BTreeSet::new();
        let mut directed = 0;
        for i in 0..g.n {
            for p in 0..g.degree(i) {
                let end = g.far_end(i, p);
                assert_eq!(g.far_end(end.node, end.port), End { node: i, port: p }, "{:?} {i}:{p}", g.kind);
                assert!(seen.insert(g.link_index(i, p)), "link index reused");
                assert!(g.link_index(i, p) < g.link_slots());
                directed += 1;
            }
        }
        assert_eq!(directed, 2 * g.edges(), "{:?} on {}", g.kind, g.n);
    }

    #[test]
    fn every_topology_is_symmetric_for_small_sizes() {
        for kind in TopologyKind::ALL {
            for n in 1..=9 {
                check_symmetric(&Graph::new(kind, n).unwrap());
            }
        }
    }

    #[test]
    fn a_complete_graph_carries_a_logical_ring() {
        let g = Graph::new(TopologyKind::Complete, 5).unwrap();
        for i in 0..5 {
            let ring = g.ring_ports(i).unwrap();
            assert_eq!(g.far_end(i, ring.next.0).node, (i + 1) % 5);
            assert_eq!(g.far_end(i, ring.prev.0).node, (i + 4) % 5);
            let order: Vec<u32> = g.ring_order(i).iter().map(|p| g.far_end(i, p.0).node).collect();
            assert_eq!(order, (1..5).map(|k| (i + k) % 5).collect::<Vec<_>>());
        }
        assert!(g.adjacent(0, 3) && !Graph::new(TopologyKind::Ring, 5).unwrap().adjacent(0, 3));
    }

    #[test]
    fn rings_of_one_and_two_have_distinct_links() {
        let one = Graph::new(TopologyKind::Ring, 1).unwrap();
        assert_eq!(one.far_end(0, 0), End { node: 0, port: 1 });
        let two = Graph::new(TopologyKind::Ring, 2).unwrap();
        assert_eq!(two.far_end(0, 0), End { node: 1, port: 1 });
        assert_eq!(two.far_end(0, 1), End { node: 1, port: 0 });
        assert_eq!(two.edges(), 2);
    }

    #[test]
    fn oversized_and_empty_graphs_are_refused() {
        assert!(Graph::new(TopologyKind::Ring, 0).is_err());
        let err = Graph::new(TopologyKind::Complete, MAX_COMPLETE_NODES + 1).unwrap_err();
        assert!(err.contains("complete graphs of up to"), "{err}");
    }
}
