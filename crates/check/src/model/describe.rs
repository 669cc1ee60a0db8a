//! A step in words, for paths, replays and the explorer: the rule it applied, what it sent, and the action as a
//! user reads it.

use super::*;

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
    /// what was before it (but the one it took), link by link.
    pub(crate) fn sent(
        &self,
        before: &State<A::Process>,
        action: Action,
        after: &State<A::Process>,
    ) -> Vec<crate::Sent> {
        let mut left: Vec<(u32, &InFlight)> = before.msgs.iter().map(|(s, m)| (*s, m)).collect();
        if let Action::Deliver { link, index } | Action::Lose { link, index } = action {
            left.remove(before.link(link).start + index as usize);
        }
        let mut out = Vec::new();
        for (slot, m) in &after.msgs {
            // Times move on with a wait; messages are matched by their numbers (equal messages share one).
            match left.iter().position(|(s, o)| s == slot && o.id == m.id) {
                Some(k) => {
                    left.remove(k);
                }
                None => {
                    let id = |i: u32| self.scenario.ids[i as usize];
                    let msg = self.messages.get(m.id);
                    out.push(crate::Sent {
                        from: id(self.link_ends[*slot as usize].0),
                        to: id(self.link_far[*slot as usize].0),
                        kind: elect_core::Message::kind(msg),
                        msg: elect_core::Message::describe(msg),
                        json: serde_json::to_value(msg).unwrap_or_default(),
                    });
                }
            }
        }
        out
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
                let dt = self.next_instant(state).unwrap_or(0);
                Step::Wait { until: elect_scenario::Time(state.rest.now + dt) }
            }
        }
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
