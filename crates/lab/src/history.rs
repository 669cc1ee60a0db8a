//! Judging a cluster's leadership history, as a test harness or an operator would: what every member said about
//! its leadership over time, and what a fencing store accepted.
//!
//! A history is a list of [`Entry`]s: at a monotonic instant, member `m` showed leader `l` (or none) under
//! fencing epoch `e`; `m` leads when `l = m`. Entries come from every process a member ran, restarts included,
//! in the order they were observed. [`judge`] finds what must never happen:
//!
//! - **same-epoch leaders**: two different leaders named under one epoch (by the leaders themselves or by their
//!   followers). Every grant's epoch is unique to its granter, so this is a broken fencing promise;
//! - **epoch regressions**: a member showing an epoch lower than one it showed before, across its restarts too;
//! - **stale writes accepted**: a fencing store that accepted a write under an epoch lower than one it had
//!   accepted before (the store's one promise, checked here from its log rather than trusted).
//!
//! [`availability`], [`leaderless_ms`] and [`agreed_at`] measure what should happen: a side of the cluster (the members that can
//! reach one another, the majority while a fault holds) agreeing on one live leader. [`overlap`] measures how long
//! two members both said they led, in any epochs: what fencing epochs make safe for a resource that checks them,
//! and what an application without such a resource must not see.
//!
//! The functions are pure: no clock, no I/O. `elect cluster` records the history of its members and judges it.

use std::collections::{BTreeMap, BTreeSet};

use elect_core::Epoch;
use serde::Serialize;

/// What one member showed at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// Milliseconds since the history began, on a monotonic clock.
    pub at_ms: f64,
    /// The member that showed it.
    pub member: u32,
    /// The leader it showed, if any.
    pub leader: Option<u32>,
    /// The fencing epoch of that leadership (with no leader: the last epoch it knew).
    pub epoch: Epoch,
}

impl Entry {
    /// Whether the member showed itself as the leader.
    pub fn leads(&self) -> bool {
        self.leader == Some(self.member)
    }
}

/// A write a fencing store answered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Write {
    /// Milliseconds since the history began.
    pub at_ms: f64,
    /// The member that wrote.
    pub writer: u32,
    /// The epoch it wrote under.
    pub epoch: Epoch,
    /// Whether the store accepted it.
    pub accepted: bool,
}

/// Two or more leaders named under one epoch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SameEpoch {
    /// The epoch.
    pub epoch: Epoch,
    /// The leaders named under it, ascending.
    pub leaders: Vec<u32>,
    /// Who named whom: member → leader, the last each named under this epoch.
    pub named_by: BTreeMap<u32, u32>,
}

/// A member's epoch went backwards.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Regression {
    /// The member.
    pub member: u32,
    /// When.
    pub at_ms: f64,
    /// The highest epoch it had shown before.
    pub from: Epoch,
    /// The lower epoch it showed then.
    pub to: Epoch,
}

/// A write accepted under an epoch lower than one accepted before it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StaleWrite {
    /// The write.
    pub write: Write,
    /// The highest epoch the store had accepted before it.
    pub highest: Epoch,
}

/// The safety verdicts on a history.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Judgement {
    /// Epochs under which more than one leader was named.
    pub same_epoch_leaders: Vec<SameEpoch>,
    /// Members whose epoch went backwards.
    pub epoch_regressions: Vec<Regression>,
    /// Writes accepted under a stale epoch.
    pub stale_writes_accepted: Vec<StaleWrite>,
}

impl Judgement {
    /// Whether the history broke no safety property.
    pub fn holds(&self) -> bool {
        self.same_epoch_leaders.is_empty() && self.epoch_regressions.is_empty() && self.stale_writes_accepted.is_empty()
    }
}

