//! The group assertions of Garcia-Molina and Stoller (A3, A4, A4′) and the graph algorithms they need.
//!
//! The connectivity graph has the live processes as vertices and an edge between two of them when they can
//! currently exchange messages both ways. A4 looks at its maximal cliques; A4′ at its connected components (the
//! reflexive-transitive closure `E*`) and at the size of a minimum clique cover, found by brute force, which is
//! only feasible for small graphs (clique cover is NP-hard).

use std::collections::BTreeSet;

use super::terms::{Property, Skipped, Violation, World, show, standing};
use crate::{GroupId, NodeId, State};

/// The largest connectivity graph whose maximal cliques are enumerated (A4).
pub const MAX_CLIQUE_NODES: usize = 64;
/// The largest connectivity graph whose minimum clique cover is computed (A4′ (b)); the search is `3^n`.
pub const MAX_COVER_NODES: usize = 16;

/// Every maximal clique of the graph with adjacency bitmasks `adj` (at most 64 vertices), by Bron–Kerbosch with
/// pivoting.
pub fn maximal_cliques(adj: &[u64]) -> Vec<u64> {
    assert!(adj.len() <= 64, "at most 64 vertices");
    let all = if adj.len() == 64 { u64::MAX } else { (1u64 << adj.len()) - 1 };
    let mut cliques = Vec::new();
    bron_kerbosch(adj, 0, all, 0, &mut cliques);
    cliques
}

fn bron_kerbosch(adj: &[u64], r: u64, mut p: u64, mut x: u64, out: &mut Vec<u64>) {
    if p == 0 && x == 0 {
        out.push(r);
        return;
    }
    let pivot = (p | x).trailing_zeros() as usize;
    let mut candidates = p & !adj[pivot];
    while candidates != 0 {
        let v = candidates.trailing_zeros() as usize;
        let bit = 1u64 << v;
        bron_kerbosch(adj, r | bit, p & adj[v], x & adj[v], out);
        p &= !bit;
        x |= bit;
        candidates &= !bit;
    }
}

