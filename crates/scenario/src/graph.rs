//! A topology built for a run: [`Graph`], who is at the far end of each port of each position.
//!
//! The regular topologies (ring, complete, line, star) are computed, not stored: the far end of a port is
//! arithmetic on positions, so a ring of a million processes costs no memory for its links. The others are built
//! once as a compressed adjacency list (`draw.rs` draws the random ones from the run's seed). Connectivity,
//! eccentricities and the diameter come from petgraph's traversals.

use std::sync::{Arc, OnceLock};

use elect_core::{Port, RingPorts, Shape};
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::Bfs;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::draw;
use crate::topology::{
    MAX_COMPLETE_NODES, MAX_GEOMETRIC_LINKS, MAX_NODES, MAX_REGULAR_LINKS, MAX_STORED_NODES, TopologyError,
    TopologyKind, expected_geometric_links,
};

/// Diameters of stored topologies are computed (one breadth-first search per node) up to this many
/// node-link visits, a few seconds on two cores; larger graphs report none (an algorithm that needs the diameter
/// is then told it with `--param diameter=D`).
const DIAMETER_WORK: u64 = 1 << 25;

/// A link end: a process position and its local port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct End {
    /// The position of the process.
    pub node: u32,
    /// Its port.
    pub port: u32,
}

/// A stored topology: for each position its link ends in port order.
#[derive(Debug)]
struct Links {
    /// Ports of position `i` are `ends[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    ends: Vec<End>,
    /// The same graph for petgraph's algorithms, built on first use.
    petgraph: OnceLock<UnGraph<(), ()>>,
}

impl Links {
    /// The adjacency of `n` positions joined by `edges` (each once, no loops): ports are numbered in the order
    /// the edges list them.
    fn from_edges(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut degree = vec![0u32; n + 1];
        for &(a, b) in edges {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut total = 0u32;
        for d in &degree[..n] {
            offsets.push(total);
            total += d;
        }
        offsets.push(total);
        let mut next: Vec<u32> = offsets[..n].to_vec();
        let mut ends = vec![End { node: 0, port: 0 }; total as usize];
        for &(a, b) in edges {
            let (pa, pb) = (next[a as usize], next[b as usize]);
            ends[pa as usize] = End { node: b, port: pb - offsets[b as usize] };
            ends[pb as usize] = End { node: a, port: pa - offsets[a as usize] };
            next[a as usize] += 1;
            next[b as usize] += 1;
        }
        Self { offsets, ends, petgraph: OnceLock::new() }
    }

    fn graph(&self) -> &UnGraph<(), ()> {
        self.petgraph.get_or_init(|| {
            let n = self.offsets.len() - 1;
            let mut g = UnGraph::with_capacity(n, self.ends.len() / 2);
            for _ in 0..n {
                g.add_node(());
            }
            for i in 0..n {
                for e in &self.ends[self.offsets[i] as usize..self.offsets[i + 1] as usize] {
                    if (i as u32) < e.node {
                        g.add_edge(NodeIndex::new(i), NodeIndex::new(e.node as usize), ());
                    }
                }
            }
            g
        })
    }
}

/// A topology instantiated on `n` positions.
#[derive(Clone, Debug)]
pub struct Graph {
    kind: TopologyKind,
    n: u32,
    links: Option<Arc<Links>>,
    /// Where each position sits in the unit square (geometric graphs).
    positions: Option<Arc<Vec<[f64; 2]>>>,
    /// Whether links come and go (a mobile geometric graph): every other process then has a port, as on a
    /// complete graph, and the stored links are only those of the start.
    mobile: bool,
    /// A ring whose ends are computed, not stored, and that does not move: [`Self::far_end`]'s fast path.
    plain_ring: bool,
}

impl Graph {
    /// `kind` on `n` positions; random topologies draw from `rng`.
    pub fn new(kind: TopologyKind, n: usize, rng: &mut ChaCha8Rng) -> Result<Self, TopologyError> {
        if n == 0 {
            return Err(TopologyError::NoNodes);
        }
        if n > MAX_NODES {
            return Err(TopologyError::TooManyNodes(n));
        }
        if kind == TopologyKind::Complete && n > MAX_COMPLETE_NODES {
            return Err(TopologyError::LargeComplete(n));
        }
        if let Some(size) = kind.fixed_size()
            && size != n
        {
            return Err(TopologyError::Size { kind, size, n });
        }
        if let TopologyKind::Geometric { r } = kind
            && expected_geometric_links(n, r.0) > MAX_GEOMETRIC_LINKS as f64
        {
            return Err(TopologyError::DenseGeometric { r, n });
        }
        if let TopologyKind::RandomRegular { k } = kind
            && n as u64 * u64::from(k) / 2 > MAX_REGULAR_LINKS
        {
            return Err(TopologyError::DenseRegular { k, n });
        }
        if !kind.is_computed() && n > MAX_STORED_NODES {
            return Err(TopologyError::LargeStored(kind));
        }
        let mut positions = None;
        let edges = match &kind {
            TopologyKind::Ring | TopologyKind::Complete | TopologyKind::Line | TopologyKind::Star => None,
            &TopologyKind::Grid { w, h } => Some(draw::grid(w, h, false)),
            &TopologyKind::Torus { w, h } => Some(draw::grid(w, h, true)),
            &TopologyKind::RandomRegular { k } => Some(draw::random_regular(n, k, rng)?),
            &TopologyKind::Chordal { k } => Some(draw::chordal(n, k)?),
            TopologyKind::Tree => Some(draw::random_tree(n, rng)),
            TopologyKind::Geometric { r } => {
                let points: Vec<[f64; 2]> = (0..n).map(|_| [rng.random::<f64>(), rng.random::<f64>()]).collect();
                let edges = draw::geometric(&points, r.0);
                positions = Some(Arc::new(points));
                Some(edges)
            }
            TopologyKind::File(file) => Some(file.links.to_vec()),
        };
        let links = edges.map(|edges| Arc::new(Links::from_edges(n, &edges)));
        let plain_ring = matches!(kind, TopologyKind::Ring) && links.is_none();
        Ok(Self { kind, n: n as u32, links, positions, mobile: false, plain_ring })
    }

