//! The vocabulary of the properties: what a property is, when it is checked, the world it reads and what a
//! violation says. The checks themselves are in `monitor.rs` and `groups.rs`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{NodeId, Rank, Status};

/// An election property, defined in the book's properties chapter (`docs/reference/properties.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// S001 safety: every live process has elected the expected winner or nobody.
    Safety,
    /// S001 liveness: the run terminates and every live process has elected somebody.
    Liveness,
    /// S003-1: every live process's leader is a process of the system.
    Validity,
    /// S003-2: all live processes have the same leader.
    Agreement,
    /// S003-3: the leader is alive.
    LiveLeader,
    /// P-Unique: at most one process performs the "I am leader" action per epoch.
    Uniqueness,
    /// A fresh epoch on every grant: a process that restarts never performs the "I am leader" action in an epoch
    /// it performed it in before the restart (what fencing needs of a process that keeps its epochs durable).
    FreshEpoch,
    /// Garcia-Molina's Assertion 1: two NORMAL processes have the same coordinator.
    A1,
    /// Garcia-Molina's Assertion 2: eventually some `i` is NORMAL with `c = i` and every live process is NORMAL
    /// with `c = i`.
    A2,
    /// Garcia-Molina's Assertion 3: two NORMAL processes of the same group have the same coordinator.
    A3,
    /// Garcia-Molina's Assertion 4: in every maximal set of processes that can all talk to each other, everybody is
    /// eventually NORMAL under one coordinator of the set, in its group.
    A4,
    /// Stoller's Assertion 4′: after a stable interval everybody is NORMAL in its coordinator's group, can reach
    /// its coordinator, and there are no more groups than a minimum clique cover of the connectivity graph.
    A4Prime,
    /// Vasudevan-Kurose-Towsley's goal: after a stable interval, every live process's leader is the strongest
    /// live process of its connected component (over the links that currently work both ways).
    ComponentLeader,
    /// One leader at a time: at no instant do two live processes each say they lead (in any epochs).
    OneLeader,
    /// A leader wherever a majority can talk: after a stable interval, the members of every set of live processes
    /// that can all talk to each other both ways and is a majority of all the processes follow one of them, which
    /// says it leads.
    MajorityLeader,
}

/// Whether a property constrains every state (safety) or what must eventually happen (liveness).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A bad thing never happens.
    Safety,
    /// A good thing eventually happens.
    Liveness,
}

impl Property {
    const ALL: [Self; 15] = [
        Self::Safety,
        Self::Liveness,
        Self::Validity,
        Self::Agreement,
        Self::LiveLeader,
        Self::Uniqueness,
        Self::FreshEpoch,
        Self::A1,
        Self::A2,
        Self::A3,
        Self::A4,
        Self::A4Prime,
        Self::ComponentLeader,
        Self::OneLeader,
        Self::MajorityLeader,
    ];

    /// Every property, in a fixed order.
    pub fn all() -> &'static [Self] {
        &Self::ALL
    }

    /// The stable name used in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Safety => "safety",
            Self::Liveness => "liveness",
            Self::Validity => "validity",
            Self::Agreement => "agreement",
            Self::LiveLeader => "live-leader",
            Self::Uniqueness => "uniqueness",
            Self::FreshEpoch => "fresh-epoch",
            Self::A1 => "a1",
            Self::A2 => "a2",
            Self::A3 => "a3",
            Self::A4 => "a4",
            Self::A4Prime => "a4-prime",
            Self::ComponentLeader => "component-leader",
            Self::OneLeader => "one-leader",
            Self::MajorityLeader => "majority-leader",
        }
    }

    /// The book section that defines the property and names its source, as a path from the repository's root
    /// with the heading's anchor: `docs/reference/properties.md#uniqueness`. Every property has a heading there
    /// whose anchor is its [name](Self::name) (a test in the `elect` crate checks that each one resolves).
    pub fn source(self) -> &'static str {
        match self {
            Self::Safety => "docs/reference/properties.md#safety",
            Self::Liveness => "docs/reference/properties.md#liveness",
            Self::Validity => "docs/reference/properties.md#validity",
            Self::Agreement => "docs/reference/properties.md#agreement",
            Self::LiveLeader => "docs/reference/properties.md#live-leader",
            Self::Uniqueness => "docs/reference/properties.md#uniqueness",
            Self::FreshEpoch => "docs/reference/properties.md#fresh-epoch",
            Self::A1 => "docs/reference/properties.md#a1",
            Self::A2 => "docs/reference/properties.md#a2",
            Self::A3 => "docs/reference/properties.md#a3",
            Self::A4 => "docs/reference/properties.md#a4",
            Self::A4Prime => "docs/reference/properties.md#a4-prime",
            Self::ComponentLeader => "docs/reference/properties.md#component-leader",
            Self::OneLeader => "docs/reference/properties.md#one-leader",
            Self::MajorityLeader => "docs/reference/properties.md#majority-leader",
        }
    }

    /// The property named `name` ([`Self::name`]), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The check that judges this property: after every event for a safety property, once the run has settled for a
    /// liveness one.
    pub fn check(self) -> Check {
        match self.class() {
            Class::Safety => Check::always(self),
            Class::Liveness => Check::at_end(self),
        }
    }

    /// Safety or liveness.
    pub fn class(self) -> Class {
        match self {
            Self::Liveness | Self::A2 | Self::A4 | Self::A4Prime | Self::ComponentLeader | Self::MajorityLeader => {
                Class::Liveness
            }
            _ => Class::Safety,
        }
    }

    /// One sentence saying what the property demands.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Safety => "every live process has elected the best live candidate or nobody",
            Self::Liveness => "the run terminates and every live process has elected a leader",
            Self::Validity => "every live process's leader is a process of the system",
            Self::Agreement => "all live processes have the same leader",
            Self::LiveLeader => "the leader is alive",
            Self::Uniqueness => "at most one process declares itself leader per epoch",
            Self::FreshEpoch => "a process that restarts never declares itself leader in an epoch it declared before",
            Self::A1 => "any two NORMAL processes have the same coordinator",
            Self::A2 => "some live i is NORMAL with c = i and every live process is NORMAL with c = i",
            Self::A3 => "any two NORMAL processes of one group have the same coordinator",
            Self::A4 => {
                "in every maximal set of mutually connected processes, all are NORMAL under one of them, in its group"
            }
            Self::A4Prime => {
                "after a stable interval: everybody NORMAL in its coordinator's group and connected to it, and no \
                 more groups than a minimum clique cover"
            }
            Self::ComponentLeader => {
                "after a stable interval, every live process follows the strongest live process of its connected component"
            }
            Self::OneLeader => "at no instant do two live processes each say they lead, in any epochs",
            Self::MajorityLeader => {
                "after a stable interval, a majority that can all talk to each other follows one of them, which leads"
            }
        }
    }

    pub(super) fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a property is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    /// After every event.
    Always,
    /// Once, when the run has settled: quiescent, or stable for the algorithm's settling time.
    AtEnd,
}

