//! The processes' timers, as the simulator keeps them: one pending deadline per (process, timer kind), each arming
//! numbered so that the queue's event for an older arming is recognized as stale when it comes up, and every
//! duration drawn from its span with the run's timer stream.

use std::collections::BTreeMap;

use elect_core::Span;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The armed timers of every process.
pub(crate) struct Timers<T> {
    /// Per (position, timer kind), the number of its current arming.
    armed: BTreeMap<(u32, T), u64>,
    /// The number of the latest arming.
    seq: u64,
    /// The stream durations are drawn from.
    jitter: ChaCha8Rng,
}

impl<T: Copy + Ord> Timers<T> {
    /// No timer armed; durations drawn from `jitter`.
    pub(crate) fn new(jitter: ChaCha8Rng) -> Self {
        Self { armed: BTreeMap::new(), seq: 0, jitter }
    }

    /// Arms (or re-arms) `timer` of `node` for a duration drawn from `span`: returns the duration in ticks and the
    /// arming's number, which the queued event carries.
    pub(crate) fn arm(&mut self, node: u32, timer: T, span: Span) -> (u64, u64) {
        let after = span.draw(|range| self.jitter.random_range(range)).ticks();
        self.seq += 1;
        self.armed.insert((node, timer), self.seq);
        (after, self.seq)
    }

    /// Disarms `timer` of `node`: whether it was armed.
    pub(crate) fn cancel(&mut self, node: u32, timer: T) -> bool {
        self.armed.remove(&(node, timer)).is_some()
    }

    /// Whether arming `seq` of `timer` of `node` is still the current one (not cancelled or re-armed since).
    pub(crate) fn is_armed(&self, node: u32, timer: T, seq: u64) -> bool {
        self.armed.get(&(node, timer)) == Some(&seq)
    }

    /// The deadline of arming `seq` has come: whether it fires (it is still current), disarming it if so.
    pub(crate) fn fire(&mut self, node: u32, timer: T, seq: u64) -> bool {
        let current = self.is_armed(node, timer, seq);
        if current {
            self.armed.remove(&(node, timer));
        }
        current
    }

    /// Disarms every timer of `node` (it crashed).
    pub(crate) fn clear(&mut self, node: u32) {
        self.armed.retain(|&(n, _), _| n != node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_core::Duration;
    use rand::SeedableRng;

    fn timers() -> Timers<u8> {
        Timers::new(ChaCha8Rng::seed_from_u64(1))
    }

    #[test]
    fn only_the_latest_arming_fires_and_only_once() {
        let mut t = timers();
        let (after, first) = t.arm(0, 7, Span::exactly(Duration::from_ticks(5)));
        assert_eq!(after, 5);
        let (_, second) = t.arm(0, 7, Span::exactly(Duration::from_ticks(5)));
        assert_ne!(first, second);
        assert!(!t.fire(0, 7, first), "a re-armed timer's old deadline is stale");
        assert!(t.is_armed(0, 7, second));
        assert!(t.fire(0, 7, second));
        assert!(!t.fire(0, 7, second), "a timer fires once per arming");
    }

    #[test]
    fn cancelling_and_crashing_disarm() {
        let mut t = timers();
        let span = Span::exactly(Duration::from_ticks(1));
        let (_, a) = t.arm(0, 1, span);
        let (_, b) = t.arm(1, 1, span);
        let (_, c) = t.arm(1, 2, span);
        t.cancel(0, 1);
        assert!(!t.is_armed(0, 1, a));
        t.clear(1);
        assert!(!t.is_armed(1, 1, b) && !t.is_armed(1, 2, c));
    }

    #[test]
    fn durations_are_drawn_from_the_span_with_the_given_stream() {
        let span = Span::between(Duration::from_ticks(10), Duration::from_ticks(20));
        let draws = |seed| {
            let mut t = Timers::new(ChaCha8Rng::seed_from_u64(seed));
            (0..50).map(|_| t.arm(0, 0u8, span).0).collect::<Vec<_>>()
        };
        assert!(draws(3).iter().all(|d| (10..=20).contains(d)));
        assert_eq!(draws(3), draws(3));
        assert_ne!(draws(3), draws(4));
    }
}
