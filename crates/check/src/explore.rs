//! The checker's model stepped by hand: the state after each chosen action, the actions enabled there, and what
//! each step sent and changed. `replay` walks a saved path with it; a conformance test walks the simulator's run;
//! `elect serve`'s explorer lets a user pick each step, go back, and ask for a path to a violation or a leader from
//! where they are ([`Explorer::find`], a breadth-first search of its own, bounded by states and time).

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use elect_algos::{Algorithm, Driver};
use elect_core::{Message, Neighbor, NodeId, Peers, Process, Status, View, When};
use elect_scenario::{Scenario, Time};
use serde::Serialize;

use crate::model::{Action, Model, State};
use crate::{CheckConfig, CheckError, Replayed, Step};

/// What the current state looks like: every process, the messages in flight link by link, and where each promised
/// property stands.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    /// The current instant (timed runs; 0 otherwise).
    pub now: Time,
    /// Steps taken from the initial state.
    pub depth: usize,
    /// Each process, in position order.
    pub processes: Vec<ProcessNow>,
    /// The links with messages in flight, in link order.
    pub links: Vec<LinkNow>,
    /// Each promised property's verdict in this state.
    pub properties: Vec<PropertyNow>,
    /// Whether nothing is left to happen but faults a run need not suffer ("at end" properties are judged then).
    pub settled: bool,
    /// The directed links a scheduled link fault or partition cuts now, as (sender, receiver).
    pub broken: Vec<(NodeId, NodeId)>,
}

/// One process in the current state.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessNow {
    /// Its id.
    pub id: NodeId,
    /// Its status ([`Status::DOWN`] while crashed).
    pub status: Status,
    /// The process as its algorithm describes it ([`Process::view`]; `down` while crashed).
    pub view: View,
    /// Its whole state, as its `Debug` form shows it, for developers (`None` while crashed).
    pub detail: Option<String>,
}

/// The messages in flight on one directed link.
#[derive(Clone, Debug, Serialize)]
pub struct LinkNow {
    /// The link's slot, as an action that delivers, copies or loses one of its messages names it (`link`); the
    /// message's place in [`Self::messages`] is that action's `index`.
    pub slot: u32,
    /// The sender.
    pub from: NodeId,
    /// The receiver.
    pub to: NodeId,
    /// The messages, each in a line in its algorithm's words (oldest first on FIFO links).
    pub messages: Vec<String>,
    /// Their kinds, in the same order (what gives a message its colour).
    pub kinds: Vec<&'static str>,
    /// The same messages as their `Debug` form shows them, for developers.
    pub raw: Vec<String>,
}

/// A promised property in the current state.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyNow {
    /// Its name.
    pub property: &'static str,
    /// `always` or `at end`.
    pub when: &'static str,
    /// `held`, `violated`, or `pending` (an "at end" property before the run has settled).
    pub result: &'static str,
    /// What is wrong, when violated.
    pub detail: Option<String>,
}

/// What [`Explorer::find`] looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// A state that breaks a promised property.
    Violation,
    /// A state where every live process follows one leader and every promised property holds as at the end.
    Leader,
}

/// What [`Explorer::find`] found.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// The actions from the current state to one the goal names, shortest first; `None` if there is none within
    /// the bounds.
    pub path: Option<Vec<Action>>,
    /// The same steps as a path shows them.
    pub steps: Vec<Step>,
    /// States visited.
    pub states: usize,
    /// Whether every state reachable from the current one was visited (no bound cut the search short).
    pub complete: bool,
}

/// One action enabled in the current state.
#[derive(Clone, Debug, Serialize)]
pub struct Choice {
    /// The action, to hand back to [`Explorer::take`].
    pub action: Action,
    /// How a path shows it.
    pub step: Step,
    /// The message it delivers or loses, or the timer it fires, as the simulator's trace writes it (JSON).
    pub detail: Option<serde_json::Value>,
}

/// A run of the checker's model, one chosen action at a time, from the initial state of a configuration's
/// scenario.
pub struct Explorer(Box<dyn Explore + Send>);

trait Explore {
    fn choices(&self) -> Vec<Choice>;
    fn take(&mut self, action: Action) -> Option<Replayed>;
    fn statuses(&self) -> Vec<(NodeId, Status)>;
    fn now(&self) -> Time;
    fn back(&mut self) -> bool;
    fn snapshot(&self) -> Snapshot;
    fn scenario(&self) -> &Scenario;
    fn find(&self, goal: Goal, max_states: usize, max_time: Duration) -> Found;
}

impl Explorer {
    /// The initial state of `config`'s scenario: every process started, the initiators initiated, the faults
    /// scheduled for time 0 done.
    pub fn new(config: &CheckConfig) -> Result<Self, CheckError> {
        let scenario = crate::scenario(config)?;
        crate::dispatch(config, &scenario.clone(), Building { scenario, config: config.clone() })
    }

