//! Topologies: who is linked to whom, port by port.
//!
//! The regular topologies (ring, complete, line, star) are computed, not stored: the far end of a port is
//! arithmetic on positions, so a ring of a million processes costs no memory for its links. The others (grids,
//! tori, random regular graphs, chordal rings, trees, random geometric graphs, edge-list files) are built once as
//! a compressed adjacency list; the random ones draw from the run's seed. Connectivity, eccentricities and the
//! diameter come from petgraph's traversals.
//!
//! A [`TopologyKind`] is a topology as `--topology` names it (it parses from that syntax and prints back to it); a
//! [`Graph`] is one built for a run.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use elect_core::{Port, RingPorts, Shape};
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::Bfs;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The largest complete graph simulated: its directed links must stay addressable in memory.
pub const MAX_COMPLETE_NODES: usize = 4096;

/// The largest number of processes of any run: a run costs a few hundred bytes per process.
pub const MAX_NODES: usize = 1 << 25;

/// The largest stored topology (grids, random graphs, files): its links are kept in memory.
pub(crate) const MAX_STORED_NODES: usize = 1 << 22;

/// The most links a geometric graph may be expected to have: as many as the largest complete graph's, about
/// 2^23. Its links grow with R²n² (each of the n(n-1)/2 pairs is linked with probability at most πR²), so the
/// cap is on that expectation, checked before a point is drawn.
pub const MAX_GEOMETRIC_LINKS: u64 = (MAX_COMPLETE_NODES * (MAX_COMPLETE_NODES - 1) / 2) as u64;

/// The expected number of links of a geometric graph of `n` nodes and range `r`, bounded above by `πr²` per pair.
fn expected_geometric_links(n: usize, r: f64) -> f64 {
    let pairs = n as f64 * (n as f64 - 1.0) / 2.0;
    pairs * (std::f64::consts::PI * r * r).min(1.0)
}

/// Diameters of stored topologies are computed (one breadth-first search per node) up to this many
/// node-link visits, a few seconds on two cores; larger graphs report none (an algorithm that needs the diameter
/// is then told it with `--param diameter=D`).
const DIAMETER_WORK: u64 = 1 << 25;

/// How processes are linked.
///
/// The four regular families are computed arithmetically (a ring of a million costs no link storage); the others
/// are built as an adjacency list by [`Graph::new`], the random ones from the run's seed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// A ring: position `i` links to `i + 1` (its `next`) and `i − 1` (its `prev`).
    Ring,
    /// Every pair linked.
    Complete,
    /// A path `0 – 1 – … – n−1`.
    Line,
    /// Position 0 linked to every other.
    Star,
    /// A `w × h` grid: position `y·w + x` links to its horizontal and vertical neighbours.
    Grid {
        /// Columns.
        w: u32,
        /// Rows.
        h: u32,
    },
    /// A `w × h` grid whose rows and columns wrap around.
    Torus {
        /// Columns (at least 3).
        w: u32,
        /// Rows (at least 3).
        h: u32,
    },
    /// A connected random `k`-regular graph, drawn from the seed.
    RandomRegular {
        /// The degree.
        k: u32,
    },
    /// A chordal ring: the ring plus a chord from every position `i` to `i + k` (a 4-regular circulant graph,
    /// 3-regular when `k = n/2`).
    Chordal {
        /// The chord length, `2 ≤ k ≤ n/2`.
        k: u32,
    },
    /// A uniformly random labelled tree (a random Prüfer sequence), drawn from the seed.
    Tree,
    /// A random geometric graph: positions uniform in the unit square, linked when at most `r` apart. It may be
    /// disconnected; the report says so.
    Geometric {
        /// The radio range.
        r: Radius,
    },
    /// An edge list read from a file.
    File(EdgeFile),
}

/// A radio range in the unit square, compared by value.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Radius(pub f64);

impl Eq for Radius {}
impl std::hash::Hash for Radius {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// A topology file: one link per line, `U V`, vertices numbered from 0 (the position `--ids` gives an id to);
/// `#` starts a comment. The number of vertices is the largest one plus one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeFile {
    /// Where it was read from.
    pub path: std::path::PathBuf,
    /// Vertices.
    pub nodes: usize,
    /// Links, each once, as read.
    pub links: std::sync::Arc<Vec<(u32, u32)>>,
}

