//! The states seen: each one's fingerprint, by number, and a table from fingerprints to numbers. Fingerprints are
//! already uniform: the table uses them as they are. Its control bytes (one per slot) and numbers (four bytes) are
//! small enough to stay in the processor's caches far longer than slots holding whole fingerprints would.

use hashbrown::HashTable;

/// The most states a search numbers, whatever `--max-states` says: numbers are `u32`.
pub(super) const MOST: usize = u32::MAX as usize;

pub(super) struct Seen {
    fps: Vec<u64>,
    table: HashTable<u32>,
}

impl Seen {
    pub(super) fn new() -> Self {
        Self { fps: Vec::new(), table: HashTable::new() }
    }

    /// The number of the state with fingerprint `fp`, if it was seen.
    pub(super) fn get(&self, fp: u64) -> Option<u32> {
        self.table.find(fp, |&i| self.fps[i as usize] == fp).copied()
    }

    /// Numbers a state not seen before (the next number: states are numbered as they are found). The search
    /// stops before [`MOST`] states.
    pub(super) fn insert(&mut self, fp: u64) -> u32 {
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

    /// Each state's fingerprint, by number.
    pub(super) fn into_fps(self) -> Vec<u64> {
        self.fps
    }

    /// The bytes it takes.
    pub(super) fn bytes(&self) -> usize {
        self.fps.capacity() * 8 + self.table.allocation_size()
    }
}
