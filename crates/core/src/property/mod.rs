//! The election properties of the sources (S000–S004, see `docs/reference/bibliography.md`), as predicates over a
//! read-only [`World`]; `docs/reference/properties.md` defines each one.
//!
//! Each property is written once. [`Monitor`] evaluates the ones an algorithm promises: "always" properties after
//! every change of a process's status (incrementally, so checking after every event stays O(1) per event even on a
//! million nodes), "at end" properties once the run has settled. A model checker evaluates a state from scratch
//! with [`Monitor::check_state`], which runs the same code.

mod groups;
mod monitor;
mod terms;

pub use groups::{MAX_CLIQUE_NODES, MAX_COVER_NODES, maximal_cliques, min_clique_cover};
pub use monitor::Monitor;
pub use terms::{Check, Class, Property, Skipped, Violation, When, Winner, World, expected_leader};

#[cfg(test)]
pub(crate) mod fixture {
    use super::{Property, Violation, World};
    use crate::{NodeId, Rank, Ranking, Status};

    /// A world of statuses by position; ids are positions plus one; `links` lists the broken pairs.
    pub(crate) struct Fixture {
        pub(crate) statuses: Vec<Status>,
        pub(crate) initiators: Vec<bool>,
        pub(crate) broken: Vec<(usize, usize)>,
    }

    impl World for Fixture {
        fn len(&self) -> usize {
            self.statuses.len()
        }
        fn id(&self, i: usize) -> NodeId {
            NodeId(i as u32 + 1)
        }
        fn rank(&self, i: usize) -> Rank {
            Ranking::default().rank(self.id(i))
        }
        fn status(&self, i: usize) -> Status {
            self.statuses[i]
        }
        fn is_initiator(&self, i: usize) -> bool {
            self.initiators[i]
        }
        fn connected(&self, i: usize, j: usize) -> bool {
            !self.broken.iter().any(|&(a, b)| (a, b) == (i, j) || (a, b) == (j, i))
        }
    }

    pub(crate) fn fixture(statuses: Vec<Status>) -> Fixture {
        let initiators = vec![true; statuses.len()];
        Fixture { statuses, initiators, broken: Vec::new() }
    }

    pub(crate) fn normal(l: u32) -> Status {
        Status::normal(Some(NodeId(l)), crate::Epoch::from_bits(1))
    }

    pub(crate) fn names(v: &[Violation]) -> Vec<Property> {
        v.iter().map(|v| v.property).collect()
    }
}
