//! Counters a member keeps while it runs: what it sent, received and dropped (by reason), and how often it wrote
//! its state file.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::wire::Drop;

/// Live counters, shared between a member's task and its [`crate::Node`] handle.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    sent: AtomicU64,
    send_errors: AtomicU64,
    received: AtomicU64,
    receive_errors: AtomicU64,
    dropped: [AtomicU64; Drop::ALL.len()],
    writes: AtomicU64,
}

impl Counters {
    pub(crate) fn sent(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn send_error(&self) {
        self.send_errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn receive_error(&self) {
        self.receive_errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn dropped(&self, reason: Drop) {
        self.dropped[reason.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            sent: get(&self.sent),
            send_errors: get(&self.send_errors),
            received: get(&self.received),
            receive_errors: get(&self.receive_errors),
            dropped: std::array::from_fn(|i| get(&self.dropped[i])),
            writes: get(&self.writes),
        }
    }
}

/// A member's counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets put on the wire.
    pub sent: u64,
    /// Sends the socket refused.
    pub send_errors: u64,
    /// Packets accepted: decoded, of this cluster and version, addressed here, from a member's current
    /// incarnation.
    pub received: u64,
    /// Errors the socket reported on receiving.
    pub receive_errors: u64,
    /// Packets dropped, indexed by [`Drop::index`].
    pub dropped: [u64; Drop::ALL.len()],
    /// State file writes.
    pub writes: u64,
}

impl Stats {
    /// Packets dropped for `reason`.
    pub fn dropped(&self, reason: Drop) -> u64 {
        self.dropped[reason.index()]
    }

    /// Packets dropped for any reason.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }
}
