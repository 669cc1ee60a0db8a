//! Counters a member keeps while it runs, which are also its Prometheus metrics: what it sent and received (by
//! kind), what it dropped (by reason), how often it wrote its state file, and its leadership.
//!
//! The metrics and their names are listed in the crate's docs.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::fencing::Leadership;
use crate::wire::Drop;
use elect_core::NodeId;

/// One label, `kind` or `reason`.
type Label = [(&'static str, &'static str); 1];

/// Live counters and gauges, shared between a member's task, its [`crate::Node`] handle and its HTTP server.
#[derive(Debug)]
pub(crate) struct Counters {
    registry: Registry,
    kinds: Vec<&'static str>,
    sent: Vec<Counter>,
    received: Vec<Counter>,
    send_errors: Counter,
    receive_errors: Counter,
    dropped: [Counter; Drop::ALL.len()],
    /// Packets dropped as [`Drop::Invalid`], by kind.
    invalid: Vec<Counter>,
    writes: Counter,
    is_leader: Gauge,
    epoch: Gauge<u64, AtomicU64>,
    incarnation: Gauge<u64, AtomicU64>,
    leader_changes: Counter,
    election: Histogram,
}

impl Counters {
    /// Counters for a member sending packets of `kinds` (the kinds of its packets: the algorithm's, the leader
    /// monitor's and the member's own); its incarnation is set once its process has started.
    pub(crate) fn new(kinds: Vec<&'static str>) -> Self {
        let mut registry = Registry::with_prefix("elect");
        let is_leader = Gauge::default();
        registry.register("is_leader", "1 while this member leads under a fencing epoch, else 0", is_leader.clone());
        let epoch = Gauge::<u64, AtomicU64>::default();
        registry.register("epoch", "The fencing epoch of the leadership this member shows", epoch.clone());
        let incarnation = Gauge::<u64, AtomicU64>::default();
        registry.register("incarnation", "This member's incarnation", incarnation.clone());
        let leader_changes = Counter::default();
        registry.register(
            "leader_changes",
            "Times this member came to show a new leadership grant (a leader and its epoch)",
            leader_changes.clone(),
        );
        // 1 ms to 8 s: an election on a LAN takes a few delay bounds, a failover a few heartbeat periods more.
        let election = Histogram::new(exponential_buckets(0.001, 2.0, 14));
        registry.register_with_unit(
            "election_duration",
            "How long this member showed no leader: from its start, or from losing its leader, to showing one",
            Unit::Seconds,
            election.clone(),
        );
        let by = |registry: &mut Registry, name: &str, help: &str, label: &'static str, values: &[&'static str]| {
            let family = Family::<Label, Counter>::default();
            registry.register(name, help, family.clone());
            values.iter().map(|&v| family.get_or_create(&[(label, v)]).clone()).collect::<Vec<Counter>>()
        };
        let sent = by(&mut registry, "messages_sent", "Packets put on the wire, by kind", "kind", &kinds);
        let received = by(&mut registry, "messages_received", "Packets accepted, by kind", "kind", &kinds);
        let reasons = Drop::ALL.map(Drop::name);
        let dropped = by(&mut registry, "packets_dropped", "Packets dropped, by reason", "reason", &reasons);
        let dropped = std::array::from_fn(|i| dropped[i].clone());
        let invalid = by(
            &mut registry,
            "packets_invalid",
            "Packets dropped because a field held a value no member sends, by kind",
            "kind",
            &kinds,
        );
        let counter = |registry: &mut Registry, name: &str, help: &str| {
            let c = Counter::default();
            registry.register(name, help, c.clone());
            c
        };
        let send_errors = counter(&mut registry, "send_errors", "Sends the socket refused");
        let receive_errors = counter(&mut registry, "receive_errors", "Errors the socket reported on receiving");
        let writes = counter(&mut registry, "state_writes", "State file writes");
        Self {
            registry,
            kinds,
            sent,
            received,
            send_errors,
            receive_errors,
            dropped,
            invalid,
            writes,
            is_leader,
            epoch,
            incarnation,
            leader_changes,
            election,
        }
    }

    /// The member's process started as incarnation `incarnation`.
    pub(crate) fn set_incarnation(&self, incarnation: u64) {
        self.incarnation.set(incarnation);
    }

    pub(crate) fn sent(&self, kind: usize) {
        if let Some(c) = self.sent.get(kind) {
            c.inc();
        }
    }

    pub(crate) fn send_error(&self) {
        self.send_errors.inc();
    }

    pub(crate) fn received(&self, kind: usize) {
        if let Some(c) = self.received.get(kind) {
            c.inc();
        }
    }

    pub(crate) fn receive_error(&self) {
        self.receive_errors.inc();
    }

    pub(crate) fn dropped(&self, reason: Drop) {
        self.dropped[reason.index()].inc();
    }

    /// A packet of kind `kind` was dropped as [`Drop::Invalid`].
    pub(crate) fn invalid(&self, kind: usize) {
        self.dropped(Drop::Invalid);
        if let Some(c) = self.invalid.get(kind) {
            c.inc();
        }
    }

    pub(crate) fn wrote(&self) {
        self.writes.inc();
    }

    /// Member `me` now shows `shown`.
    pub(crate) fn shows(&self, me: NodeId, shown: Leadership) {
        self.is_leader.set(i64::from(shown.leader == Some(me)));
        self.epoch.set(shown.epoch.bits());
    }

    /// The member came to show a new leadership grant.
    pub(crate) fn leader_changed(&self) {
        self.leader_changes.inc();
    }

    /// The member showed no leader for `took`.
    pub(crate) fn election_took(&self, took: std::time::Duration) {
        self.election.observe(took.as_secs_f64());
    }

    /// The metrics in the OpenMetrics text format.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let by_kind = |counters: &[Counter]| -> Vec<(&'static str, u64)> {
            self.kinds.iter().zip(counters).map(|(&k, c)| (k, c.get())).collect()
        };
        let sent_by_kind = by_kind(&self.sent);
        let received_by_kind = by_kind(&self.received);
        let invalid_by_kind = by_kind(&self.invalid).into_iter().filter(|&(_, n)| n > 0).collect();
        Stats {
            sent: sent_by_kind.iter().map(|(_, n)| n).sum(),
            send_errors: self.send_errors.get(),
            received: received_by_kind.iter().map(|(_, n)| n).sum(),
            receive_errors: self.receive_errors.get(),
            dropped: std::array::from_fn(|i| self.dropped[i].get()),
            writes: self.writes.get(),
            leader_changes: self.leader_changes.get(),
            sent_by_kind,
            received_by_kind,
            invalid_by_kind,
        }
    }
}

