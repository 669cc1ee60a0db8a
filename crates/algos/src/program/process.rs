//! The process that stands for a program in a driver: it keeps the state the program chose, sends each event to
//! the program with that state, and turns the answer into effects, checking every field of it. The first answer
//! that is wrong (or none at all) is kept as the run's failure, and from then on every process does nothing.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use elect_core::{
    Command, Cx, Duration, Epoch, Invalid, Message, NodeId, Notice, Peers, Port, Process, Roster, Setup, Span, State,
    Status, Validate, View,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use super::protocol::{Answer, MAX_NAME_BYTES};
use super::{Shared, Stepper, names};

/// The longest message body, in bytes of JSON.
pub const MAX_BODY_BYTES: usize = 4096;

/// The longest state, in bytes of JSON.
pub const MAX_STATE_BYTES: usize = 64 * 1024;

/// The longest delay of a timer, in `T`.
pub const MAX_TIMER_T: f64 = 1e6;

/// A program's message: its body, a JSON object whose `type` is one of the kinds the program declared.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramMsg {
    kind: u16,
    body: Arc<str>,
}

impl ProgramMsg {
    /// The body, as JSON.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// A message from a body, if it is an object whose `type` is a declared kind.
    pub(super) fn from_body(body: serde_json::Map<String, Value>) -> Result<Self, String> {
        let kind = match body.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            _ => return Err("a message body needs a \"type\", a string".to_owned()),
        };
        let index = names::kind_index(&kind).ok_or_else(|| format!("message type {kind:?} was not declared"))?;
        let text = Value::Object(body).to_string();
        if text.len() > MAX_BODY_BYTES {
            return Err(format!("a {kind} message of {} bytes; at most {MAX_BODY_BYTES}", text.len()));
        }
        Ok(Self { kind: index, body: text.into() })
    }
}

impl Serialize for ProgramMsg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.body)
    }
}

impl<'de> Deserialize<'de> for ProgramMsg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.len() > MAX_BODY_BYTES {
            return Err(serde::de::Error::custom("a message body too long"));
        }
        match serde_json::from_str(&text) {
            Ok(Value::Object(body)) => Self::from_body(body).map_err(serde::de::Error::custom),
            _ => Err(serde::de::Error::custom("a message body is a JSON object")),
        }
    }
}

impl Message for ProgramMsg {
    fn kinds() -> Cow<'static, [&'static str]> {
        Cow::Owned(names::kinds())
    }

    fn kind_index(&self) -> usize {
        usize::from(self.kind)
    }

    fn kind(&self) -> &'static str {
        names::kind(self.kind)
    }

    fn describe(&self) -> String {
        self.body.to_string()
    }
}

/// A program's messages name no process elect could check: their ports are checked when they are sent.
impl Validate for ProgramMsg {
    fn validate(&self, _: &Roster<'_>) -> Result<(), Invalid> {
        Ok(())
    }
}

/// One of the timers the program declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProgramTimer(pub(super) u16);

impl Serialize for ProgramTimer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(names::timer(self.0))
    }
}

impl<'de> Deserialize<'de> for ProgramTimer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        names::timer_index(&name)
            .map(Self)
            .ok_or_else(|| serde::de::Error::custom("a timer the program did not declare"))
    }
}

/// One process of a program (see the module documentation).
#[derive(Clone)]
pub struct ProgramProcess {
    shared: Arc<Shared>,
    me: NodeId,
    /// This process's setup, as JSON.
    setup: Arc<str>,
    /// How many ports it has.
    ports: u32,
    t: Duration,
    /// The state the program chose, as JSON (`null` before its start).
    state: Arc<str>,
    status: Status,
    view: Option<Arc<super::protocol::ViewAnswer>>,
}

impl PartialEq for ProgramProcess {
    fn eq(&self, other: &Self) -> bool {
        (self.me, &self.state, self.status, &self.view) == (other.me, &other.state, other.status, &other.view)
    }
}

impl Eq for ProgramProcess {}

impl Hash for ProgramProcess {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.me, &self.state, self.status, &self.view).hash(h);
    }
}

