//! The event queue: events ordered by (time, class, insertion order).
//!
//! Delays are small integers of ticks, and time only moves forward, so the near future is a timing wheel: one slot
//! per tick of a window of a few message delays, each slot a FIFO lane per class, and a bitmap to find the next
//! occupied slot. A lane's events sit contiguously, so popping a slot reads memory in order; a lane that empties
//! hands its buffer to a pool and the next lane to fill takes it back, so memory follows the events in flight, not
//! the slots ever used, and nothing is allocated once the buffers have grown. Events beyond the window (long
//! timers, exponential tails) wait in a binary heap and move into the wheel when the window reaches them, before
//! anything else can be pushed at their time, so the order stays exact.
//!
//! One class may also be *steady* ([`EventQueue::with_steady`]): its events are pushed in time order, so a plain
//! FIFO holds them beside the wheel and `pop` merges the two by (time, class). The simulator sends messages there
//! under a constant delay, the common case, where a message arrives in the order it was sent: one append and one
//! pop from the front per delivery, with no slot to find. The FIFO's times are kept apart, run-length encoded, as
//! runs of many events share one time there, and its events in small blocks recycled through a pool ([`Fifo`]).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// Event classes, in the order they run at equal times.
pub(crate) const CLASSES: usize = 4;

/// The range of wheel sizes, in ticks (powers of two).
const MIN_WINDOW: u64 = 1 << 10;
const MAX_WINDOW: u64 = 1 << 16;

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

/// Events per block of a [`Fifo`]: 5 KiB of the simulator's 40-byte events, which stay in the L1 cache between
/// the front's last read of a block and the back's first write to it.
const BLOCK: usize = 128;

/// The largest emptied lane (in events) kept for reuse. A larger one, such as the lane that held every initiator's
/// command at time 0, is freed once empty: kept, it would hold its memory for the whole run beside the FIFO that
/// takes over the deliveries, and raise the run's peak memory.
const SPARE_LANE_MAX: usize = 1024;

/// A FIFO kept in fixed-size blocks that never grow. A block the front empties goes to a pool, and the back takes
/// its next block from there, the most recently emptied first: so the back writes to memory the front has just read,
/// still in the cache, rather than to memory last touched one lap of a ring buffer ago (on a million-node ring, some
/// hundred megabytes ago), and the FIFO never moves its events to grow.
///
/// An event leaves its block as a plain value, where popping an `Option` would copy its tag apart from the rest:
/// the reader's wider loads then straddle two of those stores, cannot take their values from the store buffer, and
/// wait for them to reach the cache (in the simulator's loop, a quarter of the time). An event that owns no memory
/// is copied out and left in place, where dropping it is nothing, so its cache line is only read; one that owns
/// memory is moved out by [`std::mem::take`], which writes a default in its place.
struct Fifo<E> {
    /// The block events are taken from, and how many it has given.
    front: Vec<E>,
    head: usize,
    /// Full blocks, between the front and the back.
    middle: VecDeque<Vec<E>>,
    /// The block events are pushed to, holding at most [`BLOCK`] events.
    back: Vec<E>,
    /// Emptied blocks, with their capacity kept.
    spare: Vec<Vec<E>>,
}

impl<E> Default for Fifo<E> {
    fn default() -> Self {
        Self { front: Vec::new(), head: 0, middle: VecDeque::new(), back: Vec::new(), spare: Vec::new() }
    }
}

impl<E: Default + Clone> Fifo<E> {
    fn len(&self) -> usize {
        self.front.len() - self.head + self.middle.iter().map(Vec::len).sum::<usize>() + self.back.len()
    }

    /// Appends the event `make` builds, once there is room for it: built after the check, the event goes
    /// straight to the block. Built before it, it would wait on the stack across the (rare) call that brings a
    /// new block, and be copied from there in wider pieces than it was written, which stalls the copy until the
    /// narrow stores reach the cache.
    #[inline(always)]
    fn push_back_with(&mut self, make: impl FnOnce() -> E) {
        if self.back.len() == self.back.capacity() {
            self.next_back();
        }
        self.back.push(make());
    }

