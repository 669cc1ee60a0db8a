//! States kept one after another, as the frontier and the successors on their way to it keep them: each state's
//! vectors go to the ends of shared vectors, one per field, and the rest of it ([`Rest`], a few dozen bytes) to a
//! head. A waiting state costs no allocation of its own, states stored one after another are read from memory one
//! after another, and once the shared vectors have grown, storing more states reuses the memory of those taken
//! out.

use elect_core::{Epoch, Process};

use super::state::*;

/// States stored one after another ([`Self::push`]) and read back by their place ([`Self::read`]). A breadth-first
/// frontier too large for its share of memory writes some of them to disk with serde (`search/frontier.rs`).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub(crate) struct Packed<P: Process> {
    heads: Vec<Head>,
    procs: Vec<u32>,
    msgs: Vec<(u32, InFlight)>,
    timers: Vec<(u32, P::Timer, Due)>,
    durable: Vec<Option<P::Durable>>,
    declared: Vec<(Epoch, u32)>,
}

/// One state's place in the shared vectors, and the rest of it.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Head {
    starts: Starts,
    rest: Rest,
}

/// Where a state's vectors start in the shared vectors; each ends where the next state's starts.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Starts {
    procs: usize,
    msgs: usize,
    timers: usize,
    durable: usize,
    declared: usize,
}

impl<P: Process> Default for Packed<P> {
    fn default() -> Self {
        Self {
            heads: Vec::new(),
            procs: Vec::new(),
            msgs: Vec::new(),
            timers: Vec::new(),
            durable: Vec::new(),
            declared: Vec::new(),
        }
    }
}

impl<P: Process> Packed<P> {
    /// How many states it holds.
    pub(crate) fn len(&self) -> usize {
        self.heads.len()
    }

    /// Forgets every state, keeping the memory for the next ones.
    pub(crate) fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps the first `len` states.
    pub(crate) fn truncate(&mut self, len: usize) {
        if len >= self.heads.len() {
            return;
        }
        let s = self.heads[len].starts;
        self.heads.truncate(len);
        self.procs.truncate(s.procs);
        self.msgs.truncate(s.msgs);
        self.timers.truncate(s.timers);
        self.durable.truncate(s.durable);
        self.declared.truncate(s.declared);
    }

    /// Stores `state` after the others.
    pub(crate) fn push(&mut self, state: &State<P>) {
        self.push_vectors(state.rest, state.vectors());
    }

    /// Stores `from`'s `i`-th state after the others.
    pub(crate) fn push_from(&mut self, from: &Self, i: usize) {
        self.push_vectors(from.heads[i].rest, from.vectors(i));
    }

    fn push_vectors(&mut self, rest: Rest, vectors: Vectors<'_, P>) {
        let (procs, msgs, timers, durable, declared) = vectors;
        self.heads.push(Head { starts: self.end(), rest });
        self.procs.extend_from_slice(procs);
        self.msgs.extend_from_slice(msgs);
        self.timers.extend_from_slice(timers);
        self.durable.extend_from_slice(durable);
        self.declared.extend_from_slice(declared);
    }

    /// The `i`-th state's vectors.
    fn vectors(&self, i: usize) -> Vectors<'_, P> {
        let s = self.heads[i].starts;
        let e = self.heads.get(i + 1).map_or_else(|| self.end(), |h| h.starts);
        (
            &self.procs[s.procs..e.procs],
            &self.msgs[s.msgs..e.msgs],
            &self.timers[s.timers..e.timers],
            &self.durable[s.durable..e.durable],
            &self.declared[s.declared..e.declared],
        )
    }

    /// Where the next state's vectors will start.
    fn end(&self) -> Starts {
        Starts {
            procs: self.procs.len(),
            msgs: self.msgs.len(),
            timers: self.timers.len(),
            durable: self.durable.len(),
            declared: self.declared.len(),
        }
    }

    /// Copies the `i`-th state into `into`, reusing its vectors.
    pub(crate) fn read(&self, i: usize, into: &mut State<P>) {
        into.refill(self.heads[i].rest, self.vectors(i));
    }

    /// Whether the `i`-th state is `state`, field by field: the same processes and messages (their numbers: equal
    /// values have one number), timers, durable state, declarations, budgets and faults. The clock and the steady
    /// window are left out, as a fingerprint leaves them out.
    pub(crate) fn same(&self, i: usize, state: &State<P>) -> bool {
        self.same_as(i, state.rest, state.vectors())
    }

    /// As [`Self::same`], for `other`'s `k`-th state.
    pub(crate) fn same_packed(&self, i: usize, other: &Self, k: usize) -> bool {
        self.same_as(i, other.heads[k].rest, other.vectors(k))
    }

    fn same_as(&self, i: usize, rest: Rest, vectors: Vectors<'_, P>) -> bool {
        let key = |r: Rest| {
            let budgets = (r.crashes_left, r.doomed, r.recoveries_left, r.duplicates_left);
            (r.parts, r.clash, budgets, r.next_fault, r.fault_in, r.links_down, r.partitions_on, r.ends_in)
        };
        key(self.heads[i].rest) == key(rest) && self.vectors(i) == vectors
    }

    /// The bytes it takes.
    pub(crate) fn bytes(&self) -> usize {
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        bytes(&self.heads)
            + bytes(&self.procs)
            + bytes(&self.msgs)
            + bytes(&self.timers)
            + bytes(&self.durable)
            + bytes(&self.declared)
    }

    /// The `i`-th state, in vectors of its own.
    pub(crate) fn get(&self, i: usize) -> State<P> {
        State::from_vectors(self.heads[i].rest, self.vectors(i))
    }
}
