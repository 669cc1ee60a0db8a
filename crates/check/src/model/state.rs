//! A state of the system as the search keeps it: each process as its number in the model's table, the messages
//! and timers in flight with when they are due, and the rest (the clock, durable state, declarations, the
//! fingerprint's parts).

use elect_core::{Epoch, Process};

/// When an item in flight (a message or a timer) may happen, relative to the present: at `first` (while it has
/// not passed) or at `last`. Untimed runs leave it at [`Due::ANY`] and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) struct Due {
    pub(super) first: Option<u64>,
    pub(super) last: u64,
}

impl Due {
    pub(super) const ANY: Self = Self { first: Some(0), last: 0 };

    pub(super) fn after(min: u64, max: u64) -> Self {
        Self { first: Some(min), last: max }
    }

    /// Whether it may happen now.
    pub(super) fn now(self) -> bool {
        self.first == Some(0) || self.last == 0
    }

    /// The next instant it may happen, strictly after now.
    pub(super) fn next(self) -> Option<u64> {
        match self.first {
            Some(f) if f > 0 => Some(f),
            _ => (self.last > 0).then_some(self.last),
        }
    }

    /// `dt` later (no more than [`Self::next`]).
    pub(super) fn pass(&mut self, dt: u64) {
        self.first = self.first.and_then(|f| f.checked_sub(dt).filter(|_| f > 0));
        self.last -= dt;
    }
}

/// A message in flight: its number in the search's table of messages ([`Interned`]), its fingerprint (what a
/// state's fingerprint hashes, and what the canonical order of unordered links sorts by) and when it is due.
/// Numbers depend on the order in which threads met the messages, so they are never hashed: equal messages have
/// one number, and so one fingerprint.
#[derive(Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct InFlight {
    pub(super) id: u32,
    pub(super) fp: u64,
    pub(super) due: Due,
}

impl InFlight {
    /// Where it goes among a link's messages when their order carries no meaning.
    pub(super) fn key(&self) -> (u64, Option<u64>, u64) {
        (self.fp, self.due.first, self.due.last)
    }
}

/// The number [`State::procs`] holds for a process that is down.
pub(super) const DOWN: u32 = u32::MAX;

/// A state of the whole system: its vectors, and the rest of it ([`Rest`]).
pub(crate) struct State<P: Process> {
    /// Each process, as its number in the model's table of processes ([`Model::process`]), or [`DOWN`] while
    /// crashed: a step copies the numbers and looks up, changes and numbers the one process it steps.
    pub(super) procs: Vec<u32>,
    /// Messages in flight, by directed link (the sender's link slot), in one vector: oldest first on FIFO
    /// links, in a canonical order otherwise (the order carries no meaning there, so it must not tell states
    /// apart).
    pub(super) msgs: Vec<(u32, InFlight)>,
    /// Armed timers, by position and timer.
    pub(super) timers: Vec<(u32, P::Timer, Due)>,
    /// What each process last made durable (kept only when a process may recover; empty otherwise).
    pub(super) durable: Vec<Option<P::Durable>>,
    /// Who declared itself leader in which epoch (kept only when the algorithm promises P-Unique).
    pub(super) declared: Vec<(Epoch, u32)>,
    pub(crate) rest: Rest,
}

/// Everything in a state but its vectors: a few dozen bytes, copied as they are. Times are kept relative to the
/// present, which is kept apart ([`Rest::now`]) and left out of the fingerprint: two states that differ only in the
/// clock behave alike.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rest {
    /// The processes' and the messages' share of the fingerprint, kept up to date as they change
    /// ([`fingerprints`]).
    pub(super) parts: u64,
    /// The first two processes found declaring themselves leader in one epoch.
    pub(super) clash: Option<(Epoch, u32, u32)>,
    pub(super) crashes_left: u8,
    /// The positions that may still crash, by bit: all of them, unless the search designated some up front
    /// ([`Model::designations`]); none once no crash is left, so that states after the last crash do not tell apart the
    /// designations they came from.
    pub(super) doomed: u64,
    pub(super) recoveries_left: u8,
    pub(super) duplicates_left: u8,
    /// The next scheduled fault, and how long until it happens.
    pub(super) next_fault: u16,
    pub(super) fault_in: u64,
    /// Scheduled link faults and partitions in force, by index (bit sets).
    pub(super) links_down: u64,
    pub(super) partitions_on: u64,
    /// Timed runs of algorithms that never fall silent: how long until the run ends (it ends settled, its
    /// settling time after the last fault, or at the scenario's `until`).
    pub(super) ends_in: Option<u64>,
    /// Once the settling time after the last fault has passed: how much longer time runs on, without faults, so
    /// that periodic behaviour comes round to a state seen before (a cycle, judged as a lasso). Left out of the
    /// fingerprint, as the clock is: a state seen again in this window is the same state.
    pub(super) steady: u64,
    /// The present, in ticks (timed runs; 0 otherwise).
    pub(crate) now: u64,
}

