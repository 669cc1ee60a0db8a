//! The state graph a search keeps when "eventually" is judged on its cycles, and the cycle proviso of a reduced
//! timed search checked: each state's edges and three flags, and the graph's strongly connected components.
//!
//! The edges are kept in the compressed form the components are computed on, as the search finds them: each
//! state's successors, one after another, with where each state's begin. A state's successors are merged all at
//! once, so they are contiguous; a breadth-first search expands its states in the order it numbers them, so its
//! graph is in that order from the start, and four bytes an edge and five a state (with its flags) is all it takes.
//! Another order (depth-first, or breadth-first with `--shuffle`) keeps which state was expanded when, four bytes
//! a state more, and is put in number order once, when the search ends.

/// The state is settled: its "at end" properties hold.
const SETTLED: u8 = 1;
/// The reduction cut the state's successors down.
const REDUCED: u8 = 2;
/// The state is part of a timed run that has not settled, where the reduction hides status changes: no cycle may
/// pass through one.
const SETTLING: u8 = 4;

/// The most edges a graph keeps: its offsets are `u32`. (Sixteen gigabytes of edges: a search that finds more
/// stops there.)
pub(super) const MOST_EDGES: usize = u32::MAX as usize;

#[derive(Default)]
pub(super) struct Graph {
    /// Where the successors of the `k`-th state expanded begin in [`Self::targets`]; one more entry, the end.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// The state expanded `k`-th, once that is not state `k`; until then, none.
    order: Option<Vec<u32>>,
    /// Each state's flags ([`SETTLED`], [`REDUCED`], [`SETTLING`]), by number.
    flags: Vec<u8>,
}

/// One state's flags, as the search found them.
pub(super) struct Flags {
    pub(super) settled: bool,
    pub(super) reduced: bool,
    pub(super) settling: bool,
}

impl Graph {
    pub(super) fn new(states: usize) -> Self {
        Self { offsets: vec![0], targets: Vec::new(), order: None, flags: vec![0; states] }
    }

    /// A state was numbered.
    pub(super) fn numbered(&mut self) {
        self.flags.push(0);
    }

    /// State `at` was expanded, with `flags`: the edges added next, until the next state expanded, are its own.
    pub(super) fn expanded(&mut self, at: u32, flags: Flags) {
        let k = self.offsets.len() - 1;
        if self.order.is_none() && at as usize != k {
            self.order = Some((0..k as u32).collect());
        }
        if let Some(order) = &mut self.order {
            order.push(at);
        }
        // The previous state's edges end where this one's begin.
        self.offsets.push(self.targets.len() as u32);
        let Flags { settled, reduced, settling } = flags;
        let bit = |on: bool, flag: u8| if on { flag } else { 0 };
        self.flags[at as usize] = bit(settled, SETTLED) | bit(reduced, REDUCED) | bit(settling, SETTLING);
    }

    /// An edge from the state expanded last to state `to`; false, and not kept, once the graph holds
    /// [`MOST_EDGES`].
    pub(super) fn edge(&mut self, to: u32) -> bool {
        if self.targets.len() >= MOST_EDGES {
            return false;
        }
        self.targets.push(to);
        *self.offsets.last_mut().expect("an offset per state expanded, and the end") = self.targets.len() as u32;
        true
    }

    /// Puts the edges in number order, for a graph of `states` states (those never expanded have none).
    pub(super) fn finish(&mut self, states: usize) {
        let Some(order) = self.order.take() else {
            let end = *self.offsets.last().expect("the end");
            self.offsets.resize(states + 1, end);
            return;
        };
        let mut count = vec![0u32; states + 1];
        for (k, &s) in order.iter().enumerate() {
            count[s as usize + 1] = self.offsets[k + 1] - self.offsets[k];
        }
        for s in 0..states {
            count[s + 1] += count[s];
        }
        let mut targets = vec![0u32; self.targets.len()];
        for (k, &s) in order.iter().enumerate() {
            let from = &self.targets[self.offsets[k] as usize..self.offsets[k + 1] as usize];
            let at = count[s as usize] as usize;
            targets[at..at + from.len()].copy_from_slice(from);
        }
        (self.offsets, self.targets) = (count, targets);
    }