    /// The back block is full (or has no room yet): a spare block takes its place.
    #[cold]
    fn next_back(&mut self) {
        let fresh = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK));
        let full = std::mem::replace(&mut self.back, fresh);
        if !full.is_empty() {
            self.middle.push_back(full);
        }
    }

    /// The first event; the FIFO must not be empty.
    #[inline]
    fn take_front(&mut self) -> E {
        if self.head == self.front.len() {
            self.next_front();
        }
        let event = if std::mem::needs_drop::<E>() {
            std::mem::take(&mut self.front[self.head])
        } else {
            // Left in its place, where dropping it is nothing: the block is cleared before it is used again.
            self.front[self.head].clone()
        };
        self.head += 1;
        event
    }

    /// The front block is used up: the next block in line takes its place, and the old one goes to the pool.
    #[cold]
    fn next_front(&mut self) {
        let next = match self.middle.pop_front() {
            Some(block) => block,
            None => std::mem::take(&mut self.back),
        };
        let mut used = std::mem::replace(&mut self.front, next);
        self.head = 0;
        if used.capacity() > 0 {
            used.clear();
            self.spare.push(used);
        }
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &E> {
        self.front[self.head..].iter().chain(self.middle.iter().flatten()).chain(&self.back)
    }

    /// Up to `take` events after the first `skip`, in order, found in the front block and the block after it only
    /// (a window reaching further is cut short): two slices, where an iterator over the whole FIFO stepped through
    /// every event before the window.
    #[inline]
    fn ahead(&self, skip: usize, take: usize) -> [&[E]; 2] {
        let front = &self.front[self.head..];
        let next = self.middle.front().unwrap_or(&self.back);
        let first = &front[skip.min(front.len())..(skip + take).min(front.len())];
        let from = skip.saturating_sub(front.len()).min(next.len());
        let to = (skip + take).saturating_sub(front.len()).min(next.len());
        [first, &next[from..to]]
    }
}

/// Times pushed in order, run-length encoded as (time, how many events in a row have it). The run being taken
/// from and the run being added to are plain fields, so that taking and adding one time touch no deque: under a
/// constant delay, the front run is one instant's deliveries and the back run the next instant's. A count takes
/// as much room as a time would beside it (a pair is padded to 16 bytes either way), so it never fills up.
#[derive(Default)]
struct Runs {
    /// The run times are taken from: its time and how many are left (none: no run).
    front: (u64, u64),
    /// Whole runs, between the front and the back.
    middle: VecDeque<(u64, u64)>,
    /// The run times are added to: its time and how many it has (none: no run, whatever the time).
    back: (u64, u64),
}

impl Runs {
    /// Adds `time`, no earlier than any added before. An empty back run at the same time simply becomes a run of
    /// one, as [`Self::start_back`] would make it.
    #[inline(always)]
    fn push(&mut self, time: u64) {
        debug_assert!(self.back.1 == 0 || self.back.0 <= time, "steady events out of order");
        if self.back.0 == time {
            self.back.1 += 1;
        } else {
            self.start_back(time);
        }
    }

    #[cold]
    fn start_back(&mut self, time: u64) {
        if self.back.1 > 0 {
            self.middle.push_back(self.back);
        }
        self.back = (time, 1);
    }

    /// The first time, without taking it.
    #[inline(always)]
    fn first(&mut self) -> Option<u64> {
        if self.front.1 == 0 && !self.next_front() {
            return None;
        }
        Some(self.front.0)
    }

    /// The front run is used up: the next run takes its place. Whether there is one.
    #[cold]
    fn next_front(&mut self) -> bool {
        self.front = match self.middle.pop_front() {
            Some(run) => run,
            None => std::mem::take(&mut self.back),
        };
        self.front.1 > 0
    }

    /// Takes the first time, which [`Self::first`] has found.
    #[inline(always)]
    fn take(&mut self) {
        debug_assert!(self.front.1 > 0, "a steady event has a time");
        self.front.1 -= 1;
    }
}

