//! The checker's memory bound: the process's resident set, as Linux reports it in `/proc/self/status` (`VmRSS`).
//!
//! The resident set is measured rather than estimated from the visited set because most of a search's memory is
//! the frontier's whole states, whose sizes vary with the algorithm. It counts the whole process, so a program that
//! holds other large data checks against a bound that includes it. Where the file cannot be read (not Linux),
//! the bound is not enforced.

/// The process's resident memory in bytes, if the system reports it.
pub(crate) fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A search's memory bound, and the batch size that keeps it: a batch's successors are all held at once before
/// they join the frontier, so under a bound a breadth-first search expands, at a time, only as many states as
/// half the room left holds, at the growth per state measured on the batches before (one state to start), and at
/// most twice the batch before: the resident set may not grow at all while the allocator reuses freed memory, which
/// would otherwise let one huge batch through.
/// Breadth-first numbering does not depend on the batch size, so neither do its results; a depth-first search's
/// order does, so it keeps its fixed batches.
pub(crate) struct Budget {
    limit: Option<u64>,
    most: usize,
    adapt: bool,
    batch: usize,
    /// The resident set when the current batch started.
    before: Option<u64>,
}

impl Budget {
    pub(crate) fn new(limit: Option<u64>, most: usize, dfs: bool) -> Self {
        let adapt = limit.is_some() && !dfs;
        Self { limit, most, adapt, batch: if adapt { 1 } else { most }, before: None }
    }

    /// Whether the resident set has passed the bound (measured here, before a batch).
    pub(crate) fn over(&mut self) -> bool {
        let Some(limit) = self.limit else { return false };
        self.before = resident();
        self.before.is_some_and(|r| r > limit)
    }

    /// The most states to expand in the next batch.
    pub(crate) fn batch(&self) -> usize {
        self.batch
    }

    /// `states` were expanded and merged: sizes the next batch from what they took.
    pub(crate) fn expanded(&mut self, states: usize) {
        let (Some(limit), true, Some(before)) = (self.limit, self.adapt, self.before) else { return };
        let Some(after) = resident() else { return };
        let per_state = (after.saturating_sub(before) / states.max(1) as u64).max(1);
        let room = limit.saturating_sub(after) / 2;
        let fits = usize::try_from(room / per_state).unwrap_or(usize::MAX);
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
                roomy.expanded(1);
            }
            assert_eq!(roomy.batch(), 256);
            assert_eq!(super::Budget::new(Some(1 << 40), 256, true).batch(), 256, "depth-first keeps its batches");
        }
        assert!(!super::Budget::new(None, 256, false).over());
    }
}
