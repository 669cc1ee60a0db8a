//! The answers a member owes at the end of an instant. A packet from a member that is behind (it has seen less than
//! this member, or leads under a grant older than an epoch this member knows) is answered with an `announce` of
//! what this member knows, and so is a question. The answers go out once the instant's packets have all arrived,
//! one to each sender: whether a sender is behind is judged against what this member knows by then, so that
//! packets arriving together are answered alike in whichever order they are read. Read one by one, a packet that
//! raised this member's epoch made the packets read after it look behind and those read before it not, and the
//! answers sent differed with the order.

use std::collections::BTreeMap;

use elect_core::{Epoch, Port};

/// What the packets of one instant from one sender showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Shown {
    /// The highest epoch its packets said it had seen.
    pub(super) seen: Epoch,
    /// The highest grant they carried, if any did.
    pub(super) lead: Option<Epoch>,
    /// One of them must be answered whatever the sender knows (a question, or a learner's introduction).
    pub(super) answer: bool,
}

/// What a member tells the others in an `announce`: its `seen` and its grant.
pub(super) type Told = (Epoch, Option<Epoch>);

/// The senders heard at this instant, by the port they came from, not answered yet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Replies {
    owed: BTreeMap<Port, Shown>,
    /// What this member announced to every other member since the instant's first packet, if it did (a new
    /// grant): its `seen` and grant then.
    announced: Option<Told>,
}

impl Replies {
    /// Notes a packet from `port` that showed `seen` and `lead`, and that must be answered anyway if `answer`.
    /// Returns whether it is the first packet of the instant (the caller then arms the timer the answers go out
    /// at).
    pub(super) fn note(&mut self, port: Port, seen: Epoch, lead: Option<Epoch>, answer: bool) -> bool {
        let first = self.owed.is_empty();
        let shown = self.owed.entry(port).or_insert(Shown { seen, lead, answer });
        shown.seen = shown.seen.max(seen);
        shown.lead = shown.lead.max(lead);
        shown.answer |= answer;
        first
    }

    /// Whether answers may be owed: a packet arrived since the last [`Self::take`].
    pub(super) fn owing(&self) -> bool {
        !self.owed.is_empty()
    }

    /// This member told every other member that it has seen `seen` and leads under `lead`. Noted only while
    /// answers are owed (the timer they go out at clears it).
    pub(super) fn announced(&mut self, seen: Epoch, lead: Option<Epoch>) {
        if self.owing() {
            self.announced = Some((seen, lead));
        }
    }

    /// The senders heard since the last call, each once, in the order of their ports, and what was announced to
    /// all since, if anything was.
    pub(super) fn take(&mut self) -> (BTreeMap<Port, Shown>, Option<Told>) {
        (std::mem::take(&mut self.owed), self.announced.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elect_core::NodeId;

    #[test]
    fn what_a_sender_showed_is_the_same_in_any_order() {
        let (low, high) = (Epoch::of(1, NodeId(1)), Epoch::of(2, NodeId(3)));
        let packets = [(Port(0), low, None, false), (Port(1), high, Some(high), false), (Port(0), high, None, true)];
        let mut forward = Replies::default();
        let firsts: Vec<bool> = packets.iter().map(|&(p, s, l, a)| forward.note(p, s, l, a)).collect();
        assert_eq!(firsts, [true, false, false]);
        let mut backward = Replies::default();
        for &(p, s, l, a) in packets.iter().rev() {
            backward.note(p, s, l, a);
        }
        forward.announced(high, Some(high));
        let (taken, announced) = forward.take();
        assert_eq!(announced, Some((high, Some(high))));
        assert_eq!(taken, backward.take().0);
        assert_eq!(taken[&Port(0)], Shown { seen: high, lead: None, answer: true });
        assert_eq!(forward.take(), (BTreeMap::new(), None), "taken once");
        forward.announced(high, None);
        assert_eq!(forward.take().1, None, "nothing is noted while no answer is owed");
    }
}
