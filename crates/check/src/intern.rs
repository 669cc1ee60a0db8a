//! Tables of the values a search meets, each value kept once and numbered: the messages in flight and the
//! processes' states. A state holds numbers into them, so that a successor copies a few bytes per process and per
//! message rather than the values, shares nothing that needs counting, and the states waiting in the frontier cost
//! what their numbers cost. (Spin calls this collapse compression.) Values are few beside states: a run sends the
//! same messages again and again, and a process passes through few states of its own while the system passes
//! through their combinations.
//!
//! Shared by the threads of a search, and read far more often than written: reading a value takes no lock (the
//! values live in buckets that never move, each slot written once); looking a value up reads the thread's own index
//! of the values it has met, then, for a value it has not, takes the shared index's read lock; the write lock is
//! taken only for a value never met before. Tables only grow. Numbers depend on the order in which
//! threads met the values, so they are never hashed: a state hashes the values' fingerprints.

use std::cell::RefCell;
use std::hash::Hash;
use std::sync::{OnceLock, RwLock};

use hashbrown::HashTable;
use thread_local::ThreadLocal;

/// Slots in the first bucket; each bucket after it holds twice as many as the one before.
const FIRST: usize = 32;
/// Enough buckets for every `u32` number: `FIRST · (2^BUCKETS − 1) ≥ 2^32`.
const BUCKETS: usize = 28;

/// A value and its fingerprint, written once.
type Slot<T> = OnceLock<(T, u64)>;

/// A table of distinct values of `T`, numbered from 0 in the order they were first met.
pub(crate) struct Interned<T> {
    buckets: [OnceLock<Box<[Slot<T>]>>; BUCKETS],
    /// From fingerprints to (fingerprint, number); and how many values there are.
    index: RwLock<(HashTable<(u64, u32)>, u32)>,
    /// Each thread's own index, of the numbers it has looked up: most look-ups end there, without writing to the
    /// shared lock, whose counter two threads reading at once would pass back and forth between their caches.
    local: ThreadLocal<RefCell<HashTable<u32>>>,
}

/// The bucket of value number `id`, and its place there.
fn locate(id: u32) -> (usize, usize) {
    let k = id as usize / FIRST + 1;
    let bucket = (usize::BITS - 1 - k.leading_zeros()) as usize;
    (bucket, id as usize - FIRST * ((1 << bucket) - 1))
}

impl<T: Hash + Eq> Interned<T> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: [const { OnceLock::new() }; BUCKETS],
            index: RwLock::new((HashTable::new(), 0)),
            local: ThreadLocal::new(),
        }
    }

    /// Value number `id`. Numbers come only from [`Self::intern`], which stores the value before it returns its
    /// number.
    pub(crate) fn get(&self, id: u32) -> &T {
        &self.entry(id).0
    }

    /// The fingerprint value number `id` was interned with.
    pub(crate) fn fingerprint(&self, id: u32) -> u64 {
        self.entry(id).1
    }

    fn entry(&self, id: u32) -> &(T, u64) {
        let (bucket, at) = locate(id);
        let slots = self.buckets[bucket].get().expect("a number this table gave out");
        slots[at].get().expect("a value stored before its number was given out")
    }

    /// `value`'s number, given its fingerprint `fp`, numbering it if it is new.
    pub(crate) fn intern(&self, value: T, fp: u64) -> u32 {
        let mut local = self.local.get_or_default().borrow_mut();
        let this = |&id: &u32| self.entry(id).1 == fp && self.entry(id).0 == value;
        if let Some(&id) = local.find(fp, this) {
            return id;
        }
        let id = self.intern_shared(value, fp);
        local.insert_unique(fp, id, |&id| self.entry(id).1);
        id
    }

    /// As [`Self::intern`], in the shared index.
    fn intern_shared(&self, value: T, fp: u64) -> u32 {
        let find = |table: &HashTable<(u64, u32)>| {
            table.find(fp, |&(f, id)| f == fp && *self.get(id) == value).map(|&(_, id)| id)
        };
        if let Some(id) = find(&self.index.read().unwrap_or_else(std::sync::PoisonError::into_inner).0) {
            return id;
        }
        let mut guard = self.index.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (table, len) = &mut *guard;
        if let Some(id) = find(table) {
            return id;
        }
        // More distinct values than a u32 numbers would take hundreds of gigabytes first.
        let id = *len;
        *len = len.checked_add(1).expect("fewer than 2^32 distinct values");
        let (bucket, at) = locate(id);
        let slots = self.buckets[bucket].get_or_init(|| (0..FIRST << bucket).map(|_| OnceLock::new()).collect());
        if slots[at].set((value, fp)).is_err() {
            unreachable!("each number is given out once, under the write lock");
        }
        table.insert_unique(fp, (fp, id), |&(f, _)| f);
        id
    }

    /// How many values the table holds.
    pub(crate) fn len(&self) -> usize {
        self.index.read().unwrap_or_else(std::sync::PoisonError::into_inner).1 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_run_through_the_buckets_without_gaps() {
        let mut expected = (0, 0);
        for id in 0..100_000u32 {
            let (bucket, at) = locate(id);
            assert_eq!((bucket, at), expected, "number {id}");
            expected = if at + 1 == FIRST << bucket { (bucket + 1, 0) } else { (bucket, at + 1) };
        }
        assert!(locate(u32::MAX).0 < BUCKETS);
    }

    #[test]
    fn equal_values_share_a_number_even_when_fingerprints_collide() {
        let table = Interned::new();
        let a = table.intern("a".to_string(), 7);
        let b = table.intern("b".to_string(), 7);
        assert_ne!(a, b, "equal fingerprints, different values");
        assert_eq!(table.intern("a".to_string(), 7), a);
        for k in 0..1000u64 {
            table.intern(k.to_string(), k);
        }
        assert_eq!(table.get(b), "b");
        assert_eq!(table.get(a + 3), "1");
        assert_eq!(table.len(), 1002);
    }
}
