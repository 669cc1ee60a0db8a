//! What the properties read of a state: the processes' statuses, as the judge's [`World`].

use super::*;

/// Whether every live process follows the same leader.
pub(crate) fn agreed<P: Process>(state: &State<P>) -> bool {
    let mut leaders = state.procs.iter().flatten().map(|p| p.status().leader);
    match leaders.next() {
        Some(Some(first)) => leaders.all(|l| l == Some(first)),
        _ => false,
    }
}

/// Whether a step from `before` to `after` changed what the properties read: a status, or the declarations
/// P-Unique is judged on.
pub(crate) fn visible<P: Process>(before: &State<P>, after: &State<P>) -> bool {
    before.declared != after.declared || before.clash != after.clash || statuses(before).ne(statuses(after))
}

/// Every process's status (down ones as [`Status::DOWN`]).
pub(crate) fn statuses<P: Process>(state: &State<P>) -> impl Iterator<Item = Status> + '_ {
    state.procs.iter().map(|p| p.as_ref().map_or(Status::DOWN, |p| p.status()))
}

/// A state as the property predicates see it.
pub(crate) struct View<'a, A: Algorithm> {
    pub(super) state: &'a State<A::Process>,
    pub(super) model: &'a Model<A>,
}

impl<A: Algorithm> World for View<'_, A> {
    fn len(&self) -> usize {
        self.state.procs.len()
    }
    fn id(&self, i: usize) -> NodeId {
        self.model.scenario.ids[i]
    }
    fn rank(&self, i: usize) -> Rank {
        self.model.scenario.ranks[i]
    }
    fn status(&self, i: usize) -> Status {
        self.state.procs[i].as_ref().map_or(Status::DOWN, |p| p.status())
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
