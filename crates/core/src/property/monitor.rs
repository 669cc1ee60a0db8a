//! Evaluating the promised properties over a run, incrementally.

use std::collections::BTreeMap;

use super::groups::{GroupTally, a3_detail, check_a4, check_a4_prime, check_majority_leader};
use super::terms::{Check, Class, Property, Skipped, Violation, When, Winner, World, expected_leader, show, standing};
use crate::{Epoch, NodeId, Notice, State, Status};

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
    /// A3's tally, per group.
    groups: GroupTally,
    /// P-Unique: who declared itself leader in each epoch, and in which of its lives (see [`Self::on_restart`]).
    elected: BTreeMap<Epoch, (NodeId, u32)>,
    /// How many times each process restarted, for fresh-epoch (processes that never did are not listed).
    lives: BTreeMap<NodeId, u32>,
    violated: u32,
    skipped: Vec<Skipped>,
}

impl Monitor {
    /// A monitor for `checks`, electing per `winner`.
    pub fn new(checks: Vec<Check>, winner: Winner) -> Self {
        Self {
            checks,
            winner,
            expected: None,
            normal_leaders: BTreeMap::new(),
            groups: GroupTally::default(),
            elected: BTreeMap::new(),
            lives: BTreeMap::new(),
            violated: 0,
            skipped: Vec::new(),
        }
    }

    /// The properties checked.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// The process the algorithm should elect, as of the last evaluation.
    pub fn expected(&self) -> Option<NodeId> {
        self.expected
    }

    /// Whether `property` has been violated.
    pub fn is_violated(&self, property: Property) -> bool {
        self.violated & property.bit() != 0
    }

    /// Promised properties that could not be evaluated, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
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

    fn push(&mut self, out: &mut Vec<Violation>, v: Violation) {
        self.report(out, v.property, v.node, v.detail);
    }

    /// Recomputes everything from `world`: call it at the start of a run and whenever the set of live processes
    /// or their connectivity changes. Checks every "always" property on every process.
    pub fn reset(&mut self, world: &(impl World + ?Sized), out: &mut Vec<Violation>) {
        self.expected = expected_leader(world, self.winner);
        self.normal_leaders.clear();
        self.groups.clear();
        for i in 0..world.len() {
            let status = world.status(i);
            self.tally(status, 1);
            self.check_node(world, i, status, When::Always, out);
        }
        self.check_a1(world, out);
        self.check_one_leader(world, out);
        let groups: Vec<_> = self.groups.groups().collect();
        for g in groups {
            self.check_a3(Some(g), out);
        }
    }

    /// Process `i`'s status changed from `old` to `new`.
    pub fn on_change(&mut self, world: &impl World, i: usize, old: Status, new: Status, out: &mut Vec<Violation>) {
        self.tally(old, -1);
        self.tally(new, 1);
        self.check_node(world, i, new, When::Always, out);
        self.check_a1(world, out);
        if new.leader == Some(world.id(i)) && new.is_up() {
            self.check_one_leader(world, out);
        }
        self.check_a3(new.group, out);
    }

    /// Process `i` emitted `notice`.
    pub fn on_notice(&mut self, world: &impl World, i: usize, notice: Notice, out: &mut Vec<Violation>) {
        let Notice::Elected { epoch } = notice else { return };
        let me = world.id(i);
        let life = self.lives.get(&me).copied().unwrap_or(0);
        let (first, first_life) = *self.elected.entry(epoch).or_insert((me, life));
        if first != me && self.wants(Property::Uniqueness, When::Always) {
            let detail = format!("nodes {first} and {me} both declared themselves leader{}", epoch.within());
            self.report(out, Property::Uniqueness, Some(me), detail);
        }
        if first == me && first_life != life && self.wants(Property::FreshEpoch, When::Always) {
            let detail =
                format!("node {me} declared itself leader{} before it restarted, and again after", epoch.within());
            self.report(out, Property::FreshEpoch, Some(me), detail);
        }
    }

    /// Process `node` restarted: it begins a new life, and what it declares from now on is judged against what it
    /// declared before (fresh-epoch).
    pub fn on_restart(&mut self, node: NodeId) {
        let life = self.lives.entry(node).or_insert(0);
        *life = life.saturating_add(1);
    }