/// Judges a history's safety. `entries` and `writes` are each in the order they were observed.
pub fn judge(entries: &[Entry], writes: &[Write]) -> Judgement {
    let mut named: BTreeMap<Epoch, BTreeMap<u32, u32>> = BTreeMap::new();
    let mut highest: BTreeMap<u32, Epoch> = BTreeMap::new();
    let mut epoch_regressions = Vec::new();
    for e in entries {
        if let Some(leader) = e.leader {
            named.entry(e.epoch).or_default().insert(e.member, leader);
        }
        let top = highest.entry(e.member).or_insert(e.epoch);
        if e.epoch < *top {
            epoch_regressions.push(Regression { member: e.member, at_ms: e.at_ms, from: *top, to: e.epoch });
        }
        *top = (*top).max(e.epoch);
    }
    let same_epoch_leaders = named
        .into_iter()
        .filter_map(|(epoch, named_by)| {
            let leaders: BTreeSet<u32> = named_by.values().copied().collect();
            (leaders.len() > 1).then(|| SameEpoch { epoch, leaders: leaders.into_iter().collect(), named_by })
        })
        .collect();
    let mut accepted_top: Option<Epoch> = None;
    let mut stale_writes_accepted = Vec::new();
    for w in writes.iter().filter(|w| w.accepted) {
        match accepted_top {
            Some(top) if w.epoch < top => stale_writes_accepted.push(StaleWrite { write: *w, highest: top }),
            _ => accepted_top = Some(w.epoch),
        }
    }
    Judgement { same_epoch_leaders, epoch_regressions, stale_writes_accepted }
}

/// Which members form the side being measured, from an instant on: the members that run and can reach one
/// another (while a fault holds, the majority's side; otherwise every member).
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// From when, in milliseconds since the history began.
    pub from_ms: f64,
    /// The members, ascending.
    pub members: Vec<u32>,
}

/// What each member showed last, as entries are replayed in order.
#[derive(Default)]
struct Latest(BTreeMap<u32, (Option<u32>, Epoch)>);

impl Latest {
    fn apply(&mut self, e: &Entry) {
        self.0.insert(e.member, (e.leader, e.epoch));
    }

    /// The leader every member of `side` shows, under one epoch, if the leader is in `side` and shows itself
    /// leading under that epoch.
    fn agreed(&self, side: &[u32]) -> Option<(u32, Epoch)> {
        let first = *self.0.get(side.first()?)?;
        let (Some(leader), epoch) = first else { return None };
        let all = side.iter().all(|m| self.0.get(m) == Some(&first));
        (all && side.contains(&leader)).then_some((leader, epoch))
    }
}

/// The fraction of the time from the first side's start to `end_ms` during which the side in force agreed on
/// one live leader of its own. `sides` is in time order; `None` without a side or an empty span.
pub fn availability(entries: &[Entry], sides: &[Side], end_ms: f64) -> Option<f64> {
    let start = sides.first()?.from_ms;
    if end_ms <= start {
        return None;
    }
    let up = (end_ms - start) - leaderless_ms(entries, sides, start, end_ms);
    Some((up / (end_ms - start)).clamp(0.0, 1.0))
}

/// How long, from `from_ms` to `to_ms`, the side in force did not agree on one live leader of its own (in
/// milliseconds). `sides` is in time order; before the first side, the side is empty and has no leader.
pub fn leaderless_ms(entries: &[Entry], sides: &[Side], from_ms: f64, to_ms: f64) -> f64 {
    let mut latest = Latest::default();
    let mut side: &[u32] = &[];
    let (mut e, mut s) = (0, 0);
    let mut t = from_ms;
    let mut down = 0.0;
    while t < to_ms {
        // Everything at or before `t` applies; then the state holds until the next change.
        while e < entries.len() && entries[e].at_ms <= t {
            latest.apply(&entries[e]);
            e += 1;
        }
        while s < sides.len() && sides[s].from_ms <= t {
            side = &sides[s].members;
            s += 1;
        }
        let next = [entries.get(e).map(|x| x.at_ms), sides.get(s).map(|x| x.from_ms)]
            .into_iter()
            .flatten()
            .fold(to_ms, f64::min);
        if latest.agreed(side).is_none() {
            down += next - t;
        }
        t = next;
    }
    down
}