impl EdgeFile {
    /// The largest topology file read, in bytes: a file of a stored topology's largest size
    /// (`MAX_STORED_NODES` nodes of degree 4) fits, with room for comments.
    pub const MAX_BYTES: u64 = 256 << 20;

    /// Reads and checks the file at `path`: a regular file (not a device or a pipe) of at most
    /// [`EdgeFile::MAX_BYTES`], read with that bound whatever its size claims.
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        use std::io::Read;
        let bad = |problem: String| format!("the topology file {}: {problem}", path.display());
        let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        if !meta.is_file() {
            return Err(bad("not a regular file".into()));
        }
        let too_big = || bad(format!("larger than the limit of {} MiB", Self::MAX_BYTES >> 20));
        if meta.len() > Self::MAX_BYTES {
            return Err(too_big());
        }
        let mut raw = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(Self::MAX_BYTES + 1).read_to_end(&mut raw))
            .map_err(|e| bad(format!("cannot read it: {e}")))?;
        if raw.len() as u64 > Self::MAX_BYTES {
            return Err(too_big());
        }
        let text = String::from_utf8(raw).map_err(|_| bad("not UTF-8 text".into()))?;
        Self::parse(path, &text)
    }

    /// Parses `text`, read from `path`.
    pub fn parse(path: &std::path::Path, text: &str) -> Result<Self, String> {
        let mut links = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut nodes = 0usize;
        for (number, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", path.display(), number + 1);
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let [u, v] = words[..] else {
                return Err(format!("{}: expected a link 'U V', found '{line}'", at(), line = crate::shorten(line)));
            };
            let vertex = |w: &str| {
                w.parse::<u32>().ok().filter(|&x| (x as usize) < MAX_NODES).ok_or_else(|| {
                    format!("{}: '{w}' is not a vertex number (0, 1, 2, ...)", at(), w = crate::shorten(w))
                })
            };
            let (u, v) = (vertex(u)?, vertex(v)?);
            if u == v {
                return Err(format!("{}: a link from {u} to itself", at()));
            }
            if !seen.insert((u.min(v), u.max(v))) {
                return Err(format!("{}: the link {u} {v} is listed twice", at()));
            }
            nodes = nodes.max(u.max(v) as usize + 1);
            links.push((u, v));
        }
        if links.is_empty() {
            return Err(format!("{}: no links", path.display()));
        }
        Ok(Self { path: path.to_owned(), nodes, links: std::sync::Arc::new(links) })
    }
}

impl TopologyKind {
    /// The regular families, whose names take no parameter.
    pub const PLAIN: [Self; 5] = [Self::Ring, Self::Complete, Self::Line, Self::Star, Self::Tree];

    /// The syntax of every topology, for help texts and errors.
    pub const SYNTAX: &'static str =
        "ring, complete, line, star, grid:WxH, torus:WxH, random-regular:K, chordal:K, tree, geometric:R, file:PATH";

    /// Its command-line name without parameters.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Complete => "complete",
            Self::Line => "line",
            Self::Star => "star",
            Self::Grid { .. } => "grid",
            Self::Torus { .. } => "torus",
            Self::RandomRegular { .. } => "random-regular",
            Self::Chordal { .. } => "chordal",
            Self::Tree => "tree",
            Self::Geometric { .. } => "geometric",
            Self::File(_) => "file",
        }
    }

    /// The number of nodes the topology itself fixes (grids and files), if any.
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            Self::Grid { w, h } | Self::Torus { w, h } => Some(*w as usize * *h as usize),
            Self::File(file) => Some(file.nodes),
            _ => None,
        }
    }

    /// Whether the topology is one of the computed families (ring, complete, line, star).
    pub fn is_computed(&self) -> bool {
        matches!(self, Self::Ring | Self::Complete | Self::Line | Self::Star)
    }
}

fn parse_dims(s: &str, what: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{what}:WxH needs two positive sizes like {what}:4x3, not '{s}'", s = crate::shorten(s));
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if w == 0 || h == 0 {
        return Err(bad());
    }
    Ok((w, h))
}