/// A monotone priority queue of events keyed by time and class, FIFO within a key.
pub(crate) struct EventQueue<E> {
    /// No queued event is earlier than this.
    now: u64,
    /// Ticks covered by the wheel, a power of two.
    window: u64,
    /// `window - 1`: slot of a time `t` is `t & mask`.
    mask: u64,
    /// `lanes[slot * CLASSES + class]`.
    lanes: Vec<VecDeque<E>>,
    occupied: Vec<u64>,
    /// Buffers of emptied lanes, kept for reuse (up to [`SPARE_LANE_MAX`] events each).
    spare: Vec<VecDeque<E>>,
    near: usize,
    far: BinaryHeap<Far<E>>,
    far_seq: u64,
    /// Events of one class pushed in time order ([`Self::push_steady`]): a plain FIFO, beside the wheel.
    steady: Fifo<E>,
    /// The steady events' times, run-length encoded as [`Runs`]: under a constant delay most events share their
    /// time with many others, so the FIFO's entries need not carry it.
    steady_times: Runs,
    /// The class of the steady events.
    steady_class: usize,
    /// The (time, class) of the wheel's and far heap's earliest event, when known: `pop` compares it with the
    /// steady FIFO's front at every step, and pending timers would otherwise make it search the wheel each time.
    wheel_first: Option<(u64, usize)>,
    /// Whether the event [`Self::next_time`] found is the steady FIFO's first.
    from_steady: bool,
}

impl<E: Default + Clone> EventQueue<E> {
    /// A queue whose wheel covers at least `horizon` ticks (within fixed limits): events further ahead wait in
    /// the heap. Twice the longest message delay keeps every delivery in the wheel.
    pub(crate) fn new(horizon: u64) -> Self {
        let window = horizon.clamp(MIN_WINDOW, MAX_WINDOW).next_power_of_two();
        Self {
            now: 0,
            window,
            mask: window - 1,
            lanes: (0..window as usize * CLASSES).map(|_| VecDeque::new()).collect(),
            occupied: vec![0; window as usize / 64],
            spare: Vec::new(),
            near: 0,
            far: BinaryHeap::new(),
            far_seq: 0,
            steady: Fifo::default(),
            steady_times: Runs::default(),
            steady_class: CLASSES,
            wheel_first: None,
            from_steady: false,
        }
    }

    /// The same queue, where events of `class` may also be pushed with [`Self::push_steady`].
    pub(crate) fn with_steady(mut self, class: usize) -> Self {
        debug_assert!(class < CLASSES);
        self.steady_class = class;
        self
    }

    /// Queued events.
    pub(crate) fn len(&self) -> usize {
        self.near + self.far.len() + self.steady.len()
    }

    /// Queues `event` of the steady class at `time`, which is no earlier than that of any steady event queued
    /// before it. With a constant message delay every message arrives in the order it was sent, so the messages
    /// need no wheel: a FIFO keeps them, and `pop` merges it with the wheel by (time, class).
    #[inline]
    pub(crate) fn push_steady(&mut self, time: u64, event: E) {
        self.push_steady_with(time, || event);
    }

    /// [`Self::push_steady`] with the event built by `make` once there is room for it ([`Fifo::push_back_with`]).
    #[inline(always)]
    pub(crate) fn push_steady_with(&mut self, time: u64, make: impl FnOnce() -> E) {
        debug_assert!(self.steady_class < CLASSES, "a queue without a steady class");
        debug_assert!(time >= self.now, "event at {time} pushed into the past ({})", self.now);
        self.steady_times.push(time);
        self.steady.push_back_with(make);
    }

    /// Queues `event` at `time` (never earlier than the last popped event) in `class`.
    #[inline]
    pub(crate) fn push(&mut self, time: u64, class: usize, event: E) {
        debug_assert!(time >= self.now, "event at {time} pushed into the past ({})", self.now);
        debug_assert!(class < CLASSES);
        if let Some(first) = &mut self.wheel_first {
            *first = (*first).min((time, class));
        }
        if time - self.now < self.window {
            self.push_near(time, class, event);
        } else {
            self.far_seq += 1;
            self.far.push(Far { time, class: class as u8, seq: self.far_seq, event });
        }
    }

    /// Makes room for `additional` events at `time` (within the window) in `class`, exactly: a run that queues
    /// many events at one instant (every initiator's command at 0) then holds no more than it needs.
    pub(crate) fn reserve(&mut self, time: u64, class: usize, additional: usize) {
        debug_assert!(time >= self.now, "room reserved at {time}, in the past ({})", self.now);
        if time - self.now < self.window {
            let slot = (time & self.mask) as usize;
            self.lanes[slot * CLASSES + class].reserve_exact(additional);
        }
    }

    #[inline]
    fn push_near(&mut self, time: u64, class: usize, event: E) {
        let slot = (time & self.mask) as usize;
        let lane = &mut self.lanes[slot * CLASSES + class];
        if lane.capacity() == 0
            && let Some(buffer) = self.spare.pop()
        {
            *lane = buffer;
        }
        lane.push_back(event);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.near += 1;
    }