/// The size of a minimum clique cover (a partition of the vertices into cliques) of the graph with adjacency
/// bitmasks `adj`, by dynamic programming over vertex subsets.
///
/// # Panics
/// If the graph has more than [`MAX_COVER_NODES`] vertices.
pub fn min_clique_cover(adj: &[u64]) -> usize {
    let n = adj.len();
    assert!(n <= MAX_COVER_NODES, "clique cover by brute force is limited to {MAX_COVER_NODES} vertices");
    let full = (1usize << n) - 1;
    let mut clique = vec![false; full + 1];
    clique[0] = true;
    for mask in 1..=full {
        let low = mask.trailing_zeros() as usize;
        let rest = mask & (mask - 1);
        clique[mask] = clique[rest] && (adj[low] as usize & rest) == rest;
    }
    let mut best = vec![usize::MAX; full + 1];
    best[0] = 0;
    for mask in 1..=full {
        let low = mask & mask.wrapping_neg();
        let others = mask & !low;
        let mut sub = others;
        loop {
            let part = sub | low;
            if clique[part] && best[mask & !part] != usize::MAX {
                best[mask] = best[mask].min(1 + best[mask & !part]);
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & others;
        }
    }
    best[full]
}

/// The live positions and their connectivity graph as bitmasks over indices into the returned positions.
fn live_graph(world: &dyn World) -> (Vec<usize>, Vec<u64>) {
    let live: Vec<usize> = (0..world.len()).filter(|&i| world.status(i).is_up()).collect();
    let adj = (0..live.len().min(64))
        .map(|a| {
            (0..live.len().min(64))
                .filter(|&b| b != a && world.connected(live[a], live[b]))
                .fold(0u64, |acc, b| acc | (1 << b))
        })
        .collect();
    (live, adj)
}

fn ids(world: &dyn World, live: &[usize], mask: u64) -> String {
    let ids: Vec<String> =
        (0..live.len()).filter(|&k| mask & (1 << k) != 0).map(|k| world.id(live[k]).to_string()).collect();
    format!("{{{}}}", ids.join(", "))
}

/// A4: in every maximal clique `R`, some `i ∈ R` is the NORMAL coordinator of every member, all in its group.
pub(super) fn check_a4(world: &dyn World) -> Result<Option<Violation>, Skipped> {
    let (live, adj) = live_graph(world);
    if live.len() > MAX_CLIQUE_NODES {
        let reason = format!("{} live processes; maximal cliques are enumerated up to {MAX_CLIQUE_NODES}", live.len());
        return Err(Skipped { property: Property::A4, reason });
    }
    for clique in maximal_cliques(&adj) {
        let members: Vec<usize> = (0..live.len()).filter(|&k| clique & (1 << k) != 0).map(|k| live[k]).collect();
        let led_by = |i: usize| {
            let (me, group) = (world.id(i), world.status(i).group);
            members.iter().all(|&j| {
                let s = world.status(j);
                s.state == State::Normal && s.leader == Some(me) && s.group == group
            })
        };
        if !members.iter().any(|&i| led_by(i)) {
            let detail = format!(
                "nodes {} can all talk to each other but are not all Normal in one group coordinated by one of them",
                ids(world, &live, clique)
            );
            return Ok(Some(Violation { property: Property::A4, node: members.first().map(|&i| world.id(i)), detail }));
        }
    }
    Ok(None)
}

/// A leader wherever a majority can talk: every set of live processes that can all talk to each other and is a
/// majority of all the processes follows one of them, which says it leads.
pub(super) fn check_majority_leader(world: &dyn World) -> Result<Option<Violation>, Skipped> {
    let (live, adj) = live_graph(world);
    if live.len() > MAX_CLIQUE_NODES {
        let reason = format!("{} live processes; maximal cliques are enumerated up to {MAX_CLIQUE_NODES}", live.len());
        return Err(Skipped { property: Property::MajorityLeader, reason });
    }
    let majority = world.len() / 2 + 1;
    for clique in maximal_cliques(&adj) {
        if (clique.count_ones() as usize) < majority {
            continue;
        }
        let members: Vec<usize> = (0..live.len()).filter(|&k| clique & (1 << k) != 0).map(|k| live[k]).collect();
        let led_by = |i: usize| {
            let me = world.id(i);
            members.iter().all(|&j| world.status(j).leader == Some(me))
        };
        if !members.iter().any(|&i| led_by(i)) {
            let detail = format!(
                "processes {}, a majority, can all talk to each other but do not all follow one of them that leads",
                ids(world, &live, clique)
            );
            let node = members.first().map(|&i| world.id(i));
            return Ok(Some(Violation { property: Property::MajorityLeader, node, detail }));
        }
    }
    Ok(None)
}

/// A4′ (a): every live process is NORMAL, in its coordinator's group, and connected to it in `E*`.
/// A4′ (b): there are no more groups than a minimum clique cover of the connectivity graph.
pub(super) fn check_a4_prime(world: &dyn World) -> (Option<Violation>, Option<Skipped>) {
    let (live, adj) = live_graph(world);
    let component = components(live.len(), &adj, world, &live);
    let position = |id: NodeId| live.iter().position(|&i| world.id(i) == id);
    for (k, &i) in live.iter().enumerate() {
        let s = world.status(i);
        let me = world.id(i);
        let problem = match s.leader.map(|c| (c, position(c))) {
            _ if s.state != State::Normal => Some(format!("node {me} is {}, not Normal", standing(s.state, s.leader))),
            None => Some(format!("node {me} has no coordinator")),
            Some((c, None)) => Some(format!("node {me}'s coordinator {c} is down")),
            Some((c, Some(p))) if world.status(live[p]).group != s.group => {
                let theirs = world.status(live[p]).group;
                Some(format!(
                    "node {me} is in group {} but its coordinator {c} is in {}",
                    group(s.group),
                    group(theirs)
                ))
            }
            Some((c, Some(p))) if component[p] != component[k] => {
                Some(format!("node {me} cannot reach its coordinator {c}"))
            }
            Some(_) => None,
        };
        if let Some(detail) = problem {
            return (Some(Violation { property: Property::A4Prime, node: Some(me), detail }), None);
        }
    }
    if live.len() > MAX_COVER_NODES {
        let reason = format!(
            "part (b) needs a minimum clique cover, computed up to {MAX_COVER_NODES} live processes ({} here)",
            live.len()
        );
        return (None, Some(Skipped { property: Property::A4Prime, reason }));
    }
    let groups: BTreeSet<Option<GroupId>> = live.iter().map(|&i| world.status(i).group).collect();
    let cover = min_clique_cover(&adj);
    if groups.len() > cover {
        let detail =
            format!("{} groups, but a minimum clique cover of the connectivity graph has {cover}", groups.len());
        return (Some(Violation { property: Property::A4Prime, node: None, detail }), None);
    }
    (None, None)
}

fn group(g: Option<GroupId>) -> String {
    g.map_or_else(|| "none".to_owned(), |g| g.to_string())
}

/// The connected component of each live process (indices into `live`).
fn components(n: usize, adj: &[u64], world: &dyn World, live: &[usize]) -> Vec<usize> {
    let mut component = vec![usize::MAX; n];
    for start in 0..n {
        if component[start] != usize::MAX {
            continue;
        }
        component[start] = start;
        let mut stack = vec![start];
        while let Some(a) = stack.pop() {
            for b in 0..n {
                let linked = if n <= 64 { adj[a] & (1 << b) != 0 } else { a != b && world.connected(live[a], live[b]) };
                if linked && component[b] == usize::MAX {
                    component[b] = start;
                    stack.push(b);
                }
            }
        }
    }
    component
}

/// A3's tally: per group, how many live NORMAL members believe in each coordinator.
#[derive(Clone, Debug, Default)]
pub(super) struct GroupTally(std::collections::BTreeMap<GroupId, std::collections::BTreeMap<Option<NodeId>, u32>>);

impl GroupTally {
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    pub(super) fn add(&mut self, status: crate::Status, delta: i32) {
        let (State::Normal, Some(g)) = (status.state, status.group) else { return };
        let leaders = self.0.entry(g).or_default();
        let count = leaders.entry(status.leader).or_insert(0);
        *count = count.checked_add_signed(delta).expect("A3 tally out of balance");
        if *count == 0 {
            leaders.remove(&status.leader);
            if leaders.is_empty() {
                self.0.remove(&g);
            }
        }
    }

    /// A group whose NORMAL members follow two coordinators, with two of them.
    pub(super) fn split(&self, g: Option<GroupId>) -> Option<(GroupId, Option<NodeId>, Option<NodeId>)> {
        let g = g?;
        let leaders = self.0.get(&g)?;
        let mut keys = leaders.keys();
        match (keys.next(), keys.next()) {
            (Some(&a), Some(&b)) => Some((g, a, b)),
            _ => None,
        }
    }

    pub(super) fn groups(&self) -> impl Iterator<Item = GroupId> + '_ {
        self.0.keys().copied()
    }
}

