//! A state as the host of a process's effects ([`Host`]) and as the driver of its restart ([`Restart`]).

use std::borrow::Cow;

use elect_algos::Algorithm;
use elect_core::driver::{self, Host, Restart};
use elect_core::{Epoch, EventOf, Instant, Notice, Port, Process, Property, Span, Violation};

use super::Model;
use super::fingerprints::fingerprint;
use super::state::*;

/// A state as the host of process `node`'s effects: a send is put in flight on its link (unless a link fault or a
/// partition stops it), due within the delay bounds in timed runs; a timer is armed, due at either end of its span;
/// durable state is kept in the state when the process may recover; an "I am the leader" notice is kept for P-Unique.
pub(super) struct InState<'a, A: Algorithm> {
    pub(super) model: &'a Model<A>,
    pub(super) state: &'a mut State<A::Process>,
    pub(super) node: u32,
}

impl<A: Algorithm> Host<A::Process> for InState<'_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, <A::Process as Process>::Msg>) {
        let (model, node) = (self.model, self.node);
        if let Some(next) = &model.next_port {
            assert_eq!(
                next[node as usize],
                to.0,
                "{} declares that it sends only on the ring's next port, but sent on port {}",
                model.algorithm.info().name,
                to.0
            );
        }
        let slot = model.scenario.graph.link_index(node, to.0);
        if model.blocked(self.state, slot) {
            return;
        }
        // A message for a process that is down and cannot come back has no effect: it is not kept (see
        // `Model::crash`). (While the initial state is built, the processes not built yet are not down.)
        if !model.may_recover && self.state.procs.get(model.link_far[slot].0 as usize) == Some(&DOWN) {
            return;
        }
        let due = if model.config.timed { Due::after(model.delays.0, model.delays.1) } else { Due::ANY };
        let slot = slot as u32;
        let link = self.state.link(slot);
        let msg = msg.into_owned();
        let fp = fingerprint(&msg);
        let id = model.messages.intern(msg, fp);
        let item = InFlight { id, fp, due };
        let at = if model.fifo() {
            link.end
        } else {
            // A canonical order: by fingerprint (equal messages are interchangeable).
            let key = item.key();
            link.start + self.state.msgs[link].partition_point(|(_, m)| m.key() <= key)
        };
        self.state.change_link(slot, |msgs| msgs.insert(at, (slot, item)));
    }

    fn set_timer(&mut self, timer: <A::Process as Process>::Timer, after: Span) {
        let node = self.node;
        let due = if self.model.config.timed { Due::after(after.min.ticks(), after.max.ticks()) } else { Due::ANY };
        let state = &mut *self.state;
        let mine = state.node_timers(node);
        match state.timers[mine.clone()].binary_search_by(|(_, t, _)| t.cmp(&timer)) {
            Ok(at) => state.timers[mine.start + at].2 = due,
            Err(at) => state.timers.insert(mine.start + at, (node, timer, due)),
        }
    }

    fn cancel_timer(&mut self, timer: <A::Process as Process>::Timer) {
        let node = self.node;
        self.state.timers.retain(|(n, t, _)| (*n, *t) != (node, timer));
    }

    fn persist(&mut self, durable: <A::Process as Process>::Durable) {
        if self.model.may_recover {
            self.state.durable[self.node as usize] = Some(durable);
        }
    }

    fn notify(&mut self, notice: Notice) {
        let Notice::Elected { epoch } = notice else { return };
        let model = self.model;
        if !model.unique && !model.fresh {
            return;
        }
        let (state, node) = (&mut *self.state, self.node);
        let at = state.declared.partition_point(|&(e, _)| e < epoch);
        match state.declared.get(at) {
            Some(&(e, other)) if e == epoch && other & !PAST_LIFE != node => {
                if model.unique {
                    state.rest.clash.get_or_insert((epoch, other & !PAST_LIFE, node));
                }
            }
            Some(&(e, other)) if e == epoch && other != node => {
                if model.fresh {
                    state.rest.clash.get_or_insert((epoch, node, node));
                }
            }
            Some(&(e, _)) if e == epoch => {}
            _ => state.declared.insert(at, (epoch, node)),
        }
    }
}

/// The mark of a declaration made by a past life of its process ([`Model::past_life`]): positions are far below it.
const PAST_LIFE: u32 = 1 << 31;

impl<A: Algorithm> Model<A> {
    /// Runs one event at the live process at `node` and carries out its effects (the driver contract,
    /// [`driver`]).
    pub(super) fn handle(&self, state: &mut State<A::Process>, node: u32, event: EventOf<A::Process>) {
        let buffer = self.effects.get_or_default();
        let mut effects = buffer.take();
        let mut p = self.process(state, node).expect("only live processes handle events").clone();
        driver::handle(&mut p, Instant::from_ticks(state.rest.now), event, &mut effects);
        self.put(state, node, Some(p));
        driver::carry_out(&mut InState { model: self, state, node }, &mut effects);
        buffer.replace(effects);
    }

    /// Process `node` restarts: what it declared so far was declared by a past life, which fresh-epoch tells apart
    /// from what it declares from now on.
    pub(super) fn past_life(&self, state: &mut State<A::Process>, node: u32) {
        if self.fresh {
            for (_, who) in state.declared.iter_mut().filter(|(_, who)| *who == node) {
                *who |= PAST_LIFE;
            }
        }
    }

    /// The violation a recorded clash of declarations is: two processes in one epoch (P-Unique), or one process
    /// in an epoch it declared before it restarted (fresh-epoch).
    pub(super) fn clash(&self, (epoch, first, second): (Epoch, u32, u32)) -> Violation {
        let id = |i: u32| self.scenario.ids[i as usize];
        let within = epoch.within();
        if first == second {
            return Violation {
                property: Property::FreshEpoch,
                node: Some(id(second)),
                detail: format!(
                    "node {} declared itself leader{within} before it restarted, and again after",
                    id(second)
                ),
            };
        }
        Violation {
            property: Property::Uniqueness,
            node: Some(id(second)),
            detail: format!("nodes {} and {} both declared themselves leader{within}", id(first), id(second)),
        }
    }
}

/// The checker's part in a recovery ([`driver::recover`]): each event is a step of the process, and the
/// neighbours see its links come back.
pub(super) struct Recovering<'a, A: Algorithm> {
    pub(super) model: &'a Model<A>,
    pub(super) state: &'a mut State<A::Process>,
    pub(super) node: u32,
}

impl<A: Algorithm> Restart<A::Process> for Recovering<'_, A> {
    fn run(&mut self, event: EventOf<A::Process>) {
        self.model.handle(self.state, self.node, event);
    }

    fn tell_neighbors(&mut self) {
        self.model.tell_neighbors(self.state, self.node, true);
    }
}
