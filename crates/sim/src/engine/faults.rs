//! The simulator's scheduled faults and mobility: crashes, recoveries, resignations, links and partitions going
//! down and up, nodes moving in and out of radio range, and what the processes and the judge are told of them; and
//! the simulator's part in a restart ([`Restart`]).

use super::*;

impl<A: Algorithm> Sim<A> {
    /// Places the nodes, brings up the links in range, and schedules the first move.
    pub(super) fn start_mobility(&mut self, spec: MobilitySpec) {
        let sc = &self.scenario;
        let mobile = Mobile::place(&sc.graph, spec, sc.config.mobility_until, rng(sc.config.seed, Stream::Mobility));
        let (links, first) = (mobile.links(), mobile.next_move(0));
        self.mobile = Some(mobile);
        for (a, b) in links {
            self.link_changed(a, b, true);
        }
        self.refresh_availability();
        if let Some(at) = first {
            self.queue.push(at, FAULT, Ev::Fault(Fault::Move));
        }
    }

    /// The link layer's view of a crash or a recovery: the live neighbours of `node` see its links go down (its
    /// beacons stop) or come back up. Algorithms that do not listen to links ignore it.
    pub(super) fn tell_neighbors(&mut self, node: u32, up: bool) {
        if !A::Process::HEARS_LINKS {
            return;
        }
        let graph = &self.scenario.graph;
        let ends: Vec<End> = match &self.mobile {
            Some(m) => m.far_ends(node),
            None => (0..graph.degree(node)).map(|p| graph.far_end(node, p)).collect(),
        };
        for end in ends {
            if end.node != node && self.up[end.node as usize] {
                self.handle(end.node, Event::Link { port: Port(end.port), up });
            }
        }
    }

    /// Tells both ends that the link between positions `a` and `b` came up or went down.
    pub(super) fn link_changed(&mut self, a: u32, b: u32, up: bool) {
        if !A::Process::HEARS_LINKS {
            return;
        }
        for (me, other) in [(a, b), (b, a)] {
            if self.up[me as usize] {
                let port = Graph::complete_port(me, other);
                self.handle(me, Event::Link { port, up });
            }
        }
    }

    /// The nodes move one step; links follow.
    pub(super) fn move_nodes(&mut self) {
        let mut changed = Vec::new();
        let m = self.mobile.as_mut().expect("moves are scheduled on mobile networks only");
        m.step(self.now, &mut changed);
        let next = m.next_move(self.now);
        for (a, b, up) in changed {
            self.link_changed(a, b, up);
        }
        self.refresh_availability();
        if let Some(at) = next {
            self.queue.push(at, FAULT, Ev::Fault(Fault::Move));
        }
    }

    /// On a mobile network, re-evaluates for every node whether it follows the strongest live node of its component.
    pub(super) fn refresh_availability(&mut self) {
        if let Some(m) = &mut self.mobile {
            m.refresh(&self.procs, &self.up, &self.scenario.ids, &self.scenario.ranks, self.now);
        }
    }

    /// Queues every fault after time 0 and returns those at time 0, in a fixed order.
    pub(super) fn schedule(&mut self) -> Vec<Fault> {
        let mut at_start = Vec::new();
        for (at, fault) in self.scenario.scheduled_faults() {
            let fault = Fault::Scheduled(fault);
            if at == 0 {
                at_start.push(fault);
            } else {
                self.queue.push(at, FAULT, Ev::Fault(fault));
            }
        }
        at_start
    }

