//! An algorithm written in Rust against elect's own interfaces (a [`Process`] and its [`Algorithm`]), served as
//! a program in the same process: a crate of one's own implements them, and hands [`Native`] to the command line
//! (`elect::main_with`), which then runs it under every command as it runs any program.
//!
//! elect keeps each process's state as JSON, so the process, its timers and its durable state are (de)serialized
//! with serde at every step; a message travels as `{"type": KIND, "msg": ...}`, its serde form under `msg`.

use std::marker::PhantomData;

use elect_core::{
    Command, Duration, Effect, Event, Instant, Message, Neighbor, NodeId, Peers, Port, Prefer, Process, Rank,
    RingPorts, Setup, Shape, State,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::Stepper;
use crate::algorithm::Algorithm;

/// `T`, in ticks, as a native algorithm's processes see it: timers are sent to elect in units of it.
const T: u64 = 1000;

/// A Rust algorithm as a program (see the module documentation).
pub struct Native<A: Algorithm> {
    algorithm: A,
    name: String,
    timers: Vec<String>,
    _process: PhantomData<fn() -> A::Process>,
}

type TimerOf<A> = <<A as Algorithm>::Process as Process>::Timer;
type DurableOf<A> = <<A as Algorithm>::Process as Process>::Durable;

impl<A: Algorithm> Native<A>
where
    A::Process: Serialize + DeserializeOwned,
    TimerOf<A>: Serialize + DeserializeOwned,
    DurableOf<A>: Serialize + DeserializeOwned,
{
    /// `algorithm`, named `name` in `init_ok`, whose processes may set any of `timers`.
    /// Fails if a timer does not serialize to a name.
    pub fn new(algorithm: A, name: &str, timers: &[TimerOf<A>]) -> Result<Self, serde_json::Error> {
        let timers = timers.iter().map(timer_name::<A>).collect::<Result<_, _>>()?;
        Ok(Self { algorithm, name: name.to_owned(), timers, _process: PhantomData })
    }

    fn init(&self) -> Value {
        let info = A::INFO;
        let needs = super::protocol::needs_name(info.needs);
        json!({
            "type": "init_ok", "in_reply_to": 0, "protocol": super::PROTOCOL, "name": self.name, "title": info.title,
            "needs": needs, "messages": <<A::Process as Process>::Msg as Message>::kinds(),
            "timers": self.timers, "rules": info.rules,
        })
    }

    fn step(&self, request: &Value) -> Result<Value, String> {
        let setup = &request["setup"];
        let me = NodeId(number(&setup["id"])?);
        let rank = |id| Rank::new(Prefer::Highest, 0, id);
        let ports = setup["ports"].as_array().ok_or("setup.ports is not a list")?;
        let neighbors = ports
            .iter()
            .map(|p| {
                let id = NodeId(number(&p["id"])?);
                Ok(Neighbor { port: Port(number(&p["port"])?), id, rank: rank(id) })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let ring = match &setup["ring"] {
            Value::Null => None,
            r => Some(RingPorts { next: Port(number(&r["next"])?), prev: Port(number(&r["prev"])?) }),
        };
        let shape = if ring.is_some() { Shape::Ring } else { Shape::Complete };
        let built = Setup {
            id: me,
            rank: rank(me),
            neighbors: &neighbors,
            ring,
            ring_order: &[],
            shape,
            delay_bound: Some(Duration::from_ticks(T)),
            diameter: None,
            suspected: &[],
        };
        let mut process: A::Process = match &request["state"] {
            Value::Null => self.algorithm.build(&built),
            state => serde_json::from_value(state["process"].clone()).map_err(|e| format!("the state: {e}"))?,
        };
        let event = event::<A>(&request["event"])?;
        let mut effects = Vec::new();
        let rule = elect_core::driver::handle(&mut process, Instant::ZERO, event, &mut effects);
        answer::<A>(request, &process, &neighbors, effects, rule)
    }
}

fn number(v: &Value) -> Result<u32, String> {
    v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| format!("{v} is not a number"))
}

fn timer_name<A: Algorithm>(timer: &TimerOf<A>) -> Result<String, serde_json::Error>
where
    TimerOf<A>: Serialize,
{
    serde_json::to_string(timer)
}

fn event<A: Algorithm>(e: &Value) -> Result<elect_core::EventOf<A::Process>, String>
where
    TimerOf<A>: DeserializeOwned,
    DurableOf<A>: DeserializeOwned,
{
    fn parse<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
        serde_json::from_value(v.clone()).map_err(|e| e.to_string())
    }
    Ok(match e["type"].as_str().unwrap_or("") {
        "start" => Event::Start { restored: if e["durable"].is_null() { None } else { Some(parse(&e["durable"])?) } },
        "message" => Event::Message { from: Port(number(&e["src"])?), msg: parse(&e["body"]["msg"])? },
        "timer" => {
            let name = e["timer"].as_str().ok_or("a timer event names its timer")?;
            Event::Timer(serde_json::from_str(name).map_err(|e| e.to_string())?)
        }
        "command" => Event::Command(match e["command"].as_str() {
            Some("resign") => Command::Resign,
            _ => Command::Initiate,
        }),
        "link" => Event::Link { port: Port(number(&e["port"])?), up: e["up"].as_bool().unwrap_or(false) },
        other => return Err(format!("an event of type {other:?}")),
    })
}

fn answer<A: Algorithm>(
    request: &Value,
    process: &A::Process,
    neighbors: &[Neighbor],
    effects: Vec<elect_core::EffectOf<A::Process>>,
    rule: Option<&'static str>,
) -> Result<Value, String>
where
    A::Process: Serialize,
    TimerOf<A>: Serialize,
    DurableOf<A>: Serialize,
{
    let (mut send, mut set, mut cancel, mut persist, mut elected) = (vec![], vec![], vec![], None, false);
    for effect in effects {
        match effect {
            Effect::Send { to, msg } => {
                let mut body = Map::new();
                body.insert("type".to_owned(), json!(msg.kind()));
                body.insert("msg".to_owned(), serde_json::to_value(&msg).map_err(|e| e.to_string())?);
                send.push(json!({ "dest": to.0, "body": body }));
            }
            Effect::SetTimer { timer, after } => {
                let after = after.min.ticks() as f64 / T as f64;
                set.push(json!({ "timer": timer_name::<A>(&timer).map_err(|e| e.to_string())?, "after": after }));
            }
            Effect::CancelTimer { timer } => cancel.push(timer_name::<A>(&timer).map_err(|e| e.to_string())?),
            Effect::Persist(d) => persist = Some(serde_json::to_value(&d).map_err(|e| e.to_string())?),
            Effect::Notify(elect_core::Notice::Elected { .. }) => elected = true,
            Effect::Notify(_) => {}
        }
    }
    let status = process.status();
    let state = match status.state {
        State::Election => "election",
        _ => "normal",
    };
    let view = process.view(&Peers(neighbors));
    let values: Vec<Value> = view.values.iter().map(|v| json!([v.name, v.value])).collect();
    let mut answer = json!({
        "type": "step_ok", "in_reply_to": request["seq"],
        "state": { "process": serde_json::to_value(process).map_err(|e| e.to_string())? },
        "send": send, "set_timers": set, "cancel_timers": cancel,
        "status": { "state": state, "leader": status.leader.map(|l| l.0), "epoch": status.epoch.bits() },
        "elected": elected, "rule": rule, "view": { "role": view.role, "values": values },
    });
    if let Some(p) = persist {
        answer["persist"] = p;
    }
    Ok(answer)
}

impl<A: Algorithm> Stepper for Native<A>
where
    A::Process: Serialize + DeserializeOwned,
    TimerOf<A>: Serialize + DeserializeOwned,
    DurableOf<A>: Serialize + DeserializeOwned,
{
    fn bounds(&self, facts: &crate::algorithm::Facts) -> Vec<crate::algorithm::Bound> {
        self.algorithm.bounds(facts)
    }

    fn checks(&self) -> Option<Vec<elect_core::Check>> {
        Some(self.algorithm.checks())
    }

    fn call(&self, request: &str) -> Result<String, String> {
        let request: Value = serde_json::from_str(request).map_err(|e| e.to_string())?;
        let answer = match request["type"].as_str() {
            Some("init") => self.init(),
            Some("step") => self.step(&request)?,
            other => return Err(format!("a request of type {other:?}")),
        };
        Ok(answer.to_string())
    }
}
