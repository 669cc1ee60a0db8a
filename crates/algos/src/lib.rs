//! Every election algorithm of elect, implemented once as a sans-IO [`elect_core::Process`], and a
//! [`registry`] that hands them to drivers by name.
//!
//! Each module opens with the algorithm's model, messages, guarantees, cost, and the seed it comes from.
//! Nothing here does I/O, reads a clock or holds a random generator.

pub mod ad_hoc;
pub mod algorithm;
pub mod any;
pub mod book;
pub mod bully;
pub mod chang_roberts;
pub mod floodmax;
pub mod franklin;
pub mod garcia_molina;
pub mod hirschberg_sinclair;
mod hosted;
#[cfg(feature = "hostile")]
pub mod hostile;
pub mod invitation;
pub mod lelann;
pub mod member;
pub mod monitor;
pub mod params;
pub mod peterson;
pub mod program;
mod registered;
pub mod registry;
pub mod ring_participant;
pub mod rounds;
pub mod sync_lcr;
pub mod synchronizers;
pub mod timestamp_flooding;

pub use algorithm::{
    Algorithm, Bound, Driver, Elects, ElectsEarliest, Facts, Info, Initiators, LinkOrder, Measure, Needs, Showcase,
    Timing,
};
pub use any::{AnyAlgorithm, AnySynchronized};
pub use params::{ParamError, ParamInfo, Params};
pub use registry::{
    RegistryError, dispatch, dispatch_any, dispatch_synchronized, dispatch_synchronized_any, kinds, lookup,
    runs_on_synchronizers,
};

use elect_core::{Check, Epoch, Property, Rank, RingPorts, Setup, Status, StatusKey, When};

/// The ring orientation of a process of a ring algorithm.
///
/// # Panics
/// If the driver built a ring algorithm on a topology without one; drivers check [`Needs::Ring`] first.
fn ring_ports(setup: &Setup<'_>) -> RingPorts {
    setup.ring.expect("a ring algorithm was built on a topology without ring ports")
}

/// The status of a process of an algorithm without epochs or groups, as the two fields it comes from: the leader
/// it learned, if any, and otherwise whether it takes part in an election. The ring algorithms return it as their
/// [`elect_core::Process::status_key`]: the simulator compares it around every step with two comparisons, where
/// building and comparing the [`Status`] takes a few dozen instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Learned {
    leader: Option<Rank>,
    electing: bool,
}

impl StatusKey for Learned {
    #[inline(always)]
    fn status(self) -> Status {
        match self.leader {
            Some(leader) => Status::normal(Some(leader.id()), Epoch::ZERO),
            None if self.electing => Status::election(Epoch::ZERO),
            None => Status::normal(None, Epoch::ZERO),
        }
    }
}

/// The properties every election here promises: S001 safety (after every event or at the end), P-Unique when
/// the algorithm has an "I am leader" action, and, once quiescent, S001 liveness and S003's `L(i)` conditions.
pub fn election_checks(safety: When, unique: bool) -> Vec<Check> {
    let mut checks = vec![Check { property: Property::Safety, when: safety }];
    if unique {
        checks.push(Check::always(Property::Uniqueness));
    }
    checks
        .extend([Property::Liveness, Property::Validity, Property::Agreement, Property::LiveLeader].map(Check::at_end));
    checks
}

/// `⌊lg n⌋` (0 for `n ≤ 1`).
pub fn floor_lg(n: u64) -> u64 {
    u64::from(n.max(1).ilog2())
}

/// `⌈lg n⌉` (0 for `n ≤ 1`).
pub fn ceil_lg(n: u64) -> u64 {
    u64::from(n.max(1).next_power_of_two().trailing_zeros())
}

/// Set-ups for the unit tests of process wrappers.
#[cfg(test)]
pub(crate) mod testing {
    use elect_core::{
        Duration, Effect, EventOf, Instant, Message, Neighbor, NodeId, Port, Process, Ranking, Setup, Shape,
    };

    /// One step of `p` at time zero: the rule it applied and what it sent, each message in its own words.
    pub(crate) fn step_in_words<P: Process>(p: &mut P, event: EventOf<P>) -> (Option<&'static str>, Vec<String>) {
        let mut effects = Vec::new();
        let rule = elect_core::driver::handle(p, Instant::ZERO, event, &mut effects);
        let sent = effects.iter().filter_map(|e| match e {
            Effect::Send { msg, .. } => Some(msg.describe()),
            _ => None,
        });
        (rule, sent.collect())
    }

    /// What `build` makes of process `me` of the complete graph on `members` (ids from 1 up, in order; its ports
    /// lead to the others in the order of their ids), with the delay bound `t`.
    pub(crate) fn on_complete_graph<P>(
        me: NodeId,
        members: &[NodeId],
        t: Duration,
        build: impl FnOnce(&Setup<'_>) -> P,
    ) -> P {
        let ranking = Ranking::default();
        let neighbors: Vec<Neighbor> = members
            .iter()
            .copied()
            .filter(|&id| id != me)
            .enumerate()
            .map(|(p, id)| Neighbor { port: Port(p as u32), id, rank: ranking.rank(id) })
            .collect();
        build(&Setup {
            id: me,
            rank: ranking.rank(me),
            neighbors: &neighbors,
            ring: None,
            ring_order: &[],
            shape: Shape::Complete,
            delay_bound: Some(t),
            diameter: Some(1),
            suspected: &[],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_learned_leader_outranks_taking_part_and_taking_part_is_an_election() {
        use elect_core::{NodeId, Prefer};
        let leader = Rank::new(Prefer::Highest, 7, NodeId(3));
        for electing in [false, true] {
            let known = Learned { leader: Some(leader), electing };
            assert_eq!(known.status(), Status::normal(Some(NodeId(3)), Epoch::ZERO));
        }
        assert_eq!(Learned { leader: None, electing: true }.status(), Status::election(Epoch::ZERO));
        assert_eq!(Learned { leader: None, electing: false }.status(), Status::normal(None, Epoch::ZERO));
    }

    #[test]
    fn logarithms_round_as_named() {
        let cases =
            [(1, 0, 0), (2, 1, 1), (3, 1, 2), (4, 2, 2), (5, 2, 3), (8, 3, 3), (1000, 9, 10), (1 << 20, 20, 20)];
        for (n, floor, ceil) in cases {
            assert_eq!((floor_lg(n), ceil_lg(n)), (floor, ceil), "n = {n}");
        }
    }
}
