//! Faults in the model: the scheduled ones of a timed run, and the crashes and recoveries a search may choose, with
//! what the neighbours are told of them.

use elect_algos::Algorithm;
use elect_core::{Command, Event, Port, Process, driver};
use elect_scenario::Scheduled;

use super::host::Recovering;
use super::state::*;
use super::{Model, set_bit};

/// The most designations a search starts from ([`Model::designations`]): beyond it (two crashes among several
/// hundred members, three among dozens) the copies would cost more than any reduction saves, and their roots alone
/// would fill the memory, so the search designates no one.
const MAX_DESIGNATIONS: u64 = 1 << 16;

/// The number of ways to choose `k` of `n`, or `u64::MAX` if it is larger.
fn choose(n: u32, k: u32) -> u64 {
    let k = k.min(n - k);
    // The product of i consecutive terms over i! is a whole number at every step; for n ≤ 64 no step overflows.
    let c = (0..u128::from(k)).try_fold(1u128, |c, i| c.checked_mul(u128::from(n) - i).map(|c| c / (i + 1)));
    c.and_then(|c| u64::try_from(c).ok()).unwrap_or(u64::MAX)
}

/// Every set of `k` of the positions below `n` (at most 64), by bit, in increasing order: the next set with as
/// many bits (Gosper's rule), where filtering all 2^n masks took minutes at 34 members.
fn subsets(n: u32, k: u32) -> impl Iterator<Item = u64> {
    let end = 1u128 << n;
    let first = (1u128 << k) - 1;
    std::iter::successors(Some(first), move |&set| {
        if set == 0 {
            return None;
        }
        let low = set & set.wrapping_neg();
        let ripple = set + low;
        Some((((ripple ^ set) >> 2) / low) | ripple)
    })
    .take_while(move |&set| set < end)
    .map(|set| set as u64)
}

impl<A: Algorithm> Model<A> {
    /// Where a search starts. A full search starts from [`Self::initial`]. A reduced one, when it may crash
    /// processes, starts from one copy of it per choice of the processes that may crash (as many as the budget,
    /// each at most once without recoveries), with no other process allowed to.
    ///
    /// **Why.** Crashes chosen at any moment from one budget depend on one another: one spent rules out the others.
    /// So every state with a crash left had to be expanded in full, the reduction saving nothing before the crash.
    /// Designated up front, a crash is a step of its own process: it changes nothing but that process (it drops the
    /// messages to it, which a message sent to it later would find dropped as well) and takes nothing from any
    /// other process, so it is independent of their steps, and persistent sets treat it as they treat its other
    /// steps ([`crate::reduce`]). Every run of the full system crashes at most the budget's number of processes,
    /// so some designation allows it. Once the budget is spent the designation is forgotten, and the states after
    /// the last crash are shared by every designation. With recoveries, only when the budget is one crash and no
    /// crash is scheduled: then the one process that may crash is the only one ever down, so its recoveries are
    /// steps of its own too (a recovery changes that process alone, and what it sends arrives later, as any step's
    /// sends do), and the recovery budget is spent by no one else. With more crashes, a process that recovers may
    /// crash again and spend another's share of the crash budget, and recoveries of different processes draw on
    /// one budget: the search then expands those states in full. Never for processes told of their links going
    /// down (a crash then changes its neighbours).
    ///
    /// Returns the designations, as the positions allowed to crash by bit; [`Self::root`] builds each one's state.
    ///
    /// Designating pays when the reduction saves more than the copies cost, which a short look ahead without
    /// crashes weighs (`pays`, given the number of copies); either way the verdicts are the same.
    pub(crate) fn designations(&self, pays: impl FnOnce(&Self, usize) -> bool) -> Vec<u64> {
        let n = self.scenario.len() as u32;
        let k = u32::from(self.config.crashes).min(n);
        let copies = choose(n, k);
        let pays = self.may_designate && copies <= MAX_DESIGNATIONS && pays(self, copies as usize);
        if !*self.designating.get_or_init(|| pays) {
            return vec![self.initial().rest.doomed];
        }
        subsets(n, k).collect()
    }

