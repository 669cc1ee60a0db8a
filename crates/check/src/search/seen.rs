//! The states seen: each one's fingerprint, by number, and a table from fingerprints to numbers. Fingerprints are
//! already uniform: the table uses them as they are. Its control bytes (one per slot) and numbers (four bytes) are
//! small enough to stay in the processor's caches far longer than slots holding whole fingerprints would.
//!
//! In the exact mode (`--exact`) every state seen is kept too, packed, and two states are the same only when they
//! are equal field by field: two states that share a fingerprint are both explored. Each state then costs what a
//! waiting state does, for the whole search.

use elect_core::Process;
use hashbrown::HashTable;

use crate::model::{Packed, State};

/// The most states a search numbers, whatever `--max-states` says: numbers are `u32`.
pub(super) const MOST: usize = u32::MAX as usize;

pub(super) struct Seen<P: Process> {
    fps: Vec<u64>,
    table: HashTable<u32>,
    /// The exact mode: every state seen, by number.
    states: Option<Packed<P>>,
}

impl<P: Process> Seen<P> {
    pub(super) fn new(exact: bool) -> Self {
        Self { fps: Vec::new(), table: HashTable::new(), states: exact.then(Packed::default) }
    }

    /// The number of `state`, whose fingerprint is `fp`, if it was seen.
    pub(super) fn get(&self, fp: u64, state: &State<P>) -> Option<u32> {
        self.find(fp, |states, j| states.same(j, state))
    }

    /// As [`Self::get`], for `from`'s `k`-th state.
    pub(super) fn get_packed(&self, fp: u64, from: &Packed<P>, k: usize) -> Option<u32> {
        self.find(fp, |states, j| states.same_packed(j, from, k))
    }

    fn find(&self, fp: u64, same: impl Fn(&Packed<P>, usize) -> bool) -> Option<u32> {
        let this =
            |&j: &u32| self.fps[j as usize] == fp && self.states.as_ref().is_none_or(|states| same(states, j as usize));
        self.table.find(fp, this).copied()
    }

    /// Numbers `state`, not seen before, whose fingerprint is `fp` (the next number: states are numbered as they
    /// are found). The search stops before [`MOST`] states.
    pub(super) fn insert(&mut self, fp: u64, state: &State<P>) -> u32 {
        if let Some(states) = &mut self.states {
            states.push(state);
        }
        self.number(fp)
    }

    /// As [`Self::insert`], for `from`'s `k`-th state.
    pub(super) fn insert_packed(&mut self, fp: u64, from: &Packed<P>, k: usize) -> u32 {
        if let Some(states) = &mut self.states {
            states.push_from(from, k);
        }
        self.number(fp)
    }

    fn number(&mut self, fp: u64) -> u32 {
        debug_assert!(self.fps.len() < MOST, "the search stops at MOST states");
        let j = self.fps.len() as u32;
        self.fps.push(fp);
        let fps = &self.fps;
        self.table.insert_unique(fp, j, |&i| fps[i as usize]);
        j
    }

    /// The fingerprint of state number `j`.
    pub(super) fn fp(&self, j: u32) -> u64 {
        self.fps[j as usize]
    }

    /// A coordinated sample of the states seen, of at most `most` of them.
    pub(super) fn sample(&self, most: usize) -> crate::Sample {
        crate::Sample::of(&self.fps, most)
    }

    /// Each state's fingerprint, by number.
    pub(super) fn into_fps(self) -> Vec<u64> {
        self.fps
    }

    /// The bytes it takes.
    pub(super) fn bytes(&self) -> usize {
        self.fps.capacity() * 8 + self.table.allocation_size() + self.states.as_ref().map_or(0, Packed::bytes)
    }
}