    /// This geometric graph with moving nodes: a port to every other process, links that work while in range.
    pub fn into_mobile(self) -> Result<Self, TopologyError> {
        if !matches!(self.kind, TopologyKind::Geometric { .. }) {
            return Err(TopologyError::NotGeometric(self.kind));
        }
        if self.len() > MAX_COMPLETE_NODES {
            return Err(TopologyError::LargeMobile);
        }
        Ok(Self { mobile: true, plain_ring: false, ..self })
    }

    /// Whether links come and go.
    pub fn is_mobile(&self) -> bool {
        self.mobile
    }

    /// The stored links, unless ports are computed (computed topologies and mobile networks).
    fn stored(&self) -> Option<&Links> {
        if self.mobile { None } else { self.links.as_deref() }
    }

    /// The computed family ports follow.
    fn computed(&self) -> &TopologyKind {
        if self.mobile { &TopologyKind::Complete } else { &self.kind }
    }

    /// The kind of topology.
    pub fn kind(&self) -> &TopologyKind {
        &self.kind
    }

    /// The number of positions.
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are no positions (never: [`Graph::new`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Where each position sits in the unit square, for geometric graphs.
    pub fn positions(&self) -> Option<&[[f64; 2]]> {
        self.positions.as_deref().map(Vec::as_slice)
    }

    /// `m`: the number of undirected links.
    pub fn edges(&self) -> u64 {
        let n = u64::from(self.n);
        match (&self.links, &self.kind) {
            (Some(links), _) => links.ends.len() as u64 / 2,
            (None, TopologyKind::Ring) => n,
            (None, TopologyKind::Complete) => n * (n - 1) / 2,
            (None, _) => n - 1,
        }
    }

    /// The number of ports of position `i`.
    #[inline]
    pub fn degree(&self, i: u32) -> u32 {
        let n = self.n;
        if let Some(links) = self.stored() {
            return links.offsets[i as usize + 1] - links.offsets[i as usize];
        }
        match self.computed() {
            TopologyKind::Ring => 2,
            TopologyKind::Complete => n - 1,
            TopologyKind::Line => u32::from(i > 0) + u32::from(i + 1 < n),
            TopologyKind::Star if i == 0 => n - 1,
            _ => 1,
        }
    }

    /// The other end of the link at `(i, port)`.
    ///
    /// # Panics
    /// If `port` is not a port of `i` (an algorithm sent on a port it was not given).
    #[inline]
    pub fn far_end(&self, i: u32, port: u32) -> End {
        // Rings first, inline: a ring algorithm's every send asks.
        if self.plain_ring && port < 2 {
            let n = self.n;
            return if port == 0 {
                End { node: if i + 1 == n { 0 } else { i + 1 }, port: 1 }
            } else {
                End { node: if i == 0 { n - 1 } else { i - 1 }, port: 0 }
            };
        }
        self.far_end_general(i, port)
    }

    #[inline(never)]
    fn far_end_general(&self, i: u32, port: u32) -> End {
        let degree = self.degree(i);
        assert!(port < degree, "node at position {i} sent on port {port} but has {degree} ports");
        if let Some(links) = self.stored() {
            return links.ends[(links.offsets[i as usize] + port) as usize];
        }
        let n = self.n;
        match self.computed() {
            TopologyKind::Ring if port == 0 => End { node: if i + 1 == n { 0 } else { i + 1 }, port: 1 },
            TopologyKind::Ring => End { node: if i == 0 { n - 1 } else { i - 1 }, port: 0 },
            TopologyKind::Complete => {
                let j = if port < i { port } else { port + 1 };
                End { node: j, port: if i < j { i } else { i - 1 } }
            }
            TopologyKind::Line if port == 0 && i > 0 => End { node: i - 1, port: u32::from(i - 1 > 0) },
            TopologyKind::Line => End { node: i + 1, port: 0 },
            TopologyKind::Star if i == 0 => End { node: port + 1, port: 0 },
            _ => End { node: 0, port: i - 1 },
        }
    }

    /// A dense index of the directed link leaving `(i, port)`, below [`Graph::link_slots`].
    #[inline]
    pub fn link_index(&self, i: u32, port: u32) -> usize {
        if let Some(links) = self.stored() {
            return (links.offsets[i as usize] + port) as usize;
        }
        let (i, port, n) = (i as usize, port as usize, self.n as usize);
        match self.computed() {
            TopologyKind::Ring | TopologyKind::Line => 2 * i + port,
            TopologyKind::Complete => i * (n - 1) + port,
            TopologyKind::Star if i == 0 => port,
            _ => n - 1 + (i - 1),
        }
    }

    /// The size of the [`Graph::link_index`] space.
    pub fn link_slots(&self) -> usize {
        let n = self.n as usize;
        match (self.stored(), self.computed()) {
            (Some(links), _) => links.ends.len(),
            (None, TopologyKind::Ring | TopologyKind::Line) => 2 * n,
            (None, TopologyKind::Complete) => n * (n - 1),
            (None, _) => 2 * (n - 1),
        }
    }

    /// Whether positions `a` and `b` are linked.
    pub fn adjacent(&self, a: u32, b: u32) -> bool {
        (0..self.degree(a)).any(|p| self.far_end(a, p).node == b)
    }

    /// The port of position `i` that leads to position `j`, on a complete graph (and a mobile network).
    pub fn complete_port(i: u32, j: u32) -> Port {
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
        if self.mobile {
            return Shape::Mobile;
        }
        match self.kind {
            TopologyKind::Ring => Shape::Ring,
            TopologyKind::Complete => Shape::Complete,
            _ => Shape::Other,
        }
    }

    /// The number of connected components.
    pub fn components(&self) -> usize {
        match &self.links {
            Some(links) => petgraph::algo::connected_components(links.graph()),
            None => 1,
        }
    }

    /// Whether every position can reach every other.
    pub fn is_connected(&self) -> bool {
        self.components() == 1
    }

    /// The largest distance from position `i` to any position it can reach.
    pub fn eccentricity(&self, i: u32) -> u64 {
        let n = u64::from(self.n);
        let i = u64::from(i);
        match (&self.links, &self.kind) {
            (Some(links), _) => bfs_eccentricity(links.graph(), i as usize),
            (None, TopologyKind::Ring) => n / 2,
            (None, TopologyKind::Complete) => u64::from(n > 1),
            (None, TopologyKind::Line) => i.max(n - 1 - i),
            (None, _) if n == 1 => 0,
            (None, _) if i == 0 || n == 2 => 1,
            (None, _) => 2,
        }
    }

    /// The diameter `D`: the largest distance between two positions. `None` if the graph is disconnected, or
    /// too large to compute it exactly (one breadth-first search per position).
    pub fn diameter(&self) -> Option<u64> {
        let n = u64::from(self.n);
        match (&self.links, &self.kind) {
            (None, TopologyKind::Ring) => Some(n / 2),
            (None, TopologyKind::Complete) => Some(u64::from(n > 1)),
            (None, TopologyKind::Line) => Some(n - 1),
            (None, _) => Some(n.min(3) - 1),
            (Some(_), TopologyKind::Grid { w, h }) => Some(u64::from(w + h) - 2),
            (Some(_), TopologyKind::Torus { w, h }) => Some(u64::from(w / 2 + h / 2)),
            (Some(links), _) => {
                if n * (n + self.edges()) > DIAMETER_WORK || !self.is_connected() {
                    return None;
                }
                let g = links.graph();
                (0..self.n as usize).into_par_iter().map(|s| bfs_eccentricity(g, s)).max()
            }
        }
    }
}

/// The eccentricity of `start` within its component, by petgraph's breadth-first walk. A node's distance is one
/// more than the least distance among its neighbours walked before it (its parent in the walk is one of them).
fn bfs_eccentricity(g: &UnGraph<(), ()>, start: usize) -> u64 {
    let mut depth = vec![u32::MAX; g.node_count()];
    let mut bfs = Bfs::new(g, NodeIndex::new(start));
    let mut far = 0;
    while let Some(u) = bfs.next(g) {
        let d = if u.index() == start {
            0
        } else {
            g.neighbors(u).map(|v| depth[v.index()]).min().map_or(0, |d| d.saturating_add(1))
        };
        depth[u.index()] = d;
        far = far.max(d);
    }
    u64::from(far)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EdgeFile, Radius};
    use rand::SeedableRng;

    fn build(kind: TopologyKind, n: usize) -> Result<Graph, TopologyError> {
        Graph::new(kind, n, &mut ChaCha8Rng::seed_from_u64(7))
    }

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
        assert!(g.is_connected(), "{:?} on {}", g.kind, g.n);
    }