pub(super) fn a3_detail(g: GroupId, a: Option<NodeId>, b: Option<NodeId>) -> String {
    format!("Normal members of group {g} have two coordinators, {} and {}", show(a), show(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(usize, usize)]) -> Vec<u64> {
        let mut adj = vec![0u64; n];
        for &(a, b) in edges {
            adj[a] |= 1 << b;
            adj[b] |= 1 << a;
        }
        adj
    }

    #[test]
    fn maximal_cliques_of_stollers_path_and_of_a_triangle() {
        let path = graph(3, &[(0, 1), (1, 2)]);
        let mut cliques = maximal_cliques(&path);
        cliques.sort();
        assert_eq!(cliques, [0b011, 0b110]);
        assert_eq!(maximal_cliques(&graph(3, &[(0, 1), (1, 2), (0, 2)])), [0b111]);
        assert_eq!(maximal_cliques(&graph(2, &[])).len(), 2);
    }

    #[test]
    fn minimum_clique_covers() {
        assert_eq!(min_clique_cover(&graph(3, &[(0, 1), (1, 2)])), 2, "Stoller's path");
        assert_eq!(min_clique_cover(&graph(4, &[(0, 1), (2, 3)])), 2);
        assert_eq!(min_clique_cover(&graph(4, &[])), 4);
        let complete: Vec<(usize, usize)> = (0..6).flat_map(|a| (a + 1..6).map(move |b| (a, b))).collect();
        assert_eq!(min_clique_cover(&graph(6, &complete)), 1);
        // A 5-cycle needs 3 cliques (edges and a vertex).
        assert_eq!(min_clique_cover(&graph(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)])), 3);
    }
}
