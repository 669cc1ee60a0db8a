//! The simulator's event loop with nothing in it, which `elect bench` runs beside each scenario.

use crate::event::{Ev, MESSAGE, horizon};
use crate::queue::EventQueue;
use elect_scenario::Delay;

/// The simulator's event loop with nothing in it: `events` deliveries through the same queue, of the same events,
/// under a constant delay of one tick, where each delivery only forwards its message to the next of `processes`
/// processes on a ring (no process state, no counting, no properties). One message starts at each process. What
/// `elect bench` measures beside each scenario, so that a simulator's rate can be read as a fraction of what the
/// machine does with the queue alone. Returns a checksum of the deliveries, which the caller should use so that
/// the loop is not optimized away.
pub fn bare_event_loop(processes: u32, events: u64) -> u64 {
    /// A message of the size of most ring algorithms' (a rank and a small header).
    type Payload = [u64; 2];
    let processes = processes.max(1);
    let mut queue: EventQueue<Ev<Payload, ()>> = EventQueue::new(horizon(Delay::Constant(1))).with_steady(MESSAGE);
    for to in 0..processes {
        queue.push_steady(1, Ev::Deliver { to, port: 0, id: u64::from(to), msg: [u64::from(to), 0] });
    }
    let mut checksum = 0u64;
    for sent in 0..events {
        let Some(now) = queue.next_time() else { break };
        let Ev::Deliver { to, port, msg, .. } = queue.take() else { continue };
        checksum = checksum.wrapping_add(msg[0] ^ u64::from(port));
        let next = if to + 1 == processes { 0 } else { to + 1 };
        queue.push_steady_with(now + 1, || Ev::Deliver { to: next, port: 1, id: sent, msg: [msg[0], msg[1] + 1] });
    }
    checksum
}

#[cfg(test)]
mod tests {
    use super::bare_event_loop;

    #[test]
    fn the_bare_loop_delivers_exactly_the_events_asked_for_in_ring_order() {
        // Three messages start on port 0 at processes 0, 1, 2 (0 + 1 + 2), then go round on port 1, so each adds
        // its origin xor 1: 0 ^ 1, 1 ^ 1, 2 ^ 1, 0 ^ 1 for the next four.
        let origins_on_port_1: u64 = [0u64, 1, 2, 0].iter().map(|origin| origin ^ 1).sum();
        assert_eq!(bare_event_loop(3, 7), 3 + origins_on_port_1);
        assert_eq!(bare_event_loop(3, 3), 3);
        assert_eq!(bare_event_loop(1, 0), 0);
    }
}