impl fmt::Debug for ProgramProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgramProcess").field("me", &self.me).field("state", &self.state).finish_non_exhaustive()
    }
}

impl ProgramProcess {
    pub(super) fn new(shared: Arc<Shared>, setup: &Setup<'_>) -> Self {
        let ports: Vec<Value> = setup.neighbors.iter().map(|n| json!({ "port": n.port.0, "id": n.id.0 })).collect();
        let ring = setup.ring.map(|r| json!({ "next": r.next.0, "prev": r.prev.0 }));
        let t = setup.delay_bound.unwrap_or(Duration::from_ticks(1000));
        let json = json!({ "id": setup.id.0, "ports": ports, "ring": ring, "params": shared.params });
        Self {
            shared,
            me: setup.id,
            setup: json.to_string().into(),
            ports: setup.neighbors.len() as u32,
            t,
            state: "null".into(),
            status: Status::normal(None, Epoch::ZERO),
            view: None,
        }
    }

    /// The state the program chose, as JSON.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// Sends `event` to the program with this process's state, and applies the answer; a failure is kept, and the
    /// step does nothing.
    fn step(&mut self, cx: &mut Cx<'_, Self>, event: Value) {
        let loaded = self.shared.loaded.clone();
        if loaded.failed() {
            return;
        }
        let (seq, twice) = loaded.next_step();
        let request =
            format!(r#"{{"type":"step","seq":{seq},"setup":{},"state":{},"event":{}}}"#, self.setup, self.state, event);
        let result = ask(&*loaded.stepper, &request, seq, twice).and_then(|answer| self.apply(cx, answer));
        let event = event.to_string();
        match result {
            Ok(()) => loaded.done(seq, self.me, &event),
            Err(problem) => loaded.fail(self.me, seq, event, problem),
        }
    }

    /// Checks the whole answer first, then applies it: a wrong answer has no effect at all.
    fn apply(&mut self, cx: &mut Cx<'_, Self>, answer: Answer) -> Result<(), String> {
        let state = answer.state.to_string();
        if state.len() > MAX_STATE_BYTES {
            return Err(format!("a state of {} bytes; at most {MAX_STATE_BYTES}", state.len()));
        }
        let mut sends = Vec::with_capacity(answer.send.len());
        for s in answer.send {
            if s.dest >= self.ports {
                return Err(format!(
                    "it sends to port {}; its ports are 0 to {}",
                    s.dest,
                    self.ports.saturating_sub(1)
                ));
            }
            sends.push((Port(s.dest), ProgramMsg::from_body(s.body)?));
        }
        let timer = |name: &str| {
            names::timer_index(name).map(ProgramTimer).ok_or_else(|| format!("timer {name:?} was not declared"))
        };
        let mut timers = Vec::new();
        for set in &answer.set_timers {
            if !(0.0..=MAX_TIMER_T).contains(&set.after) {
                return Err(format!("timer {:?} after {} T; from 0 to {MAX_TIMER_T}", set.timer, set.after));
            }
            let ticks = (self.t.ticks() as f64 * set.after).round() as u64;
            timers.push((timer(&set.timer)?, Span::exactly(Duration::from_ticks(ticks))));
        }
        let cancels = answer.cancel_timers.iter().map(|n| timer(n)).collect::<Result<Vec<_>, _>>()?;
        let persist = answer.persist.map(|v| v.to_string());
        let status = self.status_of(&answer.status)?;
        let rule = match &answer.rule {
            Some(r) => Some(names::kept(r).ok_or_else(|| format!("rule {r:?} was not declared"))?),
            None => None,
        };
        if let Some(view) = &answer.view {
            if view.role.len() > MAX_NAME_BYTES || view.values.len() > 16 {
                return Err("a view has a role of at most 80 bytes and at most 16 values".to_owned());
            }
        }
        // Everything checked: apply.
        self.state = state.into();
        self.status = status;
        self.view = answer.view.map(Arc::new);
        // What is persisted is durable before anything is sent; a timer cancelled and set in one answer is set.
        if let Some(p) = persist {
            cx.persist(p);
        }
        for t in cancels {
            cx.cancel_timer(t);
        }
        for (t, after) in timers {
            cx.set_timer(t, after);
        }
        for (to, msg) in sends {
            cx.send(to, msg);
        }
        if answer.elected {
            cx.notify(Notice::Elected { epoch: status.epoch });
        }
        if let Some(rule) = rule {
            cx.rule(rule);
        }
        Ok(())
    }

    fn status_of(&self, s: &super::protocol::StatusAnswer) -> Result<Status, String> {
        let state = match s.state.as_str() {
            "normal" => State::Normal,
            "election" => State::Election,
            other => return Err(format!("status {other:?}: normal or election")),
        };
        Ok(Status { state, leader: s.leader.map(NodeId), epoch: Epoch::from_bits(s.epoch), group: None })
    }
}

/// Asks `request` (whose `seq` is `seq`) and reads the answer; asked `twice`, the two answers must be equal.
fn ask(stepper: &dyn Stepper, request: &str, seq: u64, twice: bool) -> Result<Answer, String> {
    let first = parse(&stepper.call(request)?, seq)?;
    if twice {
        let second = parse(&stepper.call(request)?, seq)?;
        if second != first {
            let differ = if first.state == second.state {
                "the same state but other effects".to_owned()
            } else {
                format!("the state {} and then {}", first.state, second.state)
            };
            return Err(format!("it is not deterministic: asked this step twice, it answered {differ}"));
        }
    }
    Ok(first)
}

fn parse(line: &str, seq: u64) -> Result<Answer, String> {
    let answer: Answer = serde_json::from_str(line).map_err(|e| {
        let shown: String = line.chars().take(120).collect();
        format!("its answer is not step_ok ({e}): {shown:?}")
    })?;
    if answer.kind != "step_ok" {
        return Err(format!("it answered {:?}, not step_ok", answer.kind));
    }
    if answer.in_reply_to != seq {
        return Err(format!("it answered step {} when asked step {seq}", answer.in_reply_to));
    }
    Ok(answer)
}

impl Process for ProgramProcess {
    type Msg = ProgramMsg;
    type Timer = ProgramTimer;
    /// What the program persisted, as JSON.
    type Durable = String;

