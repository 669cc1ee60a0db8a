//! `--change-voters`: in every round, while the fault holds, the voters grow by one member or shrink by one,
//! through `elect voters` as an operator would run it, and what each change cost.
//!
//! The voters take turns growing from `--voters K` (members 1 to K) up to every member, adding the member with the
//! lowest id that does not vote, then shrinking back to K, removing the member the others agree leads (so that
//! every shrink hands leadership over first). A change is asked of the members on the side that should go on
//! electing, once they agree on a leader; one that fails (refused or given up) is asked again, once, of every
//! member after the heal. A change that fails twice fails the run: on a healed cluster, every change must be done.
//! After each change the voters are read back from the leader (`GET /voters`): the run follows what the members
//! hold, not what it asked for.

use std::collections::BTreeSet;
use std::time::Instant;

use super::report::{ChangeRound, ms};

/// One change of the voters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Change {
    Add(u32),
    Remove(u32),
}

impl Change {
    /// The flag of `elect voters` that asks for it.
    pub(super) fn args(self) -> [String; 2] {
        match self {
            Self::Add(id) => ["--add".into(), id.to_string()],
            Self::Remove(id) => ["--remove".into(), id.to_string()],
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Add(id) => write!(f, "add {id}"),
            Self::Remove(id) => write!(f, "remove {id}"),
        }
    }
}

/// A change asked and not yet recorded.
struct Pending {
    change: Change,
    round: u32,
    under: String,
    before: Vec<u32>,
    /// When it was first asked.
    asked: Instant,
    tries: u32,
    /// The number of the `elect voters` process now running for it, matched against [`super::fleet::Event`]s.
    attempt: u32,
    /// How the current try ended: when, and whether it succeeded.
    ended: Option<(Instant, bool)>,
}

/// The voters as the members last told them, the next change, and the changes done.
pub(super) struct Changes {
    voters: BTreeSet<u32>,
    /// The fewest voters: the run starts with them, and shrinks back to them.
    low: usize,
    /// Every member.
    high: u32,
    growing: bool,
    pending: Option<Pending>,
    /// Counts the `elect voters` processes started.
    attempts: u32,
    pub(super) rounds: Vec<ChangeRound>,
}

impl Changes {
    /// Members 1 to `low` vote, of 1 to `high`.
    pub(super) fn new(low: u32, high: u32) -> Self {
        Self {
            voters: (1..=low).collect(),
            low: low as usize,
            high,
            growing: true,
            pending: None,
            attempts: 0,
            rounds: Vec::new(),
        }
    }

    /// The voters, as member indexes (from 0).
    pub(super) fn indexes(&self) -> Vec<usize> {
        self.voters.iter().map(|&v| v as usize - 1).collect()
    }

    /// The change the cycle asks for next, with `leader` leading (a shrink removes it).
    pub(super) fn next(&self, leader: Option<u32>) -> Change {
        if self.growing {
            let id = (1..=self.high).find(|id| !self.voters.contains(id)).unwrap_or(self.high);
            Change::Add(id)
        } else {
            let strongest = self.voters.iter().copied().max().unwrap_or(1);
            Change::Remove(leader.filter(|l| self.voters.contains(l)).unwrap_or(strongest))
        }
    }

    /// A change is asked for the first time: returns the number of its `elect voters` process.
    pub(super) fn asked(&mut self, change: Change, round: u32, under: &str, at: Instant) -> u32 {
        self.attempts += 1;
        self.pending = Some(Pending {
            change,
            round,
            under: under.to_owned(),
            before: self.voters.iter().copied().collect(),
            asked: at,
            tries: 1,
            attempt: self.attempts,
            ended: None,
        });
        self.attempts
    }

    /// The pending change is asked again: returns the number of its new `elect voters` process, and the change.
    pub(super) fn asked_again(&mut self) -> Option<(u32, Change)> {
        let p = self.pending.as_mut()?;
        self.attempts += 1;
        p.tries += 1;
        p.attempt = self.attempts;
        p.ended = None;
        Some((self.attempts, p.change))
    }

