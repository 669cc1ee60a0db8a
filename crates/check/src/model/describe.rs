//! A step in words, for paths, replays and the explorer: the rule it applied, what it sent, and the action as a
//! user reads it.

use elect_algos::Algorithm;
use elect_core::{Event, Instant, Port, Process, driver};
use elect_scenario::Scheduled;

use super::Model;
use super::action::Action;
use super::state::*;
use crate::Step;

impl<A: Algorithm> Model<A> {
    /// The rule of its algorithm the process that `action` steps applies ([`elect_core::Cx::rule`]): the same
    /// event run on a copy of that process, so that the search's [`Self::step`] pays nothing for it.
    pub(crate) fn rule(&self, state: &State<A::Process>, action: Action) -> Option<&'static str> {
        let (node, event) = match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } => {
                let (to, port) = self.link_far[link as usize];
                (to, Event::Message { from: Port(port), msg: self.message(state, link, index) })
            }
            Action::Fire { node, timer } => {
                (node, Event::Timer(state.timers[state.node_timers(node).start + timer as usize].1))
            }
            Action::Lose { .. } | Action::Crash { .. } | Action::Recover { .. } | Action::Wait => return None,
        };
        let mut p = self.process(state, node)?.clone();
        driver::handle(&mut p, Instant::from_ticks(state.rest.now), event, &mut Vec::new())
    }

    /// The messages `action` put in flight, going from `before` to `after`: what is in flight after it, less
    /// what was before it (but the one it took), link by link; and those it dropped without delivering them: what
    /// was in flight before it (but the one it took) and is no longer (on their way to a process that crashed
    /// for good).
    pub(crate) fn sent(
        &self,
        before: &State<A::Process>,
        action: Action,
        after: &State<A::Process>,
    ) -> (Vec<crate::Sent>, Vec<crate::Sent>) {
        let mut left: Vec<(u32, &InFlight)> = before.msgs.iter().map(|(s, m)| (*s, m)).collect();
        if let Action::Deliver { link, index } | Action::Lose { link, index } = action {
            left.remove(before.link(link).start + index as usize);
        }
        let said = |slot: u32, m: &InFlight| {
            let id = |i: u32| self.scenario.ids[i as usize];
            let msg = self.messages.get(m.id);
            crate::Sent {
                from: id(self.link_ends[slot as usize].0),
                to: id(self.link_far[slot as usize].0),
                kind: elect_core::Message::kind(msg),
                msg: elect_core::Message::describe(msg),
                json: serde_json::to_value(msg).unwrap_or_default(),
            }
        };
        let mut out = Vec::new();
        for (slot, m) in &after.msgs {
            // Times move on with a wait; messages are matched by their numbers (equal messages share one).
            match left.iter().position(|(s, o)| s == slot && o.id == m.id) {
                Some(k) => {
                    left.remove(k);
                }
                None => out.push(said(*slot, m)),
            }
        }
        (out, left.into_iter().map(|(slot, m)| said(slot, m)).collect())
    }

    /// `action` as a path shows it.
    pub(crate) fn describe(&self, state: &State<A::Process>, action: Action) -> Step {
        let id = |i: u32| self.scenario.ids[i as usize];
        match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } | Action::Lose { link, index } => {
                let (from, to) = (self.link_ends[link as usize].0, self.link_far[link as usize].0);
                let msg = elect_core::Message::describe(&self.message(state, link, index));
                let (from, to) = (id(from), id(to));
                match action {
                    Action::Lose { .. } => Step::Lose { from, to, msg },
                    Action::DeliverCopy { .. } => Step::Duplicate { from, to, msg },
                    _ => Step::Deliver { from, to, msg },
                }
            }
            Action::Fire { node, timer } => Step::Timer {
                node: id(node),
                timer: A::Process::describe_timer(&state.timers[state.node_timers(node).start + timer as usize].1),
            },
            Action::Crash { node } => Step::Crash { node: id(node) },
            Action::Recover { node } => Step::Recover { node: id(node) },
            Action::Wait => {
                let until = state.rest.now + self.next_instant(state).unwrap_or(0);
                let live = (0..state.len()).map(|i| state.live(i)).collect();
                let faults = self.faults_due(state.rest.next_fault as usize, live, until);
                Step::Wait { until: elect_scenario::Time(until), faults }
            }
        }
    }

    /// The faults scheduled for time 0, which the initial state has carried out (every process was up before).
    pub(crate) fn start_faults(&self) -> Vec<crate::Fault> {
        self.faults_due(0, vec![true; self.scenario.len()], 0)
    }

    /// The scheduled faults from the `next`-th on that are due by `until`, as a path shows them, with `live` the
    /// processes up before them: those that change nothing (a crash of a process that is down, a command to one)
    /// are left out, as [`Self::run_faults`] does nothing for them.
    fn faults_due(&self, next: usize, mut live: Vec<bool>, until: u64) -> Vec<crate::Fault> {
        use crate::Fault;
        let id = |i: u32| self.scenario.ids[i as usize];
        let mut out = Vec::new();
        for &(_, fault) in self.schedule.iter().skip(next).take_while(|(at, _)| *at <= until) {
            let up = |i: u32| live.get(i as usize).copied().unwrap_or(false);
            out.push(match fault {
                Scheduled::Crash(node) if up(node) => {
                    live[node as usize] = false;
                    Fault::Crash { node: id(node) }
                }
                Scheduled::Recover(node) if !up(node) => {
                    live[node as usize] = true;
                    Fault::Recover { node: id(node) }
                }
                Scheduled::Resign(node) if up(node) => Fault::Resign { node: id(node) },
                Scheduled::Transfer(node, to) if up(node) => Fault::Transfer { node: id(node), to },
                Scheduled::Voters(change) => {
                    let told: Vec<_> = (0..live.len() as u32).filter(|&i| up(i)).map(id).collect();
                    if told.is_empty() {
                        continue;
                    }
                    Fault::Voters { change, told }
                }
                Scheduled::Link(k, down) => {
                    let directed = &self.scenario.link_faults[k].directed;
                    let Some(&(a, b)) = directed.first() else { continue };
                    Fault::Link { from: id(a), to: id(b), both_ways: directed.len() == 2, up: !down }
                }
                Scheduled::Partition(k, on) => {
                    let partition = self.config.sim.partitions.get(k).map(ToString::to_string).unwrap_or_default();
                    Fault::Partition { partition, healed: !on }
                }
                _ => continue,
            });
        }
        out
    }

    /// Every timer set in `state`, by process id, in its algorithm's words.
    pub(crate) fn timers_set(&self, state: &State<A::Process>) -> crate::Timers {
        state.timers.iter().map(|(n, t, _)| (self.scenario.ids[*n as usize], A::Process::describe_timer(t))).collect()
    }

    /// The timers `action` set (or set again) and those it cancelled, going from `before` to `after`: a timer set
    /// after it and not before, or the one it fired if set again; one set before it (but the one it fired) and no
    /// longer, unless the process crashed (a crash clears its timers, as every view knows).
    pub(crate) fn timers_changed(
        &self,
        before: &State<A::Process>,
        action: Action,
        after: &State<A::Process>,
    ) -> (crate::Timers, crate::Timers) {
        let key = |(n, t, _): &(u32, <A::Process as Process>::Timer, _)| (*n, *t);
        let mut was: Vec<(u32, <A::Process as Process>::Timer)> = before.timers.iter().map(key).collect();
        if let Action::Fire { node, timer } = action {
            was.remove(before.node_timers(node).start + timer as usize);
        }
        let now: Vec<(u32, <A::Process as Process>::Timer)> = after.timers.iter().map(key).collect();
        let said = |(n, t): &(u32, <A::Process as Process>::Timer)| {
            (self.scenario.ids[*n as usize], A::Process::describe_timer(t))
        };
        let armed = now.iter().filter(|k| !was.contains(k)).map(said).collect();
        let crashed = |n: u32| !after.live(n as usize);
        let disarmed = was.iter().filter(|k| !now.contains(k) && !crashed(k.0)).map(said).collect();
        (armed, disarmed)
    }

    /// Every message in flight in `state`, as the messages a step sent are shown (the initial state's: what the
    /// processes sent as they started).
    pub(crate) fn in_flight_sent(&self, state: &State<A::Process>) -> Vec<crate::Sent> {
        let id = |i: u32| self.scenario.ids[i as usize];
        self.in_flight(state)
            .map(|(slot, msg)| crate::Sent {
                from: id(self.link_ends[slot as usize].0),
                to: id(self.link_far[slot as usize].0),
                kind: elect_core::Message::kind(&msg),
                msg: elect_core::Message::describe(&msg),
                json: serde_json::to_value(&msg).unwrap_or_default(),
            })
            .collect()
    }

    /// The message `action` delivers or loses, or the timer it fires, as JSON (the simulator's trace form).
    pub(crate) fn detail(&self, state: &State<A::Process>, action: Action) -> Option<serde_json::Value> {
        let json = |v: Result<serde_json::Value, _>| v.ok();
        match action {
            Action::Deliver { link, index } | Action::DeliverCopy { link, index } | Action::Lose { link, index } => {
                json(serde_json::to_value(self.message(state, link, index)))
            }
            Action::Fire { node, timer } => {
                json(serde_json::to_value(state.timers[state.node_timers(node).start + timer as usize].1))
            }
            Action::Crash { .. } | Action::Recover { .. } | Action::Wait => None,
        }
    }
}
