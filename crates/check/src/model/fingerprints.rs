//! Fingerprints: of values (processes, messages), and of states, whose processes' and messages' share
//! ([`Rest::parts`]) is kept up to date as the state changes, so that a successor's fingerprint costs what its
//! step changed rather than the whole state.
//!
//! The share is a sum of terms (wrapping, on 64 bits): one per position, hashing the fingerprint of its process (or of
//! "down"), and one per message in flight, hashing its link, its place on the link, its fingerprint and when it is
//! due. A step that changes one process subtracts that position's term and adds the new one; one that puts a
//! message on a link, or takes one off, does the same for that link's few terms. A term runs the words it covers
//! through MurmurHash3's 64-bit finalizer one after the other, from a seed that keeps processes and messages apart:
//! the fingerprints it covers are already uniform, and the finalizer spreads every bit of a word over the whole
//! term, so that two distinct states give the same sum only by chance, with odds like those of one 64-bit hash.
//! The rest of a state (timers, declarations, scalars) is small, and a state's fingerprint hashes it with the sum
//! ([`State::fingerprint`]).

use std::hash::{Hash, Hasher};

use elect_core::Process;

use super::state::*;

/// The 64-bit fingerprint of a value (a process, a message, a state's timers): XXH3 of the bytes its `Hash` impl
/// writes. States have their own ([`State::fingerprint`]).
pub(crate) fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    thread_local! {
        static BYTES: std::cell::RefCell<Bytes> = const { std::cell::RefCell::new(Bytes(Vec::new())) };
    }
    BYTES.with_borrow_mut(|bytes| {
        bytes.0.clear();
        value.hash(bytes);
        xxhash_rust::xxh3::xxh3_64(&bytes.0)
    })
}

/// A `Hasher` that only gathers the bytes written to it.
struct Bytes(Vec<u8>);

impl Hasher for Bytes {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("the bytes are hashed at once")
    }
}

/// Seeds that keep the terms of processes and of messages, and a whole state's fingerprint, apart.
const PROCESS: u64 = 0x9e37_79b9_7f4a_7c15;
const MESSAGE: u64 = 0xc2b2_ae3d_27d4_eb4f;
const STATE: u64 = 0x1656_67b1_9e37_79f9;

/// MurmurHash3's 64-bit finalizer: a bijection on 64 bits in which every input bit flips each output bit with odds
/// close to one half.
fn fmix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The words' term, from `seed`.
fn term(seed: u64, words: &[u64]) -> u64 {
    words.iter().fold(seed, |h, &w| fmix(h ^ w))
}

/// The term of position `node` holding a process whose fingerprint is `fp`.
pub(super) fn process_term(node: u32, fp: u64) -> u64 {
    term(PROCESS, &[u64::from(node), fp])
}

/// The term of message `m`, the `k`-th on link slot `slot`.
fn message_term(slot: u32, k: usize, m: &InFlight) -> u64 {
    // A link holds far fewer than 2^31 messages: memory runs out long before.
    let place = u64::from(slot) << 32 | (k as u64 & 0x7fff_ffff) << 1 | u64::from(m.due.first.is_some());
    term(MESSAGE, &[place, m.fp, m.due.first.unwrap_or(0), m.due.last])
}

/// The terms of the messages in `msgs`, all on link slot `slot`, in order.
pub(super) fn link_terms(slot: u32, msgs: &[(u32, InFlight)]) -> u64 {
    msgs.iter().enumerate().fold(0, |sum, (k, (_, m))| sum.wrapping_add(message_term(slot, k, m)))
}

impl<P: Process> State<P> {
    /// Whether `other` is this state as the search tells states apart: the same fingerprint, and the same
    /// vectors (process states, messages in their order, timers, durable states, declarations).
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        self.fingerprint() == other.fingerprint() && self.vectors() == other.vectors()
    }

    /// The 64-bit fingerprint states are told apart by: the parts, and the rest of the state hashed whole. The
    /// clock is left out, and so is [`Rest::steady`].
    pub(crate) fn fingerprint(&self) -> u64 {
        let hashed = |empty: bool, value: &dyn Fn() -> u64| if empty { 0 } else { value() };
        let timers = hashed(self.timers.is_empty(), &|| fingerprint(&self.timers));
        let durable = hashed(self.durable.is_empty(), &|| fingerprint(&self.durable));
        let declared = hashed(self.declared.is_empty() && self.rest.clash.is_none(), &|| {
            fingerprint(&(&self.declared, self.rest.clash))
        });
        let budgets = u64::from(self.rest.crashes_left)
            | u64::from(self.rest.recoveries_left) << 8
            | u64::from(self.rest.duplicates_left) << 16
            | u64::from(self.rest.next_fault) << 24
            | u64::from(self.rest.ends_in.is_some()) << 40;
        let words = [
            self.rest.parts,
            timers,
            durable,
            declared,
            budgets,
            self.rest.doomed,
            self.rest.fault_in,
            self.rest.links_down,
            self.rest.partitions_on,
            self.rest.ends_in.unwrap_or(0),
        ];
        let mut bytes = [0u8; 80];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_64_with_seed(&bytes, STATE)
    }

    /// Changes the messages of link slot `slot` (and only those), and the parts with them.
    pub(super) fn change_link<R>(&mut self, slot: u32, change: impl FnOnce(&mut Vec<(u32, InFlight)>) -> R) -> R {
        let before = link_terms(slot, &self.msgs[self.link(slot)]);
        let r = change(&mut self.msgs);
        let after = link_terms(slot, &self.msgs[self.link(slot)]);
        self.rest.parts = self.rest.parts.wrapping_sub(before).wrapping_add(after);
        r
    }
}
