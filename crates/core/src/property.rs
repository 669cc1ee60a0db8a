//! The election properties of the seeds, as predicates over a read-only [`World`].
//!
//! Each property is written once. [`Monitor`] evaluates the ones an algorithm promises: "always" properties after
//! every change of a process's status (incrementally, so checking after every event stays O(1) per event even on a
//! million nodes), "at end" properties once the run is quiescent. A model checker evaluates a state from scratch
//! with [`Monitor::check_state`], which runs the same code.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{NodeId, Notice, Rank, State, Status};

/// A property from the seeds (ALGORITHMS.md §1).
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
    /// Garcia-Molina's Assertion 1: two NORMAL processes have the same coordinator.
    A1,
    /// Garcia-Molina's Assertion 2: eventually some `i` is NORMAL with `c = i` and every live process is NORMAL
    /// with `c = i`.
    A2,
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
    const ALL: [Self; 8] = [
        Self::Safety,
        Self::Liveness,
        Self::Validity,
        Self::Agreement,
        Self::LiveLeader,
        Self::Uniqueness,
        Self::A1,
        Self::A2,
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
            Self::A1 => "a1",
            Self::A2 => "a2",
        }
    }

    /// The seed the property comes from.
    pub fn source(self) -> &'static str {
        match self {
            Self::Safety | Self::Liveness => "S001",
            Self::Validity | Self::Agreement | Self::LiveLeader => "S003",
            Self::Uniqueness => "ALGORITHMS.md §1.1",
            Self::A1 | Self::A2 => "S004",
        }
    }

    /// Safety or liveness.
    pub fn class(self) -> Class {
        match self {
            Self::Liveness | Self::A2 => Class::Liveness,
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
            Self::A1 => "any two NORMAL processes have the same coordinator",
            Self::A2 => "some live i is NORMAL with c = i and every live process is NORMAL with c = i",
        }
    }

    fn bit(self) -> u32 {
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
    /// Once, when the run is quiescent.
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

    /// `property` holds once the run is quiescent.
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
}