    /// Evaluates the "at end" properties. `unsettled` says why the run did not end settled (quiescent, or stable
    /// for the algorithm's settling time after the last fault), if it did not; they are then recorded as skipped,
    /// with that reason, instead.
    ///
    /// It reads the world through `dyn World`, as [`Self::check_state`] does: they run once per run in the
    /// simulator and once per state in the checker, next to the cost of building a monitor, so a dynamic call per
    /// read costs nothing that shows, and their code is compiled once instead of once per algorithm and driver.
    pub fn at_end(&mut self, world: &dyn World, unsettled: Option<String>, out: &mut Vec<Violation>) {
        self.expected = expected_leader(world, self.winner);
        if let Some(reason) = unsettled {
            let unsettled: Vec<Property> =
                self.checks.iter().filter(|c| c.when == When::AtEnd).map(|c| c.property).collect();
            self.skipped.extend(unsettled.into_iter().map(|property| Skipped { property, reason: reason.clone() }));
            return;
        }
        let live: Vec<usize> = (0..world.len()).filter(|&i| world.status(i).is_up()).collect();
        // Where each leader the live processes follow sits: one pass over the ids, for the few distinct leaders
        // (usually one) rather than a sort of every id.
        let mut positions: BTreeMap<NodeId, Option<usize>> = BTreeMap::new();
        for leader in live.iter().filter_map(|&i| world.status(i).leader) {
            positions.entry(leader).or_insert(None);
        }
        for i in 0..world.len() {
            if let Some(position) = positions.get_mut(&world.id(i)) {
                *position = Some(i);
            }
        }
        for &i in &live {
            let status = world.status(i);
            self.check_node(world, i, status, When::AtEnd, out);
            self.check_node_at_end(world, &positions, world.id(i), status, out);
        }
        if self.wants(Property::Agreement, When::AtEnd) {
            self.check_agreement(world, &live, out);
        }
        if self.wants(Property::A2, When::AtEnd) {
            self.check_a2(world, &live, out);
        }
        if self.wants(Property::A4, When::AtEnd) {
            match check_a4(world) {
                Ok(Some(v)) => self.push(out, v),
                Ok(None) => {}
                Err(skipped) => self.skipped.push(skipped),
            }
        }
        if self.wants(Property::ComponentLeader, When::AtEnd) {
            self.check_component_leaders(world, &live, out);
        }
        if self.wants(Property::MajorityLeader, When::AtEnd) {
            match check_majority_leader(world) {
                Ok(Some(v)) => self.push(out, v),
                Ok(None) => {}
                Err(skipped) => self.skipped.push(skipped),
            }
        }
        if self.wants(Property::A4Prime, When::AtEnd) {
            let (violation, skipped) = check_a4_prime(world);
            if let Some(v) = violation {
                self.push(out, v);
            }
            self.skipped.extend(skipped);
        }
    }

    /// Evaluates every promised property (both "always" and "at end") on one state, from scratch: what a model
    /// checker needs for each state it visits.
    pub fn check_state(checks: &[Check], winner: Winner, world: &dyn World, settled: bool) -> Vec<Violation> {
        let mut monitor = Self::new(checks.to_vec(), winner);
        let mut out = Vec::new();
        monitor.reset(world, &mut out);
        if settled {
            monitor.at_end(world, None, &mut out);
        }
        out
    }

    /// Whether every promised property of `class` held.
    pub fn held(&self, class: Class) -> bool {
        !self.checks.iter().any(|c| c.property.class() == class && self.is_violated(c.property))
    }

    fn tally(&mut self, status: Status, delta: i32) {
        self.groups.add(status, delta);
        if status.state != State::Normal {
            return;
        }
        let count = self.normal_leaders.entry(status.leader).or_insert(0);
        *count = count.checked_add_signed(delta).expect("A1 tally out of balance");
        if *count == 0 {
            self.normal_leaders.remove(&status.leader);
        }
    }

    fn check_a1(&mut self, world: &(impl World + ?Sized), out: &mut Vec<Violation>) {
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
        let (a, b) = (standing(State::Normal, a), standing(State::Normal, b));
        let detail = format!("node {} is {a} while node {} is {b}", name(i), name(j));
        self.report(out, Property::A1, j.map(|j| world.id(j)), detail);
    }

    /// At most one live process says it leads.
    fn check_one_leader(&mut self, world: &(impl World + ?Sized), out: &mut Vec<Violation>) {
        if !self.wants(Property::OneLeader, When::Always) {
            return;
        }
        let mut leaders = (0..world.len()).filter(|&i| {
            let s = world.status(i);
            s.is_up() && s.leader == Some(world.id(i))
        });
        if let (Some(a), Some(b)) = (leaders.next(), leaders.next()) {
            let (sa, sb) = (world.status(a), world.status(b));
            let detail = format!(
                "nodes {} (epoch {}) and {} (epoch {}) both say they lead",
                world.id(a),
                sa.epoch,
                world.id(b),
                sb.epoch
            );
            self.report(out, Property::OneLeader, Some(world.id(b)), detail);
        }
    }