    /// The earliest event with its time.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        let time = self.next_time()?;
        Some((time, self.take()))
    }

    /// The time of the earliest event, with the clock moved to it; [`Self::take`] then removes that event, and
    /// nothing may be pushed in between.
    ///
    /// Finding the event and taking it are two steps so that the event comes out as a plain value rather than an
    /// `Option`, for the reason [`Fifo`] gives.
    #[inline(always)]
    pub(crate) fn next_time(&mut self) -> Option<u64> {
        if let Some(time) = self.steady_times.first() {
            let steady_first = self.near == 0 && self.far.is_empty() || {
                let first = match self.wheel_first {
                    Some(first) => first,
                    None => {
                        let first = self.wheel_next().expect("a non-empty wheel has a first event");
                        self.wheel_first = Some(first);
                        first
                    }
                };
                (time, self.steady_class) < first
            };
            if steady_first {
                if time != self.now {
                    self.advance(time);
                }
                self.from_steady = true;
                return Some(time);
            }
        }
        self.from_steady = false;
        self.wheel_first = None;
        // Fast path: more events at the current time (the far heap holds nothing this early).
        let slot = (self.now & self.mask) as usize;
        if self.occupied[slot / 64] & (1 << (slot % 64)) != 0 {
            return Some(self.now);
        }
        let next = match (self.next_near(), self.far.peek()) {
            (None, None) => return None,
            (Some(t), Some(f)) => t.min(f.time),
            (Some(t), None) => t,
            (None, Some(f)) => f.time,
        };
        self.advance(next);
        Some(next)
    }

    /// Removes the event whose time [`Self::next_time`] returned.
    #[inline(always)]
    pub(crate) fn take(&mut self) -> E {
        if self.from_steady {
            self.steady_times.take();
            self.steady.take_front()
        } else {
            self.pop_slot((self.now & self.mask) as usize)
        }
    }

    /// After [`Self::take`] removed an event of the steady FIFO, how many more of its events have that event's time
    /// (none after an event of the wheel). They come next, before anything else queued, as long as nothing is
    /// pushed at this time in an earlier class than theirs: [`Self::take_steady`] then removes them one by one,
    /// with nothing to find first.
    #[inline(always)]
    pub(crate) fn steady_now(&self) -> u64 {
        if self.from_steady { self.steady_times.front.1 } else { 0 }
    }

    /// Removes the next of the events [`Self::steady_now`] counted.
    #[inline(always)]
    pub(crate) fn take_steady(&mut self) -> E {
        debug_assert!(self.from_steady, "a steady event comes next");
        debug_assert!(
            self.wheel_first.is_none_or(|first| first > (self.now, self.steady_class)),
            "nothing else comes before the steady FIFO's events at this time"
        );
        self.steady_times.take();
        self.steady.take_front()
    }

    /// The (time, class) of the wheel's (and far heap's) earliest event.
    fn wheel_next(&self) -> Option<(u64, usize)> {
        let near = self.next_near().map(|t| {
            let slot = (t & self.mask) as usize;
            let class = self.lanes[slot * CLASSES..(slot + 1) * CLASSES]
                .iter()
                .position(|l| !l.is_empty())
                .expect("an occupied slot has an event");
            (t, class)
        });
        let far = self.far.peek().map(|f| (f.time, usize::from(f.class)));
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Moves the clock to `time` and the far events the window now reaches into the wheel.
    fn advance(&mut self, time: u64) {
        self.now = time;
        while self.far.peek().is_some_and(|f| f.time - self.now < self.window) {
            let Far { time, class, event, .. } = self.far.pop().expect("peeked");
            self.push_near(time, class.into(), event);
        }
    }

    /// Pops the first event of the first non-empty lane of an occupied `slot`.
    #[inline]
    fn pop_slot(&mut self, slot: usize) -> E {
        let lanes = &mut self.lanes[slot * CLASSES..(slot + 1) * CLASSES];
        let lane = lanes.iter_mut().find(|l| !l.is_empty()).expect("an occupied slot has an event");
        let event = lane.pop_front().expect("a non-empty lane");
        if lane.is_empty() {
            let lane = std::mem::take(lane);
            if lane.capacity() <= SPARE_LANE_MAX {
                self.spare.push(lane);
            }
            if lanes.iter().all(VecDeque::is_empty) {
                self.occupied[slot / 64] &= !(1 << (slot % 64));
            }
        }
        self.near -= 1;
        event
    }

    /// Some events queued to come soon, roughly in order (`skip` of the current slot's first lane and of the steady
    /// FIFO left out, then up to `take` of each): the loop reads ahead to fetch their processes' memory early, and
    /// uses them for nothing else. Those of the lane (none in a run whose messages all go to the FIFO), then the
    /// FIFO's as two slices, which the loop walks with no iterator between it and the events.
    #[inline]
    pub(crate) fn upcoming(&self, skip: usize, take: usize) -> (impl Iterator<Item = &E>, [&[E]; 2]) {
        let slot = (self.now & self.mask) as usize;
        let lanes = &self.lanes[slot * CLASSES..(slot + 1) * CLASSES];
        let lane = lanes.iter().find(|l| !l.is_empty());
        let lane = lane.into_iter().flat_map(move |l| l.range(skip.min(l.len())..(skip + take).min(l.len())));
        (lane, self.steady.ahead(skip, take))
    }

    /// The time of the earliest event in the wheel.
    fn next_near(&self) -> Option<u64> {
        if self.near == 0 {
            return None;
        }
        let window = self.window as usize;
        let words = self.occupied.len();
        let start = (self.now & self.mask) as usize;
        let (word, bit) = (start / 64, start % 64);
        let first = self.occupied[word] & (!0u64 << bit);
        let found = if first != 0 {
            word * 64 + first.trailing_zeros() as usize
        } else {
            (1..=words)
                .map(|k| (word + k) & (words - 1))
                .find(|&w| self.occupied[w] != 0)
                .map(|w| w * 64 + self.occupied[w].trailing_zeros() as usize)
                .expect("a non-empty wheel has an occupied slot")
        };
        let offset = (found + window - start) & (window - 1);
        Some(self.now + offset as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classes_order_equal_times_and_insertion_orders_equal_classes() {
        let mut q = EventQueue::new(0);
        q.push(5, 3, "timer");
        q.push(5, 2, "message a");
        q.push(5, 2, "message b");
        q.push(5, 0, "crash");
        q.push(2, 3, "early timer");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(2, "early timer"), (5, "crash"), (5, "message a"), (5, "message b"), (5, "timer")]);
    }

    #[test]
    fn a_burst_reserved_at_one_instant_takes_exactly_its_room_and_is_freed_once_drained() {
        let mut q = EventQueue::new(0);
        let burst = SPARE_LANE_MAX + 1;
        q.reserve(0, 1, burst);
        for i in 0..burst {
            q.push(0, 1, i);
        }
        assert_eq!(q.lanes[1].capacity(), burst, "no room beyond the burst");
        q.push(3, 2, burst);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, (0..=burst).collect::<Vec<_>>());
        // The small lane at 3 is kept for reuse, the burst's is not.
        assert_eq!(q.spare.len(), 1);
        assert!(q.spare[0].capacity() <= SPARE_LANE_MAX);
    }

    #[test]
    fn far_events_keep_their_place_among_near_ones_at_the_same_time() {
        let mut q = EventQueue::new(0);
        let t = MIN_WINDOW * 3 + 7;
        q.push(t, 2, 1); // Far when pushed.
        q.push(1, 2, 0);
        assert_eq!(q.pop(), Some((1, 0)));
        q.push(t, 2, 2); // Still far.
        q.push(t - 10, 2, 9);
        assert_eq!(q.pop(), Some((t - 10, 9)));
        q.push(t, 2, 3); // Near now: must come after the two pushed earlier.
        assert_eq!(std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(), [(t, 1), (t, 2), (t, 3)]);
    }

    /// Runs `(delay, class, step, pop)` operations against a sort by (time, class, insertion order): each pushes
    /// an event `delay` after the last pop (events of the `steady` class go to the FIFO, `step` after the previous
    /// one), then pops one if `pop`; the rest is popped at the end.
    fn against_a_sorted_reference(
        steady: Option<usize>,
        ops: &[(u64, usize, u64, bool)],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut q = EventQueue::new(0);
        if let Some(class) = steady {
            q = q.with_steady(class);
        }
        let mut reference: Vec<(u64, usize, usize)> = Vec::new();
        let (mut now, mut last_steady) = (0, 0);
        for (seq, &(delay, class, step, pop)) in ops.iter().enumerate() {
            let time = if Some(class) == steady {
                last_steady = last_steady.max(now) + step;
                q.push_steady(last_steady, seq);
                last_steady
            } else {
                q.push(now + delay, class, seq);
                now + delay
            };
            reference.push((time, class, seq));
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
        Ok(())
    }

    /// Events that own memory leave their block by a move, the others as a copy with the original left behind
    /// (the proptests' `u32`s): both ways, they come out whole and in order, across blocks.
    #[test]
    fn events_that_own_memory_come_out_whole_and_in_order() {
        let mut fifo = Fifo::default();
        for round in 0..2 {
            for i in 0..3 * BLOCK {
                fifo.push_back_with(|| format!("{round}:{i}"));
            }
            for i in 0..3 * BLOCK {
                assert_eq!(fifo.take_front(), format!("{round}:{i}"));
            }
            assert_eq!(fifo.len(), 0);
        }
    }

    proptest! {
        // Drawn from a fixed seed, so every run of the suite checks the same cases (PROPTEST_RNG_SEED draws others).
        #![proptest_config({
            let mut config = ProptestConfig::default();
            if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
                config.rng_seed = proptest::test_runner::RngSeed::Fixed(0);
            }
            config
        })]
        /// With a steady class: events of that class pushed in time order to the FIFO, the others to the wheel,
        /// come out as from one queue.
        #[test]
        fn a_steady_class_merges_with_the_wheel(ops in prop::collection::vec((0u64..3 * MIN_WINDOW, 0usize..CLASSES, 0u64..3, any::<bool>()), 1..400)) {
            against_a_sorted_reference(Some(2), &ops)?;
        }

        /// The blocked FIFO against a plain one: the same events out, in the same order, and the same length and
        /// contents seen in between, over runs that fill, drain and reuse several blocks.
        #[test]
        fn the_fifo_in_blocks_is_a_fifo(ops in prop::collection::vec((0usize..3 * BLOCK, 0usize..3 * BLOCK), 1..12)) {
            let (mut fifo, mut reference) = (Fifo::default(), VecDeque::new());
            let (mut next, mut peak) = (0u32, 0);
            for (pushes, pops) in ops {
                for _ in 0..pushes {
                    next += 1;
                    fifo.push_back_with(|| next);
                    reference.push_back(next);
                }
                peak = peak.max(reference.len());
                prop_assert_eq!(fifo.len(), reference.len());
                prop_assert!(fifo.iter().eq(reference.iter()));
                // The read-ahead's window: the events it gives are the FIFO's, in order, from the skipped ones on;
                // it may stop short only where the window passes the block after the front one.
                for (skip, take) in [(0, 3), (16, 16), (BLOCK - 1, 2), (2 * BLOCK, 16)] {
                    let ahead: Vec<u32> = fifo.ahead(skip, take).into_iter().flatten().copied().collect();
                    let expected: Vec<u32> = reference.iter().skip(skip).take(take).copied().collect();
                    prop_assert!(expected.starts_with(&ahead), "{:?} is not the start of {:?}", ahead, expected);
                    let reach = fifo.front.len() - fifo.head + fifo.middle.front().unwrap_or(&fifo.back).len();
                    prop_assert_eq!(ahead.len(), expected.len().min(reach.saturating_sub(skip)));
                }
                for _ in 0..pops.min(reference.len()) {
                    prop_assert_eq!(Some(fifo.take_front()), reference.pop_front());
                }
                prop_assert_eq!(fifo.len(), reference.len());
            }
            let blocks = fifo.spare.len() + fifo.middle.len() + [&fifo.front, &fifo.back].iter().filter(|b| b.capacity() > 0).count();
            prop_assert!(blocks <= peak.div_ceil(BLOCK) + 2, "{} blocks for at most {} events: emptied blocks are not reused", blocks, peak);
        }

        /// Against a reference: a sort by (time, class, insertion order), with pushes between pops.
        #[test]
        fn matches_a_sorted_reference(ops in prop::collection::vec((0u64..3 * MIN_WINDOW, 0usize..CLASSES, any::<bool>()), 1..400)) {
            let ops: Vec<_> = ops.into_iter().map(|(delay, class, pop)| (delay, class, 0, pop)).collect();
            against_a_sorted_reference(None, &ops)?;
        }
    }
}