/// The first instant at or after `from_ms` at which every member of `side` shows the same live leader (one of
/// them, leading under that epoch), with that leader and epoch; `None` if it never happens in `entries`.
pub fn agreed_at(entries: &[Entry], side: &[u32], from_ms: f64) -> Option<(f64, u32, Epoch)> {
    let mut latest = Latest::default();
    let mut i = 0;
    while i < entries.len() && entries[i].at_ms <= from_ms {
        latest.apply(&entries[i]);
        i += 1;
    }
    if let Some((l, e)) = latest.agreed(side) {
        return Some((from_ms, l, e));
    }
    entries[i..].iter().find_map(|entry| {
        latest.apply(entry);
        latest.agreed(side).map(|(l, e)| (entry.at_ms, l, e))
    })
}

/// A span during which a member's process could say nothing and do nothing: it was killed (`to_ms` is then when
/// its next process started, or infinity), or paused (SIGSTOP to SIGCONT). What it said before the silence does
/// not stand during it; after a pause, it stands again until the member says otherwise; after a kill, the next
/// process claims nothing until it says so.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Silence {
    /// The member.
    pub member: u32,
    /// From when, in milliseconds since the history began.
    pub from_ms: f64,
    /// Until when.
    pub to_ms: f64,
    /// Whether the process was killed (rather than paused).
    pub killed: bool,
}

/// How long two or more members both said they led.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Overlap {
    /// In all, in milliseconds.
    pub total_ms: f64,
    /// The longest stretch, in milliseconds.
    pub longest_ms: f64,
    /// How many separate stretches.
    pub stretches: usize,
}

/// How long, up to `end_ms`, two or more members both said they led, in any epochs. A member says it leads from a
/// line in which it shows itself leader to its next line, except while it is silent (`silences`). `entries` is
/// in the order observed.
pub fn overlap(entries: &[Entry], silences: &[Silence], end_ms: f64) -> Overlap {
    // Each member's claims, [from, to).
    let mut claims: Vec<(f64, f64)> = Vec::new();
    let mut open: BTreeMap<u32, f64> = BTreeMap::new();
    for e in entries {
        if let Some(from) = open.remove(&e.member) {
            claims.extend(cut(e.member, from, e.at_ms, silences));
        }
        if e.leads() {
            open.insert(e.member, e.at_ms);
        }
    }
    for (member, from) in open {
        claims.extend(cut(member, from, end_ms, silences));
    }
    // Sweep the claims' ends in time order, counting the claims in force.
    let mut edges: Vec<(f64, i32)> =
        claims.iter().filter(|(a, b)| a < b).flat_map(|&(a, b)| [(a.min(end_ms), 1), (b.min(end_ms), -1)]).collect();
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut result = Overlap::default();
    let (mut count, mut since) = (0, 0.0);
    for (t, delta) in edges {
        let before = count;
        count += delta;
        if before < 2 && count >= 2 {
            since = t;
        } else if before >= 2 && count < 2 && t > since {
            result.total_ms += t - since;
            result.longest_ms = result.longest_ms.max(t - since);
            result.stretches += 1;
        }
    }
    result
}