    /// Whether the search designates the processes that may crash (then a crash is a step of its process).
    pub(super) fn designating(&self) -> bool {
        self.designating.get() == Some(&true)
    }

    /// The initial state with only the processes of `doomed` allowed to crash.
    pub(crate) fn root(&self, doomed: u64) -> State<A::Process> {
        let mut root = self.initial();
        root.rest.doomed = doomed;
        root
    }

    /// Carries out the scheduled faults due now, and sets how long until the next one.
    pub(super) fn run_faults(&self, state: &mut State<A::Process>) {
        while let Some(&(at, fault)) = self.schedule.get(state.rest.next_fault as usize) {
            if at > state.rest.now {
                state.rest.fault_in = at - state.rest.now;
                return;
            }
            state.rest.next_fault += 1;
            self.restart_settling(state);
            match fault {
                Scheduled::Crash(node) => self.crash(state, node),
                Scheduled::Recover(node) => self.recover(state, node),
                Scheduled::CrashLeader => unreachable!("refused when the model is built"),
                Scheduled::Resign(node) => {
                    if state.live(node as usize) {
                        self.handle(state, node, Event::Command(Command::Resign));
                    }
                }
                Scheduled::Transfer(node, to) => {
                    if state.live(node as usize) {
                        self.handle(state, node, Event::Command(Command::Transfer { to }));
                    }
                }
                Scheduled::Voters(change) => {
                    let cmd = change.command();
                    for node in 0..state.procs.len() as u32 {
                        if state.live(node as usize) {
                            self.handle(state, node, Event::Command(cmd));
                        }
                    }
                }
                Scheduled::Link(k, down) => set_bit(&mut state.rest.links_down, k, down),
                Scheduled::Partition(k, on) => set_bit(&mut state.rest.partitions_on, k, on),
            }
        }
        state.rest.fault_in = 0;
    }

    /// A fault happened: a run that ends settled lasts its settling time from now.
    pub(super) fn restart_settling(&self, state: &mut State<A::Process>) {
        if let Some((settle, true)) = self.end {
            state.rest.ends_in = Some(settle);
            state.rest.steady = 0;
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
        if !state.live(node as usize) {
            return;
        }
        self.put(state, node, None);
        state.timers.retain(|(n, ..)| *n != node);
        // Without recoveries, the messages on their way to it can only be lost: they are dropped now rather than
        // kept until they are due. They would tell apart states that behave alike, and double the states for each
        // one (lost at the shortest delay or at the longest); no other step is due at the instants they would
        // have been lost at, since every message and timer happens at one end of its own window.
        if !self.may_recover {
            let far = &self.link_far;
            state.msgs.retain(|(slot, _)| far[*slot as usize].0 != node);
            state.rest.parts = self.parts(state);
        }
        self.tell_neighbors(state, node, false);
    }

    /// As in the simulator: a fresh process, in the driver contract's recovery sequence ([`driver::recover`]).
    pub(super) fn recover(&self, state: &mut State<A::Process>, node: u32) {
        let i = node as usize;
        if state.live(i) {
            return;
        }
        self.put(state, node, Some(elect_scenario::build_process(&self.algorithm, &self.scenario, node)));
        self.past_life(state, node);
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
            if end.node != node && state.live(end.node as usize) {
                self.handle(state, end.node, Event::Link { port: Port(end.port), up });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{choose, subsets};

    #[test]
    fn subsets_are_every_mask_with_k_bits_in_order_and_choose_counts_them() {
        for n in 0..=10u32 {
            for k in 0..=n {
                let expected: Vec<u64> = (0..1u64 << n).filter(|mask| mask.count_ones() == k).collect();
                assert_eq!(subsets(n, k).collect::<Vec<_>>(), expected, "{k} of {n}");
                assert_eq!(choose(n, k), expected.len() as u64, "{k} of {n}");
            }
        }
        assert_eq!(subsets(64, 1).last(), Some(1 << 63));
        assert_eq!(subsets(64, 64).collect::<Vec<_>>(), [u64::MAX]);
        assert_eq!(choose(64, 2), 2016);
        assert_eq!(choose(64, 32), 1_832_624_140_942_590_534);
    }
}
