//! Property judging during a run: the processes seen as core's [`World`], and the [`Judge`] that holds the
//! property monitor and turns what it finds into trace lines and the report's violations.

use elect_core::{Monitor, NodeId, Process, Rank, Status, Violation, World};

use elect_scenario::{Graph, PartitionFault, Record, Time};

use crate::mobility::Mobile;
use crate::network::Network;
use crate::report::ViolationReport;
use crate::trace::Trace;

/// The read-only view of all processes that properties evaluate.
pub(crate) struct View<'a, P> {
    pub(crate) ids: &'a [NodeId],
    pub(crate) ranks: &'a [Rank],
    pub(crate) initiators: &'a [bool],
    pub(crate) procs: &'a [P],
    pub(crate) up: &'a [bool],
    pub(crate) network: &'a Network,
    pub(crate) partitions: &'a [PartitionFault],
    pub(crate) graph: &'a Graph,
    pub(crate) mobile: Option<&'a Mobile>,
}

impl<P: Process> World for View<'_, P> {
    fn len(&self) -> usize {
        self.ids.len()
    }
    fn id(&self, i: usize) -> NodeId {
        self.ids[i]
    }
    fn rank(&self, i: usize) -> Rank {
        self.ranks[i]
    }
    fn status(&self, i: usize) -> Status {
        if self.up[i] { self.procs[i].status() } else { Status::DOWN }
    }
    fn is_initiator(&self, i: usize) -> bool {
        self.initiators[i]
    }
    fn connected(&self, i: usize, j: usize) -> bool {
        let (a, b) = (i as u32, j as u32);
        let linked = match self.mobile {
            Some(m) => m.in_range(a, b),
            None => self.graph.adjacent(a, b),
        };
        linked && self.network.connected(a, b, self.partitions)
    }
}

/// Judges the properties the algorithm promises, as the run goes, and keeps what it found.
pub(crate) struct Judge {
    monitor: Monitor,
    /// What the monitor found in the current judgement (kept to reuse its memory).
    found: Vec<Violation>,
    /// Everything found so far, in order.
    pub(crate) violations: Vec<ViolationReport>,
    /// Whether status changes are judged as they happen (not while a recovering process restores its state).
    pub(crate) on: bool,
    /// When a process last performed the "I am the leader" action.
    pub(crate) declared: Option<u64>,
}

impl Judge {
    pub(crate) fn new(monitor: Monitor) -> Self {
        Self { monitor, found: Vec::new(), violations: Vec::new(), on: true, declared: None }
    }

    /// The property monitor.
    pub(crate) fn monitor(&self) -> &Monitor {
        &self.monitor
    }

    /// Process `node` restarted (for fresh-epoch).
    pub(crate) fn restarted(&mut self, node: NodeId) {
        self.monitor.on_restart(node);
    }

    /// Lets the monitor judge `world` at `now` as `judge` says (after a change, a notice, at the end...), then
    /// records each violation it finds in the trace and keeps it for the report.
    pub(crate) fn judge<W: World>(
        &mut self,
        world: &W,
        now: u64,
        trace: &mut Option<Trace>,
        judge: impl FnOnce(&mut Monitor, &W, &mut Vec<Violation>),
    ) {
        judge(&mut self.monitor, world, &mut self.found);
        for v in self.found.drain(..) {
            if let Some(trace) = trace {
                let detail = v.detail.as_str().into();
                let record: Record<'_, (), (), ()> =
                    Record::Violation { t: Time(now), property: v.property, node: v.node, detail };
                trace.record(&record);
            }
            self.violations.push(ViolationReport::new(now, v));
        }
    }
}
