//! What the properties read of a state: the processes' statuses, as the judge's [`World`].

use elect_algos::Algorithm;
use elect_core::{NodeId, Process, Rank, Status, World};

use super::Model;
use super::reads::Reads;
use super::state::*;

impl<A: Algorithm> Model<A> {
    /// `state` as the property predicates see it.
    pub(crate) fn view<'a>(&'a self, state: &'a State<A::Process>) -> View<'a, A> {
        View { state, model: self }
    }

    /// Whether every live process follows the same leader (judged on chosen properties only, whether a leader
    /// reaches every live process it can talk to).
    pub(crate) fn agreed(&self, state: &State<A::Process>) -> bool {
        if !self.config.sim.only.is_empty() {
            return self.leads_whom_it_can_reach(state);
        }
        let mut leaders = (0..state.len() as u32).filter_map(|i| self.process(state, i)).map(|p| p.status().leader);
        match leaders.next() {
            Some(Some(first)) => leaders.all(|l| l == Some(first)),
            _ => false,
        }
    }

    /// Whether some live process says it leads and every live process that can talk to it both ways follows it:
    /// the leader a check judged on chosen properties only (`--only`) must reach, since under a fault that never
    /// heals the processes cut off from the others cannot all agree.
    fn leads_whom_it_can_reach(&self, state: &State<A::Process>) -> bool {
        let view = View { state, model: self };
        let live: Vec<usize> = (0..state.len()).filter(|&i| self.process(state, i as u32).is_some()).collect();
        live.iter().any(|&l| {
            let me = Some(view.id(l));
            view.status(l).leader == me
                && live.iter().all(|&i| i == l || !view.connected(l, i) || view.status(i).leader == me)
        })
    }

    /// Whether a step from `before` to `after` changed what the properties read: a status, or the declarations
    /// P-Unique is judged on.
    pub(crate) fn visible(&self, before: &State<A::Process>, after: &State<A::Process>) -> bool {
        before.declared != after.declared
            || before.rest.clash != after.rest.clash
            || (before.procs != after.procs && self.statuses(before).ne(self.statuses(after)))
    }

    /// Whether the reduction must treat a step from `before` to `after` as visible (its condition C2: a persistent
    /// set with a visible step is not taken). Timed runs hide status changes and declarations from it until the run
    /// has settled, but for what some "always" property reads of the statuses: who says it leads, for one-leader
    /// alone, or the whole statuses; [`crate::reduce`] says why that is sound.
    pub(crate) fn visible_to_reduction(&self, before: &State<A::Process>, after: &State<A::Process>) -> bool {
        if !self.settling(before) {
            return self.visible(before, after);
        }
        match self.always_reads {
            Reads::Nothing => false,
            Reads::Leading => (0..before.len() as u32).any(|i| {
                before.procs[i as usize] != after.procs[i as usize] && self.leads(before, i) != self.leads(after, i)
            }),
            Reads::Statuses => self.visible(before, after),
        }
    }

    /// Whether the process at `node` is live and says it leads (what one-leader reads).
    pub(crate) fn leads(&self, state: &State<A::Process>, node: u32) -> bool {
        self.process(state, node).is_some_and(|p| p.status().leader == Some(self.scenario.ids[node as usize]))
    }

    /// Tests: the reduction keeps status changes visible everywhere, as it does where an "always" property reads
    /// the statuses.
    #[cfg(test)]
    pub(crate) fn keep_statuses_visible(&mut self) {
        self.always_reads = Reads::Statuses;
    }

    /// Whether `state` is part of a timed run that has not settled yet: its settling time after the last fault, or
    /// the time until the scenario's end, has not passed. No cycle of the state graph should pass there, since the
    /// settling time only runs down; the search checks it ([`crate::search`]).
    pub(crate) fn settling(&self, state: &State<A::Process>) -> bool {
        self.config.timed && state.rest.ends_in.is_some_and(|left| left > 0)
    }

    /// Whether `after` shows the properties what `before` does: the same statuses, declarations, and links cut.
    /// Then its "always" verdicts are `before`'s.
    pub(crate) fn same_view(&self, before: &State<A::Process>, after: &State<A::Process>) -> bool {
        (before.rest.links_down, before.rest.partitions_on) == (after.rest.links_down, after.rest.partitions_on)
            && !self.visible(before, after)
    }

    /// Every process's status (down ones as [`Status::DOWN`]).
    pub(crate) fn statuses<'a>(&'a self, state: &'a State<A::Process>) -> impl Iterator<Item = Status> + 'a {
        (0..state.len() as u32).map(|i| self.status(state, i))
    }

    /// The status of the process at `node` ([`Status::DOWN`] while it is down).
    pub(crate) fn status(&self, state: &State<A::Process>, node: u32) -> Status {
        self.process(state, node).map_or(Status::DOWN, |p| p.status())
    }
}

/// A state as the property predicates see it.
pub(crate) struct View<'a, A: Algorithm> {
    pub(super) state: &'a State<A::Process>,
    pub(super) model: &'a Model<A>,
}

impl<A: Algorithm> World for View<'_, A> {
    fn len(&self) -> usize {
        self.state.len()
    }
    fn id(&self, i: usize) -> NodeId {
        self.model.scenario.ids[i]
    }
    fn rank(&self, i: usize) -> Rank {
        self.model.scenario.ranks[i]
    }
    fn status(&self, i: usize) -> Status {
        self.model.status(self.state, i as u32)
    }
    fn is_initiator(&self, i: usize) -> bool {
        self.model.scenario.initiators[i]
    }
    fn connected(&self, i: usize, j: usize) -> bool {
        let graph = &self.model.scenario.graph;
        let way = |a: usize, b: usize| {
            (0..graph.degree(a as u32)).any(|p| {
                graph.far_end(a as u32, p).node == b as u32
                    && !self.model.blocked(self.state, graph.link_index(a as u32, p))
            })
        };
        way(i, j) && way(j, i)
    }
}
