//! Where each node of a topology is drawn: a circle for rings, complete graphs and the other symmetric families,
//! rows and columns for grids and tori, the drawn positions for geometric graphs, a line for lines, the centre
//! and a circle for stars, and levels from the first node for trees.

use std::collections::{BTreeSet, VecDeque};
use std::f64::consts::PI;

use elect_scenario::{Graph, TopologyKind};
use serde::Serialize;

/// Links beyond this many are not drawn (a complete graph of a few hundred nodes is a grey disc).
pub const MAX_DRAWN_LINKS: usize = 5_000;

/// A drawing of a topology in the unit square, nodes by position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Layout {
    /// The topology, as the command line writes it.
    pub topology: String,
    /// Where each position sits, in `[0, 1]²` (y grows downwards).
    pub xy: Vec<[f64; 2]>,
    /// The links, as pairs of positions (`a < b`), unless there are more than [`MAX_DRAWN_LINKS`].
    pub links: Vec<[u32; 2]>,
    /// Whether links were left out.
    pub links_omitted: bool,
}

impl Layout {
    /// The layout of `graph`.
    pub fn of(graph: &Graph) -> Self {
        let n = graph.len();
        let (links, links_omitted) = links(graph);
        let xy = match graph.kind() {
            &TopologyKind::Grid { w, .. } | &TopologyKind::Torus { w, .. } => grid(n, w as usize),
            TopologyKind::Geometric { .. } => graph.positions().map_or_else(|| circle(n), <[_]>::to_vec),
            TopologyKind::Line => (0..n).map(|i| [spread(i, n), 0.5]).collect(),
            TopologyKind::Star => {
                let mut xy = vec![[0.5, 0.5]];
                xy.extend(circle(n - 1));
                xy
            }
            TopologyKind::Tree if !links_omitted => levels(n, &links),
            _ => circle(n),
        };
        Self { topology: graph.kind().to_string(), xy, links, links_omitted }
    }
}

/// `i` of `n` evenly spread over `[0, 1]`, centred when alone.
fn spread(i: usize, n: usize) -> f64 {
    if n <= 1 { 0.5 } else { i as f64 / (n - 1) as f64 }
}

/// Positions on a circle, the first at the top, going clockwise.
fn circle(n: usize) -> Vec<[f64; 2]> {
    (0..n)
        .map(|i| {
            let a = 2.0 * PI * i as f64 / n.max(1) as f64 - PI / 2.0;
            if n == 1 { [0.5, 0.5] } else { [0.5 + 0.5 * a.cos(), 0.5 + 0.5 * a.sin()] }
        })
        .collect()
}

/// Row-major positions on a grid `w` wide.
fn grid(n: usize, w: usize) -> Vec<[f64; 2]> {
    let w = w.max(1);
    let h = n.div_ceil(w);
    let side = (w.max(h) - 1).max(1) as f64;
    let (dx, dy) = ((side - (w - 1) as f64) / 2.0, (side - (h.max(1) - 1) as f64) / 2.0);
    (0..n).map(|i| [((i % w) as f64 + dx) / side, ((i / w) as f64 + dy) / side]).collect()
}

/// A tree by levels from position 0: depth downwards, breadth-first order across.
fn levels(n: usize, links: &[[u32; 2]]) -> Vec<[f64; 2]> {
    let mut adjacent = vec![Vec::new(); n];
    for &[a, b] in links {
        adjacent[a as usize].push(b as usize);
        adjacent[b as usize].push(a as usize);
    }
    let mut depth = vec![usize::MAX; n];
    let mut by_level: Vec<Vec<usize>> = Vec::new();
    let mut queue = VecDeque::from([0]);
    depth[0] = 0;
    while let Some(u) = queue.pop_front() {
        if by_level.len() <= depth[u] {
            by_level.push(Vec::new());
        }
        by_level[depth[u]].push(u);
        for &v in &adjacent[u] {
            if depth[v] == usize::MAX {
                depth[v] = depth[u] + 1;
                queue.push_back(v);
            }
        }
    }
    let mut xy = circle(n);
    let rows = by_level.len();
    for (level, nodes) in by_level.iter().enumerate() {
        for (k, &u) in nodes.iter().enumerate() {
            xy[u] = [(k as f64 + 0.5) / nodes.len() as f64, spread(level, rows)];
        }
    }
    xy
}

/// The links of `graph` as sorted pairs of positions; for a mobile network, those in range at the start.
fn links(graph: &Graph) -> (Vec<[u32; 2]>, bool) {
    let n = graph.len() as u32;
    if graph.edges() > MAX_DRAWN_LINKS as u64 {
        return (Vec::new(), true);
    }
    if graph.is_mobile() {
        let (Some(xy), TopologyKind::Geometric { r }) = (graph.positions(), graph.kind()) else {
            return (Vec::new(), true);
        };
        let r2 = r.0 * r.0;
        let mut links = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let (p, q) = (xy[a as usize], xy[b as usize]);
                if (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) <= r2 {
                    links.push([a, b]);
                    if links.len() > MAX_DRAWN_LINKS {
                        return (Vec::new(), true);
                    }
                }
            }
        }
        return (links, false);
    }
    let mut set = BTreeSet::new();
    for a in 0..n {
        for port in 0..graph.degree(a) {
            let b = graph.far_end(a, port).node;
            if a != b {
                set.insert([a.min(b), a.max(b)]);
            }
        }
    }
    (set.into_iter().collect(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;

    fn graph(kind: &str, n: usize) -> Graph {
        Graph::new(kind.parse().unwrap(), n, &mut ChaCha8Rng::seed_from_u64(1)).unwrap()
    }

    #[test]
    fn families_are_placed_in_the_unit_square() {
        for (kind, n, links) in
            [("ring", 8, 8), ("grid:4x3", 12, 17), ("complete", 5, 10), ("star", 6, 5), ("line", 4, 3)]
        {
            let layout = Layout::of(&graph(kind, n));
            assert_eq!((layout.xy.len(), layout.links.len()), (n, links), "{kind}");
            assert!(layout.xy.iter().flatten().all(|&c| (-1e-9..=1.0 + 1e-9).contains(&c)), "{kind}");
        }
        let g = Layout::of(&graph("grid:4x3", 12));
        assert_eq!(g.xy[5], [1.0 / 3.0, 1.0 / 3.0 + 1.0 / 6.0]);
        let mobile = graph("geometric:0.3", 30);
        let fixed = Layout::of(&mobile);
        let moving = Layout::of(&mobile.into_mobile().unwrap());
        assert_eq!(moving, fixed, "a mobile network is drawn where it starts, with the links in range then");
        let tree = Layout::of(&graph("tree", 20));
        assert_eq!(tree.xy[0][1], 0.0, "the first node is the root, at the top");
    }
}