    /// The successors of state `s` (after [`Self::finish`]).
    pub(super) fn successors(&self, s: u32) -> &[u32] {
        &self.targets[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }

    pub(super) fn settled(&self, s: usize) -> bool {
        self.flags[s] & SETTLED != 0
    }

    fn reduced(&self, s: u32) -> bool {
        self.flags[s as usize] & REDUCED != 0
    }

    fn settling(&self, s: usize) -> bool {
        self.flags[s] & SETTLING != 0
    }

    /// The states.
    pub(super) fn len(&self) -> usize {
        self.flags.len()
    }

    /// The bytes it takes.
    pub(super) fn bytes(&self) -> usize {
        (self.offsets.capacity() + self.targets.capacity() + self.order.as_ref().map_or(0, Vec::capacity)) * 4
            + self.flags.capacity()
    }

    /// The reduction's cycle proviso (C3): every cycle passes through a state expanded in full, so that no step
    /// is put off for ever around it.
    pub(super) fn every_cycle_expanded_in_full(&self) -> bool {
        let both = |a: u32, b: u32| self.reduced(a) && self.reduced(b);
        !Components::among(self, both).any_cycle(self, both)
    }

    /// Whether a cycle of `c`, this graph's components, passes through a state of a run that has not settled. Time
    /// passes on every cycle the checker's own models make, and never comes round before the run settles; a
    /// process that arms a timer due at once, again and again, would make one.
    pub(super) fn settling_on_cycle(&self, c: &Components) -> bool {
        (0..self.len()).any(|s| self.settling(s) && c.on_cycle(self, s as u32))
    }
}

/// A graph's strongly connected components.
pub(super) struct Components {
    pub(super) component: Vec<u32>,
    size: Vec<u32>,
}

impl Components {
    pub(super) fn new(g: &Graph) -> Self {
        Self::among(g, |_, _| true)
    }

    /// The components of `g`'s edges that `keep` keeps.
    fn among(g: &Graph, keep: impl Fn(u32, u32) -> bool) -> Self {
        let component = tarjan(g, keep);
        let mut size = vec![0u32; g.len()];
        for &c in &component {
            size[c as usize] += 1;
        }
        Self { component, size }
    }

    /// Whether state `s` lies on a cycle of `g`: its component has two states, or it has an edge to itself.
    pub(super) fn on_cycle(&self, g: &Graph, s: u32) -> bool {
        self.on_cycle_among(g, s, |_, _| true)
    }

    fn on_cycle_among(&self, g: &Graph, s: u32, keep: impl Fn(u32, u32) -> bool) -> bool {
        self.size[self.component[s as usize] as usize] > 1 || (g.successors(s).contains(&s) && keep(s, s))
    }

    pub(super) fn any_cycle(&self, g: &Graph, keep: impl Fn(u32, u32) -> bool + Copy) -> bool {
        (0..g.len() as u32).any(|s| self.on_cycle_among(g, s, keep))
    }
}

/// Strongly connected components of `g`'s edges that `keep` keeps (Tarjan's algorithm, without recursion): the
/// component of each state. A state is on the stack while it has an index and no component yet.
fn tarjan(g: &Graph, keep: impl Fn(u32, u32) -> bool) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let n = g.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut component = vec![NONE; n];
    let (mut next_index, mut next_component) = (0u32, 0u32);
    let mut stack: Vec<u32> = Vec::new();
    // (state, next edge to look at)
    let mut calls: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        calls.push((root, g.offsets[root as usize]));
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            if *edge < g.offsets[v as usize + 1] {
                let w = g.targets[*edge as usize];
                *edge += 1;
                if !keep(v, w) {
                    continue;
                }
                if index[w as usize] == NONE {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    calls.push((w, g.offsets[w as usize]));
                } else if component[w as usize] == NONE {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                loop {
                    let w = stack.pop().expect("the component's states are on the stack");
                    component[w as usize] = next_component;
                    if w == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(states: usize, expanded: &[(u32, &[u32])]) -> Graph {
        let mut g = Graph::new(states);
        for &(at, to) in expanded {
            g.expanded(at, Flags { settled: false, reduced: at % 2 == 0, settling: false });
            for &t in to {
                assert!(g.edge(t));
            }
        }
        g.finish(states);
        g
    }

    #[test]
    fn edges_found_in_any_order_are_kept_by_state() {
        // Depth-first: 0, then 2, then 1; state 3 never expanded.
        let g = graph(4, &[(0, &[1, 2]), (2, &[2, 3]), (1, &[0])]);
        assert_eq!(g.successors(0), &[1, 2]);
        assert_eq!(g.successors(1), &[0]);
        assert_eq!(g.successors(2), &[2, 3]);
        assert_eq!(g.successors(3), &[] as &[u32]);
        let in_order = graph(4, &[(0, &[1, 2]), (1, &[0]), (2, &[2, 3])]);
        assert!(in_order.order.is_none(), "breadth-first needs no reordering");
        for s in 0..4 {
            assert_eq!(in_order.successors(s), g.successors(s));
        }
    }

    #[test]
    fn components_and_cycles() {
        let g = graph(4, &[(0, &[1, 2]), (1, &[0]), (2, &[2, 3])]);
        let c = Components::new(&g);
        assert_eq!(c.component[0], c.component[1]);
        assert_ne!(c.component[0], c.component[2]);
        assert!(c.on_cycle(&g, 0) && c.on_cycle(&g, 1), "0 → 1 → 0");
        assert!(c.on_cycle(&g, 2), "2 → 2");
        assert!(!c.on_cycle(&g, 3));
        // Reduced states are the even ones: the only cycle among them is 2's edge to itself.
        assert!(!g.every_cycle_expanded_in_full());
        let acyclic = graph(4, &[(0, &[1, 2]), (1, &[0]), (2, &[3])]);
        assert!(acyclic.every_cycle_expanded_in_full(), "0 → 1 → 0 passes through 1, expanded in full");
    }
}
