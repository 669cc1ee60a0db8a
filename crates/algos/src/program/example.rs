//! Chang-Roberts written against the process protocol, in Rust, served in-process: the reference the protocol's
//! tests check drivers with (it must count, elect and explore as the built-in Chang-Roberts does), and a program
//! whose only cost is the protocol's own (parsing and writing JSON), for measuring elect's side of it.

use serde_json::{Value, json};

use super::Stepper;

/// Chang-Roberts, every process initiating: every request is parsed, and every answer written, as a program would.
pub struct ChangRobertsInJson {
    /// A planted flaw: a weaker token is forwarded too.
    pub forward_smaller: bool,
}

impl Stepper for ChangRobertsInJson {
    fn call(&self, request: &str) -> Result<String, String> {
        let r: Value = serde_json::from_str(request).map_err(|e| e.to_string())?;
        let answer = match r["type"].as_str() {
            Some("init") => json!({
                "type": "init_ok", "in_reply_to": 0, "protocol": 1, "name": "chang-roberts-in-json", "needs": "ring",
                "messages": ["token", "elected"],
                "rules": ["send own token", "relay", "forward a stronger token", "swallow a weaker token",
                          "own token returned, elected", "pass the announcement on", "announcement came home"],
            }),
            Some("step") => self.step(&r),
            other => return Err(format!("unknown request {other:?}")),
        };
        Ok(answer.to_string())
    }
}

impl ChangRobertsInJson {
    fn step(&self, r: &Value) -> Value {
        let me = r["setup"]["id"].as_u64().unwrap();
        let next = r["setup"]["ring"]["next"].clone();
        let mut state = match &r["state"] {
            Value::Null => json!({ "role": "relay", "leader": null }),
            s => s.clone(),
        };
        let event = &r["event"];
        let mut send = Vec::new();
        let mut elected = false;
        let rule = match (event["type"].as_str().unwrap(), event["body"]["type"].as_str()) {
            ("start", _) => None,
            ("command", _) if event["command"] == "initiate" && state["role"] == "relay" => {
                state["role"] = json!("candidate");
                send.push(json!({ "dest": next, "body": { "type": "token", "id": me } }));
                Some("send own token")
            }
            ("message", Some("token")) => {
                let id = event["body"]["id"].as_u64().unwrap();
                if state["role"] == "relay" {
                    send.push(json!({ "dest": next, "body": { "type": "token", "id": id } }));
                    Some("relay")
                } else if id == me {
                    state["role"] = json!("leader");
                    elected = true;
                    send.push(json!({ "dest": next, "body": { "type": "elected", "leader": me } }));
                    Some("own token returned, elected")
                } else if id > me || self.forward_smaller {
                    if id > me {
                        state["role"] = json!("lost");
                    }
                    send.push(json!({ "dest": next, "body": { "type": "token", "id": id } }));
                    Some("forward a stronger token")
                } else {
                    Some("swallow a weaker token")
                }
            }
            ("message", Some("elected")) => {
                let leader = event["body"]["leader"].as_u64().unwrap();
                state["leader"] = json!(leader);
                if leader != me {
                    send.push(json!({ "dest": next, "body": { "type": "elected", "leader": leader } }));
                    Some("pass the announcement on")
                } else {
                    Some("announcement came home")
                }
            }
            _ => None,
        };
        let electing = state["role"] != "relay";
        let status = match state["leader"].as_u64() {
            Some(l) => json!({ "state": "normal", "leader": l }),
            None if electing => json!({ "state": "election", "leader": null }),
            None => json!({ "state": "normal", "leader": null }),
        };
        json!({
            "type": "step_ok", "in_reply_to": r["seq"], "state": state, "send": send, "status": status, "elected": elected, "rule": rule,
            "view": { "role": state["role"], "values": [["id", me]] },
        })
    }
}