    #[test]
    fn every_topology_is_symmetric_for_small_sizes() {
        for kind in
            [TopologyKind::Ring, TopologyKind::Complete, TopologyKind::Line, TopologyKind::Star, TopologyKind::Tree]
        {
            for n in 1..=9 {
                check_symmetric(&build(kind.clone(), n).unwrap());
            }
        }
    }

    #[test]
    fn a_complete_graph_carries_a_logical_ring() {
        let g = build(TopologyKind::Complete, 5).unwrap();
        for i in 0..5 {
            let ring = g.ring_ports(i).unwrap();
            assert_eq!(g.far_end(i, ring.next.0).node, (i + 1) % 5);
            assert_eq!(g.far_end(i, ring.prev.0).node, (i + 4) % 5);
            let order: Vec<u32> = g.ring_order(i).iter().map(|p| g.far_end(i, p.0).node).collect();
            assert_eq!(order, (1..5).map(|k| (i + k) % 5).collect::<Vec<_>>());
        }
        assert!(g.adjacent(0, 3) && !build(TopologyKind::Ring, 5).unwrap().adjacent(0, 3));
    }

    #[test]
    fn rings_of_one_and_two_have_distinct_links() {
        let one = build(TopologyKind::Ring, 1).unwrap();
        assert_eq!(one.far_end(0, 0), End { node: 0, port: 1 });
        let two = build(TopologyKind::Ring, 2).unwrap();
        assert_eq!(two.far_end(0, 0), End { node: 1, port: 1 });
        assert_eq!(two.far_end(0, 1), End { node: 1, port: 0 });
        assert_eq!(two.edges(), 2);
    }