impl FromStr for TopologyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(plain) = Self::PLAIN.into_iter().find(|k| k.name() == s) {
            return Ok(plain);
        }
        let (name, arg) = s.split_once(':').unwrap_or((s, ""));
        let count = |what: &str| {
            arg.trim()
                .parse::<u32>()
                .map_err(|_| format!("{what}:K needs a whole number K, not '{arg}'", arg = crate::shorten(arg)))
        };
        match name {
            "grid" => parse_dims(arg, "grid").map(|(w, h)| Self::Grid { w, h }),
            "torus" => {
                let (w, h) = parse_dims(arg, "torus")?;
                if w < 3 || h < 3 {
                    return Err(format!("a torus needs at least 3 columns and 3 rows ({w}x{h} given)"));
                }
                Ok(Self::Torus { w, h })
            }
            "random-regular" => {
                let k = count("random-regular")?;
                if k == 0 {
                    return Err("random-regular:K needs a degree K of at least 1".to_owned());
                }
                Ok(Self::RandomRegular { k })
            }
            "chordal" => {
                let k = count("chordal")?;
                if k < 2 {
                    return Err("chordal:K needs a chord length K of at least 2".to_owned());
                }
                Ok(Self::Chordal { k })
            }
            "geometric" => {
                let r: f64 = arg.trim().parse().map_err(|_| {
                    format!("geometric:R needs a radio range R, not '{arg}'", arg = crate::shorten(arg))
                })?;
                if !(r > 0.0 && r <= 1.5) {
                    return Err(format!("geometric:R needs a range 0 < R <= 1.5 in the unit square, not {arg}"));
                }
                Ok(Self::Geometric { r: Radius(r) })
            }
            "file" if !arg.trim().is_empty() => EdgeFile::read(std::path::Path::new(arg.trim())).map(Self::File),
            "file" => Err("file:PATH needs the path of an edge-list file".to_owned()),
            _ => Err(format!("unknown topology '{s}' (known: {})", Self::SYNTAX, s = crate::shorten(s))),
        }
    }
}