/// A member's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets put on the wire.
    pub sent: u64,
    /// Sends the socket refused.
    pub send_errors: u64,
    /// Packets accepted: authentic, decoded, of this cluster and version, addressed here, from a member's current
    /// incarnation, and not replayed.
    pub received: u64,
    /// Errors the socket reported on receiving.
    pub receive_errors: u64,
    /// Packets dropped, indexed by [`Drop::index`].
    pub dropped: [u64; Drop::ALL.len()],
    /// State file writes.
    pub writes: u64,
    /// Times the member came to show a new leadership grant.
    pub leader_changes: u64,
    /// Packets sent, by kind (the kinds of the member's packets).
    pub sent_by_kind: Vec<(&'static str, u64)>,
    /// Packets accepted, by kind.
    pub received_by_kind: Vec<(&'static str, u64)>,
    /// Packets dropped as [`Drop::Invalid`], by kind: only the kinds of which some were.
    pub invalid_by_kind: Vec<(&'static str, u64)>,
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

    /// Packets of kind `kind` dropped as [`Drop::Invalid`].
    pub fn invalid(&self, kind: &str) -> u64 {
        self.invalid_by_kind.iter().find(|&&(k, _)| k == kind).map_or(0, |&(_, n)| n)
    }
}

#[cfg(test)]
mod tests {
    use elect_core::Epoch;

    use super::*;

    #[test]
    fn metrics_have_their_names_labels_and_values() {
        let c = Counters::new(vec!["election", "ok", "announce"]);
        c.set_incarnation(3);
        c.sent(1);
        c.sent(1);
        c.received(0);
        c.sent(99); // Out of range: ignored, never a panic.
        c.dropped(Drop::Replayed);
        c.invalid(0);
        c.invalid(99); // Out of range: counted as a drop, never a panic.
        c.wrote();
        c.shows(NodeId(2), Leadership { leader: Some(NodeId(2)), epoch: Epoch::from_bits(1 << 32 | 2) });
        c.leader_changed();
        c.election_took(std::time::Duration::from_millis(30));
        let text = c.encode();
        for line in [
            "elect_is_leader 1",
            "elect_epoch 4294967298",
            "elect_incarnation 3",
            "elect_leader_changes_total 1",
            "elect_messages_sent_total{kind=\"ok\"} 2",
            "elect_messages_sent_total{kind=\"announce\"} 0",
            "elect_messages_received_total{kind=\"election\"} 1",
            "elect_packets_dropped_total{reason=\"replayed\"} 1",
            "elect_packets_dropped_total{reason=\"unauthenticated\"} 0",
            "elect_packets_dropped_total{reason=\"invalid\"} 2",
            "elect_packets_invalid_total{kind=\"election\"} 1",
            "elect_packets_invalid_total{kind=\"ok\"} 0",
            "elect_state_writes_total 1",
            "elect_election_duration_seconds_count 1",
            "elect_election_duration_seconds_bucket{le=\"0.032\"} 1",
            "elect_election_duration_seconds_bucket{le=\"0.016\"} 0",
            "# TYPE elect_election_duration_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
        let stats = c.snapshot();
        assert_eq!((stats.sent, stats.received, stats.writes, stats.leader_changes), (2, 1, 1, 1));
        assert_eq!(stats.sent_by_kind, [("election", 0), ("ok", 2), ("announce", 0)]);
        assert_eq!(stats.dropped(Drop::Replayed), 1);
        assert_eq!((stats.dropped(Drop::Invalid), stats.invalid_by_kind.as_slice()), (2, &[("election", 1)][..]));
        assert_eq!((stats.invalid("election"), stats.invalid("ok")), (1, 0));
    }
}
