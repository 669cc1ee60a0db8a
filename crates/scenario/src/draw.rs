//! The links of the stored topologies: grids and tori, chordal rings, and the random ones (trees, regular graphs,
//! geometric graphs), drawn from the run's topology stream.

use petgraph::graph::{NodeIndex, UnGraph};
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

use crate::topology::TopologyError;

/// The links of a `w × h` grid, wrapping around on a torus.
pub(crate) fn grid(w: u32, h: u32, wrap: bool) -> Vec<(u32, u32)> {
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
pub(crate) fn chordal(n: usize, k: u32) -> Result<Vec<(u32, u32)>, TopologyError> {
    let n32 = n as u32;
    if n < 5 || k as usize > n / 2 {
        return Err(TopologyError::Chordal { k, half: n / 2 });
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
pub(crate) fn random_tree(n: usize, rng: &mut ChaCha8Rng) -> Vec<(u32, u32)> {
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
pub(crate) fn random_regular(n: usize, k: u32, rng: &mut ChaCha8Rng) -> Result<Vec<(u32, u32)>, TopologyError> {
    let k_us = k as usize;
    if k_us >= n || (n * k_us) % 2 == 1 || (k == 1 && n != 2) {
        return Err(TopologyError::NoRegular { k, n });
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
                return Err(TopologyError::RegularDraw { k, n });
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
            && connected(n, &edges)
        {
            return Ok(edges);
        }
        if budget == 0 {
            break;
        }
    }
    Err(TopologyError::RegularAttempts { k, n, attempts: ATTEMPTS })
}

/// Whether `edges` join all of `n` positions.
fn connected(n: usize, edges: &[(u32, u32)]) -> bool {
    let mut g = UnGraph::<(), ()>::with_capacity(n, edges.len());
    for _ in 0..n {
        g.add_node(());
    }
    for &(a, b) in edges {
        g.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), ());
    }
    petgraph::algo::connected_components(&g) == 1
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
pub(crate) fn geometric(points: &[[f64; 2]], r: f64) -> Vec<(u32, u32)> {
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
