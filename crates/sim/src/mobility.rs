//! Mobility: nodes of a geometric graph move by the random-waypoint model, and links follow the radio range.
//!
//! Each node heads at a constant speed for a destination drawn uniformly in the unit square, waits there for the
//! pause time, and draws the next one. Every step (one time unit) the simulator moves the nodes, works out which
//! pairs are in range, and tells both ends of every link that came up or went down; a message is delivered only
//! if its link is still up when it arrives. All draws come from the run's mobility stream.
//!
//! While nodes move, the simulator measures the paper's metric: for each node, the fraction of the time it
//! followed the strongest live node of its connected component.

use std::collections::BTreeMap;

use elect_core::{NodeId, Port, Process, Rank};
use elect_scenario::{End, Graph, MobilitySpec, TICKS_PER_UNIT, TopologyKind};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::report::MobilityReport;

/// The interval between two moves, in ticks.
const STEP: u64 = TICKS_PER_UNIT;

/// The moving nodes and the links between them.
struct Mobility {
    range: f64,
    spec: MobilitySpec,
    positions: Vec<[f64; 2]>,
    targets: Vec<[f64; 2]>,
    /// When a pausing node leaves again.
    resume: Vec<u64>,
    /// `in_range[a * n + b]`.
    in_range: Vec<bool>,
    n: usize,
    rng: ChaCha8Rng,
    /// Links that came up or went down so far.
    changes: u64,
}

impl Mobility {
    /// Nodes at `positions`, in range when at most `range` apart.
    fn new(positions: &[[f64; 2]], range: f64, spec: MobilitySpec, mut rng: ChaCha8Rng) -> Self {
        let n = positions.len();
        let targets = (0..n).map(|_| [rng.random::<f64>(), rng.random::<f64>()]).collect();
        let mut m = Self {
            range,
            spec,
            positions: positions.to_vec(),
            targets,
            resume: vec![0; n],
            in_range: vec![false; n * n],
            n,
            rng,
            changes: 0,
        };
        m.relink(&mut Vec::new());
        m.changes = 0;
        m
    }

    /// Whether positions `a` and `b` are in range now.
    fn in_range(&self, a: u32, b: u32) -> bool {
        self.in_range[a as usize * self.n + b as usize]
    }

    /// The pairs `(a, b)`, `a < b`, in range now.
    fn links(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.n as u32)
            .flat_map(move |a| (a + 1..self.n as u32).filter(move |&b| self.in_range(a, b)).map(move |b| (a, b)))
    }

    /// Moves every node by one step at time `now`, and appends the links that changed as `(a, b, up)`.
    fn step(&mut self, now: u64, changed: &mut Vec<(u32, u32, bool)>) {
        let reach = self.spec.speed * STEP as f64 / TICKS_PER_UNIT as f64;
        for i in 0..self.n {
            if now < self.resume[i] {
                continue;
            }
            let (p, t) = (self.positions[i], self.targets[i]);
            let (dx, dy) = (t[0] - p[0], t[1] - p[1]);
            let left = dx.hypot(dy);
            if left <= reach {
                self.positions[i] = t;
                self.resume[i] = now + self.spec.pause;
                self.targets[i] = [self.rng.random::<f64>(), self.rng.random::<f64>()];
            } else {
                self.positions[i] = [p[0] + dx / left * reach, p[1] + dy / left * reach];
            }
        }
        self.relink(changed);
    }

    fn relink(&mut self, changed: &mut Vec<(u32, u32, bool)>) {
        let n = self.n;
        for a in 0..n {
            for b in a + 1..n {
                let (p, q) = (self.positions[a], self.positions[b]);
                let now = (p[0] - q[0]).hypot(p[1] - q[1]) <= self.range;
                if now != self.in_range[a * n + b] {
                    self.in_range[a * n + b] = now;
                    self.in_range[b * n + a] = now;
                    self.changes += 1;
                    changed.push((a as u32, b as u32, now));
                }
            }
        }
    }

    /// For each position, the component it is in (the smallest position of the component), over the links in
    /// range between live nodes.
    fn components(&self, up: &[bool]) -> Vec<u32> {
        let mut uf = petgraph::unionfind::UnionFind::<u32>::new(self.n);
        for (a, b) in self.links() {
            if up[a as usize] && up[b as usize] {
                uf.union(a, b);
            }
        }
        let labels = uf.into_labeling();
        let mut smallest = vec![u32::MAX; self.n];
        for (i, &l) in labels.iter().enumerate() {
            smallest[l as usize] = smallest[l as usize].min(i as u32);
        }
        labels.iter().map(|&l| smallest[l as usize]).collect()
    }
}

