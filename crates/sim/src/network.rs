//! The state of the network during a run: which links are down, which partitions hold, and the fate of each
//! message (delivered, delivered twice, or lost and why).
//!
//! A message's fate is decided when it is sent: a message already in flight when a link goes down still arrives.
//! Loss and duplication are drawn from their own stream of the seed.

use std::collections::BTreeMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use elect_scenario::rng::{Stream, rng};
use elect_scenario::{Losses, PartitionFault, Probability};

/// What happens to one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It arrives.
    Deliver,
    /// It arrives twice.
    Twice,
    /// It is lost, for this reason.
    Lost(&'static str),
}

pub(crate) struct Network {
    /// Directed links that are down, with the number of faults keeping them down.
    down: BTreeMap<(u32, u32), u32>,
    /// Partitions in force (indices into the scenario's list).
    partitions: Vec<usize>,
    losses: Losses,
    duplicate: Probability,
    rng: ChaCha8Rng,
    /// Nothing is down, cut, lost or duplicated: every message is delivered once (the common case, decided
    /// without a call).
    perfect: bool,
}

impl Network {
    pub(crate) fn new(losses: Losses, duplicate: Probability, seed: u64) -> Self {
        let perfect = !losses.any() && duplicate.is_never();
        Self {
            down: BTreeMap::new(),
            partitions: Vec::new(),
            losses,
            duplicate,
            rng: rng(seed, Stream::Network),
            perfect,
        }
    }

    /// Whether every message sent now is delivered once.
    #[inline(always)]
    pub(crate) fn is_perfect(&self) -> bool {
        self.perfect
    }

    fn refresh(&mut self) {
        self.perfect =
            self.down.is_empty() && self.partitions.is_empty() && !self.losses.any() && self.duplicate.is_never();
    }

    fn draw(&mut self, p: Probability) -> bool {
        !p.is_never() && (p == Probability::ALWAYS || self.rng.random_range(0..Probability::ALWAYS.0) < p.0)
    }

    /// Whether something other than loss stops messages from `from` to `to` now.
    fn blocked(&self, from: u32, to: u32, partitions: &[PartitionFault]) -> Option<&'static str> {
        if !self.down.is_empty() && self.down.contains_key(&(from, to)) {
            return Some("link-down");
        }
        self.partitions.iter().any(|&p| partitions[p].cuts(from, to)).then_some("partition")
    }

    /// The fate of a message sent now from position `from` to `to`.
    #[inline(always)]
    pub(crate) fn fate(&mut self, from: u32, to: u32, partitions: &[PartitionFault]) -> Fate {
        if self.perfect { Fate::Deliver } else { self.draw_fate(from, to, partitions) }
    }

    #[inline(never)]
    fn draw_fate(&mut self, from: u32, to: u32, partitions: &[PartitionFault]) -> Fate {
        if let Some(reason) = self.blocked(from, to, partitions) {
            return Fate::Lost(reason);
        }
        if self.draw(self.losses.on(from, to)) {
            return Fate::Lost("loss");
        }
        if self.draw(self.duplicate) { Fate::Twice } else { Fate::Deliver }
    }

    /// Whether `a` and `b` can currently exchange messages both ways (Stoller's "connected").
    pub(crate) fn connected(&self, a: u32, b: u32, partitions: &[PartitionFault]) -> bool {
        let open =
            |from, to| self.blocked(from, to, partitions).is_none() && self.losses.on(from, to) != Probability::ALWAYS;
        open(a, b) && open(b, a)
    }

    /// Takes the directed links `pairs` down, or brings them back up.
    pub(crate) fn set_links(&mut self, pairs: &[(u32, u32)], down: bool) {
        for &pair in pairs {
            if down {
                *self.down.entry(pair).or_insert(0) += 1;
            } else if let Some(count) = self.down.get_mut(&pair) {
                *count -= 1;
                if *count == 0 {
                    self.down.remove(&pair);
                }
            }
        }
        self.refresh();
    }

    /// Puts partition `index` in force, or heals it.
    pub(crate) fn set_partition(&mut self, index: usize, on: bool) {
        if on {
            self.partitions.push(index);
        } else if let Some(k) = self.partitions.iter().position(|&p| p == index) {
            self.partitions.remove(k);
        }
        self.refresh();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_scenario::Window;

    fn partition(groups: &[u16], one_way: bool) -> PartitionFault {
        PartitionFault { group_of: groups.to_vec(), one_way, window: Window { from: 0, until: None } }
    }

    #[test]
    fn links_and_partitions_block_in_the_right_directions() {
        let partitions = [partition(&[1, 1, 2, 0], false), partition(&[1, 2, 0, 0], true)];
        let mut net = Network::new(Losses::default(), Probability::NEVER, 1);
        assert_eq!(net.fate(0, 2, &partitions), Fate::Deliver);
        net.set_partition(0, true);
        assert_eq!(net.fate(0, 2, &partitions), Fate::Lost("partition"));
        assert_eq!(net.fate(2, 1, &partitions), Fate::Lost("partition"));
        assert_eq!(net.fate(0, 3, &partitions), Fate::Deliver, "process 3 is in no group");
        assert!(!net.connected(0, 2, &partitions) && net.connected(0, 1, &partitions));
        net.set_partition(0, false);
        net.set_partition(1, true);
        assert_eq!(net.fate(0, 1, &partitions), Fate::Lost("partition"));
        assert_eq!(net.fate(1, 0, &partitions), Fate::Deliver, "one way only");
        assert!(!net.connected(0, 1, &partitions));
        net.set_partition(1, false);
        net.set_links(&[(3, 0)], true);
        net.set_links(&[(3, 0)], true);
        net.set_links(&[(3, 0)], false);
        assert_eq!(net.fate(3, 0, &partitions), Fate::Lost("link-down"), "still held down by the other fault");
        net.set_links(&[(3, 0)], false);
        assert_eq!(net.fate(3, 0, &partitions), Fate::Deliver);
    }

    #[test]
    fn loss_and_duplication_follow_their_probabilities() {
        let losses =
            Losses { everywhere: "0.25".parse().unwrap(), links: BTreeMap::from([((0, 1), Probability::ALWAYS)]) };
        let mut net = Network::new(losses, "0.5".parse().unwrap(), 7);
        assert_eq!(net.fate(0, 1, &[]), Fate::Lost("loss"));
        let fates: Vec<Fate> = (0..10_000).map(|_| net.fate(1, 0, &[])).collect();
        let lost = fates.iter().filter(|f| matches!(f, Fate::Lost(_))).count();
        let twice = fates.iter().filter(|&&f| f == Fate::Twice).count();
        assert!((2300..2700).contains(&lost), "{lost}");
        assert!((3500..4000).contains(&twice), "{twice}: half of the 75% delivered");
        assert!(!net.connected(0, 1, &[]), "a link that loses everything is not connected");
    }
}