    pub(super) fn fault(&mut self, fault: Fault) {
        if self.now > 0 {
            self.last_fault = Some(self.now);
        }
        match fault {
            Fault::Scheduled(Scheduled::Crash(node)) => self.crash(node),
            Fault::Scheduled(Scheduled::Recover(node)) => self.recover(node),
            Fault::Scheduled(Scheduled::Resign(node)) => {
                if self.up[node as usize] {
                    self.count_event();
                    self.record(Record::Command { t: self.t(), node: self.id(node), cmd: Command::Resign });
                    self.handle(node, Event::Command(Command::Resign));
                }
            }
            Fault::Scheduled(Scheduled::Transfer(node, to)) => {
                if self.up[node as usize] {
                    self.count_event();
                    let cmd = Command::Transfer { to };
                    self.record(Record::Command { t: self.t(), node: self.id(node), cmd });
                    self.handle(node, Event::Command(cmd));
                }
            }
            Fault::Scheduled(Scheduled::Voters(change)) => {
                for node in 0..self.up.len() as u32 {
                    if self.up[node as usize] {
                        self.count_event();
                        let cmd = change.command();
                        self.record(Record::Command { t: self.t(), node: self.id(node), cmd });
                        self.handle(node, Event::Command(cmd));
                    }
                }
            }
            Fault::Scheduled(Scheduled::CrashLeader) => match self.current_leader() {
                Some(node) => self.crash(node),
                None => self.record(Record::Note { t: self.t(), note: "crash-leader: no process leads now".into() }),
            },
            Fault::Scheduled(Scheduled::Link(k, down)) => {
                let directed = self.scenario.link_faults[k].directed.clone();
                self.network.set_links(&directed, down);
                self.refresh_express();
                self.count_event();
                let (a, b) = directed[0];
                let (from, to) = (self.id(a), self.id(b));
                self.record(Record::Link { t: self.t(), from, to, both_ways: directed.len() == 2, up: !down });
                self.recheck();
            }
            Fault::Move => self.move_nodes(),
            Fault::Scheduled(Scheduled::Partition(k, on)) => {
                self.network.set_partition(k, on);
                self.refresh_express();
                self.count_event();
                let groups = self.scenario.config.partitions[k].to_string();
                self.record(Record::Partition { t: self.t(), partition: groups.into(), healed: !on });
                self.recheck();
            }
        }
    }

    /// The process that leads now: the live process that most others follow, among those that believe they lead.
    pub(super) fn current_leader(&self) -> Option<u32> {
        let live = || (0..self.scenario.len()).filter(|&i| self.up[i]);
        let followers = |l: NodeId| live().filter(|&j| self.procs[j].status().leader == Some(l)).count();
        live()
            .filter(|&i| self.procs[i].status().leader == Some(self.scenario.ids[i]))
            .max_by_key(|&i| (followers(self.scenario.ids[i]), self.scenario.ranks[i]))
            .map(|i| i as u32)
    }

    pub(super) fn crash(&mut self, node: u32) {
        if !self.up[node as usize] {
            return;
        }
        self.count_event();
        self.up[node as usize] = false;
        self.down += 1;
        self.timers.clear(node);
        self.record(Record::Crash { t: self.t(), node: self.id(node) });
        self.tell_neighbors(node, false);
        self.refresh_availability();
        self.recheck();
    }

    /// A crashed process restarts: a fresh process, started with what it last persisted, in the driver contract's
    /// recovery sequence ([`driver::recover`]).
    pub(super) fn recover(&mut self, node: u32) {
        let i = node as usize;
        if self.up[i] {
            return;
        }
        self.count_event();
        self.procs[i] = build_process(&self.algorithm, &self.scenario, node);
        self.up[i] = true;
        self.down -= 1;
        self.record(Record::Recover { t: self.t(), node: self.id(node) });
        self.judge.restarted(self.id(node));
        let restored = self.durable[i].clone();
        let up: Vec<Port> = self.mobile.as_ref().map_or_else(Vec::new, |m| m.ports(node));
        // Restarting and restoring the persisted state are one step: the process is judged after it, not on the
        // blank state in between.
        self.judge.on = false;
        driver::recover(&mut Recovering { sim: self, node }, restored, up);
    }
}

/// The simulator's part in a recovery ([`driver::recover`]): every event is one of the process's steps (the
/// initiation is counted and traced as a command), and the neighbours see its links come back.
struct Recovering<'a, A: Algorithm> {
    sim: &'a mut Sim<A>,
    node: u32,
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