impl<P: Process> Clone for State<P> {
    fn clone(&self) -> Self {
        Self::from_vectors(self.rest, self.vectors())
    }

    /// Copies `source` into the vectors this state already has: a search steps one scratch state per successor
    /// ([`Model::step_into`]) and allocates only for those it keeps.
    fn clone_from(&mut self, source: &Self) {
        self.refill(source.rest, source.vectors());
    }
}

/// A state's vectors, borrowed.
pub(super) type Vectors<'a, P> = (
    &'a [u32],
    &'a [(u32, InFlight)],
    &'a [(u32, <P as Process>::Timer, Due)],
    &'a [Option<<P as Process>::Durable>],
    &'a [(Epoch, u32)],
);

impl<P: Process> State<P> {
    /// Its vectors, borrowed.
    pub(super) fn vectors(&self) -> Vectors<'_, P> {
        (&self.procs, &self.msgs, &self.timers, &self.durable, &self.declared)
    }

    /// The state made of `rest` and copies of `vectors`.
    pub(super) fn from_vectors(rest: Rest, vectors: Vectors<'_, P>) -> Self {
        let (procs, msgs, timers, durable, declared) = vectors;
        Self {
            procs: procs.to_vec(),
            msgs: msgs.to_vec(),
            timers: timers.to_vec(),
            durable: durable.to_vec(),
            declared: declared.to_vec(),
            rest,
        }
    }

    /// Becomes the state made of `rest` and copies of `vectors`, in the vectors it already has.
    pub(super) fn refill(&mut self, rest: Rest, vectors: Vectors<'_, P>) {
        fn refill<T: Clone>(mine: &mut Vec<T>, theirs: &[T]) {
            mine.clear();
            mine.extend_from_slice(theirs);
        }
        let (procs, msgs, timers, durable, declared) = vectors;
        refill(&mut self.procs, procs);
        refill(&mut self.msgs, msgs);
        refill(&mut self.timers, timers);
        refill(&mut self.durable, durable);
        refill(&mut self.declared, declared);
        self.rest = rest;
    }
}

impl<P: Process> State<P> {
    /// The positions that may still crash, by bit.
    pub(crate) fn doomed(&self) -> u64 {
        self.rest.doomed
    }

    /// How many processes the system has.
    pub(crate) fn len(&self) -> usize {
        self.procs.len()
    }

    /// Whether the process at `node` is up.
    pub(crate) fn live(&self, node: usize) -> bool {
        self.procs[node] != DOWN
    }

    /// Whether a process that is down may still recover (the budget of recoveries is not spent).
    pub(crate) fn recoveries_left(&self) -> bool {
        self.rest.recoveries_left > 0
    }

    /// Where link slot `slot`'s messages are in [`Self::msgs`].
    pub(super) fn link(&self, slot: u32) -> std::ops::Range<usize> {
        let lo = self.msgs.partition_point(|(s, _)| *s < slot);
        lo..lo + self.msgs[lo..].partition_point(|(s, _)| *s == slot)
    }

    /// Whether no message is in flight on link slot `slot`.
    pub(crate) fn link_empty(&self, slot: u32) -> bool {
        self.link(slot).is_empty()
    }

    /// Whether some timer is armed.
    pub(crate) fn any_timer(&self) -> bool {
        !self.timers.is_empty()
    }

    /// Where position `node`'s timers are in [`Self::timers`].
    pub(super) fn node_timers(&self, node: u32) -> std::ops::Range<usize> {
        let lo = self.timers.partition_point(|(n, ..)| *n < node);
        lo..lo + self.timers[lo..].partition_point(|(n, ..)| *n == node)
    }

    /// The `index`-th message on link slot `slot`.
    pub(super) fn msg(&self, slot: u32, index: u32) -> InFlight {
        self.msgs[self.link(slot).start + index as usize].1
    }
}