/// Member `member`'s claim over [`from`, `to`), less its silences; a kill ends the claim for good.
fn cut(member: u32, from: f64, to: f64, silences: &[Silence]) -> Vec<(f64, f64)> {
    let mut mine: Vec<&Silence> = silences.iter().filter(|s| s.member == member && s.to_ms > from).collect();
    mine.sort_by(|a, b| a.from_ms.total_cmp(&b.from_ms));
    let mut parts = Vec::new();
    let mut start = from;
    for s in mine {
        if s.from_ms >= to {
            break;
        }
        if s.from_ms > start {
            parts.push((start, s.from_ms));
        }
        if s.killed {
            return parts;
        }
        start = start.max(s.to_ms);
    }
    if start < to {
        parts.push((start, to));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at_ms: f64, member: u32, leader: Option<u32>, epoch: u64) -> Entry {
        Entry { at_ms, member, leader, epoch: Epoch::from_bits(epoch) }
    }

    fn write(at_ms: f64, writer: u32, epoch: u64, accepted: bool) -> Write {
        Write { at_ms, writer, epoch: Epoch::from_bits(epoch), accepted }
    }

    #[test]
    fn a_clean_failover_breaks_nothing() {
        let h = [
            at(0.0, 3, Some(3), 10),
            at(0.1, 1, Some(3), 10),
            at(0.2, 2, Some(3), 10),
            at(50.0, 2, Some(2), 20),
            at(50.5, 1, Some(2), 20),
            at(90.0, 3, Some(2), 20),
        ];
        let w = [write(1.0, 3, 10, true), write(60.0, 2, 20, true), write(70.0, 3, 10, false)];
        let j = judge(&h, &w);
        assert!(j.holds(), "{j:?}");
    }

    #[test]
    fn two_leaders_in_one_epoch_are_found() {
        let h = [at(0.0, 1, Some(1), 7), at(1.0, 2, Some(2), 7), at(2.0, 3, Some(2), 7)];
        let j = judge(&h, &[]);
        assert_eq!(j.same_epoch_leaders.len(), 1);
        let v = &j.same_epoch_leaders[0];
        assert_eq!((v.epoch, v.leaders.clone()), (Epoch::from_bits(7), vec![1, 2]));
        assert_eq!(v.named_by, BTreeMap::from([(1, 1), (2, 2), (3, 2)]));
        assert!(!j.holds());
    }

    #[test]
    fn followers_naming_different_leaders_in_one_epoch_are_found() {
        let h = [at(0.0, 1, Some(3), 9), at(1.0, 2, Some(4), 9)];
        assert_eq!(judge(&h, &[]).same_epoch_leaders[0].leaders, vec![3, 4]);
    }

    #[test]
    fn an_epoch_that_goes_backwards_across_a_restart_is_found() {
        // Member 2 showed epoch 30, was killed, and its next process showed 20.
        let h = [at(0.0, 2, Some(3), 30), at(5.0, 2, None, 30), at(9.0, 2, Some(2), 20), at(12.0, 2, Some(2), 40)];
        let j = judge(&h, &[]);
        assert_eq!(
            j.epoch_regressions,
            vec![Regression { member: 2, at_ms: 9.0, from: Epoch::from_bits(30), to: Epoch::from_bits(20) }]
        );
        assert!(j.same_epoch_leaders.is_empty());
    }

    #[test]
    fn a_stale_write_the_store_accepted_is_found() {
        let w = [write(0.0, 3, 10, true), write(1.0, 2, 20, true), write(2.0, 3, 10, true), write(3.0, 3, 10, false)];
        let j = judge(&[], &w);
        assert_eq!(j.stale_writes_accepted, vec![StaleWrite { write: w[2], highest: Epoch::from_bits(20) }]);
    }

    #[test]
    fn equal_epochs_are_not_stale() {
        let w = [write(0.0, 3, 10, true), write(1.0, 3, 10, true)];
        assert!(judge(&[], &w).holds());
    }

    #[test]
    fn availability_counts_the_time_a_side_agrees_on_a_live_leader() {
        let all = Side { from_ms: 0.0, members: vec![1, 2, 3] };
        let h = [
            at(10.0, 3, Some(3), 1),
            at(10.0, 1, Some(3), 1),
            at(20.0, 2, Some(3), 1), // all agree from 20
            at(60.0, 2, None, 1),    // 2 loses the leader: 60..70 unavailable
            at(70.0, 2, Some(3), 1),
        ];
        let a = availability(&h, std::slice::from_ref(&all), 100.0).unwrap();
        assert!((a - 0.7).abs() < 1e-9, "{a}");
        // With the leader cut off from 40 on, the side {1, 2} follows a leader outside it: unavailable.
        let cut = Side { from_ms: 40.0, members: vec![1, 2] };
        let a = availability(&h, &[all.clone(), cut], 100.0).unwrap();
        assert!((a - 0.2).abs() < 1e-9, "{a}");
        // Measured from the first side's start: from 50 on, 50..60 and 70..100 of 50 ms.
        let late = Side { from_ms: 50.0, ..all };
        let a = availability(&h, &[late], 100.0).unwrap();
        assert!((a - 0.8).abs() < 1e-9, "{a}");
        assert_eq!(availability(&h, &[], 100.0), None);
        // Within one window: 0..20 before all agree, and 60..70.
        let all = Side { from_ms: 0.0, members: vec![1, 2, 3] };
        assert!((leaderless_ms(&h, std::slice::from_ref(&all), 0.0, 100.0) - 30.0).abs() < 1e-9);
        assert!((leaderless_ms(&h, std::slice::from_ref(&all), 30.0, 65.0) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn a_leader_that_does_not_lead_is_no_agreement() {
        let side = [Side { from_ms: 0.0, members: vec![1, 2] }];
        // Both follow 2 under epoch 5, but 2 itself shows epoch 4: not one leadership.
        let h = [at(0.0, 1, Some(2), 5), at(0.0, 2, Some(2), 4)];
        assert_eq!(availability(&h, &side, 10.0), Some(0.0));
        assert_eq!(agreed_at(&h, &[1, 2], 0.0), None);
    }

    #[test]
    fn agreement_after_a_heal_is_timed_from_the_heal() {
        let h = [
            at(0.0, 1, Some(2), 5),
            at(0.0, 2, Some(2), 5),
            at(0.0, 3, Some(3), 6),
            at(30.0, 2, Some(3), 6),
            at(31.0, 1, Some(3), 6),
        ];
        assert_eq!(agreed_at(&h, &[1, 2, 3], 10.0), Some((31.0, 3, Epoch::from_bits(6))));
        assert_eq!(agreed_at(&h, &[1, 2], 0.0), Some((0.0, 2, Epoch::from_bits(5))));
        assert_eq!(agreed_at(&h[..4], &[1, 2, 3], 10.0), None);
    }

    #[test]
    fn overlap_counts_the_time_two_members_both_said_they_led() {
        // 3 leads from 0; cut off at 10, it goes on saying so until 40, while 2 leads from 25.
        let h = [
            at(0.0, 3, Some(3), 10),
            at(0.0, 1, Some(3), 10),
            at(25.0, 2, Some(2), 20),
            at(26.0, 1, Some(2), 20),
            at(40.0, 3, Some(2), 20),
            // Later, 1 leads briefly beside 2, twice.
            at(60.0, 1, Some(1), 30),
            at(62.0, 1, Some(2), 30),
            at(70.0, 1, Some(1), 40),
            at(71.0, 1, None, 40),
        ];
        let o = overlap(&h, &[], 100.0);
        assert_eq!(o, Overlap { total_ms: 18.0, longest_ms: 15.0, stretches: 3 });
        // Followers' views and one leader at a time are no overlap.
        assert_eq!(overlap(&h[..2], &[], 100.0), Overlap::default());
        // A claim still open at the end counts up to the end.
        assert_eq!(overlap(&h[..3], &[], 30.0), Overlap { total_ms: 5.0, longest_ms: 5.0, stretches: 1 });
    }

    #[test]
    fn a_paused_or_killed_member_says_nothing_while_it_is_silent() {
        let h = [at(0.0, 3, Some(3), 10), at(25.0, 2, Some(2), 20), at(50.0, 3, Some(2), 20)];
        // 3 paused from 10 to 45: it claims again from 45 until its line at 50.
        let pause = Silence { member: 3, from_ms: 10.0, to_ms: 45.0, killed: false };
        assert_eq!(overlap(&h, &[pause], 100.0), Overlap { total_ms: 5.0, longest_ms: 5.0, stretches: 1 });
        // Killed at 10: its claim ends there, even if its next process starts before its old line would have.
        let kill = Silence { member: 3, from_ms: 10.0, to_ms: 30.0, killed: true };
        assert_eq!(overlap(&h, &[kill], 100.0), Overlap::default());
        // A silence of another member, or one after the claim ended, changes nothing.
        let other = Silence { member: 1, from_ms: 0.0, to_ms: 100.0, killed: true };
        let later = Silence { member: 3, from_ms: 60.0, to_ms: 70.0, killed: true };
        assert_eq!(overlap(&h, &[other, later], 100.0), overlap(&h, &[], 100.0));
    }
}
