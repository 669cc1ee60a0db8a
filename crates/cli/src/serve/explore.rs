//! The explorer: the checker's model stepped by hand, one session per user.
//!
//! `POST /api/explore` with a check configuration (a JSON object of `elect check` flags, `{"algorithm": "bully",
//! "nodes": 3}`) opens a session: `{session, state, actions, layout, colours}` (the last two, the topology's
//! drawing and the colour of each message kind, are for the page's picture, and come with every answer). Then,
//! under `/api/explore/{session}`: `GET` the state and actions again; `POST .../step` with `{"action": INDEX}` (an
//! index into `actions`, or the action's own object) takes it; `POST .../back` undoes the last step;
//! `POST .../find` with `{"goal": "violation"}` or `{"goal": "leader"}` searches breadth-first from the current
//! state for a shortest path to a state that breaks a property (or where every live process follows one leader),
//! within the server's limits, and answers the path.
//!
//! Sessions are kept in memory, at most `--max-sessions` (a new one beyond that ends the oldest), each at most
//! [`MAX_STEPS`] steps deep. Their ids are random, so that one user cannot step another's session by guessing.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

use elect_check::{Action, Explorer, Goal};
use serde_json::{Value, json};

use super::answer::{Answer, Caps};
use super::api;
use super::query;

/// The most steps one session keeps (each keeps the state before it, for going back).
const MAX_STEPS: usize = 10_000;

/// The open sessions, oldest first.
#[derive(Clone)]
pub(crate) struct Sessions(Arc<Mutex<Inner>>);

struct Inner {
    most: usize,
    live: VecDeque<(String, Arc<Mutex<Explorer>>)>,
}

impl Sessions {
    pub(crate) fn new(most: usize) -> Self {
        Self(Arc::new(Mutex::new(Inner { most, live: VecDeque::new() })))
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `POST /api/explore`: a new session from a check configuration.
    pub(crate) fn open(&self, body: &[u8], caps: &Caps) -> Answer {
        let pairs = match query::json_pairs(body) {
            Ok(pairs) => pairs,
            Err(e) => return Answer::bad(e),
        };
        let checking = match api::checking(&pairs, caps) {
            Ok(c) => c,
            Err(answer) => return answer,
        };
        let explorer = match Explorer::new(&checking.config) {
            Ok(e) => e,
            Err(e) => return Answer::bad(format!("error: {e}")),
        };
        let id = format!("{:016x}", std::collections::hash_map::RandomState::new().build_hasher().finish());
        let answer = Answer::value(&with_session(&id, state(&explorer)));
        let mut inner = self.inner();
        while inner.live.len() >= inner.most {
            inner.live.pop_front();
        }
        inner.live.push_back((id, Arc::new(Mutex::new(explorer))));
        answer
    }

    /// `GET /api/explore/{id}`, and `POST` to its `step`, `back` and `find`.
    pub(crate) fn act(&self, id: &str, verb: &str, body: &[u8], caps: &Caps) -> Answer {
        let session = self.inner().live.iter().find(|(k, _)| k == id).map(|(_, s)| s.clone());
        let Some(session) = session else {
            return Answer::error(
                hyper::StatusCode::NOT_FOUND,
                format!("no explorer session {id}: it ended (the oldest end when too many are open); start a new one"),
            );
        };
        let mut explorer = session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let body: Value = if body.is_empty() {
            Value::Null
        } else {
            match serde_json::from_slice(body) {
                Ok(v) => v,
                Err(e) => return Answer::bad(format!("the body is not JSON: {e}")),
            }
        };
        match verb {
            "" => Answer::value(&with_session(id, state(&explorer))),
            "back" => {
                let went = explorer.back();
                let mut out = with_session(id, state(&explorer));
                out["went_back"] = json!(went);
                Answer::value(&out)
            }
            "step" => {
                let choices = explorer.choices();
                let action: Option<Action> = match &body["action"] {
                    Value::Number(n) => n.as_u64().and_then(|i| choices.get(i as usize)).map(|c| c.action),
                    v @ Value::Object(_) => serde_json::from_value(v.clone()).ok(),
                    _ => None,
                };
                let Some(action) = action else {
                    return Answer::bad(format!(
                        "step: give {{\"action\": INDEX}}, an index below {} into the actions enabled now",
                        choices.len()
                    ));
                };
                if explorer.snapshot().depth >= MAX_STEPS {
                    return Answer::bad(format!(
                        "step: a session keeps at most {MAX_STEPS} steps; go back, or start a new session"
                    ));
                }
                let Some(step) = explorer.take(action) else {
                    return Answer::bad("step: that action is not enabled in this state");
                };
                Answer::value(&taken(id, &explorer, &step))
            }
            "find" => {
                let goal = match body["goal"].as_str() {
                    Some("violation") => Goal::Violation,
                    Some("leader") => Goal::Leader,
                    _ => return Answer::bad("find: give {\"goal\": \"violation\"} or {\"goal\": \"leader\"}"),
                };
                let found = explorer.find(goal, caps.states, caps.time());
                let mut out = with_session(id, state(&explorer));
                out["found"] = json!({
                    "path": found.path,
                    "steps": found.steps.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "states": found.states,
                    "complete": found.complete,
                });
                Answer::value(&out)
            }
            _ => Answer::error(hyper::StatusCode::NOT_FOUND, format!("no such explorer request: {verb}")),
        }
    }
}

/// The current state and the actions enabled in it, with what the page needs to draw them: the topology's
/// layout (where each position sits and its links, as the trace viewer draws them) and the colour of each kind of
/// message the algorithm sends or that is in flight (the colours of every other picture).
fn state(explorer: &Explorer) -> Value {
    let actions: Vec<Value> = explorer
        .choices()
        .into_iter()
        .enumerate()
        .map(|(i, c)| json!({ "index": i, "text": c.step.to_string(), "action": c.action, "step": c.step }))
        .collect();
    let snapshot = explorer.snapshot();
    let scenario = explorer.scenario();
    let mut kinds = elect_algos::kinds(scenario.info.name).unwrap_or_default();
    kinds.extend(snapshot.links.iter().flat_map(|l| l.kinds.iter().copied()));
    let colours: serde_json::Map<String, Value> =
        kinds.into_iter().map(|k| (k.to_owned(), elect_viz::kind_colour(k).into())).collect();
    json!({
        "state": snapshot,
        "actions": actions,
        "layout": elect_viz::Layout::of(&scenario.graph),
        "colours": colours,
    })
}

fn with_session(id: &str, mut value: Value) -> Value {
    value["session"] = json!(id);
    value
}

/// The answer to a step taken: the session's state, and the step in words, the rule it applied, what it sent and
/// changed and broke. A message the step dropped (on its way to a process that crashed for good) is said lost, as
/// the simulator and the viewer say it, not left to vanish.
fn taken(id: &str, explorer: &Explorer, step: &elect_check::Replayed) -> Value {
    let mut out = with_session(id, state(explorer));
    let mut text = step.step.to_string();
    if !step.lost.is_empty() {
        let lost: Vec<String> = step.lost.iter().map(|m| format!("{} from {} to {}", m.msg, m.from, m.to)).collect();
        text = format!("{text}; lost on the way: {}", lost.join("; "));
    }
    out["step"] = json!({
        "text": text,
        "lost": step.lost,
        "rule": step.rule,
        "sent": step.sent,
        "changed": step.changed,
        "violations": step.violations.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    out
}