    /// Every action enabled now, in the checker's fixed order.
    pub fn choices(&self) -> Vec<Choice> {
        self.0.choices()
    }

    /// Takes `action`, and says what it sent and changed; `None` if it is not enabled now.
    pub fn take(&mut self, action: Action) -> Option<Replayed> {
        self.0.take(action)
    }

    /// Every process's status, by id ([`Status::DOWN`] while crashed).
    pub fn statuses(&self) -> Vec<(NodeId, Status)> {
        self.0.statuses()
    }

    /// The current instant (timed runs; 0 otherwise).
    pub fn now(&self) -> Time {
        self.0.now()
    }

    /// Goes back to the state before the last action taken; `false` at the initial state.
    pub fn back(&mut self) -> bool {
        self.0.back()
    }

    /// The current state: processes, messages in flight, and each promised property's verdict.
    pub fn snapshot(&self) -> Snapshot {
        self.0.snapshot()
    }

    /// The scenario explored: its topology, and the id at each position.
    pub fn scenario(&self) -> &Scenario {
        self.0.scenario()
    }

    /// A shortest path from the current state to one `goal` names, searching breadth-first (with no reduction)
    /// through at most `max_states` states for at most `max_time`.
    pub fn find(&self, goal: Goal, max_states: usize, max_time: Duration) -> Found {
        self.0.find(goal, max_states, max_time)
    }
}

struct Building {
    scenario: Scenario,
    config: CheckConfig,
}

impl Driver for Building {
    type Output = Result<Explorer, CheckError>;
    fn drive<A: Algorithm>(self, algorithm: A) -> Self::Output {
        algorithm.validate(&self.scenario.ids)?;
        let model = Model::new(algorithm, self.scenario, self.config)?;
        Ok(Explorer(Box::new(Hand { at: At::new(model), history: Vec::new() })))
    }
}

/// A model and its current state.
pub(crate) struct At<A: Algorithm> {
    pub(crate) model: Model<A>,
    pub(crate) state: State<A::Process>,
    /// Who is at the far end of each port of each process, by position (what views name ports by).
    peers: Vec<Vec<Neighbor>>,
}

impl<A: Algorithm> At<A> {
    /// `model` at its initial state.
    pub(crate) fn new(model: Model<A>) -> Self {
        let state = model.initial();
        let peers =
            (0..model.scenario.ids.len() as u32).map(|i| elect_scenario::neighbors(&model.scenario, i)).collect();
        Self { model, state, peers }
    }

    /// Each process of `state` as its algorithm describes it, by position (`None` while crashed).
    pub(crate) fn views(&self, state: &State<A::Process>) -> Vec<Option<View>> {
        let peers = self.peers.iter().enumerate();
        peers.map(|(i, peers)| self.model.process(state, i as u32).map(|p| p.view(&Peers(peers)))).collect()
    }

    /// Takes `action`, enabled or not, and reports the step as a replayed path shows it.
    pub(crate) fn step(&mut self, action: Action) -> Replayed {
        let model = &self.model;
        let step = model.describe(&self.state, action);
        let rule = model.rule(&self.state, action);
        let next = model.step(&self.state, action);
        let (sent, lost) = model.sent(&self.state, action, &next);
        let (armed, disarmed) = model.timers_changed(&self.state, action, &next);
        let changed = model
            .scenario
            .ids
            .iter()
            .zip(self.model.statuses(&self.state).zip(self.model.statuses(&next)))
            .filter(|(_, (a, b))| a != b)
            .map(|(&id, (_, b))| (id, b))
            .collect();
        let views = model
            .scenario
            .ids
            .iter()
            .zip(self.views(&self.state).into_iter().zip(self.views(&next)))
            .filter_map(|(&id, (a, b))| Some((id, b.filter(|b| a.as_ref() != Some(b))?)))
            .collect();
        self.state = next;
        let violations = model.judge_all(&self.state, model.quiescent(&self.state));
        Replayed { step, at: Time(self.state.rest.now), rule, sent, lost, armed, disarmed, changed, views, violations }
    }
}

/// A model, its current state, and the states before it (for going back).
struct Hand<A: Algorithm> {
    at: At<A>,
    history: Vec<State<A::Process>>,
}

impl<A: Algorithm> Hand<A> {
    fn goal(&self, state: &State<A::Process>, goal: Goal) -> bool {
        let model = &self.at.model;
        match goal {
            Goal::Violation => !model.judge_all(state, model.quiescent(state)).is_empty(),
            Goal::Leader => model.agreed(state) && model.judge_all(state, true).is_empty(),
        }
    }
}

impl<A: Algorithm> Explore for Hand<A> {
    fn choices(&self) -> Vec<Choice> {
        let (model, state) = (&self.at.model, &self.at.state);
        let mut actions = Vec::new();
        model.actions(state, &mut actions);
        actions
            .into_iter()
            .map(|action| Choice { action, step: model.describe(state, action), detail: model.detail(state, action) })
            .collect()
    }

