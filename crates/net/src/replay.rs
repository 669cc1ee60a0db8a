//! Replay protection: which packets of a peer have already been accepted.
//!
//! Every packet carries its sender's incarnation (bumped and persisted on every start) and a sequence number that
//! counts the sender's packets within the incarnation, from 1. For each peer a member remembers the peer's latest
//! incarnation and a sliding window of the last [`Window::SIZE`] sequence numbers below the highest accepted one,
//! as a bitmap (the anti-replay window of IPsec, RFC 4303 §3.4.3, and of WireGuard):
//!
//! - a packet of an older incarnation is dropped (`stale-incarnation`);
//! - a packet of a newer incarnation starts a new window (the peer restarted);
//! - within the incarnation, a sequence number above the highest slides the window up; one within the window is
//!   accepted once (datagrams may be reordered), and one already accepted, or older than the window, is dropped
//!   (`replayed`).
//!
//! The runtime consults the window only for a packet that has passed every other check, its tag included
//! ([`crate::auth`]), so a forged packet cannot move the window and shut the real sender out.
//!
//! A member that has heard nothing from a peer yet (it has just started) takes the peer's first packet at its word:
//! in a keyed cluster, a packet recorded from an earlier incarnation of the peer and replayed to a member that has
//! just started is accepted once, until the peer's next packet shows its current incarnation. Fencing epochs make
//! that harmless for leadership: such a packet can only name epochs the cluster has already left behind.

use crate::wire::Drop;

/// One peer's anti-replay state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    incarnation: u64,
    /// The highest sequence number accepted in this incarnation (0 before the first).
    top: u64,
    /// Bit `i` is set when `top - i` was accepted. Bit 0 of a new window stands for sequence number 0, which no
    /// sender uses, so it is never accepted.
    accepted: u64,
}

/// What [`Window::admit`] found out about an accepted packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// A packet of the incarnation already known.
    Fresh,
    /// The first packet heard of a newer incarnation: the peer restarted.
    Restarted,
}

impl Window {
    /// How many sequence numbers below the highest accepted one are remembered.
    pub const SIZE: u64 = u64::BITS as u64;

    /// The window opened by the first packet heard from a peer.
    pub fn first(incarnation: u64, seq: u64) -> Result<Self, Drop> {
        let mut window = Self::new(incarnation);
        window.admit(incarnation, seq)?;
        Ok(window)
    }

    fn new(incarnation: u64) -> Self {
        Self { incarnation, top: 0, accepted: 1 }
    }

    /// The peer's latest incarnation.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// Accepts and remembers packet `(incarnation, seq)`, or says why it must be dropped (and remembers nothing).
    /// Call it only for a packet that is otherwise accepted: authentic, well-formed, from this peer.
    pub fn admit(&mut self, incarnation: u64, seq: u64) -> Result<Admitted, Drop> {
        let mut admitted = Admitted::Fresh;
        if incarnation < self.incarnation {
            return Err(Drop::StaleIncarnation);
        }
        let mut next = *self;
        if incarnation > self.incarnation {
            next = Self::new(incarnation);
            admitted = Admitted::Restarted;
        }
        if seq > next.top {
            let shift = seq - next.top;
            next.accepted = if shift >= Self::SIZE { 0 } else { next.accepted << shift };
            next.accepted |= 1;
            next.top = seq;
        } else {
            let age = next.top - seq;
            if age >= Self::SIZE || next.accepted & (1 << age) != 0 {
                return Err(Drop::Replayed);
            }
            next.accepted |= 1 << age;
        }
        *self = next;
        Ok(admitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit_all(window: &mut Window, seqs: &[u64]) -> Vec<Result<Admitted, Drop>> {
        seqs.iter().map(|&seq| window.admit(1, seq)).collect()
    }

    #[test]
    fn packets_in_order_are_accepted_once() {
        let mut w = Window::first(1, 1).unwrap();
        assert!(admit_all(&mut w, &[2, 3, 4, 100, 101]).iter().all(|r| *r == Ok(Admitted::Fresh)));
        assert_eq!(admit_all(&mut w, &[101, 100, 4, 1]), [Err(Drop::Replayed); 4]);
    }

    #[test]
    fn packets_reordered_within_the_window_are_accepted_once_each() {
        let mut w = Window::first(1, 100).unwrap();
        assert_eq!(admit_all(&mut w, &[98, 99, 97, 102, 101]), [Ok(Admitted::Fresh); 5]);
        assert_eq!(admit_all(&mut w, &[97, 98, 99, 100, 101, 102]), [Err(Drop::Replayed); 6]);
        // The oldest number the window still holds, then one below it.
        let oldest = 102 - (Window::SIZE - 1);
        assert_eq!(w.admit(1, oldest), Ok(Admitted::Fresh));
        assert_eq!(w.admit(1, oldest), Err(Drop::Replayed));
        assert_eq!(w.admit(1, oldest - 1), Err(Drop::Replayed));
    }

    #[test]
    fn duplicates_are_dropped() {
        let mut w = Window::first(1, 1).unwrap();
        assert_eq!(w.admit(1, 1), Err(Drop::Replayed));
        assert_eq!(w.admit(1, 2), Ok(Admitted::Fresh));
        assert_eq!(w.admit(1, 2), Err(Drop::Replayed));
    }

    #[test]
    fn packets_older_than_the_window_are_dropped_even_if_never_seen() {
        let mut w = Window::first(1, 1).unwrap();
        assert_eq!(w.admit(1, 1 + Window::SIZE + 5), Ok(Admitted::Fresh));
        // 2 was never accepted, but the window has moved past it: it cannot be told from a replay.
        assert_eq!(w.admit(1, 2), Err(Drop::Replayed));
        assert_eq!(w.admit(1, 6), Err(Drop::Replayed));
        assert_eq!(w.admit(1, 7), Ok(Admitted::Fresh), "the oldest number in the window");
        // A jump of exactly the window's size forgets everything before it.
        let mut w = Window::first(1, 5).unwrap();
        assert_eq!(w.admit(1, 5 + Window::SIZE), Ok(Admitted::Fresh));
        assert_eq!(w.admit(1, 5), Err(Drop::Replayed));
        assert_eq!(w.admit(1, 6), Ok(Admitted::Fresh));
        // Sequence number 0 is never sent, and never accepted.
        assert_eq!(Window::first(1, 0), Err(Drop::Replayed));
        assert_eq!(Window::first(1, u64::MAX).unwrap().admit(1, u64::MAX), Err(Drop::Replayed));
    }

    #[test]
    fn a_new_incarnation_resets_the_window_and_an_old_one_is_stale() {
        let mut w = Window::first(3, 1).unwrap();
        assert_eq!(w.admit(3, 500), Ok(Admitted::Fresh));
        assert_eq!(w.admit(2, 501), Err(Drop::StaleIncarnation));
        assert_eq!(w.admit(4, 1), Ok(Admitted::Restarted));
        assert_eq!(w.incarnation(), 4);
        assert_eq!(w.admit(4, 2), Ok(Admitted::Fresh));
        assert_eq!(w.admit(4, 1), Err(Drop::Replayed));
        assert_eq!(w.admit(3, 501), Err(Drop::StaleIncarnation));
        // A dropped packet changes nothing: not even a replay in a newer incarnation that is refused.
        let before = w;
        assert_eq!(w.admit(5, 0), Err(Drop::Replayed));
        assert_eq!(w, before);
    }
}
