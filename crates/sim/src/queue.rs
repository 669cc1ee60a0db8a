//! The event queue: events ordered by (time, class, insertion order).
//!
//! Delays are small integers of ticks, and time only moves forward, so the near future is a timing wheel: one slot
//! per tick of a window of [`WINDOW`] ticks, each slot a FIFO list per class, and a bitmap to find the next
//! occupied slot. The lists are threaded through one arena of entries with a free list, so memory follows the
//! number of events in flight, not the number of slots ever used, and pushing or popping allocates nothing once
//! the arena has grown. Events beyond the window (long timers, exponential tails) wait in a binary heap and move
//! into the wheel when the window reaches them, before anything else can be pushed at their time, so the order
//! stays exact.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Event classes, in the order they run at equal times.
pub(crate) const CLASSES: usize = 4;

/// Ticks covered by the wheel (a power of two).
const WINDOW: u64 = 1 << 14;
const WORDS: usize = (WINDOW / 64) as usize;
const NIL: u32 = u32::MAX;

/// An arena entry: an event and the next entry of its list.
struct Entry<E> {
    next: u32,
    event: Option<E>,
}

/// A FIFO list of arena entries.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY: List = List { head: NIL, tail: NIL };

struct Far<E> {
    time: u64,
    class: u8,
    seq: u64,
    event: E,
}

impl<E> Far<E> {
    fn key(&self) -> (u64, u8, u64) {
        (self.time, self.class, self.seq)
    }
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Far<E> {
    /// Reversed: `BinaryHeap` is a max-heap and the earliest event must come out first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A monotone priority queue of events keyed by time and class, FIFO within a key.
pub(crate) struct EventQueue<E> {
    /// No queued event is earlier than this.
    now: u64,
    /// `lists[slot * CLASSES + class]`.
    lists: Vec<List>,
    occupied: Box<[u64; WORDS]>,
    arena: Vec<Entry<E>>,
    free: u32,
    near: usize,
    far: BinaryHeap<Far<E>>,
    far_seq: u64,
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            now: 0,
            lists: vec![EMPTY; WINDOW as usize * CLASSES],
            occupied: Box::new([0; WORDS]),
            arena: Vec::new(),
            free: NIL,
            near: 0,
            far: BinaryHeap::new(),
            far_seq: 0,
        }
    }

    /// Queued events.
    pub(crate) fn len(&self) -> usize {
        self.near + self.far.len()
    }

    /// Queues `event` at `time` (never earlier than the last popped event) in `class`.
    pub(crate) fn push(&mut self, time: u64, class: usize, event: E) {
        debug_assert!(time >= self.now, "event at {time} pushed into the past ({})", self.now);
        debug_assert!(class < CLASSES);
        if time - self.now < WINDOW {
            self.push_near(time, class, event);
        } else {
            self.far_seq += 1;
            self.far.push(Far { time, class: class as u8, seq: self.far_seq, event });
        }
    }

    fn push_near(&mut self, time: u64, class: usize, event: E) {
        let entry = if self.free == NIL {
            let index = u32::try_from(self.arena.len()).ok().filter(|&i| i != NIL).expect("too many events in flight");
            self.arena.push(Entry { next: NIL, event: Some(event) });
            index
        } else {
            let index = self.free;
            let slot = &mut self.arena[index as usize];
            self.free = slot.next;
            *slot = Entry { next: NIL, event: Some(event) };
            index
        };
        let slot = (time % WINDOW) as usize;
        let list = &mut self.lists[slot * CLASSES + class];
        match list.tail {
            NIL => list.head = entry,
            tail => self.arena[tail as usize].next = entry,
        }
        list.tail = entry;
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.near += 1;
    }

    /// The earliest event with its time.
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        let next = match (self.next_near(), self.far.peek()) {
            (None, None) => return None,
            (Some(t), Some(f)) => t.min(f.time),
            (Some(t), None) => t,
            (None, Some(f)) => f.time,
        };
        self.now = next;
        while self.far.peek().is_some_and(|f| f.time - self.now < WINDOW) {
            let Far { time, class, event, .. } = self.far.pop().expect("peeked");
            self.push_near(time, class.into(), event);
        }
        let slot = (next % WINDOW) as usize;
        let lists = &mut self.lists[slot * CLASSES..(slot + 1) * CLASSES];
        let list = lists.iter_mut().find(|l| l.head != NIL).expect("an occupied slot has an event");
        let index = list.head;
        let entry = &mut self.arena[index as usize];
        let event = entry.event.take().expect("a listed entry holds an event");
        list.head = entry.next;
        if list.head == NIL {
            list.tail = NIL;
            if lists.iter().all(|l| l.head == NIL) {
                self.occupied[slot / 64] &= !(1 << (slot % 64));
            }
        }
        entry.next = self.free;
        self.free = index;
        self.near -= 1;
        Some((next, event))
    }

    /// The time of the earliest event in the wheel.
    fn next_near(&self) -> Option<u64> {
        if self.near == 0 {
            return None;
        }
        let start = (self.now % WINDOW) as usize;
        let (word, bit) = (start / 64, start % 64);
        let first = self.occupied[word] & (!0u64 << bit);
        let found = if first != 0 {
            word * 64 + first.trailing_zeros() as usize
        } else {
            (1..=WORDS)
                .map(|k| (word + k) % WORDS)
                .find(|&w| self.occupied[w] != 0)
                .map(|w| w * 64 + self.occupied[w].trailing_zeros() as usize)
                .expect("a non-empty wheel has an occupied slot")
        };
        let offset = (found + WINDOW as usize - start) % WINDOW as usize;
        Some(self.now + offset as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classes_order_equal_times_and_insertion_orders_equal_classes() {
        let mut q = EventQueue::new();
        q.push(5, 3, "timer");
        q.push(5, 2, "message a");
        q.push(5, 2, "message b");
        q.push(5, 0, "crash");
        q.push(2, 3, "early timer");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(2, "early timer"), (5, "crash"), (5, "message a"), (5, "message b"), (5, "timer")]);
    }

    #[test]
    fn far_events_keep_their_place_among_near_ones_at_the_same_time() {
        let mut q = EventQueue::new();
        let t = WINDOW * 3 + 7;
        q.push(t, 2, 1); // Far when pushed.
        q.push(1, 2, 0);
        assert_eq!(q.pop(), Some((1, 0)));
        q.push(t, 2, 2); // Still far.
        q.push(t - 10, 2, 9);
        assert_eq!(q.pop(), Some((t - 10, 9)));
        q.push(t, 2, 3); // Near now: must come after the two pushed earlier.
        assert_eq!(std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(), [(t, 1), (t, 2), (t, 3)]);
    }

    proptest! {
        /// Against a reference: a sort by (time, class, insertion order), with pushes between pops.
        #[test]
        fn matches_a_sorted_reference(ops in prop::collection::vec((0u64..3 * WINDOW, 0usize..CLASSES, any::<bool>()), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, usize, usize)> = Vec::new();
            let mut now = 0;
            for (seq, &(delay, class, pop)) in ops.iter().enumerate() {
                q.push(now + delay, class, seq);
                reference.push((now + delay, class, seq));
                if pop {
                    reference.sort();
                    let (t, _, s) = reference.remove(0);
                    prop_assert_eq!(q.pop(), Some((t, s)));
                    now = t;
                }
            }
            reference.sort();
            for (t, _, s) in reference {
                prop_assert_eq!(q.pop(), Some((t, s)));
            }
            prop_assert_eq!(q.pop(), None);
            prop_assert_eq!(q.len(), 0);
        }
    }
}
