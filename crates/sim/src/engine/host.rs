//! The simulator as the host of a process's effects ([`Host`]) and as the driver of its restart ([`Restart`]).

use super::*;

/// The simulator as the host of process `node`'s effects: a send is counted and queued under the network model,
/// a timer is drawn from its span with the run's timer stream and queued, durable state is kept in memory, a notice
/// is traced and judged.
pub(super) struct At<'a, A: Algorithm> {
    pub(super) sim: &'a mut Sim<A>,
    pub(super) node: u32,
}

impl<A: Algorithm> Host<A::Process> for At<'_, A> {
    #[inline(always)]
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        self.sim.send(self.node, to, msg);
    }

    fn set_timer(&mut self, timer: TimerOf<A>, after: Span) {
        let sim = &mut *self.sim;
        let (after, seq) = sim.timers.arm(self.node, timer, after);
        let at = sim.later(after);
        sim.queue.push(at, TIMER, Ev::Timer { node: self.node, timer, seq });
        // A traced run says when each timer will fire, so that its pictures can show it running down.
        if sim.trace.is_some() {
            let text = A::Process::describe_timer(&timer);
            sim.record(Record::Arm { t: sim.t(), node: sim.id(self.node), text: text.into(), at: Time(at) });
        }
    }

    fn cancel_timer(&mut self, timer: TimerOf<A>) {
        let sim = &mut *self.sim;
        if sim.timers.cancel(self.node, timer) && sim.trace.is_some() {
            let text = A::Process::describe_timer(&timer);
            sim.record(Record::Disarm { t: sim.t(), node: sim.id(self.node), text: text.into() });
        }
    }

    fn persist(&mut self, durable: DurableOf<A>) {
        self.sim.durable[self.node as usize] = Some(durable);
    }

    fn notify(&mut self, notice: Notice) {
        self.sim.notice(self.node, notice);
    }
}

/// The simulator's part in a recovery ([`driver::recover`]): every event is one of the process's steps (the
/// initiation is counted and traced as a command), and the neighbours see its links come back.
pub(super) struct Recovering<'a, A: Algorithm> {
    pub(super) sim: &'a mut Sim<A>,
    pub(super) node: u32,
}

impl<A: Algorithm> Restart<A::Process> for Recovering<'_, A> {
    fn run(&mut self, event: EventOf<A::Process>) {
        if let Event::Command(cmd) = event {
            self.sim.count_event();
            self.sim.record(Record::Command { t: self.sim.t(), node: self.sim.id(self.node), cmd });
        }
        self.sim.handle(self.node, event);
    }

    fn tell_neighbors(&mut self) {
        self.sim.judge.on = true;
        self.sim.tell_neighbors(self.node, true);
        self.sim.refresh_availability();
        self.sim.recheck();
    }
}