/// Per node, how long it followed the right leader.
struct Availability {
    /// Whether the node follows the strongest live node of its component now.
    good: Vec<bool>,
    /// Since when, if it does.
    since: Vec<u64>,
    /// Ticks it did, before `since`.
    total: Vec<u64>,
}

impl Availability {
    fn new(n: usize) -> Self {
        Self { good: vec![false; n], since: vec![0; n], total: vec![0; n] }
    }

    /// Node `i` does (or does not) follow the right leader from `now` on.
    fn set(&mut self, i: usize, good: bool, now: u64) {
        if good == self.good[i] {
            return;
        }
        if good {
            self.since[i] = now;
        } else {
            self.total[i] += now - self.since[i];
        }
        self.good[i] = good;
    }

    /// Each node's fraction of `[0, end]` with the right leader.
    fn fractions(&self, end: u64) -> Vec<f64> {
        (0..self.good.len())
            .map(|i| {
                let t = self.total[i] + if self.good[i] { end - self.since[i] } else { 0 };
                if end == 0 { f64::from(u8::from(self.good[i])) } else { t as f64 / end as f64 }
            })
            .collect()
    }
}

/// What the simulator keeps about a mobile network: the moving nodes, when they stop, and for each node the
/// strongest live node of its component and how long it followed it.
pub(crate) struct Mobile {
    nodes: Mobility,
    availability: Availability,
    /// Per position, the strongest live node of its component (`u32::MAX` for none).
    strongest: Vec<u32>,
    /// When the nodes stop moving (`--mobility-until`), if they do.
    until: Option<u64>,
}

impl Mobile {
    /// Places the nodes of `graph`, a geometric graph, where it drew them, moving as `spec` says until `until`.
    pub(crate) fn place(graph: &Graph, spec: MobilitySpec, until: Option<u64>, rng: ChaCha8Rng) -> Self {
        let (Some(positions), TopologyKind::Geometric { r }) = (graph.positions(), graph.kind()) else {
            unreachable!("mobility is checked to run on a geometric graph");
        };
        let n = positions.len();
        Self {
            nodes: Mobility::new(positions, r.0, spec, rng),
            availability: Availability::new(n),
            strongest: Vec::new(),
            until,
        }
    }

    /// Whether positions `a` and `b` are in range now.
    pub(crate) fn in_range(&self, a: u32, b: u32) -> bool {
        self.nodes.in_range(a, b)
    }

    /// The pairs `(a, b)`, `a < b`, in range now.
    pub(crate) fn links(&self) -> Vec<(u32, u32)> {
        self.nodes.links().collect()
    }

    /// When the nodes move next after a move at `now` (the first move is after time 0), unless they have stopped.
    pub(crate) fn next_move(&self, now: u64) -> Option<u64> {
        let next = now + STEP;
        self.until.is_none_or(|u| next <= u).then_some(next)
    }

    /// Moves every node one step at time `now`, and appends the links that changed as `(a, b, up)`.
    pub(crate) fn step(&mut self, now: u64, changed: &mut Vec<(u32, u32, bool)>) {
        self.nodes.step(now, changed);
    }