/// A property an algorithm promises, and when it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Check {
    /// The property.
    pub property: Property,
    /// When it must hold.
    pub when: When,
}

impl Check {
    /// `property` holds after every event.
    pub const fn always(property: Property) -> Self {
        Self { property, when: When::Always }
    }

    /// `property` holds once the run has settled.
    pub const fn at_end(property: Property) -> Self {
        Self { property, when: When::AtEnd }
    }
}

/// Which process the algorithm is supposed to elect (the `q*` of S001's safety).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Winner {
    /// The strongest live process.
    StrongestLive,
    /// The strongest live process among those that initiated (S003's Chang-Roberts, where others only relay).
    StrongestLiveInitiator,
    /// The live initiator with the smallest `(initiation time, id)`, whatever the ranking (S002's timestamped
    /// flooding, where the earliest campaign wins). Drivers start every initiator at time 0, so this is the
    /// initiator with the smallest id.
    EarliestInitiator,
}

/// A read-only view of every process of a run, indexed by position.
pub trait World {
    /// The number of processes.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The id at position `i`.
    fn id(&self, i: usize) -> NodeId;
    /// The rank at position `i`.
    fn rank(&self, i: usize) -> Rank;
    /// The status at position `i` ([`Status::DOWN`] if crashed).
    fn status(&self, i: usize) -> Status;
    /// Whether position `i` was told to initiate.
    fn is_initiator(&self, i: usize) -> bool;
    /// Whether live positions `i` and `j` can currently exchange messages both ways (Stoller's "connected").
    fn connected(&self, i: usize, j: usize) -> bool {
        let _ = (i, j);
        true
    }
}

/// The process `winner` designates in `world`, if any.
pub fn expected_leader(world: &(impl World + ?Sized), winner: Winner) -> Option<NodeId> {
    let candidates = (0..world.len())
        .filter(|&i| world.status(i).is_up())
        .filter(|&i| winner == Winner::StrongestLive || world.is_initiator(i));
    match winner {
        Winner::StrongestLive | Winner::StrongestLiveInitiator => {
            candidates.max_by_key(|&i| world.rank(i)).map(|i| world.id(i))
        }
        Winner::EarliestInitiator => candidates.map(|i| world.id(i)).min(),
    }
}

/// A property that failed, with the process that shows it and an explanation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The property.
    pub property: Property,
    /// A process whose state breaks it, if one can be named.
    pub node: Option<NodeId>,
    /// What went wrong, in one sentence.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.property, self.property.source(), self.detail)
    }
}

/// A promised property that was not evaluated, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The property.
    pub property: Property,
    /// Why it was not evaluated.
    pub reason: String,
}

pub(super) fn show(leader: Option<NodeId>) -> String {
    leader.map_or_else(|| "nobody".to_owned(), |l| l.to_string())
}

/// A process's state and coordinator in the words of Garcia-Molina's assertions: "Normal with coordinator 5",
/// "Election with no coordinator".
pub(super) fn standing(state: crate::State, leader: Option<NodeId>) -> String {
    let state = match state {
        crate::State::Down => "Down",
        crate::State::Election => "Election",
        crate::State::Reorganization => "Reorganization",
        crate::State::Normal => "Normal",
    };
    match leader {
        Some(c) => format!("{state} with coordinator {c}"),
        None => format!("{state} with no coordinator"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{fixture, normal};
    use super::*;

    #[test]
    fn every_citation_ends_with_the_anchor_of_the_property_s_name() {
        for &p in Property::all() {
            assert_eq!(p.source(), format!("docs/reference/properties.md#{}", p.name()), "{p}");
        }
    }

    #[test]
    fn the_earliest_initiator_is_the_live_initiator_with_the_smallest_id_whatever_the_ranks() {
        let mut w = fixture(vec![normal(3), Status::DOWN, normal(3), normal(3)]);
        w.initiators = vec![false, true, true, true];
        assert_eq!(expected_leader(&w, Winner::EarliestInitiator), Some(NodeId(3)));
        assert_eq!(expected_leader(&w, Winner::StrongestLiveInitiator), Some(NodeId(4)));
        w.initiators = vec![false; 4];
        assert_eq!(expected_leader(&w, Winner::EarliestInitiator), None);
    }
}
