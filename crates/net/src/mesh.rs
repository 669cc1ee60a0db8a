//! The full mesh of members as the algorithms see it: a complete graph whose positions are the member ids in
//! ascending order.
//!
//! Ports follow the simulator's complete graph: at position `i`, the port to position `j` is `j` if `j < i` and
//! `j - 1` otherwise, so port `p` leads to the `p`-th other member in id order. The logical ring (for ring
//! algorithms, and the leader monitor's ring repair) runs through the positions in order: `next` is the member with
//! the next larger id, wrapping round. Every member computes the same mesh from the same member list, which is
//! what lets them agree on ports without telling each other.

use elect_core::{Duration, Neighbor, NodeId, Port, Ranking, RingPorts, Setup, Shape};

/// One member's view of the mesh: what its `Setup` borrows.
#[derive(Clone, Debug)]
pub struct Mesh {
    /// Every member, ascending.
    members: Vec<NodeId>,
    /// This member's position in `members`.
    position: usize,
    ranking: Ranking,
    neighbors: Vec<Neighbor>,
    ring: Option<RingPorts>,
    ring_order: Vec<Port>,
}

/// The port at position `i` that leads to position `j` (`i != j`).
fn port(i: usize, j: usize) -> Port {
    Port(if j < i { j } else { j - 1 } as u32)
}

impl Mesh {
    /// The mesh of `members` (any order, no duplicates) as member `me` sees it.
    ///
    /// # Panics
    /// If `me` is not a member or an id is repeated; the configuration is validated before.
    pub fn new(me: NodeId, members: &[NodeId], ranking: Ranking) -> Self {
        let mut members = members.to_vec();
        members.sort_unstable();
        assert!(members.windows(2).all(|w| w[0] != w[1]), "member ids repeat");
        let position = members.binary_search(&me).expect("this member is in the list");
        let n = members.len();
        let neighbors = (0..n)
            .filter(|&j| j != position)
            .map(|j| Neighbor { port: port(position, j), id: members[j], rank: ranking.rank(members[j]) })
            .collect();
        let ring = (n >= 2).then(|| RingPorts {
            next: port(position, (position + 1) % n),
            prev: port(position, (position + n - 1) % n),
        });
        let ring_order = (1..n).map(|k| port(position, (position + k) % n)).collect();
        Self { members, position, ranking, neighbors, ring, ring_order }
    }

    /// The `Setup` the algorithm is built with.
    pub fn setup(&self, delay_bound: Duration) -> Setup<'_> {
        let me = self.members[self.position];
        Setup {
            id: me,
            rank: self.ranking.rank(me),
            neighbors: &self.neighbors,
            ring: self.ring,
            ring_order: &self.ring_order,
            shape: Shape::Complete,
            delay_bound: Some(delay_bound),
            diameter: Some(1),
            suspected: &[],
        }
    }

    /// This member.
    pub fn me(&self) -> NodeId {
        self.members[self.position]
    }

    /// Every member, ascending.
    pub fn members(&self) -> &[NodeId] {
        &self.members
    }

    /// The member at the other end of `port`.
    pub fn peer(&self, port: Port) -> Option<NodeId> {
        self.neighbors.get(port.index()).map(|n| n.id)
    }

    /// The port leading to member `id`, if it is another member.
    pub fn port_of(&self, id: NodeId) -> Option<Port> {
        let j = self.members.binary_search(&id).ok()?;
        (j != self.position).then(|| port(self.position, j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_agree_with_the_simulators_complete_graph_and_invert() {
        let ids = [NodeId(30), NodeId(10), NodeId(20), NodeId(40)];
        let mesh = Mesh::new(NodeId(20), &ids, Ranking::default());
        let setup = mesh.setup(Duration::from_ticks(1000));
        let peers: Vec<NodeId> = setup.neighbors.iter().map(|n| n.id).collect();
        assert_eq!(peers, [NodeId(10), NodeId(30), NodeId(40)]);
        for (p, n) in setup.neighbors.iter().enumerate() {
            assert_eq!(n.port, Port(p as u32));
            assert_eq!(mesh.port_of(n.id), Some(n.port));
            assert_eq!(mesh.peer(n.port), Some(n.id));
        }
        assert_eq!(mesh.port_of(NodeId(20)), None);
        assert_eq!(mesh.port_of(NodeId(99)), None);
        // 20 is position 1: next is 30 (port 1), prev is 10 (port 0); the ring order runs 30, 40, 10.
        assert_eq!(setup.ring, Some(RingPorts { next: Port(1), prev: Port(0) }));
        assert_eq!(setup.ring_order, [Port(1), Port(2), Port(0)]);
        assert!(setup.rank > Ranking::default().rank(NodeId(10)));
    }

    #[test]
    fn a_single_member_has_no_ring() {
        let mesh = Mesh::new(NodeId(1), &[NodeId(1)], Ranking::default());
        let setup = mesh.setup(Duration::from_ticks(1));
        assert!(setup.neighbors.is_empty() && setup.ring.is_none() && setup.ring_order.is_empty());
    }
}