    /// Whether a change was asked in this round and not yet recorded.
    pub(super) fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The `elect voters` process number `attempt` ended at `at`.
    pub(super) fn ended(&mut self, attempt: u32, at: Instant, ok: bool) {
        if let Some(p) = &mut self.pending
            && p.attempt == attempt
        {
            p.ended = Some((at, ok));
        }
    }

    /// How the current try ended, if it has: whether it succeeded.
    pub(super) fn outcome(&self) -> Option<bool> {
        self.pending.as_ref()?.ended.map(|(_, ok)| ok)
    }

    /// When the change was first asked, and when its last try ended.
    pub(super) fn span(&self) -> Option<(Instant, Instant)> {
        let p = self.pending.as_ref()?;
        Some((p.asked, p.ended.map_or_else(Instant::now, |(at, _)| at)))
    }

    /// Records the pending change, with the voters the leader holds after it and how long the members were
    /// without a leader meanwhile; the cycle turns at either end. Returns whether it was done: `elect voters`
    /// said so, and the leader holds the voters before with the member added or removed.
    pub(super) fn record(&mut self, voters: BTreeSet<u32>, leaderless_ms: f64) -> bool {
        let Some(p) = self.pending.take() else { return true };
        let mut expected: BTreeSet<u32> = p.before.iter().copied().collect();
        match p.change {
            Change::Add(id) => expected.insert(id),
            Change::Remove(id) => expected.remove(&id),
        };
        let done = p
            .ended
            .filter(|&(_, ok)| ok && voters == expected)
            .map(|(at, _)| ms(at.saturating_duration_since(p.asked)));
        self.voters = voters;
        if self.voters.len() >= self.high as usize {
            self.growing = false;
        } else if self.voters.len() <= self.low {
            self.growing = true;
        }
        self.rounds.push(ChangeRound {
            round: p.round,
            change: p.change.to_string(),
            under: p.under,
            before: p.before,
            after: self.voters.iter().copied().collect(),
            tries: p.tries,
            done_ms: done,
            leaderless_ms,
        });
        done.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_voters_grow_to_every_member_then_shrink_back_removing_the_leader() {
        let mut c = Changes::new(3, 5);
        let now = Instant::now();
        let mut seen = Vec::new();
        let mut voters: BTreeSet<u32> = (1..=3).collect();
        for _ in 0..6 {
            let leader = voters.iter().copied().max();
            let change = c.next(leader);
            seen.push(change.to_string());
            let attempt = c.asked(change, 1, "-", now);
            c.ended(attempt, now, true);
            match change {
                Change::Add(id) => voters.insert(id),
                Change::Remove(id) => voters.remove(&id),
            };
            assert!(c.record(voters.clone(), 0.0));
        }
        assert_eq!(seen, ["add 4", "add 5", "remove 5", "remove 4", "add 4", "add 5"]);
    }

    #[test]
    fn a_change_that_failed_is_asked_again_and_only_the_current_try_counts() {
        let mut c = Changes::new(3, 4);
        let now = Instant::now();
        let first = c.asked(Change::Add(4), 2, "split", now);
        c.ended(first, now, false);
        assert_eq!(c.outcome(), Some(false));
        let (second, change) = c.asked_again().unwrap();
        assert_eq!(change, Change::Add(4));
        assert_eq!(c.outcome(), None);
        c.ended(first, now, true);
        assert_eq!(c.outcome(), None, "a late word of the first try is not the second's");
        c.ended(second, now, false);
        assert!(!c.record((1..=3).collect(), 12.5));
        assert_eq!(c.rounds[0].tries, 2);
        assert_eq!(c.rounds[0].done_ms, None);
        assert_eq!(c.next(Some(3)), Change::Add(4), "the cycle does not turn on a change not done");
    }

    #[test]
    fn a_change_said_done_whose_voters_are_not_the_ones_asked_for_is_not_done() {
        let mut c = Changes::new(3, 5);
        let now = Instant::now();
        let attempt = c.asked(Change::Add(4), 1, "-", now);
        c.ended(attempt, now, true);
        assert!(!c.record((1..=3).collect(), 0.0));
        assert_eq!(c.rounds[0].done_ms, None);
    }
}