    fn check_a3(&mut self, group: Option<crate::GroupId>, out: &mut Vec<Violation>) {
        if !self.wants(Property::A3, When::Always) {
            return;
        }
        if let Some((g, a, b)) = self.groups.split(group) {
            self.report(out, Property::A3, None, a3_detail(g, a, b));
        }
    }

    /// Every live process follows the strongest live process it can reach over links that work both ways.
    fn check_component_leaders(&mut self, world: &dyn World, live: &[usize], out: &mut Vec<Violation>) {
        let mut parts = UnionFind::new(world.len());
        for (a, &i) in live.iter().enumerate() {
            for &j in &live[a + 1..] {
                if world.connected(i, j) {
                    parts.union(i, j);
                }
            }
        }
        let mut best: BTreeMap<usize, usize> = BTreeMap::new();
        for &i in live {
            let root = parts.find(i);
            let entry = best.entry(root).or_insert(i);
            if world.rank(i) > world.rank(*entry) {
                *entry = i;
            }
        }
        for &i in live {
            let strongest = best[&parts.find(i)];
            let want = world.id(strongest);
            let got = world.status(i).leader;
            if got != Some(want) {
                let detail = format!(
                    "node {} follows {} but the strongest live node of its component is {want}",
                    world.id(i),
                    show(got)
                );
                self.report(out, Property::ComponentLeader, Some(world.id(i)), detail);
                return;
            }
        }
    }

    fn check_agreement(&mut self, world: &dyn World, live: &[usize], out: &mut Vec<Violation>) {
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

    fn check_a2(&mut self, world: &dyn World, live: &[usize], out: &mut Vec<Violation>) {
        let leader = live.iter().map(|&i| world.status(i).leader).next().flatten();
        let leader_ok = leader.is_some_and(|l| live.iter().any(|&i| world.id(i) == l));
        let bad = live.iter().find(|&&i| {
            let s = world.status(i);
            s.state != State::Normal || s.leader != leader
        });
        let first = live.first().map(|&i| world.id(i));
        let want = "all live nodes should be Normal with one live coordinator";
        let detail = match (leader_ok, bad, first) {
            (true, None, _) | (_, _, None) => return,
            (false, _, Some(first)) => match leader {
                None => format!("node {first} has no coordinator; {want}"),
                Some(c) => format!("node {first}'s coordinator {c} is down; {want}"),
            },
            (true, Some(&i), Some(first)) => {
                let s = world.status(i);
                let (me, now) = (world.id(i), standing(s.state, s.leader));
                if me == first {
                    format!("node {me} is {now}; {want}")
                } else {
                    format!("node {me} is {now}, but node {first} has coordinator {}; {want}", show(leader))
                }
            }
        };
        let node = bad.map(|&i| world.id(i));
        self.report(out, Property::A2, node, detail);
    }

    fn check_node(
        &mut self,
        world: &(impl World + ?Sized),
        i: usize,
        status: Status,
        when: When,
        out: &mut Vec<Violation>,
    ) {
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

    /// The per-process "at end" conditions; `positions` maps the leaders followed to their positions (none: no
    /// process has that id).
    fn check_node_at_end(
        &mut self,
        world: &dyn World,
        positions: &BTreeMap<NodeId, Option<usize>>,
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
        let position = positions.get(&leader).copied().flatten();
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

/// A disjoint-set forest over positions (core depends on no graph crate).
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        Self { parent: (0..n).collect() }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        self.parent[a.max(b)] = a.min(b);
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{fixture, names, normal};
    use super::*;
    use crate::GroupId;

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
        let bad = fixture(vec![Status::normal(None, Epoch::ZERO), normal(9), normal(4), Status::DOWN]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &bad, false).is_empty(), "not settled");
        let v = Monitor::check_state(&checks, Winner::StrongestLive, &bad, true);
        assert_eq!(names(&v), [Property::Liveness, Property::Validity, Property::LiveLeader, Property::Agreement]);
    }

    #[test]
    fn unsettled_runs_skip_their_at_end_properties_with_the_reason() {
        let mut m = Monitor::new(vec![Check::at_end(Property::A2)], Winner::StrongestLive);
        let mut out = Vec::new();
        m.at_end(&fixture(vec![Status::election(Epoch::from_bits(1))]), Some("a crash at t=9".into()), &mut out);
        assert!(out.is_empty());
        assert_eq!(m.skipped(), [Skipped { property: Property::A2, reason: "a crash at t=9".into() }]);
    }

    #[test]
    fn a1_is_incremental_and_ignores_processes_outside_normal() {
        let checks = vec![Check::always(Property::A1)];
        let mut w = fixture(vec![normal(3), Status::election(Epoch::from_bits(1)), normal(3)]);
        let mut m = Monitor::new(checks, Winner::StrongestLive);
        let mut out = Vec::new();
        m.reset(&w, &mut out);
        assert!(out.is_empty());
        let old = w.statuses[1];
        w.statuses[1] = normal(2);
        m.on_change(&w, 1, old, w.statuses[1], &mut out);
        assert_eq!(names(&out), [Property::A1]);
        let detail = &out[0].detail;
        assert_eq!(detail, "node 2 is Normal with coordinator 2 while node 1 is Normal with coordinator 3");
    }

    #[test]
    fn a2_needs_a_self_coordinator_that_everyone_follows() {
        let checks = vec![Check::at_end(Property::A2)];
        let ok = fixture(vec![normal(3), normal(3), normal(3)]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &ok, true).is_empty());
        let waiting = fixture(vec![normal(3), Status::election(Epoch::from_bits(1)), normal(3)]);
        assert_eq!(names(&Monitor::check_state(&checks, Winner::StrongestLive, &waiting, true)), [Property::A2]);
        let dead_leader = fixture(vec![normal(3), normal(3), Status::DOWN]);
        assert_eq!(names(&Monitor::check_state(&checks, Winner::StrongestLive, &dead_leader, true)), [Property::A2]);
    }