    /// The other ends of the links of `node` in range now: each node in range, with its port towards `node`.
    pub(crate) fn far_ends(&self, node: u32) -> Vec<End> {
        (0..self.nodes.n as u32)
            .filter(|&j| j != node && self.in_range(node, j))
            .map(|j| End { node: j, port: Graph::complete_port(j, node).0 })
            .collect()
    }

    /// The ports of `node` whose links are in range now.
    pub(crate) fn ports(&self, node: u32) -> Vec<Port> {
        (0..self.nodes.n as u32)
            .filter(|&j| j != node && self.in_range(node, j))
            .map(|j| Graph::complete_port(node, j))
            .collect()
    }

    /// Re-evaluates, for every node, the strongest live node of its component and whether it follows it.
    pub(crate) fn refresh<P: Process>(&mut self, procs: &[P], up: &[bool], ids: &[NodeId], ranks: &[Rank], now: u64) {
        let component = self.nodes.components(up);
        let mut best: BTreeMap<u32, u32> = BTreeMap::new();
        for i in 0..ids.len() as u32 {
            if up[i as usize] {
                let strongest = best.entry(component[i as usize]).or_insert(i);
                if ranks[i as usize] > ranks[*strongest as usize] {
                    *strongest = i;
                }
            }
        }
        self.strongest = component.iter().map(|c| best.get(c).copied().unwrap_or(u32::MAX)).collect();
        for i in 0..ids.len() {
            self.follow(i, procs, up, ids, now);
        }
    }

    /// Notes whether node `i` follows the strongest live node of its component from `now` on.
    pub(crate) fn follow<P: Process>(&mut self, i: usize, procs: &[P], up: &[bool], ids: &[NodeId], now: u64) {
        // Before the first refresh no node has a strongest one to follow.
        let b = self.strongest.get(i).copied().unwrap_or(u32::MAX);
        let good = up[i] && b != u32::MAX && procs[i].status().leader == Some(ids[b as usize]);
        self.availability.set(i, good, now);
    }

    /// What the run measured on the mobile network, at its end `end`.
    pub(crate) fn report(&self, up: &[bool], end: u64, elections: u64) -> MobilityReport {
        let fractions = self.availability.fractions(end);
        let mut components: Vec<u32> = self.nodes.components(up);
        components.sort_unstable();
        components.dedup();
        MobilityReport {
            availability: fractions.iter().sum::<f64>() / fractions.len() as f64,
            availability_min: fractions.iter().copied().fold(1.0, f64::min),
            elections,
            link_changes: self.nodes.changes,
            components_at_end: components.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn nodes_move_at_their_speed_and_links_follow_the_range() {
        let start = vec![[0.1, 0.1], [0.15, 0.1], [0.9, 0.9]];
        let spec = MobilitySpec { speed: 0.05, pause: 0 };
        let mut m = Mobility::new(&start, 0.1, spec, ChaCha8Rng::seed_from_u64(1));
        assert!(m.in_range(0, 1) && m.in_range(1, 0) && !m.in_range(0, 2));
        let mut changed = Vec::new();
        for t in 1..200 {
            let before = m.positions.clone();
            m.step(t * STEP, &mut changed);
            for (p, q) in before.iter().zip(&m.positions) {
                assert!((p[0] - q[0]).hypot(p[1] - q[1]) <= 0.05 + 1e-12);
            }
            for a in 0..3u32 {
                for b in 0..3u32 {
                    let (p, q) = (m.positions[a as usize], m.positions[b as usize]);
                    assert_eq!(m.in_range(a, b), a != b && (p[0] - q[0]).hypot(p[1] - q[1]) <= 0.1);
                }
            }
        }
        assert_eq!(m.changes, changed.len() as u64);
        assert!(m.changes > 0, "nodes that move for 200 steps meet and part");
    }

    #[test]
    fn availability_integrates_time_with_the_right_leader() {
        let mut a = Availability::new(2);
        a.set(0, true, 10);
        a.set(0, false, 30);
        a.set(0, true, 90);
        a.set(1, true, 0);
        assert_eq!(a.fractions(100), vec![0.3, 1.0]);
    }
}
