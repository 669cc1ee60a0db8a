//! The protocol's messages, as JSON lines. elect asks `{"type":"init","protocol":1,"seq":0}` once; the program
//! answers `init_ok` with its name, its message kinds, its timers and its rules. Then, for each event of each
//! process, elect sends `step` (the process's setup, its state, the event) and the program answers `step_ok` (the
//! new state and the effects). Every request has a `seq`, which its answer repeats as `in_reply_to`: an answer to
//! another request is refused. Each type below says what its fields mean.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::algorithm::Needs;
use crate::params::Params;

/// The protocol's version.
pub const PROTOCOL: u64 = 1;

/// The most names (message kinds, timers, rules) a program may declare of each.
pub(crate) const MAX_NAMES: usize = 64;

/// The longest name, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 80;

/// What the program says of itself in `init_ok`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Described {
    /// Always `init_ok`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The `seq` of the request it answers: 0.
    pub in_reply_to: u64,
    /// The protocol version it speaks.
    pub protocol: u64,
    /// Its name (`my-chang-roberts`).
    pub name: String,
    /// Its message kinds: every message's `body.type` is one of them; runs count messages by them.
    pub messages: Vec<String>,
    /// Its timers' names.
    #[serde(default)]
    pub timers: Vec<String>,
    /// The names of its rules, which a step may name.
    #[serde(default)]
    pub rules: Vec<String>,
    /// The topology it needs: `ring` (each process is told its ring's `next` and `prev` ports), `complete` or
    /// `connected` (the default). Runs take it when no topology is asked for.
    #[serde(default)]
    pub needs: Option<String>,
    /// A title, in a few words (`Chang-Roberts, my way`).
    #[serde(default)]
    pub title: Option<String>,
}

impl Described {
    /// The topology it needs.
    pub fn needs(&self) -> Needs {
        match self.needs.as_deref() {
            Some("ring") => Needs::Ring,
            Some("complete") => Needs::Complete,
            _ => Needs::Connected,
        }
    }
}

/// `needs` as `init_ok` says it: the inverse of [`Described::needs`].
pub(crate) fn needs_name(needs: Needs) -> &'static str {
    match needs {
        Needs::Ring => "ring",
        Needs::Complete => "complete",
        Needs::Connected => "connected",
    }
}

pub(crate) fn init_request() -> String {
    json!({ "type": "init", "protocol": PROTOCOL, "seq": 0 }).to_string()
}

/// `init_ok`, checked: the version, and names that are few, short, distinct and not empty.
pub(crate) fn parse_init(line: &str) -> Result<Described, String> {
    let d: Described = serde_json::from_str(line).map_err(|e| format!("its answer to init is not init_ok: {e}"))?;
    if d.kind != "init_ok" {
        return Err(format!("it answered init with {:?}, not init_ok", d.kind));
    }
    if d.in_reply_to != 0 {
        return Err(format!("it answered init (seq 0) with in_reply_to {}", d.in_reply_to));
    }
    if d.protocol != PROTOCOL {
        return Err(format!("it speaks protocol {}; elect speaks {PROTOCOL}", d.protocol));
    }
    if let Some(needs) = &d.needs {
        if !["ring", "complete", "connected"].contains(&needs.as_str()) {
            return Err(format!("it needs {needs:?}: ring, complete or connected"));
        }
    }
    if d.title.as_ref().is_some_and(|t| t.len() > MAX_NAME_BYTES) {
        return Err(format!("its title has more than {MAX_NAME_BYTES} bytes"));
    }
    if d.messages.is_empty() {
        return Err("it declares no message kind".to_owned());
    }
    for (what, names) in [("message kinds", &d.messages), ("timers", &d.timers), ("rules", &d.rules)] {
        if names.len() > MAX_NAMES {
            return Err(format!("it declares {} {what}; at most {MAX_NAMES}", names.len()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for name in names {
            if name.is_empty() || name.len() > MAX_NAME_BYTES {
                return Err(format!("{what}: {name:?} must have 1 to {MAX_NAME_BYTES} bytes"));
            }
            if !seen.insert(name) {
                return Err(format!("{what}: {name:?} is declared twice"));
            }
        }
    }
    Ok(d)
}

/// The run's parameters as a JSON object of strings.
pub(crate) fn params_json(params: &Params) -> Value {
    Value::Object(params.iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect())
}

/// The answer to `step`.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// The `seq` of the step it answers.
    pub(crate) in_reply_to: u64,
    /// The process's new state: any JSON value.
    pub(crate) state: Value,
    #[serde(default)]
    pub(crate) send: Vec<Send>,
    #[serde(default)]
    pub(crate) set_timers: Vec<SetTimer>,
    #[serde(default)]
    pub(crate) cancel_timers: Vec<String>,
    /// State to keep across a crash.
    pub(crate) persist: Option<Value>,
    pub(crate) status: StatusAnswer,
    /// The process performed the algorithm's "I am the leader" action in this step.
    #[serde(default)]
    pub(crate) elected: bool,
    pub(crate) rule: Option<String>,
    pub(crate) view: Option<ViewAnswer>,
}

/// A message to send: to the neighbour at port `dest`, with a `body` whose `type` is a declared kind.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Send {
    pub(crate) dest: u32,
    pub(crate) body: Map<String, Value>,
}

/// A timer to set, `after` (a number of `T`, 0 or more) from now.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetTimer {
    pub(crate) timer: String,
    pub(crate) after: f64,
}

/// The process's status: `normal` or `election` (`down` is the driver's), the leader it believes in, the epoch.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusAnswer {
    pub(crate) state: String,
    pub(crate) leader: Option<u32>,
    #[serde(default)]
    pub(crate) epoch: u64,
}

/// The process in the algorithm's own words: its role, and named values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewAnswer {
    pub(crate) role: String,
    #[serde(default)]
    pub(crate) values: Vec<(String, Value)>,
}
