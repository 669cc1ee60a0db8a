//! The events of a run: what the event queue holds, the order of their classes at one time, and, in a plain run,
//! how a step's sends become deliveries without passing through the step's effects.

use elect_core::{Command, Message, Outbox, Port};
use elect_scenario::{Delay, Graph, Scheduled};

use crate::finish::Counters;
use crate::queue::EventQueue;

/// Event classes, in the order they run at equal times: a fault at `T` takes effect before anything else at `T`,
/// commands come next, then messages, and timers last (a reply arriving exactly at a deadline beats it).
pub(crate) const FAULT: usize = 0;
pub(crate) const COMMAND: usize = 1;
pub(crate) const MESSAGE: usize = 2;
pub(crate) const TIMER: usize = 3;

#[derive(Clone)]
pub(crate) enum Ev<M, T> {
    Deliver { to: u32, port: u32, id: u64, msg: M },
    Timer { node: u32, timer: T, seq: u64 },
    Command { node: u32, cmd: Command },
    Fault(Fault),
}

/// A scheduled change to a process or the network: one the scenario scheduled, or a step of the mobile nodes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fault {
    Scheduled(Scheduled),
    /// The nodes of a mobile network move one step.
    Move,
}

/// What the queue's FIFO leaves in the place of an event it has given out (never dispatched).
impl<M, T> Default for Ev<M, T> {
    fn default() -> Self {
        Self::Fault(Fault::Move)
    }
}

/// How far ahead the event queue's wheel should reach: twice the longest likely delay.
pub(crate) fn horizon(delay: Delay) -> u64 {
    2 * match delay {
        Delay::Constant(d) | Delay::Uniform(_, d) => d,
        Delay::Exp(mean) => 4 * mean,
    }
}

/// Counts a message sent now (its kind, its bits on the wire, one more send) and returns its id, the run's count of
/// sends so far.
#[inline(always)]
pub(crate) fn count_send<M: Message>(counters: &mut Counters, msg: &M) -> u64 {
    counters.by_kind[msg.kind_index()] += 1;
    let bytes = msg.wire_size().unwrap_or_else(|| encoded_size(msg));
    debug_assert_eq!(bytes, encoded_size(msg), "{msg:?}: Message::wire_size is not the encoding's size");
    counters.bits += 8 * bytes;
    counters.sent += 1;
    counters.sent
}

/// The bytes of `msg` in the wire encoding, found by encoding it (where [`elect_core::Message::wire_size`] does not
/// say).
fn encoded_size<M: serde::Serialize>(msg: &M) -> u64 {
    postcard::experimental::serialized_size(msg).expect("messages serialize") as u64
}

/// Where a step's sends go in a plain run on a perfect network: counted, and built in place in the queue's FIFO
/// from `node`, to arrive at `at`: the sends a handler makes before any other effect
/// ([`elect_core::driver::handle_sending`]), and the engine's own send in such a run for the rest.
pub(crate) struct Express<'a, M, T> {
    pub(crate) queue: &'a mut EventQueue<Ev<M, T>>,
    pub(crate) counters: &'a mut Counters,
    pub(crate) graph: &'a Graph,
    pub(crate) node: u32,
    pub(crate) at: u64,
}

impl<M: Message, T: Clone> Outbox<M> for Express<'_, M, T> {
    #[inline(always)]
    fn send(&mut self, to: Port, msg: M) {
        let end = self.graph.far_end(self.node, to.0);
        let id = count_send(self.counters, &msg);
        self.queue.push_steady_with(self.at, || Ev::Deliver { to: end.node, port: end.port, id, msg });
    }
}
