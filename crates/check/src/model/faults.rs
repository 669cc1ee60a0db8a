//! Faults in the model: the scheduled ones of a timed run, and the crashes and recoveries a search may choose, with
//! what the neighbours are told of them.

use super::*;

impl<A: Algorithm> Model<A> {
    /// Carries out the scheduled faults due now, and sets how long until the next one.
    pub(super) fn run_faults(&self, state: &mut State<A::Process>) {
        while let Some(&(at, fault)) = self.schedule.get(state.next_fault as usize) {
            if at > state.now {
                state.fault_in = at - state.now;
                return;
            }
            state.next_fault += 1;
            self.restart_settling(state);
            match fault {
                Scheduled::Crash(node) => self.crash(state, node),
                Scheduled::Recover(node) => self.recover(state, node),
                Scheduled::CrashLeader => unreachable!("refused when the model is built"),
                Scheduled::Resign(node) => {
                    if state.procs[node as usize].is_some() {
                        self.handle(state, node, Event::Command(Command::Resign));
                    }
                }
                Scheduled::Transfer(node, to) => {
                    if state.procs[node as usize].is_some() {
                        self.handle(state, node, Event::Command(Command::Transfer { to }));
                    }
                }
                Scheduled::Link(k, down) => set_bit(&mut state.links_down, k, down),
                Scheduled::Partition(k, on) => set_bit(&mut state.partitions_on, k, on),
            }
        }
        state.fault_in = 0;
    }

    /// A fault happened: a run that ends settled lasts its settling time from now.
    pub(super) fn restart_settling(&self, state: &mut State<A::Process>) {
        if let Some((settle, true)) = self.end {
            state.ends_in = Some(settle);
            state.steady = 0;
        }
    }

    /// How long time runs on once a run that ends settled has settled: its settling time again (none for a run
    /// that ends at the scenario's `until`).
    pub(super) fn steady_window(&self) -> u64 {
        match self.end {
            Some((settle, true)) => settle,
            _ => 0,
        }
    }

    pub(super) fn crash(&self, state: &mut State<A::Process>, node: u32) {
        if state.procs[node as usize].take().is_none() {
            return;
        }
        state.renew(node);
        state.timers.retain(|(n, ..)| *n != node);
        // Without recoveries, the messages on their way to it can only be lost: they are dropped now rather than
        // kept until they are due. They would tell apart states that behave alike, and double the states for each
        // one (lost at the shortest delay or at the longest); no other step is due at the instants they would
        // have been lost at, since every message and timer happens at one end of its own window.
        if !self.may_recover {
            let far = &self.link_far;
            state.msgs.retain(|(slot, _)| far[*slot as usize].0 != node);
        }
        self.tell_neighbors(state, node, false);
    }

    /// As in the simulator: a fresh process, in the driver contract's recovery sequence ([`driver::recover`]).
    pub(super) fn recover(&self, state: &mut State<A::Process>, node: u32) {
        let i = node as usize;
        if state.procs[i].is_some() {
            return;
        }
        state.procs[i] = Some(Arc::new(elect_scenario::build_process(&self.algorithm, &self.scenario, node)));
        state.renew(node);
        let restored = state.durable.get(i).cloned().flatten();
        driver::recover(&mut Recovering { model: self, state, node }, restored, []);
    }

    /// The link layer's view of a crash or a recovery, as in the simulator.
    pub(super) fn tell_neighbors(&self, state: &mut State<A::Process>, node: u32, up: bool) {
        if !A::Process::HEARS_LINKS {
            return;
        }
        let graph = &self.scenario.graph;
        for port in 0..graph.degree(node) {
            let end = graph.far_end(node, port);
            if end.node != node && state.procs[end.node as usize].is_some() {
                self.handle(state, end.node, Event::Link { port: Port(end.port), up });
            }
        }
    }
}