    #[test]
    fn oversized_and_empty_graphs_are_refused() {
        let dense = build("geometric:1.5".parse().unwrap(), 1_000_000).unwrap_err().to_string();
        assert!(dense.contains("up to 8386560 expected links"), "{dense}");
        assert!(build("geometric:0.005".parse().unwrap(), 100_000).is_ok(), "sparse: a few links per node");
        assert!(build("geometric:0.0001".parse().unwrap(), 10).unwrap().len() == 10, "no grid of 16M cells");
        assert!(build(TopologyKind::Ring, 0).is_err());
        let err = build(TopologyKind::Complete, MAX_COMPLETE_NODES + 1).unwrap_err().to_string();
        assert!(err.contains("complete graphs of up to"), "{err}");
    }

    fn stored_kinds() -> Vec<(TopologyKind, usize)> {
        vec![
            (TopologyKind::Grid { w: 4, h: 3 }, 12),
            (TopologyKind::Grid { w: 1, h: 5 }, 5),
            (TopologyKind::Torus { w: 3, h: 4 }, 12),
            (TopologyKind::Torus { w: 5, h: 5 }, 25),
            (TopologyKind::RandomRegular { k: 3 }, 10),
            (TopologyKind::RandomRegular { k: 4 }, 9),
            (TopologyKind::RandomRegular { k: 2 }, 7),
            (TopologyKind::Chordal { k: 2 }, 9),
            (TopologyKind::Chordal { k: 4 }, 8),
            (TopologyKind::Tree, 30),
        ]
    }