/// The process `winner` designates in `world`, if any.
pub fn expected_leader(world: &impl World, winner: Winner) -> Option<NodeId> {
    (0..world.len())
        .filter(|&i| world.status(i).is_up())
        .filter(|&i| winner == Winner::StrongestLive || world.is_initiator(i))
        .max_by_key(|&i| world.rank(i))
        .map(|i| world.id(i))
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

fn show(leader: Option<NodeId>) -> String {
    leader.map_or_else(|| "nobody".to_owned(), |l| l.to_string())
}

/// Evaluates an algorithm's promised properties over a run.
///
/// A property reports its first violation only; later ones add nothing a user can act on.
#[derive(Clone, Debug)]
pub struct Monitor {
    checks: Vec<Check>,
    winner: Winner,
    expected: Option<NodeId>,
    /// A1's tally: how many live NORMAL processes believe in each coordinator.
    normal_leaders: BTreeMap<Option<NodeId>, u32>,
    /// P-Unique: who declared itself leader in each epoch.
    elected: BTreeMap<u64, NodeId>,
    violated: u32,
}

impl Monitor {
    /// A monitor for `checks`, electing per `winner`.
    pub fn new(checks: Vec<Check>, winner: Winner) -> Self {
        Self { checks, winner, expected: None, normal_leaders: BTreeMap::new(), elected: BTreeMap::new(), violated: 0 }
    }

    /// The properties checked.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// The process the algorithm should elect, as of the last [`Monitor::reset`].
    pub fn expected(&self) -> Option<NodeId> {
        self.expected
    }

    /// Whether `property` has been violated.
    pub fn is_violated(&self, property: Property) -> bool {
        self.violated & property.bit() != 0
    }

    fn wants(&self, property: Property, when: When) -> bool {
        self.violated & property.bit() == 0 && self.checks.iter().any(|c| c.property == property && c.when == when)
    }

    fn report(&mut self, out: &mut Vec<Violation>, property: Property, node: Option<NodeId>, detail: String) {
        if self.violated & property.bit() == 0 {
            self.violated |= property.bit();
            out.push(Violation { property, node, detail });
        }
    }

    /// Recomputes everything from `world`: call it at the start of a run and whenever the set of live processes
    /// changes. Checks every "always" property on every process.
    pub fn reset(&mut self, world: &impl World, out: &mut Vec<Violation>) {
        self.expected = expected_leader(world, self.winner);
        self.normal_leaders.clear();
        for i in 0..world.len() {
            let status = world.status(i);
            self.tally(status, 1);
            self.check_node(world, i, status, When::Always, out);
        }
        self.check_a1(world, out);
    }

    /// Process `i`'s status changed from `old` to `new`.
    pub fn on_change(&mut self, world: &impl World, i: usize, old: Status, new: Status, out: &mut Vec<Violation>) {
        self.tally(old, -1);
        self.tally(new, 1);
        self.check_node(world, i, new, When::Always, out);
        self.check_a1(world, out);
    }

    /// Process `i` emitted `notice`.
    pub fn on_notice(&mut self, world: &impl World, i: usize, notice: Notice, out: &mut Vec<Violation>) {
        let Notice::Elected { epoch } = notice;
        let me = world.id(i);
        let first = *self.elected.entry(epoch).or_insert(me);
        if first != me && self.wants(Property::Uniqueness, When::Always) {
            let detail = format!("nodes {first} and {me} both declared themselves leader in epoch {epoch}");
            self.report(out, Property::Uniqueness, Some(me), detail);
        }
    }

    /// Evaluates the "at end" properties on a quiescent `world`.
    pub fn at_end(&mut self, world: &impl World, out: &mut Vec<Violation>) {
        self.expected = expected_leader(world, self.winner);
        let live: Vec<usize> = (0..world.len()).filter(|&i| world.status(i).is_up()).collect();
        let mut positions: Vec<(NodeId, usize)> = (0..world.len()).map(|i| (world.id(i), i)).collect();
        positions.sort_unstable();
        for &i in &live {
            let status = world.status(i);
            self.check_node(world, i, status, When::AtEnd, out);
            self.check_node_at_end(world, &positions, world.id(i), status, out);
        }
        if self.wants(Property::Agreement, When::AtEnd) {
            let mut leaders = live.iter().map(|&i| (i, world.status(i).leader));
            if let Some((first, l0)) = leaders.next()
                && let Some((other, l1)) = leaders.find(|&(_, l)| l != l0)
            {
                let detail = format!(
                    "node {} has leader {} but node {} has leader {}",
                    world.id(first),
                    show(l0),
                    world.id(other),
                    show(l1)
                );
                self.report(out, Property::Agreement, Some(world.id(other)), detail);
            }
        }
        if self.wants(Property::A2, When::AtEnd) {
            self.check_a2(world, &live, out);
        }
    }

    /// Evaluates every promised property (both "always" and "at end") on one state, from scratch: what a model
    /// checker needs for each state it visits.
    pub fn check_state(checks: &[Check], winner: Winner, world: &impl World, quiescent: bool) -> Vec<Violation> {
        let mut monitor = Self::new(checks.to_vec(), winner);
        let mut out = Vec::new();
        monitor.reset(world, &mut out);
        if quiescent {
            monitor.at_end(world, &mut out);
        }
        out
    }

    fn tally(&mut self, status: Status, delta: i32) {
        if status.state != State::Normal {
            return;
        }
        let count = self.normal_leaders.entry(status.leader).or_insert(0);
        *count = count.checked_add_signed(delta).expect("A1 tally out of balance");
        if *count == 0 {
            self.normal_leaders.remove(&status.leader);
        }
    }

    fn check_a1(&mut self, world: &impl World, out: &mut Vec<Violation>) {
        if self.normal_leaders.len() < 2 || !self.wants(Property::A1, When::Always) {
            return;
        }
        let mut keys = self.normal_leaders.keys();
        let (a, b) = (*keys.next().unwrap(), *keys.next().unwrap());
        let holder = |c| {
            (0..world.len()).find(|&i| {
                let s = world.status(i);
                s.state == State::Normal && s.leader == c
            })
        };
        let (i, j) = (holder(a), holder(b));
        let name = |p: Option<usize>| p.map_or_else(|| "?".to_owned(), |p| world.id(p).to_string());
        let detail =
            format!("node {} is NORMAL under {} while node {} is NORMAL under {}", name(i), show(a), name(j), show(b));
        self.report(out, Property::A1, j.map(|j| world.id(j)), detail);
    }

    fn check_a2(&mut self, world: &impl World, live: &[usize], out: &mut Vec<Violation>) {
        let leader = live.iter().map(|&i| world.status(i).leader).next().flatten();
        let leader_ok = leader.is_some_and(|l| live.iter().any(|&i| world.id(i) == l));
        let bad = live.iter().find(|&&i| {
            let s = world.status(i);
            s.state != State::Normal || s.leader != leader
        });
        let detail = match (leader_ok, bad) {
            (true, None) => return,
            (false, _) => format!("no live process is NORMAL as its own coordinator (leader {})", show(leader)),
            (true, Some(&i)) => {
                let s = world.status(i);
                format!(
                    "node {} is {} under {} instead of NORMAL under {}",
                    world.id(i),
                    s.state.name(),
                    show(s.leader),
                    show(leader)
                )
            }
        };
        let node = bad.map(|&i| world.id(i));
        self.report(out, Property::A2, node, detail);
    }

    fn check_node(&mut self, world: &impl World, i: usize, status: Status, when: When, out: &mut Vec<Violation>) {
        if !status.is_up() {
            return;
        }
        let me = world.id(i);
        if self.wants(Property::Safety, when)
            && let Some(leader) = status.leader
            && Some(leader) != self.expected
        {
            let detail = format!("node {me} elected {leader} but the expected winner is {}", show(self.expected));
            self.report(out, Property::Safety, Some(me), detail);
        }
    }

    /// The per-process "at end" conditions; `positions` maps ids to positions, sorted by id.
    fn check_node_at_end(
        &mut self,
        world: &impl World,
        positions: &[(NodeId, usize)],
        me: NodeId,
        status: Status,
        out: &mut Vec<Violation>,
    ) {
        let Some(leader) = status.leader else {
            if self.wants(Property::Liveness, When::AtEnd) {
                self.report(out, Property::Liveness, Some(me), format!("node {me} ended without a leader"));
            }
            return;
        };
        let position = positions.binary_search_by_key(&leader, |&(id, _)| id).ok().map(|k| positions[k].1);
        if position.is_none() && self.wants(Property::Validity, When::AtEnd) {
            self.report(out, Property::Validity, Some(me), format!("node {me} elected {leader}, which is no process"));
        }
        if let Some(j) = position
            && !world.status(j).is_up()
            && self.wants(Property::LiveLeader, When::AtEnd)
        {
            self.report(out, Property::LiveLeader, Some(me), format!("node {me} elected {leader}, which is down"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ranking;

    struct Fixture {
        statuses: Vec<Status>,
        initiators: Vec<bool>,
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
    }

    fn normal(l: u32) -> Status {
        Status::normal(Some(NodeId(l)), 1)
    }

    fn fixture(statuses: Vec<Status>) -> Fixture {
        let initiators = vec![true; statuses.len()];
        Fixture { statuses, initiators }
    }

    fn names(v: &[Violation]) -> Vec<Property> {
        v.iter().map(|v| v.property).collect()
    }

    #[test]
    fn the_expected_winner_skips_crashed_and_non_initiating_processes() {
        let mut w = fixture(vec![normal(3), normal(3), Status::DOWN]);
        assert_eq!(expected_leader(&w, Winner::StrongestLive), Some(NodeId(2)));
        w.initiators = vec![true, false, false];
        assert_eq!(expected_leader(&w, Winner::StrongestLiveInitiator), Some(NodeId(1)));
    }

    #[test]
    fn safety_flags_a_wrong_leader_once() {
        let checks = vec![Check::always(Property::Safety)];
        let w = fixture(vec![normal(3), normal(2), normal(3)]);
        let v = Monitor::check_state(&checks, Winner::StrongestLive, &w, false);
        assert_eq!(names(&v), [Property::Safety]);
        assert_eq!(v[0].node, Some(NodeId(2)));
    }

    #[test]
    fn liveness_and_s003_conditions_are_checked_at_the_end() {
        let checks = vec![
            Check::at_end(Property::Liveness),
            Check::at_end(Property::Validity),
            Check::at_end(Property::Agreement),
            Check::at_end(Property::LiveLeader),
        ];
        let good = fixture(vec![normal(2), normal(2), Status::DOWN]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &good, true).is_empty());
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &good, false).is_empty());
        let bad = fixture(vec![Status::normal(None, 0), normal(9), normal(4), Status::DOWN]);
        let v = Monitor::check_state(&checks, Winner::StrongestLive, &bad, true);
        assert_eq!(names(&v), [Property::Liveness, Property::Validity, Property::LiveLeader, Property::Agreement]);
    }

    #[test]
    fn a1_is_incremental_and_ignores_processes_outside_normal() {
        let checks = vec![Check::always(Property::A1)];
        let mut w = fixture(vec![normal(3), Status::election(1), normal(3)]);
        let mut m = Monitor::new(checks, Winner::StrongestLive);
        let mut out = Vec::new();
        m.reset(&w, &mut out);
        assert!(out.is_empty());
        let old = w.statuses[1];
        w.statuses[1] = normal(2);
        m.on_change(&w, 1, old, w.statuses[1], &mut out);
        assert_eq!(names(&out), [Property::A1]);
        assert!(out[0].detail.contains("NORMAL under 3") && out[0].detail.contains("NORMAL under 2"));
    }

    #[test]
    fn a2_needs_a_self_coordinator_that_everyone_follows() {
        let checks = vec![Check::at_end(Property::A2)];
        let ok = fixture(vec![normal(3), normal(3), normal(3)]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &ok, true).is_empty());
        let waiting = fixture(vec![normal(3), Status::election(1), normal(3)]);
        assert_eq!(names(&Monitor::check_state(&checks, Winner::StrongestLive, &waiting, true)), [Property::A2]);
        let dead_leader = fixture(vec![normal(3), normal(3), Status::DOWN]);
        assert_eq!(names(&Monitor::check_state(&checks, Winner::StrongestLive, &dead_leader, true)), [Property::A2]);
    }

    #[test]
    fn uniqueness_counts_declarations_per_epoch() {
        let checks = vec![Check::always(Property::Uniqueness)];
        let w = fixture(vec![normal(3), normal(3), normal(3)]);
        let mut m = Monitor::new(checks, Winner::StrongestLive);
        let mut out = Vec::new();
        m.on_notice(&w, 2, Notice::Elected { epoch: 1 }, &mut out);
        m.on_notice(&w, 2, Notice::Elected { epoch: 1 }, &mut out);
        m.on_notice(&w, 1, Notice::Elected { epoch: 2 }, &mut out);
        assert!(out.is_empty());
        m.on_notice(&w, 0, Notice::Elected { epoch: 2 }, &mut out);
        assert_eq!(names(&out), [Property::Uniqueness]);
    }
}
