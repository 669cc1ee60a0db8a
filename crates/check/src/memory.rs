//! The checker's memory bound: the process's resident set, as Linux reports it in `/proc/self/status` (`VmRSS`).
//!
//! The resident set is measured rather than estimated from the visited set because most of a search's memory is
//! the frontier's whole states, whose sizes vary with the algorithm. It counts the whole process, so a program that
//! holds other large data checks against a bound that includes it. Where the file cannot be read (not Linux),
//! the bound is not enforced.

use std::time::{Duration, Instant};

/// The process's resident memory in bytes, if the system reports it.
pub(crate) fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A search's memory bound, and the batch size that keeps it: a batch's successors are all held at once before
/// they join the frontier, so under a bound a breadth-first search expands, at a time, only as many states as
/// half the room left holds, at the growth per state last measured, and at most twice the batch before: the
/// resident set may not grow at all while the allocator reuses freed memory, which would otherwise let one huge
/// batch through.
/// Breadth-first numbering does not depend on the batch size, so neither do its results; a depth-first search's
/// order does, so it keeps its fixed batches.
///
/// Reading the resident set costs the kernel some microseconds, as much as expanding a few states, and the search
/// waits for it on one thread: it is read again only after [`INTERVAL`], or sooner once the states expanded since
/// may have grown it by a quarter of the room that was left, at the growth per state measured last.
pub(crate) struct Budget {
    limit: Option<u64>,
    most: usize,
    adapt: bool,
    batch: usize,
    /// The last measurement, and when it was taken.
    resident: Option<(u64, Instant)>,
    /// States expanded since the last measurement.
    since: u64,
    /// Growth per state, in bytes, over the states expanded between the last two measurements (pessimistic until
    /// then, so that the first batches are measured).
    per_state: u64,
}

/// The longest a search goes without measuring its resident set.
const INTERVAL: Duration = Duration::from_millis(5);

impl Budget {
    pub(crate) fn new(limit: Option<u64>, most: usize, dfs: bool) -> Self {
        let adapt = limit.is_some() && !dfs;
        let batch = if adapt { 1 } else { most };
        Self { limit, most, adapt, batch, resident: None, since: 0, per_state: 1 << 20 }
    }

    /// Whether the resident set has passed the bound (measured here, before a batch, when due).
    pub(crate) fn over(&mut self) -> bool {
        let Some(limit) = self.limit else { return false };
        let due = match self.resident {
            None => true,
            Some((rss, at)) => {
                at.elapsed() >= INTERVAL || self.since.saturating_mul(self.per_state) >= limit.saturating_sub(rss) / 4
            }
        };
        if due {
            let Some(now) = resident() else { return false };
            if let Some((before, _)) = self.resident.filter(|_| self.since > 0) {
                self.per_state = (now.saturating_sub(before) / self.since).max(1);
            }
            (self.resident, self.since) = (Some((now, Instant::now())), 0);
        }
        self.resident.is_some_and(|(rss, _)| rss > limit)
    }

    /// The bytes the next batch's successors may take: the room the last measurement left, less what the states
    /// expanded since may have taken (all the memory there is, without a bound).
    pub(crate) fn room(&self) -> usize {
        let Some(limit) = self.limit else { return usize::MAX };
        let rss = self.resident.map_or(0, |(rss, _)| rss);
        let taken = rss.saturating_add(self.since.saturating_mul(self.per_state));
        usize::try_from(limit.saturating_sub(taken)).unwrap_or(usize::MAX)
    }

    /// The most states to expand in the next batch.
    pub(crate) fn batch(&self) -> usize {
        self.batch
    }

    /// `states` were expanded and merged: sizes the next batch from the room the last measurement left, less what
    /// the states expanded since may have taken.
    pub(crate) fn expanded(&mut self, states: usize) {
        self.since = self.since.saturating_add(states as u64);
        let (Some(limit), true, Some((rss, _))) = (self.limit, self.adapt, self.resident) else { return };
        let taken = rss.saturating_add(self.since.saturating_mul(self.per_state));
        let room = limit.saturating_sub(taken) / 2;
        let fits = usize::try_from(room / self.per_state).unwrap_or(usize::MAX);
        self.batch = fits.min(self.batch.saturating_mul(2)).clamp(1, self.most);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_resident_set_is_measured_on_linux() {
        if cfg!(target_os = "linux") {
            let r = super::resident().expect("Linux reports VmRSS");
            assert!(r > 0 && r < 1 << 40, "{r}");
            assert!(super::Budget::new(Some(1), 256, false).over());
            let mut roomy = super::Budget::new(Some(1 << 40), 256, false);
            assert_eq!(roomy.batch(), 1, "a bounded breadth-first search starts with one state");
            assert!(!roomy.over());
            roomy.expanded(1);
            assert_eq!(roomy.batch(), 2, "it at most doubles");
            for _ in 0..10 {
                assert!(!roomy.over());
                roomy.expanded(1);
            }
            assert_eq!(roomy.batch(), 256);
            let mut tight = super::Budget::new(Some(super::resident().unwrap() + (64 << 20)), 256, false);
            assert!(!tight.over());
            for _ in 0..10 {
                tight.expanded(1);
            }
            assert!(tight.batch() < 64, "at a megabyte a state until measured, 64 states would take the room");
            assert_eq!(super::Budget::new(Some(1 << 40), 256, true).batch(), 256, "depth-first keeps its batches");
        }
        assert!(!super::Budget::new(None, 256, false).over());
    }
}