    /// The diameter by brute force: one breadth-first search per node, written out.
    fn brute_diameter(g: &Graph) -> u64 {
        let n = g.len();
        let mut far = 0;
        for s in 0..n {
            let mut dist = vec![u64::MAX; n];
            dist[s] = 0;
            let mut queue = std::collections::VecDeque::from([s as u32]);
            while let Some(u) = queue.pop_front() {
                for p in 0..g.degree(u) {
                    let v = g.far_end(u, p).node as usize;
                    if dist[v] == u64::MAX {
                        dist[v] = dist[u as usize] + 1;
                        queue.push_back(v as u32);
                    }
                }
            }
            assert!(dist.iter().all(|&d| d != u64::MAX), "disconnected");
            assert_eq!(g.eccentricity(s as u32), *dist.iter().max().unwrap(), "eccentricity of {s}");
            far = far.max(*dist.iter().max().unwrap());
        }
        far
    }

    #[test]
    fn stored_topologies_are_symmetric_connected_and_measured() {
        for (kind, n) in stored_kinds() {
            for seed in 0..5 {
                let g = Graph::new(kind.clone(), n, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
                check_symmetric(&g);
                assert_eq!(g.diameter(), Some(brute_diameter(&g)), "{kind} on {n}");
            }
        }
        for (kind, n) in
            [(TopologyKind::Ring, 9), (TopologyKind::Line, 6), (TopologyKind::Star, 5), (TopologyKind::Complete, 4)]
        {
            let g = build(kind.clone(), n).unwrap();
            assert_eq!(g.diameter(), Some(brute_diameter(&g)), "{kind} on {n}");
        }
    }

    #[test]
    fn families_have_their_shapes() {
        let edges = |kind: TopologyKind, n| build(kind, n).unwrap().edges();
        assert_eq!(edges(TopologyKind::Grid { w: 4, h: 3 }, 12), 3 * 3 + 4 * 2);
        assert_eq!(edges(TopologyKind::Torus { w: 4, h: 3 }, 12), 24);
        assert_eq!(edges(TopologyKind::Chordal { k: 3 }, 10), 20);
        assert_eq!(edges(TopologyKind::Chordal { k: 4 }, 8), 12, "chords of length n/2 are shared");
        assert_eq!(edges(TopologyKind::Tree, 50), 49);
        let g = build(TopologyKind::RandomRegular { k: 5 }, 40).unwrap();
        assert!((0..40).all(|i| g.degree(i) == 5));
        assert!(g.is_connected());
    }

    #[test]
    fn random_topologies_follow_the_seed() {
        let draw = |kind: TopologyKind, seed| {
            let g = Graph::new(kind, 60, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
            (0..60)
                .flat_map(|i| (0..g.degree(i)).map(move |p| (i, p)))
                .map(|(i, p)| g.far_end(i, p))
                .collect::<Vec<_>>()
        };
        for kind in
            [TopologyKind::RandomRegular { k: 3 }, TopologyKind::Tree, TopologyKind::Geometric { r: Radius(0.3) }]
        {
            assert_eq!(draw(kind.clone(), 3), draw(kind.clone(), 3), "{kind}");
            assert_ne!(draw(kind.clone(), 3), draw(kind.clone(), 4), "{kind}");
        }
    }

    #[test]
    fn geometric_graphs_link_exactly_the_close_pairs_and_report_their_parts() {
        let g = Graph::new(TopologyKind::Geometric { r: Radius(0.2) }, 80, &mut ChaCha8Rng::seed_from_u64(9)).unwrap();
        let p = g.positions().unwrap();
        for a in 0..80u32 {
            for b in 0..80u32 {
                let close =
                    a != b && (p[a as usize][0] - p[b as usize][0]).hypot(p[a as usize][1] - p[b as usize][1]) <= 0.2;
                assert_eq!(g.adjacent(a, b), close, "{a} {b}");
            }
        }
        check_symmetric_links(&g);
        let sparse =
            Graph::new(TopologyKind::Geometric { r: Radius(0.01) }, 50, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert!(sparse.components() > 1);
        assert_eq!(sparse.diameter(), None);
    }

    fn check_symmetric_links(g: &Graph) {
        for i in 0..g.n {
            for p in 0..g.degree(i) {
                let end = g.far_end(i, p);
                assert_eq!(g.far_end(end.node, end.port), End { node: i, port: p });
            }
        }
    }

    #[test]
    fn impossible_shapes_are_refused_with_a_reason() {
        let err = |kind: TopologyKind, n| build(kind, n).unwrap_err().to_string();
        assert!(err(TopologyKind::Grid { w: 4, h: 3 }, 10).contains("has 12 nodes, but --nodes is 10"));
        assert!(err(TopologyKind::RandomRegular { k: 3 }, 7).contains("n·k even"));
        assert!(err(TopologyKind::RandomRegular { k: 8 }, 8).contains("k < n"));
        assert!(err(TopologyKind::Chordal { k: 5 }, 8).contains("at most n/2 = 4"));
    }

    #[test]
    fn edge_files_build_their_graph() {
        let file =
            EdgeFile::parse(std::path::Path::new("t.edges"), "# a square\n0 1\n1 2\n\n2 3 # last\n3 0\n").unwrap();
        let g = build(TopologyKind::File(file), 4).unwrap();
        assert_eq!((g.edges(), g.diameter()), (4, Some(2)));
    }
}