impl fmt::Display for TopologyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Grid { w, h } | Self::Torus { w, h } => write!(f, "{}:{w}x{h}", self.name()),
            Self::RandomRegular { k } | Self::Chordal { k } => write!(f, "{}:{k}", self.name()),
            Self::Geometric { r } => write!(f, "geometric:{}", r.0),
            Self::File(file) => write!(f, "file:{}", file.path.display()),
            _ => f.write_str(self.name()),
        }
    }
}

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
    pub fn new(kind: TopologyKind, n: usize, rng: &mut ChaCha8Rng) -> Result<Self, String> {
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
        if let Some(size) = kind.fixed_size()
            && size != n
        {
            return Err(format!("a {kind} topology has {size} nodes, but --nodes is {n}"));
        }
        if let TopologyKind::Geometric { r } = kind
            && expected_geometric_links(n, r.0) > MAX_GEOMETRIC_LINKS as f64
        {
            return Err(format!(
                "a geometric:{} graph on {n} nodes would have about {:.0} links; elect builds geometric graphs of up \
                 to {MAX_GEOMETRIC_LINKS} expected links (n(n-1)/2 pairs, each linked with probability up to πR²)",
                r.0,
                expected_geometric_links(n, r.0),
            ));
        }
        if !kind.is_computed() && n > MAX_STORED_NODES {
            return Err(format!(
                "a {kind} topology is stored link by link; elect builds them up to {MAX_STORED_NODES} nodes"
            ));
        }
        let mut positions = None;
        let edges = match &kind {
            TopologyKind::Ring | TopologyKind::Complete | TopologyKind::Line | TopologyKind::Star => None,
            &TopologyKind::Grid { w, h } => Some(grid(w, h, false)),
            &TopologyKind::Torus { w, h } => Some(grid(w, h, true)),
            &TopologyKind::RandomRegular { k } => Some(random_regular(n, k, rng)?),
            &TopologyKind::Chordal { k } => Some(chordal(n, k)?),
            TopologyKind::Tree => Some(random_tree(n, rng)),
            TopologyKind::Geometric { r } => {
                let points: Vec<[f64; 2]> = (0..n).map(|_| [rng.random::<f64>(), rng.random::<f64>()]).collect();
                let edges = geometric(&points, r.0);
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
    pub fn into_mobile(self) -> Result<Self, String> {
        if !matches!(self.kind, TopologyKind::Geometric { .. }) {
            return Err(format!("mobility moves the nodes of a geometric:R topology, not of a {}", self.kind));
        }
        if self.len() > MAX_COMPLETE_NODES {
            return Err(format!(
                "mobile networks give every node a port to every other; at most {MAX_COMPLETE_NODES} nodes"
            ));
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

/// The links of a `w × h` grid, wrapping around on a torus.
fn grid(w: u32, h: u32, wrap: bool) -> Vec<(u32, u32)> {
    let at = |x: u32, y: u32| y * w + x;
    let mut edges = Vec::new();
    for y in 0..h {
        for x in 0..w {
            if x + 1 < w {
                edges.push((at(x, y), at(x + 1, y)));
            } else if wrap {
                edges.push((at(x, y), at(0, y)));
            }
            if y + 1 < h {
                edges.push((at(x, y), at(x, y + 1)));
            } else if wrap {
                edges.push((at(x, y), at(x, 0)));
            }
        }
    }
    edges
}

/// The ring `0 – 1 – … – n−1 – 0` plus a chord from every `i` to `i + k`.
fn chordal(n: usize, k: u32) -> Result<Vec<(u32, u32)>, String> {
    let n32 = n as u32;
    if n < 5 || k as usize > n / 2 {
        return Err(format!("chordal:{k} needs at least 5 nodes and a chord length at most n/2 = {}", n / 2));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut edges = Vec::with_capacity(2 * n);
    for step in [1, k] {
        for i in 0..n32 {
            let j = (i + step) % n32;
            if seen.insert((i.min(j), i.max(j))) {
                edges.push((i, j));
            }
        }
    }
    Ok(edges)
}

/// A uniformly random labelled tree on `n` positions, decoded from a random Prüfer sequence.
fn random_tree(n: usize, rng: &mut ChaCha8Rng) -> Vec<(u32, u32)> {
    if n <= 2 {
        return (1..n as u32).map(|i| (0, i)).collect();
    }
    let code: Vec<u32> = (0..n - 2).map(|_| rng.random_range(0..n as u32)).collect();
    let mut degree = vec![1u32; n];
    for &c in &code {
        degree[c as usize] += 1;
    }
    let mut leaves: std::collections::BinaryHeap<std::cmp::Reverse<u32>> =
        (0..n as u32).filter(|&i| degree[i as usize] == 1).map(std::cmp::Reverse).collect();
    let mut edges = Vec::with_capacity(n - 1);
    for &c in &code {
        let std::cmp::Reverse(leaf) = leaves.pop().expect("a Prüfer sequence always leaves a leaf");
        edges.push((leaf, c));
        degree[c as usize] -= 1;
        if degree[c as usize] == 1 {
            leaves.push(std::cmp::Reverse(c));
        }
    }
    let std::cmp::Reverse(a) = leaves.pop().expect("two leaves remain");
    let std::cmp::Reverse(b) = leaves.pop().expect("two leaves remain");
    edges.push((a, b));
    edges
}

/// A connected random `k`-regular graph: points paired at random, a pair that would make a loop or a double
/// link drawn again (Steger and Wormald's method), the whole draw restarted when it gets stuck or comes out
/// disconnected.
fn random_regular(n: usize, k: u32, rng: &mut ChaCha8Rng) -> Result<Vec<(u32, u32)>, String> {
    let k_us = k as usize;
    if k_us >= n || (n * k_us) % 2 == 1 || (k == 1 && n != 2) {
        return Err(format!(
            "no connected {k}-regular graph on {n} nodes: it needs k < n, n·k even, and k ≥ 2 unless n = 2"
        ));
    }
    if k == 2 {
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        return Ok((0..n).map(|i| (order[i], order[(i + 1) % n])).collect());
    }
    // Pairing points almost never draws a simple graph when k is more than half of n: a dense graph is drawn as
    // the complement of a sparse (n − 1 − k)-regular one, which is connected (two processes that are not
    // neighbours have more than n − 2 neighbours between them, so they share one).
    if 2 * k_us > n && n > DENSE_FROM {
        let sparse = n - 1 - k_us;
        let mut budget = (PAIRING_BUDGET_PER_POINT * (n * sparse.max(1)) as u64).max(PAIRING_BUDGET_LEAST);
        let missing = loop {
            if sparse == 0 {
                break Vec::new();
            }
            if let Some(edges) = pair_points(n, sparse, rng, &mut budget) {
                break edges;
            }
            if budget == 0 {
                return Err(format!("could not draw a {k}-regular graph on {n} nodes"));
            }
        };
        let missing: std::collections::HashSet<(u32, u32)> =
            missing.into_iter().map(|(u, v)| (u.min(v), u.max(v))).collect();
        let all = (0..n as u32).flat_map(|u| (u + 1..n as u32).map(move |v| (u, v)));
        return Ok(all.filter(|e| !missing.contains(e)).collect());
    }
    const ATTEMPTS: usize = 1000;
    // All attempts together make at most so many tries per point: a degree that pairing cannot draw ends in
    // seconds, not hours.
    let mut budget = (PAIRING_BUDGET_PER_POINT * (n * k_us) as u64).max(PAIRING_BUDGET_LEAST);
    for _ in 0..ATTEMPTS {
        if let Some(edges) = pair_points(n, k_us, rng, &mut budget)
            && petgraph::algo::connected_components(Links::from_edges(n, &edges).graph()) == 1
        {
            return Ok(edges);
        }
        if budget == 0 {
            break;
        }
    }
    Err(format!("could not draw a connected {k}-regular graph on {n} nodes in {ATTEMPTS} attempts"))
}

/// Random regular graphs of more processes than this, and of a degree above half of them, are drawn as the
/// complement of a sparse one (smaller ones are drawn by pairing, as they always were).
const DENSE_FROM: usize = 64;

/// The most tries of pairing two points, over all the attempts at one random regular graph, per point, and at
/// least [`PAIRING_BUDGET_LEAST`] (a small graph gets all its attempts: tens of milliseconds).
const PAIRING_BUDGET_PER_POINT: u64 = 20;

/// The tries every random regular graph gets, however small.
const PAIRING_BUDGET_LEAST: u64 = 1 << 22;

/// One attempt at pairing `n·k` points into a simple graph, taking tries from `budget`.
fn pair_points(n: usize, k: usize, rng: &mut impl Rng, budget: &mut u64) -> Option<Vec<(u32, u32)>> {
    let mut points: Vec<u32> = (0..n as u32).flat_map(|i| std::iter::repeat_n(i, k)).collect();
    let mut linked = std::collections::HashSet::with_capacity(n * k / 2);
    let mut edges = Vec::with_capacity(n * k / 2);
    while !points.is_empty() {
        let mut tries = 0;
        loop {
            *budget = budget.checked_sub(1)?;
            let a = rng.random_range(0..points.len());
            let b = rng.random_range(0..points.len());
            let (u, v) = (points[a], points[b]);
            if a != b && u != v && !linked.contains(&(u.min(v), u.max(v))) {
                linked.insert((u.min(v), u.max(v)));
                edges.push((u, v));
                let (hi, lo) = (a.max(b), a.min(b));
                points.swap_remove(hi);
                points.swap_remove(lo);
                break;
            }
            tries += 1;
            if tries > 100 * k {
                return None;
            }
        }
    }
    Some(edges)
}

/// The links of points at most `r` apart, found through a grid of `r × r` cells.
fn geometric(points: &[[f64; 2]], r: f64) -> Vec<(u32, u32)> {
    // Cells of side at least r, and no more cells than points: the grid costs no more memory than the points.
    let most = (points.len() as f64).sqrt().ceil() as usize;
    let cells = ((1.0 / r).floor() as usize).clamp(1, most.clamp(1, 4096));
    let cell = |p: f64| ((p * cells as f64) as usize).min(cells - 1);
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); cells * cells];
    for (i, p) in points.iter().enumerate() {
        buckets[cell(p[1]) * cells + cell(p[0])].push(i as u32);
    }
    let mut edges = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let (cx, cy) = (cell(p[0]), cell(p[1]));
        for y in cy.saturating_sub(1)..=(cy + 1).min(cells - 1) {
            for x in cx.saturating_sub(1)..=(cx + 1).min(cells - 1) {
                for &j in &buckets[y * cells + x] {
                    let q = points[j as usize];
                    if (i as u32) < j && (p[0] - q[0]).hypot(p[1] - q[1]) <= r {
                        edges.push((i as u32, j));
                    }
                }
            }
        }
    }
    edges.sort_unstable();
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn build(kind: TopologyKind, n: usize) -> Result<Graph, String> {
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
        let dense = build("geometric:1.5".parse().unwrap(), 1_000_000).unwrap_err();
        assert!(dense.contains("up to 8386560 expected links"), "{dense}");
        assert!(build("geometric:0.005".parse().unwrap(), 100_000).is_ok(), "sparse: a few links per node");
        assert!(build("geometric:0.0001".parse().unwrap(), 10).unwrap().len() == 10, "no grid of 16M cells");
        let zero = EdgeFile::read(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(zero.contains("not a regular file"), "{zero}");
        assert!(build(TopologyKind::Ring, 0).is_err());
        let err = build(TopologyKind::Complete, MAX_COMPLETE_NODES + 1).unwrap_err();
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
        let err = |kind: TopologyKind, n| build(kind, n).unwrap_err();
        assert!(err(TopologyKind::Grid { w: 4, h: 3 }, 10).contains("has 12 nodes, but --nodes is 10"));
        assert!(err(TopologyKind::RandomRegular { k: 3 }, 7).contains("n·k even"));
        assert!(err(TopologyKind::RandomRegular { k: 8 }, 8).contains("k < n"));
        assert!(err(TopologyKind::Chordal { k: 5 }, 8).contains("at most n/2 = 4"));
    }

    #[test]
    fn edge_files_parse_and_name_the_line_of_a_problem() {
        let path = std::path::Path::new("t.edges");
        let file = EdgeFile::parse(path, "# a square\n0 1\n1 2\n\n2 3 # last\n3 0\n").unwrap();
        assert_eq!(file.nodes, 4);
        let g = build(TopologyKind::File(file), 4).unwrap();
        assert_eq!((g.edges(), g.diameter()), (4, Some(2)));
        let bad = |text: &str| EdgeFile::parse(path, text).unwrap_err();
        assert!(bad("0 1\n1 x\n").starts_with("t.edges:2: 'x' is not a vertex number"), "{}", bad("0 1\n1 x\n"));
        assert!(bad("0 1 2\n").contains("t.edges:1: expected a link 'U V'"));
        assert!(bad("0 1\n1 0\n").contains("t.edges:2: the link 1 0 is listed twice"));
        assert!(bad("3 3\n").contains("to itself"));
        assert!(bad("# nothing\n").contains("no links"));
    }

    #[test]
    fn every_kind_prints_back_to_what_it_parses_from() {
        for s in ["ring", "tree", "grid:4x3", "torus:5x5", "random-regular:3", "chordal:2", "geometric:0.25"] {
            assert_eq!(s.parse::<TopologyKind>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn malformed_kinds_name_the_problem() {
        assert!("hexagon".parse::<TopologyKind>().unwrap_err().contains("unknown topology 'hexagon'"));
        assert!("grid:4".parse::<TopologyKind>().unwrap_err().contains("grid:WxH needs two positive sizes"));
        assert!("torus:2x5".parse::<TopologyKind>().unwrap_err().contains("at least 3 columns"));
        assert!("chordal:1".parse::<TopologyKind>().unwrap_err().contains("at least 2"));
        assert!("geometric:2".parse::<TopologyKind>().unwrap_err().contains("0 < R <= 1.5"));
        assert!(
            "file:/nonexistent/x"
                .parse::<TopologyKind>()
                .unwrap_err()
                .contains("the topology file /nonexistent/x: cannot read it")
        );
    }
}
