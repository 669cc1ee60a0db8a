//! The checker's model stepped by hand: the state after each chosen action, the actions enabled there, and what
//! each step sent and changed. `replay` walks a saved path with it; a conformance test walks the simulator's run.

use elect_algos::{Algorithm, Driver};
use elect_core::{NodeId, Status};
use elect_sim::{Scenario, Time};
use serde::Serialize;

use crate::model::{self, Action, Model, State};
use crate::{CheckConfig, CheckError, Replayed, Step};

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
        let state = model.initial();
        Ok(Explorer(Box::new(At { model, state })))
    }
}

/// A model and its current state.
pub(crate) struct At<A: Algorithm> {
    pub(crate) model: Model<A>,
    pub(crate) state: State<A::Process>,
}

impl<A: Algorithm> At<A> {
    /// Takes `action`, enabled or not, and reports the step as a replayed path shows it.
    pub(crate) fn step(&mut self, action: Action) -> Replayed {
        let model = &self.model;
        let step = model.describe(&self.state, action);
        let next = model.step(&self.state, action);
        let sent = model.sent(&self.state, action, &next);
        let changed = model
            .scenario
            .ids
            .iter()
            .zip(model::statuses(&self.state).zip(model::statuses(&next)))
            .filter(|(_, (a, b))| a != b)
            .map(|(&id, (_, b))| (id, b))
            .collect();
        self.state = next;
        let violations = model.judge_all(&self.state, model.quiescent(&self.state));
        Replayed { step, at: Time(self.state.now), sent, changed, violations }
    }
}

impl<A: Algorithm> Explore for At<A> {
    fn choices(&self) -> Vec<Choice> {
        let mut actions = Vec::new();
        self.model.actions(&self.state, &mut actions);
        actions
            .into_iter()
            .map(|action| Choice {
                action,
                step: self.model.describe(&self.state, action),
                detail: self.model.detail(&self.state, action),
            })
            .collect()
    }

    fn take(&mut self, action: Action) -> Option<Replayed> {
        self.model.enabled(&self.state, action).then(|| self.step(action))
    }

    fn statuses(&self) -> Vec<(NodeId, Status)> {
        self.model.scenario.ids.iter().copied().zip(model::statuses(&self.state)).collect()
    }

    fn now(&self) -> Time {
        Time(self.state.now)
    }
}