    fn on_start(&mut self, cx: &mut Cx<'_, Self>, restored: Option<String>) {
        let durable: Value = restored.and_then(|d| serde_json::from_str(&d).ok()).unwrap_or(Value::Null);
        self.state = "null".into();
        self.step(cx, json!({ "type": "start", "durable": durable }));
    }

    fn on_message(&mut self, cx: &mut Cx<'_, Self>, from: Port, msg: ProgramMsg) {
        let body: Value = serde_json::from_str(&msg.body).unwrap_or(Value::Null);
        self.step(cx, json!({ "type": "message", "src": from.0, "body": body }));
    }

    fn on_timer(&mut self, cx: &mut Cx<'_, Self>, timer: ProgramTimer) {
        self.step(cx, json!({ "type": "timer", "timer": names::timer(timer.0) }));
    }

    fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
        let command = match cmd {
            Command::Initiate => "initiate",
            Command::Resign => "resign",
            // The member acts on these; a program is not told.
            Command::Leave | Command::Transfer { .. } | Command::AddVoter { .. } | Command::RemoveVoter { .. } => {
                return;
            }
        };
        self.step(cx, json!({ "type": "command", "command": command }));
    }

    fn on_link(&mut self, cx: &mut Cx<'_, Self>, port: Port, up: bool) {
        self.step(cx, json!({ "type": "link", "port": port.0, "up": up }));
    }

    fn status(&self) -> Status {
        self.status
    }

    fn view(&self, _: &Peers<'_>) -> View {
        let Some(v) = &self.view else { return View::of_status(&self.status) };
        let role = names::keep(&v.role).unwrap_or("(a role)");
        v.values.iter().fold(View::new(role), |view, (name, value)| {
            let name = names::keep(name).unwrap_or("(a value)");
            match value {
                Value::String(s) => view.with(name, s),
                other => view.with(name, other),
            }
        })
    }

    fn describe_timer(timer: &ProgramTimer) -> String {
        names::timer(timer.0).to_owned()
    }
}