    fn take(&mut self, action: Action) -> Option<Replayed> {
        if !self.at.model.enabled(&self.at.state, action) {
            return None;
        }
        self.history.push(self.at.state.clone());
        Some(self.at.step(action))
    }

    fn statuses(&self) -> Vec<(NodeId, Status)> {
        self.at.model.scenario.ids.iter().copied().zip(self.at.model.statuses(&self.at.state)).collect()
    }

    fn now(&self) -> Time {
        Time(self.at.state.rest.now)
    }

    fn back(&mut self) -> bool {
        match self.history.pop() {
            Some(state) => {
                self.at.state = state;
                true
            }
            None => false,
        }
    }

    fn snapshot(&self) -> Snapshot {
        let (model, state) = (&self.at.model, &self.at.state);
        let ids = &model.scenario.ids;
        let processes = (0..state.len() as u32)
            .map(|i| model.process(state, i))
            .zip(ids)
            .zip(self.at.views(state))
            .map(|((p, &id), view)| ProcessNow {
                id,
                status: p.map_or(Status::DOWN, |p| p.status()),
                view: view.unwrap_or_else(View::down),
                detail: p.map(|p| format!("{p:?}")),
            })
            .collect();
        let mut links: Vec<LinkNow> = Vec::new();
        for (slot, msg) in model.in_flight(state) {
            let (from, to) = (ids[model.sender(slot) as usize], ids[model.receiver(slot).0 as usize]);
            if links.last().is_none_or(|link| link.slot != slot) {
                links.push(LinkNow { slot, from, to, messages: Vec::new(), kinds: Vec::new(), raw: Vec::new() });
            }
            if let Some(link) = links.last_mut() {
                link.messages.push(msg.describe());
                link.kinds.push(msg.kind());
                link.raw.push(format!("{msg:?}"));
            }
        }
        let settled = model.quiescent(state);
        let violations = model.judge_all(state, settled);
        let mut properties: Vec<PropertyNow> = model
            .checks
            .iter()
            .map(|c| {
                let broken = violations.iter().find(|v| v.property == c.property);
                let result = match (broken, c.when) {
                    (Some(_), _) => "violated",
                    (None, When::AtEnd) if !settled => "pending",
                    (None, _) => "held",
                };
                PropertyNow {
                    property: c.property.name(),
                    when: if c.when == When::Always { "always" } else { "at end" },
                    result,
                    detail: broken.map(|v| v.to_string()),
                }
            })
            .collect();
        // A property judged outside the algorithm's own checks (P-Unique's declarations) is listed too.
        for v in &violations {
            if !properties.iter().any(|p| p.property == v.property.name()) {
                properties.push(PropertyNow {
                    property: v.property.name(),
                    when: "always",
                    result: "violated",
                    detail: Some(v.to_string()),
                });
            }
        }
        let broken = (0..model.slots())
            .filter(|&slot| model.blocked(state, slot))
            .map(|slot| (ids[model.sender(slot as u32) as usize], ids[model.receiver(slot as u32).0 as usize]))
            .collect();
        Snapshot { now: Time(state.rest.now), depth: self.history.len(), processes, links, properties, settled, broken }
    }

    fn scenario(&self) -> &Scenario {
        &self.at.model.scenario
    }

    fn find(&self, goal: Goal, max_states: usize, max_time: Duration) -> Found {
        let model = &self.at.model;
        let start = Instant::now();
        let mut seen = BTreeSet::new();
        // Every state reached, with the index of the state it was reached from and the action taken.
        let mut tree: Vec<(usize, Action)> = Vec::new();
        let mut queue: VecDeque<(usize, State<A::Process>)> = VecDeque::new();
        seen.insert(self.at.state.fingerprint());
        queue.push_back((usize::MAX, self.at.state.clone()));
        let mut actions = Vec::new();
        let mut complete = true;
        let path = 'search: loop {
            let Some((index, state)) = queue.pop_front() else { break None };
            if self.goal(&state, goal) {
                let mut path = Vec::new();
                let mut at = index;
                while at != usize::MAX {
                    let (parent, action) = tree[at];
                    path.push(action);
                    at = parent;
                }
                path.reverse();
                break Some(path);
            }
            if seen.len() >= max_states || start.elapsed() >= max_time {
                complete = false;
                break None;
            }
            model.actions(&state, &mut actions);
            for &action in &actions {
                let next = model.step(&state, action);
                if seen.insert(next.fingerprint()) {
                    tree.push((index, action));
                    queue.push_back((tree.len() - 1, next));
                    if seen.len() >= max_states {
                        continue 'search;
                    }
                }
            }
        };
        let mut steps = Vec::new();
        if let Some(path) = &path {
            let mut state = self.at.state.clone();
            for &action in path {
                steps.push(model.describe(&state, action));
                state = model.step(&state, action);
            }
        }
        Found { path, steps, states: seen.len(), complete: complete && queue.is_empty() }
    }
}