    #[test]
    fn one_leader_is_broken_by_two_live_processes_that_each_say_they_lead() {
        let checks = vec![Check::always(Property::OneLeader)];
        // 3 leads, 1 and 2 follow it; 2 then says it leads too (in its own epoch), beside 3.
        let mut w = fixture(vec![normal(3), normal(3), normal(3)]);
        let mut m = Monitor::new(checks.clone(), Winner::StrongestLive);
        let mut out = Vec::new();
        m.reset(&w, &mut out);
        assert!(out.is_empty());
        let old = w.statuses[1];
        w.statuses[1] = Status::normal(Some(NodeId(2)), Epoch::of(2, NodeId(2)));
        m.on_change(&w, 1, old, w.statuses[1], &mut out);
        assert_eq!(names(&out), [Property::OneLeader]);
        assert_eq!(out[0].detail, "nodes 2 (epoch 2.2) and 3 (epoch 0.1) both say they lead");
        // A leader that is down says nothing; followers of two leaders are no second leader.
        let down = fixture(vec![normal(3), Status::normal(Some(NodeId(2)), Epoch::from_bits(1)), Status::DOWN]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &down, false).is_empty());
        let split = fixture(vec![normal(2), normal(2), normal(2), normal(1)]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &split, false).is_empty());
    }

    #[test]
    fn uniqueness_counts_declarations_per_epoch() {
        let checks = vec![Check::always(Property::Uniqueness)];
        let w = fixture(vec![normal(3), normal(3), normal(3)]);
        let mut m = Monitor::new(checks, Winner::StrongestLive);
        let mut out = Vec::new();
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(1) }, &mut out);
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(1) }, &mut out);
        m.on_notice(&w, 1, Notice::Elected { epoch: Epoch::from_bits(2) }, &mut out);
        assert!(out.is_empty());
        m.on_notice(&w, 0, Notice::Elected { epoch: Epoch::from_bits(2) }, &mut out);
        assert_eq!(names(&out), [Property::Uniqueness]);
    }

    #[test]
    fn a_fresh_epoch_is_one_a_process_did_not_declare_before_its_restart() {
        let checks = vec![Check::always(Property::Uniqueness), Check::always(Property::FreshEpoch)];
        let w = fixture(vec![normal(3), normal(3), normal(3)]);
        let mut m = Monitor::new(checks, Winner::StrongestLive);
        let mut out = Vec::new();
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(7) }, &mut out);
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(7) }, &mut out);
        // Another process restarting changes nothing for this one.
        m.on_restart(w.id(1));
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(7) }, &mut out);
        assert!(out.is_empty(), "one life may repeat its own declaration: {out:?}");
        m.on_restart(w.id(2));
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(8) }, &mut out);
        assert!(out.is_empty(), "a new epoch after the restart is fresh: {out:?}");
        m.on_notice(&w, 2, Notice::Elected { epoch: Epoch::from_bits(7) }, &mut out);
        assert_eq!(names(&out), [Property::FreshEpoch]);
        assert!(out[0].detail.contains("before it restarted, and again after"), "{}", out[0].detail);
    }

    fn in_group(leader: u32, counter: u32, creator: u32) -> Status {
        let group = Some(GroupId { counter, creator: NodeId(creator) });
        Status { group, ..normal(leader) }
    }

    #[test]
    fn a3_constrains_members_of_one_group_only() {
        let checks = vec![Check::always(Property::A3)];
        let two_groups = fixture(vec![in_group(1, 1, 1), in_group(1, 1, 1), in_group(3, 1, 3)]);
        assert!(Monitor::check_state(&checks, Winner::StrongestLive, &two_groups, false).is_empty());
        let split = fixture(vec![in_group(1, 1, 1), in_group(2, 1, 1)]);
        let v = Monitor::check_state(&checks, Winner::StrongestLive, &split, false);
        assert_eq!(names(&v), [Property::A3]);
        assert!(v[0].detail.contains("group (1, 1) have two coordinators, 1 and 2"), "{}", v[0].detail);
    }

    #[test]
    fn a_majority_that_can_talk_must_follow_one_of_them_that_leads() {
        let checks = [Check::at_end(Property::MajorityLeader)];
        let judge = |w: &crate::property::fixture::Fixture| {
            names(&Monitor::check_state(&checks, Winner::StrongestLive, w, true))
        };
        // 3 is cut off from 1 and 2 and shows nobody; 1 and 2, a majority of three, follow 2, which leads.
        let mut w = fixture(vec![normal(2), normal(2), Status { leader: None, ..normal(3) }]);
        w.broken = vec![(0, 2), (1, 2)];
        assert_eq!(judge(&w), []);
        // Still following 3, which they cannot talk to, they break it...
        w.statuses = vec![normal(3), normal(3), normal(3)];
        assert_eq!(judge(&w), [Property::MajorityLeader]);
        // ... and so do they when the one they follow does not say it leads.
        w.statuses = vec![normal(2), Status { leader: None, ..normal(2) }, Status { leader: None, ..normal(3) }];
        assert_eq!(judge(&w), [Property::MajorityLeader]);
        // No majority can talk (three singletons): nothing is owed.
        w.broken = vec![(0, 1), (0, 2), (1, 2)];
        assert_eq!(judge(&w), []);
    }

    #[test]
    fn stollers_scenario_violates_a4_and_keeps_a4_prime() {
        // 1 and 3 cannot talk; groups {1, 2} under 1, and {3}.
        let mut w = fixture(vec![in_group(1, 2, 1), in_group(1, 2, 1), in_group(3, 2, 3)]);
        w.broken = vec![(0, 2)];
        let a4 = Monitor::check_state(&[Check::at_end(Property::A4)], Winner::StrongestLive, &w, true);
        assert_eq!(names(&a4), [Property::A4]);
        assert!(a4[0].detail.contains("{2, 3}"), "{}", a4[0].detail);
        let a4p = Monitor::check_state(&[Check::at_end(Property::A4Prime)], Winner::StrongestLive, &w, true);
        assert!(a4p.is_empty(), "{a4p:?}");
        // Three singleton groups exceed the minimum clique cover of two.
        let mut scattered = fixture(vec![in_group(1, 2, 1), in_group(2, 2, 2), in_group(3, 2, 3)]);
        scattered.broken = vec![(0, 2)];
        let v = Monitor::check_state(&[Check::at_end(Property::A4Prime)], Winner::StrongestLive, &scattered, true);
        assert_eq!(names(&v), [Property::A4Prime]);
        assert!(v[0].detail.contains("3 groups"), "{}", v[0].detail);
        // A member whose coordinator is unreachable breaks part (a).
        let mut cut = fixture(vec![in_group(1, 2, 1), in_group(1, 2, 1)]);
        cut.broken = vec![(0, 1)];
        let v = Monitor::check_state(&[Check::at_end(Property::A4Prime)], Winner::StrongestLive, &cut, true);
        assert!(v[0].detail.contains("cannot reach its coordinator 1"), "{v:?}");
    }
}
