//! A message's delivery: the path of a plain run on a perfect network, where a step is the handler and its sends
//! go straight to the queue, and the rest (a process down or out of range, the trace).

use super::*;

impl<A: Algorithm> Sim<A> {
    /// Delivers `msg`, sent with id `id`, to process `to` on its port `port`: dropped if the process is down or,
    /// in a mobile network, out of range; otherwise counted, traced and handled. A plain run on a perfect network
    /// has nothing to trace and no range to check, and takes a path of its own ([`Self::handle_express`]).
    #[inline(always)]
    pub(super) fn deliver(
        &mut self,
        to: u32,
        port: u32,
        id: u64,
        msg: Msg<A>,
        effects: &mut Vec<EffectOf<A::Process>>,
    ) {
        if let Some(at) = self.express_arrival() {
            if self.down == 0 || self.up[to as usize] {
                self.count_event();
                self.counters.delivered += 1;
                self.handle_express(to, Event::Message { from: Port(port), msg }, effects, at);
            }
            return;
        }
        self.deliver_modelled(to, port, id, msg, effects);
    }

    /// The rest of [`Self::deliver`] when the run is not plain, a call of its own: inlined beside the plain path,
    /// a second copy of the handler made the loop larger (split off, Chang-Roberts's worst case took 0.95 of the
    /// time, Hirschberg-Sinclair on 2^20 processes 0.97).
    #[inline(never)]
    fn deliver_modelled(&mut self, to: u32, port: u32, id: u64, msg: Msg<A>, effects: &mut Vec<EffectOf<A::Process>>) {
        let sender = |sim: &Self| sim.id(sim.scenario.graph.far_end(to, port).node);
        if !self.up[to as usize] {
            let from = sender(self);
            self.record(Record::Drop { t: self.t(), node: self.id(to), from, id, reason: "down".into() });
            return;
        }
        if let Some(m) = &self.mobile
            && !m.in_range(to, self.scenario.graph.far_end(to, port).node)
        {
            self.counters.lost += 1;
            let from = sender(self);
            self.record(Record::Drop { t: self.t(), node: self.id(to), from, id, reason: "out of range".into() });
            return;
        }
        self.count_event();
        self.counters.delivered += 1;
        if self.trace.is_some() {
            let from = sender(self);
            self.record(Record::Deliver {
                t: self.t(),
                node: self.id(to),
                from,
                id,
                kind: msg.kind().into(),
                text: msg.describe().into(),
                msg: Some(&msg),
            });
        }
        self.handle_with(to, Event::Message { from: Port(port), msg }, effects);
    }

    /// [`Self::handle_with`] in a plain run on a perfect network ([`Self::express`]), its sends to arrive at
    /// `at`: no trace to keep and no parent to follow, so the step is the handler, its sends going straight into
    /// the queue's slots ([`Express`]) instead of through the effects buffer, whose copy out would wait for the
    /// handler's narrow stores to reach the cache, and the status compared.
    #[inline(always)]
    pub(super) fn handle_express(
        &mut self,
        node: u32,
        event: EventOf<A::Process>,
        effects: &mut Vec<EffectOf<A::Process>>,
        at: u64,
    ) {
        debug_assert!(self.trace.is_none() && self.mobile.is_none(), "a plain run has no trace and no moving nodes");
        let now = Instant::from_ticks(self.now);
        let Self { procs, queue, counters, scenario, .. } = self;
        let process = &mut procs[node as usize];
        let before = process.status_key();
        let mut outbox = Express { queue, counters, graph: &scenario.graph, node, at };
        driver::handle_sending(process, now, event, effects, &mut outbox);
        let after = process.status_key();
        debug_assert_eq!(after.status(), process.status(), "a status key stands for the status");
        if !effects.is_empty() {
            driver::carry_out(&mut At { sim: self, node }, effects);
        }
        if after != before && after.status() != before.status() {
            self.changed(node, before.status(), after.status());
        }
    }
}
